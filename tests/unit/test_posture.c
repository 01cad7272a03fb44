// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>
#include "posture.h"

static void all(struct posture *p, enum mech_state st)
{
	memset(p, 0, sizeof(*p));
	for (int i = 0; i < MECH_MAX; i++)
		p->mech[i].state = st;
	p->mech[MECH_LANDLOCK].value = 7;
}

static bool lacks(const struct posture *p, const char *id)
{
	for (int i = 0; i < p->n_lacks; i++)
		if (!strcmp(p->lacks[i]->id, id))
			return true;
	return false;
}

static void full_when_everything_works(void **state)
{
	struct posture p;

	all(&p, MECH_AVAILABLE);
	posture_compute(&p);
	assert_int_equal(p.level, POSTURE_FULL);
	assert_int_equal(p.n_lacks, 0);
	assert_string_equal(posture_name(p.level), "full");
}

static void fallback_without_bpf_lsm_lists_what_it_lacks(void **state)
{
	struct posture p;

	all(&p, MECH_AVAILABLE);
	p.mech[MECH_BPF_LSM].state = MECH_UNAVAILABLE;
	posture_compute(&p);
	assert_int_equal(p.level, POSTURE_FALLBACK);
	assert_true(lacks(&p, "hardlink-protected-inodes"));
	assert_true(lacks(&p, "mmap-exec"));
	assert_false(lacks(&p, "landlock-scope"));   /* ABI 7 has scoping */
	assert_false(lacks(&p, "network"));
}

static void old_landlock_abi_adds_its_gaps(void **state)
{
	struct posture p;

	all(&p, MECH_AVAILABLE);
	p.mech[MECH_BPF_LSM].state = MECH_UNAVAILABLE;
	p.mech[MECH_LANDLOCK].value = 3;
	posture_compute(&p);
	assert_int_equal(p.level, POSTURE_FALLBACK);
	assert_false(lacks(&p, "landlock-truncate"));
	assert_true(lacks(&p, "landlock-tcp"));
	assert_true(lacks(&p, "landlock-ioctl-dev"));
	assert_true(lacks(&p, "landlock-scope"));
}

static void not_checked_counts_as_unavailable(void **state)
{
	struct posture p;

	all(&p, MECH_AVAILABLE);
	p.mech[MECH_BPF_LSM].state = MECH_NOT_CHECKED;
	p.mech[MECH_CGROUP_BPF].state = MECH_NOT_CHECKED;
	posture_compute(&p);
	assert_int_equal(p.level, POSTURE_INSUFFICIENT);
	assert_true(lacks(&p, "network"));
}

static void insufficient_without_any_floor(void **state)
{
	struct posture p;

	all(&p, MECH_AVAILABLE);
	p.mech[MECH_BPF_LSM].state = MECH_UNAVAILABLE;
	p.mech[MECH_LANDLOCK].state = MECH_UNAVAILABLE;
	posture_compute(&p);
	assert_int_equal(p.level, POSTURE_INSUFFICIENT);
	assert_true(lacks(&p, "filesystem"));
}

static void missing_notify_is_insufficient_even_with_lsm(void **state)
{
	struct posture p;

	all(&p, MECH_AVAILABLE);
	p.mech[MECH_SECCOMP_NOTIFY].state = MECH_UNAVAILABLE;
	posture_compute(&p);
	assert_int_equal(p.level, POSTURE_INSUFFICIENT);
	assert_true(lacks(&p, "supervisor"));
}

static void missing_addfd_send_and_getfd_are_named(void **state)
{
	struct posture p;

	all(&p, MECH_AVAILABLE);
	p.mech[MECH_SECCOMP_ADDFD_SEND].state = MECH_UNAVAILABLE;
	p.mech[MECH_PIDFD_GETFD].state = MECH_UNAVAILABLE;
	posture_compute(&p);
	assert_int_equal(p.level, POSTURE_FULL);
	assert_true(lacks(&p, "emulated-open"));
	assert_true(lacks(&p, "emulated-connect"));
}

static void mechanism_names_are_unique(void **state)
{
	for (int i = 0; i < MECH_MAX; i++)
		for (int j = i + 1; j < MECH_MAX; j++)
			assert_string_not_equal(mech_name((enum mech)i), mech_name((enum mech)j));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(full_when_everything_works),
		cmocka_unit_test(fallback_without_bpf_lsm_lists_what_it_lacks),
		cmocka_unit_test(old_landlock_abi_adds_its_gaps),
		cmocka_unit_test(not_checked_counts_as_unavailable),
		cmocka_unit_test(insufficient_without_any_floor),
		cmocka_unit_test(missing_notify_is_insufficient_even_with_lsm),
		cmocka_unit_test(missing_addfd_send_and_getfd_are_named),
		cmocka_unit_test(mechanism_names_are_unique),
	};
	return cmocka_run_group_tests_name("posture", tests, NULL, NULL);
}
