/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The exec recheck's supervisor side (exec_recheck.c): whether it is on
 * for this session, and the execs armed in the kernel
 * (bpf/exec_recheck.bpf.c, through loader/net.h) watched until the kernel
 * has met them, killed them, or their thread has gone.  The module owns
 * struct exec_recheck; nothing else reads or changes its members (struct
 * sup holds one, set up by floor_open).  It never sees struct sup.  Main
 * loop only.
 *
 * The one fact every caller must respect: an entry is forgotten only once
 * the kernel holds nothing for its thread.  A kill's mark that nobody
 * collects stays in the kernel's map for good, and enough of them would
 * refuse every session's execs.
 */
#ifndef CORDON_EXEC_RECHECK_H
#define CORDON_EXEC_RECHECK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cordon.h"

struct net;

/* One exec let go on under the recheck: what the record of its kill says. */
struct armed_exec {
	pid_t tid;                      /* the kernel's thread id (initial PID namespace) */
	uint64_t t_ms;                  /* CLOCK_MONOTONIC, when armed */
	char comm[16];                  /* the caller's, before it became the program */
	char summary[128];              /* the judged argv, as shown */
};

struct exec_recheck {
	bool on;
	struct net *net;                /* the network floor holding the kernel's map */
	struct armed_exec *armed;       /* one per thread, grown as needed */
	int n, cap;
};

/*
 * Set up at the floor's opening: on when the recheck's programs are
 * attached in NET and this process is in the initial PID namespace (the
 * kernel keys expectations by its own thread ids, the only ones seccomp
 * reports there).  Returns whether it is on; off, the session declares
 * the missing protection and keeps the weaker rule (sup_exec.c).
 */
bool exec_recheck_setup(struct exec_recheck *r, struct net *net);

/* Whether the kernel compares each exec let go on with what was judged. */
bool exec_recheck_enabled(const struct exec_recheck *r);

/* Whether execs are watched (the loop then wakes often enough to record a kill promptly). */
bool exec_recheck_pending(const struct exec_recheck *r);

/*
 * Arm thread TID's next exec with E (what was judged, its cgroup set) and
 * watch it, with COMM and SUMMARY for the record of a kill; a thread
 * armed again replaces its entry, in the kernel and here.  The slot is
 * taken before the kernel is armed, so an expectation is never left in
 * the kernel unwatched.  0, or -errno with the reason in *WHY (-EOPNOTSUPP
 * when off, -ENOMEM, the kernel map's error).
 */
int exec_recheck_arm(struct exec_recheck *r, pid_t tid, const struct cordon_exec_expect *e,
		     const char *comm, const char *summary, const char **why);

/*
 * Drop TID's expectation from the kernel (the task left the exec before it
 * was answered), unless the kernel has marked a kill on it; its entry here
 * goes at the next sweep, once the kernel holds nothing for it.
 */
void exec_recheck_disarm(struct exec_recheck *r, pid_t tid);

/*
 * Ask the kernel about every watched exec: KILLED(CTX, A) for each it
 * killed for not being what was judged; those it killed, met or whose
 * thread has gone are forgotten.  One still waiting (an exec that failed,
 * ENOENT on a PATH search) stays, in the kernel and here, until the
 * thread's next exec or its exit.
 */
void exec_recheck_sweep(struct exec_recheck *r,
			void (*killed)(void *ctx, const struct armed_exec *a), void *ctx);

/* The watch list's memory (the kernel's entries are the floor's: net_close, net_reap). */
void exec_recheck_free(struct exec_recheck *r);

#endif /* CORDON_EXEC_RECHECK_H */
