// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The supervisor's records (sup_record.h): a decision goes to the audit log
 * and to the session's event socket under s->lock, from the main loop and
 * from the workers alike; a log that can keep no more, or a budget spent,
 * stops the session.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <time.h>

#include "audit.h"
#include "cgroup.h"
#include "sup_record.h"
#include "util.h"

void sup_record_comm(pid_t pid, char *out, size_t len)
{
	sup_record_comm_keep(pid, out, len, NULL);
}

void sup_record_comm_keep(pid_t pid, char *out, size_t len, int *keep)
{
	char path[64], b[64];
	int fd;
	ssize_t n;

	/* One read: a comm is at most 16 bytes (TASK_COMM_LEN), on the exec's answer path. */
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : read(fd, b, sizeof(b) - 1);
	if (fd >= 0 && keep)
		*keep = fd;     /* closed by the caller after its answer */
	else if (fd >= 0)
		close(fd);
	if (n <= 0) {
		snprintf(out, len, "?");
		return;
	}
	b[n] = '\0';
	b[strcspn(b, "\n")] = '\0';
	snprintf(out, len, "%s", b);
}

/* The record on the session's event socket (approve_publish). */
static void publish(struct sup *s, json_t *params)
{
	json_t *msg = json_pack("{s:s,s:s,s:O}", "jsonrpc", "2.0", "method", "cordon/event",
				"params", params);
	char *line = json_dumps(msg, JSON_COMPACT);
	size_t n;

	json_decref(msg);
	if (!line)
		return;
	n = strlen(line);
	line[n] = '\n';
	approve_publish(&s->ap, line, n + 1);
	free(line);
}

void sup_record_as(struct sup *s, pid_t pid, const char *comm, const char *raw_name,
		   json_t *raw, json_t *event, const char *decision, const char *rule,
		   const char *reason, const char *approver)
{
	json_t *rec = json_object();

	json_object_set_new(rec, "pid", json_integer(pid));
	json_object_set_new(rec, "comm", pol_json_text(comm));
	if (raw) {
		json_object_set_new(raw, "syscall", json_string(raw_name));
		json_object_set(rec, "raw", raw);
	}
	if (event)
		json_object_set(rec, "event", event);
	json_object_set_new(rec, "decision", json_string(decision));
	if (rule)
		json_object_set_new(rec, "rule", json_string(rule));
	if (reason)
		json_object_set_new(rec, "reason", pol_json_text(reason));
	if (approver)
		json_object_set_new(rec, "approver", json_string(approver));
	pthread_mutex_lock(&s->lock);
	if (s->audit) {
		(void)audit_write(s->audit, "decision", rec);
		sup_audit_check(s);
	}
	json_object_set_new(rec, "session", json_string(s->name));
	publish(s, rec);
	pthread_mutex_unlock(&s->lock);
	json_decref(rec);
}

/*
 * A session whose audit log cannot keep its records is stopped.  Attack: the
 * agent fills the filesystem that holds the log, or makes a record too large
 * to keep, and goes on unrecorded (before this, a full disk left the log cut
 * mid-line and the session ran on).  The log keeps a reserve past its end
 * and goes down while some of it is left (AUDIT_RESERVE in audit.c): the
 * first time it reports that, the session's every task is SIGKILLed here, at
 * once, every later notification is refused unjudged (handle_notification),
 * and the log's "audit-down" record says why, with how many records were
 * dropped; the end record and the seal still fit in the reserve.
 * What it cannot close: an operation answered before its record failed (the
 * supervisor answers first, then records: a write error other than a full
 * disk, or a record over AUDIT_RECORD_MAX) has happened; it is the last one,
 * and the log counts its record as dropped.  Where the filesystem keeps no
 * reserve, the closing records may be lost too.
 */
void sup_audit_check(struct sup *s)
{
	int r = audit_down(s->audit, NULL);

	if (r && !s->audit_err) {
		__atomic_store_n(&s->audit_err, r, __ATOMIC_RELEASE);
		(void)cg_kill(s->cgroup);
	}
	/*
	 * The audit budget (budgets.audit): attack, an agent that makes
	 * records by the million (a loop of refused opens costs it nothing:
	 * neither steps nor memory) and fills the host's disk through the log
	 * before the log's own filesystem is full.  Past the budget the
	 * session stops as with any budget, at once (the records of calls
	 * already in flight still go in).
	 */
	if (s->pol->budgets.audit_bytes && !s->audit_full &&
	    audit_size(s->audit) > s->pol->budgets.audit_bytes) {
		__atomic_store_n(&s->audit_full, 1, __ATOMIC_RELEASE);
		(void)cg_kill(s->cgroup);
	}
}

void sup_record(struct sup *s, pid_t pid, const char *raw_name, json_t *raw, json_t *event,
		const char *decision, const char *rule, const char *reason, const char *approver)
{
	char comm[32];

	sup_record_comm(pid, comm, sizeof(comm));
	sup_record_as(s, pid, comm, raw_name, raw, event, decision, rule, reason, approver);
}

void sup_steps_check(struct sup *s)
{
	if (steps_spent(&s->steps) && !s->stop_reason[0]) {
		snprintf(s->stop_reason, sizeof(s->stop_reason),
			 "steps budget spent (%llu judged operations)",
			 (unsigned long long)steps_max(&s->steps));
		(void)cg_destroy(s->cgroup);
	}
}

void sup_record_step(struct sup *s)
{
	(void)steps_take(&s->steps);
	sup_steps_check(s);
}

const char *sup_record_rule(const struct pol_result *r)
{
	return r->rule ? r->rule->name : r->invariant ? r->invariant : NULL;
}

void sup_record_risk(const struct pol_result *r, char *out, size_t len)
{
	snprintf(out, len, "%s", r->rule && r->rule->description ? r->rule->description :
		 r->reason[0] ? r->reason : "the policy asks a human for this");
}
