// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Where git is told to run code from, in the workspace (git_guard_point.h): by path name, at the plan. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "git_config_strip.h"
#include "git_guard_point.h"
#include "util.h"

/* Where a relative core.hooksPath may be taken from: the top, the git directory, linked worktrees. */
#define MAX_BASES 16
#define CONFIG_MAX (4 << 20)

const char *const git_guard_hook_names[] = {
	"applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit",
	"prepare-commit-msg", "commit-msg", "post-commit", "pre-rebase", "post-checkout",
	"post-merge", "pre-push", "pre-receive", "update", "proc-receive", "post-receive",
	"post-update", "reference-transaction", "push-to-checkout", "pre-auto-gc", "post-rewrite",
	"sendemail-validate", "fsmonitor-watchman", "p4-changelist", "p4-prepare-changelist",
	"p4-post-changelist", "p4-pre-submit", "post-index-change", NULL,
};

static bool within(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return !strncmp(path, dir, n) && (path[n] == '/' || !path[n]);
}

static int add_unique(char ***v, size_t *n, const char *s)
{
	char **nv;

	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*v)[i], s))
			return 0;
	nv = realloc(*v, (*n + 1) * sizeof(**v));
	if (!nv)
		return -ENOMEM;
	*v = nv;
	if (!(nv[*n] = strdup(s)))
		return -ENOMEM;
	(*n)++;
	return 0;
}

/* PATH (in the workspace) relative to it. */
static const char *below(const struct git_guard *g, const char *path)
{
	size_t n = strlen(g->workspace);

	return path[n] == '/' ? path + n + 1 : path + n;
}

/*
 * PATH made canonical as far as it exists: its longest existing prefix
 * through realpath, the rest as written, "." and ".." folded (nothing
 * there can be a symlink yet).  OUT holds PATH_MAX.  0 or -errno.
 */
static int canon_partial(const char *path, char *out, int depth)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/'), *leaf;
	int r;

	if (depth > 64)
		return -ELOOP;
	if (realpath(path, out))
		return 0;
	if ((errno != ENOENT && errno != ENOTDIR) || !slash)
		return -errno;
	if (slash == path)
		strcpy(dir, "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	r = canon_partial(dir, out, depth + 1);
	if (r < 0)
		return r;
	leaf = slash + 1;
	if (!*leaf || !strcmp(leaf, "."))
		return 0;
	if (!strcmp(leaf, "..")) {
		char *cut = strrchr(out, '/');

		if (cut == out)
			out[1] = 0;
		else if (cut)
			*cut = 0;
		return 0;
	}
	if (strlen(out) + strlen(leaf) + 2 > PATH_MAX)
		return -ENAMETOOLONG;
	if (strcmp(out, "/"))
		strcat(out, "/");
	strcat(out, leaf);
	return 0;
}

/* A file at REAL (canonical, in the workspace): read-only if it is there, else listed. */
static int point_file(struct git_guard *g, const char *real)
{
	struct stat st;

	if (lstat(real, &st) < 0)
		return add_unique(&g->pointed, &g->n_pointed, below(g, real));
	if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
		return add_unique(&g->ro, &g->n_ro, real);
	return 0;
}

static int point_at(struct git_guard *g, const char *base, const char *value, bool hooks);

/* Symlinks in the hooks directory DIR: what they lead to in the workspace. */
static int follow_links(struct git_guard *g, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int r = 0;

	if (!d)
		return 0;
	while (r >= 0 && (de = readdir(d))) {
		char p[PATH_MAX], text[PATH_MAX];
		ssize_t n;

		if (de->d_type != DT_LNK && de->d_type != DT_UNKNOWN)
			continue;
		if ((size_t)snprintf(p, sizeof(p), "%s/%s", dir, de->d_name) >= sizeof(p))
			continue;
		n = readlink(p, text, sizeof(text) - 1);
		if (n <= 0)
			continue;
		text[n] = 0;
		r = point_at(g, dir, text, false);
	}
	closedir(d);
	return r;
}

static bool has(const char *dir, const char *name)
{
	char p[PATH_MAX];
	struct stat st;

	return (size_t)snprintf(p, sizeof(p), "%s/%s", dir, name) < sizeof(p) && lstat(p, &st) == 0;
}

/*
 * Is DIR the workspace, above it, a repository's top or a git directory
 * (where a whole read-only would stop the work)?
 */
static bool is_top(const struct git_guard *g, const char *dir)
{
	return within(g->workspace, dir) || has(dir, ".git") ||
	       (has(dir, "HEAD") && (has(dir, "config") || has(dir, "objects")));
}

/* A hooks directory at REAL (canonical, in the workspace). */
static int point_hooks(struct git_guard *g, const char *real)
{
	struct stat st;
	int r = 0;

	if (lstat(real, &st) < 0)
		return add_unique(&g->pointed, &g->n_pointed, below(g, real));
	if (!S_ISDIR(st.st_mode))
		return point_file(g, real);
	if (!is_top(g, real)) {
		r = add_unique(&g->ro, &g->n_ro, real);
		return r < 0 ? r : follow_links(g, real);
	}
	/* A top: only the names git runs there. */
	for (const char *const *h = git_guard_hook_names; *h && r >= 0; h++) {
		char p[PATH_MAX];

		if ((size_t)snprintf(p, sizeof(p), "%s/%s", real, *h) >= sizeof(p))
			continue;
		r = point_at(g, "/", p, false);
	}
	return r;
}

/*
 * VALUE (from a config, or a symlink's text) taken from BASE: what it
 * names inside the workspace, read-only or listed.  A name through the
 * home ("~") is left: the agent's writes there stay in its layer.
 */
static int point_at(struct git_guard *g, const char *base, const char *value, bool hooks)
{
	char path[PATH_MAX], real[PATH_MAX];

	/* "~/": the user's home, which may hold the workspace; "~user/" is left. */
	if (!strncmp(value, "~/", 2) && g->home) {
		base = g->home;
		value += 2;
	} else if (!*value || value[0] == '~') {
		return 0;
	}
	if ((size_t)snprintf(path, sizeof(path), "%s%s%s", value[0] == '/' ? "" : base,
			     value[0] == '/' ? "" : "/", value) >= sizeof(path) ||
	    canon_partial(path, real, 0) < 0 || !within(real, g->workspace))
		return 0;       /* a name git could not open either, or outside the workspace */
	return hooks ? point_hooks(g, real) : point_file(g, real);
}

/*
 * PATH opened for reading only if it is a regular file: its object found
 * first (O_PATH, which opens nothing), then that object reopened.  Root
 * must not open a device because a config names it: opening
 * /dev/watchdog arms it.  A descriptor, or -1.
 */
static int open_regular(const char *path)
{
	_cleanup_close_ int p = open(path, O_PATH | O_CLOEXEC);
	char self[64];
	struct stat st;

	if (p < 0 || fstat(p, &st) < 0 || !S_ISREG(st.st_mode))
		return -1;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", p);
	return open(self, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
}

struct conf {
	struct git_guard *g;
	char dir[PATH_MAX];             /* of the file read: where its includes are taken from */
	const char *const *bases;       /* NULL: a global config */
	size_t n_bases;
	int depth;
};

static int read_conf(struct git_guard *g, const char *file, const char *const *bases,
		     size_t n_bases, int depth);

static int on_value(void *ctx, const char *key, const char *value)
{
	struct conf *c = ctx;
	char inc[PATH_MAX];
	int r = 0;

	if (!strcmp(key, "core.hookspath")) {
		if (value[0] == '/')
			return point_at(c->g, "/", value, true);
		if (!c->bases)
			return value[0] == '~' ? point_at(c->g, "/", value, true) :
			       add_unique(&c->g->global_hooks, &c->g->n_global_hooks, value);
		for (size_t i = 0; i < c->n_bases && r >= 0; i++)
			r = point_at(c->g, c->bases[i], value, true);
		return r;
	}
	if (strcmp(key, "include.path") && strcmp(key, "includeif.path"))
		return 0;
	r = point_at(c->g, c->dir, value, false);
	/* The included file's own keys, wherever it is (a file outside may name one inside). */
	if (r < 0 || c->depth >= GIT_GUARD_INCLUDE_DEPTH)
		return r;
	if (!strncmp(value, "~/", 2) && c->g->home)
		snprintf(inc, sizeof(inc), "%s/%s", c->g->home, value + 2);
	else if (value[0] == '~' ||
		 (size_t)snprintf(inc, sizeof(inc), "%s%s%s", value[0] == '/' ? "" : c->dir,
				  value[0] == '/' ? "" : "/", value) >= sizeof(inc))
		return 0;
	return read_conf(c->g, inc, c->bases, c->n_bases, c->depth + 1);
}

/* FILE's core.hooksPath and includes (git would refuse a file it cannot parse: nothing runs). */
static int read_conf(struct git_guard *g, const char *file, const char *const *bases,
		     size_t n_bases, int depth)
{
	struct conf c = { .g = g, .bases = bases, .n_bases = n_bases, .depth = depth };
	_cleanup_close_ int fd = open_regular(file);
	_cleanup_free_ char *buf = NULL;
	const char *slash = strrchr(file, '/');
	size_t got = 0;
	struct stat st;
	ssize_t n;
	int r;

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > CONFIG_MAX || !slash)
		return 0;
	/* Includes that fan out (a config including itself many times): refused, not half read. */
	if (++g->conf_read > GIT_GUARD_MAX_CONFIGS)
		return -ELOOP;
	if (!(buf = malloc((size_t)st.st_size + 1)))
		return -ENOMEM;
	while (got < (size_t)st.st_size && (n = read(fd, buf + got, (size_t)st.st_size - got)) > 0)
		got += (size_t)n;
	snprintf(c.dir, sizeof(c.dir), "%.*s", slash == file ? 1 : (int)(slash - file), file);
	r = git_config_paths(buf, got, on_value, &c, NULL);
	return r == -ENOMEM || r == -ELOOP ? r : 0;
}

static int on_worktree(void *ctx, const char *key, const char *value)
{
	if (!strcmp(key, "core.worktree"))
		snprintf(ctx, PATH_MAX, "%s", value);
	return 0;
}

int git_guard_point_globals(struct git_guard *g, const char *home)
{
	char p[PATH_MAX];
	int r = read_conf(g, "/etc/gitconfig", NULL, 0, 0);

	if (r >= 0 && home && (size_t)snprintf(p, sizeof(p), "%s/.gitconfig", home) < sizeof(p))
		r = read_conf(g, p, NULL, 0, 0);
	if (r >= 0 && home && (size_t)snprintf(p, sizeof(p), "%s/.config/git/config", home) < sizeof(p))
		r = read_conf(g, p, NULL, 0, 0);
	return r;
}

/* Where GITDIR's hooks run from: its top, itself, its core.worktree, its linked worktrees' tops. */
static size_t find_bases(const char *gitdir, char (*b)[PATH_MAX])
{
	const char *slash = strrchr(gitdir, '/');
	char p[PATH_MAX], wt[PATH_MAX] = "";
	size_t n = 0;
	DIR *d;
	struct dirent *de;

	/* A .git directory's hooks run from its top; a bare repository's from itself. */
	if (slash && !strcmp(slash, "/.git"))
		snprintf(b[n++], PATH_MAX, "%.*s", slash == gitdir ? 1 : (int)(slash - gitdir), gitdir);
	else
		snprintf(b[n++], PATH_MAX, "%s", gitdir);
	if ((size_t)snprintf(p, sizeof(p), "%s/config", gitdir) < sizeof(p)) {
		_cleanup_close_ int fd = open_regular(p);
		char buf[16384];
		ssize_t got = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;

		if (got > 0)
			(void)git_config_paths(buf, (size_t)got, on_worktree, wt, NULL);
		if (wt[0] && wt[0] != '~')
			snprintf(b[n++], PATH_MAX, "%s%s%s", wt[0] == '/' ? "" : gitdir,
				 wt[0] == '/' ? "" : "/", wt);
	}
	if ((size_t)snprintf(p, sizeof(p), "%s/worktrees", gitdir) >= sizeof(p) || !(d = opendir(p)))
		return n;
	while (n < MAX_BASES && (de = readdir(d))) {
		char gf[PATH_MAX], text[PATH_MAX];
		_cleanup_close_ int fd = -1;
		ssize_t got;

		if (de->d_name[0] == '.' ||
		    (size_t)snprintf(gf, sizeof(gf), "%s/%s/gitdir", p, de->d_name) >= sizeof(gf) ||
		    (fd = open_regular(gf)) < 0 ||
		    (got = read(fd, text, sizeof(text) - 1)) <= 0)
			continue;
		text[got] = 0;
		text[strcspn(text, "\r\n")] = 0;
		/* "PATH/.git": the worktree's .git file; its top is above it. */
		if (text[0] == '/' && (slash = strrchr(text, '/')) && slash != text)
			snprintf(b[n++], PATH_MAX, "%.*s", (int)(slash - text), text);
	}
	closedir(d);
	return n;
}

int git_guard_point_gitdir(struct git_guard *g, const char *gitdir, size_t idx)
{
	char (*b)[PATH_MAX] = calloc(MAX_BASES, PATH_MAX), p[PATH_MAX], text[PATH_MAX];
	const char *bases[MAX_BASES];
	size_t n;
	struct stat st;
	ssize_t len;
	DIR *d;
	struct dirent *de;
	int r = 0;

	if (!b)
		return -ENOMEM;
	n = find_bases(gitdir, b);
	for (size_t i = 0; i < n; i++)
		bases[i] = b[i];
	if ((size_t)snprintf(p, sizeof(p), "%s/hooks", gitdir) < sizeof(p) && lstat(p, &st) == 0) {
		if (S_ISLNK(st.st_mode) && (len = readlink(p, text, sizeof(text) - 1)) > 0) {
			text[len] = 0;
			g->hooks_link[idx] = strdup(text);
			r = g->hooks_link[idx] ? point_at(g, gitdir, text, true) : -ENOMEM;
		} else if (S_ISDIR(st.st_mode)) {
			r = follow_links(g, p);
		}
	}
	if (r >= 0 && (size_t)snprintf(p, sizeof(p), "%s/config", gitdir) < sizeof(p))
		r = read_conf(g, p, bases, n, 0);
	if (r >= 0 && (size_t)snprintf(p, sizeof(p), "%s/config.worktree", gitdir) < sizeof(p))
		r = read_conf(g, p, bases, n, 0);
	for (size_t k = 0; r >= 0 && k < g->n_global_hooks; k++)
		for (size_t i = 0; r >= 0 && i < n; i++)
			r = point_at(g, bases[i], g->global_hooks[k], true);
	/* Each linked worktree's own config.worktree. */
	if (r >= 0 && (size_t)snprintf(p, sizeof(p), "%s/worktrees", gitdir) < sizeof(p) &&
	    (d = opendir(p))) {
		while (r >= 0 && (de = readdir(d))) {
			char wc[PATH_MAX];

			if (de->d_name[0] != '.' &&
			    (size_t)snprintf(wc, sizeof(wc), "%s/%s/config.worktree", p, de->d_name) <
			    sizeof(wc))
				r = read_conf(g, wc, bases, n, 0);
		}
		closedir(d);
	}
	free(b);
	return r;
}

int git_guard_point_settle(struct git_guard *g)
{
	int r = 0;

	for (size_t i = 0; i < g->n_ro && r >= 0; i++) {
		bool holds = false;
		struct stat st;

		for (size_t k = 0; k < g->n_dirs && !holds; k++)
			holds = within(g->dirs[k], g->ro[i]) && strcmp(g->dirs[k], g->ro[i]);
		if (!holds || lstat(g->ro[i], &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		/*
		 * A hooks directory with a repository below it: a read-only bind
		 * of it (not recursive) would hide that repository's pins, and a
		 * recursive one its writes: only the names git runs from it.
		 */
		{
			char *dir = g->ro[i];

			memmove(&g->ro[i], &g->ro[i + 1], (g->n_ro - i - 1) * sizeof(*g->ro));
			g->n_ro--;
			i--;
			for (const char *const *h = git_guard_hook_names; *h && r >= 0; h++) {
				char p[PATH_MAX];

				if ((size_t)snprintf(p, sizeof(p), "%s/%s", dir, *h) < sizeof(p))
					r = point_at(g, "/", p, false);
			}
			free(dir);
		}
	}
	return r;
}
