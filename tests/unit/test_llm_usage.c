// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Token usage of LLM responses (userspace/egress/llm_usage.c): Anthropic and
 * OpenAI bodies and streams as the APIs send them; streamed counts are the
 * maximum seen, not a sum; cache tokens add to input; bad counts are
 * ignored; garbage parses to nothing; what exceeds the bound is flagged;
 * SSE line endings and fields; and the same answer however the body is
 * split into feeds.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "llm_usage.h"

static const char anthropic_json[] =
	"{\"id\":\"msg_01XFDUDYJgAACzvnptvVoYEL\",\"type\":\"message\",\"role\":\"assistant\","
	"\"content\":[{\"type\":\"text\","
	"\"text\":\"Hello! \\\"usage\\\": {\\\"input_tokens\\\": 1}\"}],"
	"\"model\":\"claude-sonnet-4-5\",\"stop_reason\":\"end_turn\",\"stop_sequence\":null,"
	"\"usage\":{\"input_tokens\":2095,\"cache_creation_input_tokens\":0,"
	"\"cache_read_input_tokens\":0,\"output_tokens\":503,"
	"\"service_tier\":\"standard\"}}";

static const char anthropic_sse[] =
	"event: message_start\n"
	"data: {\"type\":\"message_start\",\"message\":{"
	"\"id\":\"msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY\",\"type\":\"message\","
	"\"role\":\"assistant\",\"content\":[],\"model\":\"claude-sonnet-4-5\","
	"\"stop_reason\":null,\"stop_sequence\":null,"
	"\"usage\":{\"input_tokens\":25,\"output_tokens\":1}}}\n"
	"\n"
	"event: content_block_start\n"
	"data: {\"type\":\"content_block_start\",\"index\":0,"
	"\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n"
	"\n"
	"event: ping\n"
	"data: {\"type\": \"ping\"}\n"
	"\n"
	"event: content_block_delta\n"
	"data: {\"type\":\"content_block_delta\",\"index\":0,"
	"\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello\"}}\n"
	"\n"
	"event: message_delta\n"
	"data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":null},"
	"\"usage\":{\"output_tokens\":5}}\n"
	"\n"
	"event: content_block_delta\n"
	"data: {\"type\":\"content_block_delta\",\"index\":0,"
	"\"delta\":{\"type\":\"text_delta\",\"text\":\"!\"}}\n"
	"\n"
	"event: content_block_stop\n"
	"data: {\"type\":\"content_block_stop\",\"index\":0}\n"
	"\n"
	"event: message_delta\n"
	"data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\","
	"\"stop_sequence\":null},\"usage\":{\"output_tokens\":12}}\n"
	"\n"
	"event: message_stop\n"
	"data: {\"type\":\"message_stop\"}\n"
	"\n";

static const char openai_chat_json[] =
	"{\"id\":\"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT\",\"object\":\"chat.completion\","
	"\"created\":1741569952,\"model\":\"gpt-4.1-2025-04-14\",\"choices\":[{\"index\":0,"
	"\"message\":{\"role\":\"assistant\",\"content\":\"Hello!\",\"refusal\":null},"
	"\"logprobs\":null,\"finish_reason\":\"stop\"}],"
	"\"usage\":{\"prompt_tokens\":19,\"completion_tokens\":10,\"total_tokens\":29,"
	"\"prompt_tokens_details\":{\"cached_tokens\":0,\"audio_tokens\":0},"
	"\"completion_tokens_details\":{\"reasoning_tokens\":0,\"audio_tokens\":0}},"
	"\"service_tier\":\"default\"}";

static const char openai_chat_sse[] =
	"data: {\"id\":\"chatcmpl-123\",\"object\":\"chat.completion.chunk\","
	"\"created\":1694268190,"
	"\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\","
	"\"content\":\"\"},\"finish_reason\":null}],\"usage\":null}\n\n"
	"data: {\"id\":\"chatcmpl-123\",\"object\":\"chat.completion.chunk\","
	"\"created\":1694268190,"
	"\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},"
	"\"finish_reason\":null}],\"usage\":null}\n\n"
	"data: {\"id\":\"chatcmpl-123\",\"object\":\"chat.completion.chunk\","
	"\"created\":1694268190,"
	"\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{},"
	"\"finish_reason\":\"stop\"}],\"usage\":null}\n\n"
	"data: {\"id\":\"chatcmpl-123\",\"object\":\"chat.completion.chunk\","
	"\"created\":1694268190,"
	"\"model\":\"gpt-4o-mini\",\"choices\":[],\"usage\":{\"prompt_tokens\":17,"
	"\"completion_tokens\":9,\"total_tokens\":26}}\n\n"
	"data: [DONE]\n\n";

static const char openai_responses_sse[] =
	"event: response.created\n"
	"data: {\"type\":\"response.created\",\"sequence_number\":0,"
	"\"response\":{\"id\":\"resp_67c\","
	"\"object\":\"response\",\"status\":\"in_progress\",\"output\":[],\"usage\":null}}\n\n"
	"event: response.in_progress\n"
	"data: {\"type\":\"response.in_progress\",\"sequence_number\":1,\"response\":{\"id\":"
	"\"resp_67c\",\"status\":\"in_progress\",\"usage\":null}}\n\n"
	"event: response.output_text.delta\n"
	"data: {\"type\":\"response.output_text.delta\",\"sequence_number\":4,"
	"\"item_id\":\"msg_67c\","
	"\"output_index\":0,\"content_index\":0,\"delta\":\"Hi\"}\n\n"
	"event: response.completed\n"
	"data: {\"type\":\"response.completed\",\"sequence_number\":9,"
	"\"response\":{\"id\":\"resp_67c\","
	"\"object\":\"response\",\"status\":\"completed\",\"usage\":{\"input_tokens\":36,"
	"\"input_tokens_details\":{\"cached_tokens\":0},\"output_tokens\":87,"
	"\"output_tokens_details\":{\"reasoning_tokens\":64},\"total_tokens\":123}}}\n\n";

/* Parse BODY fed in pieces ending at cuts[0..ncuts). */
static struct llm_usage parse_cuts(bool sse, size_t max, const char *body, size_t n,
				   const size_t *cuts, size_t ncuts)
{
	struct llm_usage_parser p;
	struct llm_usage u;
	size_t at = 0;

	llm_usage_init(&p, sse, max);
	for (size_t c = 0; c <= ncuts; c++) {
		size_t end = c < ncuts ? cuts[c] : n;
		/* An exact-size copy of each piece, so ASan sees overreads. */
		char *piece = malloc(end - at + 1);

		assert_non_null(piece);
		memcpy(piece, body + at, end - at);
		llm_usage_feed(&p, piece, end - at);
		free(piece);
		at = end;
	}
	llm_usage_finish(&p, &u);
	llm_usage_free(&p);
	return u;
}

static struct llm_usage parse(bool sse, const char *body)
{
	return parse_cuts(sse, 0, body, strlen(body), NULL, 0);
}

static void expect_usage(struct llm_usage u, bool seen, uint64_t in, uint64_t out, bool trunc,
			 int line)
{
	if (u.seen != seen || u.input != in || u.output != out || u.truncated != trunc)
		fail_msg("line %d: seen %d in %llu out %llu truncated %d, want %d %llu %llu %d",
			 line,
			 u.seen, (unsigned long long)u.input, (unsigned long long)u.output,
			 u.truncated, seen, (unsigned long long)in, (unsigned long long)out, trunc);
}

#define EXPECT(u, seen, in, out, trunc) expect_usage((u), (seen), (in), (out), (trunc), __LINE__)
#define JSON(body) parse(false, (body))
#define SSE(body) parse(true, (body))

/* --- the APIs ------------------------------------------------------------------------ */

static void anthropic_message(void **state)
{
	/* A "usage" spelled inside the text is a string, not structure. */
	EXPECT(JSON(anthropic_json), true, 2095, 503, false);
	/* Cache writes and reads are input too. */
	EXPECT(JSON("{\"usage\":{\"input_tokens\":10,\"cache_creation_input_tokens\":200,"
		    "\"cache_read_input_tokens\":3000,\"output_tokens\":7}}"),
	       true, 3210, 7, false);
	/* The member's name spelt with \u escapes is still usage (no fast skip). */
	EXPECT(JSON("{\"us\\u0061ge\":{\"input_tokens\":4,\"output_tokens\":2}}"), true, 4, 2, false);
	EXPECT(SSE("data: {\"\\u0075sage\":{\"input_tokens\":6,\"output_tokens\":3}}\n\n"),
	       true, 6, 3, false);
	/* No usage at all: nothing. */
	EXPECT(JSON("{\"id\":\"x\",\"content\":[{\"text\":\"hi\"}]}"), false, 0, 0, false);
}

static void anthropic_stream(void **state)
{
	/* input 25 in message_start; output 1, 5, 12: cumulative, so 12. */
	EXPECT(SSE(anthropic_sse), true, 25, 12, false);
	/* The newer message_delta repeats input and cache counts: still the maximum. */
	EXPECT(SSE("event: message_start\n"
		   "data: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":5,"
		   "\"cache_read_input_tokens\":100,\"output_tokens\":1}}}\n\n"
		   "event: message_delta\n"
		   "data: {\"type\":\"message_delta\",\"usage\":{\"input_tokens\":5,"
		   "\"cache_read_input_tokens\":100,\"output_tokens\":40}}\n\n"),
	       true, 105, 40, false);
	/* Cut before the last message_delta: what came. */
	EXPECT(SSE("event: message_start\n"
		   "data: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":25,"
		   "\"output_tokens\":1}}}\n\n"
		   "event: content_block_delta\n"
		   "data: {\"type\":\"content_block_delta\",\"index\":0,"
		   "\"delta\":{\"type\":\"text_"),
	       true, 25, 1, false);
}

static void openai_chat(void **state)
{
	EXPECT(JSON(openai_chat_json), true, 19, 10, false);
	EXPECT(SSE(openai_chat_sse), true, 17, 9, false);
	/* Without stream_options.include_usage: nothing to see. */
	EXPECT(SSE("data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\ndata: [DONE]\n\n"),
	       false, 0, 0, false);
	/* Embeddings: prompt and total only, no output. */
	EXPECT(JSON("{\"object\":\"list\",\"usage\":{\"prompt_tokens\":8,\"total_tokens\":8}}"),
	       true, 8, 0, false);
	/* Only a total: counted as output. */
	EXPECT(JSON("{\"usage\":{\"total_tokens\":50}}"), true, 0, 50, false);
}

static void openai_responses(void **state)
{
	EXPECT(SSE(openai_responses_sse), true, 36, 87, false);
	EXPECT(JSON("{\"id\":\"resp_67c\",\"object\":\"response\",\"status\":\"completed\","
		    "\"usage\":{\"input_tokens\":328,"
		    "\"input_tokens_details\":{\"cached_tokens\":0},"
		    "\"output_tokens\":52,\"total_tokens\":380}}"),
	       true, 328, 52, false);
}

/* Repeated counts are the maximum of each, never a sum. */
static void maximum_not_sum(void **state)
{
	EXPECT(SSE("data: {\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":3}}\n\n"
		   "data: {\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":30}}\n\n"
		   "data: {\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":30}}\n\n"),
	       true, 10, 30, false);
	/* Two places in one object: the larger of each. */
	EXPECT(JSON("{\"usage\":{\"input_tokens\":4},\"message\":{\"usage\":{\"input_tokens\":9,"
		    "\"output_tokens\":2}},\"response\":{\"usage\":{\"output_tokens\":3}}}"),
	       true, 9, 3, false);
	/* Both spellings at once: the larger. */
	EXPECT(JSON("{\"usage\":{\"input_tokens\":4,\"prompt_tokens\":6,\"output_tokens\":9,"
		    "\"completion_tokens\":1}}"),
	       true, 6, 9, false);
}

/* --- bad input ------------------------------------------------------------------------ */

static void bad_counts_are_ignored(void **state)
{
	static const char *const bad[] = {
		"-1", "\"12\"", "1.5", "1e30", "99999999999999999999999", "true", "null", "{}",
		"[3]", "1099511627777", "-0.5",
	};
	char body[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(body, sizeof(body), "{\"usage\":{\"input_tokens\":%s}}", bad[i]);
		EXPECT(JSON(body), false, 0, 0, false);
		snprintf(body, sizeof(body),
			 "{\"usage\":{\"input_tokens\":%s,\"output_tokens\":4,"
			 "\"cache_read_input_tokens\":%s}}", bad[i], bad[i]);
		EXPECT(JSON(body), true, 0, 4, false);
		snprintf(body, sizeof(body), "data: {\"usage\":{\"output_tokens\":%s,"
			 "\"total_tokens\":%s}}\n\n", bad[i], bad[i]);
		EXPECT(SSE(body), false, 0, 0, false);
	}
	/* The bound itself is believed; an integral real is a count. */
	EXPECT(JSON("{\"usage\":{\"input_tokens\":1099511627776,\"output_tokens\":2.0}}"), true,
	       (uint64_t)1 << 40, 2, false);
	/* usage that is not an object, and objects that are not at the top. */
	EXPECT(JSON("{\"usage\":[1,2]}"), false, 0, 0, false);
	EXPECT(JSON("{\"usage\":\"input_tokens\"}"), false, 0, 0, false);
	EXPECT(JSON("[{\"usage\":{\"input_tokens\":1}}]"), false, 0, 0, false);
	EXPECT(JSON("{\"x\":{\"usage\":{\"input_tokens\":1}}}"), false, 0, 0, false);
}

static void garbage_is_nothing(void **state)
{
	static const char gz[] = "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xab\x56\x2a\x2d";

	EXPECT(JSON(""), false, 0, 0, false);
	EXPECT(JSON("not json"), false, 0, 0, false);
	EXPECT(JSON("{\"usage\":{\"input_tokens\":5"), false, 0, 0, false);
	EXPECT(JSON("{\"usage\":{\"input_tokens\":5}} trailing"), false, 0, 0, false);
	EXPECT(parse_cuts(false, 0, gz, sizeof(gz) - 1, NULL, 0), false, 0, 0, false);
	EXPECT(parse_cuts(true, 0, gz, sizeof(gz) - 1, NULL, 0), false, 0, 0, false);
	EXPECT(SSE(""), false, 0, 0, false);
	EXPECT(SSE("\n\n\n"), false, 0, 0, false);
	EXPECT(SSE("data: {\"usage\":{\"input_tokens\":5\n\n"), false, 0, 0, false);
	EXPECT(SSE("data\n\ndata:\n\n:comment\n\nretry: 5\n\n"), false, 0, 0, false);
	/* The JSON mode given a stream reads nothing (but does not crash). */
	EXPECT(JSON(anthropic_sse), false, 0, 0, false);
	/* Deep nesting: refused by jansson, not a stack overflow. */
	{
		size_t n = 100000;
		char *deep = malloc(2 * n + 1);

		assert_non_null(deep);
		memset(deep, '[', n);
		memset(deep + n, ']', n);
		deep[2 * n] = '\0';
		EXPECT(JSON(deep), false, 0, 0, false);
		memcpy(deep, "data: ", 6);
		memset(deep + 6, '[', n - 6);
		EXPECT(SSE(deep), false, 0, 0, false);
		free(deep);
	}
}

/* --- bounds ------------------------------------------------------------------------ */

static void oversized_body_is_flagged(void **state)
{
	size_t n = strlen(anthropic_json);
	size_t half[] = { n / 2 };

	EXPECT(parse_cuts(false, n, anthropic_json, n, NULL, 0), true, 2095, 503, false);
	EXPECT(parse_cuts(false, n - 1, anthropic_json, n, NULL, 0), false, 0, 0, true);
	EXPECT(parse_cuts(false, n - 1, anthropic_json, n, half, 1), false, 0, 0, true);
	/* Past the default bound. */
	{
		size_t big = LLM_USAGE_MAX_DEFAULT + 10;
		char *body = malloc(big + 1);

		assert_non_null(body);
		memset(body, ' ', big);
		memcpy(body, "{\"usage\":{\"input_tokens\":1}}", 28);
		EXPECT(parse_cuts(false, 0, body, big, NULL, 0), false, 0, 0, true);
		EXPECT(parse_cuts(false, 0, body, LLM_USAGE_MAX_DEFAULT, NULL, 0), true, 1, 0,
		       false);
		free(body);
	}
}

static void overlong_sse_line_is_flagged(void **state)
{
	char line[200], body[400];

	memset(line, 'x', sizeof(line));
	line[sizeof(line) - 1] = '\0';
	/* A 205-byte data line past a 128-byte bound: dropped with its event; the next counts. */
	snprintf(body, sizeof(body), "data: %s\n\ndata: {\"usage\":{\"output_tokens\":3}}\n\n",
		 line);
	EXPECT(parse_cuts(true, 128, body, strlen(body), NULL, 0), true, 0, 3, true);
	/* A comment line past the bound drops the event around it too (conservative). */
	snprintf(body, sizeof(body), ":%s\ndata: {\"usage\":{\"output_tokens\":3}}\n\n"
		 "data: {\"usage\":{\"input_tokens\":2}}\n\n", line);
	EXPECT(parse_cuts(true, 128, body, strlen(body), NULL, 0), true, 2, 0, true);
	/* Data lines each within the bound whose event is not. */
	snprintf(body, sizeof(body), "data: {\"usage\":\ndata: {\"output_tokens\":3,\n"
		 "data: \"input_tokens\":4}}\n\ndata: {\"usage\":{\"input_tokens\":1}}\n\n");
	EXPECT(parse_cuts(true, 40, body, strlen(body), NULL, 0), true, 1, 0, true);
	EXPECT(parse_cuts(true, 0, body, strlen(body), NULL, 0), true, 4, 3, false);
}

/* --- SSE syntax ------------------------------------------------------------------------ */

static void sse_fields_and_line_ends(void **state)
{
	/* CRLF, CR alone, no space after the colon, other fields, comments. */
	EXPECT(SSE("event: x\r\ndata: {\"usage\":{\"input_tokens\":3}}\r\n\r\n"), true, 3, 0,
	       false);
	EXPECT(SSE("data: {\"usage\":{\"input_tokens\":3}}\r\rdata:{\"usage\":{\"output_tokens\":"
		   "4}}\r\r"),
	       true, 3, 4, false);
	EXPECT(SSE(": keep-alive\nid: 7\nretry: 100\ndata:{\"usage\":{\"input_tokens\":3}}\n\n"),
	       true, 3, 0, false);
	/* A data field split over lines is one document. */
	EXPECT(SSE("data: {\"usage\":\ndata: {\"output_tokens\": 6}}\n\n"), true, 0, 6, false);
	/* CR LF is one line end, not two (which would end the event early). */
	EXPECT(SSE("data: {\"usage\":\r\ndata: {\"output_tokens\": 6}}\r\n\r\n"), true, 0, 6,
	       false);
	/* Two documents in one event are not one document. */
	EXPECT(SSE("data: {\"usage\":{\"output_tokens\":6}}\ndata: {}\n\n"), false, 0, 0, false);
	/* "data" is the whole field name. */
	EXPECT(SSE("datas: {\"usage\":{\"output_tokens\":6}}\n\n"), false, 0, 0, false);
	EXPECT(SSE("Data: {\"usage\":{\"output_tokens\":6}}\n\n"), false, 0, 0, false);
	/* A BOM opens the stream; only there. */
	EXPECT(SSE("\xef\xbb\xbf" "data: {\"usage\":{\"output_tokens\":6}}\n\n"), true, 0, 6,
	       false);
	/* The last event without its blank line, the last line without its end. */
	EXPECT(SSE("data: {\"usage\":{\"output_tokens\":6}}\n"), true, 0, 6, false);
	EXPECT(SSE("data: {\"usage\":{\"output_tokens\":6}}"), true, 0, 6, false);
	/* [DONE] is the end marker, not an error. */
	EXPECT(SSE("data: [DONE]\n\ndata: {\"usage\":{\"output_tokens\":6}}\n\n"), true, 0, 6,
	       false);
}

/* --- splits ------------------------------------------------------------------------ */

static bool same(struct llm_usage a, struct llm_usage b)
{
	return a.seen == b.seen && a.input == b.input && a.output == b.output &&
	       a.truncated == b.truncated;
}

static void same_answer_however_split(void **state)
{
	static const struct {
		bool sse;
		const char *body;
	} cases[] = {
		{ false, anthropic_json },
		{ true, anthropic_sse },
		{ false, openai_chat_json },
		{ true, openai_chat_sse },
		{ true, openai_responses_sse },
		{ true, "data: {\"usage\":{\"input_tokens\":3}}\r\n\r\ndata: {\"usage\":"
			"{\"output_tokens\":4}}\r\rdata:{\"usage\":\r"
			"data:{\"input_tokens\":9}}\r\n\r" },
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const char *b = cases[c].body;
		size_t n = strlen(b);
		size_t *cuts = malloc(n * sizeof(*cuts));
		struct llm_usage want = parse(cases[c].sse, b), got;

		assert_non_null(cuts);
		assert_true(want.seen);
		for (size_t i = 0; i <= n; i++) {
			got = parse_cuts(cases[c].sse, 0, b, n, &i, 1);
			if (!same(got, want))
				fail_msg("case %zu cut at %zu: %llu/%llu, want %llu/%llu", c, i,
					 (unsigned long long)got.input,
					 (unsigned long long)got.output,
					 (unsigned long long)want.input,
					 (unsigned long long)want.output);
		}
		for (size_t i = 0; i + 1 < n; i++)
			cuts[i] = i + 1;
		got = parse_cuts(cases[c].sse, 0, b, n, cuts, n - 1);
		assert_true(same(got, want));
		free(cuts);
	}
	/* The case with every line end: what it holds. */
	EXPECT(parse(true, cases[5].body), true, 9, 4, false);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(anthropic_message),
		cmocka_unit_test(anthropic_stream),
		cmocka_unit_test(openai_chat),
		cmocka_unit_test(openai_responses),
		cmocka_unit_test(maximum_not_sum),
		cmocka_unit_test(bad_counts_are_ignored),
		cmocka_unit_test(garbage_is_nothing),
		cmocka_unit_test(oversized_body_is_flagged),
		cmocka_unit_test(overlong_sse_line_is_flagged),
		cmocka_unit_test(sse_fields_and_line_ends),
		cmocka_unit_test(same_answer_however_split),
	};

	return cmocka_run_group_tests_name("llm_usage", tests, NULL, NULL);
}
