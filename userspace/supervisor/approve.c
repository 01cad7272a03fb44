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
 *     There `i` and a sentence state an intent (approve_tty_input).
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
 * What is decided here is applied by the loop (struct approvals_ops:
 * sup_held_decided records, tells and answers each held call).
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

#include "policy.h"
#include "approve.h"
#include "instance.h"
#include "tty_guard.h"
#include "util.h"

int approve_listen(struct approvals *ap)
{
	char p[PATH_MAX + 32];

	snprintf(p, sizeof(p), "%s/approve.sock", ap->ctx.run_dir);
	ap->approve_sock = unix_listen(p, ap->ctx.invoker);
	if (ap->approve_sock < 0) {
		log_err("run: %s: %s", p, strerror(-ap->approve_sock));
		return ap->approve_sock;
	}
	snprintf(p, sizeof(p), "%s/events.sock", ap->ctx.run_dir);
	ap->events_sock = unix_listen(p, ap->ctx.invoker);
	if (ap->events_sock < 0) {
		log_err("run: %s: %s", p, strerror(-ap->events_sock));
		return ap->events_sock;
	}
	return 0;
}

/* The identity of a request (sup_held.h: what "the same request" means). */
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

bool approve_human_denied(struct approvals *ap, json_t *event)
{
	char key[65];

	return ap->n_denied && pol_json_sha256(event, key, NULL) == 0 &&
	       key_in(ap->denied, ap->n_denied, key);
}

bool approve_session_approved(struct approvals *ap, json_t *event, const char *binary)
{
	char key[65];

	return ap->intents.n && request_key(event, binary, key) == 0 &&
	       intent_covers(&ap->intents, NULL, key, false, mono_ms());
}

static void resolve(struct approvals *ap, struct pending *p, bool allow, bool session,
		    const char *approver);
static void tty_print(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static bool held_lifted(const struct pending *p);
static void typed_line_end(struct approvals *ap);

int approve_intent(struct approvals *ap, const char *sentence, unsigned for_s, const char *who,
		   char *err, size_t elen, int *calls)
{
	const struct intent *it;
	char approver[768];
	int id;

	*calls = 0;
	/* Without the session's variables a sentence would mean the supervisor's paths. */
	if (!ap->ctx.vars) {
		snprintf(err, elen, "intent: the session's policy variables are not known");
		return -EINVAL;
	}
	id = intent_state(&ap->intents, sentence, for_s, who, ap->ctx.vars, mono_ms(), err, elen);
	if (id < 0)
		return id;
	it = ap->intents.v[ap->intents.n - 1];
	intent_approver(it, approver, sizeof(approver));
	for (struct pending *p = ap->pending, *next; p; p = next) {
		next = p->next;
		if (intent_covers(&ap->intents, p->kept, NULL, held_lifted(p), mono_ms()) != it)
			continue;
		*calls += p->n_held;
		if (p->prompted && ap->prompt_active) {
			typed_line_end(ap);
			tty_print("approved by intent %u\n", it->id);
		}
		resolve(ap, p, true, false, approver);
		next = ap->pending;     /* resolve may have changed the list */
	}
	return id;
}

static void tty_print(const char *fmt, ...)
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
 * Whole seconds left until DEADLINE, rounded up: a prompt asked in the
 * millisecond after its hold said "59 s" of a 60 s wait (and a unit test
 * that expects 60 failed now and then).
 */
static unsigned long long secs_left(uint64_t deadline)
{
	uint64_t now = mono_ms();

	return deadline > now ? (deadline - now + 999) / 1000 : 0;
}

/*
 * The question, on a terminal the agent can neither answer nor paint over:
 * its output waits from here until the last prompt is answered (the loop
 * stops reading its pty), and the terminal is first put back in a state
 * where text shows as written and nothing reports on its own (tty_guard.c).
 */
static void prompt(struct approvals *ap, struct pending *p)
{
	char pre[512];
	size_t n = tty_guard_begin(pre, sizeof(pre));

	ap->prompt_active = true;
	ap->prompt_at = mono_ms();
	ap->typing = false;
	ap->line_n = 0;
	p->prompted = true;
	if (isatty(STDERR_FILENO))
		(void)write_all(STDERR_FILENO, pre, n);
	tty_print("\n[cordon] The agent asks to: %s\n"
		  "[cordon]   rule: %s - %s\n"
		  "[cordon]   waiting: %d call%s; answer within %llu s or: %s\n"
		  "[cordon] Approve once [y], approve for this session [s], deny [n], "
		  "state an intent [i]? ",
		  p->summary, p->rule[0] ? p->rule : "(none)", p->risk, p->n_held,
		  p->n_held == 1 ? "" : "s",
		  secs_left(p->deadline_ms),
		  ap->ctx.pol->approval_on_timeout == CORDON_ALLOW ? "allow" : "deny");
}

static struct pending *first_unprompted(struct approvals *ap)
{
	struct pending *p, *last = NULL;

	/* Oldest first: the list is newest-first. */
	for (p = ap->pending; p; p = p->next)
		if (!p->prompted)
			last = p;
	return last;
}

/*
 * The next question, or, after the last, the agent's terminal back: the
 * reporting modes it had on, and SIGWINCH to its foreground process group
 * so a full-screen program repaints what the prompt scrolled.
 */
static void prompt_next(struct approvals *ap)
{
	struct pending *next = first_unprompted(ap);
	char post[256];
	size_t n;
	pid_t fg;

	ap->prompt_active = false;
	ap->typing = false;
	ap->line_n = 0;
	if (next) {
		prompt(ap, next);
		return;
	}
	n = tty_guard_end(&ap->ctx.term->out, post, sizeof(post));
	if (n && isatty(STDERR_FILENO))
		(void)write_all(STDERR_FILENO, post, n);
	fg = ap->ctx.term->pty_master >= 0 ? tcgetpgrp(ap->ctx.term->pty_master) : -1;
	if (fg > 0)
		(void)kill(-fg, SIGWINCH);
}

/* The question, or where to answer it. */
static void ask(struct approvals *ap, struct pending *p)
{
	if (ap->ctx.mode == APPROVE_TTY && ap->ctx.term->tty_fd >= 0) {
		if (!ap->prompt_active)
			prompt(ap, p);
		return;
	}
	if (!ap->ctx.quiet)
		tty_print("cordon: held #%u: %s (rule %s); `cordon approve %s:%u` or "
			  "`cordon deny %s:%u`\n", p->id, p->summary, p->rule[0] ? p->rule : "-",
			  ap->ctx.name, p->id, ap->ctx.name, p->id);
}

static void resolve(struct approvals *ap, struct pending *p, bool allow, bool session,
		    const char *approver);

/*
 * A held request a live intent covers is approved at once, with the
 * intent as its approver.  The request reached here only because the
 * session's policy escalated it: what the policy denies, or an invariant
 * forbids, was refused before, and no intent is asked about it.
 */
/* An exec's event was lifted from its command line (intent_covers: judged as such). */
static bool held_lifted(const struct pending *p)
{
	return p->held[0].nr == SYS_execve || p->held[0].nr == SYS_execveat;
}

static bool covered_by_intent(struct approvals *ap, struct pending *p, json_t *event)
{
	const struct intent *it = intent_covers(&ap->intents, event, p->key, held_lifted(p),
						mono_ms());
	char approver[768];

	if (!it)
		return false;
	intent_approver(it, approver, sizeof(approver));
	resolve(ap, p, true, false, approver);
	return true;
}

int approve_hold(struct approvals *ap, const struct held *h, json_t *event, json_t *kept,
		 const char *binary, const char *summary, const char *rule, const char *risk)
{
	struct pending *p;
	char key[65], deny_key[65];
	int n = 0;

	if (request_key(event, binary, key) < 0 || pol_json_sha256(event, deny_key, NULL) < 0)
		return -ENOMEM;
	for (p = ap->pending; p; p = p->next, n++)
		if (!strcmp(p->key, key) && p->n_held < (int)ARRAY_SIZE(p->held)) {
			p->held[p->n_held++] = *h;      /* batched with an identical request */
			return 0;
		}
	if (n >= SUP_MAX_PENDING)
		return -EAGAIN;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->id = ++ap->next_pending;
	memcpy(p->key, key, sizeof(key));
	memcpy(p->deny_key, deny_key, sizeof(deny_key));
	pol_printable(p->summary, sizeof(p->summary), summary);
	snprintf(p->rule, sizeof(p->rule), "%s", rule ?: "");
	snprintf(p->risk, sizeof(p->risk), "%s", risk);
	p->kept = json_incref(kept ?: event);
	p->held[p->n_held++] = *h;
	p->created_ms = mono_ms();
	p->deadline_ms = p->created_ms + (uint64_t)(ap->ctx.pol->approval_timeout_s ?: 120) * 1000;
	p->next = ap->pending;
	ap->pending = p;
	if (!covered_by_intent(ap, p, event))
		ask(ap, p);
	return 0;
}

static void unlink_pending(struct approvals *ap, struct pending *p)
{
	for (struct pending **pp = &ap->pending; *pp; pp = &(*pp)->next)
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
static void remember_denial(struct approvals *ap, const char *key)
{
	char **v;

	for (size_t i = 0; i < ap->n_denied; i++)
		if (!strcmp(ap->denied[i], key))
			return;
	v = realloc(ap->denied, (ap->n_denied + 1) * sizeof(char *));
	if (!v)
		return;
	ap->denied = v;
	if ((ap->denied[ap->n_denied] = strdup(key)))
		ap->n_denied++;
}

static void resolve(struct approvals *ap, struct pending *p, bool allow, bool session,
		     const char *approver)
{
	bool was_prompted = p->prompted && ap->prompt_active;
	bool human = strcmp(approver, "timeout") && strcmp(approver, "session ended");
	char deny_key[sizeof(p->deny_key)];

	memcpy(deny_key, p->deny_key, sizeof(deny_key));
	unlink_pending(ap, p);
	if (!allow && human)
		remember_denial(ap, p->deny_key);
	/* "Approve for this session": an intent of exactly this request, listed and revocable. */
	if (allow && session)
		(void)intent_state_key(&ap->intents, p->key, p->summary, approver, mono_ms());
	for (int i = 0; i < p->n_held; i++)
		ap->ctx.ops->decided(ap->ctx.owner, p, &p->held[i], allow, session, human,
				      approver);
	json_decref(p->kept);
	free(p);
	if (was_prompted)
		prompt_next(ap);
	/* The same request held apart (another binary's, sup_held.h): the no is its too. */
	while (!allow && human) {
		struct pending *q;

		for (q = ap->pending; q && strcmp(q->deny_key, deny_key); q = q->next)
			;
		if (!q)
			break;
		resolve(ap, q, false, false, approver);
	}
}

/* A held call whose caller gave up (an MCP client cancelled or left). */
void approve_withdraw(struct approvals *ap, int nr, uint64_t notif)
{
	for (struct pending *p = ap->pending; p; p = p->next) {
		for (int i = 0; i < p->n_held; i++) {
			if (p->held[i].nr != nr || p->held[i].notif != notif)
				continue;
			memmove(&p->held[i], &p->held[i + 1], (size_t)(p->n_held - i - 1) * sizeof(p->held[0]));
			p->n_held--;
			if (p->n_held == 0) {
				bool was_prompted = p->prompted && ap->prompt_active;

				unlink_pending(ap, p);
				json_decref(p->kept);
				free(p);
				if (was_prompted) {
					typed_line_end(ap);
					tty_print("withdrawn by the agent\n");
					prompt_next(ap);
				}
			}
			return;
		}
	}
}

void approve_withdraw_all(struct approvals *ap, int nr)
{
	for (struct pending *p = ap->pending, *next; p; p = next) {
		uint64_t ids[ARRAY_SIZE(p->held)];
		int k = 0;

		next = p->next;
		for (int i = 0; i < p->n_held; i++)
			if (p->held[i].nr == nr)
				ids[k++] = p->held[i].notif;
		/* The last withdrawal frees p: it is not touched after. */
		for (int i = 0; i < k; i++)
			approve_withdraw(ap, nr, ids[i]);
	}
}

int approve_wait_ms(const struct approvals *ap, int timeout)
{
	uint64_t now = mono_ms();

	for (const struct pending *q = ap->pending; q; q = q->next) {
		int left = q->deadline_ms > now ? (int)(q->deadline_ms - now) : 0;

		if (left < timeout)
			timeout = left;
	}
	return timeout;
}

bool approve_prompting(const struct approvals *ap)
{
	return ap->prompt_active;
}

void approve_end(struct approvals *ap)
{
	while (ap->pending)
		resolve(ap, ap->pending, false, false, "session ended");
	intents_free(&ap->intents);
}

void approve_tick(struct approvals *ap)
{
	uint64_t now = mono_ms();
	struct pending *p = ap->pending;

	while (p) {
		struct pending *next = p->next;

		if (now >= p->deadline_ms) {
			if (p->prompted && ap->prompt_active) {
				typed_line_end(ap);
				tty_print("timeout\n");
			}
			resolve(ap, p, ap->ctx.pol->approval_on_timeout == CORDON_ALLOW, false,
					"timeout");
		}
		p = next;
	}
}

/* A sentence being typed is dropped where the question ends otherwise (the line ends first). */
static void typed_line_end(struct approvals *ap)
{
	if (!ap->typing)
		return;
	tty_print("\n");
	ap->typing = false;
	ap->line_n = 0;
}

static struct pending *pending_by_id(struct approvals *ap, unsigned id)
{
	struct pending *p;

	for (p = ap->pending; p && p->id != id; p = p->next)
		;
	return p;
}

/*
 * Enter after `i`: the sentence is stated as an intent by the human at
 * the terminal, through the same code as `cordon intent` (approve_intent:
 * compiled with the session's variables, installed for the session,
 * every held request it covers approved).  The question is then answered
 * if the intent covers it; if not, or if the sentence does not compile,
 * it is asked again under the reason.
 */
static void tty_intent(struct approvals *ap, struct pending *p)
{
	unsigned id = p->id;
	char err[768] = "", who[48];
	int r, calls = 0;

	ap->line[ap->line_n] = '\0';
	ap->typing = false;
	tty_print("\n");
	if (!ap->line_n) {
		tty_print("[cordon] no intent stated\n");
		prompt(ap, p);
		return;
	}
	snprintf(who, sizeof(who), "tty: uid %u", (unsigned)ap->ctx.invoker);
	r = approve_intent(ap, ap->line, 0, who, err, sizeof(err), &calls);
	ap->line_n = 0;
	if (r < 0) {
		tty_print("[cordon] %s\n", err[0] ? err : strerror(-r));
	} else if ((p = pending_by_id(ap, id))) {
		tty_print("[cordon] intent %d stated (%d held call%s approved by it); "
			  "the intent does not cover this request\n", r, calls, calls == 1 ? "" : "s");
	} else {
		return;         /* approved by it (approve_intent said so), the next asked */
	}
	prompt(ap, p);
}

/*
 * One key of a sentence being typed: printable ASCII goes in (as far as
 * INTENT_LINE_MAX), Backspace takes the last back out, Enter states it;
 * every other key is ignored.  True when Enter was pressed.
 */
static bool line_key(struct approvals *ap, int c)
{
	if (c == '\r' || c == '\n')
		return true;
	if ((c == 0x7f || c == '\b') && ap->line_n) {
		ap->line_n--;
		tty_print("\b \b");
	} else if (c >= 0x20 && c < 0x7f && ap->line_n + 1 < sizeof(ap->line)) {
		ap->line[ap->line_n++] = (char)c;
		tty_print("%c", c);
	}
	return false;
}

/*
 * Keys typed at the prompt.  Every byte goes through the parser, the ones
 * after an answer too (so a report split by it stays one), but only the
 * first answer in a read counts, what follows it does not answer the next
 * question, and nothing typed in the question's first PROMPT_GRACE_MS
 * does; a key typed then starts the wait again, so a human who is typing
 * on (a sentence whose `i` came too early, a word meant for the agent)
 * answers nothing mid-word.
 *
 * `i` and a sentence: an intent stated at the terminal.  Attack: the agent
 * states "let the agent push anything" for itself through the prompt.  It
 * cannot type there: it holds no descriptor of cordon's terminal (its own
 * pty, agent_tty.c), its output is not relayed while a question is up, so
 * it cannot make the terminal answer with input, and a report in flight
 * is a control sequence, whose bytes never become keys (tty_keys_feed);
 * an ESC byte drops the sentence, so no report's text ends up in one.
 * Only printable ASCII goes in, so nothing in it can steer the terminal
 * when it is echoed or shown in `cordon pending`.  What it cannot close: a
 * human who types or pastes a sentence the agent suggested; the intent is
 * shown as stated, listed and revocable (`cordon intent --revoke`).
 */
void approve_tty_input(struct approvals *ap, const char *buf, size_t n)
{
	uint64_t now = mono_ms();
	bool early = now < ap->prompt_at + PROMPT_GRACE_MS;
	bool done = false;
	struct pending *p;

	for (p = ap->pending; p && !(p->prompted); p = p->next)
		;
	for (size_t i = 0; i < n; i++) {
		/* Only a key typed outside every control sequence answers. */
		int c = tty_keys_feed(&ap->ctx.term->keys, (unsigned char)buf[i]);
		bool allow, session = false;

		if (done || !p)
			continue;
		if (early) {
			if (c >= 0)
				ap->prompt_at = now;
			continue;
		}
		if (ap->typing) {
			if (buf[i] == 0x1b || c == 3 /* ^C */) {
				/* An ESC that ends its read is the Esc key: the next key is a key. */
				if (buf[i] == 0x1b && i + 1 == n)
					(void)tty_keys_lone_esc(&ap->ctx.term->keys);
				ap->typing = false;
				ap->line_n = 0;
				tty_print("\n[cordon] intent dropped\n");
				prompt(ap, p);
				done = true;
			} else if (line_key(ap, c)) {
				tty_intent(ap, p);
				done = true;
			}
			continue;
		}
		if (c == 'i' || c == 'I') {
			ap->typing = true;
			ap->line_n = 0;
			tty_print("intent\n[cordon] State what you want done (Enter states it, "
				  "Esc cancels): ");
			continue;
		}
		if (c == 'y' || c == 'Y')
			allow = true;
		else if (c == 's' || c == 'S')
			allow = session = true;
		else if (c == 'n' || c == 'N' || c == 3 /* ^C */)
			allow = false;
		else
			continue;
		tty_print("%s\n", allow ? (session ? "approved for this session" : "approved")
					   : "denied");
		resolve(ap, p, allow, session, "tty");
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
	 * agent's uid, which may be the invoker's), of any floor instance.
	 */
	ok = (cr.uid == 0 || cr.uid == invoker) && cr.pid != getpid() &&
	     !instance_cgroup_in_session(cg);
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

static json_t *pending_json(struct approvals *ap)
{
	json_t *a = json_array();
	uint64_t now = mono_ms();

	for (struct pending *p = ap->pending; p; p = p->next)
		json_array_append_new(a, json_pack("{s:s,s:i,s:s,s:s,s:s,s:o,s:i,s:I,s:I}",
			"session", ap->ctx.name, "id", (int)p->id, "summary", p->summary,
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
static json_t *session_json(struct approvals *ap)
{
	char cmd[512] = "", shown[512];
	size_t o = 0;

	for (char *const *a = ap->ctx.argv; a && *a && o + 1 < sizeof(cmd); a++)
		o += (size_t)snprintf(cmd + o, sizeof(cmd) - o, "%s%s", o ? " " : "", *a);
	pol_printable(shown, sizeof(shown), cmd);
	return json_pack("{s:s,s:s,s:i,s:i,s:s,s:s,s:I}", "session", ap->ctx.name,
			 "user", ap->ctx.user, "uid", (int)ap->ctx.uid,
			 "invoker", (int)ap->ctx.invoker, "workspace", ap->ctx.workspace,
			 "command", shown, "age_ms", (json_int_t)(mono_ms() - ap->ctx.started_ms));
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

static json_t *intent_cmd(struct approvals *ap, const char *cmd, json_t *req, const char *who);

void approve_accept(struct approvals *ap)
{
	int c = accept4(ap->approve_sock, NULL, NULL, SOCK_CLOEXEC);
	char buf[4096], who[64], approver[96];
	struct timeval tv = { .tv_sec = 1 };
	json_error_t jerr;
	json_t *req;
	const char *cmd;
	ssize_t n;

	if (c < 0)
		return;
	if (!host_operator(c, ap->ctx.invoker, who, sizeof(who))) {
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
		json_t *o = session_json(ap);

		json_object_set_new(o, "pending", pending_json(ap));
		json_object_set_new(o, "intents", intent_list_json(&ap->intents, mono_ms()));
		reply(c, o);
	} else if (!strcmp(cmd, "intent") || !strcmp(cmd, "intents") || !strcmp(cmd, "revoke")) {
		reply(c, intent_cmd(ap, cmd, req, approver));
	} else if (!strcmp(cmd, "stop")) {
		char by[160];
		int grace;

		snprintf(by, sizeof(by), "`cordon stop` by %s", who);
		grace = ap->ctx.ops->stop(ap->ctx.owner, SIGTERM, by);
		reply(c, json_pack("{s:b,s:i}", "ok", 1, "grace_ms", grace));
	} else if (!strcmp(cmd, "approve") || !strcmp(cmd, "deny")) {
		unsigned id = (unsigned)json_integer_value(json_object_get(req, "id"));
		struct pending *p;

		for (p = ap->pending; p && p->id != id; p = p->next)
			;
		if (!p) {
			reply(c, json_pack("{s:s}", "error", "no such pending request"));
		} else {
			bool allow = !strcmp(cmd, "approve");
			bool session = json_is_true(json_object_get(req, "session"));
			int held = p->n_held;

			if (p->prompted && ap->prompt_active) {
				typed_line_end(ap);
				tty_print("%s from another terminal\n",
					  allow ? "approved" : "denied");
			}
			resolve(ap, p, allow, allow && session, approver);
			reply(c, json_pack("{s:b,s:i}", "ok", 1, "calls", held));
		}
	} else {
		reply(c, json_pack("{s:s}", "error", "unknown command"));
	}
	json_decref(req);
	close(c);
}

/*
 * `cordon intent`: state one (and approve every held request it covers at
 * once), list the live ones, revoke one.  Only over approve.sock, so only
 * a host operator (host_operator, checked by the caller): the agent can
 * neither connect here nor type at the prompt, so it cannot state what
 * the human wants.  A request held before is judged on its recorded form
 * (p->kept); one whose arguments were cut for the record matches no rule
 * and stays held (fail closed: the human is asked).
 */
static json_t *intent_cmd(struct approvals *ap, const char *cmd, json_t *req, const char *who)
{
	if (!strcmp(cmd, "intent")) {
		const char *sentence = json_string_value(json_object_get(req, "sentence"));
		json_int_t for_s = json_integer_value(json_object_get(req, "for_s"));
		char err[768] = "";
		int id, calls = 0;

		if (!sentence || for_s < 0 || for_s > UINT32_MAX)
			return json_pack("{s:s}", "error", "bad request: expected a sentence");
		id = approve_intent(ap, sentence, (unsigned)for_s, who, err, sizeof(err), &calls);
		if (id < 0)
			return json_pack("{s:s}", "error", err[0] ? err : strerror(-id));
		return json_pack("{s:b,s:i,s:i}", "ok", 1, "id", id, "calls", calls);
	}
	if (!strcmp(cmd, "revoke")) {
		json_int_t id = json_integer_value(json_object_get(req, "id"));

		if (id <= 0 || id > UINT32_MAX ||
		    intent_revoke(&ap->intents, (unsigned)id, mono_ms()) < 0)
			return json_pack("{s:s}", "error", "no such live intent");
		return json_pack("{s:b}", "ok", 1);
	}
	return json_pack("{s:s,s:o}", "session", ap->ctx.name, "intents",
			 intent_list_json(&ap->intents, mono_ms()));
}

/* --- the event socket ------------------------------------------------------ */

void approve_events_accept(struct approvals *ap)
{
	int c = accept4(ap->events_sock, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (c < 0)
		return;
	/* Subscribers: root or the invoking user, never a task of any session. */
	if (ap->n_clients == (int)ARRAY_SIZE(ap->clients) ||
	    !host_operator(c, ap->ctx.invoker, NULL, 0)) {
		close(c);
		return;
	}
	ap->clients[ap->n_clients++] = c;
}

/* Write to every subscriber; one that cannot keep up is dropped (never blocks). */
void approve_publish(struct approvals *ap, const char *line, size_t n)
{
	for (int i = 0; i < ap->n_clients;) {
		if (send(ap->clients[i], line, n, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)n) {
			close(ap->clients[i]);
			ap->clients[i] = ap->clients[--ap->n_clients];
			continue;
		}
		i++;
	}
}
