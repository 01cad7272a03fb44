// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `cordon run --mcp SERVERS.json`: the session's MCP proxy, the agent's one
 * way to its tools.
 *
 * The supervisor binds the socket (RUN_MCP_DIR/SESSION.sock, root's, group
 * the agent's, mode 0660) before the session's rules are compiled, and
 * grants the agent write on exactly that path (pol_grant_path), which is
 * what connecting to a Unix socket takes: the BPF LSM floor keys the grant
 * by the socket's inode, the fallback's supervisor emulates the connect
 * after the same judgement.  The invariant "cordon-mcp" refuses creating,
 * removing or re-moding anything in RUN_MCP_DIR, so the agent cannot put
 * another socket where its own is expected.  The proxy (cordon mcp-proxy,
 * outside the session, as root, killed with the supervisor) accepts a peer
 * only from this session's cgroup (or host root: the emulating
 * supervisor), so another session's agent that reached the socket is still
 * refused.
 *
 * The channel (a socketpair, newline-delimited JSON) carries:
 *   proxy -> supervisor: {"op":"ready"} once its configuration is accepted;
 *     {"op":"record","type":T,"fields":{...}}: its audit records, written
 *     into the session's log; {"op":"escalate","hold":N,"event":E,...}: a
 *     tools/call held for the session's human; {"op":"withdraw","hold":N}.
 *   supervisor -> proxy: {"op":"decision","hold":N,"allow":B,"why":S,...}.
 * An escalated tools/call is therefore a pending request like a held exec
 * or connect: the terminal prompt, `cordon pending/approve/deny`, the
 * batching of identical events, "approve for this session" (keyed by the
 * semantic event, so an approved raw `git push` and an MCP git.push are the
 * same approval) and the policy's timeout all apply.
 *
 * What this cannot close: what the proxy's servers do inside their own
 * sessions is their profiles' business; a proxy that died leaves the agent
 * without tools (its connect is refused), never with unjudged ones.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "audit.h"
#include "jsonrpc.h"
#include "supervisor.h"
#include "util.h"

#define RUN_MCP_DIR "/run/cordon-mcp"
#define CHAN_MAX_LINE (1u << 20)
#define READY_TIMEOUT_MS 10000
#define STOP_TIMEOUT_MS 10000

int mcp_session_listen(struct sup *s)
{
	struct stat st;
	int r;

	if (mkdir(RUN_MCP_DIR, 0711) < 0 && errno != EEXIST) {
		r = -errno;
		log_err("run: --mcp: %s: %s", RUN_MCP_DIR, strerror(-r));
		return r;
	}
	/* Root's own directory, not something planted there. */
	if (lstat(RUN_MCP_DIR, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & 022)) {
		log_err("run: --mcp: %s must be a directory owned by root, writable by root only",
			RUN_MCP_DIR);
		return -EPERM;
	}
	snprintf(s->mcp_path, sizeof(s->mcp_path), RUN_MCP_DIR "/%s.sock", s->name);
	/*
	 * Root's, group the agent's, 0660: the agent can connect but, not
	 * owning it, cannot re-mode it for others (the fallback has no
	 * metadata right to stop an owner's chmod).  Set before any agent runs.
	 */
	r = unix_listen(s->mcp_path, 0);
	if (r >= 0 && (chown(s->mcp_path, 0, s->gid) < 0 || chmod(s->mcp_path, 0660) < 0)) {
		int e = -errno;

		close(r);
		r = e;
	}
	if (r < 0) {
		log_err("run: --mcp: %s: %s", s->mcp_path, strerror(-r));
		(void)unlink(s->mcp_path);
		s->mcp_path[0] = '\0';
		return r;
	}
	s->mcp_listen = r;
	r = pol_grant_path(s->pol, "mcp-socket", s->mcp_path, CORDON_FS_WRITE);
	if (r < 0) {
		log_err("run: --mcp: cannot grant the agent its MCP socket: %s", strerror(-r));
		return r;
	}
	return 0;
}

static void chan_close(struct sup *s)
{
	if (s->mcp_chan >= 0)
		close(s->mcp_chan);
	s->mcp_chan = -1;
	if (s->mcp_in) {
		linebuf_free(s->mcp_in);
		free(s->mcp_in);
		s->mcp_in = NULL;
	}
}

static int chan_line(struct sup *s, int timeout_ms, json_t **msg);

int mcp_session_start(struct sup *s)
{
	char self[PATH_MAX], lfd[16], cfd[16];
	const char *argv[48 + 2 * RUN_MAX_ENV];
	int sp[2], n = 0;
	ssize_t len;
	json_t *ready = NULL;
	int r;

	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len < 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0) {
		r = -errno;
		log_err("run: --mcp: %s: %s", len < 0 ? "/proc/self/exe" : "socketpair", strerror(-r));
		return r;
	}
	self[len] = '\0';
	snprintf(lfd, sizeof(lfd), "%d", 3);
	snprintf(cfd, sizeof(cfd), "%d", 4);
	argv[n++] = self;
	argv[n++] = "mcp-proxy";
	argv[n++] = "--servers";
	argv[n++] = s->opt->mcp;
	argv[n++] = "--policy";
	argv[n++] = s->opt->policy;
	argv[n++] = "--workspace";
	argv[n++] = s->workspace;
	argv[n++] = "--user";
	argv[n++] = s->user;
	argv[n++] = "--listen-fd";
	argv[n++] = lfd;
	argv[n++] = "--channel-fd";
	argv[n++] = cfd;
	argv[n++] = "--session";
	argv[n++] = s->name;
	argv[n++] = "--audit";
	argv[n++] = s->audit_path;
	for (int i = 0; i < s->opt->n_vars; i++) {
		argv[n++] = "--var";
		argv[n++] = s->opt->vars[i];
	}
	argv[n] = NULL;
	{
		int fds[2] = { s->mcp_listen, sp[1] };

		s->mcp_pid = spawn_helper(self, argv, fds, 2);
	}
	close(sp[1]);
	if (s->mcp_pid < 0) {
		r = s->mcp_pid;
		s->mcp_pid = 0;
		close(sp[0]);
		log_err("run: --mcp: cannot start the MCP proxy: %s", strerror(-r));
		return r;
	}
	s->mcp_chan = sp[0];
	s->mcp_in = calloc(1, sizeof(struct linebuf));
	if (!s->mcp_in)
		return -ENOMEM;
	linebuf_init(s->mcp_in, CHAN_MAX_LINE);
	(void)fcntl(s->mcp_chan, F_SETFL, O_NONBLOCK);
	/* The proxy said why on stderr if it refused its configuration. */
	r = chan_line(s, READY_TIMEOUT_MS, &ready);
	if (r <= 0 || strcmp(json_string_value(json_object_get(ready, "op")) ?: "", "ready")) {
		json_decref(ready);
		log_err("run: --mcp %s: the MCP proxy did not start%s", s->opt->mcp,
			r == 0 ? " in time" : "");
		return -EINVAL;
	}
	json_decref(ready);
	/* Only the proxy holds it now: if the proxy dies, connects fail at once. */
	close(s->mcp_listen);
	s->mcp_listen = -1;
	return 0;
}

/*
 * The next line of the channel as JSON, waiting up to timeout_ms (0: what
 * is already there).  1: a message; 0: none (yet); -EPIPE: the proxy is
 * gone (or sent what no proxy sends).
 */
static int chan_line(struct sup *s, int timeout_ms, json_t **msg)
{
	uint64_t end = sup_now_ms() + (uint64_t)timeout_ms;

	*msg = NULL;
	for (;;) {
		char buf[65536], *line;
		size_t llen;
		ssize_t n;
		int r;

		if (s->mcp_chan < 0)
			return -EPIPE;
		r = linebuf_next(s->mcp_in, &line, &llen);
		if (r < 0)
			return -EPIPE;
		if (r > 0) {
			*msg = json_loadb(line, llen, 0, NULL);
			return *msg ? 1 : -EPIPE;
		}
		n = read(s->mcp_chan, buf, sizeof(buf));
		if (n > 0) {
			if (linebuf_push(s->mcp_in, buf, (size_t)n) < 0)
				return -EPIPE;
			continue;
		}
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			return -EPIPE;
		{
			uint64_t now = sup_now_ms();
			struct pollfd p = { .fd = s->mcp_chan, .events = POLLIN };

			if (now >= end)
				return 0;
			(void)poll(&p, 1, (int)(end - now));
		}
	}
}

/* The rule's description from the session's own policy (the proxy's is the same file). */
static const char *rule_risk(const struct sup *s, const char *rule, const char *reason)
{
	for (size_t i = 0; rule && i < s->pol->n_rules; i++)
		if (s->pol->rules[i].name && !strcmp(s->pol->rules[i].name, rule) &&
		    s->pol->rules[i].description)
			return s->pol->rules[i].description;
	return reason && *reason ? reason : "the policy asks a human for this";
}

static void on_escalate(struct sup *s, json_t *msg)
{
	json_t *hold = json_object_get(msg, "hold"), *event = json_object_get(msg, "event");
	const char *summary = json_string_value(json_object_get(msg, "summary"));
	const char *rule = json_string_value(json_object_get(msg, "rule"));
	const char *reason = json_string_value(json_object_get(msg, "reason"));
	struct held h = { .nr = HELD_MCP, .pid = s->mcp_pid };

	if (!json_is_integer(hold) || !json_is_object(event) || !summary)
		return;
	h.notif = (uint64_t)json_integer_value(hold);
	if (rule && !*rule)
		rule = NULL;
	if (sup_session_approved(s, event)) {
		sup_record(s, s->mcp_pid, "tools/call", NULL, event, "allow", rule,
			   "approved for this session", NULL);
		mcp_session_decide(s, h.notif, true, "approved for this session", NULL);
		return;
	}
	if (sup_hold(s, &h, event, summary, rule, rule_risk(s, rule, reason)) < 0)
		mcp_session_decide(s, h.notif, false, "cordon could not hold the call", NULL);
}

static void on_message(struct sup *s, json_t *msg)
{
	const char *op = json_string_value(json_object_get(msg, "op"));
	const char *type = json_string_value(json_object_get(msg, "type"));
	json_t *fields = json_object_get(msg, "fields");

	if (!op)
		return;
	if (!strcmp(op, "record")) {
		/* Only the proxy's own record types: it cannot forge lifecycle or seal records. */
		if (!type || (strcmp(type, "decision") && strcmp(type, "mcp")) || !json_is_object(fields))
			return;
		pthread_mutex_lock(&s->lock);
		(void)audit_write(s->audit, type, fields);
		pthread_mutex_unlock(&s->lock);
	} else if (!strcmp(op, "escalate")) {
		on_escalate(s, msg);
	} else if (!strcmp(op, "withdraw")) {
		json_t *hold = json_object_get(msg, "hold");

		if (json_is_integer(hold))
			approve_withdraw(s, HELD_MCP, (uint64_t)json_integer_value(hold));
	}
}

/* The proxy ended: nothing of it can be decided any more. */
static void proxy_gone(struct sup *s)
{
	json_t *ev = json_pack("{s:s,s:i}", "event", "mcp-proxy-exited", "pid", (int)s->mcp_pid);

	chan_close(s);
	approve_withdraw_all(s, HELD_MCP);
	pthread_mutex_lock(&s->lock);
	(void)audit_write(s->audit, "lifecycle", ev);
	pthread_mutex_unlock(&s->lock);
	json_decref(ev);
}

void mcp_session_input(struct sup *s)
{
	json_t *msg;
	int r;

	/* Bounded per call: a busy proxy cannot starve the notifications. */
	for (int i = 0; i < 256; i++) {
		r = chan_line(s, 0, &msg);
		if (r < 0) {
			proxy_gone(s);
			return;
		}
		if (r == 0)
			return;
		on_message(s, msg);
		json_decref(msg);
	}
}

void mcp_session_decide(struct sup *s, uint64_t hold, bool allow, const char *why,
			const char *approver)
{
	json_t *m = json_pack("{s:s,s:I,s:b,s:s,s:s?}", "op", "decision", "hold", (json_int_t)hold,
			      "allow", allow, "why", why, "approver", approver);
	size_t len = 0;
	char *line = m ? jrpc_dump(m, &len) : NULL;

	json_decref(m);
	if (s->mcp_chan < 0 || !line) {
		free(line);
		return;
	}
	/*
	 * A few hundred bytes into a socket the proxy drains every round: a
	 * full buffer means the proxy is stuck, and a stuck proxy is stopped
	 * (its held calls then fail; none is forwarded unjudged).
	 */
	if (send(s->mcp_chan, line, len, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)len) {
		log_err("run: the MCP proxy stopped reading its channel: stopped");
		(void)kill(s->mcp_pid, SIGKILL);
		proxy_gone(s);
	}
	free(line);
}

void mcp_session_stop(struct sup *s)
{
	uint64_t end = sup_now_ms() + STOP_TIMEOUT_MS;
	int status;

	if (s->mcp_pid > 0) {
		/* SIGTERM: it stops its servers (their supervisors seal their logs). */
		(void)kill(s->mcp_pid, SIGTERM);
		/* Its last records, until it closes the channel. */
		while (s->mcp_chan >= 0 && sup_now_ms() < end) {
			json_t *msg;
			int r = chan_line(s, (int)(end - sup_now_ms()), &msg);

			if (r < 0)
				break;
			/* Records only: the session's approvals are over. */
			if (r > 0 && !strcmp(json_string_value(json_object_get(msg, "op")) ?: "", "record"))
				on_message(s, msg);
			json_decref(msg);
		}
		while (waitpid(s->mcp_pid, &status, WNOHANG) == 0) {
			if (sup_now_ms() >= end) {
				(void)kill(s->mcp_pid, SIGKILL);
				(void)waitpid(s->mcp_pid, &status, 0);
				break;
			}
			usleep(20000);
		}
		s->mcp_pid = 0;
	}
	chan_close(s);
	if (s->mcp_listen >= 0)
		close(s->mcp_listen);
	s->mcp_listen = -1;
	if (s->mcp_path[0])
		(void)unlink(s->mcp_path);
}
