/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The network floor: cgroup-bpf programs (bpf/net.bpf.c) attached once to
 * <cgroup2>/cordon and pinned under /sys/fs/bpf/cordon/net, so that every
 * session cgroup below it is confined and later opens reuse them.  It is
 * independent of the LSM floor (loader/floor.c) and works where that one
 * cannot load: it needs cgroup-bpf and the kernel's BTF only.
 *
 * A session here is a cgroup id (at the session level below cordon's parent)
 * with the direct net rules of its policy; a task below the parent whose
 * cgroup is not registered is denied everything.
 */
#ifndef CORDON_NET_H
#define CORDON_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cordon.h"

struct net;
struct policy;

/*
 * Open the pinned network floor, or load, attach and pin it if it is absent,
 * partial, built from another BPF object, or attached to a cordon parent
 * cgroup that is no longer there.  All or nothing: on failure nothing stays
 * attached or pinned.
 */
int net_open(struct net **out);
void net_close(struct net *n);
/* Detach and unpin (sessions still running lose their network floor). */
int net_unload(void);

/*
 * Register a session: the policy's direct net rules (pol_compile_net) are
 * merged per prefix and written, most specific first, then the session's own
 * entry, last: while this runs, the session's tasks get what the policy
 * allows or a denial, never more (bpf/net.bpf.c, net_rules).  flags:
 * CORDON_NET_SESSION_ALLOW_EVENTS for an event per allowed connect as well
 * (denials always are events); CORDON_NET_SESSION_UNIX_GATE to refuse the
 * session's own connects and sends to pathname Unix sockets (the fallback,
 * whose supervisor performs the allowed ones; see net_unix_gate).  -EEXIST if
 * the cgroup is registered already, -E2BIG if a prefix would carry more than
 * CORDON_NET_RANGES port ranges or the rule map is full, -EINVAL for cgroup
 * id 0 or an unknown flag.
 */
int net_session_add(struct net *n, uint64_t cgroup_id, const struct policy *p, uint32_t flags);

/*
 * Let the session reach addr:port (cordon's own proxies on loopback).
 * family is AF_INET or AF_INET6; addr a struct in_addr or in6_addr (an
 * IPv4-mapped IPv6 address is stored as IPv4).  The entry joins whatever the
 * policy says of that address: a policy deny covering it still wins.
 */
int net_session_allow(struct net *n, uint64_t cgroup_id, int family, const void *addr,
		      uint16_t port);

/*
 * Forget a session: its own entry first (new sockets and binds are refused at
 * once), then its rules, least specific first: while this runs, a connect or
 * sendmsg gets what the policy allowed or a denial; once it has returned 0, the
 * session's tasks, if any remain, are denied everything.  -ENOENT if the
 * cgroup is not registered; another error if a rule could not be deleted
 * (call again: a rule left behind still lets the cgroup's tasks through).
 */
int net_session_del(struct net *n, uint64_t cgroup_id);

/*
 * Forget sessions whose cgroup no longer exists (their cordon and its
 * watchdog died before net_session_del): rules, rings, drops, and the exec
 * expectations of its threads that are gone.  Returns how many sessions
 * were removed, or -errno.
 */
int net_gc(struct net *n);

typedef int (*net_event_fn)(void *ctx, const struct cordon_net_event *e);

/*
 * Deliver pending events (denials, and allowed connects of sessions that
 * asked for them) of every session without a ring of its own (net_ring_open)
 * and of strays to fn; waits up to timeout_ms.  Returns the number delivered
 * or -errno.  The buffer is shared: one consumer at a time.
 */
int net_poll(struct net *n, int timeout_ms, net_event_fn fn, void *ctx);

/*
 * A session's own ring buffer for its network floor events
 * (CORDON_NET_SESSION_RINGBUF bytes), so that each supervisor reads its own
 * session's kernel denials into its own log and a flood in one session
 * cannot make another lose them.  Open it before net_session_add, so that
 * none of the session's events goes to the shared ring.  Events the ring
 * cannot take are counted under the session (net_ring_drops).  -EEXIST if
 * the session has a ring already.  The ring holds n: close it first.
 */
struct net_ring;
int net_ring_open(struct net *n, uint64_t cgroup_id, struct net_ring **out);
/* An fd that polls readable when events are pending, or -errno. */
int net_ring_fd(struct net_ring *g);
/* Deliver pending events to fn; waits up to timeout_ms.  The number delivered or -errno. */
int net_ring_poll(struct net_ring *g, int timeout_ms, net_event_fn fn, void *ctx);
/* Events the session's ring could not take so far. */
int net_ring_drops(const struct net_ring *g, uint64_t *out);
/* Unregister the ring (net_session_del does too) and free it; pending events are lost. */
void net_ring_close(struct net_ring *g);

/*
 * Totals of the per-CPU counters: CORDON_CNT_EVENTS, CORDON_CNT_DROPS and
 * the network floor's own (enum cordon_net_counter).
 */
int net_counter(struct net *n, uint32_t which, uint64_t *out);

const char *net_op_name(uint32_t op);
const char *net_reason_name(uint32_t reason);
/* "1.2.3.4:80" or "[::1]:80" (socket events: "family F type T proto P"; unix
 * ones: "unix PATH"). */
void net_event_str(const struct cordon_net_event *e, char *out, size_t len);

/*
 * Whether the unix gate (bpf/net.bpf.c's cgroup connect_unix and
 * sendmsg_unix programs, Linux 6.7) is attached: without it
 * CORDON_NET_SESSION_UNIX_GATE is accepted and changes nothing.
 */
bool net_unix_gate(const struct net *n);

/*
 * The exec recheck (bpf/exec_recheck.bpf.c), loaded with the network floor
 * where the kernel accepts its programs.  net_exec_recheck: whether it is
 * attached.  net_exec_hash: the keyed hash both sides compute (SipHash-2-4
 * under the key the loader drew for this load).  net_exec_arm: what the supervisor
 * judged an exec of thread tid (in the initial PID namespace) on, written
 * before the exec is let go on (-EOPNOTSUPP without the recheck, -E2BIG
 * when full).  net_exec_killed: 1 if the kernel killed tid's exec for not
 * matching (the record is then removed), 0 if the expectation still waits,
 * -ENOENT if it was met or its thread exited.  An expectation binds
 * e->cgroup: a task in another cgroup under that tid is not judged (its
 * stale entry is dropped).  net_exec_disarm: drop tid's expectation unless
 * the kernel has marked a kill on it.
 */
bool net_exec_recheck(const struct net *n);
uint64_t net_exec_hash(const struct cordon_exec_key *k, const void *buf, size_t len);
/*
 * The expectation of an exec judged on path (execve's, or execveat's with
 * dirfd), argv (NULL-terminated, as read) and canon (the canonical path of
 * the binary judged).  -ENAMETOOLONG, -ENOMEM.
 */
int net_exec_expect(const struct net *n, bool at, int dirfd, const char *path, char *const *argv,
		    const char *canon, struct cordon_exec_expect *e);
/*
 * The same, with canon's stat and statfs already taken (from the file the
 * caller resolved canon from), or NULL to take them here.
 */
struct stat;
struct statfs;
int net_exec_expect_known(const struct net *n, bool at, int dirfd, const char *path,
			  char *const *argv, const char *canon, const struct stat *st,
			  const struct statfs *sf, struct cordon_exec_expect *e);
int net_exec_arm(struct net *n, uint32_t tid, const struct cordon_exec_expect *e);
int net_exec_killed(struct net *n, uint32_t tid);
void net_exec_disarm(struct net *n, uint32_t tid);

#endif /* CORDON_NET_H */
