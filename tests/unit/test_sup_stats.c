// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The supervisor's statistics (userspace/supervisor/sup_stats.c), which
 * own struct sup_stats: a call's latency is receive to the last answer,
 * or to now when it was not answered since (held, a worker); the last
 * SUP_STATS_RING of each kind make the median and p99; the end record's
 * members, the ENOENT counts only when not 0.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>
#include <time.h>

#include "sup_stats.h"

static struct sup_stats st;

static int reset(void **state)
{
	(void)state;
	memset(&st, 0, sizeof(st));
	return 0;
}

static json_t *end_members(void)
{
	json_t *fin = json_object();

	assert_non_null(fin);
	assert_int_equal(sup_stats_to_json(&st, fin), 0);
	return fin;
}

static json_int_t member(json_t *fin, const char *kind, const char *what)
{
	json_t *v = json_object_get(json_object_get(json_object_get(fin, "held"), kind), what);

	assert_true(json_is_integer(v));
	return json_integer_value(v);
}

/* Nothing noted: counts of 0, no latencies, no ENOENT members. */
static void empty(void **state)
{
	json_t *fin;

	(void)state;
	fin = end_members();
	assert_int_equal(member(fin, "exec", "count"), 0);
	assert_int_equal(member(fin, "connect", "count"), 0);
	assert_null(json_object_get(json_object_get(json_object_get(fin, "held"), "exec"),
				    "median_us"));
	assert_null(json_object_get(fin, "unix_absent"));
	assert_null(json_object_get(fin, "exec_absent"));
	json_decref(fin);
}

/* Answered after it was received: the latency ends at the answer, per kind. */
static void answered_latency(void **state)
{
	struct timespec t0 = { 100, 0 };
	json_t *fin;

	(void)state;
	st.t_answer = (struct timespec){ 100, 250000000 };      /* 250 ms later */
	sup_stats_note(&st, SUP_STATS_EXEC, &t0);
	st.t_answer = (struct timespec){ 101, 5000 };           /* 1 s and 5 us later */
	sup_stats_note(&st, SUP_STATS_CONNECT, &t0);
	fin = end_members();
	assert_int_equal(member(fin, "exec", "count"), 1);
	assert_int_equal(member(fin, "exec", "median_us"), 250000);
	assert_int_equal(member(fin, "exec", "p99_us"), 250000);
	assert_int_equal(member(fin, "connect", "count"), 1);
	assert_int_equal(member(fin, "connect", "median_us"), 1000005);
	json_decref(fin);
}

/* Not answered since it was received (held for a human): it ends now, on the real clock. */
static void unanswered_runs_to_now(void **state)
{
	struct timespec now, t0;
	json_t *fin;

	(void)state;
	assert_int_equal(clock_gettime(CLOCK_MONOTONIC, &now), 0);
	t0 = (struct timespec){ now.tv_sec - 2, now.tv_nsec };
	st.t_answer = (struct timespec){ t0.tv_sec - 1, 0 };    /* an answer before it */
	sup_stats_note(&st, SUP_STATS_EXEC, &t0);
	fin = end_members();
	assert_true(member(fin, "exec", "median_us") >= 2000000);
	assert_true(member(fin, "exec", "median_us") < 60000000);
	json_decref(fin);
}

/* sup_stats_answered reads the monotonic clock: a call received before it ends there. */
static void answered_is_now(void **state)
{
	struct timespec before, after;

	(void)state;
	assert_int_equal(clock_gettime(CLOCK_MONOTONIC, &before), 0);
	sup_stats_answered(&st);
	assert_int_equal(clock_gettime(CLOCK_MONOTONIC, &after), 0);
	assert_true(st.t_answer.tv_sec > before.tv_sec ||
		    (st.t_answer.tv_sec == before.tv_sec && st.t_answer.tv_nsec >= before.tv_nsec));
	assert_true(st.t_answer.tv_sec < after.tv_sec ||
		    (st.t_answer.tv_sec == after.tv_sec && st.t_answer.tv_nsec <= after.tv_nsec));
}

/* 1..100 us: the median is the 51st, the p99 the 100th (the sorted ring's k/2 and k*99/100). */
static void median_and_p99(void **state)
{
	struct timespec t0 = { 10, 0 };
	json_t *fin;

	(void)state;
	for (int i = 100; i >= 1; i--) {
		st.t_answer = (struct timespec){ 10, i * 1000 };
		sup_stats_note(&st, SUP_STATS_CONNECT, &t0);
	}
	fin = end_members();
	assert_int_equal(member(fin, "connect", "count"), 100);
	assert_int_equal(member(fin, "connect", "median_us"), 51);
	assert_int_equal(member(fin, "connect", "p99_us"), 100);
	assert_int_equal(member(fin, "exec", "count"), 0);
	json_decref(fin);
}

/* The count is every call; the figures are the last SUP_STATS_RING only. */
static void ring_keeps_the_last(void **state)
{
	struct timespec t0 = { 10, 0 };
	json_t *fin;

	(void)state;
	st.t_answer = (struct timespec){ 11, 0 };               /* 1 s: the old ones */
	for (int i = 0; i < 1000; i++)
		sup_stats_note(&st, SUP_STATS_EXEC, &t0);
	st.t_answer = (struct timespec){ 10, 7000 };            /* 7 us: the last ring's worth */
	for (int i = 0; i < SUP_STATS_RING; i++)
		sup_stats_note(&st, SUP_STATS_EXEC, &t0);
	fin = end_members();
	assert_int_equal(member(fin, "exec", "count"), 1000 + SUP_STATS_RING);
	assert_int_equal(member(fin, "exec", "median_us"), 7);
	assert_int_equal(member(fin, "exec", "p99_us"), 7);
	json_decref(fin);
}

/* Each kind's ENOENT count under its own member, present once it is not 0. */
static void absent_counts(void **state)
{
	json_t *fin;

	(void)state;
	sup_stats_absent(&st, SUP_STATS_EXEC);
	fin = end_members();
	assert_int_equal(json_integer_value(json_object_get(fin, "exec_absent")), 1);
	assert_null(json_object_get(fin, "unix_absent"));
	json_decref(fin);

	for (int i = 0; i < 3; i++)
		sup_stats_absent(&st, SUP_STATS_CONNECT);
	fin = end_members();
	assert_int_equal(json_integer_value(json_object_get(fin, "exec_absent")), 1);
	assert_int_equal(json_integer_value(json_object_get(fin, "unix_absent")), 3);
	/* Absent calls are not latencies. */
	assert_int_equal(member(fin, "exec", "count"), 0);
	assert_int_equal(member(fin, "connect", "count"), 0);
	json_decref(fin);
}

/* The members join what the end record already holds, which stays. */
static void members_join_the_record(void **state)
{
	json_t *fin = json_pack("{s:s,s:i}", "event", "end", "exit", 3);

	(void)state;
	assert_non_null(fin);
	assert_int_equal(sup_stats_to_json(&st, fin), 0);
	assert_string_equal(json_string_value(json_object_get(fin, "event")), "end");
	assert_int_equal(json_integer_value(json_object_get(fin, "exit")), 3);
	assert_non_null(json_object_get(fin, "held"));
	assert_int_equal(json_object_size(fin), 3);
	json_decref(fin);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(empty, reset),
		cmocka_unit_test_setup(answered_latency, reset),
		cmocka_unit_test_setup(unanswered_runs_to_now, reset),
		cmocka_unit_test_setup(answered_is_now, reset),
		cmocka_unit_test_setup(median_and_p99, reset),
		cmocka_unit_test_setup(ring_keeps_the_last, reset),
		cmocka_unit_test_setup(absent_counts, reset),
		cmocka_unit_test_setup(members_join_the_record, reset),
	};

	return cmocka_run_group_tests_name("sup_stats", tests, NULL, NULL);
}
