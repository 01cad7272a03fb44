/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The decision about one exec, apart from the notification's I/O
 * (sup_exec.c reads the task's path, argv and working directory, then
 * answers and records; this decides in between).  What it needs from the
 * session beyond the policy (approvals, the push's destination, the
 * kernel's recheck, the caller's memory) it asks through struct exec_ask,
 * only when the decision depends on it, so tests drive it without a task.
 *
 * The rules, in order:
 *   - the policy judges the exec by the name it runs under (argv[0]) and
 *     by its binary, and the stronger decision wins (`exec -a ls git push`
 *     is a push);
 *   - an escalation without an event (memory ran out) is refused: there is
 *     nothing to ask about or to key an answer on;
 *   - an escalated push gets its destination before any approval is
 *     looked up (the human approves a destination, push_grant.h);
 *   - an escalation of a binary that is not there is refused unasked (a
 *     PATH search's misses are no questions); one approved for the session
 *     is allowed; one a human denied earlier is refused, unasked;
 *   - with the exec recheck on, an exec it cannot describe is refused
 *     (unknown means deny);
 *   - without it, an allow that rests on argv is refused while another
 *     task shares the caller's memory (it could rewrite argv after the
 *     check).
 */
#ifndef CORDON_EXEC_DECIDE_H
#define CORDON_EXEC_DECIDE_H

#include <jansson.h>
#include <stdbool.h>
#include "policy.h"

struct exec_ask {
	void *ctx;
	/* The event was approved for this session (binary: the canonical one). */
	bool (*session_approved)(void *ctx, json_t *event, const char *binary);
	/* A human denied this event earlier in the session. */
	bool (*human_denied)(void *ctx, json_t *event);
	/* An escalated push: put its destination into the event (may do nothing). */
	void (*destination)(void *ctx, json_t *event);
	/* The exec recheck can describe this exec: 0, or -errno. */
	int (*expect)(void *ctx);
	/* Another task shares the caller's memory: 0 no, else yes or unknown. */
	int (*memory_shared)(void *ctx);
	/* No file is there (ENOENT): asked only of an escalation or a denial. */
	bool (*missing)(void *ctx);
};

struct exec_case {
	const char *binary;             /* canonical, in the agent's view */
	char **argv;                    /* argv[0] may be swapped and restored while judging */
	const char *cwd;
	bool human;                     /* someone may answer an escalation (not --approve deny) */
	bool exec_recheck;              /* the kernel compares the exec again */
};

struct exec_verdict {
	struct pol_result res;          /* res.decision is the decision */
	json_t *event;                  /* the event judged (owned), NULL if memory ran out */
	const char *why;                /* the reason when not the policy's, or NULL */
	bool session_ok;                /* allowed because approved for this session */
	bool refused_again;             /* a human denied it earlier: tell the caller */
	bool missing;                   /* the binary is not there: answer ENOENT */
};

#define EXEC_MISSING "no such file (the kernel's answer: nothing to ask)"
#define EXEC_REFUSED_AGAIN "denied by a human earlier in this session (not asked again)"

void exec_decide(const struct policy *pol, const struct exec_case *c, const struct exec_ask *ask,
		 struct exec_verdict *v);

/* Could a decision about this binary rest on its argv (a recogniser, or a shell rule with args)? */
bool exec_argv_sensitive(const struct policy *pol, const char *binary, const char *argv0);

#endif
