/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The authority of an HTTP request (a target's, or the Host header's),
 * parsed into one canonical host and a port, so that what the policy
 * judges is what the caller connects to (http.c: the host confusion this
 * closes).  Pure.
 */
#ifndef CORDON_HTTP_AUTHORITY_H
#define CORDON_HTTP_AUTHORITY_H

#include <stddef.h>
#include <stdint.h>

/*
 * "host[:port]" or "[v6][:port]": lower-cased host without brackets or
 * trailing dot into host; the port, or default_port (0 = port required).
 * 0 or -EINVAL.  Refuses userinfo ('@'), an empty host, a bad, zero,
 * leading-zero or overflowing port, an empty port after ':', '%' (zone ids
 * and percent-encoding), bytes outside [A-Za-z0-9._-] in a name (the
 * reg-name set narrowed to what DNS can mean), empty or over-long labels,
 * and a name whose last label is numeric unless it is a dotted quad
 * (inet_aton's 0x7f.1 and 2130706433 spell 127.0.0.1).  IPv6 literals come
 * out in inet_ntop's canonical text, IPv4-mapped ones as IPv4.
 */
int http_parse_authority(const char *s, size_t len, char *host, size_t hostlen, uint16_t *port,
			 uint16_t default_port);

#endif /* CORDON_HTTP_AUTHORITY_H */
