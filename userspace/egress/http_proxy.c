// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The egress broker: the HTTP proxy a session's agent reaches the network
 * through (HTTPS_PROXY / HTTP_PROXY), outside the session, judging every
 * request with the session's policy.
 *
 * What it closes:
 *   - A host no rule lets the agent reach: CONNECT and absolute-form
 *     requests are judged by host name (net rules with "via": "egress")
 *     and by what they carry, lifted into {"server": "http", "tool":
 *     "request", "arguments": {method, host, port[, path]}}, so a tool rule
 *     can escalate or deny, say, a POST to a code host.
 *   - Name games: names are resolved here, on the host; an address that is
 *     not public (loopback, private, link-local, the cloud metadata address,
 *     CGNAT, multicast, v4-mapped forms of those) must itself be listed by an
 *     allowing rule, as must any IP literal a client names.  So an
 *     allowlisted name that resolves (or is rebound) to 169.254.169.254 or
 *     127.0.0.1 is refused.  Every resolved address is judged as well, so a
 *     rule denying an address or CIDR holds whichever name resolves into it.
 *   - Fronting: inside a CONNECT tunnel the first bytes must be a TLS
 *     ClientHello whose server name is the CONNECT host (no name, another
 *     name, or no TLS at all: the tunnel is closed before a byte reaches the
 *     server); a tunnel admitted by an ssh remote's grant carries SSH
 *     instead, and must begin with its identification string
 *     (tunnel_ssh, tunnel.c).
 *   - Ambiguous HTTP (request smuggling, obs-fold, bare CR, absolute-form
 *     host differing from Host): refused by the strict parser (http.c) with
 *     a plain status; slowloris: a head must arrive whole within
 *     --head-timeout; one thread per connection, capped, so a slow client
 *     costs one thread and never the others' service.
 * What it cannot close: what travels inside an allowed TLS tunnel is opaque
 * here (the credential proxy terminates TLS for credential hosts only); a
 * plain-HTTP request goes upstream as sent (Connection: close added).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <linux/capability.h>
#include <netinet/in.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "broker.h"
#include "broker_chan.h"
#include "conn.h"
#include "grants.h"
#include "http_proxy.h"
#include "proto.h"
#include "session_policy.h"
#include "ssh_agent.h"
#include "util.h"

/* --- the command ---------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: cordon http-proxy --listen ADDR:PORT [OPTIONS]\n"
		"  --listen ADDR:PORT  where to listen (port 0: any; see --port-file)\n"
		"  --port-file FILE    write the port listened on there\n"
		"  --policy FILE       the policy (default: coding-agent)\n"
		"  --workspace DIR     ${WORKSPACE} (default: the current directory)\n"
		"  --user USER         ${HOME}, ${USER} of this user (default: the caller)\n"
		"  --audit FILE        the audit log\n"
		"  --head-timeout MS   a request head must arrive within this (default 10000)\n"
		"  --idle-timeout MS   a connection that moves no byte for this long goes\n"
		"                      (default 300000)\n"
		"  --var NAME=VALUE    a policy variable\n"
		"  --upstream-ca FILE  verify credential hosts against this CA, not the system's\n"
		"                      (with --upstream: only those gateways)\n"
		"  --upstream CRED=URL  credential CRED's requests go to this https gateway\n"
		"  --ca-out FILE       write the bundle clients must trust (system CAs + session CA)\n"
		"  --sentinels-out FILE  write ENV=SENTINEL for each credential with a secret\n"
		"The egress broker: CONNECT to allowlisted hosts (the TLS server name must be\n"
		"the CONNECT host) and plain-HTTP absolute-form requests, each judged by the\n"
		"policy as http.request {method, host, port[, path]}.  CONNECT to a credential\n"
		"host: TLS terminated with a session CA, the sentinel swapped for the secret.\n");
}

/* What clients need from outside: the CA bundle and the sentinels (never the secrets). */
static int export_creds(struct hp *hp, const char *ca_out, const char *sentinels_out)
{
	if (ca_out) {
		_cleanup_close_ int fd = open(ca_out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		if (fd < 0 || creds_write_bundle(hp->creds, fd) < 0) {
			log_err("http-proxy: --ca-out %s: %m", ca_out);
			return -EIO;
		}
	}
	if (sentinels_out) {
		_cleanup_close_ int fd = open(sentinels_out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
					      0600);

		if (fd < 0) {
			log_err("http-proxy: --sentinels-out %s: %m", sentinels_out);
			return -EIO;
		}
		for (size_t i = 0; i < creds_count(hp->creds); i++) {
			const char *sentinel;
			const struct pol_credential *cr = creds_at(hp->creds, i, &sentinel);

			if (sentinel)
				dprintf(fd, "%s=%s\n", cr->env, sentinel);
		}
	}
	return 0;
}

static int listen_on(const char *spec, char *portfile)
{
	const char *colon = strrchr(spec, ':');
	char host[64], *end;
	unsigned long port;
	struct sockaddr_storage ss = { 0 };
	socklen_t sl;
	int fd, one = 1;
	size_t hl;

	/* ADDR:PORT or [V6]:PORT, an address (no name), port 0 for any. */
	port = colon ? strtoul(colon + 1, &end, 10) : 0;
	hl = colon ? (size_t)(colon - spec) : 0;
	if (hl > 1 && spec[0] == '[' && spec[hl - 1] == ']') {
		spec++;
		hl -= 2;
	}
	if (!colon || !colon[1] || *end || port > 65535 || !hl || hl >= sizeof(host)) {
		log_err("http-proxy: --listen %s: expected ADDR:PORT", spec);
		return -EINVAL;
	}
	memcpy(host, spec, hl);
	host[hl] = '\0';
	if (inet_pton(AF_INET, host, &((struct sockaddr_in *)&ss)->sin_addr) == 1) {
		ss.ss_family = AF_INET;
		((struct sockaddr_in *)&ss)->sin_port = htons((uint16_t)port);
		sl = sizeof(struct sockaddr_in);
	} else if (inet_pton(AF_INET6, host, &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1) {
		ss.ss_family = AF_INET6;
		((struct sockaddr_in6 *)&ss)->sin6_port = htons((uint16_t)port);
		sl = sizeof(struct sockaddr_in6);
	} else {
		log_err("http-proxy: --listen %s: an IP address is needed", spec);
		return -EINVAL;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&ss, sl) < 0 || listen(fd, 128) < 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &sl) < 0) {
		int e = errno;

		log_err("http-proxy: --listen %s: %s", spec, strerror(e));
		if (fd >= 0)
			close(fd);
		return -e;
	}
	if (portfile) {
		char tmp[PATH_MAX + 8], num[16];
		int pf;

		snprintf(tmp, sizeof(tmp), "%s.tmp", portfile);
		snprintf(num, sizeof(num), "%u\n", ntohs(ss.ss_family == AF_INET ?
							 ((struct sockaddr_in *)&ss)->sin_port :
							 ((struct sockaddr_in6 *)&ss)->sin6_port));
		pf = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (pf < 0 || write(pf, num, strlen(num)) != (ssize_t)strlen(num) || close(pf) < 0 ||
		    rename(tmp, portfile) < 0) {
			log_err("http-proxy: --port-file %s: %m", portfile);
			close(fd);
			return -EIO;
		}
	}
	return fd;
}

/*
 * The broker reads what the agent sends (HTTP heads, TLS hellos, request
 * bodies with tool calls): of cordon's processes, the one most exposed to
 * the agent.  Once its start is done (the policy, the secrets, the session
 * CA, its sockets, the session's cgroup) it needs no privilege, so in a
 * session it gives root up for an identity of its own (helper_uid), no capability but
 * CAP_IPC_LOCK where it holds secrets, no_new_privs.  A flaw exploited in it then yields an unprivileged
 * process holding what it must (its session's secrets, the network), not
 * root on the host: it cannot trace or signal the supervisor, the watchdog,
 * another session's broker or the human's processes, nor read what only
 * root or the human may.  Kept root: a broker that relays the human's
 * ssh-agent (it reaches the human's socket at each connection), and
 * `cordon http-proxy` run by hand.
 */
static int drop_root(bool locked)
{
	uid_t u = helper_uid();

	/*
	 * Its memory is locked for the secrets (mlockall, MCL_FUTURE): without
	 * CAP_IPC_LOCK every new mapping would count against RLIMIT_MEMLOCK
	 * (8 MiB here, and a thread's stack alone is that) and fail.
	 */
	return drop_identity(u, (gid_t)u, NULL, 0, locked ? 1ull << CAP_IPC_LOCK : 0, getppid());
}

int cmd_http_proxy(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "port-file", required_argument, NULL, 'P' },
		{ "policy", required_argument, NULL, 'p' },
		{ "workspace", required_argument, NULL, 'w' },
		{ "user", required_argument, NULL, 'u' },
		{ "audit", required_argument, NULL, 'a' },
		{ "head-timeout", required_argument, NULL, 'T' },
		{ "idle-timeout", required_argument, NULL, 'I' },
		{ "var", required_argument, NULL, 'V' },
		{ "upstream-ca", required_argument, NULL, 'U' },
		{ "upstream", required_argument, NULL, 'G' },
		{ "ca-out", required_argument, NULL, 'O' },
		{ "sentinels-out", required_argument, NULL, 'S' },
		{ "channel-fd", required_argument, NULL, 'C' },
		{ "ca-fd", required_argument, NULL, 'F' },
		{ "steps-fd", required_argument, NULL, 'N' },
		/* For cordon run (not in the usage): a listening socket it bound. */
		{ "listen-fd", required_argument, NULL, 'L' },
		{ "ssh-agent-fd", required_argument, NULL, 'A' },
		{ "ssh-auth-sock", required_argument, NULL, 'K' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct hp hp = { .listen_fd = -1, .head_timeout_ms = 10000, .hello_timeout_ms = 10000,
			 .idle_timeout_ms = IDLE_TIMEOUT_MS,
			 .chan_fd = -1, .chan_lock = PTHREAD_MUTEX_INITIALIZER, .steps = { .fd = -1 } };
	int ca_fd = -1;
	pthread_t reader;
	const char *policy = "coding-agent", *workspace = ".", *user = NULL, *audit = NULL;
	const char *upstream_ca = NULL, *ca_out = NULL, *sentinels_out = NULL;
	char *listen_spec = NULL, *portfile = NULL, ws[PATH_MAX];
	const char *vars[32], *gateways[32];
	int n_vars = 0, n_gateways = 0, o, r, ret = 125, listen_fd = -1, agent_fd = -1;
	const char *agent_up = NULL;
	static struct ssh_agent_hooks agent_hooks = { .may_sign = grants_agent_may_sign,
						      .record = grants_agent_record };
	struct passwd *pw;
	struct sigaction sa = { .sa_handler = conn_on_signal };

	optind = 1;
	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (o) {
		case 'l': listen_spec = optarg; break;
		case 'L': listen_fd = atoi(optarg); break;
		case 'A': agent_fd = atoi(optarg); break;
		case 'K': agent_up = optarg; break;
		case 'P': portfile = optarg; break;
		case 'p': policy = optarg; break;
		case 'w': workspace = optarg; break;
		case 'u': user = optarg; break;
		case 'a': audit = optarg; break;
		case 'T':
			hp.head_timeout_ms = atoi(optarg);
			if (hp.head_timeout_ms <= 0) {
				log_err("http-proxy: --head-timeout %s: milliseconds expected", optarg);
				return 125;
			}
			hp.hello_timeout_ms = hp.head_timeout_ms;
			break;
		case 'I':
			hp.idle_timeout_ms = atoi(optarg);
			if (hp.idle_timeout_ms <= 0) {
				log_err("http-proxy: --idle-timeout %s: milliseconds expected", optarg);
				return 125;
			}
			break;
		case 'V':
			if (n_vars == (int)ARRAY_SIZE(vars)) {
				log_err("http-proxy: too many --var");
				return 125;
			}
			vars[n_vars++] = optarg;
			break;
		case 'U': upstream_ca = optarg; break;
		case 'G':
			if (n_gateways == (int)ARRAY_SIZE(gateways)) {
				log_err("http-proxy: too many --upstream");
				return 125;
			}
			gateways[n_gateways++] = optarg;
			break;
		case 'C': hp.chan_fd = atoi(optarg); break;
		case 'F': ca_fd = atoi(optarg); break;
		case 'N':
			if (steps_attach(&hp.steps, atoi(optarg)) < 0) {
				log_err("http-proxy: --steps-fd %s: not cordon's steps counter", optarg);
				return 125;
			}
			break;
		case 'O': ca_out = optarg; break;
		case 'S': sentinels_out = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;     /* getopt named the option */
		}
	}
	if (!listen_spec == (listen_fd < 0) || optind != argc) {
		usage(stderr);
		return 125;
	}
	pw = !user ? getpwuid(getuid()) : (user[0] >= '0' && user[0] <= '9') ?
	     getpwuid((uid_t)strtoul(user, NULL, 10)) : getpwnam(user);
	if (!pw) {
		log_err("http-proxy: --user %s: no such user", user ? user : "(caller)");
		return 125;
	}
	if (!realpath(workspace, ws)) {
		log_err("http-proxy: workspace %s: %m", workspace);
		return 125;
	}
	{
		struct session_vars sv = { ws, pw->pw_dir, pw->pw_name, pw->pw_uid };

		char why[512];

		if (policy_load_session("http-proxy", policy, &sv, vars, n_vars, &hp.pol) < 0)
			return 125;
		/* With --upstream, --upstream-ca verifies those gateways only. */
		for (int i = 0; i < n_gateways; i++)
			if (pol_apply_upstream(hp.pol, gateways[i], upstream_ca, why, sizeof(why)) < 0) {
				log_err("http-proxy: %s", why);
				goto out;
			}
		if (n_gateways)
			upstream_ca = NULL;
	}
	/* Before any thread: the secrets are taken from this environment and wiped. */
	if (hp.pol->n_creds &&
	    (creds_init(&hp.creds, hp.pol, upstream_ca, "http-proxy") < 0 ||
	     export_creds(&hp, ca_out, sentinels_out) < 0))
		goto out;
	if (ca_fd >= 0 && hp.creds) {
		r = creds_write_bundle(hp.creds, ca_fd);
		close(ca_fd);
		if (r < 0) {
			log_err("http-proxy: the CA bundle: %s", strerror(-r));
			goto out;
		}
	}
	pthread_mutex_init(&hp.lock, NULL);
	if (audit && hp.chan_fd < 0) {
		char session[48];
		unsigned char rnd[8];
		json_t *start;

		if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd)) {
			log_err("http-proxy: getrandom: %m");
			goto out;
		}
		snprintf(session, sizeof(session), "http%02x%02x%02x%02x%02x%02x%02x%02x", rnd[0], rnd[1],
			 rnd[2], rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]);
		start = json_pack("{s:s,s:s}", "what", "http-proxy", "policy", policy);
		r = audit_open(audit, session, getenv("CORDON_AUDIT_KEY_DIR") ?: AUDIT_KEY_DIR, start,
			       &hp.audit);
		json_decref(start);
		if (r < 0) {
			log_err("http-proxy: --audit %s: %s", audit, strerror(-r));
			goto out;
		}
	}
	if (listen_fd >= 0) {
		int type = 0;
		socklen_t tl = sizeof(type);

		if (getsockopt(listen_fd, SOL_SOCKET, SO_TYPE, &type, &tl) < 0 || type != SOCK_STREAM) {
			log_err("http-proxy: --listen-fd %d: not a listening stream socket", listen_fd);
			goto out;
		}
		(void)fcntl(listen_fd, F_SETFD, FD_CLOEXEC);
		hp.listen_fd = listen_fd;
	} else {
		hp.listen_fd = listen_on(listen_spec, portfile);
	}
	if (hp.listen_fd < 0)
		goto out;
	if (hp.chan_fd >= 0) {
		(void)fcntl(hp.chan_fd, F_SETFD, FD_CLOEXEC);
		r = session_from_channel(&hp);
		if (r == -ETIMEDOUT)
			log_err("http-proxy: no session from the supervisor in %d s",
				SESSION_WAIT_MS / 1000);
		else if (r == -E2BIG || r == -EBADMSG)
			log_err("http-proxy: the supervisor's first message is not the session's cgroup");
		if (r < 0)
			goto out;     /* -EPIPE: the supervisor gave up, and said why */
	}
	if (hp.chan_fd >= 0 && agent_fd < 0 && getuid() == 0 && (r = drop_root(hp.creds)) < 0) {
		log_err("http-proxy: cannot give up root: %s", strerror(-r));
		goto out;
	}
	if (hp.cgroup_id && (r = conn_peer_check(hp.listen_fd)) < 0) {
		log_err("http-proxy: cannot tell which cgroup a client's socket belongs to (sock_diag: "
			"%s; is the tcp_diag module available?): every client would be refused",
			strerror(-r));
		goto out;
	}
	signal(SIGPIPE, SIG_IGN);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if (hp.chan_fd >= 0) {
		json_t *sent = json_object();

		for (size_t i = 0; hp.creds && i < creds_count(hp.creds); i++) {
			const char *v;
			const struct pol_credential *cr = creds_at(hp.creds, i, &v);

			if (v)
				json_object_set_new(sent, cr->env, json_string(v));
		}
		if (pthread_create(&reader, NULL, chan_reader, &hp) != 0 ||
		    chan_send(&hp, proto_ready(json_pack("{s:o}", "sentinels", sent))) < 0) {
			log_err("http-proxy: the supervisor's channel: %m");
			goto out;
		}
	}
	/* After the session is known: the relay judges its clients by the grants. */
	if (agent_fd >= 0 && agent_up) {
		(void)fcntl(agent_fd, F_SETFD, FD_CLOEXEC);
		agent_hooks.ctx = &hp;
		r = ssh_agent_start(agent_fd, agent_up, &agent_hooks);
		if (r < 0) {
			log_err("http-proxy: the session's ssh-agent relay: %s", strerror(-r));
			goto out;
		}
	}
	ret = conn_accept_loop(&hp) < 0 ? 125 : 0;
	r = audit_down(hp.audit, NULL);
	if (r < 0) {
		log_err("http-proxy: stopped: the audit log cannot keep its records (%s)", strerror(-r));
		ret = 125;
	}
	/* Connections still open end with the process; their records so far are in. */
out:
	if (hp.listen_fd >= 0)
		close(hp.listen_fd);
	if (hp.audit) {
		pthread_mutex_lock(&hp.lock);
		(void)audit_seal(hp.audit, NULL);
		pthread_mutex_unlock(&hp.lock);
	}
	creds_free(hp.creds);
	/*
	 * Its last record is sent: the supervisor, which reads the channel to
	 * its end before sealing the session's log, goes on now rather than
	 * when this process's exit (unmapping its locked memory) closes it.
	 */
	if (hp.chan_fd >= 0) {
		pthread_mutex_lock(&hp.chan_lock);
		hp.chan_gone = true;
		(void)shutdown(hp.chan_fd, SHUT_RDWR);
		pthread_mutex_unlock(&hp.chan_lock);
	}
	return ret;
}
