/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The session's egress broker and credential proxy (egress_session.c). */
#ifndef CORDON_EGRESS_SESSION_H
#define CORDON_EGRESS_SESSION_H

#include "sup_state.h"

bool egress_session_wanted(const struct sup *s);
int egress_session_listen(struct sup *s);
int egress_session_spawn(struct sup *s);
int egress_session_tell(struct sup *s);
int egress_session_ready(struct sup *s);
void egress_session_stop(struct sup *s);

#endif
