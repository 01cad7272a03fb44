/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Where each value of a JSON text stands, by JSON Pointer (RFC 6901).
 *
 * jansson builds the tree the policy parser walks but keeps no positions, and
 * every semantic error must name FILE:LINE:COL.  jpos_scan() makes a second,
 * independent pass over the same text and remembers the line and column of
 * every value and every member name, counted the way jansson's json_error_t
 * counts them, so the two kinds of error read alike.
 */
#ifndef CORDON_JSONPOS_H
#define CORDON_JSONPOS_H

#include <stdbool.h>
#include <stddef.h>

/* Deepest nesting of objects and arrays jpos_scan() accepts. */
#define JPOS_MAX_DEPTH 512

struct jpos_map;

/*
 * Scan `len` bytes of JSON text (RFC 8259, strictly: UTF-8 without a BOM, no
 * comments, no trailing commas, no leading zeros, no raw control characters
 * or lone surrogates in strings; "\u0000" is accepted).  The text need not
 * be NUL-terminated and may hold NUL bytes, which are simply invalid.
 * Returns 0 and a map in *out, -EINVAL for text that is not JSON, -E2BIG for
 * nesting deeper than JPOS_MAX_DEPTH or text longer than INT_MAX bytes,
 * -ENOMEM.  On failure *out is NULL.
 */
int jpos_scan(const char *text, size_t len, struct jpos_map **out);

/* Accepts NULL. */
void jpos_free(struct jpos_map *m);

/*
 * Position of the value at `pointer` (key=false) or of its member name, the
 * '"' that opens it, in the enclosing object (key=true).  For an array
 * element and for the root value, key=true gives the value's own position.
 * "" is the root value.  A value's position is its first character.  Line
 * and column are 1-based; the column counts code points, not bytes.  Where a
 * member name occurs twice in one object the last one wins, as in jansson.
 * `line` and `col` may be NULL.  Returns 0, -ENOENT if no such value, or
 * -EINVAL for a malformed pointer (not "" and not starting with '/', or '~'
 * not followed by '0' or '1').
 */
int jpos_get(const struct jpos_map *m, const char *pointer, bool key, int *line, int *col);

/*
 * Append one reference token to the NUL-terminated pointer in buf[size]: a
 * '/' and the token with '~' escaped as "~0" and '/' as "~1".  Returns 0, or
 * -ENAMETOOLONG, leaving buf unchanged, when the result would not fit.  To
 * step back out, the caller saves strlen(buf) before the push and cuts there.
 */
int jpos_push(char *buf, size_t size, const char *token);
int jpos_push_index(char *buf, size_t size, size_t index);

#endif /* CORDON_JSONPOS_H */
