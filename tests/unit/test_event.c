// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Semantic events (policy/event.c) and the evaluator's event
 * (pol_eval_event): one shape from every source, and the event an
 * evaluation returns is the one its rules judged.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "policy.h"

/* EV as compact JSON with sorted keys (freed by the caller). */
static char *dump(json_t *ev)
{
	char *s;

	assert_non_null(ev);
	s = json_dumps(ev, JSON_SORT_KEYS | JSON_COMPACT);
	assert_non_null(s);
	return s;
}

#define EXPECT(ev, want) do { \
	json_t *e_ = (ev); \
	char *s_ = dump(e_); \
	assert_string_equal(s_, want); \
	free(s_); \
	json_decref(e_); \
} while (0)

static void shapes(void **state)
{
	EXPECT(pol_event("git", "push", NULL), "{\"arguments\":{},\"server\":\"git\",\"tool\":\"push\"}");
	EXPECT(pol_event_connect("example.test", 443),
	       "{\"arguments\":{\"host\":\"example.test\",\"port\":443},\"server\":\"net\",\"tool\":\"connect\"}");
	EXPECT(pol_event_unix("/run/x.sock", false),
	       "{\"arguments\":{\"path\":\"/run/x.sock\"},\"server\":\"net\",\"tool\":\"connect\"}");
	EXPECT(pol_event_unix("@bus", true),
	       "{\"arguments\":{\"abstract\":\"@bus\"},\"server\":\"net\",\"tool\":\"connect\"}");
	EXPECT(pol_event_fs("write_file", "/w/a", "truncate"),
	       "{\"arguments\":{\"access\":\"truncate\",\"path\":\"/w/a\"},\"server\":\"fs\",\"tool\":\"write_file\"}");
	EXPECT(pol_event_kernel("ptrace", "pid 7"),
	       "{\"arguments\":{\"object\":\"pid 7\"},\"server\":\"kernel\",\"tool\":\"ptrace\"}");
	EXPECT(pol_event_http("GET", "h.test", 443, "/x"),
	       "{\"arguments\":{\"host\":\"h.test\",\"method\":\"GET\",\"path\":\"/x\",\"port\":443},"
	       "\"server\":\"http\",\"tool\":\"request\"}");
	EXPECT(pol_event_http("CONNECT", "h.test", 443, NULL),
	       "{\"arguments\":{\"host\":\"h.test\",\"method\":\"CONNECT\",\"port\":443},"
	       "\"server\":\"http\",\"tool\":\"request\"}");
	/* A path that is not UTF-8 survives, as \xNN. */
	EXPECT(pol_event_fs("read_file", "/w/\xff", NULL),
	       "{\"arguments\":{\"path\":\"/w/\\\\xff\"},\"server\":\"fs\",\"tool\":\"read_file\"}");
	assert_string_equal(pol_event_fs_tool(POL_OP_READ), "read_file");
	assert_string_equal(pol_event_fs_tool(POL_OP_CREATE), "write_file");
	assert_string_equal(pol_event_fs_tool(POL_OP_DELETE), "delete");
}

static void tool_args_borrowed(void **state)
{
	json_t *args = json_pack("{s:s}", "q", "x");
	json_t *ev = pol_event_tool("db", "query", args);

	/* The caller keeps its reference: the event holds its own. */
	assert_int_equal(args->refcount, 2);
	EXPECT(ev, "{\"arguments\":{\"q\":\"x\"},\"server\":\"db\",\"tool\":\"query\"}");
	assert_int_equal(args->refcount, 1);
	json_decref(args);
}

static struct policy *load(void)
{
	static const char text[] =
		"{\"cordon_policy\": 1, \"rules\": [\n"
		"{\"name\": \"run\", \"decision\": \"allow\", \"fs\": {\"paths\": [\"/usr\"], \"rights\": [\"read\", \"exec\"]}},\n"
		"{\"name\": \"ws\", \"decision\": \"allow\", \"fs\": {\"paths\": [\"/w\"], \"rights\": [\"read\", \"write\"]}},\n"
		"{\"name\": \"push\", \"decision\": \"escalate\", \"tool\": {\"name\": \"git.push\"}},\n"
		"{\"name\": \"web\", \"decision\": \"allow\", \"net\": {\"hosts\": [\"h.test\"], \"ports\": [443]}}]}";
	struct pol_vars v = {};
	struct pol_diags ds = {};
	struct policy *p = NULL;

	pol_vars_set(&v, "WORKSPACE", "/w");
	pol_vars_set(&v, "HOME", "/home/agent");
	assert_int_equal(pol_load_text(text, strlen(text), "t.json", &v, &p, &ds), 0);
	pol_diags_free(&ds);
	pol_vars_free(&v);
	return p;
}

/* The event judged: an exec's lifted events, whatever decided it. */
static void eval_exec(void **state)
{
	struct policy *p = load();
	const char *push[] = { "git", "push", "origin", "main", NULL };
	const char *ls[] = { "ls", "-l", NULL };
	struct pol_request rq = { .op = POL_OP_EXEC, .path = "/usr/bin/git", .argv = push, .cwd = "/w" };
	struct pol_result res;
	json_t *ev = NULL;
	char *s;

	pol_eval_event(p, &rq, &res, &ev);
	assert_int_equal(res.decision, CORDON_ESCALATE);
	assert_string_equal(res.rule->name, "push");
	s = dump(ev);
	assert_non_null(strstr(s, "\"server\":\"git\",\"tool\":\"push\""));
	assert_non_null(strstr(s, "\"also\":{\"arguments\":{\"argv\":[\"git\",\"push\",\"origin\",\"main\"]"));
	free(s);
	json_decref(ev);

	/* Denied by the file rules (no exec right on /w): still the lifted event. */
	rq.path = "/w/git";
	pol_eval_event(p, &rq, &res, &ev);
	assert_int_equal(res.decision, CORDON_DENY);
	s = dump(ev);
	assert_non_null(strstr(s, "\"server\":\"git\",\"tool\":\"push\""));
	free(s);
	json_decref(ev);

	/* Nothing to recognise: shell.exec itself. */
	rq.path = "/usr/bin/ls";
	rq.argv = ls;
	pol_eval_event(p, &rq, &res, &ev);
	assert_int_equal(res.decision, CORDON_ALLOW);
	s = dump(ev);
	assert_non_null(strstr(s, "\"server\":\"shell\",\"tool\":\"exec\""));
	assert_null(strstr(s, "\"also\""));
	free(s);
	json_decref(ev);

	/* The same decision as pol_eval. */
	{
		struct pol_result plain;

		rq.path = "/usr/bin/git";
		rq.argv = push;
		pol_eval(p, &rq, &plain);
		pol_eval_event(p, &rq, &res, &ev);
		json_decref(ev);
		assert_int_equal(plain.decision, res.decision);
		assert_ptr_equal(plain.rule, res.rule);
	}
	pol_free(p);
}

static void eval_other(void **state)
{
	struct policy *p = load();
	struct pol_request rq = { .op = POL_OP_CONNECT, .host = "h.test", .port = 443 };
	struct pol_result res;
	json_t *ev = NULL, *a = json_pack("{s:s}", "q", "1");

	pol_eval_event(p, &rq, &res, &ev);
	assert_int_equal(res.decision, CORDON_ALLOW);
	EXPECT(ev, "{\"arguments\":{\"host\":\"h.test\",\"port\":443},\"server\":\"net\",\"tool\":\"connect\"}");

	/* A connect a proxy can read: the event is what it carries. */
	rq.ev_server = "http";
	rq.ev_tool = "request";
	rq.ev_args = json_pack("{s:s,s:s,s:i}", "method", "GET", "host", "h.test", "port", 443);
	pol_eval_event(p, &rq, &res, &ev);
	EXPECT(ev, "{\"arguments\":{\"host\":\"h.test\",\"method\":\"GET\",\"port\":443},"
		   "\"server\":\"http\",\"tool\":\"request\"}");
	json_decref(rq.ev_args);

	rq = (struct pol_request){ .op = POL_OP_WRITE, .path = "/w/a" };
	pol_eval_event(p, &rq, &res, &ev);
	assert_int_equal(res.decision, CORDON_ALLOW);
	EXPECT(ev, "{\"arguments\":{\"path\":\"/w/a\"},\"server\":\"fs\",\"tool\":\"write_file\"}");

	rq = (struct pol_request){ .op = POL_OP_TOOL, .server = "db", .tool = "query", .args = a };
	pol_eval_event(p, &rq, &res, &ev);
	assert_int_equal(res.decision, CORDON_DENY);
	EXPECT(ev, "{\"arguments\":{\"q\":\"1\"},\"server\":\"db\",\"tool\":\"query\"}");
	json_decref(a);
	pol_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(shapes),
		cmocka_unit_test(tool_args_borrowed),
		cmocka_unit_test(eval_exec),
		cmocka_unit_test(eval_other),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
