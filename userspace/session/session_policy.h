/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A session's policy, loaded the same way by every process that judges the
 * session: cordon run, its egress broker and its MCP proxy
 * (session_policy.c).
 */
#ifndef CORDON_SESSION_POLICY_H
#define CORDON_SESSION_POLICY_H

#include <sys/types.h>

struct pol_vars;
struct policy;

/* The session a policy is expanded for: $WORKSPACE, $HOME, $USER, $UID. */
struct session_vars {
	const char *workspace;
	const char *home;
	const char *user;
	uid_t uid;
};

/* One --var NAME=VALUE into vars; errors are logged as WHO: ... */
int policy_var_arg(struct pol_vars *vars, const char *who, const char *arg);

/*
 * Load FILE (or a shipped profile) for a session, with the defaults, the
 * session's variables and then each --var.  Errors are printed (with
 * file:line:col) and returned negative; *out is set only on success.
 */
int policy_load_session(const char *who, const char *file, const struct session_vars *sv,
			const char *const *vars, int n_vars, struct policy **out);

#endif
