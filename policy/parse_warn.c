// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Warnings about a policy that loads: what it says that cannot be what its
 * author meant.
 */
#include "parse_warn.h"
#include "pctx.h"
#include "policy.h"
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

void parse_warn_shadowed(struct pctx *c, struct policy *p)
{
	for (size_t i = 0; i < p->n_rules; i++)
		for (size_t j = 0; j < p->n_rules; j++) {
			const struct pol_rule *a = &p->rules[i], *b = &p->rules[j];
			char ptr[64];

			if (i == j || b->decision <= a->decision || !covers(b, a))
				continue;
			snprintf(ptr, sizeof(ptr), "/rules/%zu", i);
			pctx_diag(c, POL_WARNING, ptr, 0,
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
void parse_warn_uncredentialed(struct pctx *c, struct policy *p)
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
			pctx_diag(c, POL_WARNING, ptr, 0,
				  "rule '%s' sends %s%s through the credential proxy, and no credential "
				  "names it: every request to it is refused", r->name,
				  ho->kind == POL_HOST_SUFFIX ? "*" : "", ho->name);
		}
	}
}

