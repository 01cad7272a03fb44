// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The session's egress broker (cordon http-proxy), started by `cordon run`
 * when the policy lists hosts to be reached "via": "egress".
 *
 * The supervisor binds 127.0.0.1:0 itself before any rule is compiled and
 * grants the session a direct connect to exactly that address and port
 * (pol_grant_connect): the cgroup-bpf floor (and Landlock's TCP rules in
 * the fallback) then let the agent reach the broker and nothing else by
 * name.  The agent is told HTTPS_PROXY / HTTP_PROXY (both cases).  The
 * broker runs outside the session, as root, with the session's policy, and
 * dies with the supervisor.
 *
 * What this cannot close yet: the port is reachable from every local user,
 * whose requests the broker would judge by this session's policy (the
 * agent's own reach, not more); its records go to AUDIT.http.jsonl beside
 * the session's log, not into it; an escalating http.request is refused
 * (no approval channel to the broker yet).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "supervisor.h"
#include "util.h"

bool egress_session_wanted(const struct sup *s)
{
	for (size_t i = 0; i < s->pol->n_rules; i++) {
		const struct pol_rule *ru = &s->pol->rules[i];

		if (ru->kind == POL_NET && ru->net.via == POL_VIA_EGRESS && ru->net.n_hosts &&
		    ru->decision != CORDON_DENY)
			return true;
	}
	return false;
}

int egress_session_listen(struct sup *s)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), r;

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 128) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &al) < 0) {
		r = -errno;
		if (fd >= 0)
			close(fd);
		log_err("run: the egress broker's socket: %s", strerror(-r));
		return r;
	}
	s->egress_listen = fd;
	s->egress_port = ntohs(a.sin_port);
	r = pol_grant_connect(s->pol, "egress-broker", "127.0.0.1", s->egress_port);
	if (r < 0)
		log_err("run: cannot grant the agent its egress broker: %s", strerror(-r));
	return r;
}

int egress_session_start(struct sup *s)
{
	char self[PATH_MAX], audit[PATH_MAX + 16], fd3[] = "3";
	const char *argv[24 + 2 * RUN_MAX_ENV];
	size_t al = strlen(s->audit_path);
	ssize_t len;
	int n = 0;

	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len < 0)
		return -errno;
	self[len] = '\0';
	if (al > 6 && !strcmp(s->audit_path + al - 6, ".jsonl"))
		al -= 6;
	snprintf(audit, sizeof(audit), "%.*s.http.jsonl", (int)al, s->audit_path);
	argv[n++] = self;
	argv[n++] = "http-proxy";
	argv[n++] = "--listen-fd";
	argv[n++] = fd3;
	argv[n++] = "--policy";
	argv[n++] = s->opt->policy;
	argv[n++] = "--workspace";
	argv[n++] = s->workspace;
	argv[n++] = "--user";
	argv[n++] = s->user;
	argv[n++] = "--audit";
	argv[n++] = audit;
	for (int i = 0; i < s->opt->n_vars; i++) {
		argv[n++] = "--var";
		argv[n++] = s->opt->vars[i];
	}
	argv[n] = NULL;
	s->egress_pid = spawn_helper(self, argv, &s->egress_listen, 1);
	if (s->egress_pid < 0) {
		int r = s->egress_pid;

		s->egress_pid = 0;
		log_err("run: cannot start the egress broker: %s", strerror(-r));
		return r;
	}
	close(s->egress_listen);
	s->egress_listen = -1;
	return 0;
}

void egress_session_stop(struct sup *s)
{
	if (s->egress_pid > 0) {
		(void)kill(s->egress_pid, SIGTERM);
		(void)waitpid(s->egress_pid, NULL, 0);
		s->egress_pid = 0;
	}
	if (s->egress_listen >= 0)
		close(s->egress_listen);
	s->egress_listen = -1;
}
