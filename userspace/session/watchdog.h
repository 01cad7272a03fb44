/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The session's watchdog (watchdog.c): a process outside the session that
 * outlives a dead supervisor just long enough to kill the session, remove
 * its rules and seal its log.  "If the supervisor dies, the agent dies
 * with it."
 */
#ifndef CORDON_WATCHDOG_H
#define CORDON_WATCHDOG_H

#include "sup_state.h"

/*
 * Fork the watchdog once the session's cgroup and rules exist (it acts on
 * the copy of *s it was forked with).  s->watchdog_fd is the supervisor's
 * end of its pipe: write 'D' and close it at a clean end.  0, or negative
 * errno (not logged).
 */
int start_watchdog(struct sup *s);

#endif
