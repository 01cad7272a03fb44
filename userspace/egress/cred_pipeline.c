// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The credential proxy's request pipeline inside a tunnel (cred_pipeline.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <openssl/err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include "cred_pipeline.h"
#include "broker_judge.h"
#include "llm_tools.h"
#include "llm_usage.h"
#include "stream_scrub.h"
#include "tls_io.h"
#include "tunnel.h"
#include "upstream.h"
#include "util.h"

/* One credential tunnel's state. */
struct ctun {
	struct conn *c;
	int ci;                         /* the credential */
	struct tls_in cl, up;           /* the agent's side, the upstream's */
	struct tls_out to_cl, to_up;    /* what goes to each, coalesced */
	struct sscrub sc;               /* the secrets, masked in responses; one stream each */
	struct http_request *rq;
	struct http_response rs;
	char *out;                      /* scrubbed bytes and chunk framing */
	size_t out_cap;
	uint64_t up_bytes, down_bytes;
	struct llm_usage usage;
	bool usage_estimated;           /* usage unread or cut short: charge by bytes */
	char *jsmall;                   /* a small request body being judged (JUDGE_SMALL) */
	char why[640];
};

/* (Re)open the upstream: TCP by the broker's rules, then TLS verified for the host. */
static int ctun_upstream(struct ctun *t)
{
	struct conn *c = t->c;
	int fd;

	if (t->up.ssl) {
		SSL_free(t->up.ssl);
		t->up.ssl = NULL;
	}
	if (c->up < 0 && c->up_err) {
		/* Not reached at CONNECT: said to this request; the next one tries again. */
		snprintf(t->why, sizeof(t->why), "%s", c->up_why);
		fd = c->up_err;
		c->up_err = 0;
		return fd;
	}
	if (c->up < 0) {
		fd = open_credential_upstream(c, (size_t)t->ci, t->why, sizeof(t->why));
		if (fd < 0)
			return fd;
		c->up = fd;
	}
	t->up.fd = c->up;
	t->up.len = 0;
	if (tlsio_limits(&t->up, c->hp->idle_timeout_ms) < 0) {
		snprintf(t->why, sizeof(t->why), "cannot set the upstream socket's time limits");
		return -EPROTO;
	}
	t->up.ssl = creds_connect(c->hp->creds, (size_t)t->ci, c->req.host, c->up, t->why, sizeof(t->why));
	t->to_up.ssl = t->up.ssl;
	explicit_bzero(t->to_up.buf, t->to_up.len);
	t->to_up.len = 0;
	return t->up.ssl ? 0 : -EPROTO;
}

/* The request's body as the client framed it, and nothing after it. */
static int ctun_request_body(struct ctun *t)
{
	struct tls_in *cl = &t->cl;

	if (t->rq->chunked) {
		struct http_chunked ch;

		http_chunked_init(&ch);
		while (!ch.done) {
			ssize_t k;

			if (!cl->len && (tout_flush(&t->to_up) < 0 ||
					 tin_fill(cl, cl->cap, 0) <= 0))
				return -EPIPE;
			k = http_chunked_scan(&ch, cl->buf, cl->len);
			if (k < 0)
				return -EBADMSG;
			if (!spend_bytes(t->c->hp, (uint64_t)k, t->why, sizeof(t->why)) ||
			    tout_write(&t->to_up, cl->buf, (size_t)k) < 0)
				return -EPIPE;
			t->up_bytes += (uint64_t)k;
			tin_consume(cl, (size_t)k);
		}
		return tout_flush(&t->to_up);
	}
	for (uint64_t left = t->rq->content_length > 0 ? (uint64_t)t->rq->content_length : 0; left;) {
		size_t k;

		if (!cl->len && (tout_flush(&t->to_up) < 0 ||
				 tin_fill(cl, cl->cap, 0) <= 0))
			return -EPIPE;
		k = cl->len < left ? cl->len : (size_t)left;
		if (!spend_bytes(t->c->hp, k, t->why, sizeof(t->why)) ||
		    tout_write(&t->to_up, cl->buf, k) < 0)
			return -EPIPE;
		t->up_bytes += k;
		left -= k;
		tin_consume(cl, k);
	}
	return tout_flush(&t->to_up);
}

/*
 * Bodies read whole and judged before any of it goes upstream (llm_tools.h):
 * every request body to a credential host but a multipart upload (a file,
 * which no API reads as JSON).  The content type is not trusted further:
 * a server may parse a text/plain body as JSON all the same.  Judged in
 * memory, so bounded: 32 MiB, the largest request the LLM APIs take.
 */
#define JUDGED_BODY_MAX (32u << 20)
/*
 * And all of them at once, in one proxy: the proxy runs outside the
 * session's memory budget, so 256 tunnels each holding 32 MiB would have
 * been 8 GiB of the host's memory the agent could take.  Past this, a
 * request is refused with 503 until others are through.  The buffers are
 * not locked in memory (mlockall is for the secrets, and these are
 * bodies the agent sent).
 */
#define JUDGING_MAX (64u << 20)

/* Memory for a large body being judged: a mapping of its own, unlocked. */
static char *judge_buf(size_t cap)
{
	void *p = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	(void)munlock(p, cap);
	return p;
}

/* Hold n more bytes of the proxy's judging allowance: false when it is spent. */
static bool judging_take(struct hp *hp, size_t n)
{
	unsigned long long now = atomic_load(&hp->judging);

	do {
		if (now + n > JUDGING_MAX)
			return false;
	} while (!atomic_compare_exchange_weak(&hp->judging, &now, now + n));
	return true;
}

static bool body_judged(const struct http_request *rq)
{
	const struct http_header *ct = http_header_get(rq->headers, rq->n_headers, "content-type");

	if (!rq->chunked && rq->content_length <= 0)
		return false;
	return !(ct && ct->value_len >= 10 && !strncasecmp(ct->value, "multipart/", 10));
}

/*
 * A body being judged: in the tunnel's own small buffer while it fits
 * (most requests: no system call for it), past that in a mapping of its
 * own, unlocked and counted against the proxy's allowance.
 */
#define JUDGE_SMALL (64u << 10)

struct jbody {
	char *b;
	size_t n, cap;
	bool mapped;
};

/* The body's memory back, wiped (it holds what the agent sent). */
static void judge_free(struct hp *hp, struct jbody *j)
{
	if (!j->b)
		return;
	explicit_bzero(j->b, j->n);
	if (j->mapped) {
		(void)munmap(j->b, j->cap);
		atomic_fetch_sub(&hp->judging, j->cap);
	}
	*j = (struct jbody){ 0 };
}

/* Room for n bytes in all: 0, -E2BIG, -EBUSY (allowance spent), -ENOMEM. */
static int judge_room(struct ctun *t, struct jbody *j, size_t n)
{
	struct hp *hp = t->c->hp;
	size_t nc = j->cap ? j->cap : JUDGE_SMALL;
	char *nb;

	if (n > JUDGED_BODY_MAX)
		return -E2BIG;
	if (n <= j->cap)
		return 0;
	if (!j->b && n <= JUDGE_SMALL) {
		if (!t->jsmall && !(t->jsmall = malloc(JUDGE_SMALL)))
			return -ENOMEM;
		j->b = t->jsmall;
		j->cap = JUDGE_SMALL;
		return 0;
	}
	while (nc < n)
		nc *= 2;
	if (!judging_take(hp, nc))
		return -EBUSY;
	nb = judge_buf(nc);
	if (!nb) {
		atomic_fetch_sub(&hp->judging, nc);
		return -ENOMEM;
	}
	memcpy(nb, j->b, j->n);
	explicit_bzero(j->b, j->n);
	if (j->mapped) {
		(void)munmap(j->b, j->cap);
		atomic_fetch_sub(&hp->judging, j->cap);
	}
	j->b = nb;
	j->cap = nc;
	j->mapped = true;
	return 0;
}

/*
 * The whole body into J (chunked framing taken off; judge_free after): 0,
 * or -EPIPE (the client went, or no memory), -EBADMSG (bad framing),
 * -E2BIG (past the bound), -EBUSY (the proxy's allowance for bodies being
 * judged is spent).
 */
static int ctun_read_body(struct ctun *t, struct jbody *j)
{
	struct tls_in *cl = &t->cl;
	struct http_chunked ch;
	uint64_t left = t->rq->chunked ? 0 : (uint64_t)t->rq->content_length;
	int r = 0;

	if (left > JUDGED_BODY_MAX)
		return -E2BIG;
	http_chunked_init(&ch);
	for (;;) {
		size_t k = 0;

		if (t->rq->chunked ? ch.done : !left)
			break;
		if (!cl->len && tin_fill(cl, cl->cap, 0) <= 0) {
			r = -EPIPE;
			break;
		}
		if (t->rq->chunked) {
			uint64_t data = http_chunked_data_left(&ch);

			if (!data) {    /* framing, a byte at a time */
				if (http_chunked_scan(&ch, cl->buf, 1) < 0) {
					r = -EBADMSG;
					break;
				}
				tin_consume(cl, 1);
				continue;
			}
			k = cl->len < data ? cl->len : (size_t)data;
			(void)http_chunked_scan(&ch, cl->buf, k);
		} else {
			k = cl->len < left ? cl->len : (size_t)left;
			left -= k;
		}
		if ((r = judge_room(t, j, j->n + k)) < 0)
			break;
		memcpy(j->b + j->n, cl->buf, k);
		j->n += k;
		tin_consume(cl, k);
	}
	if (r == -ENOMEM)
		r = -EPIPE;
	if (r < 0)
		judge_free(t->c->hp, j);
	return r;
}

/* A judged body upstream, framed as the head said (one chunk, then the last). */
static int ctun_send_body(struct ctun *t, const char *b, size_t n)
{
	char hdr[24];
	int h = 0;

	if (t->rq->chunked && n)
		h = snprintf(hdr, sizeof(hdr), "%zx\r\n", n);
	if (!spend_bytes(t->c->hp, (uint64_t)n + (uint64_t)h + (t->rq->chunked ? 7 : 0), t->why,
			 sizeof(t->why)))
		return -EPIPE;
	if ((h && tout_write(&t->to_up, hdr, (size_t)h) < 0) ||
	    (n && tout_write(&t->to_up, b, n) < 0) ||
	    (t->rq->chunked && tout_write(&t->to_up, n ? "\r\n0\r\n\r\n" : "0\r\n\r\n",
					   n ? 7 : 5) < 0))
		return -EPIPE;
	t->up_bytes += (uint64_t)n + (uint64_t)h + (t->rq->chunked ? 7 : 0);
	return tout_flush(&t->to_up);
}

/* Scrub n bytes of body data and send them, framed as a chunk if chunked. */
static int ctun_emit(struct ctun *t, struct sscrub *sc, struct llm_usage_parser *up,
		     const char *data, size_t n, bool chunked, bool last)
{
	size_t o = chunked ? 20 : 0, k = 0;
	char *p = t->out + o;
	ssize_t m = n ? sscrub_feed(sc, data, n, p, t->out_cap - o - 8, NULL) : 0;

	if (m >= 0)
		k = (size_t)m;
	if (m >= 0 && last)
		m = sscrub_flush(sc, p + k, t->out_cap - o - 8 - k, NULL);
	if (m < 0)
		return -EPIPE;  /* cannot happen with out_cap from SSCRUB_OUT: fail closed anyway */
	if (last)
		k += (size_t)m;
	if (up && k)
		llm_usage_feed(up, p, k);
	if (chunked && k) {
		char hdr[20];
		int h = snprintf(hdr, sizeof(hdr), "%zx\r\n", k);

		p -= h;
		memcpy(p, hdr, (size_t)h);
		k += (size_t)h;
		p[k++] = '\r';
		p[k++] = '\n';
	}
	if (chunked && last) {
		memcpy(p + k, "0\r\n\r\n", 5);
		k += 5;
	}
	if (!k)
		return 0;
	if (!spend_bytes(t->c->hp, k, t->why, sizeof(t->why))) {
		/* Nothing of the response sent yet: the agent gets a status and why. */
		if (!t->down_bytes)
			tlsio_reply(t->cl.ssl, 403, t->why);
		return -EPIPE;
	}
	if (tout_write(&t->to_cl, p, k) < 0)
		return -EPIPE;
	t->down_bytes += k;
	return 0;
}

/* More of the response; what is ready for the client goes first (streaming). */
static ssize_t ctun_fill_up(struct ctun *t, size_t cap)
{
	if (tout_flush(&t->to_cl) < 0)
		return -EPIPE;
	return tin_fill(&t->up, cap, 0);
}

/*
 * The response, streamed: the head and every body byte pass the scrubber
 * (same-length masks, so Content-Length holds; a chunked body is re-framed
 * around the scrubbed data, trailers dropped) as they arrive.  1: the
 * client connection may carry another request; 0: close it; <0: broken.
 */
static int ctun_response(struct ctun *t)
{
	struct tls_in *up = &t->up;
	struct sscrub *sc = &t->sc;
	struct llm_usage_parser usage, *upp = NULL;
	const struct http_header *ct;
	int r, mode;
	size_t head;
	bool again = true;

	for (;;) {
		r = up->len ? http_parse_response(up->buf, up->len, &t->rs, t->why, sizeof(t->why)) : 0;
		if (r < 0)
			goto bad;
		if (r == 0) {
			ssize_t n = ctun_fill_up(t, HTTP_MAX_HEAD);

			if (n <= 0) {
				snprintf(t->why, sizeof(t->why), "the upstream %s",
					 n == -ENOBUFS ? "sent a head too large" :
					 n == -ETIMEDOUT ? "did not answer in time" : "closed the connection");
				goto bad;
			}
			continue;
		}
		head = (size_t)r;
		if (t->rs.status == 101) {
			snprintf(t->why, sizeof(t->why), "the upstream switched protocols");
			goto bad;
		}
		if (t->rs.status >= 200)
			break;
		/* 1xx: passed on, the real answer follows. */
		if (ctun_emit(t, sc, NULL, up->buf, head, false, true) < 0)
			goto broken;
		tin_consume(up, head);
	}
	/*
	 * The body must reach the scrubber as the bytes the client will read.
	 * Attack: the upstream (or whoever answers as it) echoes the real key
	 * in a compressed body, labelled by a second Content-Encoding field or
	 * by "Transfer-Encoding: gzip, chunked"; scrubbed as raw bytes nothing
	 * matches, and the agent decompresses it itself.  Identity is asked
	 * for upstream; a server that ignores that is refused.  What this
	 * cannot close: a key the upstream re-encodes in a form the scrubber
	 * does not list (base64); no upstream the policy trusts with the key
	 * has reason to.  The reason is not the upstream's words: an error
	 * the proxy writes is not scrubbed.
	 */
	if (!http_response_identity(&t->rs)) {
		snprintf(t->why, sizeof(t->why), "the upstream sent an encoded response (a content or "
			 "transfer coding other than identity and chunked), which cannot be scrubbed");
		goto bad;
	}
	mode = http_response_body_mode(&t->rs, t->rq->method);
	ct = http_header_get(t->rs.headers, t->rs.n_headers, "content-type");
	if (ct && ct->value_len >= 17 && !strncasecmp(ct->value, "text/event-stream", 17)) {
		llm_usage_init(&usage, true, 1u << 20);
		upp = &usage;
	} else if (ct && ct->value_len >= 16 && !strncasecmp(ct->value, "application/json", 16)) {
		llm_usage_init(&usage, false, 1u << 20);
		upp = &usage;
	}
	if (t->rs.close || mode == HTTP_BODY_CLOSE)
		again = false;
	if (ctun_emit(t, sc, NULL, up->buf, head, false, true) < 0)
		goto broken;
	tin_consume(up, head);
	if (mode == HTTP_BODY_LENGTH || mode == HTTP_BODY_CLOSE) {
		uint64_t left = mode == HTTP_BODY_LENGTH ? (uint64_t)t->rs.content_length : UINT64_MAX;

		while (left) {
			size_t k;

			if (!up->len) {
				ssize_t n = ctun_fill_up(t, up->cap);

				if (n <= 0 && mode == HTTP_BODY_CLOSE)
					break;
				if (n <= 0)
					goto broken;
			}
			k = up->len < left ? up->len : (size_t)left;
			if (k > RELAY_BUF)
				k = RELAY_BUF;
			if (ctun_emit(t, sc, upp, up->buf, k, false, false) < 0)
				goto broken;
			left -= k;
			tin_consume(up, k);
		}
		if (ctun_emit(t, sc, upp, NULL, 0, false, true) < 0)
			goto broken;
	} else if (mode == HTTP_BODY_CHUNKED) {
		struct http_chunked ch;

		http_chunked_init(&ch);
		while (!ch.done) {
			uint64_t data;

			if (!up->len && ctun_fill_up(t, up->cap) <= 0)
				goto broken;
			data = http_chunked_data_left(&ch);
			if (data) {
				size_t k = up->len < data ? up->len : (size_t)data;

				if (k > RELAY_BUF)
					k = RELAY_BUF;
				(void)http_chunked_scan(&ch, up->buf, k);
				if (ctun_emit(t, sc, upp, up->buf, k, true, false) < 0)
					goto broken;
				tin_consume(up, k);
				continue;
			}
			/* Framing, a byte at a time (a few bytes per chunk). */
			if (http_chunked_scan(&ch, up->buf, 1) < 0) {
				snprintf(t->why, sizeof(t->why), "the upstream's chunked body is malformed");
				goto broken;
			}
			tin_consume(up, 1);
		}
		if (ctun_emit(t, sc, upp, NULL, 0, true, true) < 0)
			goto broken;
	}
	if (tout_flush(&t->to_cl) < 0)
		goto broken;
	if (upp) {
		llm_usage_finish(upp, &t->usage);
		/* A stream that never said its usage (OpenAI's, unless asked), or said it in part. */
		t->usage_estimated = t->usage.truncated || (upp->sse && !t->usage.seen);
		llm_usage_free(upp);
	}
	return again ? 1 : 0;
bad:
	if (tout_flush(&t->to_cl) == 0)
		tlsio_reply(t->cl.ssl, 502, t->why);
broken:
	if (upp) {
		/* Cut mid-answer (the agent closed early): what was read, and an estimate. */
		llm_usage_finish(upp, &t->usage);
		llm_usage_free(upp);
		t->usage_estimated = true;
	}
	return -EPIPE;
}

/* One request inside the tunnel: 1 keep going, 0 or <0 close. */
static int ctun_request(struct ctun *t)
{
	struct conn *c = t->c;
	struct hp *hp = c->hp;
	struct pol_result res;
	uint64_t t0, deadline = 0;
	json_t *event;
	char upstream_head[HTTP_MAX_HEAD + 4096];
	struct jbody jb = { 0 };
	uint64_t tokens;
	bool judged;
	int r, hl, built;

	/* The head: the first byte may take the idle time, the rest the head timeout. */
	for (;;) {
		ssize_t n;

		r = t->cl.len ? http_parse_request(t->cl.buf, t->cl.len, t->rq, t->why,
						   sizeof(t->why)) : 0;
		if (r > 0)
			break;
		if (r < 0) {
			tlsio_reply(t->cl.ssl, -r, t->why);
			return r;
		}
		if (t->cl.len && !deadline)
			deadline = mono_ms() + (uint64_t)hp->head_timeout_ms;
		n = tin_fill(&t->cl, HTTP_MAX_HEAD, deadline);
		if (n == -ENOBUFS)
			tlsio_reply(t->cl.ssl, 431, "request head too large");
		else if (n == -ETIMEDOUT && deadline)
			tlsio_reply(t->cl.ssl, 408, "the request head did not arrive in time");
		if (n <= 0)
			return 0;
	}
	t0 = mono_ms();
	event = pol_event_http(t->rq->method, c->req.host, c->req.port, t->rq->path);
	/*
	 * A WebSocket (Codex opens one to /v1/responses first) would carry
	 * its requests as frames this proxy does not read: their tools would
	 * reach the provider unjudged.  Refused, as 426, on which Codex falls
	 * back to HTTPS at once (a 403 it retries five times first).
	 */
	if (http_header_get(t->rq->headers, t->rq->n_headers, "upgrade")) {
		snprintf(t->why, sizeof(t->why), "the credential proxy relays HTTP requests, not a "
			 "protocol upgrade (a WebSocket's messages would reach the provider unjudged): "
			 "use HTTPS");
		RECORD(hp, "http", "{s:I,s:O,s:s,s:s}", "conn", (json_int_t)c->id, "event",
		       event, "outcome", "refused", "reason", t->why);
		tlsio_reply_api(t->cl.ssl, t->rq->path, 426, t->why);
		json_decref(event);
		return 0;
	}
	if (creds_check(hp->creds, (size_t)t->ci, t->rq, c->req.host, c->req.port, t->why,
			sizeof(t->why)) < 0 ||
	    !broker_judge(c, event, c->req.host, c->req.port, &res, t->why, sizeof(t->why)) ||
	    spend_request(hp, t->why, sizeof(t->why)) < 0) {
		RECORD(hp, "http", "{s:I,s:O,s:s,s:s}", "conn", (json_int_t)c->id, "event",
		       event, "outcome", "refused", "reason", t->why);
		tlsio_reply_api(t->cl.ssl, t->rq->path, 403, t->why);
		json_decref(event);
		return 0;
	}
	t->why[0] = 0;  /* from here on: why the exchange broke, if it does */
	/*
	 * The only place the secret is written: into the upstream TLS stream,
	 * then wiped.  The head is built while the request's header fields
	 * still point at the bytes that were parsed and checked: only then is
	 * the head consumed.  Attack closed: consumed first, the buffer's
	 * memmove put the body where the fields pointed, so body bytes went
	 * upstream as header lines (a body carrying CR LF and a second request
	 * line smuggled any method and path to the credential host, the real
	 * key appended after it).
	 */
	built = creds_upstream_head(hp->creds, (size_t)t->ci, t->rq, upstream_head,
				    sizeof(upstream_head));
	judged = body_judged(t->rq);
	tin_consume(&t->cl, (size_t)r);
	hl = built;
	/*
	 * A body that may declare tools the provider runs is read whole and
	 * judged before the head or any of it goes upstream (llm_tools.h).
	 */
	if (hl >= 0 && judged) {
		const struct pol_credential *cr = creds_at(hp->creds, (size_t)t->ci,
							   &(const char *){ NULL });

		r = t->rq->expect_continue ? tlsio_send(t->cl.ssl, "HTTP/1.1 100 Continue\r\n\r\n", 25) : 0;
		r = r ?: ctun_read_body(t, &jb);
		if (r == -E2BIG || r == -EBADMSG || r == -EBUSY)
			snprintf(t->why, sizeof(t->why), "%s", r == -E2BIG ?
				 "the request body is larger than the credential proxy judges (32 MiB)" :
				 r == -EBUSY ? "the credential proxy is judging as many request bodies "
				 "as it holds at once: retry" :
				 "the request body's chunked framing is malformed");
		else if (r == 0)
			r = llm_tools_check(jb.b ? jb.b : "", jb.n, cr->server_tools, cr->n_server_tools,
					    t->why, sizeof(t->why));
		/* Refused with a reason (a client that went gets none). */
		if (r < 0 && r != -EPIPE) {
			RECORD(hp, "http", "{s:I,s:O,s:s,s:s}", "conn", (json_int_t)c->id, "event",
			       event, "outcome", "refused", "reason", t->why);
			tlsio_reply_api(t->cl.ssl, t->rq->path, r == -E2BIG ? 413 : r == -EBUSY ? 503 :
					400, t->why);
		}
		if (r < 0) {
			explicit_bzero(upstream_head, (size_t)built + 1);
			judge_free(hp, &jb);
			json_decref(event);
			return 0;
		}
	}
	/* Only a request that passed everything reaches the provider, even for a handshake. */
	if (!t->up.ssl && (r = ctun_upstream(t)) < 0) {
		RECORD(hp, "http", "{s:I,s:O,s:s,s:s}", "conn", (json_int_t)c->id, "event",
		       event, "outcome", "refused", "reason", t->why);
		tlsio_reply(t->cl.ssl, r == -EACCES ? 403 : r == -ETIMEDOUT ? 504 : 502, t->why);
		explicit_bzero(upstream_head, built < 0 ? 0 : (size_t)built + 1);
		judge_free(hp, &jb);
		json_decref(event);
		return -EPIPE;
	}
	if (hl >= 0 && !spend_bytes(hp, (uint64_t)hl, t->why, sizeof(t->why))) {
		tlsio_reply(t->cl.ssl, 403, t->why);
		hl = -EDQUOT;
	}
	r = hl < 0 ? hl : tout_write(&t->to_up, upstream_head, (size_t)hl);
	/*
	 * What was built, and its NUL (a build that failed wiped the whole
	 * buffer itself): not all 20 KB on every request.
	 */
	explicit_bzero(upstream_head, built < 0 ? 0 : (size_t)built + 1);
	if (hl >= 0)
		t->up_bytes += (uint64_t)hl;
	if (judged) {
		r = r ?: ctun_send_body(t, jb.b, jb.n);
		judge_free(hp, &jb);
	} else {
		if (r == 0 && t->rq->expect_continue)
			r = tlsio_send(t->cl.ssl, "HTTP/1.1 100 Continue\r\n\r\n", 25);
		r = r ?: ctun_request_body(t);
	}
	memset(&t->usage, 0, sizeof(t->usage));
	t->usage_estimated = false;
	r = r ?: ctun_response(t);
	tokens = t->usage.input + t->usage.output;
	/*
	 * The llm_tokens budget must hold against an agent that hides usage:
	 * a streamed answer without it (OpenAI's chat completions stream
	 * leaves it out unless the request asks), an answer cut short by
	 * closing the tunnel before its last event, a body past what the
	 * parser keeps.  The provider bills those tokens all the same, so
	 * they are charged as the bytes both ways, heads included: a token is
	 * at least a byte of text, so this over-counts rather than under.
	 * What it cannot close: requests already in flight when the budget is
	 * spent are answered (the overshoot is at most one exchange per open
	 * tunnel).
	 */
	if (t->usage_estimated && t->up_bytes + t->down_bytes > tokens)
		tokens = t->up_bytes + t->down_bytes;
	if (tokens)
		atomic_fetch_add(&hp->spent_tokens, tokens);
	RECORD(hp, "http", "{s:I,s:O,s:s,s:s,s:i,s:I,s:I,s:{s:I,s:I,s:I,s:b},s:I,s:s*}", "conn",
	       (json_int_t)c->id, "event", event, "credential",
	       creds_at(hp->creds, (size_t)t->ci, &(const char *){ NULL })->name,
	       "outcome", r < 0 ? "broken" : "forwarded", "status",
	       r < 0 ? 0 : t->rs.status, "bytes_up", (json_int_t)t->up_bytes,
	       "bytes_down", (json_int_t)t->down_bytes, "tokens", "input",
	       (json_int_t)t->usage.input, "output", (json_int_t)t->usage.output,
	       "charged", (json_int_t)tokens, "estimated", t->usage_estimated,
	       "ms", (json_int_t)(mono_ms() - t0), "reason",
	       r < 0 && t->why[0] ? t->why : NULL);
	json_decref(event);
	c->up_bytes += t->up_bytes;
	c->down_bytes += t->down_bytes;
	t->up_bytes = t->down_bytes = 0;
	/* An upstream that closes (its response says so) ends the tunnel too. */
	return r < 0 ? r : r == 1 && !t->rq->close;
}

/*
 * CONNECT to a credential host: cordon is the TLS server (a leaf from the
 * session CA), reads each request, and is the TLS client upstream.
 */
void cred_pipeline_tunnel(struct conn *c, size_t head, json_t *event, int ci)
{
	struct ctun t = { .c = c, .ci = ci };
	char sni[256] = "";
	int r = 0;

	if (tunnel_read_hello(c, head, event, sni, sizeof(sni)) < 0)
		return;
	t.cl.cap = t.up.cap = HTTP_MAX_HEAD + RELAY_BUF;
	t.out_cap = SSCRUB_OUT(RELAY_BUF > HTTP_MAX_HEAD ? RELAY_BUF : HTTP_MAX_HEAD) + 64;
	t.cl.buf = malloc(t.cl.cap);
	t.up.buf = malloc(t.up.cap);
	t.out = malloc(t.out_cap);
	t.rq = malloc(sizeof(*t.rq));
	/* Room for a whole upstream head (HTTP_MAX_HEAD + what cordon adds) and some body. */
	t.to_cl.cap = t.to_up.cap = HTTP_MAX_HEAD + 4096 + RELAY_BUF;
	t.to_cl.buf = malloc(t.to_cl.cap);
	t.to_up.buf = malloc(t.to_up.cap);
	if (!t.cl.buf || !t.up.buf || !t.out || !t.rq || !t.to_cl.buf || !t.to_up.buf)
		goto out;
	/* Every secret is masked in every response, whichever credential the tunnel is for. */
	for (size_t i = 0; i < creds_n_secrets(c->hp->creds); i++) {
		size_t len;
		const char *v = creds_secret(c->hp->creds, i, &len);

		if (v && sscrub_add(&t.sc, v, len) < 0)
			goto out;
	}
	t.cl.fd = c->fd;
	if (tlsio_limits(&t.cl, c->hp->idle_timeout_ms) < 0)
		goto out;
	t.cl.ssl = creds_accept(c->hp->creds, c->req.host, c->fd, c->buf, c->len, t.why,
				sizeof(t.why));
	t.to_cl.ssl = t.cl.ssl;
	if (!t.cl.ssl) {
		RECORD(c->hp, "http", "{s:I,s:O,s:s,s:s}", "conn", (json_int_t)c->id, "event",
		       event, "outcome", "refused", "reason", t.why);
		goto out;
	}
	while ((r = ctun_request(&t)) == 1)
		;
	SSL_shutdown(t.cl.ssl);
	RECORD(c->hp, "http", "{s:I,s:O,s:s,s:s,s:I,s:I,s:I}", "conn", (json_int_t)c->id,
	       "event", event, "outcome", "tunnel closed", "sni", sni,
	       "bytes_up", (json_int_t)c->up_bytes, "bytes_down",
	       (json_int_t)c->down_bytes, "ms",
	       (json_int_t)(mono_ms() - c->t0_ms));
out:
	if (t.up.ssl)
		SSL_free(t.up.ssl);
	if (t.cl.ssl)
		SSL_free(t.cl.ssl);
	free(t.cl.buf);
	free(t.up.buf);
	free(t.out);
	free(t.rq);
	if (t.to_up.buf)
		explicit_bzero(t.to_up.buf, t.to_up.cap);
	free(t.to_up.buf);
	free(t.to_cl.buf);
	if (t.jsmall)
		explicit_bzero(t.jsmall, JUDGE_SMALL);
	free(t.jsmall);
	sscrub_free(&t.sc);
}

