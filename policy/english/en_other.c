// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Sentence forms that make no rule by themselves: lists ("Code hosts are
 * github.com and gitlab.com."), budgets ("Stop after 4 hours or 200
 * dollars."), limits ("Use at most 8 GB of memory."), the token price,
 * approvals ("Wait 2 minutes for my answer, then deny."), the policy's name
 * and description, and credentials ("Use my Anthropic key.").
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "en_int.h"

/* --- lists ------------------------------------------------------------------------- */

static bool reserved_first(const char *w)
{
	static const char *const r[] = { "the", "it", "agents", "this", "tokens", "about", "never",
					 "ask", "do", "don't", "use", "stop", "wait", "a", "an",
					 NULL };

	for (size_t k = 0; r[k]; k++)
		if (!strcmp(w, r[k]))
			return true;
	return false;
}

/* The list's name words (up to "are"/"is") and its items. */
static bool list_parts(struct en_p *p, size_t *name_end, json_t *items, int *kind)
{
	const struct en_tok *t = en_peek(p, 0);
	bool last;

	if (!t || t->kind != EN_WORD || reserved_first(t->low)) {
		en_fail(p, "a sentence form");
		return false;
	}
	while ((t = en_peek(p, 0)) && t->kind == EN_WORD && strcmp(t->low, "are") &&
	       strcmp(t->low, "is"))
		p->i++;
	*name_end = p->i;
	if (!en_word(p, "are") && !en_word(p, "is"))
		return false;
	*kind = 0;
	if (en_word(p, "empty") || en_word(p, "nothing") || en_word(p, "none"))
		return true;
	do {
		t = en_peek(p, 0);
		if (!t || (t->kind != EN_PATH && t->kind != EN_DOTTED && t->kind != EN_STR &&
			   !(t->kind == EN_WORD && !strcmp(t->low, "localhost")))) {
			en_fail(p, "a path, a host or a quoted value");
			return false;
		}
		p->i++;
		json_array_append_new(items, json_string(t->text));
		*kind = t->kind == EN_PATH ? 1 : 2;
	} while (en_list_sep(p, &last));
	return true;
}

static void list_key(const struct en_sentence *s, size_t end, char *key, size_t len)
{
	size_t o = 0;

	for (size_t k = 0; k < end && o + 1 < len; k++) {
		if (k && o + 1 < len)
			key[o++] = '_';
		for (const char *c = s->t[k].low; *c && o + 1 < len; c++)
			key[o++] = isalnum((unsigned char)*c) ? *c : '_';
	}
	key[o] = 0;
}

/*
 * A list named like a phrase the language already reads ("Files are /srv."
 * then "may read files", which means "/") would be silently shadowed:
 * refused at its definition.
 */
static bool name_collides(const struct en_sentence *s, size_t end)
{
	static const char *const taken[] = { "anything", "everything", "any file", "any files",
					     "all files", "files", "workspace", "my workspace",
					     "home", "my home", "home directory", "my home directory",
					     "temporary directory", "temp directory", "anywhere",
					     "everywhere", "my", "any", "all", NULL };
	char name[256];
	size_t o = 0;

	for (size_t k = 0; k < end && o < sizeof(name) - 1; k++)
		o += (size_t)snprintf(name + o, sizeof(name) - o, "%s%s", k ? " " : "", s->t[k].low);
	for (size_t k = 0; taken[k]; k++)
		if (!strcmp(name, taken[k]))
			return true;
	for (size_t k = 0; en_named_sets[k].words; k++) {
		const char *w = en_named_sets[k].words;

		if (!strcmp(name, w) || (!strncmp(w, "my ", 3) && !strcmp(name, w + 3)) ||
		    (!strncmp(w, "the ", 4) && !strcmp(name, w + 4)))
			return true;
	}
	return false;
}

bool en_form_list(struct en_p *p, struct en_frag *f)
{
	json_t *items = json_array();
	size_t end;
	int kind;
	char key[128];

	if (!list_parts(p, &end, items, &kind)) {
		json_decref(items);
		return false;
	}
	if (name_collides(p->s, end)) {
		json_decref(items);
		en_semantic(p, 0, "a list cannot be named like a phrase the language already reads; "
			    "name it otherwise");
		return false;
	}
	list_key(p->s, end, key, sizeof(key));
	json_object_set_new(f->lists, key, items);
	return true;
}

const struct en_list *en_list_ref(struct en_p *p, bool paths)
{
	const struct en_list *best = NULL;
	size_t save = p->i, best_end = 0;

	(void)(en_word(p, "the") || en_word(p, "my") || en_word(p, "our"));
	for (size_t k = 0; k < p->ctx->n_lists; k++) {
		const struct en_list *l = &p->ctx->lists[k];
		size_t at = p->i, j;

		for (j = 0; j < l->n_words; j++) {
			const struct en_tok *t = en_peek(p, j);

			if (!t || t->kind != EN_WORD || strcmp(t->low, l->words[j]))
				break;
		}
		if (j == l->n_words && at + j > best_end && (l->kind == 0 || (l->kind == 1) == paths)) {
			best = l;
			best_end = at + j;
		}
	}
	if (!best) {
		p->i = save;
		return NULL;
	}
	p->i = best_end;
	return best;
}

/* --- budgets and limits ------------------------------------------------------------ */

/* whole() for the non-negative amounts of a sentence, without libm. */
static double whole(double v)
{
	return v < 9e18 ? (double)(unsigned long long)v : v;
}

static bool number(struct en_p *p, double *v)
{
	const struct en_tok *t;

	if (!en_kind(p, EN_NUM, "a number", &t))
		return false;
	*v = strtod(t->text, NULL);
	/* A budget is an integer of JSON: past 10^15 (also in thousands...), refuse. */
	if (strlen(t->text) > 15) {
		en_semantic(p, p->i - 1, "a number of more than 15 digits");
		return false;
	}
	if (en_word(p, "thousand"))
		*v *= 1e3;
	else if (en_word(p, "million"))
		*v *= 1e6;
	else if (en_word(p, "billion"))
		*v *= 1e9;
	return true;
}

static bool duration_unit(struct en_p *p, double *mult)
{
	static const struct { const char *w; double m; } u[] = {
		{ "seconds", 1 }, { "second", 1 }, { "minutes", 60 }, { "minute", 60 },
		{ "hours", 3600 }, { "hour", 3600 }, { "days", 86400 }, { "day", 86400 },
	};

	for (size_t k = 0; k < sizeof(u) / sizeof(u[0]); k++)
		if (en_word(p, u[k].w)) {
			*mult = u[k].m;
			return true;
		}
	return false;
}

static bool size_unit(struct en_p *p, char *suffix)
{
	static const struct { const char *w; char s; } u[] = {
		{ "tb", 'T' }, { "gb", 'G' }, { "mb", 'M' }, { "kb", 'K' }, { "bytes", 0 },
	};

	for (size_t k = 0; k < sizeof(u) / sizeof(u[0]); k++)
		if (en_word(p, u[k].w)) {
			*suffix = u[k].s;
			return true;
		}
	return false;
}

static json_t *duration_json(double secs)
{
	char b[32];
	unsigned long long s = (unsigned long long)secs;

	if (s && s % 3600 == 0)
		snprintf(b, sizeof(b), "%lluh", s / 3600);
	else if (s && s % 60 == 0)
		snprintf(b, sizeof(b), "%llum", s / 60);
	else
		snprintf(b, sizeof(b), "%llus", s);
	return json_string(b);
}

static json_t *size_json(double v, char suffix)
{
	char b[48];

	if (v != whole(v))
		snprintf(b, sizeof(b), "%llu", (unsigned long long)(v * (suffix == 'T' ? 1099511627776.0 :
			 suffix == 'G' ? 1073741824.0 : suffix == 'M' ? 1048576.0 :
			 suffix == 'K' ? 1024.0 : 1)));
	else if (suffix)
		snprintf(b, sizeof(b), "%llu%c", (unsigned long long)v, suffix);
	else
		snprintf(b, sizeof(b), "%llu", (unsigned long long)v);
	return json_string(b);
}

/* Set a budget; two amounts of one kind: the smaller stands (the first to run out stops). */
static void set_budget_int(json_t *b, const char *key, json_int_t v)
{
	json_t *old = json_object_get(b, key);

	if (!old || json_integer_value(old) > v)
		json_object_set_new(b, key, json_integer(v));
}

static bool one_budget(struct en_p *p, json_t *b)
{
	double v, m;
	char sfx;
	size_t at = p->i;

	if (!number(p, &v))
		return false;
	if (duration_unit(p, &m)) {
		json_object_set_new(b, "wall_time", duration_json(v * m));
	} else if (en_word(p, "steps") || en_word(p, "step")) {
		set_budget_int(b, "steps", (json_int_t)v);
	} else if (en_word(p, "tokens")) {
		set_budget_int(b, "llm_tokens", (json_int_t)v);
	} else if (en_word(p, "requests")) {
		set_budget_int(b, "egress_requests", (json_int_t)v);
	} else if (en_word(p, "dollars") || en_word(p, "dollar")) {
		if (p->ctx->price <= 0) {
			en_semantic(p, p->i - 1, "dollars need a price: add a sentence such as "
				    "\"Tokens cost 15 dollars per million.\"");
			return false;
		}
		set_budget_int(b, "llm_tokens", (json_int_t)whole(v / p->ctx->price * 1e6));
	} else if (size_unit(p, &sfx)) {
		if (!en_words(p, "of traffic") && !en_words(p, "of audit log")) {
			en_fail(p, "\"of traffic\" or \"of audit log\"");
			return false;
		}
		json_object_set_new(b, !strcmp(p->s->t[p->i - 1].low, "traffic") ? "egress_bytes" :
				    "audit", size_json(v, sfx));
	} else {
		en_fail(p, "hours, steps, tokens, dollars, requests or GB of traffic");
		return false;
	}
	(void)at;
	return true;
}

bool en_form_budget(struct en_p *p, struct en_frag *f)
{
	bool last;

	if (!en_words(p, "stop after"))
		return false;
	do {
		if (!one_budget(p, f->budgets))
			return false;
	} while (en_list_sep(p, &last));
	return true;
}

static bool one_limit(struct en_p *p, json_t *b)
{
	double v;
	char sfx;

	if (!number(p, &v))
		return false;
	if (size_unit(p, &sfx)) {
		if (!en_words(p, "of memory"))
			return false;
		json_object_set_new(b, "memory", size_json(v, sfx));
	} else if (en_word(p, "processes")) {
		json_object_set_new(b, "pids", json_integer((json_int_t)v));
	} else if (en_word(p, "cpus") || en_word(p, "cpu") || en_word(p, "cores")) {
		json_object_set_new(b, "cpu", v == whole(v) ? json_integer((json_int_t)v) : json_real(v));
	} else {
		en_fail(p, "GB of memory, processes or CPUs");
		return false;
	}
	return true;
}

bool en_form_limits(struct en_p *p, struct en_frag *f)
{
	bool last;

	if (!en_words(p, "use at most"))
		return false;
	do {
		if (!one_limit(p, f->budgets))
			return false;
	} while (en_list_sep(p, &last));
	return true;
}

bool en_form_price(struct en_p *p, struct en_frag *f)
{
	double v;

	(void)f;
	if (!en_words(p, "tokens cost") || !number(p, &v))
		return false;
	if (!en_words(p, "dollars per million") && !en_words(p, "dollar per million"))
		return false;
	(void)en_word(p, "tokens");
	if (v <= 0) {
		en_semantic(p, 2, "a price is more than 0 dollars");
		return false;
	}
	return true;
}

bool en_form_wait(struct en_p *p, struct en_frag *f)
{
	double v, m;

	if (!en_word(p, "wait") || !number(p, &v) || !duration_unit(p, &m))
		return false;
	if (!en_words(p, "for my answer") && !en_words(p, "for an answer") &&
	    !en_words(p, "for me"))
		return false;
	(void)en_kind(p, EN_COMMA, "\",\"", &(const struct en_tok *){ NULL });
	if (!en_word(p, "then"))
		return false;
	json_object_set_new(f->approvals, "timeout", duration_json(v * m));
	if (en_word(p, "deny"))
		json_object_set_new(f->approvals, "on_timeout", json_string("deny"));
	else if (en_word(p, "allow"))
		json_object_set_new(f->approvals, "on_timeout", json_string("allow"));
	else
		return false;
	return true;
}

bool en_form_meta(struct en_p *p, struct en_frag *f)
{
	const struct en_tok *t;
	const char *c;
	char d[1024];
	size_t n;

	if (en_words(p, "this policy is called")) {
		t = en_peek(p, 0);
		if (!t || t->kind == EN_COMMA || t->kind == EN_COLON) {
			en_fail(p, "a name");
			return false;
		}
		p->i++;
		json_object_set_new(f->meta, "name", json_string(t->text));
		return true;
	}
	if (!en_words(p, "about this policy") || !en_kind(p, EN_COLON, "\":\"", &t))
		return false;
	c = strchr(p->s->text, ':');
	if (!c)
		return false;
	c++;
	while (*c == ' ')
		c++;
	n = strlen(c);
	if (n && c[n - 1] == '.')
		n--;
	snprintf(d, sizeof(d), "%.*s", (int)n, c);
	json_object_set_new(f->meta, "description", json_string(d));
	p->i = p->s->n;
	return true;
}

/* --- credentials ------------------------------------------------------------------- */

static bool cred_hosts(struct en_p *p, json_t *hosts)
{
	bool last;

	do {
		const struct en_tok *t;

		if (!en_kind(p, EN_DOTTED, "a host name", &t))
			return false;
		json_array_append_new(hosts, json_string(t->text));
	} while (en_list_sep(p, &last));
	return true;
}

static void cred_rule(struct en_frag *f, json_t *cred)
{
	json_array_append_new(f->rules, json_pack("{s:s, s:{s:O, s:[i], s:s}}", "decision", "allow",
						  "net", "hosts", json_object_get(cred, "hosts"),
						  "ports", 443, "via", "credential-proxy"));
	json_array_append_new(f->creds, cred);
}

static bool known_cred(struct en_p *p, struct en_frag *f)
{
	const struct en_tok *t;
	json_t *cred = NULL, *hosts;

	if (!en_words(p, "use my") || !en_kind(p, EN_WORD, "a provider (Anthropic, OpenAI, Gemini)", &t))
		return false;
	for (size_t k = 0; en_known_creds[k].word; k++)
		if (!strcmp(en_known_creds[k].word, t->low))
			cred = json_loads(en_known_creds[k].json, 0, NULL);
	if (!cred) {
		p->i--;
		en_fail(p, "a provider (Anthropic, OpenAI, Gemini)");
		return false;
	}
	if (!en_words(p, "api key") && !en_word(p, "key") && !en_word(p, "token")) {
		json_decref(cred);
		return false;
	}
	if (en_word(p, "for")) {
		hosts = json_array();
		if (!cred_hosts(p, hosts)) {
			json_decref(hosts);
			json_decref(cred);
			return false;
		}
		json_object_set_new(cred, "hosts", hosts);
	}
	cred_rule(f, cred);
	return true;
}

static bool endpoints(struct en_p *p, json_t *eps)
{
	static const char *const m[] = { "get", "post", "put", "patch", "delete", "head", NULL };
	bool last;

	do {
		const struct en_tok *t = en_peek(p, 0), *path;
		char b[1024], up[8];
		size_t k;

		for (k = 0; m[k] && !(t && t->kind == EN_WORD && !strcmp(t->low, m[k])); k++)
			;
		if (!m[k]) {
			en_fail(p, "a method (GET, POST, ...)");
			return false;
		}
		p->i++;
		if (!en_kind(p, EN_PATH, "a path", &path))
			return false;
		for (k = 0; t->low[k] && k < 7; k++)
			up[k] = (char)toupper((unsigned char)t->low[k]);
		up[k] = 0;
		snprintf(b, sizeof(b), "%s %s", up, path->text);
		json_array_append_new(eps, json_string(b));
	} while (en_list_sep(p, &last));
	return true;
}

static bool generic_cred(struct en_p *p, struct en_frag *f)
{
	const struct en_tok *t, *env = NULL;
	json_t *c = json_object(), *hosts = json_array(), *eps = json_array();
	char name[128];
	bool ok = false;

	if (!en_words(p, "use the secret in"))
		goto out;
	if (en_words(p, "the file")) {
		if (!en_kind(p, EN_PATH, "a path", &t))
			goto out;
		json_object_set_new(c, "source", json_pack("{s:s}", "file", t->text));
	} else if (en_kind(p, EN_VAR, "$NAME or \"the file\"", &t)) {
		env = t;
		json_object_set_new(c, "source", json_pack("{s:s}", "env", t->text));
	} else {
		goto out;
	}
	if (!en_word(p, "for") || !cred_hosts(p, hosts))
		goto out;
	if (!en_words(p, "in the header") || !(t = en_peek(p, 0)) || t->kind == EN_COMMA)
		goto out;
	p->i++;
	json_object_set_new(c, "header", json_string(t->low));
	if (en_words(p, "with the prefix")) {
		if (!en_kind(p, EN_STR, "a quoted prefix", &t))
			goto out;
		json_object_set_new(c, "prefix", json_string(t->text));
	}
	if (!en_words(p, "only for") || !endpoints(p, eps))
		goto out;
	if (en_word(p, "as")) {
		if (!en_kind(p, EN_VAR, "$NAME", &env))
			goto out;
	} else if (!env) {
		en_fail(p, "\"as $NAME\" (the variable the agent sees)");
		goto out;
	}
	snprintf(name, sizeof(name), "%s", env->text);
	for (char *x = name; *x; x++)
		*x = (char)tolower((unsigned char)*x);
	json_object_set_new(c, "name", json_string(name));
	json_object_set_new(c, "env", json_string(env->text));
	json_object_set(c, "hosts", hosts);
	json_object_set(c, "endpoints", eps);
	cred_rule(f, json_pack("{s:O, s:O, s:O, s:O, s:O, s:O}", "name", json_object_get(c, "name"),
			       "env", json_object_get(c, "env"), "source", json_object_get(c, "source"),
			       "hosts", hosts, "header", json_object_get(c, "header"),
			       "endpoints", eps));
	if (json_object_get(c, "prefix")) {
		json_t *last = json_array_get(f->creds, json_array_size(f->creds) - 1);

		json_object_set(last, "prefix", json_object_get(c, "prefix"));
	}
	ok = true;
out:
	json_decref(c);
	json_decref(hosts);
	json_decref(eps);
	return ok;
}

bool en_form_cred(struct en_p *p, struct en_frag *f)
{
	size_t save = p->i;

	if (known_cred(p, f))
		return true;
	if (p->sem)
		return false;
	p->i = save;
	json_array_clear(f->rules);
	json_array_clear(f->creds);
	return generic_cred(p, f);
}

/* --- pass 1 ------------------------------------------------------------------------ */

static int add_list(struct en_ctx *ctx, const struct en_sentence *s, size_t end, int kind)
{
	struct en_list *l = reallocarray(ctx->lists, ctx->n_lists + 1, sizeof(*l));
	char key[128];

	if (!l)
		return -ENOMEM;
	ctx->lists = l;
	l = &ctx->lists[ctx->n_lists];
	memset(l, 0, sizeof(*l));
	l->words = calloc(end, sizeof(char *));
	list_key(s, end, key, sizeof(key));
	l->key = strdup(key);
	if (!l->words || !l->key) {
		free(l->words);
		free(l->key);
		return -ENOMEM;
	}
	for (size_t k = 0; k < end; k++)
		l->words[l->n_words++] = strdup(s->t[k].low);
	l->kind = kind;
	ctx->n_lists++;
	return 1;
}

int en_read_definition(struct en_ctx *ctx, const struct en_sentence *s)
{
	struct en_p p = { .s = s, .ctx = ctx };
	struct en_frag f;
	json_t *items = json_array();
	size_t end, k;
	int kind, r = 0;
	double v;
	json_t *c, *h;

	if (list_parts(&p, &end, items, &kind) && en_eof(&p) && !name_collides(s, end)) {
		json_decref(items);
		return add_list(ctx, s, end, kind);
	}
	json_decref(items);
	p = (struct en_p){ .s = s, .ctx = ctx };
	if (en_words(&p, "tokens cost") && number(&p, &v) && v > 0) {
		ctx->price = v;
		return 1;
	}
	p = (struct en_p){ .s = s, .ctx = ctx };
	if (en_frag_init(&f) < 0)
		return -ENOMEM;
	if (en_form_cred(&p, &f) && en_eof(&p)) {
		json_array_foreach(f.creds, k, c) {
			size_t j;

			json_array_foreach(json_object_get(c, "hosts"), j, h)
				json_array_append(ctx->cred_hosts, h);
		}
		r = 1;
	}
	en_frag_free(&f);
	return r;
}
