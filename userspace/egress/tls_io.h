/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * One side of a credential tunnel's TLS, the agent's or the upstream's:
 * buffered reading under the idle time, coalesced writing, and the plain
 * answers cordon gives inside the tunnel.
 */
#ifndef CORDON_TLS_IO_H
#define CORDON_TLS_IO_H

#include <openssl/ssl.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Buffered reading from one TLS side. */
struct tls_in {
	SSL *ssl;
	int fd;
	char *buf;
	size_t len;
	size_t cap;
	uint64_t timeo_ms;              /* the socket's SO_RCVTIMEO now */
	uint64_t idle_ms;               /* the proxy's idle time */
};

/*
 * Output toward one TLS peer, coalesced: a head and the body that follows
 * it go out as one record and one write(2) rather than several, which on a
 * request/response exchange halves the writes and the wake-ups of the peer.
 * Whoever holds bytes here must flush before it blocks on a read (else a
 * streamed response would stall in the buffer) and at the end of each
 * message.  Flushed bytes are wiped: the upstream's carries the secret.
 */
struct tls_out {
	SSL *ssl;
	char *buf;
	size_t len, cap;
};

/* Time limits on the socket of T, both ways, before its TLS handshake: 0, or -errno. */
int tlsio_limits(struct tls_in *t, int idle_ms);

/* More bytes (>0), 0 at the end of the stream, -ETIMEDOUT past DEADLINE (0: the idle time), <0. */
ssize_t tin_fill(struct tls_in *t, size_t cap, uint64_t deadline);
void tin_consume(struct tls_in *t, size_t n);

int tlsio_send(SSL *ssl, const char *b, size_t n);
int tout_flush(struct tls_out *o);
int tout_write(struct tls_out *o, const char *b, size_t n);

/* A plain answer inside the tunnel; _api: in the form an API client at PATH reads. */
void tlsio_reply(SSL *ssl, int code, const char *why);
void tlsio_reply_api(SSL *ssl, const char *path, int code, const char *why);

#endif /* CORDON_TLS_IO_H */
