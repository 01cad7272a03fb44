// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A model's answer sorted by the constitution compiler
 * (userspace/draft/draft_sort.c): sentences that compile are kept in order,
 * a line that does not is dropped with its line number and the compiler's
 * error, a list defined after its use still compiles, fences and blank
 * lines are skipped, comments kept but not counted, and a line with a
 * terminal control, a C1 control or a bidirectional override is dropped
 * and shown escaped, whatever it says.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "draft_sort.h"

static void test_kept_and_dropped(void **state)
{
	struct draft d;

	(void)state;
	assert_int_equal(draft_sort("```\nThe agent may read /etc.\n\n"
				    "The agent may rad the sink.\r\n"
				    "# a comment\n  Ask me before any git push.  \n```\n", &d), 0);
	assert_string_equal(d.kept, "The agent may read /etc.\n# a comment\nAsk me before any git push.\n");
	assert_int_equal(d.n_kept, 2);
	assert_int_equal(d.n_dropped, 1);
	assert_non_null(strstr(d.dropped, "line 4: The agent may rad the sink.\n"));
	assert_non_null(strstr(d.dropped, "error (column 15)"));
	draft_free(&d);
	assert_null(d.kept);
}

static void test_list_after_use(void **state)
{
	struct draft d;

	(void)state;
	assert_int_equal(draft_sort("The agent may reach code hosts over HTTPS.\n"
				    "Code hosts are github.com and gitlab.com.\n", &d), 0);
	assert_int_equal(d.n_kept, 2);
	assert_int_equal(d.n_dropped, 0);
	assert_null(d.dropped);
	assert_string_equal(d.kept, "The agent may reach code hosts over HTTPS.\n"
				    "Code hosts are github.com and gitlab.com.\n");
	draft_free(&d);
}

static void test_nothing(void **state)
{
	struct draft d;

	(void)state;
	assert_int_equal(draft_sort("I'm sorry, I cannot help with that.", &d), 0);
	assert_int_equal(d.n_kept, 0);
	assert_null(d.kept);
	assert_int_equal(d.n_dropped, 1);
	draft_free(&d);
	assert_int_equal(draft_sort("", &d), 0);
	assert_int_equal(d.n_kept + d.n_dropped, 0);
	draft_free(&d);
}

static void test_unsafe(void **state)
{
	struct draft d;

	(void)state;
	assert_int_equal(draft_unsafe_char("The agent may read /etc.\t"), -1);
	assert_int_equal(draft_unsafe_char("caf\xc3\xa9"), -1);
	assert_int_equal(draft_unsafe_char("ab\x1b[2K"), 2);
	assert_int_equal(draft_unsafe_char("a\x7f"), 1);
	assert_int_equal(draft_unsafe_char("a\xc2\x9b" "2K"), 1);       /* C1 CSI */
	assert_int_equal(draft_unsafe_char("/srv/a\xe2\x80\xae.txt"), 6); /* RLO */
	assert_int_equal(draft_unsafe_char("x\xe2\x81\xa6y"), 1);         /* LRI */
	assert_int_equal(draft_unsafe_char("x\xe2\x80\x8by"), 1);         /* zero width */
	assert_int_equal(draft_unsafe_char("x\xe2\x80"), -1);             /* cut short */
	assert_int_equal(draft_sort("# \x1b[1Ahidden\nThe agent may read /etc.\n", &d), 0);
	assert_string_equal(d.kept, "The agent may read /etc.\n");
	assert_int_equal(d.n_dropped, 1);
	assert_non_null(strstr(d.dropped, "# \\x1b[1Ahidden"));
	assert_null(strchr(d.dropped, '\x1b'));
	draft_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kept_and_dropped),
		cmocka_unit_test(test_list_after_use),
		cmocka_unit_test(test_nothing),
		cmocka_unit_test(test_unsafe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
