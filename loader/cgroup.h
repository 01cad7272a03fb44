/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * cgroup v2 plumbing: where the hierarchy is mounted, creating and removing
 * the cgroups that are cordon's sessions, and their ids.
 */
#ifndef CORDON_CGROUP_H
#define CORDON_CGROUP_H

#include <stddef.h>
#include <stdint.h>

/*
 * Find the cgroup2 mount point in the text of /proc/self/mountinfo.  Pure.
 * Handles the hybrid layout (/sys/fs/cgroup/unified) and octal escapes.
 * Returns 0, -ENOENT when there is none, -ENAMETOOLONG, -EINVAL on garbage.
 */
int cg_parse_mountinfo(const char *mountinfo, char *out, size_t outlen);

/* Undo mountinfo's octal escapes (\040 for a space, ...) in place. Pure. */
void cg_unescape(char *s);
/* The same, from this process's /proc/self/mountinfo. */
int cg_find_root(char *out, size_t outlen);
/* The text of /proc/self/mountinfo, read once per process (thread-safe). */
int cg_mountinfo(const char **text);

/* Depth of `path` below the cgroup2 `root` (root itself is level 0). Pure. */
int cg_level(const char *root, const char *path);

/* The cgroup id (as bpf_get_current_cgroup_id() reports it) of a cgroup dir. */
int cg_id(const char *path, uint64_t *id);

/* mkdir that tolerates an existing directory. */
int cg_mkdir(const char *path);

/*
 * SIGKILL every member of a cgroup now, without waiting for them to go
 * (cgroup.kill, or each member's pid before 5.14).
 */
int cg_kill(const char *path);

/*
 * Remove a cgroup, killing whatever still lives in it first (cgroup.kill,
 * falling back to SIGKILL of each member on kernels before 5.14).
 */
int cg_destroy(const char *path);

/* Move a process into a cgroup. */
int cg_attach_pid(const char *path, int pid);

/*
 * Where sessions live: <cgroup2>/cordon (made if missing) into `parent`
 * (may be NULL), the depth of a session cgroup below the root, and the
 * parent's id.  Both floors record the last two when they load and check
 * them when they reuse their pins.
 */
int cg_session_parent(char *parent, size_t len, uint32_t *level, uint64_t *parent_id);

#endif /* CORDON_CGROUP_H */
