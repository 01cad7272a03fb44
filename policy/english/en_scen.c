// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Scenarios from sentences: for every rule a constitution compiles to, the
 * request it decides (what it allows, escalates or denies), and for an
 * allow, the nearest request it must not allow (the same path's neighbour,
 * the next port, another value), so that `cordon policy test FILE.en`
 * verifies a constitution the moment it is compiled.
 *
 * The expectations are derived from the sentences alone, never from the
 * evaluator (which would only check itself): a near miss is expected to be
 * denied only when no other rule of the policy names anything that could
 * cover it, and is left out otherwise.  A scenario that fails shows two
 * sentences that contradict each other (strongest wins) or a sentence that
 * does not say what its writer meant.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "en_int.h"

/* The first item of a rule's array, through a list reference. */
static const char *first_item(const json_t *policy, const json_t *arr)
{
	const char *s = json_string_value(json_array_get(arr, 0));

	if (s && s[0] == '@')
		s = json_string_value(json_array_get(json_object_get(json_object_get(policy, "lists"),
								     s + 1), 0));
	return s;
}

static const char *first_str(const json_t *arr)
{
	return json_string_value(json_array_get(arr, 0));
}

/* Does any rule but `self` name a path that is s, above s or below it (or a list, or a wildcard)? */
static bool other_fs_near(const json_t *rules, const json_t *self, const char *s)
{
	size_t k, j;
	json_t *r, *v;

	json_array_foreach(rules, k, r) {
		if (r == self || !json_object_get(r, "fs"))
			continue;
		json_array_foreach(json_object_get(json_object_get(r, "fs"), "paths"), j, v) {
			const char *p = json_string_value(v), *star = p ? strchr(p, '*') : NULL;
			/* A wildcard covers what is below the directories before it. */
			size_t n = !p ? 0 : star ? (size_t)(star - p) : strlen(p);

			if (!p || p[0] == '@' || (star && !strncmp(p, s, n)) ||
			    (!strncmp(p, s, n) && (s[n] == '/' || !s[n] || (n && p[n - 1] == '/'))) ||
			    (!strncmp(s, p, strlen(s)) && p[strlen(s)] == '/'))
				return true;
		}
	}
	return false;
}

static bool other_names(const json_t *rules, const json_t *self, const char *key, const char *sub,
			const char *s)
{
	size_t k, j;
	json_t *r, *v;

	json_array_foreach(rules, k, r) {
		json_t *o = json_object_get(r, key);

		if (r == self || !o)
			continue;
		if (!strcmp(key, "tool")) {
			const char *n = json_string_value(json_object_get(o, "name"));

			if (!n || strchr(n, '*') || !strcmp(n, s))
				return true;
			continue;
		}
		json_array_foreach(json_object_get(o, sub), j, v) {
			const char *h = json_string_value(v);

			if (!h || h[0] == '@' || h[0] == '*' || strchr(h, '/') || !strcmp(h, s))
				return true;
		}
	}
	return false;
}

static const char *op_of(const char *right)
{
	return !strcmp(right, "exec") ? "exec" : !strcmp(right, "all") ? "read" : right;
}

static void add(json_t *out, const json_t *rule, const char *what, json_t *sc)
{
	char name[700];

	snprintf(name, sizeof(name), "%s%s: %s",
		 json_string_value(json_object_get(rule, "source")) ?: "?", what,
		 json_string_value(json_object_get(rule, "description")) ?: "");
	json_object_set_new(sc, "name", json_string(name));
	json_array_append_new(out, sc);
}

static void fs_scen(json_t *out, const json_t *policy, const json_t *r, const char *d)
{
	const json_t *fs = json_object_get(r, "fs"), *rules = json_object_get(policy, "rules");
	const char *p = first_item(policy, json_object_get(fs, "paths"));
	const char *right = first_str(json_object_get(fs, "rights"));
	char in[4200], beside[4200];
	const char *slash;

	if (!p || !right || p[0] == '@' || strchr(p, '*'))
		return;
	snprintf(in, sizeof(in), "%s%scordon-scenario", p, p[strlen(p) - 1] == '/' ? "" : "/");
	add(out, r, "", json_pack("{s:s, s:s, s:s}", "op", op_of(right), "path", in, "expect", d));
	if (strcmp(d, "allow") || !(slash = strrchr(p, '/')) || !slash[1])
		return;
	/* The nearest thing it must not allow: a sibling with a name that starts like it. */
	snprintf(beside, sizeof(beside), "%.*s/%s-beside", (int)(slash - p), p, slash + 1);
	if (!other_fs_near(rules, r, beside))
		add(out, r, " (near miss)", json_pack("{s:s, s:s, s:s}", "op", op_of(right), "path",
						      beside, "expect", "deny"));
}

static void net_scen(json_t *out, const json_t *policy, const json_t *r, const char *d)
{
	const json_t *net = json_object_get(r, "net"), *ports = json_object_get(net, "ports");
	const json_t *rules = json_object_get(policy, "rules");
	const char *h = first_item(policy, json_object_get(net, "hosts"));
	const char *via = json_string_value(json_object_get(net, "via"));
	json_int_t port = 443;
	json_t *sc;

	if (!h || h[0] == '@' || strchr(h, '/'))
		return;
	if (json_is_integer(json_array_get(ports, 0)))
		port = json_integer_value(json_array_get(ports, 0));
	else if (json_array_size(ports))
		return;
	if (h[0] == '*')
		h += 2;
	sc = json_pack("{s:s, s:s, s:I, s:s}", "op", "connect", "host", h, "port", port, "expect", d);
	if (via && !strcmp(d, "allow"))
		json_object_set_new(sc, "via", json_string(via));
	add(out, r, "", sc);
	if (strcmp(d, "allow") || json_array_size(ports) != 1 || port >= 65535 ||
	    other_names(rules, r, "net", "hosts", h))
		return;
	add(out, r, " (near miss)", json_pack("{s:s, s:s, s:I, s:s}", "op", "connect", "host", h,
					      "port", port + 1, "expect", "deny"));
}

/* Arguments that satisfy every condition, and (*miss) one that breaks the first it can. */
static json_t *tool_args(const json_t *args, json_t **miss)
{
	json_t *a = json_object(), *c;
	const char *k;

	*miss = NULL;
	json_object_foreach((json_t *)args, k, c) {
		json_t *v = NULL;
		const char *s;
		char buf[600];

		if (json_object_get(c, "equals"))
			v = json_incref(json_object_get(c, "equals"));
		else if (json_object_get(c, "in"))
			v = json_incref(json_array_get(json_object_get(c, "in"), 0));
		else if ((s = first_str(json_object_get(c, "within"))) && s[0] != '@')
			v = json_sprintf("%s/cordon-scenario", s);
		else if ((s = json_string_value(json_object_get(c, "prefix"))))
			v = json_sprintf("%sx", s);
		else if ((s = first_str(json_object_get(c, "domain_in"))) && s[0] != '@' && s[0] != '*')
			v = json_sprintf("https://%s/", s);
		if (!json_object_get(c, "any") && !v) {
			json_decref(a);
			return NULL;
		}
		if (v && !*miss && json_is_string(v) && !json_object_get(c, "any")) {
			snprintf(buf, sizeof(buf), "%s", json_string_value(v));
			*miss = json_deep_copy(a);
			json_object_set_new(*miss, k, json_string(json_object_get(c, "within") ?
				"/cordon-elsewhere" : json_object_get(c, "domain_in") ?
				"https://cordon-elsewhere.invalid/" : "cordon-other"));
		} else if (*miss && v) {
			json_object_set(*miss, k, v);
		}
		if (v)
			json_object_set_new(a, k, v);
	}
	return a;
}

static void tool_scen(json_t *out, const json_t *rules, const json_t *r, const char *d)
{
	const json_t *tool = json_object_get(r, "tool");
	const char *name = json_string_value(json_object_get(tool, "name"));
	json_t *miss, *a;

	if (!name || strchr(name, '*'))
		return;
	a = tool_args(json_object_get(tool, "args"), &miss);
	if (!a)
		return;
	add(out, r, "", json_pack("{s:s, s:s, s:o, s:s}", "op", "tool", "tool", name, "args", a,
				  "expect", d));
	if (miss && !strcmp(d, "allow") && !other_names(rules, r, "tool", NULL, name))
		add(out, r, " (near miss)", json_pack("{s:s, s:s, s:O, s:s}", "op", "tool", "tool", name,
						      "args", miss, "expect", "deny"));
	json_decref(miss);
}

json_t *en_scenarios(const json_t *policy)
{
	const json_t *rules = json_object_get(policy, "rules");
	json_t *out = json_array(), *r;
	size_t k;

	json_array_foreach(rules, k, r) {
		const char *d = json_string_value(json_object_get(r, "decision"));

		if (!d)
			continue;
		if (json_object_get(r, "fs"))
			fs_scen(out, policy, r, d);
		else if (json_object_get(r, "net"))
			net_scen(out, policy, r, d);
		else
			tool_scen(out, rules, r, d);
	}
	return json_pack("{s:o}", "scenarios", out);
}
