/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `cordon policy draft`'s credential proxy (issue #34): the session's own
 * `cordon http-proxy`, started for one draft with a policy of its own, so
 * that the process which builds the question and parses the model's
 * answer holds a sentinel and never the key (draft_proxy.c says what that
 * closes and what it cannot).
 *
 * One proxy per draft, owned by its caller; not thread-safe.  Functions
 * return 0 or a negative errno with a one-line reason in err.
 */
#ifndef CORDON_DRAFT_PROXY_H
#define CORDON_DRAFT_PROXY_H

#include <stddef.h>

#include "cred_proxy.h"
#include "draft_model.h"
#include "helper.h"

struct draft_proxy {
	struct helper h;                /* the proxy process and its channel (helper.h) */
	struct draft_via via;           /* what draft_ask needs of it (draft_model.h) */
	char sentinel[CRED_SENTINEL_LEN + 1];   /* via.sentinel */
};

/*
 * Start the proxy for m (its provider's key, read by the proxy from this
 * process's environment, then wiped from it here; the endpoint its
 * upstream, verified against upstream_ca when not NULL, else the system's
 * CAs) and wait until it serves.  On success p is filled; on failure
 * nothing is left running (the proxy's own reason went to stderr).
 * Then m->via may point at p->via.
 */
int draft_proxy_start(const struct draft_model *m, const char *upstream_ca, struct draft_proxy *p,
		      char *err, size_t errlen);

/* Drop the proxy's records so far (between questions: its channel never fills). */
void draft_proxy_drain(struct draft_proxy *p);

/* Stop the proxy and wait for it; p may be zeroed (never started). */
void draft_proxy_stop(struct draft_proxy *p);

#endif /* CORDON_DRAFT_PROXY_H */
