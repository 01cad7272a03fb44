/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The session's view prepared off the main thread (view_prep.c): the
 * agent's home layer and private world (world.h) built, then, where the
 * fallback is wanted, its Landlock ruleset inside it, while the main
 * thread opens the floor, the audit log and the session.
 */
#ifndef CORDON_VIEW_PREP_H
#define CORDON_VIEW_PREP_H


#include "sup_state.h"

/*
 * The thread's function (ARG is the struct sup).  Without a view
 * (s->world.ns_fd < 0) it builds one (failure: s->world_error, ns_fd still
 * < 0); with one it joins it.  Then, when s->ll_wanted, the ruleset:
 * s->ll_fd, s->ll_rep and s->proc_rights (the fallback's rights on the
 * agent's own /proc, CORDON_FS_READ or 0, which its first process adds
 * once its PID namespace exists), or s->ll_fd < 0 and s->ll_error.  Reads the
 * policy only; join it before the agent is forked (a raw clone3 child must
 * not inherit a lock another thread holds).  s->main_cpu: the starting
 * thread's CPU, which this one leaves if it can.
 */
void *prepare_view(void *arg);

#endif
