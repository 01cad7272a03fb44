// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The credential proxy's request side (userspace/egress/cred_proxy.c), without
 * sockets: which requests creds_check lets through, and the exact head
 * creds_upstream_head sends upstream (the sentinel out, the real secret in
 * its configured header and prefix, hop-by-hop and proxy fields dropped,
 * identity encoding asked for, framing re-stated), and that a head which
 * does not fit is refused with the buffer wiped, at every size.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cred_proxy.h"
#include "http.h"
#include "policy.h"

#define KEY_A "sk-ant-api03-unit-test-key-AAAAAAAAAAAAAAAAAAAA"
#define KEY_B "sk-proj-unit-test-key-BBBBBBBBBBBBBBBBBBBBBBBB"
#define KEY_C "AIzaSy-unit-test-key-CCCCCCCCCCCCCCCCCCCCCCCCC"

static const char policy_text[] =
	"{ \"cordon_policy\": 1, \"name\": \"cred-unit\",\n"
	"  \"credentials\": [\n"
	"    { \"name\": \"anthropic\", \"env\": \"ANTHROPIC_API_KEY\",\n"
	"      \"source\": { \"env\": \"CORDON_UNIT_KEY_A\" },\n"
	"      \"hosts\": [\"api.anthropic.test\", \"api2.anthropic.test\"],\n"
	"      \"header\": \"x-api-key\", \"endpoints\": [\"POST /v1/messages\"] },\n"
	"    { \"name\": \"openai\", \"env\": \"OPENAI_API_KEY\",\n"
	"      \"source\": { \"env\": \"CORDON_UNIT_KEY_B\" }, \"hosts\": [\"api.openai.test\"],\n"
	"      \"header\": \"authorization\", \"prefix\": \"Bearer \",\n"
	"      \"endpoints\": [\"POST /v1/*\"] },\n"
	"    { \"name\": \"gemini\", \"env\": \"GEMINI_API_KEY\",\n"
	"      \"source\": { \"env\": \"CORDON_UNIT_KEY_C\" }, \"hosts\": [\"gl.google.test\"],\n"
	"      \"header\": \"x-goog-api-key\",\n"
	"      \"endpoints\": [\"POST /v1beta/models/*:generateContent\",\n"
	"                    \"POST /v1beta/models/*:streamGenerateContent\",\n"
	"                    \"POST /v1beta/*/x/*-pro:go\", \"GET /v1beta/models*\"] } ],\n"
	"  \"rules\": [\n"
	"    { \"name\": \"llm\", \"decision\": \"allow\",\n"
	"      \"net\": { \"hosts\": [\"api.anthropic.test\", \"api2.anthropic.test\",\n"
	"                         \"api.openai.test\", \"gl.google.test\"], \"ports\": [443],\n"
	"               \"via\": \"credential-proxy\" } } ] }\n";

struct fixture {
	struct policy *pol;
	struct creds *c;
	struct http_request rq;
	char raw[4096];                 /* what rq's header fields point into */
	char head[HTTP_MAX_HEAD + 4096];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct pol_diags d = { 0 };

	if (!f)
		return -1;
	setenv("CORDON_UNIT_KEY_A", KEY_A, 1);
	setenv("CORDON_UNIT_KEY_B", KEY_B, 1);
	setenv("CORDON_UNIT_KEY_C", KEY_C, 1);
	if (pol_load_text(policy_text, sizeof(policy_text) - 1, "cred-unit.json", NULL, &f->pol,
			  &d) < 0) {
		pol_diags_print(&d, "cred-unit.json", stderr);
		pol_diags_free(&d);
		free(f);
		return -1;
	}
	pol_diags_free(&d);
	if (creds_init(&f->c, f->pol, NULL, "test_cred_proxy") < 0) {
		pol_free(f->pol);
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	if (!f)
		return 0;
	creds_free(f->c);
	pol_free(f->pol);
	free(f);
	return 0;
}

static const char *sentinel(const struct fixture *f, size_t i)
{
	const char *s = NULL;

	assert_non_null(creds_at(f->c, i, &s));
	assert_non_null(s);
	return s;
}

/* Parse a head with "%S" standing for credential i's sentinel. */
static void request(struct fixture *f, const char *tmpl, size_t i)
{
	char why[256];
	const char *at = strstr(tmpl, "%S");
	int n;

	if (at)
		n = snprintf(f->raw, sizeof(f->raw), "%.*s%s%s", (int)(at - tmpl), tmpl,
			     sentinel(f, i), at + 2);
	else
		n = snprintf(f->raw, sizeof(f->raw), "%s", tmpl);
	assert_true(n > 0 && (size_t)n < sizeof(f->raw));
	if (http_parse_request(f->raw, (size_t)n, &f->rq, why, sizeof(why)) != n)
		fail_msg("the test's request did not parse: %s", why);
}

/* Judge the request on a tunnel to credential i's first host, port 443. */
static void check(struct fixture *f, size_t i, int want)
{
	static const char *const tunnel[] = { "api.anthropic.test", "api.openai.test",
					      "gl.google.test" };
	char why[256] = "";
	int r = creds_check(f->c, i, &f->rq, tunnel[i], 443, why, sizeof(why));

	if (r != want)
		fail_msg("creds_check: %d (%s), want %d", r, why, want);
	if (r < 0)
		assert_true(why[0] != '\0');
}

static void expect_head(struct fixture *f, size_t i, const char *want)
{
	int n = creds_upstream_head(f->c, i, &f->rq, f->head, sizeof(f->head));

	if (n < 0 || (size_t)n != strlen(want) || memcmp(f->head, want, (size_t)n))
		fail_msg("upstream head (%d):\n%.*s\nwant:\n%s", n, n < 0 ? 0 : n, f->head, want);
	assert_int_equal(f->head[n], '\0');
}

static void head_swaps_the_key_and_drops_hop_by_hop(void **state)
{
	struct fixture *f = *state;

	request(f, "POST /v1/messages HTTP/1.1\r\n"
		   "Host: api.anthropic.test\r\n"
		   "User-Agent: agent/1.0\r\n"
		   "x-api-key: %S\r\n"
		   "Content-Type: application/json\r\n"
		   "Connection: keep-alive\r\n"
		   "Keep-Alive: timeout=5\r\n"
		   "Proxy-Connection: keep-alive\r\n"
		   "Proxy-Authorization: Basic Zm9vOmJhcg==\r\n"
		   "TE: trailers\r\n"
		   "Accept-Encoding: gzip, br\r\n"
		   "Expect: 100-continue\r\n"
		   "anthropic-version: 2023-06-01\r\n"
		   "Content-Length: 17\r\n"
		   "\r\n", 0);
	check(f, 0, 0);
	expect_head(f, 0, "POST /v1/messages HTTP/1.1\r\n"
			  "Host: api.anthropic.test\r\n"
			  "User-Agent: agent/1.0\r\n"
			  "Content-Type: application/json\r\n"
			  "anthropic-version: 2023-06-01\r\n"
			  "Content-Length: 17\r\n"
			  "Accept-Encoding: identity\r\n"
			  "x-api-key: " KEY_A "\r\n"
			  "\r\n");
}

static void head_with_prefix_chunked_and_close(void **state)
{
	struct fixture *f = *state;

	request(f, "POST /v1/chat/completions?stream=1 HTTP/1.1\r\n"
		   "Host: api.openai.test:443\r\n"
		   "Authorization: Bearer %S\r\n"
		   "Transfer-Encoding: chunked\r\n"
		   "Connection: close\r\n"
		   "\r\n", 1);
	check(f, 1, 0);
	expect_head(f, 1, "POST /v1/chat/completions?stream=1 HTTP/1.1\r\n"
			  "Host: api.openai.test:443\r\n"
			  "Transfer-Encoding: chunked\r\n"
			  "Accept-Encoding: identity\r\n"
			  "Connection: close\r\n"
			  "authorization: Bearer " KEY_B "\r\n"
			  "\r\n");
	/* No body at all: no framing stated. */
	request(f, "POST /v1/embeddings HTTP/1.1\r\nHost: api.openai.test\r\n"
		   "Authorization: Bearer %S\r\n\r\n", 1);
	check(f, 1, 0);
	expect_head(f, 1, "POST /v1/embeddings HTTP/1.1\r\n"
			  "Host: api.openai.test\r\n"
			  "Accept-Encoding: identity\r\n"
			  "authorization: Bearer " KEY_B "\r\n"
			  "\r\n");
}

/* A head that does not fit, at every size short of it: -E2BIG, nothing of the key left. */
static void head_too_large_is_refused_and_wiped(void **state)
{
	struct fixture *f = *state;
	int full;

	request(f, "POST /v1/messages HTTP/1.1\r\nHost: api.anthropic.test\r\n"
		   "x-api-key: %S\r\nContent-Length: 2\r\n\r\n", 0);
	full = creds_upstream_head(f->c, 0, &f->rq, f->head, sizeof(f->head));
	assert_true(full > 0);
	for (size_t cap = 1; cap <= (size_t)full + 1; cap++) {
		char *b = malloc(cap);
		int n;

		assert_non_null(b);
		memset(b, 'x', cap);
		n = creds_upstream_head(f->c, 0, &f->rq, b, cap);
		if (cap <= (size_t)full) {
			assert_int_equal(n, -E2BIG);
			for (size_t k = 0; k < cap; k++)
				if (b[k])
					fail_msg("cap %zu: byte %zu left as 0x%02x", cap, k,
						 (unsigned char)b[k]);
		} else {
			assert_int_equal(n, full);
			assert_memory_equal(b, f->head, (size_t)full);
			assert_int_equal(b[full], '\0');
		}
		free(b);
	}
}

/*
 * Header fields that no longer hold what was parsed (a caller whose buffer
 * moved under them, as the proxy's did: the body where the fields were)
 * are refused, never copied upstream: a CR, LF, NUL or other control
 * byte in a name or value gives -E2BIG and a wiped buffer.
 */
static void head_with_control_bytes_is_refused(void **state)
{
	struct fixture *f = *state;
	static const char *const bad[] = { "\r", "\n", "\0", "\x01", "\x7f", "\r\n\r\nGET /x HTTP/1.1" };

	for (size_t b = 0; b < sizeof(bad) / sizeof(bad[0]); b++) {
		size_t bl = b == 2 ? 1 : strlen(bad[b]);
		char *v;
		int n;

		request(f, "POST /v1/messages HTTP/1.1\r\nHost: api.anthropic.test\r\n"
			   "x-api-key: %S\r\nx-check: abcdefgh\r\nContent-Length: 2\r\n\r\n", 0);
		check(f, 0, 0);
		v = strstr(f->raw, "abcdefgh");
		assert_non_null(v);
		memcpy(v + 2, bad[b], bl < 6 ? bl : 6);     /* in the value */
		memset(f->head, 'x', sizeof(f->head));
		n = creds_upstream_head(f->c, 0, &f->rq, f->head, sizeof(f->head));
		if (n != -E2BIG)
			fail_msg("a value holding bad[%zu]: %d, want -E2BIG", b, n);
		for (size_t k = 0; k < sizeof(f->head); k++)
			if (f->head[k])
				fail_msg("bad[%zu]: byte %zu left", b, k);
		memcpy(strstr(f->raw, "x-check") + 1, bad[b], 1);   /* in the name */
		memcpy(v + 2, "cdefgh", 6);
		assert_int_equal(creds_upstream_head(f->c, 0, &f->rq, f->head, sizeof(f->head)), -E2BIG);
	}
	/* A horizontal tab inside a value is a field byte, and passes. */
	request(f, "POST /v1/messages HTTP/1.1\r\nHost: api.anthropic.test\r\n"
		   "x-api-key: %S\r\nx-check: a\tb\r\nContent-Length: 2\r\n\r\n", 0);
	check(f, 0, 0);
	expect_head(f, 0, "POST /v1/messages HTTP/1.1\r\n"
			  "Host: api.anthropic.test\r\n"
			  "x-check: a\tb\r\n"
			  "Content-Length: 2\r\n"
			  "Accept-Encoding: identity\r\n"
			  "x-api-key: " KEY_A "\r\n"
			  "\r\n");
}

static void check_refuses(void **state)
{
	struct fixture *f = *state;
	/* A head (%S: the sentinel of credential `as`), judged for credential `on`. */
	static const struct {
		const char *head;
		size_t as, on;
		int want;
	} cases[] = {
		/* Another credential's sentinel, or the real key itself. */
		{ "POST /v1/messages HTTP/1.1\r\nHost: api.anthropic.test\r\n"
		  "x-api-key: %S\r\n\r\n", 1, 0, -403 },
		{ "POST /v1/messages HTTP/1.1\r\nHost: api.anthropic.test\r\n"
		  "x-api-key: " KEY_A "\r\n\r\n", 0, 0, -403 },
		/* The header twice, or the sentinel in another header. */
		{ "POST /v1/messages HTTP/1.1\r\nHost: api.anthropic.test\r\n"
		  "x-api-key: %S\r\nx-api-key: x\r\n\r\n", 0, 0, -403 },
		{ "POST /v1/messages HTTP/1.1\r\nHost: api.anthropic.test\r\n"
		  "authorization: %S\r\n\r\n", 0, 0, -403 },
		/* The prefix missing. */
		{ "POST /v1/chat/completions HTTP/1.1\r\nHost: api.openai.test\r\n"
		  "Authorization: %S\r\n\r\n", 1, 1, -403 },
		/* Not an endpoint: another method, a longer path, dot segments. */
		{ "GET /v1/messages HTTP/1.1\r\nHost: api.anthropic.test\r\n"
		  "x-api-key: %S\r\n\r\n", 0, 0, -403 },
		{ "POST /v1/messages/batches HTTP/1.1\r\nHost: api.anthropic.test\r\n"
		  "x-api-key: %S\r\n\r\n", 0, 0, -403 },
		{ "POST /v1/../admin HTTP/1.1\r\nHost: api.openai.test\r\n"
		  "Authorization: Bearer %S\r\n\r\n", 1, 1, -403 },
		/* Segments a servlet container reads as dot segments (";params" dropped). */
		{ "POST /v1/models/..;/admin HTTP/1.1\r\nHost: api.openai.test\r\n"
		  "Authorization: Bearer %S\r\n\r\n", 1, 1, -403 },
		{ "POST /v1/x/..%3B/..%3b/admin HTTP/1.1\r\nHost: api.openai.test\r\n"
		  "Authorization: Bearer %S\r\n\r\n", 1, 1, -403 },
		{ "POST /v1/chat;v=1/completions HTTP/1.1\r\nHost: api.openai.test\r\n"
		  "Authorization: Bearer %S\r\n\r\n", 1, 1, -403 },
		/* Host: another credential's host, another port. */
		{ "POST /v1/messages HTTP/1.1\r\nHost: api.openai.test\r\n"
		  "x-api-key: %S\r\n\r\n", 0, 0, -403 },
		{ "POST /v1/messages HTTP/1.1\r\nHost: api.anthropic.test:8443\r\n"
		  "x-api-key: %S\r\n\r\n", 0, 0, -403 },
		/* Another host of the same credential: not the tunnel's. */
		{ "POST /v1/messages HTTP/1.1\r\nHost: api2.anthropic.test\r\n"
		  "x-api-key: %S\r\n\r\n", 0, 0, -403 },
		/* Fields that would have the upstream take another method, path or host. */
		{ "POST /v1/messages HTTP/1.1\r\nHost: api.anthropic.test\r\n"
		  "X-HTTP-Method-Override: DELETE\r\nx-api-key: %S\r\n\r\n", 0, 0, -403 },
		{ "POST /v1/messages HTTP/1.1\r\nHost: api.anthropic.test\r\n"
		  "x-method-override: DELETE\r\nx-api-key: %S\r\n\r\n", 0, 0, -403 },
		{ "POST /v1/chat/completions HTTP/1.1\r\nHost: api.openai.test\r\n"
		  "X-Original-URL: /v1/admin\r\nAuthorization: Bearer %S\r\n\r\n", 1, 1, -403 },
		{ "POST /v1/chat/completions HTTP/1.1\r\nHost: api.openai.test\r\n"
		  "X-Rewrite-URL: /v1/admin\r\nAuthorization: Bearer %S\r\n\r\n", 1, 1, -403 },
		{ "POST /v1/chat/completions HTTP/1.1\r\nHost: api.openai.test\r\n"
		  "X-Forwarded-Host: evil.test\r\nAuthorization: Bearer %S\r\n\r\n", 1, 1, -403 },
		{ "POST /v1/chat/completions HTTP/1.1\r\nHost: api.openai.test\r\n"
		  "Forwarded: host=evil.test\r\nAuthorization: Bearer %S\r\n\r\n", 1, 1, -403 },
		/* The same request with all right: through. */
		{ "POST /v1/messages HTTP/1.1\r\nHost: api.anthropic.test\r\n"
		  "x-api-key: %S\r\n\r\n", 0, 0, 0 },
		{ "POST /v1/chat/completions?x=a;b HTTP/1.1\r\nHost: api.openai.test\r\n"
		  "Authorization: Bearer %S\r\n\r\n", 1, 1, 0 },
	};

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		request(f, cases[k].head, cases[k].as);
		check(f, cases[k].on, cases[k].want);
	}
}

/*
 * Google's paths put the method after the model: "models/" "*:generateContent"
 * admits any model, that method only; a sentinel in the query ("?key=") is
 * refused with a reason, whichever credential's it is.
 */
static void gemini_endpoints_and_query_key(void **state)
{
	struct fixture *f = *state;
	static const struct {
		const char *head;
		size_t as;
		int want;
	} cases[] = {
		{ "POST /v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse HTTP/1.1\r\n"
		  "Host: gl.google.test\r\nx-goog-api-key: %S\r\n\r\n", 2, 0 },
		{ "POST /v1beta/models/gemini-3.1-pro-preview:generateContent HTTP/1.1\r\n"
		  "Host: gl.google.test\r\nx-goog-api-key: %S\r\n\r\n", 2, 0 },
		{ "GET /v1beta/models HTTP/1.1\r\nHost: gl.google.test\r\n"
		  "x-goog-api-key: %S\r\n\r\n", 2, 0 },
		/* Inner '*': a whole name, then the rest of the pattern. */
		{ "POST /v1beta/a/x/gemini-pro:go HTTP/1.1\r\nHost: gl.google.test\r\n"
		  "x-goog-api-key: %S\r\n\r\n", 2, 0 },
		{ "POST /v1beta/a/b/x/gemini-pro:go HTTP/1.1\r\nHost: gl.google.test\r\n"
		  "x-goog-api-key: %S\r\n\r\n", 2, -403 },
		{ "POST /v1beta/a/x/-pro:go HTTP/1.1\r\nHost: gl.google.test\r\n"
		  "x-goog-api-key: %S\r\n\r\n", 2, -403 },
		/* The model's other methods, a model with a colon or a slash in it, none. */
		{ "POST /v1beta/models/gemini-2.5-pro:batchGenerateContent HTTP/1.1\r\n"
		  "Host: gl.google.test\r\nx-goog-api-key: %S\r\n\r\n", 2, -403 },
		{ "POST /v1beta/models/gemini-2.5-pro:x:generateContent HTTP/1.1\r\n"
		  "Host: gl.google.test\r\nx-goog-api-key: %S\r\n\r\n", 2, -403 },
		{ "POST /v1beta/models/a/b:generateContent HTTP/1.1\r\n"
		  "Host: gl.google.test\r\nx-goog-api-key: %S\r\n\r\n", 2, -403 },
		{ "POST /v1beta/models/:generateContent HTTP/1.1\r\n"
		  "Host: gl.google.test\r\nx-goog-api-key: %S\r\n\r\n", 2, -403 },
		{ "POST /v1beta/models/gemini-2.5-pro:generateContentX HTTP/1.1\r\n"
		  "Host: gl.google.test\r\nx-goog-api-key: %S\r\n\r\n", 2, -403 },
		{ "POST /v1beta/cachedContents HTTP/1.1\r\n"
		  "Host: gl.google.test\r\nx-goog-api-key: %S\r\n\r\n", 2, -403 },
		/* The key in the query: the sentinel there, alone or beside the header. */
		{ "POST /v1beta/models/m:generateContent?key=%S HTTP/1.1\r\n"
		  "Host: gl.google.test\r\n\r\n", 2, -403 },
		{ "POST /v1beta/models/m:generateContent?alt=sse&key=x HTTP/1.1\r\n"
		  "Host: gl.google.test\r\nx-goog-api-key: %S\r\n\r\n", 2, 0 },
		{ "GET /v1beta/models?key=%S HTTP/1.1\r\nHost: gl.google.test\r\n\r\n", 0, -403 },
		/* Another credential's sentinel in the header. */
		{ "GET /v1beta/models HTTP/1.1\r\nHost: gl.google.test\r\n"
		  "x-goog-api-key: %S\r\n\r\n", 1, -403 },
	};
	char why[256] = "";
	char raw[512];

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		request(f, cases[k].head, cases[k].as);
		check(f, 2, cases[k].want);
	}
	/* The reason names the header the key belongs in. */
	snprintf(raw, sizeof(raw), "POST /v1beta/models/m:generateContent?key=%s HTTP/1.1\r\n"
		 "Host: gl.google.test\r\nx-goog-api-key: %s\r\n\r\n", sentinel(f, 2),
		 sentinel(f, 2));
	memcpy(f->raw, raw, strlen(raw) + 1);
	assert_int_equal(http_parse_request(f->raw, strlen(f->raw), &f->rq, why, sizeof(why)),
			 (int)strlen(f->raw));
	assert_int_equal(creds_check(f->c, 2, &f->rq, "gl.google.test", 443, why, sizeof(why)), -403);
	assert_non_null(strstr(why, "query"));
	assert_non_null(strstr(why, "x-goog-api-key"));
	/* Through: the real key in the header, the sentinel nowhere. */
	request(f, "POST /v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse HTTP/1.1\r\n"
		   "Host: gl.google.test\r\nx-goog-api-key: %S\r\nContent-Length: 2\r\n\r\n", 2);
	check(f, 2, 0);
	expect_head(f, 2, "POST /v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse HTTP/1.1\r\n"
			  "Host: gl.google.test\r\n"
			  "Content-Length: 2\r\n"
			  "Accept-Encoding: identity\r\n"
			  "x-goog-api-key: " KEY_C "\r\n"
			  "\r\n");
}

/* Toward a gateway: its path prefix, its name in Host (the agent's dropped). */
static void head_toward_a_gateway(void **state)
{
	struct fixture *f = *state;
	struct pol_credential *cr = &f->pol->creds[0];
	char why[256];

	assert_int_equal(pol_credential_set_upstream(cr, "https://gw.corp.test:8443/anthropic/", NULL,
						     why, sizeof(why)), 0);
	request(f, "POST /v1/messages HTTP/1.1\r\nHost: api.anthropic.test\r\n"
		   "x-api-key: %S\r\nContent-Length: 2\r\n\r\n", 0);
	check(f, 0, 0);
	expect_head(f, 0, "POST /anthropic/v1/messages HTTP/1.1\r\n"
			  "Host: gw.corp.test:8443\r\n"
			  "Content-Length: 2\r\n"
			  "Accept-Encoding: identity\r\n"
			  "x-api-key: " KEY_A "\r\n"
			  "\r\n");
	assert_int_equal(pol_credential_set_upstream(cr, "https://[fd00::1]", NULL, why, sizeof(why)), 0);
	assert_string_equal(cr->upstream_host, "fd00::1");
	assert_int_equal(cr->upstream_port, 443);
	assert_string_equal(cr->upstream_prefix, "");
	expect_head(f, 0, "POST /v1/messages HTTP/1.1\r\n"
			  "Host: [fd00::1]\r\n"
			  "Content-Length: 2\r\n"
			  "Accept-Encoding: identity\r\n"
			  "x-api-key: " KEY_A "\r\n"
			  "\r\n");
}

/* What an upstream may not be: each refused with a reason, the credential unchanged. */
static void bad_gateways_are_refused(void **state)
{
	struct fixture *f = *state;
	struct pol_credential *cr = &f->pol->creds[1];
	static const char *const bad[] = {
		"http://gw.test", "gw.test", "https://", "https://:443", "https://gw.test:0",
		"https://gw.test:65536", "https://gw.test:1x", "https://gw.test/a?b", "https://gw.test/#x",
		"https://gw.test/a/../b", "https://gw.test/a//b", "https://gw.test/%2e", "https://gw.test/a b",
		"https://[fd00::1", "https://[fd00::1]x", "https://gw test", "https://gw.test\r\nX: y",
	};
	char why[256];

	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		why[0] = 0;
		if (pol_credential_set_upstream(cr, bad[k], NULL, why, sizeof(why)) != -EINVAL)
			fail_msg("upstream \"%s\" was admitted", bad[k]);
		assert_true(why[0] != 0);
		assert_null(cr->upstream_host);
	}
	assert_int_equal(pol_credential_set_upstream(cr, "https://gw.test", "relative.pem", why,
						     sizeof(why)), -EINVAL);
	assert_int_equal(pol_apply_upstream(f->pol, "nosuch=https://gw.test", NULL, why, sizeof(why)),
			 -ENOENT);
	assert_int_equal(pol_apply_upstream(f->pol, "=https://gw.test", NULL, why, sizeof(why)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(head_swaps_the_key_and_drops_hop_by_hop),
		cmocka_unit_test(head_with_prefix_chunked_and_close),
		cmocka_unit_test(head_too_large_is_refused_and_wiped),
		cmocka_unit_test(head_with_control_bytes_is_refused),
		cmocka_unit_test(check_refuses),
		cmocka_unit_test(gemini_endpoints_and_query_key),
		cmocka_unit_test(head_toward_a_gateway),
		cmocka_unit_test(bad_gateways_are_refused),
	};

	return cmocka_run_group_tests_name("cred_proxy", tests, setup, teardown);
}
