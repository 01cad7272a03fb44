// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * git: what a git command line means (lift_git.h).  lift.c's table says
 * which ways to push lift here and which the floor judges.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <limits.h>
#include <string.h>
#include <strings.h>
#include "lift_git.h"
#include "lifted.h"
#include "policy.h"
#include "scan.h"
#include "util.h"

enum { G_C = 1, G_CFG, G_CFGENV, G_GITDIR, G_WORKTREE, G_BARE };

/* git.c's handle_options: exact names, no clusters, stops at the subcommand. */
static const struct opt git_global[] = {
	{ NULL, 'C', A_VAL, G_C }, { NULL, 'c', A_VAL, G_CFG },
	{ "config-env", 0, A_VAL, G_CFGENV }, { "git-dir", 0, A_VAL, G_GITDIR },
	{ "work-tree", 0, A_VAL, G_WORKTREE }, { "bare", 0, A_NO, G_BARE },
	{ "namespace", 0, A_VAL, 0 }, { "super-prefix", 0, A_VAL, 0 },
	{ "attr-source", 0, A_VAL, 0 }, { "exec-path", 0, A_ATT, 0 },
	{ "list-cmds", 0, A_ATT, 0 }, { "html-path", 0, A_NO, 0 }, { "man-path", 0, A_NO, 0 },
	{ "info-path", 0, A_NO, 0 }, { "paginate", 'p', A_NO, 0 }, { "no-pager", 'P', A_NO, 0 },
	{ "no-replace-objects", 0, A_NO, 0 }, { "literal-pathspecs", 0, A_NO, 0 },
	{ "glob-pathspecs", 0, A_NO, 0 }, { "noglob-pathspecs", 0, A_NO, 0 },
	{ "icase-pathspecs", 0, A_NO, 0 }, { "no-optional-locks", 0, A_NO, 0 },
	{ "no-lazy-fetch", 0, A_NO, 0 }, { "no-advice", 0, A_NO, 0 },
	{ "version", 'v', A_NO, 0 }, { "help", 'h', A_NO, 0 },
};
static const struct optset git_global_set = OPTSET(git_global, 0);

enum { P_FORCE = 1, P_REPO, P_STATELESS };

/* `git push -h` (2.39) and send-pack's; parse-options: prefixes, --no-, clusters. */
static const struct opt git_push[] = {
	{ "verbose", 'v', A_NO, 0 }, { "quiet", 'q', A_NO, 0 }, { "repo", 0, A_VAL, P_REPO },
	{ "all", 0, A_NO, 0 }, { "branches", 0, A_NO, 0 }, { "mirror", 0, A_NO, P_FORCE },
	{ "delete", 'd', A_NO, P_FORCE }, { "tags", 0, A_NO, 0 }, { "dry-run", 'n', A_NO, 0 },
	{ "porcelain", 0, A_NO, 0 }, { "force", 'f', A_NO, P_FORCE },
	{ "force-with-lease", 0, A_ATT, P_FORCE }, { "force-if-includes", 0, A_NO, 0 },
	{ "recurse-submodules", 0, A_VAL, 0 }, { "thin", 0, A_NO, 0 },
	{ "receive-pack", 0, A_VAL, 0 }, { "exec", 0, A_VAL, 0 },
	{ "set-upstream", 'u', A_NO, 0 }, { "progress", 0, A_NO, 0 },
	{ "prune", 0, A_NO, P_FORCE }, { "verify", 0, A_NO, 0 }, { "no-verify", 0, A_NO, 0 },
	{ "follow-tags", 0, A_NO, 0 }, { "signed", 0, A_ATT, 0 }, { "atomic", 0, A_NO, 0 },
	{ "push-option", 'o', A_VAL, 0 }, { "ipv4", '4', A_NO, 0 }, { "ipv6", '6', A_NO, 0 },
	/* send-pack's own */
	{ "remote", 0, A_VAL, 0 }, { "stateless-rpc", 0, A_NO, P_STATELESS },
	{ "helper-status", 0, A_NO, 0 }, { "stdin", 0, A_NO, 0 }, { "shallow-file", 0, A_VAL, 0 },
};
static const struct optset git_push_set = OPTSET(git_push, OS_ABBREV | OS_NEG);

/* `git fetch -h` and `git pull -h` (2.39): what takes a value, and --force. */
static const struct opt git_fetch[] = {
	{ "verbose", 'v', A_NO, 0 }, { "quiet", 'q', A_NO, 0 }, { "all", 0, A_NO, 0 },
	{ "set-upstream", 0, A_NO, 0 }, { "append", 'a', A_NO, 0 }, { "atomic", 0, A_NO, 0 },
	{ "upload-pack", 0, A_VAL, 0 }, { "force", 'f', A_NO, P_FORCE },
	{ "multiple", 'm', A_NO, 0 }, { "tags", 't', A_NO, 0 }, { NULL, 'n', A_NO, 0 },
	{ "jobs", 'j', A_VAL, 0 }, { "prefetch", 0, A_NO, 0 }, { "prune", 'p', A_NO, 0 },
	{ "prune-tags", 'P', A_NO, 0 }, { "recurse-submodules", 0, A_ATT, 0 },
	{ "recurse-submodules-default", 0, A_VAL, 0 }, { "submodule-prefix", 0, A_VAL, 0 },
	{ "dry-run", 0, A_NO, 0 }, { "write-fetch-head", 0, A_NO, 0 }, { "keep", 'k', A_NO, 0 },
	{ "update-head-ok", 'u', A_NO, 0 }, { "progress", 0, A_NO, 0 }, { "depth", 0, A_VAL, 0 },
	{ "shallow-since", 0, A_VAL, 0 }, { "shallow-exclude", 0, A_VAL, 0 },
	{ "deepen", 0, A_VAL, 0 }, { "unshallow", 0, A_NO, 0 }, { "refetch", 0, A_NO, 0 },
	{ "update-shallow", 0, A_NO, 0 }, { "refmap", 0, A_VAL, 0 },
	{ "server-option", 'o', A_VAL, 0 }, { "ipv4", '4', A_NO, 0 }, { "ipv6", '6', A_NO, 0 },
	{ "negotiation-tip", 0, A_VAL, 0 }, { "negotiate-only", 0, A_NO, 0 },
	{ "filter", 0, A_VAL, 0 }, { "auto-maintenance", 0, A_NO, 0 }, { "auto-gc", 0, A_NO, 0 },
	{ "show-forced-updates", 0, A_NO, 0 }, { "write-commit-graph", 0, A_NO, 0 },
	{ "stdin", 0, A_NO, 0 }, { "porcelain", 0, A_NO, 0 },
	/* pull's merge and rebase options */
	{ "rebase", 'r', A_ATT, 0 }, { "strategy", 's', A_VAL, 0 },
	{ "strategy-option", 'X', A_VAL, 0 }, { "gpg-sign", 'S', A_ATT, 0 },
	{ "cleanup", 0, A_VAL, 0 }, { "log", 0, A_ATT, 0 }, { "ff", 0, A_NO, 0 },
	{ "ff-only", 0, A_NO, 0 }, { "squash", 0, A_NO, 0 }, { "commit", 0, A_NO, 0 },
	{ "edit", 'e', A_NO, 0 }, { "signoff", 0, A_NO, 0 }, { "stat", 0, A_NO, 0 },
	{ "summary", 0, A_NO, 0 }, { "compact-summary", 0, A_NO, 0 }, { "autostash", 0, A_NO, 0 },
	{ "verify", 0, A_NO, 0 }, { "verify-signatures", 0, A_NO, 0 },
	{ "allow-unrelated-histories", 0, A_NO, 0 },
	/* fetch-pack's */
	{ "include-tag", 0, A_NO, 0 }, { "thin", 0, A_NO, 0 }, { "diag-url", 0, A_NO, 0 },
	{ "exec", 0, A_VAL, 0 },
};
static const struct optset git_fetch_set = OPTSET(git_fetch, OS_ABBREV | OS_NEG);

/* git's own commands (`git --list-cmds=builtins,main`, `git help -a`, 2.39). */
static const char *const git_commands[] = {
	"add", "add--interactive", "am", "annotate", "apply", "archimport", "archive", "bisect",
	"bisect--helper", "blame", "branch", "bugreport", "bundle", "cat-file", "check-attr",
	"check-ignore", "check-mailmap", "check-ref-format", "checkout", "checkout--worker",
	"checkout-index", "cherry", "cherry-pick", "citool", "clean", "clone", "column", "commit",
	"commit-graph", "commit-tree", "config", "count-objects", "credential", "credential-cache",
	"credential-cache--daemon", "credential-store", "cvsexportcommit", "cvsimport",
	"cvsserver", "daemon", "describe", "diagnose", "diff", "diff-files", "diff-index",
	"diff-tree", "difftool", "difftool--helper", "env--helper", "fast-export", "fast-import",
	"fetch", "fetch-pack", "filter-branch", "fmt-merge-msg", "for-each-ref", "for-each-repo",
	"format-patch", "fsck", "fsck-objects", "fsmonitor--daemon", "gc", "get-tar-commit-id",
	"grep", "gui", "help", "hook", "http-backend", "http-fetch", "http-push", "imap-send",
	"index-pack", "init", "init-db", "instaweb", "interpret-trailers", "log", "ls-files",
	"ls-remote", "ls-tree", "mailinfo", "mailsplit", "maintenance", "merge", "merge-base",
	"merge-file", "merge-index", "merge-octopus", "merge-one-file", "merge-ours",
	"merge-recursive", "merge-recursive-ours", "merge-recursive-theirs", "merge-resolve",
	"merge-subtree", "merge-tree", "mergetool", "mktag", "mktree", "multi-pack-index", "mv",
	"name-rev", "notes", "p4", "pack-objects", "pack-redundant", "pack-refs", "patch-id",
	"pickaxe", "prune", "prune-packed", "pull", "push", "quiltimport", "range-diff",
	"read-tree", "rebase", "receive-pack", "reflog", "remote", "remote-ext", "remote-fd",
	"remote-ftp", "remote-ftps", "remote-http", "remote-https", "repack", "replace",
	"request-pull", "rerere", "reset", "restore", "rev-list", "rev-parse", "revert", "rm",
	"scalar", "send-email", "send-pack", "sh-i18n--envsubst", "shell", "shortlog", "show",
	"show-branch", "show-index", "show-ref", "sparse-checkout", "stage", "stash", "status",
	"stripspace", "submodule", "submodule--helper", "subtree", "svn", "switch",
	"symbolic-ref", "tag", "unpack-file", "unpack-objects", "update-index", "update-ref",
	"update-server-info", "upload-archive", "upload-archive--writer", "upload-pack", "var",
	"verify-commit", "verify-pack", "verify-tag", "version", "web--browse", "whatchanged",
	"worktree", "write-tree", NULL
};

/* Commands that bring another repository's objects or refs into the one they run in. */
static const char *const git_fetchlike[] = {
	"fetch", "pull", "fetch-pack", "remote", "bundle", NULL
};

/* Commands that send code off by other roads than git push. */
static const char *const git_sendlike[] = {
	"http-push", "send-email", "imap-send", "cvsexportcommit", NULL
};

/* What git's global options and the cwd say about where a command runs. */
struct git_ctx {
	char dir[PATH_MAX];             /* the cwd after every -C */
	char repo[PATH_MAX];            /* --git-dir, else --work-tree, else dir */
	const char *const *argv;        /* for -c alias.NAME=VALUE and -C */
	int argc, globals_end;
	bool cfg_force;                 /* -c remote.X.push=+... / remote.X.mirror / --config-env */
	bool located, bad_path;         /* repo computed (only a fetch needs it: paths cost) */
};

/* Join p to dir (or take it when absolute), canonically; false when it cannot be. */
static bool git_path(char out[PATH_MAX], const char *dir, const char *p)
{
	return pol_canon_path(p, dir, out, PATH_MAX) == 0;
}

/* Where the command runs: the cwd, each -C in turn, then --git-dir / --work-tree / --bare. */
static void git_locate(const struct lift *L, struct git_ctx *g)
{
	const char *gitdir = NULL, *worktree = NULL;
	bool bare = false;
	struct scan s;
	struct tok t;

	if (g->located)
		return;
	g->located = true;
	g->bad_path = !git_path(g->dir, "/", L->cwd && L->cwd[0] == '/' ? L->cwd : "/");
	scan_init(&s, g->argv, g->globals_end, 1, &git_global_set);
	for (scan_next(&s, &t); t.k != T_END; scan_next(&s, &t)) {
		if (t.k != T_OPT || !t.o)
			continue;
		if (t.o->tag == G_C && t.val && t.val[0] && !git_path(g->dir, g->dir, t.val))
			g->bad_path = true;
		else if (t.o->tag == G_GITDIR)
			gitdir = t.val;
		else if (t.o->tag == G_WORKTREE)
			worktree = t.val;
		else if (t.o->tag == G_BARE)
			bare = true;
	}
	if (!gitdir && bare)
		gitdir = ".";
	if (!git_path(g->repo, g->dir, gitdir ? gitdir : worktree ? worktree : "."))
		g->bad_path = true;
}

static bool git_cfg_forces(const char *kv, bool from_env)
{
	const char *eq = strchr(kv, '=');
	size_t klen = eq ? (size_t)(eq - kv) : strlen(kv);
	const char *dot = klen > 7 && !strncasecmp(kv, "remote.", 7) ? memrchr(kv, '.', klen) : NULL;

	if (!dot || dot < kv + 7)
		return false;
	/* remote.NAME.push=+REFSPEC forces; remote.NAME.mirror pushes deletions too. */
	if ((size_t)(kv + klen - dot) == 5 && !strncasecmp(dot, ".push", 5))
		return from_env || !eq || strchr(eq + 1, '+') || eq[1] == ':';
	if ((size_t)(kv + klen - dot) == 7 && !strncasecmp(dot, ".mirror", 7))
		return from_env || !eq || strcasecmp(eq + 1, "false");
	return false;
}

static bool outside_ws(struct lift *L, const char *path)
{
	if (!L->ws_done) {
		L->ws_done = true;
		if (!L->workspace || L->workspace[0] != '/' ||
		    pol_canon_path(L->workspace, "/", L->ws, sizeof(L->ws)) < 0)
			L->ws[0] = '\0';
	}
	return !L->ws[0] || !pol_path_within(path, L->ws);
}

static json_t *git_push_event(const char *remote, const char *branch, bool force,
			      const char *via)
{
	json_t *args = json_object();

	if (!args)
		return NULL;
	if (remote)
		json_object_set_new(args, "remote", pol_json_text(remote));
	if (branch)
		json_object_set_new(args, "branch", pol_json_text(branch));
	json_object_set_new(args, "force", json_boolean(force));
	if (via)
		json_object_set_new(args, "via", json_string(via));
	return args;
}

/* A refspec's destination, and whether it forces (+SRC:DST) or deletes (:DST). */
static const char *refspec_dst(const char *a, bool *force)
{
	const char *colon;

	if (a[0] == '+') {
		*force = true;
		a++;
	}
	colon = strchr(a, ':');
	if (colon && colon == a && colon[1])
		*force = true;          /* ":branch" deletes it */
	return colon ? colon + 1 : a;
}

/*
 * git push / send-pack / the fetch-like commands: one event per refspec
 * (each branch judged, and each one's force: `git push origin a +b` forces
 * b), or one without a branch when there is none.
 */
static void git_transfer(struct lift *L, struct git_ctx *g, const char *sub,
			 const char *const *argv, int argc, int i)
{
	bool push = !strcmp(sub, "push"), send = !strcmp(sub, "send-pack");
	/* `remote add -f` fetches, `bundle` has no --force: only a +refspec forces there. */
	bool nested = !strcmp(sub, "remote") || !strcmp(sub, "bundle");
	const struct optset *set = push || send ? &git_push_set : &git_fetch_set;
	const char *remote = NULL, *first = NULL, *second = NULL, *repo, *via;
	bool force = g->cfg_force, stateless = false;
	uint64_t forcing = 0;   /* the forcing options in effect: the last of --X / --no-X wins */
	int refspecs[POL_MAX_LIFTED + 1], nref = 0;
	struct scan s;
	struct tok t;

	scan_init(&s, argv, argc, i, set);
	for (scan_next(&s, &t); t.k != T_END; scan_next(&s, &t)) {
		if (t.k == T_OPT) {
			size_t k = t.o ? (size_t)(t.o - set->o) : 0;

			if (!t.o && (push || send))
				force = true;   /* an option we cannot read: assume the worst */
			else if (t.o && t.o->tag == P_FORCE && !nested && k < 64)
				forcing = t.neg ? forcing & ~(1ull << k) : forcing | 1ull << k;
			else if (t.o && t.o->tag == P_REPO && t.val)
				remote = t.val;
			else if (t.o && t.o->tag == P_STATELESS)
				stateless = true;
			continue;
		}
		if (!first)
			first = t.arg;
		else if (nested && !second)
			second = t.arg;
		else if (!nested && nref <= POL_MAX_LIFTED)
			refspecs[nref++] = t.idx;
	}
	force = force || forcing || (s.unknown && (push || send));
	if (send && stateless)
		return;         /* the half a transport helper drives: it reaches nothing itself */
	if (push || send) {
		repo = remote && push ? remote : first;
		via = send ? "send-pack" : NULL;
	} else {
		if (!strcmp(sub, "remote") &&
		    !(first && (!strcmp(first, "update") || !strcmp(first, "add"))))
			return;
		if (!strcmp(sub, "bundle") && !(first && !strcmp(first, "unbundle")))
			return;
		/*
		 * Run in a repository outside the workspace, these write into it
		 * what they read from elsewhere (the workspace, say): a push seen
		 * from the remote's side.  `git --git-dir=REMOTE fetch WS main:main`.
		 */
		git_locate(L, g);
		if (!g->bad_path && !outside_ws(L, g->repo))
			return;
		repo = g->repo;
		via = sub;
	}
	if (nref > POL_MAX_LIFTED) {
		L->overflow = true;
		return;
	}
	for (int r = 0; r < (nref ? nref : 1); r++) {
		bool f = force;
		const char *branch = nref ? refspec_dst(argv[refspecs[r]], &f) : NULL;
		json_t *args = git_push_event(repo, branch, f, via);
		const char *source = nested ? second : first;

		if (args && !push && !send && source)
			json_object_set_new(args, "source", pol_json_text(source));
		lifted_add(L, "git", "push", args);
	}
}

static void lift_git_sub(struct lift *L, struct git_ctx *g, const char *sub,
			 const char *const *argv, int argc, int i);

/* -c alias.SUB=VALUE on this command line: SUB's expansion, or NULL. */
static const char *git_alias(const struct git_ctx *g, const char *sub)
{
	const char *found = NULL;
	size_t n = strlen(sub);
	struct scan s;
	struct tok t;

	scan_init(&s, g->argv, g->globals_end, 1, &git_global_set);
	for (scan_next(&s, &t); t.k != T_END; scan_next(&s, &t)) {
		if (t.k != T_OPT || !t.o || !t.val)
			continue;
		/* Config keys are case-insensitive: alias.P names `git p`. */
		if ((t.o->tag == G_CFG || t.o->tag == G_CFGENV) && !strncasecmp(t.val, "alias.", 6) &&
		    !strncasecmp(t.val + 6, sub, n) && t.val[6 + n] == '=') {
			/* --config-env: its value is in the environment, unseen. */
			found = t.o->tag == G_CFG ? t.val + 7 + n : NULL;
		}
	}
	return found;
}

/* split_cmdline's quoting: '...' literal, "..." with \-escapes, \ outside. */
static int split_words(char *s, const char **words, int max)
{
	int n = 0;
	char *o = s, end;

	while (*s) {
		while (*s == ' ' || *s == '\t' || *s == '\n')
			s++;
		if (!*s)
			break;
		if (n == max)
			return -1;
		words[n++] = o;
		for (char q = 0; *s && (q || (*s != ' ' && *s != '\t' && *s != '\n')); s++) {
			if (!q && (*s == '\'' || *s == '"'))
				q = *s;
			else if (q && *s == q)
				q = 0;
			else if (*s == '\\' && q != '\'' && s[1])
				*o++ = *++s;
			else
				*o++ = *s;
		}
		end = *s;
		*o++ = '\0';   /* may land on *s: the word's end was read first */
		if (end)
			s++;
	}
	return n;
}

static void git_expand_alias(struct lift *L, struct git_ctx *g, const char *value,
			     const char *const *argv, int argc, int i)
{
	const char *words[64], *nargv[192];
	char *copy;
	int nw, k = 0;

	if (value[0] == '!')
		return;         /* a shell command: what it runs is judged at its own exec */
	copy = strdup(value);
	nw = copy ? split_words(copy, words, 64) : -1;
	if (nw <= 0 || argc - i > 192 - nw - 1 || L->depth > 4) {
		free(copy);
		lifted_add(L, "git", "push", git_push_event(NULL, NULL, false, "alias"));
		return;
	}
	for (int w = 1; w < nw; w++)
		nargv[k++] = words[w];
	for (int j = i; j < argc; j++)
		nargv[k++] = argv[j];
	nargv[k] = NULL;
	L->depth++;
	lift_git_sub(L, g, words[0], nargv, k, 0);
	L->depth--;
	free(copy);
}

static void lift_git_sub(struct lift *L, struct git_ctx *g, const char *sub,
			 const char *const *argv, int argc, int i)
{
	const char *alias;

	/* git runs its own command of that name first: an alias never shadows one. */
	alias = lifted_in_list(sub, git_commands) ? NULL : git_alias(g, sub);
	if (alias) {
		git_expand_alias(L, g, alias, argv, argc, i);
		return;
	}
	if (!lifted_in_list(sub, git_commands)) {
		/*
		 * Not one of git's commands: an alias from configuration argv does
		 * not show (an included file, GIT_CONFIG_* in the environment,
		 * --config-env) or an external git-SUB, either of which may push.
		 * A name no config key can spell (a path: the supervisor's second
		 * reading of `git-receive-pack DIR` run by git's own binary) is
		 * neither: git refuses it.
		 */
		if (!isalpha((unsigned char)sub[0]) || sub[strspn(sub, "abcdefghijklmnopqrstuvwxyz"
				"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-")])
			return;
		json_t *args = git_push_event(NULL, NULL, false, "alias");

		if (args)
			json_object_set_new(args, "command", pol_json_text(sub));
		lifted_add(L, "git", "push", args);
		return;
	}
	if (!strcmp(sub, "push") || !strcmp(sub, "send-pack") || lifted_in_list(sub, git_fetchlike)) {
		git_transfer(L, g, sub, argv, argc, i);
		return;
	}
	if (lifted_in_list(sub, git_sendlike) ||
	    (!strcmp(sub, "svn") && i < argc && (!strcmp(argv[i], "dcommit") ||
						 !strcmp(argv[i], "set-tree"))) ||
	    (!strcmp(sub, "p4") && i < argc && !strcmp(argv[i], "submit"))) {
		lifted_add(L, "git", "push", git_push_event(NULL, NULL, false, sub));
		return;
	}
	if (!strcmp(sub, "commit")) {
		static const struct opt commit_opts[] = {
			{ "message", 'm', A_VAL, 1 }, { "file", 'F', A_VAL, 0 },
			{ "author", 0, A_VAL, 0 }, { "date", 0, A_VAL, 0 },
			{ "reuse-message", 'C', A_VAL, 0 }, { "reedit-message", 'c', A_VAL, 0 },
			{ "fixup", 0, A_VAL, 0 }, { "squash", 0, A_VAL, 0 },
			{ "template", 't', A_VAL, 0 }, { "cleanup", 0, A_VAL, 0 },
			{ "trailer", 0, A_VAL, 0 }, { "gpg-sign", 'S', A_ATT, 0 },
			{ "untracked-files", 'u', A_ATT, 0 }, { "pathspec-from-file", 0, A_VAL, 0 },
			{ "all", 'a', A_NO, 0 }, { "quiet", 'q', A_NO, 0 }, { "verbose", 'v', A_NO, 0 },
			{ "signoff", 's', A_NO, 0 }, { "no-verify", 'n', A_NO, 0 },
			{ "edit", 'e', A_NO, 0 }, { "include", 'i', A_NO, 0 }, { "only", 'o', A_NO, 0 },
			{ "patch", 'p', A_NO, 0 }, { "amend", 0, A_NO, 0 }, { "allow-empty", 0, A_NO, 0 },
			{ "dry-run", 0, A_NO, 0 }, { "status", 0, A_NO, 0 }, { "porcelain", 0, A_NO, 0 },
			{ "short", 0, A_NO, 0 }, { "branch", 0, A_NO, 0 }, { "null", 'z', A_NO, 0 },
			{ "reset-author", 0, A_NO, 0 }, { "allow-empty-message", 0, A_NO, 0 },
			{ "interactive", 0, A_NO, 0 }, { "pathspec-file-nul", 0, A_NO, 0 },
		};
		static const struct optset commit_set = OPTSET(commit_opts, OS_ABBREV | OS_NEG);
		json_t *args = json_object();
		char *msg = NULL;
		size_t len = 0;
		struct scan s;
		struct tok t;

		/* Each -m is a paragraph of the message, as git joins them. */
		scan_init(&s, argv, argc, i, &commit_set);
		for (scan_next(&s, &t); t.k != T_END; scan_next(&s, &t))
			if (t.k == T_OPT && t.o && t.o->tag == 1 && t.val) {
				size_t l = strlen(t.val);
				char *m = realloc(msg, len + l + 3);

				if (!m) {
					json_decref(args);
					args = NULL;
					break;
				}
				msg = m;
				if (len) {
					memcpy(msg + len, "\n\n", 2);
					len += 2;
				}
				memcpy(msg + len, t.val, l + 1);
				len += l;
			}
		if (args && msg)
			json_object_set_new(args, "message", pol_json_text(msg));
		free(msg);
		lifted_add(L, "git", "commit", args);
	}
}

/*
 * git [global options] SUB ...: every reading of the global options (an
 * unknown one may take the next argument), each subcommand candidate
 * lifted with the directory and repository those options name.
 */
static void git_sub_cb(struct lift *L, const char *prog, const char *sub,
		       const char *const *argv, int argc, int next, void *ctx)
{
	struct git_ctx *g = ctx;
	struct scan s;
	struct tok t;

	(void)prog;
	g->globals_end = next - 1;
	g->cfg_force = false;
	g->located = false;
	scan_init(&s, argv, next - 1, 1, &git_global_set);
	for (scan_next(&s, &t); t.k != T_END; scan_next(&s, &t))
		if (t.k == T_OPT && t.o && (t.o->tag == G_CFG || t.o->tag == G_CFGENV) && t.val &&
		    git_cfg_forces(t.val, t.o->tag == G_CFGENV))
			g->cfg_force = true;
	lift_git_sub(L, g, sub, argv, argc, next);
}

void lift_git(struct lift *L, const char *prog, const char *const *argv, int argc)
{
	struct git_ctx *g = calloc(1, sizeof(*g));

	if (!g) {
		L->overflow = true;
		return;
	}
	g->argv = argv;
	g->argc = argc;
	if (!strncmp(prog, "git-", 4)) {
		/* /usr/lib/git-core/git-push: the dashed form, no global options. */
		git_sub_cb(L, prog, prog + 4, argv, argc, 1, g);
	} else {
		scan_subcommands(L, prog, argv, argc, 1, &git_global_set, git_sub_cb, g);
	}
	free(g);
}
