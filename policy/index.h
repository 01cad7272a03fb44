/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The policy's index, built at load and rebuilt when cordon adds a rule
 * (index.c): a hash of rule roots probed once per path prefix, host names
 * and suffixes, CIDRs bucketed by prefix length, tool names, and the
 * invariants' patterns.  pol_eval (eval.c) reads it; pol_eval_linear
 * scans the rules instead, and the tests check the two agree.
 */
#ifndef CORDON_POLICY_INDEX_H
#define CORDON_POLICY_INDEX_H

#include <stdbool.h>
#include <string.h>
#include "policy.h"
#include "smap.h"

struct inv_ent {
	uint32_t prio;           /* 0: cordon's own files; 1 + index in the table */
	char *pat;
	size_t litlen;           /* bytes before the first glob component */
};

struct pol_index {
	struct smap inv;         /* literal invariant pattern -> inv_ents index */
	struct inv_ent *invs;
	size_t n_invs, cap_invs;
	uint32_t *inv_glob;      /* inv_ents with a glob, checked after a prefix test */
	size_t n_inv_glob;
	struct smap fs;          /* literal root path -> rule ids */
	uint32_t *fs_glob;       /* rules with a glob path */
	size_t n_fs_glob;
	struct smap names;       /* "name" and ".suffix" -> net rule ids */
	struct smap cidr;        /* fam|prefix|masked addr -> net rule ids */
	uint8_t v4_prefixes[33], v6_prefixes[129];  /* which lengths exist */
	struct smap tools;       /* "server.tool" (with '*' as given) -> rule ids */
};

static inline bool pol_has_glob(const char *p)
{
	return strpbrk(p, "*?[") != NULL;
}

/* Build p->idx from p's rules and invariants.  0 or -ENOMEM. */
int pol_index_build(struct policy *p);
void pol_index_free(struct pol_index *x);
/* cordon's own files, added after load (pol_protect_path).  0 or -ENOMEM. */
int pol_index_add_protected(struct policy *p, const char *path);
/* The key of a CIDR bucket: family, prefix length, the masked address. */
void pol_index_cidr_key(uint8_t key[18], int fam, const uint8_t *addr, unsigned prefix);

#endif
