// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Policy loader and evaluator: every diagnostic names where, decisions
 * follow "default deny, strongest wins" whatever the rule order, invariants
 * cannot be relaxed, canonicalisation defeats symlinks and "..", and the
 * indexed evaluator always agrees with the linear one.  Named for policy.h,
 * the one contract of policy/: each case goes through parse.c, compile.c,
 * invariants.c and eval.c, as a policy does (match.c, lift.c and jsonpos.c,
 * pure helpers, have their own test_<file>.c).
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "parse_warn.h"
#include "policy.h"

static struct pol_vars vars;

static int setup(void **state)
{
	memset(&vars, 0, sizeof(vars));
	pol_vars_set(&vars, "WORKSPACE", "/work/p");
	pol_vars_set(&vars, "HOME", "/home/agent");
	pol_vars_set(&vars, "TMPDIR", "/tmp");
	pol_vars_set(&vars, "USER", "agent");
	pol_vars_set(&vars, "UID", "1000");
	return 0;
}

static int teardown(void **state)
{
	pol_vars_free(&vars);
	return 0;
}

/* Load text; on failure return the diagnostics for inspection. */
static struct policy *load(const char *text, struct pol_diags *ds)
{
	struct policy *p = NULL;

	memset(ds, 0, sizeof(*ds));
	(void)pol_load_text(text, strlen(text), "t.json", &vars, &p, ds);
	return p;
}

/* Assert the first error is at line:col and mentions `needle`. */
static void expect_error(const char *text, int line, int col, const char *needle)
{
	struct pol_diags ds;
	struct policy *p = load(text, &ds);

	if (p || ds.n_errors == 0 || ds.d[0].pos.line != line || ds.d[0].pos.col != col ||
	    !strstr(ds.d[0].msg, needle)) {
		fprintf(stderr, "want %d:%d '%s'\ngot: ", line, col, needle);
		pol_diags_print(&ds, "t.json", stderr);
	}
	assert_null(p);
	assert_true(ds.n_errors > 0);
	assert_int_equal(ds.d[0].pos.line, line);
	assert_int_equal(ds.d[0].pos.col, col);
	assert_non_null(strstr(ds.d[0].msg, needle));
	pol_diags_free(&ds);
}

#define HDR "{\"cordon_policy\": 1,\n\"rules\": [\n"

static void errors_name_file_line_col(void **state)
{
	expect_error(HDR "{\"name\": \"a\", \"decison\": \"allow\", \"fs\": {\"paths\": [\"/x\"], \"rights\": [\"read\"]}}]}",
		     3, 15, "did you mean \"decision\"");
	expect_error(HDR "{\"name\": \"a\", \"decision\": \"allow\", \"fs\": {\"paths\": [\"/x\"], \"rights\": [\"wirte\"]}}]}",
		     3, 71, "did you mean \"write\"");
	expect_error(HDR "{\"name\": \"a\", \"decision\": \"alow\", \"fs\": {\"paths\": [\"/x\"], \"rights\": [\"read\"]}}]}",
		     3, 27, "did you mean \"allow\"");
	expect_error(HDR "{\"name\": \"a\", \"decision\": \"allow\",\n  \"fs\": {\"paths\": [\"rel/x\"], \"rights\": [\"read\"]}}]}",
		     4, 20, "relative");
	expect_error(HDR "{\"name\": \"a\", \"decision\": \"allow\", \"net\": {\"hosts\": [\"10.0.0.0/33\"]}}]}",
		     3, 54, "bad CIDR");
	expect_error(HDR "{\"name\": \"a\", \"decision\": \"allow\", \"net\": {\"hosts\": [\"1.2.3.4\"], \"ports\": [70000]}}]}",
		     3, 76, "out of range");
	expect_error(HDR "{\"name\": \"a\", \"decision\": \"allow\", \"fs\": {\"paths\": [\"${NOPE}/x\"], \"rights\": [\"read\"]}}]}",
		     3, 54, "unknown variable ${NOPE}");
	expect_error(HDR "{\"name\": \"a\", \"decision\": \"allow\", \"fs\": {\"paths\": [\"@nolist\"], \"rights\": [\"read\"]}}]}",
		     3, 53, "unknown list");
	expect_error(HDR "{\"name\": \"a\", \"decision\": \"allow\", \"fs\": {\"paths\": \"/x\", \"rights\": [\"read\"]}}]}",
		     3, 52, "expected an array");
	expect_error(HDR "{\"name\": \"a\", \"decision\": \"allow\", \"net\": {\"hosts\": [\"example.com\"], \"via\": \"direct\"}}]}",
		     3, 43, "cannot be \"direct\"");
	expect_error(HDR "{\"name\": \"a\", \"decision\": \"allow\", \"tool\": {\"name\": \"nodot\"}}]}",
		     3, 53, "bad tool name");
	expect_error(HDR "{\"name\": \"a\", \"decision\": \"deny\", \"fs\": {\"paths\": [\"/x\"], \"rights\": [\"read\"]}},\n"
		     "{\"name\": \"a\", \"decision\": \"deny\", \"fs\": {\"paths\": [\"/y\"], \"rights\": [\"read\"]}}]}",
		     4, 10, "duplicate rule name \"a\" (first at line 3)");
	expect_error("{\"cordon_policy\": 1, \"rules\": [}", 1, 32, "invalid JSON");
	expect_error("{\"cordon_policy\": 2, \"rules\": []}", 1, 19, "unsupported policy version");
	expect_error("{\"rules\": []}", 1, 1, "missing \"cordon_policy\"");
	expect_error("[1]", 1, 1, "a policy is a JSON object");
	expect_error(HDR "{\"name\": \"a\", \"decision\": \"allow\", \"fs\": {\"paths\": [\"/x\"], \"rights\": [\"read\"]},"
		     " \"net\": {\"hosts\": [\"1.2.3.4\"]}}]}", 3, 1, "exactly one subject");
	expect_error("{\"cordon_policy\": 1, \"rules\": [], \"budgets\": {\"memory\": \"4Q\"}}", 1, 57,
		     "bad memory size");
	expect_error("{\"cordon_policy\": 1, \"rules\": [], \"budgets\": {\"audit\": 0}}", 1, 56,
		     "bad audit size");
	expect_error("{\"cordon_policy\": 1, \"rules\": [], \"approvals\": {\"on_timeout\": \"maybe\"}}", 1, 63,
		     "on_timeout");
	expect_error("{\"cordon_policy\": 1, \"rules\": [], \"credentials\": [{\"name\": \"x\", \"env\": \"1BAD\","
		     " \"header\": \"h\", \"source\": {\"env\": \"K\"}, \"hosts\": [\"a.com\"], \"endpoints\": [\"FETCH /\"]}]}",
		     1, 72, "not a valid environment variable");
	expect_error("{\"cordon_policy\": 1, \"rules\": [], \"credentials\": [{\"name\": \"x\", \"env\": \"K\","
		     " \"header\": \"h\", \"source\": {\"env\": \"K\"}, \"hosts\": [\"a.com\"], \"endpoints\": [\"GET /\"],\n"
		     "\"server_tools\": [\"web_search\", \"Web Fetch\"]}]}",
		     2, 32, "server tool type \"Web Fetch\"");
}

static void duplicate_keys_are_refused(void **state)
{
	struct pol_diags ds;

	assert_null(load("{\"cordon_policy\": 1, \"rules\": [], \"rules\": []}", &ds));
	assert_non_null(strstr(ds.d[0].msg, "duplicate"));
	pol_diags_free(&ds);
}

static void all_errors_are_reported_not_just_the_first(void **state)
{
	struct pol_diags ds;

	assert_null(load(HDR "{\"name\": \"a\", \"decision\": \"x\", \"fs\": {\"paths\": [\"r\"], \"rights\": [\"y\"]}}]}", &ds));
	assert_int_equal(ds.n_errors, 3);
	pol_diags_free(&ds);
}

static void shadowed_rules_are_warned(void **state)
{
	struct pol_diags ds;
	struct policy *p = load(HDR
		"{\"name\": \"inner\", \"decision\": \"allow\", \"fs\": {\"paths\": [\"/w/sub\"], \"rights\": [\"read\"]}},\n"
		"{\"name\": \"outer\", \"decision\": \"deny\", \"fs\": {\"paths\": [\"/w\"], \"rights\": [\"read\", \"write\"]}}]}", &ds);

	assert_non_null(p);
	assert_int_equal(ds.n_errors, 0);
	assert_int_equal(ds.n, 1);
	assert_int_equal(ds.d[0].severity, POL_WARNING);
	assert_int_equal(ds.d[0].pos.line, 3);
	assert_non_null(strstr(ds.d[0].msg, "shadowed by rule 'outer'"));
	pol_diags_free(&ds);
	pol_free(p);
}

/* One warning of ds at LINE:COL whose message holds `text`. */
static bool warned_at(const struct pol_diags *ds, int line, int col, const char *text)
{
	for (size_t i = 0; i < ds->n; i++)
		if (ds->d[i].severity == POL_WARNING && ds->d[i].pos.line == line &&
		    ds->d[i].pos.col == col && strstr(ds->d[i].msg, text))
			return true;
	for (size_t i = 0; i < ds->n; i++)
		fprintf(stderr, "# %d:%d: %s\n", ds->d[i].pos.line, ds->d[i].pos.col, ds->d[i].msg);
	return false;
}

/*
 * The shadowing index finds a covering rule through every kind of key: a
 * path's ancestor, a pattern's literal part, a host name and its suffixes,
 * a CIDR of a shorter prefix, a tool by name and by "*"; and it names the
 * covering rule of lowest id.  What covers only in part is not warned.
 */
static void shadowing_through_every_key(void **state)
{
	struct pol_diags ds;
	struct policy *p = load(HDR
		"{\"name\": \"a1\", \"decision\": \"allow\", \"fs\": {\"paths\": [\"/w/x/k.pem\"], \"rights\": [\"read\"]}},\n"
		"{\"name\": \"d1\", \"decision\": \"deny\", \"fs\": {\"paths\": [\"/w/*/*.pem\"], \"rights\": [\"all\"]}},\n"
		"{\"name\": \"a2\", \"decision\": \"allow\", \"fs\": {\"paths\": [\"/v/**/.env\"], \"rights\": [\"read\"]}},\n"
		"{\"name\": \"d2\", \"decision\": \"escalate\", \"fs\": {\"paths\": [\"/v\"], \"rights\": [\"read\"]}},\n"
		"{\"name\": \"a3\", \"decision\": \"allow\", \"fs\": {\"paths\": [\"/u/**/x\"], \"rights\": [\"read\"]}},\n"
		"{\"name\": \"d3\", \"decision\": \"deny\", \"fs\": {\"paths\": [\"/u/*\"], \"rights\": [\"read\"]}},\n"
		"{\"name\": \"a4\", \"decision\": \"allow\", \"net\": {\"hosts\": [\"api.x.example.com\", \"y.example.com\"], \"ports\": [443]}},\n"
		"{\"name\": \"d4\", \"decision\": \"deny\", \"net\": {\"hosts\": [\"*.example.com\"]}},\n"
		"{\"name\": \"a5\", \"decision\": \"allow\", \"net\": {\"hosts\": [\"10.1.2.0/24\"], \"ports\": [22]}},\n"
		"{\"name\": \"d5\", \"decision\": \"escalate\", \"net\": {\"hosts\": [\"10.0.0.0/8\"], \"ports\": [\"1-1024\"]}},\n"
		"{\"name\": \"a6\", \"decision\": \"allow\", \"tool\": {\"name\": \"git.push\", \"args\": {\"force\": {\"equals\": false}}}},\n"
		"{\"name\": \"d6\", \"decision\": \"deny\", \"tool\": {\"name\": \"*.push\"}},\n"
		"{\"name\": \"d6b\", \"decision\": \"deny\", \"tool\": {\"name\": \"git.*\"}},\n"
		"{\"name\": \"a7\", \"decision\": \"allow\", \"net\": {\"hosts\": [\"10.1.2.3\"], \"ports\": [2222]}}]}",
		&ds);

	(void)state;
	assert_non_null(p);
	assert_true(warned_at(&ds, 3, 1, "rule 'a1' (allow) is shadowed by rule 'd1'"));
	assert_true(warned_at(&ds, 5, 1, "rule 'a2' (allow) is shadowed by rule 'd2'"));
	assert_true(warned_at(&ds, 9, 1, "rule 'a4' (allow) is shadowed by rule 'd4'"));
	assert_true(warned_at(&ds, 11, 1, "rule 'a5' (allow) is shadowed by rule 'd5'"));
	assert_true(warned_at(&ds, 13, 1, "rule 'a6' (allow) is shadowed by rule 'd6'"));
	/* "*" is one non-dot name, "**" any depth: d3 does not cover a3; 2222 is past d5's ports. */
	assert_int_equal(ds.n, 5);
	pol_diags_free(&ds);
	pol_free(p);
}

/*
 * The shadowing index against every pair compared (the oracle), on random
 * policies from a small vocabulary where rules often cover each other:
 * paths with "*" and "**" at several depths, names, suffixes and CIDRs
 * with and without ports, tools by name and by "*", one or two subjects
 * a rule.  Same rule named for every rule, or the index missed one (or
 * invented one).
 */
#define ARRAY_N(a) (sizeof(a) / sizeof((a)[0]))

static uint64_t shadow_seed = 0x2545f4914f6cdd1dull;

static unsigned rnd_below(unsigned n)
{
	shadow_seed ^= shadow_seed >> 12;
	shadow_seed ^= shadow_seed << 25;
	shadow_seed ^= shadow_seed >> 27;
	return (unsigned)((shadow_seed * 2685821657736338717ull) >> 33) % n;
}

static void shadowing_index_agrees_with_pairs(void **state)
{
	static const char *const paths[] = { "/w", "/w/a", "/w/a/b", "/w/*", "/w/*/b", "/w/**/b",
					     "/w/a/*.c", "/v", "/v/x", "/", "/w/**", "/w/a/**/c",
					     "/w/a/b/c", "/w/a/x.c", "/w/*/b/c", "/w/*/*/c",
					     "/w/a/*/c" };
	static const char *const rights[] = { "\"read\"", "\"read\", \"write\"", "\"all\"",
					      "\"write\"", "\"exec\", \"read\"" };
	static const char *const hosts[] = { "a.example.com", "*.example.com", "b.a.example.com",
					     "*.a.example.com", "10.0.0.0/8", "10.1.0.0/16",
					     "10.1.2.3", "2001:db8::/32", "2001:db8::1" };
	static const char *const ports[] = { "", ", \"ports\": [443]", ", \"ports\": [\"1-1024\"]",
					     ", \"ports\": [22, 443]" };
	static const char *const tools[] = { "git.push", "*.push", "git.*", "*.*", "db.q" };
	static const char *const decisions[] = { "allow", "escalate", "deny" };
	size_t shadowed = 0;

	(void)state;
	for (int round = 0; round < 40; round++) {
		char *text = malloc(1 << 16);
		size_t o = 0, n = 60 + rnd_below(60);
		uint32_t *fast, *slow;
		struct pol_diags ds;
		struct policy *p;

		assert_non_null(text);
		o += (size_t)snprintf(text + o, (1 << 16) - o, HDR);
		for (size_t i = 0; i < n; i++) {
			const char *d = decisions[rnd_below(3)];
			unsigned kind = rnd_below(3), two = rnd_below(3) == 0;

			o += (size_t)snprintf(text + o, (1 << 16) - o, "%s{\"name\": \"r%zu\", \"decision\": \"%s\", ",
					      i ? ",\n" : "", i, d);
			if (kind == 0)
				o += (size_t)snprintf(text + o, (1 << 16) - o,
						      "\"fs\": {\"paths\": [\"%s\"%s%s%s], \"rights\": [%s]}}",
						      paths[rnd_below(ARRAY_N(paths))], two ? ", \"" : "",
						      two ? paths[rnd_below(ARRAY_N(paths))] : "", two ? "\"" : "",
						      rights[rnd_below(ARRAY_N(rights))]);
			else if (kind == 1)
				o += (size_t)snprintf(text + o, (1 << 16) - o,
						      "\"net\": {\"hosts\": [\"%s\"%s%s%s]%s}}",
						      hosts[rnd_below(ARRAY_N(hosts))], two ? ", \"" : "",
						      two ? hosts[rnd_below(ARRAY_N(hosts))] : "", two ? "\"" : "",
						      ports[rnd_below(ARRAY_N(ports))]);
			else
				o += (size_t)snprintf(text + o, (1 << 16) - o, "\"tool\": {\"name\": \"%s\"%s}}",
						      tools[rnd_below(ARRAY_N(tools))],
						      two ? ", \"args\": {\"k\": {\"any\": true}}" : "");
		}
		o += (size_t)snprintf(text + o, (1 << 16) - o, "]}");
		assert_true(o < (1 << 16));
		p = load(text, &ds);
		if (!p) {
			pol_diags_print(&ds, "random.json", stderr);
			fail_msg("round %d does not load", round);
		}
		fast = calloc(p->n_rules, sizeof(*fast));
		slow = calloc(p->n_rules, sizeof(*slow));
		assert_non_null(fast);
		assert_non_null(slow);
		assert_int_equal(parse_shadowing(p, false, fast), 0);
		assert_int_equal(parse_shadowing(p, true, slow), 0);
		for (size_t i = 0; i < p->n_rules; i++) {
			if (fast[i] != slow[i])
				fail_msg("round %d, rule %s: index says %d, pairs say %d", round,
					 p->rules[i].name, (int)fast[i], (int)slow[i]);
			shadowed += fast[i] != UINT32_MAX;
		}
		free(fast);
		free(slow);
		free(text);
		pol_free(p);
		pol_diags_free(&ds);
	}
	assert_true(shadowed > 100);    /* the vocabulary is meant to overlap */
}

/*
 * What a rule cannot do is said at the rule (issue 34): an allow an
 * invariant overrides, in whole or in part; "/" allowed for writing; no
 * rules; no allowing rule; a deny whose hosts expanded to nothing; an "in"
 * of nothing.  An empty "ports" is an error (it would read as any port).
 */
static void rules_that_cannot_are_warned(void **state)
{
	struct pol_diags ds;
	struct policy *p = load(HDR
		"{\"name\": \"keys\", \"decision\": \"allow\", \"fs\": {\"paths\": [\"${HOME}/.ssh\"], \"rights\": [\"read\"]}},\n"
		"{\"name\": \"bpf\", \"decision\": \"escalate\", \"fs\": {\"paths\": [\"/boot\"], \"rights\": [\"read\", \"write\"]}},\n"
		"{\"name\": \"root\", \"decision\": \"allow\", \"fs\": {\"paths\": [\"/\"], \"rights\": [\"read\", \"write\"]}},\n"
		"{\"name\": \"nobody\", \"decision\": \"deny\", \"net\": {\"hosts\": [\"@none\"]}},\n"
		"{\"name\": \"never\", \"decision\": \"deny\", \"tool\": {\"name\": \"db.q\", \"args\": {\"mode\": {\"in\": []}}}}],\n"
		"\"lists\": {\"none\": []}}", &ds);

	(void)state;
	assert_non_null(p);
	assert_true(warned_at(&ds, 3, 1, "rule 'keys' allows read on /home/agent/.ssh, which the "
				"invariant 'credential-store' denies to every policy: the rule cannot allow it"));
	assert_true(warned_at(&ds, 4, 1, "rule 'bpf' escalates write on /boot"));
	assert_true(warned_at(&ds, 4, 1, "cannot escalate those rights"));
	assert_true(warned_at(&ds, 5, 1, "rule 'root' allows write on /: every file"));
	assert_true(warned_at(&ds, 6, 1, "rule 'nobody' has no hosts"));
	assert_true(warned_at(&ds, 7, 1, "argument 'mode' must be \"in\" an empty list"));
	assert_int_equal(ds.n, 5);
	pol_diags_free(&ds);
	pol_free(p);

	p = load("{\"cordon_policy\": 1,\n \"rules\": []}", &ds);
	assert_non_null(p);
	assert_int_equal(ds.n, 1);
	assert_true(warned_at(&ds, 2, 11, "no rules: every request is denied"));
	pol_diags_free(&ds);
	pol_free(p);

	p = load(HDR "{\"name\": \"d\", \"decision\": \"deny\", \"fs\": {\"paths\": [\"/w\"], \"rights\": [\"read\"]}}]}", &ds);
	assert_non_null(p);
	assert_int_equal(ds.n, 1);
	assert_true(warned_at(&ds, 2, 10, "no rule allows anything"));
	pol_diags_free(&ds);
	pol_free(p);

	p = load(HDR "{\"name\": \"n\", \"decision\": \"allow\", \"net\": {\"hosts\": [\"10.0.0.1\"], \"ports\": []}}]}", &ds);
	assert_null(p);
	assert_int_equal(ds.n_errors, 1);
	assert_int_equal(ds.d[0].pos.line, 3);
	assert_non_null(strstr(ds.d[0].msg, "\"ports\" is empty"));
	pol_diags_free(&ds);
}

/* A host sent through the credential proxy that no credential names is said. */
static void uncredentialed_hosts_are_warned(void **state)
{
	struct pol_diags ds;
	struct policy *p = load(HDR
		"{\"name\": \"llm\", \"decision\": \"allow\", \"net\": {\"hosts\": [\"api.a.test\", \"api.g.test\"],\n"
		" \"ports\": [443], \"via\": \"credential-proxy\"}}],\n"
		"\"credentials\": [{\"name\": \"a\", \"env\": \"A\", \"source\": {\"env\": \"A\"}, \"hosts\": [\"api.a.test\"],\n"
		" \"header\": \"x-api-key\", \"endpoints\": [\"POST /v1/x\"]}]}", &ds);

	(void)state;
	assert_non_null(p);
	assert_int_equal(ds.n_errors, 0);
	assert_int_equal(ds.n, 1);
	assert_int_equal(ds.d[0].severity, POL_WARNING);
	assert_non_null(strstr(ds.d[0].msg, "api.g.test through the credential proxy"));
	assert_null(strstr(ds.d[0].msg, "api.a.test"));
	pol_diags_free(&ds);
	pol_free(p);
}

static uint32_t decide(struct policy *p, enum pol_op op, const char *path)
{
	struct pol_request rq = { .op = op, .path = path };
	struct pol_result res, lin;

	pol_eval(p, &rq, &res);
	pol_eval_linear(p, &rq, &lin);
	assert_int_equal(res.decision, lin.decision);
	return res.decision;
}

static void strongest_wins_whatever_the_order(void **state)
{
	static const char *const orders[2] = {
		HDR "{\"name\": \"a\", \"decision\": \"allow\", \"fs\": {\"paths\": [\"/w\"], \"rights\": [\"all\"]}},\n"
		"{\"name\": \"e\", \"decision\": \"escalate\", \"fs\": {\"paths\": [\"/w/deploy\"], \"rights\": [\"write\"]}},\n"
		"{\"name\": \"d\", \"decision\": \"deny\", \"fs\": {\"paths\": [\"/w/deploy/keys\"], \"rights\": [\"all\"]}}]}",
		HDR "{\"name\": \"d\", \"decision\": \"deny\", \"fs\": {\"paths\": [\"/w/deploy/keys\"], \"rights\": [\"all\"]}},\n"
		"{\"name\": \"e\", \"decision\": \"escalate\", \"fs\": {\"paths\": [\"/w/deploy\"], \"rights\": [\"write\"]}},\n"
		"{\"name\": \"a\", \"decision\": \"allow\", \"fs\": {\"paths\": [\"/w\"], \"rights\": [\"all\"]}}]}",
	};

	for (int i = 0; i < 2; i++) {
		struct pol_diags ds;
		struct policy *p = load(orders[i], &ds);

		assert_non_null(p);
		assert_int_equal(decide(p, POL_OP_WRITE, "/w/src/a.c"), CORDON_ALLOW);
		assert_int_equal(decide(p, POL_OP_READ, "/w/deploy/x"), CORDON_ALLOW);
		assert_int_equal(decide(p, POL_OP_WRITE, "/w/deploy/x"), CORDON_ESCALATE);
		assert_int_equal(decide(p, POL_OP_READ, "/w/deploy/keys/k"), CORDON_DENY);
		assert_int_equal(decide(p, POL_OP_READ, "/elsewhere"), CORDON_DENY);
		assert_int_equal(decide(p, POL_OP_READ, "/w2/x"), CORDON_DENY);   /* not below /w */
		pol_diags_free(&ds);
		pol_free(p);
	}
}

static void invariants_beat_any_policy(void **state)
{
	struct pol_diags ds;
	struct policy *p = load(HDR "{\"name\": \"everything\", \"decision\": \"allow\", \"fs\": {\"paths\": [\"/\"], \"rights\": [\"all\"]}}]}", &ds);
	struct pol_request rq = { .op = POL_OP_READ, .path = "/home/agent/.ssh/id_rsa" };
	struct pol_result res;

	assert_non_null(p);
	pol_eval(p, &rq, &res);
	assert_int_equal(res.decision, CORDON_DENY);
	assert_string_equal(res.invariant, "credential-store");
	assert_int_equal(decide(p, POL_OP_READ, "/home/someone/.aws/credentials"), CORDON_DENY);
	assert_int_equal(decide(p, POL_OP_WRITE, "/sys/fs/cgroup/cgroup.procs"), CORDON_DENY);
	assert_int_equal(decide(p, POL_OP_READ, "/sys/fs/cgroup/cgroup.procs"), CORDON_ALLOW);
	assert_int_equal(decide(p, POL_OP_READ, "/dev/nvme0n1"), CORDON_DENY);
	assert_int_equal(decide(p, POL_OP_DELETE, "/home/agent"), CORDON_DENY);
	assert_int_equal(decide(p, POL_OP_DELETE, "/home"), CORDON_DENY);
	assert_int_equal(decide(p, POL_OP_DELETE, "/home/agent/src"), CORDON_ALLOW);
	assert_int_equal(decide(p, POL_OP_READ, "/home/agent/.sshfoo"), CORDON_ALLOW);
	/* cordon's own files: writable by no policy. */
	assert_int_equal(pol_protect_path(p, "/tmp/cordon-test-audit.log"), 0);
	assert_int_equal(decide(p, POL_OP_WRITE, "/tmp/cordon-test-audit.log"), CORDON_DENY);
	assert_int_equal(decide(p, POL_OP_READ, "/tmp/cordon-test-audit.log"), CORDON_ALLOW);
	pol_diags_free(&ds);
	pol_free(p);
}

/*
 * cordon run --mcp grants the agent exactly its own MCP socket: write (to
 * connect) on that one path, nothing beside or below it, and never what the
 * invariants refuse (creating or removing anything in the socket directory,
 * anything in /run/cordon).
 */
static void a_granted_path_is_that_path_only(void **state)
{
	struct pol_diags ds;
	struct policy *p = load(HDR "{\"name\": \"ws\", \"decision\": \"allow\", \"fs\": {\"paths\": [\"/srv/ws\"], \"rights\": [\"all\"]}}]}", &ds);
	struct pol_request rq = { .op = POL_OP_WRITE, .path = "/run/cordon-mcp/s1.sock" };
	struct pol_result res;

	assert_non_null(p);
	assert_int_equal(decide(p, POL_OP_WRITE, "/run/cordon-mcp/s1.sock"), CORDON_DENY);
	assert_int_equal(pol_grant_path(p, "mcp-socket", "/run/cordon-mcp/s1.sock", CORDON_FS_WRITE), 0);
	pol_eval(p, &rq, &res);
	assert_int_equal(res.decision, CORDON_ALLOW);
	assert_non_null(res.rule);
	assert_string_equal(res.rule->name, "mcp-socket");
	assert_int_equal(decide(p, POL_OP_READ, "/run/cordon-mcp/s1.sock"), CORDON_DENY);
	assert_int_equal(decide(p, POL_OP_WRITE, "/run/cordon-mcp/s2.sock"), CORDON_DENY);
	assert_int_equal(decide(p, POL_OP_WRITE, "/run/cordon-mcp/s1.sockx"), CORDON_DENY);
	assert_int_equal(decide(p, POL_OP_DELETE, "/run/cordon-mcp/s1.sock"), CORDON_DENY);
	/* The rules before it kept their places. */
	assert_int_equal(decide(p, POL_OP_WRITE, "/srv/ws/a"), CORDON_ALLOW);
	/* Same name twice: refused; an invariant beats a grant. */
	assert_int_equal(pol_grant_path(p, "mcp-socket", "/tmp/x", CORDON_FS_WRITE), -EEXIST);
	assert_int_equal(pol_grant_path(p, "g2", "/run/cordon-mcp", CORDON_FS_ALL), 0);
	assert_int_equal(decide(p, POL_OP_CREATE, "/run/cordon-mcp/s3.sock"), CORDON_DENY);
	assert_int_equal(pol_grant_path(p, "g3", "/run/cordon/s1/approve.sock", CORDON_FS_WRITE), 0);
	assert_int_equal(decide(p, POL_OP_WRITE, "/run/cordon/s1/approve.sock"), CORDON_DENY);
	pol_diags_free(&ds);
	pol_free(p);
}

/* A symlink in the workspace pointing at ~/.ssh: canonicalised, it is ~/.ssh. */
static void symlinks_and_dotdot_cannot_redirect(void **state)
{
	char dir[] = "/tmp/cordon-pol-XXXXXX", ws[256], home[256], ssh[PATH_MAX],
	     link[PATH_MAX], req[PATH_MAX], canon[PATH_MAX], text[2048];
	struct pol_vars v = {};
	struct pol_diags ds = {};
	struct policy *p = NULL;
	struct pol_request rq = { .op = POL_OP_READ };
	struct pol_result res;

	assert_non_null(mkdtemp(dir));
	snprintf(ws, sizeof(ws), "%s/ws", dir);
	snprintf(home, sizeof(home), "%s/home", dir);
	snprintf(ssh, sizeof(ssh), "%s/.ssh", home);
	snprintf(link, sizeof(link), "%s/innocent", ws);
	assert_int_equal(mkdir(ws, 0755), 0);
	assert_int_equal(mkdir(home, 0755), 0);
	assert_int_equal(mkdir(ssh, 0700), 0);
	assert_int_equal(symlink(ssh, link), 0);
	pol_vars_set(&v, "WORKSPACE", ws);
	pol_vars_set(&v, "HOME", home);
	snprintf(text, sizeof(text), HDR "{\"name\": \"ws\", \"decision\": \"allow\", \"fs\": {\"paths\": [\"${WORKSPACE}\"], \"rights\": [\"all\"]}}]}");
	assert_int_equal(pol_load_text(text, strlen(text), "t.json", &v, &p, &ds), 0);

	snprintf(req, sizeof(req), "%s/innocent/id_rsa", ws);
	assert_int_equal(pol_canon_path(req, NULL, canon, sizeof(canon)), 0);
	assert_true(strncmp(canon, ssh, strlen(ssh)) == 0);
	rq.path = canon;
	pol_eval(p, &rq, &res);
	assert_int_equal(res.decision, CORDON_DENY);
	assert_string_equal(res.invariant, "credential-store");

	/* ".." after the symlink goes to the link target's parent, as in the kernel. */
	snprintf(req, sizeof(req), "%s/innocent/../other", ws);
	assert_int_equal(pol_canon_path(req, NULL, canon, sizeof(canon)), 0);
	snprintf(req, sizeof(req), "%s/other", home);
	assert_string_equal(canon, req);
	rq.path = canon;
	pol_eval(p, &rq, &res);
	assert_int_equal(res.decision, CORDON_DENY);

	/* Relative requests resolve against cwd. */
	assert_int_equal(pol_canon_path("a/../b", ws, canon, sizeof(canon)), 0);
	snprintf(req, sizeof(req), "%s/b", ws);
	assert_string_equal(canon, req);

	pol_free(p);
	pol_diags_free(&ds);
	pol_vars_free(&v);
	unlink(link);
	rmdir(ssh);
	rmdir(home);
	rmdir(ws);
	rmdir(dir);
}

static struct policy *tool_policy(void)
{
	struct pol_diags ds;
	struct policy *p = load(HDR
		"{\"name\": \"read\", \"decision\": \"allow\", \"tool\": {\"name\": \"fs.read\", \"args\": {\"path\": {\"within\": [\"/work/p\"]}, \"limit\": {\"any\": true}}}},\n"
		"{\"name\": \"fetch\", \"decision\": \"allow\", \"tool\": {\"name\": \"web.fetch\", \"args\": {\"url\": {\"domain_in\": [\"good.com\", \"*.docs.org\"]}}}},\n"
		"{\"name\": \"mode\", \"decision\": \"allow\", \"tool\": {\"name\": \"db.query\", \"args\": {\"mode\": {\"in\": [\"ro\", \"explain\"]}}}},\n"
		"{\"name\": \"no-drop\", \"decision\": \"deny\", \"tool\": {\"name\": \"db.*\", \"args\": {\"mode\": {\"equals\": \"drop\"}}}},\n"
		"{\"name\": \"push\", \"decision\": \"escalate\", \"tool\": {\"name\": \"git.push\"}}]}", &ds);

	assert_non_null(p);
	pol_diags_free(&ds);
	return p;
}

static uint32_t call(struct policy *p, const char *server, const char *tool, const char *args,
		     const char **inv)
{
	json_t *a = json_loads(args, 0, NULL);
	const char *roots[] = { "/work/p", NULL };
	struct pol_request rq = { .op = POL_OP_TOOL, .server = server, .tool = tool, .args = a,
				  .roots = roots };
	struct pol_result res, lin;

	assert_non_null(a);
	pol_eval(p, &rq, &res);
	pol_eval_linear(p, &rq, &lin);
	assert_int_equal(res.decision, lin.decision);
	if (inv)
		*inv = res.invariant;
	json_decref(a);
	return res.decision;
}

static void tool_calls(void **state)
{
	struct policy *p = tool_policy();
	const char *inv;

	assert_int_equal(call(p, "fs", "read", "{\"path\": \"/work/p/a\"}", NULL), CORDON_ALLOW);
	assert_int_equal(call(p, "fs", "read", "{\"path\": \"src/a\", \"limit\": 5}", NULL), CORDON_ALLOW);
	assert_int_equal(call(p, "fs", "read", "{\"path\": \"../../etc/passwd\"}", NULL), CORDON_DENY);
	assert_int_equal(call(p, "fs", "read", "{\"path\": \"/work/p/../q\"}", NULL), CORDON_DENY);
	assert_int_equal(call(p, "fs", "read", "{\"path\": 7}", NULL), CORDON_DENY);
	assert_int_equal(call(p, "fs", "read", "{}", NULL), CORDON_DENY);
	assert_int_equal(call(p, "fs", "read", "{\"path\": \"/work/p/a\", \"follow\": 1}", &inv), CORDON_DENY);
	assert_string_equal(inv, "unknown-argument");
	assert_int_equal(call(p, "fs", "write", "{\"path\": \"/work/p/a\"}", &inv), CORDON_DENY);
	assert_string_equal(inv, "unknown-tool");

	assert_int_equal(call(p, "web", "fetch", "{\"url\": \"https://good.com/x\"}", NULL), CORDON_ALLOW);
	assert_int_equal(call(p, "web", "fetch", "{\"url\": \"https://GOOD.com.:443/x\"}", NULL), CORDON_ALLOW);
	assert_int_equal(call(p, "web", "fetch", "{\"url\": \"https://api.docs.org/x\"}", NULL), CORDON_ALLOW);
	assert_int_equal(call(p, "web", "fetch", "{\"url\": \"https://docs.org/x\"}", NULL), CORDON_DENY);
	assert_int_equal(call(p, "web", "fetch", "{\"url\": \"https://good.com.evil.net/\"}", NULL), CORDON_DENY);
	assert_int_equal(call(p, "web", "fetch", "{\"url\": \"https://good.com@evil.net/\"}", NULL), CORDON_DENY);
	assert_int_equal(call(p, "web", "fetch", "{\"url\": \"https://evil.net\\\\@good.com/\"}", NULL), CORDON_DENY);
	assert_int_equal(call(p, "web", "fetch", "{\"url\": \"https://evil.net#@good.com/\"}", NULL), CORDON_DENY);
	assert_int_equal(call(p, "web", "fetch", "{\"url\": \"ftp://good.com/\"}", NULL), CORDON_DENY);
	assert_int_equal(call(p, "web", "fetch", "{\"url\": \"https://good%2ecom/\"}", NULL), CORDON_DENY);

	assert_int_equal(call(p, "db", "query", "{\"mode\": \"ro\"}", NULL), CORDON_ALLOW);
	assert_int_equal(call(p, "db", "query", "{\"mode\": \"rw\"}", NULL), CORDON_DENY);
	assert_int_equal(call(p, "db", "query", "{\"mode\": \"drop\"}", NULL), CORDON_DENY);
	assert_int_equal(call(p, "git", "push", "{}", NULL), CORDON_ESCALATE);
	pol_free(p);
}

static void lifted_exec_joins_the_file_decision(void **state)
{
	struct pol_diags ds;
	struct policy *p = load(HDR
		"{\"name\": \"bin\", \"decision\": \"allow\", \"fs\": {\"paths\": [\"/usr/bin\"], \"rights\": [\"exec\"]}},\n"
		"{\"name\": \"push\", \"decision\": \"escalate\", \"tool\": {\"name\": \"git.push\"}},\n"
		"{\"name\": \"evil\", \"decision\": \"deny\", \"tool\": {\"name\": \"http.fetch\", \"args\": {\"url\": {\"domain_in\": [\"evil.net\"]}}}}]}", &ds);
	const char *push[] = { "git", "push", "origin", "main", NULL };
	const char *status[] = { "git", "status", NULL };
	const char *curl[] = { "curl", "-s", "https://evil.net/x", NULL };
	struct pol_request rq = { .op = POL_OP_EXEC, .path = "/usr/bin/git", .argv = push };
	struct pol_result res;

	assert_non_null(p);
	pol_eval(p, &rq, &res);
	assert_int_equal(res.decision, CORDON_ESCALATE);
	assert_string_equal(res.rule->name, "push");
	rq.argv = status;
	pol_eval(p, &rq, &res);
	assert_int_equal(res.decision, CORDON_ALLOW);
	rq.path = "/usr/bin/curl";
	rq.argv = curl;
	pol_eval(p, &rq, &res);
	assert_int_equal(res.decision, CORDON_DENY);
	/* A tool rule cannot loosen the file: git outside /usr/bin stays denied. */
	rq.path = "/opt/git";
	rq.argv = status;
	pol_eval(p, &rq, &res);
	assert_int_equal(res.decision, CORDON_DENY);
	pol_diags_free(&ds);
	pol_free(p);
}

static void network(void **state)
{
	struct pol_diags ds;
	struct policy *p = load(HDR
		"{\"name\": \"lan\", \"decision\": \"allow\", \"net\": {\"hosts\": [\"10.0.0.0/8\", \"2001:db8::/32\"], \"ports\": [22, \"8000-8100\"]}},\n"
		"{\"name\": \"lo\", \"decision\": \"deny\", \"net\": {\"hosts\": [\"127.0.0.0/8\", \"::1\"]}},\n"
		"{\"name\": \"api\", \"decision\": \"allow\", \"net\": {\"hosts\": [\"*.example.com\", \"api.x.io\"], \"ports\": [443], \"via\": \"credential-proxy\"}}]}", &ds);
	struct pol_request rq = { .op = POL_OP_CONNECT };
	struct pol_result res, lin;
	static const struct { const char *host; uint16_t port; uint32_t want; } cases[] = {
		{ "10.1.2.3", 22, CORDON_ALLOW }, { "10.1.2.3", 8050, CORDON_ALLOW },
		{ "10.1.2.3", 23, CORDON_DENY }, { "11.0.0.1", 22, CORDON_DENY },
		{ "::ffff:10.9.9.9", 22, CORDON_ALLOW },       /* mapped IPv6 is IPv4 */
		{ "2001:db8::1", 8000, CORDON_ALLOW }, { "2001:db9::1", 8000, CORDON_DENY },
		{ "0x7f.1", 80, CORDON_DENY }, { "2130706433", 80, CORDON_DENY },
		{ "::1", 80, CORDON_DENY }, { "[::1]", 80, CORDON_DENY },
		{ "a.example.com", 443, CORDON_ALLOW }, { "A.B.Example.COM.", 443, CORDON_ALLOW },
		{ "example.com", 443, CORDON_DENY }, { "badexample.com", 443, CORDON_DENY },
		{ "api.x.io", 443, CORDON_ALLOW }, { "api.x.io", 80, CORDON_DENY },
		{ "x.io", 443, CORDON_DENY },
	};

	assert_non_null(p);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		rq.host = cases[i].host;
		rq.port = cases[i].port;
		pol_eval(p, &rq, &res);
		pol_eval_linear(p, &rq, &lin);
		if (res.decision != cases[i].want)
			fprintf(stderr, "%s:%u: %s\n", cases[i].host, cases[i].port, res.reason);
		assert_int_equal(res.decision, cases[i].want);
		assert_int_equal(lin.decision, cases[i].want);
	}
	rq.host = "a.example.com";
	rq.port = 443;
	pol_eval(p, &rq, &res);
	assert_int_equal(res.via, POL_VIA_CRED_PROXY);
	pol_diags_free(&ds);
	pol_free(p);
}

/* Random policies and requests: the index must never change a decision. */
static void index_agrees_with_linear_scan(void **state)
{
	static const char *const dirs[] = { "/a", "/a/b", "/a/b/c", "/x", "/x/y", "/", "/a/*/c",
					    "/home/*/.cache", "/tmp" };
	static const char *const reqs[] = { "/a", "/a/b/c/d", "/a/q/c/z", "/x/y", "/xy", "/",
					    "/home/u/.cache/f", "/tmp/t", "/b" };
	static const char *const decs[] = { "allow", "escalate", "deny" };
	static const char *const rights[] = { "read", "write", "create", "delete", "exec", "all" };
	static const char *const hosts[] = { "a.com", "*.a.com", "10.0.0.0/8", "10.1.0.0/16",
					     "::1", "2001:db8::/48", "b.org" };
	static const char *const qhosts[] = { "a.com", "x.a.com", "10.1.2.3", "10.2.0.1", "::1",
					      "2001:db8::5", "b.org", "c.org", "::ffff:10.1.0.1" };
	unsigned seed = 12345;

	for (int round = 0; round < 200; round++) {
		char text[16384];
		size_t o = 0;
		struct pol_diags ds;
		struct policy *p;
		int n = 1 + (int)(rand_r(&seed) % 30);

		o += (size_t)snprintf(text + o, sizeof(text) - o, HDR);
		for (int i = 0; i < n; i++) {
			int kind = (int)(rand_r(&seed) % 3);

			o += (size_t)snprintf(text + o, sizeof(text) - o, "%s{\"name\": \"r%d\", \"decision\": \"%s\", ",
					      i ? ",\n" : "", i, decs[rand_r(&seed) % 3]);
			if (kind == 0)
				o += (size_t)snprintf(text + o, sizeof(text) - o,
						      "\"fs\": {\"paths\": [\"%s\"], \"rights\": [\"%s\"]}}",
						      dirs[rand_r(&seed) % 9], rights[rand_r(&seed) % 6]);
			else if (kind == 1)
				o += (size_t)snprintf(text + o, sizeof(text) - o,
						      "\"net\": {\"hosts\": [\"%s\"], \"via\": \"egress\", \"ports\": [%u]}}",
						      hosts[rand_r(&seed) % 7], 440 + rand_r(&seed) % 5);
			else
				o += (size_t)snprintf(text + o, sizeof(text) - o,
						      "\"tool\": {\"name\": \"%s.%s\"}}",
						      rand_r(&seed) % 2 ? "s" : "*", rand_r(&seed) % 2 ? "t" : "*");
		}
		o += (size_t)snprintf(text + o, sizeof(text) - o, "]}");
		p = load(text, &ds);
		if (!p)
			pol_diags_print(&ds, "random", stderr);
		assert_non_null(p);
		for (int q = 0; q < 60; q++) {
			struct pol_request rq = { 0 };
			struct pol_result a, b;
			int kind = q % 3;

			if (kind == 0) {
				rq.op = (enum pol_op)(rand_r(&seed) % 6);
				rq.path = reqs[rand_r(&seed) % 9];
			} else if (kind == 1) {
				rq.op = POL_OP_CONNECT;
				rq.host = qhosts[rand_r(&seed) % 9];
				rq.port = (uint16_t)(440 + rand_r(&seed) % 5);
			} else {
				rq.op = POL_OP_TOOL;
				rq.server = rand_r(&seed) % 2 ? "s" : "z";
				rq.tool = rand_r(&seed) % 2 ? "t" : "u";
			}
			pol_eval(p, &rq, &a);
			pol_eval_linear(p, &rq, &b);
			assert_int_equal(a.decision, b.decision);
			assert_ptr_equal(a.rule, b.rule);
		}
		pol_diags_free(&ds);
		pol_free(p);
	}
}

/* Regressions found by the fuzzer. */
static void fuzz_regressions(void **state)
{
	char text[4096], name[700];
	struct pol_diags ds;
	struct policy *p;
	static const char nul[] = "{\"cordon_policy\": 1\0, \"rules\": []}";

	/* A tool name too long for the index key must not be skipped. */
	memset(name, 'a', 620);
	name[620] = 0;
	snprintf(text, sizeof(text), HDR
		 "{\"name\": \"any\", \"decision\": \"allow\", \"tool\": {\"name\": \"srv.*\"}},\n"
		 "{\"name\": \"long\", \"decision\": \"deny\", \"tool\": {\"name\": \"srv.%s\"}}]}", name);
	p = load(text, &ds);
	assert_null(p);                         /* names are capped at 128 */
	assert_non_null(strstr(ds.d[0].msg, "at most 128"));
	pol_diags_free(&ds);
	p = load(HDR "{\"name\": \"any\", \"decision\": \"allow\", \"tool\": {\"name\": \"srv.*\"}}]}", &ds);
	assert_non_null(p);
	assert_int_equal(call(p, "srv", name, "{}", NULL), CORDON_ALLOW);   /* full scan, no skip */
	pol_free(p);
	pol_diags_free(&ds);

	/* A NUL byte is an error with a position, never a silent refusal. */
	memset(&ds, 0, sizeof(ds));
	assert_int_equal(pol_load_text(nul, sizeof(nul) - 1, "t.json", &vars, &p, &ds), -EINVAL);
	assert_int_equal(ds.n_errors, 1);
	assert_int_equal(ds.d[0].pos.col, 20);
	assert_non_null(strstr(ds.d[0].msg, "NUL byte"));
	pol_diags_free(&ds);

	/* A connect "host" that no connection can name is denied by both evaluators. */
	p = load(HDR "{\"name\": \"x\", \"decision\": \"allow\", \"net\": {\"hosts\": [\"*.example.com\"]}}]}", &ds);
	assert_non_null(p);
	{
		static const char *const bad[] = { "a..example.com", "*.example.com", "x y.example.com",
						   "10.0.0.0/8", "" };
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			struct pol_request rq = { .op = POL_OP_CONNECT, .host = bad[i], .port = 1 };
			struct pol_result a, b;

			pol_eval(p, &rq, &a);
			pol_eval_linear(p, &rq, &b);
			assert_int_equal(a.decision, CORDON_DENY);
			assert_int_equal(b.decision, CORDON_DENY);
		}
	}
	pol_free(p);
	pol_diags_free(&ds);
}

/*
 * The compiler's own wildcard expansion (cached listings) finds exactly what
 * glob(3) finds, on a real tree: wildcards in the middle and at the end,
 * classes, no leading-dot matches, literal tails that must exist (a
 * dangling symlink does), symlinked directories, missing directories.
 */
struct seen {
	char *v[64];
	size_t n;
};

static int record(void *ctx, const struct pol_fs_entry *e)
{
	struct seen *s = ctx;

	if (!strncmp(e->path, "/tmp/cordon-glob", 16) && s->n < 64)
		s->v[s->n++] = strdup(e->path);
	return 0;
}

static int cmpstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A fresh tree from the mkdtemp(3) template `root`: directories, then empty files. */
static void make_tree(char *root, const char *const *dirs, size_t n_dirs,
		      const char *const *files, size_t n_files)
{
	char path[PATH_MAX];

	assert_non_null(mkdtemp(root));
	for (size_t i = 0; i < n_dirs; i++) {
		snprintf(path, sizeof(path), "%s/%s", root, dirs[i]);
		assert_int_equal(mkdir(path, 0755), 0);
	}
	for (size_t i = 0; i < n_files; i++) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s", root, files[i]);
		assert_non_null(f = fopen(path, "w"));
		fclose(f);
	}
}

/*
 * The memoised canonicaliser a policy load uses must give pol_canon_path's
 * answer for every path: through symlinks to directories and files,
 * relative and absolute, dangling ones, a file used as a directory, missing
 * tails, "." and "..", and in any order (a remembered parent reused).
 */
static void canon_memo_agrees_with_canon_path(void **state)
{
	char root[] = "/tmp/cordon-canonXXXXXX", path[PATH_MAX];
	static const char *const dirs[] = { "d", "d/e", "d/e/f", "g" };
	static const char *const files[] = { "d/file", "g/h" };
	static const char *const links[][2] = {
		{ "ld", "d" }, { "le", "d/e" }, { "abs", NULL }, { "lf", "d/file" },
		{ "dang", "nowhere/x" }, { "d/up", "../g" }, { "d/e/loop1", "loop2" },
		{ "d/e/loop2", "loop1" }, { "g/self", "." },
	};
	static const char *const rel[] = {
		"", "/d", "/d/e/f", "/d/e/f/missing/deeper", "/ld", "/ld/e", "/ld/e/f/x",
		"/le/f", "/abs", "/abs/e", "/lf", "/lf/x", "/dang", "/dang/x/y", "/d/up",
		"/d/up/h", "/d/up/h/x", "/d/file/x", "/missing", "/missing/a/b", "/d/./e",
		"/d/e/../file", "/ld/../g", "/g/self/self/h", "/d//e", "/d/e/", "/d/e/loop1",
		"/d/e/loop1/x", "/ld/e/f", "/d/e/f", "/ld",
	};
	struct pol_canon_memo memo = { 0 };

	(void)state;
	make_tree(root, dirs, sizeof(dirs) / sizeof(*dirs), files, sizeof(files) / sizeof(*files));
	for (size_t i = 0; i < sizeof(links) / sizeof(*links); i++) {
		char target[PATH_MAX];

		if (links[i][1])
			snprintf(target, sizeof(target), "%s", links[i][1]);
		else
			snprintf(target, sizeof(target), "%s/d", root);
		snprintf(path, sizeof(path), "%s/%s", root, links[i][0]);
		assert_int_equal(symlink(target, path), 0);
	}
	/* Twice: the second round answers from what the first remembered. */
	for (int round = 0; round < 2; round++) {
		for (size_t i = 0; i < sizeof(rel) / sizeof(*rel); i++) {
			char want[PATH_MAX], got[PATH_MAX];
			int rw, rg;

			snprintf(path, sizeof(path), "%s%s", root, rel[i]);
			rw = pol_canon_path(path, NULL, want, sizeof(want));
			rg = pol_canon_path_memo(&memo, path, got, sizeof(got));
			if (rw != rg || (rw == 0 && strcmp(want, got)))
				fail_msg("%s: pol_canon_path %d \"%s\", memo %d \"%s\"", path, rw,
					 rw ? "" : want, rg, rg ? "" : got);
		}
	}
	assert_true(memo.n > 0);
	pol_canon_memo_free(&memo);
	snprintf(path, sizeof(path), "rm -rf '%s'", root);
	assert_int_equal(system(path), 0);
}

/*
 * What the compiler hands the floors is canonical where it says so: a
 * credential store reached through a symlinked HOME entry is emitted at its
 * real place (the fallback then denies the object, and does not resolve
 * it again), rule paths are canonical, and glob expansions are not marked.
 */
struct canon_seen {
	const char *root;
	bool ssh_real, ssh_link, rule_canon, glob_seen, glob_marked;
};

static int record_canon(void *ctx, const struct pol_fs_entry *e)
{
	struct canon_seen *c = ctx;
	char want[PATH_MAX];

	snprintf(want, sizeof(want), "%s/real/ssh", c->root);
	if (!strcmp(e->path, want) && e->invariant && e->canonical)
		c->ssh_real = true;
	snprintf(want, sizeof(want), "%s/home/.ssh", c->root);
	if (!strcmp(e->path, want))
		c->ssh_link = true;
	snprintf(want, sizeof(want), "%s/real", c->root);
	if (!strcmp(e->path, want) && !e->invariant && e->canonical)
		c->rule_canon = true;
	if (!e->invariant && !strncmp(e->path, c->root, strlen(c->root)) &&
	    strstr(e->path, "/home/")) {
		c->glob_seen = true;
		c->glob_marked |= e->canonical;
	}
	return 0;
}

static void compiled_paths_say_when_canonical(void **state)
{
	char root[] = "/tmp/cordon-canonXXXXXX", path[PATH_MAX], text[4096];
	static const char *const dirs[] = { "home", "real", "real/ssh" };
	static const char *const files[] = { "home/f" };
	struct canon_seen c = { 0 };
	struct pol_vars v = { 0 };
	struct pol_diags ds = { 0 };
	struct policy *p = NULL;

	(void)state;
	make_tree(root, dirs, sizeof(dirs) / sizeof(*dirs), files, sizeof(files) / sizeof(*files));
	snprintf(path, sizeof(path), "%s/home/.ssh", root);
	assert_int_equal(symlink("../real/ssh", path), 0);
	snprintf(path, sizeof(path), "%s/home", root);
	pol_vars_set(&v, "HOME", path);
	pol_vars_set(&v, "WORKSPACE", "/work/p");
	snprintf(text, sizeof(text), "{\"cordon_policy\":1,\"name\":\"c\",\"rules\":["
		 "{\"name\":\"r\",\"decision\":\"allow\",\"fs\":{\"paths\":[\"%s/real\","
		 "\"%s/home/*\"],\"rights\":[\"read\"]}}]}", root, root);
	assert_int_equal(pol_load_text(text, strlen(text), "c.json", &v, &p, &ds), 0);
	c.root = root;
	assert_int_equal(pol_compile_fs(p, record_canon, &c), 0);
	assert_true(c.ssh_real);        /* ${HOME}/.ssh at its target, marked canonical */
	assert_false(c.ssh_link);       /* not at the link's name */
	assert_true(c.rule_canon);
	assert_true(c.glob_seen);       /* home/f, from the pattern */
	assert_false(c.glob_marked);
	pol_free(p);
	pol_diags_free(&ds);
	pol_vars_free(&v);
	snprintf(path, sizeof(path), "rm -rf '%s'", root);
	assert_int_equal(system(path), 0);
}

static void wildcards_expand_as_glob_does(void **state)
{
	char root[] = "/tmp/cordon-globXXXXXX", path[PATH_MAX], text[4096];
	static const char *const dirs[] = { "a", "a/x1", "a/x1/.ssh", "b", "b/x2", ".hid", ".hid/x3" };
	static const char *const files[] = { "a/y", "b/x2/.ssh", "c" };
	const char *pats[] = { "/*/x*", "/*", "/*/*/.ssh", "/[ab]/x1", "/?/dang", "/nope/*",
			       "/l/x*", "/*/y" };
	struct pol_diags ds;
	struct policy *p;
	size_t total = 0;

	make_tree(root, dirs, sizeof(dirs) / sizeof(*dirs), files, sizeof(files) / sizeof(*files));
	snprintf(path, sizeof(path), "%s/a/dang", root);
	assert_int_equal(symlink("/nonexistent/target", path), 0);
	snprintf(path, sizeof(path), "%s/l", root);
	assert_int_equal(symlink("a", path), 0);

	for (size_t k = 0; k < sizeof(pats) / sizeof(*pats); k++) {
		struct seen mine = { 0 }, theirs = { 0 };
		glob_t g;

		snprintf(text, sizeof(text), "{\"cordon_policy\":1,\"name\":\"g\",\"rules\":[{\"name\":\"r\","
			 "\"decision\":\"allow\",\"fs\":{\"paths\":[\"%s%s\"],\"rights\":[\"read\"]}}]}",
			 root, pats[k]);
		p = load(text, &ds);
		assert_non_null(p);
		assert_int_equal(pol_compile_fs(p, record, &mine), 0);
		snprintf(path, sizeof(path), "%s%s", root, pats[k]);
		if (glob(path, GLOB_NOSORT, NULL, &g) == 0) {
			/* An allow grants a match only where it really is (compile.c, filter_links). */
			for (size_t i = 0; i < g.gl_pathc && theirs.n < 64; i++) {
				char real[PATH_MAX];

				if (realpath(g.gl_pathv[i], real) && !strcmp(real, g.gl_pathv[i]))
					theirs.v[theirs.n++] = strdup(g.gl_pathv[i]);
			}
			globfree(&g);
		}
		qsort(mine.v, mine.n, sizeof(char *), cmpstr);
		qsort(theirs.v, theirs.n, sizeof(char *), cmpstr);
		if (mine.n != theirs.n)
			fprintf(stderr, "pattern %s: %zu paths, glob(3) %zu\n", pats[k], mine.n, theirs.n);
		assert_int_equal(mine.n, theirs.n);
		total += mine.n;
		for (size_t i = 0; i < mine.n; i++) {
			assert_string_equal(mine.v[i], theirs.v[i]);
			free(mine.v[i]);
			free(theirs.v[i]);
		}
		pol_free(p);
		pol_diags_free(&ds);
	}
	/* The tree above, counted by hand: 16 matches, 7 of them through the link l or dangling. */
	assert_int_equal(total, 9);
	snprintf(path, sizeof(path), "rm -rf '%s'", root);
	assert_int_equal(system(path), 0);
}

/*
 * "**" as people read it from .gitignore (issue 34): a deny of the pattern
 * ${WORKSPACE}, "**", ".env" refuses .env at the workspace's top, one level
 * down and two down (it used to refuse only the middle one), and nothing
 * else; the same in a tool's "within"; "a**" is an error at its position;
 * the kernel tables get every existing match, dot directories included.
 */
static void starstar_is_any_depth(void **state)
{
	struct pol_diags ds;
	struct policy *p = load(HDR
		"{\"name\": \"ws\", \"decision\": \"allow\", \"fs\": {\"paths\": [\"${WORKSPACE}\"], \"rights\": [\"all\"]}},\n"
		"{\"name\": \"env\", \"decision\": \"deny\", \"fs\": {\"paths\": [\"${WORKSPACE}/**/.env\"], \"rights\": [\"read\", \"write\"]}},\n"
		"{\"name\": \"rd\", \"decision\": \"allow\", \"tool\": {\"name\": \"fs.read\", \"args\": {\"path\": {\"within\": [\"${WORKSPACE}\"]}}}},\n"
		"{\"name\": \"rd-env\", \"decision\": \"deny\", \"tool\": {\"name\": \"fs.read\", \"args\": {\"path\": {\"within\": [\"${WORKSPACE}/**/.env\"]}}}}]}",
		&ds);
	static const char *const denied[] = { "/work/p/.env", "/work/p/sub/.env", "/work/p/a/b/.env",
					      "/work/p/.git/x/.env" };
	static const char *const allowed[] = { "/work/p/env.txt", "/work/p/a/.envrc", "/work/p/a/b" };

	(void)state;
	assert_non_null(p);
	for (size_t i = 0; i < sizeof(denied) / sizeof(*denied); i++) {
		if (decide(p, POL_OP_READ, denied[i]) != CORDON_DENY)
			fail_msg("read %s: not denied", denied[i]);
		assert_int_equal(decide(p, POL_OP_DELETE, denied[i]), CORDON_ALLOW);  /* not a denied right */
	}
	for (size_t i = 0; i < sizeof(allowed) / sizeof(*allowed); i++)
		if (decide(p, POL_OP_READ, allowed[i]) != CORDON_ALLOW)
			fail_msg("read %s: not allowed", allowed[i]);
	assert_int_equal(call(p, "fs", "read", "{\"path\": \"a/b/.env\"}", NULL), CORDON_DENY);
	assert_int_equal(call(p, "fs", "read", "{\"path\": \".env\"}", NULL), CORDON_DENY);
	assert_int_equal(call(p, "fs", "read", "{\"path\": \"a/env.txt\"}", NULL), CORDON_ALLOW);
	pol_free(p);
	pol_diags_free(&ds);

	p = load(HDR "{\"name\": \"x\", \"decision\": \"deny\", \"fs\": {\"paths\": [\"/w/a**/.env\"], "
		 "\"rights\": [\"read\"]}}]}", &ds);
	assert_null(p);
	assert_int_equal(ds.n_errors, 1);
	assert_int_equal(ds.d[0].pos.line, 3);
	assert_int_equal(ds.d[0].pos.col, 52);
	assert_non_null(strstr(ds.d[0].msg, "whole path component"));
	pol_diags_free(&ds);
}

/*
 * A ".." after a glob cannot be resolved lexically: a deny of
 * /w/STARSTAR/../.env means a .env beside any directory under /w and /.env,
 * but collapsing STARSTAR/.. left /w/.env alone (it missed /w/a/.env); a
 * single star then ".." is /w only if /w has a subdirectory.  Refused at
 * the rule, in fs paths and in "within" conditions alike.
 */
static bool said(const struct pol_diags *ds, const char *what)
{
	for (size_t i = 0; i < ds->n; i++)
		if (strstr(ds->d[i].msg, what))
			return true;
	return false;
}

static void dotdot_after_a_glob_is_refused(void **state)
{
	static const char *const bad[] = { "/w/**/../.env", "/w/*/../x", "/w/a?/b/../../c",
					   "/w/**/x/.." };
	struct pol_diags ds;
	struct policy *p;
	char buf[512];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		snprintf(buf, sizeof(buf), HDR "{\"name\": \"x\", \"decision\": \"deny\", \"fs\": "
			 "{\"paths\": [\"%s\"], \"rights\": [\"read\"]}}]}", bad[i]);
		p = load(buf, &ds);
		if (p || ds.n_errors != 1 || !said(&ds, "\"..\" after a glob"))
			fail_msg("%s: loaded or another error (%s)", bad[i], ds.n ? ds.d[0].msg : "");
		pol_diags_free(&ds);
		snprintf(buf, sizeof(buf), HDR "{\"name\": \"x\", \"decision\": \"deny\", \"tool\": "
			 "{\"name\": \"fs.read\", \"args\": {\"path\": {\"within\": [\"%s\"]}}}}]}", bad[i]);
		p = load(buf, &ds);
		if (p || ds.n_errors != 1 || !said(&ds, "\"..\" after a glob"))
			fail_msg("within %s: loaded or another error (%s)", bad[i],
				 ds.n ? ds.d[0].msg : "");
		pol_diags_free(&ds);
	}
	/* A ".." before any glob is lexical as in any path. */
	p = load(HDR "{\"name\": \"x\", \"decision\": \"deny\", \"fs\": {\"paths\": "
		 "[\"/w/a/../**/.env\"], \"rights\": [\"read\"]}}]}", &ds);
	assert_non_null(p);
	assert_int_equal(decide(p, POL_OP_READ, "/w/b/.env"), CORDON_DENY);
	pol_free(p);
	pol_diags_free(&ds);
}

static void starstar_expands_at_any_depth(void **state)
{
	char root[] = "/tmp/cordon-globXXXXXX", path[PATH_MAX], text[4096];
	static const char *const dirs[] = { "sub", "a", "a/b", ".git", ".git/h", "l" };
	static const char *const files[] = { ".env", "sub/.env", "a/b/.env", ".git/h/.env", "env.txt",
					     "a/.envrc" };
	static const char *const want[] = { "/.env", "/.git/h/.env", "/a/b/.env", "/sub/.env" };
	struct seen mine = { 0 };
	struct pol_diags ds;
	struct policy *p;

	(void)state;
	make_tree(root, dirs, sizeof(dirs) / sizeof(*dirs), files, sizeof(files) / sizeof(*files));
	/* A symlinked directory is not walked: what it reaches is judged where it is. */
	snprintf(path, sizeof(path), "%s/l/up", root);
	assert_int_equal(symlink("..", path), 0);
	snprintf(text, sizeof(text), "{\"cordon_policy\":1,\"name\":\"g\",\"rules\":[{\"name\":\"r\","
		 "\"decision\":\"deny\",\"fs\":{\"paths\":[\"%s/**/.env\", \"%s/**/**/.env\"],"
		 "\"rights\":[\"read\"]}}]}", root, root);
	p = load(text, &ds);
	assert_non_null(p);
	assert_int_equal(pol_compile_fs(p, record, &mine), 0);
	qsort(mine.v, mine.n, sizeof(char *), cmpstr);
	/* Each path once per pattern: two patterns. */
	assert_int_equal(mine.n, 2 * sizeof(want) / sizeof(*want));
	for (size_t i = 0; i < mine.n; i++) {
		snprintf(path, sizeof(path), "%s%s", root, want[i / 2]);
		assert_string_equal(mine.v[i], path);
		free(mine.v[i]);
	}
	pol_free(p);
	pol_diags_free(&ds);
	/* A trailing "**" is the directory itself (and so all below it). */
	mine.n = 0;
	snprintf(text, sizeof(text), "{\"cordon_policy\":1,\"name\":\"g\",\"rules\":[{\"name\":\"r\","
		 "\"decision\":\"deny\",\"fs\":{\"paths\":[\"%s/a/**\"],\"rights\":[\"read\"]}}]}", root);
	p = load(text, &ds);
	assert_non_null(p);
	assert_int_equal(pol_compile_fs(p, record, &mine), 0);
	assert_int_equal(mine.n, 1);
	snprintf(path, sizeof(path), "%s/a", root);
	assert_string_equal(mine.v[0], path);
	free(mine.v[0]);
	pol_free(p);
	pol_diags_free(&ds);
	snprintf(path, sizeof(path), "rm -rf '%s'", root);
	assert_int_equal(system(path), 0);
}

static void shipped_profiles_load(void **state)
{
	for (const char *const *n = pol_profile_names(); *n; n++) {
		struct pol_diags ds = {};
		struct policy *p = NULL;

		assert_int_equal(pol_load(*n, &vars, &p, &ds), 0);
		assert_int_equal(ds.n_errors, 0);
		assert_int_equal(ds.n, 0);          /* no warnings either */
		pol_free(p);
		pol_diags_free(&ds);
	}
	{
		struct pol_diags ds = {};
		struct policy *p = NULL;

		assert_int_equal(pol_load("no-such-profile", &vars, &p, &ds), -ENOENT);
	}
}

/*
 * No variables at all (NULL): a policy without ${...} loads; one with them
 * is an error, not a crash.
 */
static void null_vars_are_none(void **state)
{
	static const char plain[] = HDR "{\"name\": \"tmp\", \"decision\": \"allow\", "
				    "\"fs\": {\"paths\": [\"/tmp\"], \"rights\": [\"read\"]}}]}";
	static const char with_var[] = HDR "{\"name\": \"ws\", \"decision\": \"allow\", "
				       "\"fs\": {\"paths\": [\"${WORKSPACE}\"], \"rights\": [\"all\"]}}]}";
	struct pol_diags ds = {};
	struct policy *p = NULL;

	(void)state;
	assert_int_equal(pol_load_text(plain, strlen(plain), "t.json", NULL, &p, &ds), 0);
	pol_free(p);
	pol_diags_free(&ds);
	p = NULL;
	assert_int_equal(pol_load_text(with_var, strlen(with_var), "t.json", NULL, &p, &ds), -EINVAL);
	assert_null(p);
	assert_true(ds.n_errors > 0);
	assert_null(pol_vars_get(NULL, "WORKSPACE"));
	pol_diags_free(&ds);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(errors_name_file_line_col),
		cmocka_unit_test(compiled_paths_say_when_canonical),
		cmocka_unit_test(a_granted_path_is_that_path_only),
		cmocka_unit_test(duplicate_keys_are_refused),
		cmocka_unit_test(all_errors_are_reported_not_just_the_first),
		cmocka_unit_test(shadowed_rules_are_warned),
		cmocka_unit_test(shadowing_through_every_key),
		cmocka_unit_test(shadowing_index_agrees_with_pairs),
		cmocka_unit_test(rules_that_cannot_are_warned),
		cmocka_unit_test(uncredentialed_hosts_are_warned),
		cmocka_unit_test(strongest_wins_whatever_the_order),
		cmocka_unit_test(invariants_beat_any_policy),
		cmocka_unit_test(symlinks_and_dotdot_cannot_redirect),
		cmocka_unit_test(tool_calls),
		cmocka_unit_test(lifted_exec_joins_the_file_decision),
		cmocka_unit_test(network),
		cmocka_unit_test(index_agrees_with_linear_scan),
		cmocka_unit_test(fuzz_regressions),
		cmocka_unit_test(shipped_profiles_load),
		cmocka_unit_test(wildcards_expand_as_glob_does),
		cmocka_unit_test(starstar_is_any_depth),
		cmocka_unit_test(dotdot_after_a_glob_is_refused),
		cmocka_unit_test(starstar_expands_at_any_depth),
		cmocka_unit_test(canon_memo_agrees_with_canon_path),
		cmocka_unit_test(null_vars_are_none),
	};
	return cmocka_run_group_tests_name("policy", tests, setup, teardown);
}
