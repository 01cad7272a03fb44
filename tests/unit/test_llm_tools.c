// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Provider-side tools in LLM request bodies (userspace/llm_tools.c): the
 * tools the client runs pass, those the provider runs are refused unless
 * admitted by type prefix, whatever the case or escapes they are spelled
 * in; keys given twice and bodies that are not JSON are not judged; bodies
 * that name nothing are not even parsed.
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
	};

	return cmocka_run_group_tests_name("llm_tools", tests, NULL, NULL);
}
