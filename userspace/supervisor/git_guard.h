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
 *   held aside in GITDIR/cordon-held-SESSION/, the rest of its config kept
 *   so the repository still works; a commondir planted anywhere, a new
 *   .git file pointing at no repository of the workspace, held the same.
 * - the agent and editor files below (at the workspace's top and at each
 *   repository's top: where a human opens a project) are compared with
 *   their start: one created or changed is renamed to
 *   FILE.cordon-held-SESSION and the original (kept in memory, up to
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
 * commondir); a repository whose git directory is not called .git and
 * lacks HEAD, objects or refs at the start but gains them; keys of a
 * config a later git adds that run programs (the list); files other than
 * those listed (a Makefile, package.json scripts, .idea/: the human runs
 * these knowingly, or the IDE rewrites them all the time); a watched file
 * the human edited on the host during the session is reverted too (held
 * aside, never lost); a hard link to config made before the session.  A
 * workspace over the caps below is refused, not half protected.
 */
#ifndef CORDON_GIT_GUARD_H
#define CORDON_GIT_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The walk's caps: over either, git_guard_plan_session fails (-E2BIG, WHY names it). */
#define GIT_GUARD_MAX_ENTRIES 200000    /* directory entries read */
#define GIT_GUARD_MAX_REPOS   4096      /* git directories and .git files */
/*
 * A watched file bigger than this, or past the total kept (4096 roots of
 * 13 files could hold 53 GiB), is held aside at the end but not put back.
 */
#define GIT_GUARD_SAVE_MAX    (1u << 20)
#define GIT_GUARD_SAVE_TOTAL  (64u << 20)

/* The agent and editor files watched, relative to each root. */
#define GIT_GUARD_WATCHED \
	".claude/settings.json", ".claude/settings.local.json", ".mcp.json", \
	".vscode/tasks.json", ".vscode/settings.json", ".vscode/launch.json", ".envrc", \
	".devcontainer/devcontainer.json", ".devcontainer.json", ".gemini/settings.json", \
	".codex/config.toml", ".cursor/mcp.json", ".pre-commit-config.yaml"

struct git_guard_id {
	dev_t dev;
	ino_t ino;
};

struct git_guard_watch;

struct git_guard {
	size_t n_dirs;                  /* git directories pinned, parents first */
	char **dirs;
	bool *had_commondir;            /* GITDIR/commondir existed at the start */
	struct git_guard_id *dir_ids;   /* each of dirs, as it was */
	size_t n_ro;                    /* paths made read-only, after their pins */
	char **ro;
	/* What git_guard_end compares with. */
	char *workspace, *session;
	size_t n_known;                 /* .git files and linked worktrees' directories */
	struct git_guard_id *known;
	size_t n_roots;                 /* the workspace ("") and each repository's top, relative */
	char **roots;
	size_t n_watch;
	struct git_guard_watch *watch;
	size_t walked;                  /* directory entries the plan read */
};

/*
 * What to protect below WORKSPACE, and the state git_guard_end compares
 * with: every repository (walked without following a symlink, across
 * mount points: a human's git runs hooks on any filesystem; nothing
 * skipped by name; a .git directory or a bare repository is not walked
 * into, its modules/ is searched), and the watched files' contents.
 * SESSION names what is held aside at the end (NULL: "pidPID").  0, or
 * -errno with WHY (-E2BIG: a cap was reached; WHY names it: the session
 * must not start).  Changes nothing; git_guard_free after, either way.
 */
int git_guard_plan_session(const char *workspace, const char *session, struct git_guard *g,
			   char *why, size_t wlen);
/* The same, SESSION NULL and no WHY. */
int git_guard_plan(const char *workspace, struct git_guard *g);

/*
 * Carry out a plan in a new mount namespace of the calling thread (which
 * must be root and single-threaded as far as its filesystem state goes):
 * mounts there are slaves of the host's, each git directory is bound onto
 * itself, and each read-only path bound onto itself read-only.  0, or
 * -errno with WHY.
 */
int git_guard_apply(const struct git_guard *g, char *why, size_t wlen);

enum git_guard_what {
	GIT_GUARD_COMMONDIR,            /* planted in a git directory (makes config/hooks elsewhere) */
	GIT_GUARD_HOOK,                 /* of a repository made during the session, or its hooks, a symlink */
	GIT_GUARD_CONFIG,               /* such a repository's config: DETAIL, the keys dropped */
	GIT_GUARD_GITFILE,              /* a new .git file pointing at no git directory found */
	GIT_GUARD_FILE_CREATED,         /* a watched file (or its directory, as a symlink) */
	GIT_GUARD_FILE_CHANGED,
	GIT_GUARD_FILE_DELETED,
	GIT_GUARD_INCOMPLETE,           /* the walk stopped (a cap, an error): DETAIL says where */
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
 * session's cgroup is destroyed): the holding described above, each thing
 * reported through REPORT.  Returns how many were reported, or -errno
 * when the workspace itself cannot be opened.  Run as root, in any mount
 * namespace (held files stay in the directory or mount they were in).
 */
int git_guard_end(const struct git_guard *g,
		  void (*report)(void *ctx, const struct git_guard_held *h), void *ctx);

/* The same, reporting PATH and MOVED_TO only (the first API; git_guard_end says more). */
int git_guard_check(const struct git_guard *g, void (*report)(void *ctx, const char *path,
							      const char *moved_to),
		    void *ctx);

void git_guard_free(struct git_guard *g);

#endif /* CORDON_GIT_GUARD_H */
