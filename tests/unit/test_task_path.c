// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * An exec's or a connect's path made canonical (userspace/supervisor/
 * task_path.c: task_path_canon): its one-open way for a name that is no
 * symlink gives exactly what pol_canon_path gives, on a real tree of
 * files, directories, symlinks (to a directory, to nothing, in the middle
 * of a path), absent names, ".", "..", relative paths and the root.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy.h"
#include "task_path.h"

static char root[64];

static void at(const char *rel, char *out)
{
	snprintf(out, PATH_MAX, "%s/%s", root, rel);
}

static int setup(void **state)
{
	char p[PATH_MAX], q[PATH_MAX];
	FILE *f;

	(void)state;
	snprintf(root, sizeof(root), "/tmp/cordon-taskpath.XXXXXX");
	if (!mkdtemp(root))
		return -1;
	at("d", p);
	mkdir(p, 0755);
	at("d/sub", p);
	mkdir(p, 0755);
	at("d/f", p);
	f = fopen(p, "w");
	if (!f)
		return -1;
	fclose(f);
	at("d/sub", q);
	at("d/ln", p);
	if (symlink(q, p) < 0)
		return -1;
	at("d/dang", p);
	if (symlink("/nonexistent-cordon-target", p) < 0)
		return -1;
	at("dl", p);
	if (symlink("d", p) < 0)        /* relative, to a directory */
		return -1;
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

/* PATH (relative to BASE) canonical both ways: the same answer, or the same error. */
static void same(const char *path, const char *base)
{
	char fast[PATH_MAX], slow[PATH_MAX];
	int rf = task_path_canon(path, base, fast, sizeof(fast));
	int rs = pol_canon_path(path, base, slow, sizeof(slow));

	assert_int_equal(rf, rs);
	if (rs == 0)
		assert_string_equal(fast, slow);
}

static void absolute_names(void **state)
{
	static const char *const rel[] = {
		"d/missing", "d/f", "d/sub", "d/ln", "d/dang", "d/ln/missing", "dl/missing",
		"dl/f", "dl/sub", "d/../d/missing", "d/./f", "d/sub/../f", "d/missing/deeper",
		"d/f/x", "d/sub/", "d/.", "d/..", "dl", "d//f", "d/dang/x",
	};
	char p[PATH_MAX];

	(void)state;
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		at(rel[i], p);
		same(p, NULL);
	}
	same("/", NULL);
	same("/cordon-absent-at-the-root", NULL);
	same("/tmp", NULL);
}

static void relative_names(void **state)
{
	char base[PATH_MAX];

	(void)state;
	same("d/missing", root);
	same("dl/f", root);
	same("./d/ln", root);
	same("../missing", root);
	at("d", base);
	same("missing", base);
	same("f", base);
	same("ln/missing", base);
	at("dl", base);         /* a base that is itself a link */
	same("missing", base);
}

/* The answer for an absent name is its directory's real path and the name. */
static void absent_in_linked_dir(void **state)
{
	char p[PATH_MAX], want[PATH_MAX + 16], got[PATH_MAX], real[PATH_MAX];

	(void)state;
	at("dl/missing", p);
	assert_non_null(realpath(root, real));
	snprintf(want, sizeof(want), "%s/d/missing", real);
	assert_int_equal(task_path_canon(p, NULL, got, sizeof(got)), 0);
	assert_string_equal(got, want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(absolute_names),
		cmocka_unit_test(relative_names),
		cmocka_unit_test(absent_in_linked_dir),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
