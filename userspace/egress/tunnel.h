/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the broker does with an admitted request it does not terminate:
 * a CONNECT tunnel (its ClientHello must name the CONNECT host), a tunnel
 * carrying SSH on an ssh remote's grant, and a plain-HTTP absolute-form
 * request forwarded once.  Each relays until done and records the end.
 */
#ifndef CORDON_TUNNEL_H
#define CORDON_TUNNEL_H

#include <jansson.h>
#include <stddef.h>

#include "broker.h"

/* After 200 to CONNECT: the ClientHello, which must name the CONNECT host (<0: refused, recorded). */
int tunnel_read_hello(struct conn *c, size_t head, json_t *event, char *sni, size_t slen);

/* HEAD: the request head's length in c->buf; EVENT: the request's, for records (borrowed). */
void tunnel_connect(struct conn *c, size_t head, json_t *event);
void tunnel_ssh(struct conn *c, size_t head, json_t *event);
void tunnel_forward(struct conn *c, size_t head, json_t *event);

#endif /* CORDON_TUNNEL_H */
