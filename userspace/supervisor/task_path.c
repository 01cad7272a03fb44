// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Paths as the task means them (task_path.h): its working directory and
 * descriptors read from /proc, its own /proc/self and /dev/fd, and whether
 * a path is absent in a way the agent could see for itself.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include "task_path.h"
#include "util.h"

int task_path_fd(pid_t pid, int fd, char *out, size_t len)
{
	char p[64];
	ssize_t n;

	if (fd == AT_FDCWD)
		snprintf(p, sizeof(p), "/proc/%d/cwd", (int)pid);
	else
		snprintf(p, sizeof(p), "/proc/%d/fd/%d", (int)pid, fd);
	n = readlink(p, out, len - 1);
	if (n < 0)
		return -errno;
	out[n] = '\0';
	return 0;
}

/*
 * A path as the task means it: /proc/self, /proc/thread-self and /dev/fd
 * (and /dev/stdin, stdout, stderr) name the task's own process, not the
 * supervisor's, so they become /proc/TID/... before they are canonicalised
 * here (busybox sh runs its applets as /proc/self/exe; programs re-exec
 * themselves so).  Without this the binary judged was cordon's own, and
 * the exec recheck, comparing inodes, killed the exec.  What remains: a
 * symlink elsewhere that points into /proc/self is still resolved as the
 * supervisor; the recheck then kills the exec (fails closed).
 */
int task_path_own(pid_t pid, const char *path, char *out, size_t len)
{
	static const struct {
		const char *from, *to;
	} own[] = {
		{ "/proc/self", "" }, { "/proc/thread-self", "" }, { "/dev/fd", "/fd" },
		{ "/dev/stdin", "/fd/0" }, { "/dev/stdout", "/fd/1" }, { "/dev/stderr", "/fd/2" },
	};
	int n;

	for (size_t i = 0; i < ARRAY_SIZE(own); i++) {
		size_t l = strlen(own[i].from);

		if (strncmp(path, own[i].from, l) || (path[l] && path[l] != '/'))
			continue;
		n = snprintf(out, len, "/proc/%d%s%s", (int)pid, own[i].to, path + l);
		return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
	}
	n = snprintf(out, len, "%s", path);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/*
 * An exec's binary, resolved by the kernel once (O_PATH: nothing is
 * opened for reading, no device or FIFO is touched) instead of readlink
 * component by component (glibc's realpath: one system call a component),
 * and its stat taken from the same open file, so the canonical name, the
 * inode the exec recheck compares and "it exists" are of one object.  The
 * name is the kernel's (d_path): a file unlinked since (" (deleted)"), or
 * one outside the supervisor's root, has no usable name here, and is left
 * to the slow way, which gives what it always gave.
 */
int task_path_canon_file(const char *abs, char *canon, size_t len, struct stat *st,
			 struct statfs *sf, int *keep)
{
	static const char deleted[] = " (deleted)";
	char link[64];
	ssize_t n;
	int fd, r = 0;

	if (abs[0] != '/')
		return -EINVAL;
	fd = open(abs, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	if (fstat(fd, st) < 0 || fstatfs(fd, sf) < 0)
		r = -errno;
	else if (!S_ISREG(st->st_mode))
		r = -ENOENT;
	else if ((n = readlink(link, canon, len - 1)) < 0)
		r = -errno;
	else if ((size_t)n >= len - 1)
		r = -ENAMETOOLONG;
	else {
		canon[n] = '\0';
		if (canon[0] != '/' || ((size_t)n >= sizeof(deleted) - 1 &&
					!strcmp(canon + n - (sizeof(deleted) - 1), deleted)))
			r = -ENOENT;
	}
	if (r == 0 && keep)
		*keep = fd;     /* the caller's to close, after its answer */
	else
		close(fd);
	return r;
}

/*
 * CANON is not there, and the agent could learn that itself with stat(2):
 * every directory on the way that exists is searchable by its uid or
 * groups (mode bits; a root agent has no DAC override either).  Only then
 * is an exec or connect of it answered ENOENT unrecorded (below): beyond
 * a directory the agent may not search (/root), its answer would tell
 * what DAC hides, so such a call is judged and recorded as ever.
 */
bool task_path_absent(const char *canon, uid_t uid, gid_t gid, const gid_t *groups, int n_groups)
{
	char dir[PATH_MAX];
	struct stat st;
	char *slash;

	if (lstat(canon, &st) == 0 || (errno != ENOENT && errno != ENOTDIR))
		return false;
	snprintf(dir, sizeof(dir), "%s", canon);
	while ((slash = strrchr(dir, '/'))) {
		bool in_group = false;
		mode_t x;

		slash[slash == dir] = '\0';    /* "/a" -> "/" */
		if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) {
			for (int i = 0; i < n_groups && !in_group; i++)
				in_group = groups[i] == st.st_gid;
			in_group |= gid == st.st_gid;
			x = st.st_uid == uid ? S_IXUSR : in_group ? S_IXGRP : S_IXOTH;
			if (!(st.st_mode & x))
				return false;
		}
		if (!strcmp(dir, "/"))
			break;
	}
	return true;
}
