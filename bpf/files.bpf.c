// SPDX-License-Identifier: GPL-2.0
/*
 * Filesystem hooks of the kernel floor: file_open and the path_* hooks.
 * Every decision is fs.bpf.h's object walk; see there for what it closes.
 *
 * Rights: open for read/write by the open mode; create (files, fifos,
 * sockets, directories, symlinks) on the parent directory; delete on the
 * object; truncate as write; chmod/chown as chmod.  Links and renames also
 * obey the REFER rule (Landlock's idea): the new place may not grant the
 * object any right it did not have where it was, so moving or linking a
 * file cannot launder a denial.
 */
#include "fs.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define RENAME_EXCHANGE (1 << 1)
#define S_IFMT  00170000
#define S_IFDIR 0040000
#define S_IFCHR 0020000
#define S_IFBLK 0060000

/* Rights a walk finally grants: allowed and neither denied nor escalated. */
static __always_inline __u32 effective(const struct walk *w)
{
	return w->bounded ? 0 : (w->allow & ~(w->deny | w->escalate));
}

/*
 * file_open runs on the opened struct file, after path resolution, so it
 * judges the object the caller got whichever syscall asked (open, openat2,
 * io_uring, /proc/self/fd re-opens).
 */
SEC("lsm.s/file_open")
int BPF_PROG(cordon_file_open, struct file *file, int ret)
{
	struct cordon_session *s;
	struct verdict v;
	__u32 want = 0, op;
	__u64 sid = 0;
	unsigned int mode;

	if (ret)
		return ret;
	s = current_session(&sid);
	if (!s || fs_override(NULL))
		return 0;
	/*
	 * The exec open (execve, uselib) is marked by __FMODE_EXEC in f_flags;
	 * it needs the exec right, not read, as Landlock also has it.
	 */
	mode = BPF_CORE_READ(file, f_mode);
	if (BPF_CORE_READ(file, f_flags) & __FMODE_EXEC)
		want |= CORDON_FS_EXEC;
	else if (mode & FMODE_READ)
		want |= CORDON_FS_READ;
	if (mode & FMODE_WRITE)
		want |= CORDON_FS_WRITE;
	if (!want)
		return 0;
	op = (want & CORDON_FS_WRITE) ? CORDON_OP_OPEN_WRITE :
	     (want & CORDON_FS_EXEC) ? CORDON_OP_EXEC : CORDON_OP_OPEN_READ;
	/* Fileless exec is refused before any rule is asked (see exec.bpf.c). */
	if ((want & CORDON_FS_EXEC) && BPF_CORE_READ(file, f_inode, i_nlink) == 0) {
		v.err = -EACCES;
		v.decision = CORDON_DENY;
		v.rule_id = 0;
		v.reason = CORDON_REASON_FILELESS;
	} else {
		decide(s->policy_id, file->f_path.dentry, file->f_path.mnt, want, &v);
	}
	if (v.err || (want & CORDON_FS_WRITE))
		report_path(sid, op, &v, &file->f_path);
	return v.err;
}

/* Creation of `dentry` in `dir`: the create right on the directory. */
static __always_inline int on_create(const struct path *dir, struct dentry *dentry, __u32 op)
{
	struct cordon_session *s;
	struct verdict v;
	__u64 sid = 0;

	s = current_session(&sid);
	if (!s)
		return 0;
	decide(s->policy_id, BPF_CORE_READ(dir, dentry), BPF_CORE_READ(dir, mnt),
	       CORDON_FS_CREATE, &v);
	report_walk(sid, op, &v, dentry, BPF_CORE_READ(dir, mnt));
	return v.err;
}

/* An operation on an existing object: `want` on the object itself. */
static __always_inline int on_object(struct dentry *d, struct vfsmount *m, __u32 want, __u32 op)
{
	struct cordon_session *s;
	struct verdict v;
	__u64 sid = 0;

	s = current_session(&sid);
	if (!s)
		return 0;
	decide(s->policy_id, d, m, want, &v);
	report_walk(sid, op, &v, d, m);
	return v.err;
}


/*
 * Device nodes are never created by a session: a new node for a disk or
 * /dev/mem is a new inode, so no rule or protected entry would know it.
 */
SEC("lsm/path_mknod")
int BPF_PROG(cordon_path_mknod, const struct path *dir, struct dentry *dentry, umode_t mode,
	     unsigned int dev, int ret)
{
	struct cordon_session *s;
	__u64 sid = 0;

	if (ret)
		return ret;
	if ((mode & S_IFMT) == S_IFCHR || (mode & S_IFMT) == S_IFBLK) {
		struct verdict v = { .err = -EPERM, .decision = CORDON_DENY,
				     .reason = CORDON_REASON_HARDENING };

		s = current_session(&sid);
		if (!s)
			return 0;
		report_walk(sid, CORDON_OP_CREATE, &v, dentry, BPF_CORE_READ(dir, mnt));
		return -EPERM;
	}
	return on_create(dir, dentry, CORDON_OP_CREATE);
}

SEC("lsm/path_mkdir")
int BPF_PROG(cordon_path_mkdir, const struct path *dir, struct dentry *dentry, umode_t mode,
	     int ret)
{
	if (ret)
		return ret;
	return on_create(dir, dentry, CORDON_OP_MKDIR);
}

SEC("lsm/path_symlink")
int BPF_PROG(cordon_path_symlink, const struct path *dir, struct dentry *dentry,
	     const char *old_name, int ret)
{
	if (ret)
		return ret;
	return on_create(dir, dentry, CORDON_OP_SYMLINK);
}

SEC("lsm/path_unlink")
int BPF_PROG(cordon_path_unlink, const struct path *dir, struct dentry *dentry, int ret)
{
	if (ret)
		return ret;
	return on_object(dentry, BPF_CORE_READ(dir, mnt), CORDON_FS_DELETE, CORDON_OP_UNLINK);
}

SEC("lsm/path_rmdir")
int BPF_PROG(cordon_path_rmdir, const struct path *dir, struct dentry *dentry, int ret)
{
	if (ret)
		return ret;
	tree_changed();         /* any task's rmdir: cached chains may be stale */
	return on_object(dentry, BPF_CORE_READ(dir, mnt), CORDON_FS_DELETE, CORDON_OP_RMDIR);
}

SEC("lsm/path_truncate")
int BPF_PROG(cordon_path_truncate, const struct path *path, int ret)
{
	if (ret)
		return ret;
	return on_object(BPF_CORE_READ(path, dentry), BPF_CORE_READ(path, mnt), CORDON_FS_WRITE,
			 CORDON_OP_TRUNCATE);
}

SEC("lsm/path_chmod")
int BPF_PROG(cordon_path_chmod, const struct path *path, umode_t mode, int ret)
{
	if (ret)
		return ret;
	return on_object(BPF_CORE_READ(path, dentry), BPF_CORE_READ(path, mnt), CORDON_FS_CHMOD,
			 CORDON_OP_CHMOD);
}

SEC("lsm/path_chown")
int BPF_PROG(cordon_path_chown, const struct path *path, __u64 uid, __u64 gid, int ret)
{
	if (ret)
		return ret;
	return on_object(BPF_CORE_READ(path, dentry), BPF_CORE_READ(path, mnt), CORDON_FS_CHMOD,
			 CORDON_OP_CHOWN);
}

static __always_inline void deny_refer(struct verdict *v)
{
	v->err = -EXDEV;     /* what Landlock answers: callers fall back to copying */
	v->decision = CORDON_DENY;
	v->rule_id = 0;
	v->reason = CORDON_REASON_REFER;
}

/*
 * A new name for an existing file.  The link lives in the same mount as the
 * file (the kernel refuses EXDEV otherwise), so new_dir's mount is the
 * file's.
 */
SEC("lsm/path_link")
int BPF_PROG(cordon_path_link, struct dentry *old_dentry, const struct path *new_dir,
	     struct dentry *new_dentry, int ret)
{
	struct vfsmount *m = BPF_CORE_READ(new_dir, mnt);
	struct walk src = {}, dst = {};
	struct cordon_session *s;
	struct verdict v;
	__u64 sid = 0;

	if (ret)
		return ret;
	s = current_session(&sid);
	if (!s)
		return 0;
	decide(s->policy_id, BPF_CORE_READ(new_dir, dentry), m, CORDON_FS_CREATE, &v);
	if (!v.err && !control_fs(old_dentry, CORDON_FS_CREATE, &v)) {
		walk_rules(s->policy_id, old_dentry, m, &src);
		walk_rules(s->policy_id, BPF_CORE_READ(new_dir, dentry), m, &dst);
		if (effective(&dst) & ~effective(&src))
			deny_refer(&v);
	}
	report_walk(sid, CORDON_OP_LINK, &v, old_dentry, m);
	return v.err;
}

/*
 * rename: delete at the source, create at the destination (and delete of
 * whatever the destination replaces), and REFER between the two parent
 * directories: the object keeps its own rules wherever it goes, so only the
 * inherited rights are compared.  RENAME_EXCHANGE moves both ways.
 */
SEC("lsm/path_rename")
int BPF_PROG(cordon_path_rename, const struct path *old_dir, struct dentry *old_dentry,
	     const struct path *new_dir, struct dentry *new_dentry, unsigned int flags, int ret)
{
	struct vfsmount *om = BPF_CORE_READ(old_dir, mnt), *nm = BPF_CORE_READ(new_dir, mnt);
	struct walk src = {}, dst = {};
	struct cordon_session *s;
	struct verdict v;
	__u64 sid = 0;
	__u32 se, de;

	if (ret)
		return ret;
	/*
	 * Any task's rename changes where something stands: cached chains
	 * below a moved directory, and the cached verdict of a moved file.
	 */
	tree_changed();
	s = current_session(&sid);
	if (!s)
		return 0;
	decide(s->policy_id, old_dentry, om, CORDON_FS_DELETE, &v);
	if (!v.err)
		decide(s->policy_id, BPF_CORE_READ(new_dir, dentry), nm, CORDON_FS_CREATE, &v);
	if (!v.err && BPF_CORE_READ(new_dentry, d_inode))
		decide(s->policy_id, new_dentry, nm, CORDON_FS_DELETE, &v);
	if (!v.err && (flags & RENAME_EXCHANGE))
		decide(s->policy_id, BPF_CORE_READ(old_dir, dentry), om, CORDON_FS_CREATE, &v);
	if (!v.err) {
		walk_rules(s->policy_id, BPF_CORE_READ(old_dir, dentry), om, &src);
		walk_rules(s->policy_id, BPF_CORE_READ(new_dir, dentry), nm, &dst);
		se = effective(&src);
		de = effective(&dst);
		if ((de & ~se) || ((flags & RENAME_EXCHANGE) && (se & ~de)))
			deny_refer(&v);
	}
	report_walk(sid, CORDON_OP_RENAME, &v, old_dentry, om);
	return v.err;
}
