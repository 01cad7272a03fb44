// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The MCP proxy's client side (mcp_client.h). */
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

#include "audit.h"
#include "jsonrpc.h"
#include "judge.h"
#include "instance.h"
#include "mcp_client.h"
#include "proto.h"
#include "mcp_state.h"
#include "policy.h"
#include "steps.h"
#include "util.h"

static struct srv *srv_by_name(struct proxy *p, const char *name, size_t len)
{
	for (size_t i = 0; i < p->n_srv; i++)
		if (strlen(p->srv[i].name) == len && !strncmp(p->srv[i].name, name, len))
			return &p->srv[i];
	return NULL;
}

static json_t *srv_tool(struct srv *s, const char *tool)
{
	size_t i;
	json_t *t;

	json_array_foreach(s->tools, i, t)
		if (!strcmp(json_string_value(json_object_get(t, "name")), tool))
			return t;
	return NULL;
}

static void on_initialize(struct proxy *p, struct client *c, json_t *id, json_t *params)
{
	const char *want = json_string_value(json_object_get(params, "protocolVersion"));
	const char *v = mcp_state_versions[0];

	if (!want) {
		mcp_state_client_error(p, c, id, JRPC_INVALID_PARAMS,
				       "initialize: \"protocolVersion\" must be a string");
		return;
	}
	if (mcp_state_version_known(want))
		v = want;
	snprintf(c->proto, sizeof(c->proto), "%s", v);
	c->initialized = true;
	/*
	 * Honest capabilities: tools (whose list may change when a server's
	 * does), nothing else.  Resources, prompts, logging and completion
	 * are not proxied, so they are not offered.
	 */
	mcp_state_client_send(p, c, jrpc_result(id, json_pack(
		"{s:s,s:{s:{s:b}},s:{s:s,s:s},s:s}", "protocolVersion", v, "capabilities", "tools",
		"listChanged", 1, "serverInfo", "name", "cordon-mcp-proxy", "version", PROXY_VERSION,
		"instructions", "Tools of several MCP servers, named SERVER.TOOL. cordon judges every "
		"call by policy: a refused call fails with a JSON-RPC error saying which rule.")));
	mcp_state_record(p, "mcp", json_pack("{s:s,s:i,s:s,s:o?}", "what", "client initialized",
					     "client", c->n, "protocolVersion", v, "clientInfo",
					     json_object_get(params, "clientInfo") ?
					     pol_json_kept(json_object_get(params, "clientInfo")) : NULL));
}

/*
 * tools/list with every server dead: an error naming each and why.  It
 * answered `tools: []`, which a client takes for a server with no tools,
 * and the human never learnt that nothing had started.
 */
static bool all_dead(struct proxy *p, struct client *c, json_t *id)
{
	char why[1024];
	size_t o = 0;

	for (size_t i = 0; i < p->n_srv; i++)
		if (p->srv[i].state != SRV_DEAD)
			return false;
	if (!p->n_srv)
		return false;
	for (size_t i = 0; i < p->n_srv && o < sizeof(why); i++)
		o += (size_t)snprintf(why + o, sizeof(why) - o, "%s%s: %s", i ? "; " : "",
				      p->srv[i].name, p->srv[i].dead);
	mcp_state_client_error(p, c, id, JRPC_INTERNAL_ERROR, "no MCP server is running (%s)", why);
	return true;
}

static void on_tools_list(struct proxy *p, struct client *c, json_t *id)
{
	json_t *all;

	if (all_dead(p, c, id))
		return;
	all = json_array();

	for (size_t i = 0; i < p->n_srv; i++) {
		struct srv *s = &p->srv[i];
		size_t j;
		json_t *t;

		if (s->state != SRV_READY)
			continue;
		json_array_foreach(s->tools, j, t) {
			json_t *copy = json_copy(t);
			char name[256];

			snprintf(name, sizeof(name), "%s.%s", s->name,
				 json_string_value(json_object_get(t, "name")));
			json_object_set_new(copy, "name", json_string(name));
			json_array_append_new(all, copy);
		}
	}
	mcp_state_client_send(p, c, jrpc_result(id, json_pack("{s:o}", "tools", all)));
}

static void forward(struct proxy *p, struct call *k);

static void on_tools_call(struct proxy *p, struct client *c, json_t *id, json_t *params)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	json_t *args = json_object_get(params, "arguments");
	json_t *meta = json_object_get(params, "_meta");
	const char *dot;
	struct srv *s;
	struct pol_request rq = { .op = POL_OP_TOOL };
	static const struct judge_words words = { "forwarded", "held for the session's approver" };
	struct judgement jd;
	struct pol_result res;
	json_t *event, *kept;
	struct call *k;
	char tool[256];

	if (!name) {
		mcp_state_client_error(p, c, id, JRPC_INVALID_PARAMS, "tools/call: \"name\" must be a string");
		return;
	}
	if (args && !json_is_object(args)) {
		mcp_state_client_error(p, c, id, JRPC_INVALID_PARAMS,
				       "tools/call: \"arguments\" must be an object");
		return;
	}
	if (meta && !json_is_object(meta)) {
		mcp_state_client_error(p, c, id, JRPC_INVALID_PARAMS, "tools/call: \"_meta\" must be an object");
		return;
	}
	dot = strchr(name, '.');
	s = dot ? srv_by_name(p, name, (size_t)(dot - name)) : NULL;
	if (!s || strlen(dot + 1) >= sizeof(tool)) {
		mcp_state_client_error(p, c, id, JRPC_INVALID_PARAMS, "unknown tool \"%s\" (tools are named "
				       "SERVER.TOOL; see tools/list)", name);
		return;
	}
	snprintf(tool, sizeof(tool), "%s", dot + 1);
	if (s->state != SRV_READY) {
		mcp_state_client_error(p, c, id, JRPC_INTERNAL_ERROR, "MCP server \"%s\" is not running: %s",
				       s->name, s->dead[0] ? s->dead : "starting");
		return;
	}
	if (!srv_tool(s, tool)) {
		mcp_state_client_error(p, c, id, JRPC_INVALID_PARAMS, "unknown tool \"%s\": server \"%s\" has "
				       "no tool \"%s\"", name, s->name, tool);
		return;
	}
	if (p->audit && audit_down(p->audit, NULL)) {
		mcp_state_client_error(p, c, id, JRPC_INTERNAL_ERROR, "cordon: the audit log cannot keep its "
				       "records: nothing is forwarded");
		return;
	}
	args = args ? json_incref(args) : json_object();
	event = pol_event_tool(s->name, tool, args);
	rq.server = s->name;
	rq.tool = tool;
	rq.args = args;
	rq.roots = (const char *const *)s->roots;
	/* The helpers' one judge (channel/judge.h): counted as a step, held or refused alike. */
	judge_op(&p->steps, p->pol, &rq, p->chan_fd >= 0, &words, &jd);
	res = jd.res;
	/* The records keep a digest of large arguments (pol_event_kept); the server gets them whole. */
	kept = pol_event_kept(event);
	if (!kept) {
		mcp_state_client_error(p, c, id, JRPC_INTERNAL_ERROR, "out of memory");
		json_decref(event);
		json_decref(args);
		return;
	}
	{
		const char *rule = jd.rule, *dec = jd.decision;
		bool hold = jd.verdict == JUDGE_HOLD;

		mcp_state_record(p, "decision", json_pack("{s:s,s:i,s:O,s:s,s:s?,s:s,s:s}", "raw",
							 "tools/call", "client", c->n, "event", kept,
							 "decision", dec, "rule", rule, "reason",
							 res.reason, "outcome", jd.outcome));
		if (jd.verdict == JUDGE_DENY) {
			/*
			 * Escalation needs a human: the standalone proxy has
			 * none, so it fails closed (under `cordon run --mcp`
			 * the session's approval channel is the human).
			 */
			mcp_state_client_send(p, c, jrpc_error(id, JRPC_DENIED,
				res.decision == CORDON_ESCALATE ?
				"cordon: this call needs a human's approval and this proxy has no "
				"approval channel: denied" : "cordon: denied by policy",
				json_pack("{s:s,s:s?,s:s}", "decision", dec, "rule", rule,
					  "reason", res.reason)));
			json_decref(event);
			json_decref(kept);
			json_decref(args);
			return;
		}
		if (hold) {
			/*
			 * The call waits here, not in the server: nothing is
			 * sent downstream before the human says yes.  The
			 * supervisor shows it with `cordon pending` and the
			 * terminal prompt, batches it with identical requests
			 * (a raw `git push` and an MCP git.push alike), and
			 * applies the policy's approval timeout.
			 */
			char summary[600];

			k = mcp_state_call_new(p, CALL_HELD, s);
			if (!k) {
				mcp_state_client_error(p, c, id, JRPC_INTERNAL_ERROR, "out of memory");
				json_decref(event);
				json_decref(kept);
				json_decref(args);
				return;
			}
			k->deadline_ms = UINT64_MAX;    /* the supervisor's timeout decides */
			k->hold = ++p->next_hold;
			k->c = c;
			k->cid = json_incref(id);
			k->event = kept;
			k->fwd = json_pack("{s:s,s:o}", "name", tool, "arguments", args);
			if (meta && json_object_get(meta, "progressToken"))
				k->token = json_incref(json_object_get(meta, "progressToken"));
			snprintf(k->rule, sizeof(k->rule), "%s", rule ? rule : "");
			snprintf(summary, sizeof(summary), "MCP tool %s on server %s", tool, s->name);
			mcp_state_chan_send(p, proto_escalate(k->hold, event, summary, k->rule, res.reason));
			json_decref(event);
			return;
		}
	}
	json_decref(event);
	k = mcp_state_call_new(p, CALL_TOOL, s);
	if (!k) {
		mcp_state_client_error(p, c, id, JRPC_INTERNAL_ERROR, "out of memory");
		json_decref(kept);
		json_decref(args);
		return;
	}
	k->c = c;
	k->cid = json_incref(id);
	k->event = kept;
	k->fwd = json_pack("{s:s,s:o}", "name", tool, "arguments", args);
	if (meta && json_object_get(meta, "progressToken"))
		k->token = json_incref(json_object_get(meta, "progressToken"));
	forward(p, k);
}

/* Send an allowed (or approved) call to its server. */
static void forward(struct proxy *p, struct call *k)
{
	json_t *fwd = k->fwd;

	k->fwd = NULL;
	if (k->token) {
		char tok[48];

		snprintf(tok, sizeof(tok), "cordon-%llu", (unsigned long long)k->did);
		json_object_set_new(fwd, "_meta", json_pack("{s:s}", "progressToken", tok));
	}
	mcp_state_srv_send(p, k->s, mcp_state_request(k->did, "tools/call", fwd));
}

/* The supervisor's answer for a held call. */
static void on_decision(struct proxy *p, const struct proto_msg *m)
{
	uint64_t hold = m->hold;
	bool allow = m->allow;
	const char *why = m->why && *m->why ? m->why : "decided";
	const char *approver = m->approver;
	struct call *k;

	for (k = p->calls; k; k = k->next)
		if (k->kind == CALL_HELD && k->hold == hold)
			break;
	if (!k)
		return;                 /* withdrawn meanwhile (cancelled, client gone) */
	if (!allow) {
		mcp_state_client_send(p, k->c, jrpc_error(k->cid, JRPC_DENIED, "cordon: the session's approver "
			"did not allow this call", json_pack("{s:s,s:s,s:s,s:s?}", "decision", "deny",
			"rule", k->rule, "reason", why, "approver", approver)));
		mcp_state_call_free(p, k);
		return;
	}
	if (k->s->state != SRV_READY) {
		mcp_state_client_error(p, k->c, k->cid, JRPC_INTERNAL_ERROR, "MCP server \"%s\" is not "
				       "running: %s", k->s->name, k->s->dead[0] ? k->s->dead : "starting");
		mcp_state_call_free(p, k);
		return;
	}
	k->kind = CALL_TOOL;
	k->t0_us = mcp_state_now_us();
	k->deadline_ms = mono_ms() + (uint64_t)k->s->timeout_s * 1000;
	forward(p, k);
}

static void on_cancelled(struct proxy *p, struct client *c, json_t *params)
{
	json_t *rid = json_object_get(params, "requestId");

	for (struct call *k = p->calls; k; k = k->next) {
		if ((k->kind != CALL_TOOL && k->kind != CALL_HELD) || k->c != c ||
		    !json_equal(k->cid, rid))
			continue;
		if (k->kind == CALL_HELD)
			mcp_state_withdraw(p, k, "cancelled by the client");
		else
			mcp_state_cancel_down(p, k, "cancelled by the client");
		mcp_state_record(p, "mcp", json_pack("{s:s,s:i,s:O}", "what", "cancelled", "client", c->n,
						     "event", k->event));
		mcp_state_call_free(p, k);        /* no answer goes back: the client gave up */
		return;
	}
}

static void client_line(struct proxy *p, struct client *c, const char *line, size_t len)
{
	json_t *msg = NULL, *id = NULL, *params;
	char why[256];
	int kind = jrpc_parse(line, len, &msg, &id, why, sizeof(why));
	const char *m;

	if (kind < 0) {
		mcp_state_client_send(p, c, jrpc_error(id, kind, why, NULL));
		json_decref(id);
		return;
	}
	m = json_string_value(json_object_get(msg, "method"));
	params = json_object_get(msg, "params");
	if (kind == JRPC_REQUEST) {
		if (!strcmp(m, "initialize"))
			on_initialize(p, c, id, params);
		else if (!strcmp(m, "ping"))
			mcp_state_client_send(p, c, jrpc_result(id, json_object()));
		else if (!c->initialized)
			mcp_state_client_error(p, c, id, JRPC_INVALID_REQUEST, "%s before initialize", m);
		else if (!strcmp(m, "tools/list"))
			on_tools_list(p, c, id);
		else if (!strcmp(m, "tools/call"))
			on_tools_call(p, c, id, params);
		else
			mcp_state_client_error(p, c, id, JRPC_METHOD_NOT_FOUND, "method \"%s\" is not offered by "
					       "this proxy (tools only)", m);
	} else if (kind == JRPC_NOTIFICATION) {
		if (!strcmp(m, "notifications/cancelled"))
			on_cancelled(p, c, params);
		/* initialized, roots/list_changed, progress: nothing to do */
	}
	/* Responses: the proxy sends the client no requests; dropped. */
	json_decref(msg);
	json_decref(id);
}

void mcp_client_readable(struct proxy *p, struct client *c)
{
	int r = mcp_state_pull(c->rfd, &c->in);
	char *line;
	size_t len;

	if (r == 0)
		return;
	if (r < 0) {
		c->eof = r != -ENOMEM;
		c->gone = r == -ENOMEM;
		return;
	}
	while (!c->gone && (r = linebuf_next(&c->in, &line, &len)) != 0) {
		if (r < 0) {
			mcp_state_client_error(p, c, NULL, JRPC_INVALID_REQUEST, "message over %u bytes: dropped",
					       CLIENT_MAX_MSG);
			continue;
		}
		if (len)
			client_line(p, c, line, len);
	}
}

struct client *mcp_client_add(struct proxy *p, int rfd, int wfd)
{
	struct client *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->rfd = rfd;
	c->wfd = wfd;
	c->n = ++p->n_clients;
	p->live_clients++;
	linebuf_init(&c->in, CLIENT_MAX_MSG);
	(void)mcp_state_set_nonblock(rfd);
	(void)mcp_state_set_nonblock(wfd);
	c->next = p->clients;
	p->clients = c;
	return c;
}

void mcp_client_remove(struct proxy *p, struct client *c)
{
	for (struct call *k = p->calls, *next; k; k = next) {
		next = k->next;
		if (k->kind == CALL_TOOL && k->c == c) {
			mcp_state_cancel_down(p, k, "the client left");
			mcp_state_call_free(p, k);
		} else if (k->kind == CALL_HELD && k->c == c) {
			mcp_state_withdraw(p, k, "the client left");
			mcp_state_call_free(p, k);
		}
	}
	for (struct client **pp = &p->clients; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	if (c->rfd > 2)
		close(c->rfd);
	if (c->wfd > 2 && c->wfd != c->rfd)
		close(c->wfd);
	linebuf_free(&c->in);
	free(c->out.buf);
	free(c);
	p->live_clients--;
}

/*
 * Under `cordon run --mcp`, a peer must be a task of this session; or the
 * session's Unix connector, as the agent's user: in the fallback posture
 * the connector performs the agent's connect (unix_connector.h) from
 * <cgroup2>/cordon-unix/SESSION, a cgroup only root can put a process in;
 * or host root outside every session.  Another session's agent running as
 * the same user (a policy that lets it write the socket directory) is
 * refused here, its connect being made by its own session's connector.
 * The cgroup is read from the peer the kernel captured at connect,
 * race-free where it can be (peer_read: a peer gone before the read is
 * refused, its pid may have been reused); a pid that cannot be read is
 * refused.
 */
static bool cg_is(const char *cg, const char *want)
{
	const char *hit = strstr(cg, want);

	return hit && (hit[strlen(want)] == '/' || hit[strlen(want)] == '\n' || !hit[strlen(want)]);
}

static bool peer_in_session(const struct proxy *p, int fd, struct ucred *cr)
{
	char want[80], *cg = NULL;
	bool ok;

	if (peer_read(fd, cr, &cg) < 0)
		return false;
	snprintf(want, sizeof(want), "/%s-unix/%s", instance_cgroup_parent(), p->session);
	if (cg_is(cg, want)) {
		ok = cr->uid == p->client_uid && cr->uid != 0;
	} else {
		snprintf(want, sizeof(want), "/%s/%s", instance_cgroup_parent(), p->session);
		ok = cg_is(cg, want) || (cr->uid == 0 && !instance_cgroup_in_session(cg));
	}
	free(cg);
	return ok;
}

/*
 * A socket peer must be the session's agent user or root: the socket's
 * mode says so too, this is the second lock.
 */
void mcp_client_accept(struct proxy *p)
{
	int fd = accept4(p->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	struct ucred cr;
	socklen_t l = sizeof(cr);

	if (fd < 0)
		return;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l) < 0 ||
	    (cr.uid != 0 && cr.uid != p->client_uid) ||
	    (p->session[0] && !peer_in_session(p, fd, &cr))) {
		mcp_state_record(p, "mcp", json_pack("{s:s,s:i,s:i}", "what", "client refused", "pid",
						     (int)cr.pid, "uid", (int)cr.uid));
		close(fd);
		return;
	}
	if (!mcp_client_add(p, fd, fd))
		close(fd);
}

/* --- the supervisor's channel ---------------------------------------------------- */

void mcp_client_channel_readable(struct proxy *p)
{
	int r = mcp_state_pull(p->chan_fd, &p->chan_in);
	char *line;
	size_t len;

	if (r < 0) {
		/* The supervisor is gone: so is the session this proxy serves. */
		p->stopping = true;
		return;
	}
	while ((r = linebuf_next(&p->chan_in, &line, &len)) != 0) {
		struct proto_msg m;
		json_t *msg;

		if (r < 0)
			continue;
		msg = json_loadb(line, len, 0, NULL);
		/* Only a well-formed decision decides; anything else is no answer. */
		if (proto_read(msg, &m) == 0 && m.op == PROTO_DECISION)
			on_decision(p, &m);
		json_decref(msg);
	}
}
