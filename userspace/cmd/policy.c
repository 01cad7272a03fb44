// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `cordon policy check | explain | test`: the policy language's front end.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <arpa/inet.h>
#include <limits.h>
#include "policy.h"
#include "english.h"
#include "cmd.h"
#include "session_policy.h"
#include "util.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: cordon policy check [--strict] [--json] FILE...   (--strict: a warning exits 1)\n"
		"       cordon policy explain [--var NAME=VALUE]... [--json] FILE OP\n"
		"       cordon policy explain --english FILE   (the policy as sentences)\n"
		"       cordon policy test [--var NAME=VALUE]... [--json] FILE SCENARIOS.json\n"
		"       cordon policy test [--var NAME=VALUE]... [--json] FILE.en   (the scenarios its sentences yield)\n"
		"       cordon policy compile [--var NAME=VALUE]... FILE   (the kernel tables, JSON lines)\n"
		"       cordon policy json FILE   (the JSON policy a constitution compiles to)\n"
		"       cordon policy draft [--model PROVIDER/MODEL] [--endpoint URL] [-o FILE] [--yes] WORDS...\n"
		"                 (a constitution drafted by a model, compiled, shown, written if accepted)\n"
		"\n"
		"FILE is a policy path or a shipped profile name (%s",
		"profiles:");
	for (const char *const *n = pol_profile_names(); *n; n++)
		fprintf(f, " %s", *n);
	fprintf(f, ").\n"
		"OP is one of: read PATH | write PATH | create PATH | delete PATH | chmod PATH |\n"
		"              exec PATH [ARG...] | connect HOST:PORT | tool SERVER.TOOL JSON_ARGS\n"
		"Exit status: 0 ok, 1 policy errors or scenario mismatches, 2 usage.\n");
}

/* Load and report; returns 0 or 1 (errors were printed).  *n_warn: warnings printed. */
static int load_or_report_n(const char *file, const struct pol_vars *vars, bool warnings,
			    struct policy **out, size_t *n_warn)
{
	struct pol_diags ds = { .no_warnings = !warnings };
	int r = pol_load(file, vars, out, &ds);

	pol_diags_print(&ds, file, stderr);
	if (n_warn)
		*n_warn = ds.n - ds.n_errors;
	pol_diags_free(&ds);
	if (r == -ENOENT) {
		fprintf(stderr, "%s: no such file, and not a shipped profile\n", file);
		return 1;
	}
	if (r == -EINVAL)
		return 1;
	if (r < 0) {
		fprintf(stderr, "%s: cannot load: %s\n", file, strerror(-r));
		return 1;
	}
	return 0;
}

static int load_or_report(const char *file, const struct pol_vars *vars, bool warnings,
			  struct policy **out)
{
	return load_or_report_n(file, vars, warnings, out, NULL);
}

/* --help (or -h) among ARGV's options, before any "--": the subcommand's usage, exit 0. */
static bool asks_help(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return true;
		}
	return false;
}

/*
 * Warnings (a rule an invariant overrides, one shadowed, "/" writable, a
 * rule that can never match...) leave the exit status 0 unless --strict,
 * for a CI that must not let a policy in that does less than it reads.
 * Options come first (an argument that starts with '-' after them is an
 * error, not a file: `--json` was read as a policy path); "--" ends them.
 */
static int cmd_check(int argc, char **argv)
{
	struct pol_vars vars = {};
	bool strict = false, json = false;
	json_t *out = NULL;
	int bad = 0, first = 1;

	if (asks_help(argc, argv))
		return 0;
	for (; first < argc && argv[first][0] == '-'; first++) {
		if (!strcmp(argv[first], "--")) {
			first++;
			break;
		}
		if (!strcmp(argv[first], "--strict")) {
			strict = true;
		} else if (!strcmp(argv[first], "--json")) {
			json = true;
		} else {
			log_err("policy check: unknown option '%s' (usage: cordon policy check "
				"[--strict] [--json] FILE...)", argv[first]);
			return 2;
		}
	}
	if (argc <= first) {
		usage(stderr);
		return 2;
	}
	if (pol_vars_defaults(&vars) < 0) {
		log_err("policy: cannot set default variables");
		return 1;
	}
	if (json)
		out = json_array();
	for (int i = first; i < argc; i++) {
		struct pol_diags ds = { .no_warnings = false };
		struct policy *p = NULL;
		size_t n_warn;
		int r;

		if (!json) {
			if (load_or_report_n(argv[i], &vars, true, &p, &n_warn)) {
				bad = 1;
				continue;
			}
			if (strict && n_warn) {
				printf("%s: %zu warning%s (--strict)\n", argv[i], n_warn,
				       n_warn == 1 ? "" : "s");
				bad = 1;
			} else {
				printf("%s: ok (%zu rules, %zu credentials)\n", argv[i], p->n_rules,
				       p->n_creds);
			}
			pol_free(p);
			continue;
		}
		/* --json: one object per file, each diagnostic with its position. */
		{
			json_t *o = json_pack("{s:s}", "file", argv[i]), *diags = json_array();

			r = pol_load(argv[i], &vars, &p, &ds);
			for (size_t k = 0; k < ds.n; k++)
				json_array_append_new(diags, json_pack("{s:s,s:i,s:i,s:s}", "severity",
						ds.d[k].severity == POL_ERROR ? "error" : "warning",
						"line", ds.d[k].pos.line, "column", ds.d[k].pos.col,
						"message", ds.d[k].msg));
			n_warn = ds.n - ds.n_errors;
			if (r < 0 && !ds.n)
				json_array_append_new(diags, json_pack("{s:s,s:s}", "severity", "error",
						"message", r == -ENOENT ? "no such file, and not a shipped profile" :
						strerror(-r)));
			json_object_set_new(o, "ok", json_boolean(r == 0 && !(strict && n_warn)));
			if (r == 0) {
				json_object_set_new(o, "rules", json_integer((json_int_t)p->n_rules));
				json_object_set_new(o, "credentials", json_integer((json_int_t)p->n_creds));
			}
			json_object_set_new(o, "diagnostics", diags);
			json_array_append_new(out, o);
			if (r < 0 || (strict && n_warn))
				bad = 1;
			pol_free(p);
			pol_diags_free(&ds);
		}
	}
	if (json) {
		json_dumpf(out, stdout, JSON_INDENT(2));
		fputc('\n', stdout);
		json_decref(out);
	}
	pol_vars_free(&vars);
	return bad;
}

static int parse_var(struct pol_vars *vars, const char *arg)
{
	return policy_var_arg(vars, "policy", arg);
}


/* Split "HOST:PORT", "[V6]:PORT". */
static int split_hostport(const char *s, char *host, size_t hlen, uint16_t *port)
{
	const char *colon = strrchr(s, ':');
	char *end;
	long p;
	size_t n;

	if (!colon || colon == s)
		return -EINVAL;
	n = (size_t)(colon - s);
	if (s[0] == '[') {
		if (s[n - 1] != ']')
			return -EINVAL;
		s++;
		n -= 2;
	}
	if (n == 0 || n >= hlen)
		return -EINVAL;
	memcpy(host, s, n);
	host[n] = 0;
	errno = 0;
	p = strtol(colon + 1, &end, 10);
	if (*end || errno || p < 1 || p > 65535)
		return -EINVAL;
	*port = (uint16_t)p;
	return 0;
}

static const struct {
	const char *name;
	enum pol_op op;
} ops[] = {
	{ "read", POL_OP_READ }, { "write", POL_OP_WRITE }, { "create", POL_OP_CREATE },
	{ "delete", POL_OP_DELETE }, { "chmod", POL_OP_CHMOD }, { "exec", POL_OP_EXEC },
	{ "connect", POL_OP_CONNECT }, { "tool", POL_OP_TOOL },
};

static int op_parse(const char *s, enum pol_op *op)
{
	for (size_t i = 0; i < ARRAY_SIZE(ops); i++)
		if (!strcmp(s, ops[i].name)) {
			*op = ops[i].op;
			return 0;
		}
	return -EINVAL;
}

/* Storage behind a pol_request built from text. */
struct req_buf {
	char path[PATH_MAX];
	char host[256];
	char server[128];
	char tool[128];
	char cwd[PATH_MAX];
	json_t *args;
};

/*
 * Fill req from an op and its operands (explain's argv, or a scenario).
 * Returns 0 or prints why and returns -EINVAL.
 */
static int build_request(struct pol_request *req, struct req_buf *b, enum pol_op op,
			 const char *subject, const char *const *argv, const char *json_args,
			 json_t *args_obj, const char *cwd)
{
	int r;

	memset(req, 0, sizeof(*req));
	req->op = op;
	snprintf(b->cwd, sizeof(b->cwd), "%s", cwd);
	switch (op) {
	case POL_OP_READ:
	case POL_OP_WRITE:
	case POL_OP_CREATE:
	case POL_OP_DELETE:
	case POL_OP_CHMOD:
	case POL_OP_EXEC:
		r = pol_canon_path(subject, cwd, b->path, sizeof(b->path));
		if (r < 0) {
			fprintf(stderr, "cannot canonicalise '%s': %s\n", subject, strerror(-r));
			return -EINVAL;
		}
		req->path = b->path;
		req->argv = argv;
		req->cwd = b->cwd;
		return 0;
	case POL_OP_CONNECT:
		if (split_hostport(subject, b->host, sizeof(b->host), &req->port) < 0) {
			fprintf(stderr, "connect wants HOST:PORT, got '%s'\n", subject);
			return -EINVAL;
		}
		req->host = b->host;
		return 0;
	case POL_OP_TOOL: {
		const char *dot = strchr(subject, '.');
		json_error_t je;

		if (!dot || dot == subject || !dot[1] || (size_t)(dot - subject) >= sizeof(b->server) ||
		    strlen(dot + 1) >= sizeof(b->tool)) {
			fprintf(stderr, "tool wants SERVER.TOOL, got '%s'\n", subject);
			return -EINVAL;
		}
		memcpy(b->server, subject, (size_t)(dot - subject));
		b->server[dot - subject] = 0;
		strcpy(b->tool, dot + 1);
		if (args_obj) {
			b->args = json_incref(args_obj);
		} else {
			b->args = json_loads(json_args ? json_args : "{}", 0, &je);
			if (!b->args) {
				fprintf(stderr, "tool arguments are not JSON: %s (column %d)\n", je.text,
					je.column);
				return -EINVAL;
			}
		}
		req->server = b->server;
		req->tool = b->tool;
		req->args = b->args;
		return 0;
	}
	}
	return -EINVAL;
}

static json_t *result_json(const struct policy *p, const struct pol_request *req,
			   const struct pol_result *res)
{
	json_t *o = json_pack("{s:s,s:s}", "decision", pol_decision_name(res->decision),
			      "reason", res->reason);

	json_object_set_new(o, "rule", res->rule ? json_string(res->rule->name) : json_null());
	json_object_set_new(o, "invariant", res->invariant ? json_string(res->invariant) : json_null());
	if (res->rule)
		json_object_set_new(o, "at", json_sprintf("%s:%d:%d", p->file, res->rule->pos.line,
							   res->rule->pos.col));
	if (req->op == POL_OP_CONNECT && res->decision != CORDON_DENY)
		json_object_set_new(o, "via", json_string(pol_via_name(res->via)));
	return o;
}

static json_t *policy_json(const char *file);
static char *policy_text(const char *file, size_t *len);

/* Is FILE (a path or a shipped profile) a constitution? */
static bool is_constitution_file(const char *file)
{
	size_t len;
	char *t = policy_text(file, &len);
	bool en = t && en_is_constitution(t, len);

	free(t);
	return en;
}

/* `cordon policy explain --english FILE`: the policy as sentences of the constitution language. */
static int explain_english(const char *file)
{
	json_t *j = policy_json(file);
	char *text;

	if (!j)
		return 1;
	text = en_render(j);
	json_decref(j);
	if (!text) {
		fprintf(stderr, "%s: cannot render: %m\n", file);
		return 1;
	}
	fputs(text, stdout);
	free(text);
	return 0;
}

static int cmd_explain(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "var", required_argument, NULL, 'V' },
		{ "json", no_argument, NULL, 'j' },
		{ "english", no_argument, NULL, 'e' },
		{}
	};
	bool english = false;
	struct pol_vars vars = {};
	struct policy *p = NULL;
	struct pol_request req;
	struct pol_result res;
	struct req_buf b = {};
	bool json = false;
	enum pol_op op;
	char cwd[PATH_MAX];
	const char **xargv = NULL;
	int c, r = 2;

	if (asks_help(argc, argv))
		return 0;
	if (pol_vars_defaults(&vars) < 0)
		return 1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		if (c == 'V') {
			if (parse_var(&vars, optarg) < 0)
				goto out;
		} else if (c == 'j') {
			json = true;
		} else if (c == 'e') {
			english = true;
		} else {
			usage(stderr);
			goto out;
		}
	}
	if (english && json) {
		log_err("policy explain: --english and --json conflict (--english prints sentences)");
		goto out;
	}
	if (english) {
		r = argc - optind == 1 ? explain_english(argv[optind]) : (usage(stderr), 2);
		goto out;
	}
	if (argc - optind < 3 || op_parse(argv[optind + 1], &op) < 0) {
		usage(stderr);
		goto out;
	}
	if ((op == POL_OP_TOOL && argc - optind != 4) ||
	    ((op != POL_OP_TOOL && op != POL_OP_EXEC) && argc - optind != 3)) {
		usage(stderr);
		goto out;
	}
	if (load_or_report(argv[optind], &vars, false, &p)) {
		r = 1;
		goto out;
	}
	snprintf(cwd, sizeof(cwd), "%s", pol_vars_get(&p->vars, "WORKSPACE") ?: "/");
	if (op == POL_OP_EXEC) {
		int n = argc - optind - 2;

		xargv = calloc((size_t)n + 1, sizeof(char *));
		if (!xargv)
			goto out;
		for (int i = 0; i < n; i++)
			xargv[i] = argv[optind + 2 + i];
	}
	if (build_request(&req, &b, op, argv[optind + 2], xargv,
			  op == POL_OP_TOOL ? argv[optind + 3] : NULL, NULL, cwd) < 0) {
		r = 2;
		goto out;
	}
	pol_eval(p, &req, &res);
	if (json) {
		json_t *o = result_json(p, &req, &res);
		json_dumpf(o, stdout, JSON_COMPACT);
		fputc('\n', stdout);
		json_decref(o);
	} else {
		printf("decision:  %s\n", pol_decision_name(res.decision));
		if (res.rule)
			printf("rule:      %s (%s:%d:%d)\n", res.rule->name, p->file, res.rule->pos.line,
			       res.rule->pos.col);
		else
			printf("rule:      none\n");
		if (res.invariant)
			printf("invariant: %s\n", res.invariant);
		if (op == POL_OP_CONNECT && res.decision != CORDON_DENY)
			printf("via:       %s\n", pol_via_name(res.via));
		printf("reason:    %s\n", res.reason);
	}
	r = 0;
out:
	json_decref(b.args);
	free(xargv);
	pol_free(p);
	pol_vars_free(&vars);
	return r;
}

/* --- test ------------------------------------------------------------------------ */

/* Expand ${NAME} from vars in a scenario string (no errors: unknown stays). */
static void expand_simple(const struct pol_vars *vars, const char *in, char *out, size_t len)
{
	size_t o = 0;

	for (const char *p = in; *p && o + 1 < len; ) {
		const char *close;

		if (p[0] == '$' && p[1] == '{' && (close = strchr(p, '}'))) {
			char name[64];
			size_t n = (size_t)(close - p - 2);
			const char *v;

			if (n < sizeof(name)) {
				memcpy(name, p + 2, n);
				name[n] = 0;
				v = pol_vars_get(vars, name);
				if (v) {
					o += (size_t)snprintf(out + o, len - o, "%s", v);
					if (o >= len)
						o = len - 1;
					p = close + 1;
					continue;
				}
			}
		}
		out[o++] = *p++;
	}
	out[o] = 0;
}

static int cmd_test(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "var", required_argument, NULL, 'V' },
		{ "json", no_argument, NULL, 'j' },
		{}
	};
	static const char *const skeys[] = { "name", "op", "path", "argv", "cwd", "host", "port",
					     "tool", "args", "roots", "expect", "via", "invariant",
					     "rule", NULL };
	struct pol_vars vars = {};
	struct policy *p = NULL;
	json_t *root = NULL, *list, *vv, *sc;
	json_error_t je;
	const char *k;
	size_t i;
	int c, pass = 0, fail = 0, r = 2;
	bool english, json = false;
	const char *sfile = NULL;
	json_t *results = json_array();

	if (asks_help(argc, argv)) {
		json_decref(results);
		return 0;
	}
	if (pol_vars_defaults(&vars) < 0) {
		json_decref(results);
		return 1;
	}
	optind = 1;
	while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		if (c == 'j') {
			json = true;
			continue;
		}
		if (c != 'V' || parse_var(&vars, optarg) < 0) {
			usage(stderr);
			goto out;
		}
	}
	if (argc - optind == 1 && is_constitution_file(argv[optind])) {
		/* No scenario file: the scenarios the sentences yield. */
		json_t *pj = policy_json(argv[optind]);

		root = pj ? en_scenarios(pj) : NULL;
		json_decref(pj);
		if (!root) {
			r = 1;
			goto out;
		}
		sfile = "(scenarios from its sentences)";
	} else if (argc - optind != 2) {
		usage(stderr);
		goto out;
	} else if (!(root = json_load_file(argv[optind + 1], JSON_REJECT_DUPLICATES, &je))) {
		fprintf(stderr, "%s:%d:%d: error: %s\n", argv[optind + 1], je.line, je.column, je.text);
		r = 1;
		goto out;
	} else {
		sfile = argv[optind + 1];
	}
	vv = json_object_get(root, "vars");
	json_object_foreach(vv, k, sc)
		if (!json_is_string(sc) || pol_vars_set(&vars, k, json_string_value(sc)) < 0) {
			fprintf(stderr, "%s: bad variable '%s'\n", sfile, k);
			r = 1;
			goto out;
		}
	list = json_object_get(root, "scenarios");
	if (!json_is_array(list)) {
		fprintf(stderr, "%s: missing \"scenarios\" array\n", sfile);
		r = 1;
		goto out;
	}
	if (load_or_report(argv[optind], &vars, false, &p)) {
		r = 1;
		goto out;
	}
	/* A constitution names its rules by line: a scenario's "rule" (a JSON rule's name) is not compared. */
	english = is_constitution_file(argv[optind]);
	if (english && !json)
		printf("(a constitution: the scenarios' rule names are not compared)\n");
	if (!json)
		printf("%-4s %-8s %-9s %-9s %-26s %s\n", "#", "op", "expect", "got", "rule/invariant",
		       "subject");
	json_array_foreach(list, i, sc) {
		const char *opname = json_string_value(json_object_get(sc, "op"));
		const char *expect = json_string_value(json_object_get(sc, "expect"));
		const char *subject = NULL, *want_via, *want_inv, *want_rule;
		char subj[PATH_MAX], cwd[PATH_MAX], tmp[PATH_MAX], by[128];
		const char *xargv[64] = { 0 };
		char argbuf[64][256];
		struct pol_request req;
		struct pol_result res;
		struct req_buf b = {};
		enum pol_op op;
		bool ok;
		json_t *a, *roots;
		const char *rootv[16] = { 0 };
		char rootbuf[16][PATH_MAX];
		size_t j;

		json_object_foreach(sc, k, a) {
			bool known = false;
			for (int s = 0; skeys[s] && !known; s++)
				known = !strcmp(k, skeys[s]);
			if (!known) {
				fprintf(stderr, "scenario %zu: unknown key \"%s\"\n", i + 1, k);
				fail++;
			}
		}
		if (!opname || op_parse(opname, &op) < 0 || !expect ||
		    pol_decision_parse(expect) < 0) {
			fprintf(stderr, "scenario %zu: needs \"op\" and \"expect\" (allow|escalate|deny)\n",
				i + 1);
			fail++;
			continue;
		}
		expand_simple(&vars, json_string_value(json_object_get(sc, "cwd")) ?:
			      (pol_vars_get(&vars, "WORKSPACE") ?: "/"), cwd, sizeof(cwd));
		if (op == POL_OP_CONNECT) {
			snprintf(subj, sizeof(subj), "%s:%lld",
				 json_string_value(json_object_get(sc, "host")) ?: "",
				 (long long)json_integer_value(json_object_get(sc, "port")));
			subject = subj;
		} else if (op == POL_OP_TOOL) {
			subject = json_string_value(json_object_get(sc, "tool"));
		} else {
			expand_simple(&vars, json_string_value(json_object_get(sc, "path")) ?: "", subj,
				      sizeof(subj));
			subject = subj;
		}
		json_array_foreach(json_object_get(sc, "argv"), j, a) {
			if (j >= 63)
				break;
			expand_simple(&vars, json_string_value(a) ?: "", argbuf[j], sizeof(argbuf[j]));
			xargv[j] = argbuf[j];
		}
		roots = json_object_get(sc, "roots");
		json_array_foreach(roots, j, a) {
			if (j >= 15)
				break;
			expand_simple(&vars, json_string_value(a) ?: "", rootbuf[j], sizeof(rootbuf[j]));
			rootv[j] = rootbuf[j];
		}
		if (!subject || build_request(&req, &b, op, subject, xargv[0] ? xargv : NULL, NULL,
					      op == POL_OP_TOOL ? json_object_get(sc, "args") : NULL,
					      cwd) < 0) {
			fprintf(stderr, "scenario %zu: bad subject\n", i + 1);
			json_decref(b.args);
			fail++;
			continue;
		}
		if (op == POL_OP_TOOL && !b.args) {
			b.args = json_object();
			req.args = b.args;
		}
		/* Tool args may use ${VAR}: expand string values in place. */
		if (op == POL_OP_TOOL && json_is_object(b.args)) {
			json_t *copy = json_deep_copy(b.args), *v2;
			const char *k2;

			json_object_foreach(copy, k2, v2)
				if (json_is_string(v2)) {
					expand_simple(&vars, json_string_value(v2), tmp, sizeof(tmp));
					json_object_set_new(copy, k2, json_string(tmp));
				}
			json_decref(b.args);
			b.args = copy;
			req.args = copy;
		}
		if (rootv[0])
			req.roots = rootv;
		pol_eval(p, &req, &res);
		want_via = json_string_value(json_object_get(sc, "via"));
		want_inv = json_string_value(json_object_get(sc, "invariant"));
		want_rule = json_string_value(json_object_get(sc, "rule"));
		ok = res.decision == (uint32_t)pol_decision_parse(expect);
		if (want_via)
			ok = ok && !strcmp(want_via, pol_via_name(res.via));
		if (want_inv)
			ok = ok && res.invariant && !strcmp(want_inv, res.invariant);
		if (want_rule && !english)
			ok = ok && res.rule && !strcmp(want_rule, res.rule->name);
		snprintf(by, sizeof(by), "%s", res.invariant ? res.invariant :
			 res.rule ? res.rule->name : "(default)");
		if (json)
			json_array_append_new(results, json_pack("{s:I,s:s,s:s,s:s,s:s,s:s,s:b,s:s,s:s?}",
					"n", (json_int_t)(i + 1), "op", opname, "expect", expect,
					"got", pol_decision_name(res.decision), "by", by,
					"subject", subject, "ok", ok, "reason", res.reason,
					"name", json_string_value(json_object_get(sc, "name"))));
		else
			printf("%-4zu %-8s %-9s %-9s %-26s %s%s\n", i + 1, opname, expect,
			       pol_decision_name(res.decision), by, subject,
			       ok ? "" : "   <-- MISMATCH");
		if (!ok && !json) {
			printf("     %s%s%s\n", res.reason,
			       json_string_value(json_object_get(sc, "name")) ? "; scenario: " : "",
			       json_string_value(json_object_get(sc, "name")) ?: "");
		}
		if (!ok)
			fail++;
		else
			pass++;
		json_decref(b.args);
	}
	if (json) {
		json_t *o = json_pack("{s:s,s:s,s:O,s:i,s:i}", "policy", argv[optind],
				      "scenarios_from", sfile, "scenarios", results, "passed", pass,
				      "failed", fail);

		json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
		json_decref(o);
	} else {
		printf("\n%s: %d scenarios passed, %d failed\n", sfile, pass, fail);
	}
	r = fail ? 1 : 0;
out:
	json_decref(results);
	json_decref(root);
	pol_free(p);
	pol_vars_free(&vars);
	return r;
}

static int print_fs_entry(void *ctx, const struct pol_fs_entry *e)
{
	char a[64], d[64], x[64];
	json_t *o = json_pack("{s:s,s:s,s:s,s:s}", "path", e->path,
			      "allow", pol_rights_str(e->allow, a, sizeof(a)),
			      "deny", pol_rights_str(e->deny, d, sizeof(d)),
			      "escalate", pol_rights_str(e->escalate, x, sizeof(x)));
	const struct policy *p = ctx;

	if (e->invariant)
		json_object_set_new(o, "invariant", json_string(e->invariant));
	else
		json_object_set_new(o, "rule", json_string(p->rules[e->rule_id].name));
	if (e->protected_object)
		json_object_set_new(o, "protected_object", json_true());
	json_dumpf(o, stdout, JSON_COMPACT);
	fputc('\n', stdout);
	json_decref(o);
	return 0;
}

static int print_net_entry(void *ctx, const struct pol_net_entry *e)
{
	const struct policy *p = ctx;
	char addr[INET6_ADDRSTRLEN];

	inet_ntop(e->family == 4 ? AF_INET : AF_INET6, e->addr, addr, sizeof(addr));
	printf("{\"net\":\"%s/%u\",\"ports\":\"%u-%u\",\"decision\":\"%s\",\"rule\":\"%s\"}\n",
	       addr, e->prefix, e->port_lo, e->port_hi, pol_decision_name(e->decision),
	       p->rules[e->rule_id].name);
	return 0;
}

/* `cordon policy compile`: the tables the kernel floor would load, as JSON lines. */
static int cmd_compile(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "var", required_argument, NULL, 'V' },
		{}
	};
	struct pol_vars vars = {};
	struct policy *p = NULL;
	int c, r = 2;

	if (asks_help(argc, argv))
		return 0;
	if (pol_vars_defaults(&vars) < 0)
		return 1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1)
		if (c != 'V' || parse_var(&vars, optarg) < 0)
			goto out;
	if (argc - optind != 1) {
		usage(stderr);
		goto out;
	}
	r = 1;
	if (load_or_report(argv[optind], &vars, false, &p))
		goto out;
	if (pol_compile_fs(p, print_fs_entry, p) < 0 || pol_compile_net(p, print_net_entry, p) < 0) {
		fprintf(stderr, "%s: cannot compile\n", argv[optind]);
		goto out;
	}
	r = 0;
out:
	pol_free(p);
	pol_vars_free(&vars);
	return r;
}

/* The text of a policy path or shipped profile (the loader's rule). */
static char *policy_text(const char *file, size_t *len)
{
	char *text = NULL;
	const char *pt;
	int r = read_file(file, &text, 16 << 20);

	if (r >= 0) {
		*len = (size_t)r;
		return text;
	}
	if (r == -ENOENT && !strchr(file, '/') && (pt = pol_profile_text(file, len)))
		return strndup(pt, *len);
	fprintf(stderr, "%s: cannot read: %s\n", file, strerror(-r));
	return NULL;
}

/*
 * `cordon policy json FILE`: the JSON a constitution compiles to (a JSON
 * policy is printed as it is), indented, keys in the compiler's fixed order.
 */
static json_t *policy_json(const char *file)
{
	_cleanup_free_ char *text = NULL;
	struct en_error e;
	json_error_t je;
	json_t *j;
	size_t len;

	text = policy_text(file, &len);
	if (!text)
		return NULL;
	if (en_is_constitution(text, len)) {
		if (en_compile(text, len, file, &j, &e) < 0) {
			char msg[1024];

			en_error_format(&e, msg, sizeof(msg));
			fprintf(stderr, "%s\n", msg);
			return NULL;
		}
	} else if (!(j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je))) {
		fprintf(stderr, "%s:%d:%d: error: invalid JSON: %s\n", file, je.line, je.column,
			je.text);
		return NULL;
	}
	return j;
}

static int cmd_json(int argc, char **argv)
{
	json_t *j;

	if (asks_help(argc, argv))
		return 0;
	if (argc == 2 && argv[1][0] == '-') {
		log_err("policy json: unknown option '%s' (usage: cordon policy json FILE)", argv[1]);
		return 2;
	}
	if (argc != 2) {
		usage(stderr);
		return 2;
	}
	if (!(j = policy_json(argv[1])))
		return 1;
	json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputc('\n', stdout);
	json_decref(j);
	return 0;
}

int cmd_policy(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "check"))
		return cmd_check(argc - 1, argv + 1);
	if (!strcmp(argv[1], "explain"))
		return cmd_explain(argc - 1, argv + 1);
	if (!strcmp(argv[1], "test"))
		return cmd_test(argc - 1, argv + 1);
	if (!strcmp(argv[1], "compile"))
		return cmd_compile(argc - 1, argv + 1);
	if (!strcmp(argv[1], "json"))
		return cmd_json(argc - 1, argv + 1);
	if (!strcmp(argv[1], "draft"))
		return cmd_policy_draft(argc - 1, argv + 1);
	log_err("policy: unknown subcommand '%s' (check, explain, test, compile, json, draft)", argv[1]);
	return 2;
}
