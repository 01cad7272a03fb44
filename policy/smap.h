/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A small string-keyed multimap (open addressing, FNV-1a): a key (bytes,
 * not necessarily text) to the ids of the rules it names.  The policy's
 * index (index.h) is made of these.
 */
#ifndef CORDON_SMAP_H
#define CORDON_SMAP_H

#include <stddef.h>
#include <stdint.h>

struct slot {
	char *key;
	size_t len;
	uint64_t hash;
	uint32_t *ids;
	uint32_t n, cap;
};

struct smap {
	struct slot *s;
	size_t cap;     /* power of two */
	size_t n;
};

#define SMAP_FNV_INIT 0xcbf29ce484222325ull
/* FNV-1a, whole or a byte at a time (for a path probed at each prefix:
 * inline, it runs per byte of every path pol_eval judges). */
static inline uint64_t smap_fnv_step(uint64_t h, unsigned char c)
{
	return (h ^ c) * 0x100000001b3ull;
}
uint64_t smap_fnv(const void *key, size_t len);

/* The slot of key (its hash h), or NULL. */
const struct slot *smap_get_h(const struct smap *m, const void *key, size_t len, uint64_t h);
const struct slot *smap_get(const struct smap *m, const void *key, size_t len);
/* Add id under key.  0 or -ENOMEM. */
int smap_add(struct smap *m, const void *key, size_t len, uint32_t id);
void smap_free(struct smap *m);

#endif
