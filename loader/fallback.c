// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The fallback posture's self-applied layers, for kernels without BPF LSM:
 * a Landlock domain built from the compiled policy and a seccomp denylist.
 * The agent's process applies both to itself, single-threaded, after
 * PR_SET_NO_NEW_PRIVS and right before exec; every descendant inherits them
 * and none can drop them.
 *
 * What the fallback cannot close (also in fallback_report.lacks, so `cordon
 * run` can say it):
 *  - a hardlink to a protected file made before the session, in a directory
 *    the policy allows: Landlock judges the path the file is reached by, not
 *    the inode, so the link is as readable as its directory.  Likewise a
 *    bind mount of a protected path made before the session;
 *  - mmap/mprotect PROT_EXEC of a readable file (Landlock checks execve
 *    only);
 *  - chmod, chown, setxattr, utimes: Landlock has no right for them (DAC and
 *    dropped capabilities are all that stand);
 *  - connect to pathname Unix sockets: Landlock judges creating the socket
 *    file, not connecting to an existing one;
 *  - descriptors open before the domain is applied keep their access;
 *  - ioctl is judged by request number only (TIOCSTI, TIOCLINUX), never on
 *    the object it reaches;
 *  - network by address and non-TCP protocols: Landlock knows TCP ports
 *    only; the cgroup-bpf programs judge addresses and UDP;
 *  - no kernel event for a denial: Landlock and seccomp answer the task, not
 *    cordon's audit log;
 *  - below the running ABI: see abi_lacks().
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/sched.h>
#include <seccomp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include "fallback.h"
#include "landlock_compat.h"
#include "util.h"

/*
 * Bounds on the split (below).  A policy that needs more rules than this
 * fails closed with an error naming the directory, never a partial domain.
 */
#define FB_MAX_FS_RULES  8192
#define FB_MAX_DEPTH     32
#define FB_MAX_NET_PORTS 1024

struct fb_path {
	char *path;
	uint32_t rights;        /* CORDON_FS_* */
};

struct fb_ctx {
	struct fb_path *allow, *deny;
	size_t n_allow, n_deny, cap_allow, cap_deny;
	int ruleset_fd;
	int abi;
	uint64_t handled_fs;
	struct fallback_report *rep;
};

static void fb_ctx_free(struct fb_ctx *c)
{
	for (size_t i = 0; i < c->n_allow; i++)
		free(c->allow[i].path);
	for (size_t i = 0; i < c->n_deny; i++)
		free(c->deny[i].path);
	free(c->allow);
	free(c->deny);
	if (c->ruleset_fd >= 0)
		(void)close(c->ruleset_fd);
}

__attribute__((format(printf, 3, 4)))
static int fail(struct fallback_report *rep, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rep->error, sizeof(rep->error), fmt, ap);
	va_end(ap);
	return err;
}

static void lack(struct fallback_report *rep, const char *id, const char *what)
{
	size_t n = strlen(rep->lacks);

	snprintf(rep->lacks + n, sizeof(rep->lacks) - n, "%s: %s\n", id, what);
}

static int push(struct fb_path **v, size_t *n, size_t *cap, const char *path, uint32_t rights)
{
	char *s;

	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		struct fb_path *nv = realloc(*v, nc * sizeof(**v));

		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = nc;
	}
	s = strdup(path);
	if (!s)
		return -ENOMEM;
	(*v)[(*n)++] = (struct fb_path){ .path = s, .rights = rights };
	return 0;
}

/*
 * Collect allow and deny roots.  Escalated rights are denied: Landlock
 * cannot hold a call for a human, so the supervisor must perform an
 * approved operation itself.  A deny root is kept both as written and
 * resolved (an invariant like ${HOME}/.ssh is not canonicalised, and a
 * symlinked ~/.ssh must not leave its target granted).
 */
/*
 * Invariants inside /proc that the fallback leaves to capabilities and DAC.
 * Splitting /proc around them would freeze its PID directories at apply
 * time, and every process started later could not read /proc/self.
 * /proc/kcore needs CAP_SYS_RAWIO, which a session never keeps;
 * /proc/sysrq-trigger is 0200 root, which protects it from every agent but
 * one running as uid 0 (see static_lacks).
 */
static bool left_to_dac(const struct pol_fs_entry *e)
{
	return e->invariant && (!strcmp(e->path, "/proc/kcore") ||
				!strcmp(e->path, "/proc/sysrq-trigger"));
}

/*
 * Where an existing path really is (realpath(3)'s answer), from the object
 * opened: two system calls instead of a readlink per component (a policy
 * has dozens of denied paths, and this runs at every session start).
 */
static bool resolved(const char *path, char *out, size_t len)
{
	char link[64];
	int fd = open(path, O_PATH | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, out, len - 1);
	close(fd);
	if (n <= 0 || out[0] != '/')
		return false;
	out[n] = '\0';
	return true;
}

static int collect(void *ctx, const struct pol_fs_entry *e)
{
	struct fb_ctx *c = ctx;
	uint32_t deny = e->deny | e->escalate;
	char real[PATH_MAX];
	int r;

	if (left_to_dac(e))
		return 0;

	if (e->allow & ~deny) {
		r = push(&c->allow, &c->n_allow, &c->cap_allow, e->path, e->allow & ~deny);
		if (r < 0)
			return r;
	}
	if (!deny)
		return 0;
	r = push(&c->deny, &c->n_deny, &c->cap_deny, e->path, deny);
	if (r < 0)
		return r;
	if (resolved(e->path, real, sizeof(real)) && strcmp(real, e->path))
		r = push(&c->deny, &c->n_deny, &c->cap_deny, real, deny);
	return r;
}

static bool within(const char *path, const char *dir)
{
	return pol_path_within(path, dir);
}

static bool strictly_within(const char *path, const char *dir)
{
	return within(path, dir) && strcmp(path, dir);
}

/*
 * cordon rights to Landlock rights.  CHMOD has no Landlock right (a gap);
 * MAKE_CHAR and MAKE_BLOCK are handled and never granted, so no device node
 * can be made; REFER only where a file may both arrive and leave; device
 * ioctls only on /dev paths the policy lets the agent write.
 */
static uint64_t ll_rights(const struct fb_ctx *c, uint32_t cr, const char *path, bool dir,
			  bool ioctl_only)
{
	uint64_t m = 0;
	bool dev = within(path, "/dev");

	if (!ioctl_only) {
		if (cr & CORDON_FS_READ)
			m |= LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
		if (cr & CORDON_FS_WRITE)
			m |= LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE;
		if (cr & CORDON_FS_CREATE)
			m |= LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_DIR |
			     LANDLOCK_ACCESS_FS_MAKE_SYM | LANDLOCK_ACCESS_FS_MAKE_FIFO |
			     LANDLOCK_ACCESS_FS_MAKE_SOCK;
		if (cr & CORDON_FS_DELETE)
			m |= LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR;
		if (cr & CORDON_FS_EXEC)
			m |= LANDLOCK_ACCESS_FS_EXECUTE;
		if ((cr & CORDON_FS_CREATE) && (cr & CORDON_FS_DELETE))
			m |= LANDLOCK_ACCESS_FS_REFER;
	}
	if (dev && (cr & CORDON_FS_WRITE))
		m |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	if (!dir)
		m &= LL_FS_FILE;
	return m & c->handled_fs;
}

static int add_path_rule(struct fb_ctx *c, int fd, uint64_t access, const char *path)
{
	struct landlock_path_beneath_attr pb = { .allowed_access = access, .parent_fd = fd };

	if (!access)
		return 0;
	if (c->rep->fs_rules >= FB_MAX_FS_RULES)
		return fail(c->rep, -E2BIG, "more than %d Landlock rules needed (at %s): narrow "
			    "the policy's allow rules around its denied paths", FB_MAX_FS_RULES, path);
	if (landlock_add_rule(c->ruleset_fd, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0) {
		/*
		 * EBADFD: the path resolved to no filesystem object (a pipe or a
		 * socket behind /proc/self/fd): Landlock does not govern those,
		 * and a rule for it would grant nothing.  Skipping it denies
		 * nothing that the rule could have allowed.
		 */
		if (errno == EBADFD)
			return 0;
		return fail(c->rep, -errno, "landlock_add_rule %s: %m", path);
	}
	c->rep->fs_rules++;
	return 0;
}

/*
 * Grant cordon rights `cr` on `path` and below, minus every denial.
 *
 * Landlock rules only add rights to a hierarchy; a denial below an allowed
 * directory cannot be written.  So a directory with a denied path below it
 * is split: it gets directly only the rights no denial below touches, and
 * the rest goes to each of its children separately, except the denied one,
 * recursively down to the denied path (which gets what its own denial
 * leaves).  This closes reading ~/.ssh/id_rsa under a readable HOME, and
 * renaming or deleting ~/.ssh out from under its denial (REMOVE_* and
 * REFER on HOME are never granted while a denial sits below it).
 *
 * What it cannot close, and what it costs: the split enumerates the
 * directory once, at apply time; an entry created later in a split
 * directory (by the agent or by the host) gets only the directly granted
 * rights (fail closed: less, never more).  On /proc that means a process
 * started after apply cannot read its own /proc/PID beyond them.  Entries
 * of a split directory are enumerated by name from the open parent; a host
 * process racing the enumeration can at worst make an entry miss its rule.
 * Symlinks get no rule: access through them is judged at their target.
 */
static int grant(struct fb_ctx *c, const char *path, int fd, uint32_t cr, int depth,
		 bool ioctl_only)
{
	uint32_t below = 0;
	struct stat st;
	DIR *d;
	struct dirent *de;
	int r = 0;

	for (size_t i = 0; i < c->n_deny; i++)
		if (within(path, c->deny[i].path))
			cr &= ~c->deny[i].rights;
	if (!cr)
		return 0;
	for (size_t i = 0; i < c->n_deny; i++)
		if (strictly_within(c->deny[i].path, path))
			below |= c->deny[i].rights & cr;
	if (fstat(fd, &st) < 0)
		return fail(c->rep, -errno, "fstat %s: %m", path);
	r = add_path_rule(c, fd, ll_rights(c, cr & ~below, path, S_ISDIR(st.st_mode), ioctl_only),
			  path);
	if (r < 0 || !below || !S_ISDIR(st.st_mode))
		return r;
	if (depth >= FB_MAX_DEPTH)
		return fail(c->rep, -ELOOP, "splitting %s around a denied path: deeper than %d "
			    "levels", path, FB_MAX_DEPTH);
	c->rep->split_dirs++;
	{
		int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (dfd < 0)
			return fail(c->rep, -errno, "cannot list %s to split it around a denied "
				    "path: %m", path);
		d = fdopendir(dfd);
		if (!d) {
			(void)close(dfd);
			return fail(c->rep, -ENOMEM, "fdopendir %s", path);
		}
	}
	while (r >= 0 && (errno = 0, de = readdir(d))) {
		char child[PATH_MAX];
		int cfd;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if ((size_t)snprintf(child, sizeof(child), "%s%s%s", path,
				     strcmp(path, "/") ? "/" : "", de->d_name) >= sizeof(child)) {
			r = fail(c->rep, -ENAMETOOLONG, "path too long below %s", path);
			break;
		}
		cfd = openat(dirfd(d), de->d_name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (cfd < 0) {
			if (errno == ENOENT)
				continue;       /* gone meanwhile: nothing to grant */
			r = fail(c->rep, -errno, "open %s: %m", child);
			break;
		}
		if (fstat(cfd, &st) == 0 && !S_ISLNK(st.st_mode))
			r = grant(c, child, cfd, cr & below, depth + 1, ioctl_only);
		(void)close(cfd);
	}
	if (r >= 0 && errno && !de)
		r = fail(c->rep, -errno, "readdir %s: %m", path);
	(void)closedir(d);
	return r;
}

static int grant_root(struct fb_ctx *c, const char *path, uint32_t cr, bool ioctl_only)
{
	_cleanup_close_ int fd = open(path, O_PATH | O_CLOEXEC);

	if (fd < 0) {
		if (errno == ENOENT)
			return 0;       /* nothing there to grant (and Landlock needs an fd) */
		return fail(c->rep, -errno, "open %s: %m", path);
	}
	return grant(c, path, fd, cr, 0, ioctl_only);
}

struct net_ctx {
	struct fb_ctx *c;
	int n_ports;
};

static int add_port(struct fb_ctx *c, uint64_t access, uint16_t port)
{
	struct landlock_net_port_attr np = { .allowed_access = access, .port = port };

	if (landlock_add_rule(c->ruleset_fd, LANDLOCK_RULE_NET_PORT, &np, 0) < 0)
		return fail(c->rep, -errno, "landlock_add_rule port %u: %m", port);
	c->rep->net_rules++;
	return 0;
}

/*
 * Direct network rules allow connecting to their ports.  Landlock knows
 * ports only, so this over-grants across addresses by design: the
 * cgroup-bpf programs judge the address.
 */
static int net_rule(void *ctx, const struct pol_net_entry *e)
{
	struct net_ctx *n = ctx;

	if (e->decision != CORDON_ALLOW)
		return 0;
	if ((int)(e->port_hi - e->port_lo) + 1 + n->n_ports > FB_MAX_NET_PORTS)
		return fail(n->c->rep, -E2BIG, "direct network rule %u allows ports %u-%u: "
			    "Landlock needs one rule per port and the fallback takes at most %d; "
			    "narrow the rule's ports", e->rule_id, e->port_lo, e->port_hi,
			    FB_MAX_NET_PORTS);
	for (unsigned p = e->port_lo; p <= e->port_hi; p++) {
		int r = add_port(n->c, LANDLOCK_ACCESS_NET_CONNECT_TCP, (uint16_t)p);

		if (r < 0)
			return r;
		n->n_ports++;
	}
	return 0;
}

/* The gaps that depend on the running ABI. */
static void abi_lacks(struct fallback_report *rep, int abi, bool bind_restricted)
{
	if (abi < 2)
		lack(rep, "landlock-refer", "renames and links across directories are always "
		     "refused (EXDEV): Landlock ABI < 2 has no REFER");
	if (abi < 3)
		lack(rep, "landlock-truncate", "truncate(2) and O_TRUNC are not judged: Landlock "
		     "ABI < 3");
	if (abi < 4)
		lack(rep, "landlock-net", "TCP bind and connect ports are not restricted by "
		     "Landlock (ABI < 4); only cgroup-bpf judges the network");
	else if (!bind_restricted)
		lack(rep, "tcp-bind-port", "TCP bind on any port (dev servers); the cgroup-bpf "
		     "programs keep the address on loopback");
	if (abi < 5)
		lack(rep, "landlock-ioctl-dev", "device ioctls are not judged by Landlock (ABI < 5); "
		     "the seccomp denylist still refuses TIOCSTI and TIOCLINUX");
	if (abi < 6) {
		lack(rep, "scope-abstract-unix", "abstract Unix sockets outside the session can be "
		     "connected to: Landlock ABI < 6 has no scoping");
		lack(rep, "scope-signal", "signals to same-uid processes outside the session: "
		     "Landlock ABI < 6 has no scoping");
	}
}

static void static_lacks(struct fallback_report *rep)
{
	lack(rep, "hardlink", "a hardlink (or bind mount) to a protected file made before the "
	     "session, in an allowed directory, is readable: Landlock judges the path, not the "
	     "inode");
	lack(rep, "mmap-exec", "mmap/mprotect PROT_EXEC of a readable non-exec file");
	lack(rep, "metadata", "chmod, chown, setxattr and utimes are not judged (no Landlock "
	     "right)");
	lack(rep, "unix-pathname", "connect to an existing pathname Unix socket is not judged "
	     "by object");
	lack(rep, "inherited-fds", "descriptors open before the domain keep their access");
	lack(rep, "ioctl-object", "ioctl is judged by request number, not on the object");
	lack(rep, "net-address", "Landlock restricts TCP ports only; addresses and UDP are "
	     "cgroup-bpf's");
	lack(rep, "split-snapshot", "a directory split around a denied path is enumerated once: "
	     "entries created in it later get only its direct rights (e.g. new /proc/PID)");
	lack(rep, "no-events", "denials are answered to the task; no kernel event reaches the "
	     "audit log");
	lack(rep, "proc-root", "an agent running as uid 0 can write /proc/sysrq-trigger: "
	     "Landlock cannot deny one /proc file without freezing /proc/PID");
}

/* Build the ruleset; returns its fd (the caller restricts itself with it). */
static int landlock_build(const struct policy *p, const struct fallback_options *opt,
			  struct fallback_report *rep)
{
	struct fb_ctx c = { .ruleset_fd = -1, .rep = rep };
	struct cordon_landlock_ruleset_attr attr = { 0 };
	int abi, r;

	abi = landlock_abi();
	if (abi < 0)
		return fail(rep, abi, "Landlock is unavailable: %s", abi == -EOPNOTSUPP ?
			    "disabled at boot" : abi == -ENOSYS ? "not built into this kernel" :
			    strerror(-abi));
	rep->landlock_abi = abi;
	c.abi = abi;
	c.handled_fs = landlock_abi_fs(abi);
	attr.handled_access_fs = c.handled_fs;
	attr.handled_access_net = landlock_abi_net(abi);
	if (!opt->restrict_bind)
		attr.handled_access_net &= ~LANDLOCK_ACCESS_NET_BIND_TCP;
	attr.scoped = landlock_abi_scope(abi);

	r = pol_compile_fs(p, collect, &c);
	if (r < 0) {
		r = fail(rep, r, "compiling the policy's filesystem rules: %s", strerror(-r));
		goto out;
	}
	c.ruleset_fd = landlock_create_ruleset(&attr, landlock_abi_attr_size(abi), 0);
	if (c.ruleset_fd < 0) {
		r = fail(rep, -errno, "landlock_create_ruleset (ABI %d): %m", abi);
		goto out;
	}
	for (size_t i = 0; i < c.n_allow; i++) {
		r = grant_root(&c, c.allow[i].path, c.allow[i].rights, false);
		if (r < 0)
			goto out;
		/* A writable ancestor of /dev: device ioctls still only below /dev. */
		if ((c.allow[i].rights & CORDON_FS_WRITE) && strictly_within("/dev", c.allow[i].path)) {
			r = grant_root(&c, "/dev", CORDON_FS_WRITE, true);
			if (r < 0)
				goto out;
		}
	}
	if (attr.handled_access_net & LANDLOCK_ACCESS_NET_CONNECT_TCP) {
		struct net_ctx n = { .c = &c };

		for (int i = 0; i < opt->n_connect_ports && i < FALLBACK_MAX_PORTS; i++) {
			r = add_port(&c, LANDLOCK_ACCESS_NET_CONNECT_TCP, opt->connect_ports[i]);
			if (r < 0)
				goto out;
		}
		r = pol_compile_net(p, net_rule, &n);
		if (r < 0) {
			if (!rep->error[0])
				(void)fail(rep, r, "compiling the policy's network rules: %s", strerror(-r));
			goto out;
		}
		rep->net_connect = true;
	}
	if (attr.handled_access_net & LANDLOCK_ACCESS_NET_BIND_TCP) {
		for (int i = 0; i < opt->n_bind_ports && i < FALLBACK_MAX_PORTS; i++) {
			r = add_port(&c, LANDLOCK_ACCESS_NET_BIND_TCP, opt->bind_ports[i]);
			if (r < 0)
				goto out;
		}
		rep->net_bind = true;
	}
	rep->scoped_abstract = attr.scoped & LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET;
	rep->scoped_signals = attr.scoped & LANDLOCK_SCOPE_SIGNAL;
	r = c.ruleset_fd;
	c.ruleset_fd = -1;
out:
	fb_ctx_free(&c);
	return r;
}

static int restrict_self(int ruleset_fd, struct fallback_report *rep)
{
	if (landlock_restrict_self(ruleset_fd, 0) < 0)
		return fail(rep, -errno, "landlock_restrict_self: %m%s", errno == EPERM ?
			    " (set PR_SET_NO_NEW_PRIVS first)" : "");
	return 0;
}


/*
 * The seccomp denylist: syscalls a sandboxed agent has no business making,
 * judged on registers only (seccomp cannot read memory without racing the
 * caller).  Each closes a way out of the Landlock domain or into the
 * kernel's attack surface:
 *  - ptrace, process_vm_*: reading or steering another process of the same
 *    uid outside the session (and the supervisor);
 *  - bpf, perf_event_open, userfaultfd: kernel attack surface and the means
 *    to detach or read cordon's own programs;
 *  - the mount API, pivot_root, setns, unshare/clone with namespace flags:
 *    a new mount or user namespace re-roots paths under Landlock's feet and
 *    grants capabilities over it;
 *  - modules, kexec, reboot, swap, acct, syslog, quotactl, vhangup,
 *    lookup_dcookie: root-on-the-host operations (a root agent keeps
 *    capabilities unless the caller drops them);
 *  - io_uring: its operations run in kernel workers that seccomp never sees;
 *  - keyctl/add_key/request_key: the kernel keyrings hold other sessions'
 *    secrets and are not namespaced by path;
 *  - name_to_handle_at/open_by_handle_at: opening by handle skips the path
 *    walk Landlock judges;
 *  - ioctl TIOCSTI/TIOCLINUX: typing into the controlling terminal, i.e.
 *    running commands outside the sandbox.  The request is compared in its
 *    low 32 bits only, as the kernel reads it, so high garbage bits do not
 *    slip past;
 *  - clone3 gets ENOSYS: its flags live in memory seccomp cannot read, and
 *    libc falls back to clone, whose flags are a register;
 *  - any other ABI (int 0x80 i386, x32): syscall numbers differ there, so a
 *    filter written for x86_64 would judge the wrong calls.  libseccomp
 *    answers foreign arches and x32 numbers with the bad-arch action.
 *  - socket(): only AF_UNIX, AF_INET, AF_INET6 and NETLINK_ROUTE.  The
 *    cgroup sock_create program only ever sees inet families, so packet
 *    sockets (sniffing, raw frames), other netlink families (sock_diag lists
 *    the host's sockets; audit, uevents), vsock (the hypervisor), AF_ALG
 *    (kernel crypto attack surface), AF_KEY, bluetooth, CAN, TIPC, RDS,
 *    XDP... are refused here, by the family register.  NETLINK_ROUTE stays:
 *    glibc's getaddrinfo and `ip` need it; it lists interfaces and routes,
 *    and changes need CAP_NET_ADMIN.
 * What it cannot close: an ioctl judged on its object; namespaces made
 * before apply; any syscall not listed (a denylist: new kernel syscalls are
 * allowed until added here); sockets passed in over SCM_RIGHTS.
 */
static const int deny_eperm[] = {
	__NR_ptrace, __NR_process_vm_readv, __NR_process_vm_writev,
	__NR_bpf, __NR_perf_event_open, __NR_userfaultfd,
	__NR_mount, __NR_umount2, __NR_pivot_root, __NR_move_mount, __NR_open_tree,
	__NR_fsopen, __NR_fsconfig, __NR_fsmount, __NR_fspick, __NR_mount_setattr,
	__NR_setns,
	__NR_init_module, __NR_finit_module, __NR_delete_module,
	__NR_kexec_load, __NR_kexec_file_load, __NR_reboot,
	__NR_swapon, __NR_swapoff, __NR_acct, __NR_syslog, __NR_vhangup,
	__NR_quotactl, __NR_lookup_dcookie,
#ifdef __NR_quotactl_fd
	__NR_quotactl_fd,
#endif
	__NR_io_uring_setup, __NR_io_uring_enter, __NR_io_uring_register,
	__NR_keyctl, __NR_add_key, __NR_request_key,
	__NR_name_to_handle_at, __NR_open_by_handle_at,
};

#define NS_FLAGS_CLONE (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | \
			CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET)
#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

int fallback_seccomp_install(void)
{
#if !defined(__x86_64__)
	return -ENOTSUP;        /* the denylist's numbers and arch handling are x86_64's */
#else
	scmp_filter_ctx ctx;
	int r = 0;

	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return -ENOMEM;
	r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(EPERM));
	if (!r)
		r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
	for (size_t i = 0; !r && i < ARRAY_SIZE(deny_eperm); i++)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), deny_eperm[i], 0);
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), __NR_clone3, 0);
	/* One rule per bit: libseccomp has no "masked not equal". */
	for (unsigned bit = 0; !r && bit < 64; bit++) {
		uint64_t b = 1ULL << bit;

		if (b & NS_FLAGS_CLONE)
			r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), __NR_clone, 1,
					     SCMP_A0(SCMP_CMP_MASKED_EQ, b, b));
		if (!r && (b & (NS_FLAGS_CLONE | CLONE_NEWTIME)))
			r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), __NR_unshare, 1,
					     SCMP_A0(SCMP_CMP_MASKED_EQ, b, b));
	}
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), __NR_ioctl, 1,
				     SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, 0x5412 /* TIOCSTI */));
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), __NR_ioctl, 1,
				     SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, 0x541C /* TIOCLINUX */));
	/* Socket families: every family number but the four allowed ones. */
	for (int fam = 0; !r && fam < 64; fam++) {
		if (fam == AF_UNIX || fam == AF_INET || fam == AF_INET6)
			continue;
		if (fam == AF_NETLINK)
			r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), __NR_socket, 2,
					     SCMP_A0(SCMP_CMP_EQ, (uint64_t)fam),
					     SCMP_A2(SCMP_CMP_NE, 0 /* NETLINK_ROUTE */));
		else
			r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), __NR_socket, 1,
					     SCMP_A0(SCMP_CMP_EQ, (uint64_t)fam));
	}
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), __NR_socket, 1,
				     SCMP_A0(SCMP_CMP_GE, 64));
	if (!r)
		r = seccomp_load(ctx);
	seccomp_release(ctx);
	return r > 0 ? -r : r;
#endif
}

int fallback_landlock_apply(const struct policy *p, const struct fallback_options *opt,
			    struct fallback_report *rep)
{
	int fd = fallback_prepare(p, opt, rep), r;

	if (fd < 0)
		return fd;
	r = restrict_self(fd, rep);
	close(fd);
	return r;
}

int fallback_prepare(const struct policy *p, const struct fallback_options *opt,
		     struct fallback_report *rep)
{
	static const struct fallback_options none;
	int r;

	if (!opt)
		opt = &none;
	memset(rep, 0, sizeof(*rep));
	static_lacks(rep);
	r = landlock_build(p, opt, rep);
	abi_lacks(rep, rep->landlock_abi, opt->restrict_bind);
	return r;
}

int fallback_apply_prepared(int ruleset_fd, struct fallback_report *rep)
{
	int r = restrict_self(ruleset_fd, rep);

	if (r < 0)
		return r;
	r = fallback_seccomp_install();
	if (r < 0)
		return fail(rep, r, "installing the seccomp denylist: %s", strerror(-r));
	rep->seccomp = true;
	return 0;
}

int fallback_apply(const struct policy *p, const struct fallback_options *opt,
		   struct fallback_report *rep)
{
	int fd = fallback_prepare(p, opt, rep), r;

	if (fd < 0)
		return fd;
	r = fallback_apply_prepared(fd, rep);
	close(fd);
	return r;
}
