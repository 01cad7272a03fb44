// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Words to the agent (tell): what a human decided, written on the
 * stderr of the process whose request it was, beside the errno it gets.
 *
 * Attack: a write by root into a descriptor the agent chose is a confused
 * deputy (a file the agent may only read, reopened for writing; a device
 * or a kernel file that checks the writer's credentials at write time; a
 * named FIFO of another user's; a socket whose peer outside the session
 * believes the credentials a message carries).  Only three kinds are
 * written, each without blocking, so a full pipe or a terminal nobody reads
 * costs the message, never the supervisor:
 *  - an anonymous pipe (pipefs) or a pseudo-terminal's slave, open for
 *    writing in the caller, reopened through the very object checked (an
 *    O_PATH handle, compared again after the open);
 *  - a connected Unix stream socket whose peer is held by a process of the
 *    caller's own cgroup (the session): the pair a Node or Bun parent makes
 *    for a child's stdio (libuv's pipes are socketpairs).  It is the
 *    caller's own open socket (pidfd_getfd), not a reopening, written with
 *    MSG_DONTWAIT; a peer in the session is the agent's own process, which
 *    trusts nothing of the message's credentials that it could not have
 *    sent itself;
 *  - a regular file the caller owns, open for writing, on a disk or memory
 *    filesystem (ext4, xfs, btrfs, tmpfs, overlay: none that judges a
 *    write by the writer's credentials, as procfs, sysfs or a FUSE server
 *    may): where Claude Code's shell tool sends a command's output.  It is
 *    the caller's own open file (pidfd_getfd), written at its offset as
 *    the caller's next write would be: nothing it could not write itself.
 * What it cannot close: nothing here makes the agent read the words.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/major.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "tell.h"
#include "util.h"

/* Does a process of the session's cgroup hold socket inode `ino`? */
static bool held_in_cgroup(const char *cgroup, unsigned ino)
{
	char path[4200], want[64], link[64];
	bool found = false;
	FILE *f;
	int pp;

	if (!ino)
		return false;
	snprintf(path, sizeof(path), "%s/cgroup.procs", cgroup);
	f = fopen(path, "re");
	if (!f)
		return false;
	snprintf(want, sizeof(want), "socket:[%u]", ino);
	while (!found && fscanf(f, "%d", &pp) == 1) {
		char dir[64];
		struct dirent *e;
		DIR *d;

		snprintf(dir, sizeof(dir), "/proc/%d/fd", pp);
		d = opendir(dir);
		while (d && !found && (e = readdir(d))) {
			char fdp[384];
			ssize_t n;

			snprintf(fdp, sizeof(fdp), "%s/%s", dir, e->d_name);
			n = readlink(fdp, link, sizeof(link) - 1);
			found = n > 0 && (link[n] = 0, !strcmp(link, want));
		}
		if (d)
			closedir(d);
	}
	fclose(f);
	return found;
}

/* The caller's stderr, when it is a Unix stream socket to the session: its copy, or -1. */
static int session_socket(const char *cgroup, pid_t pid)
{
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0), fd, type = 0, dom = 0;
	socklen_t l = sizeof(int);
	struct stat st;

	if (pfd < 0)
		return -1;
	fd = (int)syscall(SYS_pidfd_getfd, pfd, 2, 0);
	close(pfd);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode) ||
	    getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &l) < 0 || dom != AF_UNIX ||
	    (l = sizeof(int), getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l) < 0) ||
	    type != SOCK_STREAM || !held_in_cgroup(cgroup, unix_peer((unsigned)st.st_ino))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The caller's stderr, when it is a regular file of its own open for writing: its copy, or -1. */
static int own_file(pid_t pid)
{
	static const long kinds[] = { EXT4_SUPER_MAGIC, XFS_SUPER_MAGIC, BTRFS_SUPER_MAGIC,
				      TMPFS_MAGIC, OVERLAYFS_SUPER_MAGIC };
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0), fd, fl;
	struct stat st, ps;
	struct statfs fs;
	char p[32];
	bool ok = false;

	snprintf(p, sizeof(p), "/proc/%d", (int)pid);
	if (pfd < 0 || stat(p, &ps) < 0) {
		if (pfd >= 0)
			close(pfd);
		return -1;
	}
	fd = (int)syscall(SYS_pidfd_getfd, pfd, 2, 0);
	close(pfd);
	if (fd < 0)
		return -1;
	fl = fcntl(fd, F_GETFL);
	if (fstat(fd, &st) == 0 && fstatfs(fd, &fs) == 0 && S_ISREG(st.st_mode) &&
	    st.st_uid == ps.st_uid && fl >= 0 &&
	    ((fl & O_ACCMODE) == O_WRONLY || (fl & O_ACCMODE) == O_RDWR))
		for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]) && !ok; k++)
			ok = (long)fs.f_type == kinds[k];
	if (!ok) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The caller's stderr reopened, when it is a pipe or a pty slave open for writing: or -1. */
static int pipe_or_pty(pid_t pid)
{
	char p[64], line[256];
	struct stat a, b;
	struct statfs fs;
	unsigned flags = 0;
	int h, fd = -1;
	FILE *f;

	snprintf(p, sizeof(p), "/proc/%d/fdinfo/2", (int)pid);
	f = fopen(p, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "flags: %o", &flags) == 1)
			break;
	fclose(f);
	if ((flags & O_ACCMODE) != O_WRONLY && (flags & O_ACCMODE) != O_RDWR)
		return -1;
	snprintf(p, sizeof(p), "/proc/%d/fd/2", (int)pid);
	h = open(p, O_PATH | O_CLOEXEC);
	if (h < 0)
		return -1;
	if (fstat(h, &a) < 0 || fstatfs(h, &fs) < 0)
		goto out;
	if (!(S_ISFIFO(a.st_mode) && fs.f_type == PIPEFS_MAGIC) &&
	    !(S_ISCHR(a.st_mode) && major(a.st_rdev) >= UNIX98_PTY_SLAVE_MAJOR &&
	      major(a.st_rdev) < UNIX98_PTY_SLAVE_MAJOR + UNIX98_PTY_MAJOR_COUNT))
		goto out;
	snprintf(p, sizeof(p), "/proc/self/fd/%d", h);
	fd = open(p, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd >= 0 && (fstat(fd, &b) < 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino)) {
		close(fd);
		fd = -1;
	}
out:
	close(h);
	return fd;
}

void tell(const char *cgroup, pid_t pid, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;
	bool sock = false;
	int fd, n;

	fd = pipe_or_pty(pid);
	if (fd < 0) {
		fd = session_socket(cgroup, pid);
		sock = fd >= 0;
	}
	if (fd < 0)
		fd = own_file(pid);
	if (fd < 0)
		return;
	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n > 0) {
		size_t len = (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1;

		if (sock)
			(void)!send(fd, msg, len, MSG_DONTWAIT | MSG_NOSIGNAL);
		else
			(void)!write(fd, msg, len);
	}
	close(fd);
}
