// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Sentence forms that make rules: who may do what to which files, hosts and
 * tools.  Grammar (docs/constitution.md has it by example):
 *
 *   SUBJECT MODAL ACTION [only with my approval]
 *   SUBJECT must ask [me] before ACTION-ing
 *   Ask [me] before ACTION-ing | TOOL-PHRASE
 *   Never ACTION | Never allow TOOL-PHRASE | Never let SUBJECT ACTION
 *   Do not / Don't let SUBJECT ACTION | Do not allow TOOL-PHRASE
 *
 * Negation is a property of the modal alone: "may" followed by "not" can
 * only be read as the deny modal, since no action starts with "not"; that
 * is what keeps "may not" from ever compiling to an allow.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "en_int.h"
#include "policy.h"

enum {
	R_READ = 1, R_WRITE = 2, R_CREATE = 4, R_DELETE = 8, R_EXEC = 16, R_CHMOD = 32, R_ALL = 63,
};

static const struct verb {
	const char *base;
	const char *gerund;
	unsigned rights;
} fs_verbs[] = {
	{ "change the permissions of", "changing the permissions of", R_CHMOD },
	{ "do anything with", "doing anything with", R_ALL },
	{ "look at", "looking at", R_READ },
	{ "read", "reading", R_READ },
	{ "see", "seeing", R_READ },
	{ "open", "opening", R_READ },
	{ "write", "writing", R_WRITE },
	{ "change", "changing", R_WRITE | R_CREATE | R_DELETE },
	{ "modify", "modifying", R_WRITE },
	{ "edit", "editing", R_WRITE },
	{ "overwrite", "overwriting", R_WRITE },
	{ "create", "creating", R_CREATE },
	{ "add", "adding", R_CREATE },
	{ "delete", "deleting", R_DELETE },
	{ "remove", "removing", R_DELETE },
	{ "run", "running", R_EXEC },
	{ "execute", "executing", R_EXEC },
	{ "chmod", "chmodding", R_CHMOD },
	{ "chown", "chowning", R_CHMOD },
	{ "use", "using", R_ALL },
	{ "touch", "touching", R_ALL },
};

static const char *const right_names[] = { "read", "write", "create", "delete", "exec", "chmod" };

static json_t *rights_json(unsigned rights)
{
	json_t *a = json_array();

	if (rights == R_ALL)
		json_array_append_new(a, json_string("all"));
	else
		for (unsigned b = 0; b < 6; b++)
			if (rights & (1u << b))
				json_array_append_new(a, json_string(right_names[b]));
	return a;
}

static bool fs_verb(struct en_p *p, bool gerund, unsigned *rights)
{
	p->quiet++;
	for (size_t k = 0; k < sizeof(fs_verbs) / sizeof(fs_verbs[0]); k++)
		if (en_words(p, gerund ? fs_verbs[k].gerund : fs_verbs[k].base)) {
			*rights |= fs_verbs[k].rights;
			p->quiet--;
			return true;
		}
	p->quiet--;
	en_fail(p, gerund ? "a verb (reading, changing, running, reaching, calling...)" :
		"a verb (read, change, run, reach, call...)");
	return false;
}

/* "read", "read and change", "read, write and run". */
static bool fs_verbs_list(struct en_p *p, bool gerund, unsigned *rights)
{
	bool last;

	if (!fs_verb(p, gerund, rights))
		return false;
	for (;;) {
		size_t save = p->i;

		if (!en_list_sep(p, &last))
			return true;
		if (!fs_verb(p, gerund, rights)) {
			p->i = save;
			return true;
		}
		if (last)
			return true;
	}
}

/* --- objects and scopes ------------------------------------------------------------ */

/* A file object: absolute paths (abs) or names under the scope's root (rel). */
struct objs {
	json_t *abs;
	json_t *rel;
};

static bool simple_place(struct en_p *p, char *out, size_t len)
{
	static const struct { const char *words, *path; } places[] = {
		{ "the workspace", "${WORKSPACE}" }, { "my workspace", "${WORKSPACE}" },
		{ "my home directory", "${HOME}" }, { "my home", "${HOME}" },
		{ "the home directory", "${HOME}" }, { "the temporary directory", "${TMPDIR}" },
		{ "the temp directory", "${TMPDIR}" },
	};

	for (size_t k = 0; k < sizeof(places) / sizeof(places[0]); k++)
		if (en_words(p, places[k].words)) {
			snprintf(out, len, "%s", places[k].path);
			return true;
		}
	return false;
}

static bool file_name(struct en_p *p, const struct en_tok **t)
{
	const struct en_tok *x = en_peek(p, 0);

	if (x && (x->kind == EN_DOTTED || x->kind == EN_WORD || x->kind == EN_STR) &&
	    !strchr(x->text, '/')) {
		*t = x;
		p->i++;
		return true;
	}
	en_fail(p, "a file name");
	return false;
}

static bool named_set(struct en_p *p, json_t *abs)
{
	for (size_t k = 0; en_named_sets[k].words; k++)
		if (en_words(p, en_named_sets[k].words)) {
			for (size_t j = 0; j < 10 && en_named_sets[k].paths[j]; j++)
				json_array_append_new(abs, json_string(en_named_sets[k].paths[j]));
			return true;
		}
	en_fail(p, "a file, a path or a named set");
	return false;
}

static bool fs_object(struct en_p *p, struct objs *o)
{
	static const char *const roots[] = { "anything", "everything", "any file", "any files",
					     "all files", "files", NULL };
	const struct en_tok *t, *x = en_peek(p, 0);
	const struct en_list *l;
	char buf[4096];

	if (x && x->kind == EN_PATH) {
		p->i++;
		json_array_append_new(o->abs, json_string(x->text));
		return true;
	}
	if (en_words(p, "files named") || en_words(p, "any file named") ||
	    en_words(p, "a file named")) {
		if (!file_name(p, &t))
			return false;
		snprintf(buf, sizeof(buf), "**/%s", t->text);
		json_array_append_new(o->rel, json_string(buf));
		/*
		 * "files named .env and .git": a reader gives every name of the
		 * list the same depth.  The names that follow (a dotted name or a
		 * quoted one, never a path) are at any depth too; a bare word
		 * stops it (it may start another object: "my SSH keys").
		 */
		for (;;) {
			size_t save = p->i;
			const struct en_tok *n;
			bool last;

			if (!en_list_sep(p, &last) || !(n = en_peek(p, 0)) ||
			    !((n->kind == EN_DOTTED || n->kind == EN_STR) && !strchr(n->text, '/'))) {
				p->i = save;
				return true;
			}
			p->i++;
			snprintf(buf, sizeof(buf), "**/%s", n->text);
			json_array_append_new(o->rel, json_string(buf));
			if (last)
				return true;
		}
	}
	/* "any .env file", ".env files" */
	if (x && x->kind == EN_WORD && !strcmp(x->low, "any") && en_peek(p, 1) &&
	    en_peek(p, 1)->kind == EN_DOTTED && en_peek(p, 1)->text[0] == '.' && en_peek(p, 2) &&
	    (!strcmp(en_peek(p, 2)->low, "file") || !strcmp(en_peek(p, 2)->low, "files"))) {
		snprintf(buf, sizeof(buf), "**/%s", en_peek(p, 1)->text);
		p->i += 3;
		json_array_append_new(o->rel, json_string(buf));
		return true;
	}
	if (x && x->kind == EN_DOTTED && x->text[0] == '.' && !strchr(x->text, '/')) {
		p->i++;
		if (en_peek(p, 0) && !strcmp(en_peek(p, 0)->low, "files")) {
			p->i++;
			snprintf(buf, sizeof(buf), "**/%s", x->text);
		} else {
			snprintf(buf, sizeof(buf), "%s", x->text);
		}
		json_array_append_new(o->rel, json_string(buf));
		return true;
	}
	for (size_t k = 0; roots[k]; k++)
		if (en_words(p, roots[k])) {
			json_array_append_new(o->rel, json_string(""));
			return true;
		}
	if (simple_place(p, buf, sizeof(buf))) {
		json_array_append_new(o->abs, json_string(buf));
		return true;
	}
	if ((l = en_list_ref(p, true))) {
		snprintf(buf, sizeof(buf), "@%s", l->key);
		json_array_append_new(o->abs, json_string(buf));
		return true;
	}
	return named_set(p, o->abs);
}

/*
 * A list that names some files at any depth ("files named .env", ".env
 * files") and a bare dotted name at the top only (".git") reads to most as
 * one depth for all: ".env and .npmrc files" left a nested .env out of a
 * deny.  Refused at the bare name, asking which is meant.
 */
static bool mixed_depth(struct en_p *p, const struct objs *o, size_t first_bare_at)
{
	size_t k;
	json_t *v;
	bool deep = false, bare = false;

	json_array_foreach(o->rel, k, v) {
		const char *r = json_string_value(v);

		if (!strncmp(r, "**/", 3))
			deep = true;
		else if (*r)
			bare = true;
	}
	if (!(deep && bare))
		return false;
	en_semantic(p, first_bare_at, "a bare name and files named at any depth in one list: say "
		    "\"files named X\" (X at any depth) or \"./X\" (the top one) for each");
	return true;
}

static bool fs_objects(struct en_p *p, struct objs *o)
{
	size_t bare_at = SIZE_MAX;
	bool last;

	for (bool first = true;; first = false) {
		size_t save = p->i, at, nrel = json_array_size(o->rel);

		if (!first && !en_list_sep(p, &last))
			return true;
		at = p->i;
		if (!fs_object(p, o)) {
			if (first || last || p->sem)
				return false;
			/* A comma that ends the list: ", but never ...", ", except ...". */
			p->i = save;
			return true;
		}
		if (bare_at == SIZE_MAX && json_array_size(o->rel) == nrel + 1 &&
		    *json_string_value(json_array_get(o->rel, nrel)) &&
		    strncmp(json_string_value(json_array_get(o->rel, nrel)), "**/", 3))
			bare_at = at;
		if (bare_at != SIZE_MAX && mixed_depth(p, o, bare_at))
			return false;
		if (!first && last)
			return true;
	}
}

/* "in the workspace", "in /srv", "under /srv", "anywhere": the root of relative objects. */
static bool fs_scope(struct en_p *p, char *root, size_t len, bool *given)
{
	const struct en_tok *t;

	*given = true;
	if (en_word(p, "anywhere") || en_word(p, "everywhere")) {
		snprintf(root, len, "/");
		return true;
	}
	if (en_word(p, "in") || en_word(p, "under") || en_word(p, "inside") || en_word(p, "below")) {
		if (simple_place(p, root, len))
			return true;
		if (!en_kind(p, EN_PATH, "a path", &t))
			return false;
		snprintf(root, len, "%s", t->text);
		return true;
	}
	*given = false;
	snprintf(root, len, "/");
	return true;
}

static void resolve(json_t *paths, const struct objs *o, const char *root)
{
	size_t k;
	json_t *v;
	char buf[4096];

	json_array_foreach(o->abs, k, v)
		json_array_append(paths, v);
	json_array_foreach(o->rel, k, v) {
		const char *r = json_string_value(v);

		if (!*r)
			snprintf(buf, sizeof(buf), "%s", root);
		else
			snprintf(buf, sizeof(buf), "%s%s%s", root,
				 root[strlen(root) - 1] == '/' ? "" : "/", r);
		json_array_append_new(paths, json_string(buf));
	}
}

static json_t *fs_rule(const char *decision, json_t *paths, unsigned rights)
{
	return json_pack("{s:s, s:{s:o, s:o}}", "decision", decision, "fs", "paths", paths,
			 "rights", rights_json(rights));
}

static bool fs_action(struct en_p *p, struct en_frag *f, const char *decision, bool gerund)
{
	struct objs o = { json_array(), json_array() }, ex = { json_array(), json_array() };
	char root[4096];
	size_t ex_at = 0, scope_at, never_at;
	unsigned rights = 0, never = 0;
	bool given, ok = false;
	json_t *paths;

	if (!fs_verbs_list(p, gerund, &rights))
		goto out;
	/* "read and write in the workspace": no object but a scope is its root. */
	if (en_peek(p, 0) && en_peek(p, 0)->kind == EN_WORD &&
	    (!strcmp(en_peek(p, 0)->low, "in") || !strcmp(en_peek(p, 0)->low, "under") ||
	     !strcmp(en_peek(p, 0)->low, "anywhere") || !strcmp(en_peek(p, 0)->low, "everywhere")))
		json_array_append_new(o.rel, json_string(""));
	else if (!fs_objects(p, &o))
		goto out;
	scope_at = p->i;
	if (!fs_scope(p, root, sizeof(root), &given))
		goto out;
	if (given && json_array_size(o.abs)) {
		en_semantic(p, scope_at, "a scope (\"in ...\", \"anywhere\") applies to \"anything\", "
			    "\"files named X\" and the like, not to a path or a named set");
		goto out;
	}
	{
		const struct en_tok *c = en_peek(p, 0), *n = en_peek(p, 1);

		if (c && c->kind == EN_COMMA && n && n->kind == EN_WORD &&
		    (!strcmp(n->low, "except") || !strcmp(n->low, "but") || !strcmp(n->low, "other") ||
		     !strcmp(n->low, "unless") || !strcmp(n->low, "and")))
			p->i++;
	}
	ex_at = p->i;
	if (en_word(p, "except") || en_words(p, "but not") || en_words(p, "other than") ||
	    en_word(p, "unless")) {
		bool unless = !strcmp(p->s->t[ex_at].low, "unless");

		if (!fs_objects(p, &ex)) {
			if (unless)
				en_semantic(p, ex_at, "\"unless\" must name files here (\"unless\" "
					    "with a condition is not in the language)");
			goto out;
		}
		if (strcmp(decision, "allow")) {
			en_semantic(p, ex_at, "an exception cannot narrow a %s: the strongest decision "
				    "wins, so the excepted files would still be %s; name only what the "
				    "%s covers, e.g. \"Never read /etc/shadow.\"", decision,
				    !strcmp(decision, "deny") ? "denied" : "escalated", decision);
			goto out;
		}
	}
	/* "..., but never change them": a deny of those rights on the same files. */
	never_at = p->i;
	if (en_words(p, "but never") || en_words(p, "and never")) {
		if (!fs_verbs_list(p, false, &never) || !(en_word(p, "them") || en_word(p, "it")))
			goto out;
		if (strcmp(decision, "allow")) {
			en_semantic(p, never_at, "\"but never\" narrows an allow only");
			goto out;
		}
	}
	paths = json_array();
	resolve(paths, &o, root);
	if (never)
		json_array_append_new(f->rules, fs_rule("deny", json_deep_copy(paths), never));
	json_array_append_new(f->rules, fs_rule(decision, paths, rights));
	if (json_array_size(ex.abs) + json_array_size(ex.rel)) {
		/* The exception: a deny for the same rights, which beats the allow. */
		paths = json_array();
		resolve(paths, &ex, root);
		json_array_append_new(f->rules, fs_rule("deny", paths, rights));
	}
	ok = true;
out:
	json_decref(o.abs);
	json_decref(o.rel);
	json_decref(ex.abs);
	json_decref(ex.rel);
	return ok;
}

/* --- network ----------------------------------------------------------------------- */

static bool host_item(struct en_p *p, json_t *hosts)
{
	const struct en_tok *t = en_peek(p, 0);
	const struct en_list *l;
	struct pol_host h;
	char buf[300];

	if (en_words(p, "any subdomain of")) {
		if (!en_kind(p, EN_DOTTED, "a host name", &t))
			return false;
		snprintf(buf, sizeof(buf), "*.%s", t->text);
		json_array_append_new(hosts, json_string(buf));
		json_array_append_new(hosts, json_string(t->text));
		return true;
	}
	if (t && ((t->kind == EN_DOTTED && !strchr(t->text, '_')) ||
		  (t->kind == EN_WORD && !strcmp(t->low, "localhost")))) {
		if (pol_host_parse(t->text, &h) < 0) {
			en_fail(p, "a host name, an address or a CIDR");
			return false;
		}
		free(h.name);
		p->i++;
		json_array_append_new(hosts, json_string(t->text));
		return true;
	}
	if ((l = en_list_ref(p, false))) {
		snprintf(buf, sizeof(buf), "@%s", l->key);
		json_array_append_new(hosts, json_string(buf));
		return true;
	}
	en_fail(p, "a host");
	return false;
}

static bool host_list(struct en_p *p, json_t *hosts)
{
	bool last;

	if (!host_item(p, hosts))
		return false;
	while (en_list_sep(p, &last)) {
		if (!host_item(p, hosts))
			return false;
		if (last)
			break;
	}
	return true;
}

static bool port_num(struct en_p *p, long *v)
{
	const struct en_tok *t;
	char *end;

	if (!en_kind(p, EN_NUM, "a port number", &t))
		return false;
	*v = strtol(t->text, &end, 10);
	if (*end || *v < 1 || *v > 65535) {
		en_semantic(p, p->i - 1, "a port is a whole number from 1 to 65535");
		return false;
	}
	return true;
}

/* Ports: json array, or NULL for any port; *given if the sentence said. */
static bool net_ports(struct en_p *p, json_t **ports, bool *given)
{
	long a, b;
	bool last;

	*given = true;
	if (en_words(p, "over https")) {
		*ports = json_pack("[i]", 443);
		return true;
	}
	if (en_words(p, "over http")) {
		*ports = json_pack("[i]", 80);
		return true;
	}
	if (en_words(p, "on any port")) {
		*ports = NULL;
		return true;
	}
	if (en_words(p, "on ports")) {
		*ports = json_array();
		do {
			if (!port_num(p, &a))
				return false;
			if (en_word(p, "to")) {
				char r[32];

				if (!port_num(p, &b))
					return false;
				snprintf(r, sizeof(r), "%ld-%ld", a, b);
				json_array_append_new(*ports, json_string(r));
			} else {
				json_array_append_new(*ports, json_integer(a));
			}
		} while (en_list_sep(p, &last));
		return true;
	}
	if (en_words(p, "on port")) {
		if (!port_num(p, &a))
			return false;
		*ports = json_pack("[i]", (int)a);
		return true;
	}
	*given = false;
	*ports = NULL;
	return true;
}

static bool is_address(const char *h)
{
	struct pol_host ph;
	bool a;

	if (h[0] == '@' || pol_host_parse(h, &ph) < 0)
		return false;
	a = ph.kind == POL_HOST_CIDR4 || ph.kind == POL_HOST_CIDR6;
	free(ph.name);
	return a;
}

static bool is_cred_host(const struct en_ctx *ctx, const char *h)
{
	size_t k;
	json_t *v;

	json_array_foreach(ctx->cred_hosts, k, v)
		if (!strcmp(json_string_value(v), h))
			return true;
	return false;
}

static void net_rule(struct en_frag *f, const char *decision, json_t *hosts, json_t *ports,
		     const char *via)
{
	json_t *net = json_pack("{s:O}", "hosts", hosts);

	if (ports)
		json_object_set(net, "ports", ports);
	if (via)
		json_object_set_new(net, "via", json_string(via));
	json_array_append_new(f->rules, json_pack("{s:s, s:o}", "decision", decision, "net", net));
}

/*
 * Where a connection travels.  An allow names the path: "directly" (only
 * addresses: the kernel judges it), the credential proxy for hosts of a
 * credential (split into a rule of their own), else the egress broker.  A
 * deny or an escalation names none unless the sentence does, so that it
 * covers every path.
 */
static void net_emit(struct en_p *p, struct en_frag *f, const char *decision, json_t *hosts,
		     json_t *ports, const char *via)
{
	json_t *cred = json_array(), *rest = json_array();
	size_t k;
	json_t *v;

	if (via || strcmp(decision, "allow")) {
		net_rule(f, decision, hosts, ports, via);
		goto out;
	}
	json_array_foreach(hosts, k, v)
		json_array_append(is_cred_host(p->ctx, json_string_value(v)) ? cred : rest, v);
	if (json_array_size(cred))
		net_rule(f, decision, cred, ports, "credential-proxy");
	if (json_array_size(rest)) {
		bool addrs = true;

		json_array_foreach(rest, k, v)
			addrs &= is_address(json_string_value(v));
		net_rule(f, decision, rest, ports, addrs ? NULL : "egress");
	}
out:
	json_decref(cred);
	json_decref(rest);
}

static bool net_action(struct en_p *p, struct en_frag *f, const char *decision, bool gerund)
{
	static const char *const base[] = { "reach", "connect to", "talk to", "access", NULL };
	static const char *const ger[] = { "reaching", "connecting to", "talking to", "accessing",
					   NULL };
	json_t *hosts = json_array(), *ports = NULL;
	const char *via = NULL;
	bool given, ok = false, verb = false;
	size_t k, direct_at = 0;
	json_t *v;

	p->quiet++;
	for (k = 0; !verb && base[k]; k++)
		verb = en_words(p, gerund ? ger[k] : base[k]);
	p->quiet--;
	if (!verb)
		en_fail(p, gerund ? "a verb (reading, changing, running, reaching, calling...)" :
			"a verb (read, change, run, reach, call...)");
	if (!verb || !host_list(p, hosts) || !net_ports(p, &ports, &given))
		goto out;
	direct_at = p->i;
	if (en_word(p, "directly"))
		via = "direct";
	else if (en_words(p, "through the egress proxy") || en_words(p, "through the egress broker"))
		via = "egress";
	else if (en_words(p, "through the credential proxy"))
		via = "credential-proxy";
	if (via && !strcmp(via, "direct"))
		json_array_foreach(hosts, k, v)
			if (!is_address(json_string_value(v))) {
				en_semantic(p, direct_at, "only addresses and CIDRs can be reached "
					    "directly (the kernel sees no names); drop \"directly\" "
					    "for %s", json_string_value(v));
				goto out;
			}
	if (!given && !strcmp(decision, "allow"))
		ports = json_pack("[i]", 443);
	net_emit(p, f, decision, hosts, ports, via);
	ok = true;
out:
	json_decref(hosts);
	json_decref(ports);
	return ok;
}

/* --- the action, and the rule forms ------------------------------------------------ */

typedef bool (*action_fn)(struct en_p *p, struct en_frag *f, const char *decision, bool gerund);

/*
 * An action about files, hosts or a tool.  All three readings are tried: a
 * sentence two of them read differently (a list named like a tool set) is
 * refused rather than resolved by the order of this table.
 */
bool en_action(struct en_p *p, struct en_frag *f, const char *decision, bool gerund)
{
	static const action_fn fns[] = { fs_action, net_action, en_tool_action };
	static const char *const what[] = { "files", "hosts", "a tool" };
	size_t n0 = json_array_size(f->rules), start = p->i;
	struct en_p best = *p, sem = { .sem = false };
	json_t *got = NULL;
	int n = 0, first = 0;

	for (int k = 0; k < 3; k++) {
		struct en_p q = *p;
		json_t *mine = json_array();
		bool ok = fns[k](&q, f, decision, gerund) && en_eof(&q) && !q.sem;

		while (json_array_size(f->rules) > n0) {
			json_array_append(mine, json_array_get(f->rules, n0));
			json_array_remove(f->rules, n0);
		}
		if (q.sem && !sem.sem)
			sem = q;
		if (!ok) {
			en_keep_furthest(&best, &q);
			json_decref(mine);
			continue;
		}
		if (n++ == 0) {
			got = mine;
			first = k;
			en_keep_furthest(&q, &best);
			best = q;
			continue;
		}
		if (!json_equal(got, mine)) {
			json_decref(mine);
			json_decref(got);
			en_semantic(p, start, "this can be read two ways (as %s and as %s); say it "
				    "more plainly", what[first], what[k]);
			return false;
		}
		json_decref(mine);
	}
	if (n) {
		json_array_extend(f->rules, got);
		json_decref(got);
		*p = best;
		return true;
	}
	if (sem.sem) {
		*p = sem;
		return false;
	}
	*p = best;
	return false;
}

static bool subject(struct en_p *p)
{
	bool ok;

	p->quiet++;
	ok = en_words(p, "the agent") || en_words(p, "the agents") || en_word(p, "agents") ||
	     en_word(p, "it");
	p->quiet--;
	if (!ok)
		en_fail(p, "\"The agent\"");
	return ok;
}

static bool modal_deny(struct en_p *p)
{
	static const char *const m[] = { "may not", "must not", "cannot", "can not", "can't",
					 "may never", "must never", "is not allowed to",
					 "are not allowed to", "is never allowed to", NULL };

	p->quiet++;
	for (size_t k = 0; m[k]; k++)
		if (en_words(p, m[k])) {
			p->quiet--;
			return true;
		}
	p->quiet--;
	return false;
}

static bool modal_allow(struct en_p *p)
{
	bool ok;

	p->quiet++;
	ok = en_word(p, "may") || en_word(p, "can") || en_words(p, "is allowed to") ||
	     en_words(p, "are allowed to");
	p->quiet--;
	if (!ok)
		en_fail(p, "\"may\", \"may not\" or \"must ask before\"");
	return ok;
}

static bool approval_tail(struct en_p *p)
{
	return en_words(p, "only with my approval") || en_words(p, "only after i approve") ||
	       en_words(p, "only with approval") || en_words(p, "only if i approve");
}

/*
 * An action followed by "only with my approval" is an escalation: read the
 * action on the tokens before the tail.
 */
static bool form_subject_modal(struct en_p *p, struct en_frag *f)
{
	struct en_sentence cut = *p->s;
	struct en_p q;
	size_t start;

	if (!subject(p))
		return false;
	if (modal_deny(p))
		return en_action(p, f, "deny", false);
	if (!modal_allow(p))
		return false;
	start = p->i;
	for (size_t k = start; k < p->s->n; k++) {
		struct en_p t = { .s = p->s, .ctx = p->ctx, .i = k };

		if (approval_tail(&t) && en_eof(&t)) {
			cut.n = k;
			q = (struct en_p){ .s = &cut, .ctx = p->ctx, .i = start };
			if (!en_action(&q, f, "escalate", false)) {
				p->far = q.far;
				memcpy(p->expect, q.expect, sizeof(p->expect));
				p->n_expect = q.n_expect;
				p->sem = q.sem, p->sem_at = q.sem_at;
				memcpy(p->sem_msg, q.sem_msg, sizeof(p->sem_msg));
				return false;
			}
			p->i = p->s->n;
			return true;
		}
	}
	return en_action(p, f, "allow", false);
}

static bool before_what(struct en_p *p, struct en_frag *f)
{
	size_t save = p->i;

	if (en_tool_np(p, f, "escalate") && en_eof(p))
		return true;
	if (p->sem)
		return false;
	json_array_clear(f->rules);
	p->i = save;
	return en_action(p, f, "escalate", true);
}

static bool form_ask(struct en_p *p, struct en_frag *f)
{
	if (subject(p)) {
		if (!en_words(p, "must ask") && !en_words(p, "has to ask"))
			return false;
	} else if (!en_word(p, "ask")) {
		return false;
	}
	(void)en_word(p, "me");
	if (!en_word(p, "before"))
		return false;
	return before_what(p, f);
}

static bool form_never(struct en_p *p, struct en_frag *f)
{
	size_t save;

	if (!en_word(p, "never"))
		return false;
	save = p->i;
	if (en_word(p, "allow")) {
		if (en_tool_np(p, f, "deny") && en_eof(p))
			return true;
		if (p->sem)
			return false;
		json_array_clear(f->rules);
		p->i = save;
	}
	if (en_word(p, "let")) {
		if (!subject(p))
			return false;
		return en_action(p, f, "deny", false);
	}
	return en_action(p, f, "deny", false);
}

static bool form_do_not(struct en_p *p, struct en_frag *f)
{
	if (!en_words(p, "do not") && !en_word(p, "don't"))
		return false;
	if (en_word(p, "allow"))
		return en_tool_np(p, f, "deny");
	if (!en_word(p, "let") || !subject(p))
		return false;
	return en_action(p, f, "deny", false);
}


const en_form_fn en_forms[] = {
	form_subject_modal, form_ask, form_never, form_do_not,
	en_form_list, en_form_budget, en_form_limits, en_form_price, en_form_wait, en_form_meta,
	en_form_cred,
};
const size_t en_n_forms = sizeof(en_forms) / sizeof(en_forms[0]);
