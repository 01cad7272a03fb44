/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The agent's terminal (agent_tty.c): with a terminal on stdin, stdout or
 * stderr, the agent gets a pseudo-terminal of its own in their place and
 * never a descriptor of the human's; the human's terminal goes raw for
 * the session and back to how it was at exit and at Ctrl-Z.  Main thread
 * only (one saved terminal state per process).
 */
#ifndef CORDON_AGENT_TTY_H
#define CORDON_AGENT_TTY_H

#include "tty_guard.h"

/*
 * The agent's terminal, made in the current mount namespace's devpts (call
 * it in the view): *SLAVE its end (or -1: no terminal anywhere), T the
 * supervisor's.  With stdin a terminal, stdin goes raw and restore_tty
 * runs at exit.  0, or negative errno (not logged).
 */
int setup_pty(struct terminal *t, int *slave);
/* The human's terminal as cordon found it (a no-op when it was not changed). */
void restore_tty(void);
/* Ctrl-Z on the agent's job: the human's shell takes over until `fg` (t->suspend). */
void suspend_session(struct terminal *t);

#endif
