/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The session's cgroup and its kernel rules (session_cgroup.c): made before
 * any task enters the cgroup (a task in an unregistered session cgroup is
 * denied everything by the network floor), undone in the order that never
 * leaves a task of the session without its floor; the agent's move into
 * the cgroup; the run directory's sockets removed.
 */
#ifndef CORDON_SESSION_CGROUP_H
#define CORDON_SESSION_CGROUP_H

#include <sys/types.h>

#include "sup_state.h"

/*
 * The session's cgroup (made by the floor in the full posture, by cordon
 * in the fallback), its network floor ring and registration, its budgets.
 * With the LSM floor this thread must not yet be in the view (the rules
 * are built in it through world_call).  0, or negative errno, logged.
 */
int make_session(struct sup *s);
/*
 * Undo make_session: kill every task, then the kernel rules.  In that
 * order, so that no task of the session ever runs without its floor.
 * Safe on a partly made session, and twice.
 */
void teardown(struct sup *s);
/* The run directory, its sockets and the MCP socket removed (best effort). */
void remove_run_dir(const struct sup *s);

/*
 * The agent's move into its v2 cgroup, where clone3 could not put it
 * (kernels before 5.7): a move by pid, which may wait for an RCU grace
 * period, so on a thread while start-up goes on (attach_agent is the
 * thread's function; R the result, 0 or negative errno).  (The v1 budget
 * cgroups the agent joins itself.)
 */
struct attach {
	struct sup *s;
	pid_t pid;
	int r;
};

void *attach_agent(void *arg);

#endif
