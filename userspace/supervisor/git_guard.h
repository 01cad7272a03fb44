/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What in the workspace runs code when the human next works there: git
 * metadata, and the configuration of the human's agents and editors.
 *
 * Attack: the agent writes core.fsmonitor (or core.hooksPath, an alias, a
 * filter driver) into a repository's config, a script into its hooks, or
 * a command into .claude/settings.json, .vscode/tasks.json, .envrc; the
 * human's next `git status` (a shell prompt runs one at every command),
 * commit, editor or agent runs it as the human, outside every sandbox,
 * where it can even approve the agent's held requests.
 *
 * What closes it:
 * - every repository below the workspace at any depth (a .git directory
 *   or file, a bare repository, the submodules' git directories under
 *   .git/modules) is pinned in the session's own mount namespace (a mount
 *   point: it cannot be renamed or removed and another put in its place)
 *   and its config, config.worktree, hooks and its linked worktrees'
 *   pointers are read-only; a .git file is read-only itself.  The host's
 *   view is unchanged; the agent cannot undo a mount.
 * - when the session ends (its tasks all dead: nothing races what
 *   follows), git_guard_end walks the workspace again: a git directory
 *   that was not there at the start has its hooks (all but *.sample) and
 *   the keys of its config that run programs (git_config_strip.h, a list)
 *   held aside in GITDIR/cordon-held-TAG/, the rest of its config kept
 *   so the repository still works; a commondir planted anywhere, a new
 *   .git file pointing at no repository of the workspace, held the same;
 *   in a repository of the start, what was not there then to be made
 *   read-only (hooks, config, config.worktree, a linked worktree's) is
 *   taken as in a new one, and a hooks symlink replaced is put back.
 * - what a repository's config, the user's global configs or a hooks
 *   symlink make git run from elsewhere in the workspace
 *   (git_guard_point.h): read-only when it exists, held aside at the end
 *   when it did not.
 * - TAG is the session's name and a nonce the agent never sees (run.c):
 *   it cannot put a directory in the way of a held name beforehand.
 * - what git takes for a repository where the walk did not look: a .git
 *   symlink (a new one is held aside), a bare repository whose HEAD is a
 *   symlink or whose objects and refs are any files git may search, or a
 *   commondir names them; a new entry of .git/worktrees without a
 *   commondir (a whole repository); a .git file whose path holds a line
 *   break (git keeps it); the end's walk goes into every git directory
 *   (a repository made inside one, reached by a symlink or a rename, is
 *   found there), the workspace's top included; a symlink in place of a repository's worktrees or modules
 *   directory or of an entry in them (held aside); a directory the end
 *   cannot read or name (a path past PATH_MAX) is said and passed over,
 *   the walk goes on.  The strip list reads [section.a "b"] as git does
 *   (section, subsection "a.b") and takes every alias.
 * - the agent and editor files below (at the workspace's top and at each
 *   repository's top: where a human opens a project) are compared with
 *   their start: one created or changed is renamed to
 *   FILE.cordon-held-TAG and the original (kept in memory, up to
 *   GIT_GUARD_SAVE_MAX each, GIT_GUARD_SAVE_TOTAL in all) put back;
 *   one deleted is put back.  Held aside at the end, not refused live:
 *   the agent edits them legitimately, and no human tool reads them
 *   while the session runs.
 * Everything at the end goes through descriptors with O_NOFOLLOW (and
 * openat2 RESOLVE_NO_SYMLINKS): a symlink the agent planted is moved
 * aside, never followed.
 *
 * What it cannot close: while the session runs, a git run by the human in
 * the workspace reads what the agent just made (a new repository, a
 * commondir); a repository below a git directory is found at the end
 * only (the plan's walk does not go into one: not read-only meanwhile); a repository whose git directory is not called .git and
 * lacks HEAD, objects or refs at the start but gains them; keys of a
 * config a later git adds that run programs (the list); files other than
 * those listed (a Makefile, package.json scripts, .idea/: the human runs
 * these knowingly, or the IDE rewrites them all the time); a watched file
 * the human edited on the host during the session is reverted too (held
 * aside, never lost); a hard link to config made before the session.  A
 * workspace over the walk's caps (git_guard_walk.h) is refused, not half
 * protected.
 */
#ifndef CORDON_GIT_GUARD_H
#define CORDON_GIT_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The plan and the end: their own modules, here for the callers of the whole. */
#include "git_guard_end.h"
#include "git_guard_plan.h"

/*
 * Carry out a plan in a new mount namespace of the calling thread (which
 * must be root and single-threaded as far as its filesystem state goes):
 * mounts there are slaves of the host's, each git directory is bound onto
 * itself, and each read-only path bound onto itself read-only.  0, or
 * -errno with WHY.
 */
int git_guard_apply(const struct git_guard *g, char *why, size_t wlen);

#endif /* CORDON_GIT_GUARD_H */
