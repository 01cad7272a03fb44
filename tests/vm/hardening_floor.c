// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What a session may never do, whatever its policy (here: every file right
 * on "/", except a denied directory): reach into other tasks (ptrace,
 * /proc/PID/mem and environ, signals), reach the kernel (bpf, modules,
 * perf, user namespaces), use the capabilities root keeps nowhere else,
 * inject terminal input, and connect to Unix sockets the policy or the
 * session boundary rules out.  Run as the agent (uid 1000), as root in the
 * session, and as a host task, which none of it touches.  Every check
 * asserts the errno and the event (or that there is none when the kernel
 * refuses before the floor is asked).
 *
 * Three sysctls that refuse before the LSM hooks are asked are relaxed for
 * the run (and restored): kernel.unprivileged_bpf_disabled,
 * kernel.perf_event_paranoid (Debian's 3 refuses every unprivileged
 * perf_event_open before the LSM hook) and kernel.yama.ptrace_scope, so
 * that the floor's own answer is what is tested.  With Debian's defaults
 * the kernel refuses first: also checked, for bpf and perf, as root.
 */
#define _GNU_SOURCE
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <sched.h>
#include <time.h>
#include "floor_util.h"

#define R    "/tmp/hardening"
#define WS   R "/ws"
#define DEN  R "/denied"

static const char policy_text[] =
	"{\"cordon_policy\": 1, \"rules\": ["
	"{\"name\": \"all\", \"decision\": \"allow\","
	" \"fs\": {\"paths\": [\"/\"], \"rights\": [\"all\"]}},"
	"{\"name\": \"denied\", \"decision\": \"deny\","
	" \"fs\": {\"paths\": [\"${FIXTURE}/denied\"], \"rights\": [\"all\"]}}]}";

#define OP(f, ...) (&(const struct fl_op){ .fn = (f), __VA_ARGS__ })

/* Whose process an operation aims at. */
enum target { T_OWN = 0, T_HOST, T_OTHER };

/* Set before each pass; forked tasks inherit them. */
static pid_t host_pid, other_pid;
static char host_abstract[64], other_abstract[64];

static pid_t target_pid(int t)
{
	return t == T_HOST ? host_pid : other_pid;
}

/* A child of the task that does nothing: the same-session target. */
static pid_t own_child(void)
{
	pid_t c = fork();

	if (c == 0) {
		for (;;)
			pause();
	}
	return c;
}

static void reap(pid_t c)
{
	kill(c, SIGKILL);
	(void)waitpid(c, NULL, 0);
}

/* --- operations, run in the task ------------------------------------------ */

static int op_ptrace(const struct fl_op *op, struct fl_report *r)
{
	pid_t p = op->flags == T_OWN ? own_child() : target_pid(op->flags);
	int err = 0;

	if (p < 0)
		return errno;
	if (ptrace(PTRACE_ATTACH, p, NULL, NULL) < 0) {
		err = errno;
	} else {
		(void)waitpid(p, NULL, __WALL);
		(void)ptrace(PTRACE_DETACH, p, NULL, NULL);
	}
	if (op->flags == T_OWN)
		reap(p);
	return err;
}

static int op_proc(const struct fl_op *op, struct fl_report *r)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)target_pid(op->flags), op->a);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static int op_kill(const struct fl_op *op, struct fl_report *r)
{
	pid_t p = op->flags == T_OWN ? own_child() : target_pid(op->flags);
	int err = kill(p, op->flags2) < 0 ? errno : 0;

	if (op->flags == T_OWN)
		reap(p);
	return err;
}

static long sys_bpf(int cmd, union bpf_attr *a)
{
	return syscall(SYS_bpf, cmd, a, sizeof(*a));
}

static int op_bpf_obj_get(const struct fl_op *op, struct fl_report *r)
{
	union bpf_attr a = { .pathname = (uint64_t)(uintptr_t)op->a };
	long fd = sys_bpf(BPF_OBJ_GET, &a);

	return fd < 0 ? errno : 0;
}

static int op_bpf_map_create(const struct fl_op *op, struct fl_report *r)
{
	union bpf_attr a = { .map_type = BPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = 8,
			     .max_entries = 1 };
	long fd = sys_bpf(BPF_MAP_CREATE, &a);

	return fd < 0 ? errno : 0;
}

static int op_init_module(const struct fl_op *op, struct fl_report *r)
{
	static const char junk[64] = "\177ELF";

	return syscall(SYS_init_module, junk, sizeof(junk), "") < 0 ? errno : 0;
}

static int op_finit_module(const struct fl_op *op, struct fl_report *r)
{
	int fd = open("/bin/busybox", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 1000 + errno;
	return syscall(SYS_finit_module, fd, "", 0) < 0 ? errno : 0;
}

/* socket(flags, flags2, protocol: a ? atoi(a) : 0). */
static int op_socket(const struct fl_op *op, struct fl_report *r)
{
	int fd = socket(op->flags, op->flags2, op->a ? atoi(op->a) : 0);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static int op_unshare(const struct fl_op *op, struct fl_report *r)
{
	return unshare(op->flags) < 0 ? errno : 0;
}

static int op_perf(const struct fl_op *op, struct fl_report *r)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .size = sizeof(a),
				     .config = PERF_COUNT_SW_TASK_CLOCK, .disabled = 1,
				     .exclude_kernel = 1, .exclude_hv = 1 };
	long fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);

	if (fd < 0)
		return errno;
	close((int)fd);
	return 0;
}

/* ioctl(op->flags) on the slave side of a new pty. */
static int op_tty_ioctl(const struct fl_op *op, struct fl_report *r)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY), s, err;
	char c = 'x';
	char *name;

	if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0 || !(name = ptsname(m)))
		return 1000 + errno;
	s = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (s < 0)
		return 1000 + errno;
	err = ioctl(s, (unsigned long)op->flags, &c) < 0 ? errno : 0;
	close(s);
	close(m);
	return err;
}

static int op_sethostname(const struct fl_op *op, struct fl_report *r)
{
	char name[64];

	if (gethostname(name, sizeof(name)) < 0)
		return 1000 + errno;
	return sethostname(name, strlen(name)) < 0 ? errno : 0;
}

static int op_settime(const struct fl_op *op, struct fl_report *r)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return clock_settime(CLOCK_REALTIME, &ts) < 0 ? errno : 0;
}

static int op_chown(const struct fl_op *op, struct fl_report *r)
{
	return chown(op->a, (uid_t)op->flags, (gid_t)op->flags) < 0 ? errno : 0;
}

/* A Unix address: "@name" is abstract. */
static socklen_t un_addr(struct sockaddr_un *sa, const char *name)
{
	size_t n = strlen(name);

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	memcpy(sa->sun_path, name, n < sizeof(sa->sun_path) ? n : sizeof(sa->sun_path) - 1);
	if (name[0] == '@')
		sa->sun_path[0] = 0;
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
}

/* connect (stream) or sendto (datagram, flags SOCK_DGRAM) to op->a. */
static int op_unix(const struct fl_op *op, struct fl_report *r)
{
	int type = op->flags ? op->flags : SOCK_STREAM;
	int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
	const char *to = op->a ? op->a : target_pid(op->flags2) == other_pid ? other_abstract :
									      host_abstract;
	struct sockaddr_un sa;
	socklen_t len = un_addr(&sa, to);
	int err;

	if (fd < 0)
		return 1000 + errno;
	if (type == SOCK_DGRAM)
		err = sendto(fd, "x", 1, 0, (struct sockaddr *)&sa, len) < 0 ? errno : 0;
	else
		err = connect(fd, (struct sockaddr *)&sa, len) < 0 ? errno : 0;
	close(fd);
	return err;
}

/* The session's own IPC: an abstract listener and a connect to it. */
static int op_unix_own(const struct fl_op *op, struct fl_report *r)
{
	struct sockaddr_un sa;
	char name[64];
	socklen_t len;
	int l, c, err;

	snprintf(name, sizeof(name), "@cordon-own-%d", (int)getpid());
	len = un_addr(&sa, name);
	l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0 || c < 0 || bind(l, (struct sockaddr *)&sa, len) < 0 || listen(l, 1) < 0)
		return 1000 + errno;
	err = connect(c, (struct sockaddr *)&sa, len) < 0 ? errno : 0;
	close(c);
	close(l);
	return err;
}

static int op_socketpair(const struct fl_op *op, struct fl_report *r)
{
	int sv[2];

	if (socketpair(AF_UNIX, op->flags | SOCK_CLOEXEC, 0, sv) < 0)
		return errno;
	if (send(sv[0], "x", 1, 0) < 0)
		return errno;
	close(sv[0]);
	close(sv[1]);
	return 0;
}

/* --- checking ---------------------------------------------------------------- */

/*
 * What a check expects: the errno the task gets, and the denial event (op
 * 0: no denial event at all): its errno (the hook's, which the kernel may
 * turn into another for the caller: /proc/PID/mem gives EACCES for the
 * hook's EPERM), reason, and the start of its detail.  Other hardening
 * denials from the task may accompany it (root's bpf() asks for CAP_BPF
 * and then CAP_SYS_ADMIN, each an event); any other denial fails.
 */
struct hx {
	int err;
	uint32_t op;
	int ev_err;
	uint32_t reason;
	const char *detail;
};

#define NO_EVENT(e)     (&(const struct hx){ .err = (e) })
#define HARD(e, o, ee, d) \
	(&(const struct hx){ .err = (e), .op = (o), .ev_err = (ee), \
			     .reason = CORDON_REASON_HARDENING, .detail = (d) })

static struct fl_ctx ctx;

static bool h_judge(const struct hx *x, char *why, size_t len)
{
	const struct cordon_event *m = NULL;
	char path[PATH_MAX];

	if (ctx.rep.aux == FL_AUX_SETUP) {
		snprintf(why, len, "could not enter the session: %s", strerror(ctx.rep.err));
		return false;
	}
	if (ctx.rep.err != x->err) {
		snprintf(path, sizeof(path), "%s", fl_errname(ctx.rep.err));
		snprintf(why, len, "errno: got %s, want %s", path, fl_errname(x->err));
		return false;
	}
	for (size_t i = 0; i < ctx.evs.n; i++) {
		const struct cordon_event *e = &ctx.evs.e[i];

		if (e->pid != (uint32_t)ctx.rep.pid || e->decision == CORDON_ALLOW)
			continue;
		floor_event_path(e, path, sizeof(path));
		if (!ctx.cg || !x->op || (e->reason != x->reason &&
					  e->reason != CORDON_REASON_HARDENING)) {
			snprintf(why, len, "unexpected denial: %s %s", floor_op_name(e->op),
				 floor_reason_name(e->reason));
			return false;
		}
		if (!m && e->op == x->op && e->reason == x->reason && e->err == -x->ev_err &&
		    e->uid == ctx.uid && e->session == floor_session_id(ctx.s) &&
		    (!x->detail || !strncmp(path, x->detail, strlen(x->detail))))
			m = e;
	}
	if (ctx.cg && x->op && !m) {
		snprintf(why, len, "no %s denial (%s, err %d, detail '%s')", floor_op_name(x->op),
			 floor_reason_name(x->reason), -x->ev_err, x->detail ? x->detail : "");
		return false;
	}
	return true;
}

/* On the host, whatever the session would get: success, no event. */
static bool check(const char *name, const struct fl_op *op, const struct hx *x,
		  const struct hx *host)
{
	const struct hx *want = ctx.cg ? x : host;
	struct fl_task t = { .pid = -1, .rfd = -1 };
	char why[PATH_MAX + 128];
	bool ok;

	fl_drain(ctx.s, &ctx.evs, 0);
	if (fl_spawn(&t, ctx.cg, ctx.uid, op, -1) < 0) {
		tap_ok(0, "[%s] %s: fork: %s", ctx.mode, name, strerror(errno));
		return false;
	}
	fl_collect(&t, &ctx.rep);
	fl_drain(ctx.s, &ctx.evs, want->op ? 2000 : 100);
	ok = h_judge(want, why, sizeof(why));
	tap_ok(ok, "[%s] %s: %s%s%s", ctx.mode, name, fl_errname(want->err),
	       want->op ? ", event " : "", want->op ? floor_op_name(want->op) : "");
	if (!ok) {
		tap_diag("  %s", why);
		fl_dump(&ctx.evs, ctx.cg ? ctx.rep.pid : 0);
	}
	return ok;
}

#define OK_HOST NO_EVENT(0)

/* --- fixture: targets and listeners ---------------------------------------- */

static int sysctl_get(const char *path)
{
	char buf[16] = "";
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? atoi(buf) : -1;
}

static int sysctl_set(const char *path, int v)
{
	char buf[16];
	int fd = open(path, O_WRONLY | O_CLOEXEC), n = snprintf(buf, sizeof(buf), "%d", v);
	bool ok;

	if (fd < 0)
		return -errno;
	ok = write(fd, buf, (size_t)n) == n;
	close(fd);
	return ok ? 0 : -EIO;
}

/*
 * A process that only waits, as `uid` (dumpable, so that the kernel's own
 * ptrace checks do not answer for the floor), in cgroup `cg` (NULL: the
 * host), holding an abstract listener named into `abstract`.
 */
static pid_t victim(const char *cg, uid_t uid, char *abstract, size_t len)
{
	struct sockaddr_un sa;
	int p[2], l;
	pid_t c;
	char b = 0;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	c = fork();
	if (c == 0) {
		close(p[0]);
		if ((cg && fl_enter(cg) < 0) || (uid && fl_drop(uid) < 0))
			_exit(1);
		snprintf(abstract, len, "@cordon-%s-%d", cg ? "other" : "host", (int)getpid());
		l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (l < 0 || bind(l, (struct sockaddr *)&sa, un_addr(&sa, abstract)) < 0 ||
		    listen(l, 64) < 0)
			_exit(1);
		if (write(p[1], &b, 1) != 1)
			_exit(1);
		close(p[1]);
		for (;;)
			pause();
	}
	close(p[1]);
	if (read(p[0], &b, 1) != 1) {
		close(p[0]);
		(void)waitpid(c, NULL, 0);
		return -1;
	}
	close(p[0]);
	snprintf(abstract, len, "@cordon-%s-%d", cg ? "other" : "host", (int)c);
	return c;
}

static bool alive(pid_t p)
{
	return waitpid(p, NULL, WNOHANG) == 0 && kill(p, 0) == 0;
}

/* A pathname listener (stream or datagram), writable by anyone (DAC out of the way). */
static int listener(const char *path, int type)
{
	struct sockaddr_un sa;
	int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);

	unlink(path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, un_addr(&sa, path)) < 0 ||
	    (type == SOCK_STREAM && listen(fd, 64) < 0) || chmod(path, 0777) < 0)
		return -1;
	return fd;
}

static int fixture(int fds[4])
{
	fl_rm_tree(R);
	if (mkdir(R, 0755) < 0 || mkdir(WS, 0777) < 0 || mkdir(DEN, 0777) < 0)
		return -errno;
	fds[0] = listener(WS "/ok.sock", SOCK_STREAM);
	fds[1] = listener(DEN "/no.sock", SOCK_STREAM);
	fds[2] = listener(DEN "/dgram.sock", SOCK_DGRAM);
	fds[3] = listener(WS "/dgram.sock", SOCK_DGRAM);
	for (int i = 0; i < 4; i++)
		if (fds[i] < 0)
			return -errno;
	/* Ways to the denied socket from the allowed directory, made by the host. */
	if (link(DEN "/no.sock", WS "/hardlink.sock") < 0 ||
	    symlink(DEN "/no.sock", WS "/symlink.sock") < 0)
		return -errno;
	return fl_putstr(WS "/owned", "x\n");
}

/* --- the matrix ---------------------------------------------------------------- */

static void tasks(bool root)
{
	char d[64];

	check("ptrace attach of a host process", OP(op_ptrace, .flags = T_HOST),
	      HARD(EPERM, CORDON_OP_PTRACE, EPERM, "pid "), OK_HOST);
	check("ptrace attach of a process of another session", OP(op_ptrace, .flags = T_OTHER),
	      HARD(EPERM, CORDON_OP_PTRACE, EPERM, "pid "), OK_HOST);
	check("ptrace attach of its own child", OP(op_ptrace, .flags = T_OWN),
	      NO_EVENT(0), OK_HOST);
	snprintf(d, sizeof(d), "pid %d ", (int)host_pid);
	check("open /proc/<host pid>/environ", OP(op_proc, .a = "environ", .flags = T_HOST),
	      HARD(EACCES, CORDON_OP_PTRACE, EPERM, d), OK_HOST);
	check("open /proc/<host pid>/mem", OP(op_proc, .a = "mem", .flags = T_HOST),
	      HARD(EACCES, CORDON_OP_PTRACE, EPERM, d), OK_HOST);
	check("open /proc/<other session pid>/environ",
	      OP(op_proc, .a = "environ", .flags = T_OTHER),
	      HARD(EACCES, CORDON_OP_PTRACE, EPERM, "pid "), OK_HOST);

	snprintf(d, sizeof(d), "pid %d sig 0", (int)host_pid);
	check("kill(host pid, 0)", OP(op_kill, .flags = T_HOST, .flags2 = 0),
	      HARD(EPERM, CORDON_OP_SIGNAL, EPERM, d), OK_HOST);
	snprintf(d, sizeof(d), "pid %d sig 15", (int)host_pid);
	if (ctx.cg)
		check("kill(host pid, SIGTERM)", OP(op_kill, .flags = T_HOST, .flags2 = SIGTERM),
		      HARD(EPERM, CORDON_OP_SIGNAL, EPERM, d), OK_HOST);
	tap_ok(alive(host_pid), "[%s] the host process survived", ctx.mode);
	if (ctx.cg)
		check("kill(other session pid, SIGTERM)",
		      OP(op_kill, .flags = T_OTHER, .flags2 = SIGTERM),
		      HARD(EPERM, CORDON_OP_SIGNAL, EPERM, "pid "), OK_HOST);
	check("kill(own child, SIGTERM)", OP(op_kill, .flags = T_OWN, .flags2 = SIGTERM),
	      NO_EVENT(0), OK_HOST);
}

static void kernel(bool root, bool host)
{
	check("bpf(BPF_OBJ_GET) of " CORDON_PIN_DIR "/sessions",
	      OP(op_bpf_obj_get, .a = CORDON_PIN_DIR "/sessions"),
	      HARD(EPERM, CORDON_OP_BPF, EPERM, "cmd 7"), OK_HOST);
	check("bpf(BPF_MAP_CREATE)", OP(op_bpf_map_create),
	      HARD(EPERM, CORDON_OP_BPF, EPERM, "cmd 0"), OK_HOST);
	/* The module syscalls need CAP_SYS_MODULE first: the capability is the event. */
	check("init_module", OP(op_init_module),
	      root ? HARD(EPERM, CORDON_OP_CAPABLE, EPERM, "cap 16") : NO_EVENT(EPERM),
	      NO_EVENT(ENOEXEC));
	check("finit_module", OP(op_finit_module),
	      root ? HARD(EPERM, CORDON_OP_CAPABLE, EPERM, "cap 16") : NO_EVENT(EPERM),
	      NO_EVENT(ENOEXEC));
	/*
	 * AppleTalk: a family no session may use.  socket_create refuses it
	 * before the kernel would even ask for its module.
	 */
	if (!host) {
		check("socket(AF_APPLETALK): refused by family",
		      OP(op_socket, .flags = AF_APPLETALK, .flags2 = SOCK_DGRAM),
		      HARD(EPERM, CORDON_OP_SOCKET, EPERM, "family 5"), OK_HOST);
		/*
		 * The families the cgroup sock_create program never sees (it
		 * runs for inet only): socket_create refuses them before the
		 * kernel looks the family up or checks a capability.
		 */
		check("socket(AF_PACKET, SOCK_RAW): refused by family",
		      OP(op_socket, .flags = AF_PACKET, .flags2 = SOCK_RAW, .a = "768"),
		      HARD(EPERM, CORDON_OP_SOCKET, EPERM, "family 17"), OK_HOST);
		check("socket(AF_NETLINK, NETLINK_SOCK_DIAG): refused",
		      OP(op_socket, .flags = AF_NETLINK, .flags2 = SOCK_RAW, .a = "4"),
		      HARD(EPERM, CORDON_OP_SOCKET, EPERM, "family 16"), OK_HOST);
		check("socket(AF_VSOCK): refused by family",
		      OP(op_socket, .flags = AF_VSOCK, .flags2 = SOCK_STREAM),
		      HARD(EPERM, CORDON_OP_SOCKET, EPERM, "family 40"), OK_HOST);
		check("socket(AF_ALG): refused by family",
		      OP(op_socket, .flags = AF_ALG, .flags2 = SOCK_SEQPACKET),
		      HARD(EPERM, CORDON_OP_SOCKET, EPERM, "family 38"), OK_HOST);
		check("socket(AF_NETLINK, NETLINK_ROUTE): still allowed",
		      OP(op_socket, .flags = AF_NETLINK, .flags2 = SOCK_RAW, .a = "0"),
		      NO_EVENT(0), OK_HOST);
	}
	check("unshare(CLONE_NEWUSER)", OP(op_unshare, .flags = CLONE_NEWUSER),
	      HARD(EPERM, CORDON_OP_USERNS, EPERM, NULL), OK_HOST);
	check("perf_event_open (task clock, self)", OP(op_perf),
	      HARD(EPERM, CORDON_OP_PERF, EPERM, "type 1"), OK_HOST);
	check("ioctl(pty, TIOCSTI)", OP(op_tty_ioctl, .flags = 0x5412),
	      HARD(EPERM, CORDON_OP_IOCTL, EPERM, "cmd 0x5412"),
	      root ? OK_HOST : NO_EVENT(EPERM));
	check("ioctl(pty, TIOCLINUX)", OP(op_tty_ioctl, .flags = 0x541C),
	      HARD(EPERM, CORDON_OP_IOCTL, EPERM, "cmd 0x541c"), NO_EVENT(ENOTTY));
}

static void capabilities(bool root)
{
	/* The agent has no capability: the kernel refuses before the floor. */
	check("sethostname (CAP_SYS_ADMIN)", OP(op_sethostname),
	      root ? HARD(EPERM, CORDON_OP_CAPABLE, EPERM, "cap 21") : NO_EVENT(EPERM), OK_HOST);
	check("clock_settime (CAP_SYS_TIME)", OP(op_settime),
	      root ? HARD(EPERM, CORDON_OP_CAPABLE, EPERM, "cap 25") : NO_EVENT(EPERM), OK_HOST);
	check("raw socket (CAP_NET_RAW)", OP(op_socket, .flags = AF_INET, .flags2 = SOCK_RAW,
						       .a = "1" /* ICMP */),
	      root ? HARD(EPERM, CORDON_OP_CAPABLE, EPERM, "cap 13") : NO_EVENT(EPERM), OK_HOST);
	/* CAP_CHOWN is kept: the floor's chown rule decides (allowed here). */
	check("chown of a file in an allowed directory", OP(op_chown, .a = WS "/owned",
							      .flags = 4242),
	      root ? NO_EVENT(0) : NO_EVENT(EPERM), OK_HOST);
}

static void unix_sockets(void)
{
	check("connect to a host abstract socket", OP(op_unix, .flags2 = T_HOST),
	      HARD(EPERM, CORDON_OP_UNIX_CONNECT, EPERM, "@cordon-host-"), OK_HOST);
	check("connect to another session's abstract socket", OP(op_unix, .flags2 = T_OTHER),
	      HARD(EPERM, CORDON_OP_UNIX_CONNECT, EPERM, "@cordon-other-"), OK_HOST);
	check("connect to its own abstract socket", OP(op_unix_own), NO_EVENT(0), OK_HOST);
	check("socketpair, stream", OP(op_socketpair, .flags = SOCK_STREAM), NO_EVENT(0),
	      OK_HOST);
	check("socketpair, datagram", OP(op_socketpair, .flags = SOCK_DGRAM), NO_EVENT(0),
	      OK_HOST);
	check("connect to a socket in an allowed directory", OP(op_unix, .a = WS "/ok.sock"),
	      NO_EVENT(0), OK_HOST);
	check("connect to a socket in a denied directory", OP(op_unix, .a = DEN "/no.sock"),
	      &(const struct hx){ .err = EACCES, .op = CORDON_OP_UNIX_CONNECT, .ev_err = EACCES,
				  .reason = CORDON_REASON_RULE, .detail = DEN "/no.sock" },
	      OK_HOST);
	check("connect through a symlink to it", OP(op_unix, .a = WS "/symlink.sock"),
	      &(const struct hx){ .err = EACCES, .op = CORDON_OP_UNIX_CONNECT, .ev_err = EACCES,
				  .reason = CORDON_REASON_RULE, .detail = DEN "/no.sock" },
	      OK_HOST);
	check("connect through a hardlink to it", OP(op_unix, .a = WS "/hardlink.sock"),
	      &(const struct hx){ .err = EACCES, .op = CORDON_OP_UNIX_CONNECT, .ev_err = EACCES,
				  .reason = CORDON_REASON_RULE, .detail = DEN "/no.sock" },
	      OK_HOST);
	check("sendto a datagram socket in an allowed directory",
	      OP(op_unix, .a = WS "/dgram.sock", .flags = SOCK_DGRAM), NO_EVENT(0), OK_HOST);
	check("sendto a datagram socket in a denied directory",
	      OP(op_unix, .a = DEN "/dgram.sock", .flags = SOCK_DGRAM),
	      &(const struct hx){ .err = EACCES, .op = CORDON_OP_UNIX_SEND, .ev_err = EACCES,
				  .reason = CORDON_REASON_RULE, .detail = DEN "/dgram.sock" },
	      OK_HOST);
}

static void pass(struct floor *f, struct policy *p, const char *mode, uid_t uid, bool host)
{
	struct floor_session *sa = NULL, *sb = NULL;
	uint64_t drops = 0;
	int r;

	r = floor_session_create(f, p, NULL, &sa);
	r = r ?: floor_session_create(f, p, NULL, &sb);
	if (!tap_ok(r == 0, "[%s] two sessions (%s)", mode, strerror(-r)))
		goto out;
	memset(&ctx, 0, sizeof(ctx));
	ctx.f = f;
	ctx.s = sa;
	ctx.uid = uid;
	ctx.cg = host ? NULL : floor_session_cgroup(sa);
	snprintf(ctx.mode, sizeof(ctx.mode), "%s", mode);
	host_pid = victim(NULL, uid, host_abstract, sizeof(host_abstract));
	other_pid = victim(floor_session_cgroup(sb), uid, other_abstract, sizeof(other_abstract));
	if (!tap_ok(host_pid > 0 && other_pid > 0, "[%s] target processes", mode))
		goto out;

	tasks(uid == 0);
	kernel(uid == 0, host);
	capabilities(uid == 0);
	unix_sockets();
	tap_ok(floor_session_drops(f, sa, &drops) == 0 && drops == 0,
	       "[%s] no events dropped (%llu)", mode, (unsigned long long)drops);
out:
	if (host_pid > 0)
		reap(host_pid);
	if (other_pid > 0)
		reap(other_pid);
	if (sa)
		tap_ok(floor_session_destroy(f, sa) == 0, "[%s] session A destroyed", mode);
	if (sb)
		tap_ok(floor_session_destroy(f, sb) == 0, "[%s] session B destroyed", mode);
}

#define BPF_SYSCTL   "/proc/sys/kernel/unprivileged_bpf_disabled"
#define PERF_SYSCTL  "/proc/sys/kernel/perf_event_paranoid"
#define YAMA_SYSCTL  "/proc/sys/kernel/yama/ptrace_scope"

/* With the distribution's sysctls, root in a session is refused by capable(). */
static void defaults(struct floor *f, struct policy *p, int bpf_was, int perf_was)
{
	struct floor_session *s = NULL;

	if (floor_session_create(f, p, NULL, &s)) {
		tap_ok(0, "[defaults] session");
		return;
	}
	memset(&ctx, 0, sizeof(ctx));
	ctx.f = f;
	ctx.s = s;
	ctx.cg = floor_session_cgroup(s);
	snprintf(ctx.mode, sizeof(ctx.mode), "root, sysctls %d/%d", bpf_was, perf_was);
	if (bpf_was > 0 && sysctl_set(BPF_SYSCTL, bpf_was) == 0)
		check("bpf(BPF_OBJ_GET): CAP_BPF asked first",
		      OP(op_bpf_obj_get, .a = CORDON_PIN_DIR "/sessions"),
		      HARD(EPERM, CORDON_OP_CAPABLE, EPERM, "cap 39"), OK_HOST);
	if (perf_was > 2 && sysctl_set(PERF_SYSCTL, perf_was) == 0)
		check("perf_event_open: CAP_SYS_ADMIN asked first", OP(op_perf),
		      HARD(EACCES, CORDON_OP_CAPABLE, EPERM, "cap 21"), OK_HOST);
	floor_session_destroy(f, s);
}

int main(void)
{
	int bpf_was = sysctl_get(BPF_SYSCTL), perf_was = sysctl_get(PERF_SYSCTL);
	int yama_was = sysctl_get(YAMA_SYSCTL), fds[4] = { -1, -1, -1, -1 };
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
	tap_diag("sysctls: unprivileged_bpf_disabled %d, perf_event_paranoid %d, ptrace_scope %d",
		 bpf_was, perf_was, yama_was);
	if (bpf_was == 2)
		(void)sysctl_set(BPF_SYSCTL, 0);
	if (perf_was > 2)
		(void)sysctl_set(PERF_SYSCTL, 2);
	if (yama_was > 0)
		(void)sysctl_set(YAMA_SYSCTL, 0);
	r = fixture(fds);
	if (!tap_ok(r == 0, "fixture under " R " (%s)", strerror(-r)))
		goto out;
	if (!tap_ok(fl_policy(policy_text, &p, "FIXTURE", R, NULL) == 0, "policy loads"))
		goto out;

	pass(f, p, "uid 1000", AGENT_UID, false);
	pass(f, p, "root", 0, false);
	pass(f, p, "host", 0, true);
	defaults(f, p, bpf_was, perf_was);
out:
	if (bpf_was == 2)
		(void)sysctl_set(BPF_SYSCTL, 2);
	if (perf_was > 2)
		(void)sysctl_set(PERF_SYSCTL, perf_was);
	if (yama_was > 0)
		(void)sysctl_set(YAMA_SYSCTL, yama_was);
	for (int i = 0; i < 4; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	fl_rm_tree(R);
	pol_free(p);
	floor_close(f);
	return tap_done();
}
