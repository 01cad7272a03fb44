/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The parse context (pctx.c): what every part of the policy loader (parse.c,
 * parse_rule.c, parse_cred.c, parse_warn.c) reads JSON with and reports
 * through.  A problem is reported at the value, or the member name, that a
 * JSON Pointer names, as FILE:LINE:COL (jsonpos.h), and the loader goes on:
 * it collects every error, and a policy with one is never returned.  Also
 * here: did-you-mean for unknown keys, ${NAME} expansion, and arrays whose
 * items may be "@LIST" references.
 *
 * The reporting functions never fail (a diagnostic that does not fit in
 * memory is dropped; the caller's error count still stops the load when it
 * is an error).  Functions returning char * return NULL after reporting.
 */
#ifndef CORDON_POLICY_PCTX_H
#define CORDON_POLICY_PCTX_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include "policy.h"

struct jpos_map;

struct pctx {
	const char *file;
	struct pol_diags *diags;
	struct jpos_map *pos;
	const struct pol_vars *vars;
	json_t *lists;
	struct policy *p;
	struct pol_canon_memo canon;    /* resolved directories, this load only */
};

/* A diagnostic at LINE:COL, for what has no JSON Pointer (the text itself). */
__attribute__((format(printf, 5, 6)))
void pctx_diags_addf(struct pol_diags *ds, enum pol_severity sev, int line, int col,
		     const char *fmt, ...);

/* At the value ptr points to, extra_col columns into it (a string's ${...}). */
__attribute__((format(printf, 5, 6)))
void pctx_diag(struct pctx *c, enum pol_severity sev, const char *ptr, int extra_col,
	       const char *fmt, ...);
/* An error at the value ptr points to. */
__attribute__((format(printf, 3, 4)))
void pctx_err(struct pctx *c, const char *ptr, const char *fmt, ...);
/* An error at a member's name rather than its value. */
__attribute__((format(printf, 3, 4)))
void pctx_err_key(struct pctx *c, const char *ptr, const char *fmt, ...);

/* The pointer of member key, or item i, of the value at ptr, into out. */
void pctx_child(char *out, size_t size, const char *ptr, const char *key);
void pctx_child_i(char *out, size_t size, const char *ptr, size_t i);
/* "an object", "a string"...: for "expected X, got Y". */
const char *pctx_type_name(const json_t *v);
/* The choice within a small edit distance of word, or NULL. */
const char *pctx_did_you_mean(const char *word, const char *const *choices);
/* Report members of obj not in `allowed` (NULL-terminated).  Returns the number found. */
int pctx_check_keys(struct pctx *c, json_t *obj, const char *ptr, const char *what,
		    const char *const *allowed);
/* A name of letters, digits and _-.: (at most 128): rule and list names. */
bool pctx_valid_ident(const char *s);

/* s with ${NAME} expanded (malloc'd); an unknown or unset name is an error at its column. */
char *pctx_expand(struct pctx *c, const char *s, const char *ptr);
/* A string item, variables expanded.  NULL after reporting. */
char *pctx_string_item(struct pctx *c, json_t *item, const char *ptr, const char *what);
/* Append s to the array (*arr, *n), taking it; on -ENOMEM s is freed. */
int pctx_push_str(char ***arr, size_t *n, char *s);

/*
 * Call fn for each item of the array at ptr, "@LIST" items spliced in from
 * the policy's lists, with the pointer of the item as written (in the list
 * when it came from one).  Returns the number of items, -1 when arr is not
 * an array (reported).
 */
typedef int (*item_fn)(struct pctx *c, json_t *item, const char *ptr, void *ctx);
int pctx_each_item(struct pctx *c, json_t *arr, const char *ptr, item_fn fn, void *ctx);

#endif
