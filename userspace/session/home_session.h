/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The agent's home layer for one session (home_session.c; the layer itself
 * is home.h's): opened and mounted before the view is built, summed up
 * when the session ends, then closed (a session-own layer removed).
 */
#ifndef CORDON_HOME_SESSION_H
#define CORDON_HOME_SESSION_H

#include "sup_state.h"

/*
 * The user's layer for this profile, or one of the session's own when
 * another session holds it; *FD the mounted, detached layer.  0, or
 * negative errno with s->world_error saying why.
 */
int open_home_layer(struct sup *s, int *fd);
/*
 * How many paths the agent's home layer differs from the real home in,
 * said at the session's end; not counted under --quiet, where nothing is
 * said (a layer of a real agent's caches holds tens of thousands of
 * entries: 2.6-2.9 ms of a start's end here at 13,000).  Counted on a
 * thread from the teardown's start (home_summary_start), while the
 * session's cgroups and the log's seal wait for the kernel; home_summary
 * joins it and says the count.
 */
struct home_tally {
	struct world_call call;
	const struct sup *s;
	size_t n;
};
void home_summary_start(const struct sup *s, struct home_tally *t);
void home_summary(struct home_tally *t);
/* After the session's last process: the layer's lock, and a session-own layer removed. */
void close_home_layer(struct sup *s);

#endif
