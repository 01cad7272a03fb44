// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `cordon home diff | apply | discard`: review the agent's home layer and
 * take what the human chooses (the work lives in home.c).
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <jansson.h>
#include <pwd.h>
#include <sys/stat.h>
#include "cmd.h"
#include "home.h"
#include "options.h"
#include "util.h"

#define DEFAULT_PROFILE "coding-agent"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: cordon home diff [--user USER] [--profile NAME] [--json]\n"
		"       cordon home apply [--user USER] [--profile NAME] PATH...\n"
		"       cordon home discard [--user USER] [--profile NAME]\n"
		"\n"
		"The agent sees its user's home through a copy-on-write layer kept per user\n"
		"and profile in " HOME_LAYER_BASE "/UID-PROFILE; credential stores are absent\n"
		"from it.  The real home changes only through apply.\n"
		"\n"
		"diff     what the layer changed: A added, M modified, D deleted, with sizes;\n"
		"         '!' marks a credential store, which apply refuses.\n"
		"apply    copy each PATH (relative to the home, or absolute below it) from the\n"
		"         layer into the home, as the home's owner, deletions included, and\n"
		"         drop it from the layer.  A directory goes whole.  Refused while a\n"
		"         session of the layer runs.\n"
		"discard  empty the layer.\n"
		"\n"
		"--user USER     whose home (default: the user sudo was called by)\n"
		"--profile NAME  the profile, or the \"name\" of a --policy file\n"
		"                (default: " DEFAULT_PROFILE ")\n"
		"Exit status: 0 done, 1 a PATH refused or failed, 2 usage or I/O error.\n");
}

struct target {
	char home[PATH_MAX];
	char layer[PATH_MAX];
};

/* USER (name or uid), else SUDO_UID; the home and the layer of PROFILE. */
static int resolve(const char *cmd, const char *user, const char *profile, struct target *t)
{
	const char *sudo_uid = getenv("SUDO_UID");
	struct passwd *pw;
	char *end;
	int r;

	if (!user && !(sudo_uid && *sudo_uid)) {
		log_err("home %s: whose home? pass --user USER", cmd);
		return -EINVAL;
	}
	if (!user)
		user = sudo_uid;
	{
		unsigned long n = strtoul(user, &end, 10);

		pw = (*user && !*end) ? getpwuid((uid_t)n) : getpwnam(user);
	}
	if (!pw || !pw->pw_dir || pw->pw_dir[0] != '/') {
		log_err("home %s: %s: no such user, or no home", cmd, user);
		return -ENOENT;
	}
	snprintf(t->home, sizeof(t->home), "%s", pw->pw_dir);
	r = home_layer_path(NULL, pw->pw_uid, profile, t->layer, sizeof(t->layer));
	if (r < 0)
		log_err("home %s: profile '%s': %s", cmd, profile, strerror(-r));
	return r;
}

static const char *kind_name(enum home_change_kind k)
{
	switch (k) {
	case HOME_ADDED:
		return "added";
	case HOME_MODIFIED:
		return "modified";
	case HOME_DELETED:
		return "deleted";
	}
	return "?";
}

static const char *type_name(mode_t m)
{
	return S_ISDIR(m) ? "directory" : S_ISLNK(m) ? "symlink" : S_ISREG(m) ? "file" : "other";
}

static int print_change(void *ctx, const struct home_change *c)
{
	json_t *arr = ctx;

	if (arr) {
		json_t *o = json_pack("{s:s, s:s, s:s, s:I, s:I, s:b}", "kind", kind_name(c->kind),
				      "path", c->path, "type", type_name(c->mode), "size",
				      (json_int_t)c->size, "old_size", (json_int_t)c->old_size,
				      "store", c->store);

		if (!o)
			return -ENOMEM;
		if (c->link)
			json_object_set_new(o, "link", json_string(c->link));
		return json_array_append_new(arr, o) < 0 ? -ENOMEM : 0;
	}
	/*
	 * Attack: the agent names a file in its layer "x\e[1A\e[2K..." (or
	 * points a symlink at such text): printed raw, the name erases the
	 * line above it (a changed .bashrc, a planted .envrc) or rewrites the
	 * list, and the human applies a directory that holds what was hidden.
	 * The names and link targets are the agent's text: shown escaped.
	 */
	printf("%c%c %10lld ", "AMD"[c->kind], c->store ? '!' : ' ',
	       c->kind == HOME_DELETED ? c->old_size : c->size);
	cmd_put_safe(stdout, c->path, strlen(c->path));
	printf("%s", S_ISDIR(c->mode) ? "/" : "");
	if (c->link) {
		printf(" -> ");
		cmd_put_safe(stdout, c->link, strlen(c->link));
	}
	printf("%s\n", c->store ? "  (credential store: apply refuses it)" : "");
	return 0;
}

int cmd_home(int argc, char **argv)
{
	const char *user = NULL, *profile = DEFAULT_PROFILE, *sub;
	bool json = false;
	const struct cmd_option opts[] = {
		{ "user", &user, NULL },
		{ "profile", &profile, NULL },
		{ "json", NULL, &json },
		{}
	};
	struct target t;
	char why[PATH_MAX + 256];
	int r, failed = 0;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	sub = argv[1];
	if (strcmp(sub, "diff") && strcmp(sub, "apply") && strcmp(sub, "discard")) {
		log_err("home: unknown subcommand '%s' (diff, apply, discard)", sub);
		return 2;
	}
	argc--;
	argv++;
	r = options_parse(argc, argv, opts, usage);
	if (r)
		return r < 0 ? 2 : 0;
	if ((json && strcmp(sub, "diff")) || (!strcmp(sub, "apply") ? optind >= argc : optind != argc)) {
		usage(stderr);
		return 2;
	}
	if (resolve(sub, user, profile, &t) < 0)
		return 2;

	if (!strcmp(sub, "diff")) {
		json_t *arr = json ? json_array() : NULL;

		r = home_diff(t.layer, t.home, print_change, arr);
		if (r == -ENOENT && access(t.layer, F_OK) < 0)
			r = 0;          /* no session yet: nothing changed */
		if (r < 0) {
			log_err("home diff: %s against %s: %s", t.layer, t.home, strerror(-r));
			json_decref(arr);
			return 2;
		}
		if (arr) {
			json_dumpf(arr, stdout, JSON_INDENT(2));
			putchar('\n');
			json_decref(arr);
		}
		return 0;
	}
	if (!strcmp(sub, "discard")) {
		if ((r = home_discard(t.layer, why, sizeof(why))) < 0) {
			log_err("home discard: %s", why);
			return r == -EBUSY ? 1 : 2;
		}
		return 0;
	}
	for (int i = optind; i < argc; i++) {
		r = home_apply(t.layer, t.home, argv[i], why, sizeof(why));
		if (r < 0) {
			log_err("home apply: %s", why);
			failed = 1;
		} else {
			printf("applied %s\n", argv[i]);
		}
	}
	return failed;
}
