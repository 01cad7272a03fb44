// SPDX-License-Identifier: GPL-2.0
/*
 * What a session may never do, whatever its policy and even as root.
 *
 * Mounts: a session task that could mount could put a writable filesystem
 * over a path a rule trusts, bind a protected tree somewhere else, remount
 * something read-write, or mount its own cgroup2 and move itself out; so
 * every mount operation is refused: sb_mount (mount, bind, remount, move,
 * propagation changes), move_mount (the new mount API's attach step, which
 * fsopen/fsmount need), sb_umount and sb_pivotroot.  What this cannot close:
 * mounts made before the session started (the walk crosses them, and binds
 * of protected inodes are still denied by inode).
 */
#include "fs.bpf.h"

char LICENSE[] SEC("license") = "GPL";

static __always_inline int refuse(__u32 op, struct dentry *d, struct vfsmount *m)
{
	struct cordon_session *s;
	struct verdict v = { .err = -EPERM, .decision = CORDON_DENY,
			     .reason = CORDON_REASON_HARDENING };
	__u64 sid = 0;

	/* Any task's mount changes: the chain cache must not outlive the tree. */
	tree_changed();
	s = current_session(&sid);
	if (!s)
		return 0;
	if (d && m)
		report_walk(sid, op, &v, d, m);
	else {
		struct cordon_event *e = event_start(sid, op, v.decision, v.err, 0, v.reason);
		if (e)
			bpf_ringbuf_submit(e, 0);
	}
	return -EPERM;
}

SEC("lsm/sb_mount")
int BPF_PROG(cordon_sb_mount, const char *dev_name, const struct path *path, const char *type,
	     unsigned long flags, void *data, int ret)
{
	if (ret)
		return ret;
	return refuse(CORDON_OP_MOUNT, BPF_CORE_READ(path, dentry), BPF_CORE_READ(path, mnt));
}

SEC("lsm/move_mount")
int BPF_PROG(cordon_move_mount, const struct path *from_path, const struct path *to_path, int ret)
{
	if (ret)
		return ret;
	return refuse(CORDON_OP_MOUNT, BPF_CORE_READ(to_path, dentry), BPF_CORE_READ(to_path, mnt));
}

SEC("lsm/sb_umount")
int BPF_PROG(cordon_sb_umount, struct vfsmount *mnt, int flags, int ret)
{
	if (ret)
		return ret;
	return refuse(CORDON_OP_UMOUNT, BPF_CORE_READ(mnt, mnt_root), mnt);
}

SEC("lsm/sb_pivotroot")
int BPF_PROG(cordon_sb_pivotroot, const struct path *old_path, const struct path *new_path,
	     int ret)
{
	if (ret)
		return ret;
	return refuse(CORDON_OP_PIVOT_ROOT, BPF_CORE_READ(new_path, dentry),
		      BPF_CORE_READ(new_path, mnt));
}
