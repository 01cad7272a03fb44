// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The approval prompt's terminal guard (userspace/supervisor/tty_guard.c): keys typed
 * alone answer; no byte of a terminal report does, whatever it carries (the
 * reports the agent can provoke, 7-bit, 8-bit and UTF-8 C1 forms, X10 mouse
 * reports in both encodings, strings that hold CAN, SUB or an 8-bit ST,
 * random payloads), and the parser is back to plain keys after each.  The
 * agent's output: what acts on the host (clipboard, programmed keys, remote
 * control, file transfer, passthrough, media copy, C1 forms, leaving
 * UTF-8, ENQ) is
 * dropped, what only draws passes unchanged, and random streams split at
 * random never get one of the dropped kinds to a terminal as xterm reads;
 * the reporting modes it turns on are tracked (split across writes, reset
 * by RIS) and given back.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include "tty_guard.h"

/* The keys that feeding S (N bytes) yields, as a string. */
static void keys_of(struct tty_keys *k, const char *s, size_t n, char *out, size_t len)
{
	size_t w = 0;

	for (size_t i = 0; i < n; i++) {
		int c = tty_keys_feed(k, (unsigned char)s[i]);

		if (c >= 0 && w + 1 < len)
			out[w++] = (char)c;
	}
	out[w] = '\0';
}

#define KEYS(k, lit, out) keys_of((k), (lit), sizeof(lit) - 1, (out), sizeof(out))

static void keys_alone_answer(void **state)
{
	struct tty_keys k = { 0 };
	char out[32];

	(void)state;
	KEYS(&k, "y", out);
	assert_string_equal(out, "y");
	KEYS(&k, "nS\x03", out);
	assert_string_equal(out, "nS\x03");
	/* A UTF-8 character is no key; the key after it is. */
	KEYS(&k, "\xc3\xa9y", out);
	assert_string_equal(out, "y");
}

/* Each report the agent can make a terminal send: no key in it, plain keys after. */
static void reports_never_answer(void **state)
{
	static const struct { const char *what; const char *s; size_t n; } r[] = {
#define R(w, lit) { w, lit, sizeof(lit) - 1 }
		R("DA1", "\x1b[?62;22c"),
		R("DA2", "\x1b[>41;354;0c"),
		R("XTVERSION (kitty)", "\x1bP>|kitty(0.35.2)\x1b\\"),
		R("title report, ST", "\x1b]lyes\x1b\\"),
		R("title report, BEL", "\x1b]lyes\x07"),
		R("DECRQSS echo", "\x1bP1$ry\x1b\\"),
		R("XTGETTCAP", "\x1bP1+r79=73\x1b\\"),
		R("colour report", "\x1b]11;rgb:ffff/yyyy/ssss\x1b\\"),
		R("cursor report", "\x1b[24;1R"),
		R("X10 mouse, column 89 row 83", "\x1b[M#ys"),
		R("X10 mouse, raw byte over 127", "\x1b[M#\xc3y"),
		R("1005 mouse, UTF-8 coordinate", "\x1b[M#\xc2\x80y"),
		R("SGR mouse", "\x1b[<0;89;83M"),
		R("urxvt mouse", "\x1b[32;89;83M"),
		R("focus in", "\x1b[I"),
		R("SS3 (application keypad 9)", "\x1bOy"),
		R("Alt-y", "\x1by"),
		R("ESC intermediate", "\x1b(y"),
		R("8-bit CSI", "\x9b?62;22c"),
		R("8-bit DCS", "\x90>|kitty\x1b\\"),
		R("UTF-8 C1 OSC", "\xc2\x9dlyes\x07"),
		R("UTF-8 C1 DCS", "\xc2\x90" "1$ry\x1b\\"),
		R("CAN inside a string", "\x1b]l\x18y\x1b\\"),
		R("SUB inside a string", "\x1bP\x1ay\x1b\\"),
		R("8-bit ST inside a string", "\x1bPa\x9cy\x1b\\"),
		R("UTF-8 ST inside a string", "\x1b]la\xc2\x9cy\x07"),
		R("ESC that is not ST inside a string", "\x1bP\x1bxy\x1b\\"),
		R("a character cut short, then a report", "\xc3\x1bP1$ry\x1b\\"),
		R("a mouse report runs on into the next one", "\x1b[M#\xc3\x1b[M#ys"),
		R("two reports in one read", "\x1b[0n\x1bP>|kitty\x1b\\"),
#undef R
	};

	(void)state;
	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++) {
		struct tty_keys k = { 0 };
		char out[64], after[8];

		keys_of(&k, r[i].s, r[i].n, out, sizeof(out));
		if (out[0])
			fail_msg("%s: yielded the keys \"%s\"", r[i].what, out);
		KEYS(&k, "y", after);
		if (strcmp(after, "y"))
			fail_msg("%s: a key typed after it was not read as one", r[i].what);
	}
}

/* Byte by byte is how a slow link delivers a report: the state carries. */
static void split_reports(void **state)
{
	static const char rep[] = "\x1bP>|kitty(0.35.2)\x1b\\";
	struct tty_keys k = { 0 };
	char out[8];

	(void)state;
	for (size_t i = 0; i < sizeof(rep) - 1; i++) {
		keys_of(&k, rep + i, 1, out, sizeof(out));
		assert_string_equal(out, "");
	}
	KEYS(&k, "n", out);
	assert_string_equal(out, "n");
}

/* Deterministic pseudo-random numbers (xorshift64), so a failure replays. */
static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Strings and X10 reports with random contents: never a key, whatever the bytes. */
static void random_payloads(void **state)
{
	static const char *const open[] = { "\x1b]", "\x1bP", "\x1b_", "\x1b^", "\x1bX",
					    "\xc2\x9d", "\x90" };

	(void)state;
	for (int t = 0; t < 20000; t++) {
		struct tty_keys k = { 0 };
		char buf[80], out[80], after[8];
		size_t n = 0, len = 1 + rnd() % 40;
		const char *o = open[rnd() % (sizeof(open) / sizeof(open[0]))];
		bool mouse = t % 4 == 0;

		if (mouse) {
			memcpy(buf, "\x1b[M", 3);
			n = 3;
			for (int j = 0; j < 3; j++) {
				unsigned v = 32 + (unsigned)(rnd() % 224);

				buf[n++] = (char)v;
			}
		} else {
			memcpy(buf, o, strlen(o));
			n = strlen(o);
			for (size_t j = 0; j < len; j++) {
				unsigned char c = (unsigned char)(rnd() % 256);

				buf[n++] = (char)(c == 0x1b || c == 0x07 ? 'y' : c);
			}
			memcpy(buf + n, "\x1b\\", 2);
			n += 2;
		}
		keys_of(&k, buf, n, out, sizeof(out));
		if (out[0])
			fail_msg("case %d: yielded \"%s\"", t, out);
		/* After a report (and an ESC that ends any run-on), keys are keys. */
		KEYS(&k, "\x1b[0ny", after);
		if (strcmp(after, "y"))
			fail_msg("case %d: the parser did not come back", t);
	}
}

/* The filter's output for a string literal, as a NUL-terminated string. */
static const char *filt(struct tty_out *o, const char *in, size_t n)
{
	static char out[TTY_OUT_MAX(512) + 1];
	size_t w;

	assert_true(n <= 512);
	w = tty_out_filter(o, in, n, out);
	out[w] = '\0';
	return out;
}

#define FILT(o, lit) filt((o), (lit), sizeof(lit) - 1)

static void output_drops_what_acts_on_the_host(void **state)
{
	static const struct { const char *what, *in, *out; } c[] = {
		{ "ENQ", "a\x05" "b\x05\x05" "c", "abc" },
		{ "OSC 52 (clipboard), BEL", "a\x1b]52;c;cm0gLXJmIH4K\x07" "b", "ab" },
		{ "OSC 52 (clipboard), ST", "a\x1b]52;c;?\x1b\\b", "ab" },
		{ "OSC 1337 (iTerm2 file)", "\x1b]1337;File=name=eA==:eA==\x07ok", "ok" },
		{ "OSC 5113 (kitty file transfer)", "\x1b]5113;ac=send\x1b\\ok", "ok" },
		{ "OSC without a number", "\x1b]lyes\x1b\\ok", "ok" },
		{ "DECUDK (programs a key)", "\x1bP1;1|17/726d202d7266\x1b\\ok", "ok" },
		{ "kitty remote control", "\x1bP@kitty-cmd{\"cmd\":\"launch\"}\x1b\\ok", "ok" },
		{ "tmux passthrough", "\x1bPtmux;\x1b\x1b]52;c;eA==\x07\x1b\\ok", "ok" },
		{ "APC (kitty graphics)", "\x1b_Gf=100,t=f;L2V0Yy9zaGFkb3c=\x1b\\ok", "ok" },
		{ "PM and SOS", "\x1b^x\x1b\\\x1bXy\x1b\\ok", "ok" },
		{ "media copy", "\x1b[5ia\x1b[4i\x1b[?5i", "a" },
		{ "8-bit DCS and OSC", "\x90q\x9c\x9d" "52;c;eA==\x07ok", "q52;c;eA==\x07ok" },
		{ "UTF-8 C1 DCS", "\xc2\x90" "1|\x1b\\ok", "1|ok" },
		{ "a DCS ended by a new ESC", "\x1bPx\x1b[1mB", "\x1b[1mB" },
		{ "CAN inside a CSI", "\x1b[3\x18" "1m", "1m" },
		{ "leaving UTF-8 (ESC % @)", "\x1b%@\xc3\x90q", "\xc3\x90q" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct tty_out o = { 0 };
		const char *got = filt(&o, c[i].in, strlen(c[i].in));

		if (strcmp(got, c[i].out))
			fail_msg("%s: got \"%s\"", c[i].what, got);
	}
}

static void output_keeps_what_draws(void **state)
{
	static const char *const keep[] = {
		"plain text, UTF-8 \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80 and \xc2\xa0\r\n\t\b",
		"\x1b[1;31mred\x1b[0m \x1b[2J\x1b[H\x1b[?25l\x1b[?1049h\x1b[?2026h\x1b[>1u",
		"\x1b]0;a title\x07\x1b]2;another\x1b\\",
		"\x1b]8;;https://example.org/\x1b\\link\x1b]8;;\x1b\\",
		"\x1b]11;?\x07\x1b]4;1;rgb:ff/00/00\x1b\\\x1b]104\x07\x1b]133;A\x07",
		"\x1b" "7\x1b" "8\x1b(B\x1b=\x1b>",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++) {
		struct tty_out o = { 0 };

		assert_string_equal(filt(&o, keep[i], strlen(keep[i])), keep[i]);
	}
}

/*
 * What a terminal would make of the filter's output, read the way xterm
 * reads it and, where terminals differ, the more dangerous way: returns
 * NULL, or what got through.
 */
static const char *terminal_sees(const unsigned char *b, size_t n)
{
	enum { G, E, C, O, ON } st = G;
	uint32_t num = 0;
	int digits = 0, cont = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = b[i];

		switch (st) {
		case G:
			if (c == 0x05)
				return "ENQ";
			if (cont && c >= 0x80 && c <= 0xbf) {
				if (i > 0 && b[i - 1] == 0xc2 && c <= 0x9f)
					return "a UTF-8 C1 control";
				cont--;
				break;
			}
			cont = c >= 0xc2 && c <= 0xf4 ? (c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : 1) : 0;
			if (c >= 0x80 && c <= 0x9f)
				return "an 8-bit C1 control";
			if (c == 0x1b)
				st = E;
			break;
		case E:
			if (c == 'P' || c == '_' || c == '^' || c == 'X')
				return "a DCS, APC, PM or SOS";
			if (c == '%')
				return "a character-set mode switch";
			st = c == '[' ? C : c == ']' ? ON : c == 0x1b ? E : G;
			num = 0;
			digits = 0;
			break;
		case C:
			if (c < 0x20)
				return "a control inside a CSI";
			if (c >= 0x40 && c <= 0x7e) {
				if (c == 'i')
					return "media copy";
				st = G;
			}
			break;
		case ON:
			if (c >= '0' && c <= '9') {
				num = num * 10 + (c - '0');
				digits++;
				break;
			}
			if (!digits || !(num <= 12 || num == 52 || num == 104 || num == 110 ||
					 num == 111 || num == 112 || num == 133 || num == 777) ||
			    num == 3 || num == 5 || num == 6 || num == 52)
				return "an OSC that is not on the list";
			st = O;
			cont = 0;
			/* fall through */
		case O:
			if (cont && c >= 0x80 && c <= 0xbf) {
				if (b[i - 1] == 0xc2 && c <= 0x9f)
					return "a UTF-8 C1 control inside an OSC";
				cont--;
				break;
			}
			cont = c >= 0xc2 && c <= 0xf4 ? (c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : 1) : 0;
			if (c == 0x07)
				st = G;
			else if (c == 0x1b)
				st = E;
			else if (c < 0x20 || (c >= 0x80 && c <= 0x9f))
				return "a control inside an OSC";
			break;
		}
	}
	return NULL;
}

/* Random streams of the bytes that matter: nothing of the dropped kinds gets through, however split. */
static void random_output_never_reaches_the_terminal(void **state)
{
	static const unsigned char alpha[] = { 0x1b, '[', ']', 'P', '_', '^', 'X', '\\', 0x07,
					       0x18, 0x1a, 0x05, '5', '2', '1', '0', ';', '?',
					       'i', 'h', 'a', 0x90, 0x9b, 0x9c, 0x9d, 0xc2, 0xc3,
					       0xa9, 0x01, 0x7f, 0xe2, 0x82, '%', '@' };
	static char whole[TTY_OUT_MAX(64)], parts[TTY_OUT_MAX(64) * 2];

	(void)state;
	for (int t = 0; t < 100000; t++) {
		struct tty_out a = { 0 }, b = { 0 };
		unsigned char in[64];
		size_t n = 1 + rnd() % sizeof(in), wa, wb = 0;
		const char *bad;

		for (size_t i = 0; i < n; i++)
			in[i] = alpha[rnd() % sizeof(alpha)];
		wa = tty_out_filter(&a, (const char *)in, n, whole);
		assert_true(wa <= TTY_OUT_MAX(n));
		for (size_t i = 0; i < n;) {
			size_t k = 1 + rnd() % 7;

			if (k > n - i)
				k = n - i;
			wb += tty_out_filter(&b, (const char *)in + i, k, parts + wb);
			i += k;
		}
		if (wa != wb || memcmp(whole, parts, wa))
			fail_msg("case %d: the output depends on how the input was split", t);
		bad = terminal_sees((const unsigned char *)whole, wa);
		if (bad) {
			char hex[64 * 3 + 1];

			for (size_t i = 0; i < n; i++)
				snprintf(hex + 3 * i, 4, "%02x ", in[i]);
			fail_msg("case %d: %s reached the terminal from: %s", t, bad, hex);
		}
	}
}

static void output_tracks_reporting_modes(void **state)
{
	struct tty_out o = { 0 };
	char out[128];
	size_t n;

	(void)state;
	FILT(&o, "x\x1b[?1000;10");
	FILT(&o, "06h\x1b[?25l\x1b[?1004h");
	n = tty_guard_end(&o, out, sizeof(out));
	out[n] = '\0';
	assert_string_equal(out, "\x1b[?1000h\x1b[?1004h\x1b[?1006h");
	FILT(&o, "\x1b[?1004l");
	FILT(&o, "\x1b[1000h");         /* not private: an ANSI mode, not tracked */
	n = tty_guard_end(&o, out, sizeof(out));
	out[n] = '\0';
	assert_string_equal(out, "\x1b[?1000h\x1b[?1006h");
	FILT(&o, "\x1b" "c");           /* RIS */
	assert_int_equal(tty_guard_end(&o, out, sizeof(out)), 0);
}

static void guard_turns_reports_off(void **state)
{
	char out[512];
	size_t n;

	(void)state;
	n = tty_guard_begin(out, sizeof(out));
	assert_true(n > 0);
	out[n] = '\0';
	assert_int_equal(out[0], 0x18);
	for (const char *m = "9,1000,1001,1002,1003,1004,1005,1006,1015,1016"; *m;) {
		char want[16];
		int len = (int)strcspn(m, ",");

		snprintf(want, sizeof(want), "\x1b[?%.*sl", len, m);
		if (!strstr(out, want))
			fail_msg("mode %.*s is not turned off", len, m);
		m += len + (m[len] == ',');
	}
	assert_int_equal(tty_guard_begin(out, 8), 0);
}

/*
 * Heavy output (tty_out_filter's fast path for runs of plain text): colour
 * and text pass unchanged in one long call, and a byte the filter drops or
 * holds in the middle of a long run is still judged: ENQ dropped, ESC ] 52
 * (the clipboard) dropped whole, a CSI held and passed at its end.
 */
static void long_runs_still_judged(void **state)
{
	static char in[64 * 1024], out[TTY_OUT_MAX(sizeof(in))];
	static const char tail[] = "text\x05" "more\x1b]52;c;ZWNobw==\x07" "after\x1b[31mred\x1b[0m";
	static const char want[] = "textmore" "after\x1b[31mred\x1b[0m";
	struct tty_out o = { 0 };
	size_t n = 0, w;

	(void)state;
	while (n + 64 < sizeof(in) - sizeof(tail))
		n += (size_t)snprintf(in + n, 64, "\x1b[3%dmline %zu\x1b[0m plain text\r\n",
				      (int)(n % 7), n);
	w = tty_out_filter(&o, in, n, out);
	assert_int_equal(w, n);
	assert_memory_equal(out, in, n);
	memcpy(in + n, tail, sizeof(tail) - 1);
	w = tty_out_filter(&o, in + n, sizeof(tail) - 1, out);
	assert_int_equal(w, sizeof(want) - 1);
	assert_memory_equal(out, want, w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(keys_alone_answer),
		cmocka_unit_test(reports_never_answer),
		cmocka_unit_test(split_reports),
		cmocka_unit_test(random_payloads),
		cmocka_unit_test(output_drops_what_acts_on_the_host),
		cmocka_unit_test(output_keeps_what_draws),
		cmocka_unit_test(random_output_never_reaches_the_terminal),
		cmocka_unit_test(output_tracks_reporting_modes),
		cmocka_unit_test(guard_turns_reports_off),
		cmocka_unit_test(long_runs_still_judged),
	};

	return cmocka_run_group_tests_name("tty_guard", tests, NULL, NULL);
}
