// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The authority parser (http_authority.h). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "http_authority.h"
#include "http_lex.h"

/* IPv4 in its one canonical spelling: four parts 0-255, no leading zeros. */
static bool dotted_quad(const char *s, size_t n)
{
	size_t i = 0;

	for (int part = 0; part < 4; part++) {
		size_t b = i;
		unsigned v = 0;

		if (part) {
			if (i >= n || s[i] != '.')
				return false;
			b = ++i;
		}
		while (i < n && is_digit((unsigned char)s[i]) && i - b < 3)
			v = v * 10 + (unsigned)(s[i++] - '0');
		if (i == b || v > 255 || (i - b > 1 && s[b] == '0'))
			return false;
	}
	return i == n;
}

/*
 * A last label that inet_aton (and so getaddrinfo) would read as a number:
 * decimal, or 0x and hex.  The WHATWG URL standard uses the same test.
 */
static bool numeric_label(const char *s, size_t n)
{
	size_t i = 0;

	if (n >= 2 && s[0] == '0' && (s[1] | 0x20) == 'x') {
		for (i = 2; i < n; i++)
			if (!is_xdigit((unsigned char)s[i]))
				return false;
		return true;
	}
	for (; i < n; i++)
		if (!is_digit((unsigned char)s[i]))
			return false;
	return n > 0;
}

static int ipv6_literal(const char *s, size_t n, char *out, size_t outlen)
{
	char a[INET6_ADDRSTRLEN];
	struct in6_addr a6;

	if (n == 0 || n >= sizeof(a))
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!is_xdigit((unsigned char)s[i]) && s[i] != ':' && s[i] != '.')
			return -EINVAL;
	memcpy(a, s, n);
	a[n] = '\0';
	if (inet_pton(AF_INET6, a, &a6) != 1)
		return -EINVAL;
	/* As policy/match.c does: a mapped address is the IPv4 one it reaches. */
	if (IN6_IS_ADDR_V4MAPPED(&a6))
		return inet_ntop(AF_INET, &a6.s6_addr[12], out, (socklen_t)outlen) ? 0 : -EINVAL;
	return inet_ntop(AF_INET6, &a6, out, (socklen_t)outlen) ? 0 : -EINVAL;
}

static int reg_name(const char *s, size_t n, char *out, size_t outlen)
{
	size_t label = 0, last = 0;

	if (n && s[n - 1] == '.')
		n--;
	if (n == 0 || n > 253 || n >= outlen)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '.') {
			if (!label)
				return -EINVAL;
			label = 0;
			last = i + 1;
		} else if (is_alpha(c) || is_digit(c) || c == '-' || c == '_') {
			if (++label > 63)
				return -EINVAL;
		} else {
			return -EINVAL;
		}
		out[i] = (char)lc(c);
	}
	out[n] = '\0';
	if (!label)
		return -EINVAL;
	if (numeric_label(s + last, n - last) && !dotted_quad(s, n))
		return -EINVAL;
	return 0;
}

int http_parse_authority(const char *s, size_t len, char *host, size_t hostlen, uint16_t *port,
			 uint16_t default_port)
{
	char out[256];
	const char *p = NULL;   /* after a ':' that introduces a port */
	size_t pn = 0, n;
	unsigned long v = 0;
	int rc;

	if (!s || !len || !host || !port)
		return -EINVAL;
	/* Userinfo, percent-encoding and zone ids: no spelling of them is safe. */
	if (memchr(s, '@', len) || memchr(s, '%', len))
		return -EINVAL;
	if (s[0] == '[') {
		const char *rb = memchr(s, ']', len);

		if (!rb)
			return -EINVAL;
		n = (size_t)(rb - s) - 1;
		rc = ipv6_literal(s + 1, n, out, sizeof(out));
		if (rc < 0)
			return rc;
		if (n + 2 < len) {
			if (rb[1] != ':')
				return -EINVAL;
			p = rb + 2;
			pn = len - n - 3;
		}
	} else {
		const char *colon = memchr(s, ':', len);

		n = colon ? (size_t)(colon - s) : len;
		if (colon) {
			p = colon + 1;
			pn = len - n - 1;
		}
		rc = reg_name(s, n, out, sizeof(out));
		if (rc < 0)
			return rc;
	}
	if (p) {
		/* "host:" and leading zeros are legal URI syntax; one spelling is safer. */
		if (pn == 0 || pn > 5 || p[0] == '0')
			return -EINVAL;
		for (size_t i = 0; i < pn; i++) {
			if (!is_digit((unsigned char)p[i]))
				return -EINVAL;
			v = v * 10 + (unsigned long)(p[i] - '0');
		}
		if (v > 65535)
			return -EINVAL;
	} else {
		if (!default_port)
			return -EINVAL;
		v = default_port;
	}
	n = strlen(out);
	if (n >= hostlen)
		return -EINVAL;
	memcpy(host, out, n + 1);
	*port = (uint16_t)v;
	return 0;
}
