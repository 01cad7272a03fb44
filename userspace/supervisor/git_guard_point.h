/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What makes git run code from elsewhere in the workspace, found at the
 * plan (git_guard.h says what the guard closes): a repository's
 * core.hooksPath, its include.path and includeIf.*.path (followed to
 * GIT_GUARD_INCLUDE_DEPTH), the user's global configs' core.hooksPath,
 * and a hooks directory that is a symlink, or holds symlinks.
 *
 * Attack: the repository's config is read-only, but says
 * `core.hooksPath = .husky` or `include.path = ../.gitconfig` (both common
 * ways to share hooks and config in a project): the agent writes
 * .husky/pre-commit or adds core.fsmonitor to ../.gitconfig, ordinary
 * files of the working tree, and the human's next git runs it.
 *
 * What closes it: each such target inside the workspace that exists is
 * made read-only like the repository's own config and hooks (a hooks
 * directory whole, but one that is the workspace or a repository's top:
 * then only the files git runs as hooks there); one that does not exist
 * yet is listed (git_guard.pointed) and whatever the agent puts there is
 * held aside at the end ("~/" is the user's home: a workspace may lie in
 * it).  What it cannot close: targets named through environment variables
 * or another user's home ("~user/"), and global configs cordon does not
 * know of (GIT_CONFIG_GLOBAL, an XDG_CONFIG_HOME of the human's shell); a hook that runs another file of the
 * working tree (a script, a package.json script: the human runs those
 * knowingly, as a Makefile); while the session runs, a human's git reads
 * what the agent made at a target that did not exist.
 */
#ifndef CORDON_GIT_GUARD_POINT_H
#define CORDON_GIT_GUARD_POINT_H

#include "git_guard_state.h"

/* The names git runs from a hooks directory (githooks(5)), NULL-terminated. */
extern const char *const git_guard_hook_names[];

/*
 * HOME's global configs (~/.gitconfig, ~/.config/git/config) and
 * /etc/gitconfig: an absolute core.hooksPath into the workspace handled at
 * once, a relative one kept (g->global_hooks) for each repository's top.
 * 0, -ENOMEM, or -ELOOP past GIT_GUARD_MAX_CONFIGS files read in all
 * (includes that fan out: the session must not start, as over the walk's
 * caps).
 */
int git_guard_point_globals(struct git_guard *g, const char *home);

/*
 * The git directory GITDIR (g->dirs[IDX], just planned): its hooks
 * (a symlink: followed; a directory: its symlinks followed), its config and
 * config.worktree, its linked worktrees' config.worktree, and the global
 * core.hooksPath values, each resolved and made read-only or listed.
 * 0, -ENOMEM, or -ELOOP (as above).
 */
int git_guard_point_gitdir(struct git_guard *g, const char *gitdir, size_t idx);

/*
 * After the walk: a directory made read-only above a repository found
 * later (its bind would hide that repository's pins) becomes its hook
 * names instead.  0 or -ENOMEM.
 */
int git_guard_point_settle(struct git_guard *g);

#endif /* CORDON_GIT_GUARD_POINT_H */
