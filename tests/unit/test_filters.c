// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The prebuilt seccomp programs (build/seccomp_filters.h) are exactly what
 * libseccomp makes of the rules in loader/filters.c today, and installing
 * them does what the rules say: the denylist refuses a packet socket and
 * clone3, the notification filter hands back a listener.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/filter.h>
#include "filters.h"
#include "seccomp_filters.h"
#include "fallback.h"
#include "notify.h"

static void same_program(scmp_filter_ctx ctx, const struct sock_filter *want, size_t n)
{
	struct sock_filter got[4096];
	int fd = memfd_create("t", MFD_CLOEXEC);
	ssize_t len;

	assert_true(fd >= 0);
	assert_int_equal(seccomp_export_bpf(ctx, fd), 0);
	len = pread(fd, got, sizeof(got), 0);
	close(fd);
	assert_int_equal((size_t)len, n * sizeof(*want));
	assert_memory_equal(got, want, n * sizeof(*want));
}

static void denylist_is_its_rules(void **state)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);

	assert_non_null(ctx);
	assert_int_equal(filter_denylist_attrs(ctx), 0);
	assert_int_equal(filter_denylist_rules(ctx), 0);
	same_program(ctx, cordon_denylist_filter,
		     sizeof(cordon_denylist_filter) / sizeof(cordon_denylist_filter[0]));
	seccomp_release(ctx);
}

static void each_notify_variant_is_its_rules(void **state)
{
	for (unsigned w = 0; w < FILTER_NOTIFY_VARIANTS; w++) {
		scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);

		assert_non_null(ctx);
		assert_int_equal(filter_notify_attrs(ctx), 0);
		assert_int_equal(filter_notify_rules(ctx, w), 0);
		same_program(ctx, cordon_notify_filters[w].prog, cordon_notify_filters[w].len);
		seccomp_release(ctx);
	}
}

/* In a child: install, then report what the kernel answers. */
static void installed_programs_enforce(void **state)
{
	pid_t pid = fork();
	int st;

	assert_true(pid >= 0);
	if (pid == 0) {
		int fd;

		if (fallback_seccomp_install() < 0)
			_exit(10);
		fd = socket(AF_PACKET, SOCK_RAW, 0);
		if (fd >= 0 || errno != EPERM)
			_exit(11);
		if (syscall(SYS_clone3, NULL, 0) != -1 || errno != ENOSYS)
			_exit(12);
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		if (fd < 0)
			_exit(13);
		fd = notify_install(NOTIFY_CONNECT);
		if (fd < 0)
			_exit(14);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(denylist_is_its_rules),
		cmocka_unit_test(each_notify_variant_is_its_rules),
		cmocka_unit_test(installed_programs_enforce),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
