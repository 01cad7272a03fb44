/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * git_guard's plan (git_guard.h says what it closes): the repositories
 * below the workspace, what of each is pinned and made read-only, and the
 * state the end compares with (the .git files and linked worktrees known,
 * each repository's top, the watched files as they were).  It reads by
 * path name: nothing of the session runs yet.
 */
#ifndef CORDON_GIT_GUARD_PLAN_H
#define CORDON_GIT_GUARD_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "git_guard_state.h"
#include "git_guard_walk.h"

/* Modules in modules, and names with slashes: searched this deep. */
#define GIT_GUARD_MODULES_DEPTH 8

/*
 * What to protect below WORKSPACE, and the state git_guard_end compares
 * with: every repository (walked without following a symlink, across
 * mount points: a human's git runs hooks on any filesystem; nothing
 * skipped by name; a .git directory or a bare repository is not walked
 * into, its modules/ is searched), and the watched files' contents.
 * SESSION names what is held aside at the end (NULL: "pidPID"); HOME
 * (or NULL) is the user's, whose global git configs are read for a
 * core.hooksPath into the workspace.  0, or
 * -errno with WHY (-E2BIG: a cap was reached; WHY names it: the session
 * must not start).  Changes nothing; git_guard_free after, either way.
 */
int git_guard_plan_session(const char *workspace, const char *session, const char *home,
			   struct git_guard *g, char *why, size_t wlen);
/* The same, SESSION NULL and no WHY. */
int git_guard_plan(const char *workspace, struct git_guard *g);

void git_guard_free(struct git_guard *g);


/* Append A, or A/B when B is not NULL, to the array *V of *N strings.  0 or -ENOMEM. */
int git_guard_plan_add(char ***v, size_t *n, const char *a, const char *b);

/* Append ST's identity (device, inode) to *V of *N.  0 or -ENOMEM. */
int git_guard_plan_add_id(struct git_guard_id **v, size_t *n, const struct stat *st);

/* Is ST's identity among V's N, and at which index (*AT, when not NULL)? */
bool git_guard_plan_has_id(const struct git_guard_id *v, size_t n, const struct stat *st,
			   size_t *at);

/* PATH (below the workspace) relative to the workspace ("" for itself). */
const char *git_guard_plan_below(const struct git_guard *g, const char *path);

#endif /* CORDON_GIT_GUARD_PLAN_H */
