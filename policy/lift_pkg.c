// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Package managers and publishers: installs, and every way to publish or
 * change a published package (lift_pkg.h).
 */
#include <string.h>
#include "lift_pkg.h"
#include "lifted.h"
#include "policy.h"
#include "scan.h"
#include "util.h"

/*
 * npm's, pnpm's, yarn's and bun's options that take a value (npm's config
 * definitions, nopt: --key value, --key=value; shorthands -C -w -F).  A
 * config key not here is unknown, so both readings are taken.
 */
static const struct opt npm_opts[] = {
	{ "registry", 0, A_VAL, 0 }, { "otp", 0, A_VAL, 0 }, { "tag", 0, A_VAL, 0 },
	{ "access", 0, A_VAL, 0 }, { "workspace", 0, A_VAL, 0 }, { "prefix", 'C', A_VAL, 0 },
	{ "dir", 0, A_VAL, 0 }, { "cwd", 0, A_VAL, 0 }, { "userconfig", 0, A_VAL, 0 },
	{ "globalconfig", 0, A_VAL, 0 }, { "cache", 0, A_VAL, 0 }, { "loglevel", 0, A_VAL, 0 },
	{ "scope", 0, A_VAL, 0 }, { "auth-type", 0, A_VAL, 0 }, { "before", 0, A_VAL, 0 },
	{ "omit", 0, A_VAL, 0 }, { "include", 0, A_VAL, 0 }, { "save-prefix", 0, A_VAL, 0 },
	{ "script-shell", 0, A_VAL, 0 }, { "preid", 0, A_VAL, 0 }, { "node-options", 0, A_VAL, 0 },
	{ "filter", 'F', A_VAL, 0 }, { "modules-folder", 0, A_VAL, 0 },
	{ "cache-folder", 0, A_VAL, 0 }, { "network-timeout", 0, A_VAL, 0 },
	{ "userconfig", 0, A_VAL, 0 }, { "provenance-file", 0, A_VAL, 0 },
	{ "global", 'g', A_NO, 0 }, { "save", 'S', A_NO, 0 }, { "save-dev", 'D', A_NO, 0 },
	{ "save-optional", 'O', A_NO, 0 }, { "save-exact", 'E', A_NO, 0 },
	{ "save-bundle", 'B', A_NO, 0 }, { "save-prod", 'P', A_NO, 0 }, { "force", 'f', A_NO, 0 },
	{ "yes", 'y', A_NO, 0 }, { "silent", 's', A_NO, 0 }, { "quiet", 'q', A_NO, 0 },
	{ "recursive", 'r', A_NO, 0 }, { "dry-run", 0, A_NO, 0 }, { "json", 0, A_NO, 0 },
	{ "workspaces", 0, A_NO, 0 }, { "ws", 0, A_NO, 0 }, { "include-workspace-root", 0, A_NO, 0 },
	{ "provenance", 0, A_NO, 0 }, { "ignore-scripts", 0, A_NO, 0 },
	{ "legacy-peer-deps", 0, A_NO, 0 }, { "production", 0, A_NO, 0 },
	{ "frozen-lockfile", 0, A_NO, 0 }, { "offline", 0, A_NO, 0 },
	{ "prefer-offline", 0, A_NO, 0 }, { "verbose", 0, A_NO, 0 }, { "version", 'v', A_NO, 0 },
	{ "help", 'h', A_NO, 0 }, { "audit", 0, A_NO, 0 }, { "fund", 0, A_NO, 0 },
	{ "package-lock", 0, A_NO, 0 }, { "foreground-scripts", 0, A_NO, 0 },
};
static const struct optset npm_set = OPTSET(npm_opts, OS_NEG | OS_SLONG);

static const char *const npm_install_cmds[] = {
	"install", "i", "in", "ins", "inst", "insta", "instal", "isnt", "isnta", "isntal",
	"isntall", "add", "ci", "clean-install", "ic", "install-clean", "isntall-clean",
	"install-test", "it", "install-ci-test", "cit", NULL
};

/*
 * What changes a published package: publish; unpublish, deprecate; tags,
 * owners and access of a package (their reading forms excepted).
 */
static const char *npm_publish_action(const char *sub, const char *const *argv, int argc, int i,
				      const struct optset *set)
{
	static const char *const writes[] = { "add", "rm", "set", "grant", "revoke", NULL };
	const char *first = NULL;
	struct scan s;
	struct tok t;

	if (!strcmp(sub, "publish") || !strcmp(sub, "unpublish") || !strcmp(sub, "deprecate") ||
	    !strcmp(sub, "undeprecate"))
		return sub;
	if (strcmp(sub, "dist-tag") && strcmp(sub, "dist-tags") && strcmp(sub, "owner") &&
	    strcmp(sub, "author") && strcmp(sub, "access") && strcmp(sub, "tag"))
		return NULL;
	scan_init(&s, argv, argc, i, set);
	for (scan_next(&s, &t); t.k != T_END && !first; scan_next(&s, &t))
		if (t.k == T_ARG)
			first = t.arg;
	return first && lifted_in_list(first, writes) ? sub : NULL;
}

static void npm_sub_cb(struct lift *L, const char *prog, const char *sub,
		       const char *const *argv, int argc, int next, void *ctx)
{
	const char *action;

	(void)ctx;
	if (lifted_in_list(sub, npm_install_cmds)) {
		json_t *pk = json_array();
		struct scan s;
		struct tok t;

		scan_init(&s, argv, argc, next, &npm_set);
		for (scan_next(&s, &t); pk && t.k != T_END; scan_next(&s, &t))
			if (t.k == T_ARG)
				json_array_append_new(pk, pol_json_text(t.arg));
		lifted_add(L, "npm", "install",
			   pk ? json_pack("{s:o,s:s}", "packages", pk, "manager", prog) : NULL);
		return;
	}
	/* yarn 2+: yarn npm publish, yarn npm tag add. */
	if (!strcmp(sub, "npm") && !strcmp(prog, "yarn") && L->depth < 2) {
		L->depth++;
		scan_subcommands(L, prog, argv, argc, next, &npm_set, npm_sub_cb, NULL);
		L->depth--;
		return;
	}
	action = npm_publish_action(sub, argv, argc, next, &npm_set);
	if (action)
		lifted_add(L, "npm", "publish",
			   json_pack("{s:s,s:s}", "manager", prog, "action", action));
}

/* pip's general and install options (optparse: prefixes, values, -r/-e...). */
enum { PIP_EDITABLE = 1 };
static const struct opt pip_opts[] = {
	{ "help", 'h', A_NO, 0 }, { "debug", 0, A_NO, 0 }, { "isolated", 0, A_NO, 0 },
	{ "require-virtualenv", 0, A_NO, 0 }, { "python", 0, A_VAL, 0 },
	{ "verbose", 'v', A_NO, 0 }, { "version", 'V', A_NO, 0 }, { "quiet", 'q', A_NO, 0 },
	{ "log", 0, A_VAL, 0 }, { "log-file", 0, A_VAL, 0 }, { "local-log", 0, A_VAL, 0 },
	{ "no-input", 0, A_NO, 0 }, { "keyring-provider", 0, A_VAL, 0 }, { "proxy", 0, A_VAL, 0 },
	{ "retries", 0, A_VAL, 0 }, { "timeout", 0, A_VAL, 0 }, { "exists-action", 0, A_VAL, 0 },
	{ "trusted-host", 0, A_VAL, 0 }, { "cert", 0, A_VAL, 0 }, { "client-cert", 0, A_VAL, 0 },
	{ "cache-dir", 0, A_VAL, 0 }, { "no-cache-dir", 0, A_NO, 0 },
	{ "disable-pip-version-check", 0, A_NO, 0 }, { "no-color", 0, A_NO, 0 },
	{ "no-python-version-warning", 0, A_NO, 0 }, { "use-feature", 0, A_VAL, 0 },
	{ "use-deprecated", 0, A_VAL, 0 },
	{ "requirement", 'r', A_VAL, 0 }, { "constraint", 'c', A_VAL, 0 },
	{ "editable", 'e', A_VAL, PIP_EDITABLE }, { "no-deps", 0, A_NO, 0 }, { "pre", 0, A_NO, 0 },
	{ "dry-run", 0, A_NO, 0 }, { "target", 't', A_VAL, 0 }, { "platform", 0, A_VAL, 0 },
	{ "python-version", 0, A_VAL, 0 }, { "implementation", 0, A_VAL, 0 },
	{ "abi", 0, A_VAL, 0 }, { "user", 0, A_NO, 0 }, { "root", 0, A_VAL, 0 },
	{ "prefix", 0, A_VAL, 0 }, { "src", 0, A_VAL, 0 }, { "upgrade", 'U', A_NO, 0 },
	{ "upgrade-strategy", 0, A_VAL, 0 }, { "force-reinstall", 0, A_NO, 0 },
	{ "ignore-installed", 'I', A_NO, 0 }, { "ignore-requires-python", 0, A_NO, 0 },
	{ "no-build-isolation", 0, A_NO, 0 }, { "use-pep517", 0, A_NO, 0 },
	{ "no-use-pep517", 0, A_NO, 0 }, { "check-build-dependencies", 0, A_NO, 0 },
	{ "break-system-packages", 0, A_NO, 0 }, { "config-settings", 'C', A_VAL, 0 },
	{ "global-option", 0, A_VAL, 0 }, { "compile", 0, A_NO, 0 }, { "no-compile", 0, A_NO, 0 },
	{ "no-warn-script-location", 0, A_NO, 0 }, { "no-warn-conflicts", 0, A_NO, 0 },
	{ "no-binary", 0, A_VAL, 0 }, { "only-binary", 0, A_VAL, 0 },
	{ "prefer-binary", 0, A_NO, 0 }, { "require-hashes", 0, A_NO, 0 },
	{ "progress-bar", 0, A_VAL, 0 }, { "root-user-action", 0, A_VAL, 0 },
	{ "report", 0, A_VAL, 0 }, { "no-clean", 0, A_NO, 0 }, { "index-url", 'i', A_VAL, 0 },
	{ "extra-index-url", 0, A_VAL, 0 }, { "no-index", 0, A_NO, 0 },
	{ "find-links", 'f', A_VAL, 0 },
};
static const struct optset pip_set = OPTSET(pip_opts, OS_ABBREV);

static void pip_sub_cb(struct lift *L, const char *prog, const char *sub,
		       const char *const *argv, int argc, int next, void *ctx)
{
	json_t *pk;
	struct scan s;
	struct tok t;

	(void)prog;
	(void)ctx;
	if (strcmp(sub, "install"))
		return;
	pk = json_array();
	scan_init(&s, argv, argc, next, &pip_set);
	for (scan_next(&s, &t); pk && t.k != T_END; scan_next(&s, &t))
		if (t.k == T_ARG || (t.o && t.o->tag == PIP_EDITABLE && t.val))
			json_array_append_new(pk, pol_json_text(t.k == T_ARG ? t.arg : t.val));
	lifted_add(L, "pip", "install", pk ? json_pack("{s:o}", "packages", pk) : NULL);
}

/*
 * Publishers with a subcommand: PROG SUB publishes to a registry.  Their
 * options before the subcommand are read as unknown (both readings) unless
 * listed in cargo's table.
 */
static const struct {
	const char *prog, *sub, *server;
} publishers[] = {
	{ "twine", "upload", "pip" }, { "twine", "register", "pip" },
	{ "flit", "publish", "pip" }, { "poetry", "publish", "pip" },
	{ "hatch", "publish", "pip" }, { "uv", "publish", "pip" }, { "pdm", "publish", "pip" },
	{ "cargo", "publish", "cargo" }, { "cargo", "yank", "cargo" },
	{ "cargo", "owner", "cargo" }, { "gem", "push", "gem" }, { "gem", "yank", "gem" },
	{ "gem", "owner", "gem" },
};

static const struct opt cargo_opts[] = {
	{ "version", 'V', A_NO, 0 }, { "list", 0, A_NO, 0 }, { "explain", 0, A_VAL, 0 },
	{ "verbose", 'v', A_NO, 0 }, { "quiet", 'q', A_NO, 0 }, { "color", 0, A_VAL, 0 },
	{ NULL, 'C', A_VAL, 0 }, { "locked", 0, A_NO, 0 }, { "offline", 0, A_NO, 0 },
	{ "frozen", 0, A_NO, 0 }, { "config", 0, A_VAL, 0 }, { NULL, 'Z', A_VAL, 0 },
	{ "help", 'h', A_NO, 0 },
	/* poetry, hatch, uv, pdm: directory and project options */
	{ "directory", 0, A_VAL, 0 }, { "project", 'P', A_VAL, 0 }, { "env", 'e', A_VAL, 0 },
	{ "data-dir", 0, A_VAL, 0 }, { "cache-dir", 0, A_VAL, 0 }, { "config-file", 0, A_VAL, 0 },
	{ "no-color", 0, A_NO, 0 }, { "no-ansi", 0, A_NO, 0 }, { "ansi", 0, A_NO, 0 },
	{ "no-interaction", 'n', A_NO, 0 }, { "no-plugins", 0, A_NO, 0 },
	{ "no-cache", 0, A_NO, 0 }, { "debug", 0, A_NO, 0 },
};
static const struct optset cargo_set = OPTSET(cargo_opts, 0);

static void publisher_cb(struct lift *L, const char *prog, const char *sub,
			 const char *const *argv, int argc, int next, void *ctx)
{
	(void)ctx;
	if (!strcmp(prog, "uv") && !strcmp(sub, "pip")) {
		scan_subcommands(L, prog, argv, argc, next, &pip_set, pip_sub_cb, NULL);
		return;
	}
	for (size_t k = 0; k < ARRAY_SIZE(publishers); k++)
		if (!strcmp(prog, publishers[k].prog) && !strcmp(sub, publishers[k].sub))
			lifted_add(L, publishers[k].server, "publish",
				   json_pack("{s:s,s:s}", "via", prog, "action", sub));
}

bool lift_pkg_is_publisher(const char *prog)
{
	for (size_t k = 0; k < ARRAY_SIZE(publishers); k++)
		if (!strcmp(prog, publishers[k].prog))
			return true;
	return false;
}

/*
 * python [options] -m MODULE args / SCRIPT args: CPython's own options
 * (short clusters; -c, -m end them; -W, -X take a value).
 */
enum { PY_M = 1, PY_C };
static const struct opt python_opts[] = {
	{ NULL, 'b', A_NO, 0 }, { NULL, 'B', A_NO, 0 }, { NULL, 'd', A_NO, 0 },
	{ NULL, 'E', A_NO, 0 }, { NULL, 'i', A_NO, 0 }, { NULL, 'I', A_NO, 0 },
	{ NULL, 'O', A_NO, 0 }, { NULL, 'P', A_NO, 0 }, { NULL, 'q', A_NO, 0 },
	{ NULL, 's', A_NO, 0 }, { NULL, 'S', A_NO, 0 }, { NULL, 'u', A_NO, 0 },
	{ NULL, 'v', A_NO, 0 }, { NULL, 'x', A_NO, 0 }, { NULL, 'R', A_NO, 0 },
	{ "version", 'V', A_NO, 0 }, { "help", 'h', A_NO, 0 }, { "help-env", 0, A_NO, 0 },
	{ "help-xoptions", 0, A_NO, 0 }, { "help-all", 0, A_NO, 0 },
	{ NULL, 'W', A_VAL, 0 }, { NULL, 'X', A_VAL, 0 },
	{ "check-hash-based-pycs", 0, A_VAL, 0 }, { NULL, 'm', A_VAL, PY_M },
	{ NULL, 'c', A_VAL, PY_C },
};
static const struct optset python_set = OPTSET(python_opts, 0);

void lift_pkg_python(struct lift *L, const char *const *argv, int argc)
{
	struct scan s;
	struct tok t;

	scan_init(&s, argv, argc, 1, &python_set);
	for (scan_next(&s, &t); t.k != T_END; scan_next(&s, &t)) {
		if (t.k == T_OPT && t.o && t.o->tag == PY_C)
			return;         /* python -c CODE: what the code runs is judged at its exec */
		if (t.k == T_OPT && t.o && t.o->tag == PY_M && t.val) {
			const char *m = t.val;
			int next = s.i;

			if (!strcmp(m, "pip"))
				scan_subcommands(L, "pip", argv, argc, next, &pip_set, pip_sub_cb, NULL);
			else if (lift_pkg_is_publisher(m))
				scan_subcommands(L, m, argv, argc, next, &cargo_set, publisher_cb, NULL);
			if (!t.maybe && !s.unknown)
				return;
			continue;
		}
		if (t.k == T_ARG) {
			/* setup.py upload / register: distutils' own publishing. */
			if (!strcmp(lifted_base(t.arg), "setup.py"))
				for (int j = t.idx + 1; j < argc; j++)
					if (!strcmp(argv[j], "upload") || !strcmp(argv[j], "register"))
						lifted_add(L, "pip", "publish", json_pack("{s:s,s:s}", "via",
							"setup.py", "action", argv[j]));
			if (!t.maybe)
				return;
		}
	}
}

void lift_pkg_npm(struct lift *L, const char *prog, const char *const *argv, int argc)
{
	scan_subcommands(L, prog, argv, argc, 1, &npm_set, npm_sub_cb, NULL);
}

void lift_pkg_pip(struct lift *L, const char *const *argv, int argc)
{
	scan_subcommands(L, "pip", argv, argc, 1, &pip_set, pip_sub_cb, NULL);
}

void lift_pkg_publisher(struct lift *L, const char *prog, const char *const *argv, int argc)
{
	/* cargo +TOOLCHAIN SUB: the toolchain comes first. */
	scan_subcommands(L, prog, argv, argc,
			 !strcmp(prog, "cargo") && argc > 1 && argv[1][0] == '+' ? 2 : 1,
			 &cargo_set, publisher_cb, NULL);
}
