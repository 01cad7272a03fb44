/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The one judge of the helpers outside the session (the MCP proxy and the
 * egress broker): an operation's decision the same way in both, so a tool
 * call and an HTTP request are held, refused and counted alike (judge.c).
 *
 *   - the policy judges it, and it counts as one of the session's steps,
 *     a refused one too (steps_eval, steps.h);
 *   - allowed: it goes on;
 *   - escalated, with the session's approval channel: held for the human
 *     (the helper sends proto_escalate and waits in its own way);
 *   - escalated without one (a proxy run alone has no human), or denied:
 *     refused.  Unknown means deny: a decision that is none of the three
 *     is a refusal.
 * What it does not do: the record (its fields are the helper's: the
 * connection or the client, the raw form) and the audit log's health (each
 * helper refuses everything once its log cannot keep records).
 */
#ifndef CORDON_JUDGE_H
#define CORDON_JUDGE_H

#include <stdbool.h>
#include "policy.h"
#include "steps.h"

enum judge_verdict {
	JUDGE_DENY = 0,
	JUDGE_ALLOW,
	JUDGE_HOLD,
};

/* A helper's words for the record's outcome of an allowed and of a held operation. */
struct judge_words {
	const char *allowed, *held;
};

struct judgement {
	struct pol_result res;
	enum judge_verdict verdict;
	const char *decision;           /* the record's: "allow", "escalate", "deny" */
	const char *rule;               /* the deciding rule or invariant, or NULL */
	const char *outcome;            /* the record's: the helper's words, or a refusal */
	const char *refusal;            /* a refusal's words for the client (before res.reason) */
};

void judge_op(struct steps *st, const struct policy *pol, const struct pol_request *rq,
	      bool can_hold, const struct judge_words *w, struct judgement *j);

#endif
