/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The walk, shared by git_guard's plan and end (git_guard.h): every
 * directory below the workspace, without following a symlink (each opened
 * O_NOFOLLOW from its parent), across mount points (a human's git runs a
 * repository's hooks on any filesystem), skipping nothing by name.  A .git
 * entry (a directory, a file, or a symlink: git follows one) or a bare
 * repository (HEAD, a file or a symlink, objects/ and refs/ side by side)
 * is handed to the caller and not walked into.  Bounded:
 * GIT_GUARD_MAX_ENTRIES entries.
 */
#ifndef CORDON_GIT_GUARD_WALK_H
#define CORDON_GIT_GUARD_WALK_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

/* The walk's caps: over either, git_guard_plan_session fails (-E2BIG, WHY names it). */
#define GIT_GUARD_MAX_ENTRIES 200000    /* directory entries read */
#define GIT_GUARD_MAX_REPOS   4096      /* git directories and .git files */

struct git_guard_walk {
	char path[PATH_MAX];            /* the directory being read, then what is handed over */
	/*
	 * The end's walk: a directory that cannot be read or named (a path
	 * past PATH_MAX) is reported through SKIPPED and passed over, not the
	 * end of the walk (an agent made one to hide a repository beyond it);
	 * its cap is END_MAX_ENTRIES.  NULL: the plan's, which stops.
	 */
	void (*skipped)(struct git_guard_walk *w, int err);
	size_t max_entries;             /* 0: GIT_GUARD_MAX_ENTRIES */
	/*
	 * The end's walk also goes into every git directory it hands over
	 * (and treats the workspace's top as one may be): a repository made
	 * inside one, reached through a symlink or a rename, is found there.
	 */
	bool into_gitdirs;
	/* getdents64's, shared: a directory is read whole before the walk goes below it. */
	char buf[32768] __attribute__((aligned(8)));
	size_t entries;
	const char *cap;                /* what stopped the walk */
	int (*gitdir)(struct git_guard_walk *w, int fd);
	int (*gitfile)(struct git_guard_walk *w, int dfd);
	int (*root)(struct git_guard_walk *w, size_t plen);
	void *ctx;
};

/*
 * Walk WORKSPACE with W's callbacks (GITDIR: a .git directory, or a bare
 * repository, open as FD, its path in W->path; GITFILE: a .git file or
 * symlink in the directory DFD; ROOT: after a directory holding .git, and the workspace
 * itself, its path the first PLEN bytes of W->path).  A callback's
 * negative return stops the walk with it.  0, or -errno with W->path
 * naming where (W->cap set when a cap stopped it: -E2BIG, -ENAMETOOLONG).
 */
int git_guard_walk(struct git_guard_walk *w, const char *workspace);

#endif /* CORDON_GIT_GUARD_WALK_H */
