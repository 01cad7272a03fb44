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
#define CORDON_SIGIO_FILES    65536  /* files with an owner set by a session task, at once */

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
	CORDON_OP_PTRACE,          /* ptrace, /proc/PID/mem|environ|fd..., pidfd_getfd */
	CORDON_OP_SIGNAL,          /* kill, tgkill, pidfd_send_signal (sig 0 included) */
	CORDON_OP_BPF,             /* the bpf() syscall */
	CORDON_OP_MODULE,          /* request_module (path: the module name) */
	CORDON_OP_KERNEL_LOAD,     /* init_module, kexec_load, firmware from memory */
	CORDON_OP_KERNEL_READ,     /* finit_module, kexec_file_load, firmware files */
	CORDON_OP_CAPABLE,         /* a capability check (path: "cap N") */
	CORDON_OP_IOCTL,           /* TIOCSTI, TIOCLINUX */
	CORDON_OP_PERF,            /* perf_event_open */
	CORDON_OP_USERNS,          /* a new user namespace */
	CORDON_OP_UNIX_CONNECT,    /* connect() of a Unix stream or seqpacket socket */
	CORDON_OP_UNIX_SEND,       /* connect() or sendmsg() of a Unix datagram socket */
	CORDON_OP_SOCKET,          /* socket() of a family a session may not use */
	CORDON_OP_SCHED,           /* nice, ioprio, scheduler, prlimit of another task */
	CORDON_OP_XATTR,           /* setxattr, removexattr, a POSIX ACL change */
	CORDON_OP_SIGIO,           /* F_SETOWN's signal aimed outside the setter's session */
	CORDON_OP_CLONE,           /* clone flags a session may not use */
	CORDON_OP_NOTIFY,          /* inotify_add_watch, fanotify_mark: a watch on a path */
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
	__u32 n_links;        /* programs attached and pinned as links (userspace only) */
	__u64 build_id;       /* hash of the loaded BPF object: a stale floor is reloaded */
	__u64 parent_id;      /* cgroup id of <cgroup2>/cordon: below it, an unregistered
			       * cgroup is a stray, denied everything */
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


/* --- network --- */
/*
 * The cgroup-bpf network floor (bpf/net.bpf.c, loader/net.c): a separate BPF
 * object from the LSM floor, so that it loads on kernels that refuse LSM
 * programs.  Its pins live in their own directory under CORDON_PIN_DIR.
 */
#define CORDON_NET_PIN_DIR      CORDON_PIN_DIR "/net"
#define CORDON_MAX_NET_RULES    16384   /* (policy, prefix) entries, all sessions */
#define CORDON_NET_RANGES       16      /* port ranges one prefix can carry */
#define CORDON_NET_RINGBUF      (1u << 20)   /* events of sessions without a ring of their own */
#define CORDON_NET_SESSION_RINGBUF (1u << 18) /* bytes of each session's own ring (~1,200 events) */
#define CORDON_NET_UNIX_PATH    108     /* sizeof(sun_path) */

/* Operations in net events. */
enum cordon_net_op {
	CORDON_NET_OP_CONNECT = 1,
	CORDON_NET_OP_SENDMSG,      /* unconnected UDP with a destination */
	CORDON_NET_OP_BIND,
	CORDON_NET_OP_SOCKET,
	CORDON_NET_OP_UNIX_CONNECT, /* to a pathname Unix socket (the fallback's gate) */
	CORDON_NET_OP_UNIX_SENDMSG, /* a datagram to a pathname Unix socket */
	CORDON_NET_OP_INGRESS,      /* a packet from outside the host to a session's socket */
};

/* Why the network floor decided as it did. */
enum cordon_net_reason {
	CORDON_NET_REASON_RULE = 0,     /* rule_id decided */
	CORDON_NET_REASON_DEFAULT,      /* no range covers the port: default deny */
	CORDON_NET_REASON_NO_SESSION,   /* below cordon's parent, not a registered session */
	CORDON_NET_REASON_NONLOCAL,     /* bind to an address other than loopback */
	CORDON_NET_REASON_SOCKET_KIND,  /* family, type or protocol never allowed */
	CORDON_NET_REASON_FAMILY,       /* sockaddr family does not match the hook */
	CORDON_NET_REASON_CORDON,       /* allowed by an entry cordon added (its proxies) */
	CORDON_NET_REASON_UNIX_PATH,    /* a pathname Unix socket named by the session itself */
	CORDON_NET_REASON_LISTENER,     /* a packet from outside to a session's listener */
	CORDON_NET_REASON_NOT_INET,     /* a packet neither TCP nor UDP over plain IP headers */
};

/*
 * The network floor's own counters in net_counters, after the shared ones
 * (CORDON_CNT_EVENTS, CORDON_CNT_DROPS).
 */
enum cordon_net_counter {
	CORDON_NET_CNT_INGRESS_DROPS = CORDON_CNT_MAX, /* packets from outside dropped */
	CORDON_NET_CNT_SOCKOPT,       /* SO_REUSEPORT / SO_REUSEADDR refused */
	CORDON_NET_CNT_MAX,
};

/*
 * At most one ingress event per CPU in this many nanoseconds: the drops run
 * in softirq, where a flood must cost a counter, not a ring record each.
 */
#define CORDON_NET_INGRESS_EVENT_NS  1000000000ull

struct cordon_net_config {
	__u32 session_level;  /* cgroup depth of session cgroups (root = 0) */
	__u32 n_links;        /* programs attached and pinned as links (userspace only) */
	__u64 parent_id;      /* cgroup id of <cgroup2>/cordon, at session_level - 1 */
	__u64 build_id;       /* hash of the loaded BPF object: a stale one is reloaded */
	__u32 exec_recheck;   /* the exec recheck's programs are attached (userspace only) */
	__u32 unix_gate;      /* the cgroup unix programs are attached (userspace only) */
};

/*
 * One LPM trie holds every session's rules and the sessions themselves, so
 * that a connect or sendmsg is judged with a single lookup of (family,
 * session, destination).  Its key: prefixlen counts bits after itself,
 * CORDON_NET_KEY_BITS (family and session, always matched whole) + the
 * address prefix.  IPv4 addresses sit in addr[0..3]; family is 4 or 6, or
 * CORDON_NET_FAMILY_SESSION for the session's own entry (prefixlen
 * CORDON_NET_KEY_BITS, no address), whose presence registers the session
 * and whose value carries its flags.
 */
#define CORDON_NET_KEY_BITS        96
#define CORDON_NET_FAMILY_SESSION  0

struct cordon_net_key {
	__u32 prefixlen;
	__u32 family;
	__u64 session;        /* session cgroup id */
	__u8  addr[16];
};

/*
 * Session flags, in the session's own entry and copied into each of its rule
 * entries (read there: the verdict's lookup is the only one).
 *
 * ALLOW_EVENTS: an event for every allowed connect too, not only for
 * denials.  Off by default: the supervisor sees each connect through seccomp
 * user notification and audits it there; the kernel's own record costs a
 * ring buffer reservation on the hottest path of the floor.
 */
#define CORDON_NET_SESSION_ALLOW_EVENTS  (1u << 0)
/*
 * UNIX_GATE: the session may not name a pathname Unix socket in connect or
 * sendmsg itself (bpf/net.bpf.c's unix_gate): the fallback posture, whose
 * supervisor judges and performs such connects.
 */
#define CORDON_NET_SESSION_UNIX_GATE     (1u << 1)
#define CORDON_NET_SESSION_FLAGS         (CORDON_NET_SESSION_ALLOW_EVENTS | \
					  CORDON_NET_SESSION_UNIX_GATE)

/* The rule id of an entry cordon added itself (net_session_allow). */
#define CORDON_NET_RULE_CORDON  0xfffffffeu

struct cordon_net_range {
	__u16 lo;             /* host byte order, inclusive */
	__u16 hi;
	__u32 decision;       /* enum cordon_decision */
	__u32 rule_id;
};

/*
 * Value of the LPM trie: every port range of every rule whose prefix covers
 * this one (merged in userspace, because the trie returns only the most
 * specific prefix).  The strongest decision among ranges covering the port
 * wins; none covering it is a default deny.  A session's own entry has no
 * ranges.
 */
struct cordon_net_rule {
	__u32 n;
	__u32 flags;          /* the session's CORDON_NET_SESSION_* */
	struct cordon_net_range r[CORDON_NET_RANGES];
};

/*
 * Ring buffer record: one per denial, and one per allowed connect of a
 * session registered with CORDON_NET_SESSION_ALLOW_EVENTS.  An ingress
 * drop (rate-bounded) names the remote address and port; it runs in no task,
 * so pid, uid and comm are 0 and empty.
 */
struct cordon_net_event {
	__u64 ts_ns;
	__u64 session;        /* cgroup id at the session level (0: none) */
	__u32 pid;
	__u32 uid;
	__u32 op;             /* enum cordon_net_op */
	__u32 family;         /* 4 or 6 as judged (mapped IPv6 is 4); socket: AF_* */
	__u32 decision;
	__u32 reason;         /* enum cordon_net_reason */
	__u32 rule_id;
	__u16 port;           /* host byte order; socket: type */
	__u16 proto;          /* socket: protocol; otherwise 0 */
	__u8  addr[16];       /* network byte order, as judged */
	char comm[CORDON_COMM_LEN];
	char path[CORDON_NET_UNIX_PATH];  /* unix ops: the socket path as given */
};

/*
 * The exec recheck (bpf/exec_recheck.bpf.c): what the supervisor judged an
 * exec on, armed for the calling thread (key: its tid in the initial PID
 * namespace) before the exec is let go on, and compared by the kernel with
 * what the exec actually received once the new image is in place.
 *
 * The strings are compared as keyed SipHash-2-4 values: the key is random
 * per load and lives in a map only root outside the sandbox can read, so an
 * agent cannot build two argument lists with the same value.
 */
#define CORDON_EXEC_EXPECT_MAX 65536
#define CORDON_EXEC_NAME_MAX   4352   /* bprm->filename: "/dev/fd/N/" + PATH_MAX */

enum cordon_exec_flags {
	CORDON_EXEC_INODE = 1u << 0,  /* compare the binary's inode number and fs magic */
	CORDON_EXEC_DEV   = 1u << 1,  /* and its device (where stat reports the sb's) */
};

struct cordon_exec_key {
	__u64 k[2];
};

struct cordon_exec_expect {
	__u64 argv_hash;      /* [arg_start, arg_end): every string, NULs included */
	__u64 tail_hash;      /* from argv[1] on: what an interpreter exec keeps */
	__u64 name_hash;      /* the path as the kernel forms bprm->filename */
	__u64 ino;
	__u32 argv_len;
	__u32 tail_len;
	__u32 name_len;
	__u32 dev;            /* kernel encoding: major << 20 | minor */
	__u64 magic;          /* s_magic of the binary's filesystem */
	__u32 flags;          /* enum cordon_exec_flags */
	__u32 killed;         /* set by the kernel side when it killed the task */
	__u64 cgroup;         /* the session's cgroup: only a task in it is judged */
};

/* SipHash-2-4, one implementation for both sides (little-endian words). */
struct cordon_sip {
	__u64 v0, v1, v2, v3;
};

#define CORDON_ROTL(x, b) (((x) << (b)) | ((x) >> (64 - (b))))

static inline void cordon_sip_round(struct cordon_sip *s)
{
	s->v0 += s->v1; s->v1 = CORDON_ROTL(s->v1, 13); s->v1 ^= s->v0; s->v0 = CORDON_ROTL(s->v0, 32);
	s->v2 += s->v3; s->v3 = CORDON_ROTL(s->v3, 16); s->v3 ^= s->v2;
	s->v0 += s->v3; s->v3 = CORDON_ROTL(s->v3, 21); s->v3 ^= s->v0;
	s->v2 += s->v1; s->v1 = CORDON_ROTL(s->v1, 17); s->v1 ^= s->v2; s->v2 = CORDON_ROTL(s->v2, 32);
}

static inline void cordon_sip_init(struct cordon_sip *s, const struct cordon_exec_key *k)
{
	s->v0 = k->k[0] ^ 0x736f6d6570736575ULL;
	s->v1 = k->k[1] ^ 0x646f72616e646f6dULL;
	s->v2 = k->k[0] ^ 0x6c7967656e657261ULL;
	s->v3 = k->k[1] ^ 0x7465646279746573ULL;
}

static inline void cordon_sip_word(struct cordon_sip *s, __u64 m)
{
	s->v3 ^= m;
	cordon_sip_round(s);
	cordon_sip_round(s);
	s->v0 ^= m;
}

/* last: the 0-7 bytes after the last whole word, little-endian; len: all bytes. */
static inline __u64 cordon_sip_final(struct cordon_sip *s, __u64 last, __u64 len)
{
	cordon_sip_word(s, last | (len << 56));
	s->v2 ^= 0xff;
	cordon_sip_round(s);
	cordon_sip_round(s);
	cordon_sip_round(s);
	cordon_sip_round(s);
	return s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
}

#endif /* CORDON_H */
