/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The supervisor's event loop (supervisor.c): seccomp notifications, the
 * floor's events, the approval and helper channels, the session's stop.
 * Its state is struct sup (sup_state.h).
 */
#ifndef CORDON_SUPERVISOR_H
#define CORDON_SUPERVISOR_H

#include "sup_state.h"

/* The operations the modules below the loop call back through. */
extern const struct sup_ops sup_ops;

/*
 * After a record was written (s->lock held): if the log can no longer keep
 * records (audit_down), stop the session at once.  See supervisor.c.
 */
void sup_audit_check(struct sup *s);

/*
 * If the session's steps (steps.h) passed its budget, by the supervisor's
 * count or a helper's, stop the session and say so.  Main loop only.
 */
void sup_steps_check(struct sup *s);

/*
 * Before an exec held in h is let go on: arm the exec recheck with what was
 * judged (h->exec).  comm: the caller's, if already read (else it is read
 * here), for the record of a kill.  0 when armed or when the recheck is off (the callers
 * then keep the weaker rule: no argv-based allow while another task shares
 * the caller's memory); otherwise -errno, with the reason in why.
 */
int sup_exec_arm(struct sup *s, const struct held *h, const char *comm, const char **why);

/*
 * Stop the session as a whole: SIG to every process of it (cordon-init
 * passes it to its whole PID namespace), then, STOP_GRACE_MS later or at a
 * second stop, SIGKILL to its cgroup.  BY says who asked, for the record
 * and the last words.  Main loop only.
 */
void sup_stop(struct sup *s, int sig, const char *by);

/* The event loop: returns when the agent has exited; *status is its wait status. */
int sup_loop(struct sup *s, int *status);

/* Time the supervisor held notified calls: {exec: {count, median_us, p99_us}, connect: ...}. */
json_t *sup_stats(const struct sup *s);

/* Publish a decision: audit record and event-socket notification. */
void sup_record(struct sup *s, pid_t pid, const char *raw_name, json_t *raw, json_t *event,
		const char *decision, const char *rule, const char *reason, const char *approver);

/*
 * Hold an escalated operation for a human: a new pending request, or one
 * more call batched into an identical one.  `kept`: the event as its
 * records keep it (an exec's large argv as a digest), or NULL for `event`.
 * -ENOMEM: not held (the caller refuses it).
 */
int sup_hold(struct sup *s, const struct held *h, json_t *event, json_t *kept, const char *binary,
	     const char *summary, const char *rule, const char *risk);
/*
 * What "the same request" means, for batching, for "approved for this
 * session" and for a denial that is not asked again:
 *   - its semantic event, whole and canonical (pol_json_sha256): the lifted
 *     operation with all its arguments, and for an exec its whole argv and
 *     working directory too (the event's "also"), for a connect the address,
 *     for an open the canonical path and the access;
 *   - for an approval (and batching, which shares one answer) also the
 *     canonical binary of an exec (BINARY; NULL otherwise): an approval of
 *     /usr/bin/git's push is not one of a ./git that takes the same argv;
 *   - for a denial, not the binary: the shell's PATH retries of one
 *     command (/usr/local/bin/git, /usr/bin/git, /bin/git) are the one
 *     request the human refused, and a denial wider than the question can
 *     only refuse more.
 * Nothing else (the caller's pid, the time) is part of it.
 */
bool sup_session_approved(struct sup *s, json_t *event, const char *binary);
/* A human denied this event earlier in the session (see above): refuse it unasked. */
bool sup_human_denied(struct sup *s, json_t *event);
/* Run a held or allowed operation: exec continue, connect emulation. */
void sup_apply(struct sup *s, struct held *h, bool allow, bool emulate, const char *why);

#endif /* CORDON_SUPERVISOR_H */
