// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Retention (audit/audit_prune.c): ages, sizes and counts parse or are
 * refused (never a silent default), and the plan removes only sealed logs,
 * oldest first, counting every log towards the count and the size, and
 * keeps a key another kept log of the same session needs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "audit_prune.h"

static void ages(void **state)
{
	uint64_t v;

	(void)state;
	assert_int_equal(audit_parse_age("30d", &v), 0);
	assert_int_equal(v, 30 * 86400);
	assert_int_equal(audit_parse_age("12h", &v), 0);
	assert_int_equal(v, 12 * 3600);
	assert_int_equal(audit_parse_age("2w", &v), 0);
	assert_int_equal(v, 14 * 86400);
	assert_int_equal(audit_parse_age("0s", &v), 0);
	assert_int_equal(v, 0);
	/* A bare number (seconds or days?), another unit, a sign, junk: refused. */
	assert_int_equal(audit_parse_age("30", &v), -EINVAL);
	assert_int_equal(audit_parse_age("30y", &v), -EINVAL);
	assert_int_equal(audit_parse_age("-1d", &v), -EINVAL);
	assert_int_equal(audit_parse_age("1dd", &v), -EINVAL);
	assert_int_equal(audit_parse_age("", &v), -EINVAL);
	assert_int_equal(audit_parse_age("99999999999999999999d", &v), -EINVAL);
	assert_int_equal(audit_parse_age("999999999999999999w", &v), -EINVAL);
}

static void sizes_and_counts(void **state)
{
	uint64_t v;

	(void)state;
	assert_int_equal(audit_parse_size("2G", &v), 0);
	assert_int_equal(v, 2ull << 30);
	assert_int_equal(audit_parse_size("500m", &v), 0);
	assert_int_equal(v, 500ull << 20);
	assert_int_equal(audit_parse_size("1T", &v), 0);
	assert_int_equal(v, 1ull << 40);
	assert_int_equal(audit_parse_size("4096", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(audit_parse_size("2GB", &v), -EINVAL);
	assert_int_equal(audit_parse_size("2P", &v), -EINVAL);
	assert_int_equal(audit_parse_size("G", &v), -EINVAL);
	assert_int_equal(audit_parse_size("99999999999T", &v), -EINVAL);
	assert_int_equal(audit_parse_count("0", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(audit_parse_count("1000", &v), 0);
	assert_int_equal(v, 1000);
	assert_int_equal(audit_parse_count("10k", &v), -EINVAL);
	assert_int_equal(audit_parse_count("-1", &v), -EINVAL);
}

static struct audit_prune_entry entry(const char *name, const char *session,
				      enum audit_prune_state st, time_t mtime, uint64_t size)
{
	struct audit_prune_entry e = { .state = st, .mtime = mtime, .size = size,
				       .key_size = 65, .has_key = true };

	snprintf(e.name, sizeof(e.name), "%s", name);
	snprintf(e.session, sizeof(e.session), "%s", session);
	return e;
}

static const struct audit_prune_entry *find(const struct audit_prune_entry *e, size_t n,
					    const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(e[i].name, name))
			return &e[i];
	fail_msg("%s not in the plan", name);
	return NULL;
}

#define DAY 86400

/* Five logs: old unsealed, old live, three sealed of ages 40, 3 and 1 days. */
static size_t five(struct audit_prune_entry *e)
{
	e[0] = entry("d.jsonl", "sd", AUDIT_PRUNE_SEALED, 1000 * DAY - 1 * DAY, 100);
	e[1] = entry("crash.jsonl", "sb", AUDIT_PRUNE_UNSEALED, 1000 * DAY - 60 * DAY, 100);
	e[2] = entry("a.jsonl", "sa", AUDIT_PRUNE_SEALED, 1000 * DAY - 40 * DAY, 100);
	e[3] = entry("live.jsonl", "sl", AUDIT_PRUNE_LIVE, 1000 * DAY - 50 * DAY, 100);
	e[4] = entry("b.jsonl", "sb", AUDIT_PRUNE_SEALED, 1000 * DAY - 3 * DAY, 100);
	e[5] = entry("planted.jsonl", "", AUDIT_PRUNE_NOT_LOG, 0, 0);
	return 6;
}

static void plan_by_age(void **state)
{
	struct audit_prune_entry e[6];
	struct audit_retention r = { .has_age = true, .max_age_s = 30 * DAY };
	size_t n = five(e);

	(void)state;
	audit_prune_plan(e, n, &r, 1000 * DAY);
	assert_true(find(e, n, "a.jsonl")->remove);
	assert_string_equal(find(e, n, "a.jsonl")->rule, "max-age");
	/* Older still, but not sealed, or live, or no log: kept. */
	assert_false(find(e, n, "crash.jsonl")->remove);
	assert_false(find(e, n, "live.jsonl")->remove);
	assert_false(find(e, n, "planted.jsonl")->remove);
	assert_false(find(e, n, "b.jsonl")->remove);
	assert_false(find(e, n, "d.jsonl")->remove);
	/* Oldest first. */
	for (size_t i = 1; i < n; i++)
		assert_true(e[i - 1].mtime <= e[i].mtime);
}

static void plan_by_count_and_size(void **state)
{
	struct audit_prune_entry e[6];
	struct audit_retention r = { .has_count = true, .max_count = 4 };
	size_t n = five(e);

	(void)state;
	/* Five logs (the symlink is none): one goes, the oldest sealed. */
	audit_prune_plan(e, n, &r, 1000 * DAY);
	assert_true(find(e, n, "a.jsonl")->remove);
	assert_false(find(e, n, "b.jsonl")->remove);
	assert_false(find(e, n, "d.jsonl")->remove);
	/* Count 0: every sealed one, never the others. */
	r.max_count = 0;
	audit_prune_plan(e, n, &r, 1000 * DAY);
	assert_true(find(e, n, "a.jsonl")->remove && find(e, n, "b.jsonl")->remove &&
		    find(e, n, "d.jsonl")->remove);
	assert_false(find(e, n, "crash.jsonl")->remove || find(e, n, "live.jsonl")->remove);
	/* Size: 5 * 165 bytes; one byte under that removes exactly one. */
	n = five(e);
	r = (struct audit_retention){ .has_size = true, .max_size = 5 * 165 - 1 };
	audit_prune_plan(e, n, &r, 1000 * DAY);
	assert_true(find(e, n, "a.jsonl")->remove);
	assert_string_equal(find(e, n, "a.jsonl")->rule, "max-size");
	assert_false(find(e, n, "b.jsonl")->remove || find(e, n, "d.jsonl")->remove);
}

static void key_kept_for_a_kept_copy(void **state)
{
	struct audit_prune_entry e[6];
	struct audit_retention r = { .has_count = true, .max_count = 0 };
	size_t n = five(e);

	(void)state;
	audit_prune_plan(e, n, &r, 1000 * DAY);
	/* b's log goes; its key stays, the unsealed crash.jsonl of session sb needs it. */
	assert_true(find(e, n, "b.jsonl")->remove);
	assert_false(find(e, n, "b.jsonl")->has_key);
	assert_true(find(e, n, "a.jsonl")->has_key);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ages),
		cmocka_unit_test(sizes_and_counts),
		cmocka_unit_test(plan_by_age),
		cmocka_unit_test(plan_by_count_and_size),
		cmocka_unit_test(key_kept_for_a_kept_copy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
