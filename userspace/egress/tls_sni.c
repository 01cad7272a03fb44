// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The ClientHello's server name, for the egress broker's rule that the name
 * a client asks the proxy for (CONNECT host) is the name it asks the server
 * for (SNI): a tunnel opened to an allowlisted host cannot carry a TLS
 * session with another virtual host of the same address (domain fronting
 * through a shared CDN), and a tunnel without TLS, or without a name, is
 * refused.
 *
 * The handshake may span several records: their payloads are joined (in a
 * bounded local buffer) until the ClientHello's declared length is there.
 * Anything the parser cannot vouch for is -EINVAL: a second server_name
 * extension or a second host_name entry (servers disagree about which one
 * wins), a record that is not a handshake, bytes past the declared lengths.
 *
 * What this cannot close: the name only says which virtual host the client
 * asked for; with Encrypted Client Hello the outer name is all there is to
 * read (it is what this returns), and what flows inside the tunnel after
 * the handshake is opaque to the broker by design.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "tls_sni.h"

static unsigned rd16(const unsigned char *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

static unsigned rd24(const unsigned char *p)
{
	return (unsigned)p[0] << 16 | (unsigned)p[1] << 8 | p[2];
}

/* A DNS name: letters, digits, '-', '.'; labels of 1..63; at most 253. */
static int copy_name(const unsigned char *n, size_t len, char *out, size_t outlen)
{
	size_t label = 0;

	if (len && n[len - 1] == '.')
		len--;
	if (!len || len > 253 || len >= outlen)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = n[i];

		if (c == '.') {
			if (!label)
				return -EINVAL;
			label = 0;
		} else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-') {
			label++;
		} else if (c >= 'A' && c <= 'Z') {
			c = (unsigned char)(c - 'A' + 'a');
			label++;
		} else {
			return -EINVAL;
		}
		if (label > 63)
			return -EINVAL;
		out[i] = (char)c;
	}
	if (!label)
		return -EINVAL;
	out[len] = '\0';
	return 0;
}

static int parse_hello(const unsigned char *h, size_t n, char *host, size_t hostlen)
{
	size_t o = 0, ext_end;
	int found = 0;

	/* client_version, random */
	if (n < 2 + 32 + 1)
		return -EINVAL;
	if (h[0] != 3)
		return -EINVAL;
	o = 2 + 32;
	/* legacy_session_id */
	if (h[o] > 32 || o + 1 + h[o] > n)
		return -EINVAL;
	o += 1 + h[o];
	/* cipher_suites */
	if (o + 2 > n || rd16(h + o) % 2 || !rd16(h + o) || o + 2 + rd16(h + o) > n)
		return -EINVAL;
	o += 2 + rd16(h + o);
	/* legacy_compression_methods */
	if (o + 1 > n || !h[o] || o + 1 + h[o] > n)
		return -EINVAL;
	o += 1 + h[o];
	if (o == n)
		return -ENOENT;         /* no extensions at all */
	if (o + 2 > n || o + 2 + rd16(h + o) != n)
		return -EINVAL;
	ext_end = n;
	o += 2;
	while (o < ext_end) {
		unsigned type, elen;

		if (o + 4 > ext_end)
			return -EINVAL;
		type = rd16(h + o);
		elen = rd16(h + o + 2);
		o += 4;
		if (o + elen > ext_end)
			return -EINVAL;
		if (type == 0) {
			size_t l = o, lend;

			if (found || elen < 2 || rd16(h + l) + 2u != elen)
				return -EINVAL;
			lend = o + elen;
			l += 2;
			while (l < lend) {
				unsigned nlen;
				int r;

				if (l + 3 > lend)
					return -EINVAL;
				nlen = rd16(h + l + 1);
				if (l + 3 + nlen > lend)
					return -EINVAL;
				if (h[l] == 0) {
					if (found)
						return -EINVAL;
					r = copy_name(h + l + 3, nlen, host, hostlen);
					if (r < 0)
						return r;
					found = 1;
				}
				l += 3 + nlen;
			}
			if (!found)
				return -ENOENT;
		}
		o += elen;
	}
	return found ? 1 : -ENOENT;
}

int tls_client_hello_sni(const unsigned char *buf, size_t len, char *host, size_t hostlen)
{
	unsigned char hs[TLS_HELLO_MAX];
	size_t have = 0, o = 0, need = 0;

	if (len > TLS_HELLO_MAX)
		len = TLS_HELLO_MAX;
	while (o < len) {
		unsigned rlen;

		if (len - o < 5)
			return buf[o] == 22 ? 0 : -EINVAL;
		/* A handshake record of TLS 1.0..1.3 framing (major 3). */
		if (buf[o] != 22 || buf[o + 1] != 3 || buf[o + 2] > 4)
			return -EINVAL;
		rlen = rd16(buf + o + 3);
		if (!rlen || rlen > 16384)
			return -EINVAL;
		if (len - o - 5 < rlen)
			return o + 5 + rlen > TLS_HELLO_MAX ? -EINVAL : 0;
		if (have + rlen > sizeof(hs))
			return -EINVAL;
		memcpy(hs + have, buf + o + 5, rlen);
		have += rlen;
		o += 5 + rlen;
		if (!need && have >= 4) {
			if (hs[0] != 1)
				return -EINVAL;         /* not a ClientHello */
			need = 4 + rd24(hs + 1);
			if (need > sizeof(hs))
				return -EINVAL;
		}
		if (need && have >= need) {
			/*
			 * The ClientHello ends with its record (no second
			 * handshake message folded in); records after it
			 * (0-RTT data) are the tunnel's business.
			 */
			if (have != need)
				return -EINVAL;
			return parse_hello(hs + 4, need - 4, host, hostlen);
		}
	}
	return 0;
}
