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
 *
 * The plan (git_guard_plan.c) reads by path name: nothing of the session
 * runs yet.  The end (git_guard_end.c) runs when nothing of it runs any
 * more, but on what the agent left, so it opens each object from its
 * parent's descriptor, O_NOFOLLOW, and moves a symlink it meets rather
 * than looking through it.
 */
#define _GNU_SOURCE
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
