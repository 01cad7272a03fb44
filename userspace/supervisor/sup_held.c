// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The operations the supervisor holds or answers on the task's behalf
 * (sup_held.h): a call let go on, refused, or performed by the supervisor
 * itself on what it judged (a connect on a copy of the task's socket, an
 * open injected into the task), and the requests held for a human, with
 * the session's approvals and denials that answer them again.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "approve.h"
#include "exec_recheck.h"
#include "helper.h"
#include "notify.h"
#include "push_grant.h"
#include "sup_held.h"
#include "sup_record.h"
#include "tell.h"
#include "util.h"

int sup_held_spawn(void *(*fn)(void *), void *arg)
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
	if (sup_held_spawn(connect_worker, e) < 0) {
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
	if (sup_held_spawn(open_worker, e) < 0) {
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

bool sup_human_denied(struct sup *s, json_t *event)
{
	return approve_human_denied(&s->ap, event);
}

int sup_hold(struct sup *s, const struct held *h, json_t *event, json_t *kept, const char *binary,
	     const char *summary, const char *rule, const char *risk)
{
	return approve_hold(&s->ap, h, event, kept, binary, summary, rule, risk);
}

/* Why sup_hold refused, for the record. */
void sup_held_escalate(struct sup *s, const struct held *h, const char *raw_name, json_t *event,
		       json_t *kept, const char *binary, const char *summary,
		       const struct pol_result *res)
{
	char risk[512];
	int r;

	sup_record_risk(res, risk, sizeof(risk));
	r = sup_hold(s, h, event, kept, binary, summary, sup_record_rule(res), risk);
	if (r < 0) {
		(void)notify_return(s->listener, h->notif, 0, EPERM);
		sup_record(s, h->pid, raw_name, NULL, kept ?: event, "deny", sup_record_rule(res),
			   sup_hold_error(r), NULL);
	}
}

bool sup_session_approved(struct sup *s, json_t *event, const char *binary)
{
	return approve_session_approved(&s->ap, event, binary);
}

void sup_held_tell_refused(struct sup *s, pid_t pid, const char *summary)
{
	char shown[512];

	pol_printable(shown, sizeof(shown), summary);
	if (pid == s->told)
		return;         /* the same process again: its PATH search's next entry */
	s->told = pid;
	tell(s->cgroup, pid, "cordon: refused: %s\ncordon: a human denied this request earlier in this "
		 "session; it is refused without asking again. Do not retry it or try another way "
		 "to do the same: ask the user.\n", shown);
	if (!s->opt->quiet)
		fprintf(stderr, "\r\ncordon: refused again, unasked (denied earlier): %s\r\n", shown);
}

/*
 * The words the caller gets with its errno (tell: on its stderr, which
 * is what a model reads of a tool's run), so that a refusal by a human is
 * not taken for a permission problem to work around.
 */
static void tell_outcome(struct sup *s, const struct pending *p, pid_t pid, bool human,
			 const char *approver)
{
	s->told = pid;
	if (human)
		tell(s->cgroup, pid, "cordon: denied by a human (%s): %s\ncordon: the person "
		     "supervising this session refused this request; it will be refused again "
		     "without asking for the rest of the session. Do not retry it or try another "
		     "way to do the same: ask the user.\n", approver, p->summary);
	else if (!strcmp(approver, "timeout"))
		tell(s->cgroup, pid, "cordon: not approved: %s\ncordon: it needs a human's "
		     "approval and nobody answered in time; it was refused.\n", p->summary);
}

void sup_held_decided(struct sup *s, const struct pending *p, struct held *h, bool allow,
		      bool session, bool human, const char *approver)
{
	bool ok = allow;
	const char *why = allow ? (session ? "approved for this session" : "approved once")
				: "denied by the approver";

	if (h->nr == HELD_MCP || h->nr == HELD_HTTP) {
		/* Held in a helper (a tools/call, an HTTP request): it goes on or refuses. */
		struct helper *hp = h->nr == s->mcp.held ? &s->mcp : &s->egress;

		s->ops->record(s, h->pid, hp->raw_name, NULL, p->kept,
			   allow ? "allow" : "deny",
			   p->rule[0] ? p->rule : NULL, why, approver);
		helper_decide(hp, h->notif, allow, why, approver);
		return;
	}
	if (!notify_valid(s->listener, h->notif))
		return;
	/*
	 * An exec held for a human is argv-based by nature: the kernel
	 * must run exactly the argv the human saw.  The exec recheck kills
	 * it otherwise; without the recheck it may only run if no other
	 * task can have rewritten its arguments.
	 */
	if (ok && (h->nr == SYS_execve || h->nr == SYS_execveat)) {
		if (!exec_recheck_enabled(&s->recheck) &&
		    notify_memory_shared(h->pid, s->cgroup) != 0) {
			ok = false;
			why = "approved, but another task shares the caller's memory (argv "
			      "could have been rewritten)";
		} else if (s->ops->exec_arm(s, h, NULL, &why) < 0) {
			ok = false;
		} else if (push_event(p->kept)) {
			/* Its destination, granted before it runs (push_grant.h). */
			push_grant(s, h->pid, p->kept, approver);
		}
	}
	s->ops->record(s, h->pid, h->nr == SYS_connect ? "connect" :
		   (h->nr == SYS_execve || h->nr == SYS_execveat) ? "execve" : "open", NULL,
		   p->kept,
		   ok ? "allow" : "deny", p->rule[0] ? p->rule : NULL, why, approver);
	if (!allow)
		tell_outcome(s, p, h->pid, human, approver);
	s->ops->apply(s, h, ok, true, why);
}
