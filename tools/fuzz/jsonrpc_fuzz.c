// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: the MCP proxy's framing (userspace/mcp/jsonrpc.c: the line
 * buffer and the JSON-RPC classifier) and the secret scrub
 * (userspace/egress/scrub.c), everything a peer's bytes meet before the proxy
 * acts on them.
 *
 * Memory safety is for the sanitizers.  Checked here:
 *  - the framer never returns a line longer than its cap, nor one holding
 *    a newline, and returns at most one line (or one oversize report) per
 *    newline in the input, however the bytes are split into reads;
 *  - a message the classifier accepts is an object with "jsonrpc": "2.0",
 *    and its refusal codes are the four JSON-RPC ones;
 *  - the error answer built for a refused message parses back as a
 *    response (the proxy's own output is valid JSON-RPC);
 *  - a scrubbed line never contains the secret.
 * The first input byte chooses the read size, so splits are fuzzed too.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "jsonrpc.h"
#include "scrub.h"

#define CAP 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_line(const struct scrub *sc, const char *line, size_t len)
{
	json_t *msg = NULL, *id = NULL;
	char why[256];
	int kind = jrpc_parse(line, len, &msg, &id, why, sizeof(why));
	char *out;
	size_t olen;

	if (kind > 0) {
		if (!json_is_object(msg) ||
		    strcmp(json_string_value(json_object_get(msg, "jsonrpc")) ?: "", "2.0"))
			abort();
	} else {
		json_t *err, *back = NULL, *bid = NULL;
		char *text;
		size_t n;

		if (kind != JRPC_PARSE_ERROR && kind != JRPC_INVALID_REQUEST &&
		    kind != JRPC_INVALID_PARAMS && kind != JRPC_METHOD_NOT_FOUND)
			abort();
		if (msg || !why[0])
			abort();
		err = jrpc_error(id, kind, why, NULL);
		text = err ? jrpc_dump(err, &n) : NULL;
		if (!text || text[n - 1] != '\n' || memchr(text, '\n', n - 1))
			abort();
		if (jrpc_parse(text, n - 1, &back, &bid, why, sizeof(why)) != JRPC_RESPONSE &&
		    id != NULL)
			abort();
		json_decref(back);
		json_decref(bid);
		free(text);
		json_decref(err);
	}
	json_decref(msg);
	json_decref(id);
	if (scrub_bytes(sc, line, len, &out, &olen, NULL) == 0) {
		if (memmem(out, olen, "s3cr3t", 6))
			abort();
		free(out);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct linebuf lb;
	struct scrub sc = { 0 };
	size_t chunk, newlines = 0, got = 0;
	char *line;
	size_t len;
	int r;

	if (size < 1)
		return 0;
	chunk = (size_t)data[0] % 64 + 1;
	data++;
	size--;
	for (size_t i = 0; i < size; i++)
		newlines += data[i] == '\n';
	(void)scrub_add(&sc, "t", "s3cr3t");
	(void)scrub_add(&sc, "u", "cr3");
	linebuf_init(&lb, CAP);
	for (size_t off = 0; off < size; off += chunk) {
		size_t n = size - off < chunk ? size - off : chunk;

		if (linebuf_push(&lb, (const char *)data + off, n) < 0)
			abort();
		while ((r = linebuf_next(&lb, &line, &len)) != 0) {
			if (r < 0) {
				if (r != -E2BIG)
					abort();
			} else {
				if (len > CAP || memchr(line, '\n', len) || line[len] != '\0')
					abort();
				check_line(&sc, line, len);
			}
			got++;
		}
	}
	/* Each newline ends one line; one more oversize report may be pending. */
	if (got > newlines + 1)
		abort();
	linebuf_free(&lb);
	scrub_free(&sc);
	return 0;
}
