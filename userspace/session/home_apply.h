/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Taking what the agent wrote in its home layer into the real home
 * (`cordon home apply`), or throwing the layer away (`cordon home
 * discard`).  home.h says what apply refuses and why: a credential store,
 * a symlink at a store's name or on its way, anything through a symlink on
 * either side; it runs as the home's owner, never as root.
 */
#ifndef CORDON_HOME_APPLY_H
#define CORDON_HOME_APPLY_H

#include <stddef.h>

/*
 * Copy PATH (relative to HOME, or absolute below it) from the layer into
 * the real home, deletions included, then drop it from the layer so the
 * home shows through again.  A directory is applied whole.  As the home's
 * owner (fsuid/fsgid, no supplementary groups), through openat2
 * RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS on both sides.
 * Refuses (-EPERM) a credential store, a directory holding one in the
 * layer, a symlink at a store's name or on its way; -EBUSY while a session
 * holds the layer; -ELOOP a path through a symlink on either side; -ENOENT
 * when the layer has no change at PATH.  Must run as root.  0, or -errno
 * with WHY.
 */
int home_apply(const char *layer_dir, const char *home, const char *path, char *why,
	       size_t wlen);

/* Empty the layer (upper and workdir), under the lock.  0, or -errno with WHY. */
int home_discard(const char *layer_dir, char *why, size_t wlen);

#endif /* CORDON_HOME_APPLY_H */
