// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The one evaluator.  Semantics (policy/README.md): invariants first, then
 * among matching rules the strongest decision wins (deny > escalate >
 * allow), ties to the lowest rule id, and no match is a denial.
 *
 * Two implementations of the same function: pol_eval uses the index built
 * at load (a hash of rule roots probed once per path prefix, host names and
 * suffixes, CIDRs bucketed by prefix length, tool names), pol_eval_linear
 * scans every rule.  Tests check they always agree; the benchmark measures
 * both.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fnmatch.h>
#include <limits.h>
#include "index.h"
#include "policy.h"
#include "util.h"

/* --- shared matching --------------------------------------------------------- */

struct acc {
	int decision;                    /* -1: nothing matched yet */
	const struct pol_rule *rule;
};

static void consider(struct acc *a, const struct pol_rule *r)
{
	if (a->decision < (int)r->decision ||
	    (a->decision == (int)r->decision && (!a->rule || r->id < a->rule->id))) {
		a->decision = (int)r->decision;
		a->rule = r;
	}
}

static uint32_t op_right(enum pol_op op)
{
	switch (op) {
	case POL_OP_READ:
		return CORDON_FS_READ;
	case POL_OP_WRITE:
		return CORDON_FS_WRITE;
	case POL_OP_CREATE:
		return CORDON_FS_CREATE;
	case POL_OP_DELETE:
		return CORDON_FS_DELETE;
	case POL_OP_EXEC:
		return CORDON_FS_EXEC;
	case POL_OP_CHMOD:
		return CORDON_FS_CHMOD;
	case POL_OP_CONNECT:
	case POL_OP_TOOL:
		break;
	}
	return 0;
}

static bool fs_rule_matches(const struct pol_rule *r, const char *path, uint32_t want)
{
	if (!(r->fs.rights & want))
		return false;
	for (size_t i = 0; i < r->fs.n_paths; i++)
		if (pol_has_glob(r->fs.paths[i]) ? pol_glob_within(path, r->fs.paths[i])
						  : pol_path_within(path, r->fs.paths[i]))
			return true;
	return false;
}

static bool port_ok(const struct pol_rule *r, uint16_t port)
{
	if (!r->net.n_ports)
		return true;
	for (size_t i = 0; i < r->net.n_ports; i++)
		if (port >= r->net.ports[i].lo && port <= r->net.ports[i].hi)
			return true;
	return false;
}

static bool net_rule_matches(const struct pol_rule *r, const char *host, uint16_t port)
{
	if (!port_ok(r, port))
		return false;
	for (size_t i = 0; i < r->net.n_hosts; i++)
		if (pol_host_match(&r->net.hosts[i], host))
			return true;
	return false;
}

static bool name_part_matches(const char *pat, const char *s)
{
	return !strcmp(pat, "*") || !strcmp(pat, s);
}

static bool tool_name_matches(const struct pol_rule *r, const char *server, const char *tool)
{
	return name_part_matches(r->tool.server, server) && name_part_matches(r->tool.tool, tool);
}

/*
 * Canonicalising an argument path asks the filesystem (realpath); several
 * candidate rules often test the same argument, so one evaluation keeps the
 * last few answers.
 */
struct canon_cache {
	struct {
		const char *val;
		const char *root;
		int r;
		char out[PATH_MAX];
	} e[4];
	unsigned next;
};

static int canon_cached(struct canon_cache *cc, const char *val, const char *root,
			const char **out)
{
	unsigned i;

	for (i = 0; i < ARRAY_SIZE(cc->e); i++)
		if (cc->e[i].val == val && cc->e[i].root == root) {
			*out = cc->e[i].out;
			return cc->e[i].r;
		}
	i = cc->next++ % ARRAY_SIZE(cc->e);
	cc->e[i].val = val;
	cc->e[i].root = root;
	cc->e[i].r = pol_canon_path(val, root, cc->e[i].out, sizeof(cc->e[i].out));
	*out = cc->e[i].out;
	return cc->e[i].r;
}

/* A path argument: canonical, and within one of dirs for every root. */
static bool path_within_dirs(const struct pol_cond *c, const char *val,
			     const struct pol_request *req, const struct policy *p,
			     struct canon_cache *cc)
{
	const char *const *roots = req->roots;
	const char *ws = pol_vars_get(&p->vars, "WORKSPACE");
	const char *fallback[2] = { ws, NULL };
	const char *canon;

	if (!val || !*val)
		return false;
	if (val[0] == '/' || !roots || !roots[0])
		roots = val[0] == '/' ? fallback : (ws ? fallback : NULL);
	if (!roots)
		return false;
	for (int i = 0; roots[i]; i++) {
		bool in = false;

		if (canon_cached(cc, val, roots[i], &canon) < 0)
			return false;
		/* A "within" item may be a pattern, "*" and "**" as in fs paths. */
		for (size_t j = 0; j < c->n_strs && !in; j++)
			in = pol_has_glob(c->strs[j]) ? pol_glob_within(canon, c->strs[j])
						      : pol_path_within(canon, c->strs[j]);
		if (!in)
			return false;
	}
	return true;
}

static bool cond_holds_one(const struct pol_cond *c, json_t *v, const struct pol_request *req,
			   const struct policy *p, struct canon_cache *cc)
{
	const char *s = json_is_string(v) ? json_string_value(v) : NULL;
	char host[256];
	size_t i;
	json_t *e;

	switch (c->kind) {
	case POL_COND_ANY:
		return true;
	case POL_COND_EQUALS:
		return json_equal(c->value, v);
	case POL_COND_IN:
		json_array_foreach(c->value, i, e)
			if (json_equal(e, v))
				return true;
		return false;
	case POL_COND_WITHIN:
		return s && path_within_dirs(c, s, req, p, cc);
	case POL_COND_DOMAIN_IN:
		if (!s || pol_url_host(s, host, sizeof(host)) < 0)
			return false;
		for (i = 0; i < c->n_hosts; i++)
			if (pol_host_match(&c->hosts[i], host))
				return true;
		return false;
	case POL_COND_PREFIX:
		return s && !strncmp(s, c->strs[0], strlen(c->strs[0]));
	case POL_COND_GLOB:
		return s && fnmatch(c->strs[0], s, 0) == 0;
	}
	return false;
}

/*
 * A condition on a list-valued argument (read_multiple_files' "paths")
 * must hold for every element, except equals/in which compare the whole.
 */
static bool cond_holds(const struct pol_cond *c, json_t *args, const struct pol_request *req,
		       const struct policy *p, struct canon_cache *cc)
{
	json_t *v = args ? json_object_get(args, c->key) : NULL;
	size_t i;
	json_t *e;

	if (!v)
		return c->kind == POL_COND_ANY;     /* "any" declares an optional key */
	if (json_is_array(v) && c->kind != POL_COND_EQUALS && c->kind != POL_COND_IN &&
	    c->kind != POL_COND_ANY) {
		if (json_array_size(v) == 0)
			return false;
		json_array_foreach(v, i, e)
			if (!cond_holds_one(c, e, req, p, cc))
				return false;
		return true;
	}
	return cond_holds_one(c, v, req, p, cc);
}

static bool conds_hold(const struct pol_rule *r, json_t *args, const struct pol_request *req,
		       const struct policy *p, struct canon_cache *cc)
{
	for (size_t i = 0; i < r->tool.n_conds; i++)
		if (!cond_holds(&r->tool.conds[i], args, req, p, cc))
			return false;
	return true;
}

/* --- candidate enumeration: indexed or linear --------------------------------- */

struct cands {
	const struct policy *p;
	bool linear;
};

typedef void (*visit_fn)(const struct pol_rule *r, void *ctx);

static void visit_fs(const struct cands *c, const char *path, visit_fn fn, void *ctx)
{
	const struct policy *p = c->p;
	const struct pol_index *x = p->idx;
	const struct slot *slot;
	uint64_t h = SMAP_FNV_INIT;
	size_t i;

	if (c->linear || !x) {
		for (i = 0; i < p->n_rules; i++)
			if (p->rules[i].kind == POL_FS)
				fn(&p->rules[i], ctx);
		return;
	}
	/* "/" and then every prefix ending at a component boundary, hashed as we go. */
	slot = smap_get(&x->fs, "/", 1);
	for (uint32_t k = 0; slot && k < slot->n; k++)
		fn(&p->rules[slot->ids[k]], ctx);
	for (i = 0; path[i]; i++) {
		h = smap_fnv_step(h, (unsigned char)path[i]);
		if (i > 0 && (path[i + 1] == '/' || path[i + 1] == 0)) {
			slot = smap_get_h(&x->fs, path, i + 1, h);
			for (uint32_t k = 0; slot && k < slot->n; k++)
				fn(&p->rules[slot->ids[k]], ctx);
		}
	}
	for (i = 0; i < x->n_fs_glob; i++)
		fn(&p->rules[x->fs_glob[i]], ctx);
}

/* h: the request's host, parsed once by the caller. */
static void visit_net(const struct cands *c, const struct pol_host *hp, visit_fn fn, void *ctx)
{
	const struct policy *p = c->p;
	const struct pol_index *x = p->idx;
	const struct pol_host h = *hp;
	size_t i;

	if (c->linear || !x) {
		for (i = 0; i < p->n_rules; i++)
			if (p->rules[i].kind == POL_NET)
				fn(&p->rules[i], ctx);
		return;
	}
	if (h.kind == POL_HOST_NAME) {
		const struct slot *s = smap_get(&x->names, h.name, strlen(h.name));
		if (s)
			for (uint32_t k = 0; k < s->n; k++)
				fn(&p->rules[s->ids[k]], ctx);
		/* ".b.c", ".c": each suffix at a label boundary. */
		for (const char *d = strchr(h.name, '.'); d; d = strchr(d + 1, '.')) {
			s = smap_get(&x->names, d, strlen(d));
			if (s)
				for (uint32_t k = 0; k < s->n; k++)
					fn(&p->rules[s->ids[k]], ctx);
		}
	} else if (h.kind == POL_HOST_CIDR4 || h.kind == POL_HOST_CIDR6) {
		int fam = h.kind == POL_HOST_CIDR4 ? 4 : 6;
		const uint8_t *have = fam == 4 ? x->v4_prefixes : x->v6_prefixes;
		unsigned maxp = fam == 4 ? 32 : 128;

		for (unsigned pl = 0; pl <= maxp; pl++) {
			uint8_t ck[18];
			const struct slot *s;

			if (!have[pl])
				continue;
			pol_index_cidr_key(ck, fam, h.addr, pl);
			s = smap_get(&x->cidr, ck, sizeof(ck));
			if (s)
				for (uint32_t k = 0; k < s->n; k++)
					fn(&p->rules[s->ids[k]], ctx);
		}
	}
}

static void visit_tool(const struct cands *c, const char *server, const char *tool,
		       visit_fn fn, void *ctx)
{
	const struct policy *p = c->p;
	const struct pol_index *x = p->idx;
	const char *servers[2] = { server, "*" }, *tools[2] = { tool, "*" };
	size_t sl[2] = { strlen(server), 1 }, tl[2] = { strlen(tool), 1 };
	char key[600];

	if (c->linear || !x) {
		for (size_t i = 0; i < p->n_rules; i++)
			if (p->rules[i].kind == POL_TOOL)
				fn(&p->rules[i], ctx);
		return;
	}
	/* A name the index cannot key (over-long) is enumerated in full: never skipped. */
	if (sl[0] + tl[0] + 2 > sizeof(key)) {
		const struct cands all = { p, true };

		visit_tool(&all, server, tool, fn, ctx);
		return;
	}
	for (int a = 0; a < 2; a++)
		for (int b = 0; b < 2; b++) {
			const struct slot *s;
			/* "server.tool" by hand: snprintf(3) here was most of a lookup's cost. */
			memcpy(key, servers[a], sl[a]);
			key[sl[a]] = '.';
			memcpy(key + sl[a] + 1, tools[b], tl[b]);
			s = smap_get(&x->tools, key, sl[a] + 1 + tl[b]);
			if (s)
				for (uint32_t k = 0; k < s->n; k++)
					fn(&p->rules[s->ids[k]], ctx);
		}
}

/* --- the evaluation ----------------------------------------------------------- */

struct fs_ctx {
	struct acc a;
	const char *path;
	uint32_t want;
};

static void fs_visit(const struct pol_rule *r, void *ctx)
{
	struct fs_ctx *c = ctx;

	if (fs_rule_matches(r, c->path, c->want))
		consider(&c->a, r);
}

struct net_ctx {
	struct acc a;
	const char *host;
	uint16_t port;
};

static void net_visit(const struct pol_rule *r, void *ctx)
{
	struct net_ctx *c = ctx;

	if (net_rule_matches(r, c->host, c->port))
		consider(&c->a, r);
}

struct tool_ctx {
	struct acc a;
	const struct policy *p;
	const struct pol_request *req;
	const char *server, *tool;
	json_t *args;
	size_t n_named;              /* rules matching by name */
	const struct pol_rule *named[64];   /* the first of them, for the key check */
	struct canon_cache *cc;
};

static void tool_visit(const struct pol_rule *r, void *ctx)
{
	struct tool_ctx *c = ctx;

	if (!tool_name_matches(r, c->server, c->tool))
		return;
	if (c->n_named < ARRAY_SIZE(c->named))
		c->named[c->n_named] = r;
	c->n_named++;
	if (conds_hold(r, c->args, c->req, c->p, c->cc))
		consider(&c->a, r);
}

/* Does some rule naming this tool name the argument key? */
static bool key_known(const struct tool_ctx *c, const char *key)
{
	const struct policy *p = c->p;

	if (c->n_named <= ARRAY_SIZE(c->named)) {
		for (size_t i = 0; i < c->n_named; i++)
			for (size_t j = 0; j < c->named[i]->tool.n_conds; j++)
				if (!strcmp(c->named[i]->tool.conds[j].key, key))
					return true;
		return false;
	}
	/* More named rules than remembered: ask every rule. */
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct pol_rule *r = &p->rules[i];

		if (r->kind != POL_TOOL || !tool_name_matches(r, c->server, c->tool))
			continue;
		for (size_t j = 0; j < r->tool.n_conds; j++)
			if (!strcmp(r->tool.conds[j].key, key))
				return true;
	}
	return false;
}

static void finish(struct pol_result *res, const struct acc *a, const char *what)
{
	if (a->decision < 0) {
		res->decision = CORDON_DENY;
		res->rule = NULL;
		snprintf(res->reason, sizeof(res->reason), "no rule allows %s (default deny)", what);
		return;
	}
	res->decision = (uint32_t)a->decision;
	res->rule = a->rule;
	snprintf(res->reason, sizeof(res->reason), "rule '%s' %s %s", a->rule->name,
		 res->decision == CORDON_ALLOW ? "allows" :
		 res->decision == CORDON_ESCALATE ? "escalates" : "denies", what);
}

/* Judge one tool event.  `lifted`: advisory (no default deny, no key check). */
static void eval_tool(const struct cands *cs, const struct pol_request *req,
		      const char *server, const char *tool, json_t *args, bool lifted,
		      struct pol_result *res, struct acc *into)
{
	struct canon_cache cc;
	struct tool_ctx c = { .a = { -1, NULL }, .p = cs->p, .req = req, .server = server,
			      .tool = tool, .args = args, .cc = &cc };

	cc.next = 0;
	for (unsigned i = 0; i < ARRAY_SIZE(cc.e); i++)
		cc.e[i].val = NULL;
	const char *k;
	json_t *v;
	char what[300];

	visit_tool(cs, server, tool, tool_visit, &c);
	if (lifted) {
		if (c.a.decision >= 0)
			consider(into, c.a.rule);
		return;
	}
	snprintf(what, sizeof(what), "tool %s.%s", server, tool);
	if (c.n_named == 0) {
		res->decision = CORDON_DENY;
		res->invariant = "unknown-tool";
		snprintf(res->reason, sizeof(res->reason),
			 "no rule names tool %s.%s: unknown tools are denied", server, tool);
		return;
	}
	if (args && !json_is_object(args)) {
		res->decision = CORDON_DENY;
		res->invariant = "malformed-arguments";
		snprintf(res->reason, sizeof(res->reason), "arguments of %s are not an object", what);
		return;
	}
	if (args)
		json_object_foreach(args, k, v)
			if (!key_known(&c, k)) {
				res->decision = CORDON_DENY;
				res->invariant = "unknown-argument";
				snprintf(res->reason, sizeof(res->reason),
					 "argument '%s' of %s is named by no rule: unknown argument keys are denied",
					 k, what);
				return;
			}
	finish(res, &c.a, what);
}

#define W_RIGHTS (CORDON_FS_WRITE | CORDON_FS_CREATE | CORDON_FS_DELETE | CORDON_FS_CHMOD)

static void inv_consider(const struct inv_ent *e, uint32_t want, uint32_t *best)
{
	const struct pol_invariant *t = pol_invariants();
	uint32_t denied = e->prio ? t[e->prio - 1].denied : W_RIGHTS;

	if ((denied & want) && e->prio < *best)
		*best = e->prio;
}

/*
 * The invariants through the index: literal patterns found by the same
 * prefix walk as rules, globs after a literal-prefix test.  Same answer as
 * pol_invariant_fs (the oracle), which still serves deletes, because a
 * delete is also refused on the ancestors of a protected path.
 */
static const char *invariant_fast(const struct policy *p, const char *path, uint32_t want,
				  const char **why)
{
	const struct pol_index *x = p->idx;
	const struct pol_invariant *t = pol_invariants();
	const struct slot *slot;
	uint32_t best = UINT32_MAX;
	uint64_t h = SMAP_FNV_INIT;

	if (want == CORDON_FS_DELETE)
		return pol_invariant_fs(p, path, want, why);
	slot = smap_get(&x->inv, "/", 1);
	for (uint32_t k = 0; slot && k < slot->n; k++)
		inv_consider(&x->invs[slot->ids[k]], want, &best);
	for (size_t i = 0; path[i]; i++) {
		h = smap_fnv_step(h, (unsigned char)path[i]);
		if (i > 0 && (path[i + 1] == '/' || path[i + 1] == 0)) {
			slot = smap_get_h(&x->inv, path, i + 1, h);
			for (uint32_t k = 0; slot && k < slot->n; k++)
				inv_consider(&x->invs[slot->ids[k]], want, &best);
		}
	}
	for (size_t i = 0; i < x->n_inv_glob; i++) {
		const struct inv_ent *e = &x->invs[x->inv_glob[i]];

		if (e->prio < best && !strncmp(path, e->pat, e->litlen) &&
		    pol_glob_within(path, e->pat))
			inv_consider(e, want, &best);
	}
	if (best == UINT32_MAX)
		return NULL;
	if (best == 0) {
		*why = "cordon's own file (policy, audit log, socket or state)";
		return "cordon-self";
	}
	*why = t[best - 1].why;
	return t[best - 1].id;
}

const char *pol_invariant_fs_indexed(const struct policy *p, const char *path, uint32_t right,
				     const char **why)
{
	return p->idx ? invariant_fast(p, path, right, why) : pol_invariant_fs(p, path, right, why);
}

static void eval_fs(const struct cands *cs, const struct pol_request *req,
		    struct pol_result *res, struct acc *a)
{
	const char *inv, *why = NULL;
	uint32_t want = op_right(req->op);
	struct fs_ctx c = { .a = { -1, NULL }, .path = req->path, .want = want };

	inv = cs->linear || !cs->p->idx ? pol_invariant_fs(cs->p, req->path, want, &why)
					 : invariant_fast(cs->p, req->path, want, &why);
	if (inv) {
		res->decision = CORDON_DENY;
		res->invariant = inv;
		snprintf(res->reason, sizeof(res->reason), "invariant %s: %s is %s", inv,
			 req->path, why);
		a->decision = CORDON_DENY;
		return;
	}
	visit_fs(cs, req->path, fs_visit, &c);
	*a = c.a;
}

/* The event of a request that needs no lifting (an exec's is built where it is lifted). */
static json_t *event_of(const struct pol_request *req)
{
	switch (req->op) {
	case POL_OP_READ:
	case POL_OP_WRITE:
	case POL_OP_CREATE:
	case POL_OP_DELETE:
	case POL_OP_CHMOD:
	case POL_OP_EXEC:
		return pol_event_fs(pol_event_fs_tool(req->op), req->path ?: "", NULL);
	case POL_OP_CONNECT:
		if (req->ev_server && req->ev_tool)
			return pol_event_tool(req->ev_server, req->ev_tool, req->ev_args);
		return pol_event_connect(req->host ?: "", req->port);
	case POL_OP_TOOL:
		return pol_event_tool(req->server ?: "", req->tool ?: "", req->args);
	}
	return NULL;
}

static void eval_op(const struct policy *p, const struct pol_request *req,
		    struct pol_result *res, bool linear, json_t **event);

/*
 * Judge, and when EVENT is given, set *event to the event judged: an exec
 * is lifted once, and what its record keeps is what the rules saw.
 */
static void eval(const struct policy *p, const struct pol_request *req,
		 struct pol_result *res, bool linear, json_t **event)
{
	if (event)
		*event = NULL;
	eval_op(p, req, res, linear, event);
	if (event && !*event)
		*event = event_of(req);
}

static void eval_op(const struct policy *p, const struct pol_request *req,
		    struct pol_result *res, bool linear, json_t **event)
{
	const struct cands cs = { p, linear };
	char what[PATH_MAX + 32];

	memset(res, 0, sizeof(*res));
	res->decision = CORDON_DENY;
	switch (req->op) {
	case POL_OP_READ:
	case POL_OP_WRITE:
	case POL_OP_CREATE:
	case POL_OP_DELETE:
	case POL_OP_CHMOD:
	case POL_OP_EXEC: {
		struct acc a = { -1, NULL };
		struct pol_lifted l[POL_MAX_LIFTED];
		int n;

		if (!req->path || req->path[0] != '/') {
			snprintf(res->reason, sizeof(res->reason), "malformed request: no absolute path");
			return;
		}
		eval_fs(&cs, req, res, &a);
		if (req->op == POL_OP_EXEC && (event || (!res->invariant && a.decision >= 0))) {
			/* Lifted once: for the rules below and for the event judged. */
			n = pol_lift_exec(req->argv, req->cwd, pol_vars_get(&cs.p->vars, "WORKSPACE"), l);
			if (event)
				*event = pol_event_exec(l, n);
		} else {
			n = -1;
		}
		if (res->invariant || a.decision < 0 || req->op != POL_OP_EXEC) {
			if (n > 0)
				pol_lifted_free(l, n);
			if (!res->invariant) {
				snprintf(what, sizeof(what), "%s of %s", pol_op_name(req->op), req->path);
				finish(res, &a, what);
			}
			return;
		}
		snprintf(what, sizeof(what), "%s of %s", pol_op_name(req->op), req->path);
		/* The file may be executed: what the exec means joins the decision. */
		if (n == 0) {
			/* No event (out of memory, or more than can be judged): unknown means deny. */
			res->decision = CORDON_DENY;
			res->rule = NULL;
			snprintf(res->reason, sizeof(res->reason), "exec of %.300s: its event could not "
				 "be built", req->path);
			return;
		}
		for (int i = 0; i < n; i++) {
			struct acc before = a;

			eval_tool(&cs, req, l[i].server, l[i].tool, l[i].args, true, res, &a);
			if (a.rule != before.rule)
				snprintf(what, sizeof(what), "exec of %s (%s.%s)", req->path,
					 l[i].server, l[i].tool);
		}
		pol_lifted_free(l, n);
		finish(res, &a, what);
		return;
	}
	case POL_OP_CONNECT: {
		struct net_ctx c = { .a = { -1, NULL }, .host = req->host, .port = req->port };

		if (!req->host || !*req->host) {
			snprintf(res->reason, sizeof(res->reason), "malformed request: no host");
			return;
		}
		{
			/* Judge only what a connection can name: one host or address. */
			struct pol_host h;
			int bad = pol_host_parse(req->host, &h) < 0 || h.kind == POL_HOST_SUFFIX ||
				  strchr(req->host, '/');

			if (bad) {
				free(h.name);
				snprintf(res->reason, sizeof(res->reason),
					 "malformed request: '%.200s' is not a host name or address",
					 req->host);
				return;
			}
			visit_net(&cs, &h, net_visit, &c);
			free(h.name);
		}
		snprintf(what, sizeof(what), "connect to %s port %u", req->host, req->port);
		{
			const struct pol_rule *net_rule = c.a.rule;

			if (c.a.decision >= 0 && req->ev_server && req->ev_tool) {
				eval_tool(&cs, req, req->ev_server, req->ev_tool, req->ev_args, true,
					  res, &c.a);
				if (c.a.rule != net_rule)
					snprintf(what, sizeof(what), "%s.%s to %s port %u", req->ev_server,
						 req->ev_tool, req->host, req->port);
			}
			finish(res, &c.a, what);
			if (net_rule)
				res->via = net_rule->net.via;
		}
		return;
	}
	case POL_OP_TOOL:
		if (!req->server || !req->tool) {
			snprintf(res->reason, sizeof(res->reason), "malformed request: no tool name");
			return;
		}
		eval_tool(&cs, req, req->server, req->tool, req->args, false, res, NULL);
		return;
	}
	snprintf(res->reason, sizeof(res->reason), "unknown operation");
}

void pol_eval(const struct policy *p, const struct pol_request *req, struct pol_result *res)
{
	eval(p, req, res, false, NULL);
}

void pol_eval_event(const struct policy *p, const struct pol_request *req,
		    struct pol_result *res, json_t **event)
{
	eval(p, req, res, false, event);
}

void pol_eval_linear(const struct policy *p, const struct pol_request *req,
		     struct pol_result *res)
{
	eval(p, req, res, true, NULL);
}
