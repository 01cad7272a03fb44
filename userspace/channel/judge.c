// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The one judge of the helpers outside the session (judge.h). */
#define _GNU_SOURCE
#include <string.h>
#include "judge.h"

void judge_op(struct steps *st, const struct policy *pol, const struct pol_request *rq,
	      bool can_hold, const struct judge_words *w, struct judgement *j)
{
	memset(j, 0, sizeof(*j));
	steps_eval(st, pol, rq, &j->res);
	j->rule = j->res.rule ? j->res.rule->name : j->res.invariant;
	switch (j->res.decision) {
	case CORDON_ALLOW:
		j->decision = "allow";
		j->verdict = JUDGE_ALLOW;
		j->outcome = w->allowed;
		return;
	case CORDON_ESCALATE:
		j->decision = "escalate";
		if (can_hold) {
			j->verdict = JUDGE_HOLD;
			j->outcome = w->held;
		} else {
			j->verdict = JUDGE_DENY;
			j->outcome = "refused: no approval channel";
			j->refusal = "needs a human's approval, and this proxy has none";
		}
		return;
	default:
		break;
	}
	j->decision = "deny";
	j->verdict = JUDGE_DENY;
	j->outcome = "refused";
	j->refusal = "denied by policy";
}
