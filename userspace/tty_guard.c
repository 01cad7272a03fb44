// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The approval prompt's terminal, kept out of the agent's reach.
 *
 * Attack: the agent writes to its own pty, the supervisor relays that to
 * cordon's terminal, and terminals answer some output with input.  Each of
 * these, measured against the build before this file, approved a held
 * `git push` with no human present (tests/host/run_cli.sh, tests/terminal.py):
 *   - ENQ, answered with the answerback string ("PuTTY": a 'Y');
 *   - a report whose text the agent chose or that holds the letter: a
 *     window title set then reported (CSI 21 t), a DECRQSS request echoed,
 *     XTVERSION ("kitty(...)");
 *   - mouse tracking turned on before the prompt: an X10 report carries
 *     raw coordinate bytes, and column 89 is a 'y';
 *   - any of these written while the prompt waited, by another process of
 *     the agent.
 * The agent could also hide or disguise the prompt: leave an OSC string
 * open so the prompt becomes a window title, conceal text (SGR 8), make
 * the colours equal, switch to the line-drawing character set, shrink the
 * scroll region so only the prompt's last line shows, or paint over it.
 *
 * What closes it (the supervisor, supervisor.c and approve.c):
 *   1. While a prompt is up the agent's output is not relayed at all (its
 *      writes block once its pty's buffer is full): it can neither ask the
 *      terminal anything nor paint over the question.
 *   2. Every byte of the terminal's input goes through tty_keys_feed,
 *      prompt or not: only a key outside every control sequence (CSI, SS3,
 *      OSC, DCS, APC, PM, SOS, two-byte ESC sequences, X10 mouse reports,
 *      7-bit, 8-bit and UTF-8-encoded C1 forms) can answer.  Every
 *      terminal report is such a sequence, whatever text it carries.
 *      Strings end only at their terminator (ESC \, and BEL for OSC): not
 *      at CAN, SUB or an 8-bit ST, which an echoed payload could hold.
 *   3. ENQ is removed from the agent's output: the answerback is the one
 *      reply that is bare text.
 *   4. Before the question: CAN and ST end any sequence or string left
 *      open, then 7-bit replies (S7C1T), plain text attributes, the ASCII
 *      character set, the default colours and palette, the full scroll
 *      region, no origin or insert mode, autowrap on, the cursor shown,
 *      mouse and focus reports off; the question is written from the last
 *      line.  After the last prompt the reporting modes the agent had on
 *      are turned back on, and the agent is sent SIGWINCH to repaint.
 * What it cannot close: a terminal that reports in a form no standard
 * gives (a bare-text reply other than the answerback); keys the human
 * programs or pastes (the agent may have set the clipboard, OSC 52); a
 * terminal whose window the agent may resize or retitle to mislead
 * (XTWINOPS, refused by default by the common terminals).  A human who
 * types a key that a sequence swallows (ESC then 'y' reads as Alt-y)
 * types it again; nothing here can turn a report into an answer.
 */
#include <stdio.h>
#include <string.h>

#include "tty_guard.h"

enum { TK_GROUND, TK_ESC, TK_ESC_INT, TK_CSI, TK_MOUSE, TK_SS, TK_STR, TK_STR_ESC };

/* A C1 control (8-bit, or U+0080..U+009F in UTF-8) starts what its 7-bit form would. */
static void c1(struct tty_keys *k, unsigned char c)
{
	k->st = TK_GROUND;
	switch (c) {
	case 0x9b:
		k->st = TK_CSI;
		k->any = false;
		break;
	case 0x90: case 0x98: case 0x9d: case 0x9e: case 0x9f:
		k->st = TK_STR;
		k->osc = c == 0x9d;
		break;
	case 0x8e: case 0x8f:
		k->st = TK_SS;
		break;
	default:
		break;
	}
}

/* Non-ASCII bytes in GROUND: UTF-8 characters (never keys), or 8-bit C1 controls. */
static void high(struct tty_keys *k, unsigned char c)
{
	if (k->cont && c >= 0x80 && c <= 0xbf) {
		k->cont--;
		if (k->lead == 0xc2 && c <= 0x9f)
			c1(k, c);
		return;
	}
	k->cont = 0;
	if (c >= 0xc2 && c <= 0xf4) {
		k->lead = c;
		k->cont = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : 1;
	} else if (c >= 0x80 && c <= 0x9f) {
		c1(k, c);
	}
}

int tty_keys_feed(struct tty_keys *k, unsigned char c)
{
again:
	switch (k->st) {
	case TK_GROUND:
		if (k->cont && (c < 0x80 || c > 0xbf))
			k->cont = 0;    /* a character cut short: c starts afresh */
		if (c >= 0x80 || k->cont) {
			high(k, c);
			return -1;
		}
		if (c == 0x1b) {
			k->st = TK_ESC;
			return -1;
		}
		if (c == 0x18 || c == 0x1a)
			return -1;
		return c;
	case TK_ESC:
		if (c == '[') {
			k->st = TK_CSI;
			k->any = false;
		} else if (c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_') {
			k->st = TK_STR;
			k->osc = c == ']';
		} else if (c == 'O' || c == 'N') {
			k->st = TK_SS;
		} else if (c >= 0x20 && c <= 0x2f) {
			k->st = TK_ESC_INT;
		} else if (c != 0x1b && (c >= 0x30 || c == 0x18 || c == 0x1a)) {
			k->st = TK_GROUND;      /* a two-byte sequence (Alt-key), or aborted */
		}
		return -1;
	case TK_ESC_INT:
		if (c == 0x1b)
			k->st = TK_ESC;
		else if (c >= 0x30 || c == 0x18 || c == 0x1a)
			k->st = TK_GROUND;
		return -1;
	case TK_CSI:
		if (c == 0x1b) {
			k->st = TK_ESC;
		} else if (c >= 0x20 && c <= 0x3f) {
			k->any = true;
		} else if (c >= 0x40 && c <= 0x7e) {
			/* CSI M alone: an X10 mouse report, three raw coordinates follow. */
			k->st = c == 'M' && !k->any ? TK_MOUSE : TK_GROUND;
			k->left = 3;
			k->cont = 0;
		} else if (c >= 0x7f || c == 0x18 || c == 0x1a) {
			k->st = TK_GROUND;
		}
		return -1;
	case TK_MOUSE:
		/*
		 * A coordinate is a raw byte (32 + n, so never ESC), or with mode
		 * 1005 a UTF-8 character: continuation bytes after a lead byte
		 * are taken with it, so either encoding is consumed whole.  Each
		 * coordinate counted takes at least one byte of the report, so
		 * none is left behind as a key; a misread can only run on into
		 * what follows, and stops at the ESC of the next sequence.
		 */
		if (c == 0x1b) {
			k->st = TK_ESC;
			return -1;
		}
		if (k->cont) {
			if (c >= 0x80 && c <= 0xbf) {
				if (--k->cont == 0 && --k->left == 0)
					k->st = TK_GROUND;
				return -1;
			}
			k->cont = 0;    /* the lead byte stood alone: one coordinate */
			if (--k->left == 0) {
				k->st = TK_GROUND;
				goto again;
			}
		}
		k->cont = c >= 0xc2 && c <= 0xf4 ? (c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : 1) : 0;
		if (!k->cont && --k->left == 0)
			k->st = TK_GROUND;
		return -1;
	case TK_SS:
		k->st = c == 0x1b ? TK_ESC : TK_GROUND;
		return -1;
	case TK_STR:
		if (c == 0x1b)
			k->st = TK_STR_ESC;
		else if (c == 0x07 && k->osc)
			k->st = TK_GROUND;
		return -1;
	case TK_STR_ESC:
		if (c == '\\')
			k->st = TK_GROUND;
		else if (c != 0x1b)
			k->st = TK_STR;
		return -1;
	default:
		k->st = TK_GROUND;
		return -1;
	}
}

/* DEC private modes in which the terminal sends input of its own. */
static const uint16_t report_modes[] = { 9, 1000, 1001, 1002, 1003, 1004, 1005, 1006, 1015, 1016 };

static void mode_set(struct tty_out *o, uint32_t m, bool on)
{
	for (size_t i = 0; i < sizeof(report_modes) / sizeof(report_modes[0]); i++)
		if (report_modes[i] == m) {
			if (on)
				o->modes |= 1u << i;
			else
				o->modes &= ~(1u << i);
		}
}

enum { TO_GROUND, TO_ESC, TO_CSI };

/*
 * Tracking is for restoring the agent's modes after a prompt only: a form
 * it misses (an 8-bit CSI, say) costs the agent its mouse after the prompt,
 * never the prompt its guard, which turns every reporting mode off.
 */
size_t tty_out_filter(struct tty_out *o, char *buf, size_t n)
{
	size_t w = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)buf[i];

		if (c == 0x05)
			continue;
		buf[w++] = (char)c;
		switch (o->st) {
		case TO_GROUND:
			if (c == 0x1b)
				o->st = TO_ESC;
			break;
		case TO_ESC:
			if (c == '[') {
				o->st = TO_CSI;
				o->priv = false;
				o->n = 0;
				o->par[0] = 0;
				break;
			}
			if (c == 'c')
				o->modes = 0;   /* RIS: the terminal resets them all */
			o->st = c == 0x1b ? TO_ESC : TO_GROUND;
			break;
		case TO_CSI:
			if (c == '?' && o->n == 0 && o->par[0] == 0 && !o->priv) {
				o->priv = true;
			} else if (c >= '0' && c <= '9') {
				if (o->par[o->n] < 100000)
					o->par[o->n] = o->par[o->n] * 10 + (c - '0');
			} else if (c == ';') {
				if ((size_t)o->n + 1 < sizeof(o->par) / sizeof(o->par[0]))
					o->par[++o->n] = 0;
			} else if (c >= 0x40 && c <= 0x7e) {
				if (o->priv && (c == 'h' || c == 'l'))
					for (unsigned j = 0; j <= o->n; j++)
						mode_set(o, o->par[j], c == 'h');
				o->st = TO_GROUND;
			} else if (c == 0x1b) {
				o->st = TO_ESC;
			} else if (c == 0x18 || c == 0x1a || c >= 0x80) {
				o->st = TO_GROUND;
			}
			break;
		default:
			o->st = TO_GROUND;
		}
	}
	return w;
}

size_t tty_guard_begin(char *out, size_t len)
{
	static const char pre[] =
		"\x18\x1b\\"                    /* CAN, ST: end a sequence or string left open */
		"\x1b F"                        /* S7C1T: replies in 7-bit form */
		"\x1b[0m\x1b(B\x0f"             /* plain attributes; ASCII in G0, G0 in use */
		"\x1b]104\x1b\\\x1b]110\x1b\\\x1b]111\x1b\\"   /* default palette and colours */
		"\x1b[?6l\x1b[r\x1b[4l\x1b[?7h\x1b[?25h"       /* no origin mode, full region,
								  no insert, autowrap, cursor */
		"\x1b[?9l\x1b[?1000l\x1b[?1001l\x1b[?1002l\x1b[?1003l\x1b[?1004l"
		"\x1b[?1005l\x1b[?1006l\x1b[?1015l\x1b[?1016l" /* no mouse, no focus reports */
		"\x1b[9999;1H";                 /* the last line (the prompt's newline scrolls) */
	size_t n = sizeof(pre) - 1;

	if (n > len)
		return 0;
	memcpy(out, pre, n);
	return n;
}

size_t tty_guard_end(const struct tty_out *o, char *out, size_t len)
{
	size_t w = 0;

	for (size_t i = 0; i < sizeof(report_modes) / sizeof(report_modes[0]); i++) {
		int r;

		if (!(o->modes & (1u << i)))
			continue;
		r = snprintf(out + w, len - w, "\x1b[?%uh", (unsigned)report_modes[i]);
		if (r < 0 || (size_t)r >= len - w)
			break;
		w += (size_t)r;
	}
	return w;
}
