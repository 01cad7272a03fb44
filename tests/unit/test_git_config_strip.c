// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The keys that run programs, dropped from a git config as git reads it
 * (userspace/supervisor/git_config_strip.c): a key after a header on its line, a
 * value continued over lines, the deprecated [a.b] form, case, an alias
 * only when it is a shell command, and a file git itself would refuse.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "git_config_strip.h"

static char *strip(const char *in, int want, char *keys, size_t klen)
{
	char *out;
	size_t n;
	int line = 0;

	assert_int_equal(git_config_strip(in, strlen(in), &out, &n, keys, klen, &line), want);
	return out;
}

static void drops_what_runs_keeps_the_rest(void **state)
{
	char keys[256];
	char *out = strip("[core]\n\tbare = false\n\tFSMonitor = \"evil\" ; c\n"
			  "[core] pager = less\n"
			  "[diff \"x\"]\n\ttextconv = a \\\n\t  b\n[remote \"origin\"]\n"
			  "\turl = https://h/r\n[Alias]\n\tst = status\n\tx = \"!sh\"\n"
			  "[credential \"https://h\"]\n\thelper = store\n[user]\n\tname = me", 6,
			  keys, sizeof(keys));

	(void)state;
	/* Every alias: one without '!' can still say -c core.fsmonitor=... */
	assert_string_equal(out, "[core]\n\tbare = false\n[core] \n[diff \"x\"]\n"
			    "[remote \"origin\"]\n\turl = https://h/r\n[Alias]\n"
			    "[credential \"https://h\"]\n[user]\n\tname = me");
	assert_non_null(strstr(keys, "core.fsmonitor"));
	assert_non_null(strstr(keys, "diff.<sub>.textconv"));
	free(out);
	/*
	 * [section.a "b"] is git's section "section", subsection "a.b": a
	 * filter driver, a diff driver and a remote's upload-pack written so,
	 * and imap.tunnel.
	 */
	out = strip("[filter.x \"y\"]\n\tclean = sh -c evil\n\tsmudge = sh\n"
		    "[diff.x \"y\"]\n\ttextconv = sh\n[remote.x \"y\"]\n\turl = u\n"
		    "\tuploadpack = sh -c evil\n[imap]\n\ttunnel = sh -c evil\n", 5, keys, sizeof(keys));
	assert_string_equal(out, "[filter.x \"y\"]\n[diff.x \"y\"]\n[remote.x \"y\"]\n\turl = u\n"
			    "[imap]\n");
	free(out);
}

static void refuses_what_git_refuses(void **state)
{
	char keys[64], *out;
	size_t n;
	int line = 0;

	(void)state;
	assert_int_equal(git_config_strip("[core]\n\tx = \"open\n", 17, &out, &n, keys,
					  sizeof(keys), &line), -EINVAL);
	assert_null(out);
	assert_int_equal(git_config_strip("fsmonitor = x\n", 14, &out, &n, keys, sizeof(keys),
					  &line), -EINVAL);
	assert_int_equal(git_config_strip("[core]\n\n\t= x\n", 13, &out, &n, keys, sizeof(keys),
					  &line), -EINVAL);
	assert_int_equal(line, 3);
	out = strip("", 0, keys, sizeof(keys));
	assert_string_equal(out, "");
	free(out);
}

struct seen {
	char text[1024];
};

static int collect(void *ctx, const char *key, const char *value)
{
	struct seen *s = ctx;
	size_t u = strlen(s->text);

	snprintf(s->text + u, sizeof(s->text) - u, "%s=[%s]\n", key, value);
	return 0;
}

/*
 * The values that point git elsewhere, read as git reads them: quotes and
 * escapes undone, inner blanks kept, trailing ones and comments dropped,
 * continuations joined, any case of the key, the subsection of includeIf.
 */
static void reads_the_paths_git_follows(void **state)
{
	static const char conf[] =
		"[core]\n\thooksPath = \"my hooks\"/dir  ; a comment\n\tworktree = ../w\n"
		"[include]\n\tpath = ../shared\\\n.inc\n"
		"[includeIf \"onbranch:main\"]\n\tPATH = a\\tb\n"
		"[core \"x\"]\n\thookspath = not-core\n[user]\n\tname = n\n";
	struct seen s = { "" };
	int line = 0;

	(void)state;
	assert_int_equal(git_config_paths(conf, strlen(conf), collect, &s, &line), 0);
	assert_string_equal(s.text, "core.hookspath=[my hooks/dir]\ncore.worktree=[../w]\n"
			    "include.path=[../shared.inc]\nincludeif.path=[a\tb]\n");
	/* A file git would refuse: refused, and where (the line its reader stopped after). */
	assert_int_equal(git_config_paths("[core]\n\thookspath = \"open\n", 26, collect, &s, &line),
			 -EINVAL);
	assert_int_equal(line, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(drops_what_runs_keeps_the_rest),
		cmocka_unit_test(refuses_what_git_refuses),
		cmocka_unit_test(reads_the_paths_git_follows),
	};

	return cmocka_run_group_tests_name("git_config_strip", tests, NULL, NULL);
}
