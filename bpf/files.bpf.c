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

/*
 * inotify_add_watch and fanotify_mark: a watch reports the names made,
 * opened, changed and removed in a directory (or a file's opens), which
 * is what listing and reading it tell, so it needs the read right there.
 * Attack: an agent watched /run/cordon, /home and /etc, which it may not
 * list, and learnt other sessions' names and when host processes opened
 * /etc/passwd.  The fallback has no hook for it (posture.c, fs-notify).
 */
SEC("lsm/path_notify")
int BPF_PROG(cordon_path_notify, const struct path *path, __u64 mask, unsigned int obj_type,
	     int ret)
{
	if (ret)
		return ret;
	return on_object(BPF_CORE_READ(path, dentry), BPF_CORE_READ(path, mnt), CORDON_FS_READ,
			 CORDON_OP_NOTIFY);
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

/* --- extended attributes and POSIX ACLs ------------------------------------ */

/*
 * Attack: root in a session (or the owner of a file) sets a POSIX ACL with
 * setxattr(system.posix_acl_access / _default) and so grants what chmod was
 * refused; or writes security.* (a file capability a host user later runs,
 * an LSM label) or trusted.* (overlayfs' and others' private metadata).
 * An ACL or any system.* change is judged as the chmod right on the object
 * (path_chmod's walk), user.* as write, and security.*, trusted.* and any
 * namespace the kernel may add are refused to a session outright.
 *
 * The hooks name a dentry, not a path, and the walk needs the mount to
 * cross into the parent mounts.  The object is placed through every mount
 * of its superblock in the caller's mount namespace that shows it (a bind
 * mount of another subtree does not, and is skipped), and the right must
 * hold through each of them: the strictest of the places it can be reached
 * from.  A kernel-internal object (a memfd, a socket) is judged as
 * file_open judges one.
 *
 * What it cannot close, failing closed instead: an object no mount of the
 * caller's namespace shows (a detached open_tree mount, a layer below
 * overlayfs, which overlayfs changes through its private mount), more than
 * XATTR_PLACES such mounts, or a superblock with more than XATTR_MOUNTS
 * mounts system-wide to look through: all refused, reason "disconnected".
 */
#define XATTR_PLACES  4
#define XATTR_MOUNTS  1024

struct mount___list {
	struct list_head mnt_instance;
} __attribute__((preserve_access_index));

struct super_block___list {
	struct list_head s_mounts;
} __attribute__((preserve_access_index));

struct mount___hlist {
	struct mount *mnt_next_for_sb;
} __attribute__((preserve_access_index));

struct super_block___hlist {
	struct mount *s_mounts;
} __attribute__((preserve_access_index));

/*
 * A superblock's mounts: a list_head chain through mnt_instance up to 6.7,
 * a NULL-terminated chain through mnt_next_for_sb after.  Read with CO-RE;
 * the layout the kernel lacks is dead code.
 */
static __always_inline struct mount *sb_mount_at(struct super_block *sb, struct list_head *n)
{
	void *head = (void *)sb + bpf_core_field_offset(struct super_block___list, s_mounts);

	if (!n || (void *)n == head)
		return NULL;
	return (void *)n - bpf_core_field_offset(struct mount___list, mnt_instance);
}

static __always_inline struct mount *sb_first_mount(struct super_block *sb)
{
	if (bpf_core_field_exists(struct mount___list, mnt_instance))
		return sb_mount_at(sb, BPF_CORE_READ((struct super_block___list *)sb, s_mounts.next));
	return BPF_CORE_READ((struct super_block___hlist *)sb, s_mounts);
}

static __always_inline struct mount *sb_next_mount(struct super_block *sb, struct mount *m)
{
	if (bpf_core_field_exists(struct mount___list, mnt_instance))
		return sb_mount_at(sb, BPF_CORE_READ((struct mount___list *)m, mnt_instance.next));
	return BPF_CORE_READ((struct mount___hlist *)m, mnt_next_for_sb);
}

/*
 * decide() for one place, as a global function: the verifier checks it
 * once, alone, with unknown arguments, however many places the caller
 * judges (a static one would be checked again for each caller state).
 */
__hidden __noinline int cordon_decide_place(__u32 policy_id, __u64 d, __u64 m, __u32 want,
					     struct verdict *v)
{
	if (v)
		decide(policy_id, (struct dentry *)d, (struct vfsmount *)m, want, v);
	return 0;
}

struct places_ctx {
	struct super_block *sb;
	struct dentry *d;               /* the object */
	struct mount *m;                /* the next mount of sb to look at */
	void *ns;                       /* the caller's mount namespace */
	struct vfsmount *place[XATTR_PLACES];
	__u64 n;                        /* places found; > XATTR_PLACES: too many */
};

/*
 * Whether mount m can show d at all: a mount of a single file (a file bound
 * onto a file, as cordon's binary for ssh or a git guard's config) shows
 * only that file.  Such mounts are not counted as places of anything else.
 */
static __always_inline bool shows_maybe(struct mount *m, struct dentry *d)
{
	struct dentry *root = BPF_CORE_READ(m, mnt.mnt_root);

	return root == d || (BPF_CORE_READ(root, d_inode, i_mode) & S_IFMT) == S_IFDIR;
}

/*
 * One mount of the superblock: kept when it is in the caller's namespace
 * and may show d.
 * n starts opaque and the index is masked after a barrier (common.bpf.h,
 * loop callbacks): a kernel that verifies this once must still keep the
 * bound, and the store stays inside place[] whatever it keeps.
 */
static long places_step(__u32 i, void *ctx)
{
	struct places_ctx *c = ctx;
	struct mount *m = c->m;
	__u64 n = c->n;

	if (!m)
		return 1;
	if (BPF_CORE_READ(m, mnt_ns) == c->ns && shows_maybe(m, c->d)) {
		if (n >= XATTR_PLACES) {
			c->n = XATTR_PLACES + 1;
			return 1;
		}
		barrier_var(n);
		c->place[n & (XATTR_PLACES - 1)] = &m->mnt;
		c->n = n + 1;
	}
	c->m = sb_next_mount(c->sb, m);
	return 0;
}

/*
 * The right `want` on `d` through every mount of the caller's namespace
 * that shows it, in *v; the mount it was reached through (for the event)
 * in *where, NULL when none could place it.
 */
static __always_inline void decide_dentry(__u32 policy_id, struct dentry *d, __u32 want,
					  struct verdict *v, struct vfsmount **where)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct places_ctx c = {};
	struct mount *first;
	__u32 shown = 0;

	c.n = opaque_zero();
	c.d = d;
	c.sb = BPF_CORE_READ(d, d_sb);
	c.ns = BPF_CORE_READ(t, nsproxy, mnt_ns);
	first = sb_first_mount(c.sb);
	c.m = first;
	bpf_loop(XATTR_MOUNTS, places_step, &c, 0);
	v->err = -EACCES;
	v->decision = CORDON_DENY;
	v->rule_id = 0;
	v->reason = CORDON_REASON_DISCONNECTED;
	*where = NULL;
	if (c.n > XATTR_PLACES || c.m)
		return;                 /* too many places, or mounts left unexamined */
	if (!c.n && first && BPF_CORE_READ(first, mnt_ns) == MNT_NS_INTERNAL) {
		/* A kern_mount()ed instance: a memfd, a socket, a pipe. */
		cordon_decide_place(policy_id, (__u64)d, (__u64)&first->mnt, want, v);
		*where = &first->mnt;
		return;
	}
#pragma clang loop unroll(disable)
	for (__u32 i = 0; i < XATTR_PLACES; i++) {
		struct verdict one = {};
		struct vfsmount *at;

		if (i >= c.n)
			break;
		at = c.place[i & (XATTR_PLACES - 1)];
		cordon_decide_place(policy_id, (__u64)d, (__u64)at, want, &one);
		if (one.reason == CORDON_REASON_DISCONNECTED && one.decision == CORDON_DENY)
			continue;       /* this mount does not show d */
		if (!shown++ || (one.err && !v->err)) {
			*v = one;
			*where = at;
		}
	}
}

static __always_inline bool has_prefix(const char *n, const char *p, __u32 len)
{
	for (__u32 i = 0; i < len; i++)
		if (n[i] != p[i])
			return false;
	return true;
}

static __always_inline int on_xattr(struct dentry *d, const char *name)
{
	struct verdict v = { .err = -EPERM, .decision = CORDON_DENY,
			     .reason = CORDON_REASON_HARDENING };
	struct vfsmount *where = NULL;
	struct cordon_session *s;
	char n[8] = {};                 /* "system." is the longest prefix compared */
	__u64 sid = 0;
	__u32 want;

	s = current_session(&sid);
	if (!s || fs_override(NULL))    /* overlayfs copying up its own trusted.overlay.* */
		return 0;
	if (bpf_probe_read_kernel_str(n, sizeof(n), name) < 0)
		n[0] = 0;
	if (has_prefix(n, "user.", 5))
		want = CORDON_FS_WRITE;
	else if (has_prefix(n, "system.", 7))
		want = CORDON_FS_CHMOD;
	else
		want = 0;               /* security.*, trusted.*, anything else */
	if (want)
		decide_dentry(s->policy_id, d, want, &v, &where);
	if (where) {
		report_walk(sid, CORDON_OP_XATTR, &v, d, where);
	} else {
		struct cordon_event *e = event_start(sid, CORDON_OP_XATTR, v.decision, v.err,
						     v.rule_id, v.reason);
		if (e) {
			if (bpf_probe_read_kernel_str(e->path, sizeof(e->path), name) < 0)
				e->path[0] = 0;
			bpf_ringbuf_submit(e, 0);
		}
	}
	return v.err;
}

/*
 * One layout for 6.1 (struct user_namespace *) and later kernels (struct
 * mnt_idmap *): the first argument is not read, and the number of
 * arguments, hence the previous verdict's slot, is the same.
 */
SEC("lsm/inode_setxattr")
int BPF_PROG(cordon_inode_setxattr, void *idmap, struct dentry *dentry, const char *name,
	     const void *value, size_t size, int flags, int ret)
{
	if (ret)
		return ret;
	return on_xattr(dentry, name);
}

SEC("lsm/inode_removexattr")
int BPF_PROG(cordon_inode_removexattr, void *idmap, struct dentry *dentry, const char *name,
	     int ret)
{
	if (ret)
		return ret;
	return on_xattr(dentry, name);
}

/*
 * From 6.2 a POSIX ACL no longer passes through the xattr hooks: setxattr of
 * system.posix_acl_* calls these instead.  The loader loads them only on a
 * kernel that has them (on 6.1 the ACL comes through inode_setxattr above).
 */
SEC("lsm/inode_set_acl")
int BPF_PROG(cordon_inode_set_acl, void *idmap, struct dentry *dentry, const char *acl_name,
	     struct posix_acl *kacl, int ret)
{
	if (ret)
		return ret;
	return on_xattr(dentry, acl_name);
}

SEC("lsm/inode_remove_acl")
int BPF_PROG(cordon_inode_remove_acl, void *idmap, struct dentry *dentry, const char *acl_name,
	     int ret)
{
	if (ret)
		return ret;
	return on_xattr(dentry, acl_name);
}
