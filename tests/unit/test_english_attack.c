// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Attacks on the constitution compiler (policy/english/): sentences an
 * ordinary reader reads one way and a compiler could read another, more
 * permissive way, or compile with a part silently dropped.  Each class here
 * must be either compiled as the reader reads it or refused with its
 * FILE:LINE:COL; never half-compiled.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "english.h"

struct refusal {
	const char *what;       /* the attack, for the failure message */
	const char *text;
	int line, col;
	const char *msg;        /* a substring of the error */
};

static void expect_refused(const struct refusal *c, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		struct en_error e;
		json_t *j = NULL;
		int r = en_compile(c[k].text, strlen(c[k].text), "t.en", &j, &e);

		if (r != -EINVAL) {
			char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;

			fail_msg("%s: compiled (%d): %s", c[k].what, r, s ? s : "");
		}
		assert_null(j);
		if (e.line != c[k].line || e.col != c[k].col || !strstr(e.message, c[k].msg))
			fail_msg("%s: got %d:%d \"%s\", want %d:%d \"%s\"", c[k].what, e.line, e.col,
				 e.message, c[k].line, c[k].col, c[k].msg);
	}
}

/*
 * Class: what the compiler reads differs from what a reader sees.  A
 * zero-width space or a Cyrillic 'е' inside a path makes a deny name a file
 * that never exists (the real ~/.ssh stays readable) while the text looks
 * right; a line or paragraph separator, a bare CR or a form feed inside a
 * comment shows the rest of the line as a new sentence to a reader, but the
 * compiler drops it with the comment; a bidi override reorders what is
 * shown.  All of it refused, at the character.
 */
static void look_alikes_and_invisibles_are_refused(void **state)
{
	static const struct refusal c[] = {
		{ "zero-width space in a path", "Never read ~/.ssh\xe2\x80\x8b.", 1, 18, "U+200B" },
		{ "Cyrillic e in a file name", "Never read files named .\xd0\xb5nv.", 1, 25, "U+0435" },
		{ "Cyrillic e in the workspace's path", "Never read ./s\xd0\xb5\x63rets.", 1, 15,
		  "U+0435" },
		{ "non-breaking space between objects", "Never read /etc/shadow\xc2\xa0\x61nd /srv/x.",
		  1, 23, "U+00A0" },
		{ "bidi override in a sentence", "Never read /x\xe2\x80\xae.", 1, 14, "U+202E" },
		{ "line separator ending a comment", "# note\xe2\x80\xa8Never read ~/.ssh.\n", 1, 7,
		  "U+2028" },
		{ "next-line character ending a comment", "# note\xc2\x85Never read ~/.ssh.\n", 1, 7,
		  "U+0085" },
		{ "bare CR in a comment", "# note\rNever read ~/.ssh.\n", 1, 7, "control character" },
		{ "form feed in a comment", "# note\fNever read ~/.ssh.\n", 1, 7, "control character" },
		{ "escape sequence hiding text", "Never read /x\x1b[8m.", 1, 14, "control character" },
		{ "byte order mark", "\xef\xbb\xbfNever read /x.", 1, 1, "U+FEFF" },
	};

	(void)state;
	expect_refused(c, sizeof(c) / sizeof(c[0]));
}

/* The compiled JSON of one text, compact; fails the test if it does not compile. */
static char *compiled(const char *text)
{
	struct en_error e;
	json_t *j = NULL;
	char *s;

	if (en_compile(text, strlen(text), "t.en", &j, &e))
		fail_msg("\"%s\": %d:%d %s", text, e.line, e.col, e.message);
	s = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	assert_non_null(s);
	return s;
}

/*
 * Class: a qualifier of depth said once for a list.  "files named .env and
 * .git" reads as both at any depth; compiled, .git was the top one only, so
 * a nested repository's .git stayed readable under "Never read ...", and
 * under "except ..." (an exception is a deny).  The names after "files
 * named" share it; a bare name beside an any-depth item in one list
 * (".env and .npmrc files", "files named .env, ./x and .git") is refused.
 */
static void files_named_distributes_over_its_list(void **state)
{
	static const struct { const char *text, *want; } c[] = {
		{ "Never read files named .env and .git.", "\"/**/.git\"" },
		{ "Never read files named .env, .git or .npmrc in the workspace.",
		  "\"${WORKSPACE}/**/.npmrc\"" },
		{ "The agent may read anything in the workspace except files named .env and .git.",
		  "\"${WORKSPACE}/**/.git\"" },
		{ "Never read files named \"a b\" and .git.", "\"/**/.git\"" },
		/* A path ends the names; what follows it is a path again. */
		{ "Never read files named .env and ~/.ssh.", "\"${HOME}/.ssh\"" },
	};
	static const struct refusal r[] = {
		{ "a bare name before an any-depth item", "Never read .env and .npmrc files.", 1, 12,
		  "any depth" },
		{ "a bare name after a path after files named",
		  "Never read files named .env, ./x and .git.", 1, 38, "any depth" },
	};

	(void)state;
	for (size_t k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		char *s = compiled(c[k].text);

		if (!strstr(s, c[k].want))
			fail_msg("\"%s\": no %s in %s", c[k].text, c[k].want, s);
		free(s);
	}
	expect_refused(r, sizeof(r) / sizeof(r[0]));
}

/*
 * Class: a negation or a quantifier taken as a bare value.  "The agent may
 * not call db.drop when confirm is not." compiled to a deny only when
 * confirm is the string "not"; a reader reads a deny when confirm is
 * missing.  Such words as values must be quoted.
 */
static void negation_words_are_no_bare_values(void **state)
{
	static const struct refusal r[] = {
		{ "is not", "The agent may not call db.drop when confirm is not.", 1, 48, "quote" },
		{ "is no", "The agent may call db.q when limit is no.", 1, 39, "quote" },
		{ "is none", "The agent may not call db.q when user is none.", 1, 42, "quote" },
		{ "one of never", "The agent may not call db.q when mode is one of x, never.", 1, 52,
		  "quote" },
		{ "is any", "The agent may not call db.q when mode is any.", 1, 42, "quote" },
	};
	char *s;

	(void)state;
	expect_refused(r, sizeof(r) / sizeof(r[0]));
	s = compiled("The agent may not call db.drop when confirm is \"not\".");
	assert_non_null(strstr(s, "\"equals\":\"not\""));
	free(s);
}

/* What stays readable: CRLF line ends, tabs, non-ASCII in a comment. */
static void ordinary_text_still_compiles(void **state)
{
	static const char *const ok[] = {
		"Never read /x.\r\nNever read /y.\r\n",
		"Never\tread /x.",
		"# caf\xc3\xa9 du coin\nNever read /x.\n",
	};

	(void)state;
	for (size_t k = 0; k < sizeof(ok) / sizeof(ok[0]); k++) {
		struct en_error e;
		json_t *j = NULL;

		if (en_compile(ok[k], strlen(ok[k]), "t.en", &j, &e))
			fail_msg("\"%s\": %d:%d %s", ok[k], e.line, e.col, e.message);
		json_decref(j);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(look_alikes_and_invisibles_are_refused),
		cmocka_unit_test(ordinary_text_still_compiles),
		cmocka_unit_test(files_named_distributes_over_its_list),
		cmocka_unit_test(negation_words_are_no_bare_values),
	};
	return cmocka_run_group_tests_name("english_attack", tests, NULL, NULL);
}
