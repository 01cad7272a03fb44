// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The decision about one exec, apart from the notification's I/O (exec_decide.h). */
#define _GNU_SOURCE
#include <string.h>
#include "exec_decide.h"
#include "push_grant.h"

bool exec_argv_sensitive(const struct policy *pol, const char *binary, const char *argv0)
{
	if (pol_lift_known(binary) || (argv0 && pol_lift_known(argv0)))
		return true;
	for (size_t i = 0; i < pol->n_rules; i++) {
		const struct pol_rule *r = &pol->rules[i];

		if (r->kind == POL_TOOL && r->tool.n_conds &&
		    (!strcmp(r->tool.server, "*") || !strcmp(r->tool.server, "shell")))
			return true;
	}
	return false;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* The policy's decision by both names, and the event of the stronger. */
static void judge(const struct policy *pol, const struct exec_case *c, struct exec_verdict *v)
{
	struct pol_request pr = { .op = POL_OP_EXEC, .path = c->binary,
				  .argv = (const char *const *)c->argv, .cwd = c->cwd };

	pol_eval_event(pol, &pr, &v->res, &v->event);
	if (c->argv && c->argv[0] && strcmp(base_name(c->binary), base_name(c->argv[0]))) {
		char *saved = c->argv[0];
		struct pol_result res2;
		json_t *event2 = NULL;

		c->argv[0] = (char *)c->binary;
		pol_eval_event(pol, &pr, &res2, &event2);
		c->argv[0] = saved;
		if (res2.decision > v->res.decision) {
			v->res = res2;
			json_decref(v->event);
			v->event = event2;
		} else {
			json_decref(event2);
		}
	}
}

static void refuse(struct exec_verdict *v, const char *why)
{
	v->res.decision = CORDON_DENY;
	v->why = why;
}

void exec_decide(const struct policy *pol, const struct exec_case *c, const struct exec_ask *ask,
		 struct exec_verdict *v)
{
	memset(v, 0, sizeof(*v));
	judge(pol, c, v);
	if (v->res.decision == CORDON_ESCALATE && !v->event)
		refuse(v, "its event could not be built (unknown means deny)");
	if (v->res.decision == CORDON_ESCALATE) {
		bool missing = ask->missing(ask->ctx);

		/* No human, no approval to key on it (--approve deny): not read. */
		if (push_event(v->event) && c->human && !missing)
			ask->destination(ask->ctx, v->event);
		if (missing) {
			refuse(v, EXEC_MISSING);
			v->missing = true;
		} else if (ask->session_approved(ask->ctx, v->event, c->binary)) {
			v->res.decision = CORDON_ALLOW;
			v->session_ok = true;
		} else if (ask->human_denied(ask->ctx, v->event)) {
			refuse(v, EXEC_REFUSED_AGAIN);
			v->refused_again = true;
		}
	}
	if (v->res.decision != CORDON_DENY && c->exec_recheck && ask->expect(ask->ctx) < 0)
		refuse(v, "the exec recheck cannot describe this exec (unknown means deny)");
	/*
	 * Without the exec recheck nothing in the kernel compares argv again:
	 * an allow that rests on it is refused while another task could
	 * rewrite it.  With it, the kernel kills an exec that differs.
	 */
	if (v->res.decision == CORDON_ALLOW && !c->exec_recheck &&
	    exec_argv_sensitive(pol, c->binary, c->argv ? c->argv[0] : NULL) &&
	    ask->memory_shared(ask->ctx) != 0)
		refuse(v, "the decision rests on argv, and another task shares the caller's memory "
		       "(it could rewrite argv after the check)");
	/* A missing binary denied by the policy is answered as the kernel would, too. */
	if (v->res.decision == CORDON_DENY && !v->why && ask->missing(ask->ctx))
		v->missing = true;
}
