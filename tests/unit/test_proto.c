// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The supervisor-helper protocol (userspace/channel/proto.c): what is built is what is read. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>
#include "proto.h"

/* MSG through its text form, as it crosses the socketpair. */
static json_t *wire(json_t *msg)
{
	char *s = json_dumps(msg, JSON_COMPACT);
	json_t *back;

	assert_non_null(s);
	back = json_loads(s, 0, NULL);
	assert_non_null(back);
	free(s);
	json_decref(msg);
	return back;
}

static void round_trip(void **state)
{
	json_t *ev = json_pack("{s:s,s:s,s:{}}", "server", "git", "tool", "push", "arguments");
	json_t *fields = json_pack("{s:s}", "what", "x"), *dests = json_pack("[{s:s,s:i}]", "host",
									    "h.test", "port", 22);
	struct proto_msg m;
	json_t *w;

	w = wire(proto_escalate(7, ev, "git push", NULL, "ask"));
	assert_int_equal(proto_read(w, &m), 0);
	assert_int_equal(m.op, PROTO_ESCALATE);
	assert_int_equal(m.hold, 7);
	assert_true(json_equal(m.event, ev));
	assert_string_equal(m.summary, "git push");
	assert_null(m.rule);
	assert_string_equal(m.reason, "ask");
	json_decref(w);

	w = wire(proto_decision(7, true, "approved", "uid 0"));
	assert_int_equal(proto_read(w, &m), 0);
	assert_int_equal(m.op, PROTO_DECISION);
	assert_true(m.allow);
	assert_string_equal(m.why, "approved");
	assert_string_equal(m.approver, "uid 0");
	json_decref(w);

	w = wire(proto_withdraw(9, "client gone"));
	assert_int_equal(proto_read(w, &m), 0);
	assert_int_equal(m.op, PROTO_WITHDRAW);
	assert_int_equal(m.hold, 9);
	json_decref(w);

	w = wire(proto_record("http", fields));
	assert_int_equal(proto_read(w, &m), 0);
	assert_string_equal(m.type, "http");
	assert_true(json_equal(m.fields, fields));
	json_decref(w);

	w = wire(proto_session(1234));
	assert_int_equal(proto_read(w, &m), 0);
	assert_int_equal(m.cgroup_id, 1234);
	json_decref(w);

	w = wire(proto_grant(1, 42, 99, 600000, dests));
	assert_int_equal(proto_read(w, &m), 0);
	assert_int_equal(m.op, PROTO_GRANT);
	assert_int_equal(m.grant, 1);
	assert_int_equal(m.pid, 42);
	assert_int_equal(m.start, 99);
	assert_int_equal(m.ttl_ms, 600000);
	assert_true(json_equal(m.dests, dests));
	json_decref(w);

	w = wire(proto_holders_ask(5, 123456));
	assert_int_equal(proto_read(w, &m), 0);
	assert_int_equal(m.op, PROTO_HOLDERS);
	assert_int_equal(m.query, 5);
	assert_int_equal(m.inode, 123456);
	assert_null(m.pids);
	json_decref(w);

	{
		const pid_t pids[] = { 42, 4242 };

		w = wire(proto_holders(5, pids, 2));
		assert_int_equal(proto_read(w, &m), 0);
		assert_int_equal(m.query, 5);
		assert_int_equal(json_array_size(m.pids), 2);
		assert_int_equal(json_integer_value(json_array_get(m.pids, 1)), 4242);
		assert_int_equal(m.error, 0);
		json_decref(w);
		w = wire(proto_holders(6, pids, -E2BIG));
		assert_int_equal(proto_read(w, &m), 0);
		assert_int_equal(json_array_size(m.pids), 0);
		assert_int_equal(m.error, E2BIG);
		json_decref(w);
	}

	w = wire(proto_ready(json_pack("{s:i}", "servers", 2)));
	assert_int_equal(proto_op(w), PROTO_READY);
	assert_int_equal(json_integer_value(json_object_get(w, "servers")), 2);
	json_decref(w);
	json_decref(ev);
	json_decref(fields);
	json_decref(dests);
}

static void breaches(void **state)
{
	struct proto_msg m;
	const char *bad[] = {
		"{\"op\":\"escalate\",\"hold\":1,\"summary\":\"x\"}",                /* no event */
		"{\"op\":\"escalate\",\"hold\":-1,\"event\":{},\"summary\":\"x\"}",  /* negative hold */
		"{\"op\":\"decision\",\"hold\":1,\"allow\":\"yes\"}",                /* allow not a boolean */
		"{\"op\":\"withdraw\"}",
		"{\"op\":\"record\",\"type\":\"http\",\"fields\":[]}",
		"{\"op\":\"session\",\"cgroup_id\":\"1\"}",
		"{\"op\":\"grant\",\"grant\":1,\"start\":2,\"ttl_ms\":3,\"dests\":[]}", /* no pid */
		"{\"op\":\"grant\",\"grant\":1,\"pid\":1,\"start\":2,\"ttl_ms\":3,\"dests\":{}}",
		"{\"op\":\"grant\",\"grant\":1,\"pid\":4294967296,\"start\":2,\"ttl_ms\":3,\"dests\":[]}",
		"{\"op\":\"holders\",\"inode\":1}",                            /* no query */
		"{\"op\":\"holders\",\"query\":1}",                            /* neither */
		"{\"op\":\"holders\",\"query\":1,\"pids\":{},\"error\":0}",
		"{\"op\":\"holders\",\"query\":1,\"pids\":[]}",              /* no error */
		"{\"op\":\"nonsense\"}",
		"{\"hold\":1}",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *j = json_loads(bad[i], 0, NULL);

		assert_non_null(j);
		assert_int_equal(proto_read(j, &m), -EINVAL);
		json_decref(j);
	}
	assert_int_equal(proto_op(NULL), PROTO_UNKNOWN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_trip),
		cmocka_unit_test(breaches),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
