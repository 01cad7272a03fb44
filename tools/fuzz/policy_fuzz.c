// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: the policy loader and the evaluator.
 *
 * A policy is untrusted text (a user writes it, an agent may have generated
 * it), so any bytes go to pol_load_text.  A policy that loads is then judged
 * through both pol_eval (indexed) and pol_eval_linear (every rule scanned):
 * the index is an optimisation that must never change an answer, so any
 * difference in decision, deciding rule, invariant, route or reason is a
 * crash.
 *
 * Fixed requests alone would rarely reach a fuzzed rule, so most requests
 * are made from the loaded policy's own rules: a file below each fs root, a
 * name under each host suffix, an address inside each CIDR, a call to each
 * tool with arguments that meet (or miss) its conditions.  Requests stay
 * within the evaluator's contract (canonical absolute paths, host names or
 * IP literals): a mismatch on input no caller can produce would only hide
 * the ones that matter.
 *
 * Variables are fixed here, never read from the environment, so a crash
 * reproduces on any machine.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "policy.h"

/* Requests made from at most this many rules, to keep each run fast. */
#define MAX_DERIVED_RULES 24

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* Judge req both ways; trap on the first difference. */
static void judge(const struct policy *p, const struct pol_request *req)
{
	struct pol_result a, b;

	pol_eval(p, req, &a);
	pol_eval_linear(p, req, &b);
	if (a.decision == b.decision && a.rule == b.rule && a.via == b.via &&
	    same_str(a.invariant, b.invariant) && !strcmp(a.reason, b.reason))
		return;
	fprintf(stderr, "policy_fuzz: pol_eval and pol_eval_linear disagree on %s %s%s%s%s%s:%u\n"
		"  indexed: %s (rule %s, invariant %s, via %s): %s\n"
		"  linear:  %s (rule %s, invariant %s, via %s): %s\n",
		pol_op_name(req->op), req->path ? req->path : "",
		req->server ? req->server : "", req->server ? "." : "",
		req->tool ? req->tool : "", req->host ? req->host : "", req->port,
		pol_decision_name(a.decision), a.rule ? a.rule->name : "-",
		a.invariant ? a.invariant : "-", pol_via_name(a.via), a.reason,
		pol_decision_name(b.decision), b.rule ? b.rule->name : "-",
		b.invariant ? b.invariant : "-", pol_via_name(b.via), b.reason);
	__builtin_trap();
}

static void judge_fs(const struct policy *p, enum pol_op op, const char *path)
{
	struct pol_request req = { .op = op, .path = path };

	judge(p, &req);
}

static void judge_exec(const struct policy *p, const char *path, const char *const *argv)
{
	struct pol_request req = { .op = POL_OP_EXEC, .path = path, .argv = argv,
				   .cwd = "/tmp/ws" };

	judge(p, &req);
}

static void judge_connect(const struct policy *p, const char *host, uint16_t port)
{
	struct pol_request req = { .op = POL_OP_CONNECT, .host = host, .port = port };

	judge(p, &req);
}

/* With no roots (relative paths against the workspace), then with two. */
static void judge_tool(const struct policy *p, const char *server, const char *tool,
		       json_t *args)
{
	static const char *const roots[] = { "/tmp/ws", "/srv/repo", NULL };
	struct pol_request req = { .op = POL_OP_TOOL, .server = server, .tool = tool,
				   .args = args };

	judge(p, &req);
	req.roots = roots;
	judge(p, &req);
}

/* args: JSON text, or NULL for a call without arguments. */
static void judge_tool_text(const struct policy *p, const char *server, const char *tool,
			    const char *args)
{
	json_t *a = args ? json_loads(args, 0, NULL) : NULL;

	judge_tool(p, server, tool, a);
	json_decref(a);
}

/* Requests any policy can be asked, whatever its rules. */
static void judge_fixed(const struct policy *p)
{
	static const char *const git_push[] = { "git", "push", "--force", "origin", "main", NULL };
	static const char *const git_commit[] = { "git", "-C", "/tmp/ws", "commit", "-m", "wip",
						  NULL };
	static const char *const curl[] = { "curl", "-X", "POST", "https://api.example.com/v1",
					    NULL };
	static const char *const npm[] = { "npm", "install", "left-pad", NULL };
	static const char *const pip[] = { "python3", "-m", "pip", "install", "requests", NULL };
	static const char *const hosts[] = {
		"api.anthropic.com", "API.Example.COM.", "a.b.example.org", "localhost",
		"10.1.2.3", "0x0a.1.2.3", "127.0.0.1", "::1", "[2001:db8::1]", "::ffff:10.1.2.3",
		"2001:db8:ffff::1", "192.168.1.1", NULL,
	};

	judge_fs(p, POL_OP_READ, "/tmp/ws/src/main.c");
	judge_fs(p, POL_OP_WRITE, "/tmp/ws/src/main.c");
	judge_fs(p, POL_OP_CREATE, "/tmp/ws/new");
	judge_fs(p, POL_OP_DELETE, "/tmp/ws");
	judge_fs(p, POL_OP_CHMOD, "/tmp/ws/run.sh");
	judge_fs(p, POL_OP_READ, "/home/agent/.ssh/id_ed25519");
	judge_fs(p, POL_OP_DELETE, "/home/agent");
	judge_fs(p, POL_OP_READ, "/etc/passwd");
	judge_fs(p, POL_OP_WRITE, "/sys/fs/bpf/x");
	judge_fs(p, POL_OP_READ, "/");
	judge_fs(p, POL_OP_WRITE, "/fuzz.json");
	judge_exec(p, "/usr/bin/git", git_push);
	judge_exec(p, "/usr/bin/git", git_commit);
	judge_exec(p, "/usr/bin/curl", curl);
	judge_exec(p, "/usr/bin/npm", npm);
	judge_exec(p, "/usr/bin/python3", pip);
	judge_exec(p, "/tmp/ws/run.sh", NULL);
	for (int i = 0; hosts[i]; i++) {
		judge_connect(p, hosts[i], 443);
		judge_connect(p, hosts[i], 8080);
	}
	judge_tool_text(p, "filesystem", "read_file", "{\"path\": \"/tmp/ws/a.txt\"}");
	judge_tool_text(p, "filesystem", "read_file", "{\"path\": \"src/../../etc/passwd\"}");
	judge_tool_text(p, "filesystem", "read_multiple_files",
			"{\"paths\": [\"/tmp/ws/a\", \"b\"]}");
	judge_tool_text(p, "fetch", "fetch", "{\"url\": \"https://docs.example.com/x?y#z\"}");
	judge_tool_text(p, "fetch", "fetch", "{\"url\": \"http://user@evil.example/\"}");
	judge_tool_text(p, "git", "push", "{\"remote\": \"origin\", \"force\": true}");
	judge_tool_text(p, "shell", "exec", "{\"argv\": [\"ls\", \"-l\"], \"cwd\": \"/tmp/ws\"}");
	judge_tool_text(p, "unknown", "tool", NULL);
	judge_tool_text(p, "filesystem", "read_file", "[1, 2]");
}

/* Something in a condition's own terms: a value it holds for, or nearly does. */
static json_t *cond_value(const struct pol_cond *c, bool meet)
{
	char buf[PATH_MAX + 16];

	switch (c->kind) {
	case POL_COND_ANY:
		return json_string("x");
	case POL_COND_EQUALS:
		return meet && c->value ? json_deep_copy(c->value) : json_integer(7);
	case POL_COND_IN:
		if (meet && json_array_size(c->value))
			return json_deep_copy(json_array_get(c->value, 0));
		return json_null();
	case POL_COND_WITHIN:
		if (!c->n_strs)
			return json_string("/tmp/ws");
		snprintf(buf, sizeof(buf), "%s%s", c->strs[0], meet ? "/sub/f" : "x/../../y");
		return json_string(buf);
	case POL_COND_DOMAIN_IN:
		if (!c->n_hosts || !c->hosts[0].name)
			return json_string(meet ? "https://10.1.2.3/" : "ftp://x/");
		snprintf(buf, sizeof(buf), "https://%s%s/p", c->hosts[0].kind == POL_HOST_SUFFIX ?
			 "w" : "", c->hosts[0].name);
		return json_string(meet ? buf : buf + 1);
	case POL_COND_PREFIX:
	case POL_COND_GLOB:
		if (!c->n_strs)
			return json_string("");
		snprintf(buf, sizeof(buf), "%s%s", c->strs[0], meet ? "" : "~");
		return json_string(buf);
	}
	return json_null();
}

static void derive_tool(const struct policy *p, const struct pol_rule *r)
{
	const char *server = strcmp(r->tool.server, "*") ? r->tool.server : "anyserver";
	const char *tool = strcmp(r->tool.tool, "*") ? r->tool.tool : "anytool";
	json_t *meet = json_object(), *miss = json_object(), *array = json_object();

	for (size_t i = 0; i < r->tool.n_conds; i++) {
		const struct pol_cond *c = &r->tool.conds[i];

		json_object_set_new(meet, c->key, cond_value(c, true));
		json_object_set_new(miss, c->key, cond_value(c, i + 1 < r->tool.n_conds));
		json_object_set_new(array, c->key,
				    json_pack("[oo]", cond_value(c, true), cond_value(c, true)));
	}
	judge_tool(p, server, tool, meet);
	judge_tool(p, server, tool, miss);
	judge_tool(p, server, tool, array);
	judge_tool(p, server, tool, NULL);
	json_object_set_new(meet, "unnamed_key", json_true());
	judge_tool(p, server, tool, meet);
	json_decref(meet);
	json_decref(miss);
	json_decref(array);
}

static void derive_host(const struct policy *p, const struct pol_rule *r,
			const struct pol_host *h)
{
	uint16_t port = r->net.n_ports ? r->net.ports[0].hi : 443;
	char buf[300], addr[INET6_ADDRSTRLEN];
	uint8_t a[16];

	switch (h->kind) {
	case POL_HOST_NAME:
		judge_connect(p, h->name, port);
		snprintf(buf, sizeof(buf), "www.%s", h->name);
		judge_connect(p, buf, port);
		break;
	case POL_HOST_SUFFIX:
		snprintf(buf, sizeof(buf), "a%s", h->name);
		judge_connect(p, buf, port);
		judge_connect(p, h->name + 1, port);
		break;
	case POL_HOST_CIDR4:
	case POL_HOST_CIDR6:
		memcpy(a, h->addr, sizeof(a));
		/* The first address, and the last one the prefix still covers. */
		for (int k = 0; k < 2; k++) {
			if (k) {
				unsigned bytes = h->kind == POL_HOST_CIDR4 ? 4 : 16;

				for (unsigned bit = h->prefix; bit < bytes * 8; bit++)
					a[bit / 8] |= (uint8_t)(0x80 >> (bit % 8));
			}
			if (inet_ntop(h->kind == POL_HOST_CIDR4 ? AF_INET : AF_INET6, a, addr,
				      sizeof(addr)))
				judge_connect(p, addr, k ? (uint16_t)(port + 1) : port);
		}
		break;
	}
}

static void derive_fs(const struct policy *p, const struct pol_rule *r)
{
	static const enum pol_op ops[] = { POL_OP_READ, POL_OP_WRITE, POL_OP_CREATE,
					   POL_OP_DELETE, POL_OP_EXEC, POL_OP_CHMOD };
	char path[PATH_MAX + 32];

	for (size_t i = 0; i < r->fs.n_paths && i < 4; i++) {
		const char *root = r->fs.paths[i];
		size_t o = 0;

		/* A glob pattern becomes one of its instances. */
		for (const char *c = root; *c && o < sizeof(path) - 16; c++) {
			if (*c == '*' || *c == '?')
				path[o++] = 'x';
			else if (*c != '[' && *c != ']')
				path[o++] = *c;
		}
		path[o] = 0;
		for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
			judge_fs(p, ops[k], path);
		snprintf(path + o, sizeof(path) - o, "%s", o > 1 ? "/d/f" : "d/f");
		judge_fs(p, POL_OP_READ, path);
		judge_fs(p, POL_OP_WRITE, path);
		/* A sibling that shares the root's name as a prefix. */
		snprintf(path + o, sizeof(path) - o, "x");
		judge_fs(p, POL_OP_READ, path);
	}
}

static void judge_derived(const struct policy *p)
{
	for (size_t i = 0; i < p->n_rules && i < MAX_DERIVED_RULES; i++) {
		const struct pol_rule *r = &p->rules[i];

		switch (r->kind) {
		case POL_FS:
			derive_fs(p, r);
			break;
		case POL_NET:
			for (size_t j = 0; j < r->net.n_hosts && j < 4; j++)
				derive_host(p, r, &r->net.hosts[j]);
			break;
		case POL_TOOL:
			derive_tool(p, r);
			break;
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pol_vars vars = { 0 };
	struct pol_diags diags = { 0 };
	struct policy *p = NULL;
	int r;

	if (pol_vars_set(&vars, "WORKSPACE", "/tmp/ws") < 0 ||
	    pol_vars_set(&vars, "HOME", "/home/agent") < 0 ||
	    pol_vars_set(&vars, "USER", "agent") < 0 ||
	    pol_vars_set(&vars, "UID", "1000") < 0 ||
	    pol_vars_set(&vars, "TMPDIR", "/tmp") < 0)
		__builtin_trap();
	r = pol_load_text((const char *)data, size, "/fuzz.json", &vars, &p, &diags);
	/*
	 * The contract: a policy and no errors, or no policy; and a policy
	 * refused as invalid says why (the user gets nothing else).
	 */
	if ((r == 0) != (p != NULL) || (r == 0 && diags.n_errors) ||
	    (r == -EINVAL && !diags.n_errors)) {
		fprintf(stderr, "policy_fuzz: pol_load_text returned %d with %zu errors\n", r,
			diags.n_errors);
		__builtin_trap();
	}
	if (p) {
		judge_fixed(p);
		judge_derived(p);
	}
	pol_free(p);
	pol_diags_free(&diags);
	pol_vars_free(&vars);
	return 0;
}
