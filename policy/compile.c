// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The policy compiled for the kernel floor: tables of rule roots (paths the
 * loader resolves to inodes) and direct network rules (for cgroup-bpf).
 *
 * Glob components are expanded here with glob(3), against the filesystem as
 * it is when the session starts: the kernel matches objects, and only
 * existing objects have inodes.  What this cannot close: a path created
 * later that would match a glob (a new /home/NEWUSER/.ssh) is not in the
 * table; the userspace evaluator still matches it by pattern, and cordon
 * re-compiles at every session start.
 */
#define _GNU_SOURCE
#include <glob.h>
#include <limits.h>
#include "policy.h"
#include "util.h"

static int emit_paths(const char *pattern, struct pol_fs_entry *e, pol_fs_entry_fn fn, void *ctx)
{
	glob_t g;
	int r = 0;

	if (!strpbrk(pattern, "*?[")) {
		e->path = pattern;
		return fn(ctx, e);
	}
	switch (glob(pattern, GLOB_NOSORT, NULL, &g)) {
	case 0:
		break;
	case GLOB_NOMATCH:
		return 0;
	case GLOB_NOSPACE:
		return -ENOMEM;
	default:
		return -EIO;
	}
	for (size_t i = 0; i < g.gl_pathc && r >= 0; i++) {
		e->path = g.gl_pathv[i];
		r = fn(ctx, e);
	}
	globfree(&g);
	return r;
}

int pol_compile_fs(const struct policy *p, pol_fs_entry_fn fn, void *ctx)
{
	const char *home = pol_vars_get(&p->vars, "HOME");
	char pat[PATH_MAX];
	int r;

	for (size_t i = 0; i < p->n_rules; i++) {
		const struct pol_rule *ru = &p->rules[i];
		struct pol_fs_entry e = { .rule_id = ru->id };

		if (ru->kind != POL_FS)
			continue;
		switch (ru->decision) {
		case CORDON_ALLOW:
			e.allow = ru->fs.rights;
			break;
		case CORDON_ESCALATE:
			e.escalate = ru->fs.rights;
			break;
		default:
			e.deny = ru->fs.rights;
			break;
		}
		for (size_t j = 0; j < ru->fs.n_paths; j++) {
			r = emit_paths(ru->fs.paths[j], &e, fn, ctx);
			if (r < 0)
				return r;
		}
	}
	for (const struct pol_invariant *inv = pol_invariants(); inv->id; inv++) {
		struct pol_fs_entry e = { .deny = inv->denied, .rule_id = POL_RULE_INVARIANT,
					  .invariant = inv->id,
					  .protected_object = inv->denied == CORDON_FS_ALL };

		if (!strncmp(inv->pattern, "${HOME}", 7)) {
			if (!home || home[0] != '/')
				continue;
			if ((size_t)snprintf(pat, sizeof(pat), "%s%s", home, inv->pattern + 7) >= sizeof(pat))
				continue;
		} else {
			snprintf(pat, sizeof(pat), "%s", inv->pattern);
		}
		r = emit_paths(pat, &e, fn, ctx);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < p->n_protected; i++) {
		struct pol_fs_entry e = { .deny = CORDON_FS_WRITE | CORDON_FS_CREATE |
					  CORDON_FS_DELETE | CORDON_FS_CHMOD,
					  .rule_id = POL_RULE_INVARIANT, .invariant = "cordon-self",
					  .path = p->protected[i] };
		r = fn(ctx, &e);
		if (r < 0)
			return r;
	}
	return 0;
}

int pol_compile_net(const struct policy *p, pol_net_entry_fn fn, void *ctx)
{
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct pol_rule *ru = &p->rules[i];

		if (ru->kind != POL_NET || ru->net.via != POL_VIA_DIRECT)
			continue;
		for (size_t h = 0; h < ru->net.n_hosts; h++) {
			const struct pol_host *ho = &ru->net.hosts[h];
			struct pol_net_entry e = { .decision = ru->decision, .rule_id = ru->id };
			size_t np = ru->net.n_ports ? ru->net.n_ports : 1;

			if (ho->kind != POL_HOST_CIDR4 && ho->kind != POL_HOST_CIDR6)
				continue;
			e.family = ho->kind == POL_HOST_CIDR4 ? 4 : 6;
			memcpy(e.addr, ho->addr, 16);
			e.prefix = ho->prefix;
			for (size_t k = 0; k < np; k++) {
				int r;

				e.port_lo = ru->net.n_ports ? ru->net.ports[k].lo : 1;
				e.port_hi = ru->net.n_ports ? ru->net.ports[k].hi : 65535;
				r = fn(ctx, &e);
				if (r < 0)
					return r;
			}
		}
	}
	return 0;
}
