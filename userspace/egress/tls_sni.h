/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The server name of a TLS ClientHello (RFC 8446 4.1.2, RFC 6066 3), read
 * by the egress broker from the first bytes a client sends into a CONNECT
 * tunnel.  Pure: no I/O, no allocation, safe from any thread.
 */
#ifndef CORDON_TLS_SNI_H
#define CORDON_TLS_SNI_H

#include <stddef.h>

/* The most a client may send before its ClientHello is complete. */
#define TLS_HELLO_MAX (16384 + 5 * 4)

/*
 * 1: a complete ClientHello naming exactly one host_name, copied to `host`
 * (lower case, without a trailing dot); 0: not complete yet (read more, up
 * to TLS_HELLO_MAX); -ENOENT: a ClientHello without a server name;
 * -EINVAL: not a TLS handshake, malformed, ambiguous (two server_name
 * extensions or two host names), or a name that is not a DNS name.
 */
int tls_client_hello_sni(const unsigned char *buf, size_t len, char *host, size_t hostlen);

#endif /* CORDON_TLS_SNI_H */
