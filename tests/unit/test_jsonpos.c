// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "jsonpos.h"

#define assert_pos(m, ptr, key, l, c) do {					\
	int _l = -1, _c = -1;							\
	assert_int_equal(jpos_get((m), (ptr), (key), &_l, &_c), 0);		\
	assert_int_equal(_l, (l));						\
	assert_int_equal(_c, (c));						\
} while (0)

static struct jpos_map *scan(const char *text)
{
	struct jpos_map *m = NULL;

	assert_int_equal(jpos_scan(text, strlen(text), &m), 0);
	assert_non_null(m);
	return m;
}

static int scan_rc(const char *text, size_t len)
{
	struct jpos_map *m = (struct jpos_map *)1;
	/* An exact-size copy, so valgrind and ASan see any read past the end. */
	char *copy = malloc(len ? len : 1);
	int r;

	assert_non_null(copy);
	memcpy(copy, text, len);
	r = jpos_scan(copy, len, &m);
	if (r < 0)
		assert_null(m);
	jpos_free(m);
	free(copy);
	return r;
}

/* xorshift64*: a fixed seed makes every run see the same inputs. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

/* Byte offset of (line, col), counted independently of the module under test. */
static long offset_of(const char *text, size_t len, int line, int col)
{
	int l = 1, c = 1;

	for (size_t i = 0; i < len; i++) {
		unsigned char b = (unsigned char)text[i];

		if ((b & 0xc0) == 0x80)
			continue;
		if (l == line && c == col)
			return (long)i;
		if (b == '\n') {
			l++;
			c = 1;
		} else {
			c++;
		}
	}
	return -1;
}

/*
 * Check one position against jansson twice over: the text from that offset
 * parses (as a prefix) to the value jansson put at the pointer, and with a
 * '#' there instead, jansson's error names the same line and column.
 */
static void check_at(const char *text, size_t len, int line, int col, const json_t *want,
		     bool poison)
{
	long o = offset_of(text, len, line, col);
	json_error_t err;
	json_t *sub;

	assert_true(o >= 0);
	sub = json_loadb(text + o, len - (size_t)o,
			 JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK | JSON_ALLOW_NUL, &err);
	assert_non_null(sub);
	assert_true(json_equal(sub, want));
	json_decref(sub);
	if (poison) {
		char *copy = malloc(len);

		assert_non_null(copy);
		memcpy(copy, text, len);
		copy[o] = '#';
		sub = json_loadb(copy, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
		assert_null(sub);
		assert_int_equal(err.line, line);
		assert_int_equal(err.column, col);
		assert_int_equal(err.position, o + 1);
		free(copy);
	}
}

/* Every value and member name jansson found must be where the map says. */
static void walk(const struct jpos_map *m, const char *text, size_t len, json_t *v,
		 char *ptr, size_t size, bool poison)
{
	size_t mark = strlen(ptr), i;
	int line, col, kline, kcol;
	const char *k;
	json_t *child;

	assert_int_equal(jpos_get(m, ptr, false, &line, &col), 0);
	check_at(text, len, line, col, v, poison);
	json_object_foreach(v, k, child) {
		json_t *name = json_string(k);

		assert_int_equal(jpos_push(ptr, size, k), 0);
		assert_int_equal(jpos_get(m, ptr, true, &kline, &kcol), 0);
		check_at(text, len, kline, kcol, name, poison);
		json_decref(name);
		walk(m, text, len, child, ptr, size, poison);
		ptr[mark] = 0;
	}
	json_array_foreach(v, i, child) {
		assert_int_equal(jpos_push_index(ptr, size, i), 0);
		assert_int_equal(jpos_get(m, ptr, true, &kline, &kcol), 0);
		assert_int_equal(jpos_get(m, ptr, false, &line, &col), 0);
		assert_int_equal(kline, line);
		assert_int_equal(kcol, col);
		walk(m, text, len, child, ptr, size, poison);
		ptr[mark] = 0;
	}
}

/*
 * Scan an arbitrary buffer and hold the result against jansson's: what
 * jansson accepts we accept (unless too deep for us), what we call invalid
 * jansson rejects, and where both accept every pointer checks out.  jansson
 * may reject what we accept: "\u0000" in a member name, number overflow.
 */
static void differential(const char *text, size_t len, bool poison)
{
	struct jpos_map *m = NULL;
	char *copy = malloc(len ? len : 1);
	json_error_t err;
	json_t *j;
	int r;

	assert_non_null(copy);
	memcpy(copy, text, len);
	r = jpos_scan(copy, len, &m);
	assert_true(r == 0 || r == -EINVAL || r == -E2BIG);
	j = json_loadb(copy, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
	if (j)
		assert_true(r == 0 || r == -E2BIG);
	if (r == -EINVAL)
		assert_null(j);
	if (r == 0 && j) {
		char ptr[8192] = "";

		walk(m, copy, len, j, ptr, sizeof(ptr), poison);
	}
	json_decref(j);
	jpos_free(m);
	free(copy);
}

static const char policy[] =
	"{\n"
	"  \"cordon_policy\": 1,\n"
	"  \"rules\": [\n"
	"    { \"name\": \"ws\", \"decision\": \"allow\",\n"
	"      \"fs\": { \"paths\": [\"${WORKSPACE}\"], \"rights\": [\"read\", \"wirte\"] } },\n"
	"    {\"name\":\"net\",\"net\":{\"ports\":[443,\"8000-8100\"],\"x\":-1.5e3}}\n"
	"  ],\n"
	"  \"budgets\": { \"cpu\": 0.5, \"ok\": true, \"no\": false, \"none\": null }\n"
	"}\n";

static void nested_objects_and_arrays(void **state)
{
	struct jpos_map *m = scan(policy);

	assert_pos(m, "", false, 1, 1);
	assert_pos(m, "/cordon_policy", false, 2, 20);
	assert_pos(m, "/rules", false, 3, 12);
	assert_pos(m, "/rules/0", false, 4, 5);
	assert_pos(m, "/rules/0/name", false, 4, 15);
	assert_pos(m, "/rules/0/decision", false, 4, 33);
	assert_pos(m, "/rules/0/fs", false, 5, 13);
	assert_pos(m, "/rules/0/fs/paths", false, 5, 24);
	assert_pos(m, "/rules/0/fs/paths/0", false, 5, 25);
	assert_pos(m, "/rules/0/fs/rights/1", false, 5, 61);
	assert_pos(m, "/rules/1", false, 6, 5);
	assert_pos(m, "/rules/1/net/ports/0", false, 6, 35);
	assert_pos(m, "/rules/1/net/ports/1", false, 6, 39);
	assert_pos(m, "/rules/1/net/x", false, 6, 56);
	assert_pos(m, "/budgets/cpu", false, 8, 23);
	assert_pos(m, "/budgets/ok", false, 8, 34);
	assert_pos(m, "/budgets/no", false, 8, 46);
	assert_pos(m, "/budgets/none", false, 8, 61);
	jpos_free(m);
}

static void keys_and_values_differ(void **state)
{
	struct jpos_map *m = scan(policy);

	assert_pos(m, "/cordon_policy", true, 2, 3);
	assert_pos(m, "/rules/0/fs/rights", true, 5, 42);
	assert_pos(m, "/rules/0/fs/rights", false, 5, 52);
	assert_pos(m, "/rules/1/net", true, 6, 19);
	/* An array element and the root have no name: key=true is the value. */
	assert_pos(m, "/rules/0/fs/rights/1", true, 5, 61);
	assert_pos(m, "/rules/1", true, 6, 5);
	assert_pos(m, "", true, 1, 1);
	/* line and col are optional. */
	assert_int_equal(jpos_get(m, "/rules", true, NULL, NULL), 0);
	jpos_free(m);
}

static void missing_and_malformed_pointers(void **state)
{
	struct jpos_map *m = scan(policy);

	assert_int_equal(jpos_get(m, "/nope", false, NULL, NULL), -ENOENT);
	assert_int_equal(jpos_get(m, "/rules/2", false, NULL, NULL), -ENOENT);
	assert_int_equal(jpos_get(m, "/rules/01", false, NULL, NULL), -ENOENT);
	assert_int_equal(jpos_get(m, "/rules/-", false, NULL, NULL), -ENOENT);
	assert_int_equal(jpos_get(m, "/rules/name", false, NULL, NULL), -ENOENT);
	assert_int_equal(jpos_get(m, "/cordon_policy/0", false, NULL, NULL), -ENOENT);
	assert_int_equal(jpos_get(m, "/rules/0/fs/rights/1/x", false, NULL, NULL), -ENOENT);
	assert_int_equal(jpos_get(m, "/", false, NULL, NULL), -ENOENT);
	assert_int_equal(jpos_get(m, "/rules/", false, NULL, NULL), -ENOENT);
	assert_int_equal(jpos_get(m, "//", false, NULL, NULL), -ENOENT);
	/* A member name is one token: "0" in an object is a name, not an index. */
	assert_int_equal(jpos_get(m, "/rules/0/name/0", false, NULL, NULL), -ENOENT);
	assert_int_equal(jpos_get(m, "rules", false, NULL, NULL), -EINVAL);
	assert_int_equal(jpos_get(m, "/ru~2les", false, NULL, NULL), -EINVAL);
	assert_int_equal(jpos_get(m, "/rules~", false, NULL, NULL), -EINVAL);
	assert_int_equal(jpos_get(m, NULL, false, NULL, NULL), -EINVAL);
	assert_int_equal(jpos_get(NULL, "", false, NULL, NULL), -EINVAL);
	jpos_free(m);
}

static void escaped_member_names(void **state)
{
	struct jpos_map *m = scan(
		"{\"a/b\": 1, \"m~n\": 2, \"~1\": 3,\n"
		"\"caf\\u00e9\": 4, \"\\ud83d\\ude00\": 5,\n"
		"\"q\\\"\\\\\\/\": 6, \"\": 7, \"\\u0000\": 8, \"\\t\\n\": 9, \"0\": 10}");
	char ptr[64] = "";

	assert_pos(m, "/a~1b", true, 1, 2);
	assert_pos(m, "/a~1b", false, 1, 9);
	assert_pos(m, "/m~0n", false, 1, 19);
	assert_pos(m, "/~01", false, 1, 28);
	assert_pos(m, "/caf\xc3\xa9", true, 2, 1);
	assert_pos(m, "/caf\xc3\xa9", false, 2, 14);
	assert_pos(m, "/\xf0\x9f\x98\x80", true, 2, 17);
	assert_pos(m, "/\xf0\x9f\x98\x80", false, 2, 33);
	assert_pos(m, "/q\"\\~1", false, 3, 12);
	assert_pos(m, "/", true, 3, 15);
	assert_pos(m, "/", false, 3, 19);
	assert_pos(m, "/\t\n", false, 3, 43);
	assert_pos(m, "/0", false, 3, 51);
	/* Unescaped, that '/' splits the name in two. */
	assert_int_equal(jpos_get(m, "/q\"\\/", false, NULL, NULL), -ENOENT);
	assert_int_equal(jpos_get(m, "/a/b", false, NULL, NULL), -ENOENT);
	assert_int_equal(jpos_get(m, "/m~1n", false, NULL, NULL), -ENOENT);
	assert_int_equal(jpos_get(m, "/~1", false, NULL, NULL), -ENOENT);
	assert_int_equal(jpos_get(m, "/caf\\u00e9", false, NULL, NULL), -ENOENT);

	/* The helper produces exactly the pointers above. */
	assert_int_equal(jpos_push(ptr, sizeof(ptr), "q\"\\/"), 0);
	assert_string_equal(ptr, "/q\"\\~1");
	assert_pos(m, ptr, false, 3, 12);
	ptr[0] = 0;
	assert_int_equal(jpos_push(ptr, sizeof(ptr), "~1"), 0);
	assert_string_equal(ptr, "/~01");
	assert_pos(m, ptr, false, 1, 28);
	jpos_free(m);
}

static void columns_count_code_points(void **state)
{
	/* "é" is 2 bytes, "€" 3, "😀" 4: each is one column, as in jansson. */
	struct jpos_map *m = scan("{\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\": \"\xc3\xa9\", \"k\": [1, \"\xe2\x82\xac\", 2]}");

	assert_pos(m, "/\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", true, 1, 2);
	assert_pos(m, "/\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", false, 1, 9);
	assert_pos(m, "/k", true, 1, 14);
	assert_pos(m, "/k", false, 1, 19);
	assert_pos(m, "/k/1", false, 1, 23);
	assert_pos(m, "/k/2", false, 1, 28);
	jpos_free(m);
}

static void crlf_and_lone_cr(void **state)
{
	/* "\r\n" is one line break; a lone '\r' is whitespace taking a column. */
	struct jpos_map *m = scan("{\r\n\"a\":\r\n 1,\r\"b\": 2,\n\r\"c\"\r\n:\r\n3}\r\n");

	assert_pos(m, "/a", true, 2, 1);
	assert_pos(m, "/a", false, 3, 2);
	assert_pos(m, "/b", true, 3, 5);
	assert_pos(m, "/b", false, 3, 10);
	assert_pos(m, "/c", true, 4, 2);
	assert_pos(m, "/c", false, 6, 1);
	jpos_free(m);
}

static void root_scalars(void **state)
{
	static const struct { const char *text; int line, col; } cases[] = {
		{ "42", 1, 1 }, { "  \"s\"  ", 1, 3 }, { "\n\ttrue\n", 2, 2 },
		{ "false", 1, 1 }, { "\r\n null", 2, 2 }, { "-0.5e-3", 1, 1 },
		{ "0", 1, 1 }, { "\"\"", 1, 1 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct jpos_map *m = scan(cases[i].text);

		assert_pos(m, "", false, cases[i].line, cases[i].col);
		assert_pos(m, "", true, cases[i].line, cases[i].col);
		assert_int_equal(jpos_get(m, "/0", false, NULL, NULL), -ENOENT);
		assert_int_equal(jpos_get(m, "/", false, NULL, NULL), -ENOENT);
		jpos_free(m);
	}
}

static void empty_containers(void **state)
{
	struct jpos_map *m = scan("{\"a\":{},\"b\":[],\"c\":[[],{}],\"d\":{\"\":[]}}");

	assert_pos(m, "/a", false, 1, 6);
	assert_pos(m, "/b", false, 1, 13);
	assert_pos(m, "/c/0", false, 1, 21);
	assert_pos(m, "/c/1", false, 1, 24);
	assert_pos(m, "/d/", false, 1, 36);
	assert_int_equal(jpos_get(m, "/a/", false, NULL, NULL), -ENOENT);
	assert_int_equal(jpos_get(m, "/b/0", false, NULL, NULL), -ENOENT);
	assert_int_equal(jpos_get(m, "/c/0/0", false, NULL, NULL), -ENOENT);
	jpos_free(m);
	m = scan(" [ ] ");
	assert_pos(m, "", false, 1, 2);
	jpos_free(m);
	m = scan("{}");
	assert_pos(m, "", false, 1, 1);
	jpos_free(m);
}

static void duplicate_members_last_wins(void **state)
{
	/* The earlier value and everything below it vanish, as in jansson. */
	struct jpos_map *m = scan("{\"a\": {\"x\": 1, \"y\": [2]}, \"b\": 0, \"a\": [5, {\"x\": 6}]}");

	assert_pos(m, "/a", true, 1, 35);
	assert_pos(m, "/a", false, 1, 40);
	assert_pos(m, "/a/0", false, 1, 41);
	assert_pos(m, "/a/1/x", false, 1, 50);
	assert_pos(m, "/b", false, 1, 32);
	assert_int_equal(jpos_get(m, "/a/x", false, NULL, NULL), -ENOENT);
	assert_int_equal(jpos_get(m, "/a/y/0", false, NULL, NULL), -ENOENT);
	jpos_free(m);
}

static void accepts_valid_edge_cases(void **state)
{
	static const char *const ok[] = {
		"0", "-0", "-0.0", "0e0", "0E+0", "1e-5", "-12.34E+56", "123456789012345678901234567890",
		"1e400", "\"\\u0000\"", "\"\\/\\b\\f\\n\\r\\t\\\"\\\\\"", "\"\\uD83D\\uDE00\"",
		"\"\x7f\"", "\"\xf4\x8f\xbf\xbf\"", "\"\xed\x9f\xbf\"", "\"\xee\x80\x80\"",
		" \t\r\n[ \t\r\n1 \t\r\n, \t\r\n2 \t\r\n] \t\r\n", "[[[]]]", "{\"a\":{\"a\":{}}}",
		"[true,false,null]", "{\"\\u0000\":1}",
	};

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		if (scan_rc(ok[i], strlen(ok[i])) != 0)
			fail_msg("rejected: %s", ok[i]);
	}
}

static void rejects_invalid_text(void **state)
{
	static const char *const bad[] = {
		"", " ", "\n\r\t", "{", "}", "[", "]", "[1,]", "[,]", "[,1]", "[1,,2]", "[1 2]",
		"{\"a\":1,}", "{,}", "{\"a\" 1}", "{\"a\":}", "{\"a\"}", "{1:2}", "{a:1}", "{'a':1}",
		"{\"a\":1 \"b\":2}", "{\"a\"::1}", "01", "-01", "00", "-", "+1", "1.", ".5", "1.e1",
		"1e", "1e+", "1E-", "0x10", "- 1", "--1", "1-", "Infinity", "-Infinity", "NaN",
		"tru", "truee", "True", "nul", "NULL", "fals", "[1]x", "[1]]", "{}{}", "1 2",
		"\"a\" \"b\"", "// c\n1", "/* c */1", "1 // c", "#1", "'a'", "\"abc", "\"abc\\\"",
		"\"\\", "\"\\x\"", "\"\\U0041\"", "\"\\u12\"", "\"\\u12G4\"", "\"\\u\"",
		"\"\\ud800\"", "\"\\udc00\"", "\"\\ud800\\u0041\"", "\"\\ud800\\ud800\"", "\"\\ud800x\"",
		"\"\\ud800\\", "\"\\ud800\\u", "\"\\ud800\\udc0\"", "\"\\udfff\\ud800\"",
		"\"a\tb\"", "\"a\nb\"", "\"\x01\"", "\"\x1f\"", "[\f1]", "\v1", "\xc2\xa0[]",
		"{\"a\":1}\x1a", "\xef\xbb\xbf{}",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (scan_rc(bad[i], strlen(bad[i])) != -EINVAL)
			fail_msg("accepted: %s", bad[i]);
	}
}

static void rejects_nul_bytes_and_bad_utf8(void **state)
{
	static const struct { const char *text; size_t len; } bad[] = {
#define B(s) { s, sizeof(s) - 1 }
		B("[1]\0"), B("\0[1]"), B("[\0]"), B("[1,\0 2]"), B("\"a\0b\""), B("{\"a\0\":1}"),
		B("\0"), B("tr\0e"),
		B("\"\x80\""), B("\"\xbf\""), B("\"\xc0\xaf\""), B("\"\xc1\xbf\""), B("\"\xc3\""),
		B("\"\xc3"), B("\"\xe0\x80\xaf\""), B("\"\xe0\x9f\xbf\""), B("\"\xed\xa0\x80\""),
		B("\"\xed\xbf\xbf\""), B("\"\xe2\x82\""), B("\"\xe2\x82"), B("\"\xf0\x80\x80\xaf\""),
		B("\"\xf0\x8f\xbf\xbf\""), B("\"\xf4\x90\x80\x80\""), B("\"\xf5\x80\x80\x80\""),
		B("\"\xf0\x9f\x98\""), B("\"\xf0\x9f\x98"), B("\"\xff\""), B("\"\xfe\""),
		B("{\"\xe9\":1}"), B("[\"ok\", \xe2\x82\xac]"),
#undef B
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (scan_rc(bad[i].text, bad[i].len) != -EINVAL)
			fail_msg("accepted case %zu", i);
	}
	/* Every proper prefix of a valid document is invalid. */
	for (size_t n = 0; n < sizeof(policy) - 2; n++) {
		if (scan_rc(policy, n) != -EINVAL)
			fail_msg("accepted a prefix of %zu bytes", n);
	}
}

static char *nest(const char *open, const char *mid, const char *close, size_t depth)
{
	size_t lo = strlen(open), lm = strlen(mid), lc = strlen(close);
	char *s = malloc(depth * (lo + lc) + lm + 1), *w = s;

	assert_non_null(s);
	for (size_t i = 0; i < depth; i++, w += lo)
		memcpy(w, open, lo);
	memcpy(w, mid, lm);
	w += lm;
	for (size_t i = 0; i < depth; i++, w += lc)
		memcpy(w, close, lc);
	*w = 0;
	return s;
}

static void nesting_is_capped(void **state)
{
	char ptr[4096] = "", *s;
	struct jpos_map *m;

	s = nest("[", "7", "]", JPOS_MAX_DEPTH);
	m = scan(s);
	for (int i = 0; i < JPOS_MAX_DEPTH; i++)
		assert_int_equal(jpos_push_index(ptr, sizeof(ptr), 0), 0);
	assert_pos(m, ptr, false, 1, JPOS_MAX_DEPTH + 1);
	jpos_free(m);
	free(s);

	s = nest("[", "7", "]", JPOS_MAX_DEPTH + 1);
	assert_int_equal(scan_rc(s, strlen(s)), -E2BIG);
	free(s);

	s = nest("{\"a\":", "{}", "}", JPOS_MAX_DEPTH - 1);
	m = scan(s);
	jpos_free(m);
	free(s);

	s = nest("{\"a\":[", "{}", "]}", JPOS_MAX_DEPTH / 2);
	assert_int_equal(scan_rc(s, strlen(s)), -E2BIG);
	free(s);

	/* Unclosed and far too deep: stopped at the cap, not by the stack. */
	s = nest("[", "", "", 1000000);
	assert_int_equal(scan_rc(s, strlen(s)), -E2BIG);
	free(s);
	s = nest("{\"\":", "", "", 1000000);
	assert_int_equal(scan_rc(s, strlen(s)), -E2BIG);
	free(s);
}

static void push_escapes_and_bounds(void **state)
{
	char buf[8] = "";

	assert_int_equal(jpos_push(buf, sizeof(buf), "a"), 0);
	assert_string_equal(buf, "/a");
	assert_int_equal(jpos_push(buf, sizeof(buf), "~/"), 0);
	assert_string_equal(buf, "/a/~0~1");
	/* Full (7 characters and the NUL): refused, buf untouched. */
	assert_int_equal(jpos_push(buf, sizeof(buf), ""), -ENAMETOOLONG);
	assert_string_equal(buf, "/a/~0~1");
	buf[2] = 0;
	assert_int_equal(jpos_push(buf, sizeof(buf), ""), 0);
	assert_string_equal(buf, "/a/");
	assert_int_equal(jpos_push(buf, sizeof(buf), "/"), 0);
	assert_string_equal(buf, "/a//~1");
	assert_int_equal(jpos_push(buf, sizeof(buf), "x"), -ENAMETOOLONG);
	assert_string_equal(buf, "/a//~1");

	buf[0] = 0;
	assert_int_equal(jpos_push_index(buf, sizeof(buf), 0), 0);
	assert_int_equal(jpos_push_index(buf, sizeof(buf), 1234), 0);
	assert_string_equal(buf, "/0/1234");
	assert_int_equal(jpos_push_index(buf, sizeof(buf), 1), -ENAMETOOLONG);
	assert_string_equal(buf, "/0/1234");
	buf[0] = 0;
	assert_int_equal(jpos_push_index(buf, sizeof(buf), 999999), 0);
	assert_string_equal(buf, "/999999");
	buf[0] = 0;
	assert_int_equal(jpos_push_index(buf, sizeof(buf), 9999999), -ENAMETOOLONG);
	assert_string_equal(buf, "");

	/* An unterminated or empty buffer has no room. */
	memset(buf, 'x', sizeof(buf));
	assert_int_equal(jpos_push(buf, sizeof(buf), ""), -ENAMETOOLONG);
	assert_int_equal(jpos_push(buf, 0, ""), -ENAMETOOLONG);
}

static void many_values(void **state)
{
	enum { N = 50000 };
	size_t cap = 64 + (size_t)N * 32, len = 0;
	char *text = malloc(cap), ptr[64];
	struct jpos_map *m;

	assert_non_null(text);
	len += (size_t)snprintf(text + len, cap - len, "[\n");
	for (int i = 0; i < N; i++)
		len += (size_t)snprintf(text + len, cap - len, "{\"k\": %d, \"v%d\": []}%s\n",
					i, i, i < N - 1 ? "," : "");
	len += (size_t)snprintf(text + len, cap - len, "]\n");
	assert_int_equal(jpos_scan(text, len, &m), 0);
	for (int i = 0; i < N; i++) {
		char name[16];

		ptr[0] = 0;
		assert_int_equal(jpos_push_index(ptr, sizeof(ptr), (size_t)i), 0);
		assert_pos(m, ptr, false, i + 2, 1);
		assert_int_equal(jpos_push(ptr, sizeof(ptr), "k"), 0);
		assert_pos(m, ptr, true, i + 2, 2);
		assert_pos(m, ptr, false, i + 2, 7);
		ptr[0] = 0;
		(void)snprintf(name, sizeof(name), "v%d", i);
		assert_int_equal(jpos_push_index(ptr, sizeof(ptr), (size_t)i), 0);
		assert_int_equal(jpos_push(ptr, sizeof(ptr), name), 0);
		assert_int_equal(jpos_get(m, ptr, false, NULL, NULL), 0);
		(void)snprintf(name, sizeof(name), "v%d", i + 1);
		ptr[0] = 0;
		assert_int_equal(jpos_push_index(ptr, sizeof(ptr), (size_t)i), 0);
		assert_int_equal(jpos_push(ptr, sizeof(ptr), name), 0);
		assert_int_equal(jpos_get(m, ptr, false, NULL, NULL), -ENOENT);
	}
	jpos_free(m);
	free(text);
}

static const char *const oracle_docs[] = {
	policy,
	"{\"\xc3\xa9t\xc3\xa9\": [\"\xe2\x82\xac\", {\"\xf0\x9f\x98\x80\": -1}],\r\n\t\"a/b~c\": {\"\": null},\r\n"
	"\"esc\\u00e9\\ud83d\\ude00\\\"\": [[[0.5e1]]], \"long\": \"\xe4\xb8\xad\xe6\x96\x87\\n\"}",
	"[1,\r2,\r\n3,\n\r4, \"\xe2\x82\xac\xe2\x82\xac\", [], {}, [true], {\"x\":false}]",
	" \"root\" ",
	"\n\n  -7e-1  \n",
};

static void positions_match_jansson_errors(void **state)
{
	for (size_t i = 0; i < sizeof(oracle_docs) / sizeof(oracle_docs[0]); i++)
		differential(oracle_docs[i], strlen(oracle_docs[i]), true);
}

/* Append random JSON to buf: nested values, odd whitespace, escapes, UTF-8. */
static void gen_ws(char *buf, size_t *len, uint64_t *seed)
{
	static const char *const ws[] = { "", "", " ", "\n", "\r\n", "\r", "\t", "  \n\t" };
	const char *w = ws[rnd(seed) % (sizeof(ws) / sizeof(ws[0]))];

	memcpy(buf + *len, w, strlen(w));
	*len += strlen(w);
}

static void gen_string(char *buf, size_t *len, uint64_t *seed)
{
	static const char *const parts[] = {
		"a", "key", "/", "~", "~1", "\\\"", "\\\\", "\\/", "\\n", "\\u00e9",
		"\\ud83d\\ude00", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", " ", "0",
	};
	size_t n = rnd(seed) % 4;

	buf[(*len)++] = '"';
	for (size_t i = 0; i < n; i++) {
		const char *p = parts[rnd(seed) % (sizeof(parts) / sizeof(parts[0]))];

		memcpy(buf + *len, p, strlen(p));
		*len += strlen(p);
	}
	buf[(*len)++] = '"';
}

static void gen_value(char *buf, size_t *len, uint64_t *seed, int depth)
{
	static const char *const scalars[] = {
		"0", "-1", "12.5", "-0.25e+3", "1E9", "true", "false", "null",
	};
	size_t n = rnd(seed) % (depth < 2 ? 6 : 4);

	/* Containers near the top, so that most documents have some size. */
	switch (depth < 2 ? rnd(seed) % 2 : depth < 4 ? rnd(seed) % 4 : 2 + rnd(seed) % 2) {
	case 0:
		buf[(*len)++] = '{';
		for (size_t i = 0; i < n; i++) {
			gen_ws(buf, len, seed);
			gen_string(buf, len, seed);
			gen_ws(buf, len, seed);
			buf[(*len)++] = ':';
			gen_ws(buf, len, seed);
			gen_value(buf, len, seed, depth + 1);
			gen_ws(buf, len, seed);
			if (i + 1 < n)
				buf[(*len)++] = ',';
		}
		buf[(*len)++] = '}';
		break;
	case 1:
		buf[(*len)++] = '[';
		for (size_t i = 0; i < n; i++) {
			gen_ws(buf, len, seed);
			gen_value(buf, len, seed, depth + 1);
			gen_ws(buf, len, seed);
			if (i + 1 < n)
				buf[(*len)++] = ',';
		}
		buf[(*len)++] = ']';
		break;
	case 2:
		gen_string(buf, len, seed);
		break;
	default: {
		const char *p = scalars[rnd(seed) % (sizeof(scalars) / sizeof(scalars[0]))];

		memcpy(buf + *len, p, strlen(p));
		*len += strlen(p);
	}
	}
}

/* Valid by construction, so every document gets the full positional check. */
static void random_documents_agree_with_jansson(void **state)
{
	uint64_t seed = 0xd0c5d0c5ull;
	/* Ample: at most 331 values (1 + 5 + 25 + 75 + 225), each under 110 bytes. */
	char *buf = malloc(1 << 16);

	assert_non_null(buf);
	for (int it = 0; it < 2000; it++) {
		size_t len = 0;

		gen_ws(buf, &len, &seed);
		gen_value(buf, &len, &seed, 0);
		gen_ws(buf, &len, &seed);
		differential(buf, len, true);
	}
	free(buf);
}

static void random_bytes_do_not_crash(void **state)
{
	static const char alphabet[] = "{}[]\":,.-+0123456789eEtrufalsn \t\r\n\\/u\xc3\xa9\xf0\x9f";
	uint64_t seed = 0x5eed5eed12345678ull;
	char buf[64];

	for (int it = 0; it < 20000; it++) {
		size_t len = rnd(&seed) % sizeof(buf);

		for (size_t i = 0; i < len; i++) {
			uint64_t r = rnd(&seed);

			if (r & 0x100)
				buf[i] = alphabet[(r >> 16) % (sizeof(alphabet) - 1)];
			else
				buf[i] = (char)(r >> 24);
		}
		differential(buf, len, false);
	}
}

static void mutations_do_not_crash(void **state)
{
	static const char tokens[] = "{}[]\",:\\0 \n-e.u\xc3\xa9\x80\xed\xf4";
	uint64_t seed = 0xc0ffee0ddba11ull;
	char buf[2048];

	for (int it = 0; it < 20000; it++) {
		const char *doc = oracle_docs[rnd(&seed) % 3];
		size_t len = strlen(doc), edits = 1 + rnd(&seed) % 4;

		memcpy(buf, doc, len);
		for (size_t e = 0; e < edits && len > 0; e++) {
			size_t at = rnd(&seed) % len, n = 1 + rnd(&seed) % 8;
			char c = tokens[rnd(&seed) % (sizeof(tokens) - 1)];

			switch (rnd(&seed) % 6) {
			case 0:	/* replace with a token character */
				buf[at] = c;
				break;
			case 1:	/* replace with any byte */
				buf[at] = (char)rnd(&seed);
				break;
			case 2:	/* delete a run */
				n = n > len - at ? len - at : n;
				memmove(buf + at, buf + at + n, len - at - n);
				len -= n;
				break;
			case 3:	/* insert a token character */
				if (len < sizeof(buf)) {
					memmove(buf + at + 1, buf + at, len - at);
					buf[at] = c;
					len++;
				}
				break;
			case 4:	/* duplicate a run, making repeated members likely */
				n = n > len - at ? len - at : n;
				if (len + n <= sizeof(buf)) {
					memmove(buf + at + n, buf + at, len - at);
					len += n;
				}
				break;
			default: /* truncate */
				len = at;
				break;
			}
		}
		differential(buf, len, false);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nested_objects_and_arrays),
		cmocka_unit_test(keys_and_values_differ),
		cmocka_unit_test(missing_and_malformed_pointers),
		cmocka_unit_test(escaped_member_names),
		cmocka_unit_test(columns_count_code_points),
		cmocka_unit_test(crlf_and_lone_cr),
		cmocka_unit_test(root_scalars),
		cmocka_unit_test(empty_containers),
		cmocka_unit_test(duplicate_members_last_wins),
		cmocka_unit_test(accepts_valid_edge_cases),
		cmocka_unit_test(rejects_invalid_text),
		cmocka_unit_test(rejects_nul_bytes_and_bad_utf8),
		cmocka_unit_test(nesting_is_capped),
		cmocka_unit_test(push_escapes_and_bounds),
		cmocka_unit_test(many_values),
		cmocka_unit_test(positions_match_jansson_errors),
		cmocka_unit_test(random_documents_agree_with_jansson),
		cmocka_unit_test(random_bytes_do_not_crash),
		cmocka_unit_test(mutations_do_not_crash),
	};

	return cmocka_run_group_tests_name("jsonpos", tests, NULL, NULL);
}
