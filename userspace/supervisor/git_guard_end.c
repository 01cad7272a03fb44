// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* git_guard's end (git_guard_end.h): on descriptors, O_NOFOLLOW, after the session. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "git_config_strip.h"
#include "git_guard_end.h"
#include "util.h"

static const char *const watched[] = { GIT_GUARD_WATCHED };

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
 * DFD/NAME (DPATH/NAME) renamed NAME.cordon-held-SESSION beside itself and
 * said: a symlink or file where git expects a directory of a repository.
 */
static void aside(struct end *e, int dfd, const char *dpath, const char *name,
		  enum git_guard_what what, const char *detail)
{
	char held[NAME_MAX + 96], path[PATH_MAX + NAME_MAX + 2], moved[PATH_MAX + NAME_MAX + 98];

	held_name(e->g, name, held, sizeof(held));
	snprintf(path, sizeof(path), "%s/%s", dpath, name);
	if (renameat(dfd, name, dfd, held) == 0) {
		snprintf(moved, sizeof(moved), "%s/%s", dpath, held);
		say(e, what, path, moved, false, detail);
	} else {
		say(e, what, path, NULL, false, "COULD NOT MOVE IT: remove it before running git there");
	}
}

/* A directory of the walk that could not be read or named: said, and the walk goes on. */
static void end_skipped(struct git_guard_walk *w, int err)
{
	struct end *e = w->ctx;
	char detail[160];

	snprintf(detail, sizeof(detail), "not looked into (%s): a repository there is not checked; "
		 "look before running git below it", w->cap ? w->cap : strerror(-err));
	say(e, GIT_GUARD_INCOMPLETE, w->path, NULL, false, detail);
}

/*
 * One watched file at the end, against P (its state at the start): a
 * symlink or file in place of its directory, or a file created or
 * changed, renamed aside; the original put back when it was kept.
 */
static void end_watch(struct end *e, int rootfd, const char *rootpath, const char *rel,
		      const struct git_guard_wstate *p)
{
	char comp[64], path[PATH_MAX], moved[PATH_MAX + 96], aside[160];
	const char *leaf = git_guard_watch_split(rel, comp, sizeof(comp)), *detail = NULL;
	bool moved_ok = false, restored = false;
	_cleanup_close_ int pfd = -1;
	enum git_guard_what what;
	struct git_guard_wstate c;
	int r;

	r = git_guard_watch_probe(rootfd, rel, &c, NULL, &pfd);
	snprintf(path, sizeof(path), "%s%s%s", rootpath, *rootpath ? "/" : "", rel);
	if (r < 0) {
		say(e, GIT_GUARD_INCOMPLETE, path, NULL, false, strerror(-r));
		return;
	}
	if (c.dir == W_OTHER && !(p->dir == W_OTHER && git_guard_watch_same_obj(&p->dst, &c.dst))) {
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
			restored = git_guard_watch_restore(pfd, leaf, p) == 0;
		say(e, p->leaf == W_ABSENT && p->dir != W_OTHER ? GIT_GUARD_FILE_CREATED :
		    GIT_GUARD_FILE_CHANGED, path, moved_ok ? moved : NULL, restored,
		    moved_ok ? "not a directory (a symlink?): moved, not followed" :
		    "not a directory (a symlink?), and it could not be moved: remove it");
		return;
	}
	if (git_guard_watch_same_leaf(p, &c))
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
			restored = pfd >= 0 && git_guard_watch_restore(pfd, leaf, p) == 0;
			if (!restored)
				detail = "the original could not be put back";
		}
	}
	say(e, what, path, moved_ok ? moved : NULL, restored, detail);
}

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

/* GITDIR/hooks made during the session: each hook in it (all but *.sample) held aside. */
static void end_hooks(struct end *e, int gfd, const char *gpath)
{
	_cleanup_close_ int hfd = openat(gfd, "hooks", O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					 O_CLOEXEC);
	_cleanup_free_ char *names = NULL;
	size_t len = 0;

	if (hfd < 0 && errno != ENOENT) {
		hold_say(e, GIT_GUARD_HOOK, gfd, "hooks", gfd, gpath, NULL,
			 "not a directory (a symlink?): held whole, not followed");
	} else if (hfd >= 0) {
		int dfd = fcntl(hfd, F_DUPFD_CLOEXEC, 3);
		DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
		struct dirent *de;
		size_t count = 0;

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
			count++;
		}
		if (d)
			closedir(d);
		else if (dfd >= 0)
			close(dfd);
		/* Past git's own names, the directory whole, said once (150,000 were 150,000 records). */
		if (count > 64) {
			hold_say(e, GIT_GUARD_HOOK, gfd, "hooks", gfd, gpath, NULL,
				 "more than 64 hooks: the directory held whole");
			return;
		}
		for (size_t off = 0; off < len; off += strlen(names + off) + 1)
			hold_say(e, GIT_GUARD_HOOK, hfd, names + off, gfd, gpath, "hooks", NULL);
	}
}

/*
 * GITDIR/hooks, a symlink at the start whose text was LINK (what it leads
 * to was made read-only or listed at the plan): the same link, or
 * whatever is there instead held aside whole and the link put back.
 */
static void end_hooks_link(struct end *e, int gfd, const char *gpath, const char *link)
{
	char text[PATH_MAX], path[PATH_MAX + 8], moved[PATH_MAX + 192];
	ssize_t n = readlinkat(gfd, "hooks", text, sizeof(text) - 1);
	bool gone = n < 0 && errno == ENOENT;
	int r = 0;

	if (n >= 0) {
		text[n] = 0;
		if (!strcmp(text, link))
			return;
	}
	snprintf(path, sizeof(path), "%s/hooks", gpath);
	if (!gone)
		r = hold(e, gfd, "hooks", gfd, gpath, NULL, moved, sizeof(moved));
	if (r < 0) {
		say(e, GIT_GUARD_HOOK, path, NULL, false,
		    "its hooks symlink was replaced: COULD NOT MOVE IT: remove it before running "
		    "git there");
		return;
	}
	r = symlinkat(link, gfd, "hooks");
	say(e, GIT_GUARD_HOOK, path, gone ? NULL : moved, r == 0,
	    gone ? "its hooks symlink was removed" : "its hooks symlink was replaced");
}

static void end_pointed(struct end *e, const char *rel);

/*
 * ABS with "." and ".." folded and no "//", relative to the workspace, in
 * OUT: false when it is not below it.  Lexical: end_pointed then walks it
 * without following a symlink.
 */
static bool ws_relative(const struct git_guard *g, const char *abs, char *out, size_t olen)
{
	char buf[PATH_MAX], *save = NULL, *c;
	size_t n = 0, wl = strlen(g->workspace);

	if (snprintf(buf, sizeof(buf), "%s", abs) >= (int)sizeof(buf) || olen < 2)
		return false;
	out[0] = 0;
	for (c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (!strcmp(c, "."))
			continue;
		if (!strcmp(c, "..")) {
			char *cut = strrchr(out, '/');

			n = cut ? (size_t)(cut - out) : 0;
			out[n] = 0;
			continue;
		}
		if (n + strlen(c) + 2 > olen)
			return false;
		n += (size_t)sprintf(out + n, "/%s", c);
	}
	if (strncmp(out, g->workspace, wl) || out[wl] != '/')
		return false;
	memmove(out, out + wl + 1, strlen(out + wl + 1) + 1);
	return true;
}

/*
 * A relative core.hooksPath of the user's global configs, for a repository
 * made during the session (GPATH its git directory): what is there now at
 * its top is the agent's.
 */
static void end_global_hooks(struct end *e, const char *gpath)
{
	size_t gl = strlen(gpath);
	char abs[PATH_MAX], rel[PATH_MAX];

	for (size_t k = 0; k < e->g->n_global_hooks; k++) {
		const char *v = e->g->global_hooks[k];

		if (gl > 5 && !strcmp(gpath + gl - 5, "/.git"))
			snprintf(abs, sizeof(abs), "%.*s/%s", (int)(gl - 5), gpath, v);
		else
			snprintf(abs, sizeof(abs), "%s/%s", gpath, v);
		if (ws_relative(e->g, abs, rel, sizeof(rel)))
			end_pointed(e, rel);
	}
}

/* A git directory that did not exist at the start: what runs code, held aside. */
static void end_new_gitdir(struct end *e, int gfd, const char *gpath)
{
	struct stat st;

	end_global_hooks(e, gpath);
	end_hooks(e, gfd, gpath);
	strip_config(e, gfd, gpath, "config");
	strip_config(e, gfd, gpath, "config.worktree");
	if (fstatat(gfd, "commondir", &st, AT_SYMLINK_NOFOLLOW) == 0)
		hold_say(e, GIT_GUARD_COMMONDIR, gfd, "commondir", gfd, gpath, NULL, NULL);
}

static bool seen_add(struct end *e, const struct stat *st)
{
	return git_guard_plan_add_id(&e->seen, &e->n_seen, st) == 0;
}

/*
 * A linked worktree's directory made during the session: its commondir
 * must be git's own; without one, git takes it for a whole repository
 * (its own config and hooks), and so does this.
 */
static void end_new_worktree(struct end *e, int wfd, const char *wpath)
{
	char buf[PATH_MAX + 2];
	_cleanup_close_ int fd = openat(wfd, "commondir", O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
					O_CLOEXEC);
	/* The whole of it (git reads it all: "../.." and 58 line breaks then a path is a path). */
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd < 0 && errno == ENOENT) {
		end_new_gitdir(e, wfd, wpath);
		return;
	}
	/* As git reads it: only the end's line breaks go ("../..\nfoo" is a path elsewhere). */
	buf[n > 0 ? n : 0] = 0;
	for (n = (ssize_t)strlen(buf); n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'); n--)
		buf[n - 1] = 0;
	if (strcmp(buf, "../..")) {
		/* Without it, the directory is a repository of its own to git: taken as one. */
		hold_say(e, GIT_GUARD_COMMONDIR, wfd, "commondir", wfd, wpath, NULL,
			 "not git's own ../..");
		end_new_gitdir(e, wfd, wpath);
		return;
	}
	strip_config(e, wfd, wpath, "config.worktree");
}

static void end_modules(struct end *e, int dfd, const char *dpath, int depth);

/*
 * A git directory of the start (g->dirs[I]): what was not there to be made
 * read-only then, and is now, is taken as in a new one (git_guard_plan.h,
 * GIT_GUARD_HAD_*): a commondir, a config or config.worktree (stripped),
 * hooks (held aside), a hooks symlink changed.
 */
static void end_old_gitdir(struct end *e, int gfd, const char *gpath, size_t i)
{
	unsigned had = e->g->had[i];
	struct stat st;

	if (!(had & GIT_GUARD_HAD_COMMONDIR) && fstatat(gfd, "commondir", &st, AT_SYMLINK_NOFOLLOW) == 0)
		hold_say(e, GIT_GUARD_COMMONDIR, gfd, "commondir", gfd, gpath, NULL, NULL);
	if (!(had & GIT_GUARD_HAD_CONFIG))
		strip_config(e, gfd, gpath, "config");
	if (!(had & GIT_GUARD_HAD_CONFIG_WT))
		strip_config(e, gfd, gpath, "config.worktree");
	if (had & GIT_GUARD_HAD_HOOKS)
		return;
	if (e->g->hooks_link[i])
		end_hooks_link(e, gfd, gpath, e->g->hooks_link[i]);
	else
		end_hooks(e, gfd, gpath);
}

/* A git directory met at the end: new, or one planned (what was not there then). */
static void end_gitdir(struct end *e, int gfd, const char *gpath, int depth)
{
	const struct git_guard *g = e->g;
	char sub[PATH_MAX];
	_cleanup_close_ int wfd = -1, mfd = -1;
	struct stat st;
	size_t i;

	if (fstat(gfd, &st) < 0 ||
	    (!git_guard_plan_has_id(e->seen, e->n_seen, &st, NULL) &&
	     ++e->gitdirs > 2 * GIT_GUARD_MAX_REPOS)) {
		say(e, GIT_GUARD_INCOMPLETE, gpath, NULL, false,
		    "more git directories than twice GIT_GUARD_MAX_REPOS, or one not readable: "
		    "not looked into");
		return;
	}
	/* Met already: a module or linked worktree of a repository, the walk going inside it. */
	if (git_guard_plan_has_id(e->seen, e->n_seen, &st, NULL))
		return;
	(void)seen_add(e, &st);
	if (!git_guard_plan_has_id(g->dir_ids, g->n_dirs, &st, &i))
		end_new_gitdir(e, gfd, gpath);
	else
		end_old_gitdir(e, gfd, gpath, i);
	wfd = openat(gfd, "worktrees", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (wfd < 0 && (errno == ELOOP || errno == ENOTDIR))
		aside(e, gfd, gpath, "worktrees", GIT_GUARD_REDIRECT,
		      "a symlink or file in place of the worktrees directory: held, not followed");
	if (wfd >= 0) {
		int dfd = fcntl(wfd, F_DUPFD_CLOEXEC, 3);
		DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
		struct dirent *de;

		while (d && (de = readdir(d))) {
			_cleanup_close_ int fd = -1;

			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			snprintf(sub, sizeof(sub), "%s/worktrees", gpath);
			fd = openat(wfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0 && (errno == ELOOP || errno == ENOTDIR) &&
			    !strstr(de->d_name, ".cordon-held-"))
				aside(e, wfd, sub, de->d_name, GIT_GUARD_REDIRECT,
				      "a symlink or file in place of a linked worktree: held, not followed");
			if (fd < 0 || fstat(fd, &st) < 0)
				continue;
			(void)seen_add(e, &st);
			snprintf(sub, sizeof(sub), "%s/worktrees/%s", gpath, de->d_name);
			if (!git_guard_plan_has_id(g->known, g->n_known, &st, &i))
				end_new_worktree(e, fd, sub);
			else if (!(g->known_had[i] & GIT_GUARD_HAD_CONFIG_WT))
				strip_config(e, fd, sub, "config.worktree");
		}
		if (d)
			closedir(d);
		else if (dfd >= 0)
			close(dfd);
	}
	mfd = openat(gfd, "modules", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (mfd < 0 && (errno == ELOOP || errno == ENOTDIR))
		aside(e, gfd, gpath, "modules", GIT_GUARD_REDIRECT,
		      "a symlink or file in place of the submodules' directory: held, not followed");
	if (mfd >= 0) {
		snprintf(sub, sizeof(sub), "%s/modules", gpath);
		end_modules(e, mfd, sub, depth + 1);
	}
}

static void end_modules(struct end *e, int dfd, const char *dpath, int depth)
{
	int cfd = fcntl(dfd, F_DUPFD_CLOEXEC, 3);
	DIR *d = cfd >= 0 && depth <= GIT_GUARD_MODULES_DEPTH ? fdopendir(cfd) : NULL;
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

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		fd = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		/* A symlink among the modules: git would follow it to a git directory elsewhere. */
		if (fd < 0 && errno == ELOOP && !strstr(de->d_name, ".cordon-held-"))
			aside(e, dfd, dpath, de->d_name, GIT_GUARD_REDIRECT,
			      "a symlink among the submodules' git directories: held, not followed");
		if (fd < 0)
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", dpath, de->d_name);
		if (fstatat(fd, "HEAD", &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    (fstatat(fd, "config", &st, AT_SYMLINK_NOFOLLOW) == 0 ||
		     fstatat(fd, "objects", &st, AT_SYMLINK_NOFOLLOW) == 0 ||
		     fstatat(fd, "commondir", &st, AT_SYMLINK_NOFOLLOW) == 0))
			end_gitdir(e, fd, sub, depth);
		else
			end_modules(e, fd, sub, depth + 1);
	}
	closedir(d);
}

static int end_on_gitdir(struct git_guard_walk *w, int fd)
{
	end_gitdir(w->ctx, fd, w->path, 0);
	return 0;
}

static int end_on_gitfile(struct git_guard_walk *w, int dfd)
{
	struct end *e = w->ctx;
	struct stat st;

	if (fstatat(dfd, ".git", &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    git_guard_plan_has_id(e->g->known, e->g->n_known, &st, NULL))
		return 0;
	return git_guard_plan_add(&e->gitfiles, &e->n_gitfiles, w->path, NULL);
}

static int end_on_root(struct git_guard_walk *w, size_t plen)
{
	struct end *e = w->ctx;

	(void)plen;
	return git_guard_plan_add(&e->roots, &e->n_roots, git_guard_plan_below(e->g, w->path), NULL);
}

/* A .git file made during the session: it must point at a git directory just seen. */
static void end_gitfile(struct end *e, const char *path)
{
	const char *rel = git_guard_plan_below(e->g, path);
	char dir[PATH_MAX], buf[PATH_MAX], target[2 * PATH_MAX], aside[160], moved[PATH_MAX + 160];
	_cleanup_close_ int pfd = -1, fd = -1;
	const char *t;
	struct stat st;
	ssize_t n;

	snprintf(dir, sizeof(dir), "%.*s", (int)(strlen(rel) - strlen("/.git")), rel);
	if (strlen(rel) == strlen(".git"))
		dir[0] = 0;
	pfd = git_guard_watch_open_root(e->wsfd, dir);
	if (pfd < 0) {
		say(e, GIT_GUARD_INCOMPLETE, path, NULL, false, strerror(-pfd));
		return;
	}
	fd = openat(pfd, ".git", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	buf[n > 0 ? n : 0] = 0;
	/* As git reads it: only the end's line breaks go; one inside is refused (held). */
	for (n = (ssize_t)strlen(buf); n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'); n--)
		buf[n - 1] = 0;
	t = !strncmp(buf, "gitdir: ", 8) && !strpbrk(buf, "\r\n") ? buf + 8 : NULL;
	if (t) {
		if (*t == '/')
			snprintf(target, sizeof(target), "%s", t);
		else
			snprintf(target, sizeof(target), "%.*s/%s", (int)(strlen(path) - 5), path, t);
		if (stat(target, &st) == 0 && S_ISDIR(st.st_mode) &&
		    git_guard_plan_has_id(e->seen, e->n_seen, &st, NULL))
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

/*
 * REL (relative to the workspace), where a config or a hooks link pointed
 * at nothing at the start (git_guard_point.h): whatever is there now held
 * aside, renamed NAME.cordon-held-SESSION; so is a symlink or file the
 * agent put in place of a directory on the way (git would follow it).
 */
static void end_pointed(struct end *e, const char *rel)
{
	char comp[NAME_MAX + 1], aside[NAME_MAX + 96], path[PATH_MAX], moved[PATH_MAX + 96];
	_cleanup_close_ int dfd = fcntl(e->wsfd, F_DUPFD_CLOEXEC, 3);
	const char *p = rel;

	snprintf(path, sizeof(path), "%s", e->g->workspace);
	while (dfd >= 0 && *p) {
		size_t l = strcspn(p, "/");
		struct stat st;
		int next;

		if (l > NAME_MAX)
			return;
		memcpy(comp, p, l);
		comp[l] = 0;
		p += l + (p[l] == '/');
		if (strlen(path) + l + 2 < sizeof(path))
			strcat(strcat(path, "/"), comp);
		if (fstatat(dfd, comp, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return;         /* nothing there */
		if (*p && S_ISDIR(st.st_mode)) {
			next = openat(dfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			close(dfd);
			dfd = next;
			continue;
		}
		held_name(e->g, comp, aside, sizeof(aside));
		if (renameat(dfd, comp, dfd, aside) == 0) {
			snprintf(moved, sizeof(moved), "%.*s%s", (int)(strlen(path) - l), path, aside);
			say(e, GIT_GUARD_POINTED, path, moved, false,
			    *p ? "a symlink or file where a repository's config or hooks link points "
				 "through a directory" :
				 "made where a repository's config or hooks link points");
		} else {
			say(e, GIT_GUARD_POINTED, path, NULL, false,
			    "COULD NOT MOVE IT: remove it before running git there");
		}
		return;
	}
}

int git_guard_end(const struct git_guard *g,
		  void (*report)(void *ctx, const struct git_guard_held *h), void *ctx)
{
	_cleanup_free_ struct git_guard_walk *w = calloc(1, sizeof(*w));
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
	w->skipped = end_skipped;
	w->into_gitdirs = true;
	/* Past the plan's cap, not unbounded: an agent's millions of files end it, said. */
	w->max_entries = 20 * (size_t)GIT_GUARD_MAX_ENTRIES;
	w->ctx = &e;
	r = git_guard_walk(w, g->workspace);
	if (r < 0) {
		char detail[256];

		snprintf(detail, sizeof(detail), "the walk stopped here (%s): a repository in what "
			 "it had not reached is not checked; look before running git in the workspace",
			 w->cap ? w->cap : strerror(-r));
		say(&e, GIT_GUARD_INCOMPLETE, w->path, NULL, false, detail);
	}
	for (size_t i = 0; i < e.n_gitfiles; i++)
		end_gitfile(&e, e.gitfiles[i]);
	for (size_t i = 0; i < g->n_pointed; i++)
		end_pointed(&e, g->pointed[i]);
	for (size_t i = 0; i < g->n_watch; i++) {
		const struct git_guard_watch *wt = &g->watch[i];
		const char *root = g->roots[wt->root];
		char rootpath[PATH_MAX];
		int rfd;

		snprintf(rootpath, sizeof(rootpath), "%s%s%s", g->workspace, *root ? "/" : "", root);
		rfd = git_guard_watch_open_root(e.wsfd, root);
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
		static const struct git_guard_wstate none_top = { .dir = W_DIR }, none = { .dir = W_ABSENT };
		char rootpath[PATH_MAX];
		bool planned = false;
		int rfd;

		for (size_t k = 0; k < g->n_roots && !planned; k++)
			planned = !strcmp(g->roots[k], e.roots[i]);
		if (planned || (rfd = git_guard_watch_open_root(e.wsfd, e.roots[i])) < 0)
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
