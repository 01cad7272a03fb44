/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The host C tests' view of the floor instance under test (loader/instance.h,
 * tests/lib.sh): NET_PIN(name) is the path of a pin of its network floor.
 */
#ifndef CORDON_TESTS_PINS_H
#define CORDON_TESTS_PINS_H

#include <limits.h>
#include <stdio.h>
#include "instance.h"

/* DIR/NAME in one of four rotating buffers (a call may name two pins). */
static inline const char *pin_of(const char *dir, const char *name)
{
	static char buf[4][PATH_MAX];
	static unsigned i;
	char *b = buf[i++ % 4];

	snprintf(b, PATH_MAX, "%s/%s", dir, name);
	return b;
}
#define NET_PIN(name) pin_of(instance_net_pin_dir(), name)

#endif /* CORDON_TESTS_PINS_H */
