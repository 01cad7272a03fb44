// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <termios.h>
#include <time.h>
#include "util.h"

static int verbose;

void log_set_verbose(int level)
{
	verbose = level;
}

int log_verbose(void)
{
	return verbose;
}

/* The end of a line on F: "\r\n" on a terminal in raw mode (no output processing). */
static const char *line_end(FILE *f)
{
	struct termios t;

	return isatty(fileno(f)) && tcgetattr(fileno(f), &t) == 0 &&
	       (!(t.c_oflag & OPOST) || !(t.c_oflag & ONLCR)) ? "\r\n" : "\n";
}

void log_msg(const char *level, const char *fmt, ...)
{
	char line[8192];
	int saved = errno, n;
	va_list ap;

	n = snprintf(line, sizeof(line), "cordon: %s%s", level ?: "", level ? ": " : "");
	va_start(ap, fmt);
	errno = saved;
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	/*
	 * The line in one call (stderr is unbuffered: one write), so that the
	 * threads that log at once (the view's, the supervisor's) do not
	 * interleave; never a lock held across calls, which a fork by another
	 * thread would leave held in its child.
	 */
	fprintf(stderr, "%s%s", line, line_end(stderr));
	errno = saved;
}

void log_newline(FILE *f)
{
	fputs(line_end(f), f);
}

void hex_encode(const unsigned char *b, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = 0;
}

int read_file(const char *path, char **out, size_t max)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	ssize_t n;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	buf = malloc(max + 1);
	if (!buf)
		return -ENOMEM;
	while (len < max) {
		n = read(fd, buf + len, max - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = 0;
	*out = TAKE_PTR(buf);
	return (int)len;
}

int write_file(const char *path, const char *s)
{
	_cleanup_close_ int fd = -1;
	size_t len = strlen(s);
	ssize_t n;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, s, len);
	if (n < 0)
		return -errno;
	if ((size_t)n != len)
		return -EIO;
	return 0;
}

int fd_send(int sock, const void *buf, size_t len, int fd)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} c = { 0 };
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (fd >= 0) {
		m.msg_control = c.b;
		m.msg_controllen = sizeof(c.b);
		c.h.cmsg_level = SOL_SOCKET;
		c.h.cmsg_type = SCM_RIGHTS;
		c.h.cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(&c.h), &fd, sizeof(int));
	}
	n = sendmsg(sock, &m, MSG_NOSIGNAL);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

ssize_t fd_recv(int sock, void *buf, size_t len, int *fd)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} c;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.b,
			    .msg_controllen = sizeof(c.b) };
	struct cmsghdr *h;
	ssize_t n;

	*fd = -1;
	n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
	if (n < 0)
		return -errno;
	h = CMSG_FIRSTHDR(&m);
	if (h && h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS &&
	    h->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(fd, CMSG_DATA(h), sizeof(int));
	return n;
}

int write_all(int fd, const void *buf, size_t n)
{
	const char *b = buf;

	while (n) {
		ssize_t w = write(fd, b, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		if (w == 0)
			return -EIO;
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

/*
 * Who is on the other end, for the checks that admit a peer by its
 * cgroup (approve.c, supervisor.c's event subscribers, the MCP proxy).
 * Attack: a peer connects, exits, and its pid is taken by another process
 * before the cgroup is read; a session task would then be judged by a host
 * process's cgroup.  Where the kernel hands out the peer as a pidfd
 * (SO_PEERPIDFD, Linux 6.5), the process is pinned from connect time, and
 * the cgroup read is the peer's only if that process is still alive after
 * the read (a live process's pid cannot have been reused); a peer gone by
 * then is refused (-ESRCH).  What this cannot close: on an older kernel
 * there is only the pid, and the reuse race stays open there; the floors
 * keep session tasks from reaching these sockets in the first place.
 */
int peer_read(int fd, struct ucred *cr, char **cg)
{
	socklen_t l = sizeof(*cr);
	char p[64];
	int pidfd = -1, r;

	*cg = NULL;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, cr, &l) < 0)
		return -errno;
	l = sizeof(pidfd);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &l) < 0) {
		/* Only a kernel without the option is let through on the pid alone. */
		if (errno != ENOPROTOOPT)
			return errno == ESRCH ? -ESRCH : -errno;
		pidfd = -1;
	}
	snprintf(p, sizeof(p), "/proc/%d/cgroup", (int)cr->pid);
	r = read_file(p, cg, 65536);
	if (r >= 0)
		r = 0;
	/*
	 * Still there after the read (its pid not yet another's)?  Signal 0
	 * asks; EPERM is an answer too, from a caller that may not signal it
	 * (the MCP proxy once it gave root up): the process exists.
	 */
	if (!r && pidfd >= 0 && syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0 &&
	    errno != EPERM)
		r = -ESRCH;
	if (pidfd >= 0)
		close(pidfd);
	if (r < 0) {
		free(*cg);
		*cg = NULL;
	}
	return r;
}

int unix_listen(const char *path, unsigned owner)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(a.sun_path))
		return -ENAMETOOLONG;
	strcpy(a.sun_path, path);
	(void)unlink(path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || chmod(path, 0600) < 0 ||
	    chown(path, (uid_t)owner, (gid_t)-1) < 0 || listen(fd, 16) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

/* A child of spawn_shared(): what it runs, and the mask it restores. */
struct shared_child {
	int (*fn)(void *);
	void *arg;
	sigset_t mask;
};

/*
 * The child, in the parent's memory until it execs or exits: no handler
 * of the parent's may run here, on this stack in its memory, so every
 * caught signal goes back to its default (this process has a table of its
 * own: no CLONE_SIGHAND), then the parent's mask is restored and FN runs.
 */
static int shared_trampoline(void *p)
{
	const struct shared_child *c = p;
	struct sigaction dfl = { .sa_handler = SIG_DFL };

	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction old;

		if (sig != SIGKILL && sig != SIGSTOP && sigaction(sig, NULL, &old) == 0 &&
		    old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN)
			(void)sigaction(sig, &dfl, NULL);
	}
	if (sigprocmask(SIG_SETMASK, &c->mask, NULL) < 0)
		_exit(125);
	_exit(c->fn(c->arg));
}

pid_t spawn_shared(int (*fn)(void *), void *arg, size_t stack_size)
{
	struct shared_child c = { .fn = fn, .arg = arg };
	sigset_t all;
	void *stack;
	pid_t pid;
	int e = 0;

	stack = mmap(NULL, stack_size, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED)
		return -errno;
	/*
	 * Every signal blocked while the child shares this memory (the parent
	 * waits in the clone until the child's exec or exit: CLONE_VFORK).
	 */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &c.mask);
	pid = clone(shared_trampoline, (char *)stack + stack_size,
		    CLONE_VM | CLONE_VFORK | SIGCHLD, &c);
	if (pid < 0)
		e = -errno;
	pthread_sigmask(SIG_SETMASK, &c.mask, NULL);
	munmap(stack, stack_size);
	return pid < 0 ? e : pid;
}

/* What the helper's child needs (spawn_helper). */
struct spawn_req {
	const char *path;
	const char *const *argv;
	const int *hi;
	int n;
	pid_t parent;
};

/* The helper's child (spawn_shared): system calls only, then the exec; 125 on any failure. */
static int spawn_child(void *arg)
{
	const struct spawn_req *q = arg;
	int nul;

	/*
	 * It dies with this process.  A parent that died before the prctl
	 * sent no signal: the child sees itself reparented, and goes too.
	 */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != q->parent)
		return 125;
	(void)setpgid(0, 0);
	nul = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (nul < 0 || dup2(nul, 0) < 0 || dup2(nul, 1) < 0)
		return 125;
	for (int i = 0; i < q->n; i++)
		if (dup2(q->hi[i], 3 + i) < 0)
			return 125;
	execv(q->path, (char *const *)q->argv);
	return 125;
}

pid_t spawn_helper(const char *path, const char *const argv[], const int *fds, int n)
{
	struct spawn_req q = { .path = path, .argv = argv, .n = n, .parent = getpid() };
	int hi[8], e = 0;
	pid_t pid;

	if (n > (int)ARRAY_SIZE(hi))
		return -E2BIG;
	/* Above every target number first, so that no dup2 clobbers a source. */
	for (int i = 0; i < n; i++) {
		hi[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 3 + n);
		if (hi[i] < 0) {
			e = -errno;
			while (i--)
				close(hi[i]);
			return e;
		}
	}
	q.hi = hi;
	/*
	 * Not fork(): a fork copies this process's page tables and makes every
	 * page it writes afterwards a copy-on-write fault (about 25 us each on
	 * a virtualised host: a fork of the supervisor cost more CPU than the
	 * helper's own start).
	 */
	pid = spawn_shared(spawn_child, &q, 64 * 1024);
	for (int i = 0; i < n; i++)
		close(hi[i]);
	return pid;
}

int mkdir_p(const char *path, mode_t mode)
{
	char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

uint64_t mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

unsigned unix_peer(unsigned ino)
{
	struct {
		struct nlmsghdr nh;
		struct unix_diag_req r;
	} q = {
		.nh = { .nlmsg_len = sizeof(q), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST },
		.r = { .sdiag_family = AF_UNIX, .udiag_ino = ino, .udiag_show = UDIAG_SHOW_PEER,
		       .udiag_cookie = { ~0U, ~0U } },
	};
	char buf[1024];
	unsigned peer = 0;
	ssize_t n;
	int nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);

	if (nl < 0)
		return 0;
	if (send(nl, &q, sizeof(q), 0) == (ssize_t)sizeof(q) &&
	    (n = recv(nl, buf, sizeof(buf), 0)) > 0) {
		struct nlmsghdr *h = (struct nlmsghdr *)buf;

		if (NLMSG_OK(h, (size_t)n) && h->nlmsg_type == SOCK_DIAG_BY_FAMILY) {
			struct unix_diag_msg *m = NLMSG_DATA(h);
			struct rtattr *a = (struct rtattr *)(m + 1);
			int len = (int)h->nlmsg_len - NLMSG_LENGTH(sizeof(*m));

			for (; RTA_OK(a, len); a = RTA_NEXT(a, len))
				if (a->rta_type == UNIX_DIAG_PEER && RTA_PAYLOAD(a) >= sizeof(unsigned))
					memcpy(&peer, RTA_DATA(a), sizeof(peer));
		}
	}
	close(nl);
	return peer;
}

int caps_bound_to(uint64_t keep)
{
	for (int cap = 0; cap <= 63; cap++)
		if (!(keep & (1ull << cap)) && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 &&
		    errno != EINVAL)
			return -errno;
	return 0;
}

int caps_set(uint64_t keep)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {
		{ .permitted = (uint32_t)keep, .effective = (uint32_t)keep },
		{ .permitted = (uint32_t)(keep >> 32), .effective = (uint32_t)(keep >> 32) },
	};

	return syscall(SYS_capset, &hdr, data) < 0 ? -errno : 0;
}

uid_t helper_uid(void)
{
	return HELPER_UID_BASE + (uid_t)getpid();
}

int drop_identity(uid_t u, gid_t g, const gid_t *groups, size_t n, uint64_t keep,
		  pid_t parent)
{
	uid_t ru, eu, su;
	int r;

	if (u == 0)
		return -EINVAL;
	if ((r = caps_bound_to(keep)) < 0)
		return r;
	/* Without KEEPCAPS the move to a non-zero uid clears every capability. */
	if (keep && prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
		return -errno;
	if (setgroups(n, groups) < 0 || setresgid(g, g, g) < 0 || setresuid(u, u, u) < 0)
		return -errno;
	if (getresuid(&ru, &eu, &su) < 0 || ru != u || eu != u || su != u)
		return -EPERM;
	if ((r = caps_set(keep)) < 0)
		return r;
	if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0 || prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_DUMPABLE, 0) < 0)
		return -errno;
	return getppid() == parent ? 0 : -ESRCH;
}

int socket_holders_scan(uint64_t ino, pid_t self, pid_t *out, int cap)
{
	char want[64], p[320], l[64];
	DIR *proc = opendir("/proc");
	struct dirent *de;
	int n = 0;

	if (!proc)
		return -errno;
	snprintf(want, sizeof(want), "socket:[%llu]", (unsigned long long)ino);
	while ((de = readdir(proc))) {
		pid_t pid = (pid_t)strtol(de->d_name, NULL, 10);
		DIR *tasks;
		struct dirent *te;
		bool found = false;

		if (pid <= 0 || pid == self)
			continue;
		snprintf(p, sizeof(p), "/proc/%d/task", (int)pid);
		tasks = opendir(p);
		while (tasks && !found && (te = readdir(tasks))) {
			DIR *fds;
			struct dirent *fe;

			if (te->d_name[0] == '.')
				continue;
			snprintf(p, sizeof(p), "/proc/%d/task/%s/fd", (int)pid, te->d_name);
			fds = opendir(p);
			while (fds && !found && (fe = readdir(fds))) {
				ssize_t k;

				if (fe->d_name[0] == '.')
					continue;
				k = readlinkat(dirfd(fds), fe->d_name, l, sizeof(l) - 1);
				if (k > 0) {
					l[k] = '\0';
					found = !strcmp(l, want);
				}
			}
			if (fds)
				closedir(fds);
		}
		if (tasks)
			closedir(tasks);
		if (found) {
			if (n == cap) {
				n = -E2BIG;
				break;
			}
			out[n++] = pid;
		}
	}
	closedir(proc);
	return n;
}
