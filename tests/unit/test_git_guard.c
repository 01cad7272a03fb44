// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The workspace's git metadata made read-only (userspace/git_guard.c), on
 * real directories: what the plan protects (a repository's config and
 * hooks, its linked worktrees' pointers, its submodules' git directories
 * however deep their names; never through a symlink; a .git file itself),
 * the mounts in a child's own namespace (writes refused there, renames of
 * the pinned directory too, the parent's view untouched), and the
 * quarantine of a commondir planted during the session.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
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
#include <sys/wait.h>
#include <unistd.h>

#include "git_guard.h"

struct fixture {
	char ws[64];
};

static void put(const struct fixture *f, const char *rel, const char *text)
{
	char p[PATH_MAX];
	FILE *fp;

	snprintf(p, sizeof(p), "%s/%s", f->ws, rel);
	fp = fopen(p, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

static void dir(const struct fixture *f, const char *rel)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s", f->ws, rel);
	assert_int_equal(mkdir(p, 0755), 0);
}

/* A git directory by hand: HEAD, config, hooks. */
static void gitdir(const struct fixture *f, const char *rel)
{
	char p[256];

	dir(f, rel);
	snprintf(p, sizeof(p), "%s/HEAD", rel);
	put(f, p, "ref: refs/heads/main\n");
	snprintf(p, sizeof(p), "%s/config", rel);
	put(f, p, "[core]\n");
	snprintf(p, sizeof(p), "%s/hooks", rel);
	dir(f, p);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	strcpy(f->ws, "/tmp/cordon-test-git.XXXXXX");
	if (!mkdtemp(f->ws))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->ws);
	if (system(cmd) != 0)
		return -1;
	free(f);
	return 0;
}

static bool listed(char *const *v, size_t n, const struct fixture *f, const char *rel)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s", f->ws, rel);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], p))
			return true;
	return false;
}

static void plan_covers_repo_worktrees_and_modules(void **state)
{
	struct fixture *f = *state;
	struct git_guard g;

	gitdir(f, ".git");
	dir(f, ".git/worktrees");
	dir(f, ".git/worktrees/wt1");
	put(f, ".git/worktrees/wt1/commondir", "../..\n");
	put(f, ".git/worktrees/wt1/gitdir", "/elsewhere/wt1/.git\n");
	dir(f, ".git/modules");
	gitdir(f, ".git/modules/a");
	dir(f, ".git/modules/libs");
	gitdir(f, ".git/modules/libs/json");     /* a submodule named libs/json */
	dir(f, ".git/modules/notgit");
	assert_int_equal(git_guard_plan(f->ws, &g), 0);
	assert_int_equal(g.n_dirs, 3);
	assert_true(listed(g.dirs, g.n_dirs, f, ".git"));
	assert_true(listed(g.dirs, g.n_dirs, f, ".git/modules/a"));
	assert_true(listed(g.dirs, g.n_dirs, f, ".git/modules/libs/json"));
	/* Parents before what they hold. */
	assert_true(strstr(g.dirs[0], "/modules/") == NULL);
	for (size_t i = 0; i < g.n_dirs; i++)
		assert_false(g.had_commondir[i]);
	assert_int_equal(g.n_ro, 8);
	assert_true(listed(g.ro, g.n_ro, f, ".git/config"));
	assert_true(listed(g.ro, g.n_ro, f, ".git/hooks"));
	assert_true(listed(g.ro, g.n_ro, f, ".git/worktrees/wt1/commondir"));
	assert_true(listed(g.ro, g.n_ro, f, ".git/worktrees/wt1/gitdir"));
	assert_true(listed(g.ro, g.n_ro, f, ".git/modules/a/config"));
	assert_true(listed(g.ro, g.n_ro, f, ".git/modules/a/hooks"));
	assert_true(listed(g.ro, g.n_ro, f, ".git/modules/libs/json/config"));
	assert_true(listed(g.ro, g.n_ro, f, ".git/modules/libs/json/hooks"));
	git_guard_free(&g);
	assert_int_equal(g.n_dirs, 0);
}

/* A symlinked hooks directory is not followed; a .git file is protected itself; none: nothing. */
static void plan_symlinks_files_and_none(void **state)
{
	struct fixture *f = *state;
	struct git_guard g;
	char p[PATH_MAX];

	assert_int_equal(git_guard_plan(f->ws, &g), 0);
	assert_int_equal(g.n_dirs + g.n_ro, 0);
	git_guard_free(&g);

	put(f, ".git", "gitdir: /elsewhere/.git/worktrees/x\n");
	assert_int_equal(git_guard_plan(f->ws, &g), 0);
	assert_int_equal(g.n_dirs, 0);
	assert_int_equal(g.n_ro, 1);
	assert_true(listed(g.ro, g.n_ro, f, ".git"));
	git_guard_free(&g);

	snprintf(p, sizeof(p), "%s/.git", f->ws);
	assert_int_equal(unlink(p), 0);
	dir(f, ".git");
	put(f, ".git/HEAD", "ref: refs/heads/main\n");
	put(f, ".git/config", "[core]\n");
	snprintf(p, sizeof(p), "%s/.git/hooks", f->ws);
	assert_int_equal(symlink("/tmp", p), 0);
	assert_int_equal(git_guard_plan(f->ws, &g), 0);
	assert_int_equal(g.n_ro, 1);
	assert_true(listed(g.ro, g.n_ro, f, ".git/config"));
	git_guard_free(&g);
}

/*
 * In a child's own mount namespace: config and hooks refuse writes, the
 * pinned .git cannot be renamed, the rest of .git and of the workspace is
 * writable; the parent still writes config.
 */
static void apply_in_a_namespace(void **state)
{
	struct fixture *f = *state;
	char p[PATH_MAX], q[PATH_MAX], why[512] = "";
	struct git_guard g;
	pid_t pid;
	int st;

	if (geteuid() != 0)
		skip();
	gitdir(f, ".git");
	assert_int_equal(git_guard_plan(f->ws, &g), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd;

		if (git_guard_apply(&g, why, sizeof(why)) < 0) {
			fprintf(stderr, "apply: %s\n", why);
			_exit(10);
		}
		snprintf(p, sizeof(p), "%s/.git/config", f->ws);
		fd = open(p, O_WRONLY | O_APPEND);
		if (fd >= 0 || errno != EROFS)
			_exit(11);
		snprintf(p, sizeof(p), "%s/.git/hooks/pre-commit", f->ws);
		fd = open(p, O_WRONLY | O_CREAT, 0755);
		if (fd >= 0 || errno != EROFS)
			_exit(12);
		snprintf(p, sizeof(p), "%s/.git", f->ws);
		snprintf(q, sizeof(q), "%s/.git-old", f->ws);
		if (rename(p, q) == 0 || errno != EBUSY)
			_exit(13);
		snprintf(p, sizeof(p), "%s/.git/index.lock", f->ws);
		fd = open(p, O_WRONLY | O_CREAT, 0644);
		if (fd < 0)
			_exit(14);
		close(fd);
		snprintf(p, sizeof(p), "%s/file", f->ws);
		fd = open(p, O_WRONLY | O_CREAT, 0644);
		if (fd < 0)
			_exit(15);
		close(fd);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	snprintf(p, sizeof(p), "%s/.git/config", f->ws);
	st = open(p, O_WRONLY | O_APPEND);
	assert_true(st >= 0);
	close(st);
	git_guard_free(&g);
}

struct seen {
	int n;
	char path[PATH_MAX], moved[PATH_MAX + 64];
};

static void report(void *ctx, const char *path, const char *moved_to)
{
	struct seen *s = ctx;

	s->n++;
	snprintf(s->path, sizeof(s->path), "%s", path);
	snprintf(s->moved, sizeof(s->moved), "%s", moved_to ? moved_to : "");
}

/* A commondir that appeared is moved aside and reported; one there from the start is left. */
static void check_quarantines_a_new_commondir(void **state)
{
	struct fixture *f = *state;
	struct git_guard g;
	struct seen s = { 0 };
	char p[PATH_MAX];
	struct stat sb;

	gitdir(f, ".git");
	assert_int_equal(git_guard_plan(f->ws, &g), 0);
	assert_int_equal(git_guard_check(&g, report, &s), 0);
	put(f, ".git/commondir", "../../elsewhere\n");
	assert_int_equal(git_guard_check(&g, report, &s), 1);
	assert_int_equal(s.n, 1);
	snprintf(p, sizeof(p), "%s/.git/commondir", f->ws);
	assert_string_equal(s.path, p);
	assert_int_equal(lstat(p, &sb), -1);
	assert_int_equal(lstat(s.moved, &sb), 0);
	git_guard_free(&g);

	/* There before the session (a linked worktree's, say): not the agent's doing. */
	put(f, ".git/commondir", "..\n");
	assert_int_equal(git_guard_plan(f->ws, &g), 0);
	assert_true(g.had_commondir[0]);
	assert_int_equal(git_guard_check(&g, report, &s), 0);
	assert_int_equal(lstat(p, &sb), 0);
	git_guard_free(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(plan_covers_repo_worktrees_and_modules, setup, teardown),
		cmocka_unit_test_setup_teardown(plan_symlinks_files_and_none, setup, teardown),
		cmocka_unit_test_setup_teardown(apply_in_a_namespace, setup, teardown),
		cmocka_unit_test_setup_teardown(check_quarantines_a_new_commondir, setup, teardown),
	};

	return cmocka_run_group_tests_name("git_guard", tests, NULL, NULL);
}
