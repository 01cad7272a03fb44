// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The ClientHello server name the egress broker compares with CONNECT's host
 * (userspace/egress/tls_sni.c).
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include "tls_sni.h"

struct hello {
	unsigned char b[TLS_HELLO_MAX + 64];
	size_t n;
};

static void put16(unsigned char *p, size_t v)
{
	p[0] = (unsigned char)(v >> 8);
	p[1] = (unsigned char)v;
}

/*
 * A ClientHello with the given server_name extensions (each a list of
 * host_name entries; NULL-separated), padded with a dummy extension of
 * `pad` bytes, split into records of at most `rec` bytes.
 */
static void build(struct hello *out, const char *const *names, int n_ext, size_t pad, size_t rec)
{
	unsigned char body[TLS_HELLO_MAX], hs[TLS_HELLO_MAX];
	size_t o = 0, e, hl, w = 0;
	int k = 0;

	body[o++] = 3;
	body[o++] = 3;                          /* legacy_version */
	memset(body + o, 0x42, 32);
	o += 32;                                /* random */
	body[o++] = 0;                          /* session id */
	put16(body + o, 2);
	body[o + 2] = 0x13;
	body[o + 3] = 0x01;
	o += 4;                                 /* one cipher suite */
	body[o++] = 1;
	body[o++] = 0;                          /* null compression */
	e = o;
	o += 2;
	for (int x = 0; x < n_ext; x++) {
		size_t start = o, list;

		put16(body + o, 0);             /* server_name */
		o += 4;
		list = o;
		o += 2;
		for (; names[k]; k++) {
			size_t l = strlen(names[k]);

			body[o] = 0;
			put16(body + o + 1, l);
			memcpy(body + o + 3, names[k], l);
			o += 3 + l;
		}
		k++;
		put16(body + list, o - list - 2);
		put16(body + start + 2, o - start - 4);
	}
	if (pad) {
		put16(body + o, 21);            /* padding */
		put16(body + o + 2, pad);
		memset(body + o + 4, 0, pad);
		o += 4 + pad;
	}
	put16(body + e, o - e - 2);
	hs[0] = 1;
	hs[1] = (unsigned char)(o >> 16);
	hs[2] = (unsigned char)(o >> 8);
	hs[3] = (unsigned char)o;
	memcpy(hs + 4, body, o);
	hl = o + 4;
	out->n = 0;
	while (w < hl) {
		size_t chunk = hl - w < rec ? hl - w : rec;

		out->b[out->n++] = 22;
		out->b[out->n++] = 3;
		out->b[out->n++] = 1;
		put16(out->b + out->n, chunk);
		out->n += 2;
		memcpy(out->b + out->n, hs + w, chunk);
		out->n += chunk;
		w += chunk;
	}
}

static void one_name(void **state)
{
	static const char *const n[] = { "API.Example.com.", NULL };
	struct hello h;
	char host[256];

	build(&h, n, 1, 0, 16384);
	assert_int_equal(tls_client_hello_sni(h.b, h.n, host, sizeof(host)), 1);
	assert_string_equal(host, "api.example.com");
	/* Every prefix is "read more", never a verdict. */
	for (size_t i = 0; i < h.n; i++)
		assert_int_equal(tls_client_hello_sni(h.b, i, host, sizeof(host)), 0);
}

static void split_across_records(void **state)
{
	static const char *const n[] = { "a.example", NULL };
	struct hello h;
	char host[256];

	build(&h, n, 1, 3000, 100);
	assert_int_equal(tls_client_hello_sni(h.b, h.n, host, sizeof(host)), 1);
	assert_string_equal(host, "a.example");
	for (size_t i = 0; i < h.n; i += 37)
		assert_int_equal(tls_client_hello_sni(h.b, i, host, sizeof(host)), 0);
}

static void refused(void **state)
{
	static const char *const none[] = { NULL };
	static const char *const two[] = { "a.example", "b.example", NULL };
	static const char *const dup[] = { "a.example", NULL, "b.example", NULL };
	static const char *const bad[] = { "a b.example", NULL };
	static const char *const ip[] = { "a..example", NULL };
	struct hello h;
	char host[256];

	build(&h, none, 0, 0, 16384);
	assert_int_equal(tls_client_hello_sni(h.b, h.n, host, sizeof(host)), -ENOENT);
	build(&h, two, 1, 0, 16384);
	assert_int_equal(tls_client_hello_sni(h.b, h.n, host, sizeof(host)), -EINVAL);
	build(&h, dup, 2, 0, 16384);
	assert_int_equal(tls_client_hello_sni(h.b, h.n, host, sizeof(host)), -EINVAL);
	build(&h, bad, 1, 0, 16384);
	assert_int_equal(tls_client_hello_sni(h.b, h.n, host, sizeof(host)), -EINVAL);
	build(&h, ip, 1, 0, 16384);
	assert_int_equal(tls_client_hello_sni(h.b, h.n, host, sizeof(host)), -EINVAL);
	/* Not TLS: an HTTP request, SSH's banner. */
	assert_int_equal(tls_client_hello_sni((const unsigned char *)"GET / HTTP/1.1\r\n", 16, host,
					      sizeof(host)), -EINVAL);
	assert_int_equal(tls_client_hello_sni((const unsigned char *)"SSH-2.0-x\r\n", 11, host,
					      sizeof(host)), -EINVAL);
	/* A handshake that is not a ClientHello. */
	build(&h, two + 1, 1, 0, 16384);
	h.b[5] = 2;
	assert_int_equal(tls_client_hello_sni(h.b, h.n, host, sizeof(host)), -EINVAL);
	/* Lengths that lie. */
	build(&h, two + 1, 1, 0, 16384);
	h.b[5 + 4 + 2 + 32 + 1 + 1] = 0xff;
	assert_int_equal(tls_client_hello_sni(h.b, h.n, host, sizeof(host)), -EINVAL);
	/* Too small a buffer for the name. */
	build(&h, two + 1, 1, 0, 16384);
	assert_int_equal(tls_client_hello_sni(h.b, h.n, host, 4), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(one_name),
		cmocka_unit_test(split_across_records),
		cmocka_unit_test(refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
