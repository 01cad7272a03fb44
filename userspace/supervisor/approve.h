/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The approval channels: a human's terminal, `cordon approve`, and the
 * session's event socket (approve.c).  The module owns struct approvals
 * and reads nothing of the session but its context (struct approvals_ctx,
 * wired by the loop, sup_wire); what it decides, the loop applies, through
 * struct approvals_ops.  struct sup is opaque here: the compiler refuses a
 * reach into it.  Main loop only; approve_publish under the lock that
 * serialises the session's records (s->lock).
 */
#ifndef CORDON_APPROVE_H
#define CORDON_APPROVE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>

#include "cordon.h"
#include "intent.h"

struct sup;
struct policy;
struct pol_vars;
struct terminal;

enum approve_mode {
	APPROVE_TTY = 0,
	APPROVE_SOCKET,
	APPROVE_DENY,
};

/*
 * struct held.nr of an operation held by a helper of the session (notif:
 * its hold id): a tools/call in the MCP proxy, a request in the egress
 * broker.
 */
#define HELD_MCP (-1)
#define HELD_HTTP (-2)

/* One escalated operation held while a human decides. */
struct pending {
	struct pending *next;
	unsigned id;                    /* shown to humans */
	/*
	 * The SHA-256 of the canonical semantic event, whole (pol_json_sha256):
	 * identical requests are batched under one answer, and "approved for
	 * this session" is kept as this key.  Whole, because one cut at 1 KB
	 * never matched again, so such an approval of a long request did not
	 * hold, and one compared cut would let a request that differs after
	 * the cut ride on another's approval; a digest, because the event
	 * itself may be megabytes (see SUP_MAX_PENDING).
	 */
	char key[65];
	/*
	 * The same, of the event alone (an exec's binary left out): what a
	 * human's denial is remembered as (resolve in approve.c, approve_human_denied).
	 */
	char deny_key[65];
	char summary[1024];
	char rule[128];
	char risk[512];
	json_t *kept;                   /* the event as shown and recorded (bounded) */
	uint64_t deadline_ms;           /* CLOCK_MONOTONIC */
	uint64_t created_ms;            /* CLOCK_MONOTONIC: its age, for `cordon pending` */
	/* The held notifications (identical requests are batched here). */
	struct held {
		uint64_t notif;
		pid_t pid;
		int nr;
		uint64_t args[6];
		unsigned char addr[128];        /* connect: the address as read */
		uint32_t addrlen;
		char path[PATH_MAX];            /* open: the canonical path judged */
		int oflags;
		unsigned omode;
		struct cordon_exec_expect exec; /* exec: what the kernel must receive */
		char summary[128];              /* exec: the judged argv, for a kill's record */
	} held[16];
	int n_held;
	bool prompted;
};

/*
 * What the approvals ask of the loop (supervisor.c fills it), with the
 * loop's state (struct approvals_ctx.owner) as first argument.
 */
struct approvals_ops {
	/*
	 * A decision on one held call H of request P (sup_held_decided): record
	 * it, tell a refused caller why, let the call go on or refuse it.
	 * SESSION: approved for the rest of the session; HUMAN: a person
	 * answered (not the timeout, not the session's end).
	 */
	void (*decided)(struct sup *s, const struct pending *p, struct held *h, bool allow,
			bool session, bool human, const char *approver);
	/* `cordon stop` (sup_stop); returns the ms the session has to exit before it is killed. */
	int (*stop)(struct sup *s, int sig, const char *by);
};

/*
 * What the approvals read of the session: set once by the loop (sup_wire)
 * before approve_listen, from facts that do not change after; the strings
 * and the terminal are the session's own, alive as long as it.
 */
struct approvals_ctx {
	const char *name;               /* the session's: `cordon approve NAME:ID`, the listing */
	const char *run_dir;            /* where approve.sock and events.sock are made */
	uid_t invoker;                  /* who may approve (host_operator) */
	const struct policy *pol;       /* approval_timeout_s, approval_on_timeout */
	/*
	 * The session policy's variables, as its loader resolved them
	 * (policy_load_session: the agent's WORKSPACE, HOME, USER, UID, the
	 * session's TMPDIR, then every --var): what an intent's sentence
	 * names ("my home", "~/notes", "the temporary directory") means what
	 * it means in the session, never the supervisor's own environment.
	 */
	const struct pol_vars *vars;
	enum approve_mode mode;         /* --approve: a prompt on the terminal, or the socket */
	bool quiet;                     /* --quiet: no "held #N" line */
	struct terminal *term;          /* cordon's terminal and the agent's (tty_guard.h) */
	/* What `cordon pending` says of the session. */
	const char *user;
	uid_t uid;
	const char *workspace;
	char *const *argv;              /* the agent's command as the human typed it */
	uint64_t started_ms;
	const struct approvals_ops *ops;
	struct sup *owner;              /* handed back to ops, never read here */
};

/* The longest sentence typed at the prompt, with its terminating NUL (struct intent.sentence). */
#define INTENT_LINE_MAX 512

/* The approval channels and the requests held for a human (approve.c). */
struct approvals {
	struct approvals_ctx ctx;
	int approve_sock;
	int events_sock;
	int clients[16];                /* event subscribers */
	int n_clients;
	struct pending *pending;
	unsigned next_pending;
	/*
	 * What a human stated (`cordon intent`, `i` at the prompt) and every
	 * "approve for this session" (an intent of that request's key): a
	 * held request one covers is approved with it as the approver.
	 */
	struct intents intents;
	char **denied;                  /* deny_key of every request a human denied */
	size_t n_denied;
	bool prompt_active;             /* the agent's output waits meanwhile (tty_guard.c) */
	uint64_t prompt_at;             /* when the question was written (PROMPT_GRACE_MS) */
	/*
	 * `i` at the prompt: the sentence being typed (printable ASCII), until
	 * Enter states it (approve_intent, as `cordon intent` does), or Esc,
	 * Ctrl-C or the question's end drops it.
	 */
	bool typing;
	size_t line_n;
	char line[INTENT_LINE_MAX];
};

/*
 * Requests held for a human at once (distinct ones: identical requests
 * share one).  Attack: an agent holds many distinct escalated requests,
 * each with megabytes of arguments (an exec's argv up to 6 MiB, built once
 * and shared by its forks), and the supervisor, which runs outside the
 * session's memory budget, keeps a copy of each: a small agent makes the
 * host's root process take gigabytes.  A held request keeps only its
 * bounded record form (64 KiB of arguments at most, then a digest) and the
 * SHA-256 key of the whole event; past SUP_MAX_PENDING the next one is
 * refused at once and recorded as such.
 */
#define SUP_MAX_PENDING 256

/*
 * Keys typed within this long of a question do not answer it.  Attack:
 * the agent reads what the human types to it, so it can raise a question
 * just as the human is about to press y or s in some other word ("yes",
 * "this"): the key meant for the agent would approve.  A second is as
 * long as browsers keep their security dialogs' buttons off, for the same
 * reason; a human reads the question for longer than that anyway.
 */
#define PROMPT_GRACE_MS 1000


/* Make approve.sock and events.sock in the run directory (logged); 0 or -errno. */
int approve_listen(struct approvals *ap);
/* A client on approve.sock: `cordon pending`, `approve`, `deny`, `stop`. */
void approve_accept(struct approvals *ap);
/* A subscriber on events.sock (a host operator; a full list refuses it). */
void approve_events_accept(struct approvals *ap);
/* LINE (N bytes, its newline in) to every subscriber; one that cannot keep up is dropped. */
void approve_publish(struct approvals *ap, const char *line, size_t n);

/*
 * Hold an escalated operation for a human (sup_hold says what the
 * arguments are, sup_held.h what "the same request" is): a new request,
 * asked at once on the terminal or announced, or one more call batched
 * into an identical one.  0; -EAGAIN past SUP_MAX_PENDING, -ENOMEM: not
 * held (the caller refuses it).
 */
int approve_hold(struct approvals *ap, const struct held *h, json_t *event, json_t *kept,
		 const char *binary, const char *summary, const char *rule, const char *risk);
/*
 * Approved for this session (a live intent of its key), or denied by a
 * human before: answered unasked.  An intent stated as a sentence is asked
 * in approve_hold, which approves what it covers at once, recorded with the
 * intent as approver.
 */
bool approve_session_approved(struct approvals *ap, json_t *event, const char *binary);
bool approve_human_denied(struct approvals *ap, json_t *event);

/*
 * State an intent for this session (WHO: the approver as recorded) and
 * approve every held request it covers (*calls: how many calls went on).
 * The intent's id, or -EINVAL (ERR says why: the compiler's message) or
 * -ENOMEM.  Callers are the approval channels only (approve.sock behind
 * host_operator, the tty prompt): never anything the agent can reach.
 */
int approve_intent(struct approvals *ap, const char *sentence, unsigned for_s, const char *who,
		   char *err, size_t elen, int *calls);

/* The poll timeout (at most TIMEOUT ms) that wakes the loop for the first deadline. */
int approve_wait_ms(const struct approvals *ap, int timeout);
/* A question is on the terminal: the agent's output waits, keys go to approve_tty_input. */
bool approve_prompting(const struct approvals *ap);
/* Requests past their deadline get the policy's approval_on_timeout. */
void approve_tick(struct approvals *ap);
/*
 * Keys typed on cordon's terminal while a question is up: y, s, n (or
 * Ctrl-C) answer it; i starts a sentence (printable ASCII, Backspace,
 * Enter states it, Esc or Ctrl-C drops it) stated as an intent by "tty"
 * (approve_intent), which approves the question if it covers it and
 * otherwise asks it again with why.
 */
void approve_tty_input(struct approvals *ap, const char *buf, size_t n);
/* The session ended: every request left is refused. */
void approve_end(struct approvals *ap);
/*
 * May the peer of an accepted socket speak to the supervisor (approve,
 * events)?  Root or `invoker`, outside every session, not this process.
 * Fills `who` ("uid U (pid P)") when given.
 */
bool host_operator(int fd, uid_t invoker, char *who, size_t wlen);
/* Drop one held call (`nr`, `notif`) from its pending request; the request goes when empty. */
void approve_withdraw(struct approvals *ap, int nr, uint64_t notif);
/* Every held call of helper NR (it exited). */
void approve_withdraw_all(struct approvals *ap, int nr);

#endif
