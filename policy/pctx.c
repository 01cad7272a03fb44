// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The parse context: diagnostics at FILE:LINE:COL and the helpers every part
 * of the policy loader reads JSON with (pctx.h says what each does).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdarg.h>
#include "jsonpos.h"
#include "pctx.h"
#include "policy.h"
#include "util.h"

/* --- diagnostics -------------------------------------------------------------- */

static void diags_add(struct pol_diags *ds, enum pol_severity sev, int line, int col,
		      const char *fmt, va_list ap)
{
	struct pol_diag *d;

	if (ds->n == ds->cap) {
		size_t ncap = ds->cap ? ds->cap * 2 : 16;
		struct pol_diag *n = realloc(ds->d, ncap * sizeof(*n));
		if (!n)
			return;
		ds->d = n;
		ds->cap = ncap;
	}
	d = &ds->d[ds->n++];
	d->severity = sev;
	d->pos.line = line;
	d->pos.col = col;
	vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
	if (sev == POL_ERROR)
		ds->n_errors++;
}

void pctx_diags_addf(struct pol_diags *ds, enum pol_severity sev, int line, int col,
		     const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diags_add(ds, sev, line, col, fmt, ap);
	va_end(ap);
}

void pol_diags_free(struct pol_diags *ds)
{
	free(ds->d);
	memset(ds, 0, sizeof(*ds));
}

void pol_diags_print(const struct pol_diags *ds, const char *file, FILE *f)
{
	for (size_t i = 0; i < ds->n; i++)
		fprintf(f, "%s:%d:%d: %s: %s\n", file, ds->d[i].pos.line, ds->d[i].pos.col,
			ds->d[i].severity == POL_ERROR ? "error" : "warning", ds->d[i].msg);
}

static bool var_known(const struct pol_vars *vars, const char *name)
{
	static const char *const builtin[] = { "WORKSPACE", "HOME", "USER", "UID", "TMPDIR", NULL };

	if (pol_vars_get(vars, name))
		return true;
	for (int i = 0; builtin[i]; i++)
		if (!strcmp(builtin[i], name))
			return true;
	return false;
}

/* --- parse context -------------------------------------------------------------- */


/* Report at the value (or, with key, the member name) that ptr points to. */
static void vreport(struct pctx *c, enum pol_severity sev, const char *ptr, bool key,
		    int extra_col, const char *fmt, va_list ap)
{
	int line = 1, col = 1;

	if (c->pos && jpos_get(c->pos, ptr, key, &line, &col) < 0)
		line = 1, col = 1;
	diags_add(c->diags, sev, line, col + extra_col, fmt, ap);
}

#define REPORT(c, sev, ptr, key, extra, fmt) do { \
	va_list ap; \
	va_start(ap, fmt); \
	vreport(c, sev, ptr, key, extra, fmt, ap); \
	va_end(ap); \
} while (0)

void pctx_diag(struct pctx *c, enum pol_severity sev, const char *ptr, int extra_col,
	       const char *fmt, ...)
{
	REPORT(c, sev, ptr, false, extra_col, fmt);
}

void pctx_err(struct pctx *c, const char *ptr, const char *fmt, ...)
{
	REPORT(c, POL_ERROR, ptr, false, 0, fmt);
}

/* Error at a member's name rather than its value. */
void pctx_err_key(struct pctx *c, const char *ptr, const char *fmt, ...)
{
	REPORT(c, POL_ERROR, ptr, true, 0, fmt);
}

void pctx_child(char *out, size_t size, const char *ptr, const char *key)
{
	snprintf(out, size, "%s", ptr);
	(void)jpos_push(out, size, key);
}

void pctx_child_i(char *out, size_t size, const char *ptr, size_t i)
{
	snprintf(out, size, "%s", ptr);
	(void)jpos_push_index(out, size, i);
}

const char *pctx_type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	case JSON_NULL:
		return "null";
	}
	return "a value";
}

static size_t lev(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), d[64];

	if (la >= 63 || lb >= 63)
		return 99;
	for (size_t j = 0; j <= lb; j++)
		d[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t prev = d[0];

		d[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cur = d[j];
			size_t sub = prev + (a[i - 1] != b[j - 1]);
			size_t m = d[j] + 1 < d[j - 1] + 1 ? d[j] + 1 : d[j - 1] + 1;

			d[j] = m < sub ? m : sub;
			prev = cur;
		}
	}
	return d[lb];
}

const char *pctx_did_you_mean(const char *word, const char *const *choices)
{
	const char *best = NULL;
	size_t bd = 99;

	for (int i = 0; choices[i]; i++) {
		size_t d = lev(word, choices[i]);
		if (d < bd) {
			bd = d;
			best = choices[i];
		}
	}
	return bd <= 2 || (best && bd <= strlen(best) / 3) ? best : NULL;
}

/* Report members of obj not in `allowed`.  Returns the number found. */
int pctx_check_keys(struct pctx *c, json_t *obj, const char *ptr, const char *what,
		    const char *const *allowed)
{
	const char *k;
	json_t *v;
	int bad = 0;

	json_object_foreach(obj, k, v) {
		bool ok = false;
		char cp[1024];

		for (int i = 0; allowed[i] && !ok; i++)
			ok = !strcmp(k, allowed[i]);
		if (ok)
			continue;
		pctx_child(cp, sizeof(cp), ptr, k);
		{
			const char *m = pctx_did_you_mean(k, allowed);
			if (m)
				pctx_err_key(c, cp, "unknown key \"%s\" in %s (did you mean \"%s\"?)",
					     k, what, m);
			else
				pctx_err_key(c, cp, "unknown key \"%s\" in %s", k, what);
		}
		bad++;
	}
	return bad;
}

/*
 * Expand ${NAME} in s.  Unknown names are errors at the column of the "${"
 * (exact when the string holds no JSON escapes before it).
 */
char *pctx_expand(struct pctx *c, const char *s, const char *ptr)
{
	size_t cap = strlen(s) + 256, o = 0;
	char *out = malloc(cap);

	if (!out)
		return NULL;
	for (const char *p = s; *p; ) {
		const char *val = NULL, *close;
		char name[64];
		size_t n;

		if (p[0] != '$' || p[1] != '{') {
			if (o + 2 > cap) {
				char *nb = realloc(out, cap *= 2);
				if (!nb) {
					free(out);
					return NULL;
				}
				out = nb;
			}
			out[o++] = *p++;
			continue;
		}
		close = strchr(p + 2, '}');
		n = close ? (size_t)(close - p - 2) : 0;
		if (!close || n == 0 || n >= sizeof(name)) {
			pctx_diag(c, POL_ERROR, ptr, (int)(p - s) + 1, "unterminated or empty ${...}");
			free(out);
			return NULL;
		}
		memcpy(name, p + 2, n);
		name[n] = 0;
		if (!var_known(c->vars, name)) {
			pctx_diag(c, POL_ERROR, ptr, (int)(p - s) + 1, "unknown variable ${%s}", name);
			free(out);
			return NULL;
		}
		val = pol_vars_get(c->vars, name);
		if (!val) {
			pctx_diag(c, POL_ERROR, ptr, (int)(p - s) + 1,
				  "variable ${%s} has no value (give it with --var %s=VALUE)", name, name);
			free(out);
			return NULL;
		}
		if (o + strlen(val) + 1 > cap) {
			char *nb;

			cap = o + strlen(val) + 256;
			nb = realloc(out, cap);
			if (!nb) {
				free(out);
				return NULL;
			}
			out = nb;
		}
		memcpy(out + o, val, strlen(val));
		o += strlen(val);
		p = close + 1;
	}
	out[o] = 0;
	return out;
}

/*
 * Iterate an array whose items may be "@LIST" references: call fn for each
 * resulting item with the pointer of the item as written (in the list when
 * it came from one).  Returns the number of items.
 */

int pctx_each_item(struct pctx *c, json_t *arr, const char *ptr, item_fn fn, void *ctx)
{
	size_t i, j;
	json_t *it, *e;
	int count = 0;
	char ip[1024], lp[1024];

	if (!json_is_array(arr)) {
		pctx_err(c, ptr, "expected an array, got %s", pctx_type_name(arr));
		return -1;
	}
	json_array_foreach(arr, i, it) {
		pctx_child_i(ip, sizeof(ip), ptr, i);
		if (json_is_string(it) && json_string_value(it)[0] == '@') {
			const char *name = json_string_value(it) + 1;
			json_t *list = c->lists ? json_object_get(c->lists, name) : NULL;

			if (!list || !json_is_array(list)) {
				pctx_err(c, ip, "unknown list \"@%s\"", name);
				continue;
			}
			json_array_foreach(list, j, e) {
				snprintf(lp, sizeof(lp), "/lists");
				(void)jpos_push(lp, sizeof(lp), name);
				(void)jpos_push_index(lp, sizeof(lp), j);
				if (json_is_string(e) && json_string_value(e)[0] == '@') {
					pctx_err(c, lp, "lists cannot refer to other lists");
					continue;
				}
				fn(c, e, lp, ctx);
				count++;
			}
			continue;
		}
		fn(c, it, ip, ctx);
		count++;
	}
	return count;
}

int pctx_push_str(char ***arr, size_t *n, char *s)
{
	char **na = realloc(*arr, (*n + 1) * sizeof(char *));

	if (!na) {
		free(s);
		return -ENOMEM;
	}
	*arr = na;
	(*arr)[(*n)++] = s;
	return 0;
}

/* A string item, variables expanded.  NULL after reporting. */
char *pctx_string_item(struct pctx *c, json_t *item, const char *ptr, const char *what)
{
	if (!json_is_string(item)) {
		pctx_err(c, ptr, "%s must be a string, got %s", what, pctx_type_name(item));
		return NULL;
	}
	return pctx_expand(c, json_string_value(item), ptr);
}

bool pctx_valid_ident(const char *s)
{
	if (!*s || strlen(s) > 128)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("_-.:", *s))
			return false;
	return true;
}

