// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * seccomp user notification plumbing (see notify.h for the contract and the
 * rule every caller follows: a decision about the task's memory is only
 * CONTINUEd when the kernel floor judges the same object again; otherwise
 * the supervisor performs the call itself on copies).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <linux/filter.h>
#include <sys/prctl.h>
#include "filters.h"
#include "seccomp_filters.h"
#include <linux/seccomp.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "notify.h"
#include "util.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif
#ifndef SYS_kcmp
#define SYS_kcmp 312
#endif
#define KCMP_VM_ 1

/*
 * The notification filter for `what`, prebuilt (loader/filters.c holds its
 * rules; build/seccomp_filters.h the programs).  The caller has set
 * no_new_privs; so does this, as libseccomp did.
 */
int notify_install(unsigned what)
{
	struct sock_fprog prog;
	long fd;

	if (what >= FILTER_NOTIFY_VARIANTS)
		return -EINVAL;
	prog.len = cordon_notify_filters[what].len;
	prog.filter = (struct sock_filter *)cordon_notify_filters[what].prog;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	return fd < 0 ? -errno : (int)fd;
}

int notify_send_fd(int sock, int fd)
{
	return fd_send(sock, "F", 1, fd);
}

int notify_recv_fd(int sock)
{
	char byte;
	int fd;
	ssize_t n = fd_recv(sock, &byte, 1, &fd);

	if (n != 1 || fd < 0) {
		if (fd >= 0)
			close(fd);
		return n < 0 ? (int)n : -EPROTO;
	}
	return fd;
}

int notify_receive(int listener, struct notify_req *req)
{
	struct seccomp_notif n;

	memset(&n, 0, sizeof(n));
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &n) < 0)
		return -errno;
	req->id = n.id;
	req->pid = (pid_t)n.pid;
	req->nr = n.data.nr;
	memcpy(req->args, n.data.args, sizeof(req->args));
	return 0;
}

bool notify_valid(int listener, uint64_t id)
{
	return ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

int notify_continue(int listener, uint64_t id)
{
	struct seccomp_notif_resp r = { .id = id, .flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE };

	return ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &r) < 0 ? -errno : 0;
}

int notify_return(int listener, uint64_t id, int64_t val, int err)
{
	struct seccomp_notif_resp r = { .id = id, .val = val, .error = err ? -err : 0 };

	return ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &r) < 0 ? -errno : 0;
}

ssize_t notify_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
	char path[64];
	_cleanup_close_ int fd = -1;
	ssize_t n;

	/* One system call, no open: process_vm_readv (ptrace-attach rights, as root). */
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n >= 0 || (errno != ENOSYS && errno != EPERM))
		return n < 0 ? -errno : n;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = pread(fd, buf, len, (off_t)addr);
	return n < 0 ? -errno : n;
}

int notify_read_string(pid_t pid, uint64_t addr, char *buf, size_t len)
{
	size_t got = 0;

	/* Page by page: a string may end right before an unmapped page. */
	while (got < len) {
		size_t chunk = 4096 - ((addr + got) & 4095);
		ssize_t n;

		if (chunk > len - got)
			chunk = len - got;
		n = notify_read(pid, addr + got, buf + got, chunk);
		if (n <= 0)
			return n < 0 ? (int)n : -EFAULT;
		if (memchr(buf + got, '\0', (size_t)n))
			return 0;
		got += (size_t)n;
	}
	buf[len - 1] = '\0';
	return -ENAMETOOLONG;
}

/* Grow *buf (of *cap elements of size sz) to hold at least need: 0 or -ENOMEM. */
static int grow(void *buf, size_t *cap, size_t need, size_t sz)
{
	size_t c = *cap ? *cap : 64;
	void *p;

	while (c < need)
		c *= 2;
	if (c == *cap)
		return 0;
	p = realloc(*(void **)buf, c * sz);
	if (!p)
		return -ENOMEM;
	*(void **)buf = p;
	*cap = c;
	return 0;
}

/*
 * The first bytes of up to ARGV_BATCH strings in one system call (each
 * read stops at its page's end, so one unmapped page fails only its own
 * string, and process_vm_readv never splits an element: what it returns
 * is whole elements).  An exec's arguments are mostly short: a string
 * whose NUL is not among its first ARGV_PEEK bytes, or whose page could
 * not be read, is read again the slow way, which gives the error.  Every
 * read of the task's memory is racy whichever way it is made; the exec
 * recheck compares what the kernel received with what was judged.
 */
#define ARGV_BATCH 32
#define ARGV_PEEK 256

struct argv_peek {
	char b[ARGV_BATCH][ARGV_PEEK];
	size_t len[ARGV_BATCH];
	size_t n;               /* elements read whole */
};

static void peek_strings(pid_t pid, const uint64_t *addr, size_t n, struct argv_peek *pk)
{
	struct iovec local[ARGV_BATCH], remote[ARGV_BATCH];
	size_t left;
	ssize_t got;

	for (size_t i = 0; i < n; i++) {
		size_t l = 4096 - (addr[i] & 4095);

		pk->len[i] = l < ARGV_PEEK ? l : ARGV_PEEK;
		local[i] = (struct iovec){ .iov_base = pk->b[i], .iov_len = pk->len[i] };
		remote[i] = (struct iovec){ .iov_base = (void *)(uintptr_t)addr[i],
					    .iov_len = pk->len[i] };
	}
	got = process_vm_readv(pid, local, n, remote, n, 0);
	pk->n = 0;
	for (left = got > 0 ? (size_t)got : 0; pk->n < n && left >= pk->len[pk->n]; pk->n++)
		left -= pk->len[pk->n];
}

/* The pointer array's first page as already read (notify_read_exec), or none. */
struct argv_first {
	const uint64_t *p;
	size_t n;               /* pointers in it */
};

static int read_argv(pid_t pid, uint64_t addr, size_t max_args, size_t max_bytes,
		     const struct argv_first *first, char ***out)
{
	_cleanup_free_ uint64_t *ptrs = NULL;
	_cleanup_free_ char *strs = NULL;
	struct argv_peek pk = { .n = 0 };
	size_t n = 0, used = 0, ncap = 0, scap = 0;
	char **v;
	int r;

	/*
	 * The pointer array, a page at a time (a short read at the end of a
	 * mapping is fine).  Both buffers grow with what the task passes:
	 * the limits are the kernel's own, an argv of a few words costs
	 * little.
	 */
	for (bool done = !addr; !done;) {
		uint64_t chunk[512];
		const uint64_t *c = chunk;
		size_t want = 4096 - ((addr + n * 8) & 4095);
		ssize_t got;

		if (first && !n && first->n) {
			c = first->p;
			got = (ssize_t)(first->n * 8);
		} else {
			got = notify_read(pid, addr + n * 8, chunk, want < 8 ? 8 : want);
		}
		if (got < 8)
			return -EFAULT;
		for (size_t i = 0; i < (size_t)got / 8; i++) {
			if (!c[i]) {
				done = true;
				break;
			}
			if (n == max_args)
				return -E2BIG;
			if (grow(&ptrs, &ncap, n + 1, sizeof(*ptrs)) < 0)
				return -ENOMEM;
			ptrs[n++] = c[i];
		}
	}
	for (size_t i = 0; i < n; i++) {
		size_t room, k = i % ARGV_BATCH;
		const char *nul;

		if (used >= max_bytes)
			return -E2BIG;
		if (!k)
			peek_strings(pid, ptrs + i, n - i < ARGV_BATCH ? n - i : ARGV_BATCH, &pk);
		if (k < pk.n && (nul = memchr(pk.b[k], '\0', pk.len[k]))) {
			size_t l = (size_t)(nul - pk.b[k]) + 1;

			if (used + l > max_bytes)
				return -E2BIG;
			if (grow(&strs, &scap, used + l, 1) < 0)
				return -ENOMEM;
			memcpy(strs + used, pk.b[k], l);
			ptrs[i] = used;
			used += l;
			continue;
		}
		/* Room for a page's worth more (or what is left), grown as a string needs. */
		for (;;) {
			room = max_bytes - used < 4096 ? max_bytes - used : 4096;
			if (scap - used < room && grow(&strs, &scap, used + room, 1) < 0)
				return -ENOMEM;
			room = scap - used < max_bytes - used ? scap - used : max_bytes - used;
			r = notify_read_string(pid, ptrs[i], strs + used, room);
			if (r != -ENAMETOOLONG || used + room >= max_bytes)
				break;
			if (grow(&strs, &scap, scap + 1, 1) < 0)
				return -ENOMEM;
		}
		if (r < 0)
			return r == -ENAMETOOLONG ? -E2BIG : r;
		ptrs[i] = used;
		used += strlen(strs + used) + 1;
	}
	v = malloc((n + 1) * sizeof(char *) + used);
	if (!v)
		return -ENOMEM;
	if (used)
		memcpy(v + n + 1, strs, used);
	for (size_t i = 0; i < n; i++)
		v[i] = (char *)(v + n + 1) + ptrs[i];
	v[n] = NULL;
	*out = v;
	return (int)n;
}

int notify_read_argv(pid_t pid, uint64_t addr, size_t max_args, size_t max_bytes, char ***out)
{
	return read_argv(pid, addr, max_args, max_bytes, NULL, out);
}

int notify_read_exec(pid_t pid, uint64_t path_addr, char *path, size_t path_len,
		     uint64_t argv_addr, size_t max_args, size_t max_bytes, char ***argv,
		     bool *path_read)
{
	uint64_t ptrs[512];
	size_t pl = 4096 - (path_addr & 4095), al = 4096 - (argv_addr & 4095);
	struct iovec local[2], remote[2];
	struct argv_first first = { ptrs, 0 };
	ssize_t got;
	int r;

	/*
	 * The path's page and the pointer array's in one system call; where
	 * that falls short (an unmapped page, a path longer than its page, no
	 * process_vm_readv), each is read on its own, which gives the error.
	 */
	if (pl > path_len)
		pl = path_len;
	local[0] = (struct iovec){ .iov_base = path, .iov_len = pl };
	remote[0] = (struct iovec){ .iov_base = (void *)(uintptr_t)path_addr, .iov_len = pl };
	local[1] = (struct iovec){ .iov_base = ptrs, .iov_len = al };
	remote[1] = (struct iovec){ .iov_base = (void *)(uintptr_t)argv_addr, .iov_len = al };
	got = argv_addr ? process_vm_readv(pid, local, 2, remote, 2, 0) : -1;
	*path_read = false;
	if (got == (ssize_t)(pl + al) && memchr(path, '\0', pl)) {
		first.n = al / 8;
	} else {
		r = notify_read_string(pid, path_addr, path, path_len);
		if (r < 0)
			return r;
	}
	*path_read = true;
	return read_argv(pid, argv_addr, max_args, max_bytes, first.n ? &first : NULL, argv);
}

static int status_field(pid_t pid, const char *field, long *out)
{
	char path[64], *s = NULL, *p;
	size_t fl = strlen(field);
	int r;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	r = read_file(path, &s, 1 << 16);
	if (r < 0)
		return r;
	for (p = s; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (!strncmp(p, field, fl) && p[fl] == ':') {
			*out = strtol(p + fl + 1, NULL, 10);
			free(s);
			return 0;
		}
	}
	free(s);
	return -ENOENT;
}

/*
 * Is pid blocked inside vfork(), or clone()/clone3() with CLONE_VFORK?  Such
 * a task cannot return to user space (and so cannot touch the memory it
 * shares) until its child execs or exits.  /proc/PID/syscall names the call
 * a blocked task is in, with its arguments.
 */
static bool in_vfork(pid_t pid)
{
	char path[64], *s = NULL;
	unsigned long long nr, a0;
	bool yes = false;

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	if (read_file(path, &s, 512) < 0)
		return false;
	if (sscanf(s, "%llu %llx", &nr, &a0) == 2) {
		if (nr == SYS_vfork)
			yes = true;
		else if (nr == SYS_clone)
			yes = (a0 & CLONE_VFORK) != 0;
		else if (nr == SYS_clone3) {
			uint64_t flags;

			/* The parent is the only other sharer (checked by the
			 * caller) and is blocked: the struct cannot change. */
			yes = notify_read((pid_t)pid, a0, &flags, 8) == 8 &&
			      (flags & CLONE_VFORK);
		}
	}
	free(s);
	return yes;
}

int notify_memory_shared(pid_t pid, const char *cgroup)
{
	char path[4096 + 32];
	_cleanup_fclose_ FILE *f = NULL;
	long threads, ppid = 0;
	int sharers = 0, vfork_parent = 0, other;
	int r = status_field(pid, "Threads", &threads);

	if (r < 0)
		return r;
	if (threads != 1)
		return 1;
	r = status_field(pid, "PPid", &ppid);
	if (r < 0)
		return r;
	snprintf(path, sizeof(path), "%s/cgroup.procs", cgroup);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fscanf(f, "%d", &other) == 1) {
		long t;

		if (other == pid)
			continue;
		if (syscall(SYS_kcmp, pid, other, KCMP_VM_, 0, 0) != 0)
			continue;       /* a different mm, or gone */
		sharers++;
		if (other == ppid && status_field(other, "Threads", &t) == 0 && t == 1 &&
		    in_vfork(other))
			vfork_parent = 1;
	}
	return sharers - vfork_parent > 0;
}

int notify_addfd_send(int listener, uint64_t id, int fd, bool cloexec)
{
	struct seccomp_notif_addfd a = {
		.id = id,
		.flags = SECCOMP_ADDFD_FLAG_SEND,
		.srcfd = (uint32_t)fd,
		.newfd_flags = cloexec ? O_CLOEXEC : 0,
	};
	int r = ioctl(listener, SECCOMP_IOCTL_NOTIF_ADDFD, &a);

	return r < 0 ? -errno : r;
}

int notify_getfd(pid_t pid, int fd)
{
	_cleanup_close_ int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	int copy;

	if (pidfd < 0)
		return -errno;
	copy = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	if (copy < 0)
		return -errno;
	(void)fcntl(copy, F_SETFD, FD_CLOEXEC);
	return copy;
}
