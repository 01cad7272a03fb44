/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shared by the kernel floor's VM tests (floor_files, floor_exec): run one
 * operation in a fresh task inside a session, as the agent user or as root,
 * or on the host, and judge both halves of the floor's answer: the errno
 * the task got and the event the session's supervisor reads.  A denial the
 * task sees but the supervisor does not (or the other way round) is a bug
 * either way, so every check asserts both.
 *
 * The task is a forked child that moves itself into the session (writing
 * its pid to the session's cgroup.procs while still on the host side), drops
 * to the agent's uid and gid if asked, runs the operation and reports the
 * errno and the pid whose events to look for through a pipe.  An operation
 * that execs leaves no report: the pipe is close-on-exec, and the program
 * it ran reports through its exit status (FL_EXEC_STATUS means it ran).
 */
#ifndef CORDON_TESTS_FLOOR_UTIL_H
#define CORDON_TESTS_FLOOR_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "../tap.h"
#include "cgroup.h"
#include "floor.h"
#include "policy.h"

#define AGENT_UID       1000
#define FL_EXEC_STATUS  42      /* exit status of a program the task exec'd */
#define FL_REPORTED     (-2)    /* the operation sent its own report */
#define FL_NO_REPORT    (-1)    /* the task died without saying anything */
#define FL_MAX_EVENTS   512

enum fl_aux {
	FL_AUX_NONE = 0,
	FL_AUX_SETUP,           /* could not enter the session or drop privileges */
	FL_AUX_SKIP,            /* the kernel lacks what the operation needs */
	FL_AUX_ORPHANED,        /* ran re-parented and in a session of its own */
};

struct fl_report {
	int err;                /* errno of the operation, 0 on success */
	int pid;                /* the task whose events to look for */
	int aux;                /* enum fl_aux */
	int status;             /* wait status of the child (parent side only) */
};

struct fl_op;
typedef int (*fl_fn)(const struct fl_op *op, struct fl_report *r);

/* One operation: fn and whatever of the rest it reads. */
struct fl_op {
	fl_fn fn;
	const char *a, *b;
	int flags, flags2;
	const struct fl_op *inner;
};

/* What a check expects: the errno, then the event (op NONE: no event at all). */
struct fl_expect {
	int err;
	uint32_t op;
	uint32_t decision;
	uint32_t reason;
	int rule;               /* rule id in the event, -1: not checked */
	const char *path;       /* event path, NULL: not checked */
	bool prefix;            /* path need only start with `path` */
	bool allow_events;      /* op NONE: allow events may appear, denials not */
};

#define FL_SILENT \
	(&(const struct fl_expect){ .rule = -1 })
#define FL_ALLOW(o, p) \
	(&(const struct fl_expect){ .op = (o), .decision = CORDON_ALLOW, \
				    .reason = CORDON_REASON_RULE, .rule = -1, .path = (p) })
#define FL_DENY(e, o, why, p) \
	(&(const struct fl_expect){ .err = (e), .op = (o), .decision = CORDON_DENY, \
				    .reason = (why), .rule = -1, .path = (p) })
#define FL_DENY_RULE(o, id, p) \
	(&(const struct fl_expect){ .err = EACCES, .op = (o), .decision = CORDON_DENY, \
				    .reason = CORDON_REASON_RULE, .rule = (id), .path = (p) })
/* Success; whether it is reported is not this check's business, a denial is. */
#define FL_NO_DENIAL \
	(&(const struct fl_expect){ .rule = -1, .allow_events = true })
/* Something before the floor (DAC) refuses: no event may appear. */
#define FL_NOT_FLOOR(e) \
	(&(const struct fl_expect){ .err = (e), .rule = -1 })

struct fl_events {
	size_t n;
	struct cordon_event e[FL_MAX_EVENTS];
};

/* One pass of a matrix: who runs the operations, and where. */
struct fl_ctx {
	struct floor *f;
	struct floor_session *s;    /* whose ring buffer is read */
	const char *cg;             /* cgroup the task enters, NULL: stays on the host */
	uid_t uid;
	char mode[32];              /* "uid 1000", "root", "host": prefixes every check */
	struct fl_report rep;       /* of the last check */
	const struct cordon_event *match;  /* the event the last check matched */
	struct fl_events evs;
};

/* --- in the child ------------------------------------------------------- */

static int fl_report_fd = -1;

static inline void fl_send(const struct fl_report *r)
{
	if (write(fl_report_fd, r, sizeof(*r)) != (ssize_t)sizeof(*r))
		_exit(125);
}

static inline int fl_enter(const char *cg)
{
	return cg_attach_pid(cg, getpid());
}

/*
 * The agent's identity, and dumpable again: setresuid clears it, and a
 * task that is not dumpable cannot follow its own /proc/self/fd links as
 * another uid would, which would make the re-open checks test DAC.
 */
static inline int fl_drop(uid_t uid)
{
	if (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0)
		return -1;
	return prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
}

__attribute__((noreturn))
static inline void fl_child(const char *cg, uid_t uid, const struct fl_op *op, int go_fd)
{
	struct fl_report r = { .pid = getpid() };
	char b;

	if ((cg && fl_enter(cg) < 0) || (uid && fl_drop(uid) < 0)) {
		r.err = errno;
		r.aux = FL_AUX_SETUP;
		fl_send(&r);
		_exit(1);
	}
	if (go_fd >= 0 && read(go_fd, &b, 1) != 1)
		_exit(124);
	r.err = op->fn(op, &r);
	if (r.err != FL_REPORTED)
		fl_send(&r);
	_exit(0);
}

/* --- in the parent ------------------------------------------------------- */

struct fl_task {
	pid_t pid;
	int rfd;
};

static inline int fl_spawn(struct fl_task *t, const char *cg, uid_t uid, const struct fl_op *op,
			   int go_fd)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	fflush(stdout);
	t->pid = fork();
	if (t->pid < 0) {
		close(p[0]);
		close(p[1]);
		return -errno;
	}
	if (t->pid == 0) {
		close(p[0]);
		fl_report_fd = p[1];
		fl_child(cg, uid, op, go_fd);
	}
	close(p[1]);
	t->rfd = p[0];
	return 0;
}

/*
 * The task's report, read until every holder of the pipe (the child and
 * any grandchild) has closed it, then the child reaped.  No report and the
 * exit status FL_EXEC_STATUS: the task exec'd and the program ran.
 */
static inline void fl_collect(struct fl_task *t, struct fl_report *r)
{
	struct pollfd pfd = { .fd = t->rfd, .events = POLLIN };
	struct fl_report got;
	bool have = false;
	int st = 0;

	memset(r, 0, sizeof(*r));
	for (;;) {
		if (poll(&pfd, 1, 20000) <= 0) {
			tap_diag("task %d: no report after 20 s, killing it", (int)t->pid);
			kill(t->pid, SIGKILL);
			break;
		}
		if (read(t->rfd, &got, sizeof(got)) != (ssize_t)sizeof(got))
			break;
		*r = got;
		have = true;
	}
	close(t->rfd);
	(void)waitpid(t->pid, &st, 0);
	r->status = st;
	if (!have) {
		r->pid = t->pid;
		r->err = WIFEXITED(st) && WEXITSTATUS(st) == FL_EXEC_STATUS ? 0 : FL_NO_REPORT;
	}
}

static inline int fl_on_event(void *ctx, const struct cordon_event *e)
{
	struct fl_events *st = ctx;

	if (st->n < FL_MAX_EVENTS)
		st->e[st->n++] = *e;
	return 0;
}

/*
 * Every event the session's ring buffer holds.  Hooks submit before the
 * syscall returns, so once the task is reaped its events are in the ring;
 * the first poll waits only for the wakeup, which the kernel defers to
 * irq_work.  wait_ms is how long an event may take to show (short when
 * none is expected: that wait is the price of proving a negative).
 */
static inline void fl_drain(struct floor_session *s, struct fl_events *st, int wait_ms)
{
	st->n = 0;
	if (floor_session_poll(s, wait_ms, fl_on_event, st) <= 0)
		return;
	while (floor_session_poll(s, 0, fl_on_event, st) > 0)
		;
}

static inline const char *fl_errname(int err)
{
	static char buf[32];

	if (err == 0)
		return "success";
	if (err == FL_NO_REPORT)
		return "no report";
	snprintf(buf, sizeof(buf), "%s", strerrorname_np(err) ? strerrorname_np(err) : "?");
	return buf;
}

static inline void fl_describe(const struct cordon_event *e, char *out, size_t len)
{
	char path[PATH_MAX];

	floor_event_path(e, path, sizeof(path));
	snprintf(out, len, "pid %u uid %u %s %s %s rule %d err %d flags %#x comm %.16s path %s",
		 e->pid, e->uid, floor_op_name(e->op),
		 e->decision == CORDON_ALLOW ? "allow" :
		 e->decision == CORDON_DENY ? "deny" : "escalate",
		 floor_reason_name(e->reason), (int)e->rule_id, e->err, e->flags, e->comm, path);
}

static inline void fl_dump(const struct fl_events *st, int pid)
{
	char d[PATH_MAX + 256];
	size_t shown = 0;

	for (size_t i = 0; i < st->n; i++) {
		if (pid && st->e[i].pid != (uint32_t)pid)
			continue;
		fl_describe(&st->e[i], d, sizeof(d));
		tap_diag("  event: %s", d);
		shown++;
	}
	if (!shown)
		tap_diag("  no events%s", pid ? " from that task" : "");
}

/*
 * Does what the task got match x?  The errno first; then, of the events
 * from that task (all_pids: from any task), the one with x's op and
 * decision, field by field; and exactly one denial when x is one, none
 * otherwise: a denial reported twice or an allowed operation that leaves a
 * denial behind is a bug too.  why says what did not match.
 */
static inline bool fl_judge(const struct fl_events *st, const struct fl_report *rep, uid_t uid,
			    uint64_t sid, const struct fl_expect *x, bool all_pids,
			    const struct cordon_event **match, char *why, size_t len)
{
	const struct cordon_event *m = NULL;
	size_t mine = 0, denials = 0;
	char path[PATH_MAX];

	*match = NULL;
	if (rep->aux == FL_AUX_SETUP) {
		snprintf(why, len, "the task could not enter the session or drop privileges: %s",
			 strerror(rep->err));
		return false;
	}
	if (rep->err != x->err) {
		snprintf(why, len, "errno: got %s, want %s", fl_errname(rep->err),
			 fl_errname(x->err));
		return false;
	}
	for (size_t i = 0; i < st->n; i++) {
		const struct cordon_event *e = &st->e[i];

		if (!all_pids && e->pid != (uint32_t)rep->pid)
			continue;
		mine++;
		if (e->decision != CORDON_ALLOW)
			denials++;
		if (!m && x->op && e->op == x->op && e->decision == x->decision)
			m = e;
	}
	if (!x->op) {
		if (x->allow_events ? denials : mine) {
			snprintf(why, len, "want no %sevent, got %zu",
				 x->allow_events ? "denial " : "",
				 x->allow_events ? denials : mine);
			return false;
		}
		return true;
	}
	if (!m) {
		snprintf(why, len, "no %s %s event", floor_op_name(x->op),
			 x->decision == CORDON_DENY ? "deny" : "allow");
		return false;
	}
	*match = m;
	floor_event_path(m, path, sizeof(path));
	if (m->reason != x->reason)
		snprintf(why, len, "reason: got %s, want %s", floor_reason_name(m->reason),
			 floor_reason_name(x->reason));
	else if (m->err != (x->decision == CORDON_DENY ? -x->err : 0))
		snprintf(why, len, "event err: got %d", m->err);
	else if (x->rule >= 0 && m->rule_id != (uint32_t)x->rule)
		snprintf(why, len, "rule: got %u, want %d", m->rule_id, x->rule);
	else if (m->uid != uid)
		snprintf(why, len, "event uid: got %u, want %u", m->uid, (unsigned)uid);
	else if (m->session != sid)
		snprintf(why, len, "event session: got %llu, want %llu",
			 (unsigned long long)m->session, (unsigned long long)sid);
	else if (x->path && (x->prefix ? strncmp(path, x->path, strlen(x->path)) :
					 strcmp(path, x->path)))
		snprintf(why, len, "path: got '%s', want '%s'%s", path, x->path,
			 x->prefix ? "..." : "");
	else if (denials != (x->decision == CORDON_DENY ? 1u : 0u))
		snprintf(why, len, "%zu denial events, want %d", denials,
			 x->decision == CORDON_DENY);
	else
		return true;
	return false;
}

static inline const char *fl_summary(const struct fl_expect *x, char *out, size_t len)
{
	if (!x->op)
		snprintf(out, len, "%s, no %s", fl_errname(x->err),
			 x->allow_events ? "denial event" : "event");
	else
		snprintf(out, len, "%s, %s %s %s", fl_errname(x->err), floor_op_name(x->op),
			 x->decision == CORDON_DENY ? "deny" : "allow",
			 floor_reason_name(x->reason));
	return out;
}

/*
 * Run op as the pass says and assert x (in a session) or, on the host,
 * plain success and no event at all in the session's ring buffer: a host
 * task is never confined and never reported.
 */
static inline bool fl_check(struct fl_ctx *c, const char *name, const struct fl_op *op,
			    const struct fl_expect *x)
{
	const struct fl_expect *want = c->cg ? x : FL_SILENT;
	struct fl_task t = { .pid = -1, .rfd = -1 };
	char why[PATH_MAX + 128], sum[128];
	bool ok;

	fl_drain(c->s, &c->evs, 0);     /* nothing left over is blamed on this task */
	if (fl_spawn(&t, c->cg, c->uid, op, -1) < 0) {
		tap_ok(0, "[%s] %s: fork: %s", c->mode, name, strerror(errno));
		return false;
	}
	fl_collect(&t, &c->rep);
	fl_drain(c->s, &c->evs, want->op ? 2000 : 50);
	if (c->rep.aux == FL_AUX_SKIP) {
		tap_ok(1, "[%s] %s # SKIP %s", c->mode, name, strerror(c->rep.err));
		return true;
	}
	ok = fl_judge(&c->evs, &c->rep, c->uid, floor_session_id(c->s), want, !c->cg,
		      &c->match, why, sizeof(why));
	tap_ok(ok, "[%s] %s: %s", c->mode, name, fl_summary(want, sum, sizeof(sum)));
	if (!ok) {
		tap_diag("  %s", why);
		fl_dump(&c->evs, c->cg ? c->rep.pid : 0);
	}
	return ok;
}

/* --- the fixture ----------------------------------------------------------- */

static inline int fl_put(const char *path, const void *data, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	const char *p = data;

	if (fd < 0)
		return -errno;
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n <= 0) {
			close(fd);
			return n < 0 ? -errno : -EIO;
		}
		p += n;
		len -= (size_t)n;
	}
	if (fchmod(fd, mode) < 0) {
		close(fd);
		return -errno;
	}
	return close(fd) < 0 ? -errno : 0;
}

static inline int fl_putstr(const char *path, const char *text)
{
	return fl_put(path, text, strlen(text), 0644);
}

/* The whole of a file, malloc'd. */
static inline int fl_slurp(const char *path, char **out, size_t *len)
{
	struct stat st;
	char *buf;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !(buf = malloc((size_t)st.st_size + 1))) {
		close(fd);
		return -ENOMEM;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = 0;
	*out = buf;
	*len = got;
	return 0;
}

static inline int fl_rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	if (type == FTW_DP)
		return rmdir(path) < 0 ? -1 : 0;
	return unlink(path) < 0 ? -1 : 0;
}

/* rm -rf that stays on its own filesystem (a leftover bind mount is not followed). */
static inline void fl_rm_tree(const char *path)
{
	(void)nftw(path, fl_rm_one, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

static inline int fl_chown_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	return lchown(path, AGENT_UID, AGENT_UID) < 0 ? -1 : 0;
}

/* The fixture belongs to the agent, so that DAC lets uid 1000 try everything. */
static inline int fl_chown_tree(const char *path)
{
	return nftw(path, fl_chown_one, 32, FTW_PHYS | FTW_MOUNT) < 0 ? -errno : 0;
}

/*
 * Load a policy from text with the variables given as NAME, VALUE pairs
 * (NULL-terminated).  Diagnostics are printed: a test policy that does not
 * load is a test bug worth reading.
 */
static inline int fl_policy(const char *text, struct policy **out, ...)
{
	struct pol_vars vars = {};
	struct pol_diags ds = {};
	const char *name, *value;
	va_list ap;
	int r;

	va_start(ap, out);
	while ((name = va_arg(ap, const char *))) {
		value = va_arg(ap, const char *);
		pol_vars_set(&vars, name, value);
	}
	va_end(ap);
	r = pol_load_text(text, strlen(text), "floor-test.json", &vars, out, &ds);
	if (r < 0)
		pol_diags_print(&ds, "floor-test.json", stdout);
	pol_diags_free(&ds);
	pol_vars_free(&vars);
	return r;
}

/* The cgroup this process is in, as a directory (for host-side checks). */
static inline int fl_own_cgroup(char *out, size_t len)
{
	char root[PATH_MAX], line[PATH_MAX];
	FILE *f;
	int r = -ENOENT;

	if (floor_cgroup_parent(root, sizeof(root)) < 0)
		return -ENOENT;
	*strrchr(root, '/') = 0;
	f = fopen("/proc/self/cgroup", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = 0;
			const char *rel = strcmp(line + 3, "/") ? line + 3 : "";

			r = (size_t)snprintf(out, len, "%s%s", root, rel) < len ? 0 : -ENAMETOOLONG;
		}
	fclose(f);
	return r;
}

#endif /* CORDON_TESTS_FLOOR_UTIL_H */
