/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Helpers and maps shared by cordon's BPF programs.  Maps are declared
 * __weak so that every hook file can include this header and the libbpf
 * linker (`bpftool gen object`) merges the declarations into one map.
 */
#ifndef CORDON_COMMON_BPF_H
#define CORDON_COMMON_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "cordon.h"

#define EPERM   1
#define EACCES  13
#define E2BIG   7
#define EXDEV   18

#define FMODE_READ   0x1
#define FMODE_WRITE  0x2
#define FMODE_EXEC   0x20
#define __FMODE_EXEC 0x20          /* in f_flags: the open is for exec */

#ifndef container_of
#define container_of(ptr, type, member) \
	((type *)((void *)(ptr) - __builtin_offsetof(type, member)))
#endif

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cordon_config);
} cordon_config SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CORDON_MAX_SESSIONS);
	__type(key, __u64);
	__type(value, struct cordon_session);
} cordon_sessions SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CORDON_MAX_FS_RULES);
	__type(key, struct cordon_fs_key);
	__type(value, struct cordon_fs_rule);
} cordon_fs_rules SEC(".maps") __weak;

/* Events of tasks whose session has no ring buffer of its own (none today). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
} cordon_events SEC(".maps") __weak;

/*
 * One ring buffer per session, so that each session's supervisor reads its
 * own events and a flood in one session cannot make another drop.
 */
struct session_rb {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, CORDON_SESSION_RINGBUF);
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH_OF_MAPS);
	__uint(max_entries, CORDON_MAX_SESSIONS);
	__type(key, __u64);
	__array(values, struct session_rb);
} cordon_session_events SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CORDON_CNT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} cordon_counters SEC(".maps") __weak;

static __always_inline void count(__u32 which)
{
	__u64 *v = bpf_map_lookup_elem(&cordon_counters, &which);

	if (v)
		*v += 1;
}

/*
 * What a stray is judged as (its one entry, all zero): a session with
 * policy 0, which no session has (the loader skips it), so no rule allows
 * it anything.  A map, not a global, so that every program of the floor
 * shares it.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cordon_session);
} cordon_stray SEC(".maps") __weak;

/*
 * Loop callbacks and kernels that verify them once.
 *
 * Before Linux 6.7 ("bpf: verify callbacks as if they are called unknown
 * number of times") the verifier checked a bpf_loop callback once, with
 * the state its caller passed in, and never with the state the callback
 * itself leaves for the next iteration; branches it found untaken in that
 * one pass were removed as dead code.  A counter that starts at a known 0
 * then never meets its own bound: on Debian's 6.1 the xattr hook's count of
 * mounts ran past its array and wrote over the kernel stack (an oops at
 * 0x40 once a session had more than XATTR_PLACES mounts of a filesystem).
 *
 * The rule for every callback here: its memory safety does not depend on
 * the verifier knowing the loop's state.  State a callback branches on
 * starts from opaque_zero(), a value read from a map (a zero the verifier
 * cannot know, so it checks both sides of every branch on it), and an
 * index into an array is masked after barrier_var(), so that the compiler
 * cannot drop the mask on the strength of an earlier check.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} cordon_opaque SEC(".maps") __weak;

static __always_inline __u64 opaque_zero(void)
{
	__u32 zero = 0;
	__u64 *v = bpf_map_lookup_elem(&cordon_opaque, &zero);

	return v ? *v : 0;      /* nothing writes it: 0 at run time */
}

/*
 * The session the current task belongs to, or NULL for host tasks.  The
 * answer comes from the task's cgroup, which every descendant inherits
 * through fork, clone, daemonising, setsid and re-parenting, and which a
 * session task cannot change (cgroupfs writes are denied to it).
 *
 * A task in a cgroup at the session level below cordon's parent that no
 * session registered is a stray, not a host task: such a cgroup was made
 * behind cordon's back, or its session's floor was reloaded under it (a
 * new build's maps do not know the sessions of the old one), or it is
 * being torn down.  It gets cordon_stray: every hook denies it everything,
 * where passing it as a host task would leave an agent unconfined.
 */
static __always_inline struct cordon_session *current_session(__u64 *sid)
{
	struct cordon_session *s;
	struct cordon_config *cfg;
	__u32 zero = 0;
	__u64 id;

	cfg = bpf_map_lookup_elem(&cordon_config, &zero);
	if (!cfg || !cfg->session_level)
		return NULL;
	id = bpf_get_current_ancestor_cgroup_id(cfg->session_level);
	if (!id)
		return NULL;
	*sid = id;
	s = bpf_map_lookup_elem(&cordon_sessions, &id);
	if (!s && cfg->parent_id &&
	    bpf_get_current_ancestor_cgroup_id(cfg->session_level - 1) == cfg->parent_id)
		return bpf_map_lookup_elem(&cordon_stray, &zero);
	return s;
}

/*
 * A filesystem working for its mounter inside a session task's call:
 * overlayfs (the agent's home layer, userspace/session/home.h) opens its layers'
 * files and sets their trusted.overlay.* attributes under the mounter's
 * credentials, put in place of the task's by the kernel (override_creds).
 * Those hold CAP_SYS_ADMIN, which a session's own credentials never do
 * (every capability dropped, the bounding set emptied, no_new_privs), so
 * only the kernel can have put them there.  What the task asked for was
 * judged on the overlay's own object, where its rules are; the layer's
 * files (below /var/lib/cordon) are the filesystem's business.  ASKED: the
 * credentials a capability check is about (NULL for an open): only the
 * overriding ones count, never a host opener's handed in with a descriptor.
 * The low 32 bits of kernel_cap_t hold CAP_SYS_ADMIN in every layout.
 */
#define CAP_SYS_ADMIN_BIT (1u << 21)

static __always_inline bool fs_override(const struct cred *asked)
{
	struct task_struct *t = bpf_get_current_task_btf();
	const struct cred *c = t->cred, *real = t->real_cred;
	__u32 eff = 0, own = 0;

	if (c == real || (asked && asked != c))
		return false;
	bpf_probe_read_kernel(&eff, sizeof(eff), &c->cap_effective);
	bpf_probe_read_kernel(&own, sizeof(own), &real->cap_effective);
	return (eff & CAP_SYS_ADMIN_BIT) && !(own & CAP_SYS_ADMIN_BIT);
}

/*
 * Reserve and fill the common part of an event.  A full ring buffer is
 * counted, never silently ignored: userspace reports the drop counter.
 */
static __always_inline struct cordon_event *
event_start(__u64 sid, __u32 op, __u32 decision, int err, __u32 rule_id, __u32 reason)
{
	struct cordon_event *e;
	__u64 pid_tgid;

	void *rb = bpf_map_lookup_elem(&cordon_session_events, &sid);
	struct cordon_session *s;

	e = rb ? bpf_ringbuf_reserve(rb, sizeof(*e), 0)
	       : bpf_ringbuf_reserve(&cordon_events, sizeof(*e), 0);
	if (!e) {
		count(CORDON_CNT_DROPS);
		s = bpf_map_lookup_elem(&cordon_sessions, &sid);
		if (s)
			__sync_fetch_and_add(&s->drops, 1);
		return NULL;
	}
	count(CORDON_CNT_EVENTS);
	pid_tgid = bpf_get_current_pid_tgid();
	e->ts_ns = bpf_ktime_get_ns();
	e->session = sid;
	e->pid = pid_tgid >> 32;
	e->tid = (__u32)pid_tgid;
	e->uid = (__u32)bpf_get_current_uid_gid();
	e->op = op;
	e->decision = decision;
	e->err = err;
	e->rule_id = rule_id;
	e->reason = reason;
	e->flags = 0;
	e->_pad = 0;
	e->path[0] = 0;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	return e;
}

#endif /* CORDON_COMMON_BPF_H */
