// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The policy compiled for the kernel floor: tables of rule roots (paths the
 * loader resolves to inodes) and direct network rules (for cgroup-bpf).
 *
 * Glob components are expanded here (as glob(3) would), against the filesystem as
 * it is when the session starts: the kernel matches objects, and only
 * existing objects have inodes.  A "**" component walks the tree below
 * its literal prefix (expand_stars), so ${WORKSPACE}/ "**" /.env reaches
 * the kernel as every .env the workspace holds at start.
 *
 * What this cannot close: a path created later that would match a pattern
 * (a new /home/NEWUSER/.ssh, a .env the host writes into the workspace
 * while the session runs) is not in the table, so the floor does not
 * refuse it; what covers it: the userspace evaluator matches it by pattern
 * (the supervisor's execs, the MCP proxy's path arguments, `policy
 * explain`), in the fallback a new entry of a directory split around a
 * denied path gets only that directory's own rights, and cordon
 * re-compiles at every session start.  A file the agent itself creates at
 * such a name holds only what the agent wrote.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <limits.h>
#include "policy.h"
#include "util.h"

/*
 * Directory listings, read once per compilation: the invariants alone glob
 * /dev eleven times (/dev/sd*, /dev/vd*, ...) and /home once per credential
 * store, and glob(3) would list those directories again each time (half a
 * millisecond of every session start).
 */
struct listing {
	char *dir;
	char **names;
	size_t n;
	int err;
};

struct lcache {
	struct listing *v;
	size_t n, cap;
	size_t walked;          /* directories a "**" walk entered, this compilation */
};

static void lcache_free(struct lcache *lc)
{
	for (size_t i = 0; i < lc->n; i++) {
		for (size_t j = 0; j < lc->v[i].n; j++)
			free(lc->v[i].names[j]);
		free(lc->v[i].names);
		free(lc->v[i].dir);
	}
	free(lc->v);
}

static int read_listing(struct listing *l)
{
	DIR *d = opendir(l->dir[0] ? l->dir : "/");
	struct dirent *de;
	size_t cap = 0;

	if (!d) {
		l->err = -errno;
		return 0;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (l->n == cap) {
			size_t nc = cap ? cap * 2 : 32;
			char **nv = realloc(l->names, nc * sizeof(*nv));

			if (!nv)
				goto enomem;
			l->names = nv;
			cap = nc;
		}
		l->names[l->n] = strdup(de->d_name);
		if (!l->names[l->n])
			goto enomem;
		l->n++;
	}
	closedir(d);
	return 0;
enomem:
	closedir(d);
	return -ENOMEM;
}

/* The entries of `dir` ("" is the root), listed at most once. */
static int lcache_get(struct lcache *lc, const char *dir, const struct listing **out)
{
	struct listing *l;
	int r;

	for (size_t i = 0; i < lc->n; i++)
		if (!strcmp(lc->v[i].dir, dir)) {
			*out = &lc->v[i];
			return 0;
		}
	if (lc->n == lc->cap) {
		size_t nc = lc->cap ? lc->cap * 2 : 8;
		struct listing *nv = realloc(lc->v, nc * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		lc->v = nv;
		lc->cap = nc;
	}
	l = &lc->v[lc->n];
	*l = (struct listing){ .dir = strdup(dir) };
	if (!l->dir)
		return -ENOMEM;
	lc->n++;
	r = read_listing(l);
	*out = l;
	return r;
}

static bool magic(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] == '*' || s[i] == '?' || s[i] == '[')
			return true;
	return false;
}

static int expand(struct lcache *lc, const char *done, const char *rest,
		  struct pol_fs_entry *e, pol_fs_entry_fn fn, void *ctx, int depth);

/*
 * A "**" component: `rest` (after it) matched in `dir` itself and in every
 * directory below it, as the evaluator reads "**" (zero or more components,
 * dot names included).  Symlinks are not followed: the evaluator judges a
 * canonical path, so what a link reaches is matched where it really is.
 *
 * The walk is bounded (POL_STARSTAR_MAX_DIRS directories in one
 * compilation, 64 levels): past it the compilation fails with -EOVERFLOW
 * (pol_compile_strerror says which) and the session refuses to start,
 * since a "**" deny expanded over half a tree would be weaker than it reads.
 */
static int expand_stars(struct lcache *lc, const char *dir, const char *rest,
			struct pol_fs_entry *e, pol_fs_entry_fn fn, void *ctx, int depth)
{
	char child[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int r;

	/* Two "**" in a row are one. */
	while (rest[0] == '/' && rest[1] == '*' && rest[2] == '*' && (rest[3] == '/' || !rest[3]))
		rest += 3;
	while (*rest == '/')
		rest++;
	if (!*rest) {
		/* A trailing "**": the directory and everything below, which its entry is. */
		e->path = dir[0] ? dir : "/";
		return fn(ctx, e);
	}
	rest--;                 /* keep the '/' expand() joins with */
	if (depth > 64 || ++lc->walked > POL_STARSTAR_MAX_DIRS)
		return -EOVERFLOW;
	r = expand(lc, dir, rest, e, fn, ctx, depth);  /* no directory taken */
	if (r < 0)
		return r;
	d = opendir(dir[0] ? dir : "/");
	if (!d)
		return 0;       /* unreadable or gone: nothing there to expand */
	while ((de = readdir(d))) {
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
			continue;
		if ((size_t)snprintf(child, sizeof(child), "%s/%s", dir, de->d_name) >= sizeof(child))
			continue;
		if (de->d_type == DT_UNKNOWN &&
		    (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		     !S_ISDIR(st.st_mode)))
			continue;
		r = expand_stars(lc, child, rest, e, fn, ctx, depth + 1);
		if (r < 0)
			break;
	}
	closedir(d);
	return r < 0 ? r : 0;
}

/*
 * glob(3) for absolute patterns, as the compiler used it (GLOB_NOSORT, no
 * braces or tilde; a wildcard does not match a leading dot; a literal tail
 * must exist, as lstat sees it), over cached listings.  `done` is the
 * expanded prefix (no trailing slash), `rest` the pattern left ("/a/b*").
 */
static int expand(struct lcache *lc, const char *done, const char *rest,
		  struct pol_fs_entry *e, pol_fs_entry_fn fn, void *ctx, int depth)
{
	const char *comp, *end;
	const struct listing *l;
	char path[PATH_MAX], name[NAME_MAX + 1];
	struct stat st;
	size_t li;
	int r;

	if (depth > 64)
		return -ELOOP;
	/* Literal components up to the first with a wildcard join `done` as they are. */
	comp = rest;
	for (;;) {
		while (*comp == '/')
			comp++;
		end = strchrnul(comp, '/');
		if (!*comp || magic(comp, (size_t)(end - comp)))
			break;
		comp = end;
	}
	if (!*comp) {
		if ((size_t)snprintf(path, sizeof(path), "%s%s", done, rest) >= sizeof(path))
			return 0;
		if (!path[0] || fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return 0;
		e->path = path;
		return fn(ctx, e);
	}
	if ((size_t)(end - comp) > NAME_MAX)
		return 0;
	{
		char dir[PATH_MAX];
		size_t dl = (size_t)(comp - rest);

		while (dl > 0 && rest[dl - 1] == '/')
			dl--;
		if ((size_t)snprintf(dir, sizeof(dir), "%s%.*s", done, (int)dl, rest) >= sizeof(dir))
			return 0;
		if (end - comp == 2 && comp[0] == '*' && comp[1] == '*')
			return expand_stars(lc, dir, end, e, fn, ctx, depth);
		r = lcache_get(lc, dir, &l);
		if (r < 0)
			return r;
		/*
		 * By index, not by pointer: the recursion below may add listings
		 * and move the cache's array (a pointer kept across it was read
		 * after the realloc: a crash in make test, 1 run in 6).
		 */
		li = (size_t)(l - lc->v);
		memcpy(name, comp, (size_t)(end - comp));
		name[end - comp] = 0;
		for (size_t i = 0; i < lc->v[li].n; i++) {
			l = &lc->v[li];
			if (fnmatch(name, l->names[i], FNM_PERIOD) != 0)
				continue;
			if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, l->names[i]) >= sizeof(path))
				continue;
			if (!*end) {
				e->path = path;
				r = fn(ctx, e);
			} else {
				r = expand(lc, path, end, e, fn, ctx, depth + 1);
			}
			if (r < 0)
				return r;
		}
	}
	return 0;
}

struct link_filter {
	pol_fs_entry_fn fn;
	void *ctx;
};

/*
 * An expansion's match grants only where it really is.  Attack: the agent
 * plants ws/x/public -> /anywhere in one session; in the next, an allow of
 * ${WORKSPACE}/ "**" /public matched the link, and the floors' tables (which
 * open and stat a path following links) granted /anywhere.  The evaluator
 * judges canonical paths, where the link's target matches no pattern, so a
 * match whose canonical path is another (a link in any component, or a
 * dangling one) keeps its denials and escalations (the consumers also deny
 * the target: stricter, never weaker) and loses its allow.  What it cannot
 * close: a link swapped in between this check and a consumer's open, by a
 * task already running as the agent while a session starts.
 */
static int filter_links(void *ctx, const struct pol_fs_entry *e)
{
	const struct link_filter *f = ctx;
	struct pol_fs_entry c = *e;
	char real[PATH_MAX];

	if (!e->allow || (realpath(e->path, real) && !strcmp(real, e->path)))
		return f->fn(f->ctx, e);
	c.allow = 0;
	return c.deny || c.escalate ? f->fn(f->ctx, &c) : 0;
}

static int emit_paths(struct lcache *lc, const char *pattern, struct pol_fs_entry *e,
		      pol_fs_entry_fn fn, void *ctx)
{
	struct link_filter f = { .fn = fn, .ctx = ctx };

	if (!strpbrk(pattern, "*?[")) {
		e->path = pattern;
		return fn(ctx, e);
	}
	e->canonical = false;   /* an expansion's components may be symlinks */
	if (pattern[0] != '/')
		return 0;       /* the parser admits absolute paths only */
	return expand(lc, "", pattern, e, filter_links, &f, 0);
}

int pol_compile_fs(const struct policy *p, pol_fs_entry_fn fn, void *ctx)
{
	const char *home = pol_vars_get(&p->vars, "HOME");
	struct lcache lc = { 0 };
	struct pol_canon_memo memo = { 0 };
	char pat[PATH_MAX], canon[PATH_MAX];
	int r = 0;

	for (size_t i = 0; i < p->n_rules; i++) {
		const struct pol_rule *ru = &p->rules[i];
		struct pol_fs_entry e = { .rule_id = ru->id };

		if (ru->kind != POL_FS)
			continue;
		switch (ru->decision) {
		case CORDON_ALLOW:
			e.allow = ru->fs.rights;
			break;
		case CORDON_ESCALATE:
			e.escalate = ru->fs.rights;
			break;
		default:
			e.deny = ru->fs.rights;
			break;
		}
		for (size_t j = 0; j < ru->fs.n_paths; j++) {
			e.canonical = true;     /* the parser resolved literal paths */
			r = emit_paths(&lc, ru->fs.paths[j], &e, fn, ctx);
			if (r < 0)
				goto out;
		}
	}
	for (const struct pol_invariant *inv = pol_invariants(); inv->id; inv++) {
		struct pol_fs_entry e = { .deny = inv->denied, .rule_id = POL_RULE_INVARIANT,
					  .invariant = inv->id,
					  .protected_object = inv->denied == CORDON_FS_ALL };

		if (!strncmp(inv->pattern, "${HOME}", 7)) {
			if (!home || home[0] != '/')
				continue;
			if ((size_t)snprintf(pat, sizeof(pat), "%s%s", home, inv->pattern + 7) >= sizeof(pat))
				continue;
		} else {
			snprintf(pat, sizeof(pat), "%s", inv->pattern);
		}
		/*
		 * A literal invariant is resolved here, through the memo (one
		 * lstat per path once its directory is known), so its consumers
		 * need not resolve it again; a glob's expansions are not.
		 */
		if (!strpbrk(pat, "*?[") &&
		    pol_canon_path_memo(&memo, pat, canon, sizeof(canon)) == 0) {
			snprintf(pat, sizeof(pat), "%s", canon);
			e.canonical = true;
		}
		r = emit_paths(&lc, pat, &e, fn, ctx);
		if (r < 0)
			goto out;
	}
	for (size_t i = 0; i < p->n_protected; i++) {
		struct pol_fs_entry e = { .deny = CORDON_FS_WRITE | CORDON_FS_CREATE |
					  CORDON_FS_DELETE | CORDON_FS_CHMOD,
					  .rule_id = POL_RULE_INVARIANT, .invariant = "cordon-self",
					  .path = p->protected[i], .canonical = true };
		r = fn(ctx, &e);
		if (r < 0)
			goto out;
	}
	r = 0;
out:
	lcache_free(&lc);
	pol_canon_memo_free(&memo);
	return r;
}

int pol_compile_net(const struct policy *p, pol_net_entry_fn fn, void *ctx)
{
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct pol_rule *ru = &p->rules[i];

		if (ru->kind != POL_NET || ru->net.via != POL_VIA_DIRECT)
			continue;
		for (size_t h = 0; h < ru->net.n_hosts; h++) {
			const struct pol_host *ho = &ru->net.hosts[h];
			struct pol_net_entry e = { .decision = ru->decision, .rule_id = ru->id };
			size_t np = ru->net.n_ports ? ru->net.n_ports : 1;

			if (ho->kind != POL_HOST_CIDR4 && ho->kind != POL_HOST_CIDR6)
				continue;
			e.family = ho->kind == POL_HOST_CIDR4 ? 4 : 6;
			memcpy(e.addr, ho->addr, 16);
			e.prefix = ho->prefix;
			for (size_t k = 0; k < np; k++) {
				int r;

				e.port_lo = ru->net.n_ports ? ru->net.ports[k].lo : 1;
				e.port_hi = ru->net.n_ports ? ru->net.ports[k].hi : 65535;
				r = fn(ctx, &e);
				if (r < 0)
					return r;
			}
		}
	}
	return 0;
}

const char *pol_compile_strerror(int r)
{
	if (r == -EOVERFLOW)
		return "a \"**\" pattern reaches more than 100,000 directories or 64 levels "
		       "(name a narrower directory before it)";
	return strerror(-r);
}
