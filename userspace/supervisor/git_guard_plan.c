// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* git_guard's plan (git_guard_plan.h): by path name, before the session runs. */
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

#include "git_guard_plan.h"
#include "git_guard_point.h"
#include "util.h"

#define STR_(x) #x
#define STR(x) STR_(x)

int git_guard_plan_add(char ***v, size_t *n, const char *a, const char *b)
{
	char **nv = realloc(*v, (*n + 1) * sizeof(**v));

	if (!nv)
		return -ENOMEM;
	*v = nv;
	if (asprintf(&nv[*n], "%s%s%s", a, b ? "/" : "", b ? b : "") < 0)
		return -ENOMEM;
	(*n)++;
	return 0;
}

int git_guard_plan_add_id(struct git_guard_id **v, size_t *n, const struct stat *st)
{
	struct git_guard_id *nv = realloc(*v, (*n + 1) * sizeof(**v));

	if (!nv)
		return -ENOMEM;
	*v = nv;
	nv[(*n)++] = (struct git_guard_id){ st->st_dev, st->st_ino };
	return 0;
}

bool git_guard_plan_has_id(const struct git_guard_id *v, size_t n, const struct stat *st,
			   size_t *at)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].dev == st->st_dev && v[i].ino == st->st_ino) {
			if (at)
				*at = i;
			return true;
		}
	return false;
}

static bool is_kind(const char *path, mode_t kind)
{
	struct stat st;

	return lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == kind;
}

static bool exists(const char *dir, const char *name)
{
	char p[PATH_MAX];
	struct stat st;

	return (size_t)snprintf(p, sizeof(p), "%s/%s", dir, name) < sizeof(p) && lstat(p, &st) == 0;
}

/* A directory git would take for a repository's: HEAD, and config, objects or commondir. */
static bool gitdir_like(const char *dir)
{
	return exists(dir, "HEAD") &&
	       (exists(dir, "config") || exists(dir, "objects") || exists(dir, "commondir"));
}

/* Read-only: each of NAMES in DIR that is a file or directory (never a symlink). */
static int add_ro(struct git_guard *g, const char *dir, const char *const *names)
{
	char p[PATH_MAX];
	int r;

	for (; *names; names++) {
		if ((size_t)snprintf(p, sizeof(p), "%s/%s", dir, *names) >= sizeof(p))
			return -ENAMETOOLONG;
		if (!is_kind(p, S_IFREG) && !is_kind(p, S_IFDIR))
			continue;
		r = git_guard_plan_add(&g->ro, &g->n_ro, p, NULL);
		if (r < 0)
			return r;
	}
	return 0;
}

static int plan_modules(struct git_guard *g, const char *dir, int depth);

/* DIR/NAME is a file or a directory (what add_ro makes read-only). */
static bool pinned(const char *dir, const char *name)
{
	char p[PATH_MAX];

	return (size_t)snprintf(p, sizeof(p), "%s/%s", dir, name) < sizeof(p) &&
	       (is_kind(p, S_IFREG) || is_kind(p, S_IFDIR));
}

/* A linked worktree's directory or a .git file, known at the start; HAD: GIT_GUARD_HAD_*. */
static int add_known(struct git_guard *g, const struct stat *st, unsigned had)
{
	size_t n = g->n_known;
	unsigned *nh = realloc(g->known_had, (n + 1) * sizeof(*nh));

	if (!nh)
		return -ENOMEM;
	g->known_had = nh;
	nh[n] = had;
	return git_guard_plan_add_id(&g->known, &g->n_known, st);
}

static int plan_gitdir(struct git_guard *g, const char *dir, int depth)
{
	static const char *const own[] = { "config", "config.worktree", "hooks", "commondir", NULL };
	static const char *const linked[] = { "commondir", "gitdir", "config.worktree", NULL };
	char sub[PATH_MAX], **nl;
	struct stat st;
	size_t n_ids = g->n_dirs, idx = g->n_dirs;
	unsigned *nh;
	DIR *d;
	struct dirent *de;
	int r;

	if (g->n_dirs >= GIT_GUARD_MAX_REPOS)
		return -E2BIG;
	if (lstat(dir, &st) < 0)
		return -errno;
	r = git_guard_plan_add_id(&g->dir_ids, &n_ids, &st);
	if (r < 0)
		return r;
	nh = realloc(g->had, (idx + 1) * sizeof(*nh));
	if (nh)
		g->had = nh;
	nl = realloc(g->hooks_link, (idx + 1) * sizeof(*nl));
	if (nl)
		g->hooks_link = nl;
	if (!nh || !nl)
		return -ENOMEM;
	nh[idx] = (exists(dir, "commondir") ? GIT_GUARD_HAD_COMMONDIR : 0) |
		  (pinned(dir, "config") ? GIT_GUARD_HAD_CONFIG : 0) |
		  (pinned(dir, "config.worktree") ? GIT_GUARD_HAD_CONFIG_WT : 0) |
		  (pinned(dir, "hooks") ? GIT_GUARD_HAD_HOOKS : 0);
	nl[idx] = NULL;
	r = git_guard_plan_add(&g->dirs, &g->n_dirs, dir, NULL);
	if (r < 0)
		return r;
	r = add_ro(g, dir, own);
	if (r < 0)
		return r;
	/* What its config and hooks make git run from elsewhere in the workspace. */
	r = git_guard_point_gitdir(g, dir, idx);
	if (r < 0)
		return r;
	/* Linked worktrees: their commondir and gitdir say where their repository is. */
	if ((size_t)snprintf(sub, sizeof(sub), "%s/worktrees", dir) >= sizeof(sub))
		return -ENAMETOOLONG;
	if (is_kind(sub, S_IFDIR) && (d = opendir(sub))) {
		while (r >= 0 && (de = readdir(d))) {
			char wt[PATH_MAX];

			if (de->d_name[0] == '.' ||
			    (size_t)snprintf(wt, sizeof(wt), "%s/%s", sub, de->d_name) >= sizeof(wt) ||
			    lstat(wt, &st) < 0 || !S_ISDIR(st.st_mode))
				continue;
			r = add_known(g, &st, pinned(wt, "config.worktree") ? GIT_GUARD_HAD_CONFIG_WT : 0);
			if (r >= 0)
				r = add_ro(g, wt, linked);
			/* A linked worktree's own submodules: WORKTREE/modules/NAME. */
			if (r >= 0 && (size_t)snprintf(wt, sizeof(wt), "%s/%s/modules", sub,
						       de->d_name) < sizeof(wt) && is_kind(wt, S_IFDIR))
				r = plan_modules(g, wt, depth + 1);
		}
		closedir(d);
		if (r < 0)
			return r;
	}
	/* Submodules' git directories: modules/NAME. */
	if ((size_t)snprintf(sub, sizeof(sub), "%s/modules", dir) >= sizeof(sub))
		return -ENAMETOOLONG;
	return is_kind(sub, S_IFDIR) ? plan_modules(g, sub, depth + 1) : 0;
}

/*
 * The git directories below a modules directory: a submodule's NAME may
 * hold slashes (modules/libs/json), so a directory that is not one is
 * searched, to a bounded depth.
 */
static int plan_modules(struct git_guard *g, const char *dir, int depth)
{
	struct dirent *de;
	DIR *d;
	int r = 0;

	if (depth > GIT_GUARD_MODULES_DEPTH || !(d = opendir(dir)))
		return 0;
	while (r >= 0 && (de = readdir(d))) {
		char m[PATH_MAX];

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    (size_t)snprintf(m, sizeof(m), "%s/%s", dir, de->d_name) >= sizeof(m) ||
		    !is_kind(m, S_IFDIR))
			continue;
		r = gitdir_like(m) ? plan_gitdir(g, m, depth) : plan_modules(g, m, depth + 1);
	}
	closedir(d);
	return r;
}

/* PATH relative to the workspace ("" for itself). */
const char *git_guard_plan_below(const struct git_guard *g, const char *path)
{
	size_t n = strlen(g->workspace);

	return path[n] == '/' ? path + n + 1 : path + n;
}

static const char *const watched[] = { GIT_GUARD_WATCHED };

static int plan_on_gitdir(struct git_guard_walk *w, int fd)
{
	int r = plan_gitdir(w->ctx, w->path, 0);

	(void)fd;
	if (r == -E2BIG)
		w->cap = "GIT_GUARD_MAX_REPOS (" STR(GIT_GUARD_MAX_REPOS) " git directories)";
	else if (r == -ELOOP)
		w->cap = "GIT_GUARD_MAX_CONFIGS (" STR(GIT_GUARD_MAX_CONFIGS) " git config files, "
			 "includes followed)";
	return r;
}

/* "gitdir: PATH": the pointer itself read-only; a .git symlink known as it is. */
static int plan_on_gitfile(struct git_guard_walk *w, int dfd)
{
	struct git_guard *g = w->ctx;
	struct stat st;
	int r;

	if (g->n_dirs + g->n_known >= GIT_GUARD_MAX_REPOS) {
		w->cap = "GIT_GUARD_MAX_REPOS (" STR(GIT_GUARD_MAX_REPOS) " git directories)";
		return -E2BIG;
	}
	if (fstatat(dfd, ".git", &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	r = add_known(g, &st, 0);
	/* A symlink cannot be bound read-only: the end holds one that is not this one. */
	if (r < 0 || !S_ISREG(st.st_mode))
		return r;
	return git_guard_plan_add(&g->ro, &g->n_ro, w->path, NULL);
}

static int plan_on_root(struct git_guard_walk *w, size_t plen)
{
	struct git_guard *g = w->ctx;

	(void)plen;
	return git_guard_plan_add(&g->roots, &g->n_roots, git_guard_plan_below(g, w->path), NULL);
}

static int plan_watch(struct git_guard *g)
{
	_cleanup_close_ int wsfd = open(g->workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	size_t keep = GIT_GUARD_SAVE_TOTAL;

	if (wsfd < 0)
		return -errno;
	g->watch = calloc(g->n_roots * ARRAY_SIZE(watched), sizeof(*g->watch));
	if (!g->watch)
		return -ENOMEM;
	for (size_t i = 0; i < g->n_roots; i++) {
		_cleanup_close_ int rfd = git_guard_watch_open_root(wsfd, g->roots[i]);

		if (rfd < 0)
			return rfd;
		for (size_t k = 0; k < ARRAY_SIZE(watched); k++) {
			struct git_guard_watch *wt = &g->watch[g->n_watch];
			int pfd, r;

			wt->root = i;
			wt->rel = watched[k];
			r = git_guard_watch_probe(rfd, watched[k], &wt->s, &keep, &pfd);
			if (r < 0)
				return r;
			g->n_watch++;
			if (pfd >= 0)
				close(pfd);
		}
	}
	return 0;
}

int git_guard_plan_session(const char *workspace, const char *session, const char *home,
			   struct git_guard *g, char *why, size_t wlen)
{
	_cleanup_free_ struct git_guard_walk *w = calloc(1, sizeof(*w));
	int r;

	memset(g, 0, sizeof(*g));
	if (!w)
		return -ENOMEM;
	if (session && (!*session || strchr(session, '/') || strlen(session) > 64))
		return -EINVAL;
	g->workspace = strdup(workspace);
	if (session)
		g->session = strdup(session);
	else if (asprintf(&g->session, "pid%d", (int)getpid()) < 0)
		g->session = NULL;
	if (!g->workspace || !g->session) {
		r = -ENOMEM;
		goto fail;
	}
	if (home && !(g->home = strdup(home))) {
		r = -ENOMEM;
		goto fail;
	}
	r = git_guard_point_globals(g, home);
	if (r < 0) {
		if (why)
			snprintf(why, wlen, "the user's git configs: %s", r == -ELOOP ?
				 "includes over GIT_GUARD_MAX_CONFIGS files" : strerror(-r));
		goto fail;
	}
	w->gitdir = plan_on_gitdir;
	w->gitfile = plan_on_gitfile;
	w->root = plan_on_root;
	w->ctx = g;
	r = git_guard_walk(w, workspace);
	g->walked = w->entries;
	if (r >= 0)
		r = git_guard_point_settle(g);
	if (r < 0) {
		if (why && w->cap)
			snprintf(why, wlen, "%s: the workspace is over %s, so its repositories cannot "
				 "all be found; it is refused rather than half protected", w->path,
				 w->cap);
		else if (why)
			snprintf(why, wlen, "%s: %s", w->path, strerror(-r));
		goto fail;
	}
	r = plan_watch(g);
	if (r < 0) {
		if (why)
			snprintf(why, wlen, "the agent and editor files: %s", strerror(-r));
		goto fail;
	}
	return 0;
fail:
	git_guard_free(g);
	return r;
}

int git_guard_plan(const char *workspace, struct git_guard *g)
{
	return git_guard_plan_session(workspace, NULL, NULL, g, NULL, 0);
}


void git_guard_free(struct git_guard *g)
{
	for (size_t i = 0; i < g->n_dirs; i++) {
		free(g->dirs[i]);
		if (g->hooks_link)
			free(g->hooks_link[i]);
	}
	for (size_t i = 0; i < g->n_pointed; i++)
		free(g->pointed[i]);
	for (size_t i = 0; i < g->n_global_hooks; i++)
		free(g->global_hooks[i]);
	free(g->hooks_link);
	free(g->pointed);
	free(g->global_hooks);
	free(g->known_had);
	free(g->home);
	for (size_t i = 0; i < g->n_ro; i++)
		free(g->ro[i]);
	for (size_t i = 0; i < g->n_roots; i++)
		free(g->roots[i]);
	for (size_t i = 0; i < g->n_watch; i++)
		free(g->watch[i].s.data);
	free(g->dirs);
	free(g->ro);
	free(g->had);
	free(g->dir_ids);
	free(g->known);
	free(g->roots);
	free(g->watch);
	free(g->workspace);
	free(g->session);
	memset(g, 0, sizeof(*g));
}
