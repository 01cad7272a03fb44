// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>
#include "cgroup.h"

static const char hybrid[] =
	"22 28 0:21 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw\n"
	"31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
	"32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
	"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

static const char unified[] =
	"30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate\n";

static void finds_hybrid_mount(void **state)
{
	char out[256];

	assert_int_equal(cg_parse_mountinfo(hybrid, out, sizeof(out)), 0);
	assert_string_equal(out, "/sys/fs/cgroup/unified");
}

static void finds_unified_mount_with_optional_fields(void **state)
{
	char out[256];

	assert_int_equal(cg_parse_mountinfo(unified, out, sizeof(out)), 0);
	assert_string_equal(out, "/sys/fs/cgroup");
}

static void unescapes_octal(void **state)
{
	char out[256];

	assert_int_equal(cg_parse_mountinfo("1 2 0:3 / /mnt/my\\040cg rw - cgroup2 none rw\n",
					    out, sizeof(out)), 0);
	assert_string_equal(out, "/mnt/my cg");
}

static void v1_only_is_enoent(void **state)
{
	char out[256];

	assert_int_equal(cg_parse_mountinfo("32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n",
					    out, sizeof(out)), -ENOENT);
	assert_int_equal(cg_parse_mountinfo("", out, sizeof(out)), -ENOENT);
	assert_int_equal(cg_parse_mountinfo("garbage without separators\n\n\n", out, sizeof(out)),
			 -ENOENT);
}

static void short_buffer_is_reported(void **state)
{
	char out[8];

	assert_int_equal(cg_parse_mountinfo(unified, out, sizeof(out)), -ENAMETOOLONG);
}

static void levels(void **state)
{
	assert_int_equal(cg_level("/sys/fs/cgroup", "/sys/fs/cgroup"), 0);
	assert_int_equal(cg_level("/sys/fs/cgroup", "/sys/fs/cgroup/cordon"), 1);
	assert_int_equal(cg_level("/sys/fs/cgroup/", "/sys/fs/cgroup/cordon/s1"), 2);
	assert_int_equal(cg_level("/sys/fs/cgroup", "/sys/fs/cgroup/cordon/s1/"), 2);
	assert_int_equal(cg_level("/sys/fs/cgroup", "/sys/fs/cgroupx/a"), -EINVAL);
	assert_int_equal(cg_level("/sys/fs/cgroup", "/tmp"), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(finds_hybrid_mount),
		cmocka_unit_test(finds_unified_mount_with_optional_fields),
		cmocka_unit_test(unescapes_octal),
		cmocka_unit_test(v1_only_is_enoent),
		cmocka_unit_test(short_buffer_is_reported),
		cmocka_unit_test(levels),
	};
	return cmocka_run_group_tests_name("cgroup", tests, NULL, NULL);
}
