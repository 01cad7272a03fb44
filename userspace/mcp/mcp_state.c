// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The MCP proxy's state and what it sends (mcp_state.h): bounded queues,
 * records, answers to clients, requests to servers, the calls it waits
 * for, and stopping a server.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "jsonrpc.h"
#include "mcp_state.h"
#include "proto.h"
#include "util.h"

/*
 * Protocol revisions, newest first.  A client asking for one of these gets
 * it; any other gets the newest (the client then decides).  Downstream, the
 * proxy asks for the newest and accepts any of these.
 */
const char *const mcp_state_versions[] = {
	"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2024-10-07", NULL,
};

uint64_t mcp_state_now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000 + (uint64_t)t.tv_nsec / 1000;
}

void mcp_state_strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* Queue one message; -ENOBUFS when the peer has QUEUE_MAX unread already. */
int mcp_state_q_put(struct outq *q, const json_t *msg)
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
int mcp_state_q_flush(struct outq *q, int fd)
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

void mcp_state_chan_send(struct proxy *p, json_t *msg)
{
	if (p->chan_fd >= 0 && msg && mcp_state_q_put(&p->chan_out, msg) < 0)
		p->stopping = true;     /* the supervisor stopped reading: fail closed */
	json_decref(msg);
}

void mcp_state_record(struct proxy *p, const char *type, json_t *fields)
{
	if (p->chan_fd >= 0)
		mcp_state_chan_send(p, proto_record(type, fields));
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

/* Bytes queued to every client and not yet read. */
static size_t clients_unread(const struct proxy *p)
{
	size_t n = 0;

	for (const struct client *c = p->clients; c; c = c->next)
		n += c->out.len - c->out.off;
	return n;
}

void mcp_state_client_send(struct proxy *p, struct client *c, json_t *msg)
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
	if (!c->gone && mcp_state_q_put(&c->out, msg) < 0)
		why = "it left more than 64 MiB unread";
	else if (!c->gone && clients_unread(p) > CLIENTS_QUEUE_MAX)
		why = "the clients left more than 256 MiB unread";
	if (why) {
		c->gone = true;
		mcp_state_record(p, "mcp", json_pack("{s:s,s:i,s:s}", "what", "client dropped",
						     "client", c->n, "reason", why));
	}
	json_decref(msg);
}

void mcp_state_client_error(struct proxy *p, struct client *c, json_t *id, int code,
			    const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	mcp_state_client_send(p, c, jrpc_error(id, code, msg, NULL));
}

void mcp_state_srv_send(struct proxy *p, struct srv *s, json_t *msg)
{
	if (!msg)
		return;
	/*
	 * A server that does not read is stopped, but by the loop, not here:
	 * stopping it frees its calls, and the caller may still hold one.
	 */
	if (s->state != SRV_DEAD && mcp_state_q_put(&s->out, msg) < 0)
		s->overflow = true;
	json_decref(msg);
}

struct call *mcp_state_call_new(struct proxy *p, enum call_kind kind, struct srv *s)
{
	struct call *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	k->kind = kind;
	k->s = s;
	k->did = ++s->next_id;
	k->t0_us = mcp_state_now_us();
	k->deadline_ms = mono_ms() + (kind == CALL_TOOL ? (uint64_t)s->timeout_s * 1000 : INIT_TIMEOUT_MS);
	k->next = p->calls;
	p->calls = k;
	return k;
}

void mcp_state_call_free(struct proxy *p, struct call *k)
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
void mcp_state_withdraw(struct proxy *p, struct call *k, const char *why)
{
	mcp_state_chan_send(p, proto_withdraw(k->hold, why));
}

json_t *mcp_state_request(uint64_t id, const char *method, json_t *params)
{
	return json_pack("{s:s,s:I,s:s,s:o}", "jsonrpc", "2.0", "id", (json_int_t)id, "method",
			 method, "params", params ? params : json_object());
}

void mcp_state_srv_stop(struct srv *s)
{
	if (s->stop_fd >= 0)
		close(s->stop_fd);
	s->stop_fd = -1;
}

/* Fail every call waiting on a server that stopped, and mark it dead. */
void mcp_state_srv_kill(struct proxy *p, struct srv *s, const char *why)
{
	if (s->state == SRV_DEAD)
		return;
	s->state = SRV_DEAD;
	snprintf(s->dead, sizeof(s->dead), "%s", why);
	/*
	 * The session's supervisor stops it as on SIGTERM (its --stop-fd at
	 * end of file): it kills its whole session (cgroup) and seals its
	 * audit log; it is reaped when the proxy ends.
	 */
	mcp_state_srv_stop(s);
	mcp_state_record(p, "mcp", json_pack("{s:s,s:s,s:s}", "what", "server stopped", "server", s->name,
					     "reason", why));
	for (struct call *k = p->calls, *next; k; k = next) {
		next = k->next;
		if (k->s != s)
			continue;
		if (k->kind == CALL_HELD)
			mcp_state_withdraw(p, k, "the server stopped");
		if (k->kind == CALL_TOOL || k->kind == CALL_HELD)
			mcp_state_client_error(p, k->c, k->cid, JRPC_INTERNAL_ERROR,
					       "MCP server \"%s\" failed during the call: %s", s->name, why);
		mcp_state_call_free(p, k);
	}
}

int mcp_state_set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ? -errno : 0;
}

bool mcp_state_version_known(const char *v)
{
	for (int i = 0; mcp_state_versions[i]; i++)
		if (!strcmp(v, mcp_state_versions[i]))
			return true;
	return false;
}

/*
 * Read what one descriptor has (at most READ_CHUNK: one peer cannot starve
 * the others) into its line buffer: 1 read, 0 nothing yet, -EPIPE end of
 * input or an error, -ENOMEM.
 */
int mcp_state_pull(int fd, struct linebuf *lb)
{
	char buf[READ_CHUNK];
	ssize_t n = read(fd, buf, sizeof(buf));

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0)
		return -EPIPE;
	return linebuf_push(lb, buf, (size_t)n) < 0 ? -ENOMEM : 1;
}

/* Tell the server a call is abandoned (it then sends no answer). */
void mcp_state_cancel_down(struct proxy *p, struct call *k, const char *reason)
{
	mcp_state_srv_send(p, k->s, json_pack("{s:s,s:s,s:{s:I,s:s}}", "jsonrpc", "2.0", "method",
					      "notifications/cancelled", "params", "requestId",
					      (json_int_t)k->did, "reason", reason));
}
