// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The agent's home as an overlay over the real one (what it closes and
 * what not: home.h).
 *
 * Everything below the base is reached through descriptors opened without
 * following symlinks: the upper layer holds whatever the agent wrote, so a
 * walk of it (diff, apply, discard) must never leave it.  The mount is made
 * with fsopen/fsconfig/fsmount, its layers given as descriptors where the
 * kernel takes them (6.13+), and left detached for the caller.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/fsuid.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "home.h"
#include "policy.h"
#include "util.h"

#define PROFILE_MAX 64
#define OPAQUE_XATTR "trusted.overlay.opaque"

static void closedirp(DIR **d)
{
	if (*d)
		(void)closedir(*d);
}
#define _cleanup_closedir_ _cleanup_(closedirp)

static bool is_whiteout(const struct stat *st)
{
	return S_ISCHR(st->st_mode) && st->st_rdev == makedev(0, 0);
}

/* One component below DIRFD, never through a symlink nor "..". */
static int open_beneath(int dirfd, const char *path, int flags)
{
	struct open_how how = {
		.flags = (unsigned long long)(flags | O_CLOEXEC),
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	int fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));

	return fd < 0 ? -errno : fd;
}

/* Remove NAME below DIRFD, a directory with all it holds; never follows a symlink. */
static int rm_rf_at(int at, const char *name)
{
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;
	struct stat st;
	int fd, r = 0;

	if (fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(at, name, 0) < 0 && errno != ENOENT ? -errno : 0;
	fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (!(d = fdopendir(fd))) {
		r = -errno;
		close(fd);
		return r;
	}
	while (r >= 0 && (errno = 0, de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			r = rm_rf_at(dirfd(d), de->d_name);
	if (r < 0)
		return r;
	return unlinkat(at, name, AT_REMOVEDIR) < 0 && errno != ENOENT ? -errno : 0;
}

int home_layer_path(const char *base, uid_t uid, const char *profile, char *dir, size_t len)
{
	char name[PROFILE_MAX + 1];
	size_t n = 0;

	if (!profile || !*profile)
		return -EINVAL;
	for (const char *p = profile; *p; p++) {
		bool ok = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
			  (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' || *p == '-';

		if (n == PROFILE_MAX)
			return -ENAMETOOLONG;
		name[n++] = ok ? *p : '_';
	}
	name[n] = 0;
	if ((size_t)snprintf(dir, len, "%s/%u-%s", base ? base : HOME_LAYER_BASE,
			     (unsigned)uid, name) >= len)
		return -ENAMETOOLONG;
	return 0;
}

/* Component-wise: is PATH equal to PREFIX or below it? */
static bool path_within(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);

	return !strncmp(path, prefix, n) && (path[n] == 0 || path[n] == '/');
}

bool home_is_store(const char *rel)
{
	for (const char *const *s = pol_credential_stores(); *s; s++)
		if (path_within(rel, *s))
			return true;
	return false;
}

/* A directory NAME below DIRFD (made if missing) as root-owned 0700; its descriptor. */
static int private_dir(int dirfd, const char *name)
{
	struct stat st;
	int fd;

	if (mkdirat(dirfd, name, 0700) < 0 && errno != EEXIST)
		return -errno;
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || fchown(fd, 0, 0) < 0 || fchmod(fd, 0700) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	return fd;
}

static int whiteout_at(int dirfd, const char *name)
{
	struct stat st;
	int r;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (is_whiteout(&st))
			return 0;
		/* A directory made for a store below this name: the whiteout covers it. */
		if ((r = rm_rf_at(dirfd, name)) < 0)
			return r;
	}
	return mknodat(dirfd, name, S_IFCHR | 0000, makedev(0, 0)) < 0 ? -errno : 0;
}

/*
 * Hide STORE (relative) in the mask: a whiteout at its name, or at its
 * first ancestor the home lacks; mask directories on the way mirror the
 * home's (owner and mode: a merged directory takes its attributes from the
 * topmost layer that has it).  An ancestor that is a symlink or a file in
 * the home leaves the store as it is (home.h says what that leaves open).
 */
static int mask_store(int homefd, int maskfd, const char *store)
{
	_cleanup_close_ int h = dup(homefd), m = dup(maskfd);
	char comp[NAME_MAX + 1];
	const char *p = store;
	struct stat st, hst;
	int r;

	if (h < 0 || m < 0)
		return -errno;
	for (;;) {
		size_t n = strcspn(p, "/");
		int nh, nm;

		if (n == 0 || n > NAME_MAX)
			return -EINVAL;
		memcpy(comp, p, n);
		comp[n] = 0;
		p += n;
		if (!*p)
			return whiteout_at(m, comp);
		p++;
		if (fstatat(m, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 && is_whiteout(&st))
			return 0;
		if (fstatat(h, comp, &hst, AT_SYMLINK_NOFOLLOW) < 0)
			return errno == ENOENT ? whiteout_at(m, comp) : -errno;
		if (!S_ISDIR(hst.st_mode))
			return 0;
		if (mkdirat(m, comp, 0700) < 0 && errno != EEXIST)
			return -errno;
		if (fchownat(m, comp, hst.st_uid, hst.st_gid, AT_SYMLINK_NOFOLLOW) < 0 ||
		    fchmodat(m, comp, hst.st_mode & 07777, 0) < 0)
			return -errno;
		nh = openat(h, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		nm = openat(m, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nh < 0 || nm < 0) {
			r = -errno;
			if (nh >= 0)
				close(nh);
			if (nm >= 0)
				close(nm);
			return r;
		}
		close(h);
		close(m);
		h = nh;
		m = nm;
	}
}

/* WHY: what failed (FMT), and how (R).  Returns R. */
static int fail(char *why, size_t wlen, int r, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(char *why, size_t wlen, int r, const char *fmt, ...)
{
	char what[PATH_MAX + 128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(why, wlen, "%s: %s", what, strerror(-r));
	return r;
}

int home_layer_open(const char *base, const char *home, uid_t uid, gid_t gid,
		    const char *profile, struct home_layer *out, char *why, size_t wlen)
{
	_cleanup_close_ int basefd = -1, layerfd = -1, lockfd = -1, upfd = -1, workfd = -1;
	_cleanup_close_ int maskfd = -1, homefd = -1;
	char *slash;
	struct stat hst;
	int r;

	memset(out, 0, sizeof(*out));
	out->lock_fd = -1;
	if (!base)
		base = HOME_LAYER_BASE;
	if (!home || home[0] != '/' || strlen(home) >= sizeof(out->home))
		return fail(why, wlen, -EINVAL, "the home %s is not an absolute path", home ? home : "(none)");
	if ((r = home_layer_path(base, uid, profile, out->dir, sizeof(out->dir))) < 0)
		return fail(why, wlen, r, "the layer of profile '%s'", profile ? profile : "");
	snprintf(out->home, sizeof(out->home), "%s", home);
	homefd = open(home, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (homefd < 0 || fstat(homefd, &hst) < 0)
		return fail(why, wlen, -errno, "the home %s", home);
	if ((r = mkdir_p(base, 0700)) < 0)
		return fail(why, wlen, r, "making %s", base);
	basefd = private_dir(AT_FDCWD, base);
	if (basefd < 0)
		return fail(why, wlen, basefd, "%s", base);
	slash = strrchr(out->dir, '/');
	layerfd = private_dir(basefd, slash + 1);
	if (layerfd < 0)
		return fail(why, wlen, layerfd, "%s", out->dir);
	lockfd = openat(layerfd, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (lockfd < 0)
		return fail(why, wlen, -errno, "%s/lock", out->dir);
	if (flock(lockfd, LOCK_EX | LOCK_NB) < 0) {
		r = errno == EWOULDBLOCK ? -EBUSY : -errno;
		snprintf(why, wlen, "the home layer %s is in use by another session of this user "
			 "and profile (one at a time: wait for it, or use another profile)", out->dir);
		return r;
	}
	/* The upper: owned by the agent, with the home's mode. */
	if (mkdirat(layerfd, "upper", 0700) < 0 && errno != EEXIST)
		return fail(why, wlen, -errno, "%s/upper", out->dir);
	upfd = openat(layerfd, "upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (upfd < 0 || fchown(upfd, uid, gid) < 0 || fchmod(upfd, hst.st_mode & 07777) < 0)
		return fail(why, wlen, -errno, "%s/upper", out->dir);
	workfd = private_dir(layerfd, "work");
	if (workfd < 0)
		return fail(why, wlen, workfd, "%s/work", out->dir);
	/* The mask, from the home as it is now. */
	if ((r = rm_rf_at(layerfd, "mask")) < 0)
		return fail(why, wlen, r, "removing the old %s/mask", out->dir);
	if (mkdirat(layerfd, "mask", 0755) < 0)
		return fail(why, wlen, -errno, "%s/mask", out->dir);
	maskfd = openat(layerfd, "mask", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (maskfd < 0)
		return fail(why, wlen, -errno, "%s/mask", out->dir);
	for (const char *const *s = pol_credential_stores(); *s; s++)
		if ((r = mask_store(homefd, maskfd, *s)) < 0)
			return fail(why, wlen, r, "hiding ~/%s in the mask", *s);
	out->lock_fd = TAKE_FD(lockfd);
	return 0;
}

/* The kernel's messages about a failed fsconfig, appended to WHY. */
static void fs_messages(int fsfd, char *why, size_t wlen)
{
	char buf[512];
	ssize_t n;

	while ((n = read(fsfd, buf, sizeof(buf) - 1)) > 0) {
		size_t used = strlen(why);

		buf[n] = 0;
		if (used + 4 < wlen)
			snprintf(why + used, wlen - used, " (%s)", buf);
	}
}

/* A path for the "lowerdir" string: ':' and '\' escaped. */
static int escape_layer(const char *path, char *out, size_t len)
{
	size_t n = 0;

	for (; *path; path++) {
		if (n + 3 > len)
			return -ENAMETOOLONG;
		if (*path == ':' || *path == '\\' || *path == ',')
			out[n++] = '\\';
		out[n++] = *path;
	}
	out[n] = 0;
	return 0;
}

static int fsconfig_(int fd, unsigned cmd, const char *key, const void *val, int aux)
{
	return syscall(SYS_fsconfig, fd, cmd, key, val, aux) < 0 ? -errno : 0;
}

/* The layers as descriptors (6.13+), or as paths on older kernels. */
static int config_layers(int fsfd, const struct home_layer *l)
{
	char mask[PATH_MAX + 8], upper[PATH_MAX + 8], work[PATH_MAX + 8];
	char emask[2 * PATH_MAX], ehome[2 * PATH_MAX], lower[4 * PATH_MAX + 2];
	_cleanup_close_ int dfd = -1, mfd = -1, hfd = -1, ufd = -1, wfd = -1;
	int r;

	dfd = open(l->dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	mfd = openat(dfd, "mask", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	ufd = openat(dfd, "upper", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	wfd = openat(dfd, "work", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	hfd = open(l->home, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (mfd < 0 || hfd < 0 || ufd < 0 || wfd < 0)
		return -errno;
	r = fsconfig_(fsfd, FSCONFIG_SET_FD, "lowerdir+", NULL, mfd);
	if (r == 0) {
		if ((r = fsconfig_(fsfd, FSCONFIG_SET_FD, "lowerdir+", NULL, hfd)) < 0 ||
		    (r = fsconfig_(fsfd, FSCONFIG_SET_FD, "upperdir", NULL, ufd)) < 0 ||
		    (r = fsconfig_(fsfd, FSCONFIG_SET_FD, "workdir", NULL, wfd)) < 0)
			return r;
		return 0;
	}
	/* Before 6.13 (EINVAL), and before overlayfs took the new mount API (6.5, EOPNOTSUPP). */
	if (r != -EINVAL && r != -EOPNOTSUPP)
		return r;
	snprintf(mask, sizeof(mask), "%s/mask", l->dir);
	snprintf(upper, sizeof(upper), "%s/upper", l->dir);
	snprintf(work, sizeof(work), "%s/work", l->dir);
	if (escape_layer(mask, emask, sizeof(emask)) < 0 ||
	    escape_layer(l->home, ehome, sizeof(ehome)) < 0)
		return -ENAMETOOLONG;
	snprintf(lower, sizeof(lower), "%s:%s", emask, ehome);
	if ((r = fsconfig_(fsfd, FSCONFIG_SET_STRING, "lowerdir", lower, 0)) < 0 ||
	    (r = fsconfig_(fsfd, FSCONFIG_SET_STRING, "upperdir", upper, 0)) < 0 ||
	    (r = fsconfig_(fsfd, FSCONFIG_SET_STRING, "workdir", work, 0)) < 0)
		return r;
	return 0;
}

int home_layer_mount(const struct home_layer *l, int *mount_fd, char *why, size_t wlen)
{
	static const char *const opts[][2] = {
		{ "index", "off" }, { "metacopy", "off" }, { "redirect_dir", "off" },
		{ "xino", "auto" },
	};
	_cleanup_close_ int fsfd = -1;
	int fd, r;

	*mount_fd = -1;
	if (l->lock_fd < 0)
		return fail(why, wlen, -EBADF, "mounting %s: the layer is not open", l->dir);
	fsfd = (int)syscall(SYS_fsopen, "overlay", FSOPEN_CLOEXEC);
	if (fsfd < 0)
		return fail(why, wlen, -errno, "fsopen(overlay) for %s", l->dir);
	if ((r = config_layers(fsfd, l)) < 0) {
		fail(why, wlen, r, "the layers of %s", l->dir);
		fs_messages(fsfd, why, wlen);
		return r;
	}
	for (size_t i = 0; i < ARRAY_SIZE(opts); i++)
		if ((r = fsconfig_(fsfd, FSCONFIG_SET_STRING, opts[i][0], opts[i][1], 0)) < 0) {
			fail(why, wlen, r, "overlay option %s", opts[i][0]);
			fs_messages(fsfd, why, wlen);
			return r;
		}
	if ((r = fsconfig_(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0)) < 0) {
		fail(why, wlen, r, "creating the overlay of %s", l->dir);
		fs_messages(fsfd, why, wlen);
		return r;
	}
	fd = (int)syscall(SYS_fsmount, fsfd, FSMOUNT_CLOEXEC,
			  MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	if (fd < 0)
		return fail(why, wlen, -errno, "fsmount of the overlay of %s", l->dir);
	*mount_fd = fd;
	return 0;
}

void home_layer_close(struct home_layer *l)
{
	if (l->lock_fd >= 0)
		(void)close(l->lock_fd);
	l->lock_fd = -1;
}

/* ---- diff ---------------------------------------------------------------- */

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in directory FD (not . and ..), sorted; *N of them.  Free with free_names. */
static int list_names(int fd, char ***out, size_t *n)
{
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;
	char **v = NULL;
	size_t cnt = 0;
	int dfd = dup(fd);

	*out = NULL;
	*n = 0;
	if (dfd < 0)
		return -errno;
	if (!(d = fdopendir(dfd))) {
		close(dfd);
		return -errno;
	}
	rewinddir(d);
	while ((errno = 0, de = readdir(d))) {
		char **nv;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		nv = realloc(v, (cnt + 1) * sizeof(*v));
		if (!nv || !(nv[cnt] = strdup(de->d_name))) {
			free(nv ? nv : v);
			return -ENOMEM;
		}
		v = nv;
		cnt++;
	}
	if (cnt)
		qsort(v, cnt, sizeof(*v), cmp_names);
	*out = v;
	*n = cnt;
	return 0;
}

static void free_names(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static bool is_opaque(int fd)
{
	char v[4];
	ssize_t n = fgetxattr(fd, OPAQUE_XATTR, v, sizeof(v));

	return n == 1 && v[0] == 'y';
}

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

	if (kind != HOME_DELETED && S_ISLNK(us->st_mode)) {
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
	int r = list_names(hfd, &names, &n);

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
	free_names(names, n);
	return r;
}

/* HFD: the home's directory at the same place, or -1 where the home has none. */
static int walk(struct walk *w, int ufd, int hfd)
{
	char **names;
	size_t n;
	int r = list_names(ufd, &names, &n);

	for (size_t i = 0; r >= 0 && i < n; i++) {
		_cleanup_close_ int uc = -1, hc = -1;
		struct stat us, hs;
		bool have;
		size_t old;

		if (fstatat(ufd, names[i], &us, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if ((r = push(w, names[i], &old)) < 0)
			break;
		/* A store in the layer merges with nothing of the home's: the mask stops it. */
		have = hfd >= 0 && !home_is_store(w->rel) &&
		       fstatat(hfd, names[i], &hs, AT_SYMLINK_NOFOLLOW) == 0;
		if (is_whiteout(&us)) {
			if (have)
				r = emit(w, HOME_DELETED, ufd, names[i], NULL, &hs);
		} else if (S_ISDIR(us.st_mode)) {
			bool merged = have && S_ISDIR(hs.st_mode);

			uc = openat(ufd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (uc < 0) {
				r = -errno;
			} else if (!merged) {
				r = emit(w, have ? HOME_MODIFIED : HOME_ADDED, ufd, names[i], &us,
					 have ? &hs : NULL);
				if (r >= 0)
					r = walk(w, uc, -1);
			} else {
				hc = openat(hfd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
				if ((us.st_mode ^ hs.st_mode) & 07777 || us.st_uid != hs.st_uid ||
				    us.st_gid != hs.st_gid)
					r = emit(w, HOME_MODIFIED, ufd, names[i], &us, &hs);
				if (r >= 0)
					r = walk(w, uc, hc);
				if (r >= 0 && hc >= 0 && is_opaque(uc))
					r = walk_deleted(w, uc, hc);
			}
		} else if (!have) {
			r = emit(w, HOME_ADDED, ufd, names[i], &us, NULL);
		} else if (!same_entry(ufd, hfd, names[i], &us, &hs)) {
			r = emit(w, HOME_MODIFIED, ufd, names[i], &us, &hs);
		}
		w->rel[old] = 0;
	}
	free_names(names, n);
	return r;
}

int home_diff(const char *layer_dir, const char *home,
	      int (*fn)(void *ctx, const struct home_change *c), void *ctx)
{
	_cleanup_close_ int layerfd = -1, ufd = -1, hfd = -1;
	struct walk w = { .fn = fn, .ctx = ctx };

	layerfd = open(layer_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (layerfd < 0)
		return -errno;
	ufd = openat(layerfd, "upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (ufd < 0)
		return -errno;
	hfd = open(home, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (hfd < 0)
		return -errno;
	return walk(&w, ufd, hfd);
}

/* ---- apply and discard --------------------------------------------------- */

/* The layer's lock, taken without waiting: -EBUSY while a session holds it. */
static int lock_layer(int layerfd)
{
	int fd = openat(layerfd, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int r = errno == EWOULDBLOCK ? -EBUSY : -errno;

		close(fd);
		return r;
	}
	return fd;
}

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

		if (!path_within(*s, rel))
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
	uc = open_beneath(upar, name, O_RDONLY | O_DIRECTORY);
	if (uc < 0)
		return uc;
	hc = open_beneath(hpar, name, O_RDONLY | O_DIRECTORY);
	if (hc < 0)
		return hc;
	if ((r = list_names(uc, &names, &n)) < 0)
		return r;
	for (size_t i = 0; r >= 0 && i < n; i++)
		r = apply_entry(uc, hc, names[i]);
	free_names(names, n);
	if (r < 0)
		return r;
	/* Opaque: what the home had here and the layer does not is gone. */
	if (is_opaque(uc)) {
		if ((r = list_names(hc, &names, &n)) < 0)
			return r;
		for (size_t i = 0; r >= 0 && i < n; i++) {
			struct stat st;

			if (fstatat(uc, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
				r = rm_rf_at(hc, names[i]);
		}
		free_names(names, n);
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
	if (is_whiteout(&us)) {
		if ((r = rm_rf_at(hpar, name)) < 0)
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
		from = open_beneath(upar, name, O_RDONLY);
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
		nu = open_beneath(u, comp, O_RDONLY | O_DIRECTORY);
		if (nu < 0)
			return nu;
		if (fstat(nu, &st) < 0 ||
		    (mkdirat(h, comp, st.st_mode & 0777) < 0 && errno != EEXIST)) {
			close(nu);
			return -errno;
		}
		nh = open_beneath(h, comp, O_RDONLY | O_DIRECTORY);
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
		return fail(why, wlen, r, r == -EXDEV ? "%s is not below the home" :
			    "%s: name a path below the home, without . or ..", path);
	if (home_is_store(rel)) {
		snprintf(why, wlen, "~/%s is a credential store: apply never copies one into the home "
			 "(copy it yourself if you mean it)", rel);
		return -EPERM;
	}
	layerfd = open(layer_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (layerfd < 0)
		return fail(why, wlen, -errno, "the home layer %s", layer_dir);
	lockfd = lock_layer(layerfd);
	if (lockfd == -EBUSY) {
		snprintf(why, wlen, "a session of the home layer %s is running: apply after it ends",
			 layer_dir);
		return -EBUSY;
	}
	if (lockfd < 0)
		return fail(why, wlen, lockfd, "locking %s/lock", layer_dir);
	ufd = openat(layerfd, "upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (ufd < 0)
		return fail(why, wlen, -errno, "%s/upper", layer_dir);
	hfd = open(home, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (hfd < 0 || fstat(hfd, &hst) < 0)
		return fail(why, wlen, -errno, "the home %s", home);
	if ((store = store_below(ufd, rel))) {
		snprintf(why, wlen, "~/%s holds the credential store ~/%s in the layer: apply never "
			 "copies one into the home", rel, store);
		return -EPERM;
	}
	if ((r = become_owner(&hst, &saved)) < 0)
		return fail(why, wlen, r, "becoming the owner of %s", home);
	r = open_parents(ufd, hfd, rel, &upar, &hpar);
	if (r < 0) {
		restore_owner(&saved);
		return fail(why, wlen, r, r == -ELOOP ? "~/%s: a symlink on the way (in the layer or "
			    "the home)" : "the parent directories of ~/%s", rel);
	}
	base = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
	if (fstatat(upar, base, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		restore_owner(&saved);
		return fail(why, wlen, -ENOENT, "~/%s: no change in the layer", rel);
	}
	r = apply_entry(upar, hpar, base);
	restore_owner(&saved);
	if (r < 0)
		return fail(why, wlen, r, "applying ~/%s", rel);
	return 0;
}

int home_discard(const char *layer_dir, char *why, size_t wlen)
{
	_cleanup_close_ int layerfd = -1, lockfd = -1;
	int r;

	layerfd = open(layer_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (layerfd < 0)
		return fail(why, wlen, -errno, "the home layer %s", layer_dir);
	lockfd = lock_layer(layerfd);
	if (lockfd == -EBUSY) {
		snprintf(why, wlen, "a session of the home layer %s is running: discard after it ends",
			 layer_dir);
		return -EBUSY;
	}
	if (lockfd < 0)
		return fail(why, wlen, lockfd, "locking %s/lock", layer_dir);
	if ((r = rm_rf_at(layerfd, "upper")) < 0 || (r = rm_rf_at(layerfd, "work")) < 0)
		return fail(why, wlen, r, "emptying %s", layer_dir);
	return 0;
}
