// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The session's watchdog (watchdog.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "reap.h"
#include "util.h"
#include "watchdog.h"

/*
 * The watchdog: a process outside the session that holds a socket from
 * the supervisor.  When the supervisor dies, however it dies (kill -9
 * included), the socket reads EOF and the watchdog kills the session's
 * cgroup and removes its rules.  A clean exit sends 'D' first.  It ignores
 * the terminal's signals; only SIGKILL of both supervisor and watchdog
 * leaves a session running, and then still on its floor (pinned programs,
 * rules kept until the cgroup is gone and `cordon floor gc` runs), and the
 * next `cordon run` reaps it (reap.h).
 *
 * It is forked first of all, while the supervisor is small.  Forked once
 * the session existed, as it was, it copied the supervisor's page tables
 * and made every page the supervisor wrote afterwards a copy-on-write
 * fault: 3 ms of a start here (startlat, 41 interleaved starts).  So it
 * holds no copy of the session's state: it learns the session's name and
 * gets the run directory's lock when the session exists (watchdog_arm),
 * and ends the session as a reaper does, from what the session left in
 * its run directory, its cgroups, the floor's maps and its log's note
 * (reap_watchdog), with a record that says why.  Sharing the lock, it
 * keeps other reapers off the session while it works, as before.
 */
static void __attribute__((noreturn)) watch(int fd)
{
	char name[64] = "", why[PATH_MAX + 160];
	int lock = -1, r;
	json_t *fields;

	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	(void)setpgid(0, 0);
	for (;;) {
		char buf[64];
		int got;
		ssize_t n = fd_recv(fd, buf, sizeof(buf) - 1, &got);

		if (n == -EINTR)
			continue;
		if (n <= 0)
			break;          /* EOF: the supervisor is gone */
		if (buf[0] == 'D')
			_exit(0);       /* a clean end: the supervisor undid the session */
		if (buf[0] != 'N' || lock >= 0 || got < 0) {
			if (got >= 0)
				close(got);
			continue;
		}
		lock = got;
		buf[n] = '\0';
		snprintf(name, sizeof(name), "%s", buf + 1);
	}
	if (lock < 0)
		_exit(0);               /* gone before its session existed: nothing to end */
	fields = json_pack("{s:s,s:s}", "event", "supervisor-died", "reason",
			   "the watchdog found the supervisor gone and killed the session");
	r = reap_watchdog(name, fields, why, sizeof(why));
	json_decref(fields);
	if (r < 0)
		fprintf(stderr, "cordon: watchdog: the supervisor of session %s died; ending the "
			"session failed (%s): the next cordon run or `cordon floor gc` reaps it\n",
			name, strerror(-r));
	else
		fprintf(stderr, "cordon: watchdog: the supervisor of session %s died; the session "
			"was killed%s%s\n", name, why[0] ? "; " : "", why);
	_exit(0);
}

int watchdog_start(struct sup *s)
{
	int sp[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(sp[0]);
		close(sp[1]);
		return -e;
	}
	if (pid == 0) {
		close(sp[0]);
		watch(sp[1]);
	}
	close(sp[1]);
	s->watchdog_fd = sp[0];
	return 0;
}

int watchdog_arm(const struct sup *s)
{
	char msg[40];
	int n = snprintf(msg, sizeof(msg), "N%s", s->name);

	if (s->watchdog_fd < 0 || s->run_lock < 0 || n <= 1 || (size_t)n >= sizeof(msg))
		return -EINVAL;
	return fd_send(s->watchdog_fd, msg, (size_t)n, s->run_lock);
}
