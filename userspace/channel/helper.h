/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The channel between the supervisor and its helpers outside the session
 * (helper.c).  It owns struct helper, reads of the session only its
 * context (struct helpers_ctx, wired by the loop, sup_wire) and calls back
 * through the loop's operations (sup_ops.h); struct sup is opaque here.
 * Main loop only, but for helper_send (any thread, one message at a time).
 */
#ifndef CORDON_HELPER_H
#define CORDON_HELPER_H

#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>

#include "approve.h"
#include "helper_argv.h"
#include "sup_ops.h"

struct policy;

/*
 * What the helpers' channel reads of the session: set once by the loop
 * (sup_wire), before a helper is started.
 */
struct helpers_ctx {
	const struct policy *pol;       /* its rules' descriptions, shown to the human */
	enum approve_mode mode;         /* --approve deny: an escalation is refused at once */
	const struct sup_ops *ops;      /* records, holds, the session's approvals and denials */
	struct sup *owner;              /* handed back to ops, never read here */
};

/* A helper the supervisor started outside the session, and its channel (helper.c). */
struct helper {
	const char *what;               /* "MCP proxy", ...: messages */
	const char *raw_name;           /* the raw name of its decisions' records */
	const char *record_type;        /* the record type it may write besides "decision" */
	int held;                       /* HELD_MCP, HELD_HTTP */
	pid_t pid;
	uint64_t stop_end;              /* helper_stop(): by when it must have exited */
	int chan;                       /* supervisor <-> helper, or -1 */
	void *in;                       /* struct linebuf of the channel */
	const struct helpers_ctx *ctx;  /* NULL: started outside a session, records dropped */
};

/*
 * A helper's command line, built in the caller's argv (room for
 * RUN_MAX_ENV --var pairs and its own options), each call returning the
 * next free index: helper_argv_start() (helper_argv.h) writes cordon's own
 * binary and CMD, helper_argv_session() the session's --policy,
 * --workspace and --user, helper_argv_vars() its --var NAME=VALUE, in
 * order, helper_argv_upstreams() its --upstream and --upstream-ca (room
 * for RUN_MAX_ENV more pairs).  The caller puts its own options around
 * them.
 */
int helper_argv_session(const char *policy, const char *workspace, const char *user,
			const char *argv[], int n);
int helper_argv_vars(const char *const *vars, int n_vars, const char *argv[], int n);
int helper_argv_upstreams(const char *const *upstreams, int n_upstreams, const char *ca,
			  const char *argv[], int n);
/*
 * The channel to a helper.  helper_spawn() starts it with FDS as
 * its fds 3... and the channel after them (argv[chan_arg] is set to the
 * channel's fd), without waiting; helper_ready() waits for its "ready"
 * (-ETIMEDOUT, or -EINVAL if it exited or said something else: it wrote
 * why on stderr); helper_start() is both.  helper_send() sends one message
 * without waiting (-EPIPE: it is gone or not reading).
 */
int helper_spawn(struct helper *h, const char *argv[], int chan_arg, const int *fds, int n_fds);
int helper_ready(struct helper *h, json_t **ready);
int helper_start(struct helper *h, const char *argv[], int chan_arg, const int *fds, int n_fds,
		 json_t **ready);
int helper_send(struct helper *h, json_t *msg);
void helper_input(struct helper *h);
void helper_decide(struct helper *h, uint64_t hold, bool allow, const char *why,
		   const char *approver);
/*
 * helper_stop(): SIGTERM, and its last records into the log until it
 * closes the channel; helper_reap(): then its exit, waited for (SIGKILL
 * STOP_TIMEOUT_MS after the stop), so that the wait overlaps the rest of
 * the teardown.
 */
void helper_stop(struct helper *h);
void helper_reap(struct helper *h);

#endif
