// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A session's policy, loaded the same way by every process that judges it (session_policy.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "policy.h"
#include "session_policy.h"
#include "util.h"

int policy_var_arg(struct pol_vars *vars, const char *who, const char *arg)
{
	const char *eq = strchr(arg, '=');
	char name[64];

	if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof(name)) {
		log_err("%s: --var wants NAME=VALUE, got '%s'", who, arg);
		return -EINVAL;
	}
	memcpy(name, arg, (size_t)(eq - arg));
	name[eq - arg] = 0;
	if (pol_vars_set(vars, name, eq + 1) < 0) {
		log_err("%s: --var %s: bad variable name", who, name);
		return -EINVAL;
	}
	return 0;
}

/*
 * One loader for every command that judges a session (run, mcp-proxy,
 * http-proxy), so the same policy file expands to the same rules whichever
 * process reads it: a proxy that saw a different $WORKSPACE than the floor
 * would judge another session than the one it serves.
 */
int policy_load_session(const char *who, const char *file, const struct session_vars *sv,
			const char *const *vars, int n_vars, struct policy **out)
{
	struct pol_vars pv = { 0 };
	struct pol_diags d = { .no_warnings = true };
	char uid[16];
	int r = pol_vars_defaults(&pv);

	snprintf(uid, sizeof(uid), "%u", (unsigned)sv->uid);
	r = r ?: pol_vars_set(&pv, "WORKSPACE", sv->workspace);
	r = r ?: pol_vars_set(&pv, "HOME", sv->home);
	r = r ?: pol_vars_set(&pv, "USER", sv->user);
	r = r ?: pol_vars_set(&pv, "UID", uid);
	if (r < 0)
		log_err("%s: policy variables: %s", who, strerror(-r));
	/*
	 * The session's own variables come from the session (--workspace,
	 * --user), never from --var: `--var WORKSPACE=/etc` silently
	 * retargeted every ${WORKSPACE} rule at /etc while the agent worked
	 * in the real workspace.
	 */
	for (int i = 0; !r && i < n_vars; i++) {
		static const char *const own[] = { "WORKSPACE", "HOME", "USER", "UID" };

		for (size_t k = 0; k < sizeof(own) / sizeof(own[0]); k++) {
			size_t n = strlen(own[k]);

			if (!strncmp(vars[i], own[k], n) && vars[i][n] == '=') {
				log_err("%s: --var %s: ${%s} is the session's own (%s); --var sets "
					"only other variables", who, vars[i], own[k],
					k == 0 ? "--workspace DIR" : "--user USER");
				r = -EINVAL;
			}
		}
		r = r ?: policy_var_arg(&pv, who, vars[i]);
	}
	if (r == 0) {
		r = pol_load(file, &pv, out, &d);
		if (r == -ENOENT && !d.n) {
			log_err("%s: %s: no such policy file or shipped profile", who, file);
		} else if (r < 0) {
			pol_diags_print(&d, file, stderr);
			log_err("%s: policy %s refused (%zu error%s)", who, file, d.n_errors,
				d.n_errors == 1 ? "" : "s");
		}
	}
	pol_diags_free(&d);
	pol_vars_free(&pv);
	return r;
}
