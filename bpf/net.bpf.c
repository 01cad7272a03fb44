// SPDX-License-Identifier: GPL-2.0
/*
 * The network floor: cgroup-bpf programs attached once to <cgroup2>/cordon,
 * so that every session cgroup below it is covered and no host task ever is.
 * A separate object from the LSM floor: cgroup-bpf works on kernels that
 * refuse LSM programs.
 *
 * What it closes, for every task of a session, root included:
 * - connect (TCP, connected UDP, TCP Fast Open's sendto) and unconnected UDP
 *   sendmsg to any address and port the session's policy does not allow
 *   directly: exfiltration, lateral movement, DNS tunnelling (port 53 is not
 *   reachable unless a rule allows it);
 * - the aliases of an address: IPv4-mapped IPv6 is judged as the IPv4
 *   address, the unspecified address as the loopback it means, and a
 *   sockaddr whose family does not match the hook is refused;
 * - bind to anything but loopback (a wildcard bind is rewritten to
 *   loopback), so a server the agent starts is not reachable from outside;
 * - raw, packet-level and exotic sockets of the inet families (SOCK_RAW,
 *   ICMP "ping" sockets, SCTP, MPTCP): only TCP and UDP, whose every
 *   destination the hooks above see.
 *
 * What it cannot close:
 * - a socket created outside the session and passed in (SCM_RIGHTS): the
 *   kernel runs the programs of the socket's cgroup, not the caller's;
 *   only cordon's own processes can hand a session such a socket;
 * - listen() on a socket never bound: the kernel autobinds it to the
 *   wildcard address without running the bind hook (an ingress filter would
 *   be needed to keep it unreachable from outside);
 * - sockets of other families: the kernel runs cgroup/sock_create only from
 *   inet_create and inet6_create, so AF_PACKET, AF_NETLINK, AF_VSOCK, AF_ALG
 *   and friends never reach this program (the code below denies them should
 *   a kernel ever call it); they need the LSM floor's socket_create hook or
 *   the fallback's seccomp filter;
 * - traffic that is not a socket call of the session: the host's resolver,
 *   proxies run by cordon outside the session.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "cordon.h"

char LICENSE[] SEC("license") = "GPL";

#define AF_UNIX      1
#define AF_INET      2
#define AF_INET6     10
#define AF_NETLINK   16
#define SOCK_STREAM  1
#define SOCK_DGRAM   2
#define SOCK_SEQPACKET 5
#define IPPROTO_TCP  6
#define IPPROTO_UDP  17
#define NETLINK_ROUTE 0

/* cgroup sock_addr and sock programs: 1 lets the call through, 0 is -EPERM. */
#define PASS 1
#define DENY 0

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cordon_net_config);
} net_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CORDON_MAX_SESSIONS);
	__type(key, __u64);
	__type(value, struct cordon_net_session);
} net_sessions SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, CORDON_MAX_NET_RULES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct cordon_net_key);
	__type(value, struct cordon_net_rule);
} net_rules SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, CORDON_NET_RINGBUF);
} net_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CORDON_CNT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} net_counters SEC(".maps");

/*
 * Where sessions live, fixed when the object is loaded (a parent cgroup
 * recreated later has a new id: the loader then reloads).  The config map
 * carries the same for the loader's staleness check.
 */
const volatile __u32 session_level = 0;
const volatile __u64 parent_id = 0;

/* Who is calling: a registered session, a stray cgroup below cordon's parent, or the host. */
enum who { HOST, STRAY, SESSION };

struct caller {
	enum who who;
	__u64 sid;
	__u32 policy_id;
	__u32 flags;            /* the session's CORDON_NET_SESSION_* */
};

/*
 * Judged by the calling task's cgroup, which every descendant inherits and a
 * session cannot change.  The programs run for sockets created below
 * cordon's parent; a host task using such a socket (one a session passed
 * out) is the host's business, and a task below the parent in a cgroup no
 * session registered (created behind cordon's back, or a session torn down
 * half-way) is denied everything: fail closed.
 */
static __always_inline void caller(struct caller *c)
{
	struct cordon_net_session *s;

	c->who = STRAY;
	c->policy_id = 0;
	c->flags = 0;
	c->sid = 0;
	if (session_level < 1)
		return;         /* not configured: nothing is allowed */
	/* Sessions first: their ids are unique, so a hit is below the parent. */
	c->sid = bpf_get_current_ancestor_cgroup_id(session_level);
	s = bpf_map_lookup_elem(&net_sessions, &c->sid);
	if (s) {
		c->who = SESSION;
		c->policy_id = s->policy_id;
		c->flags = s->flags;
		return;
	}
	if (bpf_get_current_ancestor_cgroup_id(session_level - 1) != parent_id)
		c->who = HOST;
}

static __always_inline void count(__u32 which)
{
	__u64 *v = bpf_map_lookup_elem(&net_counters, &which);

	if (v)
		*v += 1;
}

struct verdict {
	__u32 decision;
	__u32 reason;
	__u32 rule_id;
};

static __always_inline void report(const struct caller *c, __u32 op, __u32 family,
				   const __u8 *addr, __u16 port, __u16 proto,
				   const struct verdict *v)
{
	struct cordon_net_event *e = bpf_ringbuf_reserve(&net_events, sizeof(*e), 0);

	if (!e) {
		count(CORDON_CNT_DROPS);
		return;
	}
	count(CORDON_CNT_EVENTS);
	e->ts_ns = bpf_ktime_get_ns();
	e->session = c->sid;
	e->pid = bpf_get_current_pid_tgid() >> 32;
	e->uid = (__u32)bpf_get_current_uid_gid();
	e->op = op;
	e->family = family;
	e->decision = v->decision;
	e->reason = v->reason;
	e->rule_id = v->rule_id;
	e->port = port;
	e->proto = proto;
	__builtin_memset(e->addr, 0, sizeof(e->addr));
	if (addr && family == 4)
		__builtin_memcpy(e->addr, addr, 4);
	else if (addr)
		__builtin_memcpy(e->addr, addr, 16);
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	bpf_ringbuf_submit(e, 0);
}

/*
 * The strongest decision among the ranges covering the port, from the most
 * specific prefix (whose value carries every covering prefix's ranges).
 * Escalate is a deny here: the kernel cannot hold a connect for a human.
 */
static __always_inline void judge(const struct caller *c, __u32 family, const __u8 *addr,
				  __u16 port, struct verdict *v)
{
	struct cordon_net_key key = {};
	struct cordon_net_rule *rule;
	int found = 0;

	v->decision = CORDON_DENY;
	v->reason = CORDON_NET_REASON_DEFAULT;
	v->rule_id = 0;
	if (c->who != SESSION) {
		v->reason = CORDON_NET_REASON_NO_SESSION;
		return;
	}
	key.prefixlen = 64 + (family == 4 ? 32 : 128);
	key.policy_id = c->policy_id;
	key.family = family;
	__builtin_memcpy(key.addr, addr, 16);
	rule = bpf_map_lookup_elem(&net_rules, &key);
	if (!rule)
		return;
	for (int i = 0; i < CORDON_NET_RANGES; i++) {
		const struct cordon_net_range *r = &rule->r[i];

		if (i >= rule->n)
			break;
		if (port < r->lo || port > r->hi)
			continue;
		if (!found || r->decision > v->decision) {
			v->decision = r->decision;
			v->rule_id = r->rule_id;
		}
		found = 1;
	}
	if (!found) {
		v->decision = CORDON_DENY;
		return;
	}
	v->reason = v->rule_id == CORDON_NET_RULE_CORDON ? CORDON_NET_REASON_CORDON
							 : CORDON_NET_REASON_RULE;
}

/*
 * Every denial is an event.  An allowed connect is one only for a session
 * that asked (CORDON_NET_SESSION_ALLOW_EVENTS): the supervisor audits
 * connects from seccomp user notification, and an allowed sendmsg, one per
 * datagram, never is.
 */
static __always_inline int finish(const struct caller *c, __u32 op, __u32 family,
				  const __u8 *addr, __u16 port, const struct verdict *v)
{
	if (v->decision != CORDON_ALLOW) {
		report(c, op, family, addr, port, 0, v);
		return DENY;
	}
	if (op == CORDON_NET_OP_CONNECT && (c->flags & CORDON_NET_SESSION_ALLOW_EVENTS))
		report(c, op, family, addr, port, 0, v);
	return PASS;
}

/* Destination of an IPv4 connect or sendmsg: 0.0.0.0 means the local host. */
static __always_inline int dest4(struct bpf_sock_addr *ctx, __u32 op)
{
	struct caller c;
	struct verdict v;
	__u8 addr[16] = {};
	__u32 ip = ctx->user_ip4;
	__u16 port = bpf_ntohs((__u16)ctx->user_port);

	caller(&c);
	if (c.who == HOST)
		return PASS;
	if (ip == 0)
		ip = bpf_htonl(0x7f000001);
	__builtin_memcpy(addr, &ip, 4);
	if (ctx->user_family != AF_INET) {
		struct verdict bad = { CORDON_DENY, CORDON_NET_REASON_FAMILY, 0 };

		return finish(&c, op, 4, addr, port, &bad);
	}
	judge(&c, 4, addr, port, &v);
	return finish(&c, op, 4, addr, port, &v);
}

/*
 * Destination of an IPv6 connect or sendmsg.  ::ffff:a.b.c.d reaches
 * a.b.c.d, so it is judged as that IPv4 address: a rule cannot be dodged by
 * spelling an address in the other family.  :: means ::1 (and ::ffff:0.0.0.0
 * means 127.0.0.1).  A sockaddr that is not AF_INET6 is refused: the bytes
 * this hook would read are not the address the kernel would use.
 */
static __always_inline int dest6(struct bpf_sock_addr *ctx, __u32 op)
{
	struct caller c;
	struct verdict v;
	__u32 w[4];
	__u8 addr[16] = {};
	__u16 port = bpf_ntohs((__u16)ctx->user_port);
	__u32 family = 6;

	caller(&c);
	if (c.who == HOST)
		return PASS;
	w[0] = ctx->user_ip6[0];
	w[1] = ctx->user_ip6[1];
	w[2] = ctx->user_ip6[2];
	w[3] = ctx->user_ip6[3];
	if (w[0] == 0 && w[1] == 0 && w[2] == bpf_htonl(0xffff)) {
		family = 4;
		if (w[3] == 0)
			w[3] = bpf_htonl(0x7f000001);
		__builtin_memcpy(addr, &w[3], 4);
	} else {
		if (!(w[0] | w[1] | w[2] | w[3]))
			w[3] = bpf_htonl(1);
		__builtin_memcpy(addr, w, 16);
	}
	if (ctx->user_family != AF_INET6) {
		struct verdict bad = { CORDON_DENY, CORDON_NET_REASON_FAMILY, 0 };

		return finish(&c, op, family, addr, port, &bad);
	}
	judge(&c, family, addr, port, &v);
	return finish(&c, op, family, addr, port, &v);
}

SEC("cgroup/connect4")
int cordon_connect4(struct bpf_sock_addr *ctx)
{
	return dest4(ctx, CORDON_NET_OP_CONNECT);
}

SEC("cgroup/connect6")
int cordon_connect6(struct bpf_sock_addr *ctx)
{
	return dest6(ctx, CORDON_NET_OP_CONNECT);
}

SEC("cgroup/sendmsg4")
int cordon_sendmsg4(struct bpf_sock_addr *ctx)
{
	return dest4(ctx, CORDON_NET_OP_SENDMSG);
}

SEC("cgroup/sendmsg6")
int cordon_sendmsg6(struct bpf_sock_addr *ctx)
{
	return dest6(ctx, CORDON_NET_OP_SENDMSG);
}

/*
 * bind: loopback only.  A wildcard bind is rewritten to loopback rather than
 * refused, so a dev server that binds 0.0.0.0 still works, reachable from
 * this host only.  Port 0 (any port) is fine.  A session is not kept from
 * binding loopback ports: that is what its own tools need, and what it
 * serves there only local processes can reach.
 */
SEC("cgroup/bind4")
int cordon_bind4(struct bpf_sock_addr *ctx)
{
	struct verdict v = { CORDON_DENY, CORDON_NET_REASON_NONLOCAL, 0 };
	struct caller c;
	__u32 ip = ctx->user_ip4;
	__u16 port = bpf_ntohs((__u16)ctx->user_port);

	caller(&c);
	if (c.who == HOST)
		return PASS;
	if (c.who == STRAY)
		v.reason = CORDON_NET_REASON_NO_SESSION;
	else if (ip == 0) {
		ctx->user_ip4 = bpf_htonl(0x7f000001);
		return PASS;
	} else if ((bpf_ntohl(ip) >> 24) == 127)
		return PASS;
	report(&c, CORDON_NET_OP_BIND, 4, (const __u8 *)&ip, port, 0, &v);
	return DENY;
}

SEC("cgroup/bind6")
int cordon_bind6(struct bpf_sock_addr *ctx)
{
	struct verdict v = { CORDON_DENY, CORDON_NET_REASON_NONLOCAL, 0 };
	struct caller c;
	__u32 w[4];
	__u16 port = bpf_ntohs((__u16)ctx->user_port);

	caller(&c);
	if (c.who == HOST)
		return PASS;
	w[0] = ctx->user_ip6[0];
	w[1] = ctx->user_ip6[1];
	w[2] = ctx->user_ip6[2];
	w[3] = ctx->user_ip6[3];
	if (c.who == STRAY) {
		v.reason = CORDON_NET_REASON_NO_SESSION;
	} else if (w[0] == 0 && w[1] == 0 && w[2] == 0) {
		if (w[3] == 0) {
			/* :: becomes ::1 (the socket then takes IPv6 loopback only). */
			ctx->user_ip6[3] = bpf_htonl(1);
			return PASS;
		}
		if (w[3] == bpf_htonl(1))
			return PASS;
	} else if (w[0] == 0 && w[1] == 0 && w[2] == bpf_htonl(0xffff)) {
		if (w[3] == 0) {
			ctx->user_ip6[3] = bpf_htonl(0x7f000001);
			return PASS;
		}
		if ((bpf_ntohl(w[3]) >> 24) == 127)
			return PASS;
	}
	report(&c, CORDON_NET_OP_BIND, 6, (const __u8 *)w, port, 0, &v);
	return DENY;
}

/*
 * socket: TCP and UDP over IPv4 and IPv6, whose every destination the hooks
 * above judge.  Everything else of the inet families is refused: SOCK_RAW
 * (forged packets, any protocol), ICMP "ping" datagram sockets and SCTP,
 * whose sendmsg runs no cgroup hook, and MPTCP.
 *
 * The other families are written down too, for a kernel that runs this
 * program for them (today's run it from inet_create and inet6_create only):
 * AF_UNIX stays (local IPC); AF_NETLINK only as NETLINK_ROUTE, which glibc's
 * getaddrinfo/if_nameindex and `ip` need: it leaks the interface, address
 * and route listing, and changes nothing without CAP_NET_ADMIN; any other
 * family (AF_PACKET, AF_VSOCK, AF_ALG, AF_KEY, AF_BLUETOOTH, AF_TIPC,
 * AF_RDS, ...) is denied.
 */
SEC("cgroup/sock_create")
int cordon_sock_create(struct bpf_sock *sk)
{
	struct verdict v = { CORDON_DENY, CORDON_NET_REASON_SOCKET_KIND, 0 };
	__u32 family = sk->family, type = sk->type, proto = sk->protocol;
	struct caller c;

	caller(&c);
	if (c.who == HOST)
		return PASS;
	if (c.who == STRAY) {
		v.reason = CORDON_NET_REASON_NO_SESSION;
	} else if (family == AF_INET || family == AF_INET6) {
		if ((type == SOCK_STREAM && proto == IPPROTO_TCP) ||
		    (type == SOCK_DGRAM && proto == IPPROTO_UDP))
			return PASS;
	} else if (family == AF_UNIX) {
		if (type == SOCK_STREAM || type == SOCK_DGRAM || type == SOCK_SEQPACKET)
			return PASS;
	} else if (family == AF_NETLINK) {
		if (proto == NETLINK_ROUTE && (type == SOCK_DGRAM || type == 3 /* SOCK_RAW */))
			return PASS;
	}
	report(&c, CORDON_NET_OP_SOCKET, family, NULL, (__u16)type, (__u16)proto, &v);
	return DENY;
}
