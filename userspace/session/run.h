/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A session, from start-up to teardown (run.c): `cordon run`'s work once
 * its options are parsed (cmd/run.c).  The start-up's order and the reason
 * for each step are run.c's opening comment.
 */
#ifndef CORDON_RUN_H
#define CORDON_RUN_H

#include "agent_child.h"
#include "sup_state.h"

/*
 * Run one session: the agent OPT->argv confined, supervised and audited
 * until it exits, then everything the session made undone.  Main thread,
 * once per process (the terminal's state and the -v clock are the
 * process's).  Returns the agent's exit status (128 + N for a signal), or
 * EXIT_CORDON when cordon failed (the reason logged), 126 or 127 when the
 * agent could not be run.
 */
int run_session(struct run_options *opt);

#endif
