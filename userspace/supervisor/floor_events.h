/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The kernel floors' events of a session (floor_events.c): the floor's
 * (writes, deletes, denials: the session's ring of the LSM floor) and the
 * network floor's (every refusal by cgroup-bpf), each recorded as the
 * kernel's decision, and a lifecycle record of how many a full ring lost.
 * Nothing is judged again: the kernel has already enforced.  Main loop only.
 */
#ifndef CORDON_FLOOR_EVENTS_H
#define CORDON_FLOOR_EVENTS_H

#include "sup_state.h"

/* Record what the floor's ring of the session holds now, and its losses (s->fsess set). */
void floor_events_drain(struct sup *s);

/* The same for the network floor's ring (s->nring set). */
void floor_events_drain_net(struct sup *s);

#endif /* CORDON_FLOOR_EVENTS_H */
