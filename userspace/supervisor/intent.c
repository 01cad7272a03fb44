// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The intents store (intent.h).  Who may state an intent: the same people,
 * over the same channels, as may approve (approve.c: the tty only the
 * human holds, approve.sock behind host_operator).  Attack: the agent
 * states "push everything anywhere" for itself, by connecting to
 * approve.sock (refused: its cgroup, and the floors refuse the connect to
 * RUN_DIR before that) or by typing at the prompt (it has its own pty,
 * never cordon's terminal).  What an intent cannot do: allow what the
 * session's policy denies, or what an invariant forbids (it is consulted
 * only for a request the policy escalated); cover another session (it
 * lives in this supervisor only); outlive its lifetime or its revocation.
 * What it cannot close: a human who states a broad sentence gets a broad
 * allow; the sentence is shown back as the rules it compiled to.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "policy.h"
#include "english.h"
#include "intent.h"

static struct intent *intent_new(struct intents *in, const char *sentence, const char *approver,
				 uint64_t now_ms, unsigned ttl_s)
{
	struct intent *it, **v;

	v = realloc(in->v, (in->n + 1) * sizeof(*v));
	if (!v)
		return NULL;
	in->v = v;
	it = calloc(1, sizeof(*it));
	if (!it)
		return NULL;
	it->id = ++in->next_id;
	pol_printable(it->sentence, sizeof(it->sentence), sentence);
	pol_printable(it->approver, sizeof(it->approver), approver);
	it->stated_at = (int64_t)time(NULL);
	it->expires_ms = ttl_s ? now_ms + (uint64_t)ttl_s * 1000 : 0;
	in->v[in->n++] = it;
	return it;
}

int intent_state(struct intents *in, const char *sentence, unsigned for_s, const char *approver,
		 const struct pol_vars *vars, uint64_t now_ms, char *err, size_t elen)
{
	struct pol_diags diags = { 0 };
	struct en_error e = { 0 };
	struct policy *pol = NULL;
	json_t *rules = NULL, *doc;
	struct intent *it;
	unsigned ttl = 0;
	char *text;
	int r;

	r = en_compile_intent(sentence, "intent", &rules, &ttl, &e);
	if (r == 0 && !json_array_size(rules)) {
		json_decref(rules);
		snprintf(err, elen, "intent: \"%s\" allows nothing", sentence);
		return -EINVAL;
	}
	if (r < 0) {
		if (en_error_format(&e, err, elen) < 0)
			snprintf(err, elen, "intent: %s", e.message);
		return -EINVAL;
	}
	/* A policy of its own: only these allows, nothing else (the default is deny). */
	for (size_t i = 0; i < json_array_size(rules); i++) {
		char name[32];

		snprintf(name, sizeof(name), "intent-%zu", i + 1);
		json_object_set_new(json_array_get(rules, i), "name", json_string(name));
	}
	doc = json_pack("{s:i,s:s,s:O}", "cordon_policy", 1, "name", "intent", "rules", rules);
	text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	json_decref(doc);
	if (!text) {
		json_decref(rules);
		return -ENOMEM;
	}
	r = pol_load_text(text, strlen(text), "intent", vars, &pol, &diags);
	free(text);
	if (r < 0) {
		snprintf(err, elen, "intent: the rules it compiles to do not load: %s",
			 diags.n ? diags.d[0].msg : "out of memory");
		pol_diags_free(&diags);
		json_decref(rules);
		return r == -ENOMEM ? r : -EINVAL;
	}
	pol_diags_free(&diags);
	it = intent_new(in, sentence, approver, now_ms, for_s ? for_s : ttl);
	if (!it) {
		pol_free(pol);
		json_decref(rules);
		return -ENOMEM;
	}
	it->pol = pol;
	it->rules = rules;
	return (int)it->id;
}

int intent_state_key(struct intents *in, const char *key, const char *summary,
		     const char *approver, uint64_t now_ms)
{
	char what[512];
	struct intent *it;

	snprintf(what, sizeof(what), "this request: %s", summary);
	it = intent_new(in, what, approver, now_ms, 0);
	if (!it)
		return -ENOMEM;
	snprintf(it->key, sizeof(it->key), "%s", key);
	return (int)it->id;
}

static bool live(const struct intent *it, uint64_t now_ms)
{
	return !it->revoked && (!it->expires_ms || now_ms < it->expires_ms);
}

/*
 * Does POL allow the one operation EV?  The event is judged as what it
 * is: a file operation by path, a connection by host and port, anything
 * else (a lifted command: git.push, a tool call, an HTTP request) as a
 * tool.  Anything that does not parse is not covered.
 */
static bool key_named(const json_t *rules, const char *key)
{
	json_t *r;
	size_t i;

	json_array_foreach(rules, i, r)
		if (json_object_get(json_object_get(json_object_get(r, "tool"), "args"), key))
			return true;
	return false;
}

/*
 * A lifted event's arguments as the intent judges them: those its rules
 * name.  NULL when one it does not name is a flag set (not covered).
 */
static json_t *lifted_args(const json_t *rules, json_t *args)
{
	json_t *out = json_object(), *v;
	const char *k;

	json_object_foreach(args, k, v) {
		if (key_named(rules, k)) {
			json_object_set(out, k, v);
		} else if (json_is_true(v)) {
			json_decref(out);
			return NULL;
		}
	}
	return out;
}

static bool allows_one(const struct intent *it, json_t *ev, bool lifted)
{
	const struct policy *pol = it->pol;
	json_t *own = NULL;
	bool ok;
	const char *server = json_string_value(json_object_get(ev, "server"));
	const char *tool = json_string_value(json_object_get(ev, "tool"));
	json_t *args = json_object_get(ev, "arguments");
	struct pol_request req = { .op = POL_OP_TOOL };
	struct pol_result res;

	if (!server || !tool)
		return false;
	if (!strcmp(server, "fs")) {
		req.path = json_string_value(json_object_get(args, "path"));
		if (!req.path)
			return false;
		if (!strcmp(tool, "read_file"))
			req.op = POL_OP_READ;
		else if (!strcmp(tool, "delete"))
			req.op = POL_OP_DELETE;
		else if (!strcmp(tool, "exec"))
			req.op = POL_OP_EXEC;
		else if (!strcmp(tool, "write_file"))
			req.op = POL_OP_WRITE;
		else
			return false;
	} else if (!strcmp(server, "net") && !strcmp(tool, "connect")) {
		json_int_t port = json_integer_value(json_object_get(args, "port"));

		req.op = POL_OP_CONNECT;
		req.host = json_string_value(json_object_get(args, "host"));
		if (!req.host || port <= 0 || port > 65535)
			return false;
		req.port = (uint16_t)port;
	} else {
		req.server = server;
		req.tool = tool;
		req.args = json_is_object(args) ? args : NULL;
		if (lifted && req.args && !(req.args = own = lifted_args(it->rules, args)))
			return false;
	}
	pol_eval(pol, &req, &res);
	ok = res.decision == CORDON_ALLOW;
	json_decref(own);
	return ok;
}

static bool allows(const struct intent *it, json_t *event, bool lifted)
{
	json_t *more = json_object_get(event, "more"), *m;
	size_t i;

	if (!allows_one(it, event, lifted))
		return false;
	json_array_foreach(more, i, m)
		if (!allows_one(it, m, lifted))
			return false;
	return true;
}

const struct intent *intent_covers(const struct intents *in, json_t *event, const char *key,
				   bool lifted, uint64_t now_ms)
{
	for (size_t i = 0; i < in->n; i++) {
		const struct intent *it = in->v[i];

		if (!live(it, now_ms))
			continue;
		if (it->pol ? event && allows(it, event, lifted) : key && !strcmp(it->key, key))
			return it;
	}
	return NULL;
}

int intent_revoke(struct intents *in, unsigned id, uint64_t now_ms)
{
	for (size_t i = 0; i < in->n; i++)
		if (in->v[i]->id == id && live(in->v[i], now_ms)) {
			in->v[i]->revoked = true;
			return 0;
		}
	return -ENOENT;
}

json_t *intent_list_json(const struct intents *in, uint64_t now_ms)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < in->n; i++) {
		const struct intent *it = in->v[i];
		json_t *o;

		if (!live(it, now_ms))
			continue;
		o = json_pack("{s:i,s:s,s:s,s:I,s:s}", "id", (int)it->id, "sentence", it->sentence,
			      "approver", it->approver, "stated_at", (json_int_t)it->stated_at,
			      "kind", it->pol ? "sentence" : "request");
		if (o)
			json_object_set_new(o, "expires_in_ms", it->expires_ms ?
				json_integer((json_int_t)(it->expires_ms - now_ms)) : json_null());
		json_array_append_new(a, o);
	}
	return a;
}

void intent_approver(const struct intent *it, char *out, size_t len)
{
	struct tm tm;
	char when[32] = "";

	if (gmtime_r(&(time_t){ (time_t)it->stated_at }, &tm))
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	snprintf(out, len, "intent %u: %s (stated by %s at %s)", it->id, it->sentence,
		 it->approver, when);
}

void intents_free(struct intents *in)
{
	for (size_t i = 0; i < in->n; i++) {
		pol_free(in->v[i]->pol);
		json_decref(in->v[i]->rules);
		free(in->v[i]);
	}
	free(in->v);
	in->v = NULL;
	in->n = 0;
}
