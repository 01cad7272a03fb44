// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Token usage of LLM API responses (see llm_usage.h), for the credential
 * proxy to charge against a session's budget of tokens without buffering
 * streamed bodies: a JSON body is kept (up to max_bytes) and parsed at its
 * end; an event stream is split into lines and events as it passes, and
 * each event's data is parsed alone.
 *
 * Every JSON object read gives up `usage`, `message.usage` (Anthropic's
 * message_start) and `response.usage` (OpenAI Responses API events).  In
 * each, input is the larger of input_tokens and prompt_tokens, plus
 * Anthropic's cache_creation_input_tokens and cache_read_input_tokens
 * (which its input_tokens leaves out; OpenAI's prompt_tokens already
 * includes cached tokens); output is the larger of output_tokens and
 * completion_tokens, or else total_tokens less input.  Streams repeat
 * counts (Anthropic: input in message_start, cumulative output in each
 * message_delta; OpenAI: one final chunk), so a response's usage is the
 * maximum seen of each, never a sum.  A count that is not a non-negative
 * integer up to LLM_USAGE_MAX_TOKENS is ignored.
 *
 * What it cannot see:
 *  - compressed bodies: gzip or br parse as garbage (seen false); the
 *    proxy must ask for identity encoding and feed de-chunked bytes;
 *  - what lies past max_bytes (a body, an SSE line or event's data):
 *    skipped, and the result says truncated;
 *  - usage an API never sends: a stream cut before Anthropic's last
 *    message_delta reports only what came; an OpenAI chat stream without
 *    stream_options.include_usage reports none (seen false);
 *  - other shapes (Gemini's usageMetadata, batch results).
 * The caller decides what an unseen or truncated usage costs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "llm_usage.h"

void llm_usage_init(struct llm_usage_parser *p, bool sse, size_t max_bytes)
{
	memset(p, 0, sizeof(*p));
	p->sse = sse;
	p->max = max_bytes ? max_bytes : LLM_USAGE_MAX_DEFAULT;
	p->first_line = true;
}

static void wipe_free(char *b, size_t len)
{
	if (b)
		explicit_bzero(b, len);
	free(b);
}

void llm_usage_free(struct llm_usage_parser *p)
{
	/* Bodies may quote anything; the buffers do not outlive the response. */
	wipe_free(p->buf, p->len);
	wipe_free(p->data, p->data_len);
	memset(p, 0, sizeof(*p));
}

/* Append N bytes to *B (holding *LEN of *CAP) within MAX: false when past MAX or out of memory. */
static bool append(char **b, size_t *len, size_t *cap, size_t max, const char *s, size_t n)
{
	if (!n)
		return true;
	if (n > max - *len)
		return false;
	if (*len + n > *cap) {
		size_t c = *cap ? *cap : 256;
		char *nb;

		while (c < *len + n)
			c *= 2;
		if (c > max)
			c = max;
		nb = realloc(*b, c);
		if (!nb)
			return false;
		*b = nb;
		*cap = c;
	}
	memcpy(*b + *len, s, n);
	*len += n;
	return true;
}

/* A count: a non-negative integer up to LLM_USAGE_MAX_TOKENS (a real only if integral). */
static bool count(const json_t *o, const char *key, uint64_t *v)
{
	const json_t *x = json_object_get(o, key);
	double d;

	if (json_is_integer(x)) {
		json_int_t i = json_integer_value(x);

		if (i < 0 || (uint64_t)i > LLM_USAGE_MAX_TOKENS)
			return false;
		*v = (uint64_t)i;
		return true;
	}
	if (!json_is_real(x))
		return false;
	d = json_real_value(x);
	if (!(d >= 0 && d <= (double)LLM_USAGE_MAX_TOKENS) || d != (double)(uint64_t)d)
		return false;
	*v = (uint64_t)d;
	return true;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* The larger of two spellings of one count (no API sends both; believe the larger). */
static bool either(const json_t *o, const char *a, const char *b, uint64_t *v)
{
	uint64_t x = 0, y = 0;
	bool has_a = count(o, a, &x), has_b = count(o, b, &y);

	*v = max_u64(x, y);
	return has_a || has_b;
}

static void take_usage(struct llm_usage *u, const json_t *usage)
{
	uint64_t in, out, v;
	bool has_in, has_out, any;

	if (!json_is_object(usage))
		return;
	has_in = either(usage, "input_tokens", "prompt_tokens", &in);
	has_out = either(usage, "output_tokens", "completion_tokens", &out);
	any = has_in || has_out;
	if (count(usage, "cache_creation_input_tokens", &v)) {
		in += v;
		any = true;
	}
	if (count(usage, "cache_read_input_tokens", &v)) {
		in += v;
		any = true;
	}
	if (!has_out && count(usage, "total_tokens", &v)) {
		out = v > in ? v - in : 0;
		any = true;
	}
	if (!any)
		return;
	u->input = max_u64(u->input, in);
	u->output = max_u64(u->output, out);
	u->seen = true;
}

/*
 * Whether TEXT may name a member usage: it holds those five bytes, or a \u
 * escape (which could spell any of them).  One memchr(3) pass over the
 * u's, not two memmem(3) scans: glibc's memmem takes about a microsecond a
 * kilobyte for needles this short, on every response.
 */
static bool may_hold_usage(const char *text, size_t len)
{
	const char *p = text, *end = text + len;

	while ((p = memchr(p, 'u', (size_t)(end - p))) != NULL) {
		if ((p > text && p[-1] == '\\') || (end - p >= 5 && !memcmp(p, "usage", 5)))
			return true;
		p++;
	}
	return false;
}

/* One JSON document: an object's usage, wherever the APIs put it. */
static void take_json(struct llm_usage *u, const char *text, size_t len)
{
	json_error_t err;
	json_t *o;

	/*
	 * A document without a member named usage, however spelt, is not
	 * parsed (most streamed events, most non-LLM bodies).
	 */
	if (!may_hold_usage(text, len))
		return;
	/*
	 * Integers as reals: a count too large for json_int_t is then one value
	 * to ignore, not a document that fails to parse.
	 */
	o = json_loadb(text, len, JSON_DECODE_INT_AS_REAL, &err);
	if (!o)
		return;
	if (json_is_object(o)) {
		take_usage(u, json_object_get(o, "usage"));
		take_usage(u, json_object_get(json_object_get(o, "message"), "usage"));
		take_usage(u, json_object_get(json_object_get(o, "response"), "usage"));
	}
	json_decref(o);
}

/* The end of an event (an empty line, or the end of the stream). */
static void sse_dispatch(struct llm_usage_parser *p)
{
	static const char done[] = "[DONE]";

	if (p->has_data && !p->data_over &&
	    !(p->data_len == sizeof(done) - 1 && !memcmp(p->data, done, p->data_len)))
		take_json(&p->u, p->data, p->data_len);
	p->data_len = 0;
	p->has_data = false;
	p->data_over = false;
}

/* A whole line, without its end. */
static void sse_line(struct llm_usage_parser *p, const char *l, size_t n)
{
	const char *colon;
	size_t name;

	if (p->first_line) {
		p->first_line = false;
		if (n >= 3 && !memcmp(l, "\xef\xbb\xbf", 3)) {
			l += 3;
			n -= 3;
		}
	}
	if (!n) {
		sse_dispatch(p);
		return;
	}
	colon = memchr(l, ':', n);
	name = colon ? (size_t)(colon - l) : n;
	if (name != 4 || memcmp(l, "data", 4))
		return;         /* event, id, retry, comments: nothing to count */
	l += name;
	n -= name;
	if (n) {                /* the colon, and one space after it */
		l++;
		n--;
		if (n && *l == ' ') {
			l++;
			n--;
		}
	}
	if (p->data_over)
		return;
	if ((p->has_data && !append(&p->data, &p->data_len, &p->data_cap, p->max, "\n", 1)) ||
	    !append(&p->data, &p->data_len, &p->data_cap, p->max, l, n)) {
		p->data_over = true;
		p->u.truncated = true;
	}
	p->has_data = true;
}

/* A line past max: dropped, and so is its event (its data would be incomplete). */
static void sse_overlong(struct llm_usage_parser *p)
{
	p->skip = true;
	p->len = 0;
	p->first_line = false;
	p->data_over = true;
	p->u.truncated = true;
}

static void sse_feed(struct llm_usage_parser *p, const char *buf, size_t n)
{
	size_t i = 0;

	while (i < n) {
		size_t j = i;

		/* CR LF is one line end. */
		if (p->cr) {
			p->cr = false;
			if (buf[i] == '\n') {
				i++;
				continue;
			}
		}
		while (j < n && buf[j] != '\n' && buf[j] != '\r')
			j++;
		if (!p->skip && !append(&p->buf, &p->len, &p->cap, p->max, buf + i, j - i))
			sse_overlong(p);
		if (j == n)
			return;
		p->cr = buf[j] == '\r';
		if (p->skip)
			p->skip = false;
		else
			sse_line(p, p->buf, p->len);
		p->len = 0;
		i = j + 1;
	}
}

void llm_usage_feed(struct llm_usage_parser *p, const char *buf, size_t n)
{
	if (p->sse) {
		sse_feed(p, buf, n);
		return;
	}
	if (p->skip)
		return;
	if (!append(&p->buf, &p->len, &p->cap, p->max, buf, n)) {
		/* Past max_bytes (or out of memory): nothing more to learn from this body. */
		wipe_free(p->buf, p->len);
		p->buf = NULL;
		p->len = p->cap = 0;
		p->skip = true;
		p->u.truncated = true;
	}
}

void llm_usage_finish(struct llm_usage_parser *p, struct llm_usage *out)
{
	if (p->sse) {
		/* A stream cut short: its last line and event count too, if they parse. */
		if (!p->skip && p->len)
			sse_line(p, p->buf, p->len);
		p->len = 0;
		sse_dispatch(p);
	} else if (!p->skip && p->len) {
		take_json(&p->u, p->buf, p->len);
	}
	*out = p->u;
}
