// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The helpers' one judge (userspace/channel/judge.c): held, refused and counted alike. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>
#include "judge.h"

static const struct judge_words words = { "forwarded", "held" };

static struct policy *load(void)
{
	static const char text[] =
		"{\"cordon_policy\": 1, \"rules\": [\n"
		"{\"name\": \"read\", \"decision\": \"allow\", \"tool\": {\"name\": \"fs.read\"}},\n"
		"{\"name\": \"push\", \"decision\": \"escalate\", \"tool\": {\"name\": \"git.push\"}}]}";
	struct pol_diags ds = {};
	struct policy *p = NULL;

	assert_int_equal(pol_load_text(text, strlen(text), "t.json", NULL, &p, &ds), 0);
	pol_diags_free(&ds);
	return p;
}

static void verdicts(void **state)
{
	struct policy *p = load();
	struct steps st;
	struct pol_request rq = { .op = POL_OP_TOOL, .server = "fs", .tool = "read" };
	struct judgement j;

	assert_int_equal(steps_create(&st, 0), 0);
	judge_op(&st, p, &rq, true, &words, &j);
	assert_int_equal(j.verdict, JUDGE_ALLOW);
	assert_string_equal(j.decision, "allow");
	assert_string_equal(j.rule, "read");
	assert_string_equal(j.outcome, "forwarded");
	assert_null(j.refusal);

	/* Escalated, with a human to ask: held. */
	rq.server = "git";
	rq.tool = "push";
	judge_op(&st, p, &rq, true, &words, &j);
	assert_int_equal(j.verdict, JUDGE_HOLD);
	assert_string_equal(j.decision, "escalate");
	assert_string_equal(j.outcome, "held");

	/* Escalated, nobody to ask (a proxy alone): refused, and said why. */
	judge_op(&st, p, &rq, false, &words, &j);
	assert_int_equal(j.verdict, JUDGE_DENY);
	assert_string_equal(j.decision, "escalate");
	assert_string_equal(j.outcome, "refused: no approval channel");
	assert_non_null(strstr(j.refusal, "human"));

	/* No rule names it: denied (the "unknown-tool" invariant). */
	rq.server = "db";
	rq.tool = "drop";
	judge_op(&st, p, &rq, true, &words, &j);
	assert_int_equal(j.verdict, JUDGE_DENY);
	assert_string_equal(j.decision, "deny");
	assert_string_equal(j.rule, "unknown-tool");
	assert_string_equal(j.outcome, "refused");

	/* Every judged operation is a step, the refused ones too. */
	assert_int_equal(steps_count(&st), 4);
	steps_close(&st);
	pol_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(verdicts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
