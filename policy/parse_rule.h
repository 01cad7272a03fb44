/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * One rule of a policy (parse_rule.c), for the loader (parse.c): "name",
 * "decision", "description" and exactly one subject, "fs", "net" or "tool".
 * Rule roots are canonical like requests (symlinks resolved at load);
 * glob patterns are only normalised.
 */
#ifndef CORDON_POLICY_PARSE_RULE_H
#define CORDON_POLICY_PARSE_RULE_H

#include <jansson.h>
#include "pctx.h"
#include "policy.h"

/*
 * Fill r (zeroed; its id set) from the JSON value o at pointer ptr.  Every
 * problem is reported in c; r may be left partly filled, and pol_free frees
 * it as it is.
 */
void parse_rule(struct pctx *c, struct pol_rule *r, json_t *o, const char *ptr);

#endif
