/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A connect the session asked for (sup_connect.c): an inet address judged
 * and let go on, held for a human or refused; a Unix socket lifted and
 * recorded, and in the fallback posture judged by its canonical path and
 * connected by the session's Unix connector.  Main loop only.
 */
#ifndef CORDON_SUP_CONNECT_H
#define CORDON_SUP_CONNECT_H

#include "notify.h"
#include "sup_state.h"

/* A seccomp notification of connect: answered, held or refused, and recorded. */
void sup_connect_handle(struct sup *s, const struct notify_req *req);

#endif /* CORDON_SUP_CONNECT_H */
