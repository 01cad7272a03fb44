// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The session's egress broker and credential proxy (cordon http-proxy),
 * started by `cordon run` when the policy lists hosts to be reached "via":
 * "egress" or "credential-proxy".
 *
 * The supervisor binds 127.0.0.1:0 itself before any rule is compiled and
 * grants the session a direct connect to exactly that address and port
 * (pol_grant_connect): the cgroup-bpf floor (and Landlock's TCP rules in
 * the fallback) then let the agent reach the broker and nothing else by
 * name.  The agent is told HTTPS_PROXY / HTTP_PROXY (both cases).  The
 * broker runs outside the session, as root, with the session's policy, and
 * dies with the supervisor; it accepts only sockets created in this
 * session's cgroup, talks to the supervisor over a helper channel (its
 * records go into the session's log; an escalated request is held for the
 * session's human), and reports the credentials' sentinels, which the
 * agent gets in the variables the policy names.
 *
 * Credentials: the CA bundle (the system's CAs and the session CA) is a
 * file the supervisor creates before the rules are compiled, root's and
 * mode 0644 in RUN_CA_DIR, granted to the agent read-only and protected
 * (cordon-self) against writes; the broker writes it through the
 * descriptor it is handed.  The agent gets it in SSL_CERT_FILE,
 * NODE_EXTRA_CA_CERTS, REQUESTS_CA_BUNDLE and CURL_CA_BUNDLE.  The secrets
 * reach only the broker (read from the supervisor's environment or files
 * by the broker itself): the agent's environment is rebuilt without them,
 * and --env cannot name them.
 *
 * What this cannot close: a client that ignores HTTPS_PROXY cannot reach
 * the network at all (the floor allows only the broker), which is safe but
 * may surprise; a client with its own pinned CA store refuses the session
 * CA for credential hosts.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <fcntl.h>
#include <sys/stat.h>

#include "cred_proxy.h"
#include "supervisor.h"
#include "helper.h"
#include "proto.h"
#include "egress_session.h"
#include "reap.h"
#include "util.h"

#define RUN_CA_DIR CORDON_RUN_CA_DIR

bool egress_session_wanted(const struct sup *s)
{
	for (size_t i = 0; i < s->pol->n_rules; i++) {
		const struct pol_rule *ru = &s->pol->rules[i];

		if (ru->kind == POL_NET && ru->net.n_hosts && ru->decision != CORDON_DENY &&
		    (ru->net.via == POL_VIA_EGRESS || ru->net.via == POL_VIA_CRED_PROXY))
			return true;
	}
	return false;
}

/* The bundle's file, empty until the broker fills it: it must exist for the grant. */
static int ca_bundle_create(struct sup *s)
{
	struct stat st;
	int fd, r;

	if (mkdir(RUN_CA_DIR, 0711) < 0 && errno != EEXIST)
		goto fail;
	/* Root's own directory, not something planted there. */
	if (lstat(RUN_CA_DIR, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & 022)) {
		log_err("run: %s must be a directory owned by root, writable by root only", RUN_CA_DIR);
		return -EPERM;
	}
	snprintf(s->ca_path, sizeof(s->ca_path), RUN_CA_DIR "/%s.pem", s->name);
	fd = open(s->ca_path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 || fchmod(fd, 0644) < 0) {
		if (fd >= 0)
			close(fd);
		s->ca_path[0] = '\0';
		goto fail;
	}
	s->egress_ca = fd;
	r = pol_grant_path(s->pol, "ca-bundle", s->ca_path, CORDON_FS_READ);
	r = r ?: pol_protect_path(s->pol, s->ca_path);
	if (r < 0)
		log_err("run: cannot grant the agent the session's CA bundle: %s", strerror(-r));
	return r;
fail:
	r = -errno;
	log_err("run: the session's CA bundle in %s: %s", RUN_CA_DIR, strerror(-r));
	return r;
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
	if (r < 0) {
		log_err("run: cannot grant the agent its egress broker: %s", strerror(-r));
		return r;
	}
	return s->pol->n_creds ? ca_bundle_create(s) : 0;
}

/*
 * The broker is started as soon as the policy is read and its socket
 * bound, so that its own start (OpenSSL, the session CA, the bundle: most
 * of a session's start) runs while the supervisor opens the floor, the log
 * and the session.  It starts without the session's cgroup, which does not
 * exist yet: it waits for it on the channel (egress_session_tell) and
 * accepts nothing before, so no connection is served unchecked.
 */
int egress_session_spawn(struct sup *s)
{
	char self[PATH_MAX], lfd[] = "3", cfd[] = "4", sfd[4], afd[4];
	const char *argv[38 + 4 * RUN_MAX_ENV];
	int fds[4] = { s->egress_listen }, n_fds = 1, n, chan_arg, r;

	n = helper_argv_start(argv, self, "http-proxy");
	if (n < 0) {
		log_err("run: the egress broker: /proc/self/exe: %s", strerror(-n));
		return n;
	}
	argv[n++] = "--listen-fd";
	argv[n++] = lfd;
	if (s->egress_ca >= 0) {
		argv[n++] = "--ca-fd";
		argv[n++] = cfd;
		fds[n_fds++] = s->egress_ca;
	}
	snprintf(sfd, sizeof(sfd), "%d", 3 + n_fds);
	fds[n_fds++] = s->steps.fd;
	argv[n++] = "--steps-fd";
	argv[n++] = sfd;
	if (s->ssh_agent_listen >= 0) {
		snprintf(afd, sizeof(afd), "%d", 3 + n_fds);
		fds[n_fds++] = s->ssh_agent_listen;
		argv[n++] = "--ssh-agent-fd";
		argv[n++] = afd;
		argv[n++] = "--ssh-auth-sock";
		argv[n++] = s->ssh_upstream;
	}
	n = helper_argv_session(s->opt->policy, s->workspace, s->user, argv, n);
	n = helper_argv_vars(s->opt->vars, s->opt->n_vars, argv, n);
	n = helper_argv_upstreams(s->opt->upstreams, s->opt->n_upstreams, s->opt->upstream_ca,
				  argv, n);
	argv[n++] = "--channel-fd";
	chan_arg = n++;
	argv[n] = NULL;
	r = helper_spawn(&s->egress, argv, chan_arg, fds, n_fds);
	if (r < 0)
		log_err("run: the egress broker did not start: %s", strerror(-r));
	return r;
}

/* The session's cgroup to the broker: it finishes its start with it, and serves from then on. */
int egress_session_tell(struct sup *s)
{
	int r = helper_send(&s->egress, proto_session(s->cgid));

	if (r < 0)
		log_err("run: the egress broker did not start");
	return r;
}

/*
 * Its sentinels back, once it is ready.  Waited for only when the agent's
 * first process is ready to exec (the sentinels are in the agent's
 * environment, the CA bundle is written before the broker says it is
 * ready): the broker's own start, the longest of a session's, then runs
 * alongside the agent's.
 */
int egress_session_ready(struct sup *s)
{
	json_t *ready = NULL, *v;
	const char *k;
	int r;

	r = helper_ready(&s->egress, &ready);
	if (r < 0) {
		json_decref(ready);
		log_err("run: the egress broker did not start%s", r == -ETIMEDOUT ? " in time" : "");
		return r;
	}
	/* The sentinels, for the agent's environment: worthless outside this session's broker. */
	json_object_foreach(json_object_get(ready, "sentinels"), k, v) {
		size_t have = s->sentinels ? strlen(s->sentinels) : 0;
		char *nb = json_is_string(v) ? realloc(s->sentinels, have + strlen(k) +
						       strlen(json_string_value(v)) + 3) : NULL;

		if (!nb)
			continue;
		sprintf(nb + have, "%s=%s\n", k, json_string_value(v));
		s->sentinels = nb;
	}
	json_decref(ready);
	/*
	 * The broker holds the secrets now; this process's copies (its
	 * environment, inherited from whoever started cordon) are wiped.  A
	 * source that is a file stays where the user keeps it.
	 */
	creds_wipe_sources(s->pol);
	close(s->egress_listen);
	s->egress_listen = -1;
	if (s->ssh_agent_listen >= 0)
		close(s->ssh_agent_listen);
	s->ssh_agent_listen = -1;
	if (s->egress_ca >= 0)
		close(s->egress_ca);
	s->egress_ca = -1;
	return 0;
}

void egress_session_stop(struct sup *s)
{
	helper_stop(&s->egress);
	if (s->egress_listen >= 0)
		close(s->egress_listen);
	s->egress_listen = -1;
	if (s->egress_ca >= 0)
		close(s->egress_ca);
	s->egress_ca = -1;
	if (s->ca_path[0])
		(void)unlink(s->ca_path);
	free(s->sentinels);
	s->sentinels = NULL;
}
