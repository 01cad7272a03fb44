// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* CONNECT tunnels, SSH tunnels on a grant, and plain HTTP forwarded (tunnel.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "tunnel.h"
#include "util.h"

/* Both ways until both sides are done (half-closes passed on) or idle too long. */
static void relay(struct conn *c)
{
	char *b = malloc(RELAY_BUF);
	bool up_open = true, down_open = true;

	if (!b)
		return;
	while (up_open || down_open) {
		struct pollfd p[2] = {
			{ .fd = up_open ? c->fd : -1, .events = POLLIN },
			{ .fd = down_open ? c->up : -1, .events = POLLIN },
		};
		int r = poll(p, 2, c->hp->idle_timeout_ms);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		for (int i = 0; i < 2; i++) {
			int from = i ? c->up : c->fd, to = i ? c->fd : c->up;  /* i: downstream */
			ssize_t n;

			if (!p[i].revents)
				continue;
			n = recv(from, b, RELAY_BUF, 0);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				(void)shutdown(to, SHUT_WR);
				if (i)
					down_open = false;
				else
					up_open = false;
				if (n < 0)
					up_open = down_open = false;
				continue;
			}
			if (conn_send(c, !i, b, (size_t)n) < 0) {
				up_open = down_open = false;
				break;
			}
		}
	}
	free(b);
}


/*
 * CONNECT: 200, then the ClientHello, which must name the CONNECT host.
 * 0 with the hello in c->buf[0, c->len) and its name in sni; <0 refused
 * (recorded).
 */
int tunnel_read_hello(struct conn *c, size_t head, json_t *event, char *sni, size_t slen)
{
	static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	uint64_t deadline;
	char why[640] = "";
	size_t have = c->len - head;
	int r = 0;

	memmove(c->buf, c->buf + head, have);
	c->len = have;
	if (send_all(c->fd, ok, sizeof(ok) - 1) < 0)
		return -EPIPE;
	deadline = mono_ms() + (uint64_t)c->hp->hello_timeout_ms;
	for (;;) {
		ssize_t n;

		r = c->len ? tls_client_hello_sni((unsigned char *)c->buf, c->len, sni, slen) : 0;
		if (r != 0 || c->len >= TLS_HELLO_MAX)
			break;
		if (wait_readable(c->fd, deadline) <= 0) {
			r = -ETIMEDOUT;
			break;
		}
		n = recv(c->fd, c->buf + c->len, TLS_HELLO_MAX - c->len, 0);
		if (n <= 0) {
			r = -ECONNRESET;
			break;
		}
		c->len += (size_t)n;
	}
	if (r == 1 && strcmp(sni, c->req.host))
		snprintf(why, sizeof(why), "the TLS server name \"%s\" is not the CONNECT host \"%s\"",
			 sni, c->req.host);
	else if (r == -ENOENT)
		snprintf(why, sizeof(why), "a TLS ClientHello without a server name");
	else if (r == -EINVAL || (r == 0 && c->len >= TLS_HELLO_MAX))
		snprintf(why, sizeof(why), "the tunnel does not begin with a TLS ClientHello");
	else if (r == -ETIMEDOUT)
		snprintf(why, sizeof(why), "no TLS ClientHello within %d ms", c->hp->hello_timeout_ms);
	else if (r != 1)
		snprintf(why, sizeof(why), "the client left before its ClientHello");
	if (why[0]) {
		RECORD(c->hp, "http", "{s:I,s:O,s:s,s:s}", "conn", (json_int_t)c->id, "event",
		       event, "outcome", "refused", "reason", why);
		return -EACCES;
	}
	return 0;
}

/* A tunnel cordon does not read: the hello, then both ways. */
void tunnel_connect(struct conn *c, size_t head, json_t *event)
{
	char sni[256] = "";

	if (tunnel_read_hello(c, head, event, sni, sizeof(sni)) < 0)
		return;
	if (conn_send(c, true, c->buf, c->len) == 0)
		relay(c);
	RECORD(c->hp, "http", "{s:I,s:O,s:s,s:s,s:s,s:I,s:I,s:I,s:s*}", "conn",
	       (json_int_t)c->id, "event", event, "outcome",
	       c->why[0] ? "cut" : "tunnel closed", "sni", sni, "addr", c->addr,
	       "bytes_up", (json_int_t)c->up_bytes, "bytes_down",
	       (json_int_t)c->down_bytes, "ms", (json_int_t)(mono_ms() - c->t0_ms),
	       "reason", c->why[0] ? c->why : NULL);
}

/*
 * A CONNECT admitted by an ssh remote's grant: the tunnel carries SSH, which
 * has no server name to check against the CONNECT host (the fronting rule
 * above is TLS's); what is checked is that it is SSH at all: the client's
 * identification string ("SSH-2.0-", RFC 4253 4.2; an OpenSSH client sends
 * it first, without waiting for the server's), within the hello timeout.
 * Attack: the approved push's tree using its grant for another protocol
 * to the approved host:port (it still reaches only that host and port).
 */
void tunnel_ssh(struct conn *c, size_t head, json_t *event)
{
	static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	static const char id[] = "SSH-2.0-";
	uint64_t deadline = mono_ms() + (uint64_t)c->hp->hello_timeout_ms;
	size_t have = c->len - head;
	const char *why = NULL;

	memmove(c->buf, c->buf + head, have);
	c->len = have;
	if (send_all(c->fd, ok, sizeof(ok) - 1) < 0)
		return;
	while (c->len < sizeof(id) - 1) {
		ssize_t n;

		if (memcmp(c->buf, id, c->len))
			break;
		if (wait_readable(c->fd, deadline) <= 0) {
			why = "no SSH identification string in time";
			break;
		}
		n = recv(c->fd, c->buf + c->len, sizeof(id) - 1 - c->len, 0);
		if (n <= 0) {
			why = "the client left before its SSH identification string";
			break;
		}
		c->len += (size_t)n;
	}
	if (!why && memcmp(c->buf, id, sizeof(id) - 1))
		why = "the tunnel of an ssh remote's grant does not begin with \"SSH-2.0-\"";
	if (why) {
		RECORD(c->hp, "http", "{s:I,s:O,s:s,s:s}", "conn", (json_int_t)c->id, "event",
		       event, "outcome", "refused", "reason", why);
		return;
	}
	if (conn_send(c, true, c->buf, c->len) == 0)
		relay(c);
	RECORD(c->hp, "http", "{s:I,s:O,s:s,s:s,s:s,s:I,s:I,s:I,s:s*}", "conn",
	       (json_int_t)c->id, "event", event, "outcome",
	       c->why[0] ? "cut" : "tunnel closed", "protocol", "ssh", "addr", c->addr,
	       "bytes_up", (json_int_t)c->up_bytes, "bytes_down",
	       (json_int_t)c->down_bytes, "ms", (json_int_t)(mono_ms() - c->t0_ms),
	       "reason", c->why[0] ? c->why : NULL);
}

/* Hop-by-hop and proxy fields never go upstream. */
static bool hop_header(const struct http_header *h)
{
	static const char *const hop[] = { "connection", "proxy-connection", "keep-alive",
					   "proxy-authorization", "proxy-authenticate", "te",
					   "trailer", "upgrade", NULL };

	for (int i = 0; hop[i]; i++)
		if (h->name_len == strlen(hop[i]) && !strncasecmp(h->name, hop[i], h->name_len))
			return true;
	return false;
}

/* Plain HTTP, absolute-form: the request once, in origin-form, then the response until close. */
void tunnel_forward(struct conn *c, size_t head, json_t *event)
{
	int ms = c->hp->idle_timeout_ms;
	struct timeval idle = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 };
	char *out = malloc(HTTP_MAX_HEAD + 64);
	size_t o = 0, body = c->len - head;
	int r;

	if (!out)
		return;
	/*
	 * Every read and write below waits at most the idle time: a client
	 * that declares a body and sends none, or an upstream that never
	 * answers or stops reading, costs this thread that long, not for ever
	 * (256 such would have left the proxy refusing everyone with 503).
	 */
	if (setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &idle, sizeof(idle)) < 0 ||
	    setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &idle, sizeof(idle)) < 0 ||
	    setsockopt(c->up, SOL_SOCKET, SO_RCVTIMEO, &idle, sizeof(idle)) < 0 ||
	    setsockopt(c->up, SOL_SOCKET, SO_SNDTIMEO, &idle, sizeof(idle)) < 0) {
		snprintf(c->why, sizeof(c->why), "cannot set the sockets' time limits");
		free(out);
		goto done;
	}
	o += (size_t)snprintf(out, HTTP_MAX_HEAD + 64, "%s %s HTTP/1.1\r\n", c->req.method, c->req.path);
	for (size_t i = 0; i < c->req.n_headers; i++) {
		const struct http_header *h = &c->req.headers[i];

		if (hop_header(h) || o + h->name_len + h->value_len + 4 > HTTP_MAX_HEAD)
			continue;
		memcpy(out + o, h->name, h->name_len);
		o += h->name_len;
		out[o++] = ':';
		out[o++] = ' ';
		memcpy(out + o, h->value, h->value_len);
		o += h->value_len;
		out[o++] = '\r';
		out[o++] = '\n';
	}
	o += (size_t)snprintf(out + o, 64, "Connection: close\r\n\r\n");
	r = conn_send(c, true, out, o);
	free(out);
	if (r < 0)
		goto done;
	/* The body as framed by the client (validated), and nothing after it. */
	if (c->req.chunked) {
		struct http_chunked ch;
		ssize_t k;

		http_chunked_init(&ch);
		for (;;) {
			ssize_t n;

			if (body) {
				k = http_chunked_scan(&ch, c->buf + head, body);
				if (k < 0 || conn_send(c, true, c->buf + head, (size_t)k) < 0)
					goto done;
			}
			if (ch.done)
				break;
			if (wait_readable(c->fd, mono_ms() + (uint64_t)c->hp->idle_timeout_ms) <= 0)
				goto done;
			head = 0;
			n = recv(c->fd, c->buf, sizeof(c->buf), 0);
			if (n <= 0)
				goto done;
			body = (size_t)n;
		}
	} else if (c->req.content_length > 0) {
		uint64_t left = (uint64_t)c->req.content_length;
		size_t first = body < left ? body : (size_t)left;

		if (conn_send(c, true, c->buf + head, first) < 0)
			goto done;
		left -= first;
		while (left) {
			ssize_t n = recv(c->fd, c->buf, left < sizeof(c->buf) ? left : sizeof(c->buf), 0);

			if (n <= 0 || conn_send(c, true, c->buf, (size_t)n) < 0)
				goto done;
			left -= (uint64_t)n;
		}
	}
	/* The response, as it comes, until the server closes. */
	(void)shutdown(c->fd, SHUT_RD);
	for (;;) {
		ssize_t n = recv(c->up, c->buf, sizeof(c->buf), 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || conn_send(c, false, c->buf, (size_t)n) < 0)
			break;
	}
done:
	RECORD(c->hp, "http", "{s:I,s:O,s:s,s:s,s:I,s:I,s:I,s:s*}", "conn",
	       (json_int_t)c->id, "event", event, "outcome",
	       c->why[0] ? "cut" : "forwarded", "addr", c->addr, "bytes_up",
	       (json_int_t)c->up_bytes, "bytes_down", (json_int_t)c->down_bytes,
	       "ms", (json_int_t)(mono_ms() - c->t0_ms), "reason",
	       c->why[0] ? c->why : NULL);
}

