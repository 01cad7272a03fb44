/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * git_guard's end (git_guard.h says what it holds and why): when nothing
 * of the session runs any more, the workspace walked again and compared
 * with the plan; what runs code and was not there at the start is held
 * aside, a watched file put back.  It runs on what the agent left, so it
 * opens each object from its parent's descriptor, O_NOFOLLOW, and moves a
 * symlink it meets rather than looking through it.
 */
#ifndef CORDON_GIT_GUARD_END_H
#define CORDON_GIT_GUARD_END_H

#include <stdbool.h>

#include "git_guard_plan.h"

enum git_guard_what {
	GIT_GUARD_COMMONDIR,            /* planted in a git directory (makes config/hooks elsewhere) */
	GIT_GUARD_HOOK,                 /* of a repository made during the session, or its hooks, a symlink */
	GIT_GUARD_CONFIG,               /* such a repository's config: DETAIL, the keys dropped */
	GIT_GUARD_GITFILE,              /* a new .git file pointing at no git directory found */
	GIT_GUARD_FILE_CREATED,         /* a watched file (or its directory, as a symlink) */
	GIT_GUARD_FILE_CHANGED,
	GIT_GUARD_FILE_DELETED,
	GIT_GUARD_INCOMPLETE,           /* the walk stopped (a cap, an error): DETAIL says where */
	GIT_GUARD_POINTED,              /* made where a config or hooks link points (git_guard_point.h) */
	GIT_GUARD_REDIRECT,             /* a symlink or file where git reads worktrees or modules */
};

struct git_guard_held {
	enum git_guard_what what;
	const char *path;
	const char *moved_to;           /* the agent's version now; NULL: not moved (DETAIL says why) */
	bool restored;                  /* the original is back at PATH */
	const char *detail;             /* or NULL */
};

/*
 * After the session, once every task of it is dead (run.c: after the
 * session's cgroup is destroyed): the holding git_guard.h describes, each
 * thing reported through REPORT.  Returns how many were reported, or -errno
 * when the workspace itself cannot be opened.  Run as root, in any mount
 * namespace (held files stay in the directory or mount they were in).
 */
int git_guard_end(const struct git_guard *g,
		  void (*report)(void *ctx, const struct git_guard_held *h), void *ctx);

/* The same, reporting PATH and MOVED_TO only (the first API; git_guard_end says more). */
int git_guard_check(const struct git_guard *g, void (*report)(void *ctx, const char *path,
							      const char *moved_to),
		    void *ctx);

#endif /* CORDON_GIT_GUARD_END_H */
