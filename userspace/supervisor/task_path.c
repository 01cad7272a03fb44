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

#include "policy.h"
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
 * The name of what FD holds, as the kernel gives it (d_path), into OUT: 0,
 * or -ENOENT when it has no usable name (unlinked since: " (deleted)"; not
 * an absolute path), or another -errno.
 */
static int fd_name(int fd, char *out, size_t len)
{
	static const char deleted[] = " (deleted)";
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, out, len - 1);
	if (n < 0)
		return -errno;
	if ((size_t)n >= len - 1)
		return -ENAMETOOLONG;
	out[n] = '\0';
	if (out[0] != '/' || ((size_t)n >= sizeof(deleted) - 1 &&
			      !strcmp(out + n - (sizeof(deleted) - 1), deleted)))
		return -ENOENT;
	return 0;
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
	int fd, r = 0;

	if (abs[0] != '/')
		return -EINVAL;
	fd = open(abs, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, st) < 0 || fstatfs(fd, sf) < 0)
		r = -errno;
	else if (!S_ISREG(st->st_mode))
		r = -EINVAL;
	else
		r = fd_name(fd, canon, len);
	if (r == 0 && keep)
		*keep = fd;     /* the caller's to close, after its answer */
	else
		close(fd);
	return r;
}

/*
 * A name that is no symlink (absent, or any other kind of file) in a
 * directory that exists, canonical: the directory resolved by the kernel
 * in one open, as above, and the name appended, which is what
 * pol_canon_path gives for it.  That one asks realpath of the whole path (a
 * readlink per component, failing at an absent name) and then of the
 * directory again: some twenty system calls for every directory of PATH an
 * execvp tries before it finds its program, each a miss the agent waits
 * for (48-67 us a miss here, against 1.8 us bare).
 */
static int canon_name(const char *abs, char *canon, size_t len)
{
	const char *slash = strrchr(abs, '/'), *name = slash ? slash + 1 : NULL;
	char dir[PATH_MAX];
	struct stat st;
	size_t dl, nl;
	int fd, r;

	if (abs[0] != '/' || !*name || !strcmp(name, ".") || !strcmp(name, ".."))
		return -EINVAL;
	dl = (size_t)(slash - abs);
	if (dl >= sizeof(dir))
		return -ENAMETOOLONG;
	memcpy(dir, abs, dl);
	dir[dl] = '\0';
	fd = open(dl ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		r = S_ISLNK(st.st_mode) ? -ELOOP : 0;  /* where a link leads: pol_canon_path's */
	else
		r = errno == ENOENT ? 0 : -errno;
	if (r == 0)
		r = fd_name(fd, canon, len);
	close(fd);
	if (r < 0)
		return r;
	dl = strlen(canon);
	nl = strlen(name);
	if (dl == 1)
		dl = 0;         /* the root: "/" and the name */
	if (dl + 1 + nl >= len)
		return -ENAMETOOLONG;
	canon[dl] = '/';
	memcpy(canon + dl + 1, name, nl + 1);
	return 0;
}

int task_path_canon(const char *path, const char *base, char *canon, size_t len)
{
	char abs[PATH_MAX];
	int n = path[0] == '/' ? snprintf(abs, sizeof(abs), "%s", path) :
		snprintf(abs, sizeof(abs), "%s/%s", base ? base : "", path);

	if (n > 0 && (size_t)n < sizeof(abs) && canon_name(abs, canon, len) == 0)
		return 0;
	return pol_canon_path(path, base, canon, len);
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
