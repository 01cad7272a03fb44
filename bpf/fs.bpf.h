/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The filesystem decision shared by the file and exec hooks: walk from an
 * object up to the root of the mount namespace, crossing mount points, and
 * look every ancestor up in the session's rule map by (device, inode).
 *
 * Matching on objects closes redirection: symlinks, "..", /proc/self/root,
 * /proc/self/fd/N, bind mounts and chroots all end at the dentry the kernel
 * resolved, and the walk starts there.  Protected inodes (credential
 * stores, enumerated file by file when the session starts) are found as the
 * walk's first lookup, so a hardlink to one, made before or during the
 * session, or a bind mount of one, is denied wherever it is reached from.
 *
 * Not closed here: a protected file created after the session started and
 * hardlinked elsewhere by someone outside the session (the session itself
 * cannot link it: it has no rights on the source).
 */
#ifndef CORDON_FS_BPF_H
#define CORDON_FS_BPF_H

#include "common.bpf.h"

#define CGROUP_SUPER_MAGIC   0x27e0eb
#define CGROUP2_SUPER_MAGIC  0x63677270
#define BPF_FS_MAGIC         0xcafe4a11

#define W_RIGHTS (CORDON_FS_WRITE | CORDON_FS_CREATE | CORDON_FS_DELETE | CORDON_FS_CHMOD)

struct walk {
	__u32 allow;
	__u32 deny;
	__u32 escalate;
	__u32 allow_rule;
	__u32 deny_rule;
	__u32 deny_invariant;   /* the deny came from a structural invariant */
	__u32 bounded;          /* the walk hit CORDON_WALK_DEPTH */
	__u32 internal;         /* the object lives on a kernel-internal mount */
	__u32 disconnected;     /* the dentry chain ended short of its mount's root */
	__u32 _pad;
};

/*
 * kern_mount()ed filesystems (pipefs, sockfs, shmem behind memfd, anon
 * inodes) carry this marker in mnt_ns.  Their objects have no path in any
 * mount namespace, so no rule can name them; they are reachable only
 * through descriptors the task already holds.  Only this exact marker
 * counts: a detached tree (open_tree clone) is not internal.
 */
#define MNT_NS_INTERNAL ((void *)(long)-22)
#define HUGETLBFS_MAGIC 0x958458f6

struct walk_ctx {
	struct dentry *d;
	struct mount *mnt;
	struct dentry *mnt_root;    /* of mnt, read once per mount */
	struct walk w;
	__u32 dev;                  /* of mnt's superblock, read once per mount */
	__u32 policy_id;
	__u32 done;
	__u32 _pad;
};

/*
 * One step of the walk: look the current dentry up, then move to its
 * parent, or across the mount point at the root of a mount.  bpf_loop runs
 * it, so the verifier checks this body once instead of unrolling the walk.
 *
 * Cost matters here (every open of a session task takes this walk): the
 * device and the mount root change only when a mount is crossed, so a step
 * costs three reads (inode, inode number, parent) and one lookup.  (Plain
 * BTF loads would be cheaper, but pointers that crossed a helper read are
 * scalars to the verifier, and kernels that verify loop callbacks
 * iteratively would refuse them.)
 */
static long walk_step(__u32 i, void *ctx)
{
	struct walk_ctx *c = ctx;
	struct cordon_fs_key key = { .policy_id = c->policy_id, .dev = c->dev };
	struct dentry *d = c->d, *parent;
	struct mount *mnt = c->mnt, *up;
	struct cordon_fs_rule *rule;
	void *ns;

	key.ino = BPF_CORE_READ(d, d_inode, i_ino);
	rule = bpf_map_lookup_elem(&cordon_fs_rules, &key);
	if (rule) {
		if (rule->deny & ~c->w.deny) {
			c->w.deny_rule = rule->deny_rule;
			c->w.deny_invariant = rule->flags & CORDON_RULE_INVARIANT;
		}
		if (rule->allow & ~c->w.allow)
			c->w.allow_rule = rule->allow_rule;
		c->w.deny |= rule->deny;
		c->w.escalate |= rule->escalate;
		c->w.allow |= rule->allow;
	}
	parent = BPF_CORE_READ(d, d_parent);
	if (d != c->mnt_root && d != parent) {
		c->d = parent;
		return 0;
	}
	/*
	 * The top of a dentry chain.  Internal first: kern_mount()ed
	 * filesystems (MNT_NS_INTERNAL) and the private hugetlbfs instance
	 * behind memfd_create(MFD_HUGETLB), which is fc_mount()ed and so has
	 * no namespace at all; their pseudo files are their own parents.
	 */
	/* struct mount comes from container_of: read it with helpers (rare). */
	ns = BPF_CORE_READ(mnt, mnt_ns);
	if (ns == MNT_NS_INTERNAL || (!ns && BPF_CORE_READ(d, d_sb, s_magic) == HUGETLBFS_MAGIC)) {
		c->w.internal = 1;
		c->done = 1;
		return 1;
	}
	if (d != c->mnt_root) {
		/*
		 * A root that is not the mount's root: a disconnected dentry
		 * (open_by_handle_at of an uncached file).  Its real ancestors
		 * are unknown, so the walk cannot vouch for it.
		 */
		c->w.disconnected = 1;
		c->done = 1;
		return 1;
	}
	up = BPF_CORE_READ(mnt, mnt_parent);
	if (!up || up == mnt) {
		c->done = 1;
		return 1;
	}
	c->d = BPF_CORE_READ(mnt, mnt_mountpoint);
	c->mnt = up;
	c->mnt_root = BPF_CORE_READ(up, mnt.mnt_root);
	c->dev = BPF_CORE_READ(up, mnt.mnt_sb, s_dev);
	return 0;
}

/*
 * Accumulate every rule from `d` (in mount `mnt`) to the namespace root.  A
 * deny anywhere beats an allow anywhere: no order surprises.  Returns the
 * number of steps taken.
 */
static __always_inline long walk_full(__u32 policy_id, struct dentry *d, struct mount *mnt,
				      struct dentry *mnt_root, __u32 dev, struct walk *w)
{
	struct walk_ctx c = {
		.d = d, .mnt = mnt, .mnt_root = mnt_root, .dev = dev, .policy_id = policy_id,
	};
	long n = bpf_loop(CORDON_WALK_DEPTH, walk_step, &c, 0);

	*w = c.w;
	w->bounded = !c.done;
	return n;
}

static __always_inline void walk_rules(__u32 policy_id, struct dentry *dentry,
				       struct vfsmount *vmnt, struct walk *w)
{
	walk_full(policy_id, dentry, container_of(vmnt, struct mount, mnt),
		  BPF_CORE_READ(vmnt, mnt_root), BPF_CORE_READ(vmnt, mnt_sb, s_dev), w);
}

/*
 * The directory chain cache.  Every open of a session task would otherwise
 * walk all its ancestors; instead the aggregate of a directory's whole
 * chain is kept, keyed by (policy, mount, device, inode) (the mount, since
 * a bind-mounted directory has other ancestors), and a file costs the
 * lookup of its own inode (never cached: protected files stay exact) plus
 * one cache lookup for its directory.
 *
 * Staleness: a global generation is bumped, for every task in the system,
 * by each directory rename and rmdir and each mount operation, in the hook,
 * before the change happens; an entry carries the generation read before
 * its walk began, so a walk that may have seen the old tree never
 * validates after the change.  What a stale window can still do: a walk
 * that starts between the bump and the change caches the pre-change chain
 * under the new generation.  For a rename that keeps a moved directory's
 * old rights, over objects that had exactly those rights before the move;
 * an rmdir'd inode number reused by a new directory is caught by the dentry
 * pointer check below.
 */
struct walk_cache_key {
	__u32 policy_id;
	__u32 dev;
	__u64 ino;
	__u64 mnt;
};

struct walk_cache_val {
	struct walk w;
	__u64 gen;
	__u64 dentry;           /* the directory's dentry: a reused inode number misses */
	__u32 steps;
	__u32 _pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct walk_cache_key);
	__type(value, struct walk_cache_val);
} cordon_walk_cache SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} cordon_tree_gen SEC(".maps") __weak;

static __always_inline __u64 tree_gen(void)
{
	__u32 zero = 0;
	__u64 *g = bpf_map_lookup_elem(&cordon_tree_gen, &zero);

	return g ? *g : 0;
}

/* Called by every task's directory renames, rmdirs and mount operations. */
static __always_inline void tree_changed(void)
{
	__u32 zero = 0;
	__u64 *g = bpf_map_lookup_elem(&cordon_tree_gen, &zero);

	if (g)
		__sync_fetch_and_add(g, 1);
}

static __always_inline void merge_walk(struct walk *w, const struct walk *p)
{
	if (p->deny & ~w->deny) {
		w->deny_rule = p->deny_rule;
		w->deny_invariant = p->deny_invariant;
	}
	if (p->allow & ~w->allow)
		w->allow_rule = p->allow_rule;
	w->deny |= p->deny;
	w->escalate |= p->escalate;
	w->allow |= p->allow;
	w->bounded |= p->bounded;
	w->internal |= p->internal;
	w->disconnected |= p->disconnected;
}

/* The walk for decisions: the object's own entry, then its directory's chain. */
static __always_inline void walk_cached(__u32 policy_id, struct dentry *d, struct vfsmount *vmnt,
					struct walk *w)
{
	struct mount *mnt = container_of(vmnt, struct mount, mnt);
	struct dentry *mnt_root = BPF_CORE_READ(vmnt, mnt_root);
	__u32 dev = BPF_CORE_READ(vmnt, mnt_sb, s_dev);
	struct dentry *parent = BPF_CORE_READ(d, d_parent);
	struct cordon_fs_key own = { .policy_id = policy_id, .dev = dev };
	struct walk_cache_key ck = { .policy_id = policy_id, .dev = dev, .mnt = (__u64)mnt };
	struct walk_cache_val *cv, nv = {};
	struct cordon_fs_rule *rule;
	__u64 gen;
	long steps;

	if (d == mnt_root || d == parent) {
		/* The top of a chain (a mount root, an internal or disconnected dentry). */
		walk_full(policy_id, d, mnt, mnt_root, dev, w);
		return;
	}
	own.ino = BPF_CORE_READ(d, d_inode, i_ino);
	rule = bpf_map_lookup_elem(&cordon_fs_rules, &own);
	if (rule) {
		w->deny = rule->deny;
		w->deny_rule = rule->deny_rule;
		w->deny_invariant = rule->flags & CORDON_RULE_INVARIANT;
		w->allow = rule->allow;
		w->allow_rule = rule->allow_rule;
		w->escalate = rule->escalate;
	}
	gen = tree_gen();
	ck.ino = BPF_CORE_READ(parent, d_inode, i_ino);
	cv = bpf_map_lookup_elem(&cordon_walk_cache, &ck);
	if (cv && cv->gen == gen && cv->dentry == (__u64)parent) {
		merge_walk(w, &cv->w);
		if (cv->steps + 1 > CORDON_WALK_DEPTH)
			w->bounded = 1;
		return;
	}
	steps = walk_full(policy_id, parent, mnt, mnt_root, dev, &nv.w);
	nv.gen = gen;
	nv.dentry = (__u64)parent;
	nv.steps = (__u32)steps;
	if (!nv.w.bounded)
		bpf_map_update_elem(&cordon_walk_cache, &ck, &nv, BPF_ANY);
	merge_walk(w, &nv.w);
	if (steps + 1 > CORDON_WALK_DEPTH)
		w->bounded = 1;
}

struct verdict {
	int err;
	__u32 decision;
	__u32 rule_id;
	__u32 reason;
};

/* From a walk to a verdict on `want`. */
static __always_inline void judge(const struct walk *w, __u32 want, struct verdict *v)
{
	v->err = -EACCES;
	v->decision = CORDON_DENY;
	v->rule_id = 0;
	if (w->internal && !(w->deny & want)) {
		/* A pipe, socket or memfd the task holds: not the policy's to name. */
		v->err = 0;
		v->decision = CORDON_ALLOW;
		v->reason = CORDON_REASON_INTERNAL;
	} else if (w->bounded || w->disconnected) {
		v->reason = w->bounded ? CORDON_REASON_WALK_BOUND : CORDON_REASON_DISCONNECTED;
	} else if (w->deny & want) {
		v->reason = w->deny_invariant ? CORDON_REASON_PROTECTED : CORDON_REASON_RULE;
		v->rule_id = w->deny_rule;
	} else if (w->escalate & want) {
		v->reason = CORDON_REASON_ESCALATE;
		v->decision = CORDON_ESCALATE;
	} else if ((w->allow & want) != want) {
		v->reason = CORDON_REASON_DEFAULT;
	} else {
		v->err = 0;
		v->decision = CORDON_ALLOW;
		v->reason = CORDON_REASON_RULE;
		v->rule_id = w->allow_rule;
	}
}

/*
 * Control filesystems are judged by superblock, whatever path reaches them:
 * cgroupfs is never changed by a session (it could leave its cgroup or lift
 * its limits) and bpffs is never touched (cordon's pinned maps live there).
 */
enum fs_class {
	FS_PLAIN = 0,
	FS_CGROUP,
	FS_BPF,
};

static __always_inline __u32 fs_class(struct dentry *d)
{
	unsigned long magic = BPF_CORE_READ(d, d_sb, s_magic);

	if (magic == CGROUP_SUPER_MAGIC || magic == CGROUP2_SUPER_MAGIC)
		return FS_CGROUP;
	return magic == BPF_FS_MAGIC ? FS_BPF : FS_PLAIN;
}

static __always_inline int control_class(__u32 class, __u32 want, struct verdict *v)
{
	if ((class == FS_CGROUP && (want & W_RIGHTS)) || class == FS_BPF) {
		v->err = -EACCES;
		v->decision = CORDON_DENY;
		v->rule_id = 0;
		v->reason = CORDON_REASON_CONTROL_FS;
		return 1;
	}
	return 0;
}

static __always_inline int control_fs(struct dentry *d, __u32 want, struct verdict *v)
{
	return control_class(fs_class(d), want, v);
}

/*
 * The verdict cache: what walk_cached and control_fs concluded for one
 * dentry seen through one mount, under one policy.  A hit needs the same
 * inode (a dentry turned positive, or a reused dentry, misses) and the same
 * tree generation (see walk_cached: every rename, rmdir and mount operation
 * in the system bumps it).  It holds the whole walk, not a verdict, so one
 * entry answers every right.
 */
struct verdict_key {
	__u32 policy_id;
	__u32 _pad;
	__u64 dentry;
	__u64 mnt;
};

struct verdict_val {
	struct walk w;
	__u64 gen;
	__u64 inode;
	__u32 class;            /* enum fs_class of the dentry's superblock */
	__u32 _pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct verdict_key);
	__type(value, struct verdict_val);
} cordon_verdict_cache SEC(".maps") __weak;

/* The whole decision for `want` on the object at (d, m). */
static __always_inline void decide(__u32 policy_id, struct dentry *d, struct vfsmount *m,
				   __u32 want, struct verdict *v)
{
	struct verdict_key k = { .policy_id = policy_id, .dentry = (__u64)d, .mnt = (__u64)m };
	__u64 inode = (__u64)BPF_CORE_READ(d, d_inode);
	__u64 gen = tree_gen();
	struct verdict_val *cv, nv = {};

	cv = bpf_map_lookup_elem(&cordon_verdict_cache, &k);
	if (cv && cv->gen == gen && cv->inode == inode) {
		if (!control_class(cv->class, want, v))
			judge(&cv->w, want, v);
		return;
	}
	nv.gen = gen;
	nv.inode = inode;
	nv.class = fs_class(d);
	walk_cached(policy_id, d, m, &nv.w);
	if (!nv.w.bounded)
		bpf_map_update_elem(&cordon_verdict_cache, &k, &nv, BPF_ANY);
	if (!control_class(nv.class, want, v))
		judge(&nv.w, want, v);
}

/* Per-CPU scratch for building a path from dentry names. */
struct path_scratch {
	char path[CORDON_EVENT_PATH];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct path_scratch);
} cordon_path_scratch SEC(".maps") __weak;

struct names_ctx {
	struct dentry *d;
	struct mount *mnt;
	__u32 off;
	__u32 done;
};

static long names_step(__u32 i, void *ctx)
{
	struct names_ctx *c = ctx;
	struct dentry *d = c->d, *parent, *root;
	struct mount *mnt = c->mnt, *up;
	struct path_scratch *ps;
	const unsigned char *name;
	__u32 zero = 0, off = c->off;
	long n;

	parent = BPF_CORE_READ(d, d_parent);
	root = BPF_CORE_READ(mnt, mnt.mnt_root);
	if (d == root || d == parent) {
		up = BPF_CORE_READ(mnt, mnt_parent);
		if (!up || up == mnt) {
			c->done = 1;
			return 1;
		}
		c->d = BPF_CORE_READ(mnt, mnt_mountpoint);
		c->mnt = up;
		return 0;
	}
	ps = bpf_map_lookup_elem(&cordon_path_scratch, &zero);
	if (!ps || off >= CORDON_EVENT_PATH / 2)
		return 1;
	name = BPF_CORE_READ(d, d_name.name);
	barrier_var(off);       /* keep the mask (common.bpf.h, loop callbacks) */
	n = bpf_probe_read_kernel_str(&ps->path[off & (CORDON_EVENT_PATH / 2 - 1)],
				      CORDON_EVENT_PATH / 2, name);
	if (n <= 0)
		return 1;
	c->off = off + (__u32)n;
	c->d = parent;
	return 0;
}

/*
 * An event's path without bpf_d_path (not allowed in non-sleepable hooks):
 * the names from the leaf up, NUL-separated, ending with an empty name, for
 * userspace to reverse.
 */
static __always_inline void path_components(struct cordon_event *e, struct dentry *d,
					    struct vfsmount *vm)
{
	struct names_ctx c = { .d = d, .mnt = container_of(vm, struct mount, mnt),
			       .off = (__u32)opaque_zero() };
	struct path_scratch *ps;
	__u32 zero = 0;

	e->flags |= CORDON_EV_PATH_COMPONENTS;
	ps = bpf_map_lookup_elem(&cordon_path_scratch, &zero);
	if (!ps)
		return;
	bpf_loop(48, names_step, &c, 0);
	if (!c.done)
		e->flags |= CORDON_EV_PATH_TRUNCATED;
	ps->path[c.off & (CORDON_EVENT_PATH - 1)] = 0;
	__builtin_memcpy(e->path, ps->path, sizeof(e->path));
}

/* Report a verdict from a non-sleepable hook. */
static __always_inline void report_walk(__u64 sid, __u32 op, const struct verdict *v,
					struct dentry *d, struct vfsmount *m)
{
	struct cordon_event *e = event_start(sid, op, v->decision, v->err, v->rule_id, v->reason);

	if (!e)
		return;
	path_components(e, d, m);
	bpf_ringbuf_submit(e, 0);
}

/* Report a verdict from a sleepable hook, with the kernel's own d_path. */
static __always_inline void report_path(__u64 sid, __u32 op, const struct verdict *v,
					const struct path *path)
{
	struct cordon_event *e = event_start(sid, op, v->decision, v->err, v->rule_id, v->reason);

	if (!e)
		return;
	if (bpf_d_path((struct path *)path, e->path, sizeof(e->path)) < 0)
		e->flags |= CORDON_EV_PATH_TRUNCATED;
	bpf_ringbuf_submit(e, 0);
}

#endif /* CORDON_FS_BPF_H */
