// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The floor instance (loader/instance.c): which names are instances, which
 * cgroups are sessions' of any instance, and who may pick one.
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cordon.h"
#include "instance.h"

static void test_names(void **state)
{
	(void)state;
	assert_true(instance_name_ok("test"));
	assert_true(instance_name_ok("ci_2"));
	assert_true(instance_name_ok("abcdefghijklmnop"));
	assert_false(instance_name_ok(""));
	assert_false(instance_name_ok("abcdefghijklmnopq"));
	/* Nesting, another instance's connector parent, hidden or odd names. */
	assert_false(instance_name_ok("a/b"));
	assert_false(instance_name_ok("../x"));
	assert_false(instance_name_ok("x-unix"));
	assert_false(instance_name_ok("a.b"));
	assert_false(instance_name_ok("Test"));
	assert_false(instance_name_ok("a b"));
}

static void test_cgroups(void **state)
{
	(void)state;
	assert_true(instance_cgroup_in_session("0::/cordon/s0123456789abcdef\n"));
	assert_true(instance_cgroup_in_session("0::/cordon-unix/s0123456789abcdef\n"));
	assert_true(instance_cgroup_in_session("0::/cordon_test/s0123456789abcdef\n"));
	assert_true(instance_cgroup_in_session("0::/cordon_test-unix/s0123456789abcdef\n"));
	assert_true(instance_cgroup_in_session("0::/cordon_test/s01/deeper\n"));
	/* A cgroup v1 line of a hybrid host counts as much as the v2 one. */
	assert_true(instance_cgroup_in_session("5:memory:/cordon_t/s1\n0::/user.slice\n"));
	assert_false(instance_cgroup_in_session("0::/user.slice/user-0.slice/session-1.scope\n"));
	assert_false(instance_cgroup_in_session("0::/cordon-probe-12/x\n"));
	assert_false(instance_cgroup_in_session("0::/cordonx/s1\n"));
	assert_false(instance_cgroup_in_session("0::/cordon\n"));
	assert_false(instance_cgroup_in_session("0::/\n"));
}

/* instance_init in a child with ENV set (NULL: unset) and SUDO_UID; its result. */
static int init_with(const char *env, const char *sudo, char *pin, size_t len)
{
	int fds[2], st;
	pid_t pid;
	ssize_t n;

	if (pipe(fds) < 0)
		return -999;
	pid = fork();
	if (pid == 0) {
		char why[256], out[256];
		int r;

		close(fds[0]);
		if (env)
			setenv(INSTANCE_ENV, env, 1);
		else
			unsetenv(INSTANCE_ENV);
		if (sudo)
			setenv("SUDO_UID", sudo, 1);
		else
			unsetenv("SUDO_UID");
		r = instance_init(why, sizeof(why));
		snprintf(out, sizeof(out), "%s", r == 0 ? instance_pin_dir() : why);
		if (write(fds[1], out, strlen(out)) < 0)
			_exit(99);
		_exit(r == -EINVAL ? 1 : r == -EPERM ? 2 : 0);
	}
	close(fds[1]);
	n = read(fds[0], pin, len - 1);
	pin[n > 0 ? n : 0] = '\0';
	close(fds[0]);
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_init(void **state)
{
	char pin[256];

	(void)state;
	assert_int_equal(init_with(NULL, NULL, pin, sizeof(pin)), 0);
	assert_string_equal(pin, CORDON_PIN_DIR);
	assert_int_equal(init_with("", NULL, pin, sizeof(pin)), 0);
	assert_string_equal(pin, CORDON_PIN_DIR);
	assert_int_equal(init_with("a-b", NULL, pin, sizeof(pin)), 1);
	assert_non_null(strstr(pin, "not an instance name"));
	/* Root or not: authority is checked where the floor and the sockets are. */
	assert_int_equal(init_with("t1", NULL, pin, sizeof(pin)), 0);
	assert_string_equal(pin, CORDON_PIN_DIR "_t1");
	/* sudo -E: what sudoers passes is the invoker's choice to make (instance.h). */
	assert_int_equal(init_with("t1", "1000", pin, sizeof(pin)), 0);
	assert_string_equal(pin, CORDON_PIN_DIR "_t1");
}

/* A session's run directory is found in whichever instance holds it. */
static void test_run_dir_any(void **state)
{
	char base[] = "/tmp/test_instance.XXXXXX", p[128];
	const char *s = "s0123456789abcdef";

	(void)state;
	assert_non_null(mkdtemp(base));
	assert_int_equal(instance_session_run_dir_any(base, s), 0);
	snprintf(p, sizeof(p), "%s/.t1", base);
	assert_int_equal(mkdir(p, 0700), 0);
	/* Not an instance's directory: never searched. */
	snprintf(p, sizeof(p), "%s/.X-y", base);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/.X-y/%s", base, s);
	assert_int_equal(mkdir(p, 0700), 0);
	assert_int_equal(instance_session_run_dir_any(base, s), 0);
	snprintf(p, sizeof(p), "%s/.t1/%s", base, s);
	assert_int_equal(mkdir(p, 0700), 0);
	assert_int_equal(instance_session_run_dir_any(base, s), 1);
	assert_int_equal(rmdir(p), 0);
	snprintf(p, sizeof(p), "%s/%s", base, s);
	assert_int_equal(mkdir(p, 0700), 0);
	assert_int_equal(instance_session_run_dir_any(base, s), 1);
	snprintf(p, sizeof(p), "rm -rf '%s'", base);
	assert_int_equal(system(p), 0);
	assert_int_equal(instance_session_run_dir_any(base, s), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_cgroups),
		cmocka_unit_test(test_init),
		cmocka_unit_test(test_run_dir_any),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
