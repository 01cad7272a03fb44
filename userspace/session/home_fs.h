/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The descriptor helpers the home layer's modules share (home.c sets the
 * layer up, home_diff.c walks it, home_apply.c copies out of it): the upper
 * layer holds whatever the agent wrote, so everything here reaches it
 * through descriptors and never follows a symlink out of it.  Also the one
 * answer all of them need: is a path a credential store (home.h says what
 * hiding them closes).
 */
#ifndef CORDON_HOME_FS_H
#define CORDON_HOME_FS_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "util.h"

static inline void closedirp(DIR **d)
{
	if (*d)
		(void)closedir(*d);
}
#define _cleanup_closedir_ _cleanup_(closedirp)

/* Is ST an overlay whiteout (a 0:0 character device)?  Pure. */
bool home_fs_is_whiteout(const struct stat *st);

/*
 * Open PATH below DIRFD (openat2 RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|
 * RESOLVE_NO_MAGICLINKS, O_CLOEXEC added): never through a symlink nor
 * "..".  The descriptor, or -errno.
 */
int home_fs_open_beneath(int dirfd, const char *path, int flags);

/*
 * Remove NAME below AT, a directory with all it holds; never follows a
 * symlink.  A missing NAME is not an error.  0, or -errno.
 */
int home_fs_rm_rf_at(int at, const char *name);

/* Component-wise: is PATH equal to PREFIX or below it?  Pure. */
bool home_fs_path_within(const char *path, const char *prefix);

/*
 * The names in directory FD (not . and ..), sorted, into *OUT; *N of them.
 * Free with home_fs_free_names.  0, or -errno.
 */
int home_fs_list_names(int fd, char ***out, size_t *n);
void home_fs_free_names(char **v, size_t n);

/* The same with each entry's type from the directory (DT_*, DT_UNKNOWN where it gives none). */
struct home_name {
	char *name;
	unsigned char type;
};
int home_fs_list(int fd, struct home_name **out, size_t *n);
void home_fs_free_list(struct home_name *v, size_t n);

/* Is the directory FD opaque in its layer (trusted.overlay.opaque "y")? */
bool home_fs_is_opaque(int fd);

/* Is REL (relative to a home) a credential store or below one?  Pure. */
bool home_is_store(const char *rel);

/* WHY: what failed (FMT), and how (R, a negative errno).  Returns R. */
int home_fs_fail(char *why, size_t wlen, int r, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * Take the lock of the layer directory LAYERFD (its file "lock", made if
 * missing), without waiting.  The lock's descriptor (the caller closes it
 * to release), -EBUSY while a session holds it, or -errno.
 */
int home_fs_lock_layer(int layerfd);

#endif /* CORDON_HOME_FS_H */
