// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Inbound traffic to a session's sockets on a real kernel (this host and the
 * VM): the network floor's cgroup_skb/ingress and cgroup/setsockopt
 * programs (bpf/net.bpf.c).
 *
 * A peer in a network namespace of its own, joined to this one by a veth
 * pair (198.18.X.1 here, 198.18.X.2 there, and fd00:c0d0:X::1/2), runs a
 * TCP server that greets and a UDP echo server, which the session's policy
 * allows.  Sockets are made, and listen() / sendto / setsockopt called, by
 * a task moved into the session cgroup; the socket is then handed to this
 * process (SCM_RIGHTS), which probes it: the kernel judges a packet by the
 * socket's cgroup, fixed when the socket was made.  Every refusal has its
 * negative control: the same socket made by the host is reachable.
 *
 * Skips (77) where root, cgroup2, cgroup-bpf, or veth with iproute2's `ip`
 * are missing.  CORDON_IP names the `ip` to use (the VM's busybox has an
 * applet of that name that cannot make a veth pair, and its shell runs the
 * applet for a bare "ip").
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "../tap.h"
#include "cgroup.h"
#include "instance.h"
#include "net.h"
#include "policy.h"
#include "util.h"

#include "pins.h"

#define TCP_GREET 7001          /* the peer's greeting server: allowed */
#define UDP_ECHO  7002          /* the peer's echo server: allowed */
#define ESCALATED 7003          /* the peer's greeting server too: no rule allows it */
#define DISCARD   9             /* a peer port no rule allows */

static char host4[16], peer4[16], host6[48], peer6[48];
static char session_cg[PATH_MAX + 64];
static uint64_t session_id;
static pid_t peer_pid = -1;
static int peer_ns = -1;
static bool have6;
static struct net *net;

/* --- the peer's namespace -------------------------------------------------- */

/* Run `ip ARGS` (fmt) through the shell; 0 or -1. */
static int ip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int ip(const char *fmt, ...)
{
	const char *cmd = getenv("CORDON_IP");
	char args[448], line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	snprintf(line, sizeof(line), "%s %s", cmd && *cmd ? cmd : "ip", args);
	return system(line) == 0 ? 0 : -1;
}

static int listen_any(int family, int type, const char *addr, uint16_t port)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t len;
	int fd = socket(family, type | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0)
		return -1;
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (family == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)&ss;

		s->sin_family = AF_INET;
		s->sin_port = htons(port);
		(void)inet_pton(AF_INET, addr, &s->sin_addr);
		len = sizeof(*s);
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)&ss;

		s->sin6_family = AF_INET6;
		s->sin6_port = htons(port);
		(void)inet_pton(AF_INET6, addr, &s->sin6_addr);
		len = sizeof(*s);
	}
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || (type == SOCK_STREAM && listen(fd, 16) < 0)) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * The peer: a new network namespace, its end of the veth configured once
 * the link is there (go), then the servers until killed.  ready gets "1"
 * once the servers listen, "0" if anything failed.
 */
static void peer_main(int go, int ready)
{
	char ifname[16], b;
	int ts, us, es;

	if (unshare(CLONE_NEWNET) < 0 || write(ready, "n", 1) != 1 || read(go, &b, 1) != 1)
		_exit(1);
	snprintf(ifname, sizeof(ifname), "cdp%d", (int)getppid());
	if (ip("link set lo up") < 0 || ip("addr add %s/24 dev %s", peer4, ifname) < 0 ||
	    ip("link set %s up", ifname) < 0) {
		(void)!write(ready, "0", 1);
		_exit(1);
	}
	if (have6 && ip("-6 addr add %s/64 dev %s nodad 2>/dev/null", peer6, ifname) < 0)
		have6 = false;
	ts = listen_any(AF_INET, SOCK_STREAM, peer4, TCP_GREET);
	us = listen_any(AF_INET, SOCK_DGRAM, peer4, UDP_ECHO);
	es = listen_any(AF_INET, SOCK_STREAM, peer4, ESCALATED);
	if (ts < 0 || us < 0 || es < 0 || write(ready, have6 ? "6" : "1", 1) != 1)
		_exit(1);
	for (;;) {
		struct pollfd p[3] = { { ts, POLLIN, 0 }, { us, POLLIN, 0 }, { es, POLLIN, 0 } };
		struct sockaddr_storage from;
		socklen_t fl = sizeof(from);
		char buf[64];
		ssize_t n;
		int c;

		if (poll(p, 3, -1) < 0)
			continue;
		for (int i = 0; i < 3; i += 2)
			if (p[i].revents & POLLIN && (c = accept(p[i].fd, NULL, NULL)) >= 0) {
				(void)!write(c, "hello", 5);
				close(c);
			}
		if (p[1].revents & POLLIN &&
		    (n = recvfrom(us, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl)) > 0)
			(void)sendto(us, buf, (size_t)n, 0, (struct sockaddr *)&from, fl);
	}
}

static void peer_stop(void)
{
	if (peer_pid > 0) {
		kill(peer_pid, SIGKILL);
		(void)waitpid(peer_pid, NULL, 0);
		peer_pid = -1;       /* its namespace, and the veth pair with it, go */
	}
}

/* 0, or a message for the skip. */
static const char *peer_start(void)
{
	int go[2], ready[2];
	char b = 0, ns[64];

	if (pipe(go) < 0 || pipe(ready) < 0)
		return "pipe";
	peer_pid = fork();
	if (peer_pid == 0) {
		close(go[1]);
		close(ready[0]);
		peer_main(go[0], ready[1]);
	}
	close(go[0]);
	close(ready[1]);
	if (peer_pid < 0 || read(ready[0], &b, 1) != 1 || b != 'n')
		return "a network namespace (unshare CLONE_NEWNET)";
	if (ip("link add cdh%d type veth peer name cdp%d netns %d", (int)getpid(), (int)getpid(),
	       (int)peer_pid) < 0 ||
	    ip("addr add %s/24 dev cdh%d", host4, (int)getpid()) < 0 ||
	    ip("link set cdh%d up", (int)getpid()) < 0)
		return "veth (iproute2's ip link add type veth)";
	if (have6 && ip("-6 addr add %s/64 dev cdh%d nodad 2>/dev/null", host6, (int)getpid()) < 0)
		have6 = false;
	if (write(go[1], "g", 1) != 1 || read(ready[0], &b, 1) != 1 || b == '0')
		return "the peer's veth end";
	have6 = have6 && b == '6';
	close(go[1]);
	close(ready[0]);
	snprintf(ns, sizeof(ns), "/proc/%d/ns/net", (int)peer_pid);
	peer_ns = open(ns, O_RDONLY | O_CLOEXEC);
	return peer_ns < 0 ? "the peer's namespace" : NULL;
}

/* --- probes from the peer ---------------------------------------------------- */

static socklen_t mkaddr(const char *addr, uint16_t port, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (strchr(addr, ':')) {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)ss;

		s->sin6_family = AF_INET6;
		s->sin6_port = htons(port);
		(void)inet_pton(AF_INET6, addr, &s->sin6_addr);
		return sizeof(*s);
	} else {
		struct sockaddr_in *s = (struct sockaddr_in *)ss;

		s->sin_family = AF_INET;
		s->sin_port = htons(port);
		(void)inet_pton(AF_INET, addr, &s->sin_addr);
		return sizeof(*s);
	}
}

/* A TCP connect that gives up after ms: 0, or the errno (ETIMEDOUT: no answer). */
static int connect_within(const char *addr, uint16_t port, int ms)
{
	struct sockaddr_storage ss;
	socklen_t len = mkaddr(addr, port, &ss), el = sizeof(int);
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), e = 0, r;
	struct pollfd p;

	if (fd < 0)
		return 200;
	r = connect(fd, (struct sockaddr *)&ss, len);
	if (r < 0 && errno != EINPROGRESS) {
		e = errno;
		close(fd);
		return e;
	}
	p = (struct pollfd){ fd, POLLOUT, 0 };
	if (r < 0 && poll(&p, 1, ms) <= 0)
		e = ETIMEDOUT;
	else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) < 0)
		e = errno;
	close(fd);
	return e;
}

static int send_one(const char *addr, uint16_t port, uint16_t from_port)
{
	struct sockaddr_storage ss;
	socklen_t len = mkaddr(addr, port, &ss);
	int fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return 200;
	if (from_port) {
		struct sockaddr_storage me;
		socklen_t ml = mkaddr(ss.ss_family == AF_INET ? peer4 : peer6, from_port, &me);

		if (bind(fd, (struct sockaddr *)&me, ml) < 0)
			return 201;
	}
	if (sendto(fd, "x", 1, 0, (struct sockaddr *)&ss, len) < 0)
		return errno;
	close(fd);
	return 0;
}

enum probe { TCP_CONNECT, UDP_SEND };

/* From the peer's namespace: 0, an errno, or 250+ for a setup failure. */
static int from_peer(enum probe what, const char *addr, uint16_t port)
{
	int st;
	pid_t c = fork();

	if (c == 0) {
		if (setns(peer_ns, CLONE_NEWNET) < 0)
			_exit(250);
		_exit(what == TCP_CONNECT ? connect_within(addr, port, 1500) : send_one(addr, port, 0));
	}
	if (c < 0 || waitpid(c, &st, 0) < 0 || !WIFEXITED(st))
		return 254;
	return WEXITSTATUS(st);
}

/* --- sockets made in the session --------------------------------------------- */

/*
 * fn runs in a task of the session (as root: the floor does not care) and
 * returns 0 or an errno; a socket it leaves in *fd comes back here.
 * Returns fn's answer (250+: setup failure), *out the socket or -1.
 */
static int in_session(int (*fn)(int *fd, const void *arg), const void *arg, int *out)
{
	int sp[2], st, r = 255;
	pid_t c;

	*out = -1;
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sp) < 0)
		return 255;
	c = fork();
	if (c == 0) {
		char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
		struct iovec iov;
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
		int fd = -1;

		close(sp[0]);
		r = cg_attach_pid(session_cg, getpid()) < 0 ? 251 : fn(&fd, arg);
		iov = (struct iovec){ &r, sizeof(r) };
		if (fd >= 0) {
			struct cmsghdr *cm;

			m.msg_control = cbuf;
			m.msg_controllen = sizeof(cbuf);
			cm = CMSG_FIRSTHDR(&m);
			cm->cmsg_level = SOL_SOCKET;
			cm->cmsg_type = SCM_RIGHTS;
			cm->cmsg_len = CMSG_LEN(sizeof(int));
			memcpy(CMSG_DATA(cm), &fd, sizeof(int));
		}
		_exit(sendmsg(sp[1], &m, 0) < 0 ? 252 : 0);
	}
	close(sp[1]);
	if (c > 0) {
		char cbuf[CMSG_SPACE(sizeof(int))];
		struct iovec iov = { &r, sizeof(r) };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
				    .msg_controllen = sizeof(cbuf) };
		struct cmsghdr *cm;

		if (recvmsg(sp[0], &m, MSG_CMSG_CLOEXEC) != sizeof(r))
			r = 253;
		cm = CMSG_FIRSTHDR(&m);
		if (cm && cm->cmsg_type == SCM_RIGHTS)
			memcpy(out, CMSG_DATA(cm), sizeof(int));
		if (waitpid(c, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			r = 254;
	}
	close(sp[0]);
	return r;
}

/* The host's own: the same function, run here. */
static int in_host(int (*fn)(int *fd, const void *arg), const void *arg, int *out)
{
	*out = -1;
	return fn(out, arg);
}

static int local_port(int fd, char *addr, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0)
		return -1;
	if (ss.ss_family == AF_INET) {
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, addr, (socklen_t)len);
		return ntohs(((struct sockaddr_in *)&ss)->sin_port);
	}
	inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, addr, (socklen_t)len);
	return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
}

/* listen() on a socket never bound: the kernel autobinds it, no bind hook. */
static int listen_unbound(int *fd, const void *arg)
{
	*fd = socket(*(const int *)arg, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*fd < 0)
		return 200;
	return listen(*fd, 16) < 0 ? errno : 0;
}

/* A UDP sendto to a peer port no rule allows: refused, after the autobind. */
static int udp_refused_send(int *fd, const void *arg)
{
	struct sockaddr_storage ss;
	socklen_t len = mkaddr(peer4, DISCARD, &ss);

	(void)arg;
	*fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (*fd < 0)
		return 200;
	return sendto(*fd, "x", 1, 0, (struct sockaddr *)&ss, len) < 0 ? errno : 0;
}

/* Connect s to the peer's port, then its greeting must arrive: 0 or an errno. */
static int greeted(int s, uint16_t port)
{
	struct sockaddr_storage ss;
	socklen_t len = mkaddr(peer4, port, &ss);
	struct pollfd p = { s, POLLIN, 0 };
	char b[8] = "";

	if (connect(s, (struct sockaddr *)&ss, len) < 0)
		return errno;
	if (poll(&p, 1, 2000) <= 0 || recv(s, b, sizeof(b) - 1, 0) != 5 || strcmp(b, "hello"))
		return ETIMEDOUT;
	return 0;
}

/* The greeting server at *arg, connected by the session. */
static int tcp_greeted(int *fd, const void *arg)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), r;

	*fd = -1;
	if (s < 0)
		return 200;
	r = greeted(s, *(const uint16_t *)arg);
	close(s);
	return r;
}

/* A TCP socket of the session, left unconnected for the host to connect. */
static int tcp_socket(int *fd, const void *arg)
{
	(void)arg;
	*fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	return *fd < 0 ? 200 : 0;
}

/* The allowed echo server, as a resolver's reply: sendto, then the echo. */
static int udp_allowed(int *fd, const void *arg)
{
	struct sockaddr_storage ss;
	socklen_t len = mkaddr(peer4, UDP_ECHO, &ss);
	struct pollfd p;
	char b[8] = "";
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	(void)arg;
	*fd = -1;
	if (s < 0)
		return 200;
	if (sendto(s, "ping", 4, 0, (struct sockaddr *)&ss, len) < 0)
		return errno;
	p = (struct pollfd){ s, POLLIN, 0 };
	if (poll(&p, 1, 2000) <= 0 || recv(s, b, sizeof(b) - 1, 0) != 4 || strcmp(b, "ping"))
		return ETIMEDOUT;
	close(s);
	return 0;
}

struct opt {
	int type, name, value;
	const char *bind_to;    /* then bind here (127.0.0.1), port in port */
	uint16_t port;
};

static const struct opt *opt(struct opt *o, int type, int name, int value, const char *bind_to,
			     uint16_t port)
{
	*o = (struct opt){ .type = type, .name = name, .value = value, .bind_to = bind_to,
			   .port = port };
	return o;
}

/* setsockopt, then (if asked) bind: the first errno. */
static int set_opt(int *fd, const void *arg)
{
	const struct opt *o = arg;
	struct sockaddr_storage ss;
	socklen_t len;
	int s = socket(AF_INET, o->type | SOCK_CLOEXEC, 0), r = 0;

	*fd = -1;
	if (s < 0)
		return 200;
	if (setsockopt(s, SOL_SOCKET, o->name, &o->value, sizeof(o->value)) < 0)
		r = errno;
	if (!r && o->bind_to) {
		len = mkaddr(o->bind_to, o->port, &ss);
		if (bind(s, (struct sockaddr *)&ss, len) < 0)
			r = errno;
	}
	close(s);
	return r;
}

/* --- checks ---------------------------------------------------------------- */

static bool readable(int fd, int ms)
{
	struct pollfd p = { fd, POLLIN, 0 };

	return poll(&p, 1, ms) > 0 && (p.revents & POLLIN);
}

static const char *err(int e)
{
	return e ? strerror(e) : "ok";
}

/* listen() without bind, in the session and in the host, over IPv4 and IPv6. */
static void listener_checks(int family)
{
	const char *fam = family == AF_INET ? "IPv4" : "IPv6 (dual-stack)";
	char a[INET6_ADDRSTRLEN] = "";
	int hfd, sfd, r, port, c;

	r = in_host(listen_unbound, &family, &hfd);
	port = hfd >= 0 ? local_port(hfd, a, sizeof(a)) : -1;
	tap_ok(r == 0 && port > 0, "host: %s listen() without bind autobinds to %s:%d", fam, a, port);
	r = from_peer(TCP_CONNECT, host4, (uint16_t)port);
	tap_ok(r == 0, "host: its listener is reachable from the peer over veth at %s "
	       "(negative control) (%s)", host4, err(r));
	if (have6) {
		if (family == AF_INET6) {
			r = from_peer(TCP_CONNECT, host6, (uint16_t)port);
			tap_ok(r == 0, "host: and at [%s] (%s)", host6, err(r));
		}
	}
	if (hfd >= 0)
		close(hfd);

	r = in_session(listen_unbound, &family, &sfd);
	port = sfd >= 0 ? local_port(sfd, a, sizeof(a)) : -1;
	tap_ok(r == 0 && port > 0 && (!strcmp(a, "0.0.0.0") || !strcmp(a, "::")),
	       "session: %s listen() without bind autobinds to the wildcard %s:%d (no bind hook)",
	       fam, a, port);
	if (sfd < 0)
		return;
	r = from_peer(TCP_CONNECT, host4, (uint16_t)port);
	tap_ok(r == ETIMEDOUT, "session: its listener is not reachable from the peer at %s "
	       "(got %s)", host4, err(r));
	if (have6 && family == AF_INET6) {
		r = from_peer(TCP_CONNECT, host6, (uint16_t)port);
		tap_ok(r == ETIMEDOUT, "session: nor at [%s] (got %s)", host6, err(r));
	}
	tap_ok(!readable(sfd, 0), "session: no connection from outside is queued on it");
	r = connect_within(family == AF_INET ? "127.0.0.1" : "::1", (uint16_t)port, 1500);
	c = r == 0 && readable(sfd, 1000) ? accept(sfd, NULL, NULL) : -1;
	tap_ok(r == 0 && c >= 0, "session: a loopback connection to it is accepted (%s)", err(r));
	if (c >= 0)
		close(c);
	r = connect_within(host4, (uint16_t)port, 1500);
	c = r == 0 && readable(sfd, 1000) ? accept(sfd, NULL, NULL) : -1;
	tap_ok(r == 0 && c >= 0, "session: so is one from this host to its veth address %s "
	       "(a local address: through lo) (%s)", host4, err(r));
	if (c >= 0)
		close(c);
	close(sfd);
}

/* An unconnected UDP socket autobound by a sendto the floor refused. */
static void udp_checks(void)
{
	char a[INET6_ADDRSTRLEN] = "";
	int hfd, sfd, r, port;

	r = in_host(udp_refused_send, NULL, &hfd);
	port = hfd >= 0 ? local_port(hfd, a, sizeof(a)) : -1;
	tap_ok(r == 0 && port > 0, "host: a UDP sendto to %s:%d autobinds to %s:%d", peer4, DISCARD,
	       a, port);
	r = from_peer(UDP_SEND, host4, (uint16_t)port);
	tap_ok(r == 0 && readable(hfd, 1000), "host: a datagram from the peer arrives "
	       "(negative control) (%s)", err(r));
	if (hfd >= 0)
		close(hfd);

	r = in_session(udp_refused_send, NULL, &sfd);
	port = sfd >= 0 ? local_port(sfd, a, sizeof(a)) : -1;
	tap_ok(r == EPERM && port > 0 && !strcmp(a, "0.0.0.0"),
	       "session: a UDP sendto to %s:%d is refused (%s), yet autobound the socket to %s:%d",
	       peer4, DISCARD, err(r), a, port);
	if (sfd < 0)
		return;
	r = from_peer(UDP_SEND, host4, (uint16_t)port);
	tap_ok(r == 0 && !readable(sfd, 1000), "session: a datagram the peer sends it does not "
	       "arrive (%s)", err(r));
	close(sfd);
}

static void sockopt_checks(void)
{
	struct opt o;
	int fd, r, h1, h2, one = 1;
	uint16_t port = 0;
	char a[INET6_ADDRSTRLEN];

	r = in_session(set_opt, opt(&o, SOCK_STREAM, SO_REUSEPORT, 1, NULL, 0), &fd);
	tap_ok(r == EPERM, "session: TCP SO_REUSEPORT on -> %s (got %s)", strerror(EPERM), err(r));
	r = in_session(set_opt, opt(&o, SOCK_DGRAM, SO_REUSEPORT, 1, NULL, 0), &fd);
	tap_ok(r == EPERM, "session: UDP SO_REUSEPORT on -> %s (got %s)", strerror(EPERM), err(r));
	r = in_session(set_opt, opt(&o, SOCK_DGRAM, SO_REUSEADDR, 1, NULL, 0), &fd);
	tap_ok(r == EPERM, "session: UDP SO_REUSEADDR on -> %s (got %s)", strerror(EPERM), err(r));
	r = in_session(set_opt, opt(&o, SOCK_STREAM, SO_REUSEADDR, 1, NULL, 0), &fd);
	tap_ok(r == 0, "session: TCP SO_REUSEADDR on -> ok (got %s)", err(r));
	r = in_session(set_opt, opt(&o, SOCK_STREAM, SO_REUSEPORT, 0, NULL, 0), &fd);
	tap_ok(r == 0, "session: TCP SO_REUSEPORT off -> ok (got %s)", err(r));
	r = in_session(set_opt, opt(&o, SOCK_STREAM, SO_KEEPALIVE, 1, NULL, 0), &fd);
	tap_ok(r == 0, "session: TCP SO_KEEPALIVE -> ok (got %s)", err(r));
	r = in_host(set_opt, opt(&o, SOCK_STREAM, SO_REUSEPORT, 1, NULL, 0), &fd);
	tap_ok(r == 0, "host: TCP SO_REUSEPORT on -> ok (got %s)", err(r));

	/* A host service's reuseport group on loopback, same uid: joinable, but not by the session. */
	h1 = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (h1 < 0 || setsockopt(h1, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0) {
		tap_ok(0, "a host reuseport listener: %m");
		return;
	}
	{
		struct sockaddr_storage ss;
		socklen_t len = mkaddr("127.0.0.1", 0, &ss);

		if (bind(h1, (struct sockaddr *)&ss, len) < 0 || listen(h1, 16) < 0) {
			tap_ok(0, "a host reuseport listener: %m");
			close(h1);
			return;
		}
	}
	port = (uint16_t)local_port(h1, a, sizeof(a));
	r = in_host(set_opt, opt(&o, SOCK_STREAM, SO_REUSEPORT, 1, "127.0.0.1", port), &h2);
	tap_ok(r == 0, "host: another socket joins the host listener's reuseport group at "
	       "127.0.0.1:%u (negative control) (%s)", port, err(r));
	r = in_session(set_opt, opt(&o, SOCK_STREAM, SO_REUSEPORT, 1, "127.0.0.1", port), &fd);
	tap_ok(r == EPERM, "session: joining it is refused at SO_REUSEPORT (got %s)", err(r));
	r = in_session(set_opt, opt(&o, SOCK_STREAM, SO_REUSEADDR, 1, "127.0.0.1", port), &fd);
	tap_ok(r == EADDRINUSE, "session: TCP SO_REUSEADDR does not bind its port (got %s)", err(r));
	close(h1);

	/* A host UDP service with SO_REUSEADDR: its port is not shared with the session. */
	h1 = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (h1 < 0 || setsockopt(h1, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0) {
		tap_ok(0, "a host UDP service: %m");
		return;
	}
	{
		struct sockaddr_storage ss;
		socklen_t len = mkaddr("127.0.0.1", 0, &ss);

		if (bind(h1, (struct sockaddr *)&ss, len) < 0) {
			tap_ok(0, "a host UDP service: %m");
			close(h1);
			return;
		}
	}
	port = (uint16_t)local_port(h1, a, sizeof(a));
	r = in_host(set_opt, opt(&o, SOCK_DGRAM, SO_REUSEADDR, 1, "127.0.0.1", port), &h2);
	tap_ok(r == 0, "host: another UDP socket shares the host service's port 127.0.0.1:%u with "
	       "SO_REUSEADDR (negative control) (%s)", port, err(r));
	r = in_session(set_opt, opt(&o, SOCK_DGRAM, SO_REUSEADDR, 1, "127.0.0.1", port), &fd);
	tap_ok(r == EPERM, "session: sharing it is refused at SO_REUSEADDR (got %s)", err(r));
	close(h1);
}

/* --- events ------------------------------------------------------------------ */

static size_t n_ingress, n_ingress_pid;

static int on_event(void *ctx, const struct cordon_net_event *e)
{
	(void)ctx;
	if (e->session == session_id && e->op == CORDON_NET_OP_INGRESS && e->decision == CORDON_DENY) {
		n_ingress++;
		n_ingress_pid += e->pid != 0 || e->comm[0];
	}
	return 0;
}

int main(void)
{
	char root[PATH_MAX], text[1024];
	struct pol_diags diags = {};
	struct pol_vars vars = {};
	struct policy *pol = NULL;
	uint64_t in0 = 0, in1 = 0, so0 = 0, so1 = 0;
	const char *why;
	bool was_pinned;
	int r, x = (int)(getpid() % 250) + 1;

	if (geteuid() != 0)
		tap_skip_all("needs root (cgroup-bpf attach, cgroup moves, veth)");
	if (cg_find_root(root, sizeof(root)) < 0)
		tap_skip_all("no cgroup2 hierarchy mounted");
	snprintf(host4, sizeof(host4), "198.18.%d.1", x);
	snprintf(peer4, sizeof(peer4), "198.18.%d.2", x);
	snprintf(host6, sizeof(host6), "fd00:c0d0:%x::1", x);
	snprintf(peer6, sizeof(peer6), "fd00:c0d0:%x::2", x);
	have6 = access("/proc/sys/net/ipv6", F_OK) == 0;
	was_pinned = access(NET_PIN("config"), F_OK) == 0;
	r = net_open(&net);
	if (r == -EPERM || r == -EOPNOTSUPP || r == -ENOSYS || r == -EACCES || r == -EINVAL)
		tap_skip_all("cgroup-bpf: the kernel refused to load or attach the network programs (%s)",
			     strerror(-r));
	if (r < 0) {
		tap_ok(0, "net_open: %s", strerror(-r));
		return tap_done();
	}
	why = peer_start();
	if (why) {
		peer_stop();
		net_close(net);
		if (!was_pinned)
			(void)net_unload();
		tap_skip_all("needs %s", why);
	}
	tap_diag("peer %s and [%s] (IPv6 %s), host %s and [%s]", peer4, peer6,
		 have6 ? "on" : "off", host4, host6);

	snprintf(text, sizeof(text),
		 "{ \"cordon_policy\": 1, \"rules\": ["
		 " { \"name\": \"peer\", \"decision\": \"allow\","
		 "   \"net\": { \"hosts\": [\"%s/32\"], \"ports\": [%d, %d], \"via\": \"direct\" } }"
		 "] }", peer4, TCP_GREET, UDP_ECHO);
	(void)pol_vars_defaults(&vars);
	r = pol_load_text(text, strlen(text), "net_inbound.json", &vars, &pol, &diags);
	snprintf(session_cg, sizeof(session_cg), "%s/%s/netin-%d", root, instance_cgroup_parent(),
		 (int)getpid());
	if (r < 0 || mkdir(session_cg, 0755) < 0 || cg_id(session_cg, &session_id) < 0 ||
	    net_session_add(net, session_id, pol, 0) < 0) {
		tap_ok(0, "a session with its policy: %m");
		goto out;
	}
	(void)net_counter(net, CORDON_NET_CNT_INGRESS_DROPS, &in0);
	(void)net_counter(net, CORDON_NET_CNT_SOCKOPT, &so0);
	while (net_poll(net, 0, on_event, NULL) > 0)
		;
	n_ingress = n_ingress_pid = 0;

	listener_checks(AF_INET);
	listener_checks(AF_INET6);
	udp_checks();
	{
		uint16_t port = TCP_GREET;
		int fd;

		r = in_session(tcp_greeted, &port, &fd);
		tap_ok(r == 0, "session: an allowed TCP connect to %s:%d gets the peer's replies (%s)",
		       peer4, TCP_GREET, err(r));
		port = ESCALATED;
		r = in_session(tcp_greeted, &port, &fd);
		tap_ok(r == EPERM, "session: a TCP connect to %s:%d (no rule) -> %s (got %s)", peer4,
		       ESCALATED, strerror(EPERM), err(r));
		/*
		 * An approved escalation: the supervisor connects a copy of the
		 * session's socket itself (userspace/supervisor/sup_held.c, emulate_connect).
		 */
		r = in_session(tcp_socket, NULL, &fd);
		r = r ?: greeted(fd, ESCALATED);
		tap_ok(r == 0, "session: its socket connected by the host to %s:%d, as the supervisor "
		       "does for an approved escalation, gets the peer's replies (%s)", peer4,
		       ESCALATED, err(r));
		if (fd >= 0)
			close(fd);
		r = in_session(udp_allowed, NULL, &fd);
		tap_ok(r == 0, "session: an allowed UDP exchange with %s:%d gets the reply, "
		       "as a resolver's would (%s)", peer4, UDP_ECHO, err(r));
	}
	sockopt_checks();

	(void)net_counter(net, CORDON_NET_CNT_INGRESS_DROPS, &in1);
	(void)net_counter(net, CORDON_NET_CNT_SOCKOPT, &so1);
	tap_ok(in1 > in0, "ingress drops counted (%llu)", (unsigned long long)(in1 - in0));
	tap_ok(so1 - so0 >= 5, "refused socket options counted (%llu)",
	       (unsigned long long)(so1 - so0));
	while (net_poll(net, 0, on_event, NULL) > 0)
		;
	tap_ok(n_ingress > 0 && n_ingress <= (in1 - in0), "ingress events, rate-bounded: %zu for "
	       "%llu drops", n_ingress, (unsigned long long)(in1 - in0));
	tap_ok(n_ingress_pid == 0, "they name no task (softirq: no pid, no comm)");
	r = net_session_del(net, session_id);
	tap_ok(r == 0, "net_session_del (%s)", err(-r));
out:
	peer_stop();
	(void)rmdir(session_cg);
	pol_free(pol);
	pol_vars_free(&vars);
	pol_diags_free(&diags);
	net_close(net);
	if (!was_pinned)
		(void)net_unload();
	return tap_done();
}
