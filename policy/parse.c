// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Policy loader: JSON text -> validated, indexed struct policy.
 *
 * jansson parses; policy/jsonpos.c gives every key and value a line and
 * column so that each semantic error reads FILE:LINE:COL like a compiler's.
 * The loader collects every error rather than stopping at the first, and
 * returns either a complete policy or none: a policy with an error is never
 * half-applied.
 *
 * Its parts, lowest first: pctx.c (reporting where, reading JSON, ${NAME}
 * and @LIST), parse_rule.c (a rule), parse_cred.c (a credential),
 * parse_warn.c (warnings about a valid policy), grant.c (what cordon adds
 * after the load, and pol_free).  Here: the root object, approvals,
 * budgets, and the load itself.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <sys/stat.h>
#include "english.h"
#include "index.h"
#include "jsonpos.h"
#include "parse_cred.h"
#include "parse_rule.h"
#include "parse_warn.h"
#include "pctx.h"
#include "policy.h"
#include "smap.h"
#include "util.h"

/* --- approvals, budgets --------------------------------------------------------- */

static bool get_duration(struct pctx *c, json_t *v, const char *ptr, uint64_t *out)
{
	if (json_is_integer(v) && json_integer_value(v) >= 0) {
		*out = (uint64_t)json_integer_value(v);
		return true;
	}
	if (json_is_string(v) && pol_parse_duration(json_string_value(v), out) == 0)
		return true;
	pctx_err(c, ptr, "bad duration (seconds, or a number with s, m, h or d)");
	return false;
}

static void parse_approvals(struct pctx *c, struct policy *p, json_t *o, const char *ptr)
{
	static const char *const keys[] = { "timeout", "on_timeout", NULL };
	json_t *t = json_object_get(o, "timeout"), *ot = json_object_get(o, "on_timeout");
	char cp[1024];
	uint64_t secs;

	pctx_check_keys(c, o, ptr, "approvals", keys);
	if (t) {
		pctx_child(cp, sizeof(cp), ptr, "timeout");
		if (get_duration(c, t, cp, &secs)) {
			if (secs == 0 || secs > 86400)
				pctx_err(c, cp, "approval timeout must be between 1 s and 1 day");
			else
				p->approval_timeout_s = (uint32_t)secs;
		}
	}
	if (ot) {
		pctx_child(cp, sizeof(cp), ptr, "on_timeout");
		if (!json_is_string(ot) || (strcmp(json_string_value(ot), "deny") &&
					    strcmp(json_string_value(ot), "allow")))
			pctx_err(c, cp, "on_timeout must be \"deny\" or \"allow\"");
		else
			p->approval_on_timeout = (uint32_t)pol_decision_parse(json_string_value(ot));
	}
}

/* A size budget: a positive integer of bytes, or a number with K, M, G or T. */
static void get_size(struct pctx *c, json_t *v, const char *ptr, const char *what, uint64_t *out)
{
	if (json_is_integer(v) && json_integer_value(v) > 0)
		*out = (uint64_t)json_integer_value(v);
	else if (!json_is_string(v) || pol_parse_size(json_string_value(v), out) < 0 || *out == 0)
		pctx_err(c, ptr, "bad %s size (bytes, or a number with K, M, G or T)", what);
}

/*
 * "audit_shipping": {"syslog": "/SOCKET", "journal": true | "/SOCKET"}.
 * Fail closed: a value that is not an absolute socket path (or true) is an
 * error at its position, never a session whose records silently stay home.
 */
static bool ship_path(struct pctx *c, json_t *v, const char *ptr, bool allow_true, char **out)
{
	const char *s = json_string_value(v);

	if (allow_true && json_is_true(v)) {
		*out = strdup("1");
		return true;
	}
	if (!s || s[0] != '/' || strlen(s) >= 108) {
		pctx_err(c, ptr, "must be an absolute path to a Unix datagram socket%s",
			 allow_true ? " (or true: the journal's own)" : "");
		return false;
	}
	*out = strdup(s);
	return true;
}

static void parse_shipping(struct pctx *c, struct policy *p, json_t *o, const char *ptr)
{
	static const char *const keys[] = { "syslog", "journal", NULL };
	char cp[1024];
	json_t *v;

	pctx_check_keys(c, o, ptr, "audit_shipping", keys);
	if ((v = json_object_get(o, "syslog"))) {
		pctx_child(cp, sizeof(cp), ptr, "syslog");
		(void)ship_path(c, v, cp, false, &p->ship_syslog);
	}
	if ((v = json_object_get(o, "journal")) && !json_is_false(v)) {
		pctx_child(cp, sizeof(cp), ptr, "journal");
		(void)ship_path(c, v, cp, true, &p->ship_journal);
	}
}

static void parse_budgets(struct pctx *c, struct policy *p, json_t *o, const char *ptr)
{
	static const char *const keys[] = { "wall_time", "steps", "memory", "pids", "cpu", "audit",
					    "egress_requests", "egress_bytes", "llm_tokens", NULL };
	json_t *v;
	char cp[1024];

	pctx_check_keys(c, o, ptr, "budgets", keys);
	if ((v = json_object_get(o, "egress_requests"))) {
		pctx_child(cp, sizeof(cp), ptr, "egress_requests");
		if (!json_is_integer(v) || json_integer_value(v) < 1)
			pctx_err(c, cp, "egress_requests must be a positive integer");
		else
			p->budgets.egress_requests = (uint64_t)json_integer_value(v);
	}
	if ((v = json_object_get(o, "egress_bytes"))) {
		pctx_child(cp, sizeof(cp), ptr, "egress_bytes");
		get_size(c, v, cp, "egress_bytes", &p->budgets.egress_bytes);
	}
	if ((v = json_object_get(o, "audit"))) {
		pctx_child(cp, sizeof(cp), ptr, "audit");
		get_size(c, v, cp, "audit", &p->budgets.audit_bytes);
	}
	if ((v = json_object_get(o, "llm_tokens"))) {
		pctx_child(cp, sizeof(cp), ptr, "llm_tokens");
		if (!json_is_integer(v) || json_integer_value(v) < 1)
			pctx_err(c, cp, "llm_tokens must be a positive integer");
		else
			p->budgets.llm_tokens = (uint64_t)json_integer_value(v);
	}
	if ((v = json_object_get(o, "wall_time"))) {
		pctx_child(cp, sizeof(cp), ptr, "wall_time");
		(void)get_duration(c, v, cp, &p->budgets.wall_time_s);
	}
	if ((v = json_object_get(o, "steps"))) {
		pctx_child(cp, sizeof(cp), ptr, "steps");
		if (!json_is_integer(v) || json_integer_value(v) < 1)
			pctx_err(c, cp, "steps must be a positive integer");
		else
			p->budgets.steps = (uint64_t)json_integer_value(v);
	}
	if ((v = json_object_get(o, "memory"))) {
		pctx_child(cp, sizeof(cp), ptr, "memory");
		get_size(c, v, cp, "memory", &p->budgets.memory_bytes);
	}
	if ((v = json_object_get(o, "pids"))) {
		pctx_child(cp, sizeof(cp), ptr, "pids");
		if (!json_is_integer(v) || json_integer_value(v) < 1)
			pctx_err(c, cp, "pids must be a positive integer");
		else
			p->budgets.pids = (uint64_t)json_integer_value(v);
	}
	if ((v = json_object_get(o, "cpu"))) {
		pctx_child(cp, sizeof(cp), ptr, "cpu");
		if (!json_is_number(v) || json_number_value(v) <= 0 || json_number_value(v) > 4096)
			pctx_err(c, cp, "cpu must be a positive number of cores");
		else
			p->budgets.cpu = json_number_value(v);
	}
}

/* --- top level ---------------------------------------------------------------------- */

static void parse_root(struct pctx *c, json_t *root, struct policy *p)
{
	static const char *const keys[] = { "cordon_policy", "name", "description", "lists", "rules",
					    "credentials", "approvals", "budgets", "audit_shipping", NULL };
	json_t *v, *rules, *creds;
	char ptr[1024];

	if (!json_is_object(root)) {
		pctx_err(c, "", "a policy is a JSON object, got %s", pctx_type_name(root));
		return;
	}
	pctx_check_keys(c, root, "", "the policy", keys);
	v = json_object_get(root, "cordon_policy");
	if (!v)
		pctx_err(c, "", "missing \"cordon_policy\": 1 (the language version)");
	else if (!json_is_integer(v) || json_integer_value(v) != 1)
		pctx_err(c, "/cordon_policy", "unsupported policy version (this cordon reads version 1)");
	if ((v = json_object_get(root, "name"))) {
		if (!json_is_string(v))
			pctx_err(c, "/name", "\"name\" must be a string");
		else
			p->name = strdup(json_string_value(v));
	}
	if ((v = json_object_get(root, "description"))) {
		if (!json_is_string(v))
			pctx_err(c, "/description", "\"description\" must be a string");
		else
			p->description = strdup(json_string_value(v));
	}
	c->lists = json_object_get(root, "lists");
	if (c->lists) {
		const char *k;
		json_t *l;

		if (!json_is_object(c->lists)) {
			pctx_err(c, "/lists", "\"lists\" must be an object of arrays");
			c->lists = NULL;
		} else {
			json_object_foreach(c->lists, k, l) {
				pctx_child(ptr, sizeof(ptr), "/lists", k);
				if (!json_is_array(l))
					pctx_err(c, ptr, "list \"%s\" must be an array, got %s", k,
						 pctx_type_name(l));
				else if (!pctx_valid_ident(k))
					pctx_err_key(c, ptr, "bad list name \"%s\"", k);
			}
		}
	}
	rules = json_object_get(root, "rules");
	if (!rules) {
		pctx_err(c, "", "missing \"rules\"");
	} else if (!json_is_array(rules)) {
		pctx_err(c, "/rules", "\"rules\" must be an array, got %s", pctx_type_name(rules));
	} else {
		struct smap names = { 0 };      /* rule name -> the rules so named */
		size_t i;
		json_t *r;

		p->rules = calloc(json_array_size(rules) + 1, sizeof(*p->rules));
		if (!p->rules)
			return;
		json_array_foreach(rules, i, r) {
			struct pol_rule *ru = &p->rules[p->n_rules];
			const struct slot *first;

			ru->id = (uint32_t)p->n_rules;
			p->n_rules++;
			pctx_child_i(ptr, sizeof(ptr), "/rules", i);
			parse_rule(c, ru, r, ptr);
			if (!ru->name)
				continue;
			first = smap_get(&names, ru->name, strlen(ru->name));
			if (first) {
				char np[1024];

				pctx_child(np, sizeof(np), ptr, "name");
				pctx_err(c, np, "duplicate rule name \"%s\" (first at line %d)", ru->name,
					 p->rules[first->ids[0]].pos.line);
			} else if (smap_add(&names, ru->name, strlen(ru->name), ru->id) < 0) {
				pctx_err(c, ptr, "out of memory");
			}
		}
		smap_free(&names);
	}
	creds = json_object_get(root, "credentials");
	if (creds) {
		size_t i;
		json_t *cr;

		if (!json_is_array(creds)) {
			pctx_err(c, "/credentials", "\"credentials\" must be an array");
		} else {
			p->creds = calloc(json_array_size(creds) + 1, sizeof(*p->creds));
			if (!p->creds)
				return;
			json_array_foreach(creds, i, cr) {
				pctx_child_i(ptr, sizeof(ptr), "/credentials", i);
				parse_credential(c, &p->creds[p->n_creds++], cr, ptr);
			}
			struct smap envs = { 0 };       /* variable -> the credentials using it */

			for (size_t a = 0; a < p->n_creds; a++) {
				const char *env = p->creds[a].env;

				if (!env)
					continue;
				if (smap_get(&envs, env, strlen(env))) {
					pctx_child_i(ptr, sizeof(ptr), "/credentials", a);
					pctx_err(c, ptr, "two credentials use variable %s", env);
				} else if (smap_add(&envs, env, strlen(env), (uint32_t)a) < 0) {
					pctx_err(c, "/credentials", "out of memory");
				}
			}
			smap_free(&envs);
		}
	}
	p->approval_timeout_s = 120;
	p->approval_on_timeout = CORDON_DENY;
	if ((v = json_object_get(root, "approvals"))) {
		if (!json_is_object(v))
			pctx_err(c, "/approvals", "\"approvals\" must be an object");
		else
			parse_approvals(c, p, v, "/approvals");
	}
	if ((v = json_object_get(root, "audit_shipping"))) {
		if (!json_is_object(v))
			pctx_err(c, "/audit_shipping", "\"audit_shipping\" must be an object");
		else
			parse_shipping(c, p, v, "/audit_shipping");
	}
	if ((v = json_object_get(root, "budgets"))) {
		if (!json_is_object(v))
			pctx_err(c, "/budgets", "\"budgets\" must be an object");
		else
			parse_budgets(c, p, v, "/budgets");
	}
}

static int load(const char *text, size_t len, const char *file, const char *real_path,
		const struct pol_vars *vars, bool warnings, struct policy **out,
		struct pol_diags *diags);

/*
 * A constitution (policy/english/): compiled to JSON text with one rule a
 * line, loaded as any policy, and every position the loader reports moved
 * back to the sentence the rule came from.
 */
static int load_constitution(const char *text, size_t len, const char *file,
			     const char *real_path, const struct pol_vars *vars, bool warnings,
			     struct policy **out, struct pol_diags *diags)
{
	struct en_error e;
	json_t *j;
	char *jt;
	int *lines, r;
	size_t nl;

	r = en_compile(text, len, file, &j, &e);
	if (r == -EINVAL) {
		pctx_diags_addf(diags, POL_ERROR, e.line, e.col, "%s%s%s%s", e.message,
				e.suggestion[0] ? " (did you mean: \"" : "", e.suggestion,
				e.suggestion[0] ? "\")" : "");
		return r;
	}
	if (r < 0)
		return r;
	r = en_loader_text(j, &jt, &lines, &nl);
	json_decref(j);
	if (r < 0)
		return r;
	r = load(jt, strlen(jt), file, real_path, vars, warnings, out, diags);
	for (size_t i = 0; i < diags->n; i++) {
		struct pol_pos *ps = &diags->d[i].pos;

		if (ps->line >= 1 && (size_t)ps->line <= nl && lines[ps->line - 1])
			*ps = (struct pol_pos){ lines[ps->line - 1], 1 };
		en_map_lines(diags->d[i].msg, sizeof(diags->d[i].msg), lines, nl);
	}
	for (size_t i = 0; *out && i < (*out)->n_rules; i++) {
		struct pol_pos *ps = &(*out)->rules[i].pos;

		if (ps->line >= 1 && (size_t)ps->line <= nl && lines[ps->line - 1])
			*ps = (struct pol_pos){ lines[ps->line - 1], 1 };
	}
	free(jt);
	free(lines);
	return r;
}

/* The loader behind both pol_load_text and pol_load. */
static int load(const char *text, size_t len, const char *file, const char *real_path,
		const struct pol_vars *vars, bool warnings, struct policy **out,
		struct pol_diags *diags)
{
	struct pctx c = { .file = file, .diags = diags, .vars = vars };
	struct policy *p;
	json_error_t je;
	json_t *root;
	int r;

	*out = NULL;
	if (en_is_constitution(text, len))
		return load_constitution(text, len, file, real_path, vars, warnings, out, diags);
	/*
	 * jansson skips a NUL byte after a number or literal; a policy is text,
	 * so a NUL anywhere is an error at its position.
	 */
	{
		const char *nul = memchr(text, 0, len);

		if (nul) {
			int line = 1, col = 1;

			for (const char *q = text; q < nul; q++) {
				if (*q == '\n')
					line++, col = 1;
				else if (((unsigned char)*q & 0xc0) != 0x80)
					col++;
			}
			pctx_diags_addf(diags, POL_ERROR, line, col, "NUL byte in policy text");
			return -EINVAL;
		}
	}
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		pctx_diags_addf(diags, POL_ERROR, je.line > 0 ? je.line : 1, je.column > 0 ? je.column : 1,
				"invalid JSON: %s", je.text);
		return -EINVAL;
	}
	r = jpos_scan(text, len, &c.pos);
	if (r < 0) {
		json_decref(root);
		if (r == -ENOMEM)
			return r;
		pctx_diags_addf(diags, POL_ERROR, 1, 1, r == -E2BIG ? "nested deeper than %d levels" :
				"invalid JSON (rejected by the position scanner)", JPOS_MAX_DEPTH);
		return -EINVAL;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		json_decref(root);
		jpos_free(c.pos);
		return -ENOMEM;
	}
	c.p = p;
	for (size_t i = 0; vars && i < vars->n; i++)
		(void)pol_vars_set(&p->vars, vars->v[i].name, vars->v[i].value);
	p->file = strdup(file);
	parse_root(&c, root, p);
	pol_canon_memo_free(&c.canon);
	json_decref(root);
	if (diags->n_errors) {
		r = -EINVAL;
		goto fail;
	}
	if (real_path && (r = pol_protect_path(p, real_path)) < 0)
		goto fail;
	r = pol_index_build(p);
	if (r < 0)
		goto fail;
	/* After the index: the invariant warnings ask pol_eval. */
	if (warnings) {
		parse_warn_cannot(&c, p);
		parse_warn_shadowed(&c, p);
		parse_warn_uncredentialed(&c, p);
	}
	jpos_free(c.pos);
	*out = p;
	return 0;
fail:
	jpos_free(c.pos);
	pol_free(p);
	return r;
}

int pol_load_text(const char *text, size_t len, const char *file,
		  const struct pol_vars *vars, struct policy **out, struct pol_diags *diags)
{
	return load(text, len, file, NULL, vars, !diags->no_warnings, out, diags);
}

int pol_load(const char *file_or_profile, const struct pol_vars *vars,
	     struct policy **out, struct pol_diags *diags)
{
	_cleanup_free_ char *text = NULL;
	const char *ptext;
	size_t plen;
	int r;

	r = read_file(file_or_profile, &text, 16 << 20);
	if (r >= 0) {
		char abs[PATH_MAX];

		if (r >= 16 << 20)
			return -EFBIG;
		/*
		 * The file is protected by its absolute name (a relative one is
		 * the cwd's).  A pipe (`<(...)`, /dev/stdin) has no name to
		 * protect: realpath fails on "pipe:[N]", and that is not an
		 * error (the text was read; nothing on disk can be rewritten).
		 */
		if (!realpath(file_or_profile, abs)) {
			struct stat st;

			if (stat(file_or_profile, &st) == 0 && !S_ISREG(st.st_mode))
				return load(text, (size_t)r, file_or_profile, NULL, vars,
					    !diags->no_warnings, out, diags);
			return -errno;
		}
		return load(text, (size_t)r, file_or_profile, abs, vars,
			    !diags->no_warnings, out, diags);
	}
	if (r != -ENOENT || strchr(file_or_profile, '/'))
		return r;
	ptext = pol_profile_text(file_or_profile, &plen);
	if (!ptext)
		return -ENOENT;
	return load(ptext, plen, file_or_profile, NULL, vars, !diags->no_warnings, out, diags);
}
