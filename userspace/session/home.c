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
#include "home_fs.h"
#include "policy.h"
#include "util.h"

#define PROFILE_MAX 64

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

/*
 * The mask's entries a check met (mask_store with a check): their paths
 * below the mask, each once.
 */
struct mask_seen {
	char **path;
	size_t n, cap;
};

static bool seen_has(const struct mask_seen *s, const char *store, size_t len)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strncmp(s->path[i], store, len) && !s->path[i][len])
			return true;
	return false;
}

static int seen_add(struct mask_seen *s, const char *store, size_t len)
{
	char **np;

	if (seen_has(s, store, len))
		return 0;
	if (s->n == s->cap) {
		np = realloc(s->path, (s->cap ? 2 * s->cap : 64) * sizeof(*np));
		if (!np)
			return -ENOMEM;
		s->path = np;
		s->cap = s->cap ? 2 * s->cap : 64;
	}
	s->path[s->n] = strndup(store, len);
	return s->path[s->n] ? (s->n++, 0) : -ENOMEM;
}

static void seen_free(struct mask_seen *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->path[i]);
	free(s->path);
}

static int whiteout_at(int dirfd, const char *name, bool check)
{
	struct stat st;
	int r;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (home_fs_is_whiteout(&st))
			return 0;
		if (check)
			return -ESTALE;
		/* A directory made for a store below this name: the whiteout covers it. */
		if ((r = home_fs_rm_rf_at(dirfd, name)) < 0)
			return r;
	} else if (check) {
		return -ESTALE;
	}
	return mknodat(dirfd, name, S_IFCHR | 0000, makedev(0, 0)) < 0 ? -errno : 0;
}

/*
 * A mask directory mirroring the home's HST at NAME: made, or (check) as
 * made.  MST is what the mask holds at NAME (NULL: nothing), as the caller
 * just read it.
 */
static int mirror_dir(int m, const char *name, const struct stat *hst, const struct stat *mst,
		      bool check)
{
	if (check)
		return mst && S_ISDIR(mst->st_mode) && mst->st_uid == hst->st_uid &&
		       mst->st_gid == hst->st_gid &&
		       (mst->st_mode & 07777) == (hst->st_mode & 07777) ? 0 : -ESTALE;
	if (mkdirat(m, name, 0700) < 0 && errno != EEXIST)
		return -errno;
	if (fchownat(m, name, hst->st_uid, hst->st_gid, AT_SYMLINK_NOFOLLOW) < 0 ||
	    fchmodat(m, name, hst->st_mode & 07777, 0) < 0)
		return -errno;
	return 0;
}

/*
 * Hide STORE (relative) in the mask: a whiteout at its name, or at its
 * first ancestor the home lacks; mask directories on the way mirror the
 * home's (owner and mode: a merged directory takes its attributes from the
 * topmost layer that has it).  An ancestor that is a symlink or a file in
 * the home leaves the store as it is (home.h says what that leaves open).
 * With CHECK, nothing is written: -ESTALE unless the mask already holds
 * every entry this would make, each recorded in CHECK.
 */
static int mask_store(int homefd, int maskfd, const char *store, struct mask_seen *check)
{
	/* The directories walked into (the caller's two are only borrowed). */
	_cleanup_close_ int oh = -1, om = -1;
	int h = homefd, m = maskfd;
	char comp[NAME_MAX + 1];
	const char *p = store;
	struct stat st, hst;
	size_t len;
	int r;

	for (;;) {
		size_t n = strcspn(p, "/");
		bool in_mask;
		int nh, nm;

		if (n == 0 || n > NAME_MAX)
			return -EINVAL;
		memcpy(comp, p, n);
		comp[n] = 0;
		p += n;
		len = (size_t)(p - store);
		if (!*p) {
			r = whiteout_at(m, comp, check);
			return r || !check ? r : seen_add(check, store, len);
		}
		p++;
		/* A whiteout an earlier store of this build made covers this one. */
		in_mask = fstatat(m, comp, &st, AT_SYMLINK_NOFOLLOW) == 0;
		if (in_mask && home_fs_is_whiteout(&st) && (!check || seen_has(check, store, len)))
			return 0;
		if (fstatat(h, comp, &hst, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno != ENOENT)
				return -errno;
			r = whiteout_at(m, comp, check);
			return r || !check ? r : seen_add(check, store, len);
		}
		if (!S_ISDIR(hst.st_mode))
			return 0;
		if ((r = mirror_dir(m, comp, &hst, in_mask ? &st : NULL, check)) < 0 ||
		    (check && (r = seen_add(check, store, len)) < 0))
			return r;
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
		if (oh >= 0)
			close(oh);
		if (om >= 0)
			close(om);
		h = oh = nh;
		m = om = nm;
	}
}

/* The entries below DIRFD, counted; -ESTALE at one a mask never holds. */
static int mask_count(int dirfd, size_t *n)
{
	DIR *d = fdopendir(dup(dirfd));
	struct dirent *de;
	int r = 0;

	if (!d)
		return -errno;
	while (!r && (de = readdir(d))) {
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			r = -errno;
		} else if (S_ISDIR(st.st_mode)) {
			int sub = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					 O_CLOEXEC);

			(*n)++;
			r = sub < 0 ? -errno : mask_count(sub, n);
			if (sub >= 0)
				close(sub);
		} else if (home_fs_is_whiteout(&st)) {
			(*n)++;
		} else {
			r = -ESTALE;
		}
	}
	closedir(d);
	return r;
}

/*
 * Is the layer's mask already exactly what a rebuild from the home as it is
 * now would make?  Every entry a rebuild would make is there (mask_store's
 * check), and nothing else is: the counts agree.  Only root writes the
 * mask (the layer is 0700 and root's; the overlay never writes a lower
 * layer), so what this reads is cordon's own last build.
 */
static bool mask_is_current(int layerfd, int homefd)
{
	_cleanup_close_ int maskfd = openat(layerfd, "mask", O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					    O_CLOEXEC);
	struct mask_seen seen = { 0 };
	struct stat st;
	size_t have = 0;
	bool same;

	if (maskfd < 0 || fstat(maskfd, &st) < 0 || st.st_uid != 0)
		return false;
	same = true;
	for (const char *const *s = pol_credential_stores(); same && *s; s++)
		same = mask_store(homefd, maskfd, *s, &seen) == 0;
	same = same && mask_count(maskfd, &have) == 0 && have == seen.n;
	seen_free(&seen);
	return same;
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
		return home_fs_fail(why, wlen, -EINVAL, "the home %s is not an absolute path",
				    home ? home : "(none)");
	if ((r = home_layer_path(base, uid, profile, out->dir, sizeof(out->dir))) < 0)
		return home_fs_fail(why, wlen, r, "the layer of profile '%s'", profile ? profile : "");
	snprintf(out->home, sizeof(out->home), "%s", home);
	homefd = open(home, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (homefd < 0 || fstat(homefd, &hst) < 0)
		return home_fs_fail(why, wlen, -errno, "the home %s", home);
	if ((r = mkdir_p(base, 0700)) < 0)
		return home_fs_fail(why, wlen, r, "making %s", base);
	basefd = private_dir(AT_FDCWD, base);
	if (basefd < 0)
		return home_fs_fail(why, wlen, basefd, "%s", base);
	slash = strrchr(out->dir, '/');
	layerfd = private_dir(basefd, slash + 1);
	if (layerfd < 0)
		return home_fs_fail(why, wlen, layerfd, "%s", out->dir);
	lockfd = openat(layerfd, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (lockfd < 0)
		return home_fs_fail(why, wlen, -errno, "%s/lock", out->dir);
	if (flock(lockfd, LOCK_EX | LOCK_NB) < 0) {
		r = errno == EWOULDBLOCK ? -EBUSY : -errno;
		snprintf(why, wlen, "the home layer %s is in use by another session of this user "
			 "and profile (one at a time: wait for it, or use another profile)", out->dir);
		return r;
	}
	/* The upper: owned by the agent, with the home's mode. */
	if (mkdirat(layerfd, "upper", 0700) < 0 && errno != EEXIST)
		return home_fs_fail(why, wlen, -errno, "%s/upper", out->dir);
	upfd = openat(layerfd, "upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (upfd < 0 || fchown(upfd, uid, gid) < 0 || fchmod(upfd, hst.st_mode & 07777) < 0)
		return home_fs_fail(why, wlen, -errno, "%s/upper", out->dir);
	workfd = private_dir(layerfd, "work");
	if (workfd < 0)
		return home_fs_fail(why, wlen, workfd, "%s/work", out->dir);
	/*
	 * The mask, from the home as it is now: kept when it already is
	 * exactly that (a check of some hundred stats), made anew otherwise
	 * (removing and making its ~80 entries: 2-8 ms of a start here).
	 */
	if (mask_is_current(layerfd, homefd)) {
		out->lock_fd = TAKE_FD(lockfd);
		return 0;
	}
	if ((r = home_fs_rm_rf_at(layerfd, "mask")) < 0)
		return home_fs_fail(why, wlen, r, "removing the old %s/mask", out->dir);
	if (mkdirat(layerfd, "mask", 0755) < 0)
		return home_fs_fail(why, wlen, -errno, "%s/mask", out->dir);
	maskfd = openat(layerfd, "mask", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (maskfd < 0)
		return home_fs_fail(why, wlen, -errno, "%s/mask", out->dir);
	for (const char *const *s = pol_credential_stores(); *s; s++)
		if ((r = mask_store(homefd, maskfd, *s, NULL)) < 0)
			return home_fs_fail(why, wlen, r, "hiding ~/%s in the mask", *s);
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
		return home_fs_fail(why, wlen, -EBADF, "mounting %s: the layer is not open", l->dir);
	fsfd = (int)syscall(SYS_fsopen, "overlay", FSOPEN_CLOEXEC);
	if (fsfd < 0)
		return home_fs_fail(why, wlen, -errno, "fsopen(overlay) for %s", l->dir);
	if ((r = config_layers(fsfd, l)) < 0) {
		home_fs_fail(why, wlen, r, "the layers of %s", l->dir);
		fs_messages(fsfd, why, wlen);
		return r;
	}
	for (size_t i = 0; i < ARRAY_SIZE(opts); i++)
		if ((r = fsconfig_(fsfd, FSCONFIG_SET_STRING, opts[i][0], opts[i][1], 0)) < 0) {
			home_fs_fail(why, wlen, r, "overlay option %s", opts[i][0]);
			fs_messages(fsfd, why, wlen);
			return r;
		}
	if ((r = fsconfig_(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0)) < 0) {
		home_fs_fail(why, wlen, r, "creating the overlay of %s", l->dir);
		fs_messages(fsfd, why, wlen);
		return r;
	}
	fd = (int)syscall(SYS_fsmount, fsfd, FSMOUNT_CLOEXEC,
			  MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	if (fd < 0)
		return home_fs_fail(why, wlen, -errno, "fsmount of the overlay of %s", l->dir);
	*mount_fd = fd;
	return 0;
}

void home_layer_close(struct home_layer *l)
{
	if (l->lock_fd >= 0)
		(void)close(l->lock_fd);
	l->lock_fd = -1;
}

