// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <string.h>
#include "pin.h"

uint64_t pin_build_id(const void *elf, size_t len)
{
	const unsigned char *b = elf;
	uint64_t h = 0xcbf29ce484222325ull ^ len;
	size_t i = 0;

	/*
	 * An identity, not a defence: it only tells this build's objects from
	 * another's.  Computed once at build time (tools/buildid writes
	 * build/NAME.id.h); at run time only by the unit test that checks the
	 * two agree.  Eight bytes a step, then the tail.
	 */
	for (; i + 8 <= len; i += 8) {
		uint64_t w;

		memcpy(&w, b + i, 8);
		h = (h ^ w) * 0x100000001b3ull;
		h ^= h >> 29;
	}
	for (; i < len; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}
