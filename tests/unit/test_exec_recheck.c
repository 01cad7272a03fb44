// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The exec recheck's supervisor side (userspace/supervisor/exec_recheck.c),
 * which owns struct exec_recheck: when it is on, what arming writes to the
 * kernel's map, and the watch list against what the kernel then holds (met,
 * killed, still waiting, gone).  The map is a real BPF hash map of the
 * kernel's layout (u32 tid -> struct cordon_exec_expect) made here, and
 * the kernel side's part (marking a kill, removing a met expectation) is
 * played on it as bpf/exec_recheck.bpf.c does; the programs themselves
 * are tested on a real kernel in tests/host/exec_recheck.c.  Those cases
 * skip without CAP_BPF.
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
#include <unistd.h>
#include <bpf/bpf.h>

#include "exec_recheck.h"
#include "net_state.h"

static struct net n;
static struct exec_recheck r;

struct kill_seen {
	pid_t tid;
	char comm[16];
	char summary[128];
};
static struct kill_seen seen[8];
static int n_seen;

static void killed(void *ctx, const struct armed_exec *a)
{
	assert_ptr_equal(ctx, &r);
	assert_true(n_seen < (int)(sizeof(seen) / sizeof(seen[0])));
	seen[n_seen].tid = a->tid;
	snprintf(seen[n_seen].comm, sizeof(seen[0].comm), "%s", a->comm);
	snprintf(seen[n_seen].summary, sizeof(seen[0].summary), "%s", a->summary);
	n_seen++;
}

static int map_make(unsigned entries)
{
	return bpf_map_create(BPF_MAP_TYPE_HASH, "t_exec_expect", sizeof(uint32_t),
			      sizeof(struct cordon_exec_expect), entries, NULL);
}

/* A session's recheck on a map of ENTRIES: skipped without CAP_BPF. */
static void on_map(unsigned entries)
{
	memset(&n, 0, sizeof(n));
	memset(&r, 0, sizeof(r));
	n_seen = 0;
	n.fd_exec_expect = map_make(entries);
	if (n.fd_exec_expect < 0) {
		printf("# no BPF map to arm (bpf_map_create: %s): CAP_BPF is missing\n",
		       strerror(-n.fd_exec_expect));
		skip();
	}
	n.exec_recheck = true;
	/* On only in the initial PID namespace; the list is the same either way. */
	if (!exec_recheck_setup(&r, &n))
		r.on = true;
}

static void off_map(void)
{
	exec_recheck_free(&r);
	assert_null(r.armed);
	assert_false(exec_recheck_pending(&r));
	if (n.fd_exec_expect >= 0)
		close(n.fd_exec_expect);
}

static struct cordon_exec_expect expect(uint64_t h)
{
	struct cordon_exec_expect e;

	memset(&e, 0, sizeof(e));
	e.argv_hash = h;
	e.argv_len = 10;
	e.cgroup = 77;
	return e;
}

static bool in_map(pid_t tid, struct cordon_exec_expect *out)
{
	uint32_t k = (uint32_t)tid;

	return bpf_map_lookup_elem(n.fd_exec_expect, &k, out) == 0;
}

/* The kernel side killed TID's exec: it marks the expectation. */
static void kernel_kills(pid_t tid)
{
	struct cordon_exec_expect e;
	uint32_t k = (uint32_t)tid;

	assert_true(in_map(tid, &e));
	e.killed = 1;
	assert_int_equal(bpf_map_update_elem(n.fd_exec_expect, &k, &e, BPF_EXIST), 0);
}

/* The kernel side met TID's exec (or its thread exited): the expectation goes. */
static void kernel_meets(pid_t tid)
{
	uint32_t k = (uint32_t)tid;

	assert_int_equal(bpf_map_delete_elem(n.fd_exec_expect, &k), 0);
}

/* Without the recheck's programs: off, nothing armed, nothing watched. */
static void off_without_programs(void **state)
{
	struct exec_recheck off;
	struct cordon_exec_expect e = expect(1);
	const char *why = NULL;

	(void)state;
	memset(&off, 0, sizeof(off));
	assert_false(exec_recheck_setup(&off, NULL));
	assert_false(exec_recheck_enabled(&off));
	assert_int_equal(exec_recheck_arm(&off, 42, &e, "sh", "sh -c x", &why), -EOPNOTSUPP);
	assert_non_null(why);
	assert_non_null(strstr(why, "unknown means deny"));
	assert_false(exec_recheck_pending(&off));
	exec_recheck_disarm(&off, 42);         /* no map to touch */
	exec_recheck_sweep(&off, killed, &r);
	assert_int_equal(n_seen, 0);
	exec_recheck_free(&off);

	/* A network floor whose recheck programs did not load: off too. */
	memset(&n, 0, sizeof(n));
	n.exec_recheck = false;
	assert_false(exec_recheck_setup(&off, &n));
}

/* On: only in the initial PID namespace, whose thread ids seccomp reports. */
static void on_in_initial_pid_ns(void **state)
{
	struct exec_recheck x;
	char link[64];
	ssize_t k;

	(void)state;
	memset(&x, 0, sizeof(x));
	memset(&n, 0, sizeof(n));
	n.exec_recheck = true;
	k = readlink("/proc/self/ns/pid", link, sizeof(link) - 1);
	assert_true(k > 0);
	link[k] = '\0';
	assert_int_equal(exec_recheck_setup(&x, &n), strcmp(link, "pid:[4026531836]") == 0);
	assert_int_equal(exec_recheck_enabled(&x), strcmp(link, "pid:[4026531836]") == 0);
}

/* An arm writes what was judged under the thread's id, and the thread is watched. */
static void arm_writes_and_watches(void **state)
{
	struct cordon_exec_expect e = expect(0x1234), got;
	const char *why = NULL;

	(void)state;
	on_map(64);
	assert_int_equal(exec_recheck_arm(&r, 501, &e, "bash", "git push origin main", &why), 0);
	assert_true(exec_recheck_pending(&r));
	assert_true(in_map(501, &got));
	assert_memory_equal(&got, &e, sizeof(e));
	assert_int_equal(r.n, 1);
	assert_int_equal(r.armed[0].tid, 501);
	assert_string_equal(r.armed[0].comm, "bash");
	assert_string_equal(r.armed[0].summary, "git push origin main");

	/* Armed again (its next exec): one entry, the new expectation, in both. */
	e = expect(0x5678);
	assert_int_equal(exec_recheck_arm(&r, 501, &e, "git", "git status", &why), 0);
	assert_int_equal(r.n, 1);
	assert_string_equal(r.armed[0].summary, "git status");
	assert_true(in_map(501, &got));
	assert_int_equal(got.argv_hash, 0x5678);
	off_map();
}

/* Still waiting in the kernel: kept.  Killed: recorded once, forgotten in both.  Met: forgotten. */
static void sweep_follows_the_kernel(void **state)
{
	struct cordon_exec_expect e = expect(9), got;
	const char *why = NULL;

	(void)state;
	on_map(64);
	assert_int_equal(exec_recheck_arm(&r, 11, &e, "a", "run a", &why), 0);
	assert_int_equal(exec_recheck_arm(&r, 12, &e, "b", "run b", &why), 0);
	assert_int_equal(exec_recheck_arm(&r, 13, &e, "c", "run c", &why), 0);

	exec_recheck_sweep(&r, killed, &r);
	assert_int_equal(n_seen, 0);
	assert_int_equal(r.n, 3);

	kernel_kills(12);
	kernel_meets(13);
	exec_recheck_sweep(&r, killed, &r);
	assert_int_equal(n_seen, 1);
	assert_int_equal(seen[0].tid, 12);
	assert_string_equal(seen[0].comm, "b");
	assert_string_equal(seen[0].summary, "run b");
	assert_false(in_map(12, &got));         /* the mark is collected */
	assert_int_equal(r.n, 1);
	assert_int_equal(r.armed[0].tid, 11);
	assert_true(exec_recheck_pending(&r));

	exec_recheck_sweep(&r, killed, &r);     /* a kill is recorded once */
	assert_int_equal(n_seen, 1);
	kernel_meets(11);
	exec_recheck_sweep(&r, killed, &r);
	assert_false(exec_recheck_pending(&r));
	assert_int_equal(n_seen, 1);
	off_map();
}

/*
 * The task left before it was answered: its expectation goes from the
 * kernel and its entry at the next sweep, unrecorded; a kill's mark is
 * never dropped by a disarm, so its record is still made.
 */
static void disarm_keeps_kill_marks(void **state)
{
	struct cordon_exec_expect e = expect(3), got;
	const char *why = NULL;

	(void)state;
	on_map(64);
	assert_int_equal(exec_recheck_arm(&r, 21, &e, "x", "x", &why), 0);
	exec_recheck_disarm(&r, 21);
	assert_false(in_map(21, &got));
	exec_recheck_sweep(&r, killed, &r);
	assert_int_equal(n_seen, 0);
	assert_false(exec_recheck_pending(&r));

	assert_int_equal(exec_recheck_arm(&r, 22, &e, "y", "y", &why), 0);
	kernel_kills(22);
	exec_recheck_disarm(&r, 22);
	assert_true(in_map(22, &got));
	exec_recheck_sweep(&r, killed, &r);
	assert_int_equal(n_seen, 1);
	assert_int_equal(seen[0].tid, 22);
	assert_false(in_map(22, &got));
	off_map();
}

/* Past the first allocation (64) every thread is watched. */
static void grows(void **state)
{
	struct cordon_exec_expect e = expect(5);
	const char *why = NULL;

	(void)state;
	on_map(1024);
	for (pid_t t = 1000; t < 1300; t++)
		assert_int_equal(exec_recheck_arm(&r, t, &e, "w", "w", &why), 0);
	assert_int_equal(r.n, 300);
	kernel_kills(1299);
	kernel_kills(1000);
	exec_recheck_sweep(&r, killed, &r);
	assert_int_equal(n_seen, 2);
	assert_int_equal(r.n, 298);
	off_map();
}

/*
 * The kernel's map full: the arm fails with the map's error and why says
 * so, nothing is watched for it, and the threads armed before stay armed.
 */
static void full_map_refuses(void **state)
{
	struct cordon_exec_expect e = expect(8), got;
	const char *why = NULL;

	(void)state;
	on_map(2);
	assert_int_equal(exec_recheck_arm(&r, 31, &e, "p", "p", &why), 0);
	assert_int_equal(exec_recheck_arm(&r, 32, &e, "q", "q", &why), 0);
	why = NULL;
	assert_true(exec_recheck_arm(&r, 33, &e, "r", "r", &why) < 0);
	assert_non_null(why);
	assert_non_null(strstr(why, "could not be armed"));
	assert_int_equal(r.n, 2);
	assert_false(in_map(33, &got));
	assert_true(in_map(31, &got) && in_map(32, &got));
	/* A thread already watched is armed again in place. */
	assert_int_equal(exec_recheck_arm(&r, 32, &e, "q2", "q2", &why), 0);
	assert_int_equal(r.n, 2);
	off_map();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(off_without_programs),
		cmocka_unit_test(on_in_initial_pid_ns),
		cmocka_unit_test(arm_writes_and_watches),
		cmocka_unit_test(sweep_follows_the_kernel),
		cmocka_unit_test(disarm_keeps_kill_marks),
		cmocka_unit_test(grows),
		cmocka_unit_test(full_map_refuses),
	};

	return cmocka_run_group_tests_name("exec_recheck", tests, NULL, NULL);
}
