/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * JSON-RPC 2.0 as MCP's stdio transport carries it: one message per line,
 * UTF-8 JSON without embedded newlines.  Pure (no I/O): the framing buffer
 * and the message classifier are what the fuzzer drives.
 */
#ifndef CORDON_JSONRPC_H
#define CORDON_JSONRPC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* The JSON-RPC error codes the proxy answers with. */
#define JRPC_PARSE_ERROR      (-32700)
#define JRPC_INVALID_REQUEST  (-32600)
#define JRPC_METHOD_NOT_FOUND (-32601)
#define JRPC_INVALID_PARAMS   (-32602)
#define JRPC_INTERNAL_ERROR   (-32603)
/* Implementation-defined (-32000..-32099): a call the policy refused. */
#define JRPC_DENIED           (-32001)

/*
 * A line framer with a hard cap.  A line longer than `max` is never held
 * whole: the framer reports it once (-E2BIG) and throws bytes away up to
 * its newline, so a peer cannot make the proxy buffer without bound, and
 * what follows the oversized line is framed normally.
 */
struct linebuf {
	char *buf;
	size_t len, cap, max;
	size_t start;           /* where unconsumed bytes begin (lines before it were returned) */
	size_t scan;            /* bytes of buf already searched for '\n' */
	bool discarding;        /* inside an oversized line */
};

void linebuf_init(struct linebuf *lb, size_t max);
void linebuf_free(struct linebuf *lb);
/* Append bytes; -ENOMEM only. */
int linebuf_push(struct linebuf *lb, const char *data, size_t n);
/*
 * The next complete line, without its '\n' (and a '\r' before it), NUL
 * terminated, valid until the next push: 1.  0: none yet.  -E2BIG: an
 * oversized line was dropped (reported once per line).
 */
int linebuf_next(struct linebuf *lb, char **line, size_t *len);

enum jrpc_kind {
	JRPC_REQUEST = 1,       /* method and id */
	JRPC_NOTIFICATION,      /* method, no id */
	JRPC_RESPONSE,          /* id and exactly one of result / error */
};

/*
 * Parse and validate one message.  On success returns its kind and *msg (a
 * new reference).  On failure returns a JSON-RPC error code (negative), with
 * a message in `why` and *id set to the request's id when it could be read
 * (a new reference, or NULL: answer with id null).  Batches (arrays) are
 * refused: MCP removed them in revision 2025-06-18.  An id must be a string
 * or an integer; params, when present, an object.
 */
int jrpc_parse(const char *line, size_t len, json_t **msg, json_t **id, char *why, size_t whylen);

/* {"jsonrpc":"2.0","id":ID,"error":{"code":C,"message":M[,"data":D]}} (steals data). */
json_t *jrpc_error(json_t *id, int code, const char *message, json_t *data);
/* {"jsonrpc":"2.0","id":ID,"result":RESULT} (steals result). */
json_t *jrpc_result(json_t *id, json_t *result);
/* One line: compact JSON and '\n'; malloc'd, or NULL. */
char *jrpc_dump(const json_t *msg, size_t *len);

#endif /* CORDON_JSONRPC_H */
