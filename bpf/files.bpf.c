// SPDX-License-Identifier: GPL-2.0
/*
 * Filesystem hooks of the kernel floor.
 *
 * Matching is on objects, not strings: a policy rule's root is an inode
 * (device, inode number) and a request walks up from the target dentry,
 * across mount points, looking every ancestor up in cordon_fs_rules.  A
 * symlink, a relative path, /proc/self/root or a bind mount therefore cannot
 * redirect a rule: whatever name was used, the walk starts from the object
 * the kernel actually resolved.  The walk is bounded (CORDON_WALK_DEPTH);
 * hitting the bound denies and says so in the event.
 *
 * Not closed here: a hardlink to a denied file placed under an allowed
 * directory is reached by a different dentry chain; protected inodes are
 * checked on the target itself by the rules loaded into the same map.
 */
#include "common.bpf.h"

char LICENSE[] SEC("license") = "GPL";

struct walk {
	__u32 allow;
	__u32 deny;
	__u32 allow_rule;
	__u32 deny_rule;
};

/*
 * Accumulate the rights of every rule on the path from dentry to the root of
 * the mount namespace.  Denials from any ancestor win over grants from any
 * other: no rule order surprises.  Returns 0, or -E2BIG if the bound was hit.
 */
static __always_inline int walk_rules(__u32 policy_id, struct dentry *dentry,
				      struct vfsmount *vmnt, struct walk *w)
{
	struct mount *mnt = container_of(vmnt, struct mount, mnt);
	struct cordon_fs_key key = { .policy_id = policy_id };
	struct cordon_fs_rule *rule;
	struct dentry *parent, *root;
	struct mount *up;

	for (int i = 0; i < CORDON_WALK_DEPTH; i++) {
		key.dev = BPF_CORE_READ(dentry, d_sb, s_dev);
		key.ino = BPF_CORE_READ(dentry, d_inode, i_ino);
		rule = bpf_map_lookup_elem(&cordon_fs_rules, &key);
		if (rule) {
			if (rule->deny & ~w->deny)
				w->deny_rule = rule->rule_id;
			if (rule->allow & ~w->allow)
				w->allow_rule = rule->rule_id;
			w->deny |= rule->deny;
			w->allow |= rule->allow;
		}
		parent = BPF_CORE_READ(dentry, d_parent);
		root = BPF_CORE_READ(mnt, mnt.mnt_root);
		if (dentry != root && dentry != parent) {
			dentry = parent;
			continue;
		}
		/* At the root of this mount: continue at its mountpoint. */
		up = BPF_CORE_READ(mnt, mnt_parent);
		if (!up || up == mnt)
			return 0;
		dentry = BPF_CORE_READ(mnt, mnt_mountpoint);
		mnt = up;
	}
	return -E2BIG;
}

/*
 * Decide whether `want` rights are granted on the object at `path`.  Returns
 * 0 or -EACCES and fills *rule_id and *reason for the event.
 */
static __always_inline int decide(__u32 policy_id, const struct path *path,
				  __u32 want, __u32 *rule_id, __u32 *reason)
{
	struct walk w = {};
	struct dentry *dentry = BPF_CORE_READ(path, dentry);
	struct vfsmount *mnt = BPF_CORE_READ(path, mnt);

	if (walk_rules(policy_id, dentry, mnt, &w) < 0) {
		*rule_id = 0;
		*reason = CORDON_REASON_WALK_BOUND;
		return -EACCES;
	}
	if (w.deny & want) {
		*rule_id = w.deny_rule;
		*reason = CORDON_REASON_RULE;
		return -EACCES;
	}
	if ((w.allow & want) != want) {
		*rule_id = 0;
		*reason = CORDON_REASON_DEFAULT;
		return -EACCES;
	}
	*rule_id = w.allow_rule;
	*reason = CORDON_REASON_RULE;
	return 0;
}

/*
 * file_open: read and write by the open mode.  The hook runs on the opened
 * struct file, after path resolution, so it judges the object the caller
 * really got, whichever syscall (open, openat2, io_uring) asked for it.
 */
SEC("lsm.s/file_open")
int BPF_PROG(cordon_file_open, struct file *file, int ret)
{
	struct cordon_session *s;
	struct cordon_event *e;
	__u32 want = 0, rule_id = 0, reason = 0, op;
	__u64 sid = 0;
	unsigned int mode;
	int err;

	if (ret)
		return ret;
	s = current_session(&sid);
	if (!s)
		return 0;

	mode = BPF_CORE_READ(file, f_mode);
	if (mode & FMODE_EXEC)
		want |= CORDON_FS_EXEC;
	else if (mode & FMODE_READ)
		want |= CORDON_FS_READ;
	if (mode & FMODE_WRITE)
		want |= CORDON_FS_WRITE;
	if (!want)
		return 0;
	op = (want & CORDON_FS_WRITE) ? CORDON_OP_OPEN_WRITE : CORDON_OP_OPEN_READ;

	err = decide(s->policy_id, &file->f_path, want, &rule_id, &reason);
	if (err || (want & CORDON_FS_WRITE)) {
		e = event_start(sid, op, err ? CORDON_DENY : CORDON_ALLOW, err,
				rule_id, reason);
		if (e) {
			if (bpf_d_path((struct path *)&file->f_path, e->path, sizeof(e->path)) < 0)
				e->flags |= CORDON_EV_PATH_TRUNCATED;
			bpf_ringbuf_submit(e, 0);
		}
	}
	return err;
}
