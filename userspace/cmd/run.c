// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `cordon run [OPTIONS] -- AGENT [ARGS...]`: the options and their checks;
 * the session itself is session/run.c's (run.h).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit_session.h"
#include "cmd.h"
#include "progress.h"
#include "run.h"
#include "util.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: cordon run [OPTIONS] -- AGENT [ARGS...]\n"
		"  --profile NAME        shipped profile (default: coding-agent)\n"
		"  --policy FILE         a policy file instead of a profile\n"
		"  --workspace DIR       the project directory (default: the current directory)\n"
		"  --user USER           run the agent as USER (default: the invoking user, SUDO_UID);\n"
		"                        `--user root` runs it as uid 0 with every capability dropped\n"
		"  --approve MODE        tty (default with a terminal), socket (`cordon approve`),\n"
		"                        or deny (every escalation is denied)\n"
		"  --audit FILE          the audit log (default: " AUDIT_DIR "/SESSION.jsonl)\n"
		"  --audit-syslog SOCKET also send each record, as written, to a syslog daemon's\n"
		"                        Unix datagram socket (RFC 5424; CORDON_AUDIT_SYSLOG)\n"
		"  --audit-journal       also to the journal (CORDON_AUDIT_JOURNAL=1)\n"
		"  --require-full-floor  refuse to start without BPF LSM\n"
		"  --env NAME            pass cordon's variable NAME through (the rest is scrubbed)\n"
		"  --var NAME=VALUE      set a policy variable (not WORKSPACE, HOME, USER, UID: the\n"
		"                        session's own)\n"
		"  --upstream CRED=URL   send credential CRED's requests to URL (https://HOST[:PORT]\n"
		"                        [/PATH]: an LLM gateway, a private address) instead of\n"
		"                        the provider's host; the agent still asks the provider's\n"
		"  --upstream-ca FILE    the CA that verifies the --upstream gateways (default: the\n"
		"                        system's)\n"
		"  --keep-fd N           the agent inherits descriptor N too (only 0, 1 and 2\n"
		"                        otherwise)\n"
		"  --mcp SERVERS.json    the session's MCP proxy (see cordon mcp-proxy --help): the\n"
		"                        agent reaches it at $CORDON_MCP_SOCKET (cordon mcp-bridge),\n"
		"                        escalated tool calls wait for this session's approver\n"
		"  -q, --quiet           print only errors and approval prompts\n"
		"  -v                    log each start-up phase (as `cordon -v run`)\n"
		"--profile and --policy exclude each other; an option that takes one value\n"
		"may be given once.\n"
		"Exit status: the agent's; 125 a cordon error; 126 the agent cannot run;\n"
		"127 the agent was not found.\n");
}

/*
 * A single-valued option given twice, or --profile with --policy, is an
 * error naming both: the last one silently won (`--profile X --policy Y`
 * ran Y, and whoever read the command line saw X).  *SEEN and *SEEN_V hold
 * the one given first.
 */
static int once(const char **seen, const char **seen_v, const char *a, const char *v)
{
	/* The same option with the same value again is no conflict. */
	if (*seen && !(v && *seen_v && !strcmp(*seen, a) && !strcmp(*seen_v, v))) {
		log_err("run: %s %s conflicts with %s %s given before (one of them)", a, v ?: "",
			*seen, *seen_v ?: "");
		return -EINVAL;
	}
	*seen = a;
	*seen_v = v;
	return 0;
}

/* --env NAME: a variable's name; NAME=VALUE is not (it was silently ignored). */
static int env_name_ok(const char *v)
{
	if (!*v || strchr(v, '=')) {
		log_err("run: --env %s: --env passes cordon's own variable NAME through; it sets "
			"nothing (export NAME=VALUE before cordon run, then --env NAME)", v);
		return -EINVAL;
	}
	for (const char *p = v; *p; p++)
		if (!(*p == '_' || (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		      (p > v && *p >= '0' && *p <= '9'))) {
			log_err("run: --env %s: not a variable name", v);
			return -EINVAL;
		}
	if (!getenv(v))
		log_warn("run: --env %s: not set in cordon's environment, so the agent does not get "
			 "it (sudo keeps it with --preserve-env=%s)", v, v);
	return 0;
}

static int parse_args(int argc, char **argv, struct run_options *o)
{
	const char *seen_policy = NULL, *seen_ws = NULL, *seen_user = NULL, *seen_approve = NULL,
		   *seen_audit = NULL, *seen_mcp = NULL, *seen_ca = NULL, *seen_syslog = NULL;
	const char *sv_policy = NULL, *sv_ws = NULL, *sv_user = NULL, *sv_approve = NULL,
		   *sv_audit = NULL, *sv_mcp = NULL, *sv_ca = NULL, *sv_syslog = NULL;
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

#define NEEDV() do { if (!v) { log_err("run: %s needs a value", a); return -EINVAL; } i++; } while (0)
#define ONCE(seen, sv) do { if (once(&(seen), &(sv), a, v) < 0) return -EINVAL; } while (0)
		if (!strcmp(a, "--")) {
			i++;
			break;
		} else if (!strcmp(a, "--profile") || !strcmp(a, "--policy")) {
			ONCE(seen_policy, sv_policy);
			NEEDV();
			if (!strcmp(a, "--profile") && strchr(v, '/')) {
				log_err("run: --profile %s: a shipped profile's name (a policy file is "
					"--policy FILE)", v);
				return -EINVAL;
			}
			o->policy = v;
		} else if (!strcmp(a, "--workspace")) {
			ONCE(seen_ws, sv_ws);
			NEEDV();
			o->workspace = v;
		} else if (!strcmp(a, "--user")) {
			ONCE(seen_user, sv_user);
			NEEDV();
			o->user = v;
		} else if (!strcmp(a, "--audit-syslog")) {
			ONCE(seen_syslog, sv_syslog);
			NEEDV();
			if (v[0] != '/') {
				log_err("run: --audit-syslog %s: not an absolute path to a Unix datagram "
					"socket", v);
				return -EINVAL;
			}
			o->audit_syslog = v;
		} else if (!strcmp(a, "--audit-journal")) {
			o->audit_journal = true;
		} else if (!strcmp(a, "-v")) {
			log_set_verbose(log_verbose() + 1);
		} else if (!strcmp(a, "--approve")) {
			ONCE(seen_approve, sv_approve);
			NEEDV();
			if (!strcmp(v, "tty"))
				o->approve = APPROVE_TTY;
			else if (!strcmp(v, "socket"))
				o->approve = APPROVE_SOCKET;
			else if (!strcmp(v, "deny"))
				o->approve = APPROVE_DENY;
			else {
				log_err("run: --approve %s: expected tty, socket or deny", v);
				return -EINVAL;
			}
			o->approve_set = true;
		} else if (!strcmp(a, "--audit")) {
			ONCE(seen_audit, sv_audit);
			NEEDV();
			o->audit = v;
		} else if (!strcmp(a, "--mcp")) {
			ONCE(seen_mcp, sv_mcp);
			NEEDV();
			o->mcp = v;
		} else if (!strcmp(a, "--keep-fd")) {
			char *end;
			long fd;

			NEEDV();
			fd = strtol(v, &end, 10);
			if (!*v || *end || fd < 3 || fd > INT_MAX || fcntl((int)fd, F_GETFD) < 0) {
				log_err("run: --keep-fd %s: not an open descriptor above 2", v);
				return -EINVAL;
			}
			if (o->n_keep_fd >= RUN_MAX_ENV) {
				log_err("run: too many --keep-fd options");
				return -E2BIG;
			}
			o->keep_fd[o->n_keep_fd++] = (int)fd;
		} else if (!strcmp(a, "--stop-fd")) {
			/*
			 * Not in the usage: for cordon mcp-proxy, which holds the
			 * other end and may not signal this root process once it
			 * has given root up.  The session stops as on SIGTERM when
			 * N reads end of file; N reaches no one else (close-on-exec,
			 * and the agent gets 0, 1, 2 and --keep-fd only).
			 */
			char *end;
			long fd;

			NEEDV();
			fd = strtol(v, &end, 10);
			if (!*v || *end || fd < 3 || fd > INT_MAX || o->stop_fd ||
			    fcntl((int)fd, F_SETFD, FD_CLOEXEC) < 0) {
				log_err("run: --stop-fd %s: not an open descriptor above 2, or given twice", v);
				return -EINVAL;
			}
			o->stop_fd = (int)fd;
		} else if (!strcmp(a, "--upstream")) {
			NEEDV();
			if (o->n_upstreams >= RUN_MAX_ENV) {
				log_err("run: too many --upstream options");
				return -E2BIG;
			}
			o->upstreams[o->n_upstreams++] = v;
		} else if (!strcmp(a, "--upstream-ca")) {
			ONCE(seen_ca, sv_ca);
			NEEDV();
			if (v[0] != '/' || access(v, R_OK) < 0) {
				log_err("run: --upstream-ca %s: not a readable absolute path", v);
				return -EINVAL;
			}
			o->upstream_ca = v;
		} else if (!strcmp(a, "--require-full-floor")) {
			o->require_full_floor = true;
		} else if (!strcmp(a, "--env") || !strcmp(a, "--var")) {
			bool env = !strcmp(a, "--env");

			NEEDV();
			if (env && env_name_ok(v) < 0)
				return -EINVAL;
			if ((env ? o->n_env : o->n_vars) >= RUN_MAX_ENV) {
				log_err("run: too many %s options", a);
				return -E2BIG;
			}
			if (env)
				o->env[o->n_env++] = v;
			else
				o->vars[o->n_vars++] = v;
		} else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
			o->quiet = true;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			exit(0);
		} else if (a[0] == '-') {
			log_err("run: unknown option '%s' (try `cordon run --help`)", a);
			return -EINVAL;
		} else {
			break;
		}
#undef NEEDV
#undef ONCE
	}
	if (o->upstream_ca && !o->n_upstreams) {
		log_err("run: --upstream-ca needs --upstream (the gateway it verifies)");
		return -EINVAL;
	}
	if (i >= argc) {
		log_err("run: no agent command given (cordon run [OPTIONS] -- AGENT [ARGS...])");
		return -EINVAL;
	}
	o->argv = argv + i;
	return 0;
}

int cmd_run(int argc, char **argv)
{
	struct run_options opt = { .policy = "coding-agent" };

	progress_start();
	if (parse_args(argc, argv, &opt) < 0)
		return EXIT_CORDON;
	/*
	 * A question on the terminal needs the terminal's keys, which reach
	 * cordon only on its stdin (setup_pty).  --approve tty without it was
	 * accepted and nobody was ever asked; without --approve the session
	 * silently denied every escalation.  Now the first is refused, and the
	 * second said (unless -q).
	 */
	if (!opt.approve_set) {
		opt.approve = isatty(STDIN_FILENO) ? APPROVE_TTY : APPROVE_DENY;
		if (opt.approve == APPROVE_DENY && !opt.quiet)
			fprintf(stderr, "cordon: no terminal on stdin and no --approve: every "
				"escalation will be denied (--approve socket holds them for "
				"`cordon approve`)\n");
	} else if (opt.approve == APPROVE_TTY && !isatty(STDIN_FILENO)) {
		log_err("run: --approve tty needs a terminal on stdin to ask on (stdin is not "
			"one); use --approve socket (`cordon pending`, `cordon approve`) or "
			"--approve deny");
		return EXIT_CORDON;
	}
	return run_session(&opt);
}
