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
 *
 * Below the mounts: other tasks (ptrace, signals), the kernel itself (bpf,
 * modules, perf, user namespaces), capabilities and terminal injection.
 * Each says what it closes and what it cannot.
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

/* --- who is who: the session of another task, or of a socket ------------- */

/*
 * The cgroup of a session is the default-hierarchy ancestor of a task at
 * the session level (cordon_config.session_level), the one
 * current_session() finds for the current task with a helper.  For another
 * task, or a socket, it is read from the cgroup itself: up to 6.1 a cgroup
 * keeps its ancestors' ids inline (ancestor_ids[]), later kernels keep
 * pointers (ancestors[]) and the id is the kernfs node's.  Both are read
 * with CO-RE; the branch the running kernel lacks is dead code the
 * verifier never sees.
 */
struct cgroup___ids {
	int level;
	__u64 ancestor_ids[];
} __attribute__((preserve_access_index));

struct cgroup___ptrs {
	int level;
	struct cgroup *ancestors[];
} __attribute__((preserve_access_index));

static __always_inline __u32 session_level(void)
{
	struct cordon_config *cfg;
	__u32 zero = 0;

	cfg = bpf_map_lookup_elem(&cordon_config, &zero);
	return cfg ? cfg->session_level : 0;
}

/*
 * The session cgroup id above `cg`, 0 when cg sits above the session level
 * (the host).  Also called from unix.bpf.c (__hidden: linked as a static
 * subprogram, not verified on its own).
 */
__hidden __noinline __u64 cordon_cgroup_session(struct cgroup *cg)
{
	__u32 level = session_level();
	struct cgroup *anc = NULL;
	__u64 id = 0;
	void *slot;

	if (!cg || !level || level > 4096 || BPF_CORE_READ(cg, level) < (int)level)
		return 0;
	if (bpf_core_field_exists(struct cgroup___ids, ancestor_ids)) {
		slot = (void *)cg + bpf_core_field_offset(struct cgroup___ids, ancestor_ids) +
		       (__u64)level * sizeof(__u64);
		if (bpf_probe_read_kernel(&id, sizeof(id), slot))
			return 0;
		return id;
	}
	slot = (void *)cg + bpf_core_field_offset(struct cgroup___ptrs, ancestors) +
	       (__u64)level * sizeof(void *);
	if (bpf_probe_read_kernel(&anc, sizeof(anc), slot) || !anc)
		return 0;
	return BPF_CORE_READ(anc, kn, id);
}

static __always_inline __u64 task_session(struct task_struct *t)
{
	return cordon_cgroup_session(BPF_CORE_READ(t, cgroups, dfl_cgrp));
}

/* A hardening denial, reported with a short detail ("pid 12 sig 15"). */
#define DENY(sid, op, err, fmt, args...)                                              \
	({                                                                            \
		struct cordon_event *___e = event_start(sid, op, CORDON_DENY, err, 0, \
							CORDON_REASON_HARDENING);     \
		if (___e) {                                                           \
			BPF_SNPRINTF(___e->path, sizeof(___e->path), fmt, ##args);    \
			bpf_ringbuf_submit(___e, 0);                                  \
		}                                                                     \
		err;                                                                  \
	})

/* --- other tasks: ptrace and signals -------------------------------------- */

#define PTRACE_MODE_NOAUDIT 0x04

/*
 * ptrace_access_check is where every access to another process's insides
 * ends up (__ptrace_may_access): PTRACE_ATTACH/SEIZE, /proc/PID/mem,
 * environ, auxv, maps, fd, cwd, root, exe and the ns/ links (so no setns
 * through a host process's namespace files), process_vm_readv/writev, pidfd_getfd, kcmp,
 * process_madvise.  A session may do these to its own tasks only.  The
 * kernel answers for a task's own threads before asking the LSM.
 * What this cannot close: information that procfs gives without a ptrace
 * check (/proc/PID/cmdline, stat's basic fields, status): a session sees
 * the host's process list, as any unprivileged user does.
 * Probes marked NOAUDIT (ps reading every /proc/PID/stat) are denied
 * without an event, or listing processes would flood the ring buffer.
 */
SEC("lsm/ptrace_access_check")
int BPF_PROG(cordon_ptrace_access_check, struct task_struct *child, unsigned int mode, int ret)
{
	struct cordon_session *s;
	__u64 sid = 0;
	int pid;

	if (ret)
		return ret;
	s = current_session(&sid);
	if (!s || task_session(child) == sid)
		return 0;
	if (mode & PTRACE_MODE_NOAUDIT)
		return -EPERM;
	pid = BPF_CORE_READ(child, tgid);
	return DENY(sid, CORDON_OP_PTRACE, -EPERM, "pid %d mode 0x%x", pid, mode);
}

/*
 * PTRACE_TRACEME hands the caller to its parent: a session task whose
 * parent is outside (the supervisor, a reparenting subreaper) would give a
 * host process, not chosen for it, control of a confined task, and through
 * it whatever that parent then does.  Same session only.
 */
SEC("lsm/ptrace_traceme")
int BPF_PROG(cordon_ptrace_traceme, struct task_struct *parent, int ret)
{
	struct cordon_session *s;
	__u64 sid = 0;
	int pid;

	if (ret)
		return ret;
	s = current_session(&sid);
	if (!s || task_session(parent) == sid)
		return 0;
	pid = BPF_CORE_READ(parent, tgid);
	return DENY(sid, CORDON_OP_PTRACE, -EPERM, "traceme parent %d", pid);
}

/*
 * Signals from a session reach its own tasks only, signal 0 (the existence
 * probe) included: root in a session shares the host's uid 0, so without
 * this it could kill or stop any host process, cordon's supervisor first.
 * task_kill runs for signals a task sends (kill, tgkill, rt_sigqueueinfo,
 * pidfd_send_signal); the kernel's own (SIGCHLD to a host parent, SIGPIPE,
 * SIGSEGV) do not pass here and are unaffected.  A call with `cred` set is
 * a signal sent on behalf of those credentials (USB async I/O completion),
 * not by the current task, which is then whatever was running: not judged.
 * F_SETOWN/SIGIO is another way to the same end: file_send_sigiotask
 * below.
 */
SEC("lsm/task_kill")
int BPF_PROG(cordon_task_kill, struct task_struct *p, struct kernel_siginfo *info, int sig,
	     const struct cred *cred, int ret)
{
	struct cordon_session *s;
	__u64 sid = 0;
	int pid;

	if (ret)
		return ret;
	if (cred)
		return 0;
	s = current_session(&sid);
	if (!s || task_session(p) == sid)
		return 0;
	pid = BPF_CORE_READ(p, tgid);
	return DENY(sid, CORDON_OP_SIGNAL, -EPERM, "pid %d sig %d", pid, sig);
}

/* --- the kernel itself: BPF, modules, perf, user namespaces --------------- */

/*
 * No bpf() at all from a session: cordon's own maps and programs are pinned
 * in bpffs (BPF_OBJ_GET of /sys/fs/bpf/cordon/...), reachable by id
 * (BPF_*_GET_FD_BY_ID), and a program of the session's own would observe
 * the whole system (tracing programs read any kernel memory).  On this
 * kernel, with unprivileged BPF disabled (Debian's default), __sys_bpf
 * refuses a task without CAP_BPF before this hook (and capable() below
 * refuses CAP_BPF to a session), so this is the layer that holds when that
 * sysctl is 0.
 *
 * bpf_map and bpf_prog are not hooked, deliberately: the kernel calls them
 * only when it makes a new map or program fd (bpf_map_new_fd,
 * bpf_prog_new_fd), which happens only inside bpf(), already refused here.
 * A descriptor passed in over SCM_RIGHTS never reaches them, so they would
 * close nothing.  What remains open for such a descriptor (only a leak from
 * the host can give one): mmap of a BPF_F_MMAPABLE map or a ring buffer
 * (cordon's ring buffers are read-only to a mapping consumer except the
 * consumer position), and SO_ATTACH_BPF of a passed program fd.
 */
static __always_inline int deny_bpf(int cmd)
{
	__u64 sid = 0;

	if (!current_session(&sid))
		return 0;
	return DENY(sid, CORDON_OP_BPF, -EPERM, "cmd %d", cmd);
}

/*
 * Two layouts of the bpf hook: from 6.16 it takes a fourth argument (bool
 * kernel), which moves the previous verdict one slot along.  The loader
 * loads exactly the one the running kernel's BTF describes: reading the
 * wrong slot would turn that bool into an error for in-kernel bpf() calls.
 */
SEC("lsm/bpf")
int BPF_PROG(cordon_bpf, int cmd, union bpf_attr *attr, unsigned int size, int ret)
{
	if (ret)
		return ret;
	return deny_bpf(cmd);
}

SEC("lsm/bpf")
int BPF_PROG(cordon_bpf_kernel_arg, int cmd, union bpf_attr *attr, unsigned int size,
	     bool kernel, int ret)
{
	if (ret)
		return ret;
	return deny_bpf(cmd);
}

/*
 * A kernel module runs as the kernel: no loading, by file or by image, and
 * no asking the kernel to load one on the session's behalf (socket(AF_X)
 * of an unloaded family, a tty line discipline, a crypto algorithm name
 * all call request_module in the requesting task).  init_module and
 * finit_module also need CAP_SYS_MODULE, refused below; these hooks hold
 * if that ever changes.  kernel_load_data and kernel_read_file also cover
 * kexec_load, kexec_file_load, firmware and IMA policy loads, none of
 * which a session has any business starting.  What this cannot close:
 * modules the host loads for its own reasons, which the session may then
 * use.
 */
SEC("lsm/kernel_module_request")
int BPF_PROG(cordon_kernel_module_request, char *kmod_name, int ret)
{
	struct cordon_event *e;
	__u64 sid = 0;

	if (ret)
		return ret;
	if (!current_session(&sid))
		return 0;
	e = event_start(sid, CORDON_OP_MODULE, CORDON_DENY, -EPERM, 0, CORDON_REASON_HARDENING);
	if (e) {
		if (bpf_probe_read_kernel_str(e->path, sizeof(e->path), kmod_name) < 0)
			e->path[0] = 0;
		bpf_ringbuf_submit(e, 0);
	}
	return -EPERM;
}

SEC("lsm/kernel_load_data")
int BPF_PROG(cordon_kernel_load_data, enum kernel_load_data_id id, bool contents, int ret)
{
	__u64 sid = 0;

	if (ret)
		return ret;
	if (!current_session(&sid))
		return 0;
	return DENY(sid, CORDON_OP_KERNEL_LOAD, -EPERM, "id %d", (int)id);
}

SEC("lsm/kernel_read_file")
int BPF_PROG(cordon_kernel_read_file, struct file *file, enum kernel_read_file_id id,
	     bool contents, int ret)
{
	__u64 sid = 0;

	if (ret)
		return ret;
	if (!current_session(&sid))
		return 0;
	return DENY(sid, CORDON_OP_KERNEL_READ, -EPERM, "id %d", (int)id);
}

/*
 * perf_event_open reads other processes and the kernel (addresses, kernel
 * stacks, tracepoints with arguments), and its kprobe and uprobe events
 * attach BPF-like observation anywhere.  Refused to a session whatever
 * perf_event_paranoid says.
 */
SEC("lsm/perf_event_open")
int BPF_PROG(cordon_perf_event_open, struct perf_event_attr *attr, int type, int ret)
{
	__u64 sid = 0;
	__u32 ptype;

	if (ret)
		return ret;
	if (!current_session(&sid))
		return 0;
	ptype = BPF_CORE_READ(attr, type);
	return DENY(sid, CORDON_OP_PERF, -EPERM, "type %u", ptype);
}

/*
 * A new user namespace makes its creator root inside it, with every
 * capability there: the door to the kernel's namespaced-root attack
 * surface (netfilter, mount-in-userns code paths, most of the kernel
 * privilege escalations of recent years), and a way around per-capability
 * denial elsewhere if a hook ever judged by namespace.  unshare and clone
 * with CLONE_NEWUSER are refused.  Entering an existing one (setns) needs
 * CAP_SYS_ADMIN in it, which capable() refuses below, whatever the
 * namespace.
 */
SEC("lsm/userns_create")
int BPF_PROG(cordon_userns_create, const struct cred *cred, int ret)
{
	__u64 sid = 0;

	if (ret)
		return ret;
	if (!current_session(&sid))
		return 0;
	return DENY(sid, CORDON_OP_USERNS, -EPERM, "unshare");
}

/* --- capabilities ----------------------------------------------------------- */

#define CAP_CHOWN            0
#define CAP_DAC_OVERRIDE     1
#define CAP_DAC_READ_SEARCH  2
#define CAP_FOWNER           3
#define CAP_FSETID           4
#define CAP_KILL             5
#define CAP_SETGID           6
#define CAP_SETUID           7
#define CAP_SETPCAP          8
#define CAP_IPC_LOCK         14
#define CAP_SYS_CHROOT       18
#define CAP_LEASE            28
#define CAP_OPT_NOAUDIT      (1u << 1)

#define CAP_BIT(c) (1ull << (c))

/*
 * Root in a session keeps only what building and testing software as root
 * needs, and only where the floor still judges the result:
 *
 *   CHOWN, DAC_OVERRIDE, FOWNER, FSETID: file ownership and mode bits.  The
 *     floor judges every open, create, delete, chmod and chown by object
 *     whatever DAC says, so bypassing DAC reaches nothing the policy does not
 *     allow; tar, cp -a, package installs and build trees owned by another
 *     uid need them.
 *   DAC_READ_SEARCH: with DAC_OVERRIDE kept it adds only open_by_handle_at,
 *     and the floor judges a handle's file as any other open (by object; a
 *     disconnected dentry is denied).  Refusing it would not close more, and
 *     the kernel asks for it before DAC_OVERRIDE on every read DAC refuses,
 *     so each such read by root would leave a spurious denial event.
 *   KILL: signals to any uid; task_kill above limits it to the session.
 *   SETUID, SETGID, SETPCAP: changing identity and dropping capabilities
 *     (su, setpriv, test suites that drop root).  No uid gives anything the
 *     floor does not: it judges the session, not the uid.
 *   SYS_CHROOT: the floor's walk goes to the mount namespace's root, not the
 *     task's, so a chroot redirects no rule (debootstrap, mock need it).
 *   IPC_LOCK: mlock beyond RLIMIT_MEMLOCK; the memory is charged to the
 *     session's cgroup.
 *   LEASE: file leases; the file was already opened under the floor.
 *
 * Everything else is refused, and so is any capability a later kernel
 * adds (an allowlist, not a denylist).  Notably: SYS_ADMIN (mount, setns,
 * sethostname, most device and namespace control), SYS_MODULE, SYS_PTRACE,
 * NET_ADMIN and NET_RAW (host network configuration, raw packets past the
 * cgroup-bpf socket hooks), BPF, PERFMON, SYS_RAWIO (ioperm, /dev/mem
 * style access), MAC_ADMIN/MAC_OVERRIDE, SYS_BOOT (reboot, kexec),
 * SYS_TIME, MKNOD, SYSLOG (the kernel log: addresses, host activity),
 * AUDIT_CONTROL/AUDIT_WRITE/AUDIT_READ (the host's audit trail),
 * SYS_RESOURCE, LINUX_IMMUTABLE (files the host could no longer change),
 * SETFCAP (a file capability that a host user later executes),
 * WAKE_ALARM, BLOCK_SUSPEND (host power management), CHECKPOINT_RESTORE,
 * IPC_OWNER (the host's SysV IPC objects), SYS_NICE (real-time priority
 * starves the host), SYS_PACCT (system-wide accounting), SYS_TTY_CONFIG,
 * NET_BROADCAST, and NET_BIND_SERVICE: a port below 1024 lets a session
 * stand in for a host service (a restarting sshd's port 22, a local
 * resolver's 53) for host clients; development servers use high ports.
 *
 * The check is on the current task, whichever credentials are asked about
 * (file_ns_capable asks about the opener's): a session may not borrow a
 * host opener's capabilities through a descriptor it was handed.  Checks
 * marked NOAUDIT (frequent probes: "would root be allowed?") are refused
 * without an event.  The event names the capability and the system call
 * that asked ("cap 21 syscall 165"): for root, mount, unshare, pivot_root
 * and the like stop here, at CAP_SYS_ADMIN, before their own hooks above,
 * which stay as the layer behind it.  What this cannot close: what root
 * does without any capability, being the same uid as host root, except
 * what the task_* hooks at the end close (renice, rlimits, scheduling and
 * I/O priority of a process outside the session).
 */
#define CAPS_KEPT                                                                  \
	(CAP_BIT(CAP_CHOWN) | CAP_BIT(CAP_DAC_OVERRIDE) | CAP_BIT(CAP_DAC_READ_SEARCH) |   \
	 CAP_BIT(CAP_FOWNER) | CAP_BIT(CAP_FSETID) | CAP_BIT(CAP_KILL) |                   \
	 CAP_BIT(CAP_SETGID) | CAP_BIT(CAP_SETUID) | CAP_BIT(CAP_SETPCAP) |                \
	 CAP_BIT(CAP_IPC_LOCK) | CAP_BIT(CAP_SYS_CHROOT) | CAP_BIT(CAP_LEASE))

SEC("lsm/capable")
int BPF_PROG(cordon_capable, const struct cred *cred, struct user_namespace *ns, int cap,
	     unsigned int opts, int ret)
{
	struct pt_regs *regs;
	__u64 sid = 0;
	long nr;

	if (ret)
		return ret;
	if (cap >= 0 && cap < 64 && (CAPS_KEPT & CAP_BIT(cap)))
		return 0;
	if (!current_session(&sid) || fs_override(cred))
		return 0;
	if (opts & CAP_OPT_NOAUDIT)
		return -EPERM;
	regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
#if defined(__TARGET_ARCH_x86)
	nr = regs ? (long)BPF_CORE_READ(regs, orig_ax) : -1;
#elif defined(__TARGET_ARCH_arm64)
	nr = regs ? (long)BPF_CORE_READ(regs, syscallno) : -1;
#else
	nr = -1;
#endif
	return DENY(sid, CORDON_OP_CAPABLE, -EPERM, "cap %d syscall %ld", cap, nr);
}

/* --- terminals --------------------------------------------------------------- */

#define TIOCSTI   0x5412
#define TIOCLINUX 0x541C

/*
 * TIOCSTI pushes bytes into a terminal's input queue as if typed: a session
 * that holds the user's terminal (its stdin, a tty it opened) would have
 * the shell it returns to run commands outside the sandbox.  TIOCLINUX
 * reads the virtual console's screen and selection (and pastes it as
 * input).  Both are refused on every file: the command number is what
 * matters, not which driver would answer.  What this cannot close: plain
 * writes to a terminal the session holds (escape sequences the user's
 * terminal emulator interprets), which only the supervisor giving the
 * session a pty of its own closes.
 */
SEC("lsm/file_ioctl")
int BPF_PROG(cordon_file_ioctl, struct file *file, unsigned int cmd, unsigned long arg, int ret)
{
	__u64 sid = 0;

	if (ret)
		return ret;
	if (cmd != TIOCSTI && cmd != TIOCLINUX)
		return 0;
	if (!current_session(&sid))
		return 0;
	return DENY(sid, CORDON_OP_IOCTL, -EPERM, "cmd 0x%x", cmd);
}

/*
 * Socket families: only AF_UNIX, AF_INET, AF_INET6 and NETLINK_ROUTE.  The
 * cgroup sock_create program sees inet families only, so this hook closes
 * the rest: packet sockets (raw frames, sniffing), other netlink families
 * (sock_diag lists the host's sockets; audit; uevents), vsock (the
 * hypervisor), AF_ALG (kernel crypto attack surface), AF_KEY, bluetooth,
 * CAN, TIPC, RDS, XDP.  NETLINK_ROUTE stays: getaddrinfo and `ip` need it;
 * it lists interfaces and routes, and changes need CAP_NET_ADMIN, which a
 * session never has.  Kernel-internal sockets (kern) are not judged.
 */
#define AF_UNIX     1
#define AF_INET     2
#define AF_INET6    10
#define AF_NETLINK  16

SEC("lsm/socket_create")
int BPF_PROG(cordon_socket_create, int family, int type, int protocol, int kern, int ret)
{
	__u64 sid = 0;

	if (ret)
		return ret;
	if (kern || family == AF_UNIX || family == AF_INET || family == AF_INET6 ||
	    (family == AF_NETLINK && protocol == 0 /* NETLINK_ROUTE */))
		return 0;
	if (!current_session(&sid))
		return 0;
	return DENY(sid, CORDON_OP_SOCKET, -EPERM, "family %d type %d protocol %d", family, type,
		    protocol);
}

/*
 * Scheduling and limits of tasks outside the session.
 * Attack: root in a session has host root's uid, so it could renice
 * (setpriority), re-prioritise (ioprio_set, sched_setscheduler,
 * sched_setattr), pin (sched_setaffinity: task_setscheduler too) or lower
 * the resource limits (prlimit64: task_setrlimit) of any host process,
 * cordon's supervisor, watchdog and brokers first, which live outside the
 * session cgroup: a denial of service on the host.  Any target outside the
 * caller's session is refused; its own tasks stay adjustable.
 * What it cannot close: reading another task's limits and priorities
 * (getpriority, prlimit64 without a new limit, ioprio_get), which only
 * task_prlimit's uid check below narrows.
 */
static __always_inline int foreign_task(struct task_struct *p, __u32 op)
{
	__u64 sid = 0;

	if (!current_session(&sid) || task_session(p) == sid)
		return 0;
	return DENY(sid, op, -EPERM, "pid %d", BPF_CORE_READ(p, tgid));
}

SEC("lsm/task_setnice")
int BPF_PROG(cordon_task_setnice, struct task_struct *p, int nice, int ret)
{
	if (ret)
		return ret;
	return foreign_task(p, CORDON_OP_SCHED);
}

SEC("lsm/task_setioprio")
int BPF_PROG(cordon_task_setioprio, struct task_struct *p, int ioprio, int ret)
{
	if (ret)
		return ret;
	return foreign_task(p, CORDON_OP_SCHED);
}

SEC("lsm/task_setscheduler")
int BPF_PROG(cordon_task_setscheduler, struct task_struct *p, int ret)
{
	if (ret)
		return ret;
	return foreign_task(p, CORDON_OP_SCHED);
}

/* prlimit64 with a new limit: the target task, not only its credentials. */
SEC("lsm/task_setrlimit")
int BPF_PROG(cordon_task_setrlimit, struct task_struct *p, unsigned int resource,
	     struct rlimit *new_rlim, int ret)
{
	if (ret)
		return ret;
	return foreign_task(p, CORDON_OP_SCHED);
}

SEC("lsm/task_prlimit")
int BPF_PROG(cordon_task_prlimit, const struct cred *cred, const struct cred *tcred,
	     unsigned int flags, int ret)
{
	__u64 sid = 0;

	if (ret)
		return ret;
	/*
	 * The target is given by its credentials only: a session may change
	 * limits of tasks with its own uid (itself and its children); another
	 * task of the same uid outside the session cannot be told apart here,
	 * so prlimit on any other uid is refused and same-uid stays a gap.
	 */
	if (!current_session(&sid))
		return 0;
	if (BPF_CORE_READ(cred, uid.val) == BPF_CORE_READ(tcred, uid.val))
		return 0;
	return DENY(sid, CORDON_OP_SCHED, -EPERM, "prlimit of uid %u", BPF_CORE_READ(tcred, uid.val));
}

/* --- new tasks: clone flags ------------------------------------------------- */

#define CLONE_NEWTIME     0x00000080ull
#define CLONE_NEWNS       0x00020000ull
#define CLONE_NEWCGROUP   0x02000000ull
#define CLONE_NEWUTS      0x04000000ull
#define CLONE_NEWIPC      0x08000000ull
#define CLONE_NEWUSER     0x10000000ull
#define CLONE_NEWPID      0x20000000ull
#define CLONE_NEWNET      0x40000000ull
#define CLONE_INTO_CGROUP 0x200000000ull
#define CLONE_REFUSED (CLONE_NEWTIME | CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS |       \
		       CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET |         \
		       CLONE_INTO_CGROUP)

/*
 * Attack: clone3 with CLONE_INTO_CGROUP and a descriptor of another cgroup
 * directory (opened read-only, which cgroupfs allows) starts the child
 * outside the session cgroup, as root with DAC on cgroup.procs in its
 * favour: outside the floor, which finds sessions by cgroup.  Namespace
 * flags would give the child a pid, mount or network namespace of its own,
 * out of the session's.  copy_process hands this hook the whole 64-bit
 * flags word (clone3's included, since 5.7) before it moves the child into
 * any cgroup or namespace, in the parent's context, so the parent's session
 * is the one judged.  The capability check (CAP_SYS_ADMIN, refused above)
 * and userns_create stand behind it; unshare(2) does not pass here and
 * meets those instead.
 * What it cannot close: nothing of the session's own: cordon's supervisor
 * forks the agent into the session with CLONE_INTO_CGROUP as a host task,
 * which this hook does not judge.
 */
SEC("lsm/task_alloc")
int BPF_PROG(cordon_task_alloc, struct task_struct *task, unsigned long clone_flags, int ret)
{
	__u64 sid = 0;

	if (ret)
		return ret;
	if (!((__u64)clone_flags & CLONE_REFUSED) || !current_session(&sid))
		return 0;
	return DENY(sid, CORDON_OP_CLONE, -EPERM, "flags 0x%llx",
		    (__u64)clone_flags & CLONE_REFUSED);
}

/* --- F_SETOWN: signals by way of a file ---------------------------------------- */

/*
 * Attack: F_SETOWN (or F_SETOWN_EX, FIOSETOWN, SIOCSPGRP) names a process
 * to signal when a file becomes ready, F_SETSIG picks the signal, O_ASYNC
 * arms it: the kernel then sends SIGKILL, as root in the sandbox, to any
 * process the session could name, cordon's supervisor first, with no
 * task_kill check.  The session's pid namespace keeps it from naming host
 * pids; this is the wall behind it: a signal is delivered only to tasks of
 * the session of whoever set the owner.
 *
 * file_set_fowner cannot refuse (it returns nothing since 6.1.y) and does
 * not see the target, so it records the file and the setter's session in
 * cordon_sigio_owner; file_send_sigiotask compares it with the target's
 * session each time the kernel would signal; file_free_security forgets the
 * file.  A host setter clears the record: the host's own asynchronous I/O
 * is never judged.  Cost: a hash update per F_SETOWN by anyone, a hash
 * delete per file freed anywhere on the host (a miss, almost always), and
 * a lookup per SIGIO sent.
 *
 * What it cannot close: a session holding CORDON_SIGIO_FILES files with an
 * owner at once: a further record cannot be made, the failure is reported,
 * and that file's signals are then not judged (the pid namespace remains);
 * SIGURG to the owner of a socket (out-of-band data), which the kernel
 * sends with no LSM hook (its default action is to ignore it).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, CORDON_SIGIO_FILES);
	__type(key, __u64);             /* struct file * */
	__type(value, __u64);           /* the setter's session */
} cordon_sigio_owner SEC(".maps");

/*
 * A void hook in the kernels the floor runs on (6.1.y's stable backport
 * included): there is no earlier verdict to keep, and nothing to refuse.
 */
SEC("lsm/file_set_fowner")
int BPF_PROG(cordon_file_set_fowner, struct file *file)
{
	__u64 key = (__u64)file, sid = 0;

	if (!current_session(&sid)) {
		(void)bpf_map_delete_elem(&cordon_sigio_owner, &key);
		return 0;
	}
	if (bpf_map_update_elem(&cordon_sigio_owner, &key, &sid, BPF_ANY))
		(void)DENY(sid, CORDON_OP_SIGIO, -E2BIG, "owner not recorded");
	return 0;
}

SEC("lsm/file_free_security")
int BPF_PROG(cordon_file_free_security, struct file *file)
{
	__u64 key = (__u64)file;

	(void)bpf_map_delete_elem(&cordon_sigio_owner, &key);
	return 0;
}

/* Up to 6.11 the owner is inside struct file; later it points back to it. */
struct file___fown {
	struct fown_struct f_owner;
} __attribute__((preserve_access_index));

struct fown_struct___file {
	struct file *file;
} __attribute__((preserve_access_index));

SEC("lsm/file_send_sigiotask")
int BPF_PROG(cordon_file_send_sigiotask, struct task_struct *tsk, struct fown_struct *fown,
	     int sig, int ret)
{
	__u64 key, *sid;

	if (ret)
		return ret;
	if (bpf_core_field_exists(struct fown_struct___file, file))
		key = (__u64)BPF_CORE_READ((struct fown_struct___file *)fown, file);
	else
		key = (__u64)fown - bpf_core_field_offset(struct file___fown, f_owner);
	sid = bpf_map_lookup_elem(&cordon_sigio_owner, &key);
	if (!sid || task_session(tsk) == *sid)
		return 0;
	return DENY(*sid, CORDON_OP_SIGIO, -EPERM, "pid %d sig %d", BPF_CORE_READ(tsk, tgid), sig);
}
