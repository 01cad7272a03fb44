/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The agent and editor files git_guard watches (git_guard.h says why):
 * their state at the plan (a hash, and the bytes when small enough to put
 * back) and at the end, read through descriptors without following a
 * symlink, as the directory component or the file: a symlink is W_OTHER
 * and never looked into.
 */
#ifndef CORDON_GIT_GUARD_WATCH_H
#define CORDON_GIT_GUARD_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

/*
 * A watched file bigger than this, or past the total kept (4096 roots of
 * 13 files could hold 53 GiB), is held aside at the end but not put back.
 */
#define GIT_GUARD_SAVE_MAX    (1u << 20)
#define GIT_GUARD_SAVE_TOTAL  (64u << 20)
/*
 * A watched file bigger than this is not read (an agent's sparse 20 GB
 * .envrc held the end for a minute, a 16 TB one would for hours): no
 * agent or editor configuration is that big, so it counts as changed.
 */
#define GIT_GUARD_HASH_MAX    (16u << 20)

/* The agent and editor files watched, relative to each root. */
#define GIT_GUARD_WATCHED \
	".claude/settings.json", ".claude/settings.local.json", ".mcp.json", \
	".vscode/tasks.json", ".vscode/settings.json", ".vscode/launch.json", ".envrc", \
	".devcontainer/devcontainer.json", ".devcontainer.json", ".gemini/settings.json", \
	".codex/config.toml", ".cursor/mcp.json", ".pre-commit-config.yaml"

enum { W_ABSENT, W_REG, W_DIR, W_OTHER };

struct git_guard_wstate {
	int dir, leaf;                  /* the directory component (W_REG: none), the file */
	struct stat dst, st;
	unsigned char sha[32];
	unsigned char *data;            /* the whole file, when small enough (the plan only) */
	bool big;                       /* over GIT_GUARD_HASH_MAX: not read, never the same */
};

/* REL (relative to the workspace WSFD) opened without following any symlink; fd or -errno. */
int git_guard_watch_open_root(int wsfd, const char *rel);

/* The directory component of REL ("" for none) into COMP; returns the last one. */
const char *git_guard_watch_split(const char *rel, char *comp, size_t clen);

/*
 * The state of ROOTFD/REL into *S, never through a symlink; *PFD gets the
 * file's directory (-1 when it is not one); with KEEP, a file up to
 * GIT_GUARD_SAVE_MAX is kept whole (S->data, the caller frees it) while
 * *KEEP lasts.  0 or -errno (-EAGAIN: it changed under the read).
 */
int git_guard_watch_probe(int rootfd, const char *rel, struct git_guard_wstate *s, size_t *keep,
			  int *pfd);

/* The same object (device, inode, type and mode)? */
bool git_guard_watch_same_obj(const struct stat *a, const struct stat *b);

/* The same file at the leaf (content and mode for a file, the object otherwise)? */
bool git_guard_watch_same_leaf(const struct git_guard_wstate *a,
			       const struct git_guard_wstate *b);

/* P's kept bytes back at DFD/LEAF (made O_EXCL), with its owner and mode; 0 or -errno. */
int git_guard_watch_restore(int dfd, const char *leaf, const struct git_guard_wstate *p);

#endif /* CORDON_GIT_GUARD_WATCH_H */
