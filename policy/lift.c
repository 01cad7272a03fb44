// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Semantic lifting of an exec: what `git push -f origin main` means, so that
 * one tool rule (`git.push`) judges it exactly as it judges an MCP git
 * server's push.  argv, cwd and the workspace in, JSON events out.
 *
 * Recognisers read argv the way the program itself does, from its option
 * table (see "reading argv"); an option not in the table is read both ways,
 * so a deny rule still matches.  A lifted event only adds to a decision (it
 * can escalate or deny what the floor allows, never allow), so reading too
 * much is safe and reading too little is not.  An exec meaning more events
 * than POL_MAX_LIFTED has none and is refused.
 *
 * Every way to push or publish, and what judges it:
 *
 *   way                                       lifted to, or refused by
 *   git push (options, -c aliases, the        git.push {remote, branch, force}, one
 *     dashed git-push, global options)          per refspec; force: -f, --force-with-
 *                                               lease, --mirror, -d, --prune, +SRC,
 *                                               :DST, -c remote.X.push=+..., an
 *                                               option git push has and we do not know
 *   git send-pack DEST                        git.push {via: send-pack} (not with
 *                                               --stateless-rpc: a helper's half)
 *   git http-push, svn dcommit|set-tree,      git.push {via: SUB}
 *     p4 submit, send-email, imap-send,
 *     cvsexportcommit
 *   a fetch from the remote's side: fetch,    git.push {remote: that repository,
 *     pull, fetch-pack, remote update|add,      source, branch, via} when the repository
 *     bundle unbundle run in a repository       (--git-dir, --work-tree, --bare, -C,
 *     outside the workspace                     cwd; canonical, symlinks followed) is
 *                                               outside the workspace.  A pull so run
 *                                               asks twice (it runs git fetch).
 *   git SUB, SUB not a git command            git.push {via: alias, command}: an alias
 *                                               argv does not show may push
 *   a copy into another repository: cp into   the floor: each writes that repository
 *     its .git, git-receive-pack DIR,           as cp would, and the floor judges every
 *     unpack-objects, index-pack, hash-object   write outside the workspace (shipped
 *     -w, update-ref, commit run there; git     profiles: the session's /tmp is its own,
 *     bundle create + cp; git clone WS ELSE     the home a layer, nothing else is
 *                                               writable).  Not lifted: git runs receive-
 *                                               pack and unpack-objects itself for every
 *                                               local push, which would ask twice.
 *                                               tests/host/push_ways.sh proves both.
 *   git-upload-pack DIR                       reads only: the source side of a fetch
 *   git-remote-http(s), -ftp(s), -ext, -fd    the network layer (a host not on the
 *     run directly                              egress list is refused; in an allowed
 *                                               TLS tunnel a push is opaque).  Not
 *                                               lifted: the same helper serves fetches.
 *   ssh HOST git-receive-pack                 the network floor (no shipped rule has
 *                                               port 22) and ~/.ssh's invariant
 *   npm|pnpm|yarn|bun publish, unpublish,     npm.publish {manager, action}
 *     deprecate, dist-tag add|rm|set, owner
 *     add|rm, access set|grant|revoke,
 *     yarn npm publish
 *   twine upload|register, python -m twine,   pip.publish {via, action} (pip itself
 *     setup.py upload|register, flit,           has no publishing command)
 *     poetry, hatch, uv, pdm publish
 *   cargo publish|yank|owner;                 cargo.publish; gem.publish
 *     gem push|yank|owner
 *   npx, npm exec|run, make, sh -c...         the inner command is an exec of its own,
 *                                               lifted there
 *   curl or wget to a registry's API          http.fetch {url, method}, and the egress
 *                                               broker's http.request by host
 *
 * What it cannot close: what argv does not hold.  GIT_DIR, GIT_WORK_TREE and
 * GIT_CONFIG_* in the environment (a fetch into another repository, an
 * alias, a forcing refspec), configuration files (~/.curlrc, .wgetrc, an
 * included git config, .npmrc), URLs in a file (curl -K, wget -i: the event
 * names the file as url_file, which a rule without conditions matches and a
 * rule on the host cannot).  There, as for a renamed copy of git or a script
 * speaking the protocol, the floor and the network layer are the
 * containment: each is judged by what it writes and whom it reaches.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <openssl/evp.h>
#include "policy.h"
#include "util.h"

/*
 * Attack: a task passes bytes that are not UTF-8 (an argument, a file or
 * directory name); JSON cannot hold them, and a string jansson refuses
 * became NULL, so an argument dropped out of the event the policy judged
 * (the others moving up a place), a cwd lost the whole shell.exec event,
 * and a path or reason its audit record.  Every such string is now kept,
 * its stray bytes spelled out.  What this cannot do: tell the text \xff
 * from the byte 0xff in a record (the raw argv's digest, when one is
 * written, is of the bytes); no policy names either, policies being UTF-8.
 */
static size_t utf8_len(const unsigned char *p)
{
	unsigned c = p[0];
	size_t n;
	unsigned cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	/* Overlong forms, surrogates and past U+10FFFF are not UTF-8. */
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

json_t *pol_json_text(const char *s)
{
	json_t *j = s ? json_string(s) : NULL;
	const unsigned char *p = (const unsigned char *)s;
	char *out, *o;

	if (j || !s)
		return j;
	o = out = malloc(strlen(s) * 4 + 1);
	if (!out)
		return NULL;
	while (*p) {
		size_t n = utf8_len(p);

		if (n) {
			memcpy(o, p, n);
			o += n;
			p += n;
		} else {
			o += sprintf(o, "\\x%02x", *p++);
		}
	}
	*o = '\0';
	j = json_string(out);
	free(out);
	return j;
}

/*
 * An event as the audit records keep it.  Attack: an MCP tool call whose
 * arguments run to megabytes (a request may hold 4 MiB), made again and
 * again, fills the host's disk through the audit log (each call is recorded
 * at its decision and at its result), and one such record would not fit the
 * log's reserve (AUDIT_RECORD_MAX): the session would stop.  Up to
 * POL_RECORD_ARGS_BYTES of arguments (compact JSON, keys sorted) the event
 * is kept whole; past it, its arguments are kept as {truncated, bytes,
 * sha256, head}: the size and SHA-256 of that JSON text, and its first
 * POL_RECORD_ARGS_BYTES, so the record still names exactly what was judged.
 * The policy and the approver always see the whole event.
 */
int pol_json_sha256(json_t *v, char hex[65], size_t *bytes)
{
	char *text = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	unsigned char md[32];
	size_t n = text ? strlen(text) : 0;
	bool ok = text && EVP_Digest(text, n, md, NULL, EVP_sha256(), NULL) == 1;

	free(text);
	if (!ok)
		return -ENOMEM;
	hex_encode(md, sizeof(md), hex);
	if (bytes)
		*bytes = n;
	return 0;
}

json_t *pol_json_kept(json_t *v)
{
	unsigned char md[32];
	char hex[65], *text;
	json_t *head;
	size_t n, cut;

	text = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	if (!text)
		return NULL;
	n = strlen(text);
	if (n <= POL_RECORD_ARGS_BYTES) {
		free(text);
		return json_incref(v);
	}
	if (EVP_Digest(text, n, md, NULL, EVP_sha256(), NULL) != 1) {
		free(text);
		return NULL;
	}
	hex_encode(md, sizeof(md), hex);
	/* The head ends on a character, not inside one. */
	for (cut = POL_RECORD_ARGS_BYTES; cut > 0 && ((unsigned char)text[cut] & 0xc0) == 0x80; cut--)
		;
	text[cut] = '\0';
	head = pol_json_text(text);
	free(text);
	if (!head)
		return NULL;
	return json_pack("{s:b,s:I,s:s,s:o}", "truncated", 1, "bytes", (json_int_t)n,
			 "sha256", hex, "head", head);
}

json_t *pol_event_kept(json_t *event)
{
	json_t *args = json_object_get(event, "arguments"), *kept, *ka;

	if (!args)
		return json_incref(event);
	ka = pol_json_kept(args);
	if (ka == args) {
		json_decref(ka);
		return json_incref(event);
	}
	kept = ka ? json_copy(event) : NULL;
	if (!kept || json_object_set_new(kept, "arguments", ka) < 0) {
		json_decref(kept);
		return NULL;
	}
	return kept;
}

/*
 * Attack: an argv or a path shown in the approval prompt carries terminal
 * escapes (move the cursor up, erase the line) or newlines, and paints a
 * harmless command over the one held; or it is long enough that what
 * matters lies past the cut.  Shown here, no byte can steer a terminal,
 * and a cut says how much was left out.
 */
/* One piece of s shown: the bytes consumed, the text in *piece (esc when escaped). */
static size_t shown_piece(const unsigned char *p, char esc[5], const char **piece, size_t *plen)
{
	size_t n = utf8_len(p);

	/* C0 and DEL are one byte; C1 (U+0080..U+009F) is 0xc2 0x80..0x9f. */
	if (!n || *p < 0x20 || *p == 0x7f || (n == 2 && p[0] == 0xc2 && p[1] < 0xa0)) {
		snprintf(esc, 5, "\\x%02x", *p);
		*piece = esc;
		*plen = 4;
		return 1;
	}
	*piece = (const char *)p;
	*plen = n;
	return n;
}

#define SHOWN_TAIL 40   /* room for " ...[+N bytes]" */

void pol_printable(char *out, size_t len, const char *s)
{
	const unsigned char *p;
	const char *piece;
	size_t o = 0, want = 0, plen, n;
	char esc[5];

	if (!len)
		return;
	for (p = (const unsigned char *)s; *p; p += n) {
		n = shown_piece(p, esc, &piece, &plen);
		want += plen;
	}
	for (p = (const unsigned char *)s; *p; p += n) {
		n = shown_piece(p, esc, &piece, &plen);
		if (want >= len && o + plen + SHOWN_TAIL >= len)
			break;
		if (o + plen >= len)
			break;
		memcpy(out + o, piece, plen);
		o += plen;
	}
	out[o] = '\0';
	if (*p && o + SHOWN_TAIL < len)
		snprintf(out + o, len - o, " ...[+%zu bytes]", strlen((const char *)p));
}

static const char *base(const char *s)
{
	const char *slash = strrchr(s, '/');

	return slash ? slash + 1 : s;
}

/* --- what a recogniser makes: events, deduplicated, bounded ----------------- */

struct lift {
	struct pol_lifted *out;
	int n;
	bool overflow;          /* more events than POL_MAX_LIFTED: the exec is refused */
	const char *cwd;
	const char *workspace;  /* as the policy names it, or NULL */
	char ws[PATH_MAX];      /* the workspace, canonical ("" when unknown), once asked */
	bool ws_done;
	int depth;              /* alias expansion and nested programs */
};

static void add(struct lift *L, const char *server, const char *tool, json_t *args)
{
	if (!args) {            /* out of memory: no event is an event lost, so refuse */
		L->overflow = true;
		return;
	}
	for (int i = 1; i < L->n; i++)
		if (!strcmp(L->out[i].server, server) && !strcmp(L->out[i].tool, tool) &&
		    json_equal(L->out[i].args, args)) {
			json_decref(args);
			return;
		}
	if (L->n >= POL_MAX_LIFTED) {
		L->overflow = true;
		json_decref(args);
		return;
	}
	snprintf(L->out[L->n].server, sizeof(L->out[L->n].server), "%s", server);
	snprintf(L->out[L->n].tool, sizeof(L->out[L->n].tool), "%s", tool);
	L->out[L->n++].args = args;
}

static bool in_list(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(s, *list))
			return true;
	return false;
}

/* --- reading argv the way the program does ----------------------------------- */

/*
 * An option table is data: each program's options as its own parser knows
 * them (curl's tool_getparam.c table, wget --help, `git CMD -h`, pip's
 * optparse groups, npm's config definitions), with whether each takes a
 * value.  One scanner reads them all: -abc clusters, -ovalue and -o value,
 * --opt=value and --opt value, --no-opt, unique prefixes of long names
 * where the program accepts them, and -- ending the options.
 *
 * Attack: an option's value taken for a positional (`curl -m 5 URL` judged
 * as a fetch of "5"), or a positional taken for a value, so the rule on the
 * real URL, subcommand or remote never sees it.
 *
 * Fail-closed on what a table does not hold (a newer version's option, a
 * misspelling the program reads some way we do not): an unknown option may
 * or may not take the next argument, so that argument is marked `maybe`
 * and the recognisers take both readings: it is a URL candidate, a
 * subcommand candidate (and so is the next), and an unknown option of git
 * push makes the push count as forced.  Extra events can only make the
 * decision stricter (a lifted event never allows what the floor refuses),
 * so reading too much is safe and reading too little is not.
 */
enum { A_NO, A_VAL, A_ATT };    /* no value; a value (attached or next); attached only */

struct opt {
	const char *l;          /* long name without "--", or NULL */
	char s;                 /* short letter, or 0 */
	unsigned char arg;      /* A_* */
	unsigned char tag;      /* what the recogniser makes of it (0: nothing) */
};

#define OS_ABBREV  1u   /* a unique prefix of a long name stands for it */
#define OS_NEG     2u   /* --no-NAME negates a flag */
#define OS_SLONG   4u   /* -name may be a long name (npm's -ws, wget's -nv is -n v) */

struct optset {
	const struct opt *o;
	size_t n;
	unsigned flags;
};
#define OPTSET(t, f) { t, ARRAY_SIZE(t), f }

enum tok_kind { T_END, T_OPT, T_ARG };

struct tok {
	enum tok_kind k;
	const struct opt *o;    /* T_OPT: NULL when the table does not hold it */
	const char *val;        /* T_OPT: its value, or NULL */
	bool neg;               /* T_OPT: --no-NAME */
	bool maybe;             /* T_ARG: may be an unknown option's value */
	int idx;                /* argv index */
	const char *arg;        /* T_ARG: the argument */
};

struct scan {
	const char *const *argv;
	int argc, i;
	const struct optset *set;
	const char *cluster;    /* the rest of a short-option cluster */
	bool ended, maybe, unknown;
};

static void scan_init(struct scan *s, const char *const *argv, int argc, int i,
		      const struct optset *set)
{
	memset(s, 0, sizeof(*s));
	s->argv = argv;
	s->argc = argc;
	s->i = i;
	s->set = set;
}

static const struct opt *find_long(const struct optset *set, const char *name, size_t len,
				   bool *neg)
{
	const struct opt *hit = NULL;
	int hits = 0;

	*neg = false;
	for (size_t k = 0; k < set->n; k++)
		if (set->o[k].l && strlen(set->o[k].l) == len && !strncmp(set->o[k].l, name, len))
			return &set->o[k];
	if ((set->flags & OS_NEG) && len > 3 && !strncmp(name, "no-", 3)) {
		for (size_t k = 0; k < set->n; k++)
			if (set->o[k].l && set->o[k].arg != A_VAL && strlen(set->o[k].l) == len - 3 &&
			    !strncmp(set->o[k].l, name + 3, len - 3)) {
				*neg = true;
				return &set->o[k];
			}
	}
	if (!(set->flags & OS_ABBREV))
		return NULL;
	for (size_t k = 0; k < set->n; k++)
		if (set->o[k].l && !strncmp(set->o[k].l, name, len) &&
		    (!hit || hit->tag != set->o[k].tag || hit->arg != set->o[k].arg)) {
			hit = &set->o[k];
			hits++;
		}
	return hits == 1 ? hit : NULL;  /* ambiguous: the program refuses it; unknown here */
}

static const struct opt *find_short(const struct optset *set, char c)
{
	for (size_t k = 0; k < set->n; k++)
		if (set->o[k].s == c)
			return &set->o[k];
	return NULL;
}

static void scan_next(struct scan *s, struct tok *t)
{
	const char *a;

	memset(t, 0, sizeof(*t));
	t->idx = s->i - 1;
	if (s->cluster) {
		char c = *s->cluster++;
		const struct opt *o = find_short(s->set, c);

		t->k = T_OPT;
		t->o = o;
		if (!o) {
			/* Unknown letter: the rest may be its value or more letters. */
			s->unknown = s->maybe = true;
			t->val = *s->cluster ? s->cluster : NULL;
			s->cluster = NULL;
			return;
		}
		if (o->arg == A_NO) {
			if (!*s->cluster)
				s->cluster = NULL;
			return;
		}
		if (*s->cluster)
			t->val = s->cluster;
		else if (o->arg == A_VAL && s->i < s->argc)
			t->val = s->argv[s->i++];
		s->cluster = NULL;
		return;
	}
	if (s->i >= s->argc) {
		t->k = T_END;
		return;
	}
	t->idx = s->i;
	a = s->argv[s->i++];
	if (s->ended || a[0] != '-' || !a[1]) {
		t->k = T_ARG;
		t->arg = a;
		t->maybe = s->maybe;
		s->maybe = false;
		return;
	}
	if (!strcmp(a, "--")) {
		s->ended = true;
		scan_next(s, t);
		return;
	}
	s->maybe = false;
	if (a[1] == '-' || ((s->set->flags & OS_SLONG) && a[2])) {
		const char *name = a + (a[1] == '-' ? 2 : 1), *eq = strchr(name, '=');
		size_t len = eq ? (size_t)(eq - name) : strlen(name);
		bool neg;
		const struct opt *o = find_long(s->set, name, len, &neg);

		if (a[1] != '-' && !o)
			goto cluster;   /* not a long name after all: letters */
		t->k = T_OPT;
		t->o = o;
		t->neg = neg;
		if (!o) {
			s->unknown = true;
			s->maybe = !eq;
			t->val = eq ? eq + 1 : NULL;
			return;
		}
		if (eq)
			t->val = eq + 1;
		else if (o->arg == A_VAL && s->i < s->argc)
			t->val = s->argv[s->i++];
		return;
	}
cluster:
	s->cluster = a + 1;
	scan_next(s, t);
	t->idx = s->i - 1;
}

/*
 * The subcommand candidates of a program whose options come first: the
 * first positional, and while a candidate may be an unknown option's value,
 * the next one too.  Calls fn for each with the scan positioned after it.
 */
typedef void (*sub_fn)(struct lift *L, const char *prog, const char *sub,
		       const char *const *argv, int argc, int next, void *ctx);

static void subcommands(struct lift *L, const char *prog, const char *const *argv, int argc,
			int i, const struct optset *set, sub_fn fn, void *ctx)
{
	struct scan s;
	struct tok t;

	scan_init(&s, argv, argc, i, set);
	for (scan_next(&s, &t); t.k != T_END; scan_next(&s, &t)) {
		if (t.k != T_ARG)
			continue;
		fn(L, prog, t.arg, argv, argc, t.idx + 1, ctx);
		if (!t.maybe && !s.maybe)
			break;
	}
}

/* --- git ------------------------------------------------------------------ */

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
		add(L, "git", "push", args);
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
		add(L, "git", "push", git_push_event(NULL, NULL, false, "alias"));
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
	alias = in_list(sub, git_commands) ? NULL : git_alias(g, sub);
	if (alias) {
		git_expand_alias(L, g, alias, argv, argc, i);
		return;
	}
	if (!in_list(sub, git_commands)) {
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
		add(L, "git", "push", args);
		return;
	}
	if (!strcmp(sub, "push") || !strcmp(sub, "send-pack") || in_list(sub, git_fetchlike)) {
		git_transfer(L, g, sub, argv, argc, i);
		return;
	}
	if (in_list(sub, git_sendlike) ||
	    (!strcmp(sub, "svn") && i < argc && (!strcmp(argv[i], "dcommit") ||
						 !strcmp(argv[i], "set-tree"))) ||
	    (!strcmp(sub, "p4") && i < argc && !strcmp(argv[i], "submit"))) {
		add(L, "git", "push", git_push_event(NULL, NULL, false, sub));
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
		add(L, "git", "commit", args);
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

static void lift_git(struct lift *L, const char *prog, const char *const *argv, int argc)
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
		subcommands(L, prog, argv, argc, 1, &git_global_set, git_sub_cb, g);
	}
	free(g);
}

/* --- package managers --------------------------------------------------------- */

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
	return first && in_list(first, writes) ? sub : NULL;
}

static void npm_sub_cb(struct lift *L, const char *prog, const char *sub,
		       const char *const *argv, int argc, int next, void *ctx)
{
	const char *action;

	(void)ctx;
	if (in_list(sub, npm_install_cmds)) {
		json_t *pk = json_array();
		struct scan s;
		struct tok t;

		scan_init(&s, argv, argc, next, &npm_set);
		for (scan_next(&s, &t); pk && t.k != T_END; scan_next(&s, &t))
			if (t.k == T_ARG)
				json_array_append_new(pk, pol_json_text(t.arg));
		add(L, "npm", "install", pk ? json_pack("{s:o,s:s}", "packages", pk, "manager", prog)
					    : NULL);
		return;
	}
	/* yarn 2+: yarn npm publish, yarn npm tag add. */
	if (!strcmp(sub, "npm") && !strcmp(prog, "yarn") && L->depth < 2) {
		L->depth++;
		subcommands(L, prog, argv, argc, next, &npm_set, npm_sub_cb, NULL);
		L->depth--;
		return;
	}
	action = npm_publish_action(sub, argv, argc, next, &npm_set);
	if (action)
		add(L, "npm", "publish", json_pack("{s:s,s:s}", "manager", prog, "action", action));
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
	add(L, "pip", "install", pk ? json_pack("{s:o}", "packages", pk) : NULL);
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
		subcommands(L, prog, argv, argc, next, &pip_set, pip_sub_cb, NULL);
		return;
	}
	for (size_t k = 0; k < ARRAY_SIZE(publishers); k++)
		if (!strcmp(prog, publishers[k].prog) && !strcmp(sub, publishers[k].sub))
			add(L, publishers[k].server, "publish",
			    json_pack("{s:s,s:s}", "via", prog, "action", sub));
}

static bool is_publisher(const char *prog)
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

static void lift_python(struct lift *L, const char *const *argv, int argc)
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
				subcommands(L, "pip", argv, argc, next, &pip_set, pip_sub_cb, NULL);
			else if (is_publisher(m))
				subcommands(L, m, argv, argc, next, &cargo_set, publisher_cb, NULL);
			if (!t.maybe && !s.unknown)
				return;
			continue;
		}
		if (t.k == T_ARG) {
			/* setup.py upload / register: distutils' own publishing. */
			if (!strcmp(base(t.arg), "setup.py"))
				for (int j = t.idx + 1; j < argc; j++)
					if (!strcmp(argv[j], "upload") || !strcmp(argv[j], "register"))
						add(L, "pip", "publish", json_pack("{s:s,s:s}", "via",
							"setup.py", "action", argv[j]));
			if (!t.maybe)
				return;
		}
	}
}

/* --- curl and wget ----------------------------------------------------------- */

enum { C_URL = 1, C_METHOD, C_POST, C_PUT, C_GET, C_HEAD, C_CONFIG, C_PROTO_DEFAULT, C_GLOBOFF,
       C_INPUT };

/*
 * curl's options (its tool_getparam.c table, `curl --help all`): every one
 * that takes a value.  Flags are listed when they have a short letter (so
 * a cluster such as -sSfL reads right) or matter here; a long flag not
 * listed is unknown and read both ways, which costs nothing but an extra
 * candidate.  curl 7 accepts unique prefixes of long names.
 */
static const struct opt curl_opts[] = {
	{ "abstract-unix-socket", 0, A_VAL, 0 }, { "alt-svc", 0, A_VAL, 0 },
	{ "aws-sigv4", 0, A_VAL, 0 }, { "cacert", 0, A_VAL, 0 }, { "capath", 0, A_VAL, 0 },
	{ "cert", 'E', A_VAL, 0 }, { "cert-type", 0, A_VAL, 0 }, { "ciphers", 0, A_VAL, 0 },
	{ "config", 'K', A_VAL, C_CONFIG }, { "connect-timeout", 0, A_VAL, 0 },
	{ "connect-to", 0, A_VAL, 0 }, { "continue-at", 'C', A_VAL, 0 },
	{ "cookie", 'b', A_VAL, 0 }, { "cookie-jar", 'c', A_VAL, 0 },
	{ "create-file-mode", 0, A_VAL, 0 }, { "crlfile", 0, A_VAL, 0 }, { "curves", 0, A_VAL, 0 },
	{ "data", 'd', A_VAL, C_POST }, { "data-ascii", 0, A_VAL, C_POST },
	{ "data-binary", 0, A_VAL, C_POST }, { "data-raw", 0, A_VAL, C_POST },
	{ "data-urlencode", 0, A_VAL, C_POST }, { "delegation", 0, A_VAL, 0 },
	{ "dns-interface", 0, A_VAL, 0 }, { "dns-ipv4-addr", 0, A_VAL, 0 },
	{ "dns-ipv6-addr", 0, A_VAL, 0 }, { "dns-servers", 0, A_VAL, 0 },
	{ "doh-url", 0, A_VAL, 0 }, { "dump-header", 'D', A_VAL, 0 }, { "ech", 0, A_VAL, 0 },
	{ "egd-file", 0, A_VAL, 0 }, { "engine", 0, A_VAL, 0 }, { "etag-compare", 0, A_VAL, 0 },
	{ "etag-save", 0, A_VAL, 0 }, { "expect100-timeout", 0, A_VAL, 0 },
	{ "form", 'F', A_VAL, C_POST }, { "form-string", 0, A_VAL, C_POST },
	{ "ftp-account", 0, A_VAL, 0 }, { "ftp-alternative-to-user", 0, A_VAL, 0 },
	{ "ftp-method", 0, A_VAL, 0 }, { "ftp-port", 'P', A_VAL, 0 },
	{ "ftp-ssl-ccc-mode", 0, A_VAL, 0 }, { "happy-eyeballs-timeout-ms", 0, A_VAL, 0 },
	{ "haproxy-clientip", 0, A_VAL, 0 }, { "header", 'H', A_VAL, 0 },
	{ "help", 'h', A_VAL, 0 }, { "hostpubmd5", 0, A_VAL, 0 }, { "hostpubsha256", 0, A_VAL, 0 },
	{ "hsts", 0, A_VAL, 0 }, { "interface", 0, A_VAL, 0 }, { "ip-tos", 0, A_VAL, 0 },
	{ "ipfs-gateway", 0, A_VAL, 0 }, { "json", 0, A_VAL, C_POST },
	{ "keepalive-cnt", 0, A_VAL, 0 }, { "keepalive-time", 0, A_VAL, 0 },
	{ "key", 0, A_VAL, 0 }, { "key-type", 0, A_VAL, 0 }, { "knownhosts", 0, A_VAL, 0 },
	{ "krb", 0, A_VAL, 0 }, { "krb4", 0, A_VAL, 0 }, { "libcurl", 0, A_VAL, 0 },
	{ "limit-rate", 0, A_VAL, 0 }, { "local-port", 0, A_VAL, 0 },
	{ "login-options", 0, A_VAL, 0 }, { "mail-auth", 0, A_VAL, 0 },
	{ "mail-from", 0, A_VAL, 0 }, { "mail-rcpt", 0, A_VAL, 0 },
	{ "max-filesize", 0, A_VAL, 0 }, { "max-redirs", 0, A_VAL, 0 },
	{ "max-time", 'm', A_VAL, 0 }, { "netrc-file", 0, A_VAL, 0 }, { "noproxy", 0, A_VAL, 0 },
	{ "oauth2-bearer", 0, A_VAL, 0 }, { "output", 'o', A_VAL, 0 },
	{ "output-dir", 0, A_VAL, 0 }, { "parallel-max", 0, A_VAL, 0 },
	{ "parallel-max-host", 0, A_VAL, 0 }, { "pass", 0, A_VAL, 0 },
	{ "pinnedpubkey", 0, A_VAL, 0 }, { "preproxy", 0, A_VAL, 0 }, { "proto", 0, A_VAL, 0 },
	{ "proto-default", 0, A_VAL, C_PROTO_DEFAULT }, { "proto-redir", 0, A_VAL, 0 },
	{ "proxy", 'x', A_VAL, 0 }, { "proxy-cacert", 0, A_VAL, 0 },
	{ "proxy-capath", 0, A_VAL, 0 }, { "proxy-cert", 0, A_VAL, 0 },
	{ "proxy-cert-type", 0, A_VAL, 0 }, { "proxy-ciphers", 0, A_VAL, 0 },
	{ "proxy-crlfile", 0, A_VAL, 0 }, { "proxy-header", 0, A_VAL, 0 },
	{ "proxy-key", 0, A_VAL, 0 }, { "proxy-key-type", 0, A_VAL, 0 },
	{ "proxy-pass", 0, A_VAL, 0 }, { "proxy-pinnedpubkey", 0, A_VAL, 0 },
	{ "proxy-service-name", 0, A_VAL, 0 }, { "proxy-tls13-ciphers", 0, A_VAL, 0 },
	{ "proxy-tlsauthtype", 0, A_VAL, 0 }, { "proxy-tlspassword", 0, A_VAL, 0 },
	{ "proxy-tlsuser", 0, A_VAL, 0 }, { "proxy-user", 'U', A_VAL, 0 },
	{ "proxy1.0", 0, A_VAL, 0 }, { "pubkey", 0, A_VAL, 0 }, { "quote", 'Q', A_VAL, 0 },
	{ "random-file", 0, A_VAL, 0 }, { "range", 'r', A_VAL, 0 }, { "rate", 0, A_VAL, 0 },
	{ "referer", 'e', A_VAL, 0 }, { "request", 'X', A_VAL, C_METHOD },
	{ "request-target", 0, A_VAL, 0 }, { "resolve", 0, A_VAL, 0 }, { "retry", 0, A_VAL, 0 },
	{ "retry-delay", 0, A_VAL, 0 }, { "retry-max-time", 0, A_VAL, 0 },
	{ "sasl-authzid", 0, A_VAL, 0 }, { "service-name", 0, A_VAL, 0 },
	{ "sigalgs", 0, A_VAL, 0 }, { "socks4", 0, A_VAL, 0 }, { "socks4a", 0, A_VAL, 0 },
	{ "socks5", 0, A_VAL, 0 }, { "socks5-gssapi-service", 0, A_VAL, 0 },
	{ "socks5-hostname", 0, A_VAL, 0 }, { "speed-limit", 'Y', A_VAL, 0 },
	{ "speed-time", 'y', A_VAL, 0 }, { "ssl-sessions", 0, A_VAL, 0 },
	{ "stderr", 0, A_VAL, 0 }, { "telnet-option", 't', A_VAL, 0 },
	{ "tftp-blksize", 0, A_VAL, 0 }, { "time-cond", 'z', A_VAL, 0 },
	{ "tls-max", 0, A_VAL, 0 }, { "tls13-ciphers", 0, A_VAL, 0 },
	{ "tlsauthtype", 0, A_VAL, 0 }, { "tlspassword", 0, A_VAL, 0 },
	{ "tlsuser", 0, A_VAL, 0 }, { "trace", 0, A_VAL, 0 }, { "trace-ascii", 0, A_VAL, 0 },
	{ "trace-config", 0, A_VAL, 0 }, { "unix-socket", 0, A_VAL, 0 },
	{ "upload-file", 'T', A_VAL, C_PUT }, { "upload-flags", 0, A_VAL, 0 },
	{ "url", 0, A_VAL, C_URL }, { "url-query", 0, A_VAL, 0 }, { "user", 'u', A_VAL, 0 },
	{ "user-agent", 'A', A_VAL, 0 }, { "variable", 0, A_VAL, 0 },
	{ "vlan-priority", 0, A_VAL, 0 }, { "write-out", 'w', A_VAL, 0 },
	/* flags with a letter, and those that change the method or the URLs */
	{ "append", 'a', A_NO, 0 }, { "buffer", 'N', A_NO, 0 }, { "disable", 'q', A_NO, 0 },
	{ "fail", 'f', A_NO, 0 }, { "get", 'G', A_NO, C_GET }, { "globoff", 'g', A_NO, C_GLOBOFF },
	{ "head", 'I', A_NO, C_HEAD }, { "http1.0", '0', A_NO, 0 }, { "include", 'i', A_NO, 0 },
	{ "show-headers", 0, A_NO, 0 }, { "insecure", 'k', A_NO, 0 }, { "ipv4", '4', A_NO, 0 },
	{ "ipv6", '6', A_NO, 0 }, { "junk-session-cookies", 'j', A_NO, 0 },
	{ "list-only", 'l', A_NO, 0 }, { "location", 'L', A_NO, 0 }, { "manual", 'M', A_NO, 0 },
	{ "netrc", 'n', A_NO, 0 }, { "next", ':', A_NO, 0 }, { "parallel", 'Z', A_NO, 0 },
	{ "progress-bar", '#', A_NO, 0 }, { "proxytunnel", 'p', A_NO, 0 },
	{ "remote-header-name", 'J', A_NO, 0 }, { "remote-name", 'O', A_NO, 0 },
	{ "remote-name-all", 0, A_NO, 0 }, { "remote-time", 'R', A_NO, 0 },
	{ "show-error", 'S', A_NO, 0 }, { "silent", 's', A_NO, 0 }, { "sslv2", '2', A_NO, 0 },
	{ "sslv3", '3', A_NO, 0 }, { "tlsv1", '1', A_NO, 0 }, { "use-ascii", 'B', A_NO, 0 },
	{ "verbose", 'v', A_NO, 0 }, { "version", 'V', A_NO, 0 },
	{ "location-trusted", 0, A_NO, 0 }, { "compressed", 0, A_NO, 0 },
	{ "create-dirs", 0, A_NO, 0 }, { "http1.1", 0, A_NO, 0 }, { "http2", 0, A_NO, 0 },
	{ "http3", 0, A_NO, 0 }, { "fail-with-body", 0, A_NO, 0 }, { "retry-all-errors", 0, A_NO, 0 },
	{ "retry-connrefused", 0, A_NO, 0 }, { "no-progress-meter", 0, A_NO, 0 },
	{ "no-buffer", 0, A_NO, 0 }, { "no-keepalive", 0, A_NO, 0 }, { "no-sessionid", 0, A_NO, 0 },
};
static const struct optset curl_set = OPTSET(curl_opts, OS_ABBREV | OS_NEG);

/* wget --help (1.21): getopt_long, so prefixes; -nv is -n with the value v. */
static const struct opt wget_opts[] = {
	{ "version", 'V', A_NO, 0 }, { "help", 'h', A_NO, 0 }, { "background", 'b', A_NO, 0 },
	{ "execute", 'e', A_VAL, C_CONFIG }, { "output-file", 'o', A_VAL, 0 },
	{ "append-output", 'a', A_VAL, 0 }, { "debug", 'd', A_NO, 0 }, { "quiet", 'q', A_NO, 0 },
	{ "verbose", 'v', A_NO, 0 }, { NULL, 'n', A_VAL, 0 }, { "report-speed", 0, A_VAL, 0 },
	{ "input-file", 'i', A_VAL, C_INPUT }, { "force-html", 'F', A_NO, 0 },
	{ "base", 'B', A_VAL, 0 }, { "config", 0, A_VAL, C_CONFIG },
	{ "rejected-log", 0, A_VAL, 0 }, { "tries", 't', A_VAL, 0 },
	{ "retry-on-http-error", 0, A_VAL, 0 }, { "output-document", 'O', A_VAL, 0 },
	{ "continue", 'c', A_NO, 0 }, { "start-pos", 0, A_VAL, 0 }, { "progress", 0, A_VAL, 0 },
	{ "timestamping", 'N', A_NO, 0 }, { "server-response", 'S', A_NO, 0 },
	{ "spider", 0, A_NO, 0 }, { "timeout", 'T', A_VAL, 0 }, { "dns-timeout", 0, A_VAL, 0 },
	{ "connect-timeout", 0, A_VAL, 0 }, { "read-timeout", 0, A_VAL, 0 },
	{ "wait", 'w', A_VAL, 0 }, { "waitretry", 0, A_VAL, 0 }, { "quota", 'Q', A_VAL, 0 },
	{ "bind-address", 0, A_VAL, 0 }, { "limit-rate", 0, A_VAL, 0 },
	{ "restrict-file-names", 0, A_VAL, 0 }, { "inet4-only", '4', A_NO, 0 },
	{ "inet6-only", '6', A_NO, 0 }, { "prefer-family", 0, A_VAL, 0 }, { "user", 0, A_VAL, 0 },
	{ "password", 0, A_VAL, 0 }, { "use-askpass", 0, A_VAL, 0 },
	{ "local-encoding", 0, A_VAL, 0 }, { "remote-encoding", 0, A_VAL, 0 },
	{ "force-directories", 'x', A_NO, 0 }, { "directory-prefix", 'P', A_VAL, 0 },
	{ "cut-dirs", 0, A_VAL, 0 }, { "http-user", 0, A_VAL, 0 },
	{ "http-password", 0, A_VAL, 0 }, { "default-page", 0, A_VAL, 0 },
	{ "adjust-extension", 'E', A_NO, 0 }, { "header", 0, A_VAL, 0 },
	{ "compression", 0, A_VAL, 0 }, { "max-redirect", 0, A_VAL, 0 },
	{ "proxy-user", 0, A_VAL, 0 }, { "proxy-password", 0, A_VAL, 0 },
	{ "referer", 0, A_VAL, 0 }, { "user-agent", 'U', A_VAL, 0 },
	{ "load-cookies", 0, A_VAL, 0 }, { "save-cookies", 0, A_VAL, 0 },
	{ "post-data", 0, A_VAL, C_POST }, { "post-file", 0, A_VAL, C_POST },
	{ "method", 0, A_VAL, C_METHOD }, { "body-data", 0, A_VAL, 0 },
	{ "body-file", 0, A_VAL, 0 }, { "secure-protocol", 0, A_VAL, 0 },
	{ "certificate", 0, A_VAL, 0 }, { "certificate-type", 0, A_VAL, 0 },
	{ "private-key", 0, A_VAL, 0 }, { "private-key-type", 0, A_VAL, 0 },
	{ "ca-certificate", 0, A_VAL, 0 }, { "ca-directory", 0, A_VAL, 0 },
	{ "crl-file", 0, A_VAL, 0 }, { "pinnedpubkey", 0, A_VAL, 0 }, { "ciphers", 0, A_VAL, 0 },
	{ "hsts-file", 0, A_VAL, 0 }, { "ftp-user", 0, A_VAL, 0 }, { "ftp-password", 0, A_VAL, 0 },
	{ "warc-file", 0, A_VAL, 0 }, { "warc-header", 0, A_VAL, 0 },
	{ "warc-max-size", 0, A_VAL, 0 }, { "warc-dedup", 0, A_VAL, 0 },
	{ "warc-tempdir", 0, A_VAL, 0 }, { "recursive", 'r', A_NO, 0 }, { "level", 'l', A_VAL, 0 },
	{ "convert-links", 'k', A_NO, 0 }, { "backups", 0, A_VAL, 0 },
	{ "backup-converted", 'K', A_NO, 0 }, { "mirror", 'm', A_NO, 0 },
	{ "page-requisites", 'p', A_NO, 0 }, { "accept", 'A', A_VAL, 0 }, { "reject", 'R', A_VAL, 0 },
	{ "accept-regex", 0, A_VAL, 0 }, { "reject-regex", 0, A_VAL, 0 },
	{ "regex-type", 0, A_VAL, 0 }, { "domains", 'D', A_VAL, 0 },
	{ "exclude-domains", 0, A_VAL, 0 }, { "follow-tags", 0, A_VAL, 0 },
	{ "ignore-tags", 0, A_VAL, 0 }, { "span-hosts", 'H', A_NO, 0 }, { "relative", 'L', A_NO, 0 },
	{ "include-directories", 'I', A_VAL, 0 }, { "exclude-directories", 'X', A_VAL, 0 },
};
static const struct optset wget_set = OPTSET(wget_opts, OS_ABBREV | OS_NEG);

/* The first glob of url: a {set}, or a [range] with a '-' ([::1] is an IPv6 literal). */
static const char *glob_open(const char *url)
{
	for (const char *p = url; *p; p++) {
		const char *close;

		if (*p == '{')
			return p;
		if (*p != '[')
			continue;
		close = strchr(p, ']');
		if (!close)
			return p;
		if (memchr(p, '-', (size_t)(close - p)))
			return p;
		p = close;
	}
	return NULL;
}

/*
 * curl's URL globbing: {a,b} sets and [1-3] / [a-c:2] ranges, expanded so
 * that each host a pattern can reach is judged.  -1 when there are more
 * than max, or nesting deeper than we follow: the caller refuses the exec.
 */
static int glob_expand(const char *url, char out[][PATH_MAX], int max, int depth)
{
	const char *open = glob_open(url), *close;
	char alts[64][64];
	int na = 0, n = 0;

	if (depth > 8)
		return -1;      /* each level holds a URL on the stack: bounded */
	if (!open) {
		if (max < 1 || strlen(url) >= PATH_MAX)
			return -1;
		memcpy(out[0], url, strlen(url) + 1);
		return 1;
	}
	close = strchr(open, *open == '{' ? '}' : ']');
	if (!close)
		return -1;
	if (*open == '{') {
		for (const char *p = open + 1; p <= close;) {
			size_t l = strcspn(p, ",}");

			if (na == 64 || l >= 64)
				return -1;
			memcpy(alts[na], p, l);
			alts[na++][l] = 0;
			p += l + 1;
		}
	} else {
		char spec[64], lo_s[32], hi_s[32];
		size_t l = (size_t)(close - open - 1);
		long step = 1;

		if (l >= sizeof(spec))
			return -1;
		memcpy(spec, open + 1, l);
		spec[l] = 0;
		if (sscanf(spec, "%31[^-]-%31[^:]:%ld", lo_s, hi_s, &step) < 2 || step < 1)
			return -1;
		if (isdigit((unsigned char)lo_s[0])) {
			long lo = strtol(lo_s, NULL, 10), hi = strtol(hi_s, NULL, 10);
			int width = lo_s[0] == '0' ? (int)strlen(lo_s) : 0;

			for (long v = lo; v <= hi; v += step) {
				if (na == 64)
					return -1;
				snprintf(alts[na++], sizeof(alts[0]), "%0*ld", width, v);
			}
		} else {
			for (int c = (unsigned char)lo_s[0]; c <= (unsigned char)hi_s[0]; c += (int)step) {
				if (na == 64)
					return -1;
				alts[na][0] = (char)c;
				alts[na++][1] = 0;
			}
		}
	}
	for (int j = 0; j < na; j++) {
		size_t head = (size_t)(open - url), al = strlen(alts[j]), tl = strlen(close + 1);
		char next[PATH_MAX];
		int k;

		if (head + al + tl >= sizeof(next))
			return -1;
		memcpy(next, url, head);
		memcpy(next + head, alts[j], al);
		memcpy(next + head + al, close + 1, tl + 1);
		k = glob_expand(next, out + n, max - n, depth + 1);
		if (k < 0)
			return -1;
		n += k;
	}
	return n;
}

/* A URL as the program reads it: curl and wget take "host/path" as http. */
static void fetch_event(struct lift *L, const char *url, const char *method, bool globbing,
			const char *proto_default)
{
	enum { MAXG = 16 };
	char (*urls)[PATH_MAX] = malloc(MAXG * PATH_MAX);
	int n;

	if (!urls) {
		L->overflow = true;
		return;
	}
	n = globbing ? glob_expand(url, urls, MAXG, 0) : -2;
	if (n == -2 && strlen(url) < PATH_MAX) {
		strcpy(urls[0], url);
		n = 1;
	}
	if (n < 0)
		L->overflow = true;     /* a pattern reaching more hosts than we judge: refuse */
	for (int i = 0; i < n; i++) {
		char full[PATH_MAX + 16];
		const char *u = urls[i];

		if (!strstr(u, "://")) {
			snprintf(full, sizeof(full), "%s://%s", proto_default ? proto_default : "http", u);
			u = full;
		}
		add(L, "http", "fetch", json_pack("{s:o,s:o}", "url", pol_json_text(u), "method",
						  pol_json_text(method)));
	}
	free(urls);
}

static void lift_fetch(struct lift *L, const char *prog, const char *const *argv, int argc)
{
	bool curl = !strcmp(prog, "curl"), globbing = curl, get = false, head = false;
	const char *method = NULL, *implied = NULL, *proto_default = NULL;
	struct scan s;
	struct tok t;
	int k = 0;

	/* Two passes: the method and the globbing apply to every URL, wherever they stand. */
	for (int pass = 0; pass < 2; pass++) {
		scan_init(&s, argv, argc, 1, curl ? &curl_set : &wget_set);
		for (scan_next(&s, &t); t.k != T_END; scan_next(&s, &t)) {
			unsigned tag = t.k == T_OPT && t.o ? t.o->tag : 0;
			const char *m = method ? method : head ? "HEAD" : get ? "GET" :
					implied ? implied : "GET";

			if (pass == 0) {
				if (tag == C_METHOD && t.val)
					method = t.val;
				else if (tag == C_POST && !implied)
					implied = "POST";
				else if (tag == C_PUT)
					implied = "PUT";
				else if (tag == C_GET)
					get = true;
				else if (tag == C_HEAD)
					head = true;
				else if (tag == C_GLOBOFF)
					globbing = false;
				else if (tag == C_PROTO_DEFAULT && t.val)
					proto_default = t.val;
				continue;
			}
			if (t.k == T_ARG || (tag == C_URL && t.val)) {
				const char *u = t.k == T_ARG ? t.arg : t.val;

				if (tag == C_URL && u[0] == '@') {
					add(L, "http", "fetch", json_pack("{s:o,s:o}", "url_file",
						pol_json_text(u + 1), "method", pol_json_text(m)));
					continue;
				}
				fetch_event(L, u, m, globbing, proto_default);
				k++;
			} else if (tag == C_CONFIG || tag == C_INPUT) {
				/* URLs from a file or a wgetrc command: argv cannot show them. */
				add(L, "http", "fetch", json_pack("{s:o,s:o}", "url_file",
					pol_json_text(t.val ? t.val : ""), "method", pol_json_text(m)));
			}
		}
	}
	(void)k;
}

/* --- the entry point ----------------------------------------------------------- */

int pol_lift_exec(const char *const *argv, const char *cwd, const char *workspace,
		  struct pol_lifted *out)
{
	struct lift L = { .out = out, .cwd = cwd, .workspace = workspace };
	json_t *av = json_array();
	const char *prog;
	int argc = 0;

	memset(out, 0, sizeof(*out) * POL_MAX_LIFTED);
	if (argv)
		for (; argv[argc]; argc++)
			json_array_append_new(av, pol_json_text(argv[argc]));
	add(&L, "shell", "exec",
	    json_pack("{s:o,s:o}", "argv", av, "cwd", pol_json_text(cwd ? cwd : "")));
	if (L.n == 0)
		return 0;
	if (argc == 0)
		return L.n;
	prog = base(argv[0]);
	if (!strcmp(prog, "git") || !strncmp(prog, "git-", 4))
		lift_git(&L, prog, argv, argc);
	else if (!strcmp(prog, "npm") || !strcmp(prog, "pnpm") || !strcmp(prog, "yarn") ||
		 !strcmp(prog, "bun"))
		subcommands(&L, prog, argv, argc, 1, &npm_set, npm_sub_cb, NULL);
	else if (!strncmp(prog, "pip", 3))
		subcommands(&L, "pip", argv, argc, 1, &pip_set, pip_sub_cb, NULL);
	else if (!strncmp(prog, "python", 6))
		lift_python(&L, argv, argc);
	else if (is_publisher(prog))
		subcommands(&L, prog, argv, argc, !strcmp(prog, "cargo") && argc > 1 && argv[1][0] == '+' ? 2 : 1,
			    &cargo_set, publisher_cb, NULL);
	else if (!strcmp(prog, "curl") || !strcmp(prog, "wget"))
		lift_fetch(&L, prog, argv, argc);
	if (L.overflow) {
		/* More than we can judge, or out of memory: no event, so the exec is refused. */
		pol_lifted_free(out, L.n);
		return 0;
	}
	return L.n;
}

bool pol_lift_known(const char *prog)
{
	static const char *const exact[] = { "npm", "pnpm", "yarn", "bun", "curl", "wget", NULL };

	prog = base(prog);
	return in_list(prog, exact) || is_publisher(prog) || !strcmp(prog, "git") ||
	       !strncmp(prog, "git-", 4) || !strncmp(prog, "pip", 3) || !strncmp(prog, "python", 6);
}

void pol_lifted_free(struct pol_lifted *l, int n)
{
	for (int i = 0; i < n; i++) {
		json_decref(l[i].args);
		l[i].args = NULL;
	}
}
