// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Apply and discard of the home layer (home_apply.h): as the home's owner,
 * through openat2 that never follows a symlink on either side.
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

#include "home_apply.h"
#include "home_fs.h"
#include "policy.h"
#include "util.h"

/* PATH relative to HOME: "a/b", no "." or ".." component, no empty one. */
static int relative(const char *home, const char *path, char *out, size_t len)
{
	size_t hl = strlen(home), n = 0;
	const char *p = path;

	while (hl > 1 && home[hl - 1] == '/')
		hl--;
	if (path[0] == '/') {
		if (strncmp(path, home, hl) || path[hl] != '/')
			return -EXDEV;
		p = path + hl;
	}
	while (*p) {
		size_t c;

		while (*p == '/')
			p++;
		c = strcspn(p, "/");
		if (!c)
			break;
		if ((c == 1 && p[0] == '.') || (c == 2 && p[0] == '.' && p[1] == '.'))
			return -EINVAL;
		if (n + c + 2 > len)
			return -ENAMETOOLONG;
		if (n)
			out[n++] = '/';
		memcpy(out + n, p, c);
		n += c;
		p += c;
	}
	out[n] = 0;
	return n ? 0 : -EINVAL;
}

/*
 * A store below REL that the layer would carry into the home: anything at
 * the store's name, or a symlink on its way there.  The store's path, or NULL.
 */
static const char *store_below(int ufd, const char *rel)
{
	for (const char *const *s = pol_credential_stores(); *s; s++) {
		char sub[PATH_MAX];
		const char *p = *s;
		size_t len = 0;

		if (!home_fs_path_within(*s, rel))
			continue;
		for (;;) {
			struct stat st;
			size_t n = strcspn(p, "/");

			len += n;
			snprintf(sub, sizeof(sub), "%.*s", (int)len, *s);
			if (fstatat(ufd, sub, &st, AT_SYMLINK_NOFOLLOW) < 0)
				break;
			if (!p[n] || S_ISLNK(st.st_mode))
				return *s;
			if (!S_ISDIR(st.st_mode))
				break;
			p += n + 1;
			len++;
		}
	}
	return NULL;
}

static int copy_bytes(int from, int to)
{
	char buf[65536];
	ssize_t n;
	int r;

	while ((n = read(from, buf, sizeof(buf))) > 0)
		if ((r = write_all(to, buf, (size_t)n)) < 0)
			return r;
	return n < 0 ? -errno : 0;
}

/* NAME from the layer's UPAR into the home's HPAR, replacing what is there. */
static int apply_entry(int upar, int hpar, const char *name);

static int apply_dir(int upar, int hpar, const char *name, const struct stat *us)
{
	_cleanup_close_ int uc = -1, hc = -1;
	struct stat hs;
	char **names;
	size_t n;
	int r;

	if (fstatat(hpar, name, &hs, AT_SYMLINK_NOFOLLOW) == 0) {
		if (!S_ISDIR(hs.st_mode))
			return -ENOTDIR;
	} else if (errno != ENOENT || mkdirat(hpar, name, us->st_mode & 0777) < 0) {
		return -errno;
	}
	uc = home_fs_open_beneath(upar, name, O_RDONLY | O_DIRECTORY);
	if (uc < 0)
		return uc;
	hc = home_fs_open_beneath(hpar, name, O_RDONLY | O_DIRECTORY);
	if (hc < 0)
		return hc;
	if ((r = home_fs_list_names(uc, &names, &n)) < 0)
		return r;
	for (size_t i = 0; r >= 0 && i < n; i++)
		r = apply_entry(uc, hc, names[i]);
	home_fs_free_names(names, n);
	if (r < 0)
		return r;
	/* Opaque: what the home had here and the layer does not is gone. */
	if (home_fs_is_opaque(uc)) {
		if ((r = home_fs_list_names(hc, &names, &n)) < 0)
			return r;
		for (size_t i = 0; r >= 0 && i < n; i++) {
			struct stat st;

			if (fstatat(uc, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
				r = home_fs_rm_rf_at(hc, names[i]);
		}
		home_fs_free_names(names, n);
		if (r < 0)
			return r;
	}
	if (fchmod(hc, us->st_mode & 0777) < 0)
		return -errno;
	if (unlinkat(upar, name, AT_REMOVEDIR) < 0 && errno != ENOTEMPTY && errno != EEXIST)
		return -errno;
	return 0;
}

static int apply_entry(int upar, int hpar, const char *name)
{
	char tmp[NAME_MAX + 1], target[PATH_MAX];
	_cleanup_close_ int from = -1, to = -1;
	struct stat us, hs;
	ssize_t len;
	int r;

	if (fstatat(upar, name, &us, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (home_fs_is_whiteout(&us)) {
		if ((r = home_fs_rm_rf_at(hpar, name)) < 0)
			return r;
		return unlinkat(upar, name, 0) < 0 ? -errno : 0;
	}
	if (S_ISDIR(us.st_mode))
		return apply_dir(upar, hpar, name, &us);
	if (!S_ISREG(us.st_mode) && !S_ISLNK(us.st_mode))
		return 0;       /* a fifo or socket: not content; left in the layer */
	if (fstatat(hpar, name, &hs, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(hs.st_mode))
		return -EISDIR;
	if ((size_t)snprintf(tmp, sizeof(tmp), ".%.200s.cordon-apply-%d", name, (int)getpid()) >=
	    sizeof(tmp))
		return -ENAMETOOLONG;
	(void)unlinkat(hpar, tmp, 0);
	if (S_ISLNK(us.st_mode)) {
		len = readlinkat(upar, name, target, sizeof(target) - 1);
		if (len < 0)
			return -errno;
		target[len] = 0;
		if (symlinkat(target, hpar, tmp) < 0)
			return -errno;
	} else {
		from = home_fs_open_beneath(upar, name, O_RDONLY);
		if (from < 0)
			return from;
		to = openat(hpar, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (to < 0)
			return -errno;
		if ((r = copy_bytes(from, to)) < 0 || (r = fchmod(to, us.st_mode & 0777) < 0 ? -errno : 0) < 0 ||
		    (r = fsync(to) < 0 ? -errno : 0) < 0) {
			(void)unlinkat(hpar, tmp, 0);
			return r;
		}
	}
	if (renameat(hpar, tmp, hpar, name) < 0) {
		r = -errno;
		(void)unlinkat(hpar, tmp, 0);
		return r;
	}
	return unlinkat(upar, name, 0) < 0 ? -errno : 0;
}

/*
 * The parent of REL on both sides: the layer's must exist; the home's
 * missing directories are made with the layer's modes.
 */
static int open_parents(int ufd, int hfd, const char *rel, int *upar, int *hpar)
{
	_cleanup_close_ int u = dup(ufd), h = dup(hfd);
	char comp[NAME_MAX + 1];
	const char *p = rel;

	if (u < 0 || h < 0)
		return -errno;
	for (;;) {
		size_t n = strcspn(p, "/");
		struct stat st;
		int nu, nh;

		if (!p[n])
			break;
		if (n > NAME_MAX)
			return -ENAMETOOLONG;
		memcpy(comp, p, n);
		comp[n] = 0;
		p += n + 1;
		nu = home_fs_open_beneath(u, comp, O_RDONLY | O_DIRECTORY);
		if (nu < 0)
			return nu;
		if (fstat(nu, &st) < 0 ||
		    (mkdirat(h, comp, st.st_mode & 0777) < 0 && errno != EEXIST)) {
			close(nu);
			return -errno;
		}
		nh = home_fs_open_beneath(h, comp, O_RDONLY | O_DIRECTORY);
		if (nh < 0) {
			close(nu);
			return nh;
		}
		close(u);
		close(h);
		u = nu;
		h = nh;
	}
	*upar = TAKE_FD(u);
	*hpar = TAKE_FD(h);
	return 0;
}

/* Work as the home's owner: fsuid/fsgid and no supplementary groups; undo restores. */
struct as_owner {
	uid_t fsuid;
	gid_t fsgid;
	int ngroups;
	gid_t groups[NGROUPS_MAX];
};

static int become_owner(const struct stat *home, struct as_owner *saved)
{
	saved->ngroups = getgroups(NGROUPS_MAX, saved->groups);
	if (saved->ngroups < 0)
		return -errno;
	if (setgroups(1, &home->st_gid) < 0)
		return -errno;
	saved->fsgid = (gid_t)setfsgid(home->st_gid);
	saved->fsuid = (uid_t)setfsuid(home->st_uid);
	if ((uid_t)setfsuid((uid_t)-1) != home->st_uid || (gid_t)setfsgid((gid_t)-1) != home->st_gid)
		return -EPERM;
	return 0;
}

static void restore_owner(const struct as_owner *saved)
{
	(void)setfsuid(saved->fsuid);
	(void)setfsgid(saved->fsgid);
	(void)setgroups((size_t)saved->ngroups, saved->groups);
}

int home_apply(const char *layer_dir, const char *home, const char *path, char *why,
	       size_t wlen)
{
	_cleanup_close_ int layerfd = -1, lockfd = -1, ufd = -1, hfd = -1, upar = -1, hpar = -1;
	char rel[PATH_MAX];
	const char *base, *store;
	struct as_owner saved;
	struct stat hst, st;
	int r;

	if ((r = relative(home, path, rel, sizeof(rel))) < 0)
		return home_fs_fail(why, wlen, r, r == -EXDEV ? "%s is not below the home" :
			    "%s: name a path below the home, without . or ..", path);
	if (home_is_store(rel)) {
		snprintf(why, wlen, "~/%s is a credential store: apply never copies one into the home "
			 "(copy it yourself if you mean it)", rel);
		return -EPERM;
	}
	layerfd = open(layer_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (layerfd < 0)
		return home_fs_fail(why, wlen, -errno, "the home layer %s", layer_dir);
	lockfd = home_fs_lock_layer(layerfd);
	if (lockfd == -EBUSY) {
		snprintf(why, wlen, "a session of the home layer %s is running: apply after it ends",
			 layer_dir);
		return -EBUSY;
	}
	if (lockfd < 0)
		return home_fs_fail(why, wlen, lockfd, "locking %s/lock", layer_dir);
	ufd = openat(layerfd, "upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (ufd < 0)
		return home_fs_fail(why, wlen, -errno, "%s/upper", layer_dir);
	hfd = open(home, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (hfd < 0 || fstat(hfd, &hst) < 0)
		return home_fs_fail(why, wlen, -errno, "the home %s", home);
	if ((store = store_below(ufd, rel))) {
		snprintf(why, wlen, "~/%s holds the credential store ~/%s in the layer: apply never "
			 "copies one into the home", rel, store);
		return -EPERM;
	}
	if ((r = become_owner(&hst, &saved)) < 0)
		return home_fs_fail(why, wlen, r, "becoming the owner of %s", home);
	r = open_parents(ufd, hfd, rel, &upar, &hpar);
	if (r < 0) {
		restore_owner(&saved);
		return home_fs_fail(why, wlen, r, r == -ELOOP ? "~/%s: a symlink on the way (in the layer or "
			    "the home)" : "the parent directories of ~/%s", rel);
	}
	base = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
	if (fstatat(upar, base, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		restore_owner(&saved);
		return home_fs_fail(why, wlen, -ENOENT, "~/%s: no change in the layer", rel);
	}
	r = apply_entry(upar, hpar, base);
	restore_owner(&saved);
	if (r < 0)
		return home_fs_fail(why, wlen, r, "applying ~/%s", rel);
	return 0;
}

int home_discard(const char *layer_dir, char *why, size_t wlen)
{
	_cleanup_close_ int layerfd = -1, lockfd = -1;
	int r;

	layerfd = open(layer_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (layerfd < 0)
		return home_fs_fail(why, wlen, -errno, "the home layer %s", layer_dir);
	lockfd = home_fs_lock_layer(layerfd);
	if (lockfd == -EBUSY) {
		snprintf(why, wlen, "a session of the home layer %s is running: discard after it ends",
			 layer_dir);
		return -EBUSY;
	}
	if (lockfd < 0)
		return home_fs_fail(why, wlen, lockfd, "locking %s/lock", layer_dir);
	if ((r = home_fs_rm_rf_at(layerfd, "upper")) < 0 || (r = home_fs_rm_rf_at(layerfd, "work")) < 0)
		return home_fs_fail(why, wlen, r, "emptying %s", layer_dir);
	return 0;
}
