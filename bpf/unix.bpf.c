// SPDX-License-Identifier: GPL-2.0
/*
 * Unix sockets: the doors into other processes on the same machine (the
 * container engine, the session bus, an ssh-agent, a database).  The
 * cgroup-bpf network floor sees only AF_INET and AF_INET6, so these are
 * judged here, on the socket the kernel found, after path resolution:
 *
 * - a pathname socket is a file: connecting to it, or sending to it, needs
 *   the write right on the socket's inode where it was bound (the
 *   listener's own path: unix_sk(other)->path), by the floor's object
 *   decision.  A symlink, a hardlink made elsewhere, /proc/self/root or a
 *   bind mount reaches the same bound dentry, so none of them redirects the
 *   rule, and the invariants (docker.sock and the like) hold wherever the
 *   socket is reached from.
 * - an abstract socket (a name in a flat kernel namespace, no file, no
 *   permissions at all) is the session's own IPC when the socket was
 *   created inside the same session (its cgroup, recorded at creation, is
 *   the session's or below it) and refused otherwise: the host's D-Bus,
 *   X11, systemd and container-runtime abstract sockets are out of reach.
 * - an unbound peer (socketpair, or a datagram socket that never bound) can
 *   only be reached by a task that already holds the other end: allowed.
 *
 * Only denials are events: unix_may_send runs for every datagram, and an
 * allowed connect moves no data into the file.
 *
 * What this cannot close: sockets whose descriptors the session already
 * holds (inherited from its launcher or passed over SCM_RIGHTS): the
 * supervisor must not hand any in; a listener outside the session that
 * connects out to a socket of the session; and the abstract namespace's
 * names, which a session can still learn (/proc/net/unix).
 */
#include "fs.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* In hardening.bpf.c: the session cgroup id above a cgroup, 0 for the host. */
extern __u64 cordon_cgroup_session(struct cgroup *cg);

struct unix_verdict {
	struct verdict v;
	struct dentry *d;       /* pathname socket: where it was bound */
	struct vfsmount *m;
};

/*
 * Judge a connect or send from session `sid` (policy `policy_id`) to the
 * Unix socket `other`.
 */
static __always_inline void judge_peer(__u64 sid, __u32 policy_id, struct sock *other,
				       struct unix_verdict *u)
{
	struct unix_sock *us = container_of(other, struct unix_sock, sk);
	struct unix_address *addr = BPF_CORE_READ(us, addr);
	char first = 0;

	u->v.err = 0;
	u->v.decision = CORDON_ALLOW;
	u->v.rule_id = 0;
	u->v.reason = CORDON_REASON_INTERNAL;
	u->d = NULL;
	u->m = NULL;
	if (!addr)
		return;                 /* unbound: socketpair or never bound */
	if (bpf_probe_read_kernel(&first, 1, (void *)addr +
				  bpf_core_field_offset(struct unix_address, name) +
				  __builtin_offsetof(struct sockaddr_un, sun_path)))
		first = 0;
	if (!first) {
		/* Abstract (or autobound, also abstract): same session only. */
		if (cordon_cgroup_session(BPF_CORE_READ(other, sk_cgrp_data.cgroup)) == sid)
			return;
		u->v.err = -EPERM;
		u->v.decision = CORDON_DENY;
		u->v.reason = CORDON_REASON_HARDENING;
		return;
	}
	u->d = BPF_CORE_READ(us, path.dentry);
	u->m = BPF_CORE_READ(us, path.mnt);
	if (!u->d || !u->m) {
		/* A pathname without a bound file: the kernel never makes one. */
		u->v.err = -EACCES;
		u->v.decision = CORDON_DENY;
		u->v.reason = CORDON_REASON_DISCONNECTED;
		return;
	}
	decide(policy_id, u->d, u->m, CORDON_FS_WRITE, &u->v);
}

static __always_inline int unix_check(__u32 op, struct sock *other)
{
	struct cordon_session *s;
	struct unix_verdict u;
	struct cordon_event *e;
	__u64 sid = 0;

	s = current_session(&sid);
	if (!s || !other)
		return 0;
	judge_peer(sid, s->policy_id, other, &u);
	if (!u.v.err)
		return 0;
	if (u.d && u.m) {
		report_walk(sid, op, &u.v, u.d, u.m);
	} else {
		e = event_start(sid, op, u.v.decision, u.v.err, u.v.rule_id, u.v.reason);
		if (e) {
			/* The abstract name, after its leading NUL, as "@name". */
			struct unix_address *addr =
				BPF_CORE_READ(container_of(other, struct unix_sock, sk), addr);

			e->path[0] = '@';
			if (!addr || bpf_probe_read_kernel_str(&e->path[1], 107, (void *)addr +
					bpf_core_field_offset(struct unix_address, name) +
					__builtin_offsetof(struct sockaddr_un, sun_path) + 1) < 0)
				e->path[1] = 0;
			bpf_ringbuf_submit(e, 0);
		}
	}
	return u.v.err;
}

/* connect() of a stream or seqpacket socket, under the listener's lock. */
SEC("lsm/unix_stream_connect")
int BPF_PROG(cordon_unix_stream_connect, struct sock *sock, struct sock *other,
	     struct sock *newsk, int ret)
{
	if (ret)
		return ret;
	return unix_check(CORDON_OP_UNIX_CONNECT, other);
}

/* connect() and every sendmsg() of a datagram socket. */
SEC("lsm/unix_may_send")
int BPF_PROG(cordon_unix_may_send, struct socket *sock, struct socket *other, int ret)
{
	if (ret)
		return ret;
	return unix_check(CORDON_OP_UNIX_SEND, BPF_CORE_READ(other, sk));
}
