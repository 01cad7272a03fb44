// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The identity a pinned object is checked against is computed at build time
 * (build/NAME.id.h); it must be the hash of the very bytes the skeleton
 * embeds, or every `cordon run` would reload a floor it thinks is stale, or
 * (worse) keep one that is.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
#include "pin.h"
#include "floor.h"
#include "floor.skel.h"
#include "floor.id.h"
#include "net.skel.h"
#include "net.id.h"

static void floor_id_is_the_hash_of_the_embedded_object(void **state)
{
	size_t sz = 0;
	const void *b = floor_bpf__elf_bytes(&sz);

	assert_true(sz > 0);
	assert_true(pin_build_id(b, sz) == floor_BUILD_ID);
	assert_true(floor_build_id() == floor_BUILD_ID);
}

static void net_id_is_the_hash_of_the_embedded_object(void **state)
{
	size_t sz = 0;
	const void *b = net_bpf__elf_bytes(&sz);

	assert_true(sz > 0);
	assert_true(pin_build_id(b, sz) == net_BUILD_ID);
}

static void one_byte_changes_the_id(void **state)
{
	unsigned char a[19] = "an object, in bits", c[19];

	memcpy(c, a, sizeof(a));
	for (size_t i = 0; i < sizeof(a); i++) {
		c[i] ^= 1;
		assert_true(pin_build_id(a, sizeof(a)) != pin_build_id(c, sizeof(c)));
		c[i] ^= 1;
	}
	assert_true(pin_build_id(a, sizeof(a)) != pin_build_id(a, sizeof(a) - 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(floor_id_is_the_hash_of_the_embedded_object),
		cmocka_unit_test(net_id_is_the_hash_of_the_embedded_object),
		cmocka_unit_test(one_byte_changes_the_id),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
