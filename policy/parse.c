// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Policy loader: JSON text -> validated, indexed struct policy.
 *
 * jansson parses; policy/jsonpos.c gives every key and value a line and
 * column so that each semantic error reads FILE:LINE:COL like a compiler's.
 * The loader collects every error rather than stopping at the first, and
 * returns either a complete policy or none: a policy with an error is never
 * half-applied.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <strings.h>
#include "index.h"
#include "jsonpos.h"
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

__attribute__((format(printf, 5, 6)))
static void diags_addf(struct pol_diags *ds, enum pol_severity sev, int line, int col,
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

struct pctx {
	const char *file;
	struct pol_diags *diags;
	struct jpos_map *pos;
	const struct pol_vars *vars;
	json_t *lists;
	struct policy *p;
	struct pol_canon_memo canon;    /* resolved directories, this load only */
};

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

__attribute__((format(printf, 5, 6)))
static void diag(struct pctx *c, enum pol_severity sev, const char *ptr, int extra_col,
		 const char *fmt, ...)
{
	REPORT(c, sev, ptr, false, extra_col, fmt);
}

__attribute__((format(printf, 3, 4)))
static void err(struct pctx *c, const char *ptr, const char *fmt, ...)
{
	REPORT(c, POL_ERROR, ptr, false, 0, fmt);
}

/* Error at a member's name rather than its value. */
__attribute__((format(printf, 3, 4)))
static void err_key(struct pctx *c, const char *ptr, const char *fmt, ...)
{
	REPORT(c, POL_ERROR, ptr, true, 0, fmt);
}

static void child(char *out, size_t size, const char *ptr, const char *key)
{
	snprintf(out, size, "%s", ptr);
	(void)jpos_push(out, size, key);
}

static void child_i(char *out, size_t size, const char *ptr, size_t i)
{
	snprintf(out, size, "%s", ptr);
	(void)jpos_push_index(out, size, i);
}

static const char *type_name(const json_t *v)
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

static const char *did_you_mean(const char *word, const char *const *choices)
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
static int check_keys(struct pctx *c, json_t *obj, const char *ptr, const char *what,
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
		child(cp, sizeof(cp), ptr, k);
		{
			const char *m = did_you_mean(k, allowed);
			if (m)
				err_key(c, cp, "unknown key \"%s\" in %s (did you mean \"%s\"?)", k, what, m);
			else
				err_key(c, cp, "unknown key \"%s\" in %s", k, what);
		}
		bad++;
	}
	return bad;
}

/*
 * Expand ${NAME} in s.  Unknown names are errors at the column of the "${"
 * (exact when the string holds no JSON escapes before it).
 */
static char *expand(struct pctx *c, const char *s, const char *ptr)
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
			diag(c, POL_ERROR, ptr, (int)(p - s) + 1, "unterminated or empty ${...}");
			free(out);
			return NULL;
		}
		memcpy(name, p + 2, n);
		name[n] = 0;
		if (!var_known(c->vars, name)) {
			diag(c, POL_ERROR, ptr, (int)(p - s) + 1, "unknown variable ${%s}", name);
			free(out);
			return NULL;
		}
		val = pol_vars_get(c->vars, name);
		if (!val) {
			diag(c, POL_ERROR, ptr, (int)(p - s) + 1,
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
typedef int (*item_fn)(struct pctx *c, json_t *item, const char *ptr, void *ctx);

static int each_item(struct pctx *c, json_t *arr, const char *ptr, item_fn fn, void *ctx)
{
	size_t i, j;
	json_t *it, *e;
	int count = 0;
	char ip[1024], lp[1024];

	if (!json_is_array(arr)) {
		err(c, ptr, "expected an array, got %s", type_name(arr));
		return -1;
	}
	json_array_foreach(arr, i, it) {
		child_i(ip, sizeof(ip), ptr, i);
		if (json_is_string(it) && json_string_value(it)[0] == '@') {
			const char *name = json_string_value(it) + 1;
			json_t *list = c->lists ? json_object_get(c->lists, name) : NULL;

			if (!list || !json_is_array(list)) {
				err(c, ip, "unknown list \"@%s\"", name);
				continue;
			}
			json_array_foreach(list, j, e) {
				snprintf(lp, sizeof(lp), "/lists");
				(void)jpos_push(lp, sizeof(lp), name);
				(void)jpos_push_index(lp, sizeof(lp), j);
				if (json_is_string(e) && json_string_value(e)[0] == '@') {
					err(c, lp, "lists cannot refer to other lists");
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

static int push_str(char ***arr, size_t *n, char *s)
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
static char *string_item(struct pctx *c, json_t *item, const char *ptr, const char *what)
{
	if (!json_is_string(item)) {
		err(c, ptr, "%s must be a string, got %s", what, type_name(item));
		return NULL;
	}
	return expand(c, json_string_value(item), ptr);
}

/* --- fs ------------------------------------------------------------------------ */

struct paths_ctx {
	char ***out;
	size_t *n;
};

static int fs_path_item(struct pctx *c, json_t *item, const char *ptr, void *ctx)
{
	struct paths_ctx *pc = ctx;
	char canon[PATH_MAX];
	char *s = string_item(c, item, ptr, "a path");
	int r;

	if (!s)
		return -1;
	if (s[0] != '/') {
		err(c, ptr, "path \"%s\" is relative: paths must be absolute (use ${WORKSPACE}/...)", s);
		free(s);
		return -1;
	}
	/*
	 * Rule roots are canonical like requests: symlinks in the rule resolve
	 * now, to the object the kernel would reach.  Glob patterns are only
	 * normalised: they are matched component by component.
	 */
	if (strpbrk(s, "*?["))
		r = pol_normalize_path(s, canon, sizeof(canon));
	else
		r = pol_canon_path_memo(&c->canon, s, canon, sizeof(canon));
	free(s);
	if (r < 0) {
		err(c, ptr, "cannot canonicalise path: %s", strerror(-r));
		return -1;
	}
	s = strdup(canon);
	return s ? push_str(pc->out, pc->n, s) : -ENOMEM;
}

static int right_item(struct pctx *c, json_t *item, const char *ptr, void *ctx)
{
	static const char *const names[] = { "read", "write", "create", "delete", "exec", "chmod",
					     "all", NULL };
	uint32_t *rights = ctx, bit;

	if (!json_is_string(item)) {
		err(c, ptr, "a right must be a string, got %s", type_name(item));
		return -1;
	}
	if (pol_right_parse(json_string_value(item), &bit) < 0) {
		const char *m = did_you_mean(json_string_value(item), names);
		if (m)
			err(c, ptr, "unknown right \"%s\" (did you mean \"%s\"?)",
			    json_string_value(item), m);
		else
			err(c, ptr, "unknown right \"%s\" (read, write, create, delete, exec, chmod, all)",
			    json_string_value(item));
		return -1;
	}
	*rights |= bit;
	return 0;
}

static void parse_fs(struct pctx *c, struct pol_rule *r, json_t *o, const char *ptr)
{
	static const char *const keys[] = { "paths", "rights", NULL };
	json_t *paths = json_object_get(o, "paths"), *rights = json_object_get(o, "rights");
	struct paths_ctx pc = { &r->fs.paths, &r->fs.n_paths };
	char cp[1024];

	check_keys(c, o, ptr, "an fs subject", keys);
	if (!paths)
		err(c, ptr, "fs subject needs \"paths\"");
	else if (each_item(c, paths, (child(cp, sizeof(cp), ptr, "paths"), cp), fs_path_item, &pc) == 0)
		err(c, cp, "\"paths\" is empty");
	if (!rights)
		err(c, ptr, "fs subject needs \"rights\"");
	else if (each_item(c, rights, (child(cp, sizeof(cp), ptr, "rights"), cp), right_item,
			   &r->fs.rights) == 0)
		err(c, cp, "\"rights\" is empty");
}

/* --- net ----------------------------------------------------------------------- */

static int host_item(struct pctx *c, json_t *item, const char *ptr, void *ctx)
{
	struct pol_rule *r = ctx;
	struct pol_host h, *nh;
	char *s = string_item(c, item, ptr, "a host");

	if (!s)
		return -1;
	if (pol_host_parse(s, &h) < 0) {
		err(c, ptr, strchr(s, '/') ? "bad CIDR \"%s\"" :
		    "bad host \"%s\" (a DNS name, *.name, an IP address or a CIDR)", s);
		free(s);
		return -1;
	}
	free(s);
	nh = realloc(r->net.hosts, (r->net.n_hosts + 1) * sizeof(*nh));
	if (!nh) {
		free(h.name);
		return -ENOMEM;
	}
	r->net.hosts = nh;
	r->net.hosts[r->net.n_hosts++] = h;
	return 0;
}

static int port_item(struct pctx *c, json_t *item, const char *ptr, void *ctx)
{
	struct pol_rule *r = ctx;
	struct pol_portrange pr, *np;

	if (json_is_integer(item)) {
		json_int_t v = json_integer_value(item);
		if (v < 1 || v > 65535) {
			err(c, ptr, "port %lld out of range (1-65535)", (long long)v);
			return -1;
		}
		pr.lo = pr.hi = (uint16_t)v;
	} else if (json_is_string(item)) {
		unsigned lo, hi;
		char tail;

		if (sscanf(json_string_value(item), "%u-%u%c", &lo, &hi, &tail) != 2 ||
		    lo < 1 || hi > 65535 || lo > hi) {
			err(c, ptr, "bad port range \"%s\" (LOW-HIGH within 1-65535)",
			    json_string_value(item));
			return -1;
		}
		pr.lo = (uint16_t)lo;
		pr.hi = (uint16_t)hi;
	} else {
		err(c, ptr, "a port must be a number or a \"LOW-HIGH\" string, got %s", type_name(item));
		return -1;
	}
	np = realloc(r->net.ports, (r->net.n_ports + 1) * sizeof(*np));
	if (!np)
		return -ENOMEM;
	r->net.ports = np;
	r->net.ports[r->net.n_ports++] = pr;
	return 0;
}

static void parse_net(struct pctx *c, struct pol_rule *r, json_t *o, const char *ptr)
{
	static const char *const keys[] = { "hosts", "ports", "via", NULL };
	static const char *const vias[] = { "direct", "egress", "credential-proxy", NULL };
	json_t *hosts = json_object_get(o, "hosts"), *ports = json_object_get(o, "ports");
	json_t *via = json_object_get(o, "via");
	bool names = false, addrs = false;
	char cp[1024];

	check_keys(c, o, ptr, "a net subject", keys);
	if (!hosts)
		err(c, ptr, "net subject needs \"hosts\"");
	else
		(void)each_item(c, hosts, (child(cp, sizeof(cp), ptr, "hosts"), cp), host_item, r);
	if (ports)
		(void)each_item(c, ports, (child(cp, sizeof(cp), ptr, "ports"), cp), port_item, r);
	for (size_t i = 0; i < r->net.n_hosts; i++) {
		if (r->net.hosts[i].kind == POL_HOST_NAME || r->net.hosts[i].kind == POL_HOST_SUFFIX)
			names = true;
		else
			addrs = true;
	}
	r->net.via = names ? POL_VIA_EGRESS : POL_VIA_DIRECT;
	if (via) {
		child(cp, sizeof(cp), ptr, "via");
		if (!json_is_string(via)) {
			err(c, cp, "\"via\" must be a string, got %s", type_name(via));
		} else if (!strcmp(json_string_value(via), "direct")) {
			r->net.via = POL_VIA_DIRECT;
		} else if (!strcmp(json_string_value(via), "egress")) {
			r->net.via = POL_VIA_EGRESS;
		} else if (!strcmp(json_string_value(via), "credential-proxy")) {
			r->net.via = POL_VIA_CRED_PROXY;
		} else {
			const char *m = did_you_mean(json_string_value(via), vias);
			err(c, cp, "unknown via \"%s\"%s%s%s", json_string_value(via),
			    m ? " (did you mean \"" : " (direct, egress, credential-proxy)",
			    m ? m : "", m ? "\"?)" : "");
		}
		r->net.via_set = true;
	}
	if (r->net.via == POL_VIA_DIRECT && names)
		err(c, ptr, "host names cannot be \"direct\": the kernel sees only addresses; "
		    "use \"via\": \"egress\" or \"credential-proxy\"");
	(void)addrs;
}

/* --- tool ---------------------------------------------------------------------- */

static const char *const cond_names[] = { "any", "equals", "in", "within", "domain_in",
					  "prefix", "glob", NULL };

struct cond_strs {
	struct pol_cond *cond;
	bool path;
};

static int cond_str_item(struct pctx *c, json_t *item, const char *ptr, void *ctx)
{
	struct cond_strs *cs = ctx;
	char *s;

	if (cs->path)
		return fs_path_item(c, item, ptr, &(struct paths_ctx){ &cs->cond->strs,
								       &cs->cond->n_strs });
	s = string_item(c, item, ptr, "a domain");
	if (!s)
		return -1;
	{
		struct pol_host h, *nh;

		if (pol_host_parse(s, &h) < 0 || (h.kind != POL_HOST_NAME && h.kind != POL_HOST_SUFFIX &&
						  h.kind != POL_HOST_CIDR4 && h.kind != POL_HOST_CIDR6)) {
			err(c, ptr, "bad domain \"%s\"", s);
			free(s);
			return -1;
		}
		free(s);
		nh = realloc(cs->cond->hosts, (cs->cond->n_hosts + 1) * sizeof(*nh));
		if (!nh) {
			free(h.name);
			return -ENOMEM;
		}
		cs->cond->hosts = nh;
		cs->cond->hosts[cs->cond->n_hosts++] = h;
	}
	return 0;
}

/* Expand variables in string leaves of a JSON value (for equals / in). */
static json_t *expand_value(struct pctx *c, json_t *v, const char *ptr)
{
	if (json_is_string(v)) {
		char *s = expand(c, json_string_value(v), ptr);
		json_t *r = s ? json_string(s) : NULL;
		free(s);
		return r;
	}
	return json_deep_copy(v);
}

static void parse_cond(struct pctx *c, struct pol_cond *cond, json_t *o, const char *ptr)
{
	const char *k;
	json_t *v;
	char cp[1024];
	int n = 0;

	if (!json_is_object(o)) {
		err(c, ptr, "a condition must be an object such as {\"within\": [...]}, got %s",
		    type_name(o));
		return;
	}
	check_keys(c, o, ptr, "a condition", cond_names);
	json_object_foreach(o, k, v) {
		child(cp, sizeof(cp), ptr, k);
		n++;
		if (!strcmp(k, "any")) {
			cond->kind = POL_COND_ANY;
			if (!json_is_true(v))
				err(c, cp, "\"any\" must be true");
		} else if (!strcmp(k, "equals")) {
			cond->kind = POL_COND_EQUALS;
			cond->value = expand_value(c, v, cp);
		} else if (!strcmp(k, "in")) {
			cond->kind = POL_COND_IN;
			if (!json_is_array(v)) {
				err(c, cp, "\"in\" must be an array, got %s", type_name(v));
			} else {
				size_t i;
				json_t *e;

				cond->value = json_array();
				json_array_foreach(v, i, e) {
					char ep[1024];

					child_i(ep, sizeof(ep), cp, i);
					json_array_append_new(cond->value, expand_value(c, e, ep));
				}
			}
		} else if (!strcmp(k, "within") || !strcmp(k, "domain_in")) {
			struct cond_strs cs = { cond, k[0] == 'w' };

			cond->kind = cs.path ? POL_COND_WITHIN : POL_COND_DOMAIN_IN;
			if (each_item(c, v, cp, cond_str_item, &cs) == 0)
				err(c, cp, "\"%s\" is empty", k);
		} else if (!strcmp(k, "prefix") || !strcmp(k, "glob")) {
			char *s;

			cond->kind = k[0] == 'p' ? POL_COND_PREFIX : POL_COND_GLOB;
			s = string_item(c, v, cp, k[0] == 'p' ? "a prefix" : "a glob");
			if (s)
				(void)push_str(&cond->strs, &cond->n_strs, s);
		}
	}
	if (n != 1)
		err(c, ptr, "a condition has exactly one of: any, equals, in, within, domain_in, prefix, glob");
}

static bool valid_name_part(const char *s, size_t n)
{
	if (n == 1 && s[0] == '*')
		return true;
	if (n == 0 || n > 128)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-')
			return false;
	return true;
}

static void parse_tool(struct pctx *c, struct pol_rule *r, json_t *o, const char *ptr)
{
	static const char *const keys[] = { "name", "args", NULL };
	json_t *name = json_object_get(o, "name"), *args = json_object_get(o, "args");
	char cp[1024];

	check_keys(c, o, ptr, "a tool subject", keys);
	child(cp, sizeof(cp), ptr, "name");
	if (!name || !json_is_string(name)) {
		err(c, name ? cp : ptr, "tool subject needs \"name\": \"SERVER.TOOL\"");
	} else {
		const char *s = json_string_value(name), *dot = strchr(s, '.');

		if (!dot || !valid_name_part(s, (size_t)(dot - s)) ||
		    !valid_name_part(dot + 1, strlen(dot + 1))) {
			err(c, cp, "bad tool name \"%.200s\": SERVER.TOOL, each part a name "
			    "(letters, digits, _ and -, at most 128) or *", s);
		} else {
			r->tool.server = strndup(s, (size_t)(dot - s));
			r->tool.tool = strdup(dot + 1);
		}
	}
	if (args) {
		const char *k;
		json_t *v;

		child(cp, sizeof(cp), ptr, "args");
		if (!json_is_object(args)) {
			err(c, cp, "\"args\" must be an object of conditions, got %s", type_name(args));
			return;
		}
		r->tool.conds = calloc(json_object_size(args) + 1, sizeof(*r->tool.conds));
		if (!r->tool.conds)
			return;
		json_object_foreach(args, k, v) {
			char ap[1024];
			struct pol_cond *cond = &r->tool.conds[r->tool.n_conds++];

			cond->key = strdup(k);
			child(ap, sizeof(ap), cp, k);
			parse_cond(c, cond, v, ap);
		}
	}
}

/* --- rules ------------------------------------------------------------------------ */

static bool valid_ident(const char *s)
{
	if (!*s || strlen(s) > 128)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("_-.:", *s))
			return false;
	return true;
}

static void parse_rule(struct pctx *c, struct pol_rule *r, json_t *o, const char *ptr)
{
	static const char *const keys[] = { "name", "decision", "description", "fs", "net", "tool",
					    NULL };
	static const char *const decisions[] = { "allow", "escalate", "deny", NULL };
	json_t *name, *dec, *desc;
	char cp[1024];
	int subjects = 0;

	if (jpos_get(c->pos, ptr, false, &r->pos.line, &r->pos.col) < 0)
		r->pos.line = r->pos.col = 1;
	if (!json_is_object(o)) {
		err(c, ptr, "a rule must be an object, got %s", type_name(o));
		return;
	}
	check_keys(c, o, ptr, "a rule", keys);
	name = json_object_get(o, "name");
	child(cp, sizeof(cp), ptr, "name");
	if (!name)
		err(c, ptr, "rule needs a \"name\"");
	else if (!json_is_string(name) || !valid_ident(json_string_value(name)))
		err(c, cp, "rule name must be a string of letters, digits and _-.: (at most 128)");
	else
		r->name = strdup(json_string_value(name));
	dec = json_object_get(o, "decision");
	child(cp, sizeof(cp), ptr, "decision");
	if (!dec) {
		err(c, ptr, "rule needs a \"decision\" (allow, escalate or deny)");
	} else if (!json_is_string(dec) || pol_decision_parse(json_string_value(dec)) < 0) {
		const char *m = json_is_string(dec) ? did_you_mean(json_string_value(dec), decisions) : NULL;
		if (m)
			err(c, cp, "unknown decision \"%s\" (did you mean \"%s\"?)", json_string_value(dec), m);
		else
			err(c, cp, "decision must be \"allow\", \"escalate\" or \"deny\"");
	} else {
		r->decision = (uint32_t)pol_decision_parse(json_string_value(dec));
	}
	desc = json_object_get(o, "description");
	if (desc) {
		child(cp, sizeof(cp), ptr, "description");
		if (!json_is_string(desc))
			err(c, cp, "\"description\" must be a string");
		else
			r->description = strdup(json_string_value(desc));
	}
	/*
	 * Count first: the subjects share a union, so only a rule with exactly
	 * one of them is parsed at all.
	 */
	subjects = !!json_object_get(o, "fs") + !!json_object_get(o, "net") +
		   !!json_object_get(o, "tool");
	if (subjects == 1 && json_object_get(o, "fs")) {
		r->kind = POL_FS;
		child(cp, sizeof(cp), ptr, "fs");
		if (json_is_object(json_object_get(o, "fs")))
			parse_fs(c, r, json_object_get(o, "fs"), cp);
		else
			err(c, cp, "\"fs\" must be an object");
	} else if (subjects == 1 && json_object_get(o, "net")) {
		r->kind = POL_NET;
		child(cp, sizeof(cp), ptr, "net");
		if (json_is_object(json_object_get(o, "net")))
			parse_net(c, r, json_object_get(o, "net"), cp);
		else
			err(c, cp, "\"net\" must be an object");
	} else if (subjects == 1) {
		r->kind = POL_TOOL;
		child(cp, sizeof(cp), ptr, "tool");
		if (json_is_object(json_object_get(o, "tool")))
			parse_tool(c, r, json_object_get(o, "tool"), cp);
		else
			err(c, cp, "\"tool\" must be an object");
	}
	if (subjects != 1)
		err(c, ptr, "a rule has exactly one subject: \"fs\", \"net\" or \"tool\" (found %d)",
		    subjects);
}

/* --- credentials, approvals, budgets --------------------------------------------- */

static bool valid_env_name(const char *s)
{
	if (!*s || isdigit((unsigned char)*s))
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return false;
	return true;
}

static char *req_string(struct pctx *c, json_t *o, const char *ptr, const char *key, bool required)
{
	json_t *v = json_object_get(o, key);
	char cp[1024];

	child(cp, sizeof(cp), ptr, key);
	if (!v) {
		if (required)
			err(c, ptr, "missing \"%s\"", key);
		return NULL;
	}
	if (!json_is_string(v)) {
		err(c, cp, "\"%s\" must be a string, got %s", key, type_name(v));
		return NULL;
	}
	return expand(c, json_string_value(v), cp);
}

struct strs_ctx {
	char ***out;
	size_t *n;
	int kind;   /* 0 host name, 1 endpoint, 2 server tool type */
};

static int cred_str_item(struct pctx *c, json_t *item, const char *ptr, void *ctx)
{
	static const char *const methods[] = { "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD",
					       "OPTIONS", NULL };
	struct strs_ctx *sc = ctx;
	char *s = string_item(c, item, ptr, sc->kind == 2 ? "a server tool type" :
			      sc->kind ? "an endpoint" : "a host");
	struct pol_host h;

	if (!s)
		return -1;
	if (sc->kind == 2) {
		if (!s[0] || strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(s)) {
			err(c, ptr, "server tool type \"%s\" must be a tool type or its prefix "
			    "(lower-case letters, digits and '_', such as \"web_search\")", s);
			free(s);
			return -1;
		}
	} else if (sc->kind == 0) {
		if (pol_host_parse(s, &h) < 0 || h.kind != POL_HOST_NAME) {
			err(c, ptr, "credential host \"%s\" must be a DNS name", s);
			free(h.name);
			free(s);
			return -1;
		}
		free(s);
		s = h.name;
	} else {
		const char *sp = strchr(s, ' ');
		bool ok = false;

		for (int i = 0; sp && methods[i] && !ok; i++)
			ok = strlen(methods[i]) == (size_t)(sp - s) && !strncmp(s, methods[i], (size_t)(sp - s));
		if (!ok || sp[1] != '/' || strchr(sp + 1, ' ')) {
			err(c, ptr, "endpoint \"%s\" must be \"METHOD /path\" (METHOD one of GET, POST, "
			    "PUT, PATCH, DELETE, HEAD, OPTIONS)", s);
			free(s);
			return -1;
		}
	}
	return push_str(sc->out, sc->n, s);
}

int pol_credential_set_upstream(struct pol_credential *cr, const char *url, const char *ca,
				char *why, size_t wlen)
{
	const char *h = url + 8, *end, *hend, *rest;
	char host[256];
	unsigned long port = 443;
	char *e;

	if (strncasecmp(url, "https://", 8)) {
		snprintf(why, wlen, "upstream \"%s\" must be https://HOST[:PORT][/PATH] (the real key "
			 "never goes upstream in clear)", url);
		return -EINVAL;
	}
	end = h + strcspn(h, "/?#");
	if (strpbrk(end, "?#")) {
		snprintf(why, wlen, "upstream \"%s\": no query or fragment", url);
		return -EINVAL;
	}
	/* The authority: HOST, HOST:PORT, [V6] or [V6]:PORT. */
	if (*h == '[') {
		hend = memchr(h, ']', (size_t)(end - h));
		rest = hend ? hend + 1 : NULL;
		h++;
	} else {
		hend = memchr(h, ':', (size_t)(end - h));
		hend = hend ? hend : end;
		rest = hend;
	}
	if (!rest || (rest != end && *rest != ':')) {
		snprintf(why, wlen, "upstream \"%s\": a bad host (an IPv6 address goes in brackets)", url);
		return -EINVAL;
	}
	if (rest != end) {
		errno = 0;
		port = strtoul(rest + 1, &e, 10);
		if (e != end || rest + 1 == end || errno || !port || port > 65535) {
			snprintf(why, wlen, "upstream \"%s\": the port must be 1-65535", url);
			return -EINVAL;
		}
	}
	if (hend == h || (size_t)(hend - h) >= sizeof(host)) {
		snprintf(why, wlen, "upstream \"%s\": no host", url);
		return -EINVAL;
	}
	memcpy(host, h, (size_t)(hend - h));
	host[hend - h] = 0;
	for (const char *q = host; *q; q++)
		if (!isalnum((unsigned char)*q) && !strchr(".-:_", *q)) {
			snprintf(why, wlen, "upstream \"%s\": the host has a character a host name "
				 "cannot have", url);
			return -EINVAL;
		}
	for (const char *q = end; *q; q++)
		if ((unsigned char)*q <= ' ' || *q == 0x7f || *q == '%' || *q == '\\') {
			snprintf(why, wlen, "upstream \"%s\": the path must be plain (no spaces, "
				 "escapes or control bytes)", url);
			return -EINVAL;
		}
	if (strstr(end, "/../") || strstr(end, "/./") || (strlen(end) >= 3 &&
	    !strcmp(end + strlen(end) - 3, "/..")) || strstr(end, "//")) {
		snprintf(why, wlen, "upstream \"%s\": the path has dot segments or an empty one", url);
		return -EINVAL;
	}
	if (ca && ca[0] != '/') {
		snprintf(why, wlen, "upstream CA \"%s\" must be an absolute path", ca);
		return -EINVAL;
	}
	free(cr->upstream_host);
	free(cr->upstream_prefix);
	cr->upstream_host = strdup(host);
	cr->upstream_port = (uint16_t)port;
	/* "/" alone is no prefix; a trailing slash is dropped (the request's path has its own). */
	cr->upstream_prefix = strndup(end, strlen(end) - (strlen(end) && end[strlen(end) - 1] == '/'));
	if (ca) {
		free(cr->upstream_ca);
		cr->upstream_ca = strdup(ca);
	}
	if (!cr->upstream_host || !cr->upstream_prefix || (ca && !cr->upstream_ca)) {
		snprintf(why, wlen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

int pol_apply_upstream(struct policy *p, const char *spec, const char *ca, char *why, size_t wlen)
{
	const char *eq = strchr(spec, '=');

	if (!eq || eq == spec) {
		snprintf(why, wlen, "--upstream %s: expected CREDENTIAL=https://HOST[:PORT][/PATH]", spec);
		return -EINVAL;
	}
	for (size_t i = 0; i < p->n_creds; i++) {
		struct pol_credential *cr = &p->creds[i];
		char w[400];

		if (strlen(cr->name) != (size_t)(eq - spec) || strncmp(cr->name, spec, (size_t)(eq - spec)))
			continue;
		if (pol_credential_set_upstream(cr, eq + 1, ca, w, sizeof(w)) < 0) {
			snprintf(why, wlen, "--upstream %s: %s", spec, w);
			return -EINVAL;
		}
		return 0;
	}
	snprintf(why, wlen, "--upstream %s: the policy has no credential \"%.*s\"%s", spec,
		 (int)(eq - spec), spec, p->n_creds ? "" : " (it has none)");
	return -ENOENT;
}

static void parse_upstream(struct pctx *c, struct pol_credential *cr, json_t *o, const char *ptr)
{
	char *url = req_string(c, o, ptr, "upstream", false);
	char *ca = req_string(c, o, ptr, "upstream_ca", false);
	char cp[1024], why[512];

	if (ca && !url) {
		child(cp, sizeof(cp), ptr, "upstream_ca");
		err(c, cp, "\"upstream_ca\" needs \"upstream\"");
	} else if (url && pol_credential_set_upstream(cr, url, ca, why, sizeof(why)) < 0) {
		child(cp, sizeof(cp), ptr, "upstream");
		err(c, cp, "%s", why);
	}
	free(url);
	free(ca);
}

static void parse_credential(struct pctx *c, struct pol_credential *cr, json_t *o, const char *ptr)
{
	static const char *const keys[] = { "name", "env", "source", "hosts", "header", "prefix",
					    "endpoints", "server_tools", "upstream", "upstream_ca", NULL };
	static const char *const skeys[] = { "env", "file", NULL };
	json_t *src, *arr;
	char cp[1024];

	if (jpos_get(c->pos, ptr, false, &cr->pos.line, &cr->pos.col) < 0)
		cr->pos.line = cr->pos.col = 1;
	if (!json_is_object(o)) {
		err(c, ptr, "a credential must be an object, got %s", type_name(o));
		return;
	}
	check_keys(c, o, ptr, "a credential", keys);
	cr->name = req_string(c, o, ptr, "name", true);
	cr->env = req_string(c, o, ptr, "env", true);
	if (cr->env && !valid_env_name(cr->env)) {
		child(cp, sizeof(cp), ptr, "env");
		err(c, cp, "\"%s\" is not a valid environment variable name", cr->env);
	}
	cr->header = req_string(c, o, ptr, "header", true);
	cr->prefix = req_string(c, o, ptr, "prefix", false);
	src = json_object_get(o, "source");
	child(cp, sizeof(cp), ptr, "source");
	if (!src || !json_is_object(src)) {
		err(c, src ? cp : ptr, "credential needs \"source\": {\"env\": NAME} or {\"file\": PATH}");
	} else {
		check_keys(c, src, cp, "a credential source", skeys);
		cr->source_env = req_string(c, src, cp, "env", false);
		cr->source_file = req_string(c, src, cp, "file", false);
		if (!!cr->source_env == !!cr->source_file)
			err(c, cp, "source has exactly one of \"env\" and \"file\"");
		if (cr->source_file && cr->source_file[0] != '/')
			err(c, cp, "source file must be an absolute path");
	}
	arr = json_object_get(o, "hosts");
	child(cp, sizeof(cp), ptr, "hosts");
	if (!arr)
		err(c, ptr, "credential needs \"hosts\"");
	else if (each_item(c, arr, cp, cred_str_item,
			   &(struct strs_ctx){ &cr->hosts, &cr->n_hosts, 0 }) == 0)
		err(c, cp, "\"hosts\" is empty");
	arr = json_object_get(o, "endpoints");
	child(cp, sizeof(cp), ptr, "endpoints");
	if (!arr)
		err(c, ptr, "credential needs \"endpoints\" (the allowed \"METHOD /path\")");
	else if (each_item(c, arr, cp, cred_str_item,
			   &(struct strs_ctx){ &cr->endpoints, &cr->n_endpoints, 1 }) == 0)
		err(c, cp, "\"endpoints\" is empty");
	arr = json_object_get(o, "server_tools");
	child(cp, sizeof(cp), ptr, "server_tools");
	if (arr)
		(void)each_item(c, arr, cp, cred_str_item,
				&(struct strs_ctx){ &cr->server_tools, &cr->n_server_tools, 2 });
	parse_upstream(c, cr, o, ptr);
}

static bool get_duration(struct pctx *c, json_t *v, const char *ptr, uint64_t *out)
{
	if (json_is_integer(v) && json_integer_value(v) >= 0) {
		*out = (uint64_t)json_integer_value(v);
		return true;
	}
	if (json_is_string(v) && pol_parse_duration(json_string_value(v), out) == 0)
		return true;
	err(c, ptr, "bad duration (seconds, or a number with s, m, h or d)");
	return false;
}

static void parse_approvals(struct pctx *c, struct policy *p, json_t *o, const char *ptr)
{
	static const char *const keys[] = { "timeout", "on_timeout", NULL };
	json_t *t = json_object_get(o, "timeout"), *ot = json_object_get(o, "on_timeout");
	char cp[1024];
	uint64_t secs;

	check_keys(c, o, ptr, "approvals", keys);
	if (t) {
		child(cp, sizeof(cp), ptr, "timeout");
		if (get_duration(c, t, cp, &secs)) {
			if (secs == 0 || secs > 86400)
				err(c, cp, "approval timeout must be between 1 s and 1 day");
			else
				p->approval_timeout_s = (uint32_t)secs;
		}
	}
	if (ot) {
		child(cp, sizeof(cp), ptr, "on_timeout");
		if (!json_is_string(ot) || (strcmp(json_string_value(ot), "deny") &&
					    strcmp(json_string_value(ot), "allow")))
			err(c, cp, "on_timeout must be \"deny\" or \"allow\"");
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
		err(c, ptr, "bad %s size (bytes, or a number with K, M, G or T)", what);
}

static void parse_budgets(struct pctx *c, struct policy *p, json_t *o, const char *ptr)
{
	static const char *const keys[] = { "wall_time", "steps", "memory", "pids", "cpu", "audit",
					    "egress_requests", "egress_bytes", "llm_tokens", NULL };
	json_t *v;
	char cp[1024];

	check_keys(c, o, ptr, "budgets", keys);
	if ((v = json_object_get(o, "egress_requests"))) {
		child(cp, sizeof(cp), ptr, "egress_requests");
		if (!json_is_integer(v) || json_integer_value(v) < 1)
			err(c, cp, "egress_requests must be a positive integer");
		else
			p->budgets.egress_requests = (uint64_t)json_integer_value(v);
	}
	if ((v = json_object_get(o, "egress_bytes"))) {
		child(cp, sizeof(cp), ptr, "egress_bytes");
		get_size(c, v, cp, "egress_bytes", &p->budgets.egress_bytes);
	}
	if ((v = json_object_get(o, "audit"))) {
		child(cp, sizeof(cp), ptr, "audit");
		get_size(c, v, cp, "audit", &p->budgets.audit_bytes);
	}
	if ((v = json_object_get(o, "llm_tokens"))) {
		child(cp, sizeof(cp), ptr, "llm_tokens");
		if (!json_is_integer(v) || json_integer_value(v) < 1)
			err(c, cp, "llm_tokens must be a positive integer");
		else
			p->budgets.llm_tokens = (uint64_t)json_integer_value(v);
	}
	if ((v = json_object_get(o, "wall_time"))) {
		child(cp, sizeof(cp), ptr, "wall_time");
		(void)get_duration(c, v, cp, &p->budgets.wall_time_s);
	}
	if ((v = json_object_get(o, "steps"))) {
		child(cp, sizeof(cp), ptr, "steps");
		if (!json_is_integer(v) || json_integer_value(v) < 1)
			err(c, cp, "steps must be a positive integer");
		else
			p->budgets.steps = (uint64_t)json_integer_value(v);
	}
	if ((v = json_object_get(o, "memory"))) {
		child(cp, sizeof(cp), ptr, "memory");
		get_size(c, v, cp, "memory", &p->budgets.memory_bytes);
	}
	if ((v = json_object_get(o, "pids"))) {
		child(cp, sizeof(cp), ptr, "pids");
		if (!json_is_integer(v) || json_integer_value(v) < 1)
			err(c, cp, "pids must be a positive integer");
		else
			p->budgets.pids = (uint64_t)json_integer_value(v);
	}
	if ((v = json_object_get(o, "cpu"))) {
		child(cp, sizeof(cp), ptr, "cpu");
		if (!json_is_number(v) || json_number_value(v) <= 0 || json_number_value(v) > 4096)
			err(c, cp, "cpu must be a positive number of cores");
		else
			p->budgets.cpu = json_number_value(v);
	}
}

/* --- shadowing ---------------------------------------------------------------------- */

static bool host_covers(const struct pol_host *b, const struct pol_host *a)
{
	switch (b->kind) {
	case POL_HOST_NAME:
		return a->kind == POL_HOST_NAME && !strcmp(a->name, b->name);
	case POL_HOST_SUFFIX:
		if (a->kind != POL_HOST_NAME && a->kind != POL_HOST_SUFFIX)
			return false;
		{
			size_t n = strlen(a->name), m = strlen(b->name);
			return n >= m && !strcmp(a->name + n - m, b->name) &&
			       (a->kind == POL_HOST_NAME ? n > m : true);
		}
	case POL_HOST_CIDR4:
	case POL_HOST_CIDR6:
		if (a->kind != b->kind || a->prefix < b->prefix)
			return false;
		{
			unsigned whole = b->prefix / 8, rest = b->prefix % 8;
			if (memcmp(a->addr, b->addr, whole))
				return false;
			return !rest || ((a->addr[whole] ^ b->addr[whole]) & (0xff << (8 - rest))) == 0;
		}
	}
	return false;
}

/* Does stronger rule b match every request rule a matches? */
static bool covers(const struct pol_rule *b, const struct pol_rule *a)
{
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case POL_FS:
		if (a->fs.rights & ~b->fs.rights)
			return false;
		for (size_t i = 0; i < a->fs.n_paths; i++) {
			bool in = false;
			for (size_t j = 0; j < b->fs.n_paths && !in; j++)
				in = strpbrk(b->fs.paths[j], "*?[") ?
					pol_glob_within(a->fs.paths[i], b->fs.paths[j]) :
					(!strpbrk(a->fs.paths[i], "*?[") &&
					 pol_path_within(a->fs.paths[i], b->fs.paths[j]));
			if (!in)
				return false;
		}
		return true;
	case POL_NET:
		for (size_t i = 0; i < a->net.n_hosts; i++) {
			bool in = false;
			for (size_t j = 0; j < b->net.n_hosts && !in; j++)
				in = host_covers(&b->net.hosts[j], &a->net.hosts[i]);
			if (!in)
				return false;
		}
		if (!b->net.n_ports)
			return true;
		if (!a->net.n_ports)
			return false;
		for (size_t i = 0; i < a->net.n_ports; i++) {
			bool in = false;
			for (size_t j = 0; j < b->net.n_ports && !in; j++)
				in = a->net.ports[i].lo >= b->net.ports[j].lo &&
				     a->net.ports[i].hi <= b->net.ports[j].hi;
			if (!in)
				return false;
		}
		return true;
	case POL_TOOL:
		if (b->tool.n_conds)
			return false;
		return (!strcmp(b->tool.server, "*") || !strcmp(b->tool.server, a->tool.server)) &&
		       (!strcmp(b->tool.tool, "*") || !strcmp(b->tool.tool, a->tool.tool));
	}
	return false;
}

static void warn_shadowed(struct pctx *c, struct policy *p)
{
	for (size_t i = 0; i < p->n_rules; i++)
		for (size_t j = 0; j < p->n_rules; j++) {
			const struct pol_rule *a = &p->rules[i], *b = &p->rules[j];
			char ptr[64];

			if (i == j || b->decision <= a->decision || !covers(b, a))
				continue;
			snprintf(ptr, sizeof(ptr), "/rules/%zu", i);
			diag(c, POL_WARNING, ptr, 0,
			     "rule '%s' (%s) is shadowed by rule '%s' (%s, line %d): it can never decide",
			     a->name, pol_decision_name(a->decision), b->name,
			     pol_decision_name(b->decision), b->pos.line);
			break;
		}
}

/*
 * An allowed host reached "via": "credential-proxy" that no credential
 * names: the proxy refuses every CONNECT to it (it holds no key, and its
 * CA may not sign the name), and clients read that refusal as a network
 * failure: Gemini CLI, whose host the default profile listed without a
 * credential, retried for minutes saying only "fetch failed".  Said where
 * the policy is written.  Suffix patterns are judged by their literal
 * name (a credential's hosts are exact names).
 */
static void warn_uncredentialed(struct pctx *c, struct policy *p)
{
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct pol_rule *r = &p->rules[i];

		if (r->kind != POL_NET || r->decision != CORDON_ALLOW || r->net.via != POL_VIA_CRED_PROXY)
			continue;
		for (size_t h = 0; h < r->net.n_hosts; h++) {
			const struct pol_host *ho = &r->net.hosts[h];
			bool named = false;
			char ptr[64];

			if (ho->kind != POL_HOST_NAME && ho->kind != POL_HOST_SUFFIX)
				continue;
			for (size_t k = 0; k < p->n_creds && !named; k++)
				for (size_t j = 0; j < p->creds[k].n_hosts && !named; j++)
					named = !strcmp(p->creds[k].hosts[j], ho->name);
			if (named)
				continue;
			snprintf(ptr, sizeof(ptr), "/rules/%zu", i);
			diag(c, POL_WARNING, ptr, 0,
			     "rule '%s' sends %s%s through the credential proxy, and no credential "
			     "names it: every request to it is refused", r->name,
			     ho->kind == POL_HOST_SUFFIX ? "*" : "", ho->name);
		}
	}
}

/* --- top level ---------------------------------------------------------------------- */

static void free_rule(struct pol_rule *r)
{
	free(r->name);
	free(r->description);
	switch (r->kind) {
	case POL_FS:
		for (size_t i = 0; i < r->fs.n_paths; i++)
			free(r->fs.paths[i]);
		free(r->fs.paths);
		break;
	case POL_NET:
		for (size_t i = 0; i < r->net.n_hosts; i++)
			free(r->net.hosts[i].name);
		free(r->net.hosts);
		free(r->net.ports);
		break;
	case POL_TOOL:
		free(r->tool.server);
		free(r->tool.tool);
		for (size_t i = 0; i < r->tool.n_conds; i++) {
			struct pol_cond *cd = &r->tool.conds[i];

			free(cd->key);
			json_decref(cd->value);
			for (size_t j = 0; j < cd->n_strs; j++)
				free(cd->strs[j]);
			free(cd->strs);
			for (size_t j = 0; j < cd->n_hosts; j++)
				free(cd->hosts[j].name);
			free(cd->hosts);
		}
		free(r->tool.conds);
		break;
	}
}

void pol_free(struct policy *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n_rules; i++)
		free_rule(&p->rules[i]);
	free(p->rules);
	for (size_t i = 0; i < p->n_creds; i++) {
		struct pol_credential *cr = &p->creds[i];

		free(cr->name);
		free(cr->env);
		free(cr->source_env);
		free(cr->source_file);
		free(cr->upstream_host);
		free(cr->upstream_prefix);
		free(cr->upstream_ca);
		free(cr->header);
		free(cr->prefix);
		for (size_t j = 0; j < cr->n_hosts; j++)
			free(cr->hosts[j]);
		free(cr->hosts);
		for (size_t j = 0; j < cr->n_endpoints; j++)
			free(cr->endpoints[j]);
		free(cr->endpoints);
		for (size_t j = 0; j < cr->n_server_tools; j++)
			free(cr->server_tools[j]);
		free(cr->server_tools);
	}
	free(p->creds);
	for (size_t i = 0; i < p->n_protected; i++)
		free(p->protected[i]);
	free(p->protected);
	pol_index_free(p->idx);
	pol_vars_free(&p->vars);
	free(p->file);
	free(p->name);
	free(p->description);
	free(p);
}

int pol_protect_path(struct policy *p, const char *path)
{
	char canon[PATH_MAX];
	char *s;
	int r = pol_canon_path(path, NULL, canon, sizeof(canon));

	if (r < 0)
		return r;
	s = strdup(canon);
	if (!s)
		return -ENOMEM;
	r = push_str(&p->protected, &p->n_protected, s);
	return r ?: pol_index_add_protected(p, canon);
}

/*
 * A rule cordon adds after load (pol_grant_*): a zeroed slot at the end,
 * named; NULL with *err set when the name is taken or memory is short.
 */
static struct pol_rule *grant_slot(struct policy *p, const char *name, int *err)
{
	struct pol_rule *rules;

	for (size_t i = 0; i < p->n_rules; i++)
		if (p->rules[i].name && !strcmp(p->rules[i].name, name)) {
			*err = -EEXIST;
			return NULL;
		}
	/* One spare slot stays at the end, as the parser leaves it. */
	rules = realloc(p->rules, (p->n_rules + 2) * sizeof(*rules));
	if (!rules) {
		*err = -ENOMEM;
		return NULL;
	}
	p->rules = rules;
	memset(&rules[p->n_rules], 0, 2 * sizeof(*rules));
	rules[p->n_rules].id = (uint32_t)p->n_rules;
	rules[p->n_rules].decision = CORDON_ALLOW;
	rules[p->n_rules].name = strdup(name);
	if (!rules[p->n_rules].name) {
		*err = -ENOMEM;
		return NULL;
	}
	return &rules[p->n_rules];
}

/* Take the filled slot in: the index names rules by position, so it is rebuilt. */
static int grant_commit(struct policy *p, struct pol_rule *ru, int err)
{
	struct pol_index *old = p->idx;

	if (!err) {
		p->n_rules++;
		p->idx = NULL;
		err = pol_index_build(p);
		if (err < 0) {
			p->idx = old;
			p->n_rules--;
		}
	}
	if (err < 0) {
		free_rule(ru);
		memset(ru, 0, sizeof(*ru));
		return err;
	}
	pol_index_free(old);
	return 0;
}

int pol_grant_path(struct policy *p, const char *rule, const char *path, uint32_t rights)
{
	char canon[PATH_MAX];
	struct pol_rule *ru;
	int r = pol_canon_path(path, NULL, canon, sizeof(canon));

	if (r < 0 || !(ru = grant_slot(p, rule, &r)))
		return r;
	ru->kind = POL_FS;
	ru->fs.paths = calloc(2, sizeof(char *));
	if (ru->fs.paths && (ru->fs.paths[0] = strdup(canon)))
		ru->fs.n_paths = 1;
	ru->fs.rights = rights;
	return grant_commit(p, ru, ru->fs.n_paths ? 0 : -ENOMEM);
}

int pol_grant_connect(struct policy *p, const char *rule, const char *addr, uint16_t port)
{
	struct pol_host h;
	struct pol_rule *ru;
	int r = pol_host_parse(addr, &h);

	if (r < 0)
		return r;
	if (h.kind != POL_HOST_CIDR4 && h.kind != POL_HOST_CIDR6) {
		free(h.name);
		return -EINVAL;
	}
	if (!(ru = grant_slot(p, rule, &r))) {
		free(h.name);
		return r;
	}
	ru->kind = POL_NET;
	ru->net.via = POL_VIA_DIRECT;
	ru->net.via_set = true;
	ru->net.hosts = calloc(1, sizeof(*ru->net.hosts));
	ru->net.ports = calloc(1, sizeof(*ru->net.ports));
	if (ru->net.hosts && ru->net.ports) {
		ru->net.hosts[0] = h;
		ru->net.n_hosts = 1;
		ru->net.ports[0].lo = ru->net.ports[0].hi = port;
		ru->net.n_ports = 1;
		return grant_commit(p, ru, 0);
	}
	free(h.name);
	return grant_commit(p, ru, -ENOMEM);
}

static void parse_root(struct pctx *c, json_t *root, struct policy *p)
{
	static const char *const keys[] = { "cordon_policy", "name", "description", "lists", "rules",
					    "credentials", "approvals", "budgets", NULL };
	json_t *v, *rules, *creds;
	char ptr[1024];

	if (!json_is_object(root)) {
		err(c, "", "a policy is a JSON object, got %s", type_name(root));
		return;
	}
	check_keys(c, root, "", "the policy", keys);
	v = json_object_get(root, "cordon_policy");
	if (!v)
		err(c, "", "missing \"cordon_policy\": 1 (the language version)");
	else if (!json_is_integer(v) || json_integer_value(v) != 1)
		err(c, "/cordon_policy", "unsupported policy version (this cordon reads version 1)");
	if ((v = json_object_get(root, "name"))) {
		if (!json_is_string(v))
			err(c, "/name", "\"name\" must be a string");
		else
			p->name = strdup(json_string_value(v));
	}
	if ((v = json_object_get(root, "description"))) {
		if (!json_is_string(v))
			err(c, "/description", "\"description\" must be a string");
		else
			p->description = strdup(json_string_value(v));
	}
	c->lists = json_object_get(root, "lists");
	if (c->lists) {
		const char *k;
		json_t *l;

		if (!json_is_object(c->lists)) {
			err(c, "/lists", "\"lists\" must be an object of arrays");
			c->lists = NULL;
		} else {
			json_object_foreach(c->lists, k, l) {
				child(ptr, sizeof(ptr), "/lists", k);
				if (!json_is_array(l))
					err(c, ptr, "list \"%s\" must be an array, got %s", k, type_name(l));
				else if (!valid_ident(k))
					err_key(c, ptr, "bad list name \"%s\"", k);
			}
		}
	}
	rules = json_object_get(root, "rules");
	if (!rules) {
		err(c, "", "missing \"rules\"");
	} else if (!json_is_array(rules)) {
		err(c, "/rules", "\"rules\" must be an array, got %s", type_name(rules));
	} else {
		size_t i;
		json_t *r;

		p->rules = calloc(json_array_size(rules) + 1, sizeof(*p->rules));
		if (!p->rules)
			return;
		json_array_foreach(rules, i, r) {
			struct pol_rule *ru = &p->rules[p->n_rules];

			ru->id = (uint32_t)p->n_rules;
			p->n_rules++;
			child_i(ptr, sizeof(ptr), "/rules", i);
			parse_rule(c, ru, r, ptr);
			for (size_t j = 0; ru->name && j < i; j++)
				if (p->rules[j].name && !strcmp(p->rules[j].name, ru->name)) {
					char np[1024];
					child(np, sizeof(np), ptr, "name");
					err(c, np, "duplicate rule name \"%s\" (first at line %d)", ru->name,
					    p->rules[j].pos.line);
				}
		}
	}
	creds = json_object_get(root, "credentials");
	if (creds) {
		size_t i;
		json_t *cr;

		if (!json_is_array(creds)) {
			err(c, "/credentials", "\"credentials\" must be an array");
		} else {
			p->creds = calloc(json_array_size(creds) + 1, sizeof(*p->creds));
			if (!p->creds)
				return;
			json_array_foreach(creds, i, cr) {
				child_i(ptr, sizeof(ptr), "/credentials", i);
				parse_credential(c, &p->creds[p->n_creds++], cr, ptr);
			}
			for (size_t a = 0; a < p->n_creds; a++)
				for (size_t b = 0; b < a; b++)
					if (p->creds[a].env && p->creds[b].env &&
					    !strcmp(p->creds[a].env, p->creds[b].env)) {
						child_i(ptr, sizeof(ptr), "/credentials", a);
						err(c, ptr, "two credentials use variable %s", p->creds[a].env);
					}
		}
	}
	p->approval_timeout_s = 120;
	p->approval_on_timeout = CORDON_DENY;
	if ((v = json_object_get(root, "approvals"))) {
		if (!json_is_object(v))
			err(c, "/approvals", "\"approvals\" must be an object");
		else
			parse_approvals(c, p, v, "/approvals");
	}
	if ((v = json_object_get(root, "budgets"))) {
		if (!json_is_object(v))
			err(c, "/budgets", "\"budgets\" must be an object");
		else
			parse_budgets(c, p, v, "/budgets");
	}
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
			diags_addf(diags, POL_ERROR, line, col, "NUL byte in policy text");
			return -EINVAL;
		}
	}
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		diags_addf(diags, POL_ERROR, je.line > 0 ? je.line : 1, je.column > 0 ? je.column : 1,
			   "invalid JSON: %s", je.text);
		return -EINVAL;
	}
	r = jpos_scan(text, len, &c.pos);
	if (r < 0) {
		json_decref(root);
		if (r == -ENOMEM)
			return r;
		diags_addf(diags, POL_ERROR, 1, 1, r == -E2BIG ?
			   "nested deeper than %d levels" : "invalid JSON (rejected by the position scanner)",
			   JPOS_MAX_DEPTH);
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
	if (!diags->n_errors && warnings) {
		warn_shadowed(&c, p);
		warn_uncredentialed(&c, p);
	}
	json_decref(root);
	jpos_free(c.pos);
	if (diags->n_errors) {
		pol_free(p);
		return -EINVAL;
	}
	if (real_path && (r = pol_protect_path(p, real_path)) < 0) {
		pol_free(p);
		return r;
	}
	r = pol_index_build(p);
	if (r < 0) {
		pol_free(p);
		return r;
	}
	*out = p;
	return 0;
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
		/* The file is protected by its absolute name (a relative one is the cwd's). */
		if (!realpath(file_or_profile, abs))
			return -errno;
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
