/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The protocol between the supervisor and the helpers it starts outside
 * the session (the MCP proxy, the egress broker and credential proxy): one
 * JSON object per line on a socketpair, built and read only here.
 *
 *   helper -> supervisor
 *     ready     {op, ...}            its configuration is accepted (what it
 *                                    reports at start rides along)
 *     record    {op, type, fields}   an audit record for the session's log
 *                                    (only the types the helper owns: it
 *                                    cannot forge lifecycle or seal records)
 *     escalate  {op, hold, event, summary, rule, reason}
 *                                    an operation held for the human
 *     withdraw  {op, hold, reason}   the held operation went away
 *     holders   {op, query, inode}   which processes hold this socket (the
 *                                    broker, which gave root up, cannot
 *                                    list other users' descriptors)
 *   supervisor -> helper
 *     decision  {op, hold, allow, why, approver}
 *     session   {op, cgroup_id}      the session's cgroup (to the egress
 *                                    broker, which starts before it exists:
 *                                    it says ready, and serves, only after)
 *     grant     {op, grant, pid, start, ttl_ms, dests}
 *                                    an approved git push's destinations
 *                                    ({host, port, ssh}: ssh true for an
 *                                    ssh remote's, a tunnel carrying SSH),
 *                                    for that process only (push_grant.h)
 *     holders   {op, query, pids, error}
 *                                    the answer: the pids, or an errno
 *
 * Builders return a new reference (NULL when memory ran out; the senders
 * treat that as a failed send).  Readers return -EINVAL for a message that
 * is not what its op says, which the reader treats as a protocol breach.
 */
#ifndef CORDON_PROTO_H
#define CORDON_PROTO_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

enum proto_op {
	PROTO_UNKNOWN = 0,
	PROTO_READY,
	PROTO_RECORD,
	PROTO_ESCALATE,
	PROTO_WITHDRAW,
	PROTO_DECISION,
	PROTO_SESSION,
	PROTO_GRANT,
	PROTO_HOLDERS,
};

/* The op of a message (PROTO_UNKNOWN for anything else, NULL included). */
enum proto_op proto_op(const json_t *msg);

/* helper -> supervisor.  EXTRA (stolen, may be NULL): what ready reports. */
json_t *proto_ready(json_t *extra);
json_t *proto_record(const char *type, json_t *fields);
json_t *proto_escalate(uint64_t hold, json_t *event, const char *summary, const char *rule,
		       const char *reason);
json_t *proto_withdraw(uint64_t hold, const char *reason);
/* Which processes hold socket INODE?  (The broker, which gave root up, asks.) */
json_t *proto_holders_ask(uint64_t query, uint64_t inode);

/* supervisor -> helper.  DESTS: borrowed. */
json_t *proto_decision(uint64_t hold, bool allow, const char *why, const char *approver);
json_t *proto_session(uint64_t cgroup_id);
json_t *proto_grant(uint64_t grant, pid_t pid, uint64_t start, uint64_t ttl_ms, json_t *dests);
/* The answer: PIDS[N] hold it; N < 0: -errno (none found, or too many). */
json_t *proto_holders(uint64_t query, const pid_t *pids, int n);

/* The fields of a message, borrowed from it. */
struct proto_msg {
	enum proto_op op;
	uint64_t hold;                  /* escalate, withdraw, decision */
	json_t *event;                  /* escalate */
	const char *summary, *rule, *reason;    /* escalate (reason: withdraw too) */
	bool allow;                     /* decision */
	const char *why, *approver;     /* decision */
	const char *type;               /* record */
	json_t *fields;                 /* record */
	uint64_t cgroup_id;             /* session */
	uint64_t grant, start, ttl_ms;  /* grant */
	pid_t pid;                      /* grant */
	json_t *dests;                  /* grant: an array, each {host, port, ssh} read by its user */
	uint64_t query, inode;          /* holders (inode: the question) */
	json_t *pids;                   /* holders: the answer, an array of pids; NULL in a question */
	int error;                      /* holders: the answer's errno, 0 if pids */
};

/* Read MSG into M: 0, or -EINVAL when a field its op needs is missing or of the wrong type. */
int proto_read(const json_t *msg, struct proto_msg *m);

#endif
