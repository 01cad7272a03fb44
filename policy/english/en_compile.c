// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The constitution compiler's front door: two passes over the sentences
 * (first the definitions other sentences refer to: lists, the token price,
 * the credentials' hosts; then every sentence), and the merge of what each
 * sentence says into one JSON policy in a fixed key order.
 *
 * Nothing here depends on a hash table's order, the locale or the clock:
 * sentences are read in file order, keys are inserted in a fixed order and
 * jansson keeps insertion order, so the same text gives the same bytes.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "en_int.h"

bool en_is_constitution(const char *text, size_t len)
{
	bool line_start = true;

	for (size_t i = 0; i < len; i++) {
		if (text[i] == '\n') {
			line_start = true;
			continue;
		}
		if (isspace((unsigned char)text[i]))
			continue;
		if (text[i] == '#' && line_start) {
			while (i < len && text[i] != '\n')
				i++;
			continue;
		}
		/* No sentence starts with these; JSON's other values are not policies either. */
		return text[i] != '{' && text[i] != '[' && text[i] != '"';
	}
	return false;
}

int en_error_format(const struct en_error *err, char *out, size_t outlen)
{
	int n = snprintf(out, outlen, "%s:%d:%d: error: %s", err->file, err->line, err->col,
			 err->message);

	if (n >= 0 && (size_t)n < outlen && err->suggestion[0])
		n += snprintf(out + n, outlen - (size_t)n, "\n  did you mean: \"%s\"", err->suggestion);
	return n;
}

static void ctx_free(struct en_ctx *ctx)
{
	for (size_t k = 0; k < ctx->n_lists; k++) {
		for (size_t j = 0; j < ctx->lists[k].n_words; j++)
			free(ctx->lists[k].words[j]);
		free(ctx->lists[k].words);
		free(ctx->lists[k].key);
	}
	free(ctx->lists);
	json_decref(ctx->cred_hosts);
}

static void sentence_err(struct en_error *err, const char *file, const struct en_sentence *s,
			 const char *msg)
{
	memset(err, 0, sizeof(*err));
	snprintf(err->file, sizeof(err->file), "%s", file);
	err->line = s->line;
	err->col = s->col;
	snprintf(err->message, sizeof(err->message), "%s", msg);
}

/*
 * The rule's name is where its sentence is, "FILE:LINE" (the file's base
 * name, in the characters a rule name may hold; "FILE:LINEb", "c", ... for
 * the further rules of a line), so every place that shows a rule's name
 * (explain, cordon pending, the audit log) shows the sentence's place.
 */
static void rule_name(const char *file, int line, int nth, char *out, size_t len)
{
	const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
	char b[80], suffix[16] = "";
	size_t o = 0;

	for (const char *c = base; *c && o < sizeof(b) - 1; c++)
		b[o++] = isalnum((unsigned char)*c) || strchr("_-.", *c) ? *c : '_';
	b[o] = 0;
	if (nth > 1 && nth <= 26)
		snprintf(suffix, sizeof(suffix), "%c", 'a' + nth - 1);
	else if (nth > 26)
		snprintf(suffix, sizeof(suffix), ".%d", nth);
	snprintf(out, len, "%s:%d%s", o ? b : "policy", line, suffix);
}

/* The named rule: name, decision, description, source, then its subject. */
static json_t *named_rule(const char *file, const struct en_sentence *s, json_t *frag_rule,
			  int nth)
{
	char name[128], src[512];
	json_t *r;
	const char *k;
	json_t *v;

	rule_name(file, s->line, nth, name, sizeof(name));
	snprintf(src, sizeof(src), "%s:%d", file, s->line);
	r = json_pack("{s:s, s:O, s:s, s:s}", "name", name, "decision",
		      json_object_get(frag_rule, "decision"), "description", s->text, "source", src);
	json_object_foreach(frag_rule, k, v)
		if (strcmp(k, "decision"))
			json_object_set(r, k, v);
	return r;
}

struct merge {
	json_t *lists, *rules, *creds, *approvals, *budgets, *meta;
	int last_line, nth;
};

static int merge(struct merge *m, const char *file, const struct en_sentence *s,
		 const struct en_frag *f, struct en_error *err)
{
	const char *k;
	json_t *v;
	size_t i;

	json_object_foreach(f->lists, k, v) {
		if (json_object_get(m->lists, k)) {
			sentence_err(err, file, s, "this list is defined twice");
			return -EINVAL;
		}
		json_object_set(m->lists, k, v);
	}
	json_object_foreach(f->meta, k, v) {
		if (json_object_get(m->meta, k)) {
			sentence_err(err, file, s, !strcmp(k, "name") ? "the policy is named twice" :
				     "the policy is described twice");
			return -EINVAL;
		}
		json_object_set(m->meta, k, v);
	}
	json_array_foreach(f->rules, i, v) {
		if (s->line != m->last_line)
			m->nth = 0;
		m->last_line = s->line;
		json_t *r = named_rule(file, s, v, ++m->nth);

		/* Never a sentence's rule silently missing. */
		if (!r || json_array_append_new(m->rules, r) < 0) {
			sentence_err(err, file, s, "out of memory");
			return -ENOMEM;
		}
	}
	json_array_extend(m->creds, f->creds);
	json_object_update(m->approvals, f->approvals);
	json_object_foreach(f->budgets, k, v) {
		json_t *old = json_object_get(m->budgets, k);

		if (!old || !json_is_integer(old) || !json_is_integer(v) ||
		    json_integer_value(v) < json_integer_value(old))
			json_object_set(m->budgets, k, v);
	}
	return 0;
}

static json_t *assemble(struct merge *m)
{
	json_t *o = json_pack("{s:i}", "cordon_policy", 1);

	if (json_object_get(m->meta, "name"))
		json_object_set(o, "name", json_object_get(m->meta, "name"));
	if (json_object_get(m->meta, "description"))
		json_object_set(o, "description", json_object_get(m->meta, "description"));
	if (json_object_size(m->lists))
		json_object_set(o, "lists", m->lists);
	json_object_set(o, "rules", m->rules);
	if (json_array_size(m->creds))
		json_object_set(o, "credentials", m->creds);
	if (json_object_size(m->approvals))
		json_object_set(o, "approvals", m->approvals);
	if (json_object_size(m->budgets))
		json_object_set(o, "budgets", m->budgets);
	return o;
}

int en_compile(const char *text, size_t len, const char *file, json_t **out,
	       struct en_error *err)
{
	struct en_ctx ctx = { .file = file, .cred_hosts = json_array() };
	struct merge m = { json_object(), json_array(), json_array(), json_object(),
			   json_object(), json_object(), 0, 0 };
	struct en_doc doc;
	int r;

	*out = NULL;
	r = en_lex(text, len, file, &doc, err);
	if (r < 0)
		goto out_ctx;
	for (size_t k = 0; k < doc.n; k++)
		if ((r = en_read_definition(&ctx, &doc.s[k])) < 0)
			goto out;
	r = 0;
	for (size_t k = 0; k < doc.n && !r; k++) {
		struct en_frag f;

		r = en_read_sentence(&ctx, &doc.s[k], &f, err);
		if (r < 0)
			break;
		r = merge(&m, file, &doc.s[k], &f, err);
		en_frag_free(&f);
	}
	if (!r)
		*out = assemble(&m);
out:
	en_doc_free(&doc);
out_ctx:
	ctx_free(&ctx);
	json_decref(m.lists);
	json_decref(m.rules);
	json_decref(m.creds);
	json_decref(m.approvals);
	json_decref(m.budgets);
	json_decref(m.meta);
	return r < 0 ? r : 0;
}

/* --- intents ----------------------------------------------------------------------- */

/* "for an hour", "for 20 minutes", "for this session": cut from the end of s. */
static int intent_ttl(struct en_sentence *s, unsigned *ttl)
{
	static const struct { const char *w; unsigned m; } u[] = {
		{ "second", 1 }, { "seconds", 1 }, { "minute", 60 }, { "minutes", 60 },
		{ "hour", 3600 }, { "hours", 3600 }, { "day", 86400 }, { "days", 86400 },
	};

	*ttl = 0;
	if (s->n >= 3 && !strcmp(s->t[s->n - 3].low, "for") &&
	    (!strcmp(s->t[s->n - 2].low, "this") || !strcmp(s->t[s->n - 2].low, "the")) &&
	    !strcmp(s->t[s->n - 1].low, "session")) {
		s->n -= 3;
		return 0;
	}
	if (s->n < 3 || strcmp(s->t[s->n - 3].low, "for"))
		return 0;
	for (size_t k = 0; k < sizeof(u) / sizeof(u[0]); k++) {
		const char *n = s->t[s->n - 2].low;
		unsigned long v;

		if (strcmp(s->t[s->n - 1].low, u[k].w))
			continue;
		v = !strcmp(n, "an") || !strcmp(n, "a") || !strcmp(n, "one") ? 1 : strtoul(n, NULL, 10);
		if (!v || v > 365ul * 86400 / u[k].m)
			return -EINVAL;
		*ttl = (unsigned)v * u[k].m;
		s->n -= 3;
		return 0;
	}
	return 0;
}

int en_compile_intent(const char *text, const char *file, json_t **rules, unsigned *ttl_s,
		      struct en_error *err)
{
	struct en_ctx ctx = { .file = file, .cred_hosts = json_array() };
	struct en_doc doc = {};
	struct en_frag f;
	struct en_p p;
	char *t;
	size_t n = strlen(text), save_n;
	int r;

	*rules = NULL;
	t = malloc(n + 2);
	if (!t)
		return -ENOMEM;
	memcpy(t, text, n);
	while (n && isspace((unsigned char)t[n - 1]))
		n--;
	if (!n || t[n - 1] != '.')
		t[n++] = '.';
	r = en_lex(t, n, file, &doc, err);
	free(t);
	if (r < 0)
		goto out_ctx;
	if (doc.n != 1) {
		sentence_err(err, file, doc.n ? &doc.s[1] : &(struct en_sentence){ .line = 1, .col = 1 },
			     "an intent is one sentence");
		r = -EINVAL;
		goto out;
	}
	save_n = doc.s[0].n;
	if (intent_ttl(&doc.s[0], ttl_s) < 0) {
		sentence_err(err, file, &doc.s[0], "a lifetime is from a second to a year");
		r = -EINVAL;
		goto out;
	}
	if ((r = en_frag_init(&f)) < 0)
		goto out;
	p = (struct en_p){ .s = &doc.s[0], .ctx = &ctx };
	(void)(en_words(&p, "let the agent") || en_words(&p, "allow the agent to"));
	if (!en_action(&p, &f, "allow", false) || !en_eof(&p) || p.sem) {
		struct en_sentence *s = &doc.s[0];
		size_t at = p.sem ? p.sem_at : p.far;

		sentence_err(err, file, s, p.sem ? p.sem_msg : "cannot read the intent from here");
		if (at < s->n) {
			err->line = s->t[at].line;
			err->col = s->t[at].col;
		}
		snprintf(err->suggestion, sizeof(err->suggestion), "%s",
			 "push the branch feature-x to origin");
		r = -EINVAL;
	} else {
		*rules = json_incref(f.rules);
	}
	en_frag_free(&f);
	doc.s[0].n = save_n;
out:
	en_doc_free(&doc);
out_ctx:
	ctx_free(&ctx);
	return r;
}

/* --- the loader's text --------------------------------------------------------------- */

static int src_line(const json_t *rule)
{
	const char *s = json_string_value(json_object_get(rule, "source")), *c;

	return s && (c = strrchr(s, ':')) ? atoi(c + 1) : 0;
}

int en_loader_text(const json_t *policy, char **text, int **lines, size_t *n_lines)
{
	char *buf = NULL, *part;
	size_t len = 0, nl = 1, cap = 16;
	FILE *f = open_memstream(&buf, &len);
	int *map = calloc(cap, sizeof(int));
	const char *k;
	json_t *v;
	bool first = true;

	if (!f || !map) {
		if (f)
			fclose(f);
		free(buf);
		free(map);
		return -ENOMEM;
	}
	fputs("{", f);
	json_object_foreach((json_t *)policy, k, v) {
		fprintf(f, "%s\n\"%s\": ", first ? "" : ",", k);
		nl++;
		first = false;
		if (strcmp(k, "rules")) {
			part = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
			fputs(part ? part : "null", f);
			free(part);
			continue;
		}
		fputs("[", f);
		for (size_t i = 0; i < json_array_size(v); i++) {
			part = json_dumps(json_array_get(v, i), JSON_COMPACT);
			fprintf(f, "%s\n%s", i ? "," : "", part ? part : "null");
			free(part);
			if (++nl >= cap) {
				int *m = reallocarray(map, cap * 2, sizeof(int));

				if (!m) {
					fclose(f);
					free(buf);
					free(map);
					return -ENOMEM;
				}
				memset(m + cap, 0, cap * sizeof(int));
				map = m;
				cap *= 2;
			}
			map[nl - 1] = src_line(json_array_get(v, i));
		}
		fputs("]", f);
	}
	fputs("}\n", f);
	fclose(f);
	*text = buf;
	*lines = map;
	*n_lines = nl < cap ? nl : cap;
	return 0;
}

void en_map_lines(char *msg, size_t size, const int *lines, size_t n_lines)
{
	char out[1024], *at;
	size_t o = 0;
	const char *c = msg;

	while ((at = strstr(c, "line ")) && o < sizeof(out)) {
		char *end;
		unsigned long n = strtoul(at + 5, &end, 10);

		o += (size_t)snprintf(out + o, sizeof(out) - o, "%.*s", (int)(at + 5 - c), c);
		if (end != at + 5 && n >= 1 && n <= n_lines && lines[n - 1] && o < sizeof(out))
			o += (size_t)snprintf(out + o, sizeof(out) - o, "%d", lines[n - 1]);
		else if (o < sizeof(out))
			o += (size_t)snprintf(out + o, sizeof(out) - o, "%.*s", (int)(end - at - 5), at + 5);
		c = end;
	}
	if (o < sizeof(out))
		snprintf(out + o, sizeof(out) - o, "%s", c);
	snprintf(msg, size, "%s", out);
}
