// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * JSON-RPC 2.0 framing and validation for the MCP proxy (see jsonrpc.h).
 * Everything a peer sends passes through here before the proxy looks at
 * it, so a malformed message is answered with the right error code and is
 * never half-forwarded.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonrpc.h"

void linebuf_init(struct linebuf *lb, size_t max)
{
	memset(lb, 0, sizeof(*lb));
	lb->max = max;
}

void linebuf_free(struct linebuf *lb)
{
	free(lb->buf);
	memset(lb, 0, sizeof(*lb));
}

int linebuf_push(struct linebuf *lb, const char *data, size_t n)
{
	if (lb->discarding) {
		const char *nl = memchr(data, '\n', n);

		if (!nl)
			return 0;
		lb->discarding = false;
		n -= (size_t)(nl + 1 - data);
		data = nl + 1;
	}
	/* Consumed lines are dropped only here, once per read, not once per line. */
	if (lb->start) {
		memmove(lb->buf, lb->buf + lb->start, lb->len - lb->start);
		lb->len -= lb->start;
		lb->scan -= lb->start;
		lb->start = 0;
	}
	if (lb->len + n + 1 > lb->cap) {
		size_t cap = lb->cap ? lb->cap : 4096;
		char *b;

		while (cap < lb->len + n + 1)
			cap *= 2;
		b = realloc(lb->buf, cap);
		if (!b)
			return -ENOMEM;
		lb->buf = b;
		lb->cap = cap;
	}
	memcpy(lb->buf + lb->len, data, n);
	lb->len += n;
	return 0;
}

int linebuf_next(struct linebuf *lb, char **line, size_t *len)
{
	char *nl, *begin;
	size_t n;

	if (lb->scan < lb->start)
		lb->scan = lb->start;
	nl = lb->len > lb->scan ? memchr(lb->buf + lb->scan, '\n', lb->len - lb->scan) : NULL;
	if (!nl) {
		lb->scan = lb->len;
		if (lb->len - lb->start > lb->max) {
			/* Oversized and unfinished: drop it, and the rest up to its newline. */
			lb->len = lb->start = lb->scan = 0;
			lb->discarding = true;
			return -E2BIG;
		}
		return 0;
	}
	begin = lb->buf + lb->start;
	n = (size_t)(nl - begin);
	lb->start += n + 1;             /* consumed: the caller reads it before the next push */
	if (n > lb->max)
		return -E2BIG;
	*nl = '\0';
	if (n && begin[n - 1] == '\r')
		begin[--n] = '\0';
	*line = begin;
	*len = n;
	return 1;
}

static void say(char *why, size_t whylen, const char *msg)
{
	snprintf(why, whylen, "%s", msg);
}

int jrpc_parse(const char *line, size_t len, json_t **msg, json_t **id, char *why, size_t whylen)
{
	json_error_t e;
	json_t *m, *v, *method, *result, *error;

	*msg = NULL;
	*id = NULL;
	m = json_loadb(line, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &e);
	if (!m) {
		snprintf(why, whylen, "parse error at column %d: %s", e.column, e.text);
		/*
		 * jansson quotes the bytes near the error, which may not be UTF-8:
		 * the reason goes into a JSON answer, so only ASCII text stays.
		 */
		for (char *c = why; *c; c++)
			if ((unsigned char)*c >= 0x80 || (unsigned char)*c < 0x20)
				*c = '?';
		return JRPC_PARSE_ERROR;
	}
	if (json_is_array(m)) {
		json_decref(m);
		say(why, whylen, "batches are not supported (removed from MCP in 2025-06-18)");
		return JRPC_INVALID_REQUEST;
	}
	if (!json_is_object(m)) {
		json_decref(m);
		say(why, whylen, "a message must be a JSON object");
		return JRPC_INVALID_REQUEST;
	}
	v = json_object_get(m, "id");
	if (v && (json_is_string(v) || json_is_integer(v)))
		*id = json_incref(v);
	if (!json_is_string(json_object_get(m, "jsonrpc")) ||
	    strcmp(json_string_value(json_object_get(m, "jsonrpc")), "2.0")) {
		say(why, whylen, "\"jsonrpc\" must be \"2.0\"");
		goto invalid;
	}
	if (v && !*id) {
		say(why, whylen, "\"id\" must be a string or an integer");
		goto invalid;
	}
	method = json_object_get(m, "method");
	result = json_object_get(m, "result");
	error = json_object_get(m, "error");
	if (method) {
		json_t *params = json_object_get(m, "params");

		if (!json_is_string(method) || !json_string_length(method)) {
			say(why, whylen, "\"method\" must be a non-empty string");
			goto invalid;
		}
		if (result || error) {
			say(why, whylen, "a request carries no \"result\" or \"error\"");
			goto invalid;
		}
		if (params && !json_is_object(params)) {
			json_decref(m);
			say(why, whylen, "\"params\" must be an object");
			return JRPC_INVALID_PARAMS;
		}
		*msg = m;
		return v ? JRPC_REQUEST : JRPC_NOTIFICATION;
	}
	if (!v || (!result == !error)) {
		say(why, whylen, v ? "a response carries exactly one of \"result\" and \"error\""
			       : "no \"method\": neither a request nor a response");
		goto invalid;
	}
	if (error && (!json_is_object(error) || !json_is_integer(json_object_get(error, "code")) ||
		      !json_is_string(json_object_get(error, "message")))) {
		say(why, whylen, "\"error\" must have an integer \"code\" and a string \"message\"");
		goto invalid;
	}
	*msg = m;
	return JRPC_RESPONSE;
invalid:
	json_decref(m);
	return JRPC_INVALID_REQUEST;
}

json_t *jrpc_error(json_t *id, int code, const char *message, json_t *data)
{
	/* A message that is not UTF-8 still gets an answer, with a generic text. */
	json_t *err = json_pack("{s:i,s:o}", "code", code, "message",
				json_string(message) ?: json_string("(a reason that is not UTF-8)"));

	if (err && data)
		json_object_set_new(err, "data", data);
	else if (data)
		json_decref(data);
	return json_pack("{s:s,s:O?,s:o}", "jsonrpc", "2.0", "id", id ? id : json_null(), "error", err);
}

json_t *jrpc_result(json_t *id, json_t *result)
{
	return json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id, "result", result);
}

char *jrpc_dump(const json_t *msg, size_t *len)
{
	char *s = json_dumps(msg, JSON_COMPACT | JSON_ENCODE_ANY);
	size_t n;
	char *r;

	if (!s)
		return NULL;
	n = strlen(s);
	r = realloc(s, n + 2);
	if (!r) {
		free(s);
		return NULL;
	}
	r[n] = '\n';
	r[n + 1] = '\0';
	*len = n + 1;
	return r;
}
