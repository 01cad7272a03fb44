// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Human approval of escalated operations.  The call stays blocked in the
 * kernel (the seccomp notification is simply not answered) until a human
 * decides or the policy's timeout applies.
 *
 * Channels:
 *   - tty: a prompt on cordon's own terminal.  The agent never holds a
 *     descriptor of that terminal (it has its own pseudo-terminal, see
 *     agent_tty.c), so it cannot type the answer; nor can it make the terminal
 *     type one through what it writes, or hide the question (tty_guard.c).
 *   - socket: RUN_DIR/SESSION/approve.sock, spoken to by `cordon pending`,
 *     `cordon approve`, `cordon deny`.  A peer must be root or the invoking
 *     user, must not be a task of any cordon session (its cgroup, read for
 *     the peer the kernel captured at connect; a session task cannot leave
 *     its cgroup, cgroupfs is never writable from inside), and must not be
 *     the supervisor itself (host_operator).  Before that, the floors
 *     refuse the connect: RUN_DIR is a protected path, judged by object in
 *     the full posture, and in the fallback by the supervisor, the unix
 *     gate keeping the session from naming the path itself.
 * Identical requests pending at once are batched: one answer for all.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "audit.h"
#include "notify.h"
#include "push_grant.h"
#include "sup_state.h"
#include "approve.h"
#include "helper.h"
#include "tell.h"
#include "util.h"

int approve_listen(struct sup *s)
{
	char p[PATH_MAX + 32];

	snprintf(p, sizeof(p), "%s/approve.sock", s->run_dir);
	s->ap.approve_sock = unix_listen(p, s->invoker);
	if (s->ap.approve_sock < 0) {
		log_err("run: %s: %s", p, strerror(-s->ap.approve_sock));
		return s->ap.approve_sock;
	}
	snprintf(p, sizeof(p), "%s/events.sock", s->run_dir);
	s->ap.events_sock = unix_listen(p, s->invoker);
	if (s->ap.events_sock < 0) {
		log_err("run: %s: %s", p, strerror(-s->ap.events_sock));
		return s->ap.events_sock;
	}
	return 0;
}

bool approve_session_allowed(struct sup *s, const char *key)
{
	for (size_t i = 0; i < s->ap.n_approved; i++)
		if (!strcmp(s->ap.approved[i], key))
			return true;
	return false;
}

static void tty_print(struct sup *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tty_print(struct sup *s, const char *fmt, ...)
{
	char buf[2048], out[4096];
	size_t o = 0;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* The terminal is in raw mode while the agent's pty is relayed. */
	for (const char *c = buf; *c && o + 2 < sizeof(out); c++) {
		if (*c == '\n')
			out[o++] = '\r';
		out[o++] = *c;
	}
	(void)!write(STDERR_FILENO, out, o);
}

/*
 * The question, on a terminal the agent can neither answer nor paint over:
 * its output waits from here until the last prompt is answered (the loop
 * stops reading its pty), and the terminal is first put back in a state
 * where text shows as written and nothing reports on its own (tty_guard.c).
 */
static void prompt(struct sup *s, struct pending *p)
{
	char pre[512];
	size_t n = tty_guard_begin(pre, sizeof(pre));

	s->ap.prompt_active = true;
	s->ap.prompt_at = mono_ms();
	p->prompted = true;
	if (isatty(STDERR_FILENO))
		(void)write_all(STDERR_FILENO, pre, n);
	tty_print(s, "\n[cordon] The agent asks to: %s\n"
		  "[cordon]   rule: %s - %s\n"
		  "[cordon]   waiting: %d call%s; answer within %llu s or: %s\n"
		  "[cordon] Approve once [y], approve for this session [s], deny [n]? ",
		  p->summary, p->rule[0] ? p->rule : "(none)", p->risk, p->n_held,
		  p->n_held == 1 ? "" : "s",
		  (unsigned long long)((p->deadline_ms - mono_ms()) / 1000),
		  s->pol->approval_on_timeout == CORDON_ALLOW ? "allow" : "deny");
}

static struct pending *first_unprompted(struct sup *s)
{
	struct pending *p, *last = NULL;

	/* Oldest first: the list is newest-first. */
	for (p = s->ap.pending; p; p = p->next)
		if (!p->prompted)
			last = p;
	return last;
}

/*
 * The next question, or, after the last, the agent's terminal back: the
 * reporting modes it had on, and SIGWINCH to its foreground process group
 * so a full-screen program repaints what the prompt scrolled.
 */
static void prompt_next(struct sup *s)
{
	struct pending *next = first_unprompted(s);
	char post[256];
	size_t n;
	pid_t fg;

	s->ap.prompt_active = false;
	if (next) {
		prompt(s, next);
		return;
	}
	n = tty_guard_end(&s->term.out, post, sizeof(post));
	if (n && isatty(STDERR_FILENO))
		(void)write_all(STDERR_FILENO, post, n);
	fg = s->term.pty_master >= 0 ? tcgetpgrp(s->term.pty_master) : -1;
	if (fg > 0)
		(void)kill(-fg, SIGWINCH);
}

void approve_hold(struct sup *s, struct pending *p)
{
	if (s->opt->approve == APPROVE_TTY && s->term.tty_fd >= 0) {
		if (!s->ap.prompt_active)
			prompt(s, p);
		return;
	}
	if (!s->opt->quiet)
		tty_print(s, "cordon: held #%u: %s (rule %s); `cordon approve %s:%u` or "
			  "`cordon deny %s:%u`\n", p->id, p->summary, p->rule[0] ? p->rule : "-",
			  s->name, p->id, s->name, p->id);
}

static void unlink_pending(struct sup *s, struct pending *p)
{
	for (struct pending **pp = &s->ap.pending; *pp; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			return;
		}
}

/*
 * A human's no is final for the request (sup_held.h says what "the
 * same request" is): kept for the session, so that the shell's retry of
 * the same command through the next PATH entry, or the agent's second
 * try, is refused unasked.  Before, each retry was a new question, and a
 * `y` to the second let through what the first `n` refused.  A timeout is
 * not a human's answer, and is not kept.
 */
static void remember_denial(struct sup *s, const char *key)
{
	char **v;

	for (size_t i = 0; i < s->ap.n_denied; i++)
		if (!strcmp(s->ap.denied[i], key))
			return;
	v = realloc(s->ap.denied, (s->ap.n_denied + 1) * sizeof(char *));
	if (!v)
		return;
	s->ap.denied = v;
	if ((s->ap.denied[s->ap.n_denied] = strdup(key)))
		s->ap.n_denied++;
}

/*
 * The words the caller gets with its errno (tell: on its stderr, which
 * is what a model reads of a tool's run), so that a refusal by a human is
 * not taken for a permission problem to work around.
 */
static void tell_outcome(struct sup *s, struct pending *p, pid_t pid, bool human,
			 const char *approver)
{
	s->ap.told = pid;
	if (human)
		tell(s->cgroup, pid, "cordon: denied by a human (%s): %s\ncordon: the person supervising "
			 "this session refused this request; it will be refused again without "
			 "asking for the rest of the session. Do not retry it or try another way to "
			 "do the same: ask the user.\n", approver, p->summary);
	else if (!strcmp(approver, "timeout"))
		tell(s->cgroup, pid, "cordon: not approved: %s\ncordon: it needs a human's approval and "
			 "nobody answered in time; it was refused.\n", p->summary);
}

void approve_resolve(struct sup *s, struct pending *p, bool allow, bool session,
		     const char *approver)
{
	bool was_prompted = p->prompted && s->ap.prompt_active;
	bool human = strcmp(approver, "timeout") && strcmp(approver, "session ended");
	char deny_key[sizeof(p->deny_key)];

	memcpy(deny_key, p->deny_key, sizeof(deny_key));
	unlink_pending(s, p);
	if (!allow && human)
		remember_denial(s, p->deny_key);
	if (allow && session) {
		char **v = realloc(s->ap.approved, (s->ap.n_approved + 1) * sizeof(char *));

		if (v) {
			s->ap.approved = v;
			if ((s->ap.approved[s->ap.n_approved] = strdup(p->key)))
				s->ap.n_approved++;
		}
	}
	for (int i = 0; i < p->n_held; i++) {
		struct held *h = &p->held[i];
		bool ok = allow;
		const char *why = allow ? (session ? "approved for this session" : "approved once")
					: "denied by the approver";

		if (h->nr == HELD_MCP || h->nr == HELD_HTTP) {
			/* Held in a helper (a tools/call, an HTTP request): it goes on or refuses. */
			struct helper *hp = helper_of_held(s, h->nr);

			s->ops->record(s, h->pid, hp->raw_name, NULL, p->kept,
				   allow ? "allow" : "deny",
				   p->rule[0] ? p->rule : NULL, why, approver);
			helper_decide(s, hp, h->notif, allow, why, approver);
			continue;
		}
		if (!notify_valid(s->listener, h->notif))
			continue;
		/*
		 * An exec held for a human is argv-based by nature: the kernel
		 * must run exactly the argv the human saw.  The exec recheck kills
		 * it otherwise; without the recheck it may only run if no other
		 * task can have rewritten its arguments.
		 */
		if (ok && (h->nr == SYS_execve || h->nr == SYS_execveat)) {
			if (!s->recheck.on && notify_memory_shared(h->pid, s->cgroup) != 0) {
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
	json_decref(p->kept);
	free(p);
	if (was_prompted)
		prompt_next(s);
	/* The same request held apart (another binary's, sup_held.h): the no is its too. */
	while (!allow && human) {
		struct pending *q;

		for (q = s->ap.pending; q && strcmp(q->deny_key, deny_key); q = q->next)
			;
		if (!q)
			break;
		approve_resolve(s, q, false, false, approver);
	}
}

/* A held call whose caller gave up (an MCP client cancelled or left). */
void approve_withdraw(struct sup *s, int nr, uint64_t notif)
{
	for (struct pending *p = s->ap.pending; p; p = p->next) {
		for (int i = 0; i < p->n_held; i++) {
			if (p->held[i].nr != nr || p->held[i].notif != notif)
				continue;
			memmove(&p->held[i], &p->held[i + 1], (size_t)(p->n_held - i - 1) * sizeof(p->held[0]));
			p->n_held--;
			if (p->n_held == 0) {
				bool was_prompted = p->prompted && s->ap.prompt_active;

				unlink_pending(s, p);
				json_decref(p->kept);
				free(p);
				if (was_prompted) {
					tty_print(s, "withdrawn by the agent\n");
					prompt_next(s);
				}
			}
			return;
		}
	}
}

void approve_withdraw_all(struct sup *s, int nr)
{
	for (struct pending *p = s->ap.pending, *next; p; p = next) {
		uint64_t ids[ARRAY_SIZE(p->held)];
		int k = 0;

		next = p->next;
		for (int i = 0; i < p->n_held; i++)
			if (p->held[i].nr == nr)
				ids[k++] = p->held[i].notif;
		/* The last withdrawal frees p: it is not touched after. */
		for (int i = 0; i < k; i++)
			s->ops->withdraw(s, nr, ids[i]);
	}
}

void approve_tick(struct sup *s)
{
	uint64_t now = mono_ms();
	struct pending *p = s->ap.pending;

	while (p) {
		struct pending *next = p->next;

		if (now >= p->deadline_ms) {
			if (p->prompted && s->ap.prompt_active)
				tty_print(s, "timeout\n");
			approve_resolve(s, p, s->pol->approval_on_timeout == CORDON_ALLOW, false,
					"timeout");
		}
		p = next;
	}
}

/*
 * Keys typed at the prompt.  Every byte goes through the parser, the ones
 * after an answer too (so a report split by it stays one), but only the
 * first answer in a read counts, what follows it does not answer the next
 * question, and nothing typed in the question's first PROMPT_GRACE_MS does.
 */
void approve_tty_input(struct sup *s, const char *buf, size_t n)
{
	struct pending *p;
	bool done = mono_ms() < s->ap.prompt_at + PROMPT_GRACE_MS;     /* too early: none counts */

	for (p = s->ap.pending; p && !(p->prompted); p = p->next)
		;
	for (size_t i = 0; i < n; i++) {
		/* Only a key typed outside every control sequence answers. */
		int c = tty_keys_feed(&s->term.keys, (unsigned char)buf[i]);
		bool allow, session = false;

		if (done || !p)
			continue;
		if (c == 'y' || c == 'Y')
			allow = true;
		else if (c == 's' || c == 'S')
			allow = session = true;
		else if (c == 'n' || c == 'N' || c == 3 /* ^C */)
			allow = false;
		else
			continue;
		tty_print(s, "%s\n", allow ? (session ? "approved for this session" : "approved")
					   : "denied");
		approve_resolve(s, p, allow, session, "tty");
		done = true;
	}
}

/* --- the socket ------------------------------------------------------------ */

/*
 * A host operator on one of the supervisor's own sockets (approve.sock,
 * events.sock): root or the invoking user, from outside every cordon
 * session, and never this process.  Attack: the supervisor's own Unix
 * worker (sup_connect.c) connects on the agent's behalf, as the agent's uid
 * from this pid, outside the session's cgroup; when the agent runs as the
 * invoker or as root, uid and cgroup would both pass, so a connect coming
 * from this process is refused (it connects to nothing of its own).  What
 * this cannot tell: another session's supervisor connecting for its agent;
 * that connect is refused before it is made, /run/cordon being a protected
 * path in every policy.  The cgroup is read race-free where the kernel
 * allows (peer_read); unknown means deny.
 */
bool host_operator(int fd, uid_t invoker, char *who, size_t wlen)
{
	struct ucred cr;
	char *cg = NULL;
	bool ok;

	if (peer_read(fd, &cr, &cg) < 0)
		return false;
	/*
	 * Not a session's task, nor a session's Unix connector (its own
	 * cgroup, beside the sessions': it connects as the agent, with the
	 * agent's uid, which may be the invoker's).
	 */
	ok = (cr.uid == 0 || cr.uid == invoker) && cr.pid != getpid() &&
	     !strstr(cg, "/" CORDON_CGROUP_PARENT "/") &&
	     !strstr(cg, "/" CORDON_CGROUP_PARENT "-unix/");
	free(cg);
	if (who)
		snprintf(who, wlen, "uid %u (pid %d)", (unsigned)cr.uid, (int)cr.pid);
	return ok;
}

/*
 * A pending request's event as the approver's list shows it.  Attack: the
 * agent holds one request with megabytes of arguments (an exec's argv, a
 * tool call's), and the list that carries every pending request of the
 * session no longer fits a reply: the human sees none of them.  Past
 * LIST_EVENT_BYTES the arguments are shown as their size and SHA-256
 * (an exec's as its argv's digest); the summary still says what it is.
 */
#define LIST_EVENT_BYTES (16u << 10)

static json_t *event_shown(const struct pending *p)
{
	json_t *ev = p->kept;
	char hex[65];
	size_t n;

	if (pol_json_sha256(json_object_get(ev, "arguments"), hex, &n) < 0)
		return json_pack("{s:O*,s:O*}", "server", json_object_get(ev, "server"), "tool",
				 json_object_get(ev, "tool"));
	if (n <= LIST_EVENT_BYTES)
		return json_incref(ev);
	return json_pack("{s:O*,s:O*,s:{s:I,s:s,s:b}}", "server", json_object_get(ev, "server"),
			 "tool", json_object_get(ev, "tool"), "arguments", "json_bytes",
			 (json_int_t)n, "json_sha256", hex, "truncated", 1);
}

static json_t *pending_json(struct sup *s)
{
	json_t *a = json_array();
	uint64_t now = mono_ms();

	for (struct pending *p = s->ap.pending; p; p = p->next)
		json_array_append_new(a, json_pack("{s:s,s:i,s:s,s:s,s:s,s:o,s:i,s:I,s:I}",
			"session", s->name, "id", (int)p->id, "summary", p->summary,
			"rule", p->rule, "risk", p->risk, "event", event_shown(p), "waiting", p->n_held,
			"expires_in_ms", (json_int_t)(p->deadline_ms > now ? p->deadline_ms - now : 0),
			"age_ms", (json_int_t)(now - p->created_ms)));
	return a;
}

/*
 * Whose session this is, for `cordon pending` (which lists the caller's
 * own unless root asks for all) and `cordon approve` (which refuses a bare
 * ID that names requests in two sessions).  The command as the human
 * typed it, made printable and cut: the agent chose none of it.
 */
static json_t *session_json(struct sup *s)
{
	char cmd[512] = "", shown[512];
	size_t o = 0;

	for (char **a = s->opt->argv; a && *a && o + 1 < sizeof(cmd); a++)
		o += (size_t)snprintf(cmd + o, sizeof(cmd) - o, "%s%s", o ? " " : "", *a);
	pol_printable(shown, sizeof(shown), cmd);
	return json_pack("{s:s,s:s,s:i,s:i,s:s,s:s,s:I}", "session", s->name, "user", s->user,
			 "uid", (int)s->uid, "invoker", (int)s->invoker, "workspace", s->workspace,
			 "command", shown, "age_ms", (json_int_t)(mono_ms() - s->started_ms));
}

static void reply(int c, json_t *o)
{
	char *line = json_dumps(o, JSON_COMPACT);

	if (line) {
		(void)send(c, line, strlen(line), MSG_NOSIGNAL);
		(void)send(c, "\n", 1, MSG_NOSIGNAL);
	}
	free(line);
	json_decref(o);
}

void approve_accept(struct sup *s)
{
	int c = accept4(s->ap.approve_sock, NULL, NULL, SOCK_CLOEXEC);
	char buf[4096], who[64], approver[96];
	struct timeval tv = { .tv_sec = 1 };
	json_error_t jerr;
	json_t *req;
	const char *cmd;
	ssize_t n;

	if (c < 0)
		return;
	if (!host_operator(c, s->invoker, who, sizeof(who))) {
		reply(c, json_pack("{s:s}", "error", "not allowed: only the invoking user or root, "
				   "from outside every cordon session"));
		close(c);
		return;
	}
	/* A slow client stalls the loop for at most a second. */
	(void)setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	/* And one that stops reading its answer stalls it (and the session) no longer. */
	(void)setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	n = recv(c, buf, sizeof(buf) - 1, 0);
	if (n <= 0) {
		close(c);
		return;
	}
	buf[n] = '\0';
	req = json_loads(buf, 0, &jerr);
	cmd = json_string_value(json_object_get(req, "cmd"));
	snprintf(approver, sizeof(approver), "socket: %s", who);
	if (!cmd) {
		reply(c, json_pack("{s:s}", "error", "bad request: expected {\"cmd\": ...}"));
	} else if (!strcmp(cmd, "pending")) {
		json_t *o = session_json(s);

		json_object_set_new(o, "pending", pending_json(s));
		reply(c, o);
	} else if (!strcmp(cmd, "stop")) {
		char by[160];

		snprintf(by, sizeof(by), "`cordon stop` by %s", who);
		s->ops->stop(s, SIGTERM, by);
		reply(c, json_pack("{s:b,s:i}", "ok", 1, "grace_ms", STOP_GRACE_MS));
	} else if (!strcmp(cmd, "approve") || !strcmp(cmd, "deny")) {
		unsigned id = (unsigned)json_integer_value(json_object_get(req, "id"));
		struct pending *p;

		for (p = s->ap.pending; p && p->id != id; p = p->next)
			;
		if (!p) {
			reply(c, json_pack("{s:s}", "error", "no such pending request"));
		} else {
			bool allow = !strcmp(cmd, "approve");
			bool session = json_is_true(json_object_get(req, "session"));
			int held = p->n_held;

			if (p->prompted && s->ap.prompt_active)
				tty_print(s, "%s from another terminal\n", allow ? "approved" : "denied");
			approve_resolve(s, p, allow, allow && session, approver);
			reply(c, json_pack("{s:b,s:i}", "ok", 1, "calls", held));
		}
	} else {
		reply(c, json_pack("{s:s}", "error", "unknown command"));
	}
	json_decref(req);
	close(c);
}
