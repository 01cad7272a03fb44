// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The workspace's git metadata that runs code, read-only to the session
 * (what it closes and what not: git_guard.h).
 *
 * The mounts are made with the new mount API on descriptors, never on path
 * names: each object is opened O_PATH|O_NOFOLLOW, cloned (open_tree), made
 * read-only (mount_setattr) and attached onto itself (move_mount), so a
 * symlink swapped in between the plan and the mount cannot move a bind
 * elsewhere, and a remount never lands on the mount below.  A pin is the
 * same without the read-only attribute.  Children are opened after their
 * git directory is pinned, so their binds sit on the pin, where they are
 * seen.
 *
 * The plan reads by path name: nothing of the session runs yet.  The end
 * (git_guard_end) runs when nothing of it runs any more, but on what the
 * agent left, so it opens each object from its parent's descriptor,
 * O_NOFOLLOW, and moves a symlink it meets rather than looking through it.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "git_config_strip.h"
#include "git_guard.h"
#include "util.h"

/* Modules in modules, and names with slashes: searched this deep. */
#define MODULES_DEPTH 8

#define STR_(x) #x
#define STR(x) STR_(x)

static int add(char ***v, size_t *n, const char *a, const char *b)
{
	char **nv = realloc(*v, (*n + 1) * sizeof(**v));

	if (!nv)
		return -ENOMEM;
	*v = nv;
	if (asprintf(&nv[*n], "%s%s%s", a, b ? "/" : "", b ? b : "") < 0)
		return -ENOMEM;
	(*n)++;
	return 0;
}

static int add_id(struct git_guard_id **v, size_t *n, const struct stat *st)
{
	struct git_guard_id *nv = realloc(*v, (*n + 1) * sizeof(**v));

	if (!nv)
		return -ENOMEM;
	*v = nv;
	nv[(*n)++] = (struct git_guard_id){ st->st_dev, st->st_ino };
	return 0;
}

static bool has_id(const struct git_guard_id *v, size_t n, const struct stat *st, size_t *at)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].dev == st->st_dev && v[i].ino == st->st_ino) {
			if (at)
				*at = i;
			return true;
		}
	return false;
}

static bool is_kind(const char *path, mode_t kind)
{
	struct stat st;

	return lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == kind;
}

static bool exists(const char *dir, const char *name)
{
	char p[PATH_MAX];
	struct stat st;

	return (size_t)snprintf(p, sizeof(p), "%s/%s", dir, name) < sizeof(p) && lstat(p, &st) == 0;
}

/* A directory git would take for a repository's: HEAD, and config or objects. */
static bool gitdir_like(const char *dir)
{
	return exists(dir, "HEAD") && (exists(dir, "config") || exists(dir, "objects"));
}

/* Read-only: each of NAMES in DIR that is a file or directory (never a symlink). */
static int add_ro(struct git_guard *g, const char *dir, const char *const *names)
{
	char p[PATH_MAX];
	int r;

	for (; *names; names++) {
		if ((size_t)snprintf(p, sizeof(p), "%s/%s", dir, *names) >= sizeof(p))
			return -ENAMETOOLONG;
		if (!is_kind(p, S_IFREG) && !is_kind(p, S_IFDIR))
			continue;
		r = add(&g->ro, &g->n_ro, p, NULL);
		if (r < 0)
			return r;
	}
	return 0;
}

static int plan_modules(struct git_guard *g, const char *dir, int depth);

static int plan_gitdir(struct git_guard *g, const char *dir, int depth)
{
	static const char *const own[] = { "config", "config.worktree", "hooks", "commondir", NULL };
	static const char *const linked[] = { "commondir", "gitdir", "config.worktree", NULL };
	char sub[PATH_MAX];
	struct stat st;
	size_t n_ids = g->n_dirs;
	bool *nh;
	DIR *d;
	struct dirent *de;
	int r;

	if (g->n_dirs >= GIT_GUARD_MAX_REPOS)
		return -E2BIG;
	if (lstat(dir, &st) < 0)
		return -errno;
	r = add_id(&g->dir_ids, &n_ids, &st);
	if (r < 0)
		return r;
	nh = realloc(g->had_commondir, (g->n_dirs + 1) * sizeof(*nh));
	if (!nh)
		return -ENOMEM;
	g->had_commondir = nh;
	nh[g->n_dirs] = exists(dir, "commondir");
	r = add(&g->dirs, &g->n_dirs, dir, NULL);
	if (r < 0)
		return r;
	r = add_ro(g, dir, own);
	if (r < 0)
		return r;
	/* Linked worktrees: their commondir and gitdir say where their repository is. */
	if ((size_t)snprintf(sub, sizeof(sub), "%s/worktrees", dir) >= sizeof(sub))
		return -ENAMETOOLONG;
	if (is_kind(sub, S_IFDIR) && (d = opendir(sub))) {
		while (r >= 0 && (de = readdir(d))) {
			char wt[PATH_MAX];

			if (de->d_name[0] == '.' ||
			    (size_t)snprintf(wt, sizeof(wt), "%s/%s", sub, de->d_name) >= sizeof(wt) ||
			    lstat(wt, &st) < 0 || !S_ISDIR(st.st_mode))
				continue;
			r = add_id(&g->known, &g->n_known, &st);
			if (r >= 0)
				r = add_ro(g, wt, linked);
		}
		closedir(d);
		if (r < 0)
			return r;
	}
	/* Submodules' git directories: modules/NAME. */
	if ((size_t)snprintf(sub, sizeof(sub), "%s/modules", dir) >= sizeof(sub))
		return -ENAMETOOLONG;
	return is_kind(sub, S_IFDIR) ? plan_modules(g, sub, depth + 1) : 0;
}

/*
 * The git directories below a modules directory: a submodule's NAME may
 * hold slashes (modules/libs/json), so a directory that is not one is
 * searched, to a bounded depth.
 */
static int plan_modules(struct git_guard *g, const char *dir, int depth)
{
	struct dirent *de;
	DIR *d;
	int r = 0;

	if (depth > MODULES_DEPTH || !(d = opendir(dir)))
		return 0;
	while (r >= 0 && (de = readdir(d))) {
		char m[PATH_MAX];

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    (size_t)snprintf(m, sizeof(m), "%s/%s", dir, de->d_name) >= sizeof(m) ||
		    !is_kind(m, S_IFDIR))
			continue;
		r = gitdir_like(m) ? plan_gitdir(g, m, depth) : plan_modules(g, m, depth + 1);
	}
	closedir(d);
	return r;
}

/*
 * The walk, shared by the plan and the end: every directory below the
 * workspace, without following a symlink (each opened O_NOFOLLOW from its
 * parent), across mount points (a human's git runs a repository's hooks
 * on any filesystem), skipping nothing by name.  A .git entry or a bare
 * repository (HEAD, objects/ and refs/ side by side) is handed to the
 * caller and not walked into.  Bounded: GIT_GUARD_MAX_ENTRIES entries.
 */
struct walk {
	char path[PATH_MAX];            /* the directory being read, then what is handed over */
	/* getdents64's, shared: a directory is read whole before the walk goes below it. */
	char buf[32768] __attribute__((aligned(8)));
	size_t entries;
	const char *cap;                /* what stopped the walk */
	int (*gitdir)(struct walk *w, int fd);
	int (*gitfile)(struct walk *w, int dfd);
	int (*root)(struct walk *w, size_t plen);
	void *ctx;
};

static int extend(struct walk *w, size_t plen, const char *name)
{
	size_t n = strlen(name);

	if (plen + 1 + n >= sizeof(w->path)) {
		w->path[plen] = 0;
		w->cap = "the path length (PATH_MAX)";
		return -ENAMETOOLONG;
	}
	w->path[plen] = '/';
	memcpy(w->path + plen + 1, name, n + 1);
	return (int)(plen + 1 + n);
}

/*
 * getdents64 on the descriptor, not readdir: fdopendir costs a dup, an
 * fstat and two fcntl per directory, half the walk's system calls (4,900
 * of 9,700 on a 1,600-directory tree).
 */
static int walk_dir(struct walk *w, int dfd, size_t plen, bool top)
{
	bool head = false, objects = false, refs = false, repo = false;
	_cleanup_free_ char *subs = NULL;       /* the subdirectories' names, NUL after each */
	size_t n_subs = 0, subs_len = 0, subs_cap = 0;
	ssize_t got = 0, off = 0;
	int r = 0, fd;

	while (r >= 0) {
		struct dirent64 *de;
		unsigned char type;
		struct stat st;
		int l;

		if (off >= got) {
			got = getdents64(dfd, w->buf, sizeof(w->buf));
			off = 0;
			if (got <= 0) {
				r = got < 0 ? -errno : 0;
				break;
			}
		}
		de = (struct dirent64 *)(w->buf + off);
		off += de->d_reclen;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (++w->entries > GIT_GUARD_MAX_ENTRIES) {
			w->cap = "GIT_GUARD_MAX_ENTRIES (" STR(GIT_GUARD_MAX_ENTRIES) " directory entries)";
			r = -E2BIG;
			break;
		}
		type = de->d_type;
		if (type == DT_UNKNOWN) {
			if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
				r = -errno;
				break;
			}
			type = (unsigned char)IFTODT(st.st_mode);
		}
		if (!strcmp(de->d_name, ".git") && (type == DT_DIR || type == DT_REG)) {
			repo = true;
			if ((l = extend(w, plen, ".git")) < 0) {
				r = l;
				break;
			}
			if (type == DT_REG) {
				r = w->gitfile(w, dfd);
			} else if ((fd = openat(dfd, ".git", O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
						O_CLOEXEC)) < 0) {
				r = -errno;
			} else {
				r = w->gitdir(w, fd);
				close(fd);
			}
			w->path[plen] = 0;
			continue;
		}
		if (type == DT_REG && !strcmp(de->d_name, "HEAD"))
			head = true;
		if (type != DT_DIR)
			continue;
		objects |= !strcmp(de->d_name, "objects");
		refs |= !strcmp(de->d_name, "refs");
		l = (int)strlen(de->d_name) + 1;
		if (subs_len + (size_t)l > subs_cap) {
			size_t nc = 2 * subs_cap + 256;
			char *ns = realloc(subs, nc);

			if (!ns) {
				r = -ENOMEM;
				break;
			}
			subs = ns;
			subs_cap = nc;
		}
		memcpy(subs + subs_len, de->d_name, (size_t)l);
		subs_len += (size_t)l;
		n_subs++;
	}
	if (r < 0)
		return r;
	if (!top && head && objects && refs)
		return w->gitdir(w, dfd);       /* a bare repository, at w->path */
	for (size_t o = 0; n_subs--; o += strlen(subs + o) + 1) {
		int l = extend(w, plen, subs + o);

		if (l < 0)
			return l;
		fd = openat(dfd, subs + o, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			r = -errno;
			break;
		}
		r = walk_dir(w, fd, (size_t)l, false);
		close(fd);
		if (r < 0)
			return r;       /* w->path names where */
		w->path[plen] = 0;
	}
	if (r < 0)
		return r;
	return repo || top ? w->root(w, plen) : 0;
}

static int walk(struct walk *w, const char *workspace)
{
	_cleanup_close_ int fd = open(workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	size_t n = strlen(workspace);

	if (fd < 0)
		return -errno;
	if (n >= sizeof(w->path))
		return -ENAMETOOLONG;
	memcpy(w->path, workspace, n + 1);
	return walk_dir(w, fd, n, true);
}

/* PATH relative to the workspace ("" for itself). */
static const char *below(const struct git_guard *g, const char *path)
{
	size_t n = strlen(g->workspace);

	return path[n] == '/' ? path + n + 1 : path + n;
}

/* --- the watched files ------------------------------------------------------ */

enum { W_ABSENT, W_REG, W_DIR, W_OTHER };

struct wstate {
	int dir, leaf;                  /* the directory component (W_REG: none), the file */
	struct stat dst, st;
	unsigned char sha[32];
	unsigned char *data;            /* the whole file, when small enough (the plan only) */
};

struct git_guard_watch {
	size_t root;
	const char *rel;
	struct wstate s;
};

static const char *const watched[] = { GIT_GUARD_WATCHED };

/* ROOT relative to the workspace, opened without following any symlink. */
static int open_root(int wsfd, const char *rel)
{
	struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
					   RESOLVE_BENEATH };

	int fd = *rel ? (int)syscall(SYS_openat2, wsfd, rel, &how, sizeof(how)) :
			fcntl(wsfd, F_DUPFD_CLOEXEC, 3);

	return fd < 0 ? -errno : fd;
}

/* The directory component of REL ("" for none) into COMP. */
static const char *split(const char *rel, char *comp, size_t clen)
{
	const char *slash = strchr(rel, '/');

	if (!slash) {
		comp[0] = 0;
		return rel;
	}
	snprintf(comp, clen, "%.*s", (int)(slash - rel), rel);
	return slash + 1;
}

/*
 * The state of ROOT/REL, never through a symlink: a symlink, as the
 * directory component or the file, is W_OTHER and not looked into.  *PFD
 * gets the file's directory (-1 when it is not one); with KEEP (the bytes
 * left to keep, taken from), a file up to GIT_GUARD_SAVE_MAX is kept
 * whole.  0 or -errno.
 */
static int probe(int rootfd, const char *rel, struct wstate *s, size_t *keep, int *pfd)
{
	unsigned char buf[65536];
	char comp[64];
	const char *leaf = split(rel, comp, sizeof(comp));
	_cleanup_close_ int dfd = -1, fd = -1;
	EVP_MD_CTX *md = NULL;
	size_t got = 0;
	ssize_t n;
	int r = 0;

	memset(s, 0, sizeof(*s));
	*pfd = -1;
	if (comp[0]) {
		if (fstatat(rootfd, comp, &s->dst, AT_SYMLINK_NOFOLLOW) < 0)
			return errno == ENOENT ? 0 : -errno;
		if (!S_ISDIR(s->dst.st_mode)) {
			s->dir = W_OTHER;
			return 0;
		}
		dfd = openat(rootfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	} else {
		dfd = fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
	}
	if (dfd < 0)
		return -errno;
	s->dir = W_DIR;
	if (fstatat(dfd, leaf, &s->st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno != ENOENT)
			return -errno;
		*pfd = TAKE_FD(dfd);
		return 0;
	}
	if (!S_ISREG(s->st.st_mode)) {
		s->leaf = W_OTHER;
		*pfd = TAKE_FD(dfd);
		return 0;
	}
	s->leaf = W_REG;
	fd = openat(dfd, leaf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &s->st) < 0)
		return -errno;
	if (keep && (size_t)s->st.st_size <= GIT_GUARD_SAVE_MAX &&
	    (size_t)s->st.st_size <= *keep) {
		if (!(s->data = malloc((size_t)s->st.st_size + 1)))
			return -ENOMEM;
		*keep -= (size_t)s->st.st_size;
	}
	if (!(md = EVP_MD_CTX_new()) || EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1) {
		r = -ENOMEM;
		goto out;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		if (EVP_DigestUpdate(md, buf, (size_t)n) != 1) {
			r = -EIO;
			goto out;
		}
		if (s->data && got + (size_t)n <= (size_t)s->st.st_size)
			memcpy(s->data + got, buf, (size_t)n);
		got += (size_t)n;
	}
	if (n < 0)
		r = -errno;
	else if (EVP_DigestFinal_ex(md, s->sha, NULL) != 1)
		r = -EIO;
	else if (got != (size_t)s->st.st_size)
		r = -EAGAIN;            /* it changed under the read: nothing runs at the plan or the end */
out:
	EVP_MD_CTX_free(md);
	if (r < 0) {
		free(s->data);
		s->data = NULL;
		return r;
	}
	*pfd = TAKE_FD(dfd);
	return 0;
}

static bool same_obj(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_mode == b->st_mode;
}

static bool same_leaf(const struct wstate *a, const struct wstate *b)
{
	if (a->leaf != b->leaf)
		return false;
	if (a->leaf == W_REG)
		return !memcmp(a->sha, b->sha, sizeof(a->sha)) && a->st.st_mode == b->st.st_mode;
	return a->leaf == W_ABSENT || same_obj(&a->st, &b->st);
}

/* The original back, as it was (content, mode, owner), in DFD; 0 or -errno. */
static int restore(int dfd, const char *leaf, const struct wstate *p)
{
	_cleanup_close_ int fd = openat(dfd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
					O_CLOEXEC, 0600);
	int r;

	if (fd < 0)
		return -errno;
	r = write_all(fd, p->data, (size_t)p->st.st_size);
	if (r < 0)
		return r;
	if (fchown(fd, p->st.st_uid, p->st.st_gid) < 0 || fchmod(fd, p->st.st_mode & 07777) < 0)
		return -errno;
	return 0;
}

struct end {
	const struct git_guard *g;
	void (*report)(void *ctx, const struct git_guard_held *h);
	void *ctx;
	int found;
	int wsfd;
	size_t gitdirs;                 /* git directories met (the modules' search is bounded too) */
	size_t n_seen;                  /* git directories and linked worktrees found at the end */
	struct git_guard_id *seen;
	size_t n_gitfiles;              /* new .git files, judged once every git directory is seen */
	char **gitfiles;
	size_t n_roots;
	char **roots;
};

static void say(struct end *e, enum git_guard_what what, const char *path, const char *moved,
		bool restored, const char *detail)
{
	struct git_guard_held h = { what, path, moved, restored, detail };

	e->found++;
	e->report(e->ctx, &h);
}

/* NAME + ".cordon-held-" + session. */
static void held_name(const struct git_guard *g, const char *name, char *out, size_t olen)
{
	snprintf(out, olen, "%s.cordon-held-%s", name, g->session);
}

/*
 * One watched file at the end, against P (its state at the start): a
 * symlink or file in place of its directory, or a file created or
 * changed, renamed aside; the original put back when it was kept.
 */
static void end_watch(struct end *e, int rootfd, const char *rootpath, const char *rel,
		      const struct wstate *p)
{
	char comp[64], path[PATH_MAX], moved[PATH_MAX + 96], aside[160];
	const char *leaf = split(rel, comp, sizeof(comp)), *detail = NULL;
	bool moved_ok = false, restored = false;
	_cleanup_close_ int pfd = -1;
	enum git_guard_what what;
	struct wstate c;
	int r;

	r = probe(rootfd, rel, &c, NULL, &pfd);
	snprintf(path, sizeof(path), "%s%s%s", rootpath, *rootpath ? "/" : "", rel);
	if (r < 0) {
		say(e, GIT_GUARD_INCOMPLETE, path, NULL, false, strerror(-r));
		return;
	}
	if (c.dir == W_OTHER && !(p->dir == W_OTHER && same_obj(&p->dst, &c.dst))) {
		/* The directory component, a symlink (or a file): moved, not followed. */
		snprintf(path, sizeof(path), "%s%s%s", rootpath, *rootpath ? "/" : "", comp);
		held_name(e->g, comp, aside, sizeof(aside));
		moved_ok = renameat(rootfd, comp, rootfd, aside) == 0;
		snprintf(moved, sizeof(moved), "%s%s%s", rootpath, *rootpath ? "/" : "", aside);
		c.dir = W_ABSENT;
		c.leaf = W_ABSENT;
		if (moved_ok && p->leaf == W_REG && p->data && p->dir == W_DIR &&
		    mkdirat(rootfd, comp, p->dst.st_mode & 07777) == 0 &&
		    fchownat(rootfd, comp, p->dst.st_uid, p->dst.st_gid, AT_SYMLINK_NOFOLLOW) == 0 &&
		    (pfd = openat(rootfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0)
			restored = restore(pfd, leaf, p) == 0;
		say(e, p->leaf == W_ABSENT && p->dir != W_OTHER ? GIT_GUARD_FILE_CREATED :
		    GIT_GUARD_FILE_CHANGED, path, moved_ok ? moved : NULL, restored,
		    moved_ok ? "not a directory (a symlink?): moved, not followed" :
		    "not a directory (a symlink?), and it could not be moved: remove it");
		return;
	}
	if (same_leaf(p, &c))
		return;
	what = p->leaf == W_ABSENT ? GIT_GUARD_FILE_CREATED :
	       c.leaf == W_ABSENT ? GIT_GUARD_FILE_DELETED : GIT_GUARD_FILE_CHANGED;
	if (c.leaf != W_ABSENT) {
		held_name(e->g, leaf, aside, sizeof(aside));
		moved_ok = renameat(pfd, leaf, pfd, aside) == 0;
		if (!moved_ok)
			detail = "it could not be moved aside: look at it before your tools read it";
		snprintf(moved, sizeof(moved), "%s.cordon-held-%s", path, e->g->session);
	}
	if (p->leaf == W_REG && (c.leaf == W_ABSENT || moved_ok)) {
		if (!p->data) {
			detail = "over GIT_GUARD_SAVE_MAX (or _TOTAL) at the start: not kept, not put back";
		} else {
			if (pfd < 0 && comp[0] &&
			    mkdirat(rootfd, comp, p->dst.st_mode & 07777) == 0 &&
			    fchownat(rootfd, comp, p->dst.st_uid, p->dst.st_gid, AT_SYMLINK_NOFOLLOW) == 0)
				pfd = openat(rootfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			restored = pfd >= 0 && restore(pfd, leaf, p) == 0;
			if (!restored)
				detail = "the original could not be put back";
		}
	}
	say(e, what, path, moved_ok ? moved : NULL, restored, detail);
}

/* --- git directories at the end --------------------------------------------- */

/*
 * GITDIR/cordon-held-SESSION[/SUB], made if need be and owned as GITDIR
 * is (the human takes what is in it); a symlink or file the agent put at
 * that name is removed first.  A descriptor, or -errno.
 */
/* PARENT/NAME as a directory of ours: made (owned by UID:GID), or the one there. */
static int own_dir(int parent, const char *name, uid_t uid, gid_t gid)
{
	int fd;

	if (mkdirat(parent, name, 0700) < 0 && errno != EEXIST)
		return -errno;
	fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && (errno == ELOOP || errno == ENOTDIR)) {
		/* The agent's symlink or file by that name: removed, never followed. */
		if (unlinkat(parent, name, 0) < 0 || mkdirat(parent, name, 0700) < 0)
			return -errno;
		fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0)
		return -errno;
	if (fchown(fd, uid, gid) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	return fd;
}

static int held_dir(const struct git_guard *g, int gfd, const char *sub)
{
	char name[96];
	struct stat st;
	int fd, sfd;

	if (fstat(gfd, &st) < 0)
		return -errno;
	snprintf(name, sizeof(name), "cordon-held-%s", g->session);
	fd = own_dir(gfd, name, st.st_uid, st.st_gid);
	if (fd < 0 || !sub)
		return fd;
	sfd = own_dir(fd, sub, st.st_uid, st.st_gid);
	close(fd);
	return sfd;
}

/* DFD/NAME into the held directory (SUB in it): 0 with MOVED, or -errno. */
static int hold(struct end *e, int dfd, const char *name, int gfd, const char *gpath,
		const char *sub, char *moved, size_t mlen)
{
	_cleanup_close_ int hfd = held_dir(e->g, gfd, sub);

	if (hfd < 0)
		return hfd;
	if (renameat(dfd, name, hfd, name) < 0)
		return -errno;
	snprintf(moved, mlen, "%s/cordon-held-%s/%s%s%s", gpath, e->g->session, sub ? sub : "",
		 sub ? "/" : "", name);
	return 0;
}

static void hold_say(struct end *e, enum git_guard_what what, int dfd, const char *name,
		     int gfd, const char *gpath, const char *sub, const char *detail)
{
	char path[PATH_MAX + 64], moved[PATH_MAX + 192];
	int r = hold(e, dfd, name, gfd, gpath, sub, moved, sizeof(moved));

	snprintf(path, sizeof(path), "%s/%s%s%s", gpath, sub ? sub : "", sub ? "/" : "", name);
	say(e, what, path, r == 0 ? moved : NULL, false,
	    r == 0 ? detail : "COULD NOT MOVE IT: remove it before running git there");
}

/* GITDIR/NAME (config, config.worktree) without the keys that run programs. */
static void strip_config(struct end *e, int gfd, const char *gpath, const char *name)
{
	char keys[512], tmp[128], path[PATH_MAX + 32], moved[PATH_MAX + 192], detail[600];
	_cleanup_close_ int fd = -1, nfd = -1;
	_cleanup_free_ char *in = NULL, *out = NULL;
	size_t out_len, got = 0;
	struct stat st;
	ssize_t n;
	int r, line = 0;

	fd = openat(gfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > (4 << 20)) {
		hold_say(e, GIT_GUARD_CONFIG, gfd, name, gfd, gpath, NULL,
			 "not a regular file under 4 MiB (a symlink?): held whole, not followed");
		return;
	}
	if (!(in = malloc((size_t)st.st_size + 1)))
		return;
	while (got < (size_t)st.st_size && (n = read(fd, in + got, (size_t)st.st_size - got)) > 0)
		got += (size_t)n;
	r = git_config_strip(in, got, &out, &out_len, keys, sizeof(keys), &line);
	if (r == 0)
		return;
	if (r < 0) {
		snprintf(detail, sizeof(detail), "git would not read it either (line %d): held whole",
			 line);
		hold_say(e, GIT_GUARD_CONFIG, gfd, name, gfd, gpath, NULL, detail);
		return;
	}
	snprintf(tmp, sizeof(tmp), "%s.cordon-new-%s", name, e->g->session);
	(void)unlinkat(gfd, tmp, 0);
	nfd = openat(gfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	snprintf(path, sizeof(path), "%s/%s", gpath, name);
	if (nfd < 0 || write_all(nfd, out, out_len) < 0 || fchown(nfd, st.st_uid, st.st_gid) < 0 ||
	    fchmod(nfd, st.st_mode & 07777) < 0 ||
	    hold(e, gfd, name, gfd, gpath, NULL, moved, sizeof(moved)) < 0) {
		(void)unlinkat(gfd, tmp, 0);
		snprintf(detail, sizeof(detail), "keys that run programs (%s): COULD NOT MOVE IT: "
			 "remove them before running git there", keys);
		say(e, GIT_GUARD_CONFIG, path, NULL, false, detail);
		return;
	}
	r = renameat(gfd, tmp, gfd, name);
	snprintf(detail, sizeof(detail), "dropped %s%s", keys,
		 r < 0 ? "; the copy without them could not be put in place" : "");
	say(e, GIT_GUARD_CONFIG, path, moved, r == 0, detail);
}

/* A git directory that did not exist at the start: what runs code, held aside. */
static void end_new_gitdir(struct end *e, int gfd, const char *gpath)
{
	_cleanup_close_ int hfd = openat(gfd, "hooks", O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					 O_CLOEXEC);
	_cleanup_free_ char *names = NULL;
	size_t len = 0;
	struct stat st;

	if (hfd < 0 && errno != ENOENT) {
		hold_say(e, GIT_GUARD_HOOK, gfd, "hooks", gfd, gpath, NULL,
			 "not a directory (a symlink?): held whole, not followed");
	} else if (hfd >= 0) {
		int dfd = fcntl(hfd, F_DUPFD_CLOEXEC, 3);
		DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
		struct dirent *de;

		/* Names first: the directory is not changed while it is read. */
		while (d && (de = readdir(d))) {
			size_t l = strlen(de->d_name);
			char *nn;

			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
			    (l > 7 && !strcmp(de->d_name + l - 7, ".sample")))
				continue;
			if (!(nn = realloc(names, len + l + 1)))
				break;
			names = nn;
			memcpy(names + len, de->d_name, l + 1);
			len += l + 1;
		}
		if (d)
			closedir(d);
		else if (dfd >= 0)
			close(dfd);
		for (size_t off = 0; off < len; off += strlen(names + off) + 1)
			hold_say(e, GIT_GUARD_HOOK, hfd, names + off, gfd, gpath, "hooks", NULL);
	}
	strip_config(e, gfd, gpath, "config");
	strip_config(e, gfd, gpath, "config.worktree");
	if (fstatat(gfd, "commondir", &st, AT_SYMLINK_NOFOLLOW) == 0)
		hold_say(e, GIT_GUARD_COMMONDIR, gfd, "commondir", gfd, gpath, NULL, NULL);
}

static bool seen_add(struct end *e, const struct stat *st)
{
	return add_id(&e->seen, &e->n_seen, st) == 0;
}

/* A linked worktree's directory made during the session: its commondir must be git's own. */
static void end_new_worktree(struct end *e, int wfd, const char *wpath)
{
	char buf[64];
	_cleanup_close_ int fd = openat(wfd, "commondir", O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
					O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0 || errno != ENOENT) {
		buf[n > 0 ? n : 0] = 0;
		buf[strcspn(buf, "\r\n")] = 0;
		if (strcmp(buf, "../.."))
			hold_say(e, GIT_GUARD_COMMONDIR, wfd, "commondir", wfd, wpath, NULL,
				 "not git's own ../..");
	}
	strip_config(e, wfd, wpath, "config.worktree");
}

static void end_modules(struct end *e, int dfd, const char *dpath, int depth);

/* A git directory met at the end: new, or one planned (a commondir planted in it). */
static void end_gitdir(struct end *e, int gfd, const char *gpath, int depth)
{
	const struct git_guard *g = e->g;
	char sub[PATH_MAX];
	_cleanup_close_ int wfd = -1, mfd = -1;
	struct stat st;
	size_t i;

	if (++e->gitdirs > 2 * GIT_GUARD_MAX_REPOS || fstat(gfd, &st) < 0) {
		say(e, GIT_GUARD_INCOMPLETE, gpath, NULL, false,
		    "more git directories than twice GIT_GUARD_MAX_REPOS, or one not readable: "
		    "not looked into");
		return;
	}
	(void)seen_add(e, &st);
	if (!has_id(g->dir_ids, g->n_dirs, &st, &i))
		end_new_gitdir(e, gfd, gpath);
	else if (!g->had_commondir[i] && fstatat(gfd, "commondir", &st, AT_SYMLINK_NOFOLLOW) == 0)
		hold_say(e, GIT_GUARD_COMMONDIR, gfd, "commondir", gfd, gpath, NULL, NULL);
	wfd = openat(gfd, "worktrees", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (wfd >= 0) {
		int dfd = fcntl(wfd, F_DUPFD_CLOEXEC, 3);
		DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
		struct dirent *de;

		while (d && (de = readdir(d))) {
			_cleanup_close_ int fd = -1;

			if (de->d_name[0] == '.' ||
			    (fd = openat(wfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					 O_CLOEXEC)) < 0 || fstat(fd, &st) < 0)
				continue;
			(void)seen_add(e, &st);
			snprintf(sub, sizeof(sub), "%s/worktrees/%s", gpath, de->d_name);
			if (!has_id(g->known, g->n_known, &st, NULL))
				end_new_worktree(e, fd, sub);
		}
		if (d)
			closedir(d);
		else if (dfd >= 0)
			close(dfd);
	}
	mfd = openat(gfd, "modules", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (mfd >= 0) {
		snprintf(sub, sizeof(sub), "%s/modules", gpath);
		end_modules(e, mfd, sub, depth + 1);
	}
}

static void end_modules(struct end *e, int dfd, const char *dpath, int depth)
{
	int cfd = fcntl(dfd, F_DUPFD_CLOEXEC, 3);
	DIR *d = cfd >= 0 && depth <= MODULES_DEPTH ? fdopendir(cfd) : NULL;
	struct dirent *de;

	if (!d) {
		if (cfd >= 0)
			close(cfd);
		return;
	}
	while ((de = readdir(d))) {
		_cleanup_close_ int fd = -1;
		char sub[PATH_MAX];
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    (fd = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
				 O_CLOEXEC)) < 0)
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", dpath, de->d_name);
		if (fstatat(fd, "HEAD", &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    (fstatat(fd, "config", &st, AT_SYMLINK_NOFOLLOW) == 0 ||
		     fstatat(fd, "objects", &st, AT_SYMLINK_NOFOLLOW) == 0))
			end_gitdir(e, fd, sub, depth);
		else
			end_modules(e, fd, sub, depth + 1);
	}
	closedir(d);
}

static int end_on_gitdir(struct walk *w, int fd)
{
	end_gitdir(w->ctx, fd, w->path, 0);
	return 0;
}

static int end_on_gitfile(struct walk *w, int dfd)
{
	struct end *e = w->ctx;
	struct stat st;

	if (fstatat(dfd, ".git", &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    has_id(e->g->known, e->g->n_known, &st, NULL))
		return 0;
	return add(&e->gitfiles, &e->n_gitfiles, w->path, NULL);
}

static int end_on_root(struct walk *w, size_t plen)
{
	struct end *e = w->ctx;

	(void)plen;
	return add(&e->roots, &e->n_roots, below(e->g, w->path), NULL);
}

/* A .git file made during the session: it must point at a git directory just seen. */
static void end_gitfile(struct end *e, const char *path)
{
	const char *rel = below(e->g, path);
	char dir[PATH_MAX], buf[PATH_MAX], target[2 * PATH_MAX], aside[160], moved[PATH_MAX + 160];
	_cleanup_close_ int pfd = -1, fd = -1;
	const char *t;
	struct stat st;
	ssize_t n;

	snprintf(dir, sizeof(dir), "%.*s", (int)(strlen(rel) - strlen("/.git")), rel);
	if (strlen(rel) == strlen(".git"))
		dir[0] = 0;
	pfd = open_root(e->wsfd, dir);
	if (pfd < 0) {
		say(e, GIT_GUARD_INCOMPLETE, path, NULL, false, strerror(-pfd));
		return;
	}
	fd = openat(pfd, ".git", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	buf[n > 0 ? n : 0] = 0;
	buf[strcspn(buf, "\r\n")] = 0;
	t = !strncmp(buf, "gitdir: ", 8) ? buf + 8 : NULL;
	if (t) {
		if (*t == '/')
			snprintf(target, sizeof(target), "%s", t);
		else
			snprintf(target, sizeof(target), "%.*s/%s", (int)(strlen(path) - 5), path, t);
		if (stat(target, &st) == 0 && S_ISDIR(st.st_mode) && has_id(e->seen, e->n_seen, &st, NULL))
			return;
	}
	held_name(e->g, ".git", aside, sizeof(aside));
	if (renameat(pfd, ".git", pfd, aside) == 0) {
		snprintf(moved, sizeof(moved), "%.*s/%s", (int)(strlen(path) - 5), path, aside);
		say(e, GIT_GUARD_GITFILE, path, moved, false, t ? t : "not \"gitdir: PATH\"");
	} else {
		say(e, GIT_GUARD_GITFILE, path, NULL, false,
		    "COULD NOT MOVE IT: remove it before running git there");
	}
}

/* --- the plan ----------------------------------------------------------------- */

static int plan_on_gitdir(struct walk *w, int fd)
{
	int r = plan_gitdir(w->ctx, w->path, 0);

	(void)fd;
	if (r == -E2BIG)
		w->cap = "GIT_GUARD_MAX_REPOS (" STR(GIT_GUARD_MAX_REPOS) " git directories)";
	return r;
}

/* "gitdir: PATH": the pointer itself read-only. */
static int plan_on_gitfile(struct walk *w, int dfd)
{
	struct git_guard *g = w->ctx;
	struct stat st;
	int r;

	if (g->n_dirs + g->n_known >= GIT_GUARD_MAX_REPOS) {
		w->cap = "GIT_GUARD_MAX_REPOS (" STR(GIT_GUARD_MAX_REPOS) " git directories)";
		return -E2BIG;
	}
	if (fstatat(dfd, ".git", &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	r = add_id(&g->known, &g->n_known, &st);
	return r < 0 ? r : add(&g->ro, &g->n_ro, w->path, NULL);
}

static int plan_on_root(struct walk *w, size_t plen)
{
	struct git_guard *g = w->ctx;

	(void)plen;
	return add(&g->roots, &g->n_roots, below(g, w->path), NULL);
}

static int plan_watch(struct git_guard *g)
{
	_cleanup_close_ int wsfd = open(g->workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	size_t keep = GIT_GUARD_SAVE_TOTAL;

	if (wsfd < 0)
		return -errno;
	g->watch = calloc(g->n_roots * ARRAY_SIZE(watched), sizeof(*g->watch));
	if (!g->watch)
		return -ENOMEM;
	for (size_t i = 0; i < g->n_roots; i++) {
		_cleanup_close_ int rfd = open_root(wsfd, g->roots[i]);

		if (rfd < 0)
			return rfd;
		for (size_t k = 0; k < ARRAY_SIZE(watched); k++) {
			struct git_guard_watch *wt = &g->watch[g->n_watch];
			int pfd, r;

			wt->root = i;
			wt->rel = watched[k];
			r = probe(rfd, watched[k], &wt->s, &keep, &pfd);
			if (r < 0)
				return r;
			g->n_watch++;
			if (pfd >= 0)
				close(pfd);
		}
	}
	return 0;
}

int git_guard_plan_session(const char *workspace, const char *session, struct git_guard *g,
			   char *why, size_t wlen)
{
	_cleanup_free_ struct walk *w = calloc(1, sizeof(*w));
	int r;

	memset(g, 0, sizeof(*g));
	if (!w)
		return -ENOMEM;
	if (session && (!*session || strchr(session, '/') || strlen(session) > 64))
		return -EINVAL;
	g->workspace = strdup(workspace);
	if (session)
		g->session = strdup(session);
	else if (asprintf(&g->session, "pid%d", (int)getpid()) < 0)
		g->session = NULL;
	if (!g->workspace || !g->session) {
		r = -ENOMEM;
		goto fail;
	}
	w->gitdir = plan_on_gitdir;
	w->gitfile = plan_on_gitfile;
	w->root = plan_on_root;
	w->ctx = g;
	r = walk(w, workspace);
	g->walked = w->entries;
	if (r < 0) {
		if (why && w->cap)
			snprintf(why, wlen, "%s: the workspace is over %s, so its repositories cannot "
				 "all be found; it is refused rather than half protected", w->path,
				 w->cap);
		else if (why)
			snprintf(why, wlen, "%s: %s", w->path, strerror(-r));
		goto fail;
	}
	r = plan_watch(g);
	if (r < 0) {
		if (why)
			snprintf(why, wlen, "the agent and editor files: %s", strerror(-r));
		goto fail;
	}
	return 0;
fail:
	git_guard_free(g);
	return r;
}

int git_guard_plan(const char *workspace, struct git_guard *g)
{
	return git_guard_plan_session(workspace, NULL, g, NULL, 0);
}

/* Bind PATH onto itself, read-only if asked, through descriptors only. */
static int bind_self(const char *path, bool ro)
{
	struct mount_attr attr = { .attr_set = MOUNT_ATTR_RDONLY };
	_cleanup_close_ int fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_close_ int tree = -1;

	if (fd < 0)
		return -errno;
	tree = (int)syscall(SYS_open_tree, fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	if (tree < 0)
		return -errno;
	if (ro && syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0)
		return -errno;
	if (syscall(SYS_move_mount, tree, "", fd, "",
		    MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return -errno;
	return 0;
}

int git_guard_apply(const struct git_guard *g, char *why, size_t wlen)
{
	int r;

	if (!g->n_dirs && !g->n_ro)
		return 0;
	if (unshare(CLONE_NEWNS) < 0) {
		r = -errno;
		snprintf(why, wlen, "a mount namespace for the session: %s", strerror(-r));
		return r;
	}
	/* Host mounts still reach the session; nothing made here reaches the host. */
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0) {
		r = -errno;
		snprintf(why, wlen, "making the session's mounts slaves: %s", strerror(-r));
		return r;
	}
	/*
	 * Pins first, parents before their modules, then the read-only paths:
	 * each is opened by name through the mounts made before it.
	 */
	for (size_t i = 0; i < g->n_dirs; i++)
		if ((r = bind_self(g->dirs[i], false)) < 0) {
			snprintf(why, wlen, "pinning %s: %s", g->dirs[i], strerror(-r));
			return r;
		}
	for (size_t i = 0; i < g->n_ro; i++)
		if ((r = bind_self(g->ro[i], true)) < 0) {
			snprintf(why, wlen, "making %s read-only: %s", g->ro[i], strerror(-r));
			return r;
		}
	return 0;
}

int git_guard_end(const struct git_guard *g,
		  void (*report)(void *ctx, const struct git_guard_held *h), void *ctx)
{
	_cleanup_free_ struct walk *w = calloc(1, sizeof(*w));
	struct end e = { .g = g, .report = report, .ctx = ctx, .wsfd = -1 };
	int r;

	if (!g->workspace)
		return 0;
	if (!w)
		return -ENOMEM;
	e.wsfd = open(g->workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (e.wsfd < 0)
		return -errno;
	w->gitdir = end_on_gitdir;
	w->gitfile = end_on_gitfile;
	w->root = end_on_root;
	w->ctx = &e;
	r = walk(w, g->workspace);
	if (r < 0)
		say(&e, GIT_GUARD_INCOMPLETE, w->path, NULL, false,
		    w->cap ? w->cap : strerror(-r));
	for (size_t i = 0; i < e.n_gitfiles; i++)
		end_gitfile(&e, e.gitfiles[i]);
	for (size_t i = 0; i < g->n_watch; i++) {
		const struct git_guard_watch *wt = &g->watch[i];
		const char *root = g->roots[wt->root];
		char rootpath[PATH_MAX];
		int rfd;

		snprintf(rootpath, sizeof(rootpath), "%s%s%s", g->workspace, *root ? "/" : "", root);
		rfd = open_root(e.wsfd, root);
		if (rfd < 0) {
			if (wt->s.leaf != W_ABSENT || wt->s.dir == W_OTHER) {
				char p[PATH_MAX + 64];

				snprintf(p, sizeof(p), "%s/%s", rootpath, wt->rel);
				say(&e, GIT_GUARD_FILE_DELETED, p, NULL, false,
				    "its repository's top is gone or a symlink: not put back");
			}
			continue;
		}
		end_watch(&e, rfd, rootpath, wt->rel, &wt->s);
		close(rfd);
	}
	/* A repository's top that was not one at the start: all it holds is new. */
	for (size_t i = 0; i < e.n_roots; i++) {
		static const struct wstate none_top = { .dir = W_DIR }, none = { .dir = W_ABSENT };
		char rootpath[PATH_MAX];
		bool planned = false;
		int rfd;

		for (size_t k = 0; k < g->n_roots && !planned; k++)
			planned = !strcmp(g->roots[k], e.roots[i]);
		if (planned || (rfd = open_root(e.wsfd, e.roots[i])) < 0)
			continue;
		snprintf(rootpath, sizeof(rootpath), "%s/%s", g->workspace, e.roots[i]);
		for (size_t k = 0; k < ARRAY_SIZE(watched); k++)
			end_watch(&e, rfd, rootpath, watched[k],
				  strchr(watched[k], '/') ? &none : &none_top);
		close(rfd);
	}
	for (size_t i = 0; i < e.n_gitfiles; i++)
		free(e.gitfiles[i]);
	for (size_t i = 0; i < e.n_roots; i++)
		free(e.roots[i]);
	free(e.gitfiles);
	free(e.roots);
	free(e.seen);
	close(e.wsfd);
	return e.found;
}

struct check_adapter {
	void (*report)(void *ctx, const char *path, const char *moved_to);
	void *ctx;
};

static void check_report(void *ctx, const struct git_guard_held *h)
{
	struct check_adapter *a = ctx;

	a->report(a->ctx, h->path, h->moved_to);
}

int git_guard_check(const struct git_guard *g, void (*report)(void *ctx, const char *path,
							      const char *moved_to),
		    void *ctx)
{
	struct check_adapter a = { report, ctx };

	return git_guard_end(g, check_report, &a);
}

void git_guard_free(struct git_guard *g)
{
	for (size_t i = 0; i < g->n_dirs; i++)
		free(g->dirs[i]);
	for (size_t i = 0; i < g->n_ro; i++)
		free(g->ro[i]);
	for (size_t i = 0; i < g->n_roots; i++)
		free(g->roots[i]);
	for (size_t i = 0; i < g->n_watch; i++)
		free(g->watch[i].s.data);
	free(g->dirs);
	free(g->ro);
	free(g->had_commondir);
	free(g->dir_ids);
	free(g->known);
	free(g->roots);
	free(g->watch);
	free(g->workspace);
	free(g->session);
	memset(g, 0, sizeof(*g));
}
