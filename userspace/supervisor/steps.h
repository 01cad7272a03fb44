/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The session's steps budget, one count for every judged operation however
 * the agent asked for it: a lifted exec, connect or write (the supervisor),
 * an MCP tools/call (the session's MCP proxy), an HTTP request (the egress
 * broker and credential proxy: each CONNECT, absolute-form request, and
 * request inside a credential tunnel).
 *
 * The attack it closes: an agent that works through tools only (one
 * connect to its MCP socket, or one kept-alive tunnel to an LLM host, then
 * thousands of calls) was never stopped by `steps`, which counted the
 * supervisor's operations alone.
 *
 * The count lives in a sealed memfd page that the supervisor creates and
 * hands to its helpers (processes outside the session, cordon's own code):
 * each adds to it with one atomic operation before judging, so the budget
 * is exact across processes without a round trip per call.  The call that
 * passes the budget is refused by whoever counted it, and the supervisor,
 * which checks the count whenever a helper reports, stops the session.
 *
 * What it cannot close: a helper is trusted with the page (it could lower
 * the count); a helper compromised that far already holds the session's
 * real credentials.  The agent never holds it: the descriptor is close-on-
 * exec and passed only to the helpers, and the supervisor's /proc is not
 * the agent's to read.
 */
#ifndef CORDON_STEPS_H
#define CORDON_STEPS_H

#include <stdbool.h>
#include <stdint.h>

struct steps_page;
struct policy;
struct pol_request;
struct pol_result;

struct steps {
	struct steps_page *page;        /* NULL: nothing shared, nothing counted */
	int fd;                         /* the memfd, for the helpers; -1 */
};

/* The supervisor's: a new page with budget MAX (0: unlimited, still counted). */
int steps_create(struct steps *st, uint64_t max);

/*
 * A helper's: map the page the supervisor passed as FD (the budget is the
 * one written there).  -EINVAL if FD is not such a page.
 */
int steps_attach(struct steps *st, int fd);

/*
 * One more step.  true: within the budget (or nothing is counted); false:
 * the budget is spent, the operation must be refused.
 */
bool steps_take(struct steps *st);

/*
 * A helper's judgement of one call: a step taken, then the policy's word
 * (pol_eval), or, past the budget, a refusal by the "steps-budget"
 * invariant that says so.
 */
void steps_eval(struct steps *st, const struct policy *pol, const struct pol_request *req,
		struct pol_result *res);

/* The steps taken so far, and whether they passed the budget. */
uint64_t steps_count(const struct steps *st);
bool steps_spent(const struct steps *st);
uint64_t steps_max(const struct steps *st);

void steps_close(struct steps *st);

#endif
