// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The egress broker's records, plain replies and budgets (broker.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "broker.h"
#include "jsonrpc.h"
#include "proto.h"
#include "util.h"

int chan_send(struct hp *hp, json_t *msg)
{
	size_t len = 0;
	char *line = msg ? jrpc_dump(msg, &len) : NULL;
	int r = -ENOMEM;

	json_decref(msg);
	if (line) {
		pthread_mutex_lock(&hp->chan_lock);
		r = hp->chan_gone ? -EPIPE : send_all(hp->chan_fd, line, len);
		pthread_mutex_unlock(&hp->chan_lock);
		free(line);
	}
	return r;
}

bool chan_wait(struct hp *hp, struct waiter *w, json_t *msg)
{
	bool sent, answered;

	pthread_cond_init(&w->cond, NULL);
	pthread_mutex_lock(&hp->chan_lock);
	w->next = hp->waiters;
	hp->waiters = w;
	pthread_mutex_unlock(&hp->chan_lock);
	sent = chan_send(hp, msg) == 0;
	pthread_mutex_lock(&hp->chan_lock);
	while (sent && !w->decided && !hp->chan_gone)
		pthread_cond_wait(&w->cond, &hp->chan_lock);
	for (struct waiter **pp = &hp->waiters; *pp; pp = &(*pp)->next)
		if (*pp == w) {
			*pp = w->next;
			break;
		}
	answered = w->decided;
	pthread_mutex_unlock(&hp->chan_lock);
	pthread_cond_destroy(&w->cond);
	return answered;
}

bool broker_recording(const struct hp *hp)
{
	return hp->chan_fd >= 0 || hp->audit;
}

void broker_record(struct hp *hp, const char *type, json_t *fields)
{
	if (hp->chan_fd >= 0 && fields) {
		(void)chan_send(hp, proto_record(type, fields));
	} else if (hp->audit && fields) {
		pthread_mutex_lock(&hp->lock);
		(void)audit_write(hp->audit, type, fields);
		pthread_mutex_unlock(&hp->lock);
		if (audit_down(hp->audit, NULL))
			raise(SIGTERM);         /* stop serving: see broker_judge() */
	}
	json_decref(fields);
}

int send_all(int fd, const char *b, size_t n)
{
	while (n) {
		ssize_t w = send(fd, b, n, MSG_NOSIGNAL);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

const char *broker_status_text(int code)
{
	switch (code) {
	case 400: return "Bad Request";
	case 403: return "Forbidden";
	case 408: return "Request Timeout";
	case 413: return "Content Too Large";
	case 414: return "URI Too Long";
	case 417: return "Expectation Failed";
	case 426: return "Upgrade Required";
	case 431: return "Request Header Fields Too Large";
	case 501: return "Not Implemented";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	case 505: return "HTTP Version Not Supported";
	default: return "Error";
	}
}

size_t format_reply(char *b, size_t cap, int code, const char *why)
{
	int n = snprintf(b, cap, "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\n"
			 "Connection: close\r\nContent-Length: %zu\r\n\r\ncordon: %.700s\n", code,
			 broker_status_text(code), strnlen(why, 700) + 9, why);

	return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

void broker_reply(struct conn *c, int code, const char *why)
{
	char b[1024];

	(void)send_all(c->fd, b, format_reply(b, sizeof(b), code, why));
}

int wait_readable(int fd, uint64_t deadline)
{
	for (;;) {
		uint64_t now = mono_ms();
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int r;

		if (now >= deadline)
			return 0;
		r = poll(&p, 1, (int)(deadline - now));
		if (r < 0 && errno == EINTR)
			continue;
		return r < 0 ? -errno : r;
	}
}

/* --- budgets ------------------------------------------------------------------------ */

/*
 * A request is counted before it goes anywhere; once a budget is spent,
 * every new request is refused with its name.  Bytes are counted as they
 * move, and a transfer that crosses the byte budget is cut; tokens are
 * known only when a response's usage has been read, so the request that
 * crosses the token budget completes and the next is refused.
 */
int spend_request(struct hp *hp, char *why, size_t wlen)
{
	const struct pol_budgets *b = &hp->pol->budgets;
	uint64_t n = atomic_fetch_add(&hp->spent_requests, 1) + 1;

	if (b->egress_requests && n > b->egress_requests)
		snprintf(why, wlen, "the session's egress_requests budget (%llu) is spent",
			 (unsigned long long)b->egress_requests);
	else if (b->egress_bytes && atomic_load(&hp->spent_bytes) >= b->egress_bytes)
		snprintf(why, wlen, "the session's egress_bytes budget (%llu) is spent",
			 (unsigned long long)b->egress_bytes);
	else if (b->llm_tokens && atomic_load(&hp->spent_tokens) >= b->llm_tokens)
		snprintf(why, wlen, "the session's llm_tokens budget (%llu) is spent",
			 (unsigned long long)b->llm_tokens);
	else
		return 0;
	return -403;
}

/*
 * false once the byte budget is crossed, with the reason in why.  What
 * counts: every byte of a request or response the broker moves (heads and
 * bodies, as relayed or re-framed), not TLS handshakes or record overhead.
 */
bool spend_bytes(struct hp *hp, uint64_t n, char *why, size_t wlen)
{
	uint64_t lim = hp->pol->budgets.egress_bytes;

	if (!lim || atomic_fetch_add(&hp->spent_bytes, n) + n <= lim)
		return true;
	snprintf(why, wlen, "the session's egress_bytes budget (%llu) is spent",
		 (unsigned long long)lim);
	return false;
}

/*
 * Every byte a plain connection moves goes through here: counted against
 * the byte budget before it is sent (a transfer crossing it is cut), and
 * into the connection's totals.  up: toward the upstream.
 */
int conn_send(struct conn *c, bool up, const char *b, size_t n)
{
	if (!spend_bytes(c->hp, n, c->why, sizeof(c->why)) || send_all(up ? c->up : c->fd, b, n) < 0)
		return -EPIPE;
	if (up)
		c->up_bytes += n;
	else
		c->down_bytes += n;
	return 0;
}

