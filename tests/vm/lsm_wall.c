// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The floor as the wall behind the session's namespaces, on a real kernel:
 * extended attributes and POSIX ACLs judged as the rights they stand for,
 * F_SETOWN signals kept inside the setter's session, the scheduling and
 * limits of tasks outside the session, clone flags that would leave it, and
 * the backups of credential stores, inotify watches where reading is
 * refused.  Run as the agent (uid 1000), as root
 * in a session and as a host task, which none of it touches; every check
 * asserts the errno and the event (or that there is none).  The session
 * here has no pid namespace: it can name host pids, so the floor's own
 * answer is what is tested.
 */
#define _GNU_SOURCE
#include <linux/sched.h>
#include <sched.h>
#include <sys/inotify.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include "floor_util.h"

#define R    "/tmp/lsmwall"
#define WS   R "/ws"
#define DEN  R "/den"
#define HID  R "/hid"

static const char policy_text[] =
	"{\"cordon_policy\": 1, \"rules\": ["
	"{\"name\": \"all\", \"decision\": \"allow\","
	" \"fs\": {\"paths\": [\"/\"], \"rights\": [\"all\"]}},"
	"{\"name\": \"den\", \"decision\": \"deny\","
	" \"fs\": {\"paths\": [\"${FIXTURE}/den\"], \"rights\": [\"write\", \"chmod\"]}},"
	"{\"name\": \"hid\", \"decision\": \"deny\","
	" \"fs\": {\"paths\": [\"${FIXTURE}/hid\"], \"rights\": [\"read\"]}}]}";

#define OP(f, ...) (&(const struct fl_op){ .fn = (f), __VA_ARGS__ })
#define HARD(e, o, d) \
	(&(const struct fl_expect){ .err = (e), .op = (o), .decision = CORDON_DENY, \
				    .reason = CORDON_REASON_HARDENING, .rule = -1, .path = (d), \
				    .prefix = true })
#define OK FL_NO_DENIAL

enum target { T_OWN = 0, T_HOST };

static struct fl_ctx ctx;
static pid_t host_pid;          /* a host process that counts SIGUSR1 */
static int host_count_fd = -1;  /* one byte per signal it got */
static char host_cgroup[PATH_MAX];

/* --- a counting target ---------------------------------------------------- */

static int count_wfd = -1;

static void on_usr1(int sig)
{
	(void)sig;
	(void)!write(count_wfd, "s", 1);
}

/* A child that writes a byte to `wfd` for each SIGUSR1, as `uid`; -1 on failure. */
static pid_t counter(int wfd, uid_t uid)
{
	int p[2];
	pid_t c;
	char b = 0;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	c = fork();
	if (c == 0) {
		count_wfd = wfd;
		signal(SIGUSR1, on_usr1);
		if (uid && fl_drop(uid) < 0)
			_exit(1);
		(void)!write(p[1], &b, 1);
		for (;;)
			pause();
	}
	close(p[1]);
	if (c < 0 || read(p[0], &b, 1) != 1) {
		close(p[0]);
		return -1;
	}
	close(p[0]);
	return c;
}

/* Bytes waiting in fd within wait_ms (non-blocking fd). */
static int drain_count(int fd, int wait_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char buf[64];
	int n = 0;
	ssize_t r;

	while (poll(&pfd, 1, wait_ms) > 0) {
		r = read(fd, buf, sizeof(buf));
		if (r <= 0)
			break;
		n += (int)r;
		wait_ms = 50;
	}
	return n;
}

static bool alive_check(void)
{
	return waitpid(host_pid, NULL, WNOHANG) == 0 && kill(host_pid, 0) == 0;
}

static void reap(pid_t c)
{
	kill(c, SIGKILL);
	(void)waitpid(c, NULL, 0);
}

static pid_t own_child(void)
{
	pid_t c = fork();

	if (c == 0)
		for (;;)
			pause();
	return c;
}

/* --- operations ------------------------------------------------------------ */

/* A POSIX ACL that grants uid 4242 rwx: what chmod cannot say. */
static const struct {
	uint32_t version;
	struct { uint16_t tag, perm; uint32_t id; } e[5];
} acl = { 2, { { 0x01, 6, ~0u }, { 0x02, 7, 4242 }, { 0x04, 4, ~0u }, { 0x10, 7, ~0u },
	       { 0x20, 4, ~0u } } };

/* setxattr(a, b) with the ACL above (b a system.posix_acl_*) or "v". */
static int op_setxattr(const struct fl_op *op, struct fl_report *r)
{
	bool is_acl = !strncmp(op->b, "system.posix_acl", 16);

	if (setxattr(op->a, op->b, is_acl ? (const void *)&acl : "v",
		     is_acl ? sizeof(acl) : 1, 0) < 0)
		return errno;
	return 0;
}

static int op_removexattr(const struct fl_op *op, struct fl_report *r)
{
	return removexattr(op->a, op->b) < 0 ? errno : 0;
}

static int op_chmod(const struct fl_op *op, struct fl_report *r)
{
	return chmod(op->a, 0640) < 0 ? errno : 0;
}

static int op_read(const struct fl_op *op, struct fl_report *r)
{
	int fd = open(op->a, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* inotify_add_watch(a) of everything that happens there. */
static int op_watch(const struct fl_op *op, struct fl_report *r)
{
	int fd = inotify_init1(IN_CLOEXEC), err = 0;

	if (fd < 0)
		return 1000 + errno;
	if (inotify_add_watch(fd, op->a, IN_ALL_EVENTS) < 0)
		err = errno;
	close(fd);
	return err;
}

/*
 * F_SETOWN on a pipe's read end to the target, F_SETSIG SIGUSR1, O_ASYNC,
 * then a write: the kernel signals the owner.  For its own child the task
 * counts the signal itself (ETIMEDOUT if none came); the host's counter is
 * read by the test.
 */
static int op_sigio(const struct fl_op *op, struct fl_report *r)
{
	int p[2], cnt[2] = { -1, -1 }, err = 0;
	pid_t target = host_pid;

	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
		return 1000 + errno;
	if (op->flags == T_OWN) {
		if (pipe2(cnt, O_CLOEXEC | O_NONBLOCK) < 0)
			return 1000 + errno;
		target = counter(cnt[1], 0);
		if (target < 0)
			return 1000;
	}
	if (fcntl(p[0], F_SETOWN, target) < 0 || fcntl(p[0], F_SETSIG, SIGUSR1) < 0 ||
	    fcntl(p[0], F_SETFL, O_ASYNC | O_NONBLOCK) < 0)
		err = errno;
	else if (write(p[1], "x", 1) != 1)
		err = 1000 + errno;
	if (op->flags == T_OWN) {
		if (!err && drain_count(cnt[0], 2000) < 1)
			err = ETIMEDOUT;
		reap(target);
	}
	close(p[0]);
	close(p[1]);
	return err;
}

static pid_t op_target(const struct fl_op *op, pid_t *own)
{
	*own = op->flags == T_OWN ? own_child() : -1;
	return op->flags == T_OWN ? *own : host_pid;
}

static int op_setpriority(const struct fl_op *op, struct fl_report *r)
{
	pid_t own, p = op_target(op, &own);
	int err, nice;

	errno = 0;
	nice = getpriority(PRIO_PROCESS, (id_t)p);
	err = errno ? 1000 + errno :
	      setpriority(PRIO_PROCESS, (id_t)p, nice < 19 ? nice + 1 : 19) < 0 ? errno : 0;
	if (own > 0)
		reap(own);
	return err;
}

static int op_prlimit(const struct fl_op *op, struct fl_report *r)
{
	pid_t own, p = op_target(op, &own);
	struct rlimit cur;
	int err;

	err = prlimit(p, RLIMIT_NOFILE, NULL, &cur) < 0 ? 1000 + errno :
	      prlimit(p, RLIMIT_NOFILE, &cur, NULL) < 0 ? errno : 0;
	if (own > 0)
		reap(own);
	return err;
}

static int op_ioprio(const struct fl_op *op, struct fl_report *r)
{
	pid_t own, p = op_target(op, &own);
	int err = syscall(SYS_ioprio_set, 1 /* IOPRIO_WHO_PROCESS */, p,
			  (2 << 13) | 4 /* best effort, level 4 */) < 0 ? errno : 0;

	if (own > 0)
		reap(own);
	return err;
}

static int op_affinity(const struct fl_op *op, struct fl_report *r)
{
	pid_t own, p = op_target(op, &own);
	cpu_set_t set;
	int err;

	err = sched_getaffinity(0, sizeof(set), &set) < 0 ? 1000 + errno :
	      sched_setaffinity(p, sizeof(set), &set) < 0 ? errno : 0;
	if (own > 0)
		reap(own);
	return err;
}

/* clone3 with flags (CLONE_INTO_CGROUP: into the test's own, host, cgroup). */
static int op_clone3(const struct fl_op *op, struct fl_report *r)
{
	struct clone_args ca = { .flags = (uint64_t)(unsigned)op->flags |
					  ((uint64_t)(unsigned)op->flags2 << 32),
				 .exit_signal = SIGCHLD };
	int cg = -1, st;
	long pid;

	if (ca.flags & CLONE_INTO_CGROUP) {
		cg = open(host_cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (cg < 0)
			return 1000 + errno;
		ca.cgroup = (uint64_t)cg;
	}
	pid = syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid == 0)
		_exit(0);
	if (cg >= 0)
		close(cg);
	if (pid < 0)
		return errno;
	(void)waitpid((pid_t)pid, &st, 0);
	return 0;
}

/* --- checking ----------------------------------------------------------------- */

/* x in a session, host on the host (whose pass reads every event, from any task). */
static bool check(const char *name, const struct fl_op *op, const struct fl_expect *x,
		  const struct fl_expect *host)
{
	const struct fl_expect *want = ctx.cg ? x : host;
	struct fl_task t = { .pid = -1, .rfd = -1 };
	char why[PATH_MAX + 128], sum[128];
	bool ok;

	fl_drain(ctx.s, &ctx.evs, 0);
	if (fl_spawn(&t, ctx.cg, ctx.uid, op, -1) < 0) {
		tap_ok(0, "[%s] %s: fork: %s", ctx.mode, name, strerror(errno));
		return false;
	}
	fl_collect(&t, &ctx.rep);
	fl_drain(ctx.s, &ctx.evs, want->op ? 2000 : 100);
	ok = fl_judge(&ctx.evs, &ctx.rep, ctx.uid, floor_session_id(ctx.s), want, !ctx.cg,
		      &ctx.match, why, sizeof(why));
	tap_ok(ok, "[%s] %s: %s", ctx.mode, name, fl_summary(want, sum, sizeof(sum)));
	if (!ok) {
		tap_diag("  %s", why);
		fl_dump(&ctx.evs, ctx.cg ? ctx.rep.pid : 0);
	}
	return ok;
}

/*
 * The host target: the task sees every call succeed (the kernel drops the
 * signal, it does not fail the write), the event says EPERM.  Judged as an
 * EPERM of the task once its own success is asserted.
 */
static void sigio_host_check(void)
{
	const struct fl_expect *x = &(const struct fl_expect){
		.err = EPERM, .op = CORDON_OP_SIGIO, .decision = CORDON_DENY,
		.reason = CORDON_REASON_HARDENING, .rule = -1, .path = "pid ", .prefix = true };
	struct fl_task t = { .pid = -1, .rfd = -1 };
	char why[PATH_MAX + 128];
	bool ok;

	fl_drain(ctx.s, &ctx.evs, 0);
	if (fl_spawn(&t, ctx.cg, ctx.uid, OP(op_sigio, .flags = T_HOST), -1) < 0) {
		tap_ok(0, "[%s] sigio: fork: %s", ctx.mode, strerror(errno));
		return;
	}
	fl_collect(&t, &ctx.rep);
	fl_drain(ctx.s, &ctx.evs, ctx.cg ? 2000 : 100);
	if (ctx.rep.err) {
		ok = false;
		snprintf(why, sizeof(why), "the task got %s", fl_errname(ctx.rep.err));
	} else {
		if (ctx.cg)
			ctx.rep.err = EPERM;
		ok = fl_judge(&ctx.evs, &ctx.rep, ctx.uid, floor_session_id(ctx.s),
			      ctx.cg ? x : FL_SILENT, !ctx.cg, &ctx.match, why, sizeof(why));
	}
	tap_ok(ok, "[%s] F_SETOWN to a host process, O_ASYNC, a write: success, %s", ctx.mode,
	       ctx.cg ? "sigio deny hardening (EPERM)" : "no event");
	if (!ok) {
		tap_diag("  %s", why);
		fl_dump(&ctx.evs, ctx.cg ? ctx.rep.pid : 0);
	}
}

static void xattrs(bool root)
{
	const struct fl_expect *den = &(const struct fl_expect){
		.err = EACCES, .op = CORDON_OP_XATTR, .decision = CORDON_DENY,
		.reason = CORDON_REASON_RULE, .rule = -1, .path = DEN "/f" };

	check("chmod of a file where chmod is refused (the control)", OP(op_chmod, .a = DEN "/f"),
	      FL_DENY(EACCES, CORDON_OP_CHMOD, CORDON_REASON_RULE, DEN "/f"), OK);
	check("setxattr system.posix_acl_access where chmod is refused",
	      OP(op_setxattr, .a = DEN "/f", .b = "system.posix_acl_access"), den, OK);
	check("setxattr system.posix_acl_default on a directory where chmod is refused",
	      OP(op_setxattr, .a = DEN "/d", .b = "system.posix_acl_default"),
	      &(const struct fl_expect){ .err = EACCES, .op = CORDON_OP_XATTR,
					 .decision = CORDON_DENY, .reason = CORDON_REASON_RULE,
					 .rule = -1, .path = DEN "/d" }, OK);
	check("removexattr system.posix_acl_access where chmod is refused",
	      OP(op_removexattr, .a = DEN "/f", .b = "system.posix_acl_access"), den, OK);
	check("setxattr system.posix_acl_access on a workspace file",
	      OP(op_setxattr, .a = WS "/f", .b = "system.posix_acl_access"), OK, OK);
	check("removexattr system.posix_acl_access on a workspace file",
	      OP(op_removexattr, .a = WS "/f", .b = "system.posix_acl_access"), OK, OK);
	check("setxattr user.x where write is refused",
	      OP(op_setxattr, .a = DEN "/f", .b = "user.x"), den, FL_NOT_FLOOR(EOPNOTSUPP));
	/* tmpfs on 6.1 has no user.* handler: past the floor, the filesystem says no. */
	check("setxattr user.x on a workspace file (the floor lets it through)",
	      OP(op_setxattr, .a = WS "/f", .b = "user.x"),
	      &(const struct fl_expect){ .err = EOPNOTSUPP, .rule = -1, .allow_events = true },
	      FL_NOT_FLOOR(EOPNOTSUPP));
	check("setxattr security.x on a workspace file",
	      OP(op_setxattr, .a = WS "/f", .b = "security.x"),
	      HARD(EPERM, CORDON_OP_XATTR, "security.x"), OK);
	check("removexattr security.x on a workspace file",
	      OP(op_removexattr, .a = WS "/f", .b = "security.x"),
	      HARD(EPERM, CORDON_OP_XATTR, "security.x"), OK);
	/* trusted.* needs CAP_SYS_ADMIN before any LSM is asked. */
	check("setxattr trusted.x on a workspace file",
	      OP(op_setxattr, .a = WS "/f", .b = "trusted.x"),
	      root ? HARD(EPERM, CORDON_OP_CAPABLE, "cap 21") : FL_NOT_FLOOR(EPERM), OK);
}

/*
 * An ACL's object placed through many mounts: the fixture bound at `n`
 * more places (the host's mount namespace, which the session tasks here
 * share).  The floor looks through at most XATTR_PLACES (4) mounts of a
 * superblock and refuses beyond them ("disconnected"); on 6.1 a verifier
 * that checks loop callbacks once let the count run past its array and
 * over the kernel stack (bpf/common.bpf.h): the guest oopsed at 7 places.
 */
#define PLACE_AT "/tmp/lsmwall-p"

static int bind_places(int n)
{
	char at[64];

	for (int i = 0; i < n; i++) {
		snprintf(at, sizeof(at), PLACE_AT "%d", i);
		if ((mkdir(at, 0755) < 0 && errno != EEXIST) ||
		    mount(R, at, NULL, MS_BIND, NULL) < 0)
			return -errno;
	}
	return 0;
}

/* A file (WS/f) bound onto `n` files: mounts of one file, places of nothing else. */
static int bind_files(int n)
{
	char at[64];

	for (int i = 0; i < n; i++) {
		snprintf(at, sizeof(at), PLACE_AT "f%d", i);
		if (fl_putstr(at, "") < 0 || mount(WS "/f", at, NULL, MS_BIND, NULL) < 0)
			return -errno;
	}
	return 0;
}

static void unbind_files(int n)
{
	char at[64];

	for (int i = 0; i < n; i++) {
		snprintf(at, sizeof(at), PLACE_AT "f%d", i);
		(void)umount2(at, MNT_DETACH);
		(void)unlink(at);
	}
}

static void unbind_places(int n)
{
	char at[64];

	for (int i = 0; i < n; i++) {
		snprintf(at, sizeof(at), PLACE_AT "%d", i);
		(void)umount2(at, MNT_DETACH);
		(void)rmdir(at);
	}
}

static void xattr_places(void)
{
	const struct fl_expect *far = &(const struct fl_expect){
		.err = EACCES, .op = CORDON_OP_XATTR, .decision = CORDON_DENY,
		.reason = CORDON_REASON_DISCONNECTED, .rule = -1,
		.path = "system.posix_acl_access" };
	const struct fl_expect *den = &(const struct fl_expect){
		.err = EACCES, .op = CORDON_OP_XATTR, .decision = CORDON_DENY,
		.reason = CORDON_REASON_RULE, .rule = -1 };

	if (tap_ok(bind_places(3) == 0, "[%s] the fixture bound at 3 more places", ctx.mode)) {
		check("an ACL where chmod is refused, through 4 mounts (each judged)",
		      OP(op_setxattr, .a = DEN "/f", .b = "system.posix_acl_access"), den, OK);
		check("an ACL on a workspace file, through 4 mounts",
		      OP(op_setxattr, .a = WS "/f", .b = "system.posix_acl_access"), OK, OK);
	}
	unbind_places(3);
	if (tap_ok(bind_places(6) == 0, "[%s] the fixture bound at 6 more places", ctx.mode)) {
		check("an ACL where chmod is refused, through 7 mounts (too many: refused)",
		      OP(op_setxattr, .a = DEN "/f", .b = "system.posix_acl_access"), far, OK);
		check("an ACL on a workspace file, through 7 mounts (too many: refused)",
		      OP(op_setxattr, .a = WS "/f", .b = "system.posix_acl_access"), far, OK);
	}
	unbind_places(6);
	if (tap_ok(bind_files(6) == 0, "[%s] a workspace file bound onto 6 files", ctx.mode))
		check("an ACL where chmod is refused, 6 file mounts beside it (not places of it)",
		      OP(op_setxattr, .a = DEN "/f", .b = "system.posix_acl_access"), den, OK);
	unbind_files(6);
}

static void sigio(void)
{
	int got;

	drain_count(host_count_fd, 0);
	sigio_host_check();
	/* The denial event carries -EPERM; the task itself sees nothing fail. */
	got = drain_count(host_count_fd, ctx.cg ? 300 : 2000);
	tap_ok(ctx.cg ? got == 0 : got == 1, "[%s] the host process got %d signal(s), want %d",
	       ctx.mode, got, ctx.cg ? 0 : 1);
	check("F_SETOWN to its own child: the signal arrives", OP(op_sigio, .flags = T_OWN), OK,
	      OK);
}

static void tasks(void)
{
	char d[32];

	snprintf(d, sizeof(d), "pid %d", (int)host_pid);
	check("setpriority of a host process", OP(op_setpriority, .flags = T_HOST),
	      HARD(EPERM, CORDON_OP_SCHED, d), OK);
	check("setpriority of its own child", OP(op_setpriority, .flags = T_OWN), OK, OK);
	check("prlimit64 (set) of a host process", OP(op_prlimit, .flags = T_HOST),
	      HARD(EPERM, CORDON_OP_SCHED, d), OK);
	check("prlimit64 (set) of its own child", OP(op_prlimit, .flags = T_OWN), OK, OK);
	check("ioprio_set of a host process", OP(op_ioprio, .flags = T_HOST),
	      HARD(EPERM, CORDON_OP_SCHED, d), OK);
	check("ioprio_set of its own child", OP(op_ioprio, .flags = T_OWN), OK, OK);
	check("sched_setaffinity of a host process", OP(op_affinity, .flags = T_HOST),
	      HARD(EPERM, CORDON_OP_SCHED, d), OK);
	check("sched_setaffinity of its own child", OP(op_affinity, .flags = T_OWN), OK, OK);
	check("clone3(CLONE_INTO_CGROUP) into a host cgroup",
	      OP(op_clone3, .flags2 = (int)(CLONE_INTO_CGROUP >> 32)),
	      HARD(EPERM, CORDON_OP_CLONE, "flags 0x200000000"), OK);
	check("clone3(CLONE_NEWPID | CLONE_NEWIPC)",
	      OP(op_clone3, .flags = CLONE_NEWPID | CLONE_NEWIPC),
	      HARD(EPERM, CORDON_OP_CLONE, "flags 0x28000000"), OK);
	check("clone3 of a plain child", OP(op_clone3), OK, OK);
}

/* Files this test makes in /etc when absent (world-readable: DAC out of the way). */
static const char *const made[] = { "/etc/shadow-", "/etc/gshadow.dpkg-old", "/etc/.shadow.swp" };
static bool made_here[3];

static void stores(void)
{
	for (size_t i = 0; i < 3; i++) {
		struct stat st;
		char name[96];
		/* A store that was already there and keeps others out: DAC answers the agent. */
		bool dac = ctx.uid && (stat(made[i], &st) < 0 || !(st.st_mode & S_IROTH));

		snprintf(name, sizeof(name), "read %s (derived from a credential store)", made[i]);
		check(name, OP(op_read, .a = made[i]),
		      dac ? FL_NOT_FLOOR(EACCES) :
			    FL_DENY(EACCES, CORDON_OP_OPEN_READ, CORDON_REASON_PROTECTED, made[i]),
		      OK);
	}
	check("read /etc/hostname (harmless)", OP(op_read, .a = "/etc/hostname"), OK, OK);
}

static void watches(void)
{
	check("inotify watch on a directory whose reading is refused",
	      OP(op_watch, .a = HID), FL_DENY(EACCES, CORDON_OP_NOTIFY, CORDON_REASON_RULE, HID), OK);
	check("inotify watch on a file there", OP(op_watch, .a = HID "/f"),
	      FL_DENY(EACCES, CORDON_OP_NOTIFY, CORDON_REASON_RULE, HID "/f"), OK);
	check("inotify watch on the workspace", OP(op_watch, .a = WS), OK, OK);
}

static void pass(struct floor *f, struct policy *p, const char *mode, uid_t uid, bool host)
{
	struct floor_session *s = NULL;
	uint64_t drops = 0;
	int cnt[2] = { -1, -1 };

	if (!tap_ok(floor_session_create(f, p, NULL, &s) == 0, "[%s] session", mode))
		return;
	memset(&ctx, 0, sizeof(ctx));
	ctx.f = f;
	ctx.s = s;
	ctx.uid = uid;
	ctx.cg = host ? NULL : floor_session_cgroup(s);
	snprintf(ctx.mode, sizeof(ctx.mode), "%s", mode);
	if (pipe2(cnt, O_CLOEXEC | O_NONBLOCK) == 0)
		host_pid = counter(cnt[1], uid);
	host_count_fd = cnt[0];
	if (!tap_ok(host_pid > 0, "[%s] a host process to aim at", mode))
		goto out;
	xattrs(uid == 0);
	xattr_places();
	sigio();
	tasks();
	stores();
	watches();
	tap_ok(alive_check(), "[%s] the host process survived", mode);
	tap_ok(floor_session_drops(f, s, &drops) == 0 && drops == 0,
	       "[%s] no events dropped (%llu)", mode, (unsigned long long)drops);
out:
	if (host_pid > 0)
		reap(host_pid);
	host_pid = 0;
	for (int i = 0; i < 2; i++)
		if (cnt[i] >= 0)
			close(cnt[i]);
	tap_ok(floor_session_destroy(f, s) == 0, "[%s] session destroyed", mode);
}

static int fixture(void)
{
	int r;

	fl_rm_tree(R);
	if (mkdir(R, 0755) < 0 || mkdir(WS, 0777) < 0 || mkdir(DEN, 0777) < 0 ||
	    mkdir(DEN "/d", 0777) < 0 || mkdir(HID, 0777) < 0)
		return -errno;
	r = fl_putstr(WS "/f", "x\n");
	r = r ?: fl_putstr(HID "/f", "x\n");
	r = r ?: fl_putstr(DEN "/f", "x\n");
	r = r ?: fl_chown_tree(R);
	for (size_t i = 0; !r && i < 3; i++)
		if (access(made[i], F_OK) < 0) {
			r = fl_put(made[i], "root:*:1::::::\n", 15, 0644);
			made_here[i] = r == 0;
		}
	return r;
}

int main(void)
{
	struct policy *p = NULL;
	struct floor *f = NULL;
	int r;

	if (geteuid() != 0)
		tap_skip_all("needs root (loads BPF LSM programs, creates cgroups)");
	r = floor_open(&f);
	if (r == -EPERM)
		tap_skip_all("BPF LSM: kernel refused LSM program load (EPERM)");
	if (!tap_ok(r == 0, "floor opened (%s)", strerror(-r)))
		return tap_done();
	r = fixture();
	if (!tap_ok(r == 0, "fixture under " R " and /etc (%s)", strerror(-r)))
		goto out;
	if (!tap_ok(fl_own_cgroup(host_cgroup, sizeof(host_cgroup)) == 0, "own cgroup %s",
		    host_cgroup))
		goto out;
	if (!tap_ok(fl_policy(policy_text, &p, "FIXTURE", R, NULL) == 0, "policy loads"))
		goto out;
	pass(f, p, "uid 1000", AGENT_UID, false);
	pass(f, p, "root", 0, false);
	pass(f, p, "host", 0, true);
out:
	for (size_t i = 0; i < 3; i++)
		if (made_here[i])
			(void)unlink(made[i]);
	fl_rm_tree(R);
	pol_free(p);
	floor_close(f);
	return tap_done();
}
