/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Tools an LLM request asks the provider to run on its side.
 *
 * Attack: the credential proxy lets the agent call its LLM API, and the
 * API itself can reach the network for it: a request that declares
 * Anthropic's MCP connector ("mcp_servers") or web fetch tool, or OpenAI's
 * "mcp" tool with a server_url, has the provider's servers connect to a
 * host of the agent's choosing, carrying what the agent put in the URL or
 * headers, paid for with the user's key.  Through the one exit the policy
 * allows, the agent reaches every host.  What closes it: the proxy reads
 * each JSON request body to a credential host before any of it goes
 * upstream and refuses one that declares a tool which runs at the
 * provider, unless the credential's "server_tools" lists its type.  Tools
 * the client runs itself (Anthropic's custom tools, bash, text editor,
 * computer, memory; OpenAI's function, custom, computer use, local shell,
 * apply_patch; a tool_search the client runs; Gemini's
 * functionDeclarations) pass; so does a declared type the credential
 * lists.  A "namespace" (Codex's group of tools) is judged member by
 * member, and so are tools declared in the Responses API's "input" items
 * (Codex's "additional_tools"), not only in "tools".  OpenAI's web_search
 * is admitted only with "external_web_access": false (the cached index: no
 * live page is fetched).  Gemini declares a tool by key, not by type
 * ({"googleSearch": {}}, {"urlContext": {}}): every key of such a Tool but
 * its function declarations is refused unless listed, those Google adds
 * later included; and Gemini fetches a file part's URI itself
 * ({"fileData": {"fileUri": URL}} anywhere in the body): only its own
 * Files API's URIs pass, unless "fileUri" is listed.  A body
 * that cannot be judged (not JSON, a key given twice, in any case: parsers
 * differ on which one wins) is refused.
 *
 * What it cannot close: a provider feature that reaches the network and
 * is not declared this way (this knows Anthropic's Messages API,
 * OpenAI's Chat Completions and Responses APIs and Gemini's
 * generateContent: "tools", "mcp_servers", "web_search_options", a stored
 * prompt, "prompt": {"id": ...}, which can carry tools of its own, and
 * "fileData"); a provider that fetches a URL it finds in a message's text
 * (none of these does without a declared tool); Gemini's "cachedContent",
 * a stored context whose tools were declared when it was made (making one,
 * POST /v1beta/cachedContents, is not an endpoint of the shipped profile).
 */
#ifndef CORDON_LLM_TOOLS_H
#define CORDON_LLM_TOOLS_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Could this body declare anything llm_tools_check refuses?  False only
 * when it holds none of the names it looks for, in any case, and no
 * backslash (a JSON escape could spell one): then it need not be parsed.
 */
bool llm_tools_may_declare(const char *body, size_t n);

/*
 * 0: the body declares no provider-side tool beyond ALLOWED (type
 * prefixes); -EACCES: it does (WHY names it); -EBADMSG: it cannot be
 * judged (WHY says why).  A body that is JSON but not an object declares
 * nothing.
 */
int llm_tools_check(const char *body, size_t n, char *const *allowed, size_t n_allowed,
		    char *why, size_t wlen);

/*
 * The body of an answer the credential proxy gives in the provider's
 * place (a refusal): the error JSON of the API PATH belongs to, so that
 * the agent's CLI shows the reason rather than a parse error.  Anthropic's
 * Messages API ({"type": "error", "error": {"type", "message"}}), Google's
 * ({"error": {"code", "message", "status"}}, a path with a ":method" or
 * under /v1beta), OpenAI's otherwise ({"error": {"message", "type",
 * "param", "code": "cordon_refused"}}).  The message is "cordon: " and
 * WHY.  Its length, NUL-terminated in OUT; -ENOSPC if CAP is too small.
 */
int llm_error_json(const char *path, int status, const char *why, char *out, size_t cap);

#endif /* CORDON_LLM_TOOLS_H */
