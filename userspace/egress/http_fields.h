/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The header section of an HTTP/1.1 head (http.h, http.c: what the parser
 * closes): the head cut into lines that must each end in CRLF (a bare CR
 * or LF refused), each field line parsed strictly (no obs-fold, no
 * whitespace before the colon, no control byte in a value), the lists in
 * field values, Content-Length as plain digits, and Connection.  Pure: no
 * I/O, no allocation, no global state.  The request and response parsers
 * (http.c) and the chunked scanner's trailers (http_chunked.c) use it.
 */
#ifndef CORDON_HTTP_FIELDS_H
#define CORDON_HTTP_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HTTP_MAX_HEAD 16384        /* request or response head, bytes */
#define HTTP_MAX_HEADERS 64
/* Points into the caller's buffer; value trimmed of OWS. */
struct http_header {
	const char *name;
	size_t name_len;
	const char *value;
	size_t value_len;
};

/* Find a header (case-insensitive name): the first, or NULL. */
const struct http_header *http_header_get(const struct http_header *h, size_t n,
					  const char *name);
/* How many fields carry this name (case-insensitive). */
size_t http_header_count(const struct http_header *h, size_t n, const char *name);


/* The elements of a comma-separated list, each trimmed of OWS (may be empty). */
struct http_fields_list {
	const char *p, *end;
	bool done;
};

/* Iterate over H's value: http_fields_list_next gives each element until false. */
void http_fields_list_init(struct http_fields_list *l, const struct http_header *h);
bool http_fields_list_next(struct http_fields_list *l, const char **e, size_t *n);

/*
 * The lines of a head.  Only the first HTTP_MAX_HEAD bytes are looked at,
 * so a head that has not ended by then is 431 however much more arrived.
 */
struct http_fields_lines {
	const char *buf;
	size_t len;             /* bytes available */
	size_t win;             /* of which the head may use */
	size_t pos;             /* where the next line begins */
	unsigned no;            /* lines returned */
	unsigned bad;           /* the line a refusal is about, 0 if not one line's */
};

/* 1: a line [*line, *line + *n) that ended in CRLF; 0: more bytes; -400 or -431 with *err. */
int http_fields_next_line(struct http_fields_lines *l, const char **line, size_t *n,
			  const char **err);

/*
 * Field lines up to the empty one, into H (*NH of them, at most
 * HTTP_MAX_HEADERS): the head's length, 0 for more bytes, or -status with
 * *ERR (L->bad naming the line).
 */
int http_fields_read(struct http_fields_lines *l, struct http_header *h, size_t *nh,
		     const char **err);

/* A Content-Length value: plain digits, at most 15 of them, into *OUT.  False: malformed. */
bool http_fields_length(const struct http_header *h, int64_t *out);

/* close / keep-alive from every Connection field; -400 (with *ERR) for a non-token element. */
int http_fields_connection(const struct http_header *h, size_t nh, bool *close,
			   bool *keep_alive, const char **err);

#endif /* CORDON_HTTP_FIELDS_H */
