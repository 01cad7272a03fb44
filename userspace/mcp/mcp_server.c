// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The MCP proxy's server side (mcp_server.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jsonrpc.h"
#include "mcp_server.h"
#include "mcp_state.h"
#include "util.h"

/*
 * Start a server in a session of its own: `cordon run` with the entry's
 * profile, its first root as the workspace, approvals denied (a server has
 * no human), the proxy's user.  Its stdio are the proxy's pipes; it is
 * stopped through its --stop-fd (mcp_state_srv_kill closes our end: the
 * proxy may no longer signal that root process once it has given root up,
 * mcp_proxy.c) and it dies with the proxy (PDEATHSIG on the session's
 * supervisor, which takes its session down with it).
 */
int mcp_server_start(struct proxy *p, struct srv *s)
{
	int in[2], out[2], stop[2];
	char **argv;
	size_t n = 0, na = 0;
	char audit[PATH_MAX + 80];

	while (s->argv[na])
		na++;
	for (size_t i = 0; s->env && s->env[i]; i++)
		n++;
	argv = calloc(18 + 2 * n + na + 1, sizeof(char *));
	if (!argv)
		return -ENOMEM;
	n = 0;
	argv[n++] = p->self;
	argv[n++] = "run";
	argv[n++] = "-q";
	argv[n++] = "--approve";
	argv[n++] = "deny";
	argv[n++] = "--user";
	argv[n++] = (char *)p->user;
	argv[n++] = strchr(s->policy, '/') ? "--policy" : "--profile";
	argv[n++] = s->policy;
	argv[n++] = "--workspace";
	argv[n++] = s->roots[0];
	if (p->audit_path[0]) {
		snprintf(audit, sizeof(audit), "%.*s.%s.jsonl",
			 (int)(strlen(p->audit_path) - (strstr(p->audit_path, ".jsonl") ? 6 : 0)),
			 p->audit_path, s->name);
		argv[n++] = "--audit";
		argv[n++] = audit;
	}
	for (size_t i = 0; s->env && s->env[i]; i++) {
		argv[n++] = "--env";
		argv[n++] = s->env[i];
	}
	argv[n++] = "--stop-fd";
	argv[n++] = "3";
	argv[n++] = "--";
	for (size_t i = 0; i < na; i++)
		argv[n++] = s->argv[i];
	argv[n] = NULL;
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(stop, O_CLOEXEC) < 0) {
		free(argv);
		return -errno;
	}
	s->pid = fork();
	if (s->pid == 0) {
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
		/* dup2 onto itself keeps close-on-exec: the flag is cleared by hand there. */
		if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0 ||
		    (stop[0] == 3 ? fcntl(3, F_SETFD, 0) : dup2(stop[0], 3)) < 0)
			_exit(125);
		execv(p->self, argv);
		_exit(125);
	}
	free(argv);
	close(in[0]);
	close(out[1]);
	close(stop[0]);
	if (s->pid < 0) {
		close(in[1]);
		close(out[0]);
		close(stop[1]);
		return -errno;
	}
	s->wfd = in[1];
	s->rfd = out[0];
	s->stop_fd = stop[1];
	(void)mcp_state_set_nonblock(s->wfd);
	(void)mcp_state_set_nonblock(s->rfd);
	linebuf_init(&s->in, SERVER_MAX_MSG);
	return 0;
}

void mcp_server_initialize(struct proxy *p, struct srv *s)
{
	struct call *k = mcp_state_call_new(p, CALL_INIT, s);

	if (!k) {
		mcp_state_srv_kill(p, s, "out of memory");
		return;
	}
	/*
	 * The proxy is the server's client.  It offers roots (the entry's,
	 * answered by the proxy) and nothing else: no sampling, no
	 * elicitation, which a server could use to reach the agent's model
	 * or its human around the policy.
	 */
	mcp_state_srv_send(p, s, mcp_state_request(k->did, "initialize",
						   json_pack("{s:s,s:{s:{s:b}},s:{s:s,s:s}}", "protocolVersion", mcp_state_versions[0],
							     "capabilities", "roots", "listChanged", 0, "clientInfo",
							     "name", "cordon-mcp-proxy", "version", PROXY_VERSION)));
}

static void srv_list(struct proxy *p, struct srv *s, json_t *cursor)
{
	struct call *k = mcp_state_call_new(p, CALL_LIST, s);
	json_t *params = json_object();

	if (!k) {
		mcp_state_srv_kill(p, s, "out of memory");
		return;
	}
	if (cursor)
		json_object_set(params, "cursor", cursor);
	mcp_state_srv_send(p, s, mcp_state_request(k->did, "tools/list", params));
}

static void broadcast(struct proxy *p, json_t *msg)
{
	for (struct client *c = p->clients; c; c = c->next)
		if (c->initialized)
			mcp_state_client_send(p, c, json_incref(msg));
	json_decref(msg);
}

/* A response from the server to a request the proxy made for itself. */
static void srv_own_response(struct proxy *p, struct call *k, json_t *msg)
{
	struct srv *s = k->s;
	json_t *res = json_object_get(msg, "result");
	char why[256];

	if (!res) {
		snprintf(why, sizeof(why), "%s failed: %s", k->kind == CALL_INIT ? "initialize" : "tools/list",
			 json_string_value(json_object_get(json_object_get(msg, "error"), "message")) ?: "?");
		mcp_state_call_free(p, k);
		mcp_state_srv_kill(p, s, why);
		return;
	}
	if (k->kind == CALL_INIT) {
		const char *v = json_string_value(json_object_get(res, "protocolVersion"));

		mcp_state_call_free(p, k);
		if (!v || !mcp_state_version_known(v)) {
			snprintf(why, sizeof(why), "it speaks MCP revision \"%s\", which the proxy does not",
				 v ? v : "(none)");
			mcp_state_srv_kill(p, s, why);
			return;
		}
		mcp_state_srv_send(p, s, json_pack("{s:s,s:s}", "jsonrpc", "2.0", "method",
						   "notifications/initialized"));
		s->state = SRV_LISTING;
		json_decref(s->acc);
		s->acc = json_array();
		srv_list(p, s, NULL);
		return;
	}
	/* CALL_LIST: gather the pages, then publish. */
	{
		json_t *tools = json_object_get(res, "tools"), *t, *cursor;
		size_t i;

		if (!json_is_array(tools)) {
			mcp_state_call_free(p, k);
			mcp_state_srv_kill(p, s, "tools/list returned no \"tools\" array");
			return;
		}
		json_array_foreach(tools, i, t)
			if (json_is_object(t) && json_is_string(json_object_get(t, "name")))
				json_array_append(s->acc, t);
		cursor = json_object_get(res, "nextCursor");
		mcp_state_call_free(p, k);
		if (json_is_string(cursor) && json_array_size(s->acc) < 4096) {
			srv_list(p, s, cursor);
			return;
		}
		json_decref(s->tools);
		s->tools = TAKE_PTR(s->acc);
		if (s->state == SRV_READY)
			broadcast(p, json_pack("{s:s,s:s}", "jsonrpc", "2.0", "method",
					       "notifications/tools/list_changed"));
		else
			p->n_ready_ever++;
		s->state = SRV_READY;
		mcp_state_record(p, "mcp", json_pack("{s:s,s:s,s:I}", "what", "server ready", "server", s->name,
						     "tools", (json_int_t)json_array_size(s->tools)));
	}
}

static struct call *find_call(struct proxy *p, struct srv *s, json_t *id)
{
	if (!json_is_integer(id))
		return NULL;
	/* A held call has not been sent: nothing can answer it yet. */
	for (struct call *k = p->calls; k; k = k->next)
		if (k->s == s && k->kind != CALL_HELD && k->did == (uint64_t)json_integer_value(id))
			return k;
	return NULL;
}

static void tool_response(struct proxy *p, struct call *k, json_t *msg)
{
	size_t hits = 0;
	json_t *res = json_object_get(msg, "result"), *err = json_object_get(msg, "error");
	json_t *clean = scrub_json(&p->scrub, res ? res : err, &hits);
	double ms = (double)(mcp_state_now_us() - k->t0_us) / 1000.0;

	if (!clean) {
		mcp_state_client_error(p, k->c, k->cid, JRPC_INTERNAL_ERROR, "out of memory");
	} else if (res) {
		mcp_state_client_send(p, k->c, jrpc_result(k->cid, clean));
	} else {
		mcp_state_client_send(p, k->c, json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", k->cid,
							 "error", clean));
	}
	mcp_state_record(p, "mcp", json_pack("{s:s,s:i,s:O,s:b,s:b,s:I,s:f}", "what", "result",
					     "client", k->c->n, "event", k->event, "error", err != NULL,
					     "isError", json_is_true(json_object_get(res, "isError")),
					     "scrubbed", (json_int_t)hits, "ms", ms));
	mcp_state_call_free(p, k);
}

/* Requests a server makes of its client: the proxy answers them itself. */
static void srv_request(struct proxy *p, struct srv *s, json_t *msg)
{
	const char *m = json_string_value(json_object_get(msg, "method"));
	json_t *id = json_object_get(msg, "id");

	if (!strcmp(m, "ping")) {
		mcp_state_srv_send(p, s, jrpc_result(id, json_object()));
	} else if (!strcmp(m, "roots/list")) {
		json_t *roots = json_array();

		for (size_t i = 0; s->roots[i]; i++) {
			char uri[PATH_MAX + 8];

			snprintf(uri, sizeof(uri), "file://%s", s->roots[i]);
			json_array_append_new(roots, json_pack("{s:s}", "uri", uri));
		}
		mcp_state_srv_send(p, s, jrpc_result(id, json_pack("{s:o}", "roots", roots)));
	} else {
		mcp_state_srv_send(p, s, jrpc_error(id, JRPC_METHOD_NOT_FOUND,
						    "the proxy offers its servers roots and ping only", NULL));
	}
}

static void srv_notification(struct proxy *p, struct srv *s, json_t *msg)
{
	const char *m = json_string_value(json_object_get(msg, "method"));
	json_t *params = json_object_get(msg, "params");

	if (!strcmp(m, "notifications/progress")) {
		/* Ours is "cordon-<did>": back to the client's own token. */
		const char *t = json_string_value(json_object_get(params, "progressToken"));
		char *end;
		unsigned long long did;

		if (!t || strncmp(t, "cordon-", 7))
			return;
		did = strtoull(t + 7, &end, 10);
		for (struct call *k = p->calls; k; k = k->next) {
			if (k->s != s || k->did != did || *end || !k->token || k->kind != CALL_TOOL)
				continue;
			{
				size_t hits = 0;
				json_t *np = scrub_json(&p->scrub, params, &hits);

				if (!np)
					return;
				json_object_set(np, "progressToken", k->token);
				mcp_state_client_send(p, k->c, json_pack("{s:s,s:s,s:o}", "jsonrpc", "2.0", "method",
									 "notifications/progress", "params", np));
			}
			return;
		}
	} else if (!strcmp(m, "notifications/tools/list_changed")) {
		if (s->state == SRV_READY) {
			json_decref(s->acc);
			s->acc = json_array();
			srv_list(p, s, NULL);
		}
	}
	/* Logging, resource and other notifications: not offered upstream. */
}

static void srv_line(struct proxy *p, struct srv *s, const char *line, size_t len)
{
	json_t *msg = NULL, *id = NULL;
	char why[256];
	int kind = jrpc_parse(line, len, &msg, &id, why, sizeof(why));
	struct call *k;

	if (kind < 0) {
		/* A server that cannot speak JSON-RPC has no call it can answer. */
		char reason[320];

		snprintf(reason, sizeof(reason), "it sent an invalid message (%s)", why);
		json_decref(id);
		mcp_state_srv_kill(p, s, reason);
		return;
	}
	switch (kind) {
	case JRPC_RESPONSE:
		k = find_call(p, s, json_object_get(msg, "id"));
		if (!k)
			break;  /* late (timed out, cancelled) or unknown: dropped */
		if (k->kind == CALL_TOOL)
			tool_response(p, k, msg);
		else
			srv_own_response(p, k, msg);
		break;
	case JRPC_REQUEST:
		srv_request(p, s, msg);
		break;
	case JRPC_NOTIFICATION:
		srv_notification(p, s, msg);
		break;
	default:
		break;
	}
	json_decref(msg);
	json_decref(id);
}

void mcp_server_readable(struct proxy *p, struct srv *s)
{
	int r = mcp_state_pull(s->rfd, &s->in);
	char *line;
	size_t len;

	if (r == 0)
		return;
	if (r == -ENOMEM) {
		mcp_state_srv_kill(p, s, "out of memory");
		return;
	}
	if (r < 0) {
		char why[128];
		int st = 0;

		close(s->rfd);
		s->rfd = -1;
		if (s->pid > 0 && waitpid(s->pid, &st, 0) == s->pid) {
			s->pid = -1;
			if (WIFEXITED(st))
				snprintf(why, sizeof(why), "the server exited (status %d)", WEXITSTATUS(st));
			else
				snprintf(why, sizeof(why), "the server was killed (signal %d)",
					 WIFSIGNALED(st) ? WTERMSIG(st) : 0);
		} else {
			snprintf(why, sizeof(why), "the server closed its output");
		}
		mcp_state_srv_kill(p, s, why);
		return;
	}
	while (s->state != SRV_DEAD && (r = linebuf_next(&s->in, &line, &len)) != 0) {
		if (r < 0) {
			mcp_state_srv_kill(p, s, "it sent a message over 32 MiB");
			return;
		}
		if (len)
			srv_line(p, s, line, len);
	}
}
