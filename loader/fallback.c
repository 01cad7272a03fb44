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
 *    file, not connecting to an existing one (the supervisor judges the
 *    path of a connect; datagrams sent to a path are not judged, and a
 *    connect address rewritten after the supervisor read it is not either:
 *    posture.c's unix-socket-by-object says so);
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
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include "fallback.h"
#include "seccomp_filters.h"
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
	bool dir;               /* deny: a directory when the ruleset was built */
	bool covered;           /* deny: listed in the report's covers[] */
};

struct fb_ctx {
	struct fb_path *allow, *deny;
	size_t n_allow, n_deny, cap_allow, cap_deny;
	int ruleset_fd;
	int abi;
	uint64_t handled_fs;
	struct fallback_report *rep;
	const char *layer;              /* fallback_options.layer */
	bool cover;                     /* fallback_options.cover_denied_dirs */
	const struct fallback_options *opt;
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
	struct stat st;
	int r;

	if (c->opt->tap) {
		r = c->opt->tap(c->opt->tap_ctx, e);
		if (r < 0)
			return r;
	}
	if (left_to_dac(e))
		return 0;
	/* The agent's layer (fallback_options.layer): see there. */
	if (deny && c->layer && pol_path_within(e->path, c->layer) && strcmp(e->path, c->layer)) {
		if (lstat(e->path, &st) < 0)
			deny = errno == ENOENT ? 0 : deny;
		else if (!e->invariant)
			deny &= ~(CORDON_FS_WRITE | CORDON_FS_CREATE | CORDON_FS_DELETE |
				  CORDON_FS_CHMOD);
		else if (!S_ISDIR(st.st_mode) && (deny & CORDON_FS_DELETE))
			deny &= ~CORDON_FS_CREATE;
	}

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
	/*
	 * A denial must reach the object, not only the name: a symlink gets no
	 * Landlock rule, so a denied path through a link is denied again where
	 * it really is.  Paths the parser already resolved are not asked twice.
	 */
	if (!e->canonical && resolved(e->path, real, sizeof(real)) && strcmp(real, e->path))
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
 *
 * Listing.  A split directory that loses READ keeps READ_DIR (listing
 * itself) when no denied directory below it could be listed through it:
 * READ_DIR on a directory holds for every directory beneath, and the split
 * grants its children READ anyway, so the only directories it adds are the
 * denied ones.  Those the caller covers in the agent's view (with
 * cover_denied_dirs: an empty directory, mode 0, read-only, see covers[])
 * are no longer the denied ones; a denied file is not listed.  Attack
 * closed without the cover: listing /etc/sudoers.d, /sys/fs/bpf, ~/.ssh.
 * Before this, `ls /etc`, `ls /sys` and `ls ~` failed in the fallback
 * while the policy (and `cordon policy explain`) allowed them.  What it
 * cannot close: a directory the host creates later below a split one, at
 * a denied name, is listable (its files are not readable: they get only
 * the split directory's direct rights).
 */
static int grant(struct fb_ctx *c, const char *path, int fd, int type, uint32_t cr, int depth,
		 bool ioctl_only, const size_t *rel, size_t n_rel)
{
	uint32_t below = 0;
	uint64_t direct;
	bool listable = true;
	struct stat st;
	DIR *d;
	struct dirent *de;
	size_t *sub, n_sub = 0;
	bool dir;
	int r = 0;

	/*
	 * Only the denials on this path, above it or below it matter here and
	 * further down (`rel`, narrowed at each level): a split /etc has a
	 * hundred and fifty children and a policy a hundred denials.
	 */
	sub = malloc((n_rel ? n_rel : 1) * sizeof(*sub));
	if (!sub)
		return fail(c->rep, -ENOMEM, "out of memory splitting %s", path);
	for (size_t k = 0; k < n_rel; k++) {
		const struct fb_path *dn = &c->deny[rel[k]];

		if (within(path, dn->path)) {
			cr &= ~dn->rights;
			sub[n_sub++] = rel[k];
		} else if (strictly_within(dn->path, path)) {
			sub[n_sub++] = rel[k];
		}
	}
	if (!cr)
		goto out;
	for (size_t k = 0; k < n_sub; k++) {
		const struct fb_path *dn = &c->deny[sub[k]];

		if (!strictly_within(dn->path, path))
			continue;
		below |= dn->rights & cr;
		if ((dn->rights & CORDON_FS_READ) && dn->dir && !dn->covered)
			listable = false;
	}
	if (type == DT_UNKNOWN) {
		if (fstat(fd, &st) < 0) {
			r = fail(c->rep, -errno, "fstat %s: %m", path);
			goto out;
		}
		dir = S_ISDIR(st.st_mode);
	} else {
		dir = type == DT_DIR;
	}
	direct = ll_rights(c, cr & ~below, path, dir, ioctl_only);
	if (dir && listable && !ioctl_only && (cr & below & CORDON_FS_READ))
		direct |= LANDLOCK_ACCESS_FS_READ_DIR & c->handled_fs;
	r = add_path_rule(c, fd, direct, path);
	if (r < 0 || !below || !dir)
		goto out;
	if (depth >= FB_MAX_DEPTH) {
		r = fail(c->rep, -ELOOP, "splitting %s around a denied path: deeper than %d "
			 "levels", path, FB_MAX_DEPTH);
		goto out;
	}
	c->rep->split_dirs++;
	{
		int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (dfd < 0) {
			r = fail(c->rep, -errno, "cannot list %s to split it around a denied "
				 "path: %m", path);
			goto out;
		}
		d = fdopendir(dfd);
		if (!d) {
			(void)close(dfd);
			r = fail(c->rep, -ENOMEM, "fdopendir %s", path);
			goto out;
		}
	}
	while (r >= 0 && (errno = 0, de = readdir(d))) {
		char child[PATH_MAX];
		int cfd, ctype = de->d_type;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		/* Symlinks get no rule (access through them is judged at the target). */
		if (ctype == DT_LNK)
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
		/*
		 * The entry's type from the directory is the type of what was
		 * opened unless it was replaced in between; then it is asked
		 * again (a symlink must not get a rule for its target).
		 */
		if (ctype == DT_UNKNOWN || ctype == DT_DIR) {
			if (fstat(cfd, &st) == 0)
				ctype = S_ISLNK(st.st_mode) ? DT_LNK : S_ISDIR(st.st_mode) ? DT_DIR : DT_REG;
			else
				ctype = DT_LNK;     /* unknown: grant nothing */
		}
		if (ctype != DT_LNK)
			r = grant(c, child, cfd, ctype, cr & below, depth + 1, ioctl_only, sub, n_sub);
		(void)close(cfd);
	}
	if (r >= 0 && errno && !de)
		r = fail(c->rep, -errno, "readdir %s: %m", path);
	(void)closedir(d);
out:
	free(sub);
	return r;
}

/*
 * Which read-denied paths are directories now, and, where the caller
 * covers them (cover_denied_dirs), which it will cover: those below a path
 * the policy lets the agent read, whose split would otherwise take the
 * listing right from every directory above them.  Past FALLBACK_MAX_COVERS
 * (or a path too long to list) a directory is left uncovered: its
 * ancestors then lose listing, as before (fail closed).
 */
static void mark_denied_dirs(struct fb_ctx *c)
{
	struct stat st;

	for (size_t i = 0; i < c->n_deny; i++) {
		struct fb_path *d = &c->deny[i];
		bool under_read = false;

		if (!(d->rights & CORDON_FS_READ) || lstat(d->path, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		d->dir = true;
		for (size_t k = 0; k < c->n_allow && !under_read; k++)
			under_read = (c->allow[k].rights & CORDON_FS_READ) &&
				     strictly_within(d->path, c->allow[k].path);
		if (!c->cover || !under_read || c->rep->n_covers >= FALLBACK_MAX_COVERS ||
		    strlen(d->path) >= FALLBACK_COVER_PATH)
			continue;
		for (int k = 0; k < c->rep->n_covers && !d->covered; k++)
			d->covered = !strcmp(c->rep->covers[k], d->path);
		if (!d->covered) {
			snprintf(c->rep->covers[c->rep->n_covers++], FALLBACK_COVER_PATH, "%s", d->path);
			d->covered = true;
		}
	}
}

static int grant_root(struct fb_ctx *c, const char *path, uint32_t cr, bool ioctl_only)
{
	_cleanup_close_ int fd = open(path, O_PATH | O_CLOEXEC);
	_cleanup_free_ size_t *all = NULL;

	if (fd < 0) {
		if (errno == ENOENT)
			return 0;       /* nothing there to grant (and Landlock needs an fd) */
		return fail(c->rep, -errno, "open %s: %m", path);
	}
	all = malloc((c->n_deny ? c->n_deny : 1) * sizeof(*all));
	if (!all)
		return fail(c->rep, -ENOMEM, "out of memory granting %s", path);
	for (size_t i = 0; i < c->n_deny; i++)
		all[i] = i;
	return grant(c, path, fd, DT_UNKNOWN, cr, 0, ioctl_only, all, c->n_deny);
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
	lack(rep, "unix-pathname", "a pathname Unix socket is judged by path, not by object: "
	     "the supervisor performs allowed connects, and the network floor's unix gate "
	     "(Linux 6.7) refuses the session's own, datagrams with a destination included");
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
	struct fb_ctx c = { .ruleset_fd = -1, .rep = rep, .layer = opt->layer,
			    .cover = opt->cover_denied_dirs, .opt = opt };
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
		r = fail(rep, r, "compiling the policy's filesystem rules: %s", pol_compile_strerror(r));
		goto out;
	}
	mark_denied_dirs(&c);
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
 * The seccomp denylist (loader/filters.c says what it closes and what it
 * cannot), installed from its prebuilt program on every thread of the
 * caller (TSYNC).  Sets no_new_privs, as an unprivileged filter needs.
 */
int fallback_seccomp_install(void)
{
#if !defined(__x86_64__)
	return -ENOTSUP;        /* the denylist's numbers and arch handling are x86_64's */
#else
	struct sock_fprog prog = { .len = (unsigned short)ARRAY_SIZE(cordon_denylist_filter),
				   .filter = (struct sock_filter *)cordon_denylist_filter };
	long r;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog);
	if (r < 0)
		return -errno;
	return r > 0 ? -EBUSY : 0;      /* > 0: a thread that could not be synchronised */
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

int fallback_add_read(int ruleset_fd, const char *dir)
{
	struct landlock_path_beneath_attr pb = {
		.allowed_access = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR,
	};
	int r = 0;

	pb.parent_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (pb.parent_fd < 0)
		return -errno;
	if (landlock_add_rule(ruleset_fd, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0)
		r = -errno;
	close(pb.parent_fd);
	return r;
}

int fallback_cover_dirs(const struct fallback_report *rep, char *why, size_t wlen)
{
	for (int i = 0; i < rep->n_covers; i++) {
		_cleanup_close_ int fd = open(rep->covers[i], O_PATH | O_NOFOLLOW | O_DIRECTORY |
					      O_CLOEXEC);
		char p[64];

		if (fd < 0 && errno == ENOENT)
			continue;       /* gone since: nothing to list */
		snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
		if (fd < 0 || mount("tmpfs", p, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
				    "mode=0,size=4k,nr_inodes=1") < 0) {
			int e = errno;

			snprintf(why, wlen, "covering %s: %s", rep->covers[i], strerror(e));
			return -e;
		}
	}
	return 0;
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

/*
 * The rules a confined helper gets on top of the denylist: no program run,
 * no process made, no socket made or connected (the host's Unix sockets,
 * an X server's, the system bus, are reached by connect alone, which
 * Landlock does not judge), no signal but to itself, and a pidfd's signal
 * only to ask whether its process lives (peer_read).  Runtime libseccomp:
 * a helper starts once a session, not on its critical path.
 */
static int helper_rules(scmp_filter_ctx ctx)
{
	static const int eperm[] = {
		SCMP_SYS(execve), SCMP_SYS(execveat), SCMP_SYS(fork), SCMP_SYS(vfork),
		SCMP_SYS(clone), SCMP_SYS(socket), SCMP_SYS(socketpair), SCMP_SYS(connect),
		SCMP_SYS(bind), SCMP_SYS(listen), SCMP_SYS(kill), SCMP_SYS(tkill),
		SCMP_SYS(rt_sigqueueinfo), SCMP_SYS(pidfd_open), SCMP_SYS(pidfd_getfd),
	};
	scmp_datum_t self = (scmp_datum_t)getpid();
	int r = 0;

	for (size_t i = 0; !r && i < ARRAY_SIZE(eperm); i++)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), eperm[i], 0);
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(tgkill), 1,
				     SCMP_A0(SCMP_CMP_NE, self));
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(rt_tgsigqueueinfo), 1,
				     SCMP_A0(SCMP_CMP_NE, self));
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(pidfd_send_signal), 1,
				     SCMP_A1(SCMP_CMP_NE, 0));
	return r;
}

int fallback_confine_helper(const char *read_dir)
{
	struct cordon_landlock_ruleset_attr attr = { 0 };
	struct landlock_path_beneath_attr pb = {
		.allowed_access = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR,
	};
	_cleanup_close_ int rs = -1, dir = -1;
	scmp_filter_ctx ctx;
	int abi = landlock_abi(), r;

	if (abi >= 1) {
		attr.handled_access_fs = landlock_abi_fs(abi);
		attr.handled_access_net = landlock_abi_net(abi);
		attr.scoped = landlock_abi_scope(abi);
		rs = landlock_create_ruleset(&attr, landlock_abi_attr_size(abi), 0);
		dir = open(read_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (rs < 0 || dir < 0)
			return -errno;
		pb.parent_fd = dir;
		if (landlock_add_rule(rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0 ||
		    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || landlock_restrict_self(rs, 0) < 0)
			return -errno;
	}
	r = fallback_seccomp_install();
	if (r < 0)
		return r;
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return -ENOMEM;
	r = helper_rules(ctx);
	if (!r)
		r = seccomp_load(ctx);
	seccomp_release(ctx);
	return r > 0 ? -r : r;
}
