// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Provider-side tools in LLM request bodies (see llm_tools.h).  Pure: no
 * I/O.  Keys are compared without case (a server that binds JSON to its
 * fields as Go's encoding/json does would read "TOOLS" as "tools"), and a
 * key present twice in any case is a body that cannot be judged.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <jansson.h>

#include "llm_tools.h"

/* Names whose presence means the body must be parsed (lower case). */
static const char *const triggers[] = { "tools", "mcp_servers", "web_search_options", "prompt",
					"filedata", "file_data" };

static bool has_ci(const char *b, size_t n, const char *w)
{
	size_t l = strlen(w);

	for (size_t i = 0; i + l <= n; i++)
		if ((b[i] | 0x20) == w[0] && !strncasecmp(b + i, w, l))
			return true;
	return false;
}

bool llm_tools_may_declare(const char *body, size_t n)
{
	if (memchr(body, '\\', n))
		return true;
	for (size_t k = 0; k < sizeof(triggers) / sizeof(triggers[0]); k++)
		if (has_ci(body, n, triggers[k]))
			return true;
	return false;
}

/*
 * Types the client runs itself: exact, then prefixes (Anthropic's are
 * dated).  "namespace" is not here: it is a client-side group whose
 * members are judged in turn (judge_tools).
 */
static bool client_side(const char *type)
{
	static const char *const exact[] = { "function", "custom", "computer_use_preview",
					     "computer", "local_shell", "shell", "apply_patch" };
	static const char *const prefix[] = { "computer_", "bash_", "text_editor_", "memory_" };

	for (size_t k = 0; k < sizeof(exact) / sizeof(exact[0]); k++)
		if (!strcmp(type, exact[k]))
			return true;
	for (size_t k = 0; k < sizeof(prefix) / sizeof(prefix[0]); k++)
		if (!strncmp(type, prefix[k], strlen(prefix[k])))
			return true;
	return false;
}

static bool admitted(const char *type, char *const *allowed, size_t n_allowed)
{
	for (size_t k = 0; k < n_allowed; k++)
		if (!strncmp(type, allowed[k], strlen(allowed[k])))
			return true;
	return false;
}

/*
 * The member of O named KEY in any case: 0 with *out (NULL if none), or
 * -1 when it is there twice.
 */
static int get_ci(json_t *o, const char *key, json_t **out)
{
	const char *k;
	json_t *v;

	*out = NULL;
	json_object_foreach(o, k, v) {
		if (strcasecmp(k, key))
			continue;
		if (*out)
			return -1;
		*out = v;
	}
	return 0;
}

/* Asked for: anything but null and an empty list ("web_search_options": {} turns search on). */
static bool present(const json_t *v)
{
	return v && !json_is_null(v) && !(json_is_array(v) && !json_array_size(v));
}

/* How deep namespaces may nest: deeper is a body that cannot be judged. */
#define NS_DEPTH 4

/*
 * A tool whose declaration says the provider will not leave its own side
 * for it, by a field the provider documents:
 *  - OpenAI's "tool_search" with "execution": "client" (the client
 *    searches its own deferred tools; Codex declares it so);
 *  - OpenAI's "web_search" with "external_web_access": false, which
 *    answers from OpenAI's cached index and fetches no live page (Codex's
 *    web_search = "cached").  The query reaches OpenAI, the credential's
 *    own host, which receives the whole conversation anyway; no host of
 *    the agent's choosing is contacted.  With the field true or absent,
 *    the provider opens pages the agent names: refused.
 * Exactly JSON false and exactly "client": any other value or type is a
 * declaration that may reach out.
 */
static int contained(json_t *t, const char *type, bool *yes)
{
	json_t *v;

	*yes = false;
	if (!strcmp(type, "tool_search")) {
		if (get_ci(t, "execution", &v) < 0)
			return -1;
		*yes = json_is_string(v) && !strcmp(json_string_value(v), "client");
	} else if (!strcmp(type, "web_search")) {
		if (get_ci(t, "external_web_access", &v) < 0)
			return -1;
		*yes = json_is_false(v);
	}
	return 0;
}

/*
 * A tool without "type": Anthropic's custom tool ({"name", "input_schema"})
 * or a Gemini Tool, an object whose keys are the kinds it declares:
 * "functionDeclarations" (the client runs them) or one the provider runs
 * (googleSearch, urlContext, codeExecution, retrieval, googleMaps,
 * fileSearch, ... and those Google adds later).  Every key of a Gemini
 * Tool but the function declarations is refused unless admitted (Google
 * reads both "urlContext" and "url_context"; server_tools names them as
 * written); a custom tool passes, unless it also carries a Gemini kind.
 */
static int judge_untyped(json_t *t, size_t i, char *const *allowed, size_t n_allowed, char *why,
			 size_t wlen)
{
	static const char *const gemini_kinds[] = {
		"googlesearch", "google_search", "googlesearchretrieval", "google_search_retrieval",
		"urlcontext", "url_context", "codeexecution", "code_execution", "retrieval",
		"enterprisewebsearch", "enterprise_web_search", "googlemaps", "google_maps",
		"filesearch", "file_search", "computeruse", "computer_use", "mcpservers",
		"mcp_servers" };
	json_t *name, *v;
	const char *k;

	if (get_ci(t, "name", &name) < 0) {
		snprintf(why, wlen, "the request body cannot be judged: tool %zu gives \"name\" twice", i);
		return -EBADMSG;
	}
	json_object_foreach(t, k, v) {
		bool kind = false;

		if (!strcasecmp(k, "functionDeclarations") || !strcasecmp(k, "function_declarations"))
			continue;
		for (size_t g = 0; g < sizeof(gemini_kinds) / sizeof(gemini_kinds[0]) && !kind; g++)
			kind = !strcasecmp(k, gemini_kinds[g]);
		if ((name && !kind) || !present(v) || admitted(k, allowed, n_allowed))
			continue;
		snprintf(why, wlen, "the request declares the tool \"%.80s\", which the provider runs "
			 "on its side and can reach hosts the policy does not list; the "
			 "credential's \"server_tools\" does not admit it", k);
		return -EACCES;
	}
	return 0;
}

/*
 * Gemini's file parts: {"fileData": {"fileUri": URI}} anywhere in the body
 * (contents, systemInstruction, function responses).  Google fetches a
 * URI that is not one of its own Files API's: an http(s) URL of the
 * agent's choosing, carrying what it put in the URL.  Only the Files
 * API's URIs (what an upload through the same credential returns) pass,
 * unless "fileUri" is admitted.  Walked to a bounded depth; deeper is a
 * body that cannot be judged.
 */
static int judge_file_uris(json_t *j, int depth, char *const *allowed, size_t n_allowed,
			   char *why, size_t wlen)
{
	static const char files_api[] = "https://generativelanguage.googleapis.com/";
	const char *k;
	json_t *v;
	size_t i;
	int r;

	if (depth > 64) {
		snprintf(why, wlen, "the request body cannot be judged: nested deeper than 64");
		return -EBADMSG;
	}
	if (json_is_array(j)) {
		json_array_foreach(j, i, v)
			if ((r = judge_file_uris(v, depth + 1, allowed, n_allowed, why, wlen)) < 0)
				return r;
		return 0;
	}
	if (!json_is_object(j))
		return 0;
	json_object_foreach(j, k, v) {
		json_t *uri = NULL;

		if (json_is_object(v) && (!strcasecmp(k, "fileData") || !strcasecmp(k, "file_data"))) {
			json_t *u2 = NULL;

			if (get_ci(v, "fileUri", &uri) < 0 || get_ci(v, "file_uri", &u2) < 0 ||
			    (uri && u2) || ((uri = uri ? uri : u2) && !json_is_string(uri))) {
				snprintf(why, wlen, "the request body cannot be judged: a \"%s\" with "
					 "more than one URI, or one that is not a string", k);
				return -EBADMSG;
			}
			if (uri && strncasecmp(json_string_value(uri), files_api, sizeof(files_api) - 1) &&
			    !admitted("fileUri", allowed, n_allowed)) {
				snprintf(why, wlen, "the request has the provider fetch \"%.80s\" "
					 "(fileData), a host the policy does not list; only the "
					 "provider's own Files API URIs pass, and the credential's "
					 "\"server_tools\" does not admit \"fileUri\"",
					 json_string_value(uri));
				return -EACCES;
			}
		}
		if ((r = judge_file_uris(v, depth + 1, allowed, n_allowed, why, wlen)) < 0)
			return r;
	}
	return 0;
}

static int judge_tools(json_t *tools, char *const *allowed, size_t n_allowed, int depth,
		       char *why, size_t wlen)
{
	size_t i;
	json_t *t;

	if (!json_is_array(tools)) {
		snprintf(why, wlen, "the request body cannot be judged: \"tools\" is not an array");
		return -EBADMSG;
	}
	json_array_foreach(tools, i, t) {
		json_t *type, *members;
		const char *s;
		bool inside;
		int r;

		if (!json_is_object(t) || get_ci(t, "type", &type) < 0) {
			snprintf(why, wlen, "the request body cannot be judged: tool %zu is not an object with one \"type\"", i);
			return -EBADMSG;
		}
		if (!type) {
			r = judge_untyped(t, i, allowed, n_allowed, why, wlen);
			if (r < 0)
				return r;
			continue;
		}
		if (!json_is_string(type)) {
			snprintf(why, wlen, "the request body cannot be judged: tool %zu's \"type\" is not a string", i);
			return -EBADMSG;
		}
		s = json_string_value(type);
		/*
		 * A namespace (Codex) groups tools under one name for the
		 * model; the client runs none of it itself, each member is
		 * what it declares: judged as a tool of its own, so that a
		 * provider-run tool cannot hide in one.
		 */
		if (!strcmp(s, "namespace")) {
			if (get_ci(t, "tools", &members) < 0 || !members || depth >= NS_DEPTH) {
				snprintf(why, wlen, "the request body cannot be judged: namespace tool %zu has %s", i,
					 depth >= NS_DEPTH ? "namespaces nested deeper than cordon judges" :
					 "no single \"tools\" list");
				return -EBADMSG;
			}
			r = judge_tools(members, allowed, n_allowed, depth + 1, why, wlen);
			if (r < 0)
				return r;
			continue;
		}
		if (contained(t, s, &inside) < 0) {
			snprintf(why, wlen, "the request body cannot be judged: tool %zu gives a field twice", i);
			return -EBADMSG;
		}
		if (inside || client_side(s) || admitted(s, allowed, n_allowed))
			continue;
		snprintf(why, wlen, "the request declares the tool type \"%.80s\", which the provider "
			 "runs on its side and can reach hosts the policy does not list; the "
			 "credential's \"server_tools\" does not admit it%s", s,
			 !strcmp(s, "web_search") ? " (a web_search with \"external_web_access\": false, "
			 "the provider's cached index, is admitted)" : "");
		return -EACCES;
	}
	return 0;
}

/*
 * Tools declared inside the conversation: an item of the Responses API's
 * "input" that carries a "tools" list (Codex sends its tools as an
 * "additional_tools" item for some models) declares them as surely as
 * the top-level list.  Every such item is judged, whatever its type: a
 * type the proxy does not know is no reason to let its tools through.
 */
static int judge_input(json_t *input, char *const *allowed, size_t n_allowed, char *why,
		       size_t wlen)
{
	size_t i;
	json_t *it, *v;
	int r;

	if (!json_is_array(input))
		return 0;
	json_array_foreach(input, i, it) {
		if (!json_is_object(it))
			continue;
		if (get_ci(it, "tools", &v) < 0) {
			snprintf(why, wlen, "the request body cannot be judged: input item %zu gives \"tools\" twice", i);
			return -EBADMSG;
		}
		if (v && !json_is_null(v) && (r = judge_tools(v, allowed, n_allowed, 0, why, wlen)) < 0)
			return r;
	}
	return 0;
}

int llm_tools_check(const char *body, size_t n, char *const *allowed, size_t n_allowed,
		    char *why, size_t wlen)
{
	static const struct {
		const char *key, *type;
	} features[] = {
		{ "mcp_servers", "mcp" },                 /* Anthropic's MCP connector */
		{ "web_search_options", "web_search" },   /* OpenAI's search models */
		{ "prompt", "stored_prompt" },            /* OpenAI's stored prompt (an object) */
	};
	json_error_t e;
	json_t *root, *v;
	int r = 0;

	if (!llm_tools_may_declare(body, n))
		return 0;
	root = json_loadb(body, n, JSON_REJECT_DUPLICATES, &e);
	if (!root) {
		snprintf(why, wlen, "the request body cannot be judged: it is not JSON (line %d, "
			 "column %d: %s)", e.line, e.column, e.text);
		return -EBADMSG;
	}
	if (!json_is_object(root))
		goto out;
	if (get_ci(root, "tools", &v) < 0) {
		snprintf(why, wlen, "the request body cannot be judged: \"tools\" is given twice");
		r = -EBADMSG;
		goto out;
	}
	if (v && !json_is_null(v) && (r = judge_tools(v, allowed, n_allowed, 0, why, wlen)) < 0)
		goto out;
	if (get_ci(root, "input", &v) < 0) {
		snprintf(why, wlen, "the request body cannot be judged: \"input\" is given twice");
		r = -EBADMSG;
		goto out;
	}
	if ((r = judge_input(v, allowed, n_allowed, why, wlen)) < 0)
		goto out;
	if ((r = judge_file_uris(root, 0, allowed, n_allowed, why, wlen)) < 0)
		goto out;
	for (size_t k = 0; k < sizeof(features) / sizeof(features[0]); k++) {
		if (get_ci(root, features[k].key, &v) < 0) {
			snprintf(why, wlen, "the request body cannot be judged: \"%s\" is given twice", features[k].key);
			r = -EBADMSG;
			goto out;
		}
		/* Anthropic's legacy completions take a string prompt: text, not a feature. */
		if (!present(v) || (!strcmp(features[k].key, "prompt") && !json_is_object(v)) ||
		    admitted(features[k].type, allowed, n_allowed))
			continue;
		snprintf(why, wlen, "the request asks for \"%s\", which has the provider reach "
			 "hosts the policy does not list; the credential's \"server_tools\" does "
			 "not admit \"%s\"", features[k].key, features[k].type);
		r = -EACCES;
		goto out;
	}
out:
	json_decref(root);
	return r;
}

enum api { API_OPENAI, API_ANTHROPIC, API_GOOGLE };

/* Which provider's API a request path belongs to (its error shape). */
static enum api api_of(const char *path)
{
	size_t n = strcspn(path, "?");

	if (!strncmp(path, "/v1/messages", 12) || !strncmp(path, "/v1/complete", 12))
		return API_ANTHROPIC;
	if (memchr(path, ':', n) || !strncmp(path, "/v1beta", 7) || !strncmp(path, "/v1alpha", 8) ||
	    !strncmp(path, "/upload/", 8))
		return API_GOOGLE;
	return API_OPENAI;
}

int llm_error_json(const char *path, int status, const char *why, char *out, size_t cap)
{
	char msg[800];
	json_t *o;
	size_t n;

	snprintf(msg, sizeof(msg), "cordon: %s", why);
	switch (api_of(path)) {
	case API_ANTHROPIC:
		o = json_pack("{s:s,s:{s:s,s:s}}", "type", "error", "error", "type",
			      status == 403 ? "permission_error" : status == 413 ? "request_too_large" :
			      status >= 500 ? "api_error" : "invalid_request_error", "message", msg);
		break;
	case API_GOOGLE:
		o = json_pack("{s:{s:i,s:s,s:s}}", "error", "code", status, "message", msg, "status",
			      status == 403 ? "PERMISSION_DENIED" : status >= 500 ? "UNAVAILABLE" :
			      status == 400 || status == 413 ? "INVALID_ARGUMENT" : "FAILED_PRECONDITION");
		break;
	case API_OPENAI:
	default:
		o = json_pack("{s:{s:s,s:s,s:n,s:s}}", "error", "message", msg, "type",
			      status == 403 ? "permission_error" : status >= 500 ? "server_error" :
			      "invalid_request_error", "param", "code", "cordon_refused");
		break;
	}
	if (!o)
		return -ENOMEM;
	n = json_dumpb(o, out, cap, JSON_COMPACT);
	json_decref(o);
	if (n == 0 || n >= cap)
		return -ENOSPC;
	out[n] = 0;
	return (int)n;
}
