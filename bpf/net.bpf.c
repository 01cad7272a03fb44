// SPDX-License-Identifier: GPL-2.0
/*
 * The network floor: cgroup-bpf programs attached once to <cgroup2>/cordon,
 * so that every session cgroup below it is covered and no host task ever is.
 * A separate object from the LSM floor: cgroup-bpf works on kernels that
 * refuse LSM programs.  It needs cgroup-bpf and the kernel's BTF (to read
 * the caller's cgroup, caller_sid), nothing of the LSM.
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
 *   destination the hooks above see;
 * - inbound traffic from outside the host (cgroup_skb/ingress): a socket the
 *   kernel autobound to the wildcard without the bind hook (listen() on an
 *   unbound socket, a UDP sendto or connect, even one the floor refused)
 *   receives from another interface nothing if it listens, only its peer's
 *   packets if it is connected (a peer judged at connect), and otherwise only
 *   what comes from an address and port the policy lets the session reach;
 *   loopback (every local address, whatever it is called) still passes;
 * - stealing a host service's traffic on a shared port (cgroup/setsockopt):
 *   SO_REUSEPORT, which joins a same-uid listener's reuseport group and
 *   takes a share of its connections (on loopback too), and SO_REUSEADDR
 *   on UDP, which shares a bound port, are refused.  SO_REUSEADDR on TCP
 *   passes: it cannot join a listening port on Linux, and dev servers set it.
 *
 * What it cannot close:
 * - a socket created outside the session and passed in (SCM_RIGHTS): the
 *   kernel runs the programs of the socket's cgroup, not the caller's;
 *   only cordon's own processes can hand a session such a socket;
 * - on loopback, a session's listener is reachable by every local process
 *   (what its own tools need); a reply to an allowed peer is judged by the
 *   peer's address and port, so anyone who can spoof an allowed source
 *   reaches an autobound UDP socket (as a firewall allowing that peer would);
 *   an IPv6 packet with extension headers is dropped, not parsed;
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
#include <bpf/bpf_core_read.h>
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
#define SOL_SOCKET   1
#define SO_REUSEADDR 2
#define SO_REUSEPORT 15
#define LOOPBACK_IFINDEX 1      /* every network namespace's lo */
#define SOCKOPT_PAGE 4096       /* what the kernel copies of a setsockopt value */

/*
 * cgroup sock_addr, sock and sockopt programs: 1 lets the call through, 0 is
 * -EPERM.  cgroup_skb: 1 delivers the packet, 0 drops it.
 */
#define PASS 1
#define DENY 0

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cordon_net_config);
} net_config SEC(".maps");

/*
 * Sessions and their rules, keyed by (family, session cgroup id, address):
 * see struct cordon_net_key.  A connect or sendmsg looks its destination up
 * once, and a hit is judged without asking whether the caller is a session:
 * only a registered session's id can be in a key (the loader writes nothing
 * else), cgroup ids are never reused, and the id is the caller's own
 * ancestor at the session level, so the caller is inside that session.
 * Only a miss asks who the caller is (its session's own entry, then the
 * parent), to tell a default deny from a stray from a host task.
 *
 * The price: connect and sendmsg do not see the session's own entry come and
 * go.  The loader therefore writes a session's rules most specific first and
 * its own entry last, and removes its own entry first and its rules least
 * specific first (loader/net.c), so that while it changes a lookup answers
 * what the full rule set would, or misses (a denial): never more than the
 * policy allows, and nothing once net_session_del has returned.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, CORDON_MAX_NET_RULES + CORDON_MAX_SESSIONS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct cordon_net_key);
	__type(value, struct cordon_net_rule);
} net_rules SEC(".maps");

/*
 * Events of a session without a ring of its own (a test's, or one whose
 * cordon predates per-session rings) and of strays.
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, CORDON_NET_RINGBUF);
} net_events SEC(".maps");

/*
 * Each session's own ring buffer (loader/net.c, net_ring_open), read by its
 * own supervisor into its own audit log.  Attack it closes: with one ring
 * for every session, an agent flooding refused sends fills the ring and
 * another session's kernel denials are lost (or, with several readers, read
 * into the wrong log).  Per session, a flood costs only the flooder's own
 * records, and those losses are counted in net_drops under its id.
 */
struct net_session_rb {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, CORDON_NET_SESSION_RINGBUF);
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH_OF_MAPS);
	__uint(max_entries, CORDON_MAX_SESSIONS);
	__type(key, __u64);
	__array(values, struct net_session_rb);
} net_session_events SEC(".maps");

/* Events each session's ring could not take: key its id, value the count. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CORDON_MAX_SESSIONS);
	__type(key, __u64);
	__type(value, __u64);
} net_drops SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CORDON_NET_CNT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} net_counters SEC(".maps");

/* When this CPU last reported an ingress drop (CORDON_NET_INGRESS_EVENT_NS). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} net_ingress_last SEC(".maps");

/*
 * Where sessions live, fixed when the object is loaded (a parent cgroup
 * recreated later has a new id: the loader then reloads).  The config map
 * carries the same for the loader's staleness check.
 */
const volatile __u32 session_level = 0;
const volatile __u64 parent_id = 0;

/*
 * The caller's session id: the calling task's cgroup at the session level,
 * which every descendant inherits and a session cannot change.  The
 * programs run for sockets created below cordon's parent, but the caller
 * decides, not the socket: a socket made in a session and used from
 * elsewhere is judged as the user's.  0 for a task above the session level.
 *
 * A session's tasks normally sit in the session cgroup itself, so the
 * task's own cgroup (its css_set's default-hierarchy cgroup, read through
 * the task's BTF pointer) is the answer when it is at the session level:
 * the same cgroup bpf_get_current_ancestor_cgroup_id would find, without
 * the helper's rcu_read_lock and rcu_read_unlock calls (cgroup programs run
 * inside an RCU read section already, which keeps the css_set and the
 * cgroup alive).  A task in a cgroup further down asks the helper.  A field
 * that read as 0 (it cannot for a live task) gives no session: denied.
 */
static __always_inline __u64 caller_sid(void)
{
	struct task_struct *t;
	struct cgroup *cg;

	if (session_level < 1)
		return 0;       /* not configured: no session, nothing allowed */
	t = bpf_get_current_task_btf();
	cg = t->cgroups->dfl_cgrp;
	if (cg->level == session_level)
		return cg->kn->id;
	return bpf_get_current_ancestor_cgroup_id(session_level);
}

/* Who is calling: a registered session, a stray cgroup below cordon's parent, or the host. */
enum who { HOST, STRAY, SESSION };

/*
 * A registered session has its own entry.  A host task using a socket made
 * below the parent (one a session passed out) is the host's business; a
 * task below the parent in a cgroup no session registered (created behind
 * cordon's back, or a session torn down half-way) is denied everything:
 * fail closed.
 */
static __always_inline enum who who_is(__u64 sid)
{
	struct cordon_net_key key = {
		.prefixlen = CORDON_NET_KEY_BITS,
		.family = CORDON_NET_FAMILY_SESSION,
		.session = sid,
	};

	if (session_level < 1)
		return STRAY;
	if (bpf_map_lookup_elem(&net_rules, &key))
		return SESSION;
	if (bpf_get_current_ancestor_cgroup_id(session_level - 1) != parent_id)
		return HOST;
	return STRAY;
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

/*
 * A ring buffer record with the verdict, in the session's own ring when it
 * has one; the caller fills in the rest and submits it.  NULL when the
 * buffer is full: counted as a drop globally and, for a session with a
 * drops entry, under its id.  The whole record is zeroed: the buffer hands
 * out memory as the last reader left it.
 */
static __always_inline struct cordon_net_event *event_reserve(__u64 sid, __u32 op, __u32 family,
							      const struct verdict *v)
{
	void *rb = bpf_map_lookup_elem(&net_session_events, &sid);
	struct cordon_net_event *e;
	__u64 *drops;

	e = rb ? bpf_ringbuf_reserve(rb, sizeof(*e), 0)
	       : bpf_ringbuf_reserve(&net_events, sizeof(*e), 0);
	if (!e) {
		count(CORDON_CNT_DROPS);
		drops = bpf_map_lookup_elem(&net_drops, &sid);
		if (drops)
			__sync_fetch_and_add(drops, 1);
		return NULL;
	}
	count(CORDON_CNT_EVENTS);
	__builtin_memset(e, 0, sizeof(*e));
	e->ts_ns = bpf_ktime_get_ns();
	e->session = sid;
	e->op = op;
	e->family = family;
	e->decision = v->decision;
	e->reason = v->reason;
	e->rule_id = v->rule_id;
	return e;
}

/* event_reserve, with the calling task (the socket hooks run in it). */
static __always_inline struct cordon_net_event *event_new(__u64 sid, __u32 op, __u32 family,
							  const struct verdict *v)
{
	struct cordon_net_event *e = event_reserve(sid, op, family, v);

	if (!e)
		return NULL;
	e->pid = bpf_get_current_pid_tgid() >> 32;
	e->uid = (__u32)bpf_get_current_uid_gid();
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	return e;
}

static __always_inline void report(__u64 sid, __u32 op, __u32 family, const __u8 *addr,
				   __u16 port, __u16 proto, const struct verdict *v)
{
	struct cordon_net_event *e = event_new(sid, op, family, v);

	if (!e)
		return;
	e->port = port;
	e->proto = proto;
	if (addr && family == 4)
		__builtin_memcpy(e->addr, addr, 4);
	else if (addr)
		__builtin_memcpy(e->addr, addr, 16);
	bpf_ringbuf_submit(e, 0);
}

/*
 * The strongest decision among the ranges covering the port, from the most
 * specific prefix (whose value carries every covering prefix's ranges).
 * Escalate is a deny here: the kernel cannot hold a connect for a human.
 */
static __always_inline void judge(const struct cordon_net_rule *rule, __u16 port,
				  struct verdict *v)
{
	int found = 0;

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
	if (!found)
		return;         /* the default deny v came with */
	v->reason = v->rule_id == CORDON_NET_RULE_CORDON ? CORDON_NET_REASON_CORDON
							 : CORDON_NET_REASON_RULE;
}

/*
 * A connect or sendmsg to key's destination: one lookup (see net_rules).
 * Every denial is an event.  An allowed connect is one only for a session
 * that asked (CORDON_NET_SESSION_ALLOW_EVENTS): the supervisor audits
 * connects from seccomp user notification, and an allowed sendmsg, one per
 * datagram, never is.
 */
static __always_inline int destination(const struct cordon_net_key *key, __u32 op, __u16 port)
{
	const struct cordon_net_rule *rule = bpf_map_lookup_elem(&net_rules, key);
	struct verdict v = { CORDON_DENY, CORDON_NET_REASON_DEFAULT, 0 };

	if (rule) {
		judge(rule, port, &v);
		if (v.decision == CORDON_ALLOW) {
			if (op == CORDON_NET_OP_CONNECT &&
			    (rule->flags & CORDON_NET_SESSION_ALLOW_EVENTS))
				report(key->session, op, key->family, key->addr, port, 0, &v);
			return PASS;
		}
	} else {
		switch (who_is(key->session)) {
		case HOST:
			return PASS;
		case STRAY:
			v.reason = CORDON_NET_REASON_NO_SESSION;
			break;
		case SESSION:
			break;
		}
	}
	report(key->session, op, key->family, key->addr, port, 0, &v);
	return DENY;
}

/*
 * A sockaddr whose family does not match the hook: the bytes the hook reads
 * are not the address the kernel would use.  Refused, but for the host.
 */
static __always_inline int wrong_family(const struct cordon_net_key *key, __u32 op, __u16 port)
{
	struct verdict v = { CORDON_DENY, CORDON_NET_REASON_FAMILY, 0 };

	if (who_is(key->session) == HOST)
		return PASS;
	report(key->session, op, key->family, key->addr, port, 0, &v);
	return DENY;
}

/* Destination of an IPv4 connect or sendmsg: 0.0.0.0 means the local host. */
static __always_inline int dest4(struct bpf_sock_addr *ctx, __u32 op)
{
	struct cordon_net_key key = {
		.prefixlen = CORDON_NET_KEY_BITS + 32,
		.family = 4,
		.session = caller_sid(),
	};
	__u32 ip = ctx->user_ip4;
	__u16 port = bpf_ntohs((__u16)ctx->user_port);

	if (ip == 0)
		ip = bpf_htonl(0x7f000001);
	__builtin_memcpy(key.addr, &ip, 4);
	if (ctx->user_family != AF_INET)
		return wrong_family(&key, op, port);
	return destination(&key, op, port);
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
	struct cordon_net_key key = { .session = caller_sid() };
	__u32 w[4];
	__u16 port = bpf_ntohs((__u16)ctx->user_port);

	w[0] = ctx->user_ip6[0];
	w[1] = ctx->user_ip6[1];
	w[2] = ctx->user_ip6[2];
	w[3] = ctx->user_ip6[3];
	if (w[0] == 0 && w[1] == 0 && w[2] == bpf_htonl(0xffff)) {
		key.family = 4;
		key.prefixlen = CORDON_NET_KEY_BITS + 32;
		if (w[3] == 0)
			w[3] = bpf_htonl(0x7f000001);
		__builtin_memcpy(key.addr, &w[3], 4);
	} else {
		key.family = 6;
		key.prefixlen = CORDON_NET_KEY_BITS + 128;
		if (!(w[0] | w[1] | w[2] | w[3]))
			w[3] = bpf_htonl(1);
		__builtin_memcpy(key.addr, w, 16);
	}
	if (ctx->user_family != AF_INET6)
		return wrong_family(&key, op, port);
	return destination(&key, op, port);
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
	__u64 sid = caller_sid();
	enum who who = who_is(sid);
	__u32 ip = ctx->user_ip4;
	__u16 port = bpf_ntohs((__u16)ctx->user_port);

	if (who == HOST)
		return PASS;
	if (who == STRAY)
		v.reason = CORDON_NET_REASON_NO_SESSION;
	else if (ip == 0) {
		ctx->user_ip4 = bpf_htonl(0x7f000001);
		return PASS;
	} else if ((bpf_ntohl(ip) >> 24) == 127)
		return PASS;
	report(sid, CORDON_NET_OP_BIND, 4, (const __u8 *)&ip, port, 0, &v);
	return DENY;
}

SEC("cgroup/bind6")
int cordon_bind6(struct bpf_sock_addr *ctx)
{
	struct verdict v = { CORDON_DENY, CORDON_NET_REASON_NONLOCAL, 0 };
	__u64 sid = caller_sid();
	enum who who = who_is(sid);
	__u32 w[4];
	__u16 port = bpf_ntohs((__u16)ctx->user_port);

	if (who == HOST)
		return PASS;
	w[0] = ctx->user_ip6[0];
	w[1] = ctx->user_ip6[1];
	w[2] = ctx->user_ip6[2];
	w[3] = ctx->user_ip6[3];
	if (who == STRAY) {
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
	report(sid, CORDON_NET_OP_BIND, 6, (const __u8 *)w, port, 0, &v);
	return DENY;
}

/*
 * Pathname Unix sockets, for a session registered with
 * CORDON_NET_SESSION_UNIX_GATE (the fallback posture, where no LSM judges a
 * Unix socket by its object).  The kernel runs these programs on its own
 * copy of the address, before it resolves the path (unix_stream_connect,
 * unix_dgram_connect, unix_dgram_sendmsg with a destination: Linux 6.7's
 * cgroup unix hooks), for every syscall that gets there: connect,
 * sendto, sendmsg, sendmmsg, io_uring.
 *
 * A task of the session may not name a pathname socket itself: the
 * supervisor judges each connect it traps by the canonical path and has
 * the session's Unix connector (userspace/channel/unix_connector.h) perform an
 * allowed one on a copy of the socket: a process outside the session, so
 * it passes.  What that closes:
 * - a connect whose address read as abstract, or as not Unix at all, when
 *   the supervisor judged it, and was rewritten to a path by another
 *   thread before the kernel copied it: refused here;
 * - a datagram sent with a pathname destination (the host's syslog, a
 *   service's control socket), which no seccomp filter can see (sendmsg's
 *   address is in memory): refused.  connect() then send() still works,
 *   judged as a connect.
 * Abstract names pass: Landlock's scoping (ABI 6) refuses those created
 * outside the session, on the kernel's copy too.  An unnamed address
 * (autobind) is refused by the kernel before these programs run.
 *
 * What it cannot close: a host task connecting on a socket of the session
 * (only cordon's own processes hold one); a kernel without the hooks (the
 * posture then lists unix-gate missing).
 */
/* Weak: Linux 6.2 kfuncs; on an older kernel the object still loads, without the gate. */
extern void *bpf_cast_to_kern_ctx(void *obj) __ksym __weak;
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;

static __always_inline int unix_gate(struct bpf_sock_addr *ctx, __u32 op)
{
	struct bpf_sock_addr_kern *k = bpf_cast_to_kern_ctx(ctx);
	struct cordon_net_key key = {
		.prefixlen = CORDON_NET_KEY_BITS,
		.family = CORDON_NET_FAMILY_SESSION,
		.session = caller_sid(),
	};
	struct verdict v = { CORDON_DENY, CORDON_NET_REASON_UNIX_PATH, 0 };
	const struct cordon_net_rule *self = bpf_map_lookup_elem(&net_rules, &key);
	struct sockaddr_un *un;
	struct cordon_net_event *e;
	__u32 len = k->uaddrlen;

	if (!self) {
		if (who_is(key.session) == HOST)
			return PASS;
		v.reason = CORDON_NET_REASON_NO_SESSION;
	} else if (!(self->flags & CORDON_NET_SESSION_UNIX_GATE)) {
		return PASS;            /* the LSM floor judges the socket by object */
	}
	un = bpf_rdonly_cast(k->uaddr, bpf_core_type_id_kernel(struct sockaddr_un));
	if (self && (len <= __builtin_offsetof(struct sockaddr_un, sun_path) || !un->sun_path[0]))
		return PASS;            /* abstract: Landlock's scope */
	e = event_new(key.session, op, AF_UNIX, &v);
	if (!e)
		return DENY;
	for (int i = 0; i < CORDON_NET_UNIX_PATH; i++) {
		if (i + __builtin_offsetof(struct sockaddr_un, sun_path) >= len || !un->sun_path[i])
			break;
		e->path[i] = un->sun_path[i];
	}
	bpf_ringbuf_submit(e, 0);
	return DENY;
}

/*
 * The section names of Linux 6.7; the loader sets the program type and
 * attach type itself, for a libbpf that predates them.
 */
SEC("cgroup/connect_unix")
int cordon_connect_unix(struct bpf_sock_addr *ctx)
{
	return unix_gate(ctx, CORDON_NET_OP_UNIX_CONNECT);
}

SEC("cgroup/sendmsg_unix")
int cordon_sendmsg_unix(struct bpf_sock_addr *ctx)
{
	return unix_gate(ctx, CORDON_NET_OP_UNIX_SENDMSG);
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
	__u64 sid = caller_sid();
	enum who who = who_is(sid);

	if (who == HOST)
		return PASS;
	if (who == STRAY) {
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
	report(sid, CORDON_NET_OP_SOCKET, family, NULL, (__u16)type, (__u16)proto, &v);
	return DENY;
}

/*
 * Where a packet delivered to a socket came from: key gets the remote
 * address as connect would judge it (IPv4-mapped IPv6 as IPv4), *port the
 * remote port.  The program sees the packet from its network header.  -1
 * for anything but TCP or UDP right after a plain IPv4 or IPv6 header (an
 * IPv6 extension header is not walked: such a packet is dropped).
 */
static __always_inline int remote_of(struct __sk_buff *skb, struct cordon_net_key *key,
				     __u16 *port)
{
	__u32 l4;
	__u16 sport;
	__u8 vihl;

	if (bpf_skb_load_bytes(skb, 0, &vihl, 1))
		return -1;
	if (vihl >> 4 == 4) {
		struct iphdr ip;

		if (bpf_skb_load_bytes(skb, 0, &ip, sizeof(ip)) ||
		    (ip.protocol != IPPROTO_TCP && ip.protocol != IPPROTO_UDP))
			return -1;
		l4 = (__u32)(vihl & 0xf) * 4;
		key->family = 4;
		key->prefixlen = CORDON_NET_KEY_BITS + 32;
		__builtin_memcpy(key->addr, &ip.saddr, 4);
	} else if (vihl >> 4 == 6) {
		struct ipv6hdr ip6;
		__u32 w[4];

		if (bpf_skb_load_bytes(skb, 0, &ip6, sizeof(ip6)) ||
		    (ip6.nexthdr != IPPROTO_TCP && ip6.nexthdr != IPPROTO_UDP))
			return -1;
		l4 = sizeof(ip6);
		__builtin_memcpy(w, &ip6.saddr, 16);
		if (w[0] == 0 && w[1] == 0 && w[2] == bpf_htonl(0xffff)) {
			key->family = 4;
			key->prefixlen = CORDON_NET_KEY_BITS + 32;
			__builtin_memcpy(key->addr, &w[3], 4);
		} else {
			key->family = 6;
			key->prefixlen = CORDON_NET_KEY_BITS + 128;
			__builtin_memcpy(key->addr, w, 16);
		}
	} else {
		return -1;
	}
	if (bpf_skb_load_bytes(skb, l4, &sport, 2))
		return -1;
	*port = bpf_ntohs(sport);
	return 0;
}

/*
 * One event per CPU per CORDON_NET_INGRESS_EVENT_NS at most: a flood of
 * packets costs the counter and this check, no ring record each.  The
 * event runs in no task (softirq): no pid, uid or comm.
 */
static __always_inline void ingress_report(const struct cordon_net_key *key, __u16 port,
					   struct verdict *v)
{
	struct cordon_net_key self = {
		.prefixlen = CORDON_NET_KEY_BITS,
		.family = CORDON_NET_FAMILY_SESSION,
		.session = key->session,
	};
	struct cordon_net_event *e;
	__u32 zero = 0;
	__u64 *last = bpf_map_lookup_elem(&net_ingress_last, &zero), now = bpf_ktime_get_ns();

	if (!last || now - *last < CORDON_NET_INGRESS_EVENT_NS)
		return;
	*last = now;
	if (v->reason == CORDON_NET_REASON_DEFAULT && !bpf_map_lookup_elem(&net_rules, &self))
		v->reason = CORDON_NET_REASON_NO_SESSION;
	e = event_reserve(key->session, CORDON_NET_OP_INGRESS, key->family, v);
	if (!e)
		return;
	e->port = port;
	if (key->family == 4)
		__builtin_memcpy(e->addr, key->addr, 4);
	else
		__builtin_memcpy(e->addr, key->addr, 16);
	bpf_ringbuf_submit(e, 0);
}

/*
 * Packets for the sockets of sessions (the socket's cgroup decides: this
 * runs where the packet is queued to it, in no task of the session).
 *
 * Attack: a socket the kernel bound to the wildcard without the bind hook
 * (listen() on an unbound socket; a UDP sendto or connect, even one the
 * floor refused, autobinds first) is reachable from other hosts: a
 * listener accepts their connections, a UDP socket takes their datagrams.
 *
 * Anything that came in on loopback passes: every local address is
 * delivered through lo, and the session's own tools talk there.  From any
 * other interface:
 * - a listener gets nothing (a SYN and the handshake's last ACK run this
 *   program on the listener);
 * - a connected socket (TCP, connected UDP) gets its packets: the kernel
 *   delivers to it only what comes from its peer, and that peer was judged
 *   when it connected, by connect4/6 or, for an approved escalation, by the
 *   supervisor, which connects a copy of the socket itself (a per-packet
 *   policy lookup would drop that approved peer's replies);
 * - any other socket (unconnected UDP) only what comes from an address and
 *   port the session may connect to, judged by the same lookup as connect:
 *   the reply of an allowed DNS server arrives, nobody else's datagram
 *   does.  A socket of a cgroup no session registered (a stray, a session
 *   deleted) has no rule: dropped.
 */
SEC("cgroup_skb/ingress")
int cordon_ingress(struct __sk_buff *skb)
{
	struct verdict v = { CORDON_DENY, CORDON_NET_REASON_DEFAULT, 0 };
	struct cordon_net_key key = {};
	const struct cordon_net_rule *rule;
	struct bpf_sock *sk;
	__u16 port = 0;

	if (skb->ingress_ifindex == LOOPBACK_IFINDEX)
		return PASS;
	key.session = session_level ? bpf_skb_ancestor_cgroup_id(skb, session_level) : 0;
	sk = skb->sk;
	if (sk)
		sk = bpf_sk_fullsock(sk);
	if (remote_of(skb, &key, &port) < 0) {
		v.reason = CORDON_NET_REASON_NOT_INET;
	} else if (sk && sk->state == BPF_TCP_LISTEN) {
		v.reason = CORDON_NET_REASON_LISTENER;
	} else if (sk && sk->dst_port) {
		return PASS;            /* connected: its peer was judged at connect */
	} else {
		rule = bpf_map_lookup_elem(&net_rules, &key);
		if (rule) {
			judge(rule, port, &v);
			if (v.decision == CORDON_ALLOW)
				return PASS;
		}
	}
	count(CORDON_NET_CNT_INGRESS_DROPS);
	ingress_report(&key, port, &v);
	return DENY;
}

/*
 * Socket options of sessions' sockets (every socket this program sees was
 * made below cordon's parent).
 *
 * Attack: SO_REUSEPORT on a port a host service of the same uid listens on
 * (loopback included) joins its reuseport group, and the kernel hands the
 * session a share of the service's connections or datagrams; SO_REUSEADDR
 * on a UDP socket lets it bind a host service's port and take its
 * datagrams.  Both are refused (EPERM) when they would turn the option on;
 * turning one off passes.  SO_REUSEADDR on TCP passes: Linux never lets it
 * bind a port a socket listens on, and dev servers set it.
 *
 * Everything else passes untouched.  The kernel hands this program at most
 * SOCKOPT_PAGE bytes of the value; for a longer one optlen 0 tells it to use
 * the caller's own (without it, kernels before 6.5 fail the call, EFAULT).
 */
SEC("cgroup/setsockopt")
int cordon_setsockopt(struct bpf_sockopt *ctx)
{
	int *val = ctx->optval;

	if (ctx->level == SOL_SOCKET &&
	    (ctx->optname == SO_REUSEPORT ||
	     (ctx->optname == SO_REUSEADDR && ctx->sk->type != SOCK_STREAM))) {
		if ((void *)(val + 1) > ctx->optval_end || *val != 0) {
			count(CORDON_NET_CNT_SOCKOPT);
			return DENY;
		}
	}
	if (ctx->optlen > SOCKOPT_PAGE)
		ctx->optlen = 0;
	return PASS;
}
