/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The one header shared by the BPF programs and userspace.  Every struct and
 * constant that crosses a map or the ring buffer is defined here, once, with
 * fixed-width types and explicit padding so both sides agree on the layout.
 */
#ifndef CORDON_H
#define CORDON_H

#if defined(__bpf__)
/* vmlinux.h has already provided __u32 and friends. */
#else
#include <linux/types.h>
#endif

#define CORDON_PIN_DIR        "/sys/fs/bpf/cordon"
#define CORDON_CGROUP_PARENT  "cordon"

/* Bounds that keep every BPF loop verifiable and every map finite. */
#define CORDON_MAX_SESSIONS   1024
#define CORDON_MAX_FS_RULES   65536
#define CORDON_WALK_DEPTH     64     /* dentry ancestors examined per request */
#define CORDON_EVENT_PATH     512    /* bytes of path carried in an event */
#define CORDON_COMM_LEN       16

/*
 * Filesystem rights.  A rule grants (or denies) a set of these on the tree
 * below its root inode.
 */
enum cordon_fs_right {
	CORDON_FS_READ    = 1u << 0,
	CORDON_FS_WRITE   = 1u << 1,
	CORDON_FS_CREATE  = 1u << 2,
	CORDON_FS_DELETE  = 1u << 3,
	CORDON_FS_EXEC    = 1u << 4,
	CORDON_FS_CHMOD   = 1u << 5,   /* chmod, chown, setattr */
	CORDON_FS_ALL     = (1u << 6) - 1,
};

/* Decisions, ordered by strength: the strongest matching one wins. */
enum cordon_decision {
	CORDON_ALLOW    = 0,
	CORDON_ESCALATE = 1,
	CORDON_DENY     = 2,
};

/* Operations reported in events. */
enum cordon_op {
	CORDON_OP_NONE = 0,
	CORDON_OP_OPEN_READ,
	CORDON_OP_OPEN_WRITE,
	CORDON_OP_CREATE,          /* a file, fifo or socket: mknod, open(O_CREAT) */
	CORDON_OP_MKDIR,
	CORDON_OP_SYMLINK,
	CORDON_OP_UNLINK,
	CORDON_OP_RMDIR,
	CORDON_OP_RENAME,
	CORDON_OP_LINK,
	CORDON_OP_TRUNCATE,
	CORDON_OP_CHMOD,
	CORDON_OP_CHOWN,
	CORDON_OP_EXEC,
	CORDON_OP_MMAP_EXEC,
	CORDON_OP_MPROTECT_EXEC,
	CORDON_OP_MOUNT,           /* mount, remount, bind, move, new-API attach */
	CORDON_OP_UMOUNT,
	CORDON_OP_PIVOT_ROOT,
	CORDON_OP_MAX,
};

/* Why the floor decided as it did. */
enum cordon_reason {
	CORDON_REASON_RULE = 0,       /* the rule id in the event decided */
	CORDON_REASON_DEFAULT,        /* no rule granted the right: default deny */
	CORDON_REASON_WALK_BOUND,     /* the dentry walk exceeded CORDON_WALK_DEPTH */
	CORDON_REASON_PROTECTED,      /* structural invariant (rule_id names none) */
	CORDON_REASON_FILELESS,       /* exec or PROT_EXEC of an unlinked file or memfd */
	CORDON_REASON_REFER,          /* a link or rename would grant new rights */
	CORDON_REASON_CONTROL_FS,     /* cgroupfs or bpffs: never written by a session */
	CORDON_REASON_ESCALATE,       /* the policy escalates: the supervisor decides */
	CORDON_REASON_HARDENING,      /* never allowed to a session, whatever the policy */
	CORDON_REASON_INTERNAL,       /* a pipe, socket or memfd: no path any rule can name */
	CORDON_REASON_DISCONNECTED,   /* a dentry cut off from its ancestors: cannot be placed */
};

/*
 * Global configuration, one entry in an array map.  Sessions are cgroups
 * created at a fixed depth below cordon's parent cgroup, so one ancestor
 * lookup at that depth tells whether a task belongs to a session: host tasks
 * pay one helper call and one hash miss per hook.
 */
struct cordon_config {
	__u32 session_level;  /* cgroup depth of session cgroups (root = 0) */
	__u32 _pad;
	__u64 build_id;       /* hash of the loaded BPF object: a stale floor is reloaded */
};

/* Value of the sessions map, keyed by the session cgroup id. */
struct cordon_session {
	__u32 policy_id;      /* selects this session's rules in the rule maps */
	__u32 flags;
	__u64 drops;          /* events this session's ring buffer could not take */
};

#define CORDON_SESSION_RINGBUF  (1u << 20)   /* bytes of each session's ring buffer */

/*
 * Filesystem rule map key: a rule root named by object, not by string.  A
 * request walks up from the target dentry and looks each ancestor up here.
 * dev is the kernel's encoding (MAJOR << 20 | MINOR) of the superblock's
 * s_dev, which userspace derives from stat's st_dev.
 */
struct cordon_fs_key {
	__u32 policy_id;
	__u32 dev;
	__u64 ino;
};

struct cordon_fs_rule {
	__u32 allow;          /* rights granted below this root */
	__u32 deny;           /* rights denied below this root (wins) */
	__u32 escalate;       /* rights the policy escalates: denied in the kernel */
	__u32 allow_rule;     /* rule ids, for events */
	__u32 deny_rule;
	__u32 flags;          /* CORDON_RULE_* */
};

/* The deny comes from a structural invariant, not a policy rule. */
#define CORDON_RULE_INVARIANT  (1u << 0)
/* The denied rights are escalated by the policy (the kernel denies them). */
#define CORDON_RULE_ESCALATE   (1u << 1)

/* Event flags. */
#define CORDON_EV_PATH_TRUNCATED  (1u << 0)
/*
 * path holds NUL-terminated names, leaf first, from a dentry walk (hooks
 * where bpf_d_path is not allowed); userspace joins them in reverse.
 */
#define CORDON_EV_PATH_COMPONENTS (1u << 1)

/* Ring buffer record: one per denial and per allowed write, exec, delete. */
struct cordon_event {
	__u64 ts_ns;
	__u64 session;        /* session cgroup id */
	__u32 pid;
	__u32 tid;
	__u32 uid;
	__u32 op;             /* enum cordon_op */
	__u32 decision;       /* enum cordon_decision */
	__s32 err;            /* value returned to the caller: 0 or -errno */
	__u32 rule_id;
	__u32 reason;         /* enum cordon_reason */
	__u32 flags;
	__u32 _pad;
	char comm[CORDON_COMM_LEN];
	char path[CORDON_EVENT_PATH];
};

/* Counters in a per-CPU array, indexed by this enum. */
enum cordon_counter {
	CORDON_CNT_EVENTS = 0,
	CORDON_CNT_DROPS,             /* ring buffer full: reported, never silent */
	CORDON_CNT_MAX,
};

#endif /* CORDON_H */
