/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the end record says of the supervisor's work (sup_stats.c): how
 * long it held each notified exec and connect, and the calls answered
 * ENOENT unrecorded because their path is not in the session's view.  The
 * module owns struct sup_stats; the handlers and the loop note into it,
 * the audit's end record asks it for its members.  It never sees struct
 * sup.  Noted from the main loop only; read once the loop has ended.
 */
#ifndef CORDON_SUP_STATS_H
#define CORDON_SUP_STATS_H

#include <stdint.h>
#include <time.h>
#include <jansson.h>

/* The last SUP_STATS_RING latencies of each kind are kept. */
#define SUP_STATS_RING 4096

struct sup_stats {
	/* How long the supervisor held each notified call (receive to answer), in
	 * microseconds: the last SUP_STATS_RING of each kind, for the end record. */
	uint32_t lat_exec[SUP_STATS_RING], lat_connect[SUP_STATS_RING];
	uint64_t n_exec, n_connect;
	struct timespec t_answer;       /* when the main loop last answered a task */
	uint64_t n_unix_absent;         /* connects to a socket path not in the view (ENOENT) */
	uint64_t n_exec_absent;         /* execs of a path not in the view (ENOENT) */
};

enum sup_stats_kind {
	SUP_STATS_EXEC,
	SUP_STATS_CONNECT,
};

/* The main loop answered a task now (the handler that answers calls it). */
void sup_stats_answered(struct sup_stats *st);

/*
 * A notified call of KIND received at T0 (CLOCK_MONOTONIC) is handled:
 * its latency is T0 to the last answer, or to now when it was not
 * answered since T0 (held for a human, answered by a worker).
 */
void sup_stats_note(struct sup_stats *st, enum sup_stats_kind kind, const struct timespec *t0);

/* A call of KIND answered ENOENT unrecorded: its path is not in the session's view. */
void sup_stats_absent(struct sup_stats *st, enum sup_stats_kind kind);

/*
 * The end record's members, set in FIN: "held" ({exec: {count, median_us,
 * p99_us}, connect: ...}; count alone when none), "unix_absent" and
 * "exec_absent" (only when not 0).  0, or -ENOMEM.
 */
int sup_stats_to_json(const struct sup_stats *st, json_t *fin);

#endif /* CORDON_SUP_STATS_H */
