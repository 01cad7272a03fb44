// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The doctor's measurements.  Each mechanism is judged by using it, not by
 * reading kernel config: a kernel can list `bpf` among its LSMs and still
 * refuse LSM programs (this project's CI hosts do exactly that).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>

#include "cgroup.h"
#include "pin.h"
#include "probe.h"
#include "probe.skel.h"
#include "util.h"

#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif

static void set(struct mech_result *m, enum mech_state st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set(struct mech_result *m, enum mech_state st, const char *fmt, ...)
{
	va_list ap;

	m->state = st;
	va_start(ap, fmt);
	vsnprintf(m->reason, sizeof(m->reason), fmt, ap);
	va_end(ap);
}

/* The `lsm` list from securityfs, mounting securityfs if it is not. */
static int read_lsm_list(char *out, size_t outlen)
{
	_cleanup_free_ char *text = NULL;
	int r;

	r = read_file("/sys/kernel/security/lsm", &text, 4096);
	if (r == -ENOENT) {
		if (mount("securityfs", "/sys/kernel/security", "securityfs", 0, NULL) < 0)
			return -errno;
		r = read_file("/sys/kernel/security/lsm", &text, 4096);
	}
	if (r < 0)
		return r;
	snprintf(out, outlen, "%s", text);
	out[strcspn(out, "\n")] = 0;
	return 0;
}

static bool lsm_listed(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; (p = strstr(p, name)); p += n)
		if ((p == list || p[-1] == ',') && (p[n] == 0 || p[n] == ','))
			return true;
	return false;
}

static void probe_bpf_lsm(struct posture *p)
{
	struct mech_result *m = &p->mech[MECH_BPF_LSM];
	struct probe_bpf *skel = NULL;
	struct bpf_link *link = NULL;
	char lsms[1024];
	int r;

	r = read_lsm_list(lsms, sizeof(lsms));
	if (r < 0) {
		set(m, p->root ? MECH_UNAVAILABLE : MECH_NOT_CHECKED,
		    "cannot read the LSM list from securityfs: %s", strerror(-r));
		return;
	}
	if (!lsm_listed(lsms, "bpf")) {
		set(m, MECH_UNAVAILABLE, "bpf is not in the active LSM list (%s); "
		    "boot with lsm=...,bpf", lsms);
		return;
	}
	if (!p->root) {
		set(m, MECH_NOT_CHECKED, "needs root: loading an LSM program needs "
		    "CAP_BPF and CAP_SYS_ADMIN (lsm list: %s)", lsms);
		return;
	}
	skel = probe_bpf__open();
	if (!skel) {
		set(m, MECH_UNAVAILABLE, "cannot open the probe object: %s", strerror(errno));
		return;
	}
	bpf_program__set_autoload(skel->progs.probe_connect4, false);
	r = probe_bpf__load(skel);
	if (r) {
		set(m, MECH_UNAVAILABLE, "kernel refused LSM program load (%s)",
		    r == -EPERM ? "EPERM" : strerror(-r));
		goto out;
	}
	link = bpf_program__attach_lsm(skel->progs.probe_lsm);
	if (!link) {
		set(m, MECH_UNAVAILABLE, "kernel refused LSM program attach (%s)",
		    errno == EPERM ? "EPERM" : strerror(errno));
		goto out;
	}
	set(m, MECH_AVAILABLE, "an LSM program loaded and attached (lsm list: %s)", lsms);
out:
	bpf_link__destroy(link);
	probe_bpf__destroy(skel);
}

static void probe_cgroup(struct posture *p)
{
	struct mech_result *cg = &p->mech[MECH_CGROUP2];
	struct mech_result *m = &p->mech[MECH_CGROUP_BPF];
	struct probe_bpf *skel = NULL;
	struct bpf_link *link = NULL;
	_cleanup_close_ int fd = -1;
	char root[PATH_MAX], scratch[PATH_MAX + 64];
	int r;

	r = cg_find_root(root, sizeof(root));
	if (r < 0) {
		set(cg, MECH_UNAVAILABLE, "no cgroup2 mount in /proc/self/mountinfo");
		set(m, MECH_UNAVAILABLE, "needs cgroup v2");
		return;
	}
	set(cg, MECH_AVAILABLE, "mounted at %s", root);
	if (!p->root) {
		set(m, MECH_NOT_CHECKED, "needs root: attaching cgroup programs needs "
		    "CAP_BPF, CAP_NET_ADMIN and a writable cgroup");
		return;
	}
	snprintf(scratch, sizeof(scratch), "%s/cordon-probe-%d", root, (int)getpid());
	r = cg_mkdir(scratch);
	if (r < 0) {
		set(m, MECH_UNAVAILABLE, "cannot create a scratch cgroup in %s: %s",
		    root, strerror(-r));
		return;
	}
	fd = open(scratch, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	skel = probe_bpf__open();
	if (fd < 0 || !skel) {
		set(m, MECH_UNAVAILABLE, "cannot open the scratch cgroup or probe object: %s",
		    strerror(errno));
		goto out;
	}
	bpf_program__set_autoload(skel->progs.probe_lsm, false);
	r = probe_bpf__load(skel);
	if (r) {
		set(m, MECH_UNAVAILABLE, "kernel refused a cgroup/connect4 program reading the "
		    "caller's cgroup through BTF (%s)", strerror(-r));
		goto out;
	}
	link = bpf_program__attach_cgroup(skel->progs.probe_connect4, fd);
	if (!link) {
		set(m, MECH_UNAVAILABLE, "kernel refused to attach connect4 to a cgroup (%s)",
		    strerror(errno));
		goto out;
	}
	set(m, MECH_AVAILABLE, "a connect4 program reading the caller's cgroup through BTF "
	    "attached to a scratch cgroup");
out:
	bpf_link__destroy(link);
	probe_bpf__destroy(skel);
	(void)cg_destroy(scratch);
}

static void probe_landlock(struct posture *p)
{
	struct mech_result *m = &p->mech[MECH_LANDLOCK];
	long abi;

	abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 0) {
		if (errno == EOPNOTSUPP)
			set(m, MECH_UNAVAILABLE, "built in but disabled at boot (not in lsm=)");
		else if (errno == ENOSYS)
			set(m, MECH_UNAVAILABLE, "not built into this kernel");
		else
			set(m, MECH_UNAVAILABLE, "landlock_create_ruleset: %s", strerror(errno));
		return;
	}
	m->value = (int)abi;
	set(m, MECH_AVAILABLE, "ABI %ld", abi);
}

/*
 * Runs in a child that has installed a filter notifying getppid(): fork a
 * grandchild that calls getppid(), receive its notification, answer it with
 * ADDFD + SEND (an fd for /dev/null becomes the syscall's return value) and
 * check that the grandchild got a working descriptor for that device.
 * Exit code: 0 notify+send work, 1 notify works but not SEND, 2 notify fails.
 */
static int notify_child(void)
{
	scmp_filter_ctx ctx;
	struct seccomp_notif req = {};
	struct seccomp_notif_resp resp = {};
	struct seccomp_notif_addfd addfd = {};
	int listener, devnull, st, r;
	pid_t g;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return 2;
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx || seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(getppid), 0) ||
	    seccomp_load(ctx))
		return 2;
	listener = seccomp_notify_fd(ctx);
	if (listener < 0)
		return 2;

	g = fork();
	if (g < 0)
		return 2;
	if (g == 0) {
		struct stat a, b;
		long fd = syscall(SYS_getppid);

		if (fd < 0 || fstat((int)fd, &a) || stat("/dev/null", &b))
			_exit(1);
		_exit(a.st_rdev == b.st_rdev ? 0 : 1);
	}
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0) {
		kill(g, SIGKILL);
		return 2;
	}
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	addfd.id = req.id;
	addfd.srcfd = (__u32)devnull;
	addfd.flags = SECCOMP_ADDFD_FLAG_SEND;
	r = ioctl(listener, SECCOMP_IOCTL_NOTIF_ADDFD, &addfd);
	if (r < 0) {
		/* No SEND: answer the notification plainly so the grandchild ends. */
		resp.id = req.id;
		resp.error = -ENOSYS;
		(void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
		waitpid(g, &st, 0);
		return 1;
	}
	if (waitpid(g, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return 1;
	return 0;
}

static void probe_seccomp(struct posture *p)
{
	struct mech_result *n = &p->mech[MECH_SECCOMP_NOTIFY];
	struct mech_result *s = &p->mech[MECH_SECCOMP_ADDFD_SEND];
	int st;
	pid_t c;

	c = fork();
	if (c < 0) {
		set(n, MECH_UNAVAILABLE, "fork: %s", strerror(errno));
		set(s, MECH_UNAVAILABLE, "fork: %s", strerror(errno));
		return;
	}
	if (c == 0)
		_exit(notify_child());
	if (waitpid(c, &st, 0) < 0 || !WIFEXITED(st)) {
		set(n, MECH_UNAVAILABLE, "the probe child died");
		set(s, MECH_UNAVAILABLE, "the probe child died");
		return;
	}
	switch (WEXITSTATUS(st)) {
	case 0:
		set(n, MECH_AVAILABLE, "a notified syscall was received and answered");
		set(s, MECH_AVAILABLE, "an fd was injected and returned atomically");
		break;
	case 1:
		set(n, MECH_AVAILABLE, "a notified syscall was received and answered");
		set(s, MECH_UNAVAILABLE, "SECCOMP_ADDFD_FLAG_SEND refused (kernel < 5.14?)");
		break;
	default:
		set(n, MECH_UNAVAILABLE, "could not install a filter with a listener "
		    "(SECCOMP_FILTER_FLAG_NEW_LISTENER)");
		set(s, MECH_UNAVAILABLE, "needs seccomp user notification");
		break;
	}
}

static void probe_pidfd_getfd(struct posture *p)
{
	struct mech_result *m = &p->mech[MECH_PIDFD_GETFD];
	int pfd[2], st;
	long pidfd, fd;
	pid_t c;
	char x;

	if (pipe2(pfd, O_CLOEXEC) < 0) {
		set(m, MECH_UNAVAILABLE, "pipe: %s", strerror(errno));
		return;
	}
	c = fork();
	if (c == 0) {
		close(pfd[1]);
		/* Wait for the parent to close its write end, then exit. */
		while (read(pfd[0], &x, 1) > 0)
			;
		_exit(0);
	}
	pidfd = c > 0 ? syscall(SYS_pidfd_open, c, 0) : -1;
	fd = pidfd >= 0 ? syscall(SYS_pidfd_getfd, (int)pidfd, pfd[0], 0) : -1;
	if (fd >= 0)
		set(m, MECH_AVAILABLE, "copied a descriptor out of a child process");
	else
		set(m, MECH_UNAVAILABLE, "%s: %s", pidfd < 0 ? "pidfd_open" : "pidfd_getfd",
		    strerror(errno));
	if (fd >= 0)
		close((int)fd);
	if (pidfd >= 0)
		close((int)pidfd);
	close(pfd[0]);
	close(pfd[1]);
	if (c > 0)
		waitpid(c, &st, 0);
}

static void probe_userns(struct posture *p)
{
	struct mech_result *m = &p->mech[MECH_USERNS];
	int st;
	pid_t c;

	c = fork();
	if (c == 0)
		_exit(unshare(CLONE_NEWUSER) == 0 ? 0 : (errno & 0x7f));
	if (c < 0 || waitpid(c, &st, 0) < 0 || !WIFEXITED(st)) {
		set(m, MECH_UNAVAILABLE, "the probe child died");
		return;
	}
	if (WEXITSTATUS(st) == 0)
		set(m, MECH_AVAILABLE, "unshare(CLONE_NEWUSER) works: an attack surface "
		    "the floor must deny to sessions");
	else
		set(m, MECH_UNAVAILABLE, "unshare(CLONE_NEWUSER): %s", strerror(WEXITSTATUS(st)));
}

static void probe_io_uring(struct posture *p)
{
	struct mech_result *m = &p->mech[MECH_IO_URING];
	char params[120] = {};  /* struct io_uring_params, zeroed */
	long fd;

	fd = syscall(SYS_io_uring_setup, 1, params);
	if (fd >= 0) {
		close((int)fd);
		set(m, MECH_AVAILABLE, "io_uring_setup works: its operations bypass "
		    "seccomp, so sessions must be denied it");
	} else {
		set(m, MECH_UNAVAILABLE, "io_uring_setup: %s", strerror(errno));
	}
}

void probe_all(struct posture *p)
{
	memset(p, 0, sizeof(*p));
	p->root = geteuid() == 0;
	pin_quiet_libbpf();

	probe_bpf_lsm(p);
	probe_cgroup(p);
	probe_landlock(p);
	probe_seccomp(p);
	probe_pidfd_getfd(p);
	probe_userns(p);
	probe_io_uring(p);
	posture_compute(p);
}
