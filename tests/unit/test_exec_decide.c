// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The decision about one exec (userspace/supervisor/exec_decide.c), driven
 * without a task: the session's answers are this test's, and each is
 * checked to be asked only when the decision depends on it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "exec_decide.h"

/* What the session answers, and how often it was asked. */
struct fake {
	bool approved, denied, missing;
	int expect_r, shared;
	int n_approved, n_denied, n_dest, n_expect, n_shared, n_missing;
};

static bool f_approved(void *ctx, json_t *ev, const char *binary)
{
	struct fake *f = ctx;

	f->n_approved++;
	return f->approved;
}

static bool f_denied(void *ctx, json_t *ev)
{
	struct fake *f = ctx;

	f->n_denied++;
	return f->denied;
}

static void f_dest(void *ctx, json_t *ev)
{
	struct fake *f = ctx;

	f->n_dest++;
	json_object_set_new(json_object_get(ev, "arguments"), "destination", json_string("here"));
}

static int f_expect(void *ctx)
{
	struct fake *f = ctx;

	f->n_expect++;
	return f->expect_r;
}

static int f_shared(void *ctx)
{
	struct fake *f = ctx;

	f->n_shared++;
	return f->shared;
}

static bool f_missing(void *ctx)
{
	struct fake *f = ctx;

	f->n_missing++;
	return f->missing;
}

static struct policy *pol;

static int setup(void **state)
{
	static const char text[] =
		"{\"cordon_policy\": 1, \"rules\": [\n"
		"{\"name\": \"run\", \"decision\": \"allow\", \"fs\": {\"paths\": [\"/usr\"], \"rights\": [\"read\", \"exec\"]}},\n"
		"{\"name\": \"push\", \"decision\": \"escalate\", \"tool\": {\"name\": \"git.push\"}}]}";
	struct pol_vars v = {};
	struct pol_diags ds = {};

	pol_vars_set(&v, "WORKSPACE", "/w");
	pol_vars_set(&v, "HOME", "/home/agent");
	assert_int_equal(pol_load_text(text, strlen(text), "t.json", &v, &pol, &ds), 0);
	pol_diags_free(&ds);
	pol_vars_free(&v);
	return 0;
}

static int teardown(void **state)
{
	pol_free(pol);
	return 0;
}

/* Decide ARGV run as BINARY with the session's answers F. */
static void decide(struct fake *f, const char *binary, char **argv, bool human, bool recheck,
		   struct exec_verdict *v)
{
	struct exec_ask ask = { f, f_approved, f_denied, f_dest, f_expect, f_shared, f_missing };
	struct exec_case c = { binary, argv, "/w", human, recheck };

	exec_decide(pol, &c, &ask, v);
}

static void push_asked_then_answered(void **state)
{
	char *argv[] = { "git", "push", "origin", "main", NULL };
	struct exec_verdict v;
	struct fake f = {};

	/* Nobody answered yet: held for a human, its destination in the event. */
	decide(&f, "/usr/bin/git", argv, true, false, &v);
	assert_int_equal(v.res.decision, CORDON_ESCALATE);
	assert_string_equal(json_string_value(json_object_get(json_object_get(v.event, "arguments"),
							       "destination")), "here");
	assert_int_equal(f.n_dest, 1);
	assert_false(v.session_ok);
	json_decref(v.event);

	/* Approved for the session: allowed, and said why. */
	f = (struct fake){ .approved = true };
	decide(&f, "/usr/bin/git", argv, true, false, &v);
	assert_int_equal(v.res.decision, CORDON_ALLOW);
	assert_true(v.session_ok);
	assert_int_equal(f.n_denied, 0);
	/* git's decision rests on argv: without the recheck, shared memory is asked. */
	assert_int_equal(f.n_shared, 1);
	json_decref(v.event);

	/* Denied earlier: refused unasked, and the caller is told. */
	f = (struct fake){ .denied = true };
	decide(&f, "/usr/bin/git", argv, true, false, &v);
	assert_int_equal(v.res.decision, CORDON_DENY);
	assert_true(v.refused_again);
	assert_string_equal(v.why, EXEC_REFUSED_AGAIN);
	json_decref(v.event);
}

static void no_human_no_destination(void **state)
{
	char *argv[] = { "git", "push", NULL };
	struct exec_verdict v;
	struct fake f = {};

	decide(&f, "/usr/bin/git", argv, false, false, &v);
	assert_int_equal(v.res.decision, CORDON_ESCALATE);    /* the caller refuses it: --approve deny */
	assert_int_equal(f.n_dest, 0);
	json_decref(v.event);
}

static void missing_binary_not_asked(void **state)
{
	char *argv[] = { "git", "push", NULL };
	struct exec_verdict v;
	struct fake f = { .missing = true, .approved = true };

	decide(&f, "/usr/sbin/git", argv, true, false, &v);
	assert_int_equal(v.res.decision, CORDON_DENY);
	assert_true(v.missing);
	assert_string_equal(v.why, EXEC_MISSING);
	assert_int_equal(f.n_dest, 0);
	assert_int_equal(f.n_approved, 0);
	json_decref(v.event);

	/* Denied by the policy and not there: answered as the kernel would (ENOENT). */
	f = (struct fake){ .missing = true };
	decide(&f, "/opt/x", (char *[]){ "x", NULL }, true, false, &v);
	assert_int_equal(v.res.decision, CORDON_DENY);
	assert_true(v.missing);
	json_decref(v.event);
	f = (struct fake){ .missing = false };
	decide(&f, "/opt/x", (char *[]){ "x", NULL }, true, false, &v);
	assert_false(v.missing);
	json_decref(v.event);
}

static void judged_by_both_names(void **state)
{
	/* exec -a ls git push: argv[0] says ls, the binary is git. */
	char *argv[] = { "ls", "push", "origin", NULL };
	struct exec_verdict v;
	struct fake f = {};

	decide(&f, "/usr/bin/git", argv, true, false, &v);
	assert_int_equal(v.res.decision, CORDON_ESCALATE);
	assert_string_equal(json_string_value(json_object_get(v.event, "tool")), "push");
	assert_string_equal(argv[0], "ls");     /* restored */
	json_decref(v.event);
}

static void recheck_and_shared_memory(void **state)
{
	char *ls[] = { "ls", NULL }, *status[] = { "git", "status", NULL };
	struct exec_verdict v;
	struct fake f = { .expect_r = -EINVAL };

	/* The recheck cannot describe it: unknown means deny. */
	decide(&f, "/usr/bin/ls", ls, true, true, &v);
	assert_int_equal(v.res.decision, CORDON_DENY);
	assert_non_null(strstr(v.why, "recheck"));
	json_decref(v.event);

	/* With the recheck, shared memory is never asked. */
	f = (struct fake){ .shared = 1 };
	decide(&f, "/usr/bin/git", status, true, true, &v);
	assert_int_equal(v.res.decision, CORDON_ALLOW);
	assert_int_equal(f.n_expect, 1);
	assert_int_equal(f.n_shared, 0);
	json_decref(v.event);

	/* Without it, an argv-based allow with another task on the memory is refused... */
	f = (struct fake){ .shared = 1 };
	decide(&f, "/usr/bin/git", status, true, false, &v);
	assert_int_equal(v.res.decision, CORDON_DENY);
	assert_non_null(strstr(v.why, "shares the caller's memory"));
	json_decref(v.event);

	/* ...and one that does not rest on argv is not (nor is the memory asked about). */
	f = (struct fake){ .shared = 1 };
	decide(&f, "/usr/bin/ls", ls, true, false, &v);
	assert_int_equal(v.res.decision, CORDON_ALLOW);
	assert_int_equal(f.n_shared, 0);
	assert_int_equal(f.n_expect, 0);
	json_decref(v.event);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(push_asked_then_answered),
		cmocka_unit_test(no_human_no_destination),
		cmocka_unit_test(missing_binary_not_asked),
		cmocka_unit_test(judged_by_both_names),
		cmocka_unit_test(recheck_and_shared_memory),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
