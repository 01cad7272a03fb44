// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A loaded policy after the load: what cordon adds to it for the session it
 * runs (its own files never writable, a rule for a resource it creates),
 * and freeing it.  The contract is policy.h's (pol_protect_path,
 * pol_grant_path, pol_grant_connect, pol_free).
 */
#define _GNU_SOURCE
#include <limits.h>
#include "index.h"
#include "pctx.h"
#include "policy.h"
#include "util.h"

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
	free(p->ship_syslog);
	free(p->ship_journal);
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
	r = pctx_push_str(&p->protected, &p->n_protected, s);
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

