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
/* How many paths the agent changed in its home, said at the end (unless --quiet). */
void home_summary(const struct sup *s);
/* After the session's last process: the layer's lock, and a session-own layer removed. */
void close_home_layer(struct sup *s);

#endif
