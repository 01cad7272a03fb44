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
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
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
#include "jsonpos.h"
#include "jsonrpc.h"
#include "mcp_proxy.h"
#include "policy.h"
#include "scrub.h"
#include "session_policy.h"
#include "steps.h"
#include "util.h"

#define PROXY_VERSION "0.1.0"
#define MAX_SERVERS 32
#define CLIENT_MAX_MSG (4u << 20)       /* a request from the agent */
#define SERVER_MAX_MSG (32u << 20)      /* a result (file contents) */
#define QUEUE_MAX (64u << 20)           /* unsent bytes to one peer */
#define CLIENTS_QUEUE_MAX (256u << 20)  /* unsent bytes to all clients */
#define MAX_CLIENTS 64                  /* connected at once */
#define READ_CHUNK 65536                /* per descriptor per round: fairness */
#define INIT_TIMEOUT_MS 60000
#define DEFAULT_CALL_TIMEOUT_S 120

/*
 * Protocol revisions, newest first.  A client asking for one of these gets
 * it; any other gets the newest (the client then decides).  Downstream, the
 * proxy asks for the newest and accepts any of these.
 */
static const char *const versions[] = {
	"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2024-10-07", NULL,
};

struct outq {
	char *buf;
	size_t len, off, cap;
};

enum srv_state { SRV_STARTING = 0, SRV_LISTING, SRV_READY, SRV_DEAD };

struct srv {
	char name[64];
	char **argv;                    /* the server's command */
	char policy[PATH_MAX];          /* profile name or policy file */
	char **roots;                   /* canonical; NULL-terminated */
	char **env;                     /* names passed through; NULL-terminated */
	uint32_t timeout_s;
	pid_t pid;
	int wfd, rfd;
	struct linebuf in;
	struct outq out;
	enum srv_state state;
	json_t *tools;                  /* the server's tools, its own names */
	json_t *acc;                    /* tools/list pages being gathered */
	char dead[256];
	uint64_t next_id;
	bool overflow;                  /* its input queue is full: to be stopped */
};

struct client {
	struct client *next;
	int rfd, wfd;
	unsigned n;                     /* for the audit log */
	struct linebuf in;
	struct outq out;
	bool initialized, eof, gone;
	char proto[16];
};

/*
 * CALL_HELD: a tools/call the policy escalated, waiting for the session's
 * human (cordon run --mcp): nothing has reached the server yet.
 */
enum call_kind { CALL_TOOL = 0, CALL_INIT, CALL_LIST, CALL_HELD };

/* A request the proxy sent downstream and waits for. */
struct call {
	struct call *next;
	enum call_kind kind;
	struct srv *s;
	uint64_t did;                   /* its id toward the server */
	struct client *c;               /* CALL_TOOL: who asked */
	json_t *cid;                    /* CALL_TOOL: the client's id */
	json_t *token;                  /* the client's progress token, or NULL */
	json_t *event;                  /* {server, tool, arguments}, as recorded (pol_event_kept) */
	json_t *fwd;                    /* CALL_HELD: the params to send once approved */
	uint64_t hold;                  /* CALL_HELD: its id on the channel */
	char rule[128];                 /* CALL_HELD: the escalating rule */
	uint64_t deadline_ms;
	uint64_t t0_us;
};

struct proxy {
	struct policy *pol;
	struct srv srv[MAX_SERVERS];
	size_t n_srv;
	struct client *clients;
	unsigned n_clients;             /* ever connected: the next client's number */
	unsigned live_clients;          /* connected now */
	struct call *calls;
	int listen_fd;
	uid_t client_uid;               /* socket peers: this uid or root */
	struct scrub scrub;
	struct audit *audit;
	char audit_path[PATH_MAX];
	const char *user;               /* the servers run as */
	char self[PATH_MAX];
	bool stdio;
	bool stopping;
	/*
	 * Under `cordon run --mcp`: the channel to the session's supervisor
	 * (audit records go into the session's log; escalations wait for the
	 * session's approval channel), and the session whose tasks, alone, may
	 * connect.
	 */
	int chan_fd;
	struct linebuf chan_in;
	struct outq chan_out;
	uint64_t next_hold;
	char session[40];
	struct steps steps;             /* the session's steps (steps.h); none alone */
};

static uint64_t now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000 + (uint64_t)t.tv_nsec / 1000;
}

static void strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* --- output queues ----------------------------------------------------------- */

/* Queue one message; -ENOBUFS when the peer has QUEUE_MAX unread already. */
static int q_put(struct outq *q, const json_t *msg)
{
	size_t n;
	_cleanup_free_ char *line = jrpc_dump(msg, &n);

	if (!line)
		return -ENOMEM;
	if (q->len - q->off + n > QUEUE_MAX)
		return -ENOBUFS;
	if (q->off && q->off == q->len)
		q->off = q->len = 0;
	if (q->len + n > q->cap) {
		size_t cap = q->cap ? q->cap : 8192;
		char *b;

		if (q->off) {
			memmove(q->buf, q->buf + q->off, q->len - q->off);
			q->len -= q->off;
			q->off = 0;
		}
		while (cap < q->len + n)
			cap *= 2;
		if (cap != q->cap) {
			b = realloc(q->buf, cap);
			if (!b)
				return -ENOMEM;
			q->buf = b;
			q->cap = cap;
		}
	}
	memcpy(q->buf + q->len, line, n);
	q->len += n;
	return 0;
}

/* Write what the descriptor takes now: 0, or -errno (the peer is gone). */
static int q_flush(struct outq *q, int fd)
{
	while (q->off < q->len) {
		ssize_t w = write(fd, q->buf + q->off, q->len - q->off);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return 0;
			return -errno;
		}
		q->off += (size_t)w;
	}
	q->off = q->len = 0;
	return 0;
}

/* --- audit ---------------------------------------------------------------------- */

static void chan_send(struct proxy *p, json_t *msg)
{
	if (p->chan_fd >= 0 && msg && q_put(&p->chan_out, msg) < 0)
		p->stopping = true;     /* the supervisor stopped reading: fail closed */
	json_decref(msg);
}

static void record(struct proxy *p, const char *type, json_t *fields)
{
	if (p->chan_fd >= 0)
		chan_send(p, json_pack("{s:s,s:s,s:O}", "op", "record", "type", type, "fields", fields));
	else if (p->audit) {
		(void)audit_write(p->audit, type, fields);
		/*
		 * A log that can no longer keep records (a full disk:
		 * AUDIT_RESERVE in audit.c) stops the proxy, and no call is
		 * forwarded meanwhile (on_tools_call).
		 */
		if (audit_down(p->audit, NULL))
			p->stopping = true;
	}
	json_decref(fields);
}

/* --- sending -------------------------------------------------------------------- */

/* Bytes queued to every client and not yet read. */
static size_t clients_unread(const struct proxy *p)
{
	size_t n = 0;

	for (const struct client *c = p->clients; c; c = c->next)
		n += c->out.len - c->out.off;
	return n;
}

static void client_send(struct proxy *p, struct client *c, json_t *msg)
{
	const char *why = NULL;

	if (!msg)
		return;
	/*
	 * A client that does not read its answers is dropped, not buffered:
	 * past QUEUE_MAX of its own, or when the answers no client has read
	 * pass CLIENTS_QUEUE_MAX (MAX_CLIENTS idle clients would otherwise
	 * hold this process, outside the session's memory budget, to 4 GiB).
	 */
	if (!c->gone && q_put(&c->out, msg) < 0)
		why = "it left more than 64 MiB unread";
	else if (!c->gone && clients_unread(p) > CLIENTS_QUEUE_MAX)
		why = "the clients left more than 256 MiB unread";
	if (why) {
		c->gone = true;
		record(p, "mcp", json_pack("{s:s,s:i,s:s}", "what", "client dropped", "client", c->n,
					   "reason", why));
	}
	json_decref(msg);
}

static void client_error(struct proxy *p, struct client *c, json_t *id, int code, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static void client_error(struct proxy *p, struct client *c, json_t *id, int code, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	client_send(p, c, jrpc_error(id, code, msg, NULL));
}

static void srv_kill(struct proxy *p, struct srv *s, const char *why);

static void srv_send(struct proxy *p, struct srv *s, json_t *msg)
{
	if (!msg)
		return;
	/*
	 * A server that does not read is stopped, but by the loop, not here:
	 * stopping it frees its calls, and the caller may still hold one.
	 */
	if (s->state != SRV_DEAD && q_put(&s->out, msg) < 0)
		s->overflow = true;
	json_decref(msg);
}

static struct call *call_new(struct proxy *p, enum call_kind kind, struct srv *s)
{
	struct call *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	k->kind = kind;
	k->s = s;
	k->did = ++s->next_id;
	k->t0_us = now_us();
	k->deadline_ms = mono_ms() + (kind == CALL_TOOL ? (uint64_t)s->timeout_s * 1000 : INIT_TIMEOUT_MS);
	k->next = p->calls;
	p->calls = k;
	return k;
}

static void call_free(struct proxy *p, struct call *k)
{
	for (struct call **pp = &p->calls; *pp; pp = &(*pp)->next)
		if (*pp == k) {
			*pp = k->next;
			break;
		}
	json_decref(k->cid);
	json_decref(k->token);
	json_decref(k->event);
	json_decref(k->fwd);
	free(k);
}

/* A held call that will not be decided after all: the human is told so. */
static void withdraw(struct proxy *p, struct call *k, const char *why)
{
	chan_send(p, json_pack("{s:s,s:I,s:s}", "op", "withdraw", "hold", (json_int_t)k->hold,
			       "reason", why));
}

static json_t *request(uint64_t id, const char *method, json_t *params)
{
	return json_pack("{s:s,s:I,s:s,s:o}", "jsonrpc", "2.0", "id", (json_int_t)id, "method",
			 method, "params", params ? params : json_object());
}

/* --- servers ------------------------------------------------------------------- */

/* Fail every call waiting on a server that stopped, and mark it dead. */
static void srv_kill(struct proxy *p, struct srv *s, const char *why)
{
	if (s->state == SRV_DEAD)
		return;
	s->state = SRV_DEAD;
	snprintf(s->dead, sizeof(s->dead), "%s", why);
	/*
	 * SIGTERM to the session's supervisor: it kills its whole session
	 * (cgroup) and seals its audit log; it is reaped when the proxy ends.
	 */
	if (s->pid > 0)
		(void)kill(s->pid, SIGTERM);
	record(p, "mcp", json_pack("{s:s,s:s,s:s}", "what", "server stopped", "server", s->name,
				   "reason", why));
	for (struct call *k = p->calls, *next; k; k = next) {
		next = k->next;
		if (k->s != s)
			continue;
		if (k->kind == CALL_HELD)
			withdraw(p, k, "the server stopped");
		if (k->kind == CALL_TOOL || k->kind == CALL_HELD)
			client_error(p, k->c, k->cid, JRPC_INTERNAL_ERROR,
				     "MCP server \"%s\" failed during the call: %s", s->name, why);
		call_free(p, k);
	}
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ? -errno : 0;
}

/*
 * Start a server in a session of its own: `cordon run` with the entry's
 * profile, its first root as the workspace, approvals denied (a server has
 * no human), the proxy's user.  Its stdio are the proxy's pipes; it dies
 * with the proxy (PDEATHSIG on the session's supervisor, which takes its
 * session down with it).
 */
static int srv_start(struct proxy *p, struct srv *s)
{
	int in[2], out[2];
	char **argv;
	size_t n = 0, na = 0;
	char audit[PATH_MAX + 80];

	while (s->argv[na])
		na++;
	for (size_t i = 0; s->env && s->env[i]; i++)
		n++;
	argv = calloc(16 + 2 * n + na + 1, sizeof(char *));
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
	argv[n++] = "--";
	for (size_t i = 0; i < na; i++)
		argv[n++] = s->argv[i];
	argv[n] = NULL;
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0) {
		free(argv);
		return -errno;
	}
	s->pid = fork();
	if (s->pid == 0) {
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0)
			_exit(125);
		execv(p->self, argv);
		_exit(125);
	}
	free(argv);
	close(in[0]);
	close(out[1]);
	if (s->pid < 0) {
		close(in[1]);
		close(out[0]);
		return -errno;
	}
	s->wfd = in[1];
	s->rfd = out[0];
	(void)set_nonblock(s->wfd);
	(void)set_nonblock(s->rfd);
	linebuf_init(&s->in, SERVER_MAX_MSG);
	return 0;
}

static void srv_initialize(struct proxy *p, struct srv *s)
{
	struct call *k = call_new(p, CALL_INIT, s);

	if (!k) {
		srv_kill(p, s, "out of memory");
		return;
	}
	/*
	 * The proxy is the server's client.  It offers roots (the entry's,
	 * answered by the proxy) and nothing else: no sampling, no
	 * elicitation, which a server could use to reach the agent's model
	 * or its human around the policy.
	 */
	srv_send(p, s, request(k->did, "initialize",
			       json_pack("{s:s,s:{s:{s:b}},s:{s:s,s:s}}", "protocolVersion", versions[0],
					 "capabilities", "roots", "listChanged", 0, "clientInfo",
					 "name", "cordon-mcp-proxy", "version", PROXY_VERSION)));
}

static void srv_list(struct proxy *p, struct srv *s, json_t *cursor)
{
	struct call *k = call_new(p, CALL_LIST, s);
	json_t *params = json_object();

	if (!k) {
		srv_kill(p, s, "out of memory");
		return;
	}
	if (cursor)
		json_object_set(params, "cursor", cursor);
	srv_send(p, s, request(k->did, "tools/list", params));
}

static bool version_known(const char *v)
{
	for (int i = 0; versions[i]; i++)
		if (!strcmp(v, versions[i]))
			return true;
	return false;
}

static void broadcast(struct proxy *p, json_t *msg)
{
	for (struct client *c = p->clients; c; c = c->next)
		if (c->initialized)
			client_send(p, c, json_incref(msg));
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
		call_free(p, k);
		srv_kill(p, s, why);
		return;
	}
	if (k->kind == CALL_INIT) {
		const char *v = json_string_value(json_object_get(res, "protocolVersion"));

		call_free(p, k);
		if (!v || !version_known(v)) {
			snprintf(why, sizeof(why), "it speaks MCP revision \"%s\", which the proxy does not",
				 v ? v : "(none)");
			srv_kill(p, s, why);
			return;
		}
		srv_send(p, s, json_pack("{s:s,s:s}", "jsonrpc", "2.0", "method",
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
			call_free(p, k);
			srv_kill(p, s, "tools/list returned no \"tools\" array");
			return;
		}
		json_array_foreach(tools, i, t)
			if (json_is_object(t) && json_is_string(json_object_get(t, "name")))
				json_array_append(s->acc, t);
		cursor = json_object_get(res, "nextCursor");
		call_free(p, k);
		if (json_is_string(cursor) && json_array_size(s->acc) < 4096) {
			srv_list(p, s, cursor);
			return;
		}
		json_decref(s->tools);
		s->tools = TAKE_PTR(s->acc);
		if (s->state == SRV_READY)
			broadcast(p, json_pack("{s:s,s:s}", "jsonrpc", "2.0", "method",
					       "notifications/tools/list_changed"));
		s->state = SRV_READY;
		record(p, "mcp", json_pack("{s:s,s:s,s:I}", "what", "server ready", "server", s->name,
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
	double ms = (double)(now_us() - k->t0_us) / 1000.0;

	if (!clean) {
		client_error(p, k->c, k->cid, JRPC_INTERNAL_ERROR, "out of memory");
	} else if (res) {
		client_send(p, k->c, jrpc_result(k->cid, clean));
	} else {
		client_send(p, k->c, json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", k->cid,
					       "error", clean));
	}
	record(p, "mcp", json_pack("{s:s,s:i,s:O,s:b,s:b,s:I,s:f}", "what", "result", "client", k->c->n,
				   "event", k->event, "error", err != NULL, "isError",
				   json_is_true(json_object_get(res, "isError")), "scrubbed",
				   (json_int_t)hits, "ms", ms));
	call_free(p, k);
}

/* Requests a server makes of its client: the proxy answers them itself. */
static void srv_request(struct proxy *p, struct srv *s, json_t *msg)
{
	const char *m = json_string_value(json_object_get(msg, "method"));
	json_t *id = json_object_get(msg, "id");

	if (!strcmp(m, "ping")) {
		srv_send(p, s, jrpc_result(id, json_object()));
	} else if (!strcmp(m, "roots/list")) {
		json_t *roots = json_array();

		for (size_t i = 0; s->roots[i]; i++) {
			char uri[PATH_MAX + 8];

			snprintf(uri, sizeof(uri), "file://%s", s->roots[i]);
			json_array_append_new(roots, json_pack("{s:s}", "uri", uri));
		}
		srv_send(p, s, jrpc_result(id, json_pack("{s:o}", "roots", roots)));
	} else {
		srv_send(p, s, jrpc_error(id, JRPC_METHOD_NOT_FOUND,
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
				client_send(p, k->c, json_pack("{s:s,s:s,s:o}", "jsonrpc", "2.0", "method",
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
		srv_kill(p, s, reason);
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

/*
 * Read what one descriptor has (at most READ_CHUNK: one peer cannot starve
 * the others) into its line buffer: 1 read, 0 nothing yet, -EPIPE end of
 * input or an error, -ENOMEM.
 */
static int pull(int fd, struct linebuf *lb)
{
	char buf[READ_CHUNK];
	ssize_t n = read(fd, buf, sizeof(buf));

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0)
		return -EPIPE;
	return linebuf_push(lb, buf, (size_t)n) < 0 ? -ENOMEM : 1;
}

static void srv_readable(struct proxy *p, struct srv *s)
{
	int r = pull(s->rfd, &s->in);
	char *line;
	size_t len;

	if (r == 0)
		return;
	if (r == -ENOMEM) {
		srv_kill(p, s, "out of memory");
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
		srv_kill(p, s, why);
		return;
	}
	while (s->state != SRV_DEAD && (r = linebuf_next(&s->in, &line, &len)) != 0) {
		if (r < 0) {
			srv_kill(p, s, "it sent a message over 32 MiB");
			return;
		}
		if (len)
			srv_line(p, s, line, len);
	}
}

/* --- the client side ------------------------------------------------------------- */

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
	const char *v = versions[0];

	if (!want) {
		client_error(p, c, id, JRPC_INVALID_PARAMS, "initialize: \"protocolVersion\" must be a string");
		return;
	}
	if (version_known(want))
		v = want;
	snprintf(c->proto, sizeof(c->proto), "%s", v);
	c->initialized = true;
	/*
	 * Honest capabilities: tools (whose list may change when a server's
	 * does), nothing else.  Resources, prompts, logging and completion
	 * are not proxied, so they are not offered.
	 */
	client_send(p, c, jrpc_result(id, json_pack(
		"{s:s,s:{s:{s:b}},s:{s:s,s:s},s:s}", "protocolVersion", v, "capabilities", "tools",
		"listChanged", 1, "serverInfo", "name", "cordon-mcp-proxy", "version", PROXY_VERSION,
		"instructions", "Tools of several MCP servers, named SERVER.TOOL. cordon judges every "
		"call by policy: a refused call fails with a JSON-RPC error saying which rule.")));
	record(p, "mcp", json_pack("{s:s,s:i,s:s,s:o?}", "what", "client initialized", "client", c->n,
				   "protocolVersion", v, "clientInfo",
				   json_object_get(params, "clientInfo") ?
				   pol_json_kept(json_object_get(params, "clientInfo")) : NULL));
}

static void on_tools_list(struct proxy *p, struct client *c, json_t *id)
{
	json_t *all = json_array();

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
	client_send(p, c, jrpc_result(id, json_pack("{s:o}", "tools", all)));
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
	struct pol_result res;
	json_t *event, *kept;
	struct call *k;
	char tool[256];

	if (!name) {
		client_error(p, c, id, JRPC_INVALID_PARAMS, "tools/call: \"name\" must be a string");
		return;
	}
	if (args && !json_is_object(args)) {
		client_error(p, c, id, JRPC_INVALID_PARAMS, "tools/call: \"arguments\" must be an object");
		return;
	}
	if (meta && !json_is_object(meta)) {
		client_error(p, c, id, JRPC_INVALID_PARAMS, "tools/call: \"_meta\" must be an object");
		return;
	}
	dot = strchr(name, '.');
	s = dot ? srv_by_name(p, name, (size_t)(dot - name)) : NULL;
	if (!s || strlen(dot + 1) >= sizeof(tool)) {
		client_error(p, c, id, JRPC_INVALID_PARAMS, "unknown tool \"%s\" (tools are named "
			     "SERVER.TOOL; see tools/list)", name);
		return;
	}
	snprintf(tool, sizeof(tool), "%s", dot + 1);
	if (s->state != SRV_READY) {
		client_error(p, c, id, JRPC_INTERNAL_ERROR, "MCP server \"%s\" is not running: %s",
			     s->name, s->dead[0] ? s->dead : "starting");
		return;
	}
	if (!srv_tool(s, tool)) {
		client_error(p, c, id, JRPC_INVALID_PARAMS, "unknown tool \"%s\": server \"%s\" has "
			     "no tool \"%s\"", name, s->name, tool);
		return;
	}
	if (p->audit && audit_down(p->audit, NULL)) {
		client_error(p, c, id, JRPC_INTERNAL_ERROR, "cordon: the audit log cannot keep its "
			     "records: nothing is forwarded");
		return;
	}
	args = args ? json_incref(args) : json_object();
	event = pol_event_tool(s->name, tool, args);
	rq.server = s->name;
	rq.tool = tool;
	rq.args = args;
	rq.roots = (const char *const *)s->roots;
	/* Each judged call is one of the session's steps, a refused one too (steps.h). */
	steps_eval(&p->steps, p->pol, &rq, &res);
	/* The records keep a digest of large arguments (pol_event_kept); the server gets them whole. */
	kept = pol_event_kept(event);
	if (!kept) {
		client_error(p, c, id, JRPC_INTERNAL_ERROR, "out of memory");
		json_decref(event);
		json_decref(args);
		return;
	}
	{
		const char *rule = res.rule ? res.rule->name : res.invariant;
		const char *dec = res.decision == CORDON_ALLOW ? "allow" :
				  res.decision == CORDON_ESCALATE ? "escalate" : "deny";
		bool hold = res.decision == CORDON_ESCALATE && p->chan_fd >= 0;

		record(p, "decision", json_pack("{s:s,s:i,s:O,s:s,s:s?,s:s,s:s}", "raw", "tools/call",
						"client", c->n, "event", kept, "decision", dec,
						"rule", rule, "reason", res.reason, "outcome",
						res.decision == CORDON_ALLOW ? "forwarded" :
						hold ? "held for the session's approver" :
						res.decision == CORDON_ESCALATE ?
						"refused: no approval channel" : "refused"));
		if (res.decision != CORDON_ALLOW && !hold) {
			/*
			 * Escalation needs a human: the standalone proxy has
			 * none, so it fails closed (under `cordon run --mcp`
			 * the session's approval channel is the human).
			 */
			client_send(p, c, jrpc_error(id, JRPC_DENIED,
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

			k = call_new(p, CALL_HELD, s);
			if (!k) {
				client_error(p, c, id, JRPC_INTERNAL_ERROR, "out of memory");
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
			chan_send(p, json_pack("{s:s,s:I,s:o,s:s,s:s,s:s}", "op", "escalate", "hold",
					       (json_int_t)k->hold, "event", event, "summary", summary,
					       "rule", k->rule, "reason", res.reason));
			return;
		}
	}
	json_decref(event);
	k = call_new(p, CALL_TOOL, s);
	if (!k) {
		client_error(p, c, id, JRPC_INTERNAL_ERROR, "out of memory");
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
	srv_send(p, k->s, request(k->did, "tools/call", fwd));
}

/* The supervisor's answer for a held call. */
static void on_decision(struct proxy *p, json_t *msg)
{
	json_int_t hold = json_integer_value(json_object_get(msg, "hold"));
	bool allow = json_is_true(json_object_get(msg, "allow"));
	const char *why = json_string_value(json_object_get(msg, "why")) ?: "decided";
	const char *approver = json_string_value(json_object_get(msg, "approver"));
	struct call *k;

	for (k = p->calls; k; k = k->next)
		if (k->kind == CALL_HELD && (json_int_t)k->hold == hold)
			break;
	if (!k)
		return;                 /* withdrawn meanwhile (cancelled, client gone) */
	if (!allow) {
		client_send(p, k->c, jrpc_error(k->cid, JRPC_DENIED, "cordon: the session's approver "
			"did not allow this call", json_pack("{s:s,s:s,s:s,s:s?}", "decision", "deny",
			"rule", k->rule, "reason", why, "approver", approver)));
		call_free(p, k);
		return;
	}
	if (k->s->state != SRV_READY) {
		client_error(p, k->c, k->cid, JRPC_INTERNAL_ERROR, "MCP server \"%s\" is not "
			     "running: %s", k->s->name, k->s->dead[0] ? k->s->dead : "starting");
		call_free(p, k);
		return;
	}
	k->kind = CALL_TOOL;
	k->t0_us = now_us();
	k->deadline_ms = mono_ms() + (uint64_t)k->s->timeout_s * 1000;
	forward(p, k);
}

/* Tell the server a call is abandoned (it then sends no answer). */
static void cancel_down(struct proxy *p, struct call *k, const char *reason)
{
	srv_send(p, k->s, json_pack("{s:s,s:s,s:{s:I,s:s}}", "jsonrpc", "2.0", "method",
				    "notifications/cancelled", "params", "requestId",
				    (json_int_t)k->did, "reason", reason));
}

static void on_cancelled(struct proxy *p, struct client *c, json_t *params)
{
	json_t *rid = json_object_get(params, "requestId");

	for (struct call *k = p->calls; k; k = k->next) {
		if ((k->kind != CALL_TOOL && k->kind != CALL_HELD) || k->c != c ||
		    !json_equal(k->cid, rid))
			continue;
		if (k->kind == CALL_HELD)
			withdraw(p, k, "cancelled by the client");
		else
			cancel_down(p, k, "cancelled by the client");
		record(p, "mcp", json_pack("{s:s,s:i,s:O}", "what", "cancelled", "client", c->n,
					   "event", k->event));
		call_free(p, k);        /* no answer goes back: the client gave up */
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
		client_send(p, c, jrpc_error(id, kind, why, NULL));
		json_decref(id);
		return;
	}
	m = json_string_value(json_object_get(msg, "method"));
	params = json_object_get(msg, "params");
	if (kind == JRPC_REQUEST) {
		if (!strcmp(m, "initialize"))
			on_initialize(p, c, id, params);
		else if (!strcmp(m, "ping"))
			client_send(p, c, jrpc_result(id, json_object()));
		else if (!c->initialized)
			client_error(p, c, id, JRPC_INVALID_REQUEST, "%s before initialize", m);
		else if (!strcmp(m, "tools/list"))
			on_tools_list(p, c, id);
		else if (!strcmp(m, "tools/call"))
			on_tools_call(p, c, id, params);
		else
			client_error(p, c, id, JRPC_METHOD_NOT_FOUND, "method \"%s\" is not offered by "
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

static void client_readable(struct proxy *p, struct client *c)
{
	int r = pull(c->rfd, &c->in);
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
			client_error(p, c, NULL, JRPC_INVALID_REQUEST, "message over %u bytes: dropped",
				     CLIENT_MAX_MSG);
			continue;
		}
		if (len)
			client_line(p, c, line, len);
	}
}

static struct client *client_add(struct proxy *p, int rfd, int wfd)
{
	struct client *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->rfd = rfd;
	c->wfd = wfd;
	c->n = ++p->n_clients;
	p->live_clients++;
	linebuf_init(&c->in, CLIENT_MAX_MSG);
	(void)set_nonblock(rfd);
	(void)set_nonblock(wfd);
	c->next = p->clients;
	p->clients = c;
	return c;
}

static void client_remove(struct proxy *p, struct client *c)
{
	for (struct call *k = p->calls, *next; k; k = next) {
		next = k->next;
		if (k->kind == CALL_TOOL && k->c == c) {
			cancel_down(p, k, "the client left");
			call_free(p, k);
		} else if (k->kind == CALL_HELD && k->c == c) {
			withdraw(p, k, "the client left");
			call_free(p, k);
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
	snprintf(want, sizeof(want), "/" CORDON_CGROUP_PARENT "-unix/%s", p->session);
	if (cg_is(cg, want)) {
		ok = cr->uid == p->client_uid && cr->uid != 0;
	} else {
		snprintf(want, sizeof(want), "/" CORDON_CGROUP_PARENT "/%s", p->session);
		ok = cg_is(cg, want) ||
		     (cr->uid == 0 && !strstr(cg, "/" CORDON_CGROUP_PARENT "/") &&
		      !strstr(cg, "/" CORDON_CGROUP_PARENT "-unix/"));
	}
	free(cg);
	return ok;
}

/*
 * A socket peer must be the session's agent user or root: the socket's
 * mode says so too, this is the second lock.
 */
static void accept_client(struct proxy *p)
{
	int fd = accept4(p->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	struct ucred cr;
	socklen_t l = sizeof(cr);

	if (fd < 0)
		return;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l) < 0 ||
	    (cr.uid != 0 && cr.uid != p->client_uid) ||
	    (p->session[0] && !peer_in_session(p, fd, &cr))) {
		record(p, "mcp", json_pack("{s:s,s:i,s:i}", "what", "client refused", "pid",
					   (int)cr.pid, "uid", (int)cr.uid));
		close(fd);
		return;
	}
	if (!client_add(p, fd, fd))
		close(fd);
}

/* --- the supervisor's channel ---------------------------------------------------- */

static void chan_readable(struct proxy *p)
{
	int r = pull(p->chan_fd, &p->chan_in);
	char *line;
	size_t len;

	if (r < 0) {
		/* The supervisor is gone: so is the session this proxy serves. */
		p->stopping = true;
		return;
	}
	while ((r = linebuf_next(&p->chan_in, &line, &len)) != 0) {
		json_t *msg;
		const char *op;

		if (r < 0)
			continue;
		msg = json_loadb(line, len, 0, NULL);
		op = json_string_value(json_object_get(msg, "op"));
		if (op && !strcmp(op, "decision"))
			on_decision(p, msg);
		json_decref(msg);
	}
}

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
			client_error(p, k->c, k->cid, JRPC_INTERNAL_ERROR, "MCP server \"%s\" did not "
				     "answer within %u s", k->s->name, k->s->timeout_s);
			cancel_down(p, k, "timed out");
			record(p, "mcp", json_pack("{s:s,s:O}", "what", "timeout", "event", k->event));
			call_free(p, k);
		} else {
			struct srv *s = k->s;

			call_free(p, k);
			srv_kill(p, s, "it did not initialize in time");
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

				client_remove(p, c);
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
					srv_readable(p, s);
				break;
			}
			case 1: {
				struct srv *s = who[i];

				if (s->state != SRV_DEAD && q_flush(&s->out, s->wfd) < 0)
					srv_kill(p, s, "its input was closed");
				break;
			}
			case 2: {
				struct client *c = who[i];

				if (!c->gone)
					client_readable(p, c);
				break;
			}
			case 3: {
				struct client *c = who[i];

				if (!c->gone && q_flush(&c->out, c->wfd) < 0)
					c->gone = true;
				break;
			}
			case 4:
				accept_client(p);
				break;
			case 5:
				chan_readable(p);
				break;
			case 6:
				if (q_flush(&p->chan_out, p->chan_fd) < 0)
					p->stopping = true;
				break;
			default:
				break;
			}
		}
		/* Answers queued while handling input go out without another round. */
		for (struct client *c = p->clients; c; c = c->next)
			if (!c->gone && c->out.off < c->out.len && q_flush(&c->out, c->wfd) < 0)
				c->gone = true;
		for (size_t i = 0; i < p->n_srv; i++) {
			struct srv *s = &p->srv[i];

			if (s->overflow)
				srv_kill(p, s, "it left more than 64 MiB of requests unread");
			if (s->state != SRV_DEAD && s->out.off < s->out.len && q_flush(&s->out, s->wfd) < 0)
				srv_kill(p, s, "its input was closed");
		}
		expire(p);
		if (p->chan_fd >= 0 && p->chan_out.off < p->chan_out.len &&
		    q_flush(&p->chan_out, p->chan_fd) < 0)
			p->stopping = true;
	}
}

/* --- configuration -------------------------------------------------------------- */

static void cfg_err(const char *file, const struct jpos_map *m, const char *ptr, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void cfg_err(const char *file, const struct jpos_map *m, const char *ptr, const char *fmt, ...)
{
	int line = 1, col = 1;
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (m)
		(void)jpos_get(m, ptr, false, &line, &col);
	fprintf(stderr, "%s:%d:%d: error: %s\n", file, line, col, msg);
}

static bool name_ok(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n < 64 &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == n;
}

/* "${WORKSPACE}" in a string: the one variable a servers file may use. */
static char *expand_ws(const char *s, const char *ws)
{
	const char *v = strstr(s, "${WORKSPACE}");
	char *out;

	if (!v)
		return strdup(s);
	if (asprintf(&out, "%.*s%s%s", (int)(v - s), s, ws, v + 12) < 0)
		return NULL;
	return out;
}

/*
 * SERVERS.json:
 *   { "servers": { "NAME": { "command": ["prog", "arg", ...],
 *                            "profile": "mcp-server" | "/path/policy.json",
 *                            "roots": ["/dir", ...], "env": ["NAME", ...],
 *                            "timeout": SECONDS } } }
 * Unknown keys are errors; every error names FILE:LINE:COL.
 */
static int load_servers(struct proxy *p, const char *file, const char *ws)
{
	_cleanup_free_ char *text = NULL;
	struct jpos_map *m = NULL;
	json_error_t e;
	json_t *root = NULL, *servers, *v;
	const char *name;
	int r = -EINVAL;

	r = read_file(file, &text, 1 << 20);
	if (r < 0) {
		fprintf(stderr, "%s: error: %s\n", file, strerror(-r));
		return r;
	}
	r = -EINVAL;
	root = json_loads(text, JSON_REJECT_DUPLICATES, &e);
	if (!root) {
		fprintf(stderr, "%s:%d:%d: error: %s\n", file, e.line, e.column, e.text);
		return -EINVAL;
	}
	(void)jpos_scan(text, strlen(text), &m);
	servers = json_object_get(root, "servers");
	{
		const char *k;

		json_object_foreach(root, k, v)
			if (strcmp(k, "servers")) {
				char ptr[256];

				snprintf(ptr, sizeof(ptr), "/%s", k);
				cfg_err(file, m, ptr, "unknown key \"%s\" (expected \"servers\")", k);
				goto out;
			}
	}
	if (!json_is_object(servers) || !json_object_size(servers)) {
		cfg_err(file, m, "/servers", "\"servers\" must be an object naming at least one server");
		goto out;
	}
	json_object_foreach(servers, name, v) {
		struct srv *s = &p->srv[p->n_srv];
		char ptr[256], sub[320];
		const char *k;
		json_t *x, *cmd, *roots;
		size_t i;

		snprintf(ptr, sizeof(ptr), "/servers/%s", name);
		if (!name_ok(name)) {
			cfg_err(file, m, ptr, "server name \"%s\": use letters, digits, '_' and '-' "
				"(a '.' would make SERVER.TOOL ambiguous)", name);
			goto out;
		}
		if (p->n_srv == MAX_SERVERS) {
			cfg_err(file, m, ptr, "more than %d servers", MAX_SERVERS);
			goto out;
		}
		if (!json_is_object(v)) {
			cfg_err(file, m, ptr, "a server is an object");
			goto out;
		}
		json_object_foreach(v, k, x)
			if (strcmp(k, "command") && strcmp(k, "profile") && strcmp(k, "roots") &&
			    strcmp(k, "env") && strcmp(k, "timeout")) {
				snprintf(sub, sizeof(sub), "%s/%s", ptr, k);
				cfg_err(file, m, sub, "unknown key \"%s\" (command, profile, roots, env, "
					"timeout)", k);
				goto out;
			}
		memset(s, 0, sizeof(*s));
		s->rfd = s->wfd = -1;
		snprintf(s->name, sizeof(s->name), "%s", name);
		p->n_srv++;
		cmd = json_object_get(v, "command");
		snprintf(sub, sizeof(sub), "%s/command", ptr);
		if (!json_is_array(cmd) || !json_array_size(cmd)) {
			cfg_err(file, m, json_is_array(cmd) || cmd ? sub : ptr,
				"\"command\" must be a non-empty array of strings");
			goto out;
		}
		s->argv = calloc(json_array_size(cmd) + 1, sizeof(char *));
		if (!s->argv)
			goto oom;
		json_array_foreach(cmd, i, x) {
			if (!json_is_string(x)) {
				snprintf(sub, sizeof(sub), "%s/command/%zu", ptr, i);
				cfg_err(file, m, sub, "\"command\" items must be strings");
				goto out;
			}
			if (!(s->argv[i] = expand_ws(json_string_value(x), ws)))
				goto oom;
		}
		x = json_object_get(v, "profile");
		if (x && !json_is_string(x)) {
			snprintf(sub, sizeof(sub), "%s/profile", ptr);
			cfg_err(file, m, sub, "\"profile\" must be a profile name or a policy file");
			goto out;
		}
		snprintf(s->policy, sizeof(s->policy), "%s", x ? json_string_value(x) : "mcp-server");
		roots = json_object_get(v, "roots");
		if (roots && (!json_is_array(roots) || !json_array_size(roots))) {
			snprintf(sub, sizeof(sub), "%s/roots", ptr);
			cfg_err(file, m, sub, "\"roots\" must be a non-empty array of directories");
			goto out;
		}
		s->roots = calloc((roots ? json_array_size(roots) : 1) + 1, sizeof(char *));
		if (!s->roots)
			goto oom;
		for (i = 0; i < (roots ? json_array_size(roots) : 1); i++) {
			_cleanup_free_ char *raw = NULL;
			char canon[PATH_MAX];
			struct stat st;

			x = roots ? json_array_get(roots, i) : NULL;
			snprintf(sub, sizeof(sub), "%s/roots/%zu", ptr, i);
			if (roots && !json_is_string(x)) {
				cfg_err(file, m, sub, "a root must be a string");
				goto out;
			}
			raw = expand_ws(x ? json_string_value(x) : ws, ws);
			if (!raw)
				goto oom;
			if (raw[0] != '/' || pol_canon_path(raw, NULL, canon, sizeof(canon)) < 0 ||
			    stat(canon, &st) < 0 || !S_ISDIR(st.st_mode)) {
				cfg_err(file, m, roots ? sub : ptr, "root \"%s\" is not an existing "
					"directory given by absolute path", raw);
				goto out;
			}
			if (!(s->roots[i] = strdup(canon)))
				goto oom;
		}
		x = json_object_get(v, "env");
		if (x && !json_is_array(x)) {
			snprintf(sub, sizeof(sub), "%s/env", ptr);
			cfg_err(file, m, sub, "\"env\" must be an array of variable names");
			goto out;
		}
		s->env = calloc(json_array_size(x) + 1, sizeof(char *));
		if (!s->env)
			goto oom;
		{
			json_t *y;

			json_array_foreach(x, i, y) {
				if (!json_is_string(y)) {
					snprintf(sub, sizeof(sub), "%s/env/%zu", ptr, i);
					cfg_err(file, m, sub, "\"env\" items must be variable names");
					goto out;
				}
				if (!(s->env[i] = strdup(json_string_value(y))))
					goto oom;
			}
		}
		x = json_object_get(v, "timeout");
		if (x && (!json_is_integer(x) || json_integer_value(x) < 1 ||
			  json_integer_value(x) > 86400)) {
			snprintf(sub, sizeof(sub), "%s/timeout", ptr);
			cfg_err(file, m, sub, "\"timeout\" must be seconds, 1 to 86400");
			goto out;
		}
		s->timeout_s = x ? (uint32_t)json_integer_value(x) : DEFAULT_CALL_TIMEOUT_S;
	}
	r = 0;
	goto out;
oom:
	fprintf(stderr, "%s: error: out of memory\n", file);
	r = -ENOMEM;
out:
	jpos_free(m);
	json_decref(root);
	return r;
}

/*
 * Known secrets, scrubbed from results: the values of the proxy's own
 * environment variables whose names say they are secrets (the same rule
 * as `cordon run`'s audit redaction), and the policy's credentials.
 */
static void add_secret(void *ctx, const char *name, const char *value)
{
	struct proxy *p = ctx;

	(void)scrub_add(&p->scrub, name, value);
	if (p->audit)
		(void)audit_add_secret(p->audit, name, value);
}

static void collect_secrets(struct proxy *p)
{
	scrub_env_secrets(add_secret, p);
	for (size_t i = 0; i < p->pol->n_creds; i++) {
		const struct pol_credential *cr = &p->pol->creds[i];
		_cleanup_free_ char *val = NULL;

		if (cr->source_env && getenv(cr->source_env))
			val = strdup(getenv(cr->source_env));
		else if (cr->source_file && read_file(cr->source_file, &val, 65536) == 0)
			val[strcspn(val, "\r\n")] = '\0';
		if (val && strlen(val) >= 8)
			add_secret(p, cr->name, val);
		if (val)
			explicit_bzero(val, strlen(val));
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
			if (!name_ok(optarg) || strlen(optarg) >= sizeof(p.session)) {
				log_err("mcp-proxy: --session %s: not a session name", optarg);
				return 125;
			}
			snprintf(p.session, sizeof(p.session), "%s", optarg);
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 125;
		}
	}
	if (!servers || optind != argc || (listen_fd >= 0 && listen_path)) {
		usage(stderr);
		return 125;
	}
	if (p.chan_fd >= 0) {
		if (fcntl(p.chan_fd, F_GETFD) < 0 || set_nonblock(p.chan_fd) < 0) {
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
	if (load_servers(&p, servers, ws) < 0)
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
	collect_secrets(&p);
	(void)pol_protect_path(p.pol, p.self);
	signal(SIGPIPE, SIG_IGN);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if (listen_fd >= 0) {
		int type = 0;
		socklen_t tl = sizeof(type);

		if (getsockopt(listen_fd, SOL_SOCKET, SO_TYPE, &type, &tl) < 0 || type != SOCK_STREAM ||
		    set_nonblock(listen_fd) < 0) {
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
		if (!client_add(&p, 0, 1)) {
			log_err("mcp-proxy: out of memory");
			goto out;
		}
	}
	/* Configuration accepted: cordon run may start the agent. */
	chan_send(&p, json_pack("{s:s,s:I}", "op", "ready", "servers", (json_int_t)p.n_srv));
	for (size_t i = 0; i < p.n_srv; i++) {
		r = srv_start(&p, &p.srv[i]);
		if (r < 0) {
			log_err("mcp-proxy: server %s: %s", p.srv[i].name, strerror(-r));
			p.srv[i].state = SRV_DEAD;
			snprintf(p.srv[i].dead, sizeof(p.srv[i].dead), "could not start: %s", strerror(-r));
			continue;
		}
		srv_initialize(&p, &p.srv[i]);
	}
	r = proxy_loop(&p);
	ret = r < 0 ? 125 : 0;
	r = audit_down(p.audit, NULL);
	if (r < 0) {
		log_err("mcp-proxy: stopped: the audit log cannot keep its records (%s)", strerror(-r));
		ret = 125;
	}
out:
	while (p.clients)
		client_remove(&p, p.clients);
	while (p.calls)
		call_free(&p, p.calls);
	for (size_t i = 0; i < p.n_srv; i++) {
		struct srv *s = &p.srv[i];

		if (s->pid > 0) {
			(void)kill(s->pid, SIGTERM);
			(void)waitpid(s->pid, NULL, 0);
		}
		if (s->rfd >= 0)
			close(s->rfd);
		if (s->wfd >= 0)
			close(s->wfd);
		linebuf_free(&s->in);
		free(s->out.buf);
		json_decref(s->tools);
		json_decref(s->acc);
		strv_free(s->argv);
		strv_free(s->roots);
		strv_free(s->env);
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
		(void)q_flush(&p.chan_out, p.chan_fd);
		close(p.chan_fd);
		linebuf_free(&p.chan_in);
		free(p.chan_out.buf);
	}
	scrub_free(&p.scrub);
	pol_free(p.pol);
	return ret;
}
