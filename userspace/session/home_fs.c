// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Descriptor helpers of the home layer (home_fs.h): what the layer's
 * set-up, the diff and apply share.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <stdlib.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "home_fs.h"
#include "policy.h"

bool home_fs_is_whiteout(const struct stat *st)
{
	return S_ISCHR(st->st_mode) && st->st_rdev == makedev(0, 0);
}

/* One component below DIRFD, never through a symlink nor "..". */
int home_fs_open_beneath(int dirfd, const char *path, int flags)
{
	struct open_how how = {
		.flags = (unsigned long long)(flags | O_CLOEXEC),
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	int fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));

	return fd < 0 ? -errno : fd;
}

/*
 * One directory of a removal: where it is (to check ".." on the way back)
 * and the subdirectories still to remove, by name.
 */
struct rm_level {
	dev_t dev;
	ino_t ino;
	char **sub;
	size_t n, i;
};

static void rm_level_free(struct rm_level *l)
{
	for (size_t k = 0; k < l->n; k++)
		free(l->sub[k]);
	free(l->sub);
}

/* Unlink what DIRFD holds but directories; their names into L (after its dev and ino). */
static int rm_level_scan(int dirfd, struct rm_level *l)
{
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;
	struct stat st;
	size_t cap = 0;
	int fd;

	*l = (struct rm_level){ 0 };
	fd = dup(dirfd);
	if (fd < 0 || fstat(fd, &st) < 0) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		return -e;
	}
	l->dev = st.st_dev;
	l->ino = st.st_ino;
	if (!(d = fdopendir(fd))) {
		close(fd);
		return -errno;
	}
	while ((errno = 0, de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno == ENOENT)
				continue;
			return -errno;
		}
		if (!S_ISDIR(st.st_mode)) {
			if (unlinkat(dirfd, de->d_name, 0) < 0 && errno != ENOENT)
				return -errno;
			continue;
		}
		if (l->n == cap) {
			char **v = realloc(l->sub, (cap = cap ? 2 * cap : 8) * sizeof(*v));

			if (!v)
				return -ENOMEM;
			l->sub = v;
		}
		if (!(l->sub[l->n] = strdup(de->d_name)))
			return -ENOMEM;
		l->n++;
	}
	return errno ? -errno : 0;
}

/*
 * Remove NAME below AT, a directory with all it holds; never follows a
 * symlink.  Attack: the agent nests directories thousands deep in what
 * root later removes (its home layer): a removal holding a descriptor per
 * level fails at the descriptor limit (1024 in a login shell: 1500 levels,
 * made in under a second, left `cordon home discard` failing with EMFILE
 * and the layer in place), and one recursing per level grows its stack
 * with the depth.  Here one directory is open at a time and the depth
 * costs heap only: down by name (O_NOFOLLOW), up by ".." checked to be the
 * very directory come from (device and inode); a tree moved meanwhile is
 * an error (ESTALE), never a walk elsewhere.  What it cannot close: a tree
 * larger than memory for its names (the disk holding it is the bound).
 */
int home_fs_rm_rf_at(int at, const char *name)
{
	struct rm_level *lv = NULL;
	size_t depth = 0, cap = 0;
	struct stat st;
	int cur, r = 0;

	if (fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(at, name, 0) < 0 && errno != ENOENT ? -errno : 0;
	cur = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (cur < 0)
		return -errno;
	for (;;) {
		struct rm_level *l;
		int next;

		if (depth == cap) {
			struct rm_level *v = realloc(lv, (cap = cap ? 2 * cap : 16) * sizeof(*v));

			if (!v) {
				r = -ENOMEM;
				break;
			}
			lv = v;
		}
		r = rm_level_scan(cur, &lv[depth]);
		depth++;
		if (r < 0)
			break;
		/* Down into the next subdirectory left, or up when none is. */
		for (;;) {
			l = &lv[depth - 1];
			if (l->i < l->n) {
				next = openat(cur, l->sub[l->i],
					      O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
				if (next >= 0)
					break;
				if (errno == ENOENT) {
					l->i++;
					continue;
				}
				r = -errno;
				goto out;
			}
			if (depth == 1)
				goto out;
			next = openat(cur, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (next < 0 || fstat(next, &st) < 0 || st.st_dev != lv[depth - 2].dev ||
			    st.st_ino != lv[depth - 2].ino) {
				r = next < 0 ? -errno : -ESTALE;
				if (next >= 0)
					close(next);
				goto out;
			}
			close(cur);
			cur = next;
			rm_level_free(&lv[--depth]);
			l = &lv[depth - 1];
			if (unlinkat(cur, l->sub[l->i], AT_REMOVEDIR) < 0 && errno != ENOENT) {
				r = -errno;
				goto out;
			}
			l->i++;
		}
		close(cur);
		cur = next;
	}
out:
	close(cur);
	while (depth)
		rm_level_free(&lv[--depth]);
	free(lv);
	if (r < 0)
		return r;
	return unlinkat(at, name, AT_REMOVEDIR) < 0 && errno != ENOENT ? -errno : 0;
}

/* Component-wise: is PATH equal to PREFIX or below it? */
bool home_fs_path_within(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);

	return !strncmp(path, prefix, n) && (path[n] == 0 || path[n] == '/');
}

bool home_is_store(const char *rel)
{
	for (const char *const *s = pol_credential_stores(); *s; s++)
		if (home_fs_path_within(rel, *s))
			return true;
	return false;
}

int home_fs_fail(char *why, size_t wlen, int r, const char *fmt, ...)
{
	char what[PATH_MAX + 128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(why, wlen, "%s: %s", what, strerror(-r));
	return r;
}

/* The layer's lock, taken without waiting: -EBUSY while a session holds it. */
int home_fs_lock_layer(int layerfd)
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
#define OPAQUE_XATTR "trusted.overlay.opaque"

static int cmp_names(const void *a, const void *b)
{
	return strcmp(((const struct home_name *)a)->name, ((const struct home_name *)b)->name);
}

/* The entries of directory FD (not . and ..), sorted by name; *N of them. */
int home_fs_list(int fd, struct home_name **out, size_t *n)
{
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;
	struct home_name *v = NULL;
	size_t cnt = 0, cap = 0;
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
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (cnt == cap) {
			size_t nc = cap ? 2 * cap : 16;
			struct home_name *nv = realloc(v, nc * sizeof(*v));

			if (!nv)
				goto enomem;
			v = nv;
			cap = nc;
		}
		v[cnt].type = de->d_type;
		if (!(v[cnt].name = strdup(de->d_name)))
			goto enomem;
		cnt++;
	}
	if (cnt)
		qsort(v, cnt, sizeof(*v), cmp_names);
	*out = v;
	*n = cnt;
	return 0;
enomem:
	home_fs_free_list(v, cnt);
	return -ENOMEM;
}

void home_fs_free_list(struct home_name *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
}

/* The names in directory FD (not . and ..), sorted; *N of them.  Free with home_fs_free_names. */
int home_fs_list_names(int fd, char ***out, size_t *n)
{
	struct home_name *v;
	char **names;
	int r = home_fs_list(fd, &v, n);

	*out = NULL;
	if (r < 0)
		return r;
	names = malloc((*n ? *n : 1) * sizeof(*names));
	if (!names) {
		home_fs_free_list(v, *n);
		*n = 0;
		return -ENOMEM;
	}
	for (size_t i = 0; i < *n; i++)
		names[i] = v[i].name;
	free(v);
	*out = names;
	return 0;
}

void home_fs_free_names(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

bool home_fs_is_opaque(int fd)
{
	char v[4];
	ssize_t n = fgetxattr(fd, OPAQUE_XATTR, v, sizeof(v));

	return n == 1 && v[0] == 'y';
}
