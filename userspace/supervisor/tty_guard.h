/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The terminal between the agent and the human who approves its calls.
 * The agent cannot write to cordon's terminal's input (it has a pty of its
 * own, agent_tty.c), but its output reaches that terminal, and a terminal answers
 * some output with input: device reports, the ENQ answerback, echoed
 * titles and settings, mouse and focus reports once the output enables
 * them.  Read by a y/n prompt, such an answer is the agent approving its
 * own call.  Why each piece is there, and what it cannot close:
 * tty_guard.c.  Pure byte parsing; the supervisor does the I/O.
 */
#ifndef CORDON_TTY_GUARD_H
#define CORDON_TTY_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The terminal's input as a parser sees it: which bytes a human typed alone. */
struct tty_keys {
	uint8_t st;             /* TK_* (tty_guard.c) */
	uint8_t left;           /* mouse report: characters still to come */
	uint8_t cont;           /* UTF-8: continuation bytes still to come */
	uint8_t lead;           /* UTF-8: the lead byte of the character */
	bool any;               /* CSI: a parameter or intermediate byte seen */
	bool osc;               /* string: OSC (BEL ends it too) */
};

/*
 * Feed one byte of the terminal's input.  Returns the byte when it is a
 * key typed outside every control sequence (an ASCII character or C0
 * control alone), or -1 when it belongs to a sequence or a non-ASCII
 * character.  The state carries across reads, and across the time input is
 * relayed to the agent (feed those bytes too), so a report split around a
 * prompt's start is still a report.
 */
int tty_keys_feed(struct tty_keys *k, unsigned char c);

/*
 * The last byte fed was an ESC that ended its read: take it as the Esc key
 * alone (the parser back outside every sequence), so the key typed next is
 * not read as Alt-key.  True when it was one.  Call it only where what
 * follows cannot answer at once (approve.c: a sentence dropped, the
 * question asked again with its grace): a report cut right after its ESC
 * would have its rest read as keys.
 */
bool tty_keys_lone_esc(struct tty_keys *k);

/* The agent's output on its way to the terminal. */
#define TTY_OUT_HOLD 256
#define TTY_OUT_MAX(n) (2 * (n) + TTY_OUT_HOLD + 4)
struct tty_out {
	uint8_t st;             /* TO_* (tty_guard.c) */
	uint8_t cont;           /* UTF-8 continuation bytes still to come */
	uint8_t back;           /* after a held C2: the state to return to */
	uint32_t num;           /* OSC: the command number so far */
	uint32_t modes;         /* TTY_MODE_* the agent has turned on */
	size_t n;               /* bytes held */
	char hold[TTY_OUT_HOLD];        /* a CSI or an OSC's start, until judged */
};

/*
 * Filter the agent's output: what reaches the terminal is text and the
 * control sequences a terminal only draws with.  Dropped whole: ENQ, every
 * DCS, APC, PM and SOS string, OSC commands other than the listed ones
 * (title, colours, hyperlinks, cwd, notifications, shell marks), media copy
 * (CSI i), character-set switches (ESC %), and C1 controls in 8-bit or
 * UTF-8 form.  The reporting modes
 * the agent turns on are tracked.  Writes at most TTY_OUT_MAX(n) bytes to
 * out; returns how many.  The state carries across calls.
 */
size_t tty_out_filter(struct tty_out *o, const char *in, size_t n, char *out);

/*
 * Bytes to write before a prompt: end whatever sequence the agent left
 * open, reset what can hide or disguise text, and turn off every mode in
 * which the terminal sends input of its own.  Returns the length written
 * (at most len; 512 is enough).
 */
size_t tty_guard_begin(char *out, size_t len);

/* Bytes to write after the last prompt: the agent's reporting modes back on. */
size_t tty_guard_end(const struct tty_out *o, char *out, size_t len);

/* cordon's terminal and the agent's (agent_tty.c sets them up, tty_guard.c filters). */
struct terminal {
	int tty_fd;                     /* cordon's terminal (prompts), or -1 */
	int pty_master;                 /* the agent's terminal, or -1 */
	int pty_out;                    /* where its output goes: cordon's stdout or stderr */
	int term_fd;                    /* a descriptor of cordon's terminal (its size) */
	struct tty_keys keys;           /* cordon's terminal's input, parsed */
	struct tty_out out;             /* the agent's output, filtered */
	/*
	 * Ctrl-Z on the agent's terminal stopped its job (agent_tty.c): give the
	 * human's terminal back and stop cordon itself; returns at `fg`, the
	 * terminal cordon's again.  NULL: no terminal of the human's to give.
	 */
	void (*suspend)(struct terminal *t);
};

#endif
