// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Sentence parts about tools: MCP tools by name ("call filesystem.read_file
 * when path is within the workspace") and the lifted commands by what they
 * do ("push to origin", "a force push", "publishing any package",
 * "installing packages", "fetching URLs from example.com").
 *
 * A tool rule without conditions matches every call of that tool; a
 * condition names an argument key and makes it known (policy/README.md:
 * a call carrying a key no matching rule knows is denied).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "en_int.h"

static void tool_rule(struct en_frag *f, const char *decision, const char *name, json_t *args)
{
	json_t *tool = json_pack("{s:s}", "name", name);

	if (args && json_object_size(args))
		json_object_set(tool, "args", args);
	json_array_append_new(f->rules, json_pack("{s:s, s:o}", "decision", decision, "tool", tool));
}

/* "to origin", "to the branch main", "of the branch main": git.push's arguments. */
static void push_quals(struct en_p *p, json_t *args)
{
	const struct en_tok *t;

	for (;;) {
		size_t save = p->i;

		if (en_words(p, "to the branch") || en_words(p, "of the branch") ||
		    en_words(p, "the branch")) {
			t = en_peek(p, 0);
			if (!t || t->kind == EN_COMMA || t->kind == EN_COLON) {
				en_fail(p, "a branch name");
				p->i = save;
				return;
			}
			p->i++;
			json_object_set_new(args, "branch", json_pack("{s:s}", "equals", t->text));
			continue;
		}
		if (en_words(p, "to the remote") || en_word(p, "to")) {
			bool said = !strcmp(p->s->t[p->i - 1].low, "remote");

			t = en_peek(p, 0);
			if (!t || (t->kind != EN_WORD && t->kind != EN_STR && t->kind != EN_DOTTED)) {
				en_fail(p, "a remote name");
				p->i = save;
				return;
			}
			/*
			 * "push to main": a branch to many, a remote to the grammar.
			 * A rule that read it as the remote would not hold pushes to
			 * origin's main: only the usual remote names go bare.
			 */
			if (!said && strcmp(t->low, "origin") && strcmp(t->low, "upstream")) {
				en_semantic(p, p->i, "\"to %s\" can be a branch or a remote: say \"to the "
					    "branch %s\" or \"to the remote %s\"", t->text, t->text, t->text);
				return;
			}
			p->i++;
			json_object_set_new(args, "remote", json_pack("{s:s}", "equals", t->text));
			continue;
		}
		return;
	}
}

static bool push_rule(struct en_p *p, struct en_frag *f, const char *decision, bool force)
{
	json_t *args = json_object();

	if (force)
		json_object_set_new(args, "force", json_pack("{s:b}", "equals", 1));
	push_quals(p, args);
	tool_rule(f, decision, "git.push", args);
	json_decref(args);
	return true;
}

static bool packages(struct en_p *p)
{
	return en_word(p, "packages") || en_words(p, "any package") || en_words(p, "a package") ||
	       en_words(p, "any packages");
}

static bool fetch_rest(struct en_p *p, struct en_frag *f, const char *decision)
{
	json_t *args = json_object(), *hosts = json_array();
	bool ok = true;

	(void)(en_word(p, "urls") || en_words(p, "any url") || en_word(p, "anything") ||
	       en_word(p, "files"));
	if (en_word(p, "from")) {
		bool last;

		do {
			const struct en_tok *t;

			if (!en_kind(p, EN_DOTTED, "a host name", &t)) {
				ok = false;
				goto out;
			}
			json_array_append_new(hosts, json_string(t->text));
		} while (en_list_sep(p, &last));
		json_object_set_new(args, "url", json_pack("{s:O}", "domain_in", hosts));
	}
	tool_rule(f, decision, "http.fetch", args);
out:
	json_decref(args);
	json_decref(hosts);
	return ok;
}

static bool command_rule(struct en_p *p, struct en_frag *f, const char *decision)
{
	const struct en_tok *t;
	json_t *argv = json_array(), *args;
	char *dup, *w, *sp = NULL;

	if (!en_kind(p, EN_STR, "the command in quotes", &t)) {
		json_decref(argv);
		return false;
	}
	dup = strdup(t->text);
	for (w = strtok_r(dup, " ", &sp); w; w = strtok_r(NULL, " ", &sp))
		json_array_append_new(argv, json_string(w));
	free(dup);
	args = json_pack("{s:{s:o}, s:{s:b}}", "argv", "equals", argv, "cwd", "any", 1);
	tool_rule(f, decision, "shell.exec", args);
	json_decref(args);
	return true;
}

/* A tool name: SERVER.TOOL, "the SERVER tools", "any SERVER tool". */
static bool tool_target(struct en_p *p, char *out, size_t len)
{
	const struct en_tok *t = en_peek(p, 0), *w;
	const char *dot;

	if (t && t->kind == EN_DOTTED && (dot = strchr(t->text, '.')) && !strchr(dot + 1, '.') &&
	    dot != t->text && dot[1] && !strchr(t->text, '/')) {
		p->i++;
		snprintf(out, len, "%s", t->text);
		return true;
	}
	if (en_word(p, "the") || en_word(p, "any")) {
		if (!en_kind(p, EN_WORD, "a server name", &w))
			return false;
		if (!en_word(p, "tools") && !en_word(p, "tool"))
			return false;
		snprintf(out, len, "%s.*", w->text);
		return true;
	}
	en_fail(p, "a tool name (SERVER.TOOL)");
	return false;
}

static bool cond_word(const struct en_tok *t)
{
	static const char *const w[] = { "is", "starts", "may", "matches", NULL };

	for (size_t k = 0; t && t->kind == EN_WORD && w[k]; k++)
		if (!strcmp(t->low, w[k]))
			return true;
	return false;
}

/* A condition's value; NULL for a number JSON cannot hold exactly (the caller refuses it). */
static json_t *value_of(const struct en_tok *t)
{
	if (t->kind == EN_NUM && strlen(t->text) > 15)
		return NULL;
	if (t->kind == EN_NUM)
		return strchr(t->text, '.') ? json_real(strtod(t->text, NULL)) :
					      json_integer(strtoll(t->text, NULL, 10));
	if (t->kind == EN_WORD && !strcmp(t->low, "true"))
		return json_true();
	if (t->kind == EN_WORD && !strcmp(t->low, "false"))
		return json_false();
	return json_string(t->text);
}

/*
 * A negation or a quantifier is no bare value: "may not call db.drop when
 * confirm is not" reads as a deny when confirm is missing, and compiled to
 * confirm equal to the string "not" (a deny that never matches).  The word
 * as a value must be quoted.  The token at index at; false (an error) for
 * such a word.
 */
static bool bare_value_ok(struct en_p *p, size_t at)
{
	static const char *const w[] = { "not", "no", "never", "none", "nothing", "neither", "nor",
					 "any", "all", "every", "each", "some", "empty", "missing",
					 "unset", "absent", "anything", "everything", NULL };
	const struct en_tok *t = &p->s->t[at];

	for (size_t k = 0; t->kind == EN_WORD && w[k]; k++)
		if (!strcmp(t->low, w[k])) {
			en_semantic(p, at, "\"%s\" as a value reads as a negation or a quantifier: "
				    "quote it (\"%s\") if it is the value", t->text, t->text);
			return false;
		}
	return true;
}

/* Items of a value list; stops before "and KEY is ..." (the next condition). */
static bool value_list(struct en_p *p, json_t *vals, bool paths)
{
	for (;;) {
		const struct en_tok *t = en_peek(p, 0), *n1 = en_peek(p, 1), *n2 = en_peek(p, 2);
		char place[64];

		if (paths && (en_words(p, "the workspace") || en_words(p, "my home"))) {
			snprintf(place, sizeof(place), "%s",
				 !strcmp(p->s->t[p->i - 1].low, "workspace") ? "${WORKSPACE}" : "${HOME}");
			json_array_append_new(vals, json_string(place));
		} else if (t && t->kind != EN_COMMA && t->kind != EN_COLON &&
			   (!paths || t->kind == EN_PATH)) {
			json_t *v;

			if (!paths && !bare_value_ok(p, p->i))
				return false;
			v = paths ? json_string(t->text) : value_of(t);
			p->i++;
			if (!v) {
				en_semantic(p, p->i - 1, "a number of more than 15 digits");
				return false;
			}
			json_array_append_new(vals, v);
		} else {
			en_fail(p, paths ? "a path" : "a value");
			return false;
		}
		t = en_peek(p, 0);
		n1 = en_peek(p, 1);
		n2 = en_peek(p, 2);
		if (t && t->kind == EN_COMMA) {
			p->i++;
			t = en_peek(p, 0);
			n1 = en_peek(p, 1);
			n2 = en_peek(p, 2);
		}
		if (t && t->kind == EN_WORD && (!strcmp(t->low, "and") || !strcmp(t->low, "or"))) {
			if (cond_word(n2) && n1 && (n1->kind == EN_WORD || n1->kind == EN_STR))
				return true;
			/* Paths: what follows "and" is another path, or the next condition. */
			if (paths && n1 && n1->kind != EN_PATH && strcmp(n1->low, "the") &&
			    strcmp(n1->low, "my"))
				return true;
			p->i++;
			continue;
		}
		if (t && p->s->t[p->i - 1].kind == EN_COMMA)
			continue;
		return true;
	}
}

/* "content, edits and head may be anything": several keys declared known at once. */
static bool any_keys(struct en_p *p, json_t *args, const struct en_tok *first)
{
	size_t save = p->i;
	const struct en_tok *keys[64];
	size_t n = 0;
	bool last = false;

	keys[n++] = first;
	p->quiet++;
	while (!last && n < 64 && en_list_sep(p, &last)) {
		const struct en_tok *t = en_peek(p, 0);

		if (!t || (t->kind != EN_WORD && t->kind != EN_STR))
			break;
		keys[n++] = t;
		p->i++;
	}
	if (n < 2 || !en_words(p, "may be anything")) {
		p->quiet--;
		p->i = save;
		return false;
	}
	p->quiet--;
	for (size_t k = 0; k < n; k++)
		json_object_set_new(args, keys[k]->text, json_pack("{s:b}", "any", 1));
	return true;
}

static bool one_cond(struct en_p *p, json_t *args)
{
	const struct en_tok *key = en_peek(p, 0), *t;
	json_t *vals = json_array(), *c = NULL;

	if (!key || (key->kind != EN_WORD && key->kind != EN_STR)) {
		en_fail(p, "an argument name");
		goto fail;
	}
	p->i++;
	if (any_keys(p, args, key))
		goto done;
	if (en_words(p, "may be anything") || en_words(p, "is anything")) {
		c = json_pack("{s:b}", "any", 1);
	} else if (en_words(p, "is within") || en_words(p, "is inside") || en_words(p, "is in") ||
		   en_words(p, "are within")) {
		if (!value_list(p, vals, true))
			goto fail;
		c = json_pack("{s:O}", "within", vals);
	} else if (en_words(p, "is one of") || en_words(p, "are one of")) {
		if (!value_list(p, vals, false))
			goto fail;
		c = json_pack("{s:O}", "in", vals);
	} else if (en_words(p, "is a url on") || en_words(p, "is a url of")) {
		bool last;

		do {
			if (!en_kind(p, EN_DOTTED, "a host name", &t))
				goto fail;
			json_array_append_new(vals, json_string(t->text));
		} while (en_list_sep(p, &last));
		c = json_pack("{s:O}", "domain_in", vals);
	} else if (en_words(p, "starts with")) {
		if (!en_kind(p, EN_STR, "a quoted string", &t))
			goto fail;
		c = json_pack("{s:s}", "prefix", t->text);
	} else if (en_word(p, "matches")) {
		if (!en_kind(p, EN_STR, "a quoted pattern", &t))
			goto fail;
		c = json_pack("{s:s}", "glob", t->text);
	} else if (en_word(p, "is")) {
		t = en_peek(p, 0);
		if (!t || t->kind == EN_COMMA || t->kind == EN_COLON) {
			en_fail(p, "a value");
			goto fail;
		}
		if (!bare_value_ok(p, p->i))
			goto fail;
		p->i++;
		if (!(c = value_of(t))) {
			en_semantic(p, p->i - 1, "a number of more than 15 digits");
			goto fail;
		}
		c = json_pack("{s:o}", "equals", c);
	} else {
		en_fail(p, "\"is\", \"is one of\", \"is within\", \"starts with\" or \"may be anything\"");
		goto fail;
	}
	json_object_set_new(args, key->text, c);
done:
	json_decref(vals);
	return true;
fail:
	json_decref(vals);
	return false;
}

static bool generic_tool(struct en_p *p, struct en_frag *f, const char *decision, bool gerund)
{
	json_t *args = json_object();
	char name[300];
	bool ok = false;

	p->quiet++;
	ok = gerund ? (en_word(p, "calling") || en_word(p, "using")) :
		      (en_word(p, "call") || en_word(p, "use"));
	p->quiet--;
	if (!ok) {
		en_fail(p, gerund ? "a verb (reading, changing, running, reaching, calling...)" :
			"a verb (read, change, run, reach, call...)");
		goto out;
	}
	ok = false;
	if (!tool_target(p, name, sizeof(name)))
		goto out;
	if (en_word(p, "when") || en_word(p, "if")) {
		do {
			if (!one_cond(p, args))
				goto out;
		} while (en_word(p, "and"));
	}
	tool_rule(f, decision, name, args);
	ok = true;
out:
	json_decref(args);
	return ok;
}

bool en_tool_action(struct en_p *p, struct en_frag *f, const char *decision, bool gerund)
{
	enum { NONE, FORCE, PUSH, PUBLISH, INSTALL, FETCH, COMMAND } what = NONE;
	size_t save = p->i;

	if (generic_tool(p, f, decision, gerund))
		return true;
	if (p->i != save || p->sem)
		return false;
	p->quiet++;
	if (en_words(p, gerund ? "force pushing" : "force push") ||
	    en_word(p, gerund ? "force-pushing" : "force-push"))
		what = FORCE;
	else if (en_word(p, gerund ? "pushing" : "push"))
		what = PUSH;
	else if (en_word(p, gerund ? "publishing" : "publish"))
		what = PUBLISH;
	else if (en_word(p, gerund ? "installing" : "install"))
		what = INSTALL;
	else if (en_word(p, gerund ? "fetching" : "fetch") ||
		 en_word(p, gerund ? "downloading" : "download"))
		what = FETCH;
	else if (en_words(p, gerund ? "running the command" : "run the command"))
		what = COMMAND;
	p->quiet--;
	switch (what) {
	case FORCE:
	case PUSH:
		return push_rule(p, f, decision, what == FORCE);
	case PUBLISH:
	case INSTALL:
		if (!packages(p))
			return false;
		tool_rule(f, decision, what == PUBLISH ? "*.publish" : "npm.install", NULL);
		if (what == INSTALL)
			tool_rule(f, decision, "pip.install", NULL);
		return true;
	case FETCH:
		return fetch_rest(p, f, decision);
	case COMMAND:
		return command_rule(p, f, decision);
	case NONE:
		break;
	}
	return false;
}

/* Noun phrases: "any git push", "a force push to origin", "downloads from example.com". */
bool en_tool_np(struct en_p *p, struct en_frag *f, const char *decision)
{
	size_t save = p->i;
	bool force;

	(void)(en_word(p, "any") || en_word(p, "a") || en_word(p, "every") || en_word(p, "all"));
	(void)en_word(p, "git");
	if (en_word(p, "force-push") || en_word(p, "force-pushes"))
		return push_rule(p, f, decision, true);
	force = en_word(p, "force");
	if (en_word(p, "push") || en_word(p, "pushes"))
		return push_rule(p, f, decision, force);
	p->i = save;
	if (en_word(p, "downloads"))
		return fetch_rest(p, f, decision);
	return en_tool_action(p, f, decision, true);
}
