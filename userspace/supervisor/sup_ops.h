/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The loop's operations (struct sup_ops), apart from the supervisor's
 * state (sup_state.h), so that a module that calls back through them
 * without reaching into struct sup (the helpers' channel, helper.c) sees
 * the table and not the state.
 */
#ifndef CORDON_SUP_OPS_H
#define CORDON_SUP_OPS_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>

#include "approve.h"

struct sup;

/*
 * What the modules below the loop ask of it (supervisor.c fills the table,
 * sup_ops): publish a decision, hold an operation for a human, answer a
 * held call, stop the session.  Called with the same rules as the
 * functions they stand for (supervisor.h, sup_record.h, sup_held.h,
 * sup_exec.h).
 */
struct sup_ops {
	void (*record)(struct sup *s, pid_t pid, const char *raw_name, json_t *raw, json_t *event,
		       const char *decision, const char *rule, const char *reason,
		       const char *approver);
	void (*audit_check)(struct sup *s);
	/* A record of TYPE with FIELDS written under the session's lock, then audit_check. */
	void (*audit_write)(struct sup *s, const char *type, json_t *fields);
	int (*hold)(struct sup *s, const struct held *h, json_t *event, json_t *kept,
		    const char *binary, const char *summary, const char *rule, const char *risk);
	bool (*session_approved)(struct sup *s, json_t *event, const char *binary);
	bool (*human_denied)(struct sup *s, json_t *event);
	void (*apply)(struct sup *s, struct held *h, bool allow, bool emulate, const char *why);
	int (*exec_arm)(struct sup *s, const struct held *h, const char *comm, const char **why);
	void (*stop)(struct sup *s, int sig, const char *by);
	/* A helper's held operation went (approve.c): drop it from its request. */
	void (*withdraw)(struct sup *s, int nr, uint64_t notif);
	void (*withdraw_all)(struct sup *s, int nr);
};

/* Why sup_hold refused (its -errno), as the record says. */
static inline const char *sup_hold_error(int r)
{
	return r == -EAGAIN ? "too many requests are waiting for a human: refused" :
			      "cordon could not hold the request";
}

#endif /* CORDON_SUP_OPS_H */
