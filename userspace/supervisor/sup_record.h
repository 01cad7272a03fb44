/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The supervisor's records (sup_record.c): every decision it makes or
 * learns of is written to the audit log and published on the session's
 * event socket; a log that can keep no more records, and a spent steps or
 * audit budget, stop the session.  The small facts every handler's record
 * names (a task's comm, a rule's name, its risk for the human) and the
 * moment a task was answered (the end record's latencies) are here too.
 * The lowest of the loop's modules: it calls none of the others.
 */
#ifndef CORDON_SUP_RECORD_H
#define CORDON_SUP_RECORD_H

#include "sup_state.h"

/* Publish a decision: audit record and event-socket notification. */
void sup_record(struct sup *s, pid_t pid, const char *raw_name, json_t *raw, json_t *event,
		const char *decision, const char *rule, const char *reason, const char *approver);

/*
 * The same, for a caller whose comm is already known: read before an exec
 * replaced the program, or as the kernel reported it.
 */
void sup_record_as(struct sup *s, pid_t pid, const char *comm, const char *raw_name,
		   json_t *raw, json_t *event, const char *decision, const char *rule,
		   const char *reason, const char *approver);

/*
 * After a record was written (s->lock held): if the log can no longer keep
 * records (audit_down), stop the session at once.  See sup_record.c.
 */
void sup_audit_check(struct sup *s);

/*
 * If the session's steps (steps.h) passed its budget, by the supervisor's
 * count or a helper's, stop the session and say so.  Main loop only.
 */
void sup_steps_check(struct sup *s);

/* The steps budget (steps.h): every lifted operation is one step.  Main loop only. */
void sup_record_step(struct sup *s);

/* The rule a decision names: its rule's, or the invariant's; NULL for none. */
const char *sup_record_rule(const struct pol_result *r);

/* The rule's description, or a plain default, for the human. */
void sup_record_risk(const struct pol_result *r, char *out, size_t len);

/* The comm of task PID, or "?" if it cannot be read. */
void sup_record_comm(pid_t pid, char *out, size_t len);
/* The same; KEEP, if not NULL, receives the open file (or stays as it was) to close later. */
void sup_record_comm_keep(pid_t pid, char *out, size_t len, int *keep);

#endif /* CORDON_SUP_RECORD_H */
