// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The constitution compiler (policy/english/): every documented sentence
 * form decides what it says; every error names FILE:LINE:COL and the
 * nearest example; a corpus of sentence pairs that differ only in negation,
 * exception or scope decides differently exactly where they should (the
 * places a compiler that guesses gets wrong); the same text always compiles
 * to the same bytes.  Decisions are those of the real loader and evaluator
 * (pol_load_text, pol_eval) on the compiled policy.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "policy.h"
#include "english.h"

static struct pol_vars vars;

static int setup(void **state)
{
	(void)state;
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
	(void)state;
	pol_vars_free(&vars);
	return 0;
}

static struct policy *load_en(const char *text)
{
	struct pol_diags ds = { .no_warnings = true };
	struct policy *p = NULL;
	int r = pol_load_text(text, strlen(text), "t.en", &vars, &p, &ds);

	if (r) {
		for (size_t i = 0; i < ds.n; i++)
			print_error("%d:%d: %s\n", ds.d[i].pos.line, ds.d[i].pos.col, ds.d[i].msg);
		print_error("in:\n%s\n", text);
	}
	assert_int_equal(r, 0);
	pol_diags_free(&ds);
	return p;
}

/*
 * A request in words: "read PATH", "write PATH", "create PATH", "delete
 * PATH", "exec PATH", "chmod PATH", "connect HOST PORT", "tool S.T JSON".
 */
static uint32_t decide(const struct policy *p, const char *what)
{
	static const struct { const char *w; enum pol_op op; } ops[] = {
		{ "read", POL_OP_READ }, { "write", POL_OP_WRITE }, { "create", POL_OP_CREATE },
		{ "delete", POL_OP_DELETE }, { "exec", POL_OP_EXEC }, { "chmod", POL_OP_CHMOD },
		{ "connect", POL_OP_CONNECT }, { "tool", POL_OP_TOOL },
	};
	char op[16], a[512], b[512] = "";
	struct pol_request req = { 0 };
	struct pol_result res;
	char server[512], *dot;
	json_t *args = NULL;
	int n = sscanf(what, "%15s %511s %511[^\n]", op, a, b);

	assert_true(n >= 2);
	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
		if (!strcmp(ops[k].w, op))
			req.op = ops[k].op;
	if (req.op == POL_OP_CONNECT) {
		req.host = a;
		req.port = (uint16_t)atoi(b);
	} else if (req.op == POL_OP_TOOL) {
		snprintf(server, sizeof(server), "%s", a);
		dot = strchr(server, '.');
		assert_non_null(dot);
		*dot = 0;
		req.server = server;
		req.tool = dot + 1;
		args = json_loads(*b ? b : "{}", 0, NULL);
		assert_non_null(args);
		req.args = args;
	} else {
		req.path = a;
		req.cwd = "/work/p";
	}
	pol_eval(p, &req, &res);
	json_decref(args);
	return res.decision;
}

static uint32_t decide_text(const char *text, const char *what)
{
	struct policy *p = load_en(text);
	uint32_t d = decide(p, what);

	pol_free(p);
	return d;
}

#define A CORDON_ALLOW
#define E CORDON_ESCALATE
#define D CORDON_DENY

/* --- every documented form --------------------------------------------------------- */

static const struct form_case {
	const char *text;
	const char *req;
	uint32_t expect;
} forms[] = {
	{ "The agent may read and change anything in the workspace.", "write /work/p/a.c", A },
	{ "The agent may read and change anything in the workspace.", "exec /work/p/a.sh", D },
	{ "The agent may read, write and run anything in the workspace.", "exec /work/p/a.sh", A },
	{ "The agent may read /etc.", "read /etc/hosts", A },
	{ "The agent may read /etc.", "write /etc/hosts", D },
	{ "The agent can see /srv.", "read /srv/x", A },
	{ "The agent is allowed to open /srv.", "read /srv/x", A },
	{ "It may look at /srv.", "read /srv/x", A },
	{ "Agents may edit /srv.", "write /srv/x", A },
	{ "The agent may change /srv.", "delete /srv/x", A },
	{ "The agent may create files in /srv.", "create /srv/x", A },
	{ "The agent may add files in /srv.", "create /srv/x", A },
	{ "The agent may remove files in /srv.", "delete /srv/x", A },
	{ "The agent may execute /opt/tool.", "exec /opt/tool/bin", A },
	{ "The agent may change the permissions of /srv.", "chmod /srv/x", A },
	{ "The agent may do anything with /srv.", "chmod /srv/x", A },
	{ "The agent may use /srv.", "exec /srv/x", A },
	{ "The agent may read ~/notes.", "read /home/agent/notes/a", A },
	{ "The agent may read ./docs.", "read /work/p/docs/a", A },
	{ "The agent may read ${WORKSPACE}/docs.", "read /work/p/docs/a", A },
	{ "The agent may read my home.", "read /home/agent/x", A },
	{ "The agent may write the temporary directory.", "write /tmp/x", A },
	{ "The agent may read anything under /srv.", "read /srv/a/b", A },
	{ "The agent may read anything.", "read /srv/a/b", A },
	{ "The agent may read and write in /srv.", "write /srv/a/b", A },
	{ "The agent may read and run /opt, but never change them.", "exec /opt/x", A },
	{ "The agent may do anything with /srv.\nThe agent may read /srv, but never change it.",
	  "delete /srv/x", D },
	{ "The agent may read anything.\nNever touch /srv.", "read /srv/a", D },
	{ "The agent may call git.push when remote may be anything.\nNever push to the remote backup.",
	  "tool git.push {\"remote\": \"backup\"}", D },
	{ "The agent may read everything in my home.", "read /home/agent/x", A },
	{ "The agent may read anything in /srv except /srv/k.", "read /srv/k/x", D },
	{ "The agent may read anything in /srv but not /srv/k.", "read /srv/k/x", D },
	{ "The agent may read anything in /srv other than /srv/k.", "read /srv/k/x", D },
	{ "The agent may read anything in /srv unless /srv/k.", "read /srv/k/x", D },
	{ "The agent may read anything in /srv except files named .env.", "read /srv/a/.env", D },
	/*
	 * "files named X in R" is R + "/" "**" "/X"; until a double star matches any depth
	 * (#34, the policy check branch) these cases stay one level down.
	 */
	{ "The agent may read anything in /srv except any .env file.", "read /srv/a/.env", D },
	{ "The agent may read anything in /srv except .git.", "read /srv/.git/config", D },
	{ "The agent may read anything.\nNever read files named .env anywhere.", "read /srv/.env", D },
	{ "The agent may read anything.\nNever read system directories.", "read /usr/bin/ls", D },
	{ "The agent may read anything.\nNever change the shell's start-up files.",
	  "write /home/agent/.bashrc", D },
	{ "The agent may read anything.\nNever read git credentials.", "read /home/agent/.git-credentials", D },
	{ "The agent may read anything.\nNever read package registry tokens.", "read /home/agent/.npmrc", D },
	{ "The agent may read anything.\nNever read my SSH keys or cloud credentials.",
	  "read /home/agent/.azure/x", D },
	{ "The agent may read anything.\nDo not let the agent read /srv.", "read /srv/x", D },
	{ "The agent may read anything.\nDon't let the agent read /srv.", "read /srv/x", D },
	{ "The agent may read anything.\nNever let the agent read /srv.", "read /srv/x", D },
	{ "The agent may read anything.\nThe agent must not read /srv.", "read /srv/x", D },
	{ "The agent may read anything.\nAsk me before reading /srv.", "read /srv/x", E },
	{ "The agent may read anything.\nAsk before reading /srv.", "read /srv/x", E },
	{ "The agent may read anything.\nThe agent must ask before reading /srv.", "read /srv/x", E },
	{ "The agent may write /srv only with my approval.", "write /srv/x", E },
	{ "The agent may write /srv only after I approve.", "write /srv/x", E },
	{ "Data dirs are /srv/a and /srv/b.\nThe agent may read data dirs.", "read /srv/b/x", A },
	{ "Data dirs are /srv/a and /srv/b.\nThe agent may read the data dirs.", "read /srv/c/x", D },
	{ "The agent may reach github.com over HTTPS.", "connect github.com 443", A },
	{ "The agent may reach github.com over HTTPS.", "connect github.com 80", D },
	{ "The agent may reach github.com.", "connect github.com 443", A },
	{ "The agent may connect to db.internal on port 5432.", "connect db.internal 5432", A },
	{ "The agent may talk to db.internal on ports 8000 to 8100.", "connect db.internal 8080", A },
	{ "The agent may access db.internal on ports 80, 443 and 8080.", "connect db.internal 8080", A },
	{ "The agent may reach db.internal on any port.", "connect db.internal 9", A },
	{ "The agent may reach any subdomain of example.com.", "connect a.example.com 443", A },
	{ "The agent may reach any subdomain of example.com.", "connect example.com 443", A },
	{ "The agent may reach *.example.com.", "connect a.example.com 443", A },
	{ "The agent may connect to 10.0.0.0/8 on port 5432 directly.", "connect 10.1.2.3 5432", A },
	{ "The agent may reach 127.0.0.1 on port 8080.", "connect 127.0.0.1 8080", A },
	{ "The agent may reach any subdomain of example.com.\nNever reach evil.example.com.",
	  "connect evil.example.com 443", D },
	{ "Code hosts are github.com and gitlab.com.\nThe agent may reach code hosts.",
	  "connect gitlab.com 443", A },
	{ "Code host is github.com.\nThe agent may reach the code host.", "connect github.com 443", A },
	{ "The agent may call git.push when remote may be anything.\nAsk me before any git push.",
	  "tool git.push {\"remote\": \"origin\"}", E },
	{ "The agent may call git.push when force may be anything.\nNever allow a force push.",
	  "tool git.push {\"force\": true}", D },
	{ "The agent may call git.push when force may be anything.\nNever force push.",
	  "tool git.push {\"force\": true}", D },
	{ "The agent may call git.push when force may be anything.\nNever force push.",
	  "tool git.push {\"force\": false}", A },
	{ "The agent may call git.push when remote may be anything.\nAsk me before a push to origin.",
	  "tool git.push {\"remote\": \"backup\"}", A },
	{ "The agent may call git.push when branch may be anything.\n"
	  "Ask me before a push to the branch main.", "tool git.push {\"branch\": \"main\"}", E },
	{ "The agent may call npm.publish.\nAsk me before publishing any package.",
	  "tool npm.publish {}", E },
	{ "The agent may call pip.install.\nAsk me before installing packages.", "tool pip.install {}", E },
	{ "The agent may fetch URLs from example.com.", "tool http.fetch {\"url\": \"https://example.com/x\"}", A },
	{ "The agent may fetch URLs from example.com.", "tool http.fetch {\"url\": \"https://evil.com/x\"}", D },
	{ "The agent may call http.fetch when url may be anything.\nNever allow downloads from evil.com.",
	  "tool http.fetch {\"url\": \"https://evil.com/x\"}", D },
	{ "The agent may run the command \"git status\".",
	  "tool shell.exec {\"argv\": [\"git\", \"status\"]}", A },
	{ "The agent may call filesystem.read_file when path is within the workspace.",
	  "tool filesystem.read_file {\"path\": \"/work/p/a\"}", A },
	{ "The agent may call filesystem.read_file when path is within the workspace.",
	  "tool filesystem.read_file {\"path\": \"/etc/passwd\"}", D },
	{ "The agent may use the filesystem tools when path is within /srv and mode may be anything.",
	  "tool filesystem.write_file {\"path\": \"/srv/x\", \"mode\": 1}", A },
	{ "The agent may call db.query when table is one of users, orders and items.",
	  "tool db.query {\"table\": \"orders\"}", A },
	{ "The agent may call db.query when table is one of users, orders and items.",
	  "tool db.query {\"table\": \"secrets\"}", D },
	{ "The agent may call db.query when limit is 10.", "tool db.query {\"limit\": 10}", A },
	{ "The agent may call db.query when sql starts with \"SELECT\".",
	  "tool db.query {\"sql\": \"SELECT 1\"}", A },
	{ "The agent may call db.query when sql matches \"SELECT *\".",
	  "tool db.query {\"sql\": \"DELETE\"}", D },
	{ "The agent may call web.get when url is a URL on example.com.",
	  "tool web.get {\"url\": \"https://example.com/\"}", A },
	{ "The agent may call web.*.", "tool web.get {}", A },
	{ "Use my Anthropic key for api.anthropic.com.", "connect api.anthropic.com 443", A },
	{ "Use my OpenAI key.", "connect api.openai.com 443", A },
	{ "Use my Gemini API key.", "connect generativelanguage.googleapis.com 443", A },
	{ "Use the secret in $GH_TOKEN for api.github.com in the header authorization with the "
	  "prefix \"Bearer \" only for GET /repos/*, POST /graphql.", "connect api.github.com 443", A },
	{ "Use the secret in the file /run/keys/t for api.x.com in the header x-key only for "
	  "GET /v1/* as $X_KEY.\nThe agent may reach api.x.com.", "connect api.x.com 443", A },
};

static void every_form_decides_what_it_says(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof(forms) / sizeof(forms[0]); k++) {
		uint32_t d = decide_text(forms[k].text, forms[k].req);

		if (d != forms[k].expect)
			fail_msg("\"%s\" / %s: got %s, want %s", forms[k].text, forms[k].req,
				 pol_decision_name(d), pol_decision_name(forms[k].expect));
	}
}

static json_t *compile_ok(const char *text)
{
	struct en_error e;
	json_t *j = NULL;

	if (en_compile(text, strlen(text), "t.en", &j, &e) < 0)
		fail_msg("%s:%d:%d: %s", e.file, e.line, e.col, e.message);
	return j;
}

/* The forms that make no rule: budgets, limits, approvals, name, description, credentials. */
static void other_forms_compile_to_their_keys(void **state)
{
	json_t *j = compile_ok("This policy is called my-project.\n"
			       "About this policy: what the agent may do here.\n"
			       "Tokens cost 15 dollars per million.\n"
			       "Stop after 4 hours or 150 dollars.\n"
			       "Stop after 20000 steps.\n"
			       "Stop after 1 million tokens.\n"
			       "Use at most 8 GB of memory, 1024 processes and 1.5 CPUs.\n"
			       "Wait 2 minutes for my answer, then deny.\n"
			       "Use my Anthropic key.\n");
	json_t *b = json_object_get(j, "budgets"), *c;
	struct policy *p;

	(void)state;
	assert_string_equal(json_string_value(json_object_get(j, "name")), "my-project");
	assert_string_equal(json_string_value(json_object_get(j, "description")),
			    "what the agent may do here");
	assert_string_equal(json_string_value(json_object_get(b, "wall_time")), "4h");
	assert_int_equal(json_integer_value(json_object_get(b, "steps")), 20000);
	/* 150 dollars at 15 per million is 10 million tokens; 1 million is smaller and stands. */
	assert_int_equal(json_integer_value(json_object_get(b, "llm_tokens")), 1000000);
	assert_string_equal(json_string_value(json_object_get(b, "memory")), "8G");
	assert_int_equal(json_integer_value(json_object_get(b, "pids")), 1024);
	assert_true(json_real_value(json_object_get(b, "cpu")) == 1.5);
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "approvals"), "timeout")), "2m");
	c = json_array_get(json_object_get(j, "credentials"), 0);
	assert_string_equal(json_string_value(json_object_get(c, "header")), "x-api-key");
	assert_int_equal(json_array_size(json_object_get(c, "endpoints")), 3);
	json_decref(j);
	p = load_en("Tokens cost 15 dollars per million.\nStop after 4 hours or 150 dollars.\n"
		    "Use my Anthropic key.\n");
	assert_int_equal(p->n_creds, 1);
	pol_free(p);
}

/* Every rule names its sentence: "source": "FILE:LINE", the sentence as description. */
static void rules_carry_their_sentence(void **state)
{
	json_t *j = compile_ok("# a comment\nThe agent may read /etc.\n\n"
			       "The agent may read anything in /srv\n  except /srv/k.\n");
	json_t *r = json_object_get(j, "rules");
	struct policy *p;

	(void)state;
	assert_int_equal(json_array_size(r), 3);
	assert_string_equal(json_string_value(json_object_get(json_array_get(r, 0), "source")), "t.en:2");
	assert_string_equal(json_string_value(json_object_get(json_array_get(r, 0), "description")),
			    "The agent may read /etc.");
	assert_string_equal(json_string_value(json_object_get(json_array_get(r, 2), "source")), "t.en:4");
	assert_string_equal(json_string_value(json_object_get(json_array_get(r, 2), "name")), "t.en:4b");
	assert_string_equal(json_string_value(json_object_get(json_array_get(r, 2), "description")),
			    "The agent may read anything in /srv except /srv/k.");
	json_decref(j);
	/* The loader places each rule at its sentence. */
	p = load_en("# a comment\nThe agent may read /etc.\n\nThe agent may read anything in /srv\n"
		    "  except /srv/k.\n");
	assert_int_equal(p->rules[0].pos.line, 2);
	assert_int_equal(p->rules[2].pos.line, 4);
	pol_free(p);
}

/* --- errors ------------------------------------------------------------------------ */

static const struct err_case {
	const char *text;
	int line, col;
	const char *msg;
	const char *suggestion;
} errors[] = {
	{ "The agent may rad /etc.", 1, 15, "from \"rad\"", "The agent may read /etc." },
	{ "The agent may read /etc.\nThe agent mya read /srv.", 2, 11, "from \"mya\"", "The agent may read /etc." },
	{ "Never read /etc except /etc/hosts.", 1, 17, "cannot narrow a deny", NULL },
	{ "Ask me before reading /etc except /etc/hosts.", 1, 28, "cannot narrow a escalate", NULL },
	{ "The agent may not write /srv but not /srv/tmp.", 1, 30, "cannot narrow a deny", NULL },
	{ "The agent may read /etc unless it is late.", 1, 25, "\"unless\"", NULL },
	{ "Stop after 200 dollars.", 1, 16, "Tokens cost", NULL },
	{ "The agent may reach github.com directly.", 1, 32, "directly", NULL },
	{ "The agent may read /etc", 1, 24, "does not end with '.'", NULL },
	{ "The agent may read \"x.\n", 1, 20, "quoted string", NULL },
	{ "Code hosts are a.com.\nCode hosts are b.com.", 2, 1, "defined twice", NULL },
	{ "Filesystem tools are /opt/fs.\nThe agent may use the filesystem tools.", 2, 15,
	  "read two ways", NULL },
	{ "The agent may read /etc in the workspace.", 1, 25, "scope", NULL },
	{ "Files are /srv/x.\nThe agent may read files.", 1, 1, "named like a phrase", NULL },
	{ "SSH keys are /srv/keys.", 1, 1, "named like a phrase", NULL },
	{ "The agent may reach github.com on port 70000.", 1, 40, "port", NULL },
	{ "Ask me before any git pus.", 1, 23, "from \"pus\"", "Ask me before any git push." },
	{ "Stop after 4 hour or.", 1, 21, "stops too early", "Stop after 4 hours or 200 dollars." },
	{ "Use the secret in $T for a.com in the header x only for GET /x.", 1, 1, NULL, NULL },
	{ "Use the secret in the file /k for a.com in the header x only for GET /x.", 1, 72,
	  "as $NAME", NULL },
	/* Read furthest as a list definition ("Hello there are ..."). */
	{ "Hello there.", 1, 12, "stops too early", NULL },
	{ "Never push to main.", 1, 15, "can be a branch or a remote", NULL },
	/* Text that would drop a rule were it let through (jansson refuses it): refused. */
	{ "Never read /etc.\nThe agent may read /srv/\xff.", 2, 25, "not UTF-8", NULL },
	{ "The agent may call db.q when n is 1234567890123456789.", 1, 35, "15 digits", NULL },
	{ "Stop after 99999999999999999999 steps.", 1, 12, "15 digits", NULL },
};

static void errors_name_line_col_and_the_nearest_sentence(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof(errors) / sizeof(errors[0]); k++) {
		const struct err_case *c = &errors[k];
		struct en_error e;
		json_t *j = NULL;
		int r = en_compile(c->text, strlen(c->text), "t.en", &j, &e);

		if (!c->msg) {
			/* A control: this one compiles. */
			if (r)
				fail_msg("\"%s\": %d:%d %s", c->text, e.line, e.col, e.message);
			json_decref(j);
			continue;
		}
		if (r != -EINVAL)
			fail_msg("\"%s\" compiled", c->text);
		assert_null(j);
		if (e.line != c->line || e.col != c->col || !strstr(e.message, c->msg))
			fail_msg("\"%s\": got %d:%d \"%s\", want %d:%d \"%s\"", c->text, e.line, e.col,
				 e.message, c->line, c->col, c->msg);
		assert_string_equal(e.file, "t.en");
		if (c->suggestion)
			assert_string_equal(e.suggestion, c->suggestion);
	}
}

static void the_loader_reports_the_sentence_error(void **state)
{
	const char *text = "The agent may read /etc.\nNever rad /srv.\n";
	struct pol_diags ds = { 0 };
	struct policy *p = NULL;
	struct en_error e = { .file = "f.en", .line = 3, .col = 7, .message = "m",
			      .suggestion = "s." };
	char buf[600];

	(void)state;
	assert_int_equal(pol_load_text(text, strlen(text), "t.en", &vars, &p, &ds), -EINVAL);
	assert_null(p);
	assert_int_equal(ds.n_errors, 1);
	assert_int_equal(ds.d[0].pos.line, 2);
	assert_int_equal(ds.d[0].pos.col, 7);
	assert_non_null(strstr(ds.d[0].msg, "did you mean"));
	pol_diags_free(&ds);
	/* A warning (a contradiction: strongest wins) names the sentences' lines. */
	text = "# two sentences\nThe agent may read /srv/data.\nNever read anything in /srv.\n";
	memset(&ds, 0, sizeof(ds));
	assert_int_equal(pol_load_text(text, strlen(text), "t.en", &vars, &p, &ds), 0);
	assert_int_equal(ds.n, 1);
	assert_int_equal(ds.d[0].pos.line, 2);
	assert_non_null(strstr(ds.d[0].msg, "'t.en:3' (deny, line 3)"));
	pol_diags_free(&ds);
	pol_free(p);
	en_error_format(&e, buf, sizeof(buf));
	assert_string_equal(buf, "f.en:3:7: error: m\n  did you mean: \"s.\"");
}

static void constitution_is_detected_by_content(void **state)
{
	(void)state;
	assert_true(en_is_constitution("The agent may read /etc.", 24));
	assert_true(en_is_constitution("# {\n  Never read /etc.", 21));
	assert_false(en_is_constitution("  \n{\"cordon_policy\": 1}", 23));
	assert_false(en_is_constitution("# c\n{}", 6));
	assert_false(en_is_constitution("   ", 3));
	assert_false(en_is_constitution("[1]", 3));
}

/* --- the negation corpus ----------------------------------------------------------- */

/*
 * Pairs that differ only in negation, an exception or a scope, judged
 * against a base that allows everything they talk about, so that a deny or
 * an escalation is the sentence's own doing.
 */
static const char base[] =
	"The agent may do anything with anything in /data.\n"
	"The agent may reach any subdomain of example.com on any port.\n"
	"The agent may reach 10.1.2.3 on any port directly.\n"
	"The agent may call git.push when force may be anything and remote may be anything and "
	"branch may be anything.\n"
	"The agent may call mcp.tool when path may be anything.\n"
	"The agent may call npm.publish when manager may be anything and action may be anything.\n"
	"The agent may call http.fetch when url may be anything and method may be anything.\n";

static const struct pair {
	const char *a, *b, *req;
	uint32_t da, db;
} pairs[] = {
	/* negation */
	{ "The agent may read /data/s.", "The agent may not read /data/s.", "read /data/s/f", A, D },
	{ "The agent can write /data/s.", "The agent cannot write /data/s.", "write /data/s/f", A, D },
	{ "The agent can delete /data/s.", "The agent can not delete /data/s.", "delete /data/s/f", A, D },
	{ "The agent is allowed to run /data/bin.", "The agent is not allowed to run /data/bin.",
	  "exec /data/bin/t", A, D },
	{ "The agent may create files in /data/s.", "The agent must not create files in /data/s.",
	  "create /data/s/n", A, D },
	{ "The agent may change /data/s.", "Never change /data/s.", "write /data/s/f", A, D },
	{ "The agent may read /data/s.", "Do not let the agent read /data/s.", "read /data/s/f", A, D },
	{ "The agent may read /data/s.", "Don't let the agent read /data/s.", "read /data/s/f", A, D },
	{ "The agent may read /data/s.", "Ask me before reading /data/s.", "read /data/s/f", A, E },
	{ "The agent may read /data/s.", "The agent must ask before reading /data/s.", "read /data/s/f", A, E },
	{ "The agent may write /data/s.", "The agent may write /data/s only with my approval.",
	  "write /data/s/f", A, E },
	{ "The agent may reach a.example.com.", "The agent may not reach a.example.com.",
	  "connect a.example.com 443", A, D },
	{ "The agent may reach a.example.com.", "Never reach a.example.com.", "connect a.example.com 443", A, D },
	{ "The agent may connect to a.example.com.", "Ask me before connecting to a.example.com.",
	  "connect a.example.com 443", A, E },
	{ "The agent may call mcp.tool.", "The agent may not call mcp.tool.", "tool mcp.tool {}", A, D },
	{ "The agent may push to origin.", "Never push to origin.", "tool git.push {\"remote\": \"origin\"}", A, D },
	{ "The agent may push.", "Ask me before any git push.", "tool git.push {}", A, E },
	{ "The agent may force push.", "Never allow a force push.", "tool git.push {\"force\": true}", A, D },
	{ "The agent may force push.", "Never force push.", "tool git.push {\"force\": true}", A, D },
	{ "The agent may push.", "Don't allow a git push.", "tool git.push {}", A, D },
	{ "The agent may reach 10.1.2.3 directly.", "The agent may not reach 10.1.2.3.",
	  "connect 10.1.2.3 443", A, D },
	{ "The agent may publish packages.", "Ask me before publishing any package.", "tool npm.publish {}", A, E },
	{ "The agent may not read /data/s.", "The agent may never read /data/s.", "read /data/s/f", D, D },
	{ "Ask me before reading /data/s.", "Never read /data/s.", "read /data/s/f", E, D },
	{ "The agent may read /data/s.\nNever read /data/s.", "Never read /data/s.\nThe agent may read /data/s.",
	  "read /data/s/f", D, D },
	/* exceptions */
	{ "The agent may read anything in /data/s.", "The agent may read anything in /data/s except /data/s/k.",
	  "read /data/s/k/f", A, D },
	{ "The agent may read anything in /data/s.", "The agent may read anything in /data/s but not /data/s/k.",
	  "read /data/s/k/f", A, D },
	{ "The agent may read anything in /data/s.", "The agent may read anything in /data/s other than /data/s/k.",
	  "read /data/s/k/f", A, D },
	{ "The agent may read anything in /data/s.", "The agent may read anything in /data/s unless /data/s/k.",
	  "read /data/s/k/f", A, D },
	{ "The agent may read anything in /data/s except /data/s/k.",
	  "The agent may read anything in /data/s except /data/s/j.", "read /data/s/k/f", D, A },
	{ "The agent may read anything in /data/s except /data/s/k.",
	  "The agent may read and write anything in /data/s except /data/s/k.", "write /data/s/k/f", A, D },
	{ "The agent may read and write anything in /data/s.",
	  "The agent may read and write anything in /data/s except files named .env.", "write /data/s/a/.env", A, D },
	{ "The agent may read anything in /data/s except files named .env.",
	  "The agent may read anything in /data/s except files named .env.", "read /data/s/a/env", A, A },
	{ "The agent may read anything in /data/s except .git.",
	  "The agent may read anything in /data/s except files named .git.", "read /data/s/sub/.git/x", A, D },
	/* scope */
	{ "Never read files named .env in the workspace.", "Never read files named .env anywhere.",
	  "read /data/.env", A, D },
	{ "Never read files named secret in /data/s.", "Never read files named secret anywhere.",
	  "read /data/secret", A, D },
	{ "Never delete anything in /data/s.", "Never delete anything in /data.", "delete /data/t/f", A, D },
	{ "Never write anything in the workspace.", "Never write anything in /data.", "write /data/f", A, D },
	{ "Never read anything in /data/s.", "Never read anything under /data/s.", "read /data/s/x", D, D },
	{ "Never read /data/s2.", "Never read /data/s.", "read /data/s/x", A, D },
	{ "The agent may not reach a.example.com.", "The agent may not reach any subdomain of a.example.com.",
	  "connect b.a.example.com 443", A, D },
	{ "Never reach a.example.com over HTTPS.", "Never reach a.example.com on any port.",
	  "connect a.example.com 80", A, D },
	{ "Never reach a.example.com on port 80.", "Never reach a.example.com on ports 8000 to 8100.",
	  "connect a.example.com 8080", A, D },
	{ "Never push to the branch main.", "Never allow any git push.", "tool git.push {\"branch\": \"dev\"}", A, D },
	{ "Ask me before a push to origin.", "Ask me before any git push.",
	  "tool git.push {\"remote\": \"backup\"}", A, E },
	{ "Never allow a force push to origin.", "Never allow a push to origin.",
	  "tool git.push {\"remote\": \"origin\", \"force\": false}", A, D },
	{ "Never call mcp.tool when path is within /data/s.", "Never call mcp.tool.",
	  "tool mcp.tool {\"path\": \"/data/t/x\"}", A, D },
	{ "Never allow downloads from evil.example.com.", "Never allow downloads.",
	  "tool http.fetch {\"url\": \"https://good.example.com/\"}", A, D },
	/* which rights */
	{ "Never read /data/bin.", "Never run /data/bin.", "exec /data/bin/t", A, D },
	{ "Never change /data/s.", "Never change the permissions of /data/s.", "chmod /data/s/f", A, D },
	{ "Never do anything with /data/s.", "Never use /data/s.", "chmod /data/s/f", D, D },
};

static void negation_exception_and_scope_pairs(void **state)
{
	char ta[2048], tb[2048];

	(void)state;
	assert_true(sizeof(pairs) / sizeof(pairs[0]) >= 40);
	for (size_t k = 0; k < sizeof(pairs) / sizeof(pairs[0]); k++) {
		const struct pair *c = &pairs[k];
		uint32_t da, db;

		snprintf(ta, sizeof(ta), "%s%s\n", base, c->a);
		snprintf(tb, sizeof(tb), "%s%s\n", base, c->b);
		da = decide_text(ta, c->req);
		db = decide_text(tb, c->req);
		if (da != c->da || db != c->db)
			fail_msg("pair %zu (%s): \"%s\" -> %s (want %s), \"%s\" -> %s (want %s)", k, c->req,
				 c->a, pol_decision_name(da), pol_decision_name(c->da), c->b,
				 pol_decision_name(db), pol_decision_name(c->db));
	}
}

/* --- determinism ------------------------------------------------------------------- */

static char *compile_text(const char *text)
{
	json_t *j = compile_ok(text);
	char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

	json_decref(j);
	return s;
}

static void compiles_to_the_same_bytes(void **state)
{
	static const char text[] =
		"This policy is called det.\nCode hosts are github.com and gitlab.com.\n"
		"The agent may read and change anything in the workspace except files named .env.\n"
		"The agent may reach code hosts over HTTPS.\nAsk me before any git push.\n"
		"Never allow a force push.\nUse my Anthropic key.\nStop after 4 hours.\n";
	static const char spaced[] =
		"This   policy is\tcalled det.\n  Code hosts   are github.com ,  gitlab.com .\n"
		"The agent may   read and change\tanything in the workspace except files named .env.\n"
		"The agent may reach code hosts over HTTPS.   Ask me\tbefore any git push.\n"
		"NEVER allow A force push.\nUse my anthropic key.\nStop after 4 Hours.\n";
	char *a = compile_text(text), *b = compile_text(text), *c;

	(void)state;
	assert_string_equal(a, b);
	free(b);
	/* Blanks, case of words and a comma's spacing change nothing but the descriptions. */
	c = compile_text(spaced);
	{
		json_t *ja = json_loads(a, 0, NULL), *jc = json_loads(c, 0, NULL);
		size_t k;
		json_t *r;

		json_array_foreach(json_object_get(ja, "rules"), k, r)
			json_object_del(r, "description"), json_object_del(r, "source"),
			json_object_del(r, "name");
		json_array_foreach(json_object_get(jc, "rules"), k, r)
			json_object_del(r, "description"), json_object_del(r, "source"),
			json_object_del(r, "name");
		assert_true(json_equal(ja, jc));
		json_decref(ja);
		json_decref(jc);
	}
	free(a);
	free(c);
}

/* --- intents ----------------------------------------------------------------------- */

static void intents_compile_to_scoped_allows(void **state)
{
	struct en_error e;
	json_t *rules = NULL, *args;
	unsigned ttl = 99;

	(void)state;
	assert_int_equal(en_compile_intent("push the branch feature-x to origin", "intent", &rules,
					   &ttl, &e), 0);
	assert_int_equal(ttl, 0);
	assert_int_equal(json_array_size(rules), 1);
	args = json_object_get(json_object_get(json_array_get(rules, 0), "tool"), "args");
	assert_string_equal(json_string_value(json_object_get(json_object_get(args, "branch"), "equals")),
			    "feature-x");
	assert_string_equal(json_string_value(json_object_get(json_object_get(args, "remote"), "equals")),
			    "origin");
	assert_string_equal(json_string_value(json_object_get(json_array_get(rules, 0), "decision")), "allow");
	json_decref(rules);
	assert_int_equal(en_compile_intent("let the agent read /srv/data for an hour", "intent", &rules,
					   &ttl, &e), 0);
	assert_int_equal(ttl, 3600);
	json_decref(rules);
	assert_int_equal(en_compile_intent("read /srv/data for 20 minutes.", "intent", &rules, &ttl, &e), 0);
	assert_int_equal(ttl, 1200);
	json_decref(rules);
	assert_int_equal(en_compile_intent("never read /srv", "intent", &rules, &ttl, &e), -EINVAL);
	assert_null(rules);
	assert_int_equal(en_compile_intent("read /srv. write /srv.", "intent", &rules, &ttl, &e), -EINVAL);
}

/* --- the round trip: render, compile, decide the same ------------------------------- */

static const char *const rt_fs[] = { "/srv/a/x", "/srv/a/b/c", "/srv/z", "/data/q",
				     "/work/p/build/o", "/work/p/x", "/home/agent/.cache/z",
				     "/etc/hosts", "/tmp/x", "/usr/bin/ls", "/home/agent/.bashrc",
				     "/home/agent/.ssh/id_rsa", "/dev/null", "/dev/shm/x",
				     "/usr/share/doc/x", "/home/agent/.npm/x", "/home/agent/.local/bin/x",
				     "/etc/cron.d/x", "/home/agent/notes", "/proc/self/status" };
static const char *const rt_hosts[] = { "a.example.com", "b.example.com", "example.com",
					"example.org", "10.1.2.3", "127.0.0.1", "api.anthropic.com",
					"api.openai.com", "generativelanguage.googleapis.com" };
static const int rt_ports[] = { 443, 80, 8050 };
static const char *const rt_tools[] = {
	"tool git.push {}", "tool git.push {\"force\": true}", "tool git.push {\"remote\": \"origin\"}",
	"tool git.push {\"remote\": \"backup\", \"force\": false}", "tool mcp.read {\"path\": \"/srv/a/x\"}",
	"tool mcp.read {\"path\": \"/etc/x\"}", "tool mcp.write {}", "tool npm.publish {}",
	"tool mcp.read {\"remote\": \"origin\"}",
	"tool filesystem.read_file {\"path\": \"/work/p/a\"}",
	"tool filesystem.read_file {\"path\": \"/etc/passwd\"}",
	"tool filesystem.write_file {\"path\": \"/work/p/a\", \"content\": \"x\"}",
	"tool filesystem.move_file {\"source\": \"/work/p/a\", \"destination\": \"/work/p/b\"}",
	"tool filesystem.read_text_file {\"path\": \"/work/p/a\", \"head\": 3}",
	"tool filesystem.list_allowed_directories {}",
	"tool http.fetch {\"url\": \"https://a.example.com/\"}",
	"tool git.push {\"remote\": \"origin\", \"branch\": \"main\", \"force\": true}",
};

/* Every request of the generated set decides alike (and an allowed connect travels alike). */
static void same_decisions(const struct policy *a, const struct policy *b, const char *what)
{
	static const char *const ops[] = { "read", "write", "create", "delete", "exec", "chmod" };
	char req[600];

	for (size_t o = 0; o < 6; o++)
		for (size_t k = 0; k < sizeof(rt_fs) / sizeof(rt_fs[0]); k++) {
			snprintf(req, sizeof(req), "%s %s", ops[o], rt_fs[k]);
			if (decide(a, req) != decide(b, req))
				fail_msg("%s: %s: %s vs %s", what, req, pol_decision_name(decide(a, req)),
					 pol_decision_name(decide(b, req)));
		}
	for (size_t h = 0; h < sizeof(rt_hosts) / sizeof(rt_hosts[0]); h++)
		for (size_t k = 0; k < 3; k++) {
			struct pol_request r = { .op = POL_OP_CONNECT, .host = rt_hosts[h],
						 .port = (uint16_t)rt_ports[k] };
			struct pol_result ra, rb;

			pol_eval(a, &r, &ra);
			pol_eval(b, &r, &rb);
			if (ra.decision != rb.decision || (ra.decision != D && ra.via != rb.via))
				fail_msg("%s: connect %s:%d: %s/%s vs %s/%s", what, rt_hosts[h], rt_ports[k],
					 pol_decision_name(ra.decision), pol_via_name(ra.via),
					 pol_decision_name(rb.decision), pol_via_name(rb.via));
		}
	for (size_t k = 0; k < sizeof(rt_tools) / sizeof(rt_tools[0]); k++)
		if (decide(a, rt_tools[k]) != decide(b, rt_tools[k]))
			fail_msg("%s: %s: %s vs %s", what, rt_tools[k], pol_decision_name(decide(a, rt_tools[k])),
				 pol_decision_name(decide(b, rt_tools[k])));
}

static void round_trip(const char *json_text, const char *what)
{
	json_t *j = json_loads(json_text, 0, NULL);
	struct pol_diags ds = { .no_warnings = true };
	struct policy *a = NULL, *b;
	char *en;

	assert_non_null(j);
	if (pol_load_text(json_text, strlen(json_text), "t.json", &vars, &a, &ds))
		fail_msg("%s: the JSON does not load: %s\n%s", what, ds.n ? ds.d[0].msg : "?", json_text);
	pol_diags_free(&ds);
	en = en_render(j);
	assert_non_null(en);
	if (strstr(en, "cannot say"))
		fail_msg("%s: rendered with a gap:\n%s", what, en);
	b = load_en(en);
	same_decisions(a, b, what);
	pol_free(a);
	pol_free(b);
	free(en);
	json_decref(j);
}

static void shipped_profiles_round_trip(void **state)
{
	(void)state;
	for (const char *const *n = pol_profile_names(); *n; n++) {
		size_t len;
		const char *t = pol_profile_text(*n, &len);
		char *z = strndup(t, len);

		round_trip(z, *n);
		free(z);
	}
}

/*
 * The English sources of the shipped profiles (policy/profiles/NAME.en,
 * read from the source tree: run from its top, as make test does) decide
 * the generated request set as the built-in JSON does; their scenarios are
 * run against them by tests/host/policy_english.sh.
 */
static void profile_sources_decide_as_their_json(void **state)
{
	int n = 0;

	(void)state;
	for (const char *const *name = pol_profile_names(); *name; name++) {
		char path[256], *en = NULL;
		size_t len;
		const char *t = pol_profile_text(*name, &len);
		struct pol_diags ds = { .no_warnings = true };
		struct policy *a = NULL, *b;
		FILE *f;
		long sz;

		snprintf(path, sizeof(path), "policy/profiles/%s.en", *name);
		f = fopen(path, "r");
		if (!f)
			continue;
		fseek(f, 0, SEEK_END);
		sz = ftell(f);
		rewind(f);
		en = calloc(1, (size_t)sz + 1);
		assert_int_equal(fread(en, 1, (size_t)sz, f), (size_t)sz);
		fclose(f);
		assert_int_equal(pol_load_text(t, len, *name, &vars, &a, &ds), 0);
		b = load_en(en);
		same_decisions(a, b, *name);
		assert_int_equal(a->n_creds, b->n_creds);
		pol_free(b);
		/* And its rendering, compiled again: English to English decides alike too. */
		{
			json_t *j = compile_ok(en);
			char *again = en_render(j);

			assert_non_null(again);
			assert_null(strstr(again, "cannot say"));
			b = load_en(again);
			same_decisions(a, b, *name);
			pol_free(b);
			free(again);
			json_decref(j);
		}
		pol_free(a);
		free(en);
		n++;
	}
	if (!n)
		skip();
}

/* --- scenarios from sentences ----------------------------------------------------- */

static void expand_vars(const char *in, char *out, size_t len)
{
	static const char *const v[][2] = { { "${WORKSPACE}", "/work/p" }, { "${HOME}", "/home/agent" },
					    { "${TMPDIR}", "/tmp" } };
	size_t o = 0;

	while (*in && o + 1 < len) {
		size_t k;

		for (k = 0; k < 3; k++)
			if (!strncmp(in, v[k][0], strlen(v[k][0])))
				break;
		if (k < 3) {
			o += (size_t)snprintf(out + o, len - o, "%s", v[k][1]);
			in += strlen(v[k][0]);
		} else {
			out[o++] = *in++;
		}
	}
	out[o < len ? o : len - 1] = 0;
}

/* Run the scenarios a constitution's sentences yield; the number that fail. */
static int run_scenarios(const char *text, int *total)
{
	json_t *j = compile_ok(text), *sc = en_scenarios(j), *x;
	struct policy *p = load_en(text);
	size_t k;
	int bad = 0;

	*total = 0;
	json_array_foreach(json_object_get(sc, "scenarios"), k, x) {
		const char *op = json_string_value(json_object_get(x, "op"));
		char req[1200], path[600];
		json_t *empty = json_object();
		char *args = json_dumps(json_object_get(x, "args") ?: empty, JSON_COMPACT);

		json_decref(empty);

		if (!strcmp(op, "connect"))
			snprintf(req, sizeof(req), "connect %s %lld", json_string_value(json_object_get(x, "host")),
				 (long long)json_integer_value(json_object_get(x, "port")));
		else if (!strcmp(op, "tool"))
			snprintf(req, sizeof(req), "tool %s %s", json_string_value(json_object_get(x, "tool")), args);
		else {
			expand_vars(json_string_value(json_object_get(x, "path")), path, sizeof(path));
			snprintf(req, sizeof(req), "%s %s", op, path);
		}
		free(args);
		if (decide(p, req) != (uint32_t)pol_decision_parse(json_string_value(json_object_get(x, "expect"))))
			bad++;
		(*total)++;
	}
	pol_free(p);
	json_decref(sc);
	json_decref(j);
	return bad;
}

static void sentences_yield_scenarios(void **state)
{
	static const char good[] =
		"The agent may read and change anything in the workspace.\n"
		"The agent may read /srv/data.\n"
		"The agent may reach db.example.com on port 5432.\n"
		"Ask me before any git push.\nNever allow a force push.\n"
		"The agent may call db.query when table is one of users and orders.\n";
	int total, bad;

	(void)state;
	bad = run_scenarios(good, &total);
	/* Each sentence decides its request; the allows have their near misses (beside, next port,
	 * other value), but for the workspace, which has no parent in the sentence. */
	assert_int_equal(total, 9);
	assert_int_equal(bad, 0);
	/* Two sentences that contradict each other: the allow's scenario fails. */
	bad = run_scenarios("The agent may read /srv/data.\nNever read anything in /srv.\n", &total);
	assert_int_equal(bad, 1);
	/* A sentence that reaches further than its neighbour's near miss says so. */
	bad = run_scenarios("The agent may reach db.example.com on port 5432.\n"
			    "The agent may reach 10.0.0.1 on ports 1 to 65535 directly.\n", &total);
	assert_int_equal(bad, 0);
}

/* A deterministic generator (the test must fail the same way twice). */
static uint32_t rnd(uint32_t *s)
{
	*s = *s * 1103515245u + 12345u;
	return (*s >> 16) & 0x7fff;
}

static json_t *gen_rule(uint32_t *s, int i)
{
	static const char *const dec[] = { "allow", "deny", "escalate" };
	static const char *const paths[] = { "/srv", "/srv/a", "/srv/a/b", "/data", "${WORKSPACE}",
					     "${WORKSPACE}/build", "${HOME}/.cache", "/etc", "${TMPDIR}" };
	static const char *const rights[] = { "read", "write", "create", "delete", "exec", "chmod" };
	static const char *const names[] = { "a.example.com", "*.example.com", "example.org" };
	static const char *const addrs[] = { "10.0.0.0/8", "127.0.0.1" };
	static const char *const tools[] = { "git.push", "mcp.read", "mcp.*", "*.publish" };
	char name[16];
	json_t *r, *a;
	uint32_t kind = rnd(s) % 3, n;

	snprintf(name, sizeof(name), "r%d", i);
	r = json_pack("{s:s, s:s}", "name", name, "decision", dec[rnd(s) % 3]);
	if (kind == 0) {
		json_t *p = json_array(), *rt = json_array();

		for (n = 1 + rnd(s) % 2; n--;)
			json_array_append_new(p, json_string(paths[rnd(s) % 9]));
		if (rnd(s) % 5 == 0)
			json_array_append_new(rt, json_string("all"));
		else
			for (unsigned k = 0; k < 6; k++)
				if (rnd(s) % 3 == 0 || (k == 5 && !json_array_size(rt)))
					json_array_append_new(rt, json_string(rights[k]));
		json_object_set_new(r, "fs", json_pack("{s:o, s:o}", "paths", p, "rights", rt));
	} else if (kind == 1) {
		json_t *net = json_object(), *h = json_array();
		bool addr_only = rnd(s) % 3 == 0;

		if (addr_only)
			json_array_append_new(h, json_string(addrs[rnd(s) % 2]));
		else if (rnd(s) % 4 == 0)
			json_array_append_new(h, json_string("@test_hosts"));
		else
			for (n = 1 + rnd(s) % 2; n--;)
				json_array_append_new(h, json_string(rnd(s) % 3 ? names[rnd(s) % 3] :
								     addrs[rnd(s) % 2]));
		json_object_set_new(net, "hosts", h);
		switch (rnd(s) % 3) {
		case 0: json_object_set_new(net, "ports", json_pack("[i]", 443)); break;
		case 1: json_object_set_new(net, "ports", json_pack("[i, s]", 80, "8000-8100")); break;
		default: break;
		}
		switch (rnd(s) % 4) {
		case 0: if (addr_only) json_object_set_new(net, "via", json_string("direct")); break;
		case 1: json_object_set_new(net, "via", json_string("egress")); break;
		case 2: json_object_set_new(net, "via", json_string("credential-proxy")); break;
		default: break;
		}
		json_object_set_new(r, "net", net);
	} else {
		json_t *t = json_pack("{s:s}", "name", tools[rnd(s) % 4]);

		a = json_object();
		if (rnd(s) % 2)
			json_object_set_new(a, "path", json_pack("{s:[s]}", "within", "/srv/a"));
		if (rnd(s) % 3 == 0)
			json_object_set_new(a, "remote", rnd(s) % 2 ? json_pack("{s:s}", "equals", "origin") :
					    json_pack("{s:[s, s]}", "in", "origin", "backup"));
		if (rnd(s) % 3 == 0)
			json_object_set_new(a, "force", rnd(s) % 2 ? json_pack("{s:b}", "equals", 1) :
					    json_pack("{s:b}", "any", 1));
		if (json_object_size(a))
			json_object_set_new(t, "args", a);
		else
			json_decref(a);
		json_object_set_new(r, "tool", t);
	}
	return r;
}

static void generated_policies_round_trip(void **state)
{
	uint32_t seed = 34;

	(void)state;
	for (int k = 0; k < 200; k++) {
		json_t *p = json_pack("{s:i, s:{s:[s, s]}, s:[]}", "cordon_policy", 1, "lists",
				      "test_hosts", "b.example.com", "10.1.2.3", "rules");
		char what[32], *text;

		for (int i = 0, n = 1 + (int)(rnd(&seed) % 8); i < n; i++)
			json_array_append_new(json_object_get(p, "rules"), gen_rule(&seed, i));
		text = json_dumps(p, JSON_INDENT(1));
		snprintf(what, sizeof(what), "generated %d", k);
		round_trip(text, what);
		free(text);
		json_decref(p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_form_decides_what_it_says),
		cmocka_unit_test(other_forms_compile_to_their_keys),
		cmocka_unit_test(rules_carry_their_sentence),
		cmocka_unit_test(errors_name_line_col_and_the_nearest_sentence),
		cmocka_unit_test(the_loader_reports_the_sentence_error),
		cmocka_unit_test(constitution_is_detected_by_content),
		cmocka_unit_test(negation_exception_and_scope_pairs),
		cmocka_unit_test(compiles_to_the_same_bytes),
		cmocka_unit_test(intents_compile_to_scoped_allows),
		cmocka_unit_test(shipped_profiles_round_trip),
		cmocka_unit_test(generated_policies_round_trip),
		cmocka_unit_test(profile_sources_decide_as_their_json),
		cmocka_unit_test(sentences_yield_scenarios),
	};
	return cmocka_run_group_tests_name("english", tests, setup, teardown);
}
