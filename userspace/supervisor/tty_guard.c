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
 *      reply that is bare text.  The same filter drops what would act on
 *      the host through the terminal (tty_out_filter, below).
 *   4. Before the question: CAN and ST end any sequence or string left
 *      open, then 7-bit replies (S7C1T), plain text attributes, the ASCII
 *      character set, the default colours and palette, the full scroll
 *      region, no origin or insert mode, autowrap on, the cursor shown,
 *      mouse and focus reports off; the question is written from the last
 *      line.  After the last prompt the reporting modes the agent had on
 *      are turned back on, and the agent is sent SIGWINCH to repaint.
 *   5. No key counts in a question's first second (PROMPT_GRACE_MS,
 *      sup_state.h): the agent reads what the human types to it.
 * What it cannot close: a terminal that reports in a form no standard
 * gives (a bare-text reply other than the answerback); a key the human
 * pastes; a terminal whose window the agent may resize or retitle to
 * mislead (XTWINOPS, refused by default by the common terminals).  A
 * human who types a key that a sequence swallows (ESC then 'y' reads as
 * Alt-y) types it again; nothing here can turn a report into an answer.
 */
#include <stdio.h>
#include <string.h>

#include "tty_guard.h"
#include "util.h"

/* The continuation bytes a UTF-8 lead byte announces; 0 for any other byte. */
static uint8_t utf8_cont(unsigned char c)
{
	return c < 0xc2 || c > 0xf4 ? 0 : c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : 1;
}

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
	k->cont = utf8_cont(c);
	k->lead = c;
	if (!k->cont && c >= 0x80 && c <= 0x9f) {
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
		k->cont = utf8_cont(c);
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

bool tty_keys_lone_esc(struct tty_keys *k)
{
	if (k->st != TK_ESC)
		return false;
	k->st = TK_GROUND;
	return true;
}

/* DEC private modes in which the terminal sends input of its own. */
static const uint16_t report_modes[] = { 9, 1000, 1001, 1002, 1003, 1004, 1005, 1006, 1015, 1016 };

static void mode_set(struct tty_out *o, uint32_t m, bool on)
{
	for (size_t i = 0; i < ARRAY_SIZE(report_modes); i++)
		if (report_modes[i] == m) {
			if (on)
				o->modes |= 1u << i;
			else
				o->modes &= ~(1u << i);
		}
}

enum { TO_GROUND, TO_C2, TO_ESC, TO_ESC_PCT, TO_CSI, TO_CSI_DROP, TO_OSC_NUM, TO_OSC,
       TO_OSC_ESC, TO_DROP, TO_DROP_ESC };

/* OSC commands a terminal only draws with: titles, colours, cwd, links, notices, marks. */
static bool osc_allowed(uint32_t num)
{
	static const uint16_t ok[] = { 0, 1, 2, 4, 7, 8, 9, 10, 11, 12, 104, 110, 111, 112, 133, 777 };

	for (size_t i = 0; i < ARRAY_SIZE(ok); i++)
		if (ok[i] == num)
			return true;
	return false;
}

/* A CSI held whole in o->hold, judged at its final byte. */
static size_t csi_done(struct tty_out *o, char *out)
{
	unsigned char fin = (unsigned char)o->hold[o->n - 1];
	bool priv = o->n > 3 && o->hold[2] == '?';
	uint32_t par = 0;

	if (fin == 'i')
		return 0;       /* media copy: xterm's printer command runs on the host */
	if (priv && (fin == 'h' || fin == 'l'))
		for (size_t i = 3; i < o->n; i++) {
			char c = o->hold[i];

			if (c >= '0' && c <= '9') {
				if (par < 100000)
					par = par * 10 + (uint32_t)(c - '0');
			} else {
				mode_set(o, par, fin == 'h');
				par = 0;
			}
		}
	memcpy(out, o->hold, o->n);
	return o->n;
}

/*
 * One byte of text (GROUND, or an OSC's content): UTF-8 passes, C1
 * controls do not, 8-bit (a stray 0x80..0x9f) or UTF-8 encoded
 * (U+0080..U+009F, C2 80..C2 9F): a terminal that honours them would start
 * the sequences this filter judges in their 7-bit form.  A C2 is held
 * until the next byte tells which it is (TO_C2).
 */
static size_t text_byte(struct tty_out *o, unsigned char c, char *out, uint8_t back)
{
	if (o->cont && c >= 0x80 && c <= 0xbf) {
		o->cont--;
		out[0] = (char)c;
		return 1;
	}
	o->cont = 0;
	if (c == 0xc2) {
		o->st = TO_C2;          /* judged with the next byte */
		o->back = back;
		return 0;
	}
	if (c >= 0x80 && c <= 0x9f)
		return 0;
	o->cont = utf8_cont(c);         /* C2 was taken above */
	out[0] = (char)c;
	return 1;
}

static size_t out_byte(struct tty_out *o, unsigned char c, char *out);

/* ESC and the byte after it. */
static size_t esc_byte(struct tty_out *o, unsigned char c, char *out)
{
	switch (c) {
	case '[':
		o->st = TO_CSI;
		o->hold[0] = 0x1b;
		o->hold[1] = '[';
		o->n = 2;
		return 0;
	case ']':
		o->st = TO_OSC_NUM;
		o->hold[0] = 0x1b;
		o->hold[1] = ']';
		o->n = 2;
		o->num = 0;
		return 0;
	case 'P': case '_': case '^': case 'X':
		o->st = TO_DROP;        /* DCS, APC, PM, SOS: never shown */
		return 0;
	case 0x1b:
		return 0;               /* ESC ESC: the first one did nothing */
	case '\\':
		o->st = TO_GROUND;      /* a stray ST ends nothing */
		return 0;
	case '%':
		/*
		 * ESC % @ takes a terminal out of UTF-8: the continuation
		 * bytes 0x80..0x9f of text passed as UTF-8 would then be C1
		 * controls.  No character-set mode switch gets through.
		 */
		o->st = TO_ESC_PCT;
		return 0;
	case 0x18: case 0x1a:
		o->st = TO_GROUND;
		return 0;
	default:
		if (c < 0x20 || c >= 0x7f) {
			o->st = TO_GROUND;
			return out_byte(o, c, out);   /* ESC then a control or non-ASCII: ESC ignored */
		}
		if (c == 'c')
			o->modes = 0;   /* RIS: the terminal resets them all */
		o->st = TO_GROUND;
		out[0] = 0x1b;
		out[1] = (char)c;
		return 2;
	}
}

static size_t out_byte(struct tty_out *o, unsigned char c, char *out)
{
	size_t w;

	if (c < 0x80 || c > 0xbf)
		o->cont = 0;    /* a character cut short: what follows is no part of it */
	switch (o->st) {
	case TO_GROUND:
		if (c == 0x1b) {
			o->st = TO_ESC;
			o->cont = 0;
			return 0;
		}
		if (c == 0x05)
			return 0;       /* ENQ: its answerback is bare text (tty_keys_feed) */
		return text_byte(o, c, out, TO_GROUND);
	case TO_C2:
		o->st = o->back;
		if (c >= 0x80 && c <= 0xbf) {
			if (c <= 0x9f)
				return 0;       /* a UTF-8 C1 control: both bytes go */
			out[0] = (char)0xc2;
			out[1] = (char)c;
			return 2;
		}
		out[0] = (char)0xc2;    /* a lone lead byte: shown, and c read afresh */
		return 1 + out_byte(o, c, out + 1);
	case TO_ESC:
		return esc_byte(o, c, out);
	case TO_ESC_PCT:
		o->st = c == 0x1b ? TO_ESC : TO_GROUND;
		return 0;
	case TO_CSI:
		if (c == 0x1b || c == 0x18 || c == 0x1a || c >= 0x80) {
			o->st = TO_GROUND;      /* aborted: nothing of it was shown */
			return c == 0x18 || c == 0x1a ? 0 : out_byte(o, c, out);
		}
		if (c < 0x20)
			return 0;               /* a control inside: dropped */
		if (o->n == sizeof(o->hold)) {
			o->st = TO_CSI_DROP;
			return out_byte(o, c, out);
		}
		o->hold[o->n++] = (char)c;
		if (c >= 0x40 && c <= 0x7e) {
			o->st = TO_GROUND;
			return csi_done(o, out);
		}
		return 0;
	case TO_CSI_DROP:
		if (c == 0x1b || c >= 0x80) {
			o->st = TO_GROUND;
			return out_byte(o, c, out);
		}
		if ((c >= 0x40 && c <= 0x7e) || c == 0x18 || c == 0x1a)
			o->st = TO_GROUND;
		return 0;
	case TO_OSC_NUM:
		if (c >= '0' && c <= '9' && o->n < 7) {     /* 5 digits: no wrap-around */
			o->hold[o->n++] = (char)c;
			o->num = o->num * 10 + (uint32_t)(c - '0');
			return 0;
		}
		/* Only digits then ';' or the end: a byte dropped here could join two numbers. */
		if (o->n == 2 || !osc_allowed(o->num) || (c != ';' && c != 0x07 && c != 0x1b)) {
			o->st = TO_DROP;
			return out_byte(o, c, out);
		}
		memcpy(out, o->hold, o->n);
		w = o->n;
		o->st = TO_OSC;
		o->cont = 0;
		return w + out_byte(o, c, out + w);
	case TO_OSC:
		/*
		 * The content of an OSC let through: text only.  BEL ends it;
		 * any other control, ESC included, ends it here with an ST of
		 * ours and is then read afresh, so what a terminal reads as a
		 * new sequence this filter has judged as one.
		 */
		if (c == 0x07) {
			o->st = TO_GROUND;
			out[0] = 0x07;
			return 1;
		}
		if (c == 0x1b) {
			o->st = TO_OSC_ESC;
			return 0;
		}
		if (c < 0x20 || c == 0x7f) {
			o->st = TO_GROUND;
			out[0] = 0x1b;
			out[1] = '\\';
			return 2 + out_byte(o, c, out + 2);
		}
		return text_byte(o, c, out, TO_OSC);
	case TO_OSC_ESC:
		o->st = TO_GROUND;
		out[0] = 0x1b;
		out[1] = '\\';
		if (c == '\\')
			return 2;
		o->st = TO_ESC;
		return 2 + out_byte(o, c, out + 2);
	case TO_DROP:
		if (c == 0x1b)
			o->st = TO_DROP_ESC;
		else if (c == 0x07 || c == 0x18 || c == 0x1a)
			o->st = TO_GROUND;
		return 0;
	case TO_DROP_ESC:
		if (c == '\\') {
			o->st = TO_GROUND;
			return 0;
		}
		o->st = TO_ESC;         /* the terminal never saw the string: ESC starts anew */
		return out_byte(o, c, out);
	default:
		o->st = TO_GROUND;
		return 0;
	}
}

/*
 * Attack, beyond the prompt: what the agent prints reaches a terminal on
 * the host, and terminals act on some sequences outside their window:
 * OSC 52 sets (or reads back) the host's clipboard, so a command is
 * pasted into a host shell later or a password read; DECUDK programs a
 * function key to type a command into the next host shell; kitty's remote
 * control (a DCS) and iTerm2's and kitty's file transfer (OSC 1337, 5113)
 * launch programs and write files on the host; tmux passthrough (a DCS)
 * carries any of these past tmux; xterm's media copy runs its printer
 * command.  So the filter lets through text and the sequences that only
 * draw, and drops the rest whole (an OSC is judged by its number before
 * any of it leaves).  Costs: sixel and kitty images, tmux passthrough and
 * clipboard copy from inside the sandbox do not work.  Not closed: what a
 * listed sequence can still do (a hyperlink the human clicks, window
 * titles), and terminals that give other sequences host effects.
 */
size_t tty_out_filter(struct tty_out *o, const char *in, size_t n, char *out)
{
	size_t w = 0;

	for (size_t i = 0; i < n;) {
		/*
		 * The fast path, for the bulk of heavy output: in GROUND, no
		 * UTF-8 character open, a byte below 0x80 other than ESC and ENQ
		 * is text that out_byte would copy unchanged (text_byte), and
		 * leaves the state as it was.  The run of such bytes is found
		 * by looking at each one, as out_byte would, and copied whole;
		 * the first byte that is anything else goes to out_byte.  Every
		 * byte is still judged, by the same rule, in the same state.
		 */
		if (o->st == TO_GROUND && !o->cont) {
			size_t j = i;

			while (j < n) {
				unsigned char c = (unsigned char)in[j];

				if (c >= 0x80 || c == 0x1b || c == 0x05)
					break;
				j++;
			}
			if (j > i) {
				memcpy(out + w, in + i, j - i);
				w += j - i;
				i = j;
				continue;
			}
		}
		w += out_byte(o, (unsigned char)in[i], out + w);
		i++;
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

	for (size_t i = 0; i < ARRAY_SIZE(report_modes); i++) {
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
