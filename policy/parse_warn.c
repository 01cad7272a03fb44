// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Warnings about a policy that loads: what it says that cannot be what its
 * author meant.
 */
#define _GNU_SOURCE
#include <limits.h>
#include "index.h"
#include "parse_warn.h"
#include "pctx.h"
#include "policy.h"
#include "smap.h"
#include "util.h"

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

/* The bytes of a path before its first component with a glob ("/" at least). */
static size_t literal_len(const char *path)
{
	const char *g = strpbrk(path, "*?[");
	size_t n;

	if (!g)
		return strlen(path);
	while (g > path && g[-1] != '/')
		g--;
	n = (size_t)(g - path);
	while (n > 1 && path[n - 1] == '/')
		n--;
	return n ? n : 1;
}

/*
 * Is every object fs path (or pattern) a names also one pattern or path b
 * names?  For a literal a, b's pattern is matched against it.  For a
 * pattern a, only what is sure: b literal and a's literal part below it, or
 * b the same pattern or a component prefix of it ("*" in b does not cover
 * "**" or "?" in a).  Errs towards "no": a warning missed, never a false one.
 */
static bool path_covers(const char *b, const char *a)
{
	bool ag = pol_has_glob(a), bg = pol_has_glob(b);
	size_t al;
	char lit[PATH_MAX];

	if (!ag)
		return bg ? pol_glob_within(a, b) : pol_path_within(a, b);
	if (bg)
		return pol_path_within(a, b);
	al = literal_len(a);
	if (al >= sizeof(lit))
		return false;
	memcpy(lit, a, al);
	lit[al] = 0;
	return pol_path_within(lit, b);
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
				in = path_covers(b->fs.paths[j], a->fs.paths[i]);
			if (!in)
				return false;
		}
		return true;
	case POL_NET:
		if (!a->net.n_hosts)
			return false;
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

/*
 * Where a rule that covers another can be found from the other's first
 * path or host: a rule that covers rule a covers a's first subject, so it
 * is under one of that subject's keys.  Keys: "f" and a path's literal
 * part (the rule's paths; a rule covering /a/b/c has a path at /a/b/c or
 * above, or a pattern whose literal part is there), "n" and a host name,
 * "s" and a suffix (".example.com"), a CIDR bucket, "t" and server.tool.
 * Rules that share a key and are alike for covering (one path, the same
 * decision and rights; one host, the same decision and ports; a tool rule
 * without conditions and the same decision) are entered once, so a policy
 * that repeats one root ten thousand times costs ten thousand probes, not
 * a hundred million: the check stays near-linear in the rules.
 */
struct shadow_idx {
	struct smap keys;
	uint8_t v4[33], v6[129];        /* CIDR prefix lengths present */
};

static bool alike(const struct pol_rule *x, const struct pol_rule *y)
{
	if (x->kind != y->kind || x->decision != y->decision)
		return false;
	switch (x->kind) {
	case POL_FS:
		return x->fs.n_paths == 1 && y->fs.n_paths == 1 && x->fs.rights == y->fs.rights &&
		       !strcmp(x->fs.paths[0], y->fs.paths[0]);    /* a key is a pattern's literal part */
	case POL_NET:
		if (x->net.n_hosts != 1 || y->net.n_hosts != 1 || x->net.n_ports != y->net.n_ports)
			return false;
		for (size_t i = 0; i < x->net.n_ports; i++)
			if (x->net.ports[i].lo != y->net.ports[i].lo ||
			    x->net.ports[i].hi != y->net.ports[i].hi)
				return false;
		return true;
	case POL_TOOL:
		return true;
	}
	return false;
}

/*
 * A key is stored behind its rule's decision byte, and allows not at all:
 * an allow shadows nothing, and a rule looks only among the stronger.
 */
static int key_add(struct smap *m, const struct policy *p, const char *key, size_t len,
		   const struct pol_rule *r)
{
	char dk[PATH_MAX + 16];
	const struct slot *s;

	if (r->decision == CORDON_ALLOW || len + 1 > sizeof(dk))
		return 0;
	dk[0] = (char)('0' + r->decision);
	memcpy(dk + 1, key, len);
	s = smap_get(m, dk, len + 1);
	/* Alike rules are few per key (3 decisions x 64 rights); a list of all would not be. */
	for (uint32_t k = 0; s && k < s->n; k++)
		if (alike(&p->rules[s->ids[k]], r))
			return 0;
	return smap_add(m, dk, len + 1, r->id);
}

static int cidr_key(char key[20], const struct pol_host *h, unsigned prefix)
{
	key[0] = 'c';
	pol_index_cidr_key((uint8_t *)key + 1, h->kind == POL_HOST_CIDR4 ? 4 : 6, h->addr, prefix);
	return 19;
}

/*
 * A pattern without "**" that has a literal component after its first glob
 * ("/w/ *" + "/secret"): the last such component and its index.  Whatever
 * it covers has that very name at that index, so it is keyed there ("k",
 * the index, the name) rather than under its literal part, where ten
 * thousand "/w/ *" + "/xN" would all meet every path below /w.
 */
static bool glob_anchor(const char *path, unsigned *index, const char **name, size_t *len)
{
	bool seen_glob = false, found = false;
	unsigned j = 0;

	for (const char *c = path; *c; j++) {
		size_t n;

		while (*c == '/')
			c++;
		if (!*c)
			break;
		n = strcspn(c, "/");
		if (n == 2 && c[0] == '*' && c[1] == '*')
			return false;
		if (memchr(c, '*', n) || memchr(c, '?', n) || memchr(c, '[', n)) {
			seen_glob = true;
		} else if (seen_glob) {
			*index = j;
			*name = c;
			*len = n;
			found = true;
		}
		c += n;
	}
	return found && j < 256;
}

static size_t anchor_key(char *key, unsigned index, const char *name, size_t len)
{
	key[0] = 'k';
	key[1] = (char)index;
	memcpy(key + 2, name, len);
	return len + 2;
}

static int shadow_idx_build(struct shadow_idx *x, const struct policy *p)
{
	char key[PATH_MAX + 8];
	int r = 0;

	for (size_t i = 0; i < p->n_rules && !r; i++) {
		const struct pol_rule *ru = &p->rules[i];

		switch (ru->kind) {
		case POL_FS:
			for (size_t j = 0; j < ru->fs.n_paths && !r; j++) {
				size_t n = literal_len(ru->fs.paths[j]), al = 0;
				const char *an = NULL;
				unsigned ai = 0;

				if (n + 1 >= sizeof(key))
					continue;
				if (glob_anchor(ru->fs.paths[j], &ai, &an, &al)) {
					r = key_add(&x->keys, p, key, anchor_key(key, ai, an, al), ru);
					continue;
				}
				key[0] = 'f';
				memcpy(key + 1, ru->fs.paths[j], n);
				r = key_add(&x->keys, p, key, n + 1, ru);
			}
			break;
		case POL_NET:
			for (size_t j = 0; j < ru->net.n_hosts && !r; j++) {
				const struct pol_host *h = &ru->net.hosts[j];

				if (h->kind == POL_HOST_NAME || h->kind == POL_HOST_SUFFIX) {
					size_t n = strlen(h->name);

					if (n + 1 >= sizeof(key))
						continue;
					key[0] = h->kind == POL_HOST_NAME ? 'n' : 's';
					memcpy(key + 1, h->name, n);
					r = key_add(&x->keys, p, key, n + 1, ru);
				} else {
					(h->kind == POL_HOST_CIDR4 ? x->v4 : x->v6)[h->prefix] = 1;
					r = key_add(&x->keys, p, key, (size_t)cidr_key(key, h, h->prefix), ru);
				}
			}
			break;
		case POL_TOOL:
			if (ru->tool.n_conds)
				break;  /* a rule with conditions covers nothing (covers()) */
			if ((size_t)snprintf(key, sizeof(key), "t%s.%s", ru->tool.server, ru->tool.tool) <
			    sizeof(key))
				r = key_add(&x->keys, p, key, strlen(key), ru);
			break;
		}
	}
	return r;
}

struct shadow_q {
	const struct policy *p;
	const struct pol_rule *a;
	const struct pol_rule *best;    /* the covering rule of lowest id */
};

static void try_key(struct shadow_q *q, const struct smap *m, const char *key, size_t len)
{
	char dk[PATH_MAX + 16];

	if (len + 1 > sizeof(dk))
		return;
	memcpy(dk + 1, key, len);
	for (uint32_t d = q->a->decision + 1; d <= CORDON_DENY; d++) {
		const struct slot *s;

		dk[0] = (char)('0' + d);
		s = smap_get(m, dk, len + 1);
		for (uint32_t k = 0; s && k < s->n; k++) {
			const struct pol_rule *b = &q->p->rules[s->ids[k]];

			if (b == q->a || (q->best && b->id >= q->best->id))
				continue;
			if (covers(b, q->a))
				q->best = b;
		}
	}
}

/* The stronger rule of lowest id that matches every request a matches, or NULL. */
static const struct pol_rule *shadowing(const struct shadow_idx *x, const struct policy *p,
					const struct pol_rule *a)
{
	struct shadow_q q = { p, a, NULL };
	char key[PATH_MAX + 8];

	switch (a->kind) {
	case POL_FS: {
		const char *path;
		size_t n;

		if (!a->fs.n_paths)
			return NULL;
		path = a->fs.paths[0];
		n = literal_len(path);
		if (n + 1 >= sizeof(key))
			return NULL;
		key[0] = 'f';
		memcpy(key + 1, path, n);
		/* "/" and each ancestor of the literal part, then itself. */
		try_key(&q, &x->keys, "f/", 2);
		for (size_t i = 1; i <= n; i++)
			if (i == n || path[i] == '/')
				try_key(&q, &x->keys, key, i + 1);
		/* Each component at its index: the anchored patterns. */
		{
			unsigned j = 0;

			for (const char *cp = path; *cp && j < 256; j++) {
				size_t cn;

				while (*cp == '/')
					cp++;
				if (!*cp)
					break;
				cn = strcspn(cp, "/");
				try_key(&q, &x->keys, key, anchor_key(key, j, cp, cn));
				cp += cn;
			}
		}
		break;
	}
	case POL_NET: {
		const struct pol_host *h;

		if (!a->net.n_hosts)
			return NULL;
		h = &a->net.hosts[0];
		if (h->kind == POL_HOST_NAME || h->kind == POL_HOST_SUFFIX) {
			size_t n = strlen(h->name);

			if (n + 1 >= sizeof(key))
				return NULL;
			if (h->kind == POL_HOST_NAME) {
				key[0] = 'n';
				memcpy(key + 1, h->name, n);
				try_key(&q, &x->keys, key, n + 1);
			}
			/* ".b.c", ".c": each suffix at a label boundary (a suffix's own first). */
			for (const char *d = h->kind == POL_HOST_SUFFIX ? h->name : strchr(h->name, '.');
			     d; d = strchr(d + 1, '.')) {
				key[0] = 's';
				memcpy(key + 1, d, strlen(d));
				try_key(&q, &x->keys, key, strlen(d) + 1);
			}
		} else {
			const uint8_t *have = h->kind == POL_HOST_CIDR4 ? x->v4 : x->v6;

			for (unsigned pl = 0; pl <= h->prefix; pl++)
				if (have[pl])
					try_key(&q, &x->keys, key, (size_t)cidr_key(key, h, pl));
		}
		break;
	}
	case POL_TOOL: {
		const char *sv[2] = { a->tool.server, "*" }, *tl[2] = { a->tool.tool, "*" };

		for (int i = 0; i < 2; i++)
			for (int j = 0; j < 2; j++)
				if ((size_t)snprintf(key, sizeof(key), "t%s.%s", sv[i], tl[j]) < sizeof(key))
					try_key(&q, &x->keys, key, strlen(key));
		break;
	}
	}
	return q.best;
}

int parse_shadowing(const struct policy *p, bool linear, uint32_t *out)
{
	struct shadow_idx x = { 0 };

	if (!linear && shadow_idx_build(&x, p) < 0) {
		smap_free(&x.keys);
		return -ENOMEM;
	}
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct pol_rule *a = &p->rules[i], *b = NULL;

		if (!linear) {
			b = shadowing(&x, p, a);
		} else {
			for (size_t j = 0; j < p->n_rules && !b; j++)
				if (j != i && p->rules[j].decision > a->decision &&
				    covers(&p->rules[j], a))
					b = &p->rules[j];
		}
		out[i] = b ? b->id : UINT32_MAX;
	}
	smap_free(&x.keys);
	return 0;
}

void parse_warn_shadowed(struct pctx *c, struct policy *p)
{
	struct shadow_idx x = { 0 };

	if (shadow_idx_build(&x, p) < 0) {
		smap_free(&x.keys);
		return;         /* out of memory: no warnings rather than wrong ones */
	}
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct pol_rule *a = &p->rules[i], *b = shadowing(&x, p, a);
		char ptr[64];

		if (!b)
			continue;
		snprintf(ptr, sizeof(ptr), "/rules/%zu", i);
		pctx_diag(c, POL_WARNING, ptr, 0,
			  "rule '%s' (%s) is shadowed by rule '%s' (%s, line %d): it can never decide",
			  a->name, pol_decision_name(a->decision), b->name,
			  pol_decision_name(b->decision), b->pos.line);
	}
	smap_free(&x.keys);
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
void parse_warn_uncredentialed(struct pctx *c, struct policy *p)
{
	struct smap named = { 0 };      /* every credential's hosts: one probe a host */

	for (size_t k = 0; k < p->n_creds; k++)
		for (size_t j = 0; j < p->creds[k].n_hosts; j++)
			if (smap_add(&named, p->creds[k].hosts[j], strlen(p->creds[k].hosts[j]), 0) < 0) {
				smap_free(&named);
				return;         /* out of memory: no warning rather than a wrong one */
			}
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct pol_rule *r = &p->rules[i];

		if (r->kind != POL_NET || r->decision != CORDON_ALLOW || r->net.via != POL_VIA_CRED_PROXY)
			continue;
		for (size_t h = 0; h < r->net.n_hosts; h++) {
			const struct pol_host *ho = &r->net.hosts[h];
			char ptr[64];

			if (ho->kind != POL_HOST_NAME && ho->kind != POL_HOST_SUFFIX)
				continue;
			if (smap_get(&named, ho->name, strlen(ho->name)))
				continue;
			snprintf(ptr, sizeof(ptr), "/rules/%zu", i);
			pctx_diag(c, POL_WARNING, ptr, 0,
				  "rule '%s' sends %s%s through the credential proxy, and no credential "
				  "names it: every request to it is refused", r->name,
				  ho->kind == POL_HOST_SUFFIX ? "*" : "", ho->name);
		}
	}
	smap_free(&named);
}


/* --- rules that cannot do what they say ------------------------------------------- */

#define WRITE_RIGHTS (CORDON_FS_WRITE | CORDON_FS_CREATE | CORDON_FS_DELETE | CORDON_FS_CHMOD)

/*
 * The rights of `rights` that an invariant denies on all of `path`, and one
 * such invariant in *inv, as pol_eval judges invariants (through the
 * index); a pattern by its text, as if it were a path (so an allow of the
 * pattern /home, "*", .ssh is caught).  Delete is judged with write: every
 * invariant that denies writing denies deleting, and a delete request is
 * also refused above a protected path, which is not overriding the rule.
 */
static uint32_t overridden(const struct policy *p, const char *path, uint32_t rights,
			   const char **inv, const char **why)
{
	static const uint32_t bits[] = { CORDON_FS_READ, CORDON_FS_WRITE, CORDON_FS_CREATE,
					 CORDON_FS_EXEC, CORDON_FS_CHMOD };
	uint32_t out = 0;
	const char *w0 = NULL;

	/* Most paths meet no invariant: one probe for all the rights says so. */
	if (!pol_invariant_fs_indexed(p, path, rights & ~CORDON_FS_DELETE, &w0))
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(bits); i++) {
		const char *id, *w = NULL;

		if (!(rights & bits[i]))
			continue;
		/* Through the index: a scan of the invariants per path made a check quadratic-slow. */
		id = pol_invariant_fs_indexed(p, path, bits[i], &w);
		if (!id)
			continue;
		out |= bits[i];
		if (!*inv) {
			*inv = id;
			*why = w;
		}
	}
	if ((out & CORDON_FS_WRITE) && (rights & CORDON_FS_DELETE))
		out |= CORDON_FS_DELETE;
	return out;
}

static void warn_invariants(struct pctx *c, const struct policy *p, size_t i, const char *ptr)
{
	const struct pol_rule *r = &p->rules[i];

	for (size_t j = 0; j < r->fs.n_paths; j++) {
		const char *inv = NULL, *why = NULL;
		uint32_t o = overridden(p, r->fs.paths[j], r->fs.rights, &inv, &why);
		char rights[128];

		if (!o)
			continue;
		pol_rights_str(o, rights, sizeof(rights));
		(void)why;
		pctx_diag(c, POL_WARNING, ptr, 0,
			  "rule '%s' %s %s on %s, which the invariant '%s' denies to every policy: "
			  "the rule cannot %s %s", r->name,
			  r->decision == CORDON_ALLOW ? "allows" : "escalates", rights, r->fs.paths[j],
			  inv, r->decision == CORDON_ALLOW ? "allow" : "escalate",
			  o == r->fs.rights ? "it" : "those rights");
	}
}

void parse_warn_cannot(struct pctx *c, struct policy *p)
{
	size_t allows = 0;

	if (!p->n_rules) {
		pctx_diag(c, POL_WARNING, "/rules", 0,
			  "no rules: every request is denied (default deny)");
		return;
	}
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct pol_rule *r = &p->rules[i];
		char ptr[64];

		snprintf(ptr, sizeof(ptr), "/rules/%zu", i);
		allows += r->decision == CORDON_ALLOW;
		switch (r->kind) {
		case POL_FS:
			if (r->decision == CORDON_DENY)
				break;
			warn_invariants(c, p, i, ptr);
			if (r->decision != CORDON_ALLOW || !(r->fs.rights & WRITE_RIGHTS))
				break;
			for (size_t j = 0; j < r->fs.n_paths; j++)
				if (!strcmp(r->fs.paths[j], "/") || !strcmp(r->fs.paths[j], "/**")) {
					char rights[128];

					pol_rights_str(r->fs.rights & WRITE_RIGHTS, rights, sizeof(rights));
					pctx_diag(c, POL_WARNING, ptr, 0,
						  "rule '%s' allows %s on %s: every file of the machine but "
						  "what the invariants protect (name the directories the "
						  "agent needs)", r->name, rights, r->fs.paths[j]);
					break;
				}
			break;
		case POL_NET:
			/*
			 * An allow of no host is a template (the shipped profile's
			 * empty egress allowlist) and changes nothing; a deny or an
			 * escalation of none is weaker than it reads.
			 */
			if (!r->net.n_hosts && r->decision != CORDON_ALLOW)
				pctx_diag(c, POL_WARNING, ptr, 0,
					  "rule '%s' has no hosts (its lists are empty): it can never "
					  "match, so it %s nothing", r->name,
					  r->decision == CORDON_DENY ? "denies" : "escalates");
			break;
		case POL_TOOL:
			for (size_t k = 0; k < r->tool.n_conds; k++) {
				const struct pol_cond *cd = &r->tool.conds[k];

				if (cd->kind == POL_COND_IN && json_array_size(cd->value) == 0)
					pctx_diag(c, POL_WARNING, ptr, 0,
						  "rule '%s': argument '%s' must be \"in\" an empty list, "
						  "which no value is: the rule can never match%s", r->name,
						  cd->key, r->decision == CORDON_DENY ?
						  ", so it denies nothing" : "");
			}
			break;
		}
	}
	if (!allows)
		pctx_diag(c, POL_WARNING, "/rules", 0,
			  "no rule allows anything: every request is denied (default deny)");
}
