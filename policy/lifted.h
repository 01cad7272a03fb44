/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What a recogniser makes (lifted.c): the events an exec is lifted to,
 * deduplicated and bounded.  pol_lift_exec (lift.c) owns a struct lift for
 * one exec; the recognisers (lift_git.c, lift_pkg.c, lift_fetch.c) add to it.
 * Not thread-safe: one exec, one struct lift.
 */
#ifndef CORDON_POLICY_LIFTED_H
#define CORDON_POLICY_LIFTED_H

#include <limits.h>
#include <stdbool.h>
#include <jansson.h>
#include "policy.h"

struct lift {
	struct pol_lifted *out;
	int n;
	bool overflow;          /* more events than POL_MAX_LIFTED: the exec is refused */
	const char *cwd;
	const char *workspace;  /* as the policy names it, or NULL */
	char ws[PATH_MAX];      /* the workspace, canonical ("" when unknown), once asked */
	bool ws_done;
	int depth;              /* alias expansion and nested programs */
};

/*
 * Add the event SERVER.TOOL {args}, taking args: an event already there is
 * not added twice.  NULL args (out of memory), or more than POL_MAX_LIFTED
 * events, set L->overflow: no event is an event lost, so the exec is refused.
 */
void lifted_add(struct lift *L, const char *server, const char *tool, json_t *args);
/* Is s one of the NULL-terminated list? */
bool lifted_in_list(const char *s, const char *const *list);
/* The last component of a path (a program's name). */
const char *lifted_base(const char *s);

#endif
