// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The home layer's diff (home_diff.h): the upper walked against the real
 * home, both through descriptors that never leave them.
 */
#define _GNU_SOURCE

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "home_diff.h"
#include "home_fs.h"
#include "util.h"

/* Same type, mode, owner and bytes?  Regular files and symlinks only. */
static bool same_entry(int ufd, int hfd, const char *name, const struct stat *us,
		       const struct stat *hs)
{
	_cleanup_close_ int a = -1, b = -1;
	char x[8192], y[8192];

	if ((us->st_mode ^ hs->st_mode) & (S_IFMT | 07777) || us->st_uid != hs->st_uid ||
	    us->st_gid != hs->st_gid || us->st_size != hs->st_size)
		return false;
	if (S_ISLNK(us->st_mode)) {
		ssize_t n = readlinkat(ufd, name, x, sizeof(x)), m = readlinkat(hfd, name, y, sizeof(y));

		return n >= 0 && n == m && !memcmp(x, y, (size_t)n);
	}
	if (!S_ISREG(us->st_mode))
		return false;
	a = openat(ufd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	b = openat(hfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (a < 0 || b < 0)
		return false;
	for (;;) {
		ssize_t n = read(a, x, sizeof(x)), m;

		if (n < 0)
			return false;
		if (n == 0)
			return read(b, y, 1) == 0;
		m = read(b, y, (size_t)n);
		if (m != n || memcmp(x, y, (size_t)n))
			return false;
	}
}

struct walk {
	int (*fn)(void *ctx, const struct home_change *c);
	void *ctx;
	bool names_only;        /* home_diff_count: no mode, size or link wanted */
	char rel[PATH_MAX];
};

static int emit(struct walk *w, enum home_change_kind kind, int ufd, const char *name,
		const struct stat *us, const struct stat *hs)
{
	char link[PATH_MAX];
	struct home_change c = {
		.kind = kind,
		.path = w->rel,
		.mode = kind == HOME_DELETED ? hs->st_mode : us->st_mode,
		.size = kind == HOME_DELETED ? 0 : (long long)us->st_size,
		.old_size = hs ? (long long)hs->st_size : -1,
		.store = home_is_store(w->rel),
	};

	if (kind != HOME_DELETED && S_ISLNK(us->st_mode) && !w->names_only) {
		ssize_t n = readlinkat(ufd, name, link, sizeof(link) - 1);

		if (n >= 0) {
			link[n] = 0;
			c.link = link;
		}
	}
	return w->fn(w->ctx, &c);
}

/* Append NAME to w->rel; the old length, to restore. */
static int push(struct walk *w, const char *name, size_t *old)
{
	*old = strlen(w->rel);
	if ((size_t)snprintf(w->rel + *old, sizeof(w->rel) - *old, "%s%s", *old ? "/" : "",
			     name) >= sizeof(w->rel) - *old)
		return -ENAMETOOLONG;
	return 0;
}

/* Every entry of the home directory HFD as deleted (an opaque directory's lost ones). */
static int walk_deleted(struct walk *w, int ufd, int hfd)
{
	char **names;
	size_t n;
	int r = home_fs_list_names(hfd, &names, &n);

	for (size_t i = 0; r >= 0 && i < n; i++) {
		struct stat hs, us;
		size_t old;

		if (fstatat(ufd, names[i], &us, AT_SYMLINK_NOFOLLOW) == 0 ||
		    fstatat(hfd, names[i], &hs, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if ((r = push(w, names[i], &old)) < 0)
			break;
		r = emit(w, HOME_DELETED, ufd, names[i], NULL, &hs);
		w->rel[old] = 0;
	}
	home_fs_free_names(names, n);
	return r;
}

/*
 * The layer's entry NAME (of type TYPE in its directory) into *US; false if
 * it is gone.  Below a directory the home lacks, everything is an
 * addition, and a count (names_only) needs only the type, which the
 * directory gave: no stat for a file, a link or a directory there (a
 * cache's tree of ten thousand files cost a session's end 40 ms of
 * them).  A character device may be a whiteout, and an unknown type is
 * unknown: those are asked.
 */
static bool layer_entry(const struct walk *w, int ufd, int hfd, const char *name,
			unsigned char type, struct stat *us)
{
	if (w->names_only && hfd < 0 && (type == DT_REG || type == DT_LNK || type == DT_DIR)) {
		*us = (struct stat){ .st_mode = DTTOIF(type) };
		return true;
	}
	return fstatat(ufd, name, us, AT_SYMLINK_NOFOLLOW) == 0;
}

/* HFD: the home's directory at the same place, or -1 where the home has none. */
static int walk(struct walk *w, int ufd, int hfd)
{
	struct home_name *v;
	size_t n;
	int r = home_fs_list(ufd, &v, &n);

	for (size_t i = 0; r >= 0 && i < n; i++) {
		_cleanup_close_ int uc = -1, hc = -1;
		const char *name = v[i].name;
		struct stat us, hs;
		bool have;
		size_t old;

		if (!layer_entry(w, ufd, hfd, name, v[i].type, &us))
			continue;
		if ((r = push(w, name, &old)) < 0)
			break;
		/* A store in the layer merges with nothing of the home's: the mask stops it. */
		have = hfd >= 0 && !home_is_store(w->rel) &&
		       fstatat(hfd, name, &hs, AT_SYMLINK_NOFOLLOW) == 0;
		if (home_fs_is_whiteout(&us)) {
			if (have)
				r = emit(w, HOME_DELETED, ufd, name, NULL, &hs);
		} else if (S_ISDIR(us.st_mode)) {
			bool merged = have && S_ISDIR(hs.st_mode);

			uc = openat(ufd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (uc < 0) {
				r = -errno;
			} else if (!merged) {
				r = emit(w, have ? HOME_MODIFIED : HOME_ADDED, ufd, name, &us,
					 have ? &hs : NULL);
				if (r >= 0)
					r = walk(w, uc, -1);
			} else {
				hc = openat(hfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
				if ((us.st_mode ^ hs.st_mode) & 07777 || us.st_uid != hs.st_uid ||
				    us.st_gid != hs.st_gid)
					r = emit(w, HOME_MODIFIED, ufd, name, &us, &hs);
				if (r >= 0)
					r = walk(w, uc, hc);
				if (r >= 0 && hc >= 0 && home_fs_is_opaque(uc))
					r = walk_deleted(w, uc, hc);
			}
		} else if (!have) {
			r = emit(w, HOME_ADDED, ufd, name, &us, NULL);
		} else if (!same_entry(ufd, hfd, name, &us, &hs)) {
			r = emit(w, HOME_MODIFIED, ufd, name, &us, &hs);
		}
		w->rel[old] = 0;
	}
	home_fs_free_list(v, n);
	return r;
}

static int diff(const char *layer_dir, const char *home, struct walk *w)
{
	_cleanup_close_ int layerfd = -1, ufd = -1, hfd = -1;

	layerfd = open(layer_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (layerfd < 0)
		return -errno;
	ufd = openat(layerfd, "upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (ufd < 0)
		return -errno;
	hfd = open(home, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (hfd < 0)
		return -errno;
	return walk(w, ufd, hfd);
}

int home_diff(const char *layer_dir, const char *home,
	      int (*fn)(void *ctx, const struct home_change *c), void *ctx)
{
	struct walk w = { .fn = fn, .ctx = ctx };

	return diff(layer_dir, home, &w);
}

static int count_one(void *ctx, const struct home_change *c)
{
	(void)c;
	(*(size_t *)ctx)++;
	return 0;
}

int home_diff_count(const char *layer_dir, const char *home, size_t *n)
{
	struct walk w = { .fn = count_one, .ctx = n, .names_only = true };

	*n = 0;
	return diff(layer_dir, home, &w);
}

/* ---- apply and discard --------------------------------------------------- */
