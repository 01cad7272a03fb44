/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A strict HTTP/1.1 message-head parser for the egress broker and the
 * credential proxy, which an assumed-hostile agent talks to.  Pure: no I/O,
 * no allocation, no global state; safe from any number of threads.  Every
 * ambiguity a smuggling or host-confusion attack needs is refused rather
 * than resolved (see http.c for which attacks that closes and which not).
 */
#ifndef CORDON_HTTP_H
#define CORDON_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The parser's parts, each its own module; here for the callers of the whole. */
#include "http_authority.h"
#include "http_chunked.h"
#include "http_fields.h"

/* Empty lines (CRLF) skipped before a request line (RFC 9112 2.2); one more is refused. */
#define HTTP_MAX_LEADING_CRLF 2

enum http_form { HTTP_ORIGIN_FORM, HTTP_ABSOLUTE_FORM, HTTP_AUTHORITY_FORM, HTTP_ASTERISK_FORM };

struct http_request {
	char method[24];
	enum http_form form;
	char target[8192];      /* the request-target as sent, NUL-terminated */
	/*
	 * Lower-case host, no brackets for IPv6, no trailing dot: from the
	 * absolute/authority-form target, else from the Host header ("" if
	 * none).  IP literals in canonical text (inet_ntop; IPv4-mapped IPv6
	 * as IPv4).
	 */
	char host[256];
	/*
	 * Explicit port, else 80 for http:// absolute-form and origin-form, 443
	 * for https:// absolute-form; authority-form (CONNECT) requires an
	 * explicit port.
	 */
	uint16_t port;
	char path[8192];        /* origin/absolute: path and query, "/" if empty; "" otherwise */
	char scheme[8];         /* "http" or "https" for absolute-form, "" otherwise */
	int minor;              /* HTTP/1.minor: 0 or 1 */
	bool has_host;
	char host_header[262];  /* the Host header's value as sent */
	int64_t content_length; /* -1: none */
	bool chunked;           /* Transfer-Encoding: chunked */
	bool close;             /* Connection: close, or HTTP/1.0 without keep-alive */
	bool expect_continue;   /* Expect: 100-continue (ignored in HTTP/1.0, RFC 9110 10.1.1) */
	struct http_header headers[HTTP_MAX_HEADERS];
	size_t n_headers;
};

/*
 * >0: the head is complete and this many bytes long (the body begins
 * there); 0: need more bytes (and len < HTTP_MAX_HEAD); <0: -STATUS, the
 * HTTP status to answer with (400, 414, 417, 431, 501, 505), with a short
 * plain reason in why (always NUL-terminated when whylen > 0).
 *
 * Lines are checked as they complete, so a bad request line is refused
 * before the rest of the head arrives, and a prefix of a buffer never gets
 * an answer other than 0 or the whole buffer's answer.
 */
int http_parse_request(const char *buf, size_t len, struct http_request *r, char *why,
		       size_t whylen);

struct http_response {
	int status;
	int minor;
	char reason[128];       /* truncated if longer */
	int64_t content_length; /* -1: none */
	bool chunked;
	bool close;
	struct http_header headers[HTTP_MAX_HEADERS];
	size_t n_headers;
};

/*
 * The same return convention, but every refusal is -502 (a malformed,
 * oversized or ambiguous upstream head).  http_response_body_mode decides
 * the framing.
 */
int http_parse_response(const char *buf, size_t len, struct http_response *r, char *why,
			size_t whylen);

enum {
	HTTP_BODY_NONE = 0,
	HTTP_BODY_LENGTH = 1,
	HTTP_BODY_CHUNKED = 2,
	HTTP_BODY_CLOSE = 3,
};

/*
 * How the response body is delimited given the request method: 0 none
 * (HEAD, 1xx, 204, 304, or 2xx to CONNECT), 1 content-length, 2 chunked,
 * 3 until close.
 */
int http_response_body_mode(const struct http_response *r, const char *request_method);

/*
 * Whether the body arrives as its own bytes once de-chunked: every element
 * of every Content-Encoding field is identity, and a Transfer-Encoding is
 * the lone coding chunked (the parser also accepts "gzip, chunked", which
 * plain forwarding passes on).
 */
bool http_response_identity(const struct http_response *r);

#endif /* CORDON_HTTP_H */
