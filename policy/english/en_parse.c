// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The parser's primitives and the reading of one sentence.
 *
 * Every sentence form (en_forms.c, en_forms2.c) is a small recursive-descent
 * reader that either consumes the whole sentence or fails.  The sentence is
 * offered to every form: none reading it is an error at the furthest token
 * any form reached (the first token it could not place), with what was
 * expected there and the nearest example sentence; two forms reading it to
 * different JSON is an error too (a sentence with two meanings is never
 * guessed at).  A form that reads the sentence but finds a meaning the
 * language refuses (an exception on a deny) reports that instead.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "en_int.h"

bool en_eof(const struct en_p *p)
{
	return p->i >= p->s->n;
}

const struct en_tok *en_peek(const struct en_p *p, size_t ahead)
{
	return p->i + ahead < p->s->n ? &p->s->t[p->i + ahead] : NULL;
}

void en_fail(struct en_p *p, const char *what)
{
	if (p->quiet)
		return;
	if (p->i > p->far || (p->i == p->far && !p->n_expect)) {
		p->far = p->i;
		p->n_expect = 0;
	} else if (p->i < p->far) {
		return;
	}
	for (int k = 0; k < p->n_expect; k++)
		if (!strcmp(p->expect[k], what))
			return;
	if (p->n_expect < 3)
		snprintf(p->expect[p->n_expect++], sizeof(p->expect[0]), "%s", what);
}

bool en_word(struct en_p *p, const char *w)
{
	const struct en_tok *t = en_peek(p, 0);
	char q[48];

	if (t && t->kind == EN_WORD && !strcmp(t->low, w)) {
		p->i++;
		return true;
	}
	snprintf(q, sizeof(q), "\"%s\"", w);
	en_fail(p, q);
	return false;
}

/* A space-separated run of words, all or nothing. */
bool en_words(struct en_p *p, const char *ws)
{
	size_t save = p->i;
	char buf[128], *tok, *sp = NULL;

	snprintf(buf, sizeof(buf), "%s", ws);
	for (tok = strtok_r(buf, " ", &sp); tok; tok = strtok_r(NULL, " ", &sp))
		if (!en_word(p, tok)) {
			p->i = save;
			return false;
		}
	return true;
}

bool en_kind(struct en_p *p, enum en_tok_kind k, const char *what, const struct en_tok **out)
{
	const struct en_tok *t = en_peek(p, 0);

	if (t && t->kind == k) {
		*out = t;
		p->i++;
		return true;
	}
	en_fail(p, what);
	return false;
}

void en_semantic(struct en_p *p, size_t at, const char *fmt, ...)
{
	va_list ap;

	if (p->sem)
		return;
	p->sem = true;
	p->sem_at = at;
	va_start(ap, fmt);
	vsnprintf(p->sem_msg, sizeof(p->sem_msg), fmt, ap);
	va_end(ap);
}

/*
 * Between the items of a list "A, B and C": true if another item follows
 * (*last: it is the last one, after "and"/"or").  A comma before "and" (the
 * serial comma) is allowed.
 */
bool en_list_sep(struct en_p *p, bool *last)
{
	const struct en_tok *t = en_peek(p, 0);

	*last = false;
	if (t && t->kind == EN_COMMA) {
		p->i++;
		t = en_peek(p, 0);
		if (t && t->kind == EN_WORD && (!strcmp(t->low, "and") || !strcmp(t->low, "or"))) {
			p->i++;
			*last = true;
		}
		return true;
	}
	if (t && t->kind == EN_WORD && (!strcmp(t->low, "and") || !strcmp(t->low, "or"))) {
		p->i++;
		*last = true;
		return true;
	}
	return false;
}

int en_frag_init(struct en_frag *f)
{
	f->rules = json_array();
	f->lists = json_object();
	f->creds = json_array();
	f->budgets = json_object();
	f->approvals = json_object();
	f->meta = json_object();
	if (!f->rules || !f->lists || !f->creds || !f->budgets || !f->approvals || !f->meta) {
		en_frag_free(f);
		return -ENOMEM;
	}
	return 0;
}

void en_frag_free(struct en_frag *f)
{
	json_decref(f->rules);
	json_decref(f->lists);
	json_decref(f->creds);
	json_decref(f->budgets);
	json_decref(f->approvals);
	json_decref(f->meta);
	memset(f, 0, sizeof(*f));
}

static bool frag_equal(const struct en_frag *a, const struct en_frag *b)
{
	return json_equal(a->rules, b->rules) && json_equal(a->lists, b->lists) &&
	       json_equal(a->creds, b->creds) && json_equal(a->budgets, b->budgets) &&
	       json_equal(a->approvals, b->approvals) && json_equal(a->meta, b->meta);
}

static void err_at(struct en_error *err, const char *file, const struct en_sentence *s, size_t at)
{
	memset(err, 0, sizeof(*err));
	snprintf(err->file, sizeof(err->file), "%s", file);
	if (at < s->n) {
		err->line = s->t[at].line;
		err->col = s->t[at].col;
	} else {
		/* Past the last token: the sentence stopped short, at its '.'. */
		const struct en_tok *l = &s->t[s->n - 1];

		err->line = l->line;
		err->col = l->col + (int)strlen(l->text) + (l->kind == EN_STR ? 2 : 0);
	}
}

static void unreadable(const struct en_ctx *ctx, const struct en_sentence *s,
		       const struct en_p *best, struct en_error *err)
{
	char exp[160] = "";
	size_t o = 0;

	err_at(err, ctx->file, s, best->far);
	for (int k = 0; k < best->n_expect && o < sizeof(exp); k++)
		o += (size_t)snprintf(exp + o, sizeof(exp) - o, "%s%s",
				      k ? (k == best->n_expect - 1 ? " or " : ", ") : "",
				      best->expect[k]);
	if (best->far < s->n)
		snprintf(err->message, sizeof(err->message),
			 "cannot read the sentence from \"%s\"%s%s%s", s->t[best->far].text,
			 *exp ? " (expected " : "", exp, *exp ? ")" : "");
	else
		snprintf(err->message, sizeof(err->message), "the sentence stops too early%s%s%s",
			 *exp ? " (expected " : "", exp, *exp ? ")" : "");
	snprintf(err->suggestion, sizeof(err->suggestion), "%s", en_nearest_example(s));
}

/* Merge the failure knowledge of one form's attempt into the best so far. */
void en_keep_furthest(struct en_p *best, const struct en_p *p)
{
	if (p->far > best->far || (p->far == best->far && !best->n_expect)) {
		best->far = p->far;
		best->n_expect = 0;
	}
	if (p->far != best->far)
		return;
	for (int k = 0; k < p->n_expect; k++) {
		bool dup = false;

		for (int j = 0; j < best->n_expect; j++)
			dup |= !strcmp(best->expect[j], p->expect[k]);
		if (!dup && best->n_expect < 3)
			snprintf(best->expect[best->n_expect++], sizeof(best->expect[0]), "%s",
				 p->expect[k]);
	}
}

int en_read_sentence(const struct en_ctx *ctx, const struct en_sentence *s,
		     struct en_frag *out, struct en_error *err)
{
	struct en_p best = { .s = s, .ctx = ctx };
	struct en_p sem = { .s = s };
	struct en_frag got = {}, f;
	int n_read = 0, r;

	for (size_t k = 0; k < en_n_forms; k++) {
		struct en_p p = { .s = s, .ctx = ctx };

		if ((r = en_frag_init(&f)) < 0)
			goto fail_nomem;
		bool read = en_forms[k](&p, &f);

		if (p.sem) {
			if (!sem.sem)
				sem = p;
			en_frag_free(&f);
			continue;
		}
		if (!read || !en_eof(&p)) {
			if (read && !en_eof(&p))
				en_fail(&p, "the end of the sentence");
			en_keep_furthest(&best, &p);
			en_frag_free(&f);
			continue;
		}
		if (n_read && !frag_equal(&got, &f)) {
			err_at(err, ctx->file, s, 0);
			snprintf(err->message, sizeof(err->message),
				 "the sentence can be read two ways; say it more plainly");
			snprintf(err->suggestion, sizeof(err->suggestion), "%s", en_nearest_example(s));
			en_frag_free(&f);
			en_frag_free(&got);
			return -EINVAL;
		}
		if (n_read++)
			en_frag_free(&f);
		else
			got = f;
	}
	if (n_read) {
		*out = got;
		return 0;
	}
	if (sem.sem) {
		err_at(err, ctx->file, s, sem.sem_at);
		snprintf(err->message, sizeof(err->message), "%s", sem.sem_msg);
		return -EINVAL;
	}
	unreadable(ctx, s, &best, err);
	return -EINVAL;
fail_nomem:
	en_frag_free(&got);
	memset(err, 0, sizeof(*err));
	snprintf(err->message, sizeof(err->message), "out of memory");
	return -ENOMEM;
}

/* --- the nearest example: token edit distance ------------------------------------- */

static size_t split_words(const char *text, char words[][32], size_t max)
{
	size_t n = 0, o = 0;

	for (const char *c = text;; c++) {
		bool sep = !*c || *c == ' ' || *c == ',' || *c == '.';

		if (sep && o) {
			words[n][o] = 0;
			if (++n == max)
				break;
			o = 0;
		}
		if (!*c)
			break;
		if (!sep && o < 31)
			words[n][o++] = (char)(*c >= 'A' && *c <= 'Z' ? *c + 32 : *c);
	}
	return n;
}

static size_t distance(char a[][32], size_t na, char b[][32], size_t nb)
{
	size_t row[65], prev;

	for (size_t j = 0; j <= nb; j++)
		row[j] = j;
	for (size_t i = 1; i <= na; i++) {
		prev = row[0];
		row[0] = i;
		for (size_t j = 1; j <= nb; j++) {
			size_t cur = row[j], best = prev + (strcmp(a[i - 1], b[j - 1]) != 0);

			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			prev = cur;
		}
	}
	return row[nb];
}

const char *en_nearest_example(const struct en_sentence *s)
{
	char wa[64][32], wb[64][32];
	const char *best = "";
	size_t bestd = (size_t)-1, na = split_words(s->text, wa, 64);

	for (size_t k = 0; en_examples[k]; k++) {
		size_t d = distance(wa, na, wb, split_words(en_examples[k], wb, 64));

		if (d < bestd) {
			bestd = d;
			best = en_examples[k];
		}
	}
	return best;
}
