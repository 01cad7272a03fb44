// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* What the end record says of the supervisor's work (sup_stats.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sup_stats.h"
#include "util.h"

void sup_stats_answered(struct sup_stats *st)
{
	clock_gettime(CLOCK_MONOTONIC, &st->t_answer);
}

static uint32_t since_us(const struct sup_stats *st, const struct timespec *a)
{
	struct timespec b = st->t_answer;

	if (b.tv_sec < a->tv_sec || (b.tv_sec == a->tv_sec && b.tv_nsec < a->tv_nsec))
		clock_gettime(CLOCK_MONOTONIC, &b);     /* not answered here (held, or a worker) */
	return (uint32_t)((b.tv_sec - a->tv_sec) * 1000000 + (b.tv_nsec - a->tv_nsec) / 1000);
}

void sup_stats_note(struct sup_stats *st, enum sup_stats_kind kind, const struct timespec *t0)
{
	switch (kind) {
	case SUP_STATS_EXEC:
		st->lat_exec[st->n_exec++ % SUP_STATS_RING] = since_us(st, t0);
		break;
	case SUP_STATS_CONNECT:
		st->lat_connect[st->n_connect++ % SUP_STATS_RING] = since_us(st, t0);
		break;
	}
}

void sup_stats_absent(struct sup_stats *st, enum sup_stats_kind kind)
{
	switch (kind) {
	case SUP_STATS_EXEC:
		st->n_exec_absent++;
		break;
	case SUP_STATS_CONNECT:
		st->n_unix_absent++;
		break;
	}
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static json_t *lat_json(const uint32_t *v, uint64_t n)
{
	size_t k = n < SUP_STATS_RING ? (size_t)n : SUP_STATS_RING;
	uint32_t *c;
	json_t *o;

	if (!k)
		return json_pack("{s:I}", "count", (json_int_t)n);
	c = malloc(k * sizeof(*c));
	if (!c)
		return json_null();
	memcpy(c, v, k * sizeof(*c));
	qsort(c, k, sizeof(*c), cmp_u32);
	o = json_pack("{s:I,s:i,s:i}", "count", (json_int_t)n, "median_us", (int)c[k / 2],
		      "p99_us", (int)c[(k * 99) / 100]);
	free(c);
	return o;
}

/* COUNT as member NAME of FIN, unless 0. */
static int count_json(json_t *fin, const char *name, uint64_t count)
{
	if (!count)
		return 0;
	return json_object_set_new(fin, name, json_integer((json_int_t)count)) < 0 ? -ENOMEM : 0;
}

int sup_stats_to_json(const struct sup_stats *st, json_t *fin)
{
	json_t *held = json_pack("{s:o,s:o}", "exec", lat_json(st->lat_exec, st->n_exec),
				 "connect", lat_json(st->lat_connect, st->n_connect));

	if (!held || json_object_set_new(fin, "held", held) < 0)
		return -ENOMEM;
	/* Connects to a socket not in the view (sup_connect.c); execs of a path not in it. */
	return count_json(fin, "unix_absent", st->n_unix_absent) ?:
	       count_json(fin, "exec_absent", st->n_exec_absent);
}
