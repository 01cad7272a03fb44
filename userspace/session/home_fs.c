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

/* Remove NAME below DIRFD, a directory with all it holds; never follows a symlink. */
int home_fs_rm_rf_at(int at, const char *name)
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
			r = home_fs_rm_rf_at(dirfd(d), de->d_name);
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
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in directory FD (not . and ..), sorted; *N of them.  Free with home_fs_free_names. */
int home_fs_list_names(int fd, char ***out, size_t *n)
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
