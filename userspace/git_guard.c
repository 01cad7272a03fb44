// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The workspace's git metadata that runs code, read-only to the session
 * (what it closes and what not: git_guard.h).
 *
 * The mounts are made with the new mount API on descriptors, never on path
 * names: each object is opened O_PATH|O_NOFOLLOW, cloned (open_tree), made
 * read-only (mount_setattr) and attached onto itself (move_mount), so a
 * symlink swapped in between the plan and the mount cannot move a bind
 * elsewhere, and a remount never lands on the mount below.  A pin is the
 * same without the read-only attribute.  Children are opened after their
 * git directory is pinned, so their binds sit on the pin, where they are
 * seen.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/mount.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "git_guard.h"
#include "util.h"

/* Modules in modules, and names with slashes: searched this deep. */
#define MODULES_DEPTH 8

static int add(char ***v, size_t *n, const char *a, const char *b)
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

/* A directory git would take for a repository's: HEAD, and config or objects. */
static bool gitdir_like(const char *dir)
{
	return exists(dir, "HEAD") && (exists(dir, "config") || exists(dir, "objects"));
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
		r = add(&g->ro, &g->n_ro, p, NULL);
		if (r < 0)
			return r;
	}
	return 0;
}

static int plan_modules(struct git_guard *g, const char *dir, int depth);

static int plan_gitdir(struct git_guard *g, const char *dir, int depth)
{
	static const char *const own[] = { "config", "config.worktree", "hooks", "commondir", NULL };
	static const char *const linked[] = { "commondir", "gitdir", "config.worktree", NULL };
	char sub[PATH_MAX];
	bool *nh;
	DIR *d;
	struct dirent *de;
	int r;

	nh = realloc(g->had_commondir, (g->n_dirs + 1) * sizeof(*nh));
	if (!nh)
		return -ENOMEM;
	g->had_commondir = nh;
	nh[g->n_dirs] = exists(dir, "commondir");
	r = add(&g->dirs, &g->n_dirs, dir, NULL);
	if (r < 0)
		return r;
	r = add_ro(g, dir, own);
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
			    !is_kind(wt, S_IFDIR))
				continue;
			r = add_ro(g, wt, linked);
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

	if (depth > MODULES_DEPTH || !(d = opendir(dir)))
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

int git_guard_plan(const char *workspace, struct git_guard *g)
{
	char p[PATH_MAX];
	int r;

	memset(g, 0, sizeof(*g));
	if ((size_t)snprintf(p, sizeof(p), "%s/.git", workspace) >= sizeof(p))
		return -ENAMETOOLONG;
	if (is_kind(p, S_IFDIR))
		r = plan_gitdir(g, p, 0);
	else if (is_kind(p, S_IFREG))  /* "gitdir: PATH": the pointer itself */
		r = add(&g->ro, &g->n_ro, p, NULL);
	else
		r = 0;
	if (r < 0)
		git_guard_free(g);
	return r;
}

/* Bind PATH onto itself, read-only if asked, through descriptors only. */
static int bind_self(const char *path, bool ro)
{
	struct mount_attr attr = { .attr_set = MOUNT_ATTR_RDONLY };
	_cleanup_close_ int fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_close_ int tree = -1;

	if (fd < 0)
		return -errno;
	tree = (int)syscall(SYS_open_tree, fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	if (tree < 0)
		return -errno;
	if (ro && syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0)
		return -errno;
	if (syscall(SYS_move_mount, tree, "", fd, "",
		    MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return -errno;
	return 0;
}

int git_guard_apply(const struct git_guard *g, char *why, size_t wlen)
{
	int r;

	if (!g->n_dirs && !g->n_ro)
		return 0;
	if (unshare(CLONE_NEWNS) < 0) {
		r = -errno;
		snprintf(why, wlen, "a mount namespace for the session: %s", strerror(-r));
		return r;
	}
	/* Host mounts still reach the session; nothing made here reaches the host. */
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0) {
		r = -errno;
		snprintf(why, wlen, "making the session's mounts slaves: %s", strerror(-r));
		return r;
	}
	/*
	 * Pins first, parents before their modules, then the read-only paths:
	 * each is opened by name through the mounts made before it.
	 */
	for (size_t i = 0; i < g->n_dirs; i++)
		if ((r = bind_self(g->dirs[i], false)) < 0) {
			snprintf(why, wlen, "pinning %s: %s", g->dirs[i], strerror(-r));
			return r;
		}
	for (size_t i = 0; i < g->n_ro; i++)
		if ((r = bind_self(g->ro[i], true)) < 0) {
			snprintf(why, wlen, "making %s read-only: %s", g->ro[i], strerror(-r));
			return r;
		}
	return 0;
}

int git_guard_check(const struct git_guard *g, void (*report)(void *ctx, const char *path,
							      const char *moved_to),
		    void *ctx)
{
	int found = 0;

	for (size_t i = 0; i < g->n_dirs; i++) {
		char p[PATH_MAX], q[PATH_MAX + 64];

		if (g->had_commondir[i] || !exists(g->dirs[i], "commondir"))
			continue;
		found++;
		snprintf(p, sizeof(p), "%s/commondir", g->dirs[i]);
		snprintf(q, sizeof(q), "%s.cordon-quarantined-%d", p, (int)getpid());
		report(ctx, p, rename(p, q) == 0 ? q : NULL);
	}
	return found;
}

void git_guard_free(struct git_guard *g)
{
	for (size_t i = 0; i < g->n_dirs; i++)
		free(g->dirs[i]);
	for (size_t i = 0; i < g->n_ro; i++)
		free(g->ro[i]);
	free(g->dirs);
	free(g->ro);
	free(g->had_commondir);
	memset(g, 0, sizeof(*g));
}
