/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The workspace's git metadata that runs code, out of the agent's reach.
 *
 * Attack: the agent writes core.fsmonitor (or core.hooksPath, an alias, a
 * filter driver) into WORKSPACE/.git/config, or a script into .git/hooks;
 * the human's next `git status` (a shell prompt runs one at every command)
 * or commit runs it as the human, outside every sandbox, and it can even
 * approve the agent's held requests from there.  What closes it: the
 * session runs in a mount namespace of its own where each git directory of
 * the workspace is pinned (a mount point: it cannot be renamed or removed
 * and another put in its place) and its config, config.worktree, hooks,
 * and a linked worktree's commondir and gitdir are read-only.  The host's
 * view is unchanged.  The agent can never undo a mount (no CAP_SYS_ADMIN,
 * and the floor refuses mount in both postures).
 *
 * What it cannot close: a name git honours that did not exist when the
 * session started: a new GITDIR/commondir redirects config and hooks to a
 * directory the agent wrote (git_guard_check quarantines it when the
 * session ends, and says so; while the session runs, a git run by the
 * human in the workspace reads it); repositories the agent creates or
 * clones itself, and nested repositories below the workspace's top level;
 * a hard link to config made before the session.
 */
#ifndef CORDON_GIT_GUARD_H
#define CORDON_GIT_GUARD_H

#include <stdbool.h>
#include <stddef.h>

struct git_guard {
	size_t n_dirs;                  /* git directories pinned, parents first */
	char **dirs;
	bool *had_commondir;            /* GITDIR/commondir existed at the start */
	size_t n_ro;                    /* paths made read-only, after their pins */
	char **ro;
};

/*
 * What to protect below WORKSPACE (no side effects): its .git directory
 * (a .git file, as a linked worktree or a submodule checkout has, is made
 * read-only itself), and the git directories of its submodules under
 * .git/modules.  0 (none is fine), or -errno.  Reads, changes nothing;
 * git_guard_free after.
 */
int git_guard_plan(const char *workspace, struct git_guard *g);

/*
 * Carry out a plan in a new mount namespace of the calling thread (which
 * must be root and single-threaded as far as its filesystem state goes):
 * mounts there are slaves of the host's, each git directory is bound onto
 * itself, and each read-only path bound onto itself read-only.  0, or
 * -errno with WHY.
 */
int git_guard_apply(const struct git_guard *g, char *why, size_t wlen);

/*
 * After the session: a GITDIR/commondir that appeared in a pinned git
 * directory is renamed aside (to commondir.cordon-quarantined-PID),
 * reported through REPORT.  Returns how many were found.
 */
int git_guard_check(const struct git_guard *g, void (*report)(void *ctx, const char *path,
							      const char *moved_to),
		    void *ctx);

void git_guard_free(struct git_guard *g);

#endif /* CORDON_GIT_GUARD_H */
