/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The agent's home as a copy-on-write view of the real one: an overlayfs
 * whose lower layers are (top first) a per-session mask and the real home,
 * and whose upper layer persists per (user, profile) in
 * BASE/<uid>-<profile>/{upper,work} (BASE: HOME_LAYER_BASE, root-only
 * 0700).  The agent reads the real home, writes only its layer; the human
 * reviews the layer (`cordon home diff`) and takes what they choose
 * (`cordon home apply`).
 *
 * Attack: the agent reads ~/.ssh, ~/.aws... (pol_credential_stores()).
 * The mask holds an overlay whiteout for each, so they are absent from the
 * view (ENOENT, not in readdir), not merely denied.  The mask is a lower
 * layer the agent cannot reach (below /var/lib/cordon, and not in its
 * view): creating ~/.ssh in the view makes a new directory in the upper
 * that merges with nothing, since the lookup below it stops at the mask's
 * whiteout.  A store whose parent is missing from the home is hidden at
 * the parent (the mask whites out ~/.gem when there is no ~/.gem), so one
 * the human creates during the session stays hidden too.  The agent cannot
 * forge overlay metadata (trusted.overlay.* needs CAP_SYS_ADMIN, and the
 * view filters those names).
 * Attack: the agent plants ~/.docker/config.json, a symlink ~/.ssh, or
 * rewrites ~/.bashrc in its layer and waits for the human to copy it.
 * `home apply` copies only the paths the human names, never a credential
 * store nor a symlink at a store's name or on its way, as the home's owner
 * (fsuid), never following a symlink on either side.
 *
 * What it cannot close: a store reached through a symlink in the real home
 * (~/.config -> /elsewhere/config: the view shows the symlink, and what it
 * points to is outside the overlay); a store at a name not in the list;
 * the content of what the human applies (diff shows it, they must read
 * it).
 *
 * Concurrency: one session per layer.  home_layer_open takes an flock on
 * BASE/<uid>-<profile>/lock for the session's life; a second session of
 * the same user and profile gets -EBUSY (overlayfs must not share an upper
 * and workdir between mounts).  Chosen over a throw-away upper for the
 * second session: work the agent does there would be lost silently, while
 * a clear refusal lets the human wait or pick another profile.  `home
 * apply` and `home discard` take the same lock, so they refuse while a
 * session runs.
 */
#ifndef CORDON_HOME_H
#define CORDON_HOME_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The review side (diff, apply, discard): its own modules, here for the callers of the whole. */
#include "home_apply.h"
#include "home_diff.h"

#define HOME_LAYER_BASE "/var/lib/cordon/home"

struct home_layer {
	char dir[PATH_MAX];     /* BASE/<uid>-<profile> */
	char home[PATH_MAX];    /* the real home */
	int lock_fd;            /* holds the flock; -1 when closed */
};

/*
 * The layer directory of (UID, PROFILE) below BASE (NULL: HOME_LAYER_BASE)
 * into DIR: PROFILE sanitised to [A-Za-z0-9._-] (others become '_'), at
 * most 64 characters.  Pure.  0, -EINVAL (empty profile) or -ENAMETOOLONG.
 */
int home_layer_path(const char *base, uid_t uid, const char *profile, char *dir, size_t len);

/*
 * Prepare the layer of (UID, PROFILE) for a session over HOME (an absolute
 * directory): the base and layer directories root-owned 0700, the lock
 * taken, upper owned by UID:GID with HOME's mode (the overlay's root looks
 * like the home), workdir, and the mask rebuilt from the real home as it
 * is now.  BASE NULL: HOME_LAYER_BASE.  Must run as root.  0, or -errno
 * with WHY (-EBUSY: a session of this layer is running).  On success the
 * caller owns *OUT and calls home_layer_close after the session's last
 * process is gone (the lock is what keeps a second session out).
 */
int home_layer_open(const char *base, const char *home, uid_t uid, gid_t gid,
		    const char *profile, struct home_layer *out, char *why, size_t wlen);

/*
 * A detached overlay mount of an open layer (nosuid, nodev; index,
 * metacopy and redirect_dir off, xino auto), built with fsopen/fsconfig/
 * fsmount on descriptors: *MOUNT_FD (close-on-exec) is for the caller to
 * move_mount onto $HOME in the session's mount namespace.  Nothing here
 * mounts on a path.  0, or -errno with WHY (the kernel's own message when
 * it gave one).
 */
int home_layer_mount(const struct home_layer *l, int *mount_fd, char *why, size_t wlen);

/* Release the lock.  Safe on a closed layer, and on one home_layer_open refused. */
void home_layer_close(struct home_layer *l);


#endif /* CORDON_HOME_H */
