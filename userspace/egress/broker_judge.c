// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The policy's word, and the human's, on one request (judge.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "grants.h"
#include "judge.h"
#include "broker_judge.h"
#include "proto.h"

/*
 * An escalated request waits, this connection's thread blocked, until the
 * supervisor's decision comes back (the policy's approval timeout is the
 * supervisor's to apply).  A channel that closes decides "no" for all.
 */
static bool wait_for_human(struct conn *c, json_t *event, const char *rule, const char *reason,
			   char *why, size_t wlen)
{
	struct hp *hp = c->hp;
	json_t *args = json_object_get(event, "arguments");
	struct waiter w = { .hold = atomic_fetch_add(&hp->next_hold, 1) + 1 };
	char summary[600];

	snprintf(summary, sizeof(summary), "http.request %s %s:%d%s",
		 json_string_value(json_object_get(args, "method")) ?: "?",
		 json_string_value(json_object_get(args, "host")) ?: "?",
		 (int)json_integer_value(json_object_get(args, "port")),
		 json_string_value(json_object_get(args, "path")) ?: "");
	if (!chan_wait(hp, &w, proto_escalate(w.hold, event, summary, rule, reason)))
		snprintf(w.why, sizeof(w.why), "the approval channel is gone");
	else if (w.allow)
		return true;
	snprintf(why, wlen, "not approved: %s", w.why);
	return false;
}

/*
 * The policy's word on one request: a CONNECT, an absolute-form request, or
 * a request inside a credential tunnel (with its path), lifted into
 * http.request and recorded.  true: go on; false: refused, why says so.
 */
bool broker_judge(struct conn *c, json_t *event, const char *host, uint16_t port,
	   struct pol_result *res, char *why, size_t wlen)
{
	struct pol_request pr = { .op = POL_OP_CONNECT, .host = host, .port = port,
				  .ev_server = "http", .ev_tool = "request",
				  .ev_args = json_object_get(event, "arguments") };
	static const struct judge_words words = { "allowed", "held for approval" };
	struct judgement j;

	/* The helpers' one judge (channel/judge.h): counted as a step, held or refused alike. */
	judge_op(&c->hp->steps, c->hp->pol, &pr, c->hp->chan_fd >= 0, &words, &j);
	*res = j.res;
	/*
	 * An approved push's destination (grants.c): only where the
	 * policy refuses by default or would ask, never over a rule or an
	 * invariant that refuses, and only for the request that opens a
	 * connection, not one inside a credential tunnel (c->inner).
	 * hp->grants is a hint here; grant_admits decides under the lock.
	 */
	if (!c->inner && c->hp->grants &&
	    (res->decision == CORDON_ESCALATE ||
	     (res->decision == CORDON_DENY && !res->rule && !res->invariant))) {
		char gwhy[320] = "";
		uint64_t gid = 0;
		int g = grant_admits(c, host, port, &gid, gwhy, sizeof(gwhy));

		if (g == 0) {
			c->grant = gid;
			RECORD(c->hp, "decision", "{s:s,s:I,s:O,s:s,s:I,s:s,s:s,s:s*}", "raw",
			       "http-proxy", "conn", (json_int_t)c->id, "event", event, "decision",
			       "allow", "grant", (json_int_t)gid, "reason",
			       "the destination of a git push a human approved, for that process",
			       "outcome", "allowed by grant", "protocol",
			       c->grant_ssh ? "ssh" : NULL);
			return true;
		}
		if (g == -EACCES) {
			RECORD(c->hp, "decision", "{s:s,s:I,s:O,s:s,s:s,s:s}", "raw", "http-proxy",
			       "conn", (json_int_t)c->id, "event", event, "decision", "deny",
			       "reason", gwhy, "outcome", "refused: not the approved process");
			snprintf(why, wlen, "%s", gwhy);
			return false;
		}
	}
	RECORD(c->hp, "decision", "{s:s,s:I,s:O,s:s,s:s?,s:s,s:s}", "raw", "http-proxy",
	       "conn", (json_int_t)c->id, "event", event, "decision", j.decision,
	       "rule", j.rule, "reason", res->reason, "outcome", j.outcome);
	/*
	 * A log that can no longer keep records (a full disk: AUDIT_RESERVE in
	 * audit.c) allows nothing more, and the proxy stops (broker_record()); its
	 * "audit-down" record follows the last decision it kept.
	 */
	if (c->hp->audit && audit_down(c->hp->audit, NULL)) {
		snprintf(why, wlen, "the audit log cannot keep its records: nothing is allowed");
		return false;
	}
	if (j.verdict == JUDGE_ALLOW)
		return true;
	if (j.verdict == JUDGE_HOLD)
		return wait_for_human(c, event, j.rule, res->reason, why, wlen);
	snprintf(why, wlen, "%s%s", res->decision == CORDON_ESCALATE ? "needs a human's approval, "
		 "and this proxy has none: " : "", res->reason);
	return false;
}

