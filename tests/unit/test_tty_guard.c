// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The approval prompt's terminal guard (userspace/tty_guard.c): keys typed
 * alone answer; no byte of a terminal report does, whatever it carries (the
 * reports the agent can provoke, 7-bit, 8-bit and UTF-8 C1 forms, X10 mouse
 * reports in both encodings, strings that hold CAN, SUB or an 8-bit ST,
 * random payloads), and the parser is back to plain keys after each; ENQ
 * leaves the agent's output, and the reporting modes it turns on are
 * tracked (split across writes, reset by RIS) and given back.
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

static void output_drops_enq(void **state)
{
	struct tty_out o = { 0 };
	char buf[] = "a\x05" "b\x05\x05" "c";

	(void)state;
	assert_int_equal(tty_out_filter(&o, buf, sizeof(buf) - 1), 3);
	assert_memory_equal(buf, "abc", 3);
}

static void output_tracks_reporting_modes(void **state)
{
	struct tty_out o = { 0 };
	char a[] = "x\x1b[?1000;10", b[] = "06h\x1b[?25l\x1b[?1004h", c[] = "\x1b[?1004l",
	     d[] = "\x1b[1000h", e[] = "\x1b" "c", out[128];
	size_t n;

	(void)state;
	tty_out_filter(&o, a, strlen(a));
	tty_out_filter(&o, b, strlen(b));
	n = tty_guard_end(&o, out, sizeof(out));
	out[n] = '\0';
	assert_string_equal(out, "\x1b[?1000h\x1b[?1004h\x1b[?1006h");
	tty_out_filter(&o, c, strlen(c));
	tty_out_filter(&o, d, strlen(d));       /* not private: an ANSI mode, not tracked */
	n = tty_guard_end(&o, out, sizeof(out));
	out[n] = '\0';
	assert_string_equal(out, "\x1b[?1000h\x1b[?1006h");
	tty_out_filter(&o, e, strlen(e));       /* RIS */
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(keys_alone_answer),
		cmocka_unit_test(reports_never_answer),
		cmocka_unit_test(split_reports),
		cmocka_unit_test(random_payloads),
		cmocka_unit_test(output_drops_enq),
		cmocka_unit_test(output_tracks_reporting_modes),
		cmocka_unit_test(guard_turns_reports_off),
	};

	return cmocka_run_group_tests_name("tty_guard", tests, NULL, NULL);
}
