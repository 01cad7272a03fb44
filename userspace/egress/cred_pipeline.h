/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The credential proxy's request pipeline (issue #33: cred_proxy.c's
 * side): inside a CONNECT to a credential host, cordon is the TLS server
 * (a leaf from the session CA, cred_proxy.h), reads each request, judges
 * it (and its body, where a rule reads it), swaps the sentinel for the
 * secret, and is the TLS client upstream; responses come back with every
 * secret masked, their LLM usage counted against the budget.
 */
#ifndef CORDON_CRED_PIPELINE_H
#define CORDON_CRED_PIPELINE_H

#include <jansson.h>
#include <stddef.h>

#include "broker.h"

/*
 * Serve the tunnel of C (CONNECT answered with head bytes of its head in
 * c->buf) for credential CI until it closes.  EVENT: the CONNECT's, borrowed.
 */
void cred_pipeline_tunnel(struct conn *c, size_t head, json_t *event, int ci);

#endif /* CORDON_CRED_PIPELINE_H */
