// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A strict HTTP/1.1 head parser for the egress broker and the credential
 * proxy (see http.h).  The agent on the other side is assumed hostile, and
 * the proxy forwards what it accepts to a server that parses it again, so
 * whatever two parsers could read differently is refused, never resolved.
 *
 * What this closes:
 *  - Request smuggling through framing disagreement (CL.TE, TE.CL, TE.TE):
 *    Content-Length together with Transfer-Encoding, more than one
 *    Content-Length (even identical), a Content-Length that is not plain
 *    digits, any coding but a lone "chunked", more than one
 *    Transfer-Encoding field, and Transfer-Encoding in HTTP/1.0 are all
 *    refused.  The chunked scanner takes chunk sizes only as bounded hex,
 *    extensions only to their grammar, and every line only with CRLF, so
 *    the body ends where every conforming parser says it ends.
 *  - Header injection through obs-fold and bare CR or LF: a line that
 *    begins with whitespace, a CR not followed by LF and an LF not preceded
 *    by CR are refused, so no later parser can split the head into other
 *    lines than this one did.  Whitespace before a field name's colon
 *    ("Transfer-Encoding : chunked"), control bytes and NUL in values are
 *    refused too.
 *  - Host confusion between the request-target, the Host header and what
 *    is later connected to: one Host header at most (and exactly one in
 *    HTTP/1.1), equal to the target's authority in absolute-form (on
 *    CONNECT only well formed: the target alone is judged and dialled);
 *    userinfo, percent-encoding, zone ids and inet_aton's
 *    other IPv4 spellings refused; the host comes out in one canonical
 *    form (lower case, no trailing dot, IP literals as inet_ntop writes
 *    them), which is what the policy must judge and the caller connect to.
 *
 * What it cannot close, and the caller must:
 *  - the body and what follows it: smuggling stays closed only if the
 *    caller forwards exactly content_length bytes (or what
 *    http_chunked_scan says belongs to the message) and reads whatever
 *    comes next as a new head, or closes;
 *  - slowloris and other slow senders: timeouts and budgets belong to
 *    whoever reads the socket (this parser only bounds sizes);
 *  - SNI: inside a CONNECT tunnel the TLS ClientHello may name another
 *    host than the CONNECT target; the broker must compare them (and
 *    verify the server's certificate against r->host when it originates
 *    TLS itself);
 *  - DNS: a permitted name may resolve to a forbidden address (rebinding);
 *    the resolved address must be judged at connect time;
 *  - hop-by-hop fields (Connection and what it names, Upgrade,
 *    Proxy-Authorization, Keep-Alive, TE): this parser reports them but the
 *    forwarder must strip them, or an "Upgrade: h2c" tunnels past it;
 *  - the path as sent: percent-encoding and dot-segments are not decoded;
 *  - a hostile upstream that sends a body where none may be (204, 304,
 *    HEAD): http_response_body_mode says none, so such a connection must
 *    not be reused.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "http.h"
#include "http_lex.h"

/* --- requests ------------------------------------------------------------ */

static int parse_target(struct http_request *r, size_t n, const char **err)
{
	const char *t = r->target;
	size_t s, a, e;
	uint16_t dport;

	if (!strcmp(r->method, "CONNECT")) {
		r->form = HTTP_AUTHORITY_FORM;
		if (http_parse_authority(t, n, r->host, sizeof(r->host), &r->port, 0) < 0) {
			*err = "CONNECT needs a host:port target";
			return -400;
		}
		return 0;
	}
	if (n == 1 && t[0] == '*') {
		if (strcmp(r->method, "OPTIONS")) {
			*err = "asterisk-form is only for OPTIONS";
			return -400;
		}
		r->form = HTTP_ASTERISK_FORM;
		return 0;
	}
	if (t[0] == '/') {
		r->form = HTTP_ORIGIN_FORM;
		memcpy(r->path, t, n + 1);
		return 0;
	}
	for (s = 0; s < n && t[s] != ':'; s++) {
		unsigned char c = (unsigned char)t[s];

		if (!is_alpha(c) && (!s || (!is_digit(c) && c != '+' && c != '-' && c != '.')))
			break;
	}
	if (s == 0 || s == n || t[s] != ':') {
		*err = "request-target is not in origin, absolute, authority or asterisk form";
		return -400;
	}
	if (n - s < 3 || t[s + 1] != '/' || t[s + 2] != '/') {
		*err = is_digit((unsigned char)t[s + 1]) ? "authority-form is only for CONNECT"
							   : "absolute-form target without '//'";
		return -400;
	}
	if (ieq(t, s, "http")) {
		strcpy(r->scheme, "http");
		dport = 80;
	} else if (ieq(t, s, "https")) {
		strcpy(r->scheme, "https");
		dport = 443;
	} else {
		*err = "scheme is neither http nor https";
		return -400;
	}
	a = s + 3;
	e = a;
	while (e < n && t[e] != '/' && t[e] != '?')
		e++;
	if (http_parse_authority(t + a, e - a, r->host, sizeof(r->host), &r->port, dport) < 0) {
		*err = "bad authority in the request-target";
		return -400;
	}
	r->form = HTTP_ABSOLUTE_FORM;
	if (e == n)
		strcpy(r->path, "/");
	else
		snprintf(r->path, sizeof(r->path), "%s%s", t[e] == '?' ? "/" : "", t + e);
	return 0;
}

#define METHOD_MAX (sizeof(((struct http_request *)0)->method) - 1)
#define TARGET_MAX (sizeof(((struct http_request *)0)->target) - 1)

/*
 * The method and the request-target, byte by byte, so that the start of a
 * request line is refused for exactly what the whole line would be (a
 * 20 KiB target is 414 at its 8192nd byte, not 431 at the head's limit).
 * 0: both and the SP after the target seen (*m the method's length, [*t0,
 * *t1) the target); 1: the bytes ran out first; <0: -status.
 */
static int method_target(const char *line, size_t n, size_t *m, size_t *t0, size_t *t1,
			 const char **err)
{
	size_t i, t;

	for (i = 0; i < n && line[i] != ' '; i++) {
		if (!is_tchar((unsigned char)line[i])) {
			*err = "bad byte in the method";
			return -400;
		}
		if (i == METHOD_MAX) {
			*err = "method not implemented";
			return -501;
		}
	}
	if (i == n)
		return 1;
	if (i == 0) {
		*err = "empty method";
		return -400;
	}
	*m = i;
	for (t = ++i; i < n && line[i] != ' '; i++) {
		unsigned char c = (unsigned char)line[i];

		if (c < 0x21 || c > 0x7e) {
			*err = "bad byte in the request-target";
			return -400;
		}
		if (c == '#') {
			*err = "fragment in the request-target";
			return -400;
		}
		if (i - t == TARGET_MAX) {
			*err = "request-target too long";
			return -414;
		}
	}
	if (i == n)
		return 1;
	if (i == t) {
		*err = "empty request-target";
		return -400;
	}
	*t0 = t;
	*t1 = i;
	return 0;
}

static int request_line(struct http_request *r, const char *line, size_t n, const char **err)
{
	size_t m = 0, t0 = 0, t1 = 0, vn;
	const char *v;
	int rc;

	rc = method_target(line, n, &m, &t0, &t1, err);
	if (rc < 0)
		return rc;
	if (rc > 0) {
		*err = m ? "request line without a version" : "request line without a target";
		return -400;
	}
	v = line + t1 + 1;
	vn = n - t1 - 1;
	if (vn == 8 && !memcmp(v, "HTTP/1.", 7) && (v[7] == '0' || v[7] == '1')) {
		r->minor = v[7] - '0';
	} else if (vn == 8 && !memcmp(v, "HTTP/", 5) && is_digit((unsigned char)v[5]) &&
		   v[6] == '.' && is_digit((unsigned char)v[7])) {
		*err = "HTTP version not supported";
		return -505;
	} else {
		*err = "bad HTTP version";
		return -400;
	}
	memcpy(r->method, line, m);
	r->method[m] = '\0';
	memcpy(r->target, line + t0, t1 - t0);
	r->target[t1 - t0] = '\0';
	return parse_target(r, t1 - t0, err);
}

/*
 * A request line not yet ended (or ended badly): what its bytes so far, up
 * to the first CR or LF, already refuse.  0 when nothing yet.
 */
static int request_line_start(const struct http_fields_lines *l, const char **err)
{
	size_t e = l->pos, m, t0, t1;
	int rc;

	while (e < l->win && l->buf[e] != '\r' && l->buf[e] != '\n')
		e++;
	rc = method_target(l->buf + l->pos, e - l->pos, &m, &t0, &t1, err);
	return rc < 0 ? rc : 0;
}

static int host_header(struct http_request *r, const char **err)
{
	size_t n = http_header_count(r->headers, r->n_headers, "host");
	const struct http_header *h = http_header_get(r->headers, r->n_headers, "host");
	char host[sizeof(r->host)];
	uint16_t port, dport;

	if (n > 1) {
		*err = "more than one Host header";
		return -400;
	}
	if (n == 0) {
		if (r->minor == 1) {
			*err = "HTTP/1.1 request without a Host header";
			return -400;
		}
		if (r->form == HTTP_ORIGIN_FORM || r->form == HTTP_ASTERISK_FORM)
			r->port = 80;
		return 0;
	}
	if (h->value_len >= sizeof(r->host_header)) {
		*err = "Host header too long";
		return -400;
	}
	memcpy(r->host_header, h->value, h->value_len);
	r->host_header[h->value_len] = '\0';
	r->has_host = true;
	/*
	 * A Host without a port means the scheme's default.  CONNECT has no
	 * scheme: there "Host: h" stands for the target's own port, since
	 * clients send both spellings and neither is ambiguous.
	 */
	if (r->form == HTTP_ABSOLUTE_FORM)
		dport = strcmp(r->scheme, "https") ? 80 : 443;
	else if (r->form == HTTP_AUTHORITY_FORM)
		dport = r->port;
	else
		dport = 80;
	if (http_parse_authority(h->value, h->value_len, host, sizeof(host), &port, dport) < 0) {
		*err = "bad Host header";
		return -400;
	}
	if (r->form == HTTP_ABSOLUTE_FORM) {
		if (strcmp(host, r->host) || port != r->port) {
			*err = "Host header does not match the request-target";
			return -400;
		}
		return 0;
	}
	/*
	 * CONNECT: the target alone is judged and dialled, and the Host field
	 * goes nowhere (node sends the proxy's own address there): only its
	 * syntax is checked.  The tunnel's TLS server name is held to the
	 * target by the broker.
	 */
	if (r->form == HTTP_AUTHORITY_FORM)
		return 0;
	memcpy(r->host, host, sizeof(host));
	r->port = port;
	return 0;
}

/* A request's Transfer-Encoding: exactly "chunked". */
static int request_coding(const struct http_header *h, const char **err)
{
	struct http_fields_list l;
	const char *e;
	size_t n, count = 0;
	bool unknown = false;

	http_fields_list_init(&l, h);
	while (http_fields_list_next(&l, &e, &n)) {
		if (!is_token(e, n)) {
			*err = "bad Transfer-Encoding";
			return -400;
		}
		unknown |= !ieq(e, n, "chunked");
		count++;
	}
	if (unknown) {
		*err = "transfer-coding not implemented (only chunked)";
		return -501;
	}
	if (count > 1) {
		*err = "chunked applied more than once";
		return -400;
	}
	return 0;
}

static int request_fields(struct http_request *r, const char **err)
{
	const struct http_header *h = r->headers, *cl, *te;
	size_t nh = r->n_headers, ncl, nte;
	bool keep_alive = false, expect = false;
	int rc;

	rc = host_header(r, err);
	if (rc < 0)
		return rc;

	ncl = http_header_count(h, nh, "content-length");
	cl = http_header_get(h, nh, "content-length");
	nte = http_header_count(h, nh, "transfer-encoding");
	te = http_header_get(h, nh, "transfer-encoding");
	if (ncl > 1) {
		*err = "more than one Content-Length";
		return -400;
	}
	if (cl && !http_fields_length(cl, &r->content_length)) {
		*err = "bad Content-Length";
		return -400;
	}
	if (te && cl) {
		*err = "both Transfer-Encoding and Content-Length";
		return -400;
	}
	if (nte > 1) {
		*err = "more than one Transfer-Encoding field";
		return -400;
	}
	if (te && r->minor == 0) {
		*err = "Transfer-Encoding in an HTTP/1.0 request";
		return -400;
	}
	if (te) {
		rc = request_coding(te, err);
		if (rc < 0)
			return rc;
		r->chunked = true;
	}
	if (r->form == HTTP_AUTHORITY_FORM && (r->chunked || r->content_length > 0)) {
		*err = "CONNECT with a body";
		return -400;
	}

	rc = http_fields_connection(h, nh, &r->close, &keep_alive, err);
	if (rc < 0)
		return rc;
	if (r->minor == 0 && !keep_alive)
		r->close = true;

	for (size_t i = 0; i < nh; i++) {
		if (!ieq(h[i].name, h[i].name_len, "expect"))
			continue;
		if (!ieq(h[i].value, h[i].value_len, "100-continue")) {
			*err = "unsupported expectation";
			return -417;
		}
		expect = true;
	}
	r->expect_continue = expect && r->minor == 1;
	return 0;
}

int http_parse_request(const char *buf, size_t len, struct http_request *r, char *why,
		       size_t whylen)
{
	struct http_fields_lines l = { .buf = buf, .len = len };
	const char *line, *err = NULL;
	size_t n;
	int rc, head;

	l.win = len < HTTP_MAX_HEAD ? len : HTTP_MAX_HEAD;
	memset(r, 0, sizeof(*r));
	r->content_length = -1;
	if (why && whylen)
		why[0] = '\0';
	/* RFC 9112 2.2: a few empty lines may precede the request line (a CRLF after a body). */
	for (int skipped = 0;; skipped++) {
		rc = http_fields_next_line(&l, &line, &n, &err);
		if (rc <= 0) {
			/* A bad method or target is refused before the line ends. */
			const char *early = NULL;
			int e = request_line_start(&l, &early);

			if (e < 0) {
				rc = e;
				err = early;
				l.bad = l.no + 1;
			}
			goto out;
		}
		if (n)
			break;
		if (skipped == HTTP_MAX_LEADING_CRLF) {
			err = "empty lines before the request line";
			l.bad = l.no;
			rc = -400;
			goto out;
		}
	}
	rc = request_line(r, line, n, &err);
	if (rc < 0) {
		l.bad = l.no;
		goto out;
	}
	rc = http_fields_read(&l, r->headers, &r->n_headers, &err);
	if (rc <= 0)
		goto out;
	head = rc;
	rc = request_fields(r, &err);
	if (rc == 0)
		return head;
out:
	return rc < 0 ? fail(why, whylen, -rc, l.bad, err) : 0;
}

/* --- responses ----------------------------------------------------------- */

/* HTTP/1.x SP 3DIGIT [SP reason]: tolerant only of an absent SP before an empty reason. */
static const char *status_line(struct http_response *r, const char *line, size_t n)
{
	size_t i, o = 0;

	if (n < 12 || memcmp(line, "HTTP/1.", 7) || (line[7] != '0' && line[7] != '1') ||
	    line[8] != ' ')
		return "bad status line";
	r->minor = line[7] - '0';
	for (i = 9; i < 12; i++) {
		if (!is_digit((unsigned char)line[i]))
			return "bad status code";
		r->status = r->status * 10 + (line[i] - '0');
	}
	if (r->status < 100 || r->status > 599)
		return "bad status code";
	if (n == 12)
		return NULL;
	if (line[12] != ' ')
		return "bad status line";
	for (i = 13; i < n; i++) {
		if (!is_field_byte((unsigned char)line[i]))
			return "control byte in the reason phrase";
		if (o < sizeof(r->reason) - 1)
			r->reason[o++] = line[i];
	}
	r->reason[o] = '\0';
	return NULL;
}

/* A response's Transfer-Encoding: codings that end in one "chunked", which frames it. */
static const char *response_coding(const struct http_header *h)
{
	struct http_fields_list l;
	const char *e;
	size_t n, chunked = 0;
	bool last = false;

	http_fields_list_init(&l, h);
	while (http_fields_list_next(&l, &e, &n)) {
		if (!is_token(e, n))
			return "bad Transfer-Encoding";
		last = ieq(e, n, "chunked");
		chunked += last;
	}
	if (!last || chunked != 1)
		return "Transfer-Encoding does not end in a single chunked";
	return NULL;
}

static const char *response_fields(struct http_response *r)
{
	const struct http_header *h = r->headers, *te;
	size_t nh = r->n_headers;
	bool keep_alive = false;
	const char *err = NULL;

	for (size_t i = 0; i < nh; i++) {
		int64_t v;

		if (!ieq(h[i].name, h[i].name_len, "content-length"))
			continue;
		if (!http_fields_length(&h[i], &v))
			return "bad Content-Length";
		/* RFC 9110 8.6: identical repeats may be accepted; differing ones never. */
		if (r->content_length >= 0 && v != r->content_length)
			return "Content-Length values differ";
		r->content_length = v;
	}
	te = http_header_get(h, nh, "transfer-encoding");
	if (te && r->content_length >= 0)
		return "both Transfer-Encoding and Content-Length";
	if (http_header_count(h, nh, "transfer-encoding") > 1)
		return "more than one Transfer-Encoding field";
	if (te && r->minor == 0)
		return "Transfer-Encoding in an HTTP/1.0 response";
	if (te) {
		err = response_coding(te);
		if (err)
			return err;
		r->chunked = true;
	}
	if (http_fields_connection(h, nh, &r->close, &keep_alive, &err) < 0)
		return err;
	if (r->minor == 0 && !keep_alive)
		r->close = true;
	return NULL;
}

int http_parse_response(const char *buf, size_t len, struct http_response *r, char *why,
			size_t whylen)
{
	struct http_fields_lines l = { .buf = buf, .len = len };
	const char *line, *err = NULL;
	size_t n;
	int rc;

	l.win = len < HTTP_MAX_HEAD ? len : HTTP_MAX_HEAD;
	memset(r, 0, sizeof(*r));
	r->content_length = -1;
	if (why && whylen)
		why[0] = '\0';
	rc = http_fields_next_line(&l, &line, &n, &err);
	if (rc <= 0)
		goto out;
	err = status_line(r, line, n);
	if (err) {
		l.bad = 1;
		rc = -502;
		goto out;
	}
	rc = http_fields_read(&l, r->headers, &r->n_headers, &err);
	if (rc <= 0)
		goto out;
	err = response_fields(r);
	if (!err)
		return rc;
	rc = -502;
out:
	/* Whatever is wrong with an upstream's head, the client is told 502. */
	return rc < 0 ? fail(why, whylen, 502, l.bad, err) : 0;
}

bool http_response_identity(const struct http_response *r)
{
	for (size_t i = 0; i < r->n_headers; i++) {
		const struct http_header *h = &r->headers[i];
		bool te = ieq(h->name, h->name_len, "transfer-encoding");
		struct http_fields_list l;
		const char *e;
		size_t n, k = 0;

		if (!te && !ieq(h->name, h->name_len, "content-encoding"))
			continue;
		http_fields_list_init(&l, h);
		while (http_fields_list_next(&l, &e, &n))
			if ((te && ++k > 1) || !ieq(e, n, te ? "chunked" : "identity"))
				return false;
	}
	return true;
}

int http_response_body_mode(const struct http_response *r, const char *request_method)
{
	const char *m = request_method ? request_method : "";

	if (!strcmp(m, "HEAD") || (r->status >= 100 && r->status < 200) || r->status == 204 ||
	    r->status == 304)
		return HTTP_BODY_NONE;
	if (!strcmp(m, "CONNECT") && r->status >= 200 && r->status < 300)
		return HTTP_BODY_NONE;
	if (r->chunked)
		return HTTP_BODY_CHUNKED;
	if (r->content_length >= 0)
		return HTTP_BODY_LENGTH;
	return HTTP_BODY_CLOSE;
}
