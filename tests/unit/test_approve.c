// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The approvals (userspace/supervisor/approve.c), which own struct
 * approvals and see the loop only through struct approvals_ops: requests
 * held and batched, answered by keys on the terminal or by the timeout,
 * what a human's yes for the session and no are remembered as, the cap on
 * requests held at once, withdrawals, the session's end.  The decisions
 * arrive where the loop would apply them (sup_held_decided), recorded here.
 *
 * And who may speak to the supervisor's own sockets (host_operator) and
 * how a socket's peer is read (peer_read, base/util.c), on real Unix
 * sockets with real peers: forked children that take a uid, join a cgroup
 * under cordon's session parent, or exit before they are judged.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "approve.h"
#include "policy.h"
#include "tty_guard.h"
#include "util.h"

/* --- the requests and their answers ------------------------------------------ */

struct decision {
	pid_t pid;
	bool allow, session, human;
	char approver[96];
};

static struct decision got[SUP_MAX_PENDING + 8];
static int n_got;

static void decided(struct sup *s, const struct pending *p, struct held *h, bool allow,
		    bool session, bool human, const char *approver)
{
	(void)s;
	(void)p;
	assert_true(n_got < (int)(sizeof(got) / sizeof(got[0])));
	got[n_got++] = (struct decision){ h->pid, allow, session, human, "" };
	snprintf(got[n_got - 1].approver, sizeof(got[0].approver), "%s", approver);
}

static int stopped(struct sup *s, int sig, const char *by)
{
	(void)s;
	(void)sig;
	(void)by;
	return 0;
}

static const struct approvals_ops ops = { .decided = decided, .stop = stopped };

struct fixture {
	struct approvals ap;
	struct terminal term;
	struct policy pol;
	struct pol_vars vars;
};

/* Approvals as the loop wires them (sup_wire), asking on a terminal or through the socket. */
static struct approvals *fixture(struct fixture *f, enum approve_mode mode, uint32_t on_timeout)
{
	memset(f, 0, sizeof(*f));
	n_got = 0;
	f->pol.approval_timeout_s = 60;
	f->pol.approval_on_timeout = on_timeout;
	f->term = (struct terminal){ .tty_fd = mode == APPROVE_TTY ? 0 : -1, .pty_master = -1,
				     .pty_out = -1, .term_fd = -1 };
	f->ap.approve_sock = f->ap.events_sock = -1;
	f->ap.ctx = (struct approvals_ctx){ .name = "stest", .run_dir = "/nonexistent",
					    .pol = &f->pol, .mode = mode, .quiet = true,
					    .term = &f->term, .ops = &ops };
	return &f->ap;
}

static json_t *event(const char *cmd)
{
	return json_pack("{s:s,s:{s:s}}", "tool", "shell.exec", "arguments", "command", cmd);
}

static int hold(struct approvals *ap, pid_t pid, json_t *ev, const char *binary)
{
	struct held h = { .pid = pid, .nr = 59 };

	return approve_hold(ap, &h, ev, NULL, binary, "git push", "push", "a push");
}

static int n_pending(const struct approvals *ap)
{
	int n = 0;

	for (const struct pending *p = ap->pending; p; p = p->next)
		n++;
	return n;
}

/*
 * What the approvals write on cordon's terminal (stderr) goes to a memfd
 * for the test, then stderr is given back, the test failed or not.
 */
static int saved_stderr = -1, said_fd = -1;

static int capture_stderr(void **state)
{
	(void)state;
	fflush(stderr);
	said_fd = memfd_create("said", MFD_CLOEXEC);
	saved_stderr = dup(STDERR_FILENO);
	return said_fd < 0 || saved_stderr < 0 || dup2(said_fd, STDERR_FILENO) < 0 ? -1 : 0;
}

static int restore_stderr(void **state)
{
	(void)state;
	(void)dup2(saved_stderr, STDERR_FILENO);
	close(saved_stderr);
	close(said_fd);
	return 0;
}

/* Was TEXT written on the terminal? */
static bool said(const char *text)
{
	char buf[16384];
	ssize_t n = pread(said_fd, buf, sizeof(buf) - 1, 0);

	buf[n > 0 ? n : 0] = '\0';
	return strstr(buf, text) != NULL;
}

/* The question was asked long enough ago for a key to answer it (PROMPT_GRACE_MS). */
static void type(struct approvals *ap, const char *keys)
{
	ap->prompt_at = 0;
	approve_tty_input(ap, keys, strlen(keys));
}

/* Identical requests share one answer; the same event from another binary is asked apart. */
static void batched_answered_once(void **state)
{
	struct fixture f;
	struct approvals *ap = fixture(&f, APPROVE_TTY, CORDON_DENY);
	json_t *ev = event("git push");

	(void)state;
	assert_int_equal(hold(ap, 1, ev, "/usr/bin/git"), 0);
	assert_int_equal(hold(ap, 2, ev, "/usr/bin/git"), 0);
	assert_int_equal(hold(ap, 3, ev, "/tmp/git"), 0);
	assert_int_equal(n_pending(ap), 2);
	assert_true(approve_prompting(ap));
	/* Asked once, oldest first, with what, which rule, why, how many wait. */
	assert_true(said("The agent asks to: git push\r\n"));
	assert_true(said("rule: push - a push"));
	assert_true(said("waiting: 1 call; answer within 60 s or: deny"));
	type(ap, "y");
	assert_true(said("? approved\r\n"));
	assert_int_equal(n_got, 2);
	assert_true(got[0].pid == 1 && got[1].pid == 2);
	assert_true(got[0].allow && !got[0].session && got[0].human);
	assert_string_equal(got[0].approver, "tty");
	/* Once, not for the session; the other binary's request is asked next. */
	assert_false(approve_session_approved(ap, ev, "/usr/bin/git"));
	assert_int_equal(n_pending(ap), 1);
	assert_true(approve_prompting(ap));
	type(ap, "s");
	assert_int_equal(n_got, 3);
	assert_true(got[2].pid == 3 && got[2].allow && got[2].session);
	assert_true(approve_session_approved(ap, ev, "/tmp/git"));
	assert_false(approve_session_approved(ap, ev, "/usr/bin/git"));
	assert_false(approve_prompting(ap));
	json_decref(ev);
}

/*
 * A key typed within PROMPT_GRACE_MS of the question does not answer it,
 * and starts the wait again: typing on answers nothing.
 */
static void keys_too_early_ignored(void **state)
{
	struct fixture f;
	struct approvals *ap = fixture(&f, APPROVE_TTY, CORDON_DENY);
	json_t *ev = event("rm -rf /");

	(void)state;
	assert_int_equal(hold(ap, 1, ev, NULL), 0);
	approve_tty_input(ap, "y", 1);
	assert_int_equal(n_got, 0);
	ap->prompt_at = mono_ms() - PROMPT_GRACE_MS + 200;
	approve_tty_input(ap, "x", 1);
	assert_true(ap->prompt_at + PROMPT_GRACE_MS > mono_ms() + 900);
	approve_tty_input(ap, "\x1b[M#ys", 6);          /* a report is no key: the wait goes on */
	assert_int_equal(n_got, 0);
	/* Only the first answer of a read counts. */
	type(ap, "nyyy");
	assert_int_equal(n_got, 1);
	assert_false(got[0].allow);
	json_decref(ev);
}

/*
 * A human's no is final for the request: the same event held apart (another
 * binary's, a PATH retry) is refused with it, and it is remembered.
 */
static void denial_kept_for_the_request(void **state)
{
	struct fixture f;
	struct approvals *ap = fixture(&f, APPROVE_TTY, CORDON_DENY);
	json_t *ev = event("curl evil"), *other = event("curl good");

	(void)state;
	assert_int_equal(hold(ap, 1, ev, "/usr/local/bin/curl"), 0);
	assert_int_equal(hold(ap, 2, ev, "/usr/bin/curl"), 0);
	assert_int_equal(hold(ap, 3, other, "/usr/bin/curl"), 0);
	assert_int_equal(n_pending(ap), 3);
	type(ap, "n");
	assert_int_equal(n_got, 2);
	assert_true(!got[0].allow && got[0].human && !got[1].allow && got[1].human);
	assert_true((got[0].pid == 1 && got[1].pid == 2) || (got[0].pid == 2 && got[1].pid == 1));
	assert_true(approve_human_denied(ap, ev));
	assert_false(approve_human_denied(ap, other));
	assert_int_equal(n_pending(ap), 1);
	json_decref(ev);
	json_decref(other);
}

/* The policy's on_timeout answers a request nobody answered; it is not a human's no. */
static void timeout_is_not_a_denial(void **state)
{
	struct fixture f;
	struct approvals *ap = fixture(&f, APPROVE_SOCKET, CORDON_DENY);
	json_t *ev = event("make deploy");

	(void)state;
	assert_int_equal(hold(ap, 1, ev, NULL), 0);
	assert_true(approve_wait_ms(ap, 1000000) > 50000);
	approve_tick(ap);
	assert_int_equal(n_got, 0);
	ap->pending->deadline_ms = 0;
	assert_int_equal(approve_wait_ms(ap, 1000), 0);
	approve_tick(ap);
	assert_int_equal(n_got, 1);
	assert_true(!got[0].allow && !got[0].human);
	assert_string_equal(got[0].approver, "timeout");
	assert_false(approve_human_denied(ap, ev));
	assert_null(ap->pending);

	ap = fixture(&f, APPROVE_SOCKET, CORDON_ALLOW);
	assert_int_equal(hold(ap, 1, ev, NULL), 0);
	ap->pending->deadline_ms = 0;
	approve_tick(ap);
	assert_true(n_got == 1 && got[0].allow && !got[0].session);
	json_decref(ev);
}

/* At most SUP_MAX_PENDING distinct requests wait; the session's end refuses them all. */
static void capped_and_ended(void **state)
{
	struct fixture f;
	struct approvals *ap = fixture(&f, APPROVE_SOCKET, CORDON_ALLOW);
	char cmd[32];

	(void)state;
	for (int i = 0; i < SUP_MAX_PENDING; i++) {
		json_t *ev;

		snprintf(cmd, sizeof(cmd), "job %d", i);
		ev = event(cmd);
		assert_int_equal(hold(ap, i + 1, ev, NULL), 0);
		json_decref(ev);
	}
	{
		json_t *ev = event("one more"), *same = event("job 7");

		assert_int_equal(hold(ap, 999, ev, NULL), -EAGAIN);
		assert_int_equal(hold(ap, 1000, same, NULL), 0);    /* batched: not a new one */
		json_decref(ev);
		json_decref(same);
	}
	assert_int_equal(n_pending(ap), SUP_MAX_PENDING);
	approve_end(ap);
	assert_null(ap->pending);
	assert_int_equal(n_got, SUP_MAX_PENDING + 1);
	for (int i = 0; i < n_got; i++)
		assert_true(!got[i].allow && !got[i].human &&
			    !strcmp(got[i].approver, "session ended"));
}

/* Held calls withdrawn (a client gave up): dropped unanswered; the request goes with its last. */
static void withdrawn(void **state)
{
	struct fixture f;
	struct approvals *ap = fixture(&f, APPROVE_SOCKET, CORDON_DENY);
	json_t *ev = event("tools/call");
	struct held a = { .pid = 5, .nr = HELD_MCP, .notif = 7 }, b = a;

	(void)state;
	b.notif = 8;
	assert_int_equal(approve_hold(ap, &a, ev, NULL, NULL, "a tool", NULL, "risk"), 0);
	assert_int_equal(approve_hold(ap, &b, ev, NULL, NULL, "a tool", NULL, "risk"), 0);
	assert_int_equal(ap->pending->n_held, 2);
	approve_withdraw(ap, HELD_HTTP, 7);                     /* another helper's: nothing */
	assert_int_equal(ap->pending->n_held, 2);
	approve_withdraw(ap, HELD_MCP, 7);
	assert_int_equal(ap->pending->n_held, 1);
	assert_true(ap->pending->held[0].notif == 8);
	approve_withdraw_all(ap, HELD_MCP);
	assert_null(ap->pending);
	assert_int_equal(n_got, 0);
	json_decref(ev);
}

/* --- intents at the prompt ------------------------------------------------------- */

/*
 * The session's variables as its policy loader resolved them: an agent's
 * home and a TMPDIR that are not this process's (the test runs as root,
 * HOME /root, TMPDIR /tmp).
 */
static void session_vars(struct fixture *f)
{
	assert_int_equal(pol_vars_set(&f->vars, "WORKSPACE", "/srv/ws"), 0);
	assert_int_equal(pol_vars_set(&f->vars, "HOME", "/home/agentx"), 0);
	assert_int_equal(pol_vars_set(&f->vars, "USER", "agentx"), 0);
	assert_int_equal(pol_vars_set(&f->vars, "UID", "4242"), 0);
	assert_int_equal(pol_vars_set(&f->vars, "TMPDIR", "/var/tmp/sess"), 0);
	f->ap.ctx.vars = &f->vars;
}

static void fixture_end(struct fixture *f)
{
	approve_end(&f->ap);
	pol_vars_free(&f->vars);
}

static int hold_read(struct approvals *ap, pid_t pid, const char *path)
{
	json_t *ev = pol_event_fs("read_file", path, NULL);
	struct held h = { .pid = pid, .nr = 257 };
	int r = approve_hold(ap, &h, ev, NULL, NULL, path, "ask-read", "a read");

	json_decref(ev);
	return r;
}

/* How many times TEXT was written on the terminal. */
static int said_n(const char *text)
{
	static char buf[65536];
	ssize_t n = pread(said_fd, buf, sizeof(buf) - 1, 0);
	int k = 0;

	buf[n > 0 ? n : 0] = '\0';
	for (const char *c = buf; (c = strstr(c, text)); c += strlen(text))
		k++;
	return k;
}

/*
 * `i`, a sentence, Enter: stated as an intent by the terminal, with the
 * session's variables ("~" is the agent's home), and the question it
 * covers approved with the intent as its approver.  Backspace edits.
 */
static void intent_typed_covers(void **state)
{
	struct fixture f;
	struct approvals *ap = fixture(&f, APPROVE_TTY, CORDON_DENY);

	(void)state;
	session_vars(&f);
	assert_int_equal(hold_read(ap, 1, "/home/agentx/notes.txt"), 0);
	assert_true(said("state an intent [i]? "));
	type(ap, "i");
	assert_true(ap->typing);
	assert_int_equal(n_got, 0);
	/* Split across reads, as a terminal delivers it; a typo taken back. */
	approve_tty_input(ap, "let the agent read ~/notez", 26);
	approve_tty_input(ap, "\x7fs.txt", 6);
	assert_int_equal(n_got, 0);
	assert_true(said("read ~/notez\b \bs.txt"));
	approve_tty_input(ap, "\r", 1);
	assert_int_equal(n_got, 1);
	assert_true(got[0].allow && !got[0].session && got[0].human);
	assert_non_null(strstr(got[0].approver,
			       "intent 1: let the agent read ~/notes.txt (stated by tty: uid 0 at "));
	assert_true(said("approved by intent 1\r\n"));
	assert_false(approve_prompting(ap));
	assert_false(ap->typing);
	/* Installed for the session: the same read later is approved unasked. */
	assert_int_equal(hold_read(ap, 2, "/home/agentx/notes.txt"), 0);
	assert_int_equal(n_got, 2);
	assert_true(got[1].allow && got[1].pid == 2);
	assert_int_equal(said_n("The agent asks to"), 1);
	fixture_end(&f);
}

/*
 * An intent that does not cover the question: stated (and listed), the
 * question asked again under why; one that does not compile: the
 * compiler's error, nothing stated, asked again.  Then y still answers.
 */
static void intent_typed_not_covering(void **state)
{
	struct fixture f;
	struct approvals *ap = fixture(&f, APPROVE_TTY, CORDON_DENY);
	json_t *l;

	(void)state;
	session_vars(&f);
	assert_int_equal(hold_read(ap, 1, "/home/agentx/notes.txt"), 0);
	assert_int_equal(hold_read(ap, 2, "/home/agentx/other.txt"), 0);
	type(ap, "ilet the agent read ~/other.txt\r");
	/* The other read (not asked yet) is approved by it; the question is not. */
	assert_int_equal(n_got, 1);
	assert_true(got[0].pid == 2 && got[0].allow);
	assert_true(said("intent 1 stated (1 held call approved by it); "
			 "the intent does not cover this request\r\n"));
	assert_int_equal(said_n("The agent asks to: /home/agentx/notes.txt"), 2);
	assert_true(approve_prompting(ap));
	l = intent_list_json(&ap->intents, 0);
	assert_int_equal(json_array_size(l), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(l, 0), "approver")),
			    "tty: uid 0");
	json_decref(l);
	/* Keys right after the question is asked again do not count (PROMPT_GRACE_MS). */
	approve_tty_input(ap, "y", 1);
	assert_int_equal(n_got, 1);
	type(ap, "ifrobnicate the flux\r");
	assert_true(said("cannot read the intent"));
	assert_int_equal(ap->intents.n, 1);
	assert_int_equal(said_n("The agent asks to: /home/agentx/notes.txt"), 3);
	/* Enter on nothing states nothing. */
	type(ap, "i\r");
	assert_true(said("no intent stated"));
	assert_int_equal(ap->intents.n, 1);
	type(ap, "n");
	assert_int_equal(n_got, 2);
	assert_true(!got[1].allow && got[1].pid == 1 && !strcmp(got[1].approver, "tty"));
	fixture_end(&f);
}

/*
 * Esc and Ctrl-C drop the sentence (the request is not denied), and so
 * does any ESC byte: a terminal report or a mouse report arriving while
 * the human types never becomes part of a sentence.  Only printable ASCII
 * goes in; what a parser swallows (UTF-8, a C1 CSI) does not.
 */
static void intent_typed_dropped(void **state)
{
	struct fixture f;
	struct approvals *ap = fixture(&f, APPROVE_TTY, CORDON_DENY);

	(void)state;
	session_vars(&f);
	assert_int_equal(hold_read(ap, 1, "/home/agentx/notes.txt"), 0);
	type(ap, "ilet the agent read ~/notes.txt\x1b");
	assert_false(ap->typing);
	assert_true(said("intent dropped"));
	/* That Esc was the key alone (its read ended there): the next key is not Alt-key. */
	type(ap, "i\x1b");
	assert_true(said_n("intent dropped") == 2);
	type(ap, "\r");
	assert_int_equal(n_got, 0);
	assert_int_equal(ap->intents.n, 0);
	type(ap, "ilet the agent\x03");
	assert_false(ap->typing);
	assert_int_equal(n_got, 0);
	/* A mouse report whose raw bytes spell " ~/notes.txt\r": dropped at its ESC. */
	type(ap, "ilet the agent read");
	approve_tty_input(ap, "\x1b[M ~/notes.txt\r", 16);
	assert_false(ap->typing);
	assert_int_equal(n_got, 0);
	assert_int_equal(ap->intents.n, 0);
	/* Non-ASCII and 8-bit sequences: nothing of them goes in. */
	type(ap, "ilet the agent read ~/no\xc3\xa9\x9b" "1;2Rtes.txt\r");
	assert_int_equal(n_got, 1);
	assert_true(got[0].allow);
	assert_non_null(strstr(got[0].approver, "intent 1: let the agent read ~/notes.txt ("));
	fixture_end(&f);
}

/* The question ends while a sentence is typed (the timeout): the sentence goes with it. */
static void intent_typed_question_ends(void **state)
{
	struct fixture f;
	struct approvals *ap = fixture(&f, APPROVE_TTY, CORDON_DENY);

	(void)state;
	session_vars(&f);
	assert_int_equal(hold_read(ap, 1, "/home/agentx/notes.txt"), 0);
	type(ap, "ilet the agent read ~/no");
	ap->pending->deadline_ms = 0;
	approve_tick(ap);
	assert_int_equal(n_got, 1);
	assert_false(got[0].allow);
	assert_true(said("~/no\r\ntimeout\r\n"));
	assert_false(ap->typing);
	assert_int_equal(ap->line_n, 0);
	/* The next question starts with no sentence. */
	assert_int_equal(hold_read(ap, 2, "/home/agentx/notes.txt"), 0);
	type(ap, "t.txt\r");
	assert_int_equal(n_got, 1);
	assert_false(ap->typing);
	assert_int_equal(ap->intents.n, 0);
	fixture_end(&f);
}

/*
 * An intent means what its words mean in the session: "~", "my home" and
 * "the temporary directory" are the session policy's HOME and TMPDIR, not
 * the supervisor's (root's /root, /tmp).  Without the session's variables
 * nothing is stated (fail closed).
 */
static void intent_session_vars(void **state)
{
	struct fixture f;
	struct approvals *ap = fixture(&f, APPROVE_SOCKET, CORDON_DENY);
	char err[512] = "";
	int calls = -1;

	(void)state;
	assert_int_equal(hold_read(ap, 1, "/root/notes.txt"), 0);
	assert_int_equal(approve_intent(ap, "let the agent read ~/notes.txt", 0, "socket", err,
					sizeof(err), &calls), -EINVAL);
	assert_string_equal(err, "intent: the session's policy variables are not known");
	assert_int_equal(ap->intents.n, 0);
	session_vars(&f);
	assert_int_equal(hold_read(ap, 2, "/home/agentx/notes.txt"), 0);
	assert_int_equal(hold_read(ap, 3, "/home/agentx/sub/deep.txt"), 0);
	assert_int_equal(hold_read(ap, 4, "/var/tmp/sess/build.log"), 0);
	assert_int_equal(hold_read(ap, 5, "/tmp/build.log"), 0);
	assert_int_equal(approve_intent(ap, "let the agent read ~/notes.txt", 0, "socket", err,
					sizeof(err), &calls), 1);
	assert_int_equal(calls, 1);
	assert_true(n_got == 1 && got[0].pid == 2 && got[0].allow);
	assert_int_equal(approve_intent(ap, "let the agent read my home", 0, "socket", err,
					sizeof(err), &calls), 2);
	assert_int_equal(calls, 1);
	assert_true(n_got == 2 && got[1].pid == 3);
	assert_int_equal(approve_intent(ap, "let the agent read the temporary directory", 0,
					"socket", err, sizeof(err), &calls), 3);
	assert_int_equal(calls, 1);
	assert_true(n_got == 3 && got[2].pid == 4);
	/* root's /root/notes.txt and the host's /tmp stay held. */
	assert_int_equal(n_pending(ap), 2);
	fixture_end(&f);
}

/* --- who may speak to the sockets --------------------------------------------- */

#define OTHER_UID 4242

struct peer {
	int fd;                 /* the accepted end */
	pid_t pid;              /* the child on the other end */
};

/*
 * A child that takes `uid` and connects to a listener of this process,
 * then is moved into `cg`, if given; it stays until its end is closed, or
 * exits at once when `leave`.  The accepted end in p->fd: 0, or -1 (the test fails).
 */
static int peer_start(struct peer *p, uid_t uid, const char *cg, bool leave)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	socklen_t al = offsetof(struct sockaddr_un, sun_path) + 1 +
		(socklen_t)snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, "cordon-test-peer-%d",
				    (int)getpid());
	int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	char c;

	if (l < 0 || bind(l, (struct sockaddr *)&a, al) < 0 || listen(l, 1) < 0)
		return -1;
	p->pid = fork();
	if (p->pid == 0) {
		int s;

		if (setresuid(uid, uid, uid) < 0)
			_exit(3);
		s = socket(AF_UNIX, SOCK_STREAM, 0);
		if (s < 0 || connect(s, (struct sockaddr *)&a, al) < 0)
			_exit(4);
		if (write(s, "r", 1) != 1)
			_exit(5);
		if (!leave)
			c = read(s, &c, 1) < 0;
		_exit(0);
	}
	/* A child that failed before its connect is not waited for. */
	p->fd = p->pid > 0 && poll(&(struct pollfd){ .fd = l, .events = POLLIN }, 1, 5000) == 1 ?
		accept4(l, NULL, NULL, SOCK_CLOEXEC) : -1;
	close(l);
	/*
	 * Connected when its byte arrives; then into the session's cgroup (a
	 * stray cgroup under cordon's parent may not connect at all, the
	 * network floor sees to that; the cgroup judged is the peer's now).
	 */
	if (p->fd >= 0 && (poll(&(struct pollfd){ .fd = p->fd, .events = POLLIN }, 1, 5000) != 1 ||
			   read(p->fd, &c, 1) != 1 || (cg && cg_attach_pid(cg, p->pid) < 0))) {
		close(p->fd);
		p->fd = -1;
	}
	if (p->fd < 0 && p->pid > 0) {
		kill(p->pid, SIGKILL);
		(void)waitpid(p->pid, NULL, 0);
	}
	return p->fd < 0 ? -1 : 0;
}

/* Close the accepted end, reap the child: its exit status (0: it ran as asked). */
static int peer_end(struct peer *p)
{
	int st = 0;

	close(p->fd);
	if (waitpid(p->pid, &st, 0) != p->pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* This very process, as the supervisor's Unix worker would be: refused, whoever it claims to be. */
static void own_process_refused(void **state)
{
	int sv[2];
	struct ucred cr;
	char *cg = NULL, who[64] = "", want[64];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(peer_read(sv[0], &cr, &cg), 0);
	assert_int_equal(cr.pid, getpid());
	assert_non_null(cg);
	free(cg);
	assert_false(host_operator(sv[0], getuid(), who, sizeof(who)));
	assert_false(host_operator(sv[0], 0, NULL, 0));
	snprintf(want, sizeof(want), "uid %u (pid %d)", (unsigned)getuid(), (int)getpid());
	assert_string_equal(who, want);
	close(sv[0]);
	close(sv[1]);
}

/* Host root and the invoking user are admitted; any other user is not. */
static void users(void **state)
{
	struct peer p;
	char who[64];

	(void)state;
	if (geteuid() != 0)
		skip();
	assert_int_equal(peer_start(&p, 0, NULL, false), 0);
	assert_true(host_operator(p.fd, OTHER_UID, who, sizeof(who)));
	assert_non_null(strstr(who, "uid 0 (pid "));
	assert_int_equal(peer_end(&p), 0);

	assert_int_equal(peer_start(&p, OTHER_UID, NULL, false), 0);
	assert_false(host_operator(p.fd, 0, NULL, 0));
	assert_false(host_operator(p.fd, OTHER_UID + 1, NULL, 0));
	assert_true(host_operator(p.fd, OTHER_UID, NULL, 0));
	assert_int_equal(peer_end(&p), 0);
}

/* A task of a cordon session (a cgroup below cordon's parent) is refused, root or not. */
static void session_task_refused(void **state)
{
	char parent[4096], cg[4200];
	struct peer p;
	uint64_t id;
	uint32_t level;

	(void)state;
	if (geteuid() != 0 || cg_session_parent(parent, sizeof(parent), &level, &id) < 0)
		skip();
	snprintf(cg, sizeof(cg), "%s/unit-peer-%d", parent, (int)getpid());
	assert_int_equal(cg_mkdir(cg), 0);
	assert_int_equal(peer_start(&p, 0, cg, false), 0);
	assert_false(host_operator(p.fd, 0, NULL, 0));
	assert_int_equal(peer_end(&p), 0);
	assert_int_equal(peer_start(&p, OTHER_UID, cg, false), 0);
	assert_false(host_operator(p.fd, OTHER_UID, NULL, 0));
	assert_int_equal(peer_end(&p), 0);
	assert_int_equal(cg_destroy(cg), 0);
}

/*
 * A session's Unix connector (a cgroup below cordon's "-unix" parent) is
 * refused, with the invoker's uid too: it connects as the agent, and the
 * agent may run as the invoker.
 */
static void unix_connector_refused(void **state)
{
	char parent[4096], up[4200], cg[4300];
	struct peer p;
	uint64_t id;
	uint32_t level;
	bool made;

	(void)state;
	if (geteuid() != 0 || cg_session_parent(parent, sizeof(parent), &level, &id) < 0)
		skip();
	snprintf(up, sizeof(up), "%s-unix", parent);
	made = mkdir(up, 0755) == 0;
	assert_true(made || errno == EEXIST);
	snprintf(cg, sizeof(cg), "%s/unit-peer-%d", up, (int)getpid());
	assert_int_equal(cg_mkdir(cg), 0);
	assert_int_equal(peer_start(&p, OTHER_UID, cg, false), 0);
	assert_false(host_operator(p.fd, OTHER_UID, NULL, 0));
	assert_int_equal(peer_end(&p), 0);
	assert_int_equal(cg_destroy(cg), 0);
	if (made)
		(void)rmdir(up);
}

/*
 * A peer that has exited (and been reaped) before it is judged: its pid
 * may belong to anyone by now, so it is refused, not read.
 */
static void gone_peer_refused(void **state)
{
	struct peer p;
	struct ucred cr;
	char *cg = NULL;
	int st;

	(void)state;
	if (geteuid() != 0)
		skip();
	assert_int_equal(peer_start(&p, 0, NULL, true), 0);
	assert_int_equal(waitpid(p.pid, &st, 0), p.pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_true(peer_read(p.fd, &cr, &cg) < 0);
	assert_null(cg);
	assert_false(host_operator(p.fd, 0, NULL, 0));
	close(p.fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(batched_answered_once, capture_stderr,
						restore_stderr),
		cmocka_unit_test_setup_teardown(keys_too_early_ignored, capture_stderr,
						restore_stderr),
		cmocka_unit_test_setup_teardown(denial_kept_for_the_request, capture_stderr,
						restore_stderr),
		cmocka_unit_test(timeout_is_not_a_denial),
		cmocka_unit_test(capped_and_ended),
		cmocka_unit_test(withdrawn),
		cmocka_unit_test_setup_teardown(intent_typed_covers, capture_stderr, restore_stderr),
		cmocka_unit_test_setup_teardown(intent_typed_not_covering, capture_stderr,
						restore_stderr),
		cmocka_unit_test_setup_teardown(intent_typed_dropped, capture_stderr, restore_stderr),
		cmocka_unit_test_setup_teardown(intent_typed_question_ends, capture_stderr,
						restore_stderr),
		cmocka_unit_test(intent_session_vars),
		cmocka_unit_test(own_process_refused),
		cmocka_unit_test(users),
		cmocka_unit_test(session_task_refused),
		cmocka_unit_test(unix_connector_refused),
		cmocka_unit_test(gone_peer_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
