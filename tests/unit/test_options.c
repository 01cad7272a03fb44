// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A command's long options (cmd/options.c): values and flags land where
 * the table says, the operands stay at optind, --help and bad usage each
 * print usage to the right stream and say so, and a table past
 * CMD_OPTIONS_MAX is refused rather than cut.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "options.h"

static FILE *usage_to;
static int usage_calls;

static void usage(FILE *f)
{
	usage_to = f;
	usage_calls++;
}

static int parse(char **argv, const struct cmd_option *opts)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	usage_to = NULL;
	usage_calls = 0;
	return options_parse(argc, argv, opts, usage);
}

static void values_flags_and_operands(void **state)
{
	const char *user = NULL, *profile = "default";
	bool json = false;
	const struct cmd_option opts[] = {
		{ "user", &user, NULL }, { "profile", &profile, NULL }, { "json", NULL, &json }, {}
	};
	char *argv[] = { "diff", "--user", "alice", "--json", "a", "b", NULL };

	(void)state;
	assert_int_equal(parse(argv, opts), 0);
	assert_string_equal(user, "alice");
	assert_string_equal(profile, "default");       /* not given: left as it was */
	assert_true(json);
	assert_int_equal(usage_calls, 0);
	assert_int_equal(optind, 4);
	assert_string_equal(argv[optind], "a");
}

static void help_prints_usage_on_stdout(void **state)
{
	bool json = false;
	const struct cmd_option opts[] = { { "json", NULL, &json }, {} };
	char *argv[] = { "diff", "--help", "--json", NULL };

	(void)state;
	assert_int_equal(parse(argv, opts), 1);
	assert_int_equal(usage_calls, 1);
	assert_ptr_equal(usage_to, stdout);
	assert_false(json);                             /* nothing after --help is taken */
}

static void bad_usage_prints_usage_on_stderr(void **state)
{
	const char *key = NULL;
	const struct cmd_option opts[] = { { "key", &key, NULL }, {} };
	char *unknown[] = { "verify", "--nope", "f", NULL };
	char *missing[] = { "verify", "--key", NULL };

	(void)state;
	assert_int_equal(parse(unknown, opts), -EINVAL);
	assert_int_equal(usage_calls, 1);
	assert_ptr_equal(usage_to, stderr);
	assert_int_equal(parse(missing, opts), -EINVAL);
	assert_ptr_equal(usage_to, stderr);
	assert_null(key);
}

static void too_many_options_refused(void **state)
{
	bool f[CMD_OPTIONS_MAX + 1] = {};
	struct cmd_option opts[CMD_OPTIONS_MAX + 2] = {};
	char names[CMD_OPTIONS_MAX + 1][8];
	char *argv[] = { "x", NULL };

	(void)state;
	for (int i = 0; i <= CMD_OPTIONS_MAX; i++) {
		snprintf(names[i], sizeof(names[i]), "o%d", i);
		opts[i] = (struct cmd_option){ names[i], NULL, &f[i] };
	}
	assert_int_equal(parse(argv, opts), -E2BIG);
	opts[CMD_OPTIONS_MAX].name = NULL;              /* exactly the most: fine */
	assert_int_equal(parse(argv, opts), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(values_flags_and_operands),
		cmocka_unit_test(help_prints_usage_on_stdout),
		cmocka_unit_test(bad_usage_prints_usage_on_stderr),
		cmocka_unit_test(too_many_options_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
