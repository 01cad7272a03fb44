/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The channel between the supervisor and its helpers outside the session (helper.c). */
#ifndef CORDON_HELPER_H
#define CORDON_HELPER_H

#include "helper_argv.h"
#include "sup_state.h"

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
int helper_argv_session(const struct sup *s, const char *argv[], int n);
int helper_argv_vars(const struct sup *s, const char *argv[], int n);
int helper_argv_upstreams(const struct sup *s, const char *argv[], int n);
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
void helper_input(struct sup *s, struct helper *h);
void helper_decide(struct sup *s, struct helper *h, uint64_t hold, bool allow, const char *why,
		   const char *approver);
struct helper *helper_of_held(struct sup *s, int nr);
/*
 * helper_stop(): SIGTERM, and its last records into the log until it
 * closes the channel; helper_reap(): then its exit, waited for (SIGKILL
 * STOP_TIMEOUT_MS after the stop), so that the wait overlaps the rest of
 * the teardown.
 */
void helper_stop(struct sup *s, struct helper *h);
void helper_reap(struct helper *h);

#endif
