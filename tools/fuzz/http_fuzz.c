// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: the HTTP/1.1 head parser and chunked scanner
 * (userspace/egress/http.c), everything the egress broker and the credential
 * proxy read from the agent or an upstream before acting on it.  The same
 * bytes go to http_parse_request, http_parse_response,
 * http_parse_authority and http_chunked_scan.
 *
 * Memory safety is for the sanitizers.  Checked here:
 *  - a head's length never exceeds the input or HTTP_MAX_HEAD and ends in
 *    CRLFCRLF; "need more" only below HTTP_MAX_HEAD; a refusal is one of
 *    the documented statuses with a reason;
 *  - a prefix of the input is answered "need more" or exactly as the whole
 *    input is (no answer depends on bytes not yet seen, and nothing
 *    accepted early is refused later);
 *  - an accepted request is self-consistent: the form matches the method,
 *    CONNECT carries no body, chunked excludes Content-Length, the host is
 *    canonical (lower case, no brackets, no trailing dot) and parses back
 *    to itself, the fields lie inside the head and hold no CR, LF or NUL;
 *  - http_parse_authority's output is a fixed point, and an explicit port
 *    wins over any default;
 *  - the chunked scanner gives the same answer however the input is split
 *    into reads, never claims more bytes than it was given, and a finished
 *    body ends in CRLF.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int cond)
{
	if (!cond)
		abort();
}

/* Split points derived from the input, so that every input always splits the same way. */
static size_t cut(const uint8_t *d, size_t n, unsigned salt)
{
	uint64_t h = 1469598103934665603ull ^ salt;

	for (size_t i = 0; i < n && i < 64; i++)
		h = (h ^ d[i]) * 1099511628211ull;
	return n ? (size_t)(h % (n + 1)) : 0;
}

static void check_host(const char *host, uint16_t port)
{
	char again[256], text[300];
	uint16_t p2 = 0;
	size_t n = strlen(host);

	check(n > 0 && n < 256 && port != 0);
	check(host[n - 1] != '.' && !strpbrk(host, "[]@%"));
	for (size_t i = 0; i < n; i++)
		check(!(host[i] >= 'A' && host[i] <= 'Z') && host[i] > 0x20 && host[i] < 0x7f);
	snprintf(text, sizeof(text), strchr(host, ':') ? "[%s]:%u" : "%s:%u", host, port);
	check(http_parse_authority(text, strlen(text), again, sizeof(again), &p2, 0) == 0);
	check(!strcmp(again, host) && p2 == port);
}

static void check_fields(const struct http_header *h, size_t n, const char *head, size_t len)
{
	check(n <= HTTP_MAX_HEADERS);
	for (size_t i = 0; i < n; i++) {
		check(h[i].name >= head && h[i].name + h[i].name_len <= head + len);
		check(h[i].value >= head && h[i].value + h[i].value_len <= head + len);
		check(h[i].name_len > 0);
		check(!memchr(h[i].name, ':', h[i].name_len));
		check(!memchr(h[i].name, ' ', h[i].name_len));
		for (size_t k = 0; k < h[i].value_len; k++)
			check(h[i].value[k] != '\r' && h[i].value[k] != '\n' && h[i].value[k] != 0);
		if (h[i].value_len)
			check(h[i].value[0] != ' ' && h[i].value[0] != '\t' &&
			      h[i].value[h[i].value_len - 1] != ' ' &&
			      h[i].value[h[i].value_len - 1] != '\t');
	}
}

static void check_head(int rc, const char *buf, size_t len)
{
	if (rc > 0) {
		check((size_t)rc <= len && rc <= HTTP_MAX_HEAD && rc >= 4);
		check(!memcmp(buf + rc - 4, "\r\n\r\n", 4));
	} else if (rc == 0) {
		check(len < HTTP_MAX_HEAD);
	}
}

static void check_request(const struct http_request *r, int rc, const char *why,
			  const char *buf, size_t len)
{
	check_head(rc, buf, len);
	if (rc < 0) {
		check(rc == -400 || rc == -414 || rc == -417 || rc == -431 || rc == -501 ||
		      rc == -505);
		check(why[0] != '\0');
		return;
	}
	if (rc == 0)
		return;
	check(r->method[0] && strlen(r->target) > 0 && r->target[0] > 0x20);
	check(r->minor == 0 || r->minor == 1);
	check((r->form == HTTP_AUTHORITY_FORM) == !strcmp(r->method, "CONNECT"));
	check(r->form != HTTP_ASTERISK_FORM || !strcmp(r->method, "OPTIONS"));
	switch (r->form) {
	case HTTP_ORIGIN_FORM:
		check(!strcmp(r->path, r->target) && r->path[0] == '/' && !r->scheme[0]);
		break;
	case HTTP_ABSOLUTE_FORM:
		check(r->path[0] == '/' && r->host[0]);
		check(!strcmp(r->scheme, "http") || !strcmp(r->scheme, "https"));
		break;
	case HTTP_AUTHORITY_FORM:
		check(!r->path[0] && !r->scheme[0] && r->host[0]);
		check(!r->chunked && r->content_length <= 0);
		break;
	case HTTP_ASTERISK_FORM:
		check(!r->path[0] && !r->scheme[0] && !strcmp(r->target, "*"));
		break;
	}
	check(r->port != 0);
	if (r->host[0])
		check_host(r->host, r->port);
	check(r->has_host == (http_header_count(r->headers, r->n_headers, "host") == 1));
	check(r->minor == 0 || r->has_host);
	check(r->has_host || !r->host_header[0]);
	check(r->content_length >= -1 && r->content_length < 1000000000000000LL);
	check(!r->chunked || (r->content_length == -1 && r->minor == 1));
	check(http_header_count(r->headers, r->n_headers, "content-length") ==
	      (r->content_length >= 0));
	check(!r->expect_continue || r->minor == 1);
	check(r->minor == 1 || r->close ||
	      http_header_count(r->headers, r->n_headers, "connection") > 0);
	check_fields(r->headers, r->n_headers, buf, (size_t)rc);
}

static void check_response(const struct http_response *s, int rc, const char *why,
			   const char *buf, size_t len)
{
	int mode;

	check_head(rc, buf, len);
	if (rc < 0) {
		check(rc == -502 && why[0] != '\0');
		return;
	}
	if (rc == 0)
		return;
	check(s->status >= 100 && s->status <= 599 && (s->minor == 0 || s->minor == 1));
	check(strlen(s->reason) < sizeof(s->reason));
	check(!s->chunked || (s->content_length == -1 && s->minor == 1));
	check(s->content_length >= -1);
	check_fields(s->headers, s->n_headers, buf, (size_t)rc);
	mode = http_response_body_mode(s, "GET");
	check(mode >= HTTP_BODY_NONE && mode <= HTTP_BODY_CLOSE);
	check(http_response_body_mode(s, "HEAD") == HTTP_BODY_NONE);
}

/* Prefixes at a few offsets, and just around the head's end: 0 or the whole's answer. */
static void check_prefixes(const char *buf, size_t len, int whole, bool response)
{
	static struct http_request r;   /* 17 KiB; libFuzzer runs one input at a time */
	static struct http_response s;
	size_t ks[8];
	size_t nk = 0;

	ks[nk++] = cut((const uint8_t *)buf, len, 1);
	ks[nk++] = cut((const uint8_t *)buf, len, 2);
	ks[nk++] = len / 2;
	ks[nk++] = len ? len - 1 : 0;
	if (whole > 0) {
		ks[nk++] = (size_t)whole - 1;
		ks[nk++] = (size_t)whole;
	}
	for (size_t i = 0; i < nk; i++) {
		size_t k = ks[i];
		char why[64];
		int rc;

		if (k > len)
			continue;
		rc = response ? http_parse_response(buf, k, &s, why, sizeof(why))
			      : http_parse_request(buf, k, &r, why, sizeof(why));
		if (whole > 0)
			check(rc == (k < (size_t)whole ? 0 : whole));
		else
			check(rc == 0 || rc == whole);
	}
}

static void fuzz_authority(const char *s, size_t n)
{
	char h0[256], h80[256];
	uint16_t p0 = 0, p80 = 0;
	int r0, r80;

	if (n > 512)
		n = 512;
	r0 = http_parse_authority(s, n, h0, sizeof(h0), &p0, 0);
	r80 = http_parse_authority(s, n, h80, sizeof(h80), &p80, 80);
	check(r0 == 0 || r0 == -EINVAL);
	check(r80 == 0 || r80 == -EINVAL);
	if (r0 == 0) {
		check(r80 == 0 && !strcmp(h0, h80) && p0 == p80);
		check_host(h0, p0);
	}
	if (r80 == 0)
		check_host(h80, p80);
}

/* Feed buf whole, then in four pieces at cuts derived from it: the answers must agree. */
static void fuzz_chunked(const char *buf, size_t len, unsigned salt)
{
	struct http_chunked whole, part;
	size_t k[5] = { 0 };
	ssize_t w, total = 0;

	for (int i = 1; i < 4; i++) {
		size_t c = cut((const uint8_t *)buf, len, salt + (unsigned)i);
		int j = i;

		for (; j > 1 && k[j - 1] > c; j--)
			k[j] = k[j - 1];
		k[j] = c;
	}
	k[4] = len;
	http_chunked_init(&whole);
	w = http_chunked_scan(&whole, buf, len);
	check(w == -400 || (w >= 0 && (size_t)w <= len));
	if (w >= 0 && (size_t)w < len)
		check(whole.done);
	if (whole.done)
		check(w >= 5 && !memcmp(buf + w - 2, "\r\n", 2));
	http_chunked_init(&part);
	for (int i = 0; i < 4; i++) {
		bool was_done = part.done;
		ssize_t r = http_chunked_scan(&part, buf + k[i], k[i + 1] - k[i]);

		check(r == -400 || (r >= 0 && (size_t)r <= k[i + 1] - k[i]));
		check(!was_done || r == 0);
		if (r < 0) {
			total = r;
			break;
		}
		total += r;
	}
	check(total == w && part.done == whole.done);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct http_request r;
	static struct http_response s;
	const char *buf = (const char *)data;
	char why[128];
	int rq, rs;

	memset(why, 'x', sizeof(why));
	rq = http_parse_request(buf, size, &r, why, sizeof(why));
	check(memchr(why, '\0', sizeof(why)) != NULL);
	check_request(&r, rq, why, buf, size);
	if (rq > 0 && r.chunked)
		fuzz_chunked(buf + rq, size - (size_t)rq, 7);
	check_prefixes(buf, size, rq, false);

	memset(why, 'x', sizeof(why));
	rs = http_parse_response(buf, size, &s, why, sizeof(why));
	check(memchr(why, '\0', sizeof(why)) != NULL);
	check_response(&s, rs, why, buf, size);
	if (rs > 0 && s.chunked)
		fuzz_chunked(buf + rs, size - (size_t)rs, 11);
	check_prefixes(buf, size, rs, true);

	fuzz_authority(buf, size);
	fuzz_chunked(buf, size, 3);
	return 0;
}
