// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The session's steps counter (steps.c) across real processes: children
 * that map the supervisor's memfd anew, as the helpers do, and count
 * concurrently; the budget holds exactly; pages that are not the
 * supervisor's are refused; the size cannot be changed under the mapping.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "steps.h"

#define CHILDREN 4
#define TAKES 5000

/* CHILDREN processes each attach to FD and take TAKES steps; the sum of their "within" answers. */
static unsigned long race(int fd)
{
	int pp[2];
	unsigned long sum = 0;

	assert_int_equal(pipe(pp), 0);
	for (int i = 0; i < CHILDREN; i++) {
		pid_t pid = fork();

		assert_true(pid >= 0);
		if (pid == 0) {
			struct steps mine;
			unsigned long ok = 0;

			if (steps_attach(&mine, fd) < 0)
				_exit(1);
			for (int k = 0; k < TAKES; k++)
				ok += steps_take(&mine);
			_exit(write(pp[1], &ok, sizeof(ok)) == sizeof(ok) ? 0 : 1);
		}
	}
	close(pp[1]);
	for (int i = 0; i < CHILDREN; i++) {
		unsigned long ok;
		int st;

		assert_int_equal(read(pp[0], &ok, sizeof(ok)), sizeof(ok));
		sum += ok;
		assert_true(wait(&st) > 0);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	close(pp[0]);
	return sum;
}

static void budget_exact_across_processes(void **state)
{
	struct steps st;

	(void)state;
	assert_int_equal(steps_create(&st, 7000), 0);
	assert_int_equal(steps_max(&st), 7000);
	assert_true(steps_take(&st));           /* the supervisor's own, first */
	assert_int_equal(race(st.fd), 6999);    /* exactly the rest, whoever raced */
	assert_int_equal(steps_count(&st), 1 + CHILDREN * TAKES);
	assert_true(steps_spent(&st));
	assert_false(steps_take(&st));
	steps_close(&st);
	assert_null(st.page);
	assert_int_equal(st.fd, -1);
}

static void unlimited_still_counted(void **state)
{
	struct steps st, none = { .page = NULL, .fd = -1 };

	(void)state;
	assert_int_equal(steps_create(&st, 0), 0);
	assert_int_equal(race(st.fd), CHILDREN * TAKES);
	assert_int_equal(steps_count(&st), CHILDREN * TAKES);
	assert_false(steps_spent(&st));
	steps_close(&st);
	/* A proxy run alone has no page: nothing is counted, nothing refused. */
	assert_true(steps_take(&none));
	assert_int_equal(steps_count(&none), 0);
	assert_false(steps_spent(&none));
}

static void others_refused(void **state)
{
	struct steps st;
	char path[] = "/tmp/cordon-steps-test.XXXXXX";
	int fd;

	(void)state;
	/* Not sealed. */
	fd = memfd_create("x", MFD_ALLOW_SEALING);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 24), 0);
	assert_int_equal(steps_attach(&st, fd), -EINVAL);
	/* Sealed, the right size, but never written by steps_create. */
	assert_int_equal(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL), 0);
	assert_int_equal(steps_attach(&st, fd), -EINVAL);
	assert_null(st.page);
	close(fd);
	/* Sealed, another size. */
	fd = memfd_create("x", MFD_ALLOW_SEALING);
	assert_int_equal(ftruncate(fd, 4096), 0);
	assert_int_equal(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL), 0);
	assert_int_equal(steps_attach(&st, fd), -EINVAL);
	close(fd);
	/* A file, and no descriptor at all. */
	fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(steps_attach(&st, fd), -EINVAL);
	close(fd);
	assert_int_equal(steps_attach(&st, 999), -EINVAL);
}

static void size_sealed(void **state)
{
	struct steps st;

	(void)state;
	assert_int_equal(steps_create(&st, 3), 0);
	/* A helper cannot pull the page from under the supervisor's mapping (SIGBUS). */
	assert_int_equal(ftruncate(st.fd, 0), -1);
	assert_int_equal(errno, EPERM);
	assert_int_equal(fcntl(st.fd, F_ADD_SEALS, F_SEAL_WRITE), -1);
	assert_true(fcntl(st.fd, F_GETFD) & FD_CLOEXEC);        /* never inherited by an exec */
	steps_close(&st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(budget_exact_across_processes),
		cmocka_unit_test(unlimited_still_counted),
		cmocka_unit_test(others_refused),
		cmocka_unit_test(size_sealed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
