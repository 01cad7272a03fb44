// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Provider-side tools in LLM request bodies (userspace/egress/llm_tools.c): the
 * tools the client runs pass, those the provider runs are refused unless
 * admitted by type prefix, whatever the case or escapes they are spelled
 * in; keys given twice and bodies that are not JSON are not judged; bodies
 * that name nothing are not even parsed.  Codex's declarations as it sends
 * them: namespaces judged member by member, tools declared in "input"
 * items, web_search admitted only for the cached index.  Refusals in each
 * provider's error shape.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "llm_tools.h"

static int judge(const char *body, const char *allow)
{
	char a[64], *list[1] = { a }, why[512] = "";
	int r;

	snprintf(a, sizeof(a), "%s", allow ? allow : "");
	r = llm_tools_check(body, strlen(body), list, allow ? 1 : 0, why, sizeof(why));
	if (r < 0 && !why[0])
		fail_msg("refused without a reason: %s", body);
	return r;
}

static void client_tools_pass(void **state)
{
	(void)state;
	assert_int_equal(judge("{\"model\":\"m\",\"messages\":[]}", NULL), 0);
	/* Anthropic: custom tools (no type), and the client-run typed ones. */
	assert_int_equal(judge("{\"tools\":[{\"name\":\"get\",\"input_schema\":{}},"
			       "{\"type\":\"bash_20250124\",\"name\":\"bash\"},"
			       "{\"type\":\"text_editor_20250728\",\"name\":\"e\"},"
			       "{\"type\":\"computer_20250124\"},{\"type\":\"memory_20250818\"},"
			       "{\"type\":\"custom\",\"name\":\"x\"}]}", NULL), 0);
	/* OpenAI: function, custom, computer use, local shell, apply_patch. */
	assert_int_equal(judge("{\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\"}},"
			       "{\"type\":\"computer_use_preview\"},{\"type\":\"local_shell\"},"
			       "{\"type\":\"apply_patch\"},{\"type\":\"shell\"}],"
			       "\"tool_choice\":\"auto\"}", NULL), 0);
	assert_int_equal(judge("{\"tools\":[],\"mcp_servers\":[],\"web_search_options\":null}", NULL), 0);
	/* A string prompt is text (Anthropic's legacy completions). */
	assert_int_equal(judge("{\"prompt\":\"\\n\\nHuman: tools please\"}", NULL), 0);
	/* Not an object: declares nothing (the upstream refuses it). */
	assert_int_equal(judge("[\"tools\"]", NULL), 0);
}

static void provider_tools_refused(void **state)
{
	(void)state;
	assert_int_equal(judge("{\"tools\":[{\"type\":\"web_fetch_20250910\",\"name\":\"web_fetch\"}]}",
			       NULL), -EACCES);
	assert_int_equal(judge("{\"tools\":[{\"type\":\"web_search_20250305\"}]}", NULL), -EACCES);
	assert_int_equal(judge("{\"tools\":[{\"type\":\"code_execution_20250825\"}]}", NULL), -EACCES);
	assert_int_equal(judge("{\"tools\":[{\"type\":\"mcp\",\"server_url\":\"https://x.test/?d=s\"}]}",
			       NULL), -EACCES);
	assert_int_equal(judge("{\"tools\":[{\"type\":\"file_search\"}]}", NULL), -EACCES);
	assert_int_equal(judge("{\"mcp_servers\":[{\"type\":\"url\",\"url\":\"https://x.test\"}]}", NULL),
			 -EACCES);
	assert_int_equal(judge("{\"web_search_options\":{}}", NULL), -EACCES);
	assert_int_equal(judge("{\"web_search_options\":{\"search_context_size\":\"low\"}}", NULL),
			 -EACCES);
	assert_int_equal(judge("{\"prompt\":{\"id\":\"pmpt_1\"}}", NULL), -EACCES);
	/* An unknown type is the provider's until a credential says otherwise. */
	assert_int_equal(judge("{\"tools\":[{\"type\":\"something_new\"}]}", NULL), -EACCES);
}

/*
 * Gemini: a Tool declares by key.  Function declarations pass; every other
 * kind, known or not, in either spelling, is the provider's; a file part's
 * URI other than the Files API's has the provider fetch it.
 */
static void gemini_tools(void **state)
{
	(void)state;
	assert_int_equal(judge("{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"hi\"}]}],"
			       "\"tools\":[{\"functionDeclarations\":[{\"name\":\"run_shell_command\","
			       "\"parametersJsonSchema\":{}}]},{\"function_declarations\":[]}]}", NULL), 0);
	assert_int_equal(judge("{\"tools\":[{\"googleSearch\":{}}]}", NULL), -EACCES);
	assert_int_equal(judge("{\"tools\":[{\"url_context\":{}}]}", NULL), -EACCES);
	assert_int_equal(judge("{\"tools\":[{\"functionDeclarations\":[],\"codeExecution\":{}}]}",
			       NULL), -EACCES);
	assert_int_equal(judge("{\"tools\":[{\"URLCONTEXT\":{}}]}", NULL), -EACCES);
	assert_int_equal(judge("{\"tools\":[{\"googleMaps\":{\"enableWidget\":true}}]}", NULL), -EACCES);
	/* A kind Google adds later is refused too; an empty one declares nothing. */
	assert_int_equal(judge("{\"tools\":[{\"futureFetcher\":{}}]}", NULL), -EACCES);
	assert_int_equal(judge("{\"tools\":[{\"googleSearch\":null}]}", NULL), 0);
	/* A custom tool (it has a name) carrying a Gemini kind: refused. */
	assert_int_equal(judge("{\"tools\":[{\"name\":\"f\",\"input_schema\":{},\"urlContext\":{}}]}",
			       NULL), -EACCES);
	/* Admitted as written. */
	assert_int_equal(judge("{\"tools\":[{\"googleSearch\":{}}]}", "googleSearch"), 0);
	assert_int_equal(judge("{\"tools\":[{\"urlContext\":{}}]}", "googleSearch"), -EACCES);
	/* File parts: the Files API passes, any other URI is fetched by the provider. */
	assert_int_equal(judge("{\"contents\":[{\"parts\":[{\"fileData\":{\"mimeType\":\"image/png\","
			       "\"fileUri\":\"https://generativelanguage.googleapis.com/v1beta/files/x\"}}]}]}",
			       NULL), 0);
	assert_int_equal(judge("{\"contents\":[{\"parts\":[{\"fileData\":{"
			       "\"fileUri\":\"https://evil.test/?d=secret\"}}]}]}", NULL), -EACCES);
	assert_int_equal(judge("{\"systemInstruction\":{\"parts\":[{\"file_data\":{"
			       "\"file_uri\":\"gs://b/o\"}}]}}", NULL), -EACCES);
	assert_int_equal(judge("{\"contents\":[{\"parts\":[{\"functionResponse\":{\"response\":"
			       "{\"x\":[{\"FileData\":{\"FILEURI\":\"http://evil.test/\"}}]}}}]}]}",
			       NULL), -EACCES);
	assert_int_equal(judge("{\"contents\":[{\"parts\":[{\"fileData\":{"
			       "\"fileUri\":\"https://evil.test/\"}}]}]}", "fileUri"), 0);
	/* Two URIs in one part, or one that is not a string: not judged. */
	assert_int_equal(judge("{\"contents\":[{\"parts\":[{\"fileData\":{\"fileUri\":"
			       "\"https://generativelanguage.googleapis.com/v1beta/files/x\","
			       "\"file_uri\":\"https://evil.test/\"}}]}]}", NULL), -EBADMSG);
	assert_int_equal(judge("{\"contents\":[{\"parts\":[{\"fileData\":{\"fileUri\":7}}]}]}", NULL),
			 -EBADMSG);
	/* The prescan parses a body that names a file part, in an escape too. */
	assert_true(llm_tools_may_declare("{\"fileData\":1}", 13));
}

static void admitted_by_prefix(void **state)
{
	(void)state;
	assert_int_equal(judge("{\"tools\":[{\"type\":\"web_search_20250305\"}]}", "web_search"), 0);
	assert_int_equal(judge("{\"tools\":[{\"type\":\"web_search_preview\"}]}", "web_search"), 0);
	assert_int_equal(judge("{\"web_search_options\":{}}", "web_search"), 0);
	assert_int_equal(judge("{\"mcp_servers\":[{\"url\":\"u\"}]}", "mcp"), 0);
	assert_int_equal(judge("{\"tools\":[{\"type\":\"web_fetch_20250910\"}]}", "web_search"), -EACCES);
	assert_int_equal(judge("{\"tools\":[{\"type\":\"web_search_20250305\"},{\"type\":\"mcp\"}]}",
			       "web_search"), -EACCES);
}

/* However it is spelled: case, escapes, whitespace. */
static void spellings(void **state)
{
	(void)state;
	assert_int_equal(judge("{\"TOOLS\":[{\"Type\":\"web_fetch_20250910\"}]}", NULL), -EACCES);
	assert_int_equal(judge("{\"t\\u006fols\":[{\"typ\\u0065\":\"web_fetch_20250910\"}]}", NULL),
			 -EACCES);
	assert_int_equal(judge("{\"tools\":[{\"type\":\"web_\\u0066etch_20250910\"}]}", NULL), -EACCES);
	assert_int_equal(judge("{\"Mcp_Servers\":[{\"url\":\"u\"}]}", NULL), -EACCES);
	assert_int_equal(judge(" {\n \"tools\" :\t[ { \"type\" : \"mcp\" } ] } ", NULL), -EACCES);
}

/* Bodies that cannot be judged: parsers differ, so none is guessed at. */
static void unjudgeable(void **state)
{
	(void)state;
	assert_int_equal(judge("{\"tools\":[],\"tools\":[{\"type\":\"mcp\"}]}", NULL), -EBADMSG);
	assert_int_equal(judge("{\"tools\":[],\"Tools\":[{\"type\":\"mcp\"}]}", NULL), -EBADMSG);
	assert_int_equal(judge("{\"tools\":[{\"type\":\"function\",\"TYPE\":\"mcp\"}]}", NULL), -EBADMSG);
	assert_int_equal(judge("{\"mcp_servers\":[],\"MCP_SERVERS\":[{\"url\":\"u\"}]}", NULL), -EBADMSG);
	assert_int_equal(judge("{\"tools\":{\"type\":\"mcp\"}}", NULL), -EBADMSG);
	assert_int_equal(judge("{\"tools\":[\"mcp\"]}", NULL), -EBADMSG);
	assert_int_equal(judge("{\"tools\":[{\"type\":7}]}", NULL), -EBADMSG);
	assert_int_equal(judge("{\"tools\":[{\"type\":\"mcp\"}]", NULL), -EBADMSG);
	assert_int_equal(judge("{\"tools\":[{\"type\":\"m\\u0000cp\"}]}", NULL), -EBADMSG);
	assert_int_equal(judge("\xef\xbb\xbf{\"tools\":[]}", NULL), -EBADMSG);
}

/* The cheap pre-scan: only bodies that could name something are parsed. */
static void prescan(void **state)
{
	(void)state;
	assert_false(llm_tools_may_declare("{\"model\":\"m\",\"messages\":[{\"role\":\"user\"}]}", 44));
	assert_false(llm_tools_may_declare("aaaaaaaaaaaaaaaa", 16));
	assert_true(llm_tools_may_declare("{\"tOoLs\":1}", 11));
	assert_true(llm_tools_may_declare("{\"a\":\"\\n\"}", 9));
	assert_true(llm_tools_may_declare("{\"PROMPT\":{}}", 13));
	/* Not JSON and naming nothing: passes unparsed (the upstream refuses it). */
	assert_int_equal(judge("not json at all", NULL), 0);
}

/*
 * Codex CLI 0.171's tools as it declares them (gpt-5.x models): function
 * and custom tools, a namespace of functions, a client-run tool_search,
 * and web_search, whose "external_web_access" says live pages or the
 * cached index.
 */
#define CODEX_TOOLS(WS) \
	"{\"model\":\"gpt-5.5\",\"stream\":true,\"tools\":[" \
	"{\"type\":\"function\",\"name\":\"exec_command\",\"strict\":false,\"parameters\":{}}," \
	"{\"type\":\"custom\",\"name\":\"apply_patch\",\"format\":{\"type\":\"grammar\"}}," \
	"{\"type\":\"namespace\",\"name\":\"multi_agent_v1\",\"description\":\"\",\"tools\":[" \
	"{\"type\":\"function\",\"name\":\"spawn_agent\",\"parameters\":{}}," \
	"{\"type\":\"function\",\"name\":\"wait_agent\",\"parameters\":{}}]}," \
	"{\"type\":\"tool_search\",\"execution\":\"client\",\"parameters\":{}}," \
	"{\"type\":\"web_search\"" WS "}]}"

static void codex(void **state)
{
	(void)state;
	assert_int_equal(judge(CODEX_TOOLS(",\"external_web_access\":false"), NULL), 0);
	/* Live web access: the provider opens pages the agent names. */
	assert_int_equal(judge(CODEX_TOOLS(",\"external_web_access\":true,\"search_content_types\":[\"text\"]"),
			       NULL), -EACCES);
	assert_int_equal(judge(CODEX_TOOLS(""), NULL), -EACCES);
	assert_int_equal(judge(CODEX_TOOLS(",\"external_web_access\":0"), NULL), -EACCES);
	assert_int_equal(judge(CODEX_TOOLS(",\"external_web_access\":\"false\""), NULL), -EACCES);
	assert_int_equal(judge(CODEX_TOOLS(",\"External_Web_Access\":false,\"external_web_access\":true"),
			       NULL), -EBADMSG);
	assert_int_equal(judge(CODEX_TOOLS(",\"external_web_access\":true"), "web_search"), 0);
	/* Without the namespace's web_search: the group itself passes. */
	assert_int_equal(judge("{\"tools\":[{\"type\":\"namespace\",\"name\":\"n\",\"tools\":[]}]}", NULL), 0);
	/* tool_search the provider runs (no "execution": "client"). */
	assert_int_equal(judge("{\"tools\":[{\"type\":\"tool_search\"}]}", NULL), -EACCES);
	assert_int_equal(judge("{\"tools\":[{\"type\":\"tool_search\",\"execution\":\"server\"}]}", NULL),
			 -EACCES);
}

/* A namespace is no hiding place: its members are judged, at any depth cordon reads. */
static void namespaces(void **state)
{
	(void)state;
	assert_int_equal(judge("{\"tools\":[{\"type\":\"namespace\",\"name\":\"n\",\"tools\":["
			       "{\"type\":\"function\",\"name\":\"f\"},"
			       "{\"type\":\"mcp\",\"server_url\":\"https://x.test\"}]}]}", NULL), -EACCES);
	assert_int_equal(judge("{\"tools\":[{\"type\":\"namespace\",\"tools\":[{\"type\":\"namespace\","
			       "\"tools\":[{\"TYPE\":\"web_fetch_20250910\"}]}]}]}", NULL), -EACCES);
	assert_int_equal(judge("{\"tools\":[{\"type\":\"namespace\",\"name\":\"n\"}]}", NULL), -EBADMSG);
	assert_int_equal(judge("{\"tools\":[{\"type\":\"namespace\",\"tools\":{\"type\":\"mcp\"}}]}", NULL),
			 -EBADMSG);
	assert_int_equal(judge("{\"tools\":[{\"type\":\"namespace\",\"tools\":[],\"Tools\":[{\"type\":\"mcp\"}]}]}",
			       NULL), -EBADMSG);
	/* Nested deeper than cordon reads (4): not judged, refused. */
	assert_int_equal(judge("{\"tools\":[{\"type\":\"namespace\",\"tools\":[{\"type\":\"namespace\",\"tools\":["
			       "{\"type\":\"namespace\",\"tools\":[{\"type\":\"namespace\",\"tools\":["
			       "{\"type\":\"namespace\",\"tools\":[]}]}]}]}]}]}", NULL), -EBADMSG);
	assert_int_equal(judge("{\"tools\":[{\"type\":\"namespace\",\"tools\":[{\"type\":\"namespace\",\"tools\":["
			       "{\"type\":\"namespace\",\"tools\":[{\"type\":\"namespace\",\"tools\":[]}]}]}]}]}",
			       NULL), 0);
}

/* Tools declared in the conversation (Codex's "additional_tools" items) are judged too. */
static void input_items(void **state)
{
	(void)state;
	assert_int_equal(judge("{\"input\":[{\"type\":\"additional_tools\",\"role\":\"developer\",\"tools\":["
			       "{\"type\":\"namespace\",\"name\":\"functions\",\"tools\":["
			       "{\"type\":\"custom\",\"name\":\"exec\"}]}]},"
			       "{\"type\":\"message\",\"role\":\"user\",\"content\":[{\"type\":\"input_text\","
			       "\"text\":\"tools: web_search\"}]}]}", NULL), 0);
	assert_int_equal(judge("{\"input\":[{\"type\":\"additional_tools\",\"tools\":["
			       "{\"type\":\"web_search\",\"external_web_access\":true}]}]}", NULL), -EACCES);
	/* Whatever the item's type. */
	assert_int_equal(judge("{\"input\":[{\"type\":\"new_kind\",\"Tools\":[{\"type\":\"mcp\"}]}]}", NULL),
			 -EACCES);
	assert_int_equal(judge("{\"input\":[{\"tools\":{\"type\":\"mcp\"}}]}", NULL), -EBADMSG);
	assert_int_equal(judge("{\"input\":[{\"tools\":[],\"TOOLS\":[{\"type\":\"mcp\"}]}]}", NULL), -EBADMSG);
	assert_int_equal(judge("{\"input\":[],\"Input\":[{\"tools\":[{\"type\":\"mcp\"}]}]}", NULL), -EBADMSG);
	/* A string input, or items without tools, declare nothing. */
	assert_int_equal(judge("{\"input\":\"list the tools\",\"tools\":[]}", NULL), 0);
	assert_int_equal(judge("{\"input\":[{\"type\":\"function_call_output\",\"output\":\"tools\"}]}", NULL), 0);
}

/* A refusal in the error shape of the API the path belongs to. */
static void error_json(void **state)
{
	static const struct {
		const char *path;
		int status;
		const char *shape;      /* a JSON path: "error.message" etc. */
		const char *kind;       /* what the type or status field says */
	} cases[] = {
		{ "/v1/messages", 400, "anthropic", "invalid_request_error" },
		{ "/v1/messages/count_tokens", 403, "anthropic", "permission_error" },
		{ "/v1/responses", 400, "openai", "invalid_request_error" },
		{ "/v1/chat/completions?x=1", 403, "openai", "permission_error" },
		{ "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse", 400, "google", "INVALID_ARGUMENT" },
		{ "/v1/models/gemini:generateContent", 403, "google", "PERMISSION_DENIED" },
	};
	const char *why = "the request declares the tool type \"web_search\"";

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char out[1100];
		json_error_t e;
		json_t *o, *err;
		int n = llm_error_json(cases[i].path, cases[i].status, why, out, sizeof(out));

		assert_true(n > 0);
		assert_int_equal((size_t)n, strlen(out));
		o = json_loads(out, 0, &e);
		assert_non_null(o);
		err = json_object_get(o, "error");
		assert_non_null(err);
		assert_string_equal(json_string_value(json_object_get(err, "message")),
				    "cordon: the request declares the tool type \"web_search\"");
		if (!strcmp(cases[i].shape, "anthropic")) {
			assert_string_equal(json_string_value(json_object_get(o, "type")), "error");
			assert_string_equal(json_string_value(json_object_get(err, "type")), cases[i].kind);
		} else if (!strcmp(cases[i].shape, "openai")) {
			assert_string_equal(json_string_value(json_object_get(err, "type")), cases[i].kind);
			assert_string_equal(json_string_value(json_object_get(err, "code")), "cordon_refused");
			assert_true(json_is_null(json_object_get(err, "param")));
		} else {
			assert_int_equal(json_integer_value(json_object_get(err, "code")), cases[i].status);
			assert_string_equal(json_string_value(json_object_get(err, "status")), cases[i].kind);
		}
		json_decref(o);
	}
	{
		char small[40];

		assert_int_equal(llm_error_json("/v1/responses", 400, why, small, sizeof(small)), -ENOSPC);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(client_tools_pass),
		cmocka_unit_test(provider_tools_refused),
		cmocka_unit_test(gemini_tools),
		cmocka_unit_test(admitted_by_prefix),
		cmocka_unit_test(spellings),
		cmocka_unit_test(unjudgeable),
		cmocka_unit_test(prescan),
		cmocka_unit_test(codex),
		cmocka_unit_test(namespaces),
		cmocka_unit_test(input_items),
		cmocka_unit_test(error_json),
	};

	return cmocka_run_group_tests_name("llm_tools", tests, NULL, NULL);
}
