/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The chunked body's scanner (http.c: the smuggling it closes): the
 * framing validated as it streams by, so the body ends where every
 * conforming parser says it ends.  Pure: no I/O, no allocation.
 */
#ifndef CORDON_HTTP_CHUNKED_H
#define CORDON_HTTP_CHUNKED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "http_fields.h"

/* A chunk-size line (size and extensions, without its CRLF), bytes. */
#define HTTP_MAX_CHUNK_LINE 4096

/*
 * Incremental chunked-body scanner: validates, does not decode (a proxy
 * forwards the bytes as they are).  Zero it with http_chunked_init.
 */
struct http_chunked {
	int state;
	uint64_t left;          /* chunk-data bytes still to come */
	size_t line;            /* bytes of the current chunk-size line */
	bool done;
	uint64_t size;          /* the chunk size being read */
	unsigned digits;        /* hex digits of it */
	size_t trailer;         /* bytes of the trailer section so far */
	char name[20];          /* the trailer field name being read (lower-case, truncated) */
	size_t name_len;
};

void http_chunked_init(struct http_chunked *c);
/*
 * Scan the next len bytes of a chunked body.  Returns how many belong to
 * the message (== len unless the message ends inside buf: then the count up
 * to and including the final CRLF of the trailer section, and c->done is
 * set; 0 once done), or -400 when malformed (and on every later call).
 * Chunk sizes: hex, at most 16 digits and below 2^40; chunk extensions to
 * RFC 9112 7.1.1's grammar, each chunk-size line at most
 * HTTP_MAX_CHUNK_LINE bytes; every line ends in CRLF; trailer fields with
 * the head's syntax, no obs-fold, at most HTTP_MAX_HEAD bytes in all, and
 * none of Content-Length, Transfer-Encoding or Host.
 */
ssize_t http_chunked_scan(struct http_chunked *c, const char *buf, size_t len);
/*
 * Chunk-data bytes the scanner expects next (0 while it reads framing):
 * a proxy that re-frames a body scans framing a byte at a time and takes
 * this many bytes as data.
 */
uint64_t http_chunked_data_left(const struct http_chunked *c);

#endif /* CORDON_HTTP_CHUNKED_H */
