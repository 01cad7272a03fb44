// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The MCP proxy: one process between the agent (the client, over stdio or a
 * Unix socket) and every MCP server it may use.
 *
 * What it closes:
 *   - A tool call no rule allows, an unknown tool, an argument key no rule
 *     knows, a path argument that escapes the rule's roots through "../" or
 *     a symlink (the evaluator canonicalises paths against the server's
 *     roots): refused before anything reaches the server.
 *   - A server that reads beyond what its tools should: each server runs in
 *     a cordon session of its own (`cordon run` with the profile its entry
 *     names), so a path the proxy judged and the server then followed
 *     elsewhere (a symlink swapped in after the check) still meets that
 *     session's kernel floor.  The proxy does not rewrite arguments; the
 *     floor is what makes its judgment hold.
 *   - A secret a server hands back (a key in a file it read): known secret
 *     values are replaced in results and errors before the agent sees them.
 *   - A malformed, oversized or hostile message from either side: answered
 *     with the JSON-RPC error it deserves, never half-forwarded; a server
 *     that floods, hangs or crashes fails only its own calls.
 * What it cannot close: a secret that reaches a result encoded (base64,
 *   split across strings) passes the scrub; what a server does within its
 *   own session's rights is the profile's business.
 *
 * One thread, poll(2), non-blocking descriptors and bounded queues: no peer
 * can block the proxy or make it buffer without bound.
 *
 * Here: the loop and the command.  The state and what the proxy sends:
 * mcp_state.h; the servers: mcp_server.h; the clients and the supervisor's
 * decisions: mcp_client.h; the servers file and the secrets: mcp_config.h.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <linux/capability.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>

#include "audit.h"
#include "fallback.h"
#include "jsonpos.h"
#include "jsonrpc.h"
#include "landlock_compat.h"
#include "mcp_client.h"
#include "mcp_config.h"
#include "mcp_proxy.h"
#include "proto.h"
#include "mcp_server.h"
#include "mcp_state.h"
#include "policy.h"
#include "scrub.h"
#include "session_policy.h"
#include "steps.h"
#include "util.h"

/* --- the loop ------------------------------------------------------------------- */

static void expire(struct proxy *p)
{
	uint64_t now = mono_ms();

restart:
	for (struct call *k = p->calls, *next; k; k = next) {
		next = k->next;
		if (now < k->deadline_ms)
			continue;
		if (k->kind == CALL_TOOL) {
			mcp_state_client_error(p, k->c, k->cid, JRPC_INTERNAL_ERROR, "MCP server \"%s\" did not "
					       "answer within %u s", k->s->name, k->s->timeout_s);
			mcp_state_cancel_down(p, k, "timed out");
			mcp_state_record(p, "mcp", json_pack("{s:s,s:O}", "what", "timeout", "event", k->event));
			mcp_state_call_free(p, k);
		} else {
			struct srv *s = k->s;

			mcp_state_call_free(p, k);
			mcp_state_srv_kill(p, s, "it did not initialize in time");
			goto restart;   /* that freed its other calls, `next` among them perhaps */
		}
	}
}

static int next_timeout(struct proxy *p)
{
	uint64_t now = mono_ms(), t = UINT64_MAX;

	for (struct call *k = p->calls; k; k = k->next)
		if (k->deadline_ms < t)
			t = k->deadline_ms;
	if (t == UINT64_MAX)
		return -1;
	return t <= now ? 0 : (int)(t - now > 60000 ? 60000 : t - now);
}

static bool starting(const struct proxy *p)
{
	for (size_t i = 0; i < p->n_srv; i++)
		if (p->srv[i].state == SRV_STARTING || p->srv[i].state == SRV_LISTING)
			return true;
	return false;
}

/* A client with calls still out: its answers are owed even after its input ended. */
static bool client_busy(const struct proxy *p, const struct client *c)
{
	for (const struct call *k = p->calls; k; k = k->next)
		if ((k->kind == CALL_TOOL || k->kind == CALL_HELD) && k->c == c)
			return true;
	return false;
}

/*
 * The proxy reads what the agent sends (JSON-RPC, its tool calls and their
 * arguments).  Once its servers run (each a `cordon run` of its own,
 * started as root) it needs root no more, so in a session it gives root up,
 * as the egress broker does (http_proxy.c): an identity of its own
 * (helper_uid), no groups, no_new_privs, not dumpable, and one capability,
 * CAP_DAC_READ_SEARCH, for the paths it judges: they are made canonical
 * against its servers' roots, through directories only their user may
 * search (a home of mode 0700; without it a symlink there would be judged
 * as written).  That capability would also read every file, so the proxy
 * then confines itself (fallback_confine_helper): it may open nothing but
 * /proc, for reading (a client's cgroup, at each accept), and make no
 * socket, connect, exec, fork or signal.  Its servers are stopped through
 * their --stop-fd, not a signal.  A flaw exploited in it then yields a
 * process that can stat any path, read /proc as an unprivileged user, and
 * answer on the descriptors it holds (its clients, its servers, its
 * channel): no file, socket, signal or process of the host's.  Without
 * Landlock it keeps no capability (paths it cannot search are then judged
 * as written, and said so).  `cordon mcp-proxy` run by hand keeps root.
 */
static int give_root_up(void)
{
	uid_t u = helper_uid();
	bool landlock = landlock_abi() >= 1;
	int r = drop_identity(u, (gid_t)u, NULL, 0, landlock ? 1ull << CAP_DAC_READ_SEARCH : 0,
			      getppid());

	if (r < 0)
		return r;
	if (!landlock)
		log_warn("mcp-proxy: no Landlock on this kernel: the proxy keeps no capability, and "
			 "judges a path through a directory its user alone may search as written");
	return fallback_confine_helper("/proc");
}

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	got_signal = sig;
}

static int proxy_loop(struct proxy *p)
{
	struct pollfd fds[2 * MAX_SERVERS + 2 * 64 + 3];
	void *who[ARRAY_SIZE(fds)];
	/* 0 srv read, 1 srv write, 2 client read, 3 client write, 4 listen, 5/6 channel read/write */
	int kind[ARRAY_SIZE(fds)];

	for (;;) {
		nfds_t n = 0;
		bool gate = starting(p);

		if (got_signal || p->stopping)
			return 0;
		if (p->chan_fd >= 0) {
			fds[n] = (struct pollfd){ .fd = p->chan_fd, .events = POLLIN };
			who[n] = NULL;
			kind[n++] = 5;
			if (p->chan_out.off < p->chan_out.len) {
				fds[n] = (struct pollfd){ .fd = p->chan_fd, .events = POLLOUT };
				who[n] = NULL;
				kind[n++] = 6;
			}
		}
		for (struct client *c = p->clients, *next; c; c = next) {
			next = c->next;
			/*
			 * A client that closed its side (a half-close, or stdin's
			 * end) still gets the answers to what it asked; then it
			 * goes.
			 */
			if (c->gone || (c->eof && c->out.off == c->out.len && !client_busy(p, c))) {
				bool was_stdio = c->rfd == 0;

				mcp_client_remove(p, c);
				if (was_stdio)
					return 0;       /* the agent closed stdin: done */
			}
		}
		for (size_t i = 0; i < p->n_srv; i++) {
			struct srv *s = &p->srv[i];

			if (s->state == SRV_DEAD)
				continue;
			if (s->rfd >= 0) {
				fds[n] = (struct pollfd){ .fd = s->rfd, .events = POLLIN };
				who[n] = s;
				kind[n++] = 0;
			}
			if (s->out.off < s->out.len) {
				fds[n] = (struct pollfd){ .fd = s->wfd, .events = POLLOUT };
				who[n] = s;
				kind[n++] = 1;
			}
		}
		for (struct client *c = p->clients; c && n + 2 < ARRAY_SIZE(fds); c = c->next) {
			if (!gate && !c->eof) {
				fds[n] = (struct pollfd){ .fd = c->rfd, .events = POLLIN };
				who[n] = c;
				kind[n++] = 2;
			}
			if (c->out.off < c->out.len) {
				fds[n] = (struct pollfd){ .fd = c->wfd, .events = POLLOUT };
				who[n] = c;
				kind[n++] = 3;
			}
		}
		if (p->listen_fd >= 0 && !gate && p->live_clients < MAX_CLIENTS) {
			fds[n] = (struct pollfd){ .fd = p->listen_fd, .events = POLLIN };
			who[n] = NULL;
			kind[n++] = 4;
		}
		if (poll(fds, n, next_timeout(p)) < 0 && errno != EINTR)
			return -errno;
		for (nfds_t i = 0; i < n; i++) {
			if (!fds[i].revents)
				continue;
			switch (kind[i]) {
			case 0: {
				struct srv *s = who[i];

				if (s->state != SRV_DEAD && s->rfd == fds[i].fd)
					mcp_server_readable(p, s);
				break;
			}
			case 1: {
				struct srv *s = who[i];

				if (s->state != SRV_DEAD && mcp_state_q_flush(&s->out, s->wfd) < 0)
					mcp_state_srv_kill(p, s, "its input was closed");
				break;
			}
			case 2: {
				struct client *c = who[i];

				if (!c->gone)
					mcp_client_readable(p, c);
				break;
			}
			case 3: {
				struct client *c = who[i];

				if (!c->gone && mcp_state_q_flush(&c->out, c->wfd) < 0)
					c->gone = true;
				break;
			}
			case 4:
				mcp_client_accept(p);
				break;
			case 5:
				mcp_client_channel_readable(p);
				break;
			case 6:
				if (mcp_state_q_flush(&p->chan_out, p->chan_fd) < 0)
					p->stopping = true;
				break;
			default:
				break;
			}
		}
		/* Answers queued while handling input go out without another round. */
		for (struct client *c = p->clients; c; c = c->next)
			if (!c->gone && c->out.off < c->out.len && mcp_state_q_flush(&c->out, c->wfd) < 0)
				c->gone = true;
		for (size_t i = 0; i < p->n_srv; i++) {
			struct srv *s = &p->srv[i];

			if (s->overflow)
				mcp_state_srv_kill(p, s, "it left more than 64 MiB of requests unread");
			if (s->state != SRV_DEAD && s->out.off < s->out.len && mcp_state_q_flush(&s->out, s->wfd) < 0)
				mcp_state_srv_kill(p, s, "its input was closed");
		}
		expire(p);
		if (p->chan_fd >= 0 && p->chan_out.off < p->chan_out.len &&
		    mcp_state_q_flush(&p->chan_out, p->chan_fd) < 0)
			p->stopping = true;
	}
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: cordon mcp-proxy --servers SERVERS.json [OPTIONS]\n"
		"  --servers FILE    the MCP servers: {\"servers\": {NAME: {\"command\": [...],\n"
		"                    \"profile\": P, \"roots\": [...], \"env\": [...], \"timeout\": S}}}\n"
		"  --policy FILE     the policy judging every tools/call (default: coding-agent)\n"
		"  --workspace DIR   ${WORKSPACE} (default: the current directory)\n"
		"  --user USER       the servers' user (default: SUDO_UID's)\n"
		"  --listen PATH     serve MCP on a Unix socket instead of stdio\n"
		"  --audit FILE      the audit log (each server's own: FILE.NAME.jsonl)\n"
		"  --var NAME=VALUE  a policy variable\n"
		"Speaks MCP (newline-delimited JSON-RPC 2.0) on stdin/stdout.  Tools are\n"
		"named SERVER.TOOL.  Refused calls fail with JSON-RPC error %d.\n", JRPC_DENIED);
}

int cmd_mcp_proxy(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "servers", required_argument, NULL, 's' },
		{ "policy", required_argument, NULL, 'p' },
		{ "workspace", required_argument, NULL, 'w' },
		{ "user", required_argument, NULL, 'u' },
		{ "listen", required_argument, NULL, 'l' },
		{ "audit", required_argument, NULL, 'a' },
		{ "var", required_argument, NULL, 'V' },
		/* For cordon run --mcp (not in the usage: run passes them). */
		{ "listen-fd", required_argument, NULL, 'L' },
		{ "channel-fd", required_argument, NULL, 'C' },
		{ "steps-fd", required_argument, NULL, 'N' },
		{ "session", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct proxy p = { .listen_fd = -1, .chan_fd = -1, .steps = { .fd = -1 } };
	const char *servers = NULL, *policy = "coding-agent", *workspace = ".", *user = NULL;
	const char *listen_path = NULL, *audit = NULL;
	const char *vars[32];
	int n_vars = 0, o, r, ret = 125, listen_fd = -1;
	char ws[PATH_MAX];
	struct passwd *pw;
	struct sigaction sa = { .sa_handler = on_signal };

	optind = 1;
	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (o) {
		case 's': servers = optarg; break;
		case 'p': policy = optarg; break;
		case 'w': workspace = optarg; break;
		case 'u': user = optarg; break;
		case 'l': listen_path = optarg; break;
		case 'a': audit = optarg; break;
		case 'V':
			if (n_vars == (int)ARRAY_SIZE(vars)) {
				log_err("mcp-proxy: too many --var");
				return 125;
			}
			vars[n_vars++] = optarg;
			break;
		case 'L': listen_fd = atoi(optarg); break;
		case 'C': p.chan_fd = atoi(optarg); break;
		case 'N':
			if (steps_attach(&p.steps, atoi(optarg)) < 0) {
				log_err("mcp-proxy: --steps-fd %s: not cordon's steps counter", optarg);
				return 125;
			}
			break;
		case 'S':
			if (!mcp_config_name_ok(optarg) || strlen(optarg) >= sizeof(p.session)) {
				log_err("mcp-proxy: --session %s: not a session name", optarg);
				return 125;
			}
			snprintf(p.session, sizeof(p.session), "%s", optarg);
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;     /* getopt named the option */
		}
	}
	if (!servers || optind != argc || (listen_fd >= 0 && listen_path)) {
		usage(stderr);
		return 125;
	}
	if (p.chan_fd >= 0) {
		if (fcntl(p.chan_fd, F_GETFD) < 0 || mcp_state_set_nonblock(p.chan_fd) < 0) {
			log_err("mcp-proxy: --channel-fd %d: %m", p.chan_fd);
			return 125;
		}
		(void)fcntl(p.chan_fd, F_SETFD, FD_CLOEXEC);
		linebuf_init(&p.chan_in, 1u << 20);
	}
	if (geteuid() != 0) {
		log_err("mcp-proxy: needs root: each server runs in a cordon session of its own");
		return 125;
	}
	if (!user && getenv("SUDO_UID"))
		user = getenv("SUDO_UID");
	if (!user) {
		log_err("mcp-proxy: refusing to run the servers as root: pass --user USER");
		return 125;
	}
	pw = (user[0] >= '0' && user[0] <= '9') ? getpwuid((uid_t)strtoul(user, NULL, 10)) : getpwnam(user);
	if (!pw) {
		log_err("mcp-proxy: --user %s: no such user", user);
		return 125;
	}
	p.user = pw->pw_name;
	p.client_uid = pw->pw_uid;
	if (!realpath(workspace, ws)) {
		log_err("mcp-proxy: workspace %s: %m", workspace);
		return 125;
	}
	if (readlink("/proc/self/exe", p.self, sizeof(p.self) - 1) < 0) {
		log_err("mcp-proxy: /proc/self/exe: %m");
		return 125;
	}
	{
		struct session_vars sv = { ws, pw->pw_dir, pw->pw_name, pw->pw_uid };

		if (policy_load_session("mcp-proxy", policy, &sv, vars, n_vars, &p.pol) < 0)
			return 125;
	}
	if (mcp_config_load_servers(&p, servers, ws) < 0)
		goto out;
	if (audit && p.chan_fd >= 0) {
		/* Records go to the session's log; the servers' logs beside it. */
		snprintf(p.audit_path, sizeof(p.audit_path), "%s", audit);
	} else if (audit) {
		char session[48];
		unsigned char rnd[8];
		json_t *start;

		if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd)) {
			log_err("mcp-proxy: getrandom: %m");
			goto out;
		}
		snprintf(session, sizeof(session), "mcp%02x%02x%02x%02x%02x%02x%02x%02x", rnd[0], rnd[1],
			 rnd[2], rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]);
		snprintf(p.audit_path, sizeof(p.audit_path), "%s", audit);
		start = json_pack("{s:s,s:s,s:s}", "what", "mcp-proxy", "policy", policy, "servers", servers);
		r = audit_open(audit, session, getenv("CORDON_AUDIT_KEY_DIR") ?: AUDIT_KEY_DIR, start, &p.audit);
		json_decref(start);
		if (r < 0) {
			log_err("mcp-proxy: --audit %s: %s", audit, strerror(-r));
			goto out;
		}
	}
	mcp_config_collect_secrets(&p);
	(void)pol_protect_path(p.pol, p.self);
	signal(SIGPIPE, SIG_IGN);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if (listen_fd >= 0) {
		int type = 0;
		socklen_t tl = sizeof(type);

		if (getsockopt(listen_fd, SOL_SOCKET, SO_TYPE, &type, &tl) < 0 || type != SOCK_STREAM ||
		    mcp_state_set_nonblock(listen_fd) < 0) {
			log_err("mcp-proxy: --listen-fd %d: not a listening stream socket", listen_fd);
			goto out;
		}
		(void)fcntl(listen_fd, F_SETFD, FD_CLOEXEC);
		p.listen_fd = listen_fd;
	} else if (listen_path) {
		r = unix_listen(listen_path, p.client_uid);
		if (r < 0) {
			log_err("mcp-proxy: --listen %s: %s", listen_path, strerror(-r));
			goto out;
		}
		p.listen_fd = r;
	} else {
		p.stdio = true;
		if (!mcp_client_add(&p, 0, 1)) {
			log_err("mcp-proxy: out of memory");
			goto out;
		}
	}
	/* Configuration accepted: cordon run may start the agent. */
	mcp_state_chan_send(&p, proto_ready(json_pack("{s:I}", "servers", (json_int_t)p.n_srv)));
	for (size_t i = 0; i < p.n_srv; i++) {
		r = mcp_server_start(&p, &p.srv[i]);
		if (r < 0) {
			log_err("mcp-proxy: server %s: %s", p.srv[i].name, strerror(-r));
			p.srv[i].state = SRV_DEAD;
			snprintf(p.srv[i].dead, sizeof(p.srv[i].dead), "could not start: %s", strerror(-r));
			continue;
		}
		mcp_server_initialize(&p, &p.srv[i]);
	}
	if (p.chan_fd >= 0 && (r = give_root_up()) < 0) {
		log_err("mcp-proxy: cannot give up root: %s", strerror(-r));
		ret = 125;
		goto out;
	}
	r = proxy_loop(&p);
	ret = r < 0 ? 125 : 0;
	/* Not one server ever came up: the proxy served nothing, and says so in its status. */
	if (ret == 0 && p.n_srv && !p.n_ready_ever) {
		log_err("mcp-proxy: no MCP server could start (see the messages above)");
		ret = 125;
	}
	r = audit_down(p.audit, NULL);
	if (r < 0) {
		log_err("mcp-proxy: stopped: the audit log cannot keep its records (%s)", strerror(-r));
		ret = 125;
	}
out:
	while (p.clients)
		mcp_client_remove(&p, p.clients);
	while (p.calls)
		mcp_state_call_free(&p, p.calls);
	for (size_t i = 0; i < p.n_srv; i++) {
		struct srv *s = &p.srv[i];

		mcp_state_srv_stop(s);
		if (s->pid > 0)
			(void)waitpid(s->pid, NULL, 0);
		if (s->rfd >= 0)
			close(s->rfd);
		if (s->wfd >= 0)
			close(s->wfd);
		linebuf_free(&s->in);
		free(s->out.buf);
		json_decref(s->tools);
		json_decref(s->acc);
		mcp_state_strv_free(s->argv);
		mcp_state_strv_free(s->roots);
		mcp_state_strv_free(s->env);
	}
	if (p.listen_fd >= 0) {
		close(p.listen_fd);
		if (listen_path)
			(void)unlink(listen_path);
	}
	if (p.audit) {
		(void)audit_seal(p.audit, NULL);
		audit_close(p.audit);
	}
	if (p.chan_fd >= 0) {
		/* The last records: the supervisor reads until this end closes. */
		int fl = fcntl(p.chan_fd, F_GETFL);

		if (fl >= 0)
			(void)fcntl(p.chan_fd, F_SETFL, fl & ~O_NONBLOCK);
		(void)mcp_state_q_flush(&p.chan_out, p.chan_fd);
		close(p.chan_fd);
		linebuf_free(&p.chan_in);
		free(p.chan_out.buf);
	}
	scrub_free(&p.scrub);
	pol_free(p.pol);
	return ret;
}
