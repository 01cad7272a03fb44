// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Reading and writing one side of a credential tunnel's TLS (tls_io.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <openssl/err.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "broker.h"
#include "llm_tools.h"
#include "tls_io.h"
#include "util.h"

/*
 * Time limits on a tunnel's socket, both ways, before its TLS handshake:
 * a peer that stalls mid-handshake, mid-record or stops reading costs this
 * connection's thread at most the idle time per read or write, never for
 * ever.  (A peer that dribbles a byte just inside each limit can stretch
 * one record; it ties up only its own session's broker.)
 */
static int tin_limit(struct tls_in *t, uint64_t ms)
{
	struct timeval tv = { .tv_sec = (time_t)(ms / 1000), .tv_usec = (suseconds_t)(ms % 1000) * 1000 };

	if (setsockopt(t->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
		return -errno;
	t->timeo_ms = ms;
	return 0;
}

int tlsio_limits(struct tls_in *t, int idle_ms)
{
	struct timeval tv = { .tv_sec = idle_ms / 1000, .tv_usec = (idle_ms % 1000) * 1000 };

	if (setsockopt(t->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0)
		return -errno;
	t->idle_ms = (uint64_t)idle_ms;
	return tin_limit(t, t->idle_ms);
}

/*
 * More bytes (>0), 0 at the end of the stream, -ETIMEDOUT past the
 * deadline (0: the idle time from now), <0 errors.  The wait is the
 * socket's receive timeout, not a poll(2) before each read: one system
 * call per fill on a request/response exchange instead of two.  The
 * timeout is set only when it changes (the idle time, always the same,
 * stays; a head's deadline is re-set for each partial read).
 */
ssize_t tin_fill(struct tls_in *t, size_t cap, uint64_t deadline)
{
	uint64_t ms = t->idle_ms, now;
	int n, r;

	if (cap > t->cap)
		cap = t->cap;
	if (t->len >= cap)
		return -ENOBUFS;
	if (deadline) {
		now = mono_ms();
		if (deadline <= now)
			return -ETIMEDOUT;
		ms = deadline - now;
	}
	if (ms != t->timeo_ms && (r = tin_limit(t, ms)) < 0)
		return r;
	n = SSL_read(t->ssl, t->buf + t->len, (int)(cap - t->len));
	if (n <= 0) {
		r = SSL_get_error(t->ssl, n);
		ERR_clear_error();
		/* The receive timeout: OpenSSL sees EAGAIN as a read to retry. */
		if (r == SSL_ERROR_WANT_READ || (r == SSL_ERROR_SYSCALL && errno == EAGAIN))
			return -ETIMEDOUT;
		return 0;
	}
	t->len += (size_t)n;
	return n;
}

void tin_consume(struct tls_in *t, size_t n)
{
	memmove(t->buf, t->buf + n, t->len - n);
	t->len -= n;
}

int tlsio_send(SSL *ssl, const char *b, size_t n)
{
	while (n) {
		int w = SSL_write(ssl, b, (int)(n > INT_MAX ? INT_MAX : n));

		if (w <= 0) {
			ERR_clear_error();
			return -EPIPE;
		}
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

int tout_flush(struct tls_out *o)
{
	int r = o->len ? tlsio_send(o->ssl, o->buf, o->len) : 0;

	explicit_bzero(o->buf, o->len);
	o->len = 0;
	return r;
}

int tout_write(struct tls_out *o, const char *b, size_t n)
{
	if (o->len + n > o->cap && tout_flush(o) < 0)
		return -EPIPE;
	if (n > o->cap)
		return tlsio_send(o->ssl, b, n);
	memcpy(o->buf + o->len, b, n);
	o->len += n;
	return 0;
}

void tlsio_reply(SSL *ssl, int code, const char *why)
{
	char b[1024];

	(void)tlsio_send(ssl, b, format_reply(b, sizeof(b), code, why));
}

/*
 * A refusal inside a credential tunnel, where the client is an LLM SDK:
 * the provider's own error JSON (llm_error_json), so that the agent's CLI
 * shows what was refused and why instead of a parse error or nothing.
 * The status decides whether the CLI retries: 400 is retried by none of
 * them (Codex retries 403 and 422 five times, "Reconnecting... 5/5",
 * before it says anything), so a request that will never pass, a tool the
 * policy refuses, answers 400; an endpoint or sentinel refusal keeps 403.
 */
void tlsio_reply_api(SSL *ssl, const char *path, int code, const char *why)
{
	char b[1400], j[1100];
	int n = llm_error_json(path, code, why, j, sizeof(j));
	int m;

	if (n < 0) {
		tlsio_reply(ssl, code, why);
		return;
	}
	m = snprintf(b, sizeof(b), "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
		     "Connection: close\r\nContent-Length: %d\r\n\r\n%s", code, broker_status_text(code),
		     n, j);
	if (m > 0 && (size_t)m < sizeof(b))
		(void)tlsio_send(ssl, b, (size_t)m);
}

