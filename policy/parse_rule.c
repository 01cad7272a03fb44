// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * One rule of a policy: its name, decision and its one subject (fs, net or
 * tool, with a tool's argument conditions), validated, paths canonical.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <limits.h>
#include "jsonpos.h"
#include "parse_rule.h"
#include "pctx.h"
#include "policy.h"
#include "util.h"

/* --- fs ------------------------------------------------------------------------ */

struct paths_ctx {
	char ***out;
	size_t *n;
};

static int fs_path_item(struct pctx *c, json_t *item, const char *ptr, void *ctx)
{
	struct paths_ctx *pc = ctx;
	char canon[PATH_MAX];
	char *s = pctx_string_item(c, item, ptr, "a path");
	int r;

	if (!s)
		return -1;
	if (s[0] != '/') {
		pctx_err(c, ptr, "path \"%s\" is relative: paths must be absolute (use ${WORKSPACE}/...)", s);
		free(s);
		return -1;
	}
	/*
	 * Rule roots are canonical like requests: symlinks in the rule resolve
	 * now, to the object the kernel would reach.  Glob patterns are only
	 * normalised: they are matched component by component.
	 */
	if (strpbrk(s, "*?[")) {
		const char *why;

		/* "a**b" read as "a*b" would match less than its reader expects. */
		if (pol_pattern_check(s, &why) < 0) {
			pctx_err(c, ptr, "pattern \"%s\": %s", s, why);
			free(s);
			return -1;
		}
		r = pol_normalize_path(s, canon, sizeof(canon));
	} else
		r = pol_canon_path_memo(&c->canon, s, canon, sizeof(canon));
	free(s);
	if (r < 0) {
		pctx_err(c, ptr, "cannot canonicalise path: %s", strerror(-r));
		return -1;
	}
	s = strdup(canon);
	return s ? pctx_push_str(pc->out, pc->n, s) : -ENOMEM;
}

static int right_item(struct pctx *c, json_t *item, const char *ptr, void *ctx)
{
	static const char *const names[] = { "read", "write", "create", "delete", "exec", "chmod",
					     "all", NULL };
	uint32_t *rights = ctx, bit;

	if (!json_is_string(item)) {
		pctx_err(c, ptr, "a right must be a string, got %s", pctx_type_name(item));
		return -1;
	}
	if (pol_right_parse(json_string_value(item), &bit) < 0) {
		const char *m = pctx_did_you_mean(json_string_value(item), names);
		if (m)
			pctx_err(c, ptr, "unknown right \"%s\" (did you mean \"%s\"?)",
				 json_string_value(item), m);
		else
			pctx_err(c, ptr, "unknown right \"%s\" (read, write, create, delete, exec, chmod, all)",
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

	pctx_check_keys(c, o, ptr, "an fs subject", keys);
	if (!paths)
		pctx_err(c, ptr, "fs subject needs \"paths\"");
	else if (pctx_each_item(c, paths, (pctx_child(cp, sizeof(cp), ptr, "paths"), cp),
				fs_path_item, &pc) == 0)
		pctx_err(c, cp, "\"paths\" is empty");
	if (!rights)
		pctx_err(c, ptr, "fs subject needs \"rights\"");
	else if (pctx_each_item(c, rights, (pctx_child(cp, sizeof(cp), ptr, "rights"), cp), right_item,
				&r->fs.rights) == 0)
		pctx_err(c, cp, "\"rights\" is empty");
}

/* --- net ----------------------------------------------------------------------- */

static int host_item(struct pctx *c, json_t *item, const char *ptr, void *ctx)
{
	struct pol_rule *r = ctx;
	struct pol_host h, *nh;
	char *s = pctx_string_item(c, item, ptr, "a host");

	if (!s)
		return -1;
	if (pol_host_parse(s, &h) < 0) {
		pctx_err(c, ptr, strchr(s, '/') ? "bad CIDR \"%s\"" :
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
			pctx_err(c, ptr, "port %lld out of range (1-65535)", (long long)v);
			return -1;
		}
		pr.lo = pr.hi = (uint16_t)v;
	} else if (json_is_string(item)) {
		unsigned lo, hi;
		char tail;

		if (sscanf(json_string_value(item), "%u-%u%c", &lo, &hi, &tail) != 2 ||
		    lo < 1 || hi > 65535 || lo > hi) {
			pctx_err(c, ptr, "bad port range \"%s\" (LOW-HIGH within 1-65535)",
				 json_string_value(item));
			return -1;
		}
		pr.lo = (uint16_t)lo;
		pr.hi = (uint16_t)hi;
	} else {
		pctx_err(c, ptr, "a port must be a number or a \"LOW-HIGH\" string, got %s",
			 pctx_type_name(item));
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

	pctx_check_keys(c, o, ptr, "a net subject", keys);
	if (!hosts)
		pctx_err(c, ptr, "net subject needs \"hosts\"");
	else
		(void)pctx_each_item(c, hosts, (pctx_child(cp, sizeof(cp), ptr, "hosts"), cp), host_item, r);
	/* No ports is any port: an empty list (an empty @LIST) must not read as that. */
	if (ports && pctx_each_item(c, ports, (pctx_child(cp, sizeof(cp), ptr, "ports"), cp),
				    port_item, r) == 0)
		pctx_err(c, cp, "\"ports\" is empty (leave it out for any port)");
	for (size_t i = 0; i < r->net.n_hosts; i++) {
		if (r->net.hosts[i].kind == POL_HOST_NAME || r->net.hosts[i].kind == POL_HOST_SUFFIX)
			names = true;
		else
			addrs = true;
	}
	r->net.via = names ? POL_VIA_EGRESS : POL_VIA_DIRECT;
	if (via) {
		pctx_child(cp, sizeof(cp), ptr, "via");
		if (!json_is_string(via)) {
			pctx_err(c, cp, "\"via\" must be a string, got %s", pctx_type_name(via));
		} else if (!strcmp(json_string_value(via), "direct")) {
			r->net.via = POL_VIA_DIRECT;
		} else if (!strcmp(json_string_value(via), "egress")) {
			r->net.via = POL_VIA_EGRESS;
		} else if (!strcmp(json_string_value(via), "credential-proxy")) {
			r->net.via = POL_VIA_CRED_PROXY;
		} else {
			const char *m = pctx_did_you_mean(json_string_value(via), vias);
			pctx_err(c, cp, "unknown via \"%s\"%s%s%s", json_string_value(via),
				 m ? " (did you mean \"" : " (direct, egress, credential-proxy)",
				 m ? m : "", m ? "\"?)" : "");
		}
		r->net.via_set = true;
	}
	if (r->net.via == POL_VIA_DIRECT && names)
		pctx_err(c, ptr, "host names cannot be \"direct\": the kernel sees only addresses; "
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
	s = pctx_string_item(c, item, ptr, "a domain");
	if (!s)
		return -1;
	{
		struct pol_host h, *nh;

		if (pol_host_parse(s, &h) < 0 || (h.kind != POL_HOST_NAME && h.kind != POL_HOST_SUFFIX &&
						  h.kind != POL_HOST_CIDR4 && h.kind != POL_HOST_CIDR6)) {
			pctx_err(c, ptr, "bad domain \"%s\"", s);
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
		char *s = pctx_expand(c, json_string_value(v), ptr);
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
		pctx_err(c, ptr, "a condition must be an object such as {\"within\": [...]}, got %s",
			 pctx_type_name(o));
		return;
	}
	pctx_check_keys(c, o, ptr, "a condition", cond_names);
	json_object_foreach(o, k, v) {
		pctx_child(cp, sizeof(cp), ptr, k);
		n++;
		if (!strcmp(k, "any")) {
			cond->kind = POL_COND_ANY;
			if (!json_is_true(v))
				pctx_err(c, cp, "\"any\" must be true");
		} else if (!strcmp(k, "equals")) {
			cond->kind = POL_COND_EQUALS;
			cond->value = expand_value(c, v, cp);
		} else if (!strcmp(k, "in")) {
			cond->kind = POL_COND_IN;
			if (!json_is_array(v)) {
				pctx_err(c, cp, "\"in\" must be an array, got %s", pctx_type_name(v));
			} else {
				size_t i;
				json_t *e;

				cond->value = json_array();
				json_array_foreach(v, i, e) {
					char ep[1024];

					pctx_child_i(ep, sizeof(ep), cp, i);
					json_array_append_new(cond->value, expand_value(c, e, ep));
				}
			}
		} else if (!strcmp(k, "within") || !strcmp(k, "domain_in")) {
			struct cond_strs cs = { cond, k[0] == 'w' };

			cond->kind = cs.path ? POL_COND_WITHIN : POL_COND_DOMAIN_IN;
			if (pctx_each_item(c, v, cp, cond_str_item, &cs) == 0)
				pctx_err(c, cp, "\"%s\" is empty", k);
		} else if (!strcmp(k, "prefix") || !strcmp(k, "glob")) {
			char *s;

			cond->kind = k[0] == 'p' ? POL_COND_PREFIX : POL_COND_GLOB;
			s = pctx_string_item(c, v, cp, k[0] == 'p' ? "a prefix" : "a glob");
			if (s)
				(void)pctx_push_str(&cond->strs, &cond->n_strs, s);
		}
	}
	if (n != 1)
		pctx_err(c, ptr, "a condition has exactly one of: any, equals, in, within, "
			 "domain_in, prefix, glob");
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

	pctx_check_keys(c, o, ptr, "a tool subject", keys);
	pctx_child(cp, sizeof(cp), ptr, "name");
	if (!name || !json_is_string(name)) {
		pctx_err(c, name ? cp : ptr, "tool subject needs \"name\": \"SERVER.TOOL\"");
	} else {
		const char *s = json_string_value(name), *dot = strchr(s, '.');

		if (!dot || !valid_name_part(s, (size_t)(dot - s)) ||
		    !valid_name_part(dot + 1, strlen(dot + 1))) {
			pctx_err(c, cp, "bad tool name \"%.200s\": SERVER.TOOL, each part a name "
				 "(letters, digits, _ and -, at most 128) or *", s);
		} else {
			r->tool.server = strndup(s, (size_t)(dot - s));
			r->tool.tool = strdup(dot + 1);
		}
	}
	if (args) {
		const char *k;
		json_t *v;

		pctx_child(cp, sizeof(cp), ptr, "args");
		if (!json_is_object(args)) {
			pctx_err(c, cp, "\"args\" must be an object of conditions, got %s",
				 pctx_type_name(args));
			return;
		}
		r->tool.conds = calloc(json_object_size(args) + 1, sizeof(*r->tool.conds));
		if (!r->tool.conds)
			return;
		json_object_foreach(args, k, v) {
			char ap[1024];
			struct pol_cond *cond = &r->tool.conds[r->tool.n_conds++];

			cond->key = strdup(k);
			pctx_child(ap, sizeof(ap), cp, k);
			parse_cond(c, cond, v, ap);
		}
	}
}

/* --- rules ------------------------------------------------------------------------ */

void parse_rule(struct pctx *c, struct pol_rule *r, json_t *o, const char *ptr)
{
	static const char *const keys[] = { "name", "decision", "description", "source", "fs", "net",
					    "tool", NULL };
	static const char *const decisions[] = { "allow", "escalate", "deny", NULL };
	json_t *name, *dec, *desc;
	char cp[1024];
	int subjects = 0;

	if (jpos_get(c->pos, ptr, false, &r->pos.line, &r->pos.col) < 0)
		r->pos.line = r->pos.col = 1;
	if (!json_is_object(o)) {
		pctx_err(c, ptr, "a rule must be an object, got %s", pctx_type_name(o));
		return;
	}
	pctx_check_keys(c, o, ptr, "a rule", keys);
	name = json_object_get(o, "name");
	pctx_child(cp, sizeof(cp), ptr, "name");
	if (!name)
		pctx_err(c, ptr, "rule needs a \"name\"");
	else if (!json_is_string(name) || !pctx_valid_ident(json_string_value(name)))
		pctx_err(c, cp, "rule name must be a string of letters, digits and _-.: (at most 128)");
	else
		r->name = strdup(json_string_value(name));
	dec = json_object_get(o, "decision");
	pctx_child(cp, sizeof(cp), ptr, "decision");
	if (!dec) {
		pctx_err(c, ptr, "rule needs a \"decision\" (allow, escalate or deny)");
	} else if (!json_is_string(dec) || pol_decision_parse(json_string_value(dec)) < 0) {
		const char *m = json_is_string(dec) ?
				pctx_did_you_mean(json_string_value(dec), decisions) : NULL;
		if (m)
			pctx_err(c, cp, "unknown decision \"%s\" (did you mean \"%s\"?)",
				 json_string_value(dec), m);
		else
			pctx_err(c, cp, "decision must be \"allow\", \"escalate\" or \"deny\"");
	} else {
		r->decision = (uint32_t)pol_decision_parse(json_string_value(dec));
	}
	desc = json_object_get(o, "description");
	if (desc) {
		pctx_child(cp, sizeof(cp), ptr, "description");
		if (!json_is_string(desc))
			pctx_err(c, cp, "\"description\" must be a string");
		else
			r->description = strdup(json_string_value(desc));
	}
	/* "source": "FILE:LINE", the sentence a constitution's rule came from. */
	desc = json_object_get(o, "source");
	if (desc && !json_is_string(desc)) {
		pctx_child(cp, sizeof(cp), ptr, "source");
		pctx_err(c, cp, "\"source\" must be a string");
	}
	/*
	 * Count first: the subjects share a union, so only a rule with exactly
	 * one of them is parsed at all.
	 */
	subjects = !!json_object_get(o, "fs") + !!json_object_get(o, "net") +
		   !!json_object_get(o, "tool");
	if (subjects == 1 && json_object_get(o, "fs")) {
		r->kind = POL_FS;
		pctx_child(cp, sizeof(cp), ptr, "fs");
		if (json_is_object(json_object_get(o, "fs")))
			parse_fs(c, r, json_object_get(o, "fs"), cp);
		else
			pctx_err(c, cp, "\"fs\" must be an object");
	} else if (subjects == 1 && json_object_get(o, "net")) {
		r->kind = POL_NET;
		pctx_child(cp, sizeof(cp), ptr, "net");
		if (json_is_object(json_object_get(o, "net")))
			parse_net(c, r, json_object_get(o, "net"), cp);
		else
			pctx_err(c, cp, "\"net\" must be an object");
	} else if (subjects == 1) {
		r->kind = POL_TOOL;
		pctx_child(cp, sizeof(cp), ptr, "tool");
		if (json_is_object(json_object_get(o, "tool")))
			parse_tool(c, r, json_object_get(o, "tool"), cp);
		else
			pctx_err(c, cp, "\"tool\" must be an object");
	}
	if (subjects != 1)
		pctx_err(c, ptr, "a rule has exactly one subject: \"fs\", \"net\" or \"tool\" (found %d)",
			 subjects);
}

