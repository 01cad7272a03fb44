// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The supervisor-helper protocol, its one definition (proto.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <string.h>
#include "proto.h"

static const char *const names[] = {
	[PROTO_READY] = "ready",       [PROTO_RECORD] = "record",     [PROTO_ESCALATE] = "escalate",
	[PROTO_WITHDRAW] = "withdraw", [PROTO_DECISION] = "decision", [PROTO_SESSION] = "session",
	[PROTO_GRANT] = "grant",       [PROTO_HOLDERS] = "holders",
};

enum proto_op proto_op(const json_t *msg)
{
	const char *op = json_string_value(json_object_get(msg, "op"));

	for (size_t i = 1; op && i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(op, names[i]))
			return (enum proto_op)i;
	return PROTO_UNKNOWN;
}

json_t *proto_ready(json_t *extra)
{
	json_t *m = json_pack("{s:s}", "op", names[PROTO_READY]);

	if (m && extra)
		json_object_update_missing(m, extra);
	json_decref(extra);
	return m;
}

json_t *proto_record(const char *type, json_t *fields)
{
	return json_pack("{s:s,s:s,s:O}", "op", names[PROTO_RECORD], "type", type, "fields", fields);
}

json_t *proto_escalate(uint64_t hold, json_t *event, const char *summary, const char *rule,
		       const char *reason)
{
	return json_pack("{s:s,s:I,s:O,s:s,s:s?,s:s}", "op", names[PROTO_ESCALATE], "hold",
			 (json_int_t)hold, "event", event, "summary", summary, "rule", rule,
			 "reason", reason ?: "");
}

json_t *proto_withdraw(uint64_t hold, const char *reason)
{
	return json_pack("{s:s,s:I,s:s}", "op", names[PROTO_WITHDRAW], "hold", (json_int_t)hold,
			 "reason", reason ?: "");
}

json_t *proto_decision(uint64_t hold, bool allow, const char *why, const char *approver)
{
	return json_pack("{s:s,s:I,s:b,s:s,s:s?}", "op", names[PROTO_DECISION], "hold",
			 (json_int_t)hold, "allow", allow, "why", why ?: "", "approver", approver);
}

json_t *proto_session(uint64_t cgroup_id)
{
	return json_pack("{s:s,s:I}", "op", names[PROTO_SESSION], "cgroup_id", (json_int_t)cgroup_id);
}

json_t *proto_grant(uint64_t grant, pid_t pid, uint64_t start, uint64_t ttl_ms, json_t *dests)
{
	return json_pack("{s:s,s:I,s:i,s:I,s:I,s:O}", "op", names[PROTO_GRANT], "grant",
			 (json_int_t)grant, "pid", (int)pid, "start", (json_int_t)start, "ttl_ms",
			 (json_int_t)ttl_ms, "dests", dests);
}

json_t *proto_holders_ask(uint64_t query, uint64_t inode)
{
	return json_pack("{s:s,s:I,s:I}", "op", names[PROTO_HOLDERS], "query", (json_int_t)query,
			 "inode", (json_int_t)inode);
}

json_t *proto_holders(uint64_t query, const pid_t *pids, int n)
{
	json_t *a = json_array();

	for (int i = 0; a && i < n; i++)
		json_array_append_new(a, json_integer(pids[i]));
	return a ? json_pack("{s:s,s:I,s:o,s:i}", "op", names[PROTO_HOLDERS], "query",
			     (json_int_t)query, "pids", a, "error", n < 0 ? -n : 0) : NULL;
}

/* An unsigned integer field, or -EINVAL. */
static int get_u64(const json_t *msg, const char *key, uint64_t *out)
{
	json_t *v = json_object_get(msg, key);

	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return -EINVAL;
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

int proto_read(const json_t *msg, struct proto_msg *m)
{
	uint64_t pid;

	memset(m, 0, sizeof(*m));
	m->op = proto_op(msg);
	switch (m->op) {
	case PROTO_READY:
		return 0;
	case PROTO_GRANT:       /* each destination is read by the broker (grants.c) */
		m->dests = json_object_get(msg, "dests");
		if (get_u64(msg, "grant", &m->grant) < 0 || get_u64(msg, "pid", &pid) < 0 ||
		    pid > INT_MAX || get_u64(msg, "start", &m->start) < 0 ||
		    get_u64(msg, "ttl_ms", &m->ttl_ms) < 0 || !json_is_array(m->dests))
			return -EINVAL;
		m->pid = (pid_t)pid;
		return 0;
	case PROTO_RECORD:
		m->type = json_string_value(json_object_get(msg, "type"));
		m->fields = json_object_get(msg, "fields");
		return m->type && json_is_object(m->fields) ? 0 : -EINVAL;
	case PROTO_ESCALATE:
		m->event = json_object_get(msg, "event");
		m->summary = json_string_value(json_object_get(msg, "summary"));
		m->rule = json_string_value(json_object_get(msg, "rule"));
		m->reason = json_string_value(json_object_get(msg, "reason"));
		if (get_u64(msg, "hold", &m->hold) < 0 || !json_is_object(m->event) || !m->summary)
			return -EINVAL;
		return 0;
	case PROTO_WITHDRAW:
		m->reason = json_string_value(json_object_get(msg, "reason"));
		return get_u64(msg, "hold", &m->hold);
	case PROTO_DECISION:
		m->allow = json_is_true(json_object_get(msg, "allow"));
		m->why = json_string_value(json_object_get(msg, "why"));
		m->approver = json_string_value(json_object_get(msg, "approver"));
		if (!json_is_boolean(json_object_get(msg, "allow")))
			return -EINVAL;
		return get_u64(msg, "hold", &m->hold);
	case PROTO_SESSION:
		return get_u64(msg, "cgroup_id", &m->cgroup_id);
	case PROTO_HOLDERS: {   /* a question (inode) or an answer (pids, error) */
		json_t *pids = json_object_get(msg, "pids");
		uint64_t err = 0;

		if (get_u64(msg, "query", &m->query) < 0)
			return -EINVAL;
		if (!pids)
			return get_u64(msg, "inode", &m->inode);
		if (!json_is_array(pids) || get_u64(msg, "error", &err) < 0 || err > INT_MAX)
			return -EINVAL;
		m->pids = pids;
		m->error = (int)err;
		return 0;
	}
	case PROTO_UNKNOWN:
		break;
	}
	return -EINVAL;
}
