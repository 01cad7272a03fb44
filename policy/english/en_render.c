// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A policy (JSON form) rendered as sentences of the constitution language,
 * one a line, such that compiling the rendering decides every request as
 * the original does (tests/unit/test_english.c checks it over the shipped
 * profiles and seeded random policies).
 *
 * To keep that promise the rendering says everything the JSON leaves to a
 * default: a net allow names its path ("directly" for addresses, "through
 * the egress proxy" for names) and its ports ("on any port"), which the
 * language would otherwise default differently.  What a sentence cannot
 * carry (a path with a blank, a value that is an object) becomes a comment
 * line "# cannot say in English: ...", so a reader sees the gap.
 * A credential's sentence also allows its hosts on 443 through the
 * credential proxy (the language ties the two): a JSON policy with a
 * credential and no such rule renders to one that allows a little more.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "en_int.h"
#include "policy.h"

static const char *const right_verb[][2] = {
	{ "read", "reading" }, { "write", "writing" }, { "create", "creating" },
	{ "delete", "deleting" }, { "exec", "running" }, { "chmod", "changing the permissions of" },
	{ "all", "doing anything with" },
};

static const char *base_verb(const char *right)
{
	static const char *const base[] = { "read", "write", "create", "delete", "run",
					    "change the permissions of", "do anything with" };

	for (size_t k = 0; k < sizeof(base) / sizeof(base[0]); k++)
		if (!strcmp(right_verb[k][0], right))
			return base[k];
	return NULL;
}

static const char *gerund_verb(const char *right)
{
	for (size_t k = 0; k < sizeof(right_verb) / sizeof(right_verb[0]); k++)
		if (!strcmp(right_verb[k][0], right))
			return right_verb[k][1];
	return NULL;
}

/* "A", "A and B", "A, B and C" */
static void sep(FILE *f, size_t k, size_t n)
{
	if (k + 1 < n && k + 2 < n)
		fputs(", ", f);
	else if (k + 1 < n)
		fputs(" and ", f);
}

static bool sayable(const char *s)
{
	for (const char *c = s; *c; c++)
		if (isspace((unsigned char)*c) || *c == ',' || *c == '"')
			return false;
	return *s && s[strlen(s) - 1] != '.' && s[strlen(s) - 1] != ':';
}

/* A list's name as words, or false if the language cannot refer to it safely. */
static bool list_words(const char *key, char *out, size_t len)
{
	static const char *const reserved[] = { "the", "it", "agents", "this", "tokens", "about",
						"never", "ask", "do", "don't", "use", "stop", "wait",
						"a", "an", "my", "any", "all", "files", "anything",
						"everything", "is", "are", "and", "or", NULL };
	char w[64];
	size_t o = 0;

	snprintf(out, len, "%s", key);
	for (char *c = out; *c; c++) {
		if (*c == '_')
			*c = ' ';
		else if (!isalnum((unsigned char)*c) || isupper((unsigned char)*c))
			return false;
	}
	for (const char *c = out;; c++) {
		if (*c == ' ' || !*c) {
			w[o] = 0;
			for (size_t k = 0; reserved[k]; k++)
				if (!strcmp(w, reserved[k]))
					return false;
			if (!o || !*c)
				return o > 0;
			o = 0;
			continue;
		}
		if (o < sizeof(w) - 1)
			w[o++] = *c;
	}
}

/* Items of a rule's array: "@list" as "the LIST", or the list's items if it cannot be named. */
static const char *place_of(const char *s)
{
	return !strcmp(s, "${WORKSPACE}") ? "the workspace" : !strcmp(s, "${HOME}") ?
	       "the home directory" : !strcmp(s, "${TMPDIR}") ? "the temporary directory" : NULL;
}

static bool items_ex(FILE *f, const json_t *policy, const json_t *arr, bool quote_other,
		     bool places);

static bool items(FILE *f, const json_t *policy, const json_t *arr, bool quote_other)
{
	return items_ex(f, policy, arr, quote_other, false);
}

static bool items_ex(FILE *f, const json_t *policy, const json_t *arr, bool quote_other,
		     bool places)
{
	const json_t *lists = json_object_get(policy, "lists");
	json_t *flat = json_array(), *v;
	size_t k, j;
	char words[256];
	bool ok = true;

	json_array_foreach(arr, k, v) {
		const char *s = json_string_value(v);
		json_t *l;

		if (s && s[0] == '@' && (l = json_object_get(lists, s + 1)) && !list_words(s + 1, words, sizeof(words)))
			json_array_extend(flat, l);
		else
			json_array_append(flat, v);
	}
	json_array_foreach(flat, k, v) {
		const char *s = json_string_value(v);

		if (!s) {
			ok = false;
			break;
		}
		if (s[0] == '@') {
			list_words(s + 1, words, sizeof(words));
			fprintf(f, "the %s", words);
		} else if (places && place_of(s)) {
			fputs(place_of(s), f);
		} else if (sayable(s)) {
			fputs(s, f);
		} else if (quote_other && !strchr(s, '"')) {
			fprintf(f, "\"%s\"", s);
		} else {
			ok = false;
			break;
		}
		j = json_array_size(flat);
		sep(f, k, j);
	}
	json_decref(flat);
	return ok;
}

static bool render_fs(FILE *f, const json_t *policy, const char *d, const json_t *fs)
{
	const json_t *rights = json_object_get(fs, "rights");
	size_t k, n = json_array_size(rights);
	json_t *v;

	if (!strcmp(d, "allow"))
		fputs("The agent may ", f);
	else if (!strcmp(d, "deny"))
		fputs("The agent may not ", f);
	else
		fputs("Ask me before ", f);
	unsigned have = 0;
	const char *words[8];
	size_t nw = 0;

	json_array_foreach(rights, k, v) {
		for (unsigned b = 0; b < 7; b++)
			if (json_is_string(v) && !strcmp(json_string_value(v), right_verb[b][0]))
				have |= 1u << b;
		if (!json_is_string(v) || !gerund_verb(json_string_value(v)))
			return false;
	}
	(void)n;
	/* write, create and delete together are "change" (the language's own word for them). */
	for (unsigned b = 0; b < 7; b++) {
		bool esc = !strcmp(d, "escalate");

		if (b == 1 && (have & 14) == 14) {
			words[nw++] = esc ? "changing" : "change";
			continue;
		}
		if ((b == 2 || b == 3) && (have & 14) == 14)
			continue;
		if (b == 5 && (have & 32) && nw)        /* "change and chmod": shorter in a list */
			words[nw++] = esc ? "chmodding" : "chmod";
		else if (have & (1u << b))
			words[nw++] = esc ? right_verb[b][1] : base_verb(right_verb[b][0]);
	}
	for (size_t w = 0; w < nw; w++) {
		fputs(words[w], f);
		sep(f, w, nw);
	}
	fputc(' ', f);
	return items_ex(f, policy, json_object_get(fs, "paths"), false, true);
}

static void ports(FILE *f, const json_t *pp)
{
	size_t k, n = json_array_size(pp);
	json_t *v;

	if (!pp || !n) {
		fputs(" on any port", f);
		return;
	}
	fputs(n == 1 && json_is_integer(json_array_get(pp, 0)) ? " on port " : " on ports ", f);
	json_array_foreach(pp, k, v) {
		if (json_is_integer(v)) {
			fprintf(f, "%lld", (long long)json_integer_value(v));
		} else {
			long a = 0, b = 0;

			if (sscanf(json_string_value(v) ?: "", "%ld-%ld", &a, &b) == 2)
				fprintf(f, "%ld to %ld", a, b);
			else
				fprintf(f, "%ld", a);
		}
		sep(f, k, n);
	}
}

static bool is_addr(const char *h)
{
	struct pol_host ph;
	bool a;

	if (pol_host_parse(h, &ph) < 0)
		return false;
	a = ph.kind == POL_HOST_CIDR4 || ph.kind == POL_HOST_CIDR6;
	free(ph.name);
	return a;
}

static bool net_sentence(FILE *f, const json_t *policy, const char *d, const json_t *hosts,
			 const json_t *pp, const char *via)
{
	if (!strcmp(d, "allow"))
		fputs("The agent may reach ", f);
	else if (!strcmp(d, "deny"))
		fputs("The agent may not reach ", f);
	else
		fputs("Ask me before reaching ", f);
	if (!items(f, policy, hosts, false))
		return false;
	ports(f, pp);
	if (via && !strcmp(via, "direct"))
		fputs(" directly", f);
	else if (via && !strcmp(via, "egress"))
		fputs(" through the egress proxy", f);
	else if (via)
		fputs(" through the credential proxy", f);
	return true;
}

/* Expand lists, to split a via-less allow into its names and its addresses. */
static json_t *expand(const json_t *policy, const json_t *arr)
{
	json_t *out = json_array(), *v, *l;
	size_t k;

	json_array_foreach(arr, k, v) {
		const char *s = json_string_value(v);

		if (s && s[0] == '@' && (l = json_object_get(json_object_get(policy, "lists"), s + 1)))
			json_array_extend(out, l);
		else
			json_array_append(out, v);
	}
	return out;
}

static bool render_net(FILE *f, const json_t *policy, const char *d, const json_t *net)
{
	const char *via = json_string_value(json_object_get(net, "via"));
	const json_t *hosts = json_object_get(net, "hosts"), *pp = json_object_get(net, "ports");
	json_t *all, *names, *addrs, *v;
	size_t k;
	bool ok = true;

	if (via || strcmp(d, "allow"))
		return net_sentence(f, policy, d, hosts, pp, via);
	/* An allow without "via" (the loader's default): the broker if it names any host, else direct. */
	all = expand(policy, hosts);
	names = json_array();
	addrs = json_array();
	json_array_foreach(all, k, v)
		json_array_append(is_addr(json_string_value(v) ?: "") ? addrs : names, v);
	ok = net_sentence(f, policy, d, hosts, pp,
			  json_array_size(names) || !json_array_size(all) ? "egress" : "direct");
	json_decref(all);
	json_decref(names);
	json_decref(addrs);
	return ok;
}

static bool value(FILE *f, const json_t *v)
{
	const char *s;

	if (json_is_true(v) || json_is_false(v)) {
		fputs(json_is_true(v) ? "true" : "false", f);
	} else if (json_is_integer(v)) {
		fprintf(f, "%lld", (long long)json_integer_value(v));
		return json_integer_value(v) >= 0;
	} else if ((s = json_string_value(v)) && !strchr(s, '"') && !strchr(s, '\n')) {
		fprintf(f, "\"%s\"", s);
	} else {
		return false;
	}
	return true;
}

static bool cond(FILE *f, const json_t *policy, const char *key, const json_t *c)
{
	const char *k0 = json_object_iter_key(json_object_iter((json_t *)c));
	const json_t *v = json_object_get(c, k0 ?: "");
	bool plain = isalpha((unsigned char)key[0]);
	size_t k;
	json_t *x;

	for (const char *p = key; *p; p++)
		plain &= isalnum((unsigned char)*p) || *p == '_';
	if (!strcmp(key, "is") || !strcmp(key, "and") || !strcmp(key, "may"))
		plain = false;
	if (!plain && strchr(key, '"'))
		return false;
	fprintf(f, plain ? "%s" : "\"%s\"", key);
	if (!k0)
		return false;
	if (!strcmp(k0, "any")) {
		fputs(" may be anything", f);
	} else if (!strcmp(k0, "equals")) {
		fputs(" is ", f);
		return value(f, v);
	} else if (!strcmp(k0, "in")) {
		fputs(" is one of ", f);
		json_array_foreach(v, k, x) {
			if (!value(f, x))
				return false;
			sep(f, k, json_array_size(v));
		}
	} else if (!strcmp(k0, "within")) {
		fputs(" is within ", f);
		return items(f, policy, v, false);
	} else if (!strcmp(k0, "domain_in")) {
		fputs(" is a URL on ", f);
		return items(f, policy, v, false);
	} else if (!strcmp(k0, "prefix") || !strcmp(k0, "glob")) {
		fputs(!strcmp(k0, "prefix") ? " starts with " : " matches ", f);
		return json_is_string(v) && value(f, v);
	} else {
		return false;
	}
	return true;
}

static bool render_tool(FILE *f, const json_t *policy, const char *d, const json_t *tool)
{
	const char *name = json_string_value(json_object_get(tool, "name")), *key;
	const json_t *args = json_object_get(tool, "args"), *c;
	bool first = true;

	if (!name || !sayable(name) || !strchr(name, '.'))
		return false;
	fprintf(f, "%s%s", !strcmp(d, "allow") ? "The agent may call " : !strcmp(d, "deny") ?
		"The agent may not call " : "Ask me before calling ", name);
	json_object_foreach((json_t *)args, key, c) {
		fputs(first ? " when " : " and ", f);
		first = false;
		if (!cond(f, policy, key, c))
			return false;
	}
	return true;
}

static void render_rule(FILE *f, const json_t *policy, const json_t *r)
{
	const char *d = json_string_value(json_object_get(r, "decision")) ?: "";
	const char *desc = json_string_value(json_object_get(r, "description"));
	const char *name = json_string_value(json_object_get(r, "name")) ?: "?";
	char *buf = NULL;
	size_t len = 0;
	FILE *s = open_memstream(&buf, &len);
	bool ok;

	if (!s)
		return;
	if (json_object_get(r, "fs"))
		ok = render_fs(s, policy, d, json_object_get(r, "fs"));
	else if (json_object_get(r, "net"))
		ok = render_net(s, policy, d, json_object_get(r, "net"));
	else
		ok = render_tool(s, policy, d, json_object_get(r, "tool"));
	fclose(s);
	if (desc && !json_object_get(r, "source")) {
		fprintf(f, "# %s: ", name);
		for (const char *c = desc; *c; c++)
			fputc(*c == '\n' ? ' ' : *c, f);
		fputc('\n', f);
	}
	if (ok)
		fprintf(f, "%s.\n", buf);
	else
		fprintf(f, "# cannot say in English: rule %s\n", name);
	free(buf);
}

static void render_head(FILE *f, const json_t *policy)
{
	const char *name = json_string_value(json_object_get(policy, "name"));
	const char *desc = json_string_value(json_object_get(policy, "description"));
	const json_t *lists = json_object_get(policy, "lists"), *v;
	const char *key;
	char words[256];

	if (name && sayable(name))
		fprintf(f, "This policy is called %s.\n", name);
	if (desc) {
		/* One sentence: its own full stops and quotes would end or open tokens. */
		fputs("About this policy: ", f);
		for (const char *c = desc; *c; c++) {
			if (*c == '.' && (!c[1] || isspace((unsigned char)c[1])))
				fputs(c[1] ? ";" : "", f);
			else
				fputc(*c == '"' ? '\'' : *c == '\n' ? ' ' : *c, f);
		}
		fputs(".\n", f);
	}
	json_object_foreach((json_t *)lists, key, v) {
		if (!list_words(key, words, sizeof(words)))
			continue;
		words[0] = (char)toupper((unsigned char)words[0]);
		fprintf(f, "%s%s", words, json_array_size(v) == 1 ? " is " : json_array_size(v) ? " are " : " ");
		if (!json_array_size(v))
			fputs("is empty", f);
		else if (!items(f, policy, v, true))
			fputs("# cannot say in English", f);
		fputs(".\n", f);
	}
}

static void render_cred(FILE *f, const json_t *c)
{
	const char *env = json_string_value(json_object_get(c, "env"));
	const json_t *src = json_object_get(c, "source");
	const char *prefix = json_string_value(json_object_get(c, "prefix"));
	size_t k;
	json_t *v;

	for (k = 0; en_known_creds[k].word; k++) {
		json_t *known = json_loads(en_known_creds[k].json, 0, NULL);
		bool same = json_equal(known, c);

		json_decref(known);
		if (same) {
			fprintf(f, "Use my %c%s key.\n", toupper((unsigned char)en_known_creds[k].word[0]),
				en_known_creds[k].word + 1);
			return;
		}
	}
	if (!env || !src || json_object_get(c, "upstream") || json_object_get(c, "server_tools")) {
		fprintf(f, "# cannot say in English: credential %s\n",
			json_string_value(json_object_get(c, "name")) ?: "?");
		return;
	}
	if (json_object_get(src, "env"))
		fprintf(f, "Use the secret in $%s for ", json_string_value(json_object_get(src, "env")));
	else
		fprintf(f, "Use the secret in the file %s for ",
			json_string_value(json_object_get(src, "file")));
	json_array_foreach(json_object_get(c, "hosts"), k, v) {
		fputs(json_string_value(v), f);
		sep(f, k, json_array_size(json_object_get(c, "hosts")));
	}
	fprintf(f, " in the header %s", json_string_value(json_object_get(c, "header")));
	if (prefix)
		fprintf(f, " with the prefix \"%s\"", prefix);
	fputs(" only for ", f);
	json_array_foreach(json_object_get(c, "endpoints"), k, v) {
		fputs(json_string_value(v), f);
		sep(f, k, json_array_size(json_object_get(c, "endpoints")));
	}
	fprintf(f, " as $%s.\n", env);
}

static bool seconds_of(const json_t *v, unsigned long long *out)
{
	uint64_t s;

	if (json_is_integer(v)) {
		*out = (unsigned long long)json_integer_value(v);
		return true;
	}
	if (json_is_string(v) && !pol_parse_duration(json_string_value(v), &s)) {
		*out = s;
		return true;
	}
	return false;
}

static bool bytes_of(const json_t *v, unsigned long long *out)
{
	uint64_t b;

	if (json_is_integer(v)) {
		*out = (unsigned long long)json_integer_value(v);
		return true;
	}
	if (json_is_string(v) && !pol_parse_size(json_string_value(v), &b)) {
		*out = b;
		return true;
	}
	return false;
}

static void render_tail(FILE *f, const json_t *policy)
{
	const json_t *a = json_object_get(policy, "approvals"), *b = json_object_get(policy, "budgets");
	static const struct { const char *key, *head, *unit; int kind; } bud[] = {
		{ "wall_time", "Stop after", "seconds", 0 },
		{ "steps", "Stop after", "steps", 1 },
		{ "llm_tokens", "Stop after", "tokens", 1 },
		{ "egress_requests", "Stop after", "requests", 1 },
		{ "egress_bytes", "Stop after", "bytes of traffic", 2 },
		{ "audit", "Stop after", "bytes of audit log", 2 },
		{ "memory", "Use at most", "bytes of memory", 2 },
		{ "pids", "Use at most", "processes", 1 },
	};
	unsigned long long n;
	const json_t *v;

	if (json_object_get(policy, "audit_shipping"))
		fprintf(f, "# cannot say in English: audit_shipping (kept in the JSON form only)\n");
	if (a) {
		const char *on = json_string_value(json_object_get(a, "on_timeout")) ?: "deny";

		if (!json_object_get(a, "timeout") || seconds_of(json_object_get(a, "timeout"), &n))
			fprintf(f, "Wait %llu seconds for my answer, then %s.\n",
				json_object_get(a, "timeout") ? n : 120, on);
	}
	for (size_t k = 0; k < sizeof(bud) / sizeof(bud[0]); k++) {
		v = json_object_get(b, bud[k].key);
		if (!v)
			continue;
		if (bud[k].kind == 0 && seconds_of(v, &n) && n && n % 3600 == 0)
			fprintf(f, "%s %llu hours.\n", bud[k].head, n / 3600);
		else if (bud[k].kind == 2 && bytes_of(v, &n) && n && n % (1ull << 30) == 0)
			fprintf(f, "%s %llu GB%s.\n", bud[k].head, n >> 30, bud[k].unit + 5);
		else if (bud[k].kind == 2 && bytes_of(v, &n) && n && n % (1ull << 20) == 0)
			fprintf(f, "%s %llu MB%s.\n", bud[k].head, n >> 20, bud[k].unit + 5);
		else if (bud[k].kind == 0 ? seconds_of(v, &n) : bud[k].kind == 2 ? bytes_of(v, &n) :
		    (json_is_integer(v) && (n = (unsigned long long)json_integer_value(v), true)))
			fprintf(f, "%s %llu %s.\n", bud[k].head, n, bud[k].unit);
		else
			fprintf(f, "# cannot say in English: budget %s\n", bud[k].key);
	}
	if ((v = json_object_get(b, "cpu"))) {
		if (json_is_integer(v))
			fprintf(f, "Use at most %lld CPUs.\n", (long long)json_integer_value(v));
		else
			fprintf(f, "Use at most %g CPUs.\n", json_number_value(v));
	}
}

char *en_render(const json_t *policy)
{
	char *buf = NULL;
	size_t len = 0, k;
	FILE *f;
	json_t *v;

	if (!json_is_object(policy)) {
		errno = EINVAL;
		return NULL;
	}
	f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	render_head(f, policy);
	json_array_foreach(json_object_get(policy, "rules"), k, v)
		render_rule(f, policy, v);
	json_array_foreach(json_object_get(policy, "credentials"), k, v)
		render_cred(f, v);
	render_tail(f, policy);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}
