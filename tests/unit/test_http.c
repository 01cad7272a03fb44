// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The HTTP/1.1 head parser (userspace/egress/http.c): each request form parsed to
 * the fields the proxy acts on; every strictness rule refuses with its
 * status (one test per rule); the classic smuggling spellings are refused;
 * a prefix of a head is never answered differently from the whole; the
 * authority parser keeps one spelling per host; responses and their body
 * framing; the chunked scanner gives the same answer however its input is
 * split.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "http.h"

/* "The head is the whole input": the expected answer of a complete, valid head. */
#define WHOLE 1000000

struct fx {
	char *buf;              /* an exact-size copy of the input, so ASan sees overreads */
	struct http_request r;
	struct http_response s;
	char why[128];
};

static int setup(void **state)
{
	*state = calloc(1, sizeof(struct fx));
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	free(f->buf);
	free(f);
	return 0;
}

static const char *esc(const char *s, size_t n, char *out, size_t outlen)
{
	size_t o = 0;

	for (size_t i = 0; i < n && o + 5 < outlen; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\r')
			o += (size_t)snprintf(out + o, outlen - o, "\\r");
		else if (c == '\n')
			o += (size_t)snprintf(out + o, outlen - o, "\\n");
		else if (c < 0x20 || c >= 0x7f)
			o += (size_t)snprintf(out + o, outlen - o, "\\x%02x", c);
		else
			out[o++] = (char)c;
	}
	out[o] = '\0';
	return out;
}

static void copy_in(struct fx *f, const char *text, size_t len)
{
	free(f->buf);
	f->buf = malloc(len ? len : 1);
	assert_non_null(f->buf);
	memcpy(f->buf, text, len);
}

static int req(struct fx *f, const char *text, size_t len)
{
	int rc;

	copy_in(f, text, len);
	memset(f->why, 'x', sizeof(f->why));
	rc = http_parse_request(f->buf, len, &f->r, f->why, sizeof(f->why));
	assert_non_null(memchr(f->why, '\0', sizeof(f->why)));
	if (rc < 0)
		assert_true(f->why[0]);
	return rc;
}

static int resp(struct fx *f, const char *text, size_t len)
{
	int rc;

	copy_in(f, text, len);
	rc = http_parse_response(f->buf, len, &f->s, f->why, sizeof(f->why));
	if (rc < 0)
		assert_true(f->why[0]);
	return rc;
}

static void check(struct fx *f, bool response, const char *text, size_t len, int want, int line)
{
	int rc = response ? resp(f, text, len) : req(f, text, len);
	char e[512];

	if (want == WHOLE)
		want = (int)len;
	if (rc != want)
		fail_msg("line %d: %s -> %d (%s), want %d", line, esc(text, len, e, sizeof(e)), rc,
			 rc < 0 ? f->why : "", want);
}

/* Literals only (sizeof), so that embedded NULs count. */
#define expect_req(f, text, want) check((f), false, (text), sizeof(text) - 1, (want), __LINE__)
#define expect_resp(f, text, want) check((f), true, (text), sizeof(text) - 1, (want), __LINE__)

/* A POST with Host and the field lines `hdr` (each with its CRLF): answered `want`. */
static void check_field(struct fx *f, const char *hdr, size_t len, int want, int line)
{
	static const char pre[] = "POST /x HTTP/1.1\r\nHost: a.example\r\n";
	char text[512];
	size_t n = sizeof(pre) - 1;

	assert_true(n + len + 2 <= sizeof(text));
	memcpy(text, pre, n);
	memcpy(text + n, hdr, len);
	memcpy(text + n + len, "\r\n", 2);
	check(f, false, text, n + len + 2, want, line);
}

#define expect_with_field(f, hdr, want) check_field((f), (hdr), sizeof(hdr) - 1, (want), __LINE__)

/* --- request forms ----------------------------------------------------------- */

static void origin_form(void **state)
{
	struct fx *f = *state;
	static const char text[] = "GET /a/b?c=d HTTP/1.1\r\nHost: Example.COM.\r\n"
				   "User-Agent:  curl/8 \t\r\nAccept: */*\r\n\r\nBODY";
	struct http_request *r = &f->r;

	assert_int_equal(req(f, text, sizeof(text) - 1), sizeof(text) - 1 - 4);
	assert_string_equal(r->method, "GET");
	assert_int_equal(r->form, HTTP_ORIGIN_FORM);
	assert_string_equal(r->target, "/a/b?c=d");
	assert_string_equal(r->path, "/a/b?c=d");
	assert_string_equal(r->scheme, "");
	assert_string_equal(r->host, "example.com");
	assert_int_equal(r->port, 80);
	assert_int_equal(r->minor, 1);
	assert_true(r->has_host);
	assert_string_equal(r->host_header, "Example.COM.");
	assert_int_equal(r->content_length, -1);
	assert_false(r->chunked);
	assert_false(r->close);
	assert_false(r->expect_continue);
	assert_int_equal(r->n_headers, 3);
	assert_int_equal(r->headers[1].name_len, 10);
	assert_memory_equal(r->headers[1].value, "curl/8", 6);
	assert_int_equal(r->headers[1].value_len, 6);
	assert_ptr_equal(r->headers[1].name, f->buf + (strstr(text, "User-Agent") - text));

	expect_req(f, "GET / HTTP/1.1\r\nHost: a.example:8080\r\n\r\n", WHOLE);
	assert_string_equal(r->host, "a.example");
	assert_int_equal(r->port, 8080);
	/* HTTP/1.0 may leave Host out: no host, the default port. */
	expect_req(f, "GET /x HTTP/1.0\r\n\r\n", WHOLE);
	assert_string_equal(r->host, "");
	assert_int_equal(r->port, 80);
	assert_false(r->has_host);
	assert_int_equal(r->minor, 0);
}

static void absolute_form(void **state)
{
	struct fx *f = *state;
	struct http_request *r = &f->r;

	expect_req(f, "GET http://Example.com:8080?q=1 HTTP/1.1\r\nHost: example.com:8080\r\n\r\n",
		   WHOLE);
	assert_int_equal(r->form, HTTP_ABSOLUTE_FORM);
	assert_string_equal(r->scheme, "http");
	assert_string_equal(r->host, "example.com");
	assert_int_equal(r->port, 8080);
	assert_string_equal(r->path, "/?q=1");
	assert_string_equal(r->target, "http://Example.com:8080?q=1");

	expect_req(f, "GET HTTPS://a.example/x/y HTTP/1.1\r\nHost: a.example\r\n\r\n", WHOLE);
	assert_string_equal(r->scheme, "https");
	assert_int_equal(r->port, 443);
	assert_string_equal(r->path, "/x/y");
	expect_req(f, "GET http://a.example HTTP/1.1\r\nHost: A.EXAMPLE:80\r\n\r\n", WHOLE);
	assert_string_equal(r->path, "/");
	expect_req(f, "GET http://[::1]:8080/ HTTP/1.1\r\nHost: [0:0::1]:8080\r\n\r\n", WHOLE);
	assert_string_equal(r->host, "::1");
	/* HTTP/1.0 without Host: the target alone names the host. */
	expect_req(f, "GET http://a.example/ HTTP/1.0\r\n\r\n", WHOLE);
	assert_string_equal(r->host, "a.example");
	assert_int_equal(r->port, 80);
}

static void authority_form(void **state)
{
	struct fx *f = *state;
	struct http_request *r = &f->r;

	expect_req(f, "CONNECT api.Example.com:443 HTTP/1.1\r\nHost: api.example.com:443\r\n\r\n",
		   WHOLE);
	assert_int_equal(r->form, HTTP_AUTHORITY_FORM);
	assert_string_equal(r->host, "api.example.com");
	assert_int_equal(r->port, 443);
	assert_string_equal(r->path, "");
	assert_string_equal(r->scheme, "");
	/* A Host without a port stands for the target's. */
	expect_req(f, "CONNECT a.example:8443 HTTP/1.1\r\nHost: a.example\r\n\r\n", WHOLE);
	expect_req(f, "CONNECT [2001:DB8::1]:443 HTTP/1.1\r\nHost: [2001:db8::1]:443\r\n\r\n",
		   WHOLE);
	assert_string_equal(r->host, "2001:db8::1");
	expect_req(f, "CONNECT a.example:443 HTTP/1.1\r\nHost: a.example:443\r\n"
		   "Content-Length: 0\r\n\r\n", WHOLE);
}

static void authority_form_only_with_connect(void **state)
{
	struct fx *f = *state;

	expect_req(f, "CONNECT a.example HTTP/1.1\r\nHost: a.example\r\n\r\n", -400);
	expect_req(f, "CONNECT / HTTP/1.1\r\nHost: a.example\r\n\r\n", -400);
	expect_req(f, "CONNECT http://a.example:443/ HTTP/1.1\r\nHost: a.example\r\n\r\n", -400);
	expect_req(f, "CONNECT * HTTP/1.1\r\nHost: a.example\r\n\r\n", -400);
	expect_req(f, "CONNECT a.example:0 HTTP/1.1\r\nHost: a.example\r\n\r\n", -400);
	expect_req(f, "CONNECT u@a.example:443 HTTP/1.1\r\nHost: a.example\r\n\r\n", -400);
	expect_req(f, "GET a.example:443 HTTP/1.1\r\nHost: a.example\r\n\r\n", -400);
	expect_req(f, "POST a.example:443 HTTP/1.1\r\nHost: a.example\r\n\r\n", -400);
	expect_req(f, "connect a.example:443 HTTP/1.1\r\nHost: a.example\r\n\r\n", -400);
	/*
	 * Host on CONNECT goes nowhere (node sends the proxy's address): the
	 * target alone counts, the field only has to be well formed.
	 */
	{
		struct http_request r;
		char why[128];
		const char *t = "CONNECT a.example:443 HTTP/1.1\r\nHost: 127.0.0.1:3128\r\n\r\n";

		assert_int_equal(http_parse_request(t, strlen(t), &r, why, sizeof(why)),
				 (int)strlen(t));
		assert_string_equal(r.host, "a.example");
		assert_int_equal(r.port, 443);
	}
	expect_req(f, "CONNECT a.example:443 HTTP/1.1\r\nHost: u@b.example\r\n\r\n", -400);
}

static void connect_with_a_body(void **state)
{
	struct fx *f = *state;

	expect_req(f, "CONNECT a.example:443 HTTP/1.1\r\nHost: a.example\r\n"
		   "Content-Length: 5\r\n\r\n", -400);
	expect_req(f, "CONNECT a.example:443 HTTP/1.1\r\nHost: a.example\r\n"
		   "Transfer-Encoding: chunked\r\n\r\n", -400);
}

static void asterisk_form(void **state)
{
	struct fx *f = *state;
	struct http_request *r = &f->r;

	expect_req(f, "OPTIONS * HTTP/1.1\r\nHost: a.example:81\r\n\r\n", WHOLE);
	assert_int_equal(r->form, HTTP_ASTERISK_FORM);
	assert_string_equal(r->path, "");
	assert_string_equal(r->host, "a.example");
	assert_int_equal(r->port, 81);
	expect_req(f, "OPTIONS /x HTTP/1.1\r\nHost: a.example\r\n\r\n", WHOLE);
	expect_req(f, "GET * HTTP/1.1\r\nHost: a.example\r\n\r\n", -400);
	expect_req(f, "OPTIONS *x HTTP/1.1\r\nHost: a.example\r\n\r\n", -400);
}

/* --- line endings and sizes -------------------------------------------------- */

static void incomplete_heads_need_more(void **state)
{
	struct fx *f = *state;
	static const char text[] = "POST /u HTTP/1.1\r\nHost: a.example\r\n"
				   "Content-Length: 3\r\n\r\n";
	size_t n = sizeof(text) - 1;

	for (size_t k = 0; k < n; k++)
		assert_int_equal(req(f, text, k), 0);
	assert_int_equal(req(f, text, n), n);
	assert_int_equal(f->r.content_length, 3);
	expect_req(f, "", 0);
	expect_req(f, "\r", 0);
	expect_req(f, "\r\n", 0);
	expect_req(f, "GET / HTTP/1.1\r\nHost: a\r\n\r", 0);
}

static void bare_cr_and_bare_lf(void **state)
{
	struct fx *f = *state;

	expect_req(f, "GET / HTTP/1.1\nHost: a\r\n\r\n", -400);
	expect_req(f, "GET / HTTP/1.1\r\nHost: a\n\r\n", -400);
	expect_req(f, "GET / HTTP/1.1\r\nHost: a\r\n\n", -400);
	expect_req(f, "GET / HTTP/1.1\r\nHost: a\r\nX: a\rb\r\n\r\n", -400);
	expect_req(f, "GET / HTTP/1.1\r\nHost: a\r\n\r\r\n", -400);
	expect_req(f, "GET /\r HTTP/1.1\r\nHost: a\r\n\r\n", -400);
	expect_req(f, "GET / HTTP/1.1\r\r\nHost: a\r\n\r\n", -400);
	/* Refused as soon as seen, before the head is complete. */
	expect_req(f, "GET / HTTP/1.1\r\nX: a\rb", -400);
	expect_req(f, "GET / HTTP/1.1\r\nX: a\nb", -400);
}

static void leading_empty_lines(void **state)
{
	struct fx *f = *state;

	expect_req(f, "\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", WHOLE);
	assert_string_equal(f->r.method, "GET");
	expect_req(f, "\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", WHOLE);
	expect_req(f, "\r\n\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", -400);
	expect_req(f, "\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", -400);
	expect_req(f, " GET / HTTP/1.1\r\nHost: a\r\n\r\n", -400);
}

/* A head of `total` bytes: request line, Host, and one filler field. */
static size_t big_head(char *buf, size_t total, bool end)
{
	static const char pre[] = "GET / HTTP/1.1\r\nHost: a\r\nX: ";
	size_t o = sizeof(pre) - 1, tail = end ? 4 : 2;

	memcpy(buf, pre, o);
	memset(buf + o, 'v', total - o - tail);
	memcpy(buf + total - tail, "\r\n\r\n", tail);
	return total;
}

static void head_size_limit(void **state)
{
	struct fx *f = *state;
	static char buf[HTTP_MAX_HEAD + 64];

	assert_int_equal(req(f, buf, big_head(buf, HTTP_MAX_HEAD, true)), HTTP_MAX_HEAD);
	assert_int_equal(req(f, buf, big_head(buf, HTTP_MAX_HEAD + 1, true)), -431);
	/* Without its end: more bytes are wanted until the limit, then 431. */
	assert_int_equal(req(f, buf, big_head(buf, HTTP_MAX_HEAD - 1, false)), 0);
	assert_int_equal(req(f, buf, big_head(buf, HTTP_MAX_HEAD, false)), -431);
	assert_int_equal(req(f, buf, big_head(buf, HTTP_MAX_HEAD + 64, false)), -431);
	/* The CR as the last byte in the window: its LF would be beyond. */
	big_head(buf, HTTP_MAX_HEAD + 1, true);
	assert_int_equal(req(f, buf, HTTP_MAX_HEAD), -431);
}

static void header_count_limit(void **state)
{
	struct fx *f = *state;
	char buf[4096];
	size_t o;

	for (int n = HTTP_MAX_HEADERS; n <= HTTP_MAX_HEADERS + 1; n++) {
		o = (size_t)sprintf(buf, "GET / HTTP/1.1\r\nHost: a\r\n");
		for (int i = 1; i < n; i++)
			o += (size_t)sprintf(buf + o, "X-%d: %d\r\n", i, i);
		o += (size_t)sprintf(buf + o, "\r\n");
		assert_int_equal(req(f, buf, o), n == HTTP_MAX_HEADERS ? (int)o : -431);
	}
	assert_int_equal(f->r.n_headers, HTTP_MAX_HEADERS);
}

static void target_length_limit(void **state)
{
	struct fx *f = *state;
	static char buf[HTTP_MAX_HEAD];
	size_t tlen = sizeof(f->r.target) - 1, o;

	for (int over = 0; over <= 1; over++) {
		o = (size_t)sprintf(buf, "GET /");
		memset(buf + o, 'a', tlen - 1 + (size_t)over);
		o += tlen - 1 + (size_t)over;
		o += (size_t)sprintf(buf + o, " HTTP/1.1\r\nHost: a\r\n\r\n");
		assert_int_equal(req(f, buf, o), over ? -414 : (int)o);
		if (!over) {
			assert_int_equal(strlen(f->r.target), tlen);
			assert_int_equal(strlen(f->r.path), tlen);
		}
	}
	/* Refused at the byte that overflows, not at the head's limit. */
	o = (size_t)sprintf(buf, "GET /");
	memset(buf + o, 'a', sizeof(buf) - o);
	assert_int_equal(req(f, buf, tlen + 4), 0);
	assert_int_equal(req(f, buf, tlen + 5), -414);
	assert_int_equal(req(f, buf, sizeof(buf)), -414);
	memcpy(buf + sizeof(buf) - 2, "\n\n", 2);
	assert_int_equal(req(f, buf, sizeof(buf)), -414);
}

/* --- request line ------------------------------------------------------------ */

static void request_line_syntax(void **state)
{
	struct fx *f = *state;

	expect_req(f, "GET  / HTTP/1.1\r\nHost: a\r\n\r\n", -400);
	expect_req(f, "GET /  HTTP/1.1\r\nHost: a\r\n\r\n", -400);
	expect_req(f, "GET / HTTP/1.1 \r\nHost: a\r\n\r\n", -400);
	expect_req(f, "GET\t/ HTTP/1.1\r\nHost: a\r\n\r\n", -400);
	expect_req(f, "GET /\tHTTP/1.1\r\nHost: a\r\n\r\n", -400);
	expect_req(f, "GET /\r\nHost: a\r\n\r\n", -400);
	expect_req(f, "GET\r\nHost: a\r\n\r\n", -400);
	expect_req(f, " / HTTP/1.1\r\nHost: a\r\n\r\n", -400);
	expect_req(f, "G(T / HTTP/1.1\r\nHost: a\r\n\r\n", -400);
	expect_req(f, "G\xc3\x89T / HTTP/1.1\r\nHost: a\r\n\r\n", -400);
	/* Any token is a method; one longer than any we could hold is not implemented. */
	expect_req(f, "M-SEARCH / HTTP/1.1\r\nHost: a\r\n\r\n", WHOLE);
	expect_req(f, "ABCDEFGHIJKLMNOPQRSTUVW / HTTP/1.1\r\nHost: a\r\n\r\n", WHOLE);
	expect_req(f, "ABCDEFGHIJKLMNOPQRSTUVWX / HTTP/1.1\r\nHost: a\r\n\r\n", -501);
}

/* What the start of a request line already refuses is refused before it ends. */
static void bad_request_line_refused_early(void **state)
{
	struct fx *f = *state;

	expect_req(f, "G(T", -400);
	expect_req(f, "GET /a\x01", -400);
	expect_req(f, "GET /a#", -400);
	expect_req(f, "GET  ", -400);
	expect_req(f, " ", -400);
	expect_req(f, "ABCDEFGHIJKLMNOPQRSTUVWX", -501);
	expect_req(f, "ABCDEFGHIJKLMNOPQRSTUVW", 0);
	expect_req(f, "\r\nG(T", -400);
	expect_req(f, "GET /a\tb\n", -400);
	expect_req(f, "GET / HTTP/1.1", 0);
	expect_req(f, "GET / HTTP/9", 0);
}

static void version_exactly_1_0_or_1_1(void **state)
{
	struct fx *f = *state;

	expect_req(f, "GET / HTTP/2.0\r\nHost: a\r\n\r\n", -505);
	expect_req(f, "GET / HTTP/1.2\r\nHost: a\r\n\r\n", -505);
	expect_req(f, "GET / HTTP/0.9\r\nHost: a\r\n\r\n", -505);
	expect_req(f, "GET / HTTP/1\r\nHost: a\r\n\r\n", -400);
	expect_req(f, "GET / HTTP/2\r\nHost: a\r\n\r\n", -400);
	expect_req(f, "GET / HTTP/1.10\r\nHost: a\r\n\r\n", -400);
	expect_req(f, "GET / http/1.1\r\nHost: a\r\n\r\n", -400);
	expect_req(f, "GET / HTTP/1.x\r\nHost: a\r\n\r\n", -400);
	expect_req(f, "GET / HTTPS/1.1\r\nHost: a\r\n\r\n", -400);
}

static void target_bytes(void **state)
{
	struct fx *f = *state;

	expect_req(f, "GET /a~!$&'()*+,;=:@%20[]{}|\\^` HTTP/1.1\r\nHost: a\r\n\r\n", WHOLE);
	expect_req(f, "GET /a#frag HTTP/1.1\r\nHost: a\r\n\r\n", -400);
	expect_req(f, "GET http://a/#f HTTP/1.1\r\nHost: a\r\n\r\n", -400);
	expect_req(f, "GET /a\x01 HTTP/1.1\r\nHost: a\r\n\r\n", -400);
	expect_req(f, "GET /a\x7f HTTP/1.1\r\nHost: a\r\n\r\n", -400);
	expect_req(f, "GET /\xc3\xa9 HTTP/1.1\r\nHost: a\r\n\r\n", -400);
	expect_req(f, "GET /a\0b HTTP/1.1\r\nHost: a\r\n\r\n", -400);
	expect_req(f, "GET a/b HTTP/1.1\r\nHost: a\r\n\r\n", -400);
}

static void absolute_form_rules(void **state)
{
	struct fx *f = *state;

	expect_req(f, "GET ftp://a/ HTTP/1.1\r\nHost: a\r\n\r\n", -400);
	expect_req(f, "GET ws://a/ HTTP/1.1\r\nHost: a\r\n\r\n", -400);
	expect_req(f, "GET http:/a/ HTTP/1.1\r\nHost: a\r\n\r\n", -400);
	expect_req(f, "GET http:a HTTP/1.1\r\nHost: a\r\n\r\n", -400);
	expect_req(f, "GET http:///x HTTP/1.1\r\nHost: a\r\n\r\n", -400);
	expect_req(f, "GET http://u@a/ HTTP/1.1\r\nHost: a\r\n\r\n", -400);
	expect_req(f, "GET http://u:p@a/ HTTP/1.1\r\nHost: a\r\n\r\n", -400);
	expect_req(f, "GET http://a:/ HTTP/1.1\r\nHost: a\r\n\r\n", -400);
	expect_req(f, "GET http://a%2eb/ HTTP/1.1\r\nHost: a\r\n\r\n", -400);
	expect_req(f, "GET http://a\\b/ HTTP/1.1\r\nHost: a\r\n\r\n", -400);
	expect_req(f, "GET 1http://a/ HTTP/1.1\r\nHost: a\r\n\r\n", -400);
	expect_req(f, "GET hTTp://a/ HTTP/1.1\r\nHost: a\r\n\r\n", WHOLE);
	assert_string_equal(f->r.scheme, "http");
}

/* --- fields ------------------------------------------------------------------ */

static void field_name_syntax(void **state)
{
	struct fx *f = *state;

	expect_with_field(f, "Host : a.example\r\n", -400);
	expect_with_field(f, "X-A : 1\r\n", -400);
	expect_with_field(f, "X-A\t: 1\r\n", -400);
	expect_with_field(f, "X A: 1\r\n", -400);
	expect_with_field(f, ": 1\r\n", -400);
	expect_with_field(f, "X-A 1\r\n", -400);
	expect_with_field(f, "X(A): 1\r\n", -400);
	expect_with_field(f, "X\x80: 1\r\n", -400);
	expect_with_field(f, "X-!#$%&'*+-.^_`|~: 1\r\n", WHOLE);
}

static void obs_fold_refused(void **state)
{
	struct fx *f = *state;

	expect_with_field(f, "X-A: 1\r\n 2\r\n", -400);
	expect_with_field(f, "X-A: 1\r\n\t2\r\n", -400);
	expect_req(f, "GET / HTTP/1.1\r\n Host: a\r\n\r\n", -400);
	expect_req(f, "GET / HTTP/1.1\r\nHost: a\r\n \r\n\r\n", -400);
}

static void field_value_bytes(void **state)
{
	struct fx *f = *state;
	struct http_request *r = &f->r;

	expect_req(f, "GET / HTTP/1.1\r\nHost: a\r\nX: a\0b\r\n\r\n", -400);
	expect_with_field(f, "X: a\x01\r\n", -400);
	expect_with_field(f, "X: a\x1f\r\n", -400);
	expect_with_field(f, "X: a\x7f\r\n", -400);
	expect_with_field(f, "X: \x0b\r\n", -400);
	expect_req(f, "GET / HTTP/1.1\r\nHost: a\r\nX: \xff\x80 caf\xc3\xa9\r\n\r\n", WHOLE);
	expect_req(f, "GET / HTTP/1.1\r\nHost: a\r\nX: \t a\tb \t\r\nY:\r\nZ: \r\n\r\n", WHOLE);
	assert_int_equal(r->headers[1].value_len, 3);
	assert_memory_equal(r->headers[1].value, "a\tb", 3);
	assert_int_equal(r->headers[2].value_len, 0);
	assert_int_equal(r->headers[3].value_len, 0);
}

static void content_length_syntax(void **state)
{
	struct fx *f = *state;

	expect_with_field(f, "Content-Length: 5\r\n", WHOLE);
	assert_int_equal(f->r.content_length, 5);
	expect_with_field(f, "content-length:\t007 \r\n", WHOLE);
	assert_int_equal(f->r.content_length, 7);
	expect_with_field(f, "Content-Length: 999999999999999\r\n", WHOLE);
	assert_int_equal(f->r.content_length, 999999999999999LL);
	expect_with_field(f, "Content-Length: 1000000000000000\r\n", -400);
	expect_with_field(f, "Content-Length: +5\r\n", -400);
	expect_with_field(f, "Content-Length: -5\r\n", -400);
	expect_with_field(f, "Content-Length: 5 5\r\n", -400);
	expect_with_field(f, "Content-Length: 5,5\r\n", -400);
	expect_with_field(f, "Content-Length: 5, 5\r\n", -400);
	expect_with_field(f, "Content-Length: 0x5\r\n", -400);
	expect_with_field(f, "Content-Length: 5.0\r\n", -400);
	expect_with_field(f, "Content-Length: 1e3\r\n", -400);
	expect_with_field(f, "Content-Length:\r\n", -400);
	expect_with_field(f, "Content-Length: \xd9\xa5\r\n", -400);
}

static void content_length_once(void **state)
{
	struct fx *f = *state;

	expect_with_field(f, "Content-Length: 5\r\nContent-Length: 5\r\n", -400);
	expect_with_field(f, "Content-Length: 5\r\ncontent-length: 6\r\n", -400);
	expect_with_field(f, "Content-Length: 5\r\nX: 1\r\nCONTENT-LENGTH: 5\r\n", -400);
}

static void transfer_encoding_rules(void **state)
{
	struct fx *f = *state;

	expect_with_field(f, "Transfer-Encoding: chunked\r\n", WHOLE);
	assert_true(f->r.chunked);
	assert_int_equal(f->r.content_length, -1);
	expect_with_field(f, "transfer-encoding:\tCHUNKED \r\n", WHOLE);
	assert_true(f->r.chunked);
	expect_with_field(f, "Transfer-Encoding: gzip\r\n", -501);
	expect_with_field(f, "Transfer-Encoding: identity\r\n", -501);
	expect_with_field(f, "Transfer-Encoding: xchunked\r\n", -501);
	expect_with_field(f, "Transfer-Encoding: gzip, chunked\r\n", -501);
	expect_with_field(f, "Transfer-Encoding: chunked, gzip\r\n", -501);
	expect_with_field(f, "Transfer-Encoding: chunked, chunked\r\n", -400);
	expect_with_field(f, "Transfer-Encoding: chunked,\r\n", -400);
	expect_with_field(f, "Transfer-Encoding: ,chunked\r\n", -400);
	expect_with_field(f, "Transfer-Encoding: chunked;q=1\r\n", -400);
	expect_with_field(f, "Transfer-Encoding: \"chunked\"\r\n", -400);
	expect_with_field(f, "Transfer-Encoding:\r\n", -400);
	expect_with_field(f, "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", -400);
	expect_with_field(f, "Transfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n", -400);
}

static void transfer_encoding_with_content_length(void **state)
{
	struct fx *f = *state;

	expect_with_field(f, "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n", -400);
	expect_with_field(f, "Transfer-Encoding: chunked\r\nContent-Length: 0\r\n", -400);
	expect_with_field(f, "Transfer-Encoding: gzip\r\nContent-Length: 4\r\n", -400);
}

static void transfer_encoding_in_http_1_0(void **state)
{
	struct fx *f = *state;

	expect_req(f, "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", -400);
	expect_req(f, "POST / HTTP/1.0\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n", -400);
	expect_req(f, "POST / HTTP/1.0\r\nContent-Length: 3\r\n\r\n", WHOLE);
}

/* CL.TE, TE.CL and TE.TE as the smuggling literature spells them. */
static void smuggling_classics(void **state)
{
	struct fx *f = *state;

	expect_req(f, "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 13\r\n"
		   "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\nSMUGGLED", -400);
	expect_req(f, "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n"
		   "Transfer-Encoding: chunked\r\n\r\n8\r\nSMUGGLED\r\n0\r\n\r\n", -400);
	expect_with_field(f, "Transfer-Encoding: chunked\r\nTransfer-encoding: x\r\n", -400);
	expect_with_field(f, "Transfer-Encoding : chunked\r\n", -400);
	expect_with_field(f, "Transfer-Encoding: chunked\r\n : x\r\n", -400);
	expect_with_field(f, "X: x\r\n Transfer-Encoding: chunked\r\n", -400);
	expect_with_field(f, "Transfer-Encoding: x\r\n\tchunked\r\n", -400);
	expect_with_field(f, "Transfer-Encoding:\x0b" "chunked\r\n", -400);
	expect_with_field(f, "Transfer-Encoding: chunked\x0c\r\n", -400);
	expect_with_field(f, "Transfer-Encoding\0: chunked\r\n", -400);
	expect_with_field(f, "X: 1\rTransfer-Encoding: chunked\r\n", -400);
	expect_with_field(f, "X: 1\nTransfer-Encoding: chunked\r\n", -400);
	expect_with_field(f, "Content-Length: 0\r\nContent-Length: 44\r\n", -400);
	expect_with_field(f, "Content-Length: 0, 44\r\n", -400);
	expect_with_field(f, "Content-Length : 44\r\n", -400);
	expect_with_field(f, "Transfer-Encoding: chunk\r\n", -501);
	expect_with_field(f, "Transfer-Encoding: \xc4\x8dhunked\r\n", -400);
}

static void host_rules(void **state)
{
	struct fx *f = *state;

	expect_req(f, "GET / HTTP/1.1\r\n\r\n", -400);
	expect_req(f, "GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", -400);
	expect_req(f, "GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n", -400);
	expect_req(f, "GET / HTTP/1.0\r\nHost: a\r\nHOST: a\r\n\r\n", -400);
	expect_req(f, "GET / HTTP/1.1\r\nHost:\r\n\r\n", -400);
	expect_req(f, "GET / HTTP/1.1\r\nHost: a b\r\n\r\n", -400);
	expect_req(f, "GET / HTTP/1.1\r\nHost: a,b\r\n\r\n", -400);
	expect_req(f, "GET / HTTP/1.1\r\nHost: u@a\r\n\r\n", -400);
	expect_req(f, "GET / HTTP/1.1\r\nHost: a:0\r\n\r\n", -400);
	expect_req(f, "GET / HTTP/1.1\r\nHost: a:65536\r\n\r\n", -400);
	expect_req(f, "GET / HTTP/1.1\r\nHost: a:\r\n\r\n", -400);
	expect_req(f, "GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", -400);
	expect_req(f, "GET / HTTP/1.1\r\nHost: 0x7f.1\r\n\r\n", -400);
	expect_req(f, "GET / HTTP/1.1\r\nHost: [fe80::1%25eth0]\r\n\r\n", -400);
	expect_req(f, "GET / HTTP/1.1\r\nHost: \xc3\xa9.example\r\n\r\n", -400);
	expect_req(f, "GET / HTTP/1.1\r\nHost: a.example:443\r\n\r\n", WHOLE);
	assert_int_equal(f->r.port, 443);
}

static void host_matches_absolute_target(void **state)
{
	struct fx *f = *state;

	expect_req(f, "GET http://a.example/ HTTP/1.1\r\nHost: b.example\r\n\r\n", -400);
	expect_req(f, "GET http://a.example/ HTTP/1.1\r\nHost: a.example:8080\r\n\r\n", -400);
	expect_req(f, "GET http://a.example:8080/ HTTP/1.1\r\nHost: a.example\r\n\r\n", -400);
	expect_req(f, "GET https://a.example/ HTTP/1.1\r\nHost: a.example:80\r\n\r\n", -400);
	expect_req(f, "GET http://a.example/ HTTP/1.1\r\nHost: a.example.evil\r\n\r\n", -400);
	expect_req(f, "GET http://a.example/ HTTP/1.1\r\nHost: a.example\r\nHost: b\r\n\r\n", -400);
	expect_req(f, "GET http://a.example/ HTTP/1.1\r\nHost: A.Example.\r\n\r\n", WHOLE);
	expect_req(f, "GET https://a.example/ HTTP/1.1\r\nHost: a.example:443\r\n\r\n", WHOLE);
	expect_req(f, "GET https://a.example:443/ HTTP/1.1\r\nHost: a.example\r\n\r\n", WHOLE);
	expect_req(f, "GET http://127.0.0.1/ HTTP/1.1\r\nHost: [::ffff:127.0.0.1]\r\n\r\n", WHOLE);
	assert_string_equal(f->r.host, "127.0.0.1");
}

static void host_header_as_sent(void **state)
{
	struct fx *f = *state;
	char buf[512];
	size_t o;

	expect_req(f, "GET / HTTP/1.1\r\nHost:  A.example.:8080 \r\n\r\n", WHOLE);
	assert_string_equal(f->r.host_header, "A.example.:8080");
	assert_string_equal(f->r.host, "a.example");
	/* Too long for host_header is too long for any host. */
	o = (size_t)sprintf(buf, "GET / HTTP/1.1\r\nHost: ");
	for (int i = 0; i < 5; i++)
		o += (size_t)sprintf(buf + o, "%s%.52d", i ? "." : "", 0);
	o += (size_t)sprintf(buf + o, "x:1\r\n\r\n");
	assert_int_equal(req(f, buf, o), -400);
}

static void connection_header(void **state)
{
	struct fx *f = *state;

	expect_with_field(f, "Connection: close\r\n", WHOLE);
	assert_true(f->r.close);
	expect_with_field(f, "Connection: Keep-Alive, CLOSE\r\n", WHOLE);
	assert_true(f->r.close);
	expect_with_field(f, "Connection: keep-alive\r\nConnection: te, close\r\n", WHOLE);
	assert_true(f->r.close);
	expect_with_field(f, "Connection: , ,upgrade,\r\n", WHOLE);
	assert_false(f->r.close);
	expect_with_field(f, "Connection: closed\r\n", WHOLE);
	assert_false(f->r.close);
	expect_with_field(f, "Connection: a b\r\n", -400);
	expect_with_field(f, "Connection: \"close\"\r\n", -400);
	expect_req(f, "GET / HTTP/1.0\r\n\r\n", WHOLE);
	assert_true(f->r.close);
	expect_req(f, "GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", WHOLE);
	assert_false(f->r.close);
	expect_req(f, "GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n", WHOLE);
	assert_true(f->r.close);
}

static void expect_header(void **state)
{
	struct fx *f = *state;

	expect_with_field(f, "Expect: 100-Continue\r\n", WHOLE);
	assert_true(f->r.expect_continue);
	expect_with_field(f, "Expect: 100-continue\r\nExpect: 100-continue\r\n", WHOLE);
	expect_with_field(f, "Expect: foo\r\n", -417);
	expect_with_field(f, "Expect: 100-continue, foo\r\n", -417);
	expect_with_field(f, "Expect: 100-continue\r\nExpect: 200-ok\r\n", -417);
	expect_with_field(f, "Expect:\r\n", -417);
	/* RFC 9110 10.1.1: ignored in HTTP/1.0. */
	expect_req(f, "POST / HTTP/1.0\r\nExpect: 100-continue\r\n\r\n", WHOLE);
	assert_false(f->r.expect_continue);
}

static void why_is_always_terminated(void **state)
{
	struct fx *f = *state;
	struct http_request *r = &f->r;
	static const char bad[] = "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n";
	char why[4];

	memset(why, 'x', sizeof(why));
	assert_int_equal(http_parse_request(bad, sizeof(bad) - 1, r, why, sizeof(why)), -400);
	assert_int_equal(strlen(why), 3);
	assert_int_equal(http_parse_request(bad, sizeof(bad) - 1, r, NULL, 0), -400);
	memset(why, 'x', sizeof(why));
	assert_int_equal(http_parse_request(bad, 4, r, why, sizeof(why)), 0);
	assert_string_equal(why, "");
}

/* A refusal about one line names it (1: the start line). */
static void why_names_the_line(void **state)
{
	struct fx *f = *state;

	expect_req(f, "GET / HTTP/1.1\r\nHost: a\r\n X: 1\r\n\r\n", -400);
	assert_string_equal(f->why, "line 3: obs-fold: a field line begins with whitespace");
	expect_req(f, "GET / HTTP/1.1\r\nHost: a\nX: 1\r\n\r\n", -400);
	assert_string_equal(f->why, "line 2: bare LF: every line must end in CRLF");
	expect_req(f, "\r\nGET / HTTP/1.1\r\n", 0);
	expect_req(f, "\r\nGET / HTTP/3.0\r\nHost: a\r\n\r\n", -505);
	assert_string_equal(f->why, "line 2: HTTP version not supported");
	expect_req(f, "GET /\x01", -400);
	assert_string_equal(f->why, "line 1: bad byte in the request-target");
	expect_req(f, "GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", -400);
	assert_string_equal(f->why, "more than one Host header");
	expect_resp(f, "HTTP/1.1 20x OK\r\n\r\n", -502);
	assert_string_equal(f->why, "line 1: bad status code");
	expect_resp(f, "HTTP/1.1 200 OK\r\nX: 1\r\nY\r\n\r\n", -502);
	assert_string_equal(f->why, "line 3: field line without a colon");
}

/* Any prefix of a buffer is answered 0 or as the whole buffer is. */
static void prefixes_agree_with_the_whole(void **state)
{
	struct fx *f = *state;
	static const char *const texts[] = {
		"GET / HTTP/1.1\r\nHost: a\r\n\r\nbody",
		"\r\nPOST http://a/x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n",
		"GET / HTTP/9.9\r\nHost: a\r\n\r\n",
		"GET / HTTP/1.1\r\nX: 1\r\n\tfold\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a\r\nX: a\rb\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a\r\nExpect: nope\r\n\r\n",
		"CONNECT a:1 HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n\r\n",
		"GET /a\x01\nb HTTP/1.1\r\n",
		"GE\rT / HTTP/1.1\r\n",
		"ABCDEFGHIJKLMNOPQRSTUVWXY / HTTP/1.1\r\n",
	};

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		size_t n = strlen(texts[i]);
		int whole = req(f, texts[i], n);

		for (size_t k = 0; k < n; k++) {
			int rc = req(f, texts[i], k);

			if (whole > 0)
				assert_int_equal(rc, k < (size_t)whole ? 0 : whole);
			else if (rc != 0)
				assert_int_equal(rc, whole);
		}
	}
}

/* --- authority --------------------------------------------------------------- */

static void authority_accepted(void **state)
{
	static const struct {
		const char *in;
		uint16_t dflt;
		const char *host;
		uint16_t port;
	} ok[] = {
		{ "Example.COM", 80, "example.com", 80 }, { "a.b.", 443, "a.b", 443 },
		{ "a.b:1", 0, "a.b", 1 }, { "a.b:65535", 0, "a.b", 65535 },
		{ "a_b-c.d", 80, "a_b-c.d", 80 }, { "1.example.com", 80, "1.example.com", 80 },
		{ "0x7f.example", 80, "0x7f.example", 80 }, { "localhost", 80, "localhost", 80 },
		{ "127.0.0.1:8080", 0, "127.0.0.1", 8080 }, { "0.0.0.0", 1, "0.0.0.0", 1 },
		{ "255.255.255.255.", 1, "255.255.255.255", 1 }, { "[::1]", 80, "::1", 80 },
		{ "[::1]:8443", 0, "::1", 8443 }, { "[2001:DB8:0:0:0:0:0:1]", 1, "2001:db8::1", 1 },
		{ "[::ffff:10.0.0.1]:80", 0, "10.0.0.1", 80 },
		{ "[::10.0.0.1]", 1, "::10.0.0.1", 1 },
	};

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		char host[256];
		uint16_t port = 0;

		if (http_parse_authority(ok[i].in, strlen(ok[i].in), host, sizeof(host), &port,
					 ok[i].dflt))
			fail_msg("refused: %s", ok[i].in);
		assert_string_equal(host, ok[i].host);
		assert_int_equal(port, ok[i].port);
	}
}

static void authority_refused(void **state)
{
	static const char *const bad[] = {
		"", ":80", "a.b:", "a.b:0", "a.b:00080", "a.b:080", "a.b:65536", "a.b:99999",
		"a.b:123456", "a.b:-1", "a.b:+80", "a.b:8o", "a.b: 80", "a.b:80:81", "u@a.b",
		"@a.b",
		"a.b@", "a%2eb", "a b", "a\tb", "a,b", "a;b", "a!b", "a~b", "a*b", "*.a.b", "a/b",
		"a?b", "a#b", "a\\b", "a..b", ".a.b", "a.b..", ".", "..", "\xc3\xa9.b", "a\x7f",
		"example.123", "1.2.3", "1.2.3.4.5", "0x7f.1", "2130706433", "0177.0.0.1",
		"01.2.3.4", "256.1.1.1", "1.2.3.0x4", "127.1", "1.2.3.04", "0x", "1.2.3.4..",
		"[::1", "::1", "[::1]x", "[::1]:", "[::1]80", "[fe80::1%eth0]", "[fe80::1%25eth0]",
		"[v1.x]", "[1.2.3.4]", "[:::1]", "[]", "[::g]", "a[::1]", "[::1]]", "[ ::1]",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char host[256];
		uint16_t port;

		if (http_parse_authority(bad[i], strlen(bad[i]), host, sizeof(host), &port, 80) !=
		    -EINVAL)
			fail_msg("accepted: %s", bad[i]);
	}
}

static void authority_limits(void **state)
{
	char name[300], host[256];
	uint16_t port;

	/* A port is required when there is no default. */
	assert_int_equal(http_parse_authority("a.b", 3, host, sizeof(host), &port, 0), -EINVAL);
	/* Embedded NUL: the length rules, not the terminator. */
	assert_int_equal(http_parse_authority("a\0b", 3, host, sizeof(host), &port, 80), -EINVAL);
	assert_int_equal(http_parse_authority("a.bc", 3, host, sizeof(host), &port, 80), 0);
	assert_string_equal(host, "a.b");
	/* Labels of 63 bytes, not 64. */
	memset(name, 'a', 63);
	strcpy(name + 63, ".b");
	assert_int_equal(http_parse_authority(name, 65, host, sizeof(host), &port, 80), 0);
	memset(name, 'a', 64);
	strcpy(name + 64, ".b");
	assert_int_equal(http_parse_authority(name, strlen(name), host, sizeof(host), &port, 80),
			 -EINVAL);
	/* Names of 253 bytes, not 254 (a trailing dot aside). */
	for (int i = 0; i < 4; i++)
		sprintf(name + 64 * i, "%.63d.", 0);
	name[253] = '\0';
	name[252] = 'x';
	assert_int_equal(http_parse_authority(name, 253, host, sizeof(host), &port, 80), 0);
	name[253] = '.';
	assert_int_equal(http_parse_authority(name, 254, host, sizeof(host), &port, 80), 0);
	name[253] = 'y';
	assert_int_equal(http_parse_authority(name, 254, host, sizeof(host), &port, 80), -EINVAL);
	/* The output buffer bounds it too. */
	assert_int_equal(http_parse_authority("abcd", 4, host, 5, &port, 80), 0);
	assert_int_equal(http_parse_authority("abcde", 5, host, 5, &port, 80), -EINVAL);
	assert_int_equal(http_parse_authority("[::1]", 5, host, 3, &port, 80), -EINVAL);
}

static void header_lookup(void **state)
{
	struct fx *f = *state;
	const struct http_header *h;

	expect_req(f, "GET / HTTP/1.1\r\nHost: a\r\nX-One: 1\r\nx-one: 2\r\nX-Onex: 3\r\n\r\n",
		   WHOLE);
	h = http_header_get(f->r.headers, f->r.n_headers, "X-ONE");
	assert_non_null(h);
	assert_memory_equal(h->value, "1", 1);
	assert_int_equal(http_header_count(f->r.headers, f->r.n_headers, "x-one"), 2);
	assert_int_equal(http_header_count(f->r.headers, f->r.n_headers, "x-on"), 0);
	assert_null(http_header_get(f->r.headers, f->r.n_headers, "X-On"));
	assert_null(http_header_get(f->r.headers, 0, "host"));
}

/* --- responses --------------------------------------------------------------- */

static void response_heads(void **state)
{
	struct fx *f = *state;
	struct http_response *s = &f->s;
	static const char text[] = "HTTP/1.1 200 OK fine\r\nContent-Length: 5\r\n\r\nhello";

	assert_int_equal(resp(f, text, sizeof(text) - 1), sizeof(text) - 1 - 5);
	assert_int_equal(s->status, 200);
	assert_int_equal(s->minor, 1);
	assert_string_equal(s->reason, "OK fine");
	assert_int_equal(s->content_length, 5);
	assert_false(s->close);
	assert_int_equal(http_response_body_mode(s, "GET"), HTTP_BODY_LENGTH);
	assert_int_equal(http_response_body_mode(s, "HEAD"), HTTP_BODY_NONE);

	/* The SP before an empty reason may be absent (RFC 9112 4). */
	expect_resp(f, "HTTP/1.1 204\r\n\r\n", WHOLE);
	assert_string_equal(s->reason, "");
	assert_int_equal(http_response_body_mode(s, "GET"), HTTP_BODY_NONE);
	expect_resp(f, "HTTP/1.1 404 \r\n\r\n", WHOLE);
	assert_int_equal(http_response_body_mode(s, "GET"), HTTP_BODY_CLOSE);
	expect_resp(f, "HTTP/1.1 200 \xc3\xa9\t!\r\n\r\n", WHOLE);
	expect_resp(f, "HTTP/1.0 200 OK\r\n\r\n", WHOLE);
	assert_true(s->close);
	assert_int_equal(s->minor, 0);
	expect_resp(f, "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n",
		    WHOLE);
	assert_false(s->close);
	expect_resp(f, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n", WHOLE);
	assert_true(s->close);
	/* Identical repeats of Content-Length are tolerated from upstream. */
	expect_resp(f, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n", WHOLE);
	assert_int_equal(s->content_length, 3);
	expect_resp(f, "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, Chunked\r\n\r\n", WHOLE);
	assert_true(s->chunked);
	assert_int_equal(http_response_body_mode(s, "POST"), HTTP_BODY_CHUNKED);
	expect_resp(f, "HTTP/1.1 200 OK\r\n", 0);
	expect_resp(f, "HTTP/1.1 2", 0);
}

static void response_reason_truncated(void **state)
{
	struct fx *f = *state;
	char buf[400];
	size_t o = (size_t)sprintf(buf, "HTTP/1.1 200 ");

	memset(buf + o, 'r', 200);
	o += 200;
	o += (size_t)sprintf(buf + o, "\r\n\r\n");
	assert_int_equal(resp(f, buf, o), o);
	assert_int_equal(strlen(f->s.reason), sizeof(f->s.reason) - 1);
}

static void response_refusals_are_502(void **state)
{
	struct fx *f = *state;
	static char buf[HTTP_MAX_HEAD + 8];
	size_t o;

	expect_resp(f, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n", -502);
	expect_resp(f, "HTTP/1.1 200 OK\r\nContent-Length: 3, 3\r\n\r\n", -502);
	expect_resp(f, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n"
		    "Transfer-Encoding: chunked\r\n\r\n", -502);
	expect_resp(f, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", -502);
	expect_resp(f, "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", -502);
	expect_resp(f, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", -502);
	expect_resp(f, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
		    "Transfer-Encoding: chunked\r\n\r\n", -502);
	expect_resp(f, "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", -502);
	expect_resp(f, "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", -502);
	expect_resp(f, "HTTP/2 200 OK\r\n\r\n", -502);
	expect_resp(f, "HTTP/2.0 200 OK\r\n\r\n", -502);
	expect_resp(f, "HTTP/1.2 200 OK\r\n\r\n", -502);
	expect_resp(f, "http/1.1 200 OK\r\n\r\n", -502);
	expect_resp(f, "HTTP/1.1 20 OK\r\n\r\n", -502);
	expect_resp(f, "HTTP/1.1 2000 OK\r\n\r\n", -502);
	expect_resp(f, "HTTP/1.1 099 OK\r\n\r\n", -502);
	expect_resp(f, "HTTP/1.1 600 OK\r\n\r\n", -502);
	expect_resp(f, "HTTP/1.1 200OK\r\n\r\n", -502);
	expect_resp(f, "HTTP/1.1  200 OK\r\n\r\n", -502);
	expect_resp(f, "HTTP/1.1 200 O\x01K\r\n\r\n", -502);
	expect_resp(f, "\r\nHTTP/1.1 200 OK\r\n\r\n", -502);
	expect_resp(f, "HTTP/1.1 200 OK\nX: 1\r\n\r\n", -502);
	expect_resp(f, "HTTP/1.1 200 OK\r\nX: 1\r\n folded\r\n\r\n", -502);
	expect_resp(f, "HTTP/1.1 200 OK\r\nX : 1\r\n\r\n", -502);
	expect_resp(f, "HTTP/1.1 200 OK\r\nX: 1\rY: 2\r\n\r\n", -502);
	expect_resp(f, "HTTP/1.1 200 OK\r\nConnection: a b\r\n\r\n", -502);
	/* The limits too: the client is told the upstream failed. */
	o = (size_t)sprintf(buf, "HTTP/1.1 200 OK\r\n");
	for (int i = 0; i <= HTTP_MAX_HEADERS; i++)
		o += (size_t)sprintf(buf + o, "X: %d\r\n", i);
	o += (size_t)sprintf(buf + o, "\r\n");
	assert_int_equal(resp(f, buf, o), -502);
	o = (size_t)sprintf(buf, "HTTP/1.1 200 OK\r\nX: ");
	memset(buf + o, 'x', sizeof(buf) - o);
	assert_int_equal(resp(f, buf, sizeof(buf)), -502);
}

static void response_identity(void **state)
{
	struct fx *f = *state;
	static const struct {
		const char *fields;
		bool identity;
	} t[] = {
		{ "Content-Length: 0\r\n", true },
		{ "Content-Encoding: identity\r\nContent-Length: 0\r\n", true },
		{ "Content-Encoding: IDENTITY , identity\r\nContent-Length: 0\r\n", true },
		{ "Transfer-Encoding: chunked\r\n", true },
		{ "Transfer-Encoding: Chunked\r\nContent-Encoding: identity\r\n", true },
		{ "Content-Encoding: gzip\r\nContent-Length: 0\r\n", false },
		{ "Content-Encoding: identity\r\nContent-Encoding: gzip\r\nContent-Length: 0\r\n",
		  false },
		{ "Content-Encoding: identity, br\r\nContent-Length: 0\r\n", false },
		{ "Content-Encoding:\r\nContent-Length: 0\r\n", false },
		{ "Transfer-Encoding: gzip, chunked\r\n", false },
	};
	char head[256];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int n = snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\n%s\r\n", t[i].fields);

		if (resp(f, head, (size_t)n) != n)
			fail_msg("%s: not parsed: %s", t[i].fields, f->why);
		if (http_response_identity(&f->s) != t[i].identity)
			fail_msg("%s: want %s", t[i].fields, t[i].identity ? "identity" : "encoded");
	}
}

static void response_body_modes(void **state)
{
	static const struct {
		int status;
		bool chunked;
		int64_t cl;
		const char *m;
		int mode;
	} t[] = {
		{ 200, false, 5, "GET", HTTP_BODY_LENGTH },
		{ 200, true, -1, "GET", HTTP_BODY_CHUNKED },
		{ 200, false, -1, "GET", HTTP_BODY_CLOSE },
		{ 200, false, 5, "HEAD", HTTP_BODY_NONE },
		{ 200, true, -1, "HEAD", HTTP_BODY_NONE },
		{ 100, false, -1, "GET", HTTP_BODY_NONE },
		{ 101, false, -1, "GET", HTTP_BODY_NONE },
		{ 199, false, 4, "GET", HTTP_BODY_NONE },
		{ 204, false, 4, "GET", HTTP_BODY_NONE },
		{ 304, true, -1, "GET", HTTP_BODY_NONE },
		{ 200, false, -1, "CONNECT", HTTP_BODY_NONE },
		{ 299, false, 5, "CONNECT", HTTP_BODY_NONE },
		{ 407, false, 5, "CONNECT", HTTP_BODY_LENGTH },
		{ 502, false, -1, "CONNECT", HTTP_BODY_CLOSE },
		{ 205, false, 0, "GET", HTTP_BODY_LENGTH },
		{ 200, false, 0, "POST", HTTP_BODY_LENGTH },
		{ 200, false, 3, "head", HTTP_BODY_LENGTH },
		{ 200, false, 3, NULL, HTTP_BODY_LENGTH },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct http_response r = { .status = t[i].status, .chunked = t[i].chunked,
					   .content_length = t[i].cl };

		if (http_response_body_mode(&r, t[i].m) != t[i].mode)
			fail_msg("case %zu: %d to %s", i, t[i].status, t[i].m ? t[i].m : "(null)");
	}
}

/* --- chunked bodies ---------------------------------------------------------- */

/* The scanner's answer for text fed whole, checked against feeding it in every two-way split. */
static ssize_t chunked(const char *text, size_t len)
{
	struct http_chunked c;
	ssize_t whole;
	char *copy = malloc(len ? len : 1);

	assert_non_null(copy);
	memcpy(copy, text, len);
	http_chunked_init(&c);
	whole = http_chunked_scan(&c, copy, len);
	assert_true(whole == -400 || (whole >= 0 && (size_t)whole <= len));
	assert_int_equal(c.done, whole >= 0 && (size_t)whole < len ? true : c.done);
	for (size_t k = 0; k <= len; k++) {
		struct http_chunked p;
		ssize_t a, b = 0, total;

		http_chunked_init(&p);
		a = http_chunked_scan(&p, copy, k);
		if (a >= 0 && !p.done)
			b = http_chunked_scan(&p, copy + k, len - k);
		total = a < 0 ? a : b < 0 ? b : a + b;
		if (total != whole || p.done != c.done)
			fail_msg("split at %zu: %zd (done %d), whole %zd (done %d)", k, total,
				 p.done, whole, c.done);
	}
	free(copy);
	return whole;
}

#define expect_chunked(text, want) do {							\
	ssize_t _w = (want) == WHOLE ? (ssize_t)(sizeof(text) - 1) : (want);		\
	ssize_t _r = chunked((text), sizeof(text) - 1);					\
	char _e[512];									\
	if (_r != _w)									\
		fail_msg("%s -> %zd, want %zd", esc((text), sizeof(text) - 1, _e,	\
							 sizeof(_e)), _r, _w);			\
} while (0)

/* The whole text is the message, and it is complete. */
static void expect_chunked_done(const char *text, size_t len)
{
	struct http_chunked c;
	char e[512];

	http_chunked_init(&c);
	if (chunked(text, len) != (ssize_t)len ||
	    http_chunked_scan(&c, text, len) != (ssize_t)len || !c.done)
		fail_msg("not a complete body: %s", esc(text, len, e, sizeof(e)));
	assert_int_equal(http_chunked_scan(&c, "x", 1), 0);
}

static void chunked_valid(void **state)
{
	static const char *const ok[] = {
		"0\r\n\r\n",
		"5\r\nhello\r\n0\r\n\r\n",
		"5\r\nhe\r\no\r\n0\r\n\r\n",
		"A\r\n0123456789\r\na\r\n0123456789\r\n0\r\n\r\n",
		"000000000000001\r\nx\r\n0000000000000000\r\n\r\n",
		"1;ext\r\nx\r\n0;a=b;c=\"d e\\\"f\"\r\n\r\n",
		"1 ;a = b ; c\t=\t\"\"\r\nx\r\n0\r\n\r\n",
		"1;a=\"\xc3\xa9\t\\\x80\"\r\nx\r\n0\r\n\r\n",
		"0\r\nX-Trailer: 1\r\nX-Other:\t v \xff\r\nEmpty:\r\n\r\n",
		"0\r\ncontent-lengthy: 1\r\n\r\n",
	};

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		expect_chunked_done(ok[i], strlen(ok[i]));
}

static void chunked_message_ends_inside_the_buffer(void **state)
{
	expect_chunked("3\r\nabc\r\n0\r\n\r\nGET / HTTP/1.1\r\n", 13);
	expect_chunked("0\r\nT: 1\r\n\r\n0\r\n\r\n", 11);
	/* Still going: everything belongs to it. */
	expect_chunked("5\r\nhel", WHOLE);
	expect_chunked("ffffffffff\r\nabc", WHOLE);
	expect_chunked("0\r\nX: 1\r\n", WHOLE);
	expect_chunked("", 0);
}

static void chunked_size_syntax(void **state)
{
	expect_chunked("\r\n\r\n", -400);
	expect_chunked(";a\r\n", -400);
	expect_chunked("-1\r\n", -400);
	expect_chunked("+1\r\nx\r\n", -400);
	expect_chunked("0x1\r\nx\r\n", -400);
	expect_chunked(" 1\r\nx\r\n", -400);
	expect_chunked("1 \r\nx\r\n", -400);
	expect_chunked("1\t\r\nx\r\n", -400);
	expect_chunked("g\r\n", -400);
	expect_chunked("1_0\r\n", -400);
	expect_chunked("\xd9\xa1\r\n", -400);
	/* At most 16 digits, and below 2^40. */
	expect_chunked("00000000000000001\r\nx\r\n", -400);
	expect_chunked("10000000000\r\n", -400);
	expect_chunked("ffffffffffffffff\r\n", -400);
	expect_chunked("1ffffffffffffffff\r\n", -400);
	expect_chunked("000000ffffffffff\r\n", WHOLE);
}

static void chunked_extensions(void **state)
{
	expect_chunked("1;\r\nx\r\n", -400);
	expect_chunked("1;=b\r\nx\r\n", -400);
	expect_chunked("1;a=\r\nx\r\n", -400);
	expect_chunked("1;a \r\nx\r\n", -400);
	expect_chunked("1;a=b \r\nx\r\n", -400);
	expect_chunked("1;a=\"b\" \r\nx\r\n", -400);
	expect_chunked("1;a=\"b\"c\r\nx\r\n", -400);
	expect_chunked("1;a=\"b\r\nx\r\n", -400);
	expect_chunked("1;a=\"b\\\r\nx\r\n", -400);
	expect_chunked("1;a=\"b\x01\"\r\nx\r\n", -400);
	expect_chunked("1;a=\"b\x7f\"\r\nx\r\n", -400);
	expect_chunked("1;a=b=c\r\nx\r\n", -400);
	expect_chunked("1;a(b)\r\nx\r\n", -400);
	expect_chunked("1;a\x00\r\nx\r\n", -400);
	expect_chunked("1;a=\"\r\"\r\nx\r\n", -400);
	expect_chunked("1;a=b\nx\r\n", -400);
	expect_chunked("1;a;b;c=d\r\nx\r\n", WHOLE);
}

static void chunked_line_endings(void **state)
{
	expect_chunked("1\nx\r\n0\r\n\r\n", -400);
	expect_chunked("1\rx\r\n0\r\n\r\n", -400);
	expect_chunked("1\r\nx\n0\r\n\r\n", -400);
	expect_chunked("1\r\nx\r0\r\n\r\n", -400);
	expect_chunked("1\r\nxy\r\n0\r\n\r\n", -400);
	expect_chunked("1\r\nx0\r\n\r\n", -400);
	expect_chunked("0\r\n\n", -400);
	expect_chunked("0\r\n\r\r", -400);
	expect_chunked("0\r\nX: 1\n\r\n", -400);
	expect_chunked("0\r\nX: 1\r\r\n", -400);
	expect_chunked("0\r\nX: a\rb\r\n\r\n", -400);
}

static void chunked_trailers(void **state)
{
	expect_chunked("0\r\n X: 1\r\n\r\n", -400);
	expect_chunked("0\r\nX: 1\r\n\tY\r\n\r\n", -400);
	expect_chunked("0\r\nX : 1\r\n\r\n", -400);
	expect_chunked("0\r\nX\r\n\r\n", -400);
	expect_chunked("0\r\n: 1\r\n\r\n", -400);
	expect_chunked("0\r\nX: \x01\r\n\r\n", -400);
	expect_chunked("0\r\nX: \x7f\r\n\r\n", -400);
	expect_chunked("0\r\nContent-Length: 5\r\n\r\n", -400);
	expect_chunked("0\r\ntransfer-encoding: chunked\r\n\r\n", -400);
	expect_chunked("0\r\nHOST: evil\r\n\r\n", -400);
}

static void chunked_limits(void **state)
{
	static char buf[HTTP_MAX_HEAD + 64];
	struct http_chunked c;
	size_t o;

	/* A chunk-size line of HTTP_MAX_CHUNK_LINE bytes, then one more. */
	for (int over = 0; over <= 1; over++) {
		o = (size_t)sprintf(buf, "1;a=\"");
		memset(buf + o, 'q', HTTP_MAX_CHUNK_LINE - o - 1 + (size_t)over);
		o = HTTP_MAX_CHUNK_LINE + (size_t)over;
		buf[o - 1] = '"';
		o += (size_t)sprintf(buf + o, "\r\nx\r\n0\r\n\r\n");
		http_chunked_init(&c);
		assert_int_equal(http_chunked_scan(&c, buf, o), over ? -400 : (ssize_t)o);
		assert_int_equal(c.done, !over);
	}
	/* A trailer section of HTTP_MAX_HEAD bytes (the final CRLF counted), then one more. */
	for (int over = 0; over <= 1; over++) {
		size_t tr = HTTP_MAX_HEAD + (size_t)over;

		o = (size_t)sprintf(buf, "0\r\nX: ");
		memset(buf + o, 'v', tr - 7);
		o += tr - 7;
		o += (size_t)sprintf(buf + o, "\r\n\r\n");
		assert_int_equal(o, 3 + tr);
		http_chunked_init(&c);
		assert_int_equal(http_chunked_scan(&c, buf, o), over ? -400 : (ssize_t)o);
	}
	/* Once refused, always refused. */
	assert_int_equal(http_chunked_scan(&c, "0\r\n\r\n", 5), -400);
}

static void chunked_byte_at_a_time(void **state)
{
	static const char body[] = "4;x=\"y\"\r\nWiki\r\n5\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n"
				   "0\r\nExpires: never\r\n\r\nNEXT";
	struct http_chunked c;
	size_t total = 0;

	http_chunked_init(&c);
	for (size_t i = 0; i < sizeof(body) - 1; i++) {
		ssize_t r = http_chunked_scan(&c, body + i, 1);

		assert_true(r == 0 || r == 1);
		total += (size_t)r;
		if (c.done)
			assert_int_equal(r, i < sizeof(body) - 1 - 4 ? 1 : 0);
	}
	assert_true(c.done);
	assert_int_equal(total, sizeof(body) - 1 - 4);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(origin_form),
		T(absolute_form),
		T(authority_form),
		T(authority_form_only_with_connect),
		T(connect_with_a_body),
		T(asterisk_form),
		T(incomplete_heads_need_more),
		T(bare_cr_and_bare_lf),
		T(leading_empty_lines),
		T(head_size_limit),
		T(header_count_limit),
		T(target_length_limit),
		T(request_line_syntax),
		T(bad_request_line_refused_early),
		T(version_exactly_1_0_or_1_1),
		T(target_bytes),
		T(absolute_form_rules),
		T(field_name_syntax),
		T(obs_fold_refused),
		T(field_value_bytes),
		T(content_length_syntax),
		T(content_length_once),
		T(transfer_encoding_rules),
		T(transfer_encoding_with_content_length),
		T(transfer_encoding_in_http_1_0),
		T(smuggling_classics),
		T(host_rules),
		T(host_matches_absolute_target),
		T(host_header_as_sent),
		T(connection_header),
		T(expect_header),
		T(why_is_always_terminated),
		T(why_names_the_line),
		T(prefixes_agree_with_the_whole),
		T(authority_accepted),
		T(authority_refused),
		T(authority_limits),
		T(header_lookup),
		T(response_heads),
		T(response_reason_truncated),
		T(response_refusals_are_502),
		T(response_identity),
		T(response_body_modes),
		T(chunked_valid),
		T(chunked_message_ends_inside_the_buffer),
		T(chunked_size_syntax),
		T(chunked_extensions),
		T(chunked_line_endings),
		T(chunked_trailers),
		T(chunked_limits),
		T(chunked_byte_at_a_time),
	};
#undef T

	return cmocka_run_group_tests_name("http", tests, NULL, NULL);
}
