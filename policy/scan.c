// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Reading argv the way the program does: one scanner for every option
 * table (scan.h says how, and what it does with an option it does not know).
 */
#include <string.h>
#include "scan.h"

void scan_init(struct scan *s, const char *const *argv, int argc, int i,
		      const struct optset *set)
{
	memset(s, 0, sizeof(*s));
	s->argv = argv;
	s->argc = argc;
	s->i = i;
	s->set = set;
}

static const struct opt *find_long(const struct optset *set, const char *name, size_t len,
				   bool *neg)
{
	const struct opt *hit = NULL;
	int hits = 0;

	*neg = false;
	for (size_t k = 0; k < set->n; k++)
		if (set->o[k].l && strlen(set->o[k].l) == len && !strncmp(set->o[k].l, name, len))
			return &set->o[k];
	if ((set->flags & OS_NEG) && len > 3 && !strncmp(name, "no-", 3)) {
		for (size_t k = 0; k < set->n; k++)
			if (set->o[k].l && set->o[k].arg != A_VAL && strlen(set->o[k].l) == len - 3 &&
			    !strncmp(set->o[k].l, name + 3, len - 3)) {
				*neg = true;
				return &set->o[k];
			}
	}
	if (!(set->flags & OS_ABBREV))
		return NULL;
	for (size_t k = 0; k < set->n; k++)
		if (set->o[k].l && !strncmp(set->o[k].l, name, len) &&
		    (!hit || hit->tag != set->o[k].tag || hit->arg != set->o[k].arg)) {
			hit = &set->o[k];
			hits++;
		}
	return hits == 1 ? hit : NULL;  /* ambiguous: the program refuses it; unknown here */
}

static const struct opt *find_short(const struct optset *set, char c)
{
	for (size_t k = 0; k < set->n; k++)
		if (set->o[k].s == c)
			return &set->o[k];
	return NULL;
}

void scan_next(struct scan *s, struct tok *t)
{
	const char *a;

	memset(t, 0, sizeof(*t));
	t->idx = s->i - 1;
	if (s->cluster) {
		char c = *s->cluster++;
		const struct opt *o = find_short(s->set, c);

		t->k = T_OPT;
		t->o = o;
		if (!o) {
			/* Unknown letter: the rest may be its value or more letters. */
			s->unknown = s->maybe = true;
			t->val = *s->cluster ? s->cluster : NULL;
			s->cluster = NULL;
			return;
		}
		if (o->arg == A_NO) {
			if (!*s->cluster)
				s->cluster = NULL;
			return;
		}
		if (*s->cluster)
			t->val = s->cluster;
		else if (o->arg == A_VAL && s->i < s->argc)
			t->val = s->argv[s->i++];
		s->cluster = NULL;
		return;
	}
	if (s->i >= s->argc) {
		t->k = T_END;
		return;
	}
	t->idx = s->i;
	a = s->argv[s->i++];
	if (s->ended || a[0] != '-' || !a[1]) {
		t->k = T_ARG;
		t->arg = a;
		t->maybe = s->maybe;
		s->maybe = false;
		return;
	}
	if (!strcmp(a, "--")) {
		s->ended = true;
		scan_next(s, t);
		return;
	}
	s->maybe = false;
	if (a[1] == '-' || ((s->set->flags & OS_SLONG) && a[2])) {
		const char *name = a + (a[1] == '-' ? 2 : 1), *eq = strchr(name, '=');
		size_t len = eq ? (size_t)(eq - name) : strlen(name);
		bool neg;
		const struct opt *o = find_long(s->set, name, len, &neg);

		if (a[1] != '-' && !o)
			goto cluster;   /* not a long name after all: letters */
		t->k = T_OPT;
		t->o = o;
		t->neg = neg;
		if (!o) {
			s->unknown = true;
			s->maybe = !eq;
			t->val = eq ? eq + 1 : NULL;
			return;
		}
		if (eq)
			t->val = eq + 1;
		else if (o->arg == A_VAL && s->i < s->argc)
			t->val = s->argv[s->i++];
		return;
	}
cluster:
	s->cluster = a + 1;
	scan_next(s, t);
	t->idx = s->i - 1;
}

void scan_subcommands(struct lift *L, const char *prog, const char *const *argv, int argc,
			     int i, const struct optset *set, sub_fn fn, void *ctx)
{
	struct scan s;
	struct tok t;

	scan_init(&s, argv, argc, i, set);
	for (scan_next(&s, &t); t.k != T_END; scan_next(&s, &t)) {
		if (t.k != T_ARG)
			continue;
		fn(L, prog, t.arg, argv, argc, t.idx + 1, ctx);
		if (!t.maybe && !s.maybe)
			break;
	}
}
