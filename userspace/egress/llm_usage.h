/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Token usage read from LLM API responses as the credential proxy relays
 * them, for a session's budget of tokens: Anthropic Messages, OpenAI Chat
 * Completions and Responses, whole JSON bodies or server-sent events.  Pure
 * (no I/O); what it cannot see: llm_usage.c.
 */
#ifndef CORDON_LLM_USAGE_H
#define CORDON_LLM_USAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* max_bytes when 0 is given: a JSON body, or one SSE line or event's data. */
#define LLM_USAGE_MAX_DEFAULT ((size_t)1 << 20)
/*
 * A count above this is not believed (ignored): far beyond any context
 * window, and small enough that a session's sums cannot wrap a uint64_t.
 */
#define LLM_USAGE_MAX_TOKENS ((uint64_t)1 << 40)

struct llm_usage {
	uint64_t input;         /* prompt tokens, cache writes and reads included */
	uint64_t output;        /* completion tokens, reasoning included */
	bool seen;              /* some usage object gave a count */
	/*
	 * Part of the response went unread: a JSON body past max_bytes, an
	 * SSE line or event past it, or memory ran out.  The counts cover
	 * only what was read; account conservatively.
	 */
	bool truncated;
};

struct llm_usage_parser {
	bool sse;
	size_t max;
	char *buf;              /* JSON: the body; SSE: the current line */
	size_t len, cap;
	bool skip;              /* JSON: past max; SSE: the current line is past max */
	bool cr;                /* SSE: the last byte was CR (a following LF ends nothing) */
	bool first_line;        /* SSE: a UTF-8 BOM may open the stream */
	char *data;             /* SSE: the current event's data lines, '\n'-joined */
	size_t data_len, data_cap;
	bool has_data;          /* SSE: the event has a data field (maybe empty) */
	bool data_over;         /* SSE: the event's data went past max */
	struct llm_usage u;
};

/*
 * SSE: the body is text/event-stream, else one JSON document
 * (application/json).  MAX_BYTES: the bound on what is kept (0: the
 * default).
 */
void llm_usage_init(struct llm_usage_parser *p, bool sse, size_t max_bytes);
/* The next N bytes of the (identity-encoded, de-chunked) body. */
void llm_usage_feed(struct llm_usage_parser *p, const char *buf, size_t n);
/*
 * End of body: the usage of this response, the maximum seen of each count
 * (streams repeat cumulative counts; they are not summed).  An unfinished
 * last SSE line or event is read too.  Call once, then llm_usage_free.
 */
void llm_usage_finish(struct llm_usage_parser *p, struct llm_usage *out);
void llm_usage_free(struct llm_usage_parser *p);

#endif /* CORDON_LLM_USAGE_H */
