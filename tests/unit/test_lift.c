// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Recognisers: what an exec means, whatever options hide the subcommand. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "policy.h"

/* Lift argv; return the JSON of the event after shell.exec (or NULL). */
static char *lift(const char *const *argv, char *tool, size_t tlen)
{
	struct pol_lifted l[POL_MAX_LIFTED];
	int n = pol_lift_exec(argv, "/w", l);
	char *s = NULL;

	assert_true(n >= 1);
	assert_string_equal(l[0].server, "shell");
	assert_string_equal(l[0].tool, "exec");
	tool[0] = 0;
	if (n > 1) {
		snprintf(tool, tlen, "%s.%s", l[1].server, l[1].tool);
		s = json_dumps(l[1].args, JSON_SORT_KEYS | JSON_COMPACT);
	}
	pol_lifted_free(l, n);
	return s;
}

#define CHECK(want_tool, want_json, ...) do { \
	const char *av[] = { __VA_ARGS__, NULL }; \
	char t[80]; \
	char *j = lift(av, t, sizeof(t)); \
	assert_string_equal(t, want_tool); \
	if (want_json) { assert_non_null(j); assert_string_equal(j, want_json); } \
	free(j); \
} while (0)

static void git(void **state)
{
	CHECK("git.push", "{\"branch\":\"main\",\"force\":false,\"remote\":\"origin\"}",
	      "git", "push", "origin", "main");
	CHECK("git.push", "{\"branch\":\"main\",\"force\":true,\"remote\":\"origin\"}",
	      "/usr/bin/git", "-C", "/w", "-c", "core.x=y", "push", "-f", "origin", "main");
	CHECK("git.push", "{\"branch\":\"release\",\"force\":true,\"remote\":\"up\"}",
	      "git", "push", "up", "+HEAD:release");
	CHECK("git.push", "{\"force\":false}", "git", "--no-pager", "push");
	CHECK("git.push", "{\"branch\":\"x\",\"force\":true,\"remote\":\"origin\"}",
	      "git", "push", "--force-with-lease", "origin", "x");
	CHECK("git.commit", "{\"message\":\"fix it\"}", "git", "commit", "-am", "x", "-m", "fix it");
	CHECK("", NULL, "git", "status");
	CHECK("", NULL, "git");
}

static void packages(void **state)
{
	CHECK("npm.install", "{\"manager\":\"npm\",\"packages\":[\"left-pad\",\"x@1\"]}",
	      "npm", "install", "--save", "left-pad", "x@1");
	CHECK("npm.install", "{\"manager\":\"pnpm\",\"packages\":[\"y\"]}", "pnpm", "add", "y");
	CHECK("npm.publish", "{\"manager\":\"npm\"}", "npm", "--registry", "publish");
	CHECK("pip.install", "{\"packages\":[\"requests\"]}", "pip3", "install", "-U", "requests");
	CHECK("pip.install", "{\"packages\":[\"flask\"]}", "python3", "-m", "pip", "install", "flask");
	CHECK("pip.publish", "{}", "twine", "upload", "dist/x.whl");
	CHECK("cargo.publish", "{}", "cargo", "publish");
}

static void fetch(void **state)
{
	CHECK("http.fetch", "{\"method\":\"GET\",\"url\":\"https://a.b/x\"}", "curl", "-s", "https://a.b/x");
	CHECK("http.fetch", "{\"method\":\"POST\",\"url\":\"https://a.b/\"}",
	      "curl", "-H", "X: y", "-d", "@/etc/passwd", "https://a.b/");
	CHECK("http.fetch", "{\"method\":\"PUT\",\"url\":\"https://a.b/\"}", "curl", "-T", "f", "--url", "https://a.b/");
	CHECK("http.fetch", "{\"method\":\"POST\",\"url\":\"http://c.d\"}", "wget", "--post-data=x", "http://c.d");
	CHECK("", NULL, "curl", "--version");
}

/* What JSON cannot hold is spelled out, never dropped: positions and the event stay. */
static void not_utf8(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "plain", "plain" },
		{ "h\xc3\xa9llo \xf0\x9f\x99\x82", "h\xc3\xa9llo \xf0\x9f\x99\x82" },
		{ "a\xff" "b", "a\\xffb" },
		{ "\xc0\xaf", "\\xc0\\xaf" },                   /* overlong '/' */
		{ "\xed\xa0\x80", "\\xed\\xa0\\x80" },          /* a surrogate */
		{ "\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80" }, /* past U+10FFFF */
		{ "\xe2\x82", "\\xe2\\x82" },                   /* cut short */
	};
	const char *av[] = { "git", "push", "or\xffigin", "ma\xfein", NULL };
	struct pol_lifted l[POL_MAX_LIFTED];
	char *j;
	int n;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *t = pol_json_text(cases[i].in);

		assert_non_null(t);
		assert_string_equal(json_string_value(t), cases[i].out);
		json_decref(t);
	}
	n = pol_lift_exec(av, "/w/d\xff", l);
	assert_int_equal(n, 2);
	j = json_dumps(l[0].args, JSON_SORT_KEYS | JSON_COMPACT);
	assert_string_equal(j, "{\"argv\":[\"git\",\"push\",\"or\\\\xffigin\",\"ma\\\\xfein\"],"
			    "\"cwd\":\"/w/d\\\\xff\"}");
	free(j);
	j = json_dumps(l[1].args, JSON_SORT_KEYS | JSON_COMPACT);
	assert_string_equal(j, "{\"branch\":\"ma\\\\xfein\",\"force\":false,\"remote\":\"or\\\\xffigin\"}");
	free(j);
	pol_lifted_free(l, n);
}

/* Shown to a human: nothing steers the terminal, and a cut says how much it left out. */
static void printable(void **state)
{
	char out[64], big[300];

	pol_printable(out, sizeof(out), "git status");
	assert_string_equal(out, "git status");
	pol_printable(out, sizeof(out), "\x1b[1A\x1b[2Kgit status\r\n\x7f");
	assert_string_equal(out, "\\x1b[1A\\x1b[2Kgit status\\x0d\\x0a\\x7f");
	pol_printable(out, sizeof(out), "a\xc2\x9b" "b\xc3\xa9\xff");  /* C1 CSI, é, a stray byte */
	assert_string_equal(out, "a\\xc2\\x9bb\xc3\xa9\\xff");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	pol_printable(out, sizeof(out), big);
	assert_true(strlen(out) < sizeof(out));
	assert_non_null(strstr(out, " ...[+"));
	{
		size_t kept = (size_t)(strstr(out, " ...[+") - out), more = 0;

		assert_int_equal(sscanf(strstr(out, "[+"), "[+%zu bytes]", &more), 1);
		assert_int_equal(kept + more, sizeof(big) - 1);
	}
	/* Exactly full: no cut. */
	memset(big, 'y', sizeof(out) - 1);
	big[sizeof(out) - 1] = '\0';
	pol_printable(out, sizeof(out), big);
	assert_string_equal(out, big);
}

/* Large arguments: kept as size, SHA-256 and head; small ones whole, the same reference. */
static void kept(void **state)
{
	/* SHA-256 of {"m":"<70000 x 'é' (c3 a9)>"}: python3 -c "import hashlib,json;
	 * print(hashlib.sha256(json.dumps({'m':'\u00e9'*70000},ensure_ascii=False,
	 * separators=(',',':')).encode()).hexdigest())" */
	static const char want[] = "b57a0c33523097f10c1a7ef63e5a1acf336d00a6994e6409aba6e02fc50153a6";
	size_t n = 70000 * 2;
	char *big = malloc(n + 1);
	json_t *small = json_pack("{s:s,s:s,s:{s:s}}", "server", "fs", "tool", "write",
				  "arguments", "path", "/x"), *ev, *k, *a;
	const char *head, *sha;

	(void)state;
	for (size_t i = 0; i < n; i += 2) {
		big[i] = (char)0xc3;
		big[i + 1] = (char)0xa9;
	}
	big[n] = 0;
	k = pol_event_kept(small);
	assert_ptr_equal(k, small);
	json_decref(k);
	ev = json_pack("{s:s,s:s,s:{s:s}}", "server", "fs", "tool", "write", "arguments", "m", big);
	assert_non_null(ev);
	k = pol_event_kept(ev);
	assert_non_null(k);
	assert_ptr_not_equal(k, ev);
	assert_string_equal(json_string_value(json_object_get(k, "tool")), "write");
	a = json_object_get(k, "arguments");
	assert_true(json_is_true(json_object_get(a, "truncated")));
	assert_int_equal(json_integer_value(json_object_get(a, "bytes")), n + 8);
	sha = json_string_value(json_object_get(a, "sha256"));
	assert_non_null(sha);
	assert_string_equal(sha, want);
	/* The head: the first 64 KiB, ended on a character ({"m":" is 6 bytes, é is 2). */
	head = json_string_value(json_object_get(a, "head"));
	assert_non_null(head);
	assert_int_equal(strlen(head), POL_RECORD_ARGS_BYTES);
	assert_memory_equal(head, "{\"m\":\"\xc3\xa9", 8);
	/* The event judged is untouched. */
	assert_string_equal(json_string_value(json_object_get(json_object_get(ev, "arguments"), "m")),
			    big);
	json_decref(k);
	json_decref(ev);
	/* One byte more before them: byte 65536 is inside an é, so the head stops short of it. */
	big[1] = 'a';
	ev = json_pack("{s:s,s:s,s:{s:s}}", "server", "fs", "tool", "write", "arguments", "m",
		       big + 1);
	k = pol_event_kept(ev);
	assert_non_null(k);
	head = json_string_value(json_object_get(json_object_get(k, "arguments"), "head"));
	assert_non_null(head);
	assert_int_equal(strlen(head), POL_RECORD_ARGS_BYTES - 1);
	json_decref(k);
	json_decref(ev);
	json_decref(small);
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(git),
		cmocka_unit_test(packages),
		cmocka_unit_test(fetch),
		cmocka_unit_test(not_utf8),
		cmocka_unit_test(printable),
		cmocka_unit_test(kept),
	};
	return cmocka_run_group_tests_name("lift", tests, NULL, NULL);
}
