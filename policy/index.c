// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The policy's index, built at load (index.h): what pol_eval probes instead
 * of scanning every rule.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "index.h"
#include "util.h"

void pol_index_cidr_key(uint8_t key[18], int fam, const uint8_t *addr, unsigned prefix)
{
	unsigned bytes = fam == 4 ? 4 : 16;

	memset(key, 0, 18);
	key[0] = (uint8_t)fam;
	key[1] = (uint8_t)prefix;
	for (unsigned i = 0; i < bytes; i++) {
		unsigned bits = prefix > i * 8 ? prefix - i * 8 : 0;
		uint8_t mask = bits >= 8 ? 0xff : (uint8_t)(0xff << (8 - bits));

		key[2 + i] = addr[i] & (bits ? mask : 0);
	}
}

void pol_index_free(struct pol_index *x)
{
	if (!x)
		return;
	smap_free(&x->fs);
	smap_free(&x->names);
	smap_free(&x->cidr);
	smap_free(&x->tools);
	smap_free(&x->inv);
	for (size_t i = 0; i < x->n_invs; i++)
		free(x->invs[i].pat);
	free(x->invs);
	free(x->inv_glob);
	free(x->fs_glob);
	free(x);
}

static int add_inv(struct pol_index *x, uint32_t prio, const char *pat)
{
	struct inv_ent *e;
	const char *g;

	if (x->n_invs == x->cap_invs) {
		size_t ncap = x->cap_invs ? x->cap_invs * 2 : 256;
		struct inv_ent *n = realloc(x->invs, ncap * sizeof(*n));
		uint32_t *ng = realloc(x->inv_glob, ncap * sizeof(*ng));

		if (n)
			x->invs = n;
		if (ng)
			x->inv_glob = ng;
		if (!n || !ng)
			return -ENOMEM;
		x->cap_invs = ncap;
	}
	e = &x->invs[x->n_invs];
	e->prio = prio;
	e->pat = strdup(pat);
	if (!e->pat)
		return -ENOMEM;
	g = strpbrk(pat, "*?[");
	if (!g) {
		e->litlen = strlen(pat);
		x->n_invs++;
		return smap_add(&x->inv, pat, strlen(pat), (uint32_t)(x->n_invs - 1));
	}
	while (g > pat && g[-1] != '/')
		g--;
	e->litlen = (size_t)(g - pat);
	x->inv_glob[x->n_inv_glob++] = (uint32_t)x->n_invs++;
	return 0;
}

int pol_index_add_protected(struct policy *p, const char *path)
{
	return p->idx ? add_inv(p->idx, 0, path) : 0;
}

static int build_invariants(const struct policy *p, struct pol_index *x)
{
	const struct pol_invariant *t = pol_invariants();
	const char *home = pol_vars_get(&p->vars, "HOME");
	char pat[PATH_MAX];
	int r = 0;

	for (size_t i = 0; i < p->n_protected && !r; i++)
		r = add_inv(x, 0, p->protected[i]);
	for (uint32_t i = 0; t[i].id && !r; i++) {
		if (!strncmp(t[i].pattern, "${HOME}", 7)) {
			if (!home || home[0] != '/')
				continue;
			if ((size_t)snprintf(pat, sizeof(pat), "%s%s", home, t[i].pattern + 7) >= sizeof(pat))
				continue;
		} else {
			snprintf(pat, sizeof(pat), "%s", t[i].pattern);
		}
		r = add_inv(x, i + 1, pat);
	}
	return r;
}

int pol_index_build(struct policy *p)
{
	struct pol_index *x = calloc(1, sizeof(*x));
	char key[600];
	int r = 0;

	if (!x)
		return -ENOMEM;
	x->fs_glob = calloc(p->n_rules + 1, sizeof(uint32_t));
	if (!x->fs_glob) {
		free(x);
		return -ENOMEM;
	}
	r = build_invariants(p, x);
	for (size_t i = 0; i < p->n_rules && !r; i++) {
		const struct pol_rule *ru = &p->rules[i];
		bool glob = false;

		switch (ru->kind) {
		case POL_FS:
			for (size_t j = 0; j < ru->fs.n_paths && !r; j++) {
				if (pol_has_glob(ru->fs.paths[j]))
					glob = true;
				else
					r = smap_add(&x->fs, ru->fs.paths[j],
						     strlen(ru->fs.paths[j]), ru->id);
			}
			if (glob)
				x->fs_glob[x->n_fs_glob++] = ru->id;
			break;
		case POL_NET:
			for (size_t j = 0; j < ru->net.n_hosts && !r; j++) {
				const struct pol_host *h = &ru->net.hosts[j];
				uint8_t ck[18];

				switch (h->kind) {
				case POL_HOST_NAME:
				case POL_HOST_SUFFIX:
					r = smap_add(&x->names, h->name, strlen(h->name), ru->id);
					break;
				case POL_HOST_CIDR4:
				case POL_HOST_CIDR6:
					pol_index_cidr_key(ck, h->kind == POL_HOST_CIDR4 ? 4 : 6, h->addr, h->prefix);
					r = smap_add(&x->cidr, ck, sizeof(ck), ru->id);
					if (h->kind == POL_HOST_CIDR4)
						x->v4_prefixes[h->prefix] = 1;
					else
						x->v6_prefixes[h->prefix] = 1;
					break;
				}
			}
			break;
		case POL_TOOL:
			snprintf(key, sizeof(key), "%s.%s", ru->tool.server, ru->tool.tool);
			r = smap_add(&x->tools, key, strlen(key), ru->id);
			break;
		}
	}
	if (r) {
		pol_index_free(x);
		return r;
	}
	p->idx = x;
	return 0;
}
