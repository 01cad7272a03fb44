// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The supervisor's event loop: seccomp notifications (exec, connect), the
 * floor's ring buffer (writes, deletes, denials), approvals, the agent's
 * terminal, budgets.  Every operation it sees becomes a semantic event shaped
 * like an MCP tool call, judged by the one evaluator (policy/eval.c),
 * published on the session's event socket and written to the audit log.
 *
 * What a decision may rest on (seccomp_unotify(2)): the task's memory can
 * change after the supervisor reads it.
 *   - exec: an allow is answered CONTINUE because the floor judges the
 *     binary the kernel actually opens (BPF LSM bprm_check / Landlock
 *     EXECUTE) and the exec recheck (bpf/exec_recheck.bpf.c) has the
 *     kernel compare the argv, the path and the binary it received with
 *     what was judged, killing the exec before it runs if they differ.
 *     Where the recheck cannot load, an allow that depends on argv (git,
 *     npm, curl...: the recognisers) is refused while another task shares
 *     the caller's memory (a MAP_SHARED page is then not caught: declared).
 *   - connect (inet): an allow is CONTINUEd because the cgroup-bpf program
 *     judges the address the kernel receives.  An approved escalation (which
 *     the kernel floor denies, as it cannot wait for a human) is performed by
 *     the supervisor on a pidfd_getfd copy of the socket with the address it
 *     read and judged, and the result is returned to the task.
 *   - connect (unix): the floor judges pathname sockets by object (BPF LSM)
 *     and abstract ones by scope (Landlock ABI >= 6 in the fallback); the
 *     supervisor lifts and audits.  In the fallback it judges a pathname
 *     socket by its canonical path and performs the connect itself, and
 *     the network floor's unix gate keeps the session from naming one in
 *     the kernel (an address rewritten after the check is refused there).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <sched.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <linux/magic.h>
#include <linux/major.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <openssl/evp.h>

#include "audit.h"
#include "budget.h"
#include "cgroup.h"
#include "floor.h"
#include "net.h"
#include "notify.h"
#include "push_grant.h"
#include "supervisor.h"
#include "approve.h"
#include "exec_decide.h"
#include "helper.h"
#include "tell.h"
#include "unix_connector.h"
#include "util.h"

/*
 * The largest argv an exec can carry is the kernel's: its strings and
 * pointers (with the environment's) may take a quarter of the stack
 * limit, and never more than 6 MiB (fs/exec.c: _STK_LIM / 4 * 3), each
 * argument at least a pointer and a NUL.  The supervisor reads up to that,
 * so an exec the kernel would run is judged, never refused for its size
 * (`rm *.o` over thousands of files, a linker's command line); beyond it
 * the answer is the kernel's own, E2BIG, and a record says so.
 */
#define MAX_ARG_BYTES (6u << 20)
#define MAX_ARGS (MAX_ARG_BYTES / (sizeof(char *) + 1))

static struct timespec t_answer;        /* when the main loop last answered a task */

static void answered(void)
{
	clock_gettime(CLOCK_MONOTONIC, &t_answer);
}

static void comm_of(pid_t pid, char *out, size_t len)
{
	char path[64], *s = NULL;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if (read_file(path, &s, 64) < 0) {
		snprintf(out, len, "?");
		return;
	}
	s[strcspn(s, "\n")] = '\0';
	snprintf(out, len, "%s", s);
	free(s);
}

/* Write to every subscriber; one that cannot keep up is dropped (never blocks). */
static void publish(struct sup *s, json_t *params)
{
	json_t *msg = json_pack("{s:s,s:s,s:O}", "jsonrpc", "2.0", "method", "cordon/event",
				"params", params);
	char *line = json_dumps(msg, JSON_COMPACT);
	size_t n;

	json_decref(msg);
	if (!line)
		return;
	n = strlen(line);
	line[n] = '\n';
	for (int i = 0; i < s->ap.n_clients;) {
		if (send(s->ap.clients[i], line, n + 1, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)(n + 1)) {
			close(s->ap.clients[i]);
			s->ap.clients[i] = s->ap.clients[--s->ap.n_clients];
			continue;
		}
		i++;
	}
	free(line);
}

static void record_as(struct sup *s, pid_t pid, const char *comm, const char *raw_name,
		      json_t *raw, json_t *event, const char *decision, const char *rule,
		      const char *reason, const char *approver)
{
	json_t *rec = json_object();

	json_object_set_new(rec, "pid", json_integer(pid));
	json_object_set_new(rec, "comm", pol_json_text(comm));
	if (raw) {
		json_object_set_new(raw, "syscall", json_string(raw_name));
		json_object_set(rec, "raw", raw);
	}
	if (event)
		json_object_set(rec, "event", event);
	json_object_set_new(rec, "decision", json_string(decision));
	if (rule)
		json_object_set_new(rec, "rule", json_string(rule));
	if (reason)
		json_object_set_new(rec, "reason", pol_json_text(reason));
	if (approver)
		json_object_set_new(rec, "approver", json_string(approver));
	pthread_mutex_lock(&s->lock);
	if (s->audit) {
		(void)audit_write(s->audit, "decision", rec);
		sup_audit_check(s);
	}
	json_object_set_new(rec, "session", json_string(s->name));
	publish(s, rec);
	pthread_mutex_unlock(&s->lock);
	json_decref(rec);
}

/*
 * A session whose audit log cannot keep its records is stopped.  Attack: the
 * agent fills the filesystem that holds the log, or makes a record too large
 * to keep, and goes on unrecorded (before this, a full disk left the log cut
 * mid-line and the session ran on).  The log keeps a reserve past its end
 * and goes down while some of it is left (AUDIT_RESERVE in audit.c): the
 * first time it reports that, the session's every task is SIGKILLed here, at
 * once, every later notification is refused unjudged (handle_notification),
 * and the log's "audit-down" record says why, with how many records were
 * dropped; the end record and the seal still fit in the reserve.
 * What it cannot close: an operation answered before its record failed (the
 * supervisor answers first, then records: a write error other than a full
 * disk, or a record over AUDIT_RECORD_MAX) has happened; it is the last one,
 * and the log counts its record as dropped.  Where the filesystem keeps no
 * reserve, the closing records may be lost too.
 */
void sup_audit_check(struct sup *s)
{
	int r = audit_down(s->audit, NULL);

	if (r && !s->audit_err) {
		__atomic_store_n(&s->audit_err, r, __ATOMIC_RELEASE);
		(void)cg_kill(s->cgroup);
	}
	/*
	 * The audit budget (budgets.audit): attack, an agent that makes
	 * records by the million (a loop of refused opens costs it nothing:
	 * neither steps nor memory) and fills the host's disk through the log
	 * before the log's own filesystem is full.  Past the budget the
	 * session stops as with any budget, at once (the records of calls
	 * already in flight still go in).
	 */
	if (s->pol->budgets.audit_bytes && !s->audit_full &&
	    audit_size(s->audit) > s->pol->budgets.audit_bytes) {
		__atomic_store_n(&s->audit_full, 1, __ATOMIC_RELEASE);
		(void)cg_kill(s->cgroup);
	}
}

void sup_record(struct sup *s, pid_t pid, const char *raw_name, json_t *raw, json_t *event,
		const char *decision, const char *rule, const char *reason, const char *approver)
{
	char comm[32];

	comm_of(pid, comm, sizeof(comm));
	record_as(s, pid, comm, raw_name, raw, event, decision, rule, reason, approver);
}

void sup_steps_check(struct sup *s)
{
	if (steps_spent(&s->steps) && !s->stop_reason[0]) {
		snprintf(s->stop_reason, sizeof(s->stop_reason),
			 "steps budget spent (%llu judged operations)",
			 (unsigned long long)steps_max(&s->steps));
		(void)cg_destroy(s->cgroup);
	}
}

/* The steps budget (steps.h): every lifted operation is one step. */
static void step(struct sup *s)
{
	(void)steps_take(&s->steps);
	sup_steps_check(s);
}

static const char *rule_name(const struct pol_result *r)
{
	return r->rule ? r->rule->name : r->invariant ? r->invariant : NULL;
}

/* The rule's description, or a plain default, for the human. */
static void risk_of(const struct pol_result *r, char *out, size_t len)
{
	snprintf(out, len, "%s", r->rule && r->rule->description ? r->rule->description :
		 r->reason[0] ? r->reason : "the policy asks a human for this");
}

/* Run fn(arg) on a detached thread; -errno if it cannot start (arg is the caller's then). */
static int spawn_detached(void *(*fn)(void *), void *arg)
{
	pthread_attr_t at;
	pthread_t t;
	int r;

	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	r = pthread_create(&t, &at, fn, arg);
	pthread_attr_destroy(&at);
	return -r;
}

/* --- emulated connect ----------------------------------------------------- */

struct emul {
	struct sup *s;
	struct held h;
	int sock;
};

static void *connect_worker(void *arg)
{
	struct emul *e = arg;
	int r = connect(e->sock, (struct sockaddr *)e->h.addr, e->h.addrlen);
	int err = r < 0 ? errno : 0;

	(void)notify_return(e->s->listener, e->h.notif, 0, err);
	close(e->sock);
	free(e);
	return NULL;
}

/*
 * Perform a connect for the task on a copy of its socket, with the address
 * the supervisor read and judged: a thread that rewrites the sockaddr after
 * the read changes nothing.  Blocking connects run on a worker thread so
 * the loop keeps serving.
 */
static int emulate_connect(struct sup *s, const struct held *h)
{
	struct emul *e;
	int sock = notify_getfd(h->pid, (int)h->args[0]);

	if (sock < 0)
		return sock;
	if (!notify_valid(s->listener, h->notif)) {
		close(sock);
		return -ESRCH;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		close(sock);
		return -ENOMEM;
	}
	e->s = s;
	e->h = *h;
	e->sock = sock;
	if (spawn_detached(connect_worker, e) < 0) {
		close(sock);
		free(e);
		return -EAGAIN;
	}
	return 0;
}

/* --- escalated opens --------------------------------------------------- */

/*
 * An approved open is performed by the supervisor and the descriptor
 * injected into the task with ADDFD + SEND, as seccomp_unotify(2) says:
 * the task's path argument (which another thread may rewrite) is never
 * used again; the supervisor opens the canonical path it judged, without
 * following symlinks (a symlink planted after the check fails with ELOOP),
 * from a worker thread with the agent's filesystem identity, so DAC applies
 * as to the agent.  The floor is not asked: it denies escalated rights by
 * design, because the kernel cannot wait for a human.
 */
struct open_emul {
	struct sup *s;
	struct held h;
};

static void *open_worker(void *arg)
{
	struct open_emul *e = arg;
	struct open_how how = {
		.flags = (uint64_t)(e->h.oflags | O_CLOEXEC) & ~(uint64_t)O_NOFOLLOW,
		.mode = (e->h.oflags & (O_CREAT | O_TMPFILE)) ? (e->h.omode & 07777) : 0,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	struct __user_cap_header_struct caph = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct capd[_LINUX_CAPABILITY_U32S_3] = { { 0 } };
	gid_t g = e->s->gid;
	int fd = -1, err = 0;

	/*
	 * Capabilities are per thread: this one drops every one after taking
	 * the agent's filesystem identity, so the open meets DAC, Yama and
	 * the rest as the agent would (a root agent too), not as root with
	 * CAP_SYS_PTRACE and CAP_DAC_OVERRIDE.
	 */
	if (unshare(CLONE_FS) < 0 || syscall(SYS_setgroups, 1, &g) < 0 ||
	    syscall(SYS_setfsgid, e->s->gid) < 0 || syscall(SYS_setfsuid, e->s->uid) < 0 ||
	    (uid_t)syscall(SYS_setfsuid, -1) != e->s->uid ||
	    syscall(SYS_capset, &caph, capd) < 0)
		err = EPERM;
	if (!err) {
		fd = (int)syscall(SYS_openat2, AT_FDCWD, e->h.path, &how, sizeof(how));
		if (fd < 0)
			err = errno;
	}
	if (fd >= 0) {
		int r = notify_addfd_send(e->s->listener, e->h.notif, fd, e->h.oflags & O_CLOEXEC);

		close(fd);
		if (r < 0)
			(void)notify_return(e->s->listener, e->h.notif, 0, -r == ENOENT ? EACCES : -r);
	} else {
		(void)notify_return(e->s->listener, e->h.notif, 0, err);
	}
	free(e);
	return NULL;
}

static int emulate_open(struct sup *s, const struct held *h)
{
	struct open_emul *e;

	if (!notify_valid(s->listener, h->notif))
		return -ESRCH;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->s = s;
	e->h = *h;
	if (spawn_detached(open_worker, e) < 0) {
		free(e);
		return -EAGAIN;
	}
	return 0;
}

void sup_apply(struct sup *s, struct held *h, bool allow, bool emulate, const char *why)
{
	int r;

	if (!allow) {
		(void)notify_return(s->listener, h->notif, 0,
				    h->nr == SYS_connect ? EPERM : EACCES);
		return;
	}
	if (h->nr != SYS_connect && h->nr != SYS_execve && h->nr != SYS_execveat) {
		r = emulate_open(s, h);
		if (r < 0)
			(void)notify_return(s->listener, h->notif, 0, -r == ESRCH ? EACCES : -r);
		return;
	}
	if (h->nr == SYS_connect) {
		if (!emulate) {
			(void)notify_continue(s->listener, h->notif);
			return;
		}
		r = emulate_connect(s, h);
		if (r < 0)
			(void)notify_return(s->listener, h->notif, 0, -r == ESRCH ? EPERM : -r);
		return;
	}
	/* exec: the floor re-checks the binary; the exec recheck (armed by the caller), the rest. */
	(void)why;
	(void)notify_continue(s->listener, h->notif);
}

/* --- exec ----------------------------------------------------------------- */

int sup_exec_arm(struct sup *s, const struct held *h, const char *comm, const char **why)
{
	struct cordon_exec_expect e;
	struct armed_exec *a;
	int r;

	if (!s->recheck.on)
		return 0;
	e = h->exec;
	e.cgroup = s->cgid;
	r = net_exec_arm(s->net, (uint32_t)h->pid, &e);
	if (r < 0) {
		*why = "the exec recheck could not be armed (unknown means deny)";
		return r;
	}
	/*
	 * A task that died before the arm (its exit cleared nothing yet to
	 * clear) would leave the expectation behind for good, one map entry
	 * each: a session could fill the map, and every session's execs would
	 * be refused.  The notification is still pending only while the task
	 * is alive in the call, so its exit, if any, comes after the arm and
	 * takes the entry; otherwise the entry is taken here.
	 */
	if (!notify_valid(s->listener, h->notif)) {
		net_exec_disarm(s->net, (uint32_t)h->pid);
		*why = "the task left the exec before it was answered";
		return -ESRCH;
	}
	/*
	 * Watched until the kernel has met it, killed it, or its thread has
	 * gone, one entry per thread (a new arm of the thread replaces its
	 * old one in the kernel too).  None is dropped while the kernel still
	 * holds it: a kill's mark that nobody collects stays in the map for
	 * good, and enough of them would refuse every session's execs.
	 */
	for (a = s->recheck.armed; a < s->recheck.armed + s->recheck.n && a->tid != h->pid; a++)
		;
	if (a == s->recheck.armed + s->recheck.n) {
		if (s->recheck.n == s->recheck.cap) {
			int cap = s->recheck.cap ? s->recheck.cap * 2 : 64;
			struct armed_exec *v = realloc(s->recheck.armed, (size_t)cap * sizeof(*v));

			if (!v) {
				net_exec_disarm(s->net, (uint32_t)h->pid);
				*why = "out of memory to watch the exec recheck (unknown means deny)";
				return -ENOMEM;
			}
			s->recheck.armed = v;
			s->recheck.cap = cap;
		}
		a = &s->recheck.armed[s->recheck.n++];
	}
	a->tid = h->pid;
	a->t_ms = mono_ms();
	if (comm)
		snprintf(a->comm, sizeof(a->comm), "%s", comm);
	else
		comm_of(h->pid, a->comm, sizeof(a->comm));
	snprintf(a->summary, sizeof(a->summary), "%s", h->summary);   /* shown text already */
	return 0;
}

/*
 * Record the execs the kernel killed for not being what was judged; forget
 * the ones it let run and those whose thread has gone (their expectation is
 * gone).  One that failed (ENOENT on a PATH search) waits, in the kernel and
 * here, for the thread's next exec or its exit.
 */
static void sweep_armed(struct sup *s)
{
	for (int i = 0; i < s->recheck.n;) {
		struct armed_exec *a = &s->recheck.armed[i];
		int r = net_exec_killed(s->net, (uint32_t)a->tid);

		if (r == 1) {
			json_t *raw = json_pack("{s:o}", "argv", pol_json_text(a->summary));

			record_as(s, a->tid, a->comm, "execve", raw, NULL, "deny", NULL,
				  "killed by the kernel at exec: the argv or binary it received is not "
				  "what was judged (rewritten after the check)", NULL);
			json_decref(raw);
		}
		if (r != 0) {
			memmove(a, a + 1, (size_t)(s->recheck.n - i - 1) * sizeof(*a));
			s->recheck.n--;
			continue;
		}
		i++;
	}
}

static int fd_path(pid_t pid, int fd, char *out, size_t len)
{
	char p[64];
	ssize_t n;

	if (fd == AT_FDCWD)
		snprintf(p, sizeof(p), "/proc/%d/cwd", (int)pid);
	else
		snprintf(p, sizeof(p), "/proc/%d/fd/%d", (int)pid, fd);
	n = readlink(p, out, len - 1);
	if (n < 0)
		return -errno;
	out[n] = '\0';
	return 0;
}

/* The identity of a request (supervisor.h: what "the same request" means). */
static int request_key(json_t *event, const char *binary, char key[65])
{
	json_t *id;
	int r;

	if (!binary)
		return pol_json_sha256(event, key, NULL);
	id = json_pack("{s:O,s:o}", "event", event, "binary", pol_json_text(binary));
	r = id ? pol_json_sha256(id, key, NULL) : -ENOMEM;
	json_decref(id);
	return r;
}

static bool key_in(char *const *v, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], key))
			return true;
	return false;
}

bool sup_human_denied(struct sup *s, json_t *event)
{
	char key[65];

	return s->ap.n_denied && pol_json_sha256(event, key, NULL) == 0 &&
	       key_in(s->ap.denied, s->ap.n_denied, key);
}

int sup_hold(struct sup *s, const struct held *h, json_t *event, json_t *kept, const char *binary,
	     const char *summary, const char *rule, const char *risk)
{
	struct pending *p;
	char key[65], deny_key[65];
	int n = 0;

	if (request_key(event, binary, key) < 0 || pol_json_sha256(event, deny_key, NULL) < 0)
		return -ENOMEM;
	for (p = s->ap.pending; p; p = p->next, n++)
		if (!strcmp(p->key, key) && p->n_held < (int)ARRAY_SIZE(p->held)) {
			p->held[p->n_held++] = *h;      /* batched with an identical request */
			return 0;
		}
	if (n >= SUP_MAX_PENDING)
		return -EAGAIN;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->id = ++s->ap.next_pending;
	memcpy(p->key, key, sizeof(key));
	memcpy(p->deny_key, deny_key, sizeof(deny_key));
	pol_printable(p->summary, sizeof(p->summary), summary);
	snprintf(p->rule, sizeof(p->rule), "%s", rule ?: "");
	snprintf(p->risk, sizeof(p->risk), "%s", risk);
	p->kept = json_incref(kept ?: event);
	p->held[p->n_held++] = *h;
	p->created_ms = mono_ms();
	p->deadline_ms = p->created_ms + (uint64_t)(s->pol->approval_timeout_s ?: 120) * 1000;
	p->next = s->ap.pending;
	s->ap.pending = p;
	approve_hold(s, p);
	return 0;
}

/* Why sup_hold refused, for the record. */
static void escalate(struct sup *s, const struct held *h, const char *raw_name, json_t *event,
		     json_t *kept, const char *binary, const char *summary,
		     const struct pol_result *res)
{
	char risk[512];
	int r;

	risk_of(res, risk, sizeof(risk));
	r = sup_hold(s, h, event, kept, binary, summary, rule_name(res), risk);
	if (r < 0) {
		(void)notify_return(s->listener, h->notif, 0, EPERM);
		sup_record(s, h->pid, raw_name, NULL, kept ?: event, "deny", rule_name(res),
			   sup_hold_error(r), NULL);
	}
}

bool sup_session_approved(struct sup *s, json_t *event, const char *binary)
{
	char key[65];

	return s->ap.n_approved && request_key(event, binary, key) == 0 &&
	       approve_session_allowed(s, key);
}

/* What a caller refused unasked is told (tell), and the human on cordon's terminal. */
#define REFUSED_AGAIN EXEC_REFUSED_AGAIN

static void tell_refused_again(struct sup *s, pid_t pid, const char *summary)
{
	char shown[512];

	pol_printable(shown, sizeof(shown), summary);
	if (pid == s->ap.told)
		return;         /* the same process again: its PATH search's next entry */
	s->ap.told = pid;
	tell(s->cgroup, pid, "cordon: refused: %s\ncordon: a human denied this request earlier in this "
		 "session; it is refused without asking again. Do not retry it or try another way "
		 "to do the same: ask the user.\n", shown);
	if (!s->opt->quiet)
		fprintf(stderr, "\r\ncordon: refused again, unasked (denied earlier): %s\r\n", shown);
}

static size_t argv_size(char *const *argv, size_t *argc);

/* The argv joined by spaces, whole (shown to humans through pol_printable); NULL: no memory. */
static char *summary_argv(char *const *argv)
{
	size_t n = argv_size(argv, NULL), o = 0;
	char *out = malloc(n + 1);

	if (!out)
		return NULL;
	for (int i = 0; argv && argv[i]; i++) {
		size_t l = strlen(argv[i]);

		if (i)
			out[o++] = ' ';
		memcpy(out + o, argv[i], l);
		o += l;
	}
	out[o] = '\0';
	return out;
}

/*
 * A path as the task means it: /proc/self, /proc/thread-self and /dev/fd
 * (and /dev/stdin, stdout, stderr) name the task's own process, not the
 * supervisor's, so they become /proc/TID/... before they are canonicalised
 * here (busybox sh runs its applets as /proc/self/exe; programs re-exec
 * themselves so).  Without this the binary judged was cordon's own, and
 * the exec recheck, comparing inodes, killed the exec.  What remains: a
 * symlink elsewhere that points into /proc/self is still resolved as the
 * supervisor; the recheck then kills the exec (fails closed).
 */
static int as_task(pid_t pid, const char *path, char *out, size_t len)
{
	static const struct {
		const char *from, *to;
	} own[] = {
		{ "/proc/self", "" }, { "/proc/thread-self", "" }, { "/dev/fd", "/fd" },
		{ "/dev/stdin", "/fd/0" }, { "/dev/stdout", "/fd/1" }, { "/dev/stderr", "/fd/2" },
	};
	int n;

	for (size_t i = 0; i < ARRAY_SIZE(own); i++) {
		size_t l = strlen(own[i].from);

		if (strncmp(path, own[i].from, l) || (path[l] && path[l] != '/'))
			continue;
		n = snprintf(out, len, "/proc/%d%s%s", (int)pid, own[i].to, path + l);
		return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
	}
	n = snprintf(out, len, "%s", path);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/*
 * An argv as the records keep it.  Attack: an agent that execs with
 * megabytes of arguments, again and again, fills the host's disk through
 * the audit log, and every subscriber's socket.  And no attack at all: a
 * Codex command is `bash -lc` with a 38 KB shell snapshot, kept whole
 * twice per record (raw and event), which spent a 1 GiB audit budget in
 * about 6,500 commands.  Up to RECORD_ARGV_BYTES the argv is kept whole;
 * past it, its first RECORD_ARGV_BYTES (the argument that crosses the
 * bound cut on a character), with the count, the size and the SHA-256 of
 * the whole argv (its strings, each with its NUL), so the record still
 * names exactly what was judged; the event keeps the digest only.  The
 * policy always judges the whole argv.  An exec record is then at most
 * about 6 KB of argv however large the command (tests/host/run_env.sh
 * measures 10,000 Codex-sized commands against the budget).
 */
#define RECORD_ARGV_BYTES (4u << 10)

static size_t argv_size(char *const *argv, size_t *argc)
{
	size_t n = 0, i = 0;

	for (; argv && argv[i]; i++)
		n += strlen(argv[i]) + 1;
	if (argc)
		*argc = i;
	return n;
}

/* The digest of a large argv: {argc, argv_bytes, argv_sha256}. */
static json_t *argv_digest(char *const *argv)
{
	unsigned char md[32];
	char hex[65];
	size_t argc, bytes = argv_size(argv, &argc);
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	bool ok = c && EVP_DigestInit_ex(c, EVP_sha256(), NULL) == 1;

	for (size_t i = 0; ok && i < argc; i++)
		ok = EVP_DigestUpdate(c, argv[i], strlen(argv[i]) + 1) == 1;
	ok = ok && EVP_DigestFinal_ex(c, md, NULL) == 1;
	EVP_MD_CTX_free(c);
	hex_encode(md, sizeof(md), hex);
	return json_pack("{s:I,s:I,s:s}", "argc", (json_int_t)argc, "argv_bytes", (json_int_t)bytes,
			 "argv_sha256", ok ? hex : "unavailable");
}

/*
 * What an exec's records keep: *raw its path and argv (for a large argv,
 * the first RECORD_ARGV_BYTES of it and its digest), *kept the event whole
 * or, for a large argv, its tool and the same digest (computed once).
 */
static void exec_records(const char *canon, char **argv, json_t *event, json_t **raw,
			 json_t **kept)
{
	json_t *av = json_array(), *d = NULL;
	size_t used = 0;
	bool whole = argv_size(argv, NULL) <= RECORD_ARGV_BYTES;

	*raw = json_pack("{s:o}", "path", pol_json_text(canon));
	for (int i = 0; argv && argv[i]; i++) {
		size_t l = strlen(argv[i]);

		if (!whole && used + l + 1 > RECORD_ARGV_BYTES) {
			size_t cut = RECORD_ARGV_BYTES - used;
			char *head;

			/* On a character: never inside a UTF-8 sequence. */
			while (cut > 0 && ((unsigned char)argv[i][cut] & 0xC0) == 0x80)
				cut--;
			head = strndup(argv[i], cut);
			if (head && cut)
				json_array_append_new(av, pol_json_text(head));
			free(head);
			break;
		}
		used += l + 1;
		json_array_append_new(av, pol_json_text(argv[i]));
	}
	json_object_set_new(*raw, "argv", av);
	if (whole) {
		*kept = json_incref(event);
		return;
	}
	d = argv_digest(argv);
	json_object_set_new(*raw, "argv_truncated", json_true());
	json_object_update(*raw, d);
	*kept = event ? json_pack("{s:O,s:O,s:O}", "server", json_object_get(event, "server"),
				  "tool", json_object_get(event, "tool"), "arguments", d) : NULL;
	json_object_set_new(json_object_get(*kept, "arguments"), "truncated", json_true());
	/* A push's destination is what the human approves, and what its grant names. */
	if (json_object_get(json_object_get(event, "arguments"), "destination"))
		json_object_set(json_object_get(*kept, "arguments"), "destination",
				json_object_get(json_object_get(event, "arguments"), "destination"));
	json_decref(d);
}

/*
 * CANON is not there, and the agent could learn that itself with stat(2):
 * every directory on the way that exists is searchable by its uid or
 * groups (mode bits; a root agent has no DAC override either).  Only then
 * is an exec or connect of it answered ENOENT unrecorded (below): beyond
 * a directory the agent may not search (/root), its answer would tell
 * what DAC hides, so such a call is judged and recorded as ever.
 */
static bool agent_sees_absent(const struct sup *s, const char *canon)
{
	char dir[PATH_MAX];
	struct stat st;
	char *slash;

	if (lstat(canon, &st) == 0 || (errno != ENOENT && errno != ENOTDIR))
		return false;
	snprintf(dir, sizeof(dir), "%s", canon);
	while ((slash = strrchr(dir, '/'))) {
		bool in_group = false;
		mode_t x;

		slash[slash == dir] = '\0';    /* "/a" -> "/" */
		if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) {
			for (int i = 0; i < s->n_groups && !in_group; i++)
				in_group = s->groups[i] == st.st_gid;
			in_group |= s->gid == st.st_gid;
			x = st.st_uid == s->uid ? S_IXUSR : in_group ? S_IXGRP : S_IXOTH;
			if (!(st.st_mode & x))
				return false;
		}
		if (!strcmp(dir, "/"))
			break;
	}
	return true;
}

/*
 * A held git push: where it goes, read as git would (push_grant.h), into
 * the event's "destination" (so the human approves a destination, and an
 * approval "for this session" holds for that destination only) and into
 * *shown, the summary's tail.  Unknown: said so in the event, and no grant
 * can follow (the push then reaches only what the floor allows).
 */
static void push_destination(struct sup *s, const struct notify_req *req, char **argv,
			     json_t *event, char **shown)
{
	uint64_t envp_addr = req->nr == SYS_execveat ? req->args[3] : req->args[2];
	_cleanup_free_ char **envp = NULL;
	const char *why = NULL;
	json_t *dest, *d;
	size_t i, o = 0, cap = 1024;
	char *out = malloc(cap);

	*shown = out;
	if (!out)
		return;
	out[0] = '\0';
	if (notify_read_argv(req->pid, envp_addr, MAX_ARGS, MAX_ARG_BYTES, &envp) < 0)
		envp = NULL;
	dest = push_dest_resolve(s, req->pid, argv, envp, event, &why);
	if (!dest) {
		/* In the event and its records; the summary stays the command's own. */
		json_object_set_new(json_object_get(event, "arguments"), "destination",
				    json_pack("{s:s}", "unknown", why ?: "?"));
		return;
	}
	json_array_foreach(dest, i, d)
		if (o < cap)
			o += (size_t)snprintf(out + o, cap - o, "%s%s", i ? ", " : " -> ",
					      json_string_value(json_object_get(d, "url")) ?: "?");
	json_object_set_new(json_object_get(event, "arguments"), "destination", dest);
}

/* The session's side of an exec's decision (exec_decide.h): what it asks, answered here. */
struct exec_io {
	struct sup *s;
	const struct notify_req *req;
	char **argv;
	struct held *h;
	bool at;
	int dirfd;
	const char *path, *canon;
	char **dest_shown;
};

static bool ask_session_approved(void *ctx, json_t *event, const char *binary)
{
	struct exec_io *io = ctx;

	return sup_session_approved(io->s, event, binary);
}

static bool ask_human_denied(void *ctx, json_t *event)
{
	struct exec_io *io = ctx;

	return sup_human_denied(io->s, event);
}

static void ask_destination(void *ctx, json_t *event)
{
	struct exec_io *io = ctx;

	push_destination(io->s, io->req, io->argv, event, io->dest_shown);
}

static int ask_expect(void *ctx)
{
	struct exec_io *io = ctx;

	return net_exec_expect(io->s->net, io->at, io->dirfd, io->path, io->argv, io->canon,
			       &io->h->exec);
}

static int ask_memory_shared(void *ctx)
{
	struct exec_io *io = ctx;

	return notify_memory_shared(io->req->pid, io->s->cgroup);
}

static bool ask_missing(void *ctx)
{
	struct exec_io *io = ctx;
	struct stat st;

	return stat(io->canon, &st) < 0 && errno == ENOENT;
}

static void handle_exec(struct sup *s, const struct notify_req *req)
{
	bool at = req->nr == SYS_execveat;
	int dirfd = at ? (int)req->args[0] : AT_FDCWD;
	uint64_t path_addr = at ? req->args[1] : req->args[0];
	uint64_t argv_addr = at ? req->args[2] : req->args[1];
	int flags = at ? (int)req->args[4] : 0;
	char path[PATH_MAX], base[PATH_MAX], canon[PATH_MAX], cwd[PATH_MAX];
	char comm[32];
	const char *why = NULL;
	_cleanup_free_ char **argv = NULL;
	_cleanup_free_ char *summary = NULL, *dest_shown = NULL;
	bool session_ok = false;
	struct exec_verdict v;
	struct pol_result res;
	struct held h = { .notif = req->id, .pid = req->pid, .nr = req->nr };
	json_t *raw = NULL, *event = NULL, *kept = NULL;
	bool path_read;
	int r;

	memcpy(h.args, req->args, sizeof(h.args));
	r = notify_read_string(req->pid, path_addr, path, sizeof(path));
	path_read = r == 0;
	if (r == 0)
		r = notify_read_argv(req->pid, argv_addr, MAX_ARGS, MAX_ARG_BYTES, &argv);
	if (r >= 0)
		r = fd_path(req->pid, AT_FDCWD, cwd, sizeof(cwd));
	if (r >= 0) {
		char own[PATH_MAX];

		if (at && (flags & AT_EMPTY_PATH) && !path[0])
			r = fd_path(req->pid, dirfd, canon, sizeof(canon));
		else if (path[0] == '/' && (r = as_task(req->pid, path, own, sizeof(own))) == 0)
			r = pol_canon_path(own, "/", canon, sizeof(canon));
		else if ((r = fd_path(req->pid, dirfd, base, sizeof(base))) == 0)
			r = pol_canon_path(path, base, canon, sizeof(canon));
	}
	if (r < 0) {
		/*
		 * Unreadable arguments: unknown means deny.  An argv past the
		 * kernel's own limit gets the kernel's answer, E2BIG.  Either
		 * way a record says so (with the path as the task gave it, if
		 * it could be read).
		 */
		if (!notify_valid(s->listener, req->id))
			return;
		(void)notify_return(s->listener, req->id, 0, r == -E2BIG ? E2BIG : EACCES);
		answered();
		raw = json_pack("{s:o*}", "path", path_read ? pol_json_text(path) : NULL);
		sup_record(s, req->pid, at ? "execveat" : "execve", raw, NULL, "deny", NULL,
			   r == -E2BIG ? "the arguments are more than an exec may carry (E2BIG)" :
			   r == -ENAMETOOLONG ? "the path is longer than PATH_MAX" :
			   "the path, the arguments or the working directory could not be read "
			   "(unknown means deny)", NULL);
		json_decref(raw);
		return;
	}
	if (!notify_valid(s->listener, req->id))
		return;
	step(s);
	/*
	 * No file there (in the session's view): answered as the kernel
	 * would (ENOENT), counted for the end record ("exec_absent"), not
	 * recorded one by one.  A PATH search tries each directory in turn
	 * (execvp, node's spawn), and each miss was a record.  Nothing ran
	 * and nothing was refused; a file that exists is judged and recorded
	 * as ever, and this answer, not a CONTINUE, keeps a file made after
	 * this look from running unjudged.
	 */
	if (agent_sees_absent(s, canon)) {
		(void)notify_return(s->listener, req->id, 0, ENOENT);
		answered();
		s->stats.n_exec_absent++;
		return;
	}
	comm_of(req->pid, comm, sizeof(comm));  /* the caller, before it becomes the program */
	summary = summary_argv(argv);
	pol_printable(h.summary, sizeof(h.summary), summary ? summary : "(no memory)");
	{
		struct exec_io io = { s, req, argv, &h, at, dirfd, path, canon, &dest_shown };
		struct exec_ask ask = { &io, ask_session_approved, ask_human_denied, ask_destination,
					ask_expect, ask_memory_shared, ask_missing };
		struct exec_case ec = { canon, argv, cwd, s->opt->approve != APPROVE_DENY,
					s->recheck.on };

		exec_decide(s->pol, &ec, &ask, &v);
	}
	res = v.res;
	event = v.event;
	why = v.why;
	session_ok = v.session_ok;
	if (v.refused_again)
		tell_refused_again(s, req->pid, h.summary);
	if (summary && dest_shown && dest_shown[0]) {
		char *both = NULL;

		if (asprintf(&both, "%s%s", summary, dest_shown) >= 0) {
			free(summary);
			summary = both;
		}
	}
	if (res.decision == CORDON_ALLOW && sup_exec_arm(s, &h, comm, &why) < 0)
		res.decision = CORDON_DENY;
	if (res.decision == CORDON_ESCALATE && s->opt->approve != APPROVE_DENY) {
		exec_records(canon, argv, event, &raw, &kept);
		sup_record(s, req->pid, at ? "execveat" : "execve", raw, kept, "escalate",
			   rule_name(&res), res.reason, NULL);
		escalate(s, &h, at ? "execveat" : "execve", event, kept, canon,
			 summary ? summary : "(no memory)", &res);
	} else {
		bool allow = res.decision == CORDON_ALLOW;

		/*
		 * Answer first, then write the record: the task does not wait
		 * for the audit (if the supervisor dies in between, the
		 * watchdog kills the session).  A missing binary is answered as
		 * the kernel would (ENOENT), so PATH searches go on and `env`
		 * semantics (127) hold; its absence is no secret (stat is not
		 * judged by any floor).
		 */
		if (v.missing) {
			(void)notify_return(s->listener, req->id, 0, ENOENT);
		} else {
			/* A push approved for this session: its destination, granted first. */
			if (allow && session_ok && push_event(event))
				push_grant(s, req->pid, event, "approved for this session");
			sup_apply(s, &h, allow, false, NULL);
		}
		answered();
		exec_records(canon, argv, event, &raw, &kept);
		record_as(s, req->pid, comm, at ? "execveat" : "execve", raw, kept,
			  allow ? "allow" : "deny", rule_name(&res),
			  why ? why : res.decision == CORDON_ESCALATE ?
			  "escalation with --approve deny" : res.reason, NULL);
	}
	json_decref(raw);
	json_decref(kept);
	json_decref(event);
}

/* --- connect -------------------------------------------------------------- */

/*
 * A pathname Unix socket in the fallback posture, where no LSM judges it by
 * object (Landlock has no hook for it): the supervisor judges the canonical
 * path (the write right, as the BPF LSM floor does on the socket inode) and
 * has the connect performed on a copy of the task's socket.  The
 * session may not name such a socket itself: the network floor's unix gate
 * refuses it in the kernel (bpf/net.bpf.c), so an address rewritten after
 * this check, and a datagram sent with a destination, never reach a path
 * unjudged.
 *
 * The connect is made by the session's Unix connector (unix_connector.h), a
 * process with the agent's whole identity (uid, gid and groups, no
 * capabilities) outside the session and outside the human's login session:
 * DAC applies as to the agent, and the listener's SO_PEERCRED and
 * SO_PEERPIDFD name a process of the agent, never root and never cordon (a
 * server that authorises by peer uid, such as the system bus, or resolves
 * the peer's login session from its pid, as polkit and logind do, must not
 * see the supervisor).  It passes the gate because it is not in the
 * session.  The socket's directory was opened here without following
 * symlinks; the connector opens the last component O_PATH without
 * following one, requires a socket, and connects through that descriptor
 * (/proc/self/fd/N), so it reaches the very inode checked, and a symlink
 * swapped in after the judgement is refused.  A worker thread waits for
 * its answer, so a listener with a full backlog holds only that connect.
 *
 * What remains: the pid the listener sees is the connector's, one for the
 * whole session, not that of the agent process that asked; a socket
 * renamed into the judged path by a task that may write that directory is
 * the object at that path, which the rule allowed.
 */
struct unix_emul {
	struct sup *s;
	struct held h;
	int sock;
	int dirfd;
	char name[108];
	char dir[PATH_MAX];             /* the directory judged, which dirfd is */
};

static void *unix_worker(void *arg)
{
	struct unix_emul *e = arg;
	int err = unix_connector_connect(e->s, e->sock, e->dirfd, e->dir, e->name);

	(void)notify_return(e->s->listener, e->h.notif, 0, err);
	close(e->sock);
	close(e->dirfd);
	free(e);
	return NULL;
}

static int emulate_unix(struct sup *s, const struct held *h, const char *canon)
{
	struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	const char *slash = strrchr(canon, '/');
	char dir[PATH_MAX];
	struct unix_emul *e;

	if (!slash || strlen(slash + 1) >= sizeof(e->name) || !slash[1])
		return -ENAMETOOLONG;
	/* Here, on the main thread: the connector dies with the thread that started it. */
	if (unix_connector_start(s) < 0)
		return -ECONNREFUSED;
	snprintf(dir, sizeof(dir), "%.*s", slash == canon ? 1 : (int)(slash - canon), canon);
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->s = s;
	e->h = *h;
	snprintf(e->name, sizeof(e->name), "%s", slash + 1);
	snprintf(e->dir, sizeof(e->dir), "%s", dir);
	e->dirfd = (int)syscall(SYS_openat2, AT_FDCWD, dir, &how, sizeof(how));
	e->sock = e->dirfd < 0 ? -1 : notify_getfd(h->pid, (int)h->args[0]);
	if (e->dirfd < 0 || e->sock < 0 || !notify_valid(s->listener, h->notif)) {
		int r = e->dirfd < 0 ? -errno : e->sock < 0 ? e->sock : -ESRCH;

		if (e->dirfd >= 0)
			close(e->dirfd);
		if (e->sock >= 0)
			close(e->sock);
		free(e);
		return r;
	}
	if (spawn_detached(unix_worker, e) < 0) {
		close(e->dirfd);
		close(e->sock);
		free(e);
		return -EAGAIN;
	}
	return 0;
}

static void handle_unix(struct sup *s, const struct notify_req *req, struct held *h,
			const struct sockaddr_storage *ss, uint32_t len)
{
	const struct sockaddr_un *un = (const struct sockaddr_un *)ss;
	size_t plen = len > offsetof(struct sockaddr_un, sun_path) ?
		      len - offsetof(struct sockaddr_un, sun_path) : 0;
	char name[sizeof(un->sun_path) + 2], cwd[PATH_MAX], canon[PATH_MAX];
	struct pol_request pr = { .op = POL_OP_WRITE };
	struct pol_result res = { .decision = CORDON_ALLOW };
	const char *why = "judged by the kernel floor";
	bool abstract = plen && un->sun_path[0] == '\0';
	json_t *raw, *event;
	int r;

	if (abstract)
		snprintf(name, sizeof(name), "@%.*s", (int)(plen - 1), un->sun_path + 1);
	else
		snprintf(name, sizeof(name), "%.*s", (int)strnlen(un->sun_path, plen), un->sun_path);
	if (!notify_valid(s->listener, req->id))
		return;
	step(s);
	event = pol_event_unix(name, abstract);
	raw = json_pack("{s:i,s:o}", "fd", (int)req->args[0], "unix", pol_json_text(name));
	/*
	 * A socket that is not there, in the session's view, is answered as
	 * the kernel would answer (ENOENT) and counted for the end record
	 * ("unix_absent"), not recorded one by one.  Why: glibc asks nscd at
	 * /run/nscd/socket for every user and group lookup, so each `ls`,
	 * `git` and `id` left two denials.  Nothing is hidden: no object was
	 * refused (the path names none, and the agent could stat it: see
	 * agent_sees_absent), and a socket that exists is judged and
	 * recorded as ever.  In the full posture too: answered here, not
	 * continued, so a socket made after this look is not reached unseen.
	 */
	if (!abstract && name[0]) {
		r = fd_path(req->pid, AT_FDCWD, cwd, sizeof(cwd));
		r = r ?: pol_canon_path(name, cwd, canon, sizeof(canon));
		if (r == 0 && agent_sees_absent(s, canon)) {
			(void)notify_return(s->listener, req->id, 0, ENOENT);
			s->stats.n_unix_absent++;
			goto out;
		}
	}
	if (s->floor || abstract || !name[0]) {
		/*
		 * BPF LSM judges pathname sockets by object; abstract sockets
		 * are refused outside the session by the LSM floor or Landlock
		 * scoping (ABI >= 6; the posture lists it missing below that).
		 * In the fallback the address is CONTINUEd as read here only
		 * because the unix gate refuses it in the kernel should another
		 * thread have made it a path since (without the gate, Linux <
		 * 6.7, the posture lists unix-gate missing).
		 */
		sup_record(s, req->pid, "connect", raw, event, "allow", NULL, why, NULL);
		(void)notify_continue(s->listener, req->id);
		goto out;
	}
	r = fd_path(req->pid, AT_FDCWD, cwd, sizeof(cwd));
	r = r ?: pol_canon_path(name, cwd, canon, sizeof(canon));
	if (r < 0) {
		sup_record(s, req->pid, "connect", raw, event, "deny", NULL,
			   "the socket path cannot be resolved", NULL);
		(void)notify_return(s->listener, req->id, 0, r == -ENAMETOOLONG ? ENAMETOOLONG : EACCES);
		goto out;
	}
	json_object_set_new(json_object_get(event, "arguments"), "path", pol_json_text(canon));
	pr.path = canon;
	pol_eval(s->pol, &pr, &res);
	if (res.decision != CORDON_ALLOW) {
		sup_record(s, req->pid, "connect", raw, event, "deny", rule_name(&res), res.reason, NULL);
		(void)notify_return(s->listener, req->id, 0, EACCES);
		goto out;
	}
	sup_record(s, req->pid, "connect", raw, event, "allow", rule_name(&res),
		   "emulated by the supervisor (the fallback has no kernel check)", NULL);
	r = emulate_unix(s, h, canon);
	if (r < 0)
		(void)notify_return(s->listener, req->id, 0, r == -ESRCH ? EPERM : -r);
out:
	json_decref(raw);
	json_decref(event);
}

static void handle_connect(struct sup *s, const struct notify_req *req)
{
	struct held h = { .notif = req->id, .pid = req->pid, .nr = req->nr };
	struct sockaddr_storage ss;
	char host[INET6_ADDRSTRLEN], summary[600];
	uint32_t len = (uint32_t)req->args[2];
	struct pol_request pr = { .op = POL_OP_CONNECT };
	struct pol_result res;
	json_t *raw, *event;
	ssize_t n;
	uint16_t port = 0;

	memcpy(h.args, req->args, sizeof(h.args));
	if (len > sizeof(h.addr))
		len = sizeof(h.addr);
	memset(&ss, 0, sizeof(ss));
	n = len ? notify_read(req->pid, req->args[1], &ss, len) : 0;
	if (n < 0 || (uint32_t)n != len || len < sizeof(sa_family_t)) {
		/* Unreadable or too short: unknown means deny (the kernel would
		 * also refuse a bad pointer or length). */
		raw = json_pack("{s:i,s:I,s:i}", "fd", (int)req->args[0], "read", (json_int_t)n,
				"len", (int)len);
		sup_record(s, req->pid, "connect", raw, NULL, "deny", NULL,
			   "the address cannot be read from the task", NULL);
		json_decref(raw);
		(void)notify_return(s->listener, req->id, 0, len < sizeof(sa_family_t) ? EINVAL : EFAULT);
		return;
	}
	memcpy(h.addr, &ss, len);
	h.addrlen = len;
	if (ss.ss_family == AF_UNIX) {
		handle_unix(s, req, &h, &ss, len);
		return;
	}
	if (ss.ss_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		port = ntohs(in->sin_port);
	} else if ((ss.ss_family == AF_INET && len < sizeof(struct sockaddr_in)) ||
		   (ss.ss_family == AF_INET6 && len < 24)) {
		/* Shorter than the kernel takes (EINVAL there too): no record, nothing done. */
		(void)notify_return(s->listener, req->id, 0, EINVAL);
		return;
	} else if (ss.ss_family == AF_INET6) {
		/*
		 * The kernel takes 24 bytes (RFC 2133's sockaddr_in6, without
		 * sin6_scope_id): judged as IPv6 like the full 28 (such a
		 * connect went on unjudged and unrecorded, as a short address).
		 */
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

		/* A v4-mapped address is the IPv4 address: judge it as such. */
		if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr))
			inet_ntop(AF_INET, &in6->sin6_addr.s6_addr[12], host, sizeof(host));
		else
			inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		port = ntohs(in6->sin6_port);
	} else {
		/*
		 * AF_UNSPEC (dissolve a UDP association) and other families.
		 * Rewritten to a Unix path by another thread before the kernel
		 * copies it: in the fallback the unix gate refuses it there.
		 */
		(void)notify_continue(s->listener, req->id);
		return;
	}
	if (!notify_valid(s->listener, req->id))
		return;
	step(s);
	pr.host = host;
	pr.port = port;
	pol_eval_event(s->pol, &pr, &res, &event);
	raw = json_pack("{s:i,s:s,s:i}", "fd", (int)req->args[0], "addr", host, "port", port);
	snprintf(summary, sizeof(summary), "connect to %s%s%s port %u",
		 strchr(host, ':') ? "[" : "", host, strchr(host, ':') ? "]" : "", port);
	if (res.decision == CORDON_ESCALATE && sup_session_approved(s, event, NULL)) {
		sup_record(s, req->pid, "connect", raw, event, "allow", rule_name(&res),
			   "approved for this session", NULL);
		sup_apply(s, &h, true, true, NULL);
	} else if (res.decision == CORDON_ESCALATE && sup_human_denied(s, event)) {
		tell_refused_again(s, req->pid, summary);
		sup_apply(s, &h, false, false, REFUSED_AGAIN);
		sup_record(s, req->pid, "connect", raw, event, "deny", rule_name(&res), REFUSED_AGAIN,
			   NULL);
	} else if (res.decision == CORDON_ESCALATE && s->opt->approve != APPROVE_DENY) {
		sup_record(s, req->pid, "connect", raw, event, "escalate", rule_name(&res),
			   res.reason, NULL);
		escalate(s, &h, "connect", event, NULL, NULL, summary, &res);
	} else {
		bool allow = res.decision == CORDON_ALLOW;

		char comm[32];

		comm_of(req->pid, comm, sizeof(comm));
		sup_apply(s, &h, allow, false, NULL);   /* answer first, as for exec */
		answered();
		record_as(s, req->pid, comm, "connect", raw, event, allow ? "allow" : "deny",
			   rule_name(&res), res.decision == CORDON_ESCALATE ?
			   "escalation with --approve deny" : res.reason, NULL);
	}
	json_decref(raw);
	json_decref(event);
}

/* --- open (only when the policy escalates file access) ------------------- */

static void handle_open(struct sup *s, const struct notify_req *req)
{
	struct held h = { .notif = req->id, .pid = req->pid, .nr = req->nr };
	char path[PATH_MAX], base[PATH_MAX], joined[PATH_MAX], own[PATH_MAX];
	char summary[PATH_MAX + 64];
	struct pol_request pr = { 0 };
	struct pol_result res, res2;
	uint64_t path_addr;
	const char *verb;
	int dirfd = AT_FDCWD, flags, acc, r;
	unsigned mode = 0;
	json_t *raw, *event;
	struct stat st;

	memcpy(h.args, req->args, sizeof(h.args));
	if (req->nr == SYS_open || req->nr == SYS_creat) {
		path_addr = req->args[0];
		flags = req->nr == SYS_creat ? O_CREAT | O_WRONLY | O_TRUNC : (int)req->args[1];
		mode = (unsigned)(req->nr == SYS_creat ? req->args[1] : req->args[2]);
	} else if (req->nr == SYS_openat) {
		dirfd = (int)req->args[0];
		path_addr = req->args[1];
		flags = (int)req->args[2];
		mode = (unsigned)req->args[3];
	} else {                /* openat2: struct open_how */
		struct open_how how = { 0 };

		dirfd = (int)req->args[0];
		path_addr = req->args[1];
		if (req->args[3] < sizeof(how) ||
		    notify_read(req->pid, req->args[2], &how, sizeof(how)) != sizeof(how)) {
			(void)notify_return(s->listener, req->id, 0, EFAULT);
			return;
		}
		/* RESOLVE_* restrictions only narrow: judging the plain path is safe. */
		flags = (int)how.flags;
		mode = (unsigned)how.mode;
	}
	/*
	 * The path as the task names it: /proc/self, /dev/fd and /dev/std*
	 * are the task's own, not this process's (canonicalised here they
	 * would have named the supervisor's terminal or files, which an
	 * approval would then have opened for the agent).
	 */
	r = notify_read_string(req->pid, path_addr, path, sizeof(path));
	if (r == 0 && path[0] != '/') {
		if ((r = fd_path(req->pid, dirfd, base, sizeof(base))) == 0 &&
		    (size_t)snprintf(joined, sizeof(joined), "%s/%s", base, path) >= sizeof(joined))
			r = -ENAMETOOLONG;
	} else if (r == 0) {
		snprintf(joined, sizeof(joined), "%s", path);
	}
	if (r == 0 && (r = as_task(req->pid, joined, own, sizeof(own))) == 0)
		r = pol_canon_path(own, "/", h.path, sizeof(h.path));
	if (r < 0) {
		if (notify_valid(s->listener, req->id))
			(void)notify_return(s->listener, req->id, 0, r == -ENAMETOOLONG ? ENAMETOOLONG : EFAULT);
		return;
	}
	acc = flags & O_ACCMODE;
	pr.path = h.path;
	pr.op = (flags & O_CREAT) && stat(h.path, &st) < 0 ? POL_OP_CREATE :
		acc == O_RDONLY && !(flags & O_TRUNC) ? POL_OP_READ : POL_OP_WRITE;
	pol_eval(s->pol, &pr, &res);
	if (acc == O_RDWR && pr.op != POL_OP_READ) {
		pr.op = POL_OP_READ;
		pol_eval(s->pol, &pr, &res2);
		if (res2.decision > res.decision)
			res = res2;
	}
	/*
	 * Anything but an escalation is the floor's to judge: CONTINUE, and
	 * the kernel (BPF LSM file_open or Landlock) decides on the object it
	 * actually opens, whatever the memory says by then.
	 */
	if (res.decision != CORDON_ESCALATE) {
		(void)notify_continue(s->listener, req->id);
		return;
	}
	if (!notify_valid(s->listener, req->id))
		return;
	step(s);
	h.oflags = flags;
	h.omode = mode;
	/*
	 * What the human is asked is what the open does: O_TRUNC empties the
	 * file and O_CREAT makes one even when opened read-only (shown as a
	 * read, an approval had truncated the file).
	 */
	verb = pr.op == POL_OP_READ ? "read" : acc == O_RDWR ? "read-write" :
	       (flags & O_TRUNC) ? "truncate" : pr.op == POL_OP_CREATE ? "create" : "write";
	event = pol_event_fs(pr.op == POL_OP_READ ? "read_file" : "write_file", h.path, verb);
	raw = json_pack("{s:o,s:i}", "path", pol_json_text(path), "flags", flags);
	snprintf(summary, sizeof(summary), "%s %s", verb, h.path);
	/*
	 * Kernel interfaces and devices are never opened on the agent's
	 * behalf: the open below runs outside the floor (its hardening rules,
	 * such as no /proc/PID/mem of tasks outside the session, are not
	 * asked), so an approval of "/proc/1234/mem" or a terminal would hand
	 * out what the floor exists to keep.
	 */
	if (pol_path_within(h.path, "/proc") || pol_path_within(h.path, "/sys") ||
	    pol_path_within(h.path, "/dev")) {
		sup_record(s, req->pid, "open", raw, event, "deny", rule_name(&res),
			   "cordon does not open /proc, /sys or /dev files on the agent's behalf", NULL);
		(void)notify_return(s->listener, req->id, 0, EACCES);
	} else if (sup_human_denied(s, event)) {
		tell_refused_again(s, req->pid, summary);
		sup_record(s, req->pid, "open", raw, event, "deny", rule_name(&res), REFUSED_AGAIN, NULL);
		(void)notify_return(s->listener, req->id, 0, EACCES);
	} else if (sup_session_approved(s, event, NULL)) {
		sup_record(s, req->pid, "open", raw, event, "allow", rule_name(&res),
			   "approved for this session", NULL);
		sup_apply(s, &h, true, true, NULL);
	} else if (s->opt->approve != APPROVE_DENY) {
		sup_record(s, req->pid, "open", raw, event, "escalate", rule_name(&res), res.reason, NULL);
		escalate(s, &h, "open", event, NULL, NULL, summary, &res);
	} else {
		sup_record(s, req->pid, "open", raw, event, "deny", rule_name(&res),
			   "escalation with --approve deny", NULL);
		(void)notify_return(s->listener, req->id, 0, EACCES);
	}
	json_decref(raw);
	json_decref(event);
}

static uint32_t since_us(const struct timespec *a)
{
	struct timespec b = t_answer;

	if (b.tv_sec < a->tv_sec || (b.tv_sec == a->tv_sec && b.tv_nsec < a->tv_nsec))
		clock_gettime(CLOCK_MONOTONIC, &b);     /* not answered here (held, or a worker) */
	return (uint32_t)((b.tv_sec - a->tv_sec) * 1000000 + (b.tv_nsec - a->tv_nsec) / 1000);
}

static void handle_notification(struct sup *s)
{
	struct notify_req req;
	struct timespec t0;

	if (notify_receive(s->listener, &req) < 0)
		return;         /* the task died before we read it */
	if (__atomic_load_n(&s->audit_err, __ATOMIC_ACQUIRE) ||
	    __atomic_load_n(&s->audit_full, __ATOMIC_ACQUIRE)) {
		/* Nothing more can be recorded: nothing more is allowed (sup_audit_check). */
		(void)notify_return(s->listener, req.id, 0, EPERM);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (req.nr == SYS_execve || req.nr == SYS_execveat) {
		handle_exec(s, &req);
		s->stats.lat_exec[s->stats.n_exec++ % ARRAY_SIZE(s->stats.lat_exec)] = since_us(&t0);
	} else if (req.nr == SYS_connect) {
		handle_connect(s, &req);
		s->stats.lat_connect[s->stats.n_connect++ % ARRAY_SIZE(s->stats.lat_connect)] = since_us(&t0);
	}
	else if (req.nr == SYS_open || req.nr == SYS_openat || req.nr == SYS_openat2 ||
		 req.nr == SYS_creat)
		handle_open(s, &req);
	else
		(void)notify_return(s->listener, req.id, 0, ENOSYS);
}

/* --- the floor's events --------------------------------------------------- */

static int on_floor_event(void *ctx, const struct cordon_event *e)
{
	struct sup *s = ctx;
	char path[CORDON_EVENT_PATH + 64];
	const char *tool = NULL;
	json_t *raw, *event;

	floor_event_path(e, path, sizeof(path));
	switch (e->op) {
	case CORDON_OP_OPEN_WRITE:
	case CORDON_OP_CREATE:
	case CORDON_OP_MKDIR:
	case CORDON_OP_SYMLINK:
	case CORDON_OP_TRUNCATE:
	case CORDON_OP_RENAME:
	case CORDON_OP_LINK:
	case CORDON_OP_CHMOD:
	case CORDON_OP_CHOWN:
		tool = "write_file";
		break;
	case CORDON_OP_UNLINK:
	case CORDON_OP_RMDIR:
		tool = "delete";
		break;
	default:
		break;
	}
	if (tool && e->decision == CORDON_ALLOW)
		step(s);
	raw = json_pack("{s:s,s:o,s:i}", "op", floor_op_name(e->op), "path", pol_json_text(path),
			"err", e->err);
	event = tool ? pol_event_fs(tool, path, NULL) : pol_event_kernel(floor_op_name(e->op), path);
	sup_record(s, (pid_t)e->pid, "floor", raw, event,
		   e->decision == CORDON_ALLOW ? "allow" : "deny",
		   NULL, floor_reason_name(e->reason), NULL);
	json_decref(raw);
	json_decref(event);
	return 0;
}

/*
 * Kernel events lost: the session's ring buffer (CORDON_SESSION_RINGBUF) was
 * full, so the floor decided, and enforced, without an itemised record.
 * Attack: an agent floods operations the floor refuses faster than the
 * supervisor drains them (or while it is slow), to bury one among them.  The
 * kernel counts every loss per session (event_start in bpf/common.bpf.h);
 * the log says how many were lost, as soon as it is seen, and the end
 * record says how many in all.  It cannot say what they were.
 */
static void drops_seen(struct sup *s, const char *ring, uint64_t d, uint64_t *seen)
{
	json_t *ev;

	if (d <= *seen)
		return;
	ev = json_pack("{s:s,s:s,s:I,s:I}", "event", "floor-events-dropped", "ring", ring,
		       "dropped", (json_int_t)(d - *seen), "total", (json_int_t)d);
	*seen = d;
	pthread_mutex_lock(&s->lock);
	(void)audit_write(s->audit, "lifecycle", ev);
	sup_audit_check(s);
	pthread_mutex_unlock(&s->lock);
	json_decref(ev);
}

static void floor_drops(struct sup *s)
{
	uint64_t d;

	if (s->fsess && floor_session_drops(s->floor, s->fsess, &d) == 0)
		drops_seen(s, "lsm", d, &s->floor_dropped);
}

/*
 * The network floor's events (bpf/net.bpf.c), from the session's own ring:
 * every refusal by cgroup-bpf.  Most of them the supervisor never saw: a
 * datagram's destination (sendto, sendmsg, sendmmsg), a raw, packet or
 * other socket kind, a bind to a non-loopback address, a pathname Unix
 * socket named outside the supervisor's emulation, a connect whose address
 * the agent rewrote after the supervisor read it.  Attack closed: an agent
 * that probes for a way out (DNS to a resolver of its own, raw sockets)
 * leaves no trace in the log although every probe was refused.  Recorded as
 * the kernel's decisions (server "kernel", the operation, the destination as
 * the kernel judged it), not judged again: the floor has already enforced.
 * What it cannot say: events the ring could not hold (net_drops, counted),
 * and a process's comm is its own to choose (it is what the kernel saw).
 */
static int on_net_event(void *ctx, const struct cordon_net_event *e)
{
	struct sup *s = ctx;
	char obj[CORDON_NET_UNIX_PATH + 64], comm[CORDON_COMM_LEN + 1];
	const char *op = net_op_name(e->op), *rule = NULL;
	json_t *raw, *event;

	net_event_str(e, obj, sizeof(obj));
	snprintf(comm, sizeof(comm), "%.*s", (int)strnlen(e->comm, sizeof(e->comm)), e->comm);
	if (e->reason == CORDON_NET_REASON_RULE && e->rule_id < s->pol->n_rules)
		rule = s->pol->rules[e->rule_id].name;
	else if (e->reason == CORDON_NET_REASON_CORDON)
		rule = "cordon";
	raw = json_pack("{s:s,s:o,s:i}", "op", op, "object", pol_json_text(obj), "uid", (int)e->uid);
	event = pol_event_kernel(op, obj);
	record_as(s, (pid_t)e->pid, comm, "net-floor", raw, event,
		  e->decision == CORDON_ALLOW ? "allow" : "deny", rule,
		  net_reason_name(e->reason), NULL);
	json_decref(raw);
	json_decref(event);
	return 0;
}

/* Network floor events lost: as floor_drops, for the session's net ring. */
static void net_drops(struct sup *s)
{
	uint64_t d;

	if (s->nring && net_ring_drops(s->nring, &d) == 0)
		drops_seen(s, "net", d, &s->net_dropped);
}

static void drain_net(struct sup *s)
{
	(void)net_ring_poll(s->nring, 0, on_net_event, s);
	net_drops(s);
}

/* --- terminal relay ------------------------------------------------------- */

/*
 * The agent's output to cordon's terminal goes through tty_out_filter (what
 * only draws passes; its reporting modes are tracked), and the terminal's
 * input to the agent through the key parser, so that the parser knows
 * where a report stands when a prompt begins (tty_guard.c).
 */
static void relay(struct sup *s, int from, int to)
{
	char in[4096], filtered[TTY_OUT_MAX(sizeof(in))];
	const char *buf = in;
	ssize_t n = read(from, in, sizeof(in));

	if (n <= 0)
		return;
	if (from == s->term.pty_master) {
		n = (ssize_t)tty_out_filter(&s->term.out, in, (size_t)n, filtered);
		buf = filtered;
	} else {
		for (ssize_t i = 0; i < n; i++)
			(void)tty_keys_feed(&s->term.keys, (unsigned char)in[i]);
	}
	for (ssize_t off = 0; off < n;) {
		ssize_t w = write(to, buf + off, (size_t)(n - off));

		if (w < 0 && errno != EINTR)
			break;
		if (w > 0)
			off += w;
	}
}

/* --- the loop ------------------------------------------------------------- */

static void accept_events(struct sup *s)
{
	int c = accept4(s->ap.events_sock, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (c < 0)
		return;
	/* Subscribers: root or the invoking user, never a task of any session. */
	if (s->ap.n_clients == (int)ARRAY_SIZE(s->ap.clients) || !host_operator(c, s->invoker, NULL, 0)) {
		close(c);
		return;
	}
	s->ap.clients[s->ap.n_clients++] = c;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static json_t *lat_json(const uint32_t *v, uint64_t n, size_t cap)
{
	size_t k = n < cap ? (size_t)n : cap;
	uint32_t *c;
	json_t *o;

	if (!k)
		return json_pack("{s:I}", "count", (json_int_t)n);
	c = malloc(k * sizeof(*c));
	if (!c)
		return json_null();
	memcpy(c, v, k * sizeof(*c));
	qsort(c, k, sizeof(*c), cmp_u32);
	o = json_pack("{s:I,s:i,s:i}", "count", (json_int_t)n, "median_us", (int)c[k / 2],
		      "p99_us", (int)c[(k * 99) / 100]);
	free(c);
	return o;
}

json_t *sup_stats(const struct sup *s)
{
	return json_pack("{s:o,s:o}", "exec", lat_json(s->stats.lat_exec, s->stats.n_exec, ARRAY_SIZE(s->stats.lat_exec)),
			 "connect", lat_json(s->stats.lat_connect, s->stats.n_connect, ARRAY_SIZE(s->stats.lat_connect)));
}

/*
 * Attack closed: a stop signal reached only the agent's top process, so a
 * wrapper that handled it (or a child it left behind) kept the session
 * alive after the human asked it to end.  Every process of the session
 * gets the signal (to clean up), and whatever is left at the grace's end
 * is killed with the cgroup, which nothing inside can leave.
 */
void sup_stop(struct sup *s, int sig, const char *by)
{
	if (s->stop_sig) {
		/* A second stop: no more grace. */
		if (!s->stop_killed)
			s->stop_at = mono_ms();
		return;
	}
	s->stop_sig = sig;
	s->stop_at = mono_ms() + STOP_GRACE_MS;
	snprintf(s->stop_by, sizeof(s->stop_by), "%s", by);
	if (!s->opt->quiet)
		fprintf(stderr, "\r\ncordon: stopping session %s (%s); killed in %d s if still "
			"running\r\n", s->name, by, STOP_GRACE_MS / 1000);
	(void)kill(s->agent, sig);      /* cordon-init: to its whole namespace */
}

static void stop_tick(struct sup *s, uint64_t now)
{
	if (!s->stop_sig || s->stop_killed || now < s->stop_at)
		return;
	s->stop_killed = true;
	(void)cg_destroy(s->cgroup);
}

/*
 * cordon-init says the agent's job stopped (Ctrl-Z): cordon stops too, as
 * any program stopped at its shell's prompt, and at `fg` the job goes on.
 * Without a terminal of the human's there is no shell to go back to: the
 * job is continued at once (the agent stopped itself; nobody could resume
 * it).  Whatever else the session runs is not stopped, and what it asks
 * for waits for the human as before.
 */
static void init_input(struct sup *s)
{
	char buf[16];
	ssize_t n = read(s->init_chan, buf, sizeof(buf));

	if (n <= 0) {
		if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
			close(s->init_chan);
			s->init_chan = -1;
		}
		return;
	}
	if (!memchr(buf, 'T', (size_t)n))
		return;
	if (s->term.suspend)
		s->term.suspend(s);
	(void)kill(s->agent, SIGCONT);  /* cordon-init: to the agent's job */
}

const struct sup_ops sup_ops = {
	.record = sup_record,
	.audit_check = sup_audit_check,
	.hold = sup_hold,
	.session_approved = sup_session_approved,
	.human_denied = sup_human_denied,
	.apply = sup_apply,
	.exec_arm = sup_exec_arm,
	.stop = sup_stop,
	.withdraw = approve_withdraw,
	.withdraw_all = approve_withdraw_all,
};

int sup_loop(struct sup *s, int *status)
{
	sigset_t mask;
	int sfd, ffd = -1, nfd = -1, bfd;
	bool agent_done = false;
	uint64_t wall = s->pol->budgets.wall_time_s * 1000;
	uint64_t last_budget = 0;
	bool audit_stop = false;        /* stop_reason is the log's, said by its own record */

	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGQUIT);
	sigaddset(&mask, SIGWINCH);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0)
		return -errno;
	if (s->fsess)
		ffd = floor_session_fd(s->fsess);
	if (s->nring)
		nfd = net_ring_fd(s->nring);
	bfd = budget_pollfd(s->budget);
	/* The agent is forked (a raw clone3, see run.c): threads may start now. */
	audit_sync_key_start(s->audit);
	{
		json_t *ev = json_pack("{s:s,s:i}", "event", "agent-started", "pid", (int)s->agent);

		pthread_mutex_lock(&s->lock);
		(void)audit_write(s->audit, "lifecycle", ev);
		sup_audit_check(s);
		pthread_mutex_unlock(&s->lock);
		json_decref(ev);
	}
	while (!agent_done) {
		struct pollfd p[12];
		int n = 0, i_listen, i_sig, i_appr = -1, i_ev = -1, i_pty = -1, i_tty = -1, i_init = -1,
		    i_floor = -1, i_net = -1, i_budget = -1, i_mcp = -1, i_http = -1,
		    timeout = 1000;
		uint64_t now = mono_ms();

		for (struct pending *q = s->ap.pending; q; q = q->next) {
			int left = q->deadline_ms > now ? (int)(q->deadline_ms - now) : 0;

			if (left < timeout)
				timeout = left;
		}
		if (s->recheck.n && timeout > 50)
			timeout = 50;   /* a killed exec is recorded promptly */
		if (s->stop_sig && !s->stop_killed)
			timeout = s->stop_at <= now ? 0 : s->stop_at - now < (uint64_t)timeout ?
				  (int)(s->stop_at - now) : timeout;
		p[i_listen = n++] = (struct pollfd){ .fd = s->listener, .events = POLLIN };
		p[i_sig = n++] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		if (s->ap.approve_sock >= 0)
			p[i_appr = n++] = (struct pollfd){ .fd = s->ap.approve_sock, .events = POLLIN };
		if (s->ap.events_sock >= 0)
			p[i_ev = n++] = (struct pollfd){ .fd = s->ap.events_sock, .events = POLLIN };
		/* While a prompt is up the agent's output waits (tty_guard.c). */
		if (s->term.pty_master >= 0 && !s->ap.prompt_active)
			p[i_pty = n++] = (struct pollfd){ .fd = s->term.pty_master, .events = POLLIN };
		if (s->term.tty_fd >= 0)
			p[i_tty = n++] = (struct pollfd){ .fd = s->term.tty_fd, .events = POLLIN };
		if (ffd >= 0)
			p[i_floor = n++] = (struct pollfd){ .fd = ffd, .events = POLLIN };
		if (nfd >= 0)
			p[i_net = n++] = (struct pollfd){ .fd = nfd, .events = POLLIN };
		if (bfd >= 0)
			p[i_budget = n++] = (struct pollfd){ .fd = bfd, .events = POLLIN };
		if (s->mcp.chan >= 0)
			p[i_mcp = n++] = (struct pollfd){ .fd = s->mcp.chan, .events = POLLIN };
		if (s->egress.chan >= 0)
			p[i_http = n++] = (struct pollfd){ .fd = s->egress.chan, .events = POLLIN };
		if (s->init_chan >= 0)
			p[i_init = n++] = (struct pollfd){ .fd = s->init_chan, .events = POLLIN };
		if (poll(p, (nfds_t)n, timeout) < 0 && errno != EINTR)
			return -errno;
		if (p[i_listen].revents & POLLIN)
			handle_notification(s);
		if (i_floor >= 0 && (p[i_floor].revents & POLLIN)) {
			(void)floor_session_poll(s->fsess, 0, on_floor_event, s);
			floor_drops(s);
		}
		if (i_net >= 0 && (p[i_net].revents & POLLIN))
			drain_net(s);
		if (i_appr >= 0 && (p[i_appr].revents & POLLIN))
			approve_accept(s);
		if (i_mcp >= 0 && p[i_mcp].revents)
			helper_input(s, &s->mcp);
		if (i_http >= 0 && p[i_http].revents)
			helper_input(s, &s->egress);
		/* A helper refuses the call that spends the budget; the session stops here. */
		sup_steps_check(s);
		if (i_ev >= 0 && (p[i_ev].revents & POLLIN))
			accept_events(s);
		if (i_pty >= 0 && (p[i_pty].revents & (POLLIN | POLLHUP))) {
			if (p[i_pty].revents & POLLIN)
				relay(s, s->term.pty_master, s->term.pty_out);
			else
				s->term.pty_master = -1;     /* closed at exit */
		}
		if (i_tty >= 0 && (p[i_tty].revents & POLLIN)) {
			if (s->ap.prompt_active) {
				char buf[64];
				ssize_t r = read(s->term.tty_fd, buf, sizeof(buf));

				if (r > 0)
					approve_tty_input(s, buf, (size_t)r);
			} else if (s->term.pty_master >= 0) {
				relay(s, s->term.tty_fd, s->term.pty_master);
			}
		}
		if (i_init >= 0 && p[i_init].revents)
			init_input(s);
		if (p[i_sig].revents & POLLIN) {
			struct signalfd_siginfo si;

			while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGWINCH && s->term.pty_master >= 0) {
					struct winsize ws;

					if (ioctl(s->term.term_fd, TIOCGWINSZ, &ws) == 0)
						(void)ioctl(s->term.pty_master, TIOCSWINSZ, &ws);
				} else if (si.ssi_signo == SIGINT || si.ssi_signo == SIGTERM ||
					   si.ssi_signo == SIGHUP || si.ssi_signo == SIGQUIT) {
					char by[128];

					snprintf(by, sizeof(by), "SIG%s from uid %u (pid %u)",
						 sigabbrev_np((int)si.ssi_signo) ?: "?",
						 si.ssi_uid, si.ssi_pid);
					sup_stop(s, (int)si.ssi_signo, by);
				} else if (si.ssi_signo != SIGCHLD) {
					(void)kill(s->agent, (int)si.ssi_signo);
				}
			}
			if (waitpid(s->agent, status, WNOHANG) == s->agent)
				agent_done = true;
		}
		now = mono_ms();
		if (__atomic_load_n(&s->audit_err, __ATOMIC_ACQUIRE) && !s->stop_reason[0]) {
			audit_stop = true;
			snprintf(s->stop_reason, sizeof(s->stop_reason),
				 "the audit log cannot keep its records (%s)",
				 strerror(-__atomic_load_n(&s->audit_err, __ATOMIC_ACQUIRE)));
			(void)cg_destroy(s->cgroup);
		}
		if (__atomic_load_n(&s->audit_full, __ATOMIC_ACQUIRE) && !s->stop_reason[0]) {
			snprintf(s->stop_reason, sizeof(s->stop_reason),
				 "audit budget spent (%llu bytes of records)",
				 (unsigned long long)s->pol->budgets.audit_bytes);
			(void)cg_destroy(s->cgroup);
		}
		approve_tick(s);
		stop_tick(s, now);
		if (s->recheck.n)
			sweep_armed(s);
		if (wall && now - s->started_ms > wall && !s->stop_reason[0]) {
			snprintf(s->stop_reason, sizeof(s->stop_reason),
				 "wall_time budget spent (%llu s)",
				 (unsigned long long)s->pol->budgets.wall_time_s);
			(void)cg_destroy(s->cgroup);
		}
		if ((i_budget >= 0 && (p[i_budget].revents & POLLIN)) || now - last_budget >= 1000) {
			char which[32], detail[256];

			last_budget = now;
			if (budget_check(s->budget, which, sizeof(which), detail, sizeof(detail)) == 1 &&
			    !s->stop_reason[0]) {
				snprintf(s->stop_reason, sizeof(s->stop_reason), "%s budget spent: %s",
					 which, detail);
				(void)cg_destroy(s->cgroup);
			}
		}
	}
	/* A budget spent in the last moments (the OOM kill that ended the agent). */
	if (!s->stop_reason[0]) {
		char which[32], detail[256];

		if (budget_check(s->budget, which, sizeof(which), detail, sizeof(detail)) == 1)
			snprintf(s->stop_reason, sizeof(s->stop_reason), "%s budget spent: %s",
				 which, detail);
	}
	/*
	 * The agent has exited: what it left running (a daemon it forked) is
	 * killed now, before the last events are drained, the helpers stopped
	 * and the log sealed.  Attack closed: a daemon that waits for its
	 * parent to go acted in the seconds the helpers take to stop, its
	 * kernel events never read, under a log sealed as whole.
	 */
	(void)cg_destroy(s->cgroup);
	/* Drain what the floor reported before the session ended. */
	if (s->recheck.n)
		sweep_armed(s);
	if (ffd >= 0) {
		(void)floor_session_poll(s->fsess, 0, on_floor_event, s);
		floor_drops(s);
	}
	if (nfd >= 0)
		drain_net(s);
	if (s->term.pty_master >= 0) {
		struct pollfd pp = { .fd = s->term.pty_master, .events = POLLIN };

		while (poll(&pp, 1, 0) > 0 && (pp.revents & POLLIN))
			relay(s, s->term.pty_master, s->term.pty_out);
	}
	if (s->stop_reason[0] && !audit_stop) {
		json_t *ev = json_pack("{s:s,s:s}", "event", "budget", "stopped", s->stop_reason);

		pthread_mutex_lock(&s->lock);
		(void)audit_write(s->audit, "budget", ev);
		pthread_mutex_unlock(&s->lock);
		json_decref(ev);
	}
	if (s->stop_sig) {
		char sig[16];
		json_t *ev;

		snprintf(sig, sizeof(sig), "SIG%s", sigabbrev_np(s->stop_sig) ?: "?");
		ev = json_pack("{s:s,s:s,s:s,s:b}", "event", "stopped", "by", s->stop_by,
			       "signal", sig, "killed", s->stop_killed);

		pthread_mutex_lock(&s->lock);
		(void)audit_write(s->audit, "lifecycle", ev);
		pthread_mutex_unlock(&s->lock);
		json_decref(ev);
		if (!s->stop_reason[0])
			snprintf(s->stop_reason, sizeof(s->stop_reason), "%s%s", s->stop_by,
				 s->stop_killed ? "; still running at the end of the grace: killed" : "");
	}
	/* Anything left pending dies with the session. */
	while (s->ap.pending)
		approve_resolve(s, s->ap.pending, false, false, "session ended");
	close(sfd);
	return 0;
}
