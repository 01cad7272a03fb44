/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The kernel floor: loading the BPF LSM programs, attaching them, and
 * populating the maps that say which cgroups are sessions and what each
 * session's policy allows.  Adding or removing a session changes map entries
 * only.
 */
#ifndef CORDON_FLOOR_H
#define CORDON_FLOOR_H

#include <stdint.h>
#include "cordon.h"

struct floor;

/*
 * Load and attach every program.  All or nothing: on failure nothing stays
 * attached and the error is the kernel's (-EPERM when BPF LSM is refused).
 */
int floor_open(struct floor **out);
void floor_close(struct floor *f);

/* Tell the programs at which cgroup depth session cgroups live. */
int floor_set_session_level(struct floor *f, uint32_t level);
int floor_add_session(struct floor *f, uint64_t cgroup_id, uint32_t policy_id);
int floor_del_session(struct floor *f, uint64_t cgroup_id);

/*
 * Add a filesystem rule rooted at the object `path` names now (resolved
 * once, here; later renames of the path do not move the rule).
 */
int floor_add_fs_rule(struct floor *f, uint32_t policy_id, const char *path,
		      uint32_t allow, uint32_t deny, uint32_t rule_id);

typedef int (*floor_event_fn)(void *ctx, const struct cordon_event *e);

/* Deliver pending events to fn; waits up to timeout_ms.  Returns a count. */
int floor_poll(struct floor *f, int timeout_ms, floor_event_fn fn, void *ctx);

/* Totals of the per-CPU counters (enum cordon_counter). */
int floor_counter(struct floor *f, enum cordon_counter which, uint64_t *out);

/* Kernel dev_t encoding of a userspace st_dev (MAJOR << 20 | MINOR). */
uint32_t floor_kdev(uint64_t st_dev);

#endif
