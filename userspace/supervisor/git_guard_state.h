/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * git_guard's state (git_guard.h says what it closes): what the plan
 * found and made read-only, and what the end compares with.  Made by
 * git_guard_plan.c and git_guard_point.c, read by git_guard.c and
 * git_guard_end.c.
 */
#ifndef CORDON_GIT_GUARD_STATE_H
#define CORDON_GIT_GUARD_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "git_guard_watch.h"

struct git_guard_id {
	dev_t dev;
	ino_t ino;
};

/* A watched file at the plan: its root (an index of roots), its name, its state. */
struct git_guard_watch {
	size_t root;
	const char *rel;
	struct git_guard_wstate s;
};

/* What a git directory (or a linked worktree's) had at the start: what the end leaves alone. */
#define GIT_GUARD_HAD_COMMONDIR  0x1u
#define GIT_GUARD_HAD_CONFIG     0x2u   /* config, a file: read-only */
#define GIT_GUARD_HAD_CONFIG_WT  0x4u   /* config.worktree, a file: read-only */
#define GIT_GUARD_HAD_HOOKS      0x8u   /* hooks, a directory: read-only */

/* Included config files followed this deep (git's own limit), and this many files read in all. */
#define GIT_GUARD_INCLUDE_DEPTH 10
#define GIT_GUARD_MAX_CONFIGS 4096

struct git_guard {
	size_t n_dirs;                  /* git directories pinned, parents first */
	char **dirs;
	unsigned *had;                  /* each of dirs: GIT_GUARD_HAD_* */
	char **hooks_link;              /* each of dirs: its hooks as a symlink, the link's text; or NULL */
	struct git_guard_id *dir_ids;   /* each of dirs, as it was */
	size_t n_ro;                    /* paths made read-only, after their pins */
	char **ro;
	/* What git_guard_end compares with. */
	char *workspace, *session;
	size_t n_known;                 /* .git files and linked worktrees' directories */
	struct git_guard_id *known;
	unsigned *known_had;            /* each of known: GIT_GUARD_HAD_CONFIG_WT */
	/*
	 * Where a repository's config (core.hooksPath, include.path,
	 * includeIf.*.path), a global config's core.hooksPath, or a hooks
	 * symlink points inside the workspace at nothing yet: relative to the
	 * workspace; what is there at the end is held aside.  (What exists is
	 * in ro.)
	 */
	size_t n_pointed;
	char **pointed;
	size_t n_global_hooks;          /* relative core.hooksPath of the user's global configs */
	char **global_hooks;
	size_t conf_read;               /* config files read (GIT_GUARD_MAX_CONFIGS at most) */
	char *home;                     /* the user's, for "~/" in a config's paths; or NULL */
	size_t n_roots;                 /* the workspace ("") and each repository's top, relative */
	char **roots;
	size_t n_watch;
	struct git_guard_watch *watch;
	size_t walked;                  /* directory entries the plan read */
};

#endif /* CORDON_GIT_GUARD_STATE_H */
