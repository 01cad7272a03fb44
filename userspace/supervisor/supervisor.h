/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The supervisor's event loop (supervisor.c): seccomp notifications, the
 * floor's events, the approval and helper channels, the session's stop.
 * Its state is struct sup (sup_state.h).  The modules below it (the
 * handlers, sup_held.h, sup_record.h) each have their own header.
 */
#ifndef CORDON_SUPERVISOR_H
#define CORDON_SUPERVISOR_H

#include "sup_state.h"

/* The operations the modules below the loop call back through. */
extern const struct sup_ops sup_ops;

/*
 * Give each owned part of the session what it reads of it, and the loop's
 * operations it calls back through: the approvals (struct approvals_ctx)
 * and the helpers' channels (struct helpers_ctx).  Once the session's
 * facts are known (its name, run directory, policy), before any helper
 * starts and before approve_listen.
 */
void sup_wire(struct sup *s);

/*
 * Stop the session as a whole: SIG to every process of it (cordon-init
 * passes it to its whole PID namespace), then, STOP_GRACE_MS later or at a
 * second stop, SIGKILL to its cgroup.  BY says who asked, for the record
 * and the last words.  Main loop only.
 */
void sup_stop(struct sup *s, int sig, const char *by);

/* The event loop: returns when the agent has exited; *status is its wait status. */
int sup_loop(struct sup *s, int *status);

#endif /* CORDON_SUPERVISOR_H */
