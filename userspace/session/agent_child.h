/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The agent's side of a session (agent_child.c): the first process of the
 * agent's PID namespace, born of the supervisor, makes /proc its own, drops
 * to the agent's identity, restricts itself, hands the supervisor its
 * seccomp listener, and on the supervisor's word forks the agent and stays
 * as the session's init (cordon-init).
 */
#ifndef CORDON_AGENT_CHILD_H
#define CORDON_AGENT_CHILD_H

#include "sup_state.h"

/* `cordon run`'s exit status when cordon itself fails (126 and 127 as a shell's). */
#define EXIT_CORDON 125
/* The most the credentials' sentinels, as NAME=VALUE lines, may take (agent_child.c). */
#define SENTINELS_MAX 65536

/*
 * In the child of world_clone, in the session's view, still root.  SOCK is
 * its end of the socketpair to the supervisor: the listener goes over it,
 * then it waits for 'R' (anything else, or EOF: exit EXIT_CORDON quietly).
 * PTY_SLAVE is the agent's terminal or -1.  Never returns: it exits with
 * the agent's status, or 125 (cordon), 126 (cannot run), 127 (not found)
 * with the reason on stderr.
 */
void agent_child(struct sup *s, int sock, int pty_slave) __attribute__((noreturn));

#endif
