// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The channel between the supervisor and a helper it started outside the
 * session (the MCP proxy, the egress broker and credential proxy): a
 * socketpair of newline-delimited JSON, its messages defined in proto.h.
 *
 * A held operation is therefore a pending request like a held exec or
 * connect: the terminal prompt, `cordon pending/approve/deny`, batching of
 * identical events, "approve for this session" (keyed by the semantic
 * event) and the policy's timeout all apply.
 *
 * What this cannot close: a helper that dies takes its held operations
 * with it (they are withdrawn, never allowed); one that stops reading its
 * channel is killed.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proto.h"
#include "jsonrpc.h"
#include "policy.h"
#include "helper.h"
#include "util.h"

#define CHAN_MAX_LINE (1u << 20)
#define READY_TIMEOUT_MS 10000
#define STOP_TIMEOUT_MS 10000

static void chan_close(struct helper *h)
{
	if (h->chan >= 0)
		close(h->chan);
	h->chan = -1;
	if (h->in) {
		linebuf_free(h->in);
		free(h->in);
		h->in = NULL;
	}
}

/*
 * The next line of the channel as JSON, waiting up to timeout_ms (0: what
 * is already there).  1: a message; 0: none (yet); -EPIPE: the helper is
 * gone (or sent what no helper sends).
 */
static int chan_line(struct helper *h, int timeout_ms, json_t **msg)
{
	uint64_t end = mono_ms() + (uint64_t)timeout_ms;

	*msg = NULL;
	for (;;) {
		char buf[65536], *line;
		size_t llen;
		ssize_t n;
		int r;

		if (h->chan < 0)
			return -EPIPE;
		r = linebuf_next(h->in, &line, &llen);
		if (r < 0)
			return -EPIPE;
		if (r > 0) {
			*msg = json_loadb(line, llen, 0, NULL);
			return *msg ? 1 : -EPIPE;
		}
		n = read(h->chan, buf, sizeof(buf));
		if (n > 0) {
			if (linebuf_push(h->in, buf, (size_t)n) < 0)
				return -EPIPE;
			continue;
		}
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			return -EPIPE;
		{
			uint64_t now = mono_ms();
			struct pollfd p = { .fd = h->chan, .events = POLLIN };

			if (now >= end)
				return 0;
			(void)poll(&p, 1, (int)(end - now));
		}
	}
}

int helper_argv_session(const char *policy, const char *workspace, const char *user,
			const char *argv[], int n)
{
	argv[n++] = "--policy";
	argv[n++] = policy;
	argv[n++] = "--workspace";
	argv[n++] = workspace;
	argv[n++] = "--user";
	argv[n++] = user;
	return n;
}

int helper_argv_vars(const char *const *vars, int n_vars, const char *argv[], int n)
{
	for (int i = 0; i < n_vars; i++) {
		argv[n++] = "--var";
		argv[n++] = vars[i];
	}
	return n;
}

int helper_argv_upstreams(const char *const *upstreams, int n_upstreams, const char *ca,
			  const char *argv[], int n)
{
	for (int i = 0; i < n_upstreams; i++) {
		argv[n++] = "--upstream";
		argv[n++] = upstreams[i];
	}
	if (ca) {
		argv[n++] = "--upstream-ca";
		argv[n++] = ca;
	}
	return n;
}

int helper_spawn(struct helper *h, const char *argv[], int chan_arg, const int *fds, int n_fds)
{
	int sp[2], all[8];
	char cfd[16];

	if (n_fds >= (int)ARRAY_SIZE(all) || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
		return -errno ?: -E2BIG;
	/* The channel is the helper's fd 3 + n_fds; argv[chan_arg] names it. */
	memcpy(all, fds, (size_t)n_fds * sizeof(int));
	all[n_fds] = sp[1];
	snprintf(cfd, sizeof(cfd), "%d", 3 + n_fds);
	argv[chan_arg] = cfd;
	h->pid = spawn_helper(argv[0], argv, all, n_fds + 1);
	close(sp[1]);
	if (h->pid < 0) {
		int r = h->pid;

		h->pid = 0;
		close(sp[0]);
		return r;
	}
	h->chan = sp[0];
	h->in = calloc(1, sizeof(struct linebuf));
	if (!h->in)
		return -ENOMEM;
	linebuf_init(h->in, CHAN_MAX_LINE);
	(void)fcntl(h->chan, F_SETFL, O_NONBLOCK);
	return 0;
}

int helper_ready(struct helper *h, json_t **ready)
{
	json_t *msg = NULL;
	int r;

	*ready = NULL;
	/* The helper said why on stderr if it refused its configuration. */
	r = chan_line(h, READY_TIMEOUT_MS, &msg);
	if (r <= 0 || proto_op(msg) != PROTO_READY) {
		json_decref(msg);
		return r == 0 ? -ETIMEDOUT : -EINVAL;
	}
	*ready = msg;
	return 0;
}

int helper_start(struct helper *h, const char *argv[], int chan_arg, const int *fds, int n_fds,
		 json_t **ready)
{
	int r = helper_spawn(h, argv, chan_arg, fds, n_fds);

	*ready = NULL;
	return r ?: helper_ready(h, ready);
}

/*
 * One message to the helper, without waiting: a few hundred bytes into a
 * socket the helper drains all the time.  -EPIPE if it could not take it
 * (gone, or stuck with a full buffer).
 */
int helper_send(struct helper *h, json_t *msg)
{
	size_t len = 0;
	char *line = msg ? jrpc_dump(msg, &len) : NULL;
	int r = -EPIPE;

	json_decref(msg);
	if (!line)
		return -ENOMEM;
	if (h->chan >= 0 && send(h->chan, line, len, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)len)
		r = 0;
	free(line);
	return r;
}

/* The rule's description from the session's own policy (the helper's is the same file). */
static const char *rule_risk(const struct policy *pol, const char *rule, const char *reason)
{
	for (size_t i = 0; rule && i < pol->n_rules; i++)
		if (pol->rules[i].name && !strcmp(pol->rules[i].name, rule) &&
		    pol->rules[i].description)
			return pol->rules[i].description;
	return reason && *reason ? reason : "the policy asks a human for this";
}

static void on_escalate(struct helper *hp, const struct proto_msg *m)
{
	const struct sup_ops *ops = hp->ctx->ops;
	struct sup *s = hp->ctx->owner;
	struct held h = { .nr = hp->held, .pid = hp->pid, .notif = m->hold };
	const char *rule = m->rule && *m->rule ? m->rule : NULL;
	json_t *event = m->event, *kept;
	int r;

	/* The records keep a digest of large arguments; the approver and the key see them whole. */
	kept = pol_event_kept(event);
	if (!kept) {
		helper_decide(hp, h.notif, false, "cordon could not hold the request", NULL);
	} else if (ops->human_denied(s, event)) {
		ops->record(s, hp->pid, hp->raw_name, NULL, kept, "deny", rule,
			   "denied by a human earlier in this session (not asked again)", NULL);
		helper_decide(hp, h.notif, false,
			      "denied by a human earlier in this session (not asked again)", NULL);
	} else if (ops->session_approved(s, event, NULL)) {
		ops->record(s, hp->pid, hp->raw_name, NULL, kept, "allow", rule,
			   "approved for this session", NULL);
		helper_decide(hp, h.notif, true, "approved for this session", NULL);
	} else if (hp->ctx->mode == APPROVE_DENY) {
		/* No human to ask: an escalation is a refusal, at once. */
		ops->record(s, hp->pid, hp->raw_name, NULL, kept, "deny", rule,
			   "escalation with --approve deny", NULL);
		helper_decide(hp, h.notif, false, "escalation with --approve deny", NULL);
	} else if ((r = ops->hold(s, &h, event, kept, NULL, m->summary, rule,
				     rule_risk(hp->ctx->pol, rule, m->reason))) < 0) {
		ops->record(s, hp->pid, hp->raw_name, NULL, kept, "deny", rule, sup_hold_error(r),
			    NULL);
		helper_decide(hp, h.notif, false, sup_hold_error(r), NULL);
	}
	json_decref(kept);
}

static void on_message(struct helper *h, json_t *msg)
{
	struct proto_msg m;

	if (proto_read(msg, &m) < 0) {
		log_warn("run: the %s sent a message cordon does not know: ignored", h->what);
		return;
	}
	/*
	 * Which processes hold a socket: the broker, which gave root up, cannot
	 * list other users' descriptors (grants.c).  Answered at once, in or
	 * out of a session; the helper itself is left out, as it would be.
	 */
	if (m.op == PROTO_HOLDERS) {
		pid_t pids[64];
		int n = m.pids ? 0 : socket_holders_scan(m.inode, h->pid, pids, 64);

		if (!m.pids)
			(void)helper_send(h, proto_holders(m.query, pids, n));
		return;
	}
	/*
	 * A helper started outside any session (`cordon policy draft`'s
	 * credential proxy, whose policy escalates nothing): no log to keep
	 * its records, which are dropped, and no human to hold for, so an
	 * escalation is refused at once (fail closed, never left waiting).
	 */
	if (!h->ctx) {
		if (m.op == PROTO_ESCALATE)
			helper_decide(h, m.hold, false, "no human to ask outside a session", NULL);
		return;
	}
	switch (m.op) {
	case PROTO_RECORD:
		/* Only the helper's own record types: it cannot forge lifecycle or seal records. */
		if (strcmp(m.type, "decision") && strcmp(m.type, h->record_type))
			return;
		h->ctx->ops->audit_write(h->ctx->owner, m.type, m.fields);
		break;
	case PROTO_ESCALATE:
		on_escalate(h, &m);
		break;
	case PROTO_WITHDRAW:
		h->ctx->ops->withdraw(h->ctx->owner, h->held, m.hold);
		break;
	case PROTO_READY:
	case PROTO_DECISION:
	case PROTO_SESSION:
	case PROTO_GRANT:
	case PROTO_HOLDERS:
	case PROTO_UNKNOWN:
		break;
	}
}

/* The helper ended: nothing of it can be decided any more. */
static void helper_gone(struct helper *h)
{
	char what[64];
	json_t *ev;

	snprintf(what, sizeof(what), "%s-exited", h->what);
	ev = json_pack("{s:s,s:i}", "event", what, "pid", (int)h->pid);
	chan_close(h);
	if (h->ctx) {
		h->ctx->ops->withdraw_all(h->ctx->owner, h->held);
		h->ctx->ops->audit_write(h->ctx->owner, "lifecycle", ev);
	}
	json_decref(ev);
}

void helper_input(struct helper *h)
{
	json_t *msg;
	int r;

	/* Bounded per call: a busy helper cannot starve the notifications. */
	for (int i = 0; i < 256; i++) {
		r = chan_line(h, 0, &msg);
		if (r < 0) {
			helper_gone(h);
			return;
		}
		if (r == 0)
			return;
		on_message(h, msg);
		json_decref(msg);
	}
}

void helper_decide(struct helper *h, uint64_t hold, bool allow, const char *why,
		   const char *approver)
{
	if (h->chan < 0)
		return;
	/*
	 * A full buffer means it is stuck, and a stuck helper is stopped (its
	 * held operations then fail; none goes through unjudged).
	 */
	if (helper_send(h, proto_decision(hold, allow, why, approver)) == -EPIPE) {
		log_err("run: the %s stopped reading its channel: stopped", h->what);
		(void)kill(h->pid, SIGKILL);
		helper_gone(h);
	}
}

void helper_stop(struct helper *h)
{
	if (h->pid > 0) {
		h->stop_end = mono_ms() + STOP_TIMEOUT_MS;
		/* SIGTERM: it stops what it started, and sends its last records. */
		(void)kill(h->pid, SIGTERM);
		while (h->chan >= 0 && mono_ms() < h->stop_end) {
			json_t *msg;
			int r = chan_line(h, (int)(h->stop_end - mono_ms()), &msg);

			if (r < 0)
				break;
			/* Records only: the session's approvals are over. */
			if (r > 0 && proto_op(msg) == PROTO_RECORD)
				on_message(h, msg);
			json_decref(msg);
		}
	}
	chan_close(h);
}

void helper_reap(struct helper *h)
{
	int status, pidfd;

	if (h->pid <= 0)
		return;
	/*
	 * Its exit, waited for on a pidfd (readable once it has exited)
	 * rather than by polling in steps.  The pid is this process's
	 * unreaped child: it names the helper until the waitpid below.
	 */
	pidfd = (int)syscall(SYS_pidfd_open, h->pid, 0);
	while (waitpid(h->pid, &status, WNOHANG) == 0) {
		uint64_t now = mono_ms();
		struct pollfd p = { .fd = pidfd, .events = POLLIN };

		if (now >= h->stop_end) {
			(void)kill(h->pid, SIGKILL);
			(void)waitpid(h->pid, &status, 0);
			break;
		}
		if (pidfd < 0 || poll(&p, 1, (int)(h->stop_end - now)) < 0)
			usleep(1000);
	}
	if (pidfd >= 0)
		close(pidfd);
	h->pid = 0;
}
