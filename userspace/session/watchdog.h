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
 * Fork the watchdog, first of all (before anything of the session
 * exists).  s->watchdog_fd is the supervisor's end of its socket: send 'D'
 * and close it at a clean end; closed without 'D' (the supervisor died),
 * the watchdog ends the session it was armed with.  0, or negative errno
 * (not logged).
 */
int watchdog_start(struct sup *s);

/*
 * Tell the watchdog its session, once the session's cgroup and rules
 * exist: its name, and the run directory's lock (s->run_lock), which the
 * watchdog then shares.  0, or negative errno (not logged): a session
 * whose watchdog cannot be armed must not start.
 */
int watchdog_arm(const struct sup *s);

#endif
