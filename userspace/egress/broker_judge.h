/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The policy's word on one request (a CONNECT, an absolute-form request,
 * or a request inside a credential tunnel), lifted into http.request,
 * counted as a step and recorded; an approved push's grant where the
 * policy refuses by default or asks; the session's human, over the
 * supervisor's channel, where it escalates.
 */
#ifndef CORDON_BROKER_JUDGE_H
#define CORDON_BROKER_JUDGE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "broker.h"

/* true: go on; false: refused, why says so.  EVENT: borrowed. */
bool broker_judge(struct conn *c, json_t *event, const char *host, uint16_t port,
	   struct pol_result *res, char *why, size_t wlen);

#endif /* CORDON_BROKER_JUDGE_H */
