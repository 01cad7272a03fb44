/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * One credential of a policy (parse_cred.c), for the loader (parse.c).
 * pol_credential_set_upstream and pol_apply_upstream, also defined there,
 * are declared in policy.h.
 */
#ifndef CORDON_POLICY_PARSE_CRED_H
#define CORDON_POLICY_PARSE_CRED_H

#include <jansson.h>
#include "pctx.h"
#include "policy.h"

/*
 * Fill cr (zeroed) from the JSON value o at pointer ptr.  Every problem is
 * reported in c; cr may be left partly filled, and pol_free frees it as it
 * is.
 */
void parse_credential(struct pctx *c, struct pol_credential *cr, json_t *o, const char *ptr);

#endif
