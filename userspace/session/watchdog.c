// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The session's watchdog (watchdog.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "audit.h"
#include "budget.h"
#include "cgroup.h"
#include "floor.h"
#include "net.h"
#include "reap.h"
#include "session_cgroup.h"
#include "watchdog.h"

/*
 * The watchdog: a process outside the session that holds a pipe from the
 * supervisor.  When the supervisor dies, however it dies (kill -9 included),
 * the pipe reads EOF and the watchdog kills the session's cgroup and removes
 * its rules.  A clean exit writes 'D' first.  It ignores the terminal's
 * signals; only SIGKILL of both supervisor and watchdog leaves a session
 * running, and then still on its floor (pinned programs, rules kept until
 * the cgroup is gone and `cordon floor gc` runs).
 */
int start_watchdog(struct sup *s)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		int e = errno;
		close(p[0]);
		close(p[1]);
		return -e;
	}
	if (pid == 0) {
		char c = 0;

		close(p[1]);
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		signal(SIGQUIT, SIG_IGN);
		signal(SIGPIPE, SIG_IGN);
		(void)setpgid(0, 0);
		while (read(p[0], &c, 1) < 0 && errno == EINTR)
			;
		if (c != 'D') {
			char why[PATH_MAX + 160];
			json_t *fields = json_pack("{s:s,s:s}", "event", "supervisor-died", "reason",
						   "the watchdog found the supervisor gone and "
						   "killed the session");

			if (s->cgroup[0])
				(void)cg_destroy(s->cgroup);
			if (s->conn.cgroup[0])
				(void)cg_destroy(s->conn.cgroup);       /* its connector died with us */
			budget_destroy(s->budget);
			if (s->fsess)
				(void)floor_session_destroy(s->floor, s->fsess);
			if (s->net && s->cgid)
				(void)net_session_del(s->net, s->cgid);
			/*
			 * The log ends with what happened, sealed, rather than
			 * just stopping (audit_resume in audit.c).
			 */
			why[0] = '\0';
			if (s->audit && fields)
				(void)reap_seal_log(s->audit_path, audit_key_path(s->audit), fields,
						    why, sizeof(why));
			json_decref(fields);
			reap_forget_log(s->name);
			/* Every file named for the session (its CA bundle among them), then its run dir. */
			reap_session_files(s->name);
			remove_run_dir(s);
			fprintf(stderr, "cordon: watchdog: the supervisor of session %s died; "
				"the session was killed%s%s\n", s->name, why[0] ? "; " : "", why);
		}
		_exit(0);
	}
	close(p[0]);
	s->watchdog_fd = p[1];
	return 0;
}
