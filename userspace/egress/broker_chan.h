/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The broker's end of the channel to the supervisor (proto.h), read:
 * first the session's cgroup, then, on a thread, decisions for held
 * requests and grants.  Sending is chan_send (broker.h).
 */
#ifndef CORDON_BROKER_CHAN_H
#define CORDON_BROKER_CHAN_H

#include "broker.h"

/*
 * How long the broker waits for its session: as long as the supervisor that
 * started it lives (its parent, looked at every SESSION_POLL_MS), up to
 * SESSION_WAIT_MS.  A supervisor slowed by a storm of starts is not a dead
 * one (docs/benchmarks.md, Scale: a fixed 30 s failed 461 of 1,030 sessions
 * started at once on two cores).
 */
#define SESSION_POLL_MS 1000
#define SESSION_WAIT_MS (600 * 1000)

/* The session's cgroup into hp->cgroup_id: 0, -EPIPE, -ETIMEDOUT, -E2BIG, -EBADMSG. */
int session_from_channel(struct hp *hp);

/* The reader thread (ARG: the struct hp); when the channel ends it raises SIGTERM. */
void *chan_reader(void *arg);

#endif /* CORDON_BROKER_CHAN_H */
