/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Paths as the task means them, for the handlers of its exec, connect and
 * open (task_path.c).  Read-only: it answers nothing and records nothing.
 */
#ifndef CORDON_TASK_PATH_H
#define CORDON_TASK_PATH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Where descriptor FD of task PID points (AT_FDCWD: its working directory); -errno. */
int task_path_fd(pid_t pid, int fd, char *out, size_t len);

/*
 * PATH as task PID means it: its /proc/self, /proc/thread-self, /dev/fd
 * and /dev/std* become /proc/PID/...; 0, or -ENAMETOOLONG (see task_path.c).
 */
int task_path_own(pid_t pid, const char *path, char *out, size_t len);

/*
 * CANON is not there, and the agent (UID, GID and its N_GROUPS
 * supplementary GROUPS) could see that itself (every directory on the way
 * that exists is searchable by it): it may be answered ENOENT unrecorded
 * (see task_path.c).
 */
bool task_path_absent(const char *canon, uid_t uid, gid_t gid, const gid_t *groups, int n_groups);

/*
 * ABS (an absolute path as the task means it, task_path_own) canonical in
 * CANON, with the stat and statfs of the regular file it names, in one
 * open: 0.  -errno when that cannot be done (absent, not a regular file:
 * -EINVAL, a name the kernel cannot give): the caller
 * canonicalises the slow way (pol_canon_path), which handles those.
 * KEEP, if not NULL, receives on success the open file for the caller to
 * close: after its answer, so the task does not wait for the close.
 */
struct stat;
struct statfs;
int task_path_canon_file(const char *abs, char *canon, size_t len, struct stat *st,
			 struct statfs *sf, int *keep);

/*
 * PATH (relative to BASE when not absolute) canonical in CANON, every
 * symlink resolved, as pol_canon_path gives it: 0 or -errno.  A name that
 * is no symlink (absent, or any other kind of file) in a directory that
 * exists takes one open of that directory (task_path.c), the rest
 * pol_canon_path itself.
 */
int task_path_canon(const char *path, const char *base, char *canon, size_t len);

#endif /* CORDON_TASK_PATH_H */
