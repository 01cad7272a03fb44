// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Semantic lifting of an exec: what `git push -f origin main` means, so that
 * one tool rule (`git.push`) judges it exactly as it judges an MCP git
 * server's push.  Pure: argv in, JSON events out.
 *
 * Recognisers read argv the way the program itself would, skipping global
 * options (git -C DIR -c K=V ...) so an option cannot hide the subcommand.
 * What they cannot close: a program that does the same thing under another
 * name (a copied git binary, a script calling the HTTP API); every exec is
 * still judged as shell.exec and by the floor, and the network layer judges
 * the connection itself.
 */
#include <string.h>
#include "policy.h"
#include "util.h"

static const char *base(const char *s)
{
	const char *slash = strrchr(s, '/');

	return slash ? slash + 1 : s;
}

static int add(struct pol_lifted *out, int n, const char *server, const char *tool,
	       json_t *args)
{
	if (n >= POL_MAX_LIFTED || !args) {
		json_decref(args);
		return n;
	}
	snprintf(out[n].server, sizeof(out[n].server), "%s", server);
	snprintf(out[n].tool, sizeof(out[n].tool), "%s", tool);
	out[n].args = args;
	return n + 1;
}

/* git's global options that take a separate value. */
static bool git_opt_with_value(const char *a)
{
	static const char *const opts[] = { "-C", "-c", "--git-dir", "--work-tree",
					    "--namespace", "--exec-path", "--config-env",
					    "--super-prefix", NULL };
	for (int i = 0; opts[i]; i++)
		if (!strcmp(a, opts[i]))
			return true;
	return false;
}

static int lift_git(const char *const *argv, int argc, struct pol_lifted *out, int n)
{
	int i = 1;
	const char *sub;

	while (i < argc && argv[i][0] == '-') {
		if (git_opt_with_value(argv[i]))
			i++;
		i++;
	}
	if (i >= argc)
		return n;
	sub = argv[i++];
	if (!strcmp(sub, "push")) {
		const char *remote = NULL, *branch = NULL;
		bool force = false;
		json_t *args;

		for (; i < argc; i++) {
			const char *a = argv[i];

			if (!strcmp(a, "-f") || !strcmp(a, "--force") ||
			    !strncmp(a, "--force-with-lease", 18) || !strcmp(a, "--mirror") ||
			    !strcmp(a, "--delete") || !strcmp(a, "-d")) {
				force = true;
				continue;
			}
			if (!strcmp(a, "--repo") || !strcmp(a, "-o") || !strcmp(a, "--push-option") ||
			    !strcmp(a, "--receive-pack") || !strcmp(a, "--exec")) {
				if (!strcmp(a, "--repo") && i + 1 < argc)
					remote = argv[i + 1];
				i++;
				continue;
			}
			if (a[0] == '-')
				continue;
			if (!remote) {
				remote = a;
			} else if (!branch) {
				const char *colon = strchr(a, ':');

				if (a[0] == '+')
					force = true, a++;
				branch = colon ? colon + 1 : a;
			}
		}
		args = json_object();
		if (remote)
			json_object_set_new(args, "remote", json_string(remote));
		if (branch)
			json_object_set_new(args, "branch", json_string(branch));
		json_object_set_new(args, "force", json_boolean(force));
		return add(out, n, "git", "push", args);
	}
	if (!strcmp(sub, "commit")) {
		json_t *args = json_object();

		for (; i < argc; i++) {
			if ((!strcmp(argv[i], "-m") || !strcmp(argv[i], "--message")) && i + 1 < argc) {
				json_object_set_new(args, "message", json_string(argv[i + 1]));
				break;
			}
			if (!strncmp(argv[i], "--message=", 10)) {
				json_object_set_new(args, "message", json_string(argv[i] + 10));
				break;
			}
		}
		return add(out, n, "git", "commit", args);
	}
	return n;
}

/* Positional arguments after index i, skipping options. */
static json_t *positionals(const char *const *argv, int argc, int i)
{
	json_t *a = json_array();

	for (; i < argc; i++)
		if (argv[i][0] != '-')
			json_array_append_new(a, json_string(argv[i]));
	return a;
}

static int lift_npm(const char *prog, const char *const *argv, int argc,
		    struct pol_lifted *out, int n)
{
	int i = 1;
	const char *sub;

	while (i < argc && argv[i][0] == '-')
		i++;
	if (i >= argc)
		return n;
	sub = argv[i++];
	if (!strcmp(sub, "install") || !strcmp(sub, "i") || !strcmp(sub, "add") ||
	    !strcmp(sub, "ci") || !strcmp(sub, "isntall"))
		return add(out, n, "npm", "install",
			   json_pack("{s:o,s:s}", "packages", positionals(argv, argc, i),
				     "manager", prog));
	if (!strcmp(sub, "publish"))
		return add(out, n, "npm", "publish", json_pack("{s:s}", "manager", prog));
	return n;
}

static int lift_pip(const char *const *argv, int argc, int i, struct pol_lifted *out, int n)
{
	while (i < argc && argv[i][0] == '-')
		i++;
	if (i < argc && !strcmp(argv[i], "install"))
		return add(out, n, "pip", "install",
			   json_pack("{s:o}", "packages", positionals(argv, argc, i + 1)));
	return n;
}

static int lift_fetch(const char *prog, const char *const *argv, int argc,
		      struct pol_lifted *out, int n)
{
	const char *url = NULL, *method = NULL;
	bool curl = !strcmp(prog, "curl");

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (curl && (!strcmp(a, "-X") || !strcmp(a, "--request")) && i + 1 < argc) {
			method = argv[++i];
		} else if (curl && !strcmp(a, "--url") && i + 1 < argc) {
			url = argv[++i];
		} else if (curl && (!strcmp(a, "-d") || !strncmp(a, "--data", 6) ||
				    !strcmp(a, "-F") || !strcmp(a, "--form") || !strcmp(a, "--json"))) {
			if (!method)
				method = "POST";
			i++;
		} else if (curl && (!strcmp(a, "-T") || !strcmp(a, "--upload-file"))) {
			if (!method)
				method = "PUT";
			i++;
		} else if (!curl && !strncmp(a, "--post-data", 11)) {
			if (!method)
				method = "POST";
		} else if (curl && (!strcmp(a, "-o") || !strcmp(a, "-H") || !strcmp(a, "-A") ||
				    !strcmp(a, "-u") || !strcmp(a, "-e") || !strcmp(a, "-x") ||
				    !strcmp(a, "--header") || !strcmp(a, "--output") ||
				    !strcmp(a, "--user") || !strcmp(a, "--proxy"))) {
			i++;
		} else if (!curl && (!strcmp(a, "-O") || !strcmp(a, "-o") || !strcmp(a, "-P") ||
				     !strcmp(a, "--header") || !strcmp(a, "-U"))) {
			i++;
		} else if (a[0] != '-' && !url) {
			url = a;
		}
	}
	if (!url)
		return n;
	return add(out, n, "http", "fetch",
		   json_pack("{s:s,s:s}", "url", url, "method", method ? method : "GET"));
}

int pol_lift_exec(const char *const *argv, const char *cwd, struct pol_lifted *out)
{
	json_t *av = json_array();
	const char *prog;
	int argc = 0, n = 0;

	memset(out, 0, sizeof(*out) * POL_MAX_LIFTED);
	if (argv)
		for (; argv[argc]; argc++)
			json_array_append_new(av, json_string(argv[argc]));
	n = add(out, n, "shell", "exec", json_pack("{s:o,s:s}", "argv", av, "cwd", cwd ? cwd : ""));
	if (argc == 0)
		return n;
	prog = base(argv[0]);
	if (!strcmp(prog, "git"))
		n = lift_git(argv, argc, out, n);
	else if (!strcmp(prog, "npm") || !strcmp(prog, "pnpm") || !strcmp(prog, "yarn"))
		n = lift_npm(prog, argv, argc, out, n);
	else if (!strncmp(prog, "pip", 3))
		n = lift_pip(argv, argc, 1, out, n);
	else if (!strncmp(prog, "python", 6) && argc > 2 && !strcmp(argv[1], "-m") &&
		 !strcmp(argv[2], "pip"))
		n = lift_pip(argv, argc, 3, out, n);
	else if (!strcmp(prog, "twine") && argc > 1 && !strcmp(argv[1], "upload"))
		n = add(out, n, "pip", "publish", json_object());
	else if (!strcmp(prog, "cargo") && argc > 1 && !strcmp(argv[1], "publish"))
		n = add(out, n, "cargo", "publish", json_object());
	else if (!strcmp(prog, "gem") && argc > 1 && !strcmp(argv[1], "push"))
		n = add(out, n, "gem", "publish", json_object());
	else if (!strcmp(prog, "curl") || !strcmp(prog, "wget"))
		n = lift_fetch(prog, argv, argc, out, n);
	return n;
}

bool pol_lift_known(const char *prog)
{
	static const char *const exact[] = { "git", "npm", "pnpm", "yarn", "twine", "cargo",
					     "gem", "curl", "wget" };

	prog = base(prog);
	for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (!strcmp(prog, exact[i]))
			return true;
	return !strncmp(prog, "pip", 3) || !strncmp(prog, "python", 6);
}

void pol_lifted_free(struct pol_lifted *l, int n)
{
	for (int i = 0; i < n; i++) {
		json_decref(l[i].args);
		l[i].args = NULL;
	}
}
