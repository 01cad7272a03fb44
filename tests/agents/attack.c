// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A rogue agent, one attack per invocation: `attack NAME [ARGS...]`.
 * Run inside `cordon run` by the host and VM tests (and the red-team
 * harness).  Prints one line, "contained: ERRNO-NAME (what)" or
 * "BREACH: what", and exits 0 when contained, 1 on a breach, 2 on misuse.
 * It only tries; it never decides what should happen (the tests do).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <poll.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/ptrace.h>
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

static int verdict(int rc, int err, const char *what)
{
	if (rc < 0) {
		printf("contained: %s (%s)\n", strerrorname_np(err) ?: "?", what);
		return 0;
	}
	printf("BREACH: %s\n", what);
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
 * DIR/ports as "TCP4PORT TCP6PORT UDPPORT ABSTRACTNAME".
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

static int serve(const char *dir)
{
	struct sockaddr_in a4 = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	struct sockaddr_un ab, pa;
	char name[64], path[4096], tmp[4096];
	const char *names[] = { "tcp4", "tcp6", "udp", "abstract", "path" };
	struct pollfd p[5];
	FILE *f;

	snprintf(name, sizeof(name), "cordon-test-abstract-%d", (int)getpid());
	snprintf(path, sizeof(path), "%s/host.sock", dir);
	p[0].fd = bound(AF_INET, SOCK_STREAM, &a4, sizeof(a4));
	p[1].fd = bound(AF_INET6, SOCK_STREAM, &a6, sizeof(a6));
	p[2].fd = bound(AF_INET, SOCK_DGRAM, &a4, sizeof(a4));
	p[3].fd = bound(AF_UNIX, SOCK_STREAM, &ab, unix_addr(name, true, &ab));
	p[4].fd = bound(AF_UNIX, SOCK_STREAM, &pa, unix_addr(path, false, &pa));
	if (p[0].fd < 0 || p[2].fd < 0 || p[3].fd < 0 || p[4].fd < 0 || chmod(path, 0777) < 0) {
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
	for (int i = 0; i < 5; i++)
		p[i].events = POLLIN;
	for (;;) {
		if (poll(p, 5, -1) < 0)
			continue;
		for (int i = 0; i < 5; i++) {
			char buf[64];

			if (!(p[i].revents & POLLIN))
				continue;
			if (i == 2) {
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
static char race_arg[8] = "status";
static struct sockaddr_in race_sa;
static volatile int race_stop;
static uint16_t race_ports[2];

static void *flip_argv(void *unused)
{
	(void)unused;
	while (!race_stop) {
		memcpy(race_arg, "push\0\0", 6);
		__asm__ volatile("" ::: "memory");     /* every store happens */
		for (volatile int k = 0; k < 500; k++)
			;
		memcpy(race_arg, "status", 6);
		__asm__ volatile("" ::: "memory");     /* every store happens */
		for (volatile int k = 0; k < 500; k++)
			;
	}
	return NULL;
}

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

static int argv_race(const char *git)
{
	char *av[] = { (char *)"git", race_arg, (char *)"origin", (char *)"main", NULL };
	pthread_t t;

	pthread_create(&t, NULL, flip_argv, NULL);
	for (int i = 0; i < 20; i++)    /* each try is judged on what was read then */
		execv(git, av);
	race_stop = 1;
	return verdict(-1, errno, "20 execs while another thread rewrites argv");
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

int main(int argc, char **argv)
{
	const char *a = argc > 1 ? argv[1] : "";
	const char *x = argc > 2 ? argv[2] : "";
	const char *y = argc > 3 ? argv[3] : "0";
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, r;

	setvbuf(stdout, NULL, _IONBF, 0);
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
	if (!strcmp(a, "connect") || !strcmp(a, "sendto")) {
		int fam = inet_addr_of(x, atoi(y), &ss, &len);
		bool tcp = !strcmp(a, "connect");

		if (fam < 0)
			return 2;
		fd = socket(fam, tcp ? SOCK_STREAM : SOCK_DGRAM, 0);
		if (fd < 0)
			return verdict(fd, errno, "socket");
		if (tcp)
			r = connect(fd, (struct sockaddr *)&ss, len);
		else
			r = (int)sendto(fd, "x", 1, 0, (struct sockaddr *)&ss, len);
		return verdict(r, errno, tcp ? "TCP connect" : "UDP sendto");
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
	if (!strcmp(a, "argv-race"))
		return argv_race(x);
	if (!strcmp(a, "open-race"))
		return open_race(x, y, argc > 4 ? atoi(argv[4]) : 200);
	if (!strcmp(a, "connect-race"))
		return connect_race(atoi(x), atoi(y), argc > 4 ? atoi(argv[4]) : 200);
	if (!strcmp(a, "exec")) {
		execv(x, argv + 2);
		return verdict(-1, errno, "exec");
	}
	fprintf(stderr, "usage: attack serve DIR | victim UID | su UID PROG [ARGS] |\n  connect|sendto HOST PORT | socket FAMILY TYPE [PROTO] |\n"
		"  unix PATH | unix-abstract NAME | ptrace PID | kill PID | read FILE |\n"
		"  write FILE | bpf PINNED | mount DIR | userns | module | tiocsti [TTY] |\n"
		"  mmap-exec FILE | exec FILE [ARGS] | argv-race GIT |\n"
		"  connect-race ALLOWED FORBIDDEN [N] | open-race A B [N] | sleep S\n");
	return 2;
}
