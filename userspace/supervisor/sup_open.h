/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * An open the session asked for (sup_open.c), notified only when the policy
 * escalates some file access: let go on for the floor to judge, or held
 * for a human, refused and recorded.  Main loop only.
 */
#ifndef CORDON_SUP_OPEN_H
#define CORDON_SUP_OPEN_H

#include "notify.h"
#include "sup_state.h"

/* A seccomp notification of open, openat, openat2 or creat. */
void sup_open_handle(struct sup *s, const struct notify_req *req);

#endif /* CORDON_SUP_OPEN_H */
