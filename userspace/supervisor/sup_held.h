/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The operations the supervisor holds or answers on the task's behalf
 * (sup_held.c): a call let go on, refused, or performed by the supervisor
 * on what it judged (an approved connect on a copy of the task's socket,
 * an approved open injected into the task), the requests held for a human
 * (approve.c asks and answers them), and what the session's approvals and
 * denials answer without asking again.  Below the handlers (sup_exec.c,
 * sup_connect.c, sup_open.c); approve.c and the helpers' channel reach it
 * through their tables of operations (struct approvals_ops, s->ops).
 */
#ifndef CORDON_SUP_HELD_H
#define CORDON_SUP_HELD_H

#include "exec_decide.h"
#include "sup_state.h"

/* Run a held or allowed operation: exec continue, connect emulation. */
void sup_apply(struct sup *s, struct held *h, bool allow, bool emulate, const char *why);

/*
 * Hold an escalated operation for a human: a new pending request, or one
 * more call batched into an identical one.  `kept`: the event as its
 * records keep it (an exec's large argv as a digest), or NULL for `event`.
 * -ENOMEM: not held (the caller refuses it).
 */
int sup_hold(struct sup *s, const struct held *h, json_t *event, json_t *kept, const char *binary,
	     const char *summary, const char *rule, const char *risk);

/*
 * Hold it as sup_hold does, for RES's rule and risk; if it cannot be held,
 * the call is refused (EPERM) and the record says why (sup_hold_error).
 */
void sup_held_escalate(struct sup *s, const struct held *h, const char *raw_name, json_t *event,
		       json_t *kept, const char *binary, const char *summary,
		       const struct pol_result *res);

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

/* What a caller refused unasked is told (tell), and the human on cordon's terminal. */
#define REFUSED_AGAIN EXEC_REFUSED_AGAIN

/*
 * Tell the caller PID (once per process: a PATH search retries) and the
 * human that SUMMARY was refused unasked, a human having denied it before.
 */
void sup_held_tell_refused(struct sup *s, pid_t pid, const char *summary);

/*
 * A decision on held call H of request P (approve.c decided it, through
 * struct approvals_ops): recorded, a refused caller told why (tell),
 * the call let go on or refused; a helper's hold is answered on its
 * channel.  An approved exec runs only under the exec recheck, or if no
 * other task shares its memory; an approved git push gets its grant.
 */
void sup_held_decided(struct sup *s, const struct pending *p, struct held *h, bool allow,
		      bool session, bool human, const char *approver);

/* Run fn(arg) on a detached thread; -errno if it cannot start (arg is the caller's then). */
int sup_held_spawn(void *(*fn)(void *), void *arg);

#endif /* CORDON_SUP_HELD_H */
