/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A git push over ssh, approved, reaches its remote (ssh_session.c): with
 * an egress broker, cordon's binary in the view for `cordon connect`, the
 * invoker's known host keys, and the relayed ssh-agent socket.
 */
#ifndef CORDON_SSH_SESSION_H
#define CORDON_SSH_SESSION_H

#include "sup_state.h"

/* Before the view is built and the rules compiled.  0, or -errno (logged). */
int ssh_session_prepare(struct sup *s);
/* The agent's GIT_SSH_COMMAND in buf, or NULL when not wired (or the invoker set one). */
const char *ssh_session_command(const struct sup *s, char *buf, size_t len);
void ssh_session_stop(struct sup *s);

#endif
