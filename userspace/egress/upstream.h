/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Where the broker connects: names resolved here, on the host, and the
 * address rule (a resolved address that is not public unicast must itself
 * be listed by an allowing rule; link-local never on a grant); a
 * credential's gateway when it names one.
 */
#ifndef CORDON_UPSTREAM_H
#define CORDON_UPSTREAM_H

#include <stddef.h>

#include "broker.h"

/* The host asked for (c->req): the socket, -EACCES (every address refused) or -errno; why says. */
int open_upstream(struct conn *c, char *why, size_t wlen);

/* Credential i's upstream: its gateway if it names one, else the host asked for. */
int open_credential_upstream(struct conn *c, size_t i, char *why, size_t wlen);

#endif /* CORDON_UPSTREAM_H */
