// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The pure part of loader/net.c.  The exec recheck compares keyed hashes
 * the supervisor computes (net_exec_hash) with the ones the kernel side
 * computes over the same bytes (bpf/exec_recheck.bpf.c, chunk by chunk);
 * both use the SipHash-2-4 in bpf/cordon.h.  Here: that it is SipHash-2-4
 * (the reference vectors of the SipHash paper: key 00..0f, message
 * 00..len-1), that every length of the last partial word is covered, and
 * that a one-byte change or a moved NUL (the argv boundary) changes the
 * value.  That the kernel side agrees is shown by every exec of the host
 * and VM suites, which it would kill.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
#include "net.h"

static const struct cordon_exec_key ref_key = {
	{ 0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL }
};

static uint64_t ref(size_t len)
{
	unsigned char m[64];

	for (size_t i = 0; i < sizeof(m); i++)
		m[i] = (unsigned char)i;
	return net_exec_hash(&ref_key, m, len);
}

static void reference_vectors(void **state)
{
	(void)state;
	assert_true(ref(0) == 0x726fdb47dd0e0e31ULL);
	assert_true(ref(15) == 0xa129ca6149be45e5ULL);
}

static void every_tail_length_differs(void **state)
{
	uint64_t seen[17];

	(void)state;
	for (size_t len = 0; len <= 16; len++) {
		seen[len] = ref(len);
		for (size_t j = 0; j < len; j++)
			assert_true(seen[j] != seen[len]);
	}
}

static void argv_boundaries_count(void **state)
{
	static const char a[] = "git\0push\0origin", b[] = "git\0pus\0horigin",
			  c[] = "git\0status\0origin";

	(void)state;
	assert_true(net_exec_hash(&ref_key, a, sizeof(a)) != net_exec_hash(&ref_key, b, sizeof(b)));
	assert_true(net_exec_hash(&ref_key, a, sizeof(a)) != net_exec_hash(&ref_key, c, sizeof(c)));
	assert_true(net_exec_hash(&ref_key, a, sizeof(a)) == net_exec_hash(&ref_key, a, sizeof(a)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reference_vectors),
		cmocka_unit_test(every_tail_length_differs),
		cmocka_unit_test(argv_boundaries_count),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
