// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A small string-keyed multimap: a key to the ids of the rules it names (smap.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "smap.h"

uint64_t smap_fnv(const void *key, size_t len)
{
	const unsigned char *k = key;
	uint64_t h = SMAP_FNV_INIT;

	for (size_t i = 0; i < len; i++)
		h = smap_fnv_step(h, k[i]);
	return h;
}

const struct slot *smap_get_h(const struct smap *m, const void *key, size_t len,
				     uint64_t h)
{
	if (!m->cap)
		return NULL;
	for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		const struct slot *s = &m->s[i];

		if (!s->key)
			return NULL;
		if (s->hash == h && s->len == len && !memcmp(s->key, key, len))
			return s;
	}
}

const struct slot *smap_get(const struct smap *m, const void *key, size_t len)
{
	return smap_get_h(m, key, len, smap_fnv(key, len));
}

static int grow(struct smap *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 64;
	struct slot *ns = calloc(ncap, sizeof(*ns));

	if (!ns)
		return -ENOMEM;
	for (size_t i = 0; i < m->cap; i++) {
		struct slot *o = &m->s[i];
		size_t j;

		if (!o->key)
			continue;
		for (j = o->hash & (ncap - 1); ns[j].key; j = (j + 1) & (ncap - 1))
			;
		ns[j] = *o;
	}
	free(m->s);
	m->s = ns;
	m->cap = ncap;
	return 0;
}

int smap_add(struct smap *m, const void *key, size_t len, uint32_t id)
{
	uint64_t h = smap_fnv(key, len);
	struct slot *s;
	size_t i;

	if ((m->n + 1) * 2 > m->cap && grow(m) < 0)
		return -ENOMEM;
	for (i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		s = &m->s[i];
		if (!s->key) {
			s->key = malloc(len + 1);
			if (!s->key)
				return -ENOMEM;
			memcpy(s->key, key, len);
			s->key[len] = 0;
			s->len = len;
			s->hash = h;
			m->n++;
			break;
		}
		if (s->hash == h && s->len == len && !memcmp(s->key, key, len))
			break;
	}
	if (s->n == s->cap) {
		uint32_t ncap = s->cap ? s->cap * 2 : 2;
		uint32_t *n = realloc(s->ids, ncap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		s->ids = n;
		s->cap = ncap;
	}
	s->ids[s->n++] = id;
	return 0;
}

void smap_free(struct smap *m)
{
	for (size_t i = 0; i < m->cap; i++) {
		free(m->s[i].key);
		free(m->s[i].ids);
	}
	free(m->s);
	memset(m, 0, sizeof(*m));
}

/* --- the index ------------------------------------------------------------ */

/* An invariant pattern, expanded once at load. */
