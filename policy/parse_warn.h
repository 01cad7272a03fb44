/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Warnings about a valid policy (parse_warn.c), reported in c by the loader
 * (parse.c) when it has no error and warnings are wanted.  Never errors:
 * the policy means what it says.
 */
#ifndef CORDON_POLICY_PARSE_WARN_H
#define CORDON_POLICY_PARSE_WARN_H

#include "pctx.h"
#include "policy.h"

/*
 * A rule that a stronger rule matching every request it matches makes
 * unable to decide.  O(rules^2): skipped with pol_diags.no_warnings.
 */
void parse_warn_shadowed(struct pctx *c, struct policy *p);
/*
 * For each rule, the id of the stronger rule of lowest id that matches every
 * request it matches (UINT32_MAX: none) into out[n_rules]: through the
 * shadowing index, or (linear) by comparing every pair, the tests' oracle.
 * 0 or -ENOMEM.
 */
int parse_shadowing(const struct policy *p, bool linear, uint32_t *out);
/* An allowed host sent through the credential proxy that no credential names. */
void parse_warn_uncredentialed(struct pctx *c, struct policy *p);
/*
 * Rules that cannot do what they say (issue 34), each at the rule's
 * FILE:LINE:COL: an allow or escalation of rights a structural invariant
 * denies on its path (allow read of ~/.ssh), "/" allowed for writing, no
 * rules or no allowing rule at all, a rule that can never match (a deny or
 * escalation whose host lists expanded to nothing, an "in" condition with
 * no value).
 * Needs p's index (pol_index_build): the invariants are found through it.
 */
void parse_warn_cannot(struct pctx *c, struct policy *p);

#endif
