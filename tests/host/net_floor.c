// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The network floor on a real kernel (this host and the VM): a session
 * cgroup registered with a small policy, loopback listeners on the host
 * side, and every operation run in a fresh forked task that moves itself
 * into the session and, for half the checks, drops to uid 1000.  Each
 * denial is asserted twice: the errno the task got and the event the
 * supervisor would read; an allowed operation is no event at all, except a
 * connect of the second session, which asked for allow events.  A stray
 * cgroup below cordon's parent (never registered) gets nothing; a host task
 * is never touched.
 *
 * Skips (77) where cgroup2 or cgroup-bpf attach is missing, or not root.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "../tap.h"
#include "cgroup.h"
#include "instance.h"
#include "net.h"
#include "policy.h"
#include "util.h"

#include "pins.h"

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef AF_ALG
#define AF_ALG 38
#endif
#ifndef NETLINK_SOCK_DIAG
#define NETLINK_SOCK_DIAG 4
#endif

#define AGENT_UID 1000
#define NOT_LOOPBACK "192.0.2.1"    /* TEST-NET-1: never a local address here */
#define CHILD_COMM "netfloor-task"

/* AUDITED: a session registered with CORDON_NET_SESSION_ALLOW_EVENTS. */
enum who { SESSION, STRAY, HOST, AUDITED };
static const char *const who_name[] = { "session", "stray cgroup", "host", "audited session" };

static char session_cg[PATH_MAX + 64], stray_cg[PATH_MAX + 64], audited_cg[PATH_MAX + 64];
static uint64_t session_id, stray_id, audited_id;
static uint16_t P1, P2, P3, P4, P5;

/* --- operations, run in the child; return 0 or an errno ------------------- */

enum kind { CONNECT, SENDTO, SOCKET, BIND, UNIX };

struct op {
	enum kind kind;
	int family;             /* AF_INET or AF_INET6: the socket's family */
	int type, proto;        /* SOCKET; CONNECT/SENDTO: type (0: stream / dgram) */
	const char *addr;
	uint16_t *port;
	bool freebind;          /* BIND: IP_FREEBIND, so the host could bind it */
	const char *want_name;  /* BIND: getsockname must show this address */
	bool then_stray;        /* made in the session, used from the stray cgroup */
	bool ping_ns;           /* SOCKET: in a new netns whose ping_group_range admits all */
	bool send;              /* UNIX: sendto (else connect) addr, a path or "@name" */
};

static int unix_op(int type, bool send, const char *addr);

static socklen_t mkaddr(int family, const char *addr, uint16_t port, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)ss;

		s->sin_family = AF_INET;
		s->sin_port = htons(port);
		(void)inet_pton(AF_INET, addr, &s->sin_addr);
		return sizeof(*s);
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)ss;

		s->sin6_family = AF_INET6;
		s->sin6_port = htons(port);
		(void)inet_pton(AF_INET6, addr, &s->sin6_addr);
		return sizeof(*s);
	}
}

static int run_op(const struct op *o)
{
	struct sockaddr_storage ss, got;
	socklen_t len, glen = sizeof(got);
	int fd, r = 0, one = 1;

	if (o->kind == UNIX)
		return unix_op(o->type, o->send, o->addr);
	if (o->kind == SOCKET) {
		if (o->ping_ns && (unshare(CLONE_NEWNET) < 0 ||
				   write_file("/proc/sys/net/ipv4/ping_group_range", "0 2147483647") < 0))
			return 204;
		fd = socket(o->family, o->type | SOCK_CLOEXEC, o->proto);
		if (fd < 0)
			return errno;
		close(fd);
		return 0;
	}
	fd = socket(o->family, (o->type ?: (o->kind == SENDTO ? SOCK_DGRAM : SOCK_STREAM)) |
		    SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 200;     /* could not even make the socket: not what is tested */
	if (o->then_stray && cg_attach_pid(stray_cg, getpid()) < 0)
		return 203;
	len = mkaddr(o->family, o->addr, o->port ? *o->port : 0, &ss);
	switch (o->kind) {
	case CONNECT:
		r = connect(fd, (struct sockaddr *)&ss, len) < 0 ? errno : 0;
		break;
	case SENDTO:
		r = sendto(fd, "x", 1, 0, (struct sockaddr *)&ss, len) < 0 ? errno : 0;
		break;
	case BIND:
		if (o->freebind)
			(void)setsockopt(fd, o->family == AF_INET ? IPPROTO_IP : IPPROTO_IPV6,
					 o->family == AF_INET ? IP_FREEBIND : IPV6_FREEBIND,
					 &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)&ss, len) < 0) {
			r = errno;
			break;
		}
		if (o->want_name) {
			char a[INET6_ADDRSTRLEN] = "";

			if (getsockname(fd, (struct sockaddr *)&got, &glen) < 0)
				r = 201;
			else if (got.ss_family == AF_INET)
				inet_ntop(AF_INET, &((struct sockaddr_in *)&got)->sin_addr, a, sizeof(a));
			else
				inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&got)->sin6_addr, a, sizeof(a));
			if (!r && strcmp(a, o->want_name))
				r = 202;        /* bound, but not where the floor should have put it */
		}
		break;
	case SOCKET:
	case UNIX:
		break;
	}
	close(fd);
	return r;
}

/*
 * Run o in a fresh task: into the cgroup (written while still root), then
 * to uid 1000 if asked.  Returns the task's errno, or 250+ for a setup
 * failure.  *pid gets the task's pid, to find its events.
 */
static int in_task(enum who w, uid_t uid, const struct op *o, int *pid)
{
	int st;
	pid_t c = fork();

	if (c < 0)
		return 255;
	if (c == 0) {
		const char *cg = w == SESSION ? session_cg : w == STRAY ? stray_cg :
				 w == AUDITED ? audited_cg : NULL;

		(void)prctl(PR_SET_NAME, CHILD_COMM);
		if (cg && cg_attach_pid(cg, getpid()) < 0)
			_exit(251);
		if (uid && (setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0))
			_exit(252);
		_exit(run_op(o));
	}
	*pid = c;
	if (waitpid(c, &st, 0) < 0 || !WIFEXITED(st))
		return 254;
	return WEXITSTATUS(st);
}

/* --- events ------------------------------------------------------------------ */

#define MAX_EVENTS 1024
static struct cordon_net_event events[MAX_EVENTS];
static size_t n_events;
static struct net *net;

static uint64_t ringed_id;      /* a session with a ring of its own */
static size_t ringed_in_shared; /* its events found in the shared ring: none */

static int on_event(void *ctx, const struct cordon_net_event *e)
{
	if (ringed_id && e->session == ringed_id)
		ringed_in_shared++;
	if (n_events < MAX_EVENTS &&
	    (e->session == session_id || e->session == stray_id || e->session == audited_id))
		events[n_events++] = *e;
	return 0;
}

static void drain(void)
{
	while (net_poll(net, 0, on_event, NULL) > 0)
		;
}

struct ring_count {
	int pid;
	size_t n, other;
};

static int on_ring_event(void *ctx, const struct cordon_net_event *e)
{
	struct ring_count *c = ctx;

	if ((int)e->pid == c->pid && e->session == ringed_id && e->op == CORDON_NET_OP_SENDMSG &&
	    e->decision == CORDON_DENY)
		c->n++;
	else
		c->other++;
	return 0;
}

/*
 * A session with a ring of its own (net_ring_open): a task of it sends n
 * refused datagrams; its events are in its ring or counted as its drops,
 * none in the shared ring; then net_session_del lets the ring's and the
 * drops' entries go.
 */
static void ring_checks(const char *parent, const struct policy *pol)
{
	enum { N = 3000 };
	char cg[PATH_MAX + 64];
	struct net_ring *g = NULL, *g2 = NULL;
	struct ring_count c = { 0 };
	uint64_t d = 0;
	int r, st;
	pid_t pid;

	snprintf(cg, sizeof(cg), "%s/nettest-ring-%d", parent, (int)getpid());
	if (mkdir(cg, 0755) < 0 || cg_id(cg, &ringed_id) < 0) {
		tap_ok(0, "the ringed session's cgroup: %m");
		return;
	}
	r = net_ring_open(net, ringed_id, &g);
	tap_ok(r == 0, "net_ring_open (%s)", r ? strerror(-r) : "ok");
	if (r < 0)
		goto out;
	tap_ok(net_ring_open(net, ringed_id, &g2) == -EEXIST, "a second ring for it is -EEXIST");
	tap_ok(net_ring_open(net, 0, &g2) == -EINVAL, "a ring for cgroup id 0 is -EINVAL");
	r = net_session_add(net, ringed_id, pol, 0);
	tap_ok(r == 0, "net_session_add after its ring (%s)", r ? strerror(-r) : "ok");
	drain();
	ringed_in_shared = 0;
	pid = fork();
	if (pid == 0) {
		struct sockaddr_storage ss;
		socklen_t len = mkaddr(AF_INET, "127.0.0.1", P2, &ss);
		int fd, refused = 0;

		if (cg_attach_pid(cg, getpid()) < 0 ||
		    setresgid(AGENT_UID, AGENT_UID, AGENT_UID) < 0 ||
		    setresuid(AGENT_UID, AGENT_UID, AGENT_UID) < 0)
			_exit(251);
		fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		for (int i = 0; fd >= 0 && i < N; i++)
			if (sendto(fd, "x", 1, 0, (struct sockaddr *)&ss, len) < 0 && errno == EPERM)
				refused++;
		_exit(refused == N ? 0 : 1);
	}
	c.pid = pid;
	tap_ok(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	       "its task's %d datagrams to 127.0.0.1:P2 (no rule) are all refused", N);
	while (net_ring_poll(g, 0, on_ring_event, &c) > 0)
		;
	drain();
	r = net_ring_drops(g, &d);
	tap_ok(r == 0 && c.n > 0 && d > 0 && c.n + d == N && !c.other,
	       "its ring holds %zu of them and counts %llu as its drops: %d in all (%zu others)",
	       c.n, (unsigned long long)d, N, c.other);
	tap_ok(ringed_in_shared == 0, "none of its events is in the shared ring (%zu)",
	       ringed_in_shared);
	r = net_session_del(net, ringed_id);
	tap_ok(r == 0, "net_session_del (%s)", r ? strerror(-r) : "ok");
	tap_ok(net_ring_drops(g, &d) == -ENOENT, "net_session_del lets the drops entry go");
	r = net_ring_open(net, ringed_id, &g2);
	tap_ok(r == 0, "and the ring's entry: a new ring for the id registers (%s)",
	       r ? strerror(-r) : "ok");
	net_ring_close(g2);
out:
	net_ring_close(g);
	(void)rmdir(cg);
	ringed_id = 0;
}

struct want_ev {
	uint32_t op;
	uint32_t decision;
	uint32_t reason;
	int family;             /* 4 or 6; 0 with op SOCKET: not checked */
	const char *addr;       /* as judged; NULL: not checked */
	uint16_t port;
	bool check_rule;
	uint32_t rule;
};

static bool find_event(int pid, uint64_t sid, uint32_t uid, const struct want_ev *w)
{
	uint8_t a[16] = {};

	if (w->addr)
		(void)inet_pton(w->family == 4 ? AF_INET : AF_INET6, w->addr, a);
	drain();
	for (size_t i = 0; i < n_events; i++) {
		const struct cordon_net_event *e = &events[i];

		if ((int)e->pid != pid || e->session != sid || e->uid != uid || e->op != w->op ||
		    e->decision != w->decision || e->reason != w->reason ||
		    strncmp(e->comm, CHILD_COMM, sizeof(e->comm)))
			continue;
		if (w->op != CORDON_NET_OP_SOCKET &&
		    ((int)e->family != w->family || e->port != w->port ||
		     (w->addr && memcmp(e->addr, a, w->family == 4 ? 4 : 16))))
			continue;
		if (w->check_rule && e->rule_id != w->rule)
			continue;
		return true;
	}
	return false;
}

static size_t events_of(int pid)
{
	size_t k = 0;

	drain();
	for (size_t i = 0; i < n_events; i++)
		k += (int)events[i].pid == pid;
	return k;
}

/*
 * One check: the errno, then the event.  Without one, an allowed operation
 * must have left no event at all: allow events are opt-in, and only for
 * connects.
 */
static void check(enum who w, uid_t uid, const char *name, const struct op *o, int want_err,
		  const struct want_ev *ev)
{
	int pid = 0, r = in_task(w, uid, o, &pid);
	uint64_t sid = o->then_stray ? stray_id : w == SESSION ? session_id :
		       w == AUDITED ? audited_id : stray_id;

	tap_ok(r == want_err, "%s uid %u: %s -> %s (got %s, %d)", who_name[w], uid, name,
	       want_err ? strerror(want_err) : "ok", r ? strerror(r) : "ok", r);
	if (ev && ev->op)
		tap_ok(find_event(pid, sid, uid, ev), "%s uid %u: %s: %s event (%s)", who_name[w],
		       uid, name, net_op_name(ev->op), net_reason_name(ev->reason));
	else if (want_err == 0 && w != HOST)
		tap_ok(events_of(pid) == 0, "%s uid %u: %s: no event", who_name[w], uid, name);
}

/* --- the unix gate (CORDON_NET_SESSION_UNIX_GATE) ------------------------ */

static char unix_path[108], unix_dpath[108], unix_abstract[64];

/* addr: a path, or "@name" for an abstract one.  In the child: 0 or errno. */
static int unix_op(int type, bool send, const char *addr)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	size_t n = strlen(addr);
	socklen_t l = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (addr[0] != '@'));
	int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0), r;

	memcpy(a.sun_path, addr, n);
	if (addr[0] == '@')
		a.sun_path[0] = '\0';
	if (fd < 0)
		return 200;
	r = send ? (int)sendto(fd, "x", 1, 0, (struct sockaddr *)&a, l) :
		   connect(fd, (struct sockaddr *)&a, l);
	r = r < 0 ? errno : 0;
	close(fd);
	return r;
}

static bool unix_event(int pid, uint64_t sid, uint32_t op, uint32_t reason, const char *path)
{
	drain();
	for (size_t i = 0; i < n_events; i++) {
		const struct cordon_net_event *e = &events[i];

		if ((int)e->pid == pid && e->session == sid && e->op == op &&
		    e->decision == CORDON_DENY && e->reason == reason && e->family == AF_UNIX &&
		    !strncmp(e->path, path, sizeof(e->path)))
			return true;
	}
	return false;
}

static void unix_check(enum who w, const char *name, int type, bool send, const char *addr,
		       int want, uint32_t ev_reason)
{
	int pid = 0, r = in_task(w, AGENT_UID, &(struct op){ .kind = UNIX, .type = type, .send = send,
							      .addr = addr }, &pid);
	uint64_t sid = w == SESSION ? session_id : w == AUDITED ? audited_id : stray_id;

	tap_ok(r == want, "%s: %s -> %s (got %s, %d)", who_name[w], name,
	       want ? strerror(want) : "ok", r ? strerror(r) : "ok", r);
	if (want == EPERM)
		tap_ok(unix_event(pid, sid, send ? CORDON_NET_OP_UNIX_SENDMSG : CORDON_NET_OP_UNIX_CONNECT,
				  ev_reason, addr),
		       "%s: %s: %s event naming the path (%s)", who_name[w], name,
		       net_op_name(send ? CORDON_NET_OP_UNIX_SENDMSG : CORDON_NET_OP_UNIX_CONNECT),
		       net_reason_name(ev_reason));
	else if (w != HOST)
		tap_ok(events_of(pid) == 0, "%s: %s: no event", who_name[w], name);
}

/*
 * The audited session is registered with the gate, the plain one without:
 * a gated session names no pathname socket itself (stream or datagram
 * connect, datagram with a destination), abstract names pass (Landlock's
 * scope judges those); an ungated session (the LSM posture's) and the host
 * are untouched; a stray cgroup is denied.
 */
static void unix_gate_checks(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int ls, ld, la;

	if (!net_unix_gate(net)) {
		printf("ok %d - the unix gate # SKIP cgroup connect_unix/sendmsg_unix refused "
		       "(Linux 6.7)\n", ++tap_n);
		return;
	}
	snprintf(unix_path, sizeof(unix_path), "/var/tmp/nettest-%d.sock", (int)getpid());
	snprintf(unix_dpath, sizeof(unix_dpath), "/var/tmp/nettest-%d.dgram", (int)getpid());
	snprintf(unix_abstract, sizeof(unix_abstract), "@nettest-%d", (int)getpid());
	ls = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ld = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	la = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", unix_path);
	if (bind(ls, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(ls, 64) < 0 ||
	    chmod(unix_path, 0777) < 0) {
		tap_ok(0, "unix listeners: %m");
		return;
	}
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", unix_dpath);
	if (bind(ld, (struct sockaddr *)&a, sizeof(a)) < 0 || chmod(unix_dpath, 0777) < 0) {
		tap_ok(0, "unix listeners: %m");
		return;
	}
	memset(a.sun_path, 0, sizeof(a.sun_path));
	memcpy(a.sun_path + 1, unix_abstract + 1, strlen(unix_abstract) - 1);
	if (bind(la, (struct sockaddr *)&a, (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
						       strlen(unix_abstract))) < 0 ||
	    listen(la, 64) < 0) {
		tap_ok(0, "unix listeners: %m");
		return;
	}
	unix_check(AUDITED, "gated: stream connect to a pathname socket", SOCK_STREAM, false,
		   unix_path, EPERM, CORDON_NET_REASON_UNIX_PATH);
	unix_check(AUDITED, "gated: datagram connect to a pathname socket", SOCK_DGRAM, false,
		   unix_dpath, EPERM, CORDON_NET_REASON_UNIX_PATH);
	unix_check(AUDITED, "gated: datagram sent to a pathname socket", SOCK_DGRAM, true,
		   unix_dpath, EPERM, CORDON_NET_REASON_UNIX_PATH);
	unix_check(AUDITED, "gated: connect to an abstract name", SOCK_STREAM, false,
		   unix_abstract, 0, 0);
	unix_check(SESSION, "ungated: stream connect to a pathname socket", SOCK_STREAM, false,
		   unix_path, 0, 0);
	unix_check(SESSION, "ungated: datagram sent to a pathname socket", SOCK_DGRAM, true,
		   unix_dpath, 0, 0);
	unix_check(HOST, "stream connect to a pathname socket", SOCK_STREAM, false, unix_path, 0, 0);
	unix_check(STRAY, "stream connect to a pathname socket", SOCK_STREAM, false, unix_path,
		   EPERM, CORDON_NET_REASON_NO_SESSION);
	close(ls);
	close(ld);
	close(la);
	unlink(unix_path);
	unlink(unix_dpath);
}

/* --- listeners (host side) ------------------------------------------------ */

static int listen_on(int family, int type, const char *addr, uint16_t *port)
{
	struct sockaddr_storage ss;
	socklen_t len = mkaddr(family, addr, *port, &ss);
	int fd = socket(family, type | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0)
		return -errno;
	if (family == AF_INET6)
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 ||
	    (type == SOCK_STREAM && listen(fd, 64) < 0)) {
		close(fd);
		return -errno;
	}
	len = sizeof(ss);
	(void)getsockname(fd, (struct sockaddr *)&ss, &len);
	*port = ntohs(family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
					: ((struct sockaddr_in6 *)&ss)->sin6_port);
	return fd;
}

/*
 * TCP listeners on 127.0.0.1 and [::1] at the same port, and a UDP
 * receiver on 127.0.0.1 at that port too.  The port is the kernel's choice;
 * retried when the other family or UDP already has it.
 */
static int listeners(uint16_t *port, int *fds)
{
	for (int tries = 0; tries < 50; tries++) {
		uint16_t p = 0;

		fds[0] = listen_on(AF_INET, SOCK_STREAM, "127.0.0.1", &p);
		if (fds[0] < 0)
			return fds[0];
		fds[1] = listen_on(AF_INET6, SOCK_STREAM, "::1", &p);
		fds[2] = fds[1] >= 0 ? listen_on(AF_INET, SOCK_DGRAM, "127.0.0.1", &p) : -1;
		if (fds[1] >= 0 && fds[2] >= 0) {
			*port = p;
			return 0;
		}
		close(fds[0]);
		if (fds[1] >= 0)
			close(fds[1]);
	}
	return -EADDRINUSE;
}

static bool udp_arrived(int fd)
{
	char b[8];
	bool any = false;

	while (recv(fd, b, sizeof(b), MSG_DONTWAIT) > 0)
		any = true;
	return any;
}

/*
 * A task of the session makes a UDP socket while the session is registered,
 * then, once the session is deleted (net_session_del, here), connects it to
 * 127.0.0.1:P1, which the policy allowed.  Returns the connect's errno (or
 * 250+ for a setup failure); *pid gets the task's pid.
 */
static int connect_across_del(int *pid)
{
	int go[2], ready[2], st, r = 255;
	char b = 0;
	pid_t c;

	if (pipe(go) < 0)
		return 255;
	if (pipe(ready) < 0) {
		close(go[0]);
		close(go[1]);
		return 255;
	}
	c = fork();
	if (c == 0) {
		struct sockaddr_storage ss;
		socklen_t len = mkaddr(AF_INET, "127.0.0.1", P1, &ss);
		int fd;

		(void)prctl(PR_SET_NAME, CHILD_COMM);
		if (cg_attach_pid(session_cg, getpid()) < 0)
			_exit(251);
		fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd < 0 || write(ready[1], "r", 1) != 1 || read(go[0], &b, 1) != 1)
			_exit(253);
		_exit(connect(fd, (struct sockaddr *)&ss, len) < 0 ? errno : 0);
	}
	close(ready[1]);
	close(go[0]);
	*pid = c;
	if (c > 0 && read(ready[0], &b, 1) == 1) {
		r = net_session_del(net, session_id);
		tap_ok(r == 0, "net_session_del (%s)", r ? strerror(-r) : "ok");
		r = write(go[1], "g", 1) == 1 ? 0 : 255;
	}
	close(go[1]);
	close(ready[0]);
	if (c < 0 || waitpid(c, &st, 0) < 0 || !WIFEXITED(st))
		return 254;
	return r ? r : WEXITSTATUS(st);
}


/*
 * The floor reloaded (its pins stale: another build) while a task of a
 * stray cgroup below cordon's parent, which the floor denies every inet
 * socket, tries to make one and connect it as fast as it can.  A reload
 * that unpinned the old links before the new ones attach would let some
 * through.  Returns how many got through; *tries gets the attempts.
 */
static int reload_window(struct net **fresh, long *tries)
{
	struct { volatile int stop; volatile long tries, through; } *sh;
	struct sockaddr_storage ss;
	socklen_t len = mkaddr(AF_INET, "127.0.0.1", P1, &ss);
	struct cordon_net_config cfg;
	uint32_t zero = 0;
	int st, cfd, r;
	pid_t c;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return -1;
	c = fork();
	if (c == 0) {
		if (cg_attach_pid(stray_cg, getpid()) < 0)
			_exit(1);
		while (!sh->stop) {
			int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

			sh->tries++;
			if (fd >= 0) {
				if (connect(fd, (struct sockaddr *)&ss, len) == 0)
					sh->through++;
				close(fd);
			}
		}
		_exit(0);
	}
	if (c < 0)
		return -1;
	while (sh->tries < 1000)
		sched_yield();
	/* Stale: another build's floor, as after an upgrade. */
	cfd = bpf_obj_get(NET_PIN("config"));
	r = cfd < 0 || bpf_map_lookup_elem(cfd, &zero, &cfg) ? -1 : 0;
	if (r == 0) {
		cfg.build_id ^= 1;
		r = bpf_map_update_elem(cfd, &zero, &cfg, 0);
	}
	if (cfd >= 0)
		close(cfd);
	if (r == 0) {
		long before = sh->tries;

		r = net_open(fresh);
		tap_ok(r == 0, "a stale floor is reloaded (%s)", r ? strerror(-r) : "ok");
		while (sh->tries < before + 1000)
			sched_yield();
	}
	sh->stop = 1;
	waitpid(c, &st, 0);
	*tries = sh->tries;
	r = r < 0 ? -1 : (int)sh->through;
	munmap(sh, sizeof(*sh));
	return r;
}

/*
 * Links a reload finds pinned that its object does not replace: one in the
 * network floor's own directory (a program another build had, as after a
 * downgrade) must be let go, judging as it would from maps no session of
 * this build writes to; one in another floor's directory must stay pinned.
 * Made by attaching the pinned connect4 program again, to the stray cgroup.
 */
#define STALE_OWN   NET_PIN("link_cordon_test_stale")
#define STALE_OTHER pin_of(instance_pin_dir(), "link_cordon_test_other")

static int pin_extra_link(const char *path)
{
	struct bpf_link_info info = { 0 };
	__u32 len = sizeof(info);
	int lfd = bpf_obj_get(NET_PIN("link_cordon_connect4")), pfd = -1, cfd = -1;
	int nl = -1, r = -1;

	if (lfd >= 0 && bpf_obj_get_info_by_fd(lfd, &info, &len) == 0)
		pfd = bpf_prog_get_fd_by_id(info.prog_id);
	cfd = open(stray_cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd >= 0 && cfd >= 0)
		nl = bpf_link_create(pfd, cfd, BPF_CGROUP_INET4_CONNECT, NULL);
	if (nl >= 0)
		r = bpf_obj_pin(nl, path);
	for (int *fd = (int[]){ lfd, pfd, cfd, nl }, i = 0; i < 4; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	return r;
}

/* --- benchmark (tools/bench/net.sh): `net_floor --bench` ------------------ */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Mean ns per operation of a loop run by a task in cgroup cg. */
static double bench_loop(const char *cg, int connect_loop, int iters)
{
	int pfd[2], st;
	double ns = -1;
	pid_t c;

	if (pipe(pfd) < 0)
		return -1;
	c = fork();
	if (c == 0) {
		struct sockaddr_storage ss;
		socklen_t len = mkaddr(AF_INET, "127.0.0.1", P1, &ss);
		uint64_t t0;
		double per;
		int fd = -1;

		if (cg_attach_pid(cg, getpid()) < 0)
			_exit(1);
		if (!connect_loop && (fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
			_exit(1);
		t0 = now_ns();
		for (int i = 0; i < iters; i++) {
			if (connect_loop) {
				fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
				if (fd < 0 || connect(fd, (struct sockaddr *)&ss, len) < 0)
					_exit(2);
				close(fd);
			} else if (sendto(fd, "x", 1, 0, (struct sockaddr *)&ss, len) < 0) {
				_exit(2);
			}
		}
		per = (double)(now_ns() - t0) / iters;
		_exit(write(pfd[1], &per, sizeof(per)) == sizeof(per) ? 0 : 3);
	}
	close(pfd[1]);
	if (c > 0 && read(pfd[0], &ns, sizeof(ns)) != sizeof(ns))
		ns = -1;
	close(pfd[0]);
	if (c > 0)
		(void)waitpid(c, &st, 0);
	return ns;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * The same loops in a cgroup below cordon's parent (a registered session:
 * every call judged; no allow events, the default) and in a sibling of
 * cordon's parent (no program runs: the kernel without the floor).  Runs
 * alternate; medians of BENCH_REPS.  Output: `bench OP base_ns floor_ns`.
 *
 * 41 runs each, not fewer: a connect-loop run (24 ms) varies by 5-30% on a
 * shared two-core machine, and with 15 the ratio of medians moved by +-5%
 * between invocations, as much as the floor costs.
 */
#define BENCH_REPS 41

static int bench(void)
{
	char root[PATH_MAX], base_cg[PATH_MAX + 64], text[512];
	struct pol_diags diags = {};
	struct pol_vars vars = {};
	struct policy *pol = NULL;
	bool was_pinned = access(NET_PIN("config"), F_OK) == 0;
	int rx, r;
	uint64_t drops = 0;

	if (geteuid() != 0 || cg_find_root(root, sizeof(root)) < 0)
		tap_skip_all("needs root and cgroup2");
	r = net_open(&net);
	if (r < 0)
		tap_skip_all("cgroup-bpf: %s", strerror(-r));
	rx = listen_on(AF_INET, SOCK_DGRAM, "127.0.0.1", &P1);
	snprintf(text, sizeof(text), "{ \"cordon_policy\": 1, \"rules\": [ { \"name\": \"p1\", "
		 "\"decision\": \"allow\", \"net\": { \"hosts\": [\"127.0.0.1/32\"], \"ports\": [%u], "
		 "\"via\": \"direct\" } } ] }", P1);
	(void)pol_vars_defaults(&vars);
	if (rx < 0 || pol_load_text(text, strlen(text), "bench.json", &vars, &pol, &diags) < 0)
		return 1;
	snprintf(session_cg, sizeof(session_cg), "%s/%s/netbench-%d", root, instance_cgroup_parent(),
		 (int)getpid());
	snprintf(base_cg, sizeof(base_cg), "%s/netbench-base-%d", root, (int)getpid());
	if (mkdir(session_cg, 0755) < 0 || mkdir(base_cg, 0755) < 0 ||
	    cg_id(session_cg, &session_id) < 0 || net_session_add(net, session_id, pol, 0) < 0)
		return 1;
	for (int op = 0; op < 2; op++) {
		const int iters = op == 0 ? 4000 : 20000, reps = BENCH_REPS;
		double b[BENCH_REPS], f[BENCH_REPS];

		for (int i = 0; i < reps; i++) {
			b[i] = bench_loop(base_cg, op == 0, iters);
			f[i] = bench_loop(session_cg, op == 0, iters);
			drain();
			n_events = 0;
			udp_arrived(rx);
		}
		qsort(b, reps, sizeof(*b), cmp_double);
		qsort(f, reps, sizeof(*f), cmp_double);
		printf("bench %s %.1f %.1f\n", op == 0 ? "connect" : "sendto", b[reps / 2], f[reps / 2]);
	}
	(void)net_counter(net, CORDON_CNT_DROPS, &drops);
	printf("bench drops %llu\n", (unsigned long long)drops);
	(void)net_session_del(net, session_id);
	(void)rmdir(session_cg);
	(void)rmdir(base_cg);
	close(rx);
	pol_free(pol);
	pol_vars_free(&vars);
	pol_diags_free(&diags);
	net_close(net);
	if (!was_pinned)
		(void)net_unload();
	return 0;
}

/* ------------------------------------------------------------------------------ */

int main(int argc, char **argv)
{
	char parent[PATH_MAX + 16], root[PATH_MAX], text[2048];
	struct pol_diags diags = {};
	struct pol_vars vars = {};
	struct policy *pol = NULL;
	int fds[5][3], r;
	bool was_pinned;
	struct in_addr lo4;
	struct in6_addr lo6;
	uint16_t *ports[5] = { &P1, &P2, &P3, &P4, &P5 };
	uint64_t drops = 0;
	int del_pid = 0;

	if (argc > 1 && !strcmp(argv[1], "--bench"))
		return bench();
	if (geteuid() != 0)
		tap_skip_all("needs root (cgroup-bpf attach, cgroup moves)");
	if (cg_find_root(root, sizeof(root)) < 0)
		tap_skip_all("no cgroup2 hierarchy mounted");
	was_pinned = access(NET_PIN("config"), F_OK) == 0;
	r = net_open(&net);
	if (r == -EPERM || r == -EOPNOTSUPP || r == -ENOSYS || r == -EACCES)
		tap_skip_all("cgroup-bpf: the kernel refused to load or attach the network programs (%s)",
			     strerror(-r));
	if (r < 0) {
		tap_ok(0, "net_open: %s", strerror(-r));
		return tap_done();
	}
	tap_ok(1, "net_open loads, attaches and pins");
	/* Drops so far (sessions before this test may have flooded their rings). */
	(void)net_counter(net, CORDON_CNT_DROPS, &drops);
	{
		struct net *again = NULL;

		r = net_open(&again);
		tap_ok(r == 0, "a second net_open reuses the pins (%s)", r ? strerror(-r) : "ok");
		net_close(again);
	}

	for (int i = 0; i < 5; i++) {
		r = listeners(ports[i], fds[i]);
		if (r < 0) {
			tap_ok(0, "loopback listeners: %s", strerror(-r));
			return tap_done();
		}
	}
	tap_diag("ports: P1 %u (allowed), P2 %u (no rule), P3 %u (wide deny), P4 %u (escalate), "
		 "P5 %u (cordon's allow)", P1, P2, P3, P4, P5);

	/*
	 * P1: allowed to 127.0.0.1 only.  P3: allowed to 127.0.0.1 but denied to
	 * all of 127.0.0.0/8, so the deny of the covering prefix must win over
	 * the more specific allow.  P4: escalated (a deny in the kernel).
	 */
	snprintf(text, sizeof(text),
		 "{ \"cordon_policy\": 1, \"rules\": ["
		 " { \"name\": \"p1\", \"decision\": \"allow\","
		 "   \"net\": { \"hosts\": [\"127.0.0.1/32\"], \"ports\": [%u, %u], \"via\": \"direct\" } },"
		 " { \"name\": \"wide-deny\", \"decision\": \"deny\","
		 "   \"net\": { \"hosts\": [\"127.0.0.0/8\"], \"ports\": [%u], \"via\": \"direct\" } },"
		 " { \"name\": \"esc\", \"decision\": \"escalate\","
		 "   \"net\": { \"hosts\": [\"127.0.0.1\"], \"ports\": [%u], \"via\": \"direct\" } }"
		 "] }", P1, P3, P3, P4);
	(void)pol_vars_defaults(&vars);
	r = pol_load_text(text, strlen(text), "net_floor.json", &vars, &pol, &diags);
	if (r < 0) {
		pol_diags_print(&diags, "net_floor.json", stdout);
		tap_ok(0, "policy loads");
		return tap_done();
	}

	snprintf(parent, sizeof(parent), "%s/%s", root, instance_cgroup_parent());
	snprintf(session_cg, sizeof(session_cg), "%s/nettest-%d", parent, (int)getpid());
	snprintf(stray_cg, sizeof(stray_cg), "%s/nettest-stray-%d", parent, (int)getpid());
	snprintf(audited_cg, sizeof(audited_cg), "%s/nettest-audited-%d", parent, (int)getpid());
	if (mkdir(session_cg, 0755) < 0 || mkdir(stray_cg, 0755) < 0 || mkdir(audited_cg, 0755) < 0 ||
	    cg_id(session_cg, &session_id) < 0 || cg_id(stray_cg, &stray_id) < 0 ||
	    cg_id(audited_cg, &audited_id) < 0) {
		tap_ok(0, "session cgroups: %m");
		return tap_done();
	}
	r = net_session_add(net, session_id, pol, 0);
	tap_ok(r == 0, "net_session_add (%s)", r ? strerror(-r) : "ok");
	tap_ok(net_session_add(net, session_id, pol, 0) == -EEXIST, "a second add is -EEXIST");
	tap_ok(net_session_add(net, audited_id, pol, 1u << 31) == -EINVAL,
	       "an unknown session flag is -EINVAL");
	tap_ok(net_session_add(net, 0, pol, 0) == -EINVAL, "cgroup id 0 (no session) is -EINVAL");
	(void)inet_pton(AF_INET, "127.0.0.1", &lo4);
	tap_ok(net_session_allow(net, audited_id, AF_INET, &lo4, P5) == -ENOENT,
	       "net_session_allow before the session is added is -ENOENT");
	r = net_session_add(net, audited_id, pol,
			    CORDON_NET_SESSION_ALLOW_EVENTS | CORDON_NET_SESSION_UNIX_GATE);
	tap_ok(r == 0, "net_session_add with allow events and the unix gate (%s)",
	       r ? strerror(-r) : "ok");
	(void)inet_pton(AF_INET, "127.0.0.1", &lo4);
	(void)inet_pton(AF_INET6, "::1", &lo6);
	r = net_session_allow(net, session_id, AF_INET, &lo4, P5);
	r = r ?: net_session_allow(net, session_id, AF_INET6, &lo6, P5);
	r = r ?: net_session_allow(net, audited_id, AF_INET, &lo4, P5);
	tap_ok(r == 0, "net_session_allow 127.0.0.1:P5 and [::1]:P5 (%s)", r ? strerror(-r) : "ok");
	drain();
	unix_gate_checks();

#define OP(...) (&(struct op){ __VA_ARGS__ })
#define EV(...) (&(struct want_ev){ __VA_ARGS__ })
#define RULE(x) .check_rule = true, .rule = (x)
#define DENY_C(fam, a, p, why) EV(.op = CORDON_NET_OP_CONNECT, .decision = CORDON_DENY, \
				  .reason = (why), .family = (fam), .addr = (a), .port = (p))
	{
		const uid_t uids[] = { AGENT_UID, 0 };
		const uint32_t rule_p1 = 0, rule_wide = 1, rule_esc = 2;

		for (size_t u = 0; u < ARRAY_SIZE(uids); u++) {
			uid_t id = uids[u];

			check(SESSION, id, "connect 127.0.0.1:P1 (allowed)",
			      OP(CONNECT, AF_INET, .addr = "127.0.0.1", .port = &P1), 0, NULL);
			check(SESSION, id, "connect 127.0.0.1:P2 (no rule)",
			      OP(CONNECT, AF_INET, .addr = "127.0.0.1", .port = &P2), EPERM,
			      DENY_C(4, "127.0.0.1", P2, CORDON_NET_REASON_DEFAULT));
			check(SESSION, id, "connect [::ffff:127.0.0.1]:P2 (mapped, no rule)",
			      OP(CONNECT, AF_INET6, .addr = "::ffff:127.0.0.1", .port = &P2), EPERM,
			      DENY_C(4, "127.0.0.1", P2, CORDON_NET_REASON_DEFAULT));
			check(SESSION, id, "connect [::ffff:127.0.0.1]:P1 (mapped, allowed)",
			      OP(CONNECT, AF_INET6, .addr = "::ffff:127.0.0.1", .port = &P1), 0, NULL);
			check(SESSION, id, "connect [::1]:P2 (no rule)",
			      OP(CONNECT, AF_INET6, .addr = "::1", .port = &P2), EPERM,
			      DENY_C(6, "::1", P2, CORDON_NET_REASON_DEFAULT));
			check(SESSION, id, "connect 0.0.0.0:P2 (judged as 127.0.0.1)",
			      OP(CONNECT, AF_INET, .addr = "0.0.0.0", .port = &P2), EPERM,
			      DENY_C(4, "127.0.0.1", P2, CORDON_NET_REASON_DEFAULT));
			check(SESSION, id, "connect 0.0.0.0:P1 (judged as 127.0.0.1: allowed)",
			      OP(CONNECT, AF_INET, .addr = "0.0.0.0", .port = &P1), 0, NULL);
			check(SESSION, id, "connect [::]:P2 (judged as ::1)",
			      OP(CONNECT, AF_INET6, .addr = "::", .port = &P2), EPERM,
			      DENY_C(6, "::1", P2, CORDON_NET_REASON_DEFAULT));
			check(SESSION, id, "connect 127.0.0.1:P3 (allowed, but 127/8 denies: deny wins)",
			      OP(CONNECT, AF_INET, .addr = "127.0.0.1", .port = &P3), EPERM,
			      EV(.op = CORDON_NET_OP_CONNECT, .decision = CORDON_DENY,
				 .reason = CORDON_NET_REASON_RULE, .family = 4, .addr = "127.0.0.1",
				 .port = P3, RULE(rule_wide)));
			check(SESSION, id, "connect 127.0.0.2:P1 (outside the /32)",
			      OP(CONNECT, AF_INET, .addr = "127.0.0.2", .port = &P1), EPERM,
			      DENY_C(4, "127.0.0.2", P1, CORDON_NET_REASON_DEFAULT));
			check(SESSION, id, "connect 127.0.0.1:P4 (escalated: denied in the kernel)",
			      OP(CONNECT, AF_INET, .addr = "127.0.0.1", .port = &P4), EPERM,
			      EV(.op = CORDON_NET_OP_CONNECT, .decision = CORDON_ESCALATE,
				 .reason = CORDON_NET_REASON_RULE, .family = 4, .addr = "127.0.0.1",
				 .port = P4, RULE(rule_esc)));
			check(SESSION, id, "connect 127.0.0.1:P5 (cordon's allow)",
			      OP(CONNECT, AF_INET, .addr = "127.0.0.1", .port = &P5), 0, NULL);
			check(SESSION, id, "connect [::1]:P5 (cordon's allow)",
			      OP(CONNECT, AF_INET6, .addr = "::1", .port = &P5), 0, NULL);
			check(SESSION, id, "UDP sendto 127.0.0.1:P2",
			      OP(SENDTO, AF_INET, .addr = "127.0.0.1", .port = &P2), EPERM,
			      EV(.op = CORDON_NET_OP_SENDMSG, .decision = CORDON_DENY,
				 .reason = CORDON_NET_REASON_DEFAULT, .family = 4, .addr = "127.0.0.1",
				 .port = P2));
			check(SESSION, id, "UDP sendto [::ffff:127.0.0.1]:P2 (mapped)",
			      OP(SENDTO, AF_INET6, .addr = "::ffff:127.0.0.1", .port = &P2), EPERM,
			      EV(.op = CORDON_NET_OP_SENDMSG, .decision = CORDON_DENY,
				 .reason = CORDON_NET_REASON_DEFAULT, .family = 4, .addr = "127.0.0.1",
				 .port = P2));
			tap_ok(!udp_arrived(fds[1][2]), "session uid %u: no denied datagram arrived", id);
			{
				static uint16_t dns = 53;

				check(SESSION, id, "UDP sendto 8.8.8.8:53 (DNS)",
				      OP(SENDTO, AF_INET, .addr = "8.8.8.8", .port = &dns), EPERM,
				      EV(.op = CORDON_NET_OP_SENDMSG, .decision = CORDON_DENY,
					 .reason = CORDON_NET_REASON_DEFAULT, .family = 4,
					 .addr = "8.8.8.8", .port = 53));
				check(SESSION, id, "UDP connect 8.8.8.8:53 (DNS)",
				      OP(CONNECT, AF_INET, .type = SOCK_DGRAM, .addr = "8.8.8.8", .port = &dns),
				      EPERM, DENY_C(4, "8.8.8.8", 53, CORDON_NET_REASON_DEFAULT));
			}
#define SOCK_DENIED(f) EV(.op = CORDON_NET_OP_SOCKET, .decision = CORDON_DENY, \
			  .reason = CORDON_NET_REASON_SOCKET_KIND, .family = (f))
			check(SESSION, id, "socket(AF_INET, SOCK_RAW, ICMP)",
			      OP(SOCKET, AF_INET, .type = SOCK_RAW, .proto = IPPROTO_ICMP), EPERM,
			      id ? NULL : SOCK_DENIED(AF_INET));
			check(SESSION, id, "socket(AF_INET6, SOCK_RAW, ICMPV6)",
			      OP(SOCKET, AF_INET6, .type = SOCK_RAW, .proto = IPPROTO_ICMPV6), EPERM,
			      id ? NULL : SOCK_DENIED(AF_INET6));
			/*
			 * A ping socket: where net.ipv4.ping_group_range excludes the
			 * caller (the default, even for root) the protocol's init says
			 * EACCES before the cgroup program runs; where it admits them,
			 * the floor says EPERM.  Denied either way.
			 */
			{
				int pid, e = in_task(SESSION, id, OP(SOCKET, AF_INET, .type = SOCK_DGRAM,
								     .proto = IPPROTO_ICMP), &pid);

				tap_ok(e == EPERM || e == EACCES, "session uid %u: socket(AF_INET, SOCK_DGRAM, "
				       "ICMP) (ping socket) denied (%s)", id, e ? strerror(e) : "ok");
				if (e == EPERM)
					tap_ok(find_event(pid, session_id, id, SOCK_DENIED(AF_INET)),
					       "session uid %u: ping socket: socket event", id);
			}
			if (id == 0)
				check(SESSION, id, "socket(AF_INET, SOCK_DGRAM, ICMP) where ping_group_range "
				      "admits every gid (own netns): the floor's denial",
				      OP(SOCKET, AF_INET, .type = SOCK_DGRAM, .proto = IPPROTO_ICMP,
					 .ping_ns = true), EPERM, SOCK_DENIED(AF_INET));
			check(SESSION, id, "socket(AF_INET, SOCK_STREAM, TCP)",
			      OP(SOCKET, AF_INET, .type = SOCK_STREAM, .proto = 0), 0, NULL);
			check(SESSION, id, "socket(AF_INET6, SOCK_DGRAM, UDP)",
			      OP(SOCKET, AF_INET6, .type = SOCK_DGRAM, .proto = 0), 0, NULL);
			check(SESSION, id, "socket(AF_NETLINK, NETLINK_ROUTE)",
			      OP(SOCKET, AF_NETLINK, .type = SOCK_RAW, .proto = NETLINK_ROUTE), 0, NULL);
			check(SESSION, id, "socket(AF_UNIX, SOCK_STREAM)",
			      OP(SOCKET, AF_UNIX, .type = SOCK_STREAM, .proto = 0), 0, NULL);
			/*
			 * Families other than inet never reach cgroup/sock_create: the
			 * kernel runs it from inet_create/inet6_create only.  What these
			 * get is the kernel's own answer (uid 1000: EPERM for packet
			 * sockets, no capability); the floor makes no claim, so they are
			 * reported, not asserted.
			 */
			{
				static const struct { int f, t, p; const char *name; } other[] = {
					{ AF_PACKET, SOCK_RAW, 0, "AF_PACKET" },
					{ AF_NETLINK, SOCK_RAW, NETLINK_SOCK_DIAG, "AF_NETLINK NETLINK_SOCK_DIAG" },
					{ AF_VSOCK, SOCK_STREAM, 0, "AF_VSOCK" },
					{ AF_ALG, SOCK_SEQPACKET, 0, "AF_ALG" },
				};

				for (size_t k = 0; k < ARRAY_SIZE(other); k++) {
					int pid, e = in_task(SESSION, id, OP(SOCKET, other[k].f,
						.type = other[k].t, .proto = other[k].p), &pid);

					printf("ok %d - session uid %u: socket(%s) -> %s # SKIP cgroup/sock_create "
					       "does not run for non-inet families (needs the LSM floor's "
					       "socket_create or seccomp)\n", ++tap_n, id, other[k].name,
					       e ? strerror(e) : "ok");
				}
			}
#define BIND_DENIED(f, a) EV(.op = CORDON_NET_OP_BIND, .decision = CORDON_DENY, \
			     .reason = CORDON_NET_REASON_NONLOCAL, .family = (f), .addr = (a))
			check(SESSION, id, "bind 0.0.0.0:0 lands on 127.0.0.1",
			      OP(BIND, AF_INET, .addr = "0.0.0.0", .want_name = "127.0.0.1"), 0, NULL);
			check(SESSION, id, "UDP bind 0.0.0.0:0 lands on 127.0.0.1",
			      OP(BIND, AF_INET, SOCK_DGRAM, .addr = "0.0.0.0", .want_name = "127.0.0.1"),
			      0, NULL);
			check(SESSION, id, "bind [::]:0 lands on ::1",
			      OP(BIND, AF_INET6, .addr = "::", .want_name = "::1"), 0, NULL);
			check(SESSION, id, "bind 127.0.0.1:0",
			      OP(BIND, AF_INET, .addr = "127.0.0.1", .want_name = "127.0.0.1"), 0, NULL);
			check(SESSION, id, "bind " NOT_LOOPBACK ":0 (freebind: not loopback)",
			      OP(BIND, AF_INET, .addr = NOT_LOOPBACK, .freebind = true), EPERM,
			      BIND_DENIED(4, NOT_LOOPBACK));
			check(SESSION, id, "bind [2001:db8::1]:0 (freebind: not loopback)",
			      OP(BIND, AF_INET6, .addr = "2001:db8::1", .freebind = true), EPERM,
			      BIND_DENIED(6, "2001:db8::1"));
			check(SESSION, id, "bind [::ffff:" NOT_LOOPBACK "]:0 (mapped, not loopback)",
			      OP(BIND, AF_INET6, .addr = "::ffff:" NOT_LOOPBACK, .freebind = true), EPERM,
			      BIND_DENIED(6, "::ffff:" NOT_LOOPBACK));
		}

		/*
		 * The session that asked for allow events: each allowed connect is
		 * one, with the rule that allowed it and the address as judged; an
		 * allowed datagram is not; denials are events as everywhere.
		 */
		for (size_t u = 0; u < ARRAY_SIZE(uids); u++) {
			uid_t id = uids[u];

			check(AUDITED, id, "connect 127.0.0.1:P1 (allowed)",
			      OP(CONNECT, AF_INET, .addr = "127.0.0.1", .port = &P1), 0,
			      EV(.op = CORDON_NET_OP_CONNECT, .decision = CORDON_ALLOW,
				 .reason = CORDON_NET_REASON_RULE, .family = 4, .addr = "127.0.0.1",
				 .port = P1, RULE(rule_p1)));
			check(AUDITED, id, "connect [::ffff:127.0.0.1]:P1 (mapped, allowed)",
			      OP(CONNECT, AF_INET6, .addr = "::ffff:127.0.0.1", .port = &P1), 0,
			      EV(.op = CORDON_NET_OP_CONNECT, .decision = CORDON_ALLOW,
				 .reason = CORDON_NET_REASON_RULE, .family = 4, .addr = "127.0.0.1",
				 .port = P1, RULE(rule_p1)));
			check(AUDITED, id, "connect 127.0.0.1:P5 (cordon's allow)",
			      OP(CONNECT, AF_INET, .addr = "127.0.0.1", .port = &P5), 0,
			      EV(.op = CORDON_NET_OP_CONNECT, .decision = CORDON_ALLOW,
				 .reason = CORDON_NET_REASON_CORDON, .family = 4, .addr = "127.0.0.1",
				 .port = P5));
			check(AUDITED, id, "UDP sendto 127.0.0.1:P1 (allowed: no event)",
			      OP(SENDTO, AF_INET, .addr = "127.0.0.1", .port = &P1), 0, NULL);
			check(AUDITED, id, "connect [::1]:P5 (cordon's allow is the other session's)",
			      OP(CONNECT, AF_INET6, .addr = "::1", .port = &P5), EPERM,
			      DENY_C(6, "::1", P5, CORDON_NET_REASON_DEFAULT));
			check(AUDITED, id, "connect 127.0.0.1:P3 (deny wins)",
			      OP(CONNECT, AF_INET, .addr = "127.0.0.1", .port = &P3), EPERM,
			      EV(.op = CORDON_NET_OP_CONNECT, .decision = CORDON_DENY,
				 .reason = CORDON_NET_REASON_RULE, .family = 4, .addr = "127.0.0.1",
				 .port = P3, RULE(rule_wide)));
		}
		(void)udp_arrived(fds[0][2]);

		/*
		 * A cgroup below cordon's parent that no session registered: nothing.
		 * It cannot make an inet socket, so the connect and sendto checks
		 * use one made in the session, then moved with the task: the caller
		 * decides, not the socket.
		 */
		check(SESSION, 0, "then moved to the stray cgroup: connect 127.0.0.1:P1",
		      OP(CONNECT, AF_INET, .addr = "127.0.0.1", .port = &P1, .then_stray = true), EPERM,
		      DENY_C(4, "127.0.0.1", P1, CORDON_NET_REASON_NO_SESSION));
		check(SESSION, 0, "then moved to the stray cgroup: UDP sendto 127.0.0.1:P1",
		      OP(SENDTO, AF_INET, .addr = "127.0.0.1", .port = &P1, .then_stray = true), EPERM,
		      EV(.op = CORDON_NET_OP_SENDMSG, .decision = CORDON_DENY,
			 .reason = CORDON_NET_REASON_NO_SESSION, .family = 4, .addr = "127.0.0.1",
			 .port = P1));
		check(STRAY, 0, "socket(AF_INET, SOCK_STREAM)",
		      OP(SOCKET, AF_INET, .type = SOCK_STREAM, .proto = 0), EPERM,
		      EV(.op = CORDON_NET_OP_SOCKET, .decision = CORDON_DENY,
			 .reason = CORDON_NET_REASON_NO_SESSION));
		check(STRAY, AGENT_UID, "socket(AF_INET6, SOCK_DGRAM)",
		      OP(SOCKET, AF_INET6, .type = SOCK_DGRAM, .proto = 0), EPERM,
		      EV(.op = CORDON_NET_OP_SOCKET, .decision = CORDON_DENY,
			 .reason = CORDON_NET_REASON_NO_SESSION));

		/* The host: never touched. */
		check(HOST, 0, "connect 127.0.0.1:P2",
		      OP(CONNECT, AF_INET, .addr = "127.0.0.1", .port = &P2), 0, NULL);
		check(HOST, AGENT_UID, "connect [::1]:P2",
		      OP(CONNECT, AF_INET6, .addr = "::1", .port = &P2), 0, NULL);
		check(HOST, 0, "UDP sendto 127.0.0.1:P2",
		      OP(SENDTO, AF_INET, .addr = "127.0.0.1", .port = &P2), 0, NULL);
		usleep(10000);
		tap_ok(udp_arrived(fds[1][2]), "host: its datagram arrived");
		check(HOST, 0, "socket(AF_INET, SOCK_RAW, ICMP)",
		      OP(SOCKET, AF_INET, .type = SOCK_RAW, .proto = IPPROTO_ICMP), 0, NULL);
		check(HOST, 0, "bind 0.0.0.0:0 stays the wildcard",
		      OP(BIND, AF_INET, .addr = "0.0.0.0", .want_name = "0.0.0.0"), 0, NULL);
		check(HOST, 0, "bind " NOT_LOOPBACK ":0 (freebind)",
		      OP(BIND, AF_INET, .addr = NOT_LOOPBACK, .freebind = true), 0, NULL);
	}

	{
		uint64_t now = 0;

		tap_ok(net_counter(net, CORDON_CNT_DROPS, &now) == 0 && now == drops,
		       "no event dropped during these checks (%llu before, %llu now)",
		       (unsigned long long)drops, (unsigned long long)now);
	}
	ring_checks(parent, pol);

	/* Deregistered: the session's tasks are strays now, denied everything. */
	r = connect_across_del(&del_pid);
	tap_ok(r == EPERM, "a socket made before net_session_del: connect 127.0.0.1:P1 after it -> "
	       "%s (got %s, %d)", strerror(EPERM), r ? strerror(r) : "ok", r);
	tap_ok(find_event(del_pid, session_id, 0, DENY_C(4, "127.0.0.1", P1, CORDON_NET_REASON_NO_SESSION)),
	       "after net_session_del: connect event (no-session)");
	/*
	 * The reload window: with the floor held only by its pins, as when
	 * every supervisor opened it from them (this process loaded it and
	 * holds its links: let them go first).
	 */
	{
		struct net *fresh = NULL;
		long tries = 0;

		net_close(net);
		r = net_open(&net);
		tap_ok(r == 0, "net_open from the pins (%s)", r ? strerror(-r) : "ok");
		tap_ok(pin_extra_link(STALE_OWN) == 0 && pin_extra_link(STALE_OTHER) == 0,
		       "two extra links pinned: in the network floor's directory and beside it");
		r = reload_window(&fresh, &tries);
		tap_ok(r == 0, "while the floor was reloaded, a stray task's %ld inet sockets and "
		       "connects: %d got through", tries, r);
		tap_ok(access(STALE_OWN, F_OK) < 0 && errno == ENOENT,
		       "after the reload, a link of its own directory the new object has no "
		       "program for is let go");
		tap_ok(access(STALE_OTHER, F_OK) == 0,
		       "and another floor's link, which the reload does not own, stays pinned");
		(void)unlink(STALE_OTHER);
		if (fresh) {
			net_close(net);
			net = fresh;
		}
		/* The sessions registered in the old floor's maps are not in the new one. */
		r = net_session_add(net, audited_id, pol, 0);
		tap_ok(r == 0, "the audited session registered again in the new floor (%s)",
		       r ? strerror(-r) : "ok");
	}
	r = net_session_del(net, audited_id);
	tap_ok(r == 0, "net_session_del of the audited session (%s)", r ? strerror(-r) : "ok");
	check(SESSION, 0, "after del: socket(AF_INET, SOCK_STREAM)",
	      OP(SOCKET, AF_INET, .type = SOCK_STREAM), EPERM, NULL);
	tap_ok(net_session_del(net, session_id) == -ENOENT, "a second del is -ENOENT");

	(void)rmdir(session_cg);
	(void)rmdir(stray_cg);
	(void)rmdir(audited_cg);
	for (int i = 0; i < 5; i++)
		for (int k = 0; k < 3; k++)
			close(fds[i][k]);
	pol_free(pol);
	pol_vars_free(&vars);
	pol_diags_free(&diags);
	net_close(net);
	/* Leave the machine as found: the LSM floor's tests expect no pins. */
	if (!was_pinned) {
		r = net_unload();
		tap_ok(r == 0 && access(instance_net_pin_dir(), F_OK) < 0, "net_unload removes the pins");
	}
	return tap_done();
}
