/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The approval channels: a human's terminal, `cordon approve` (approve.c). */
#ifndef CORDON_APPROVE_H
#define CORDON_APPROVE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>

#include "cordon.h"

struct sup;

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
	 * human's denial is remembered as (approve_resolve, sup_human_denied).
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

/* The approval channels and the requests held for a human (approve.c). */
struct approvals {
	int approve_sock;
	int events_sock;
	int clients[16];                /* event subscribers */
	int n_clients;
	struct pending *pending;
	unsigned next_pending;
	char **approved;                /* "for this session" event keys */
	size_t n_approved;
	char **denied;                  /* deny_key of every request a human denied */
	size_t n_denied;
	pid_t told;                     /* the last caller told of a refusal (once per PATH search) */
	bool prompt_active;             /* the agent's output waits meanwhile (tty_guard.c) */
	uint64_t prompt_at;             /* when the question was written (PROMPT_GRACE_MS) */
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


int approve_listen(struct sup *s);
void approve_accept(struct sup *s);
/* A new escalation; returns 0 when held, or a decision to apply now. */
void approve_hold(struct sup *s, struct pending *p);
void approve_tick(struct sup *s);
void approve_tty_input(struct sup *s, const char *buf, size_t n);
/* Apply a decision to every held call of p, unlink and free it. */
void approve_resolve(struct sup *s, struct pending *p, bool allow, bool session,
		     const char *approver);
bool approve_session_allowed(struct sup *s, const char *key);
/*
 * May the peer of an accepted socket speak to the supervisor (approve,
 * events)?  Root or `invoker`, outside every session, not this process.
 * Fills `who` ("uid U (pid P)") when given.
 */
bool host_operator(int fd, uid_t invoker, char *who, size_t wlen);
/* Drop one held call (`nr`, `notif`) from its pending request; the request goes when empty. */
void approve_withdraw(struct sup *s, int nr, uint64_t notif);
void approve_withdraw_all(struct sup *s, int nr);

#endif
