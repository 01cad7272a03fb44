// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The pure parts of userspace/session/budget.c; the kernel parts are tests/host/budget.c. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>
#include "budget.h"

/* This host's layout: cpu and cpuacct apart, cpuset beside them. */
static const char hybrid[] =
	"31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
	"32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
	"33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
	"34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n"
	"35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
	"39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
	"40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
	"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

/* systemd's hybrid layout on Debian 10: co-mounted, optional fields, escapes. */
static const char comounted[] =
	"26 25 0:23 / /sys/fs/cgroup/unified rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n"
	"29 25 0:26 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:9 - cgroup cgroup rw,cpu,cpuacct\n"
	"30 25 0:27 / /srv/my\\040cg rw,nosuid shared:10 - cgroup cgroup rw,memory\n";

static const char unified[] =
	"30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate\n";

static void v1_mounts_are_found_by_whole_word(void **state)
{
	char out[256];

	assert_int_equal(budget_v1_mount(hybrid, "cpu", out, sizeof(out)), 0);
	assert_string_equal(out, "/sys/fs/cgroup/cpu");
	assert_int_equal(budget_v1_mount(hybrid, "memory", out, sizeof(out)), 0);
	assert_string_equal(out, "/sys/fs/cgroup/memory");
	assert_int_equal(budget_v1_mount(hybrid, "pids", out, sizeof(out)), 0);
	assert_string_equal(out, "/sys/fs/cgroup/pids");
	assert_int_equal(budget_v1_mount(comounted, "cpu", out, sizeof(out)), 0);
	assert_string_equal(out, "/sys/fs/cgroup/cpu,cpuacct");
	assert_int_equal(budget_v1_mount(comounted, "memory", out, sizeof(out)), 0);
	assert_string_equal(out, "/srv/my cg");
}

static void v1_mount_absent(void **state)
{
	char out[256];

	/* cgroup2 is not v1; "cpu" is not "cpuset" or "cpuacct". */
	assert_int_equal(budget_v1_mount(unified, "memory", out, sizeof(out)), -ENOENT);
	assert_int_equal(budget_v1_mount(comounted, "pids", out, sizeof(out)), -ENOENT);
	assert_int_equal(budget_v1_mount("34 31 0:31 / /c rw - cgroup cgroup rw,cpuset,cpuacct\n",
					 "cpu", out, sizeof(out)), -ENOENT);
	assert_int_equal(budget_v1_mount("", "cpu", out, sizeof(out)), -ENOENT);
	assert_int_equal(budget_v1_mount("no separator here\n\n", "cpu", out, sizeof(out)), -ENOENT);
	assert_int_equal(budget_v1_mount(hybrid, "cpu", out, 8), -ENAMETOOLONG);
}

static void words(void **state)
{
	assert_true(budget_has_word("cpuset cpu io memory pids\n", "cpu"));
	assert_true(budget_has_word("cpuset cpu io memory pids\n", "pids"));
	assert_false(budget_has_word("cpuset io memory\n", "cpu"));
	assert_false(budget_has_word("hugetlb\n", "memory"));
	assert_false(budget_has_word("", "memory"));
	assert_true(budget_has_word("rw,cpu,cpuacct", "cpuacct"));
}

static void keyed_values(void **state)
{
	const char *ev = "low 0\nhigh 0\nmax 12\noom 2\noom_kill 3\noom_group_kill 0\n";
	uint64_t v = 99;

	assert_int_equal(budget_key_u64(ev, "oom_kill", &v), 0);
	assert_int_equal(v, 3);
	assert_int_equal(budget_key_u64(ev, "oom", &v), 0);    /* not oom_kill's prefix */
	assert_int_equal(v, 2);
	assert_int_equal(budget_key_u64(ev, "max", &v), 0);
	assert_int_equal(v, 12);
	assert_int_equal(budget_key_u64(ev, "swap", &v), -ENOENT);
	assert_int_equal(budget_key_u64("max junk\n", "max", &v), -EINVAL);
	assert_int_equal(budget_key_u64("max 1", "max", &v), 0);
	assert_int_equal(v, 1);
}

static void cpu_quota(void **state)
{
	assert_int_equal(budget_cpu_quota(0.5), 50000);
	assert_int_equal(budget_cpu_quota(2), 200000);
	assert_int_equal(budget_cpu_quota(0.333), 33300);
	assert_int_equal(budget_cpu_quota(0.001), 1000);        /* the kernel's minimum */
	assert_int_equal(budget_cpu_quota(0), 0);
	assert_int_equal(budget_cpu_quota(-1), 0);
	assert_int_equal(budget_cpu_quota(NAN), 0);
}

static void sizes(void **state)
{
	char b[32];

	budget_fmt_size(64ULL << 20, b, sizeof(b));
	assert_string_equal(b, "64 MiB");
	budget_fmt_size(4ULL << 30, b, sizeof(b));
	assert_string_equal(b, "4 GiB");
	budget_fmt_size(1536ULL << 20, b, sizeof(b));
	assert_string_equal(b, "1536 MiB");
	budget_fmt_size(4097, b, sizeof(b));
	assert_string_equal(b, "4097 bytes");
	budget_fmt_size(8192, b, sizeof(b));
	assert_string_equal(b, "8 KiB");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(v1_mounts_are_found_by_whole_word),
		cmocka_unit_test(v1_mount_absent),
		cmocka_unit_test(words),
		cmocka_unit_test(keyed_values),
		cmocka_unit_test(cpu_quota),
		cmocka_unit_test(sizes),
	};
	return cmocka_run_group_tests_name("budget", tests, NULL, NULL);
}
