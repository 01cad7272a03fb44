/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The session's floor (floor_open.c): BPF LSM when the kernel takes it,
 * otherwise the fallback (Landlock + cgroup-bpf + seccomp), the network
 * floor in both, and the posture that results, said to the human.  A
 * kernel that refused BPF LSM is remembered for the boot (the posture
 * cache in the run directory), so later sessions skip the doomed load.
 */
#ifndef CORDON_FLOOR_OPEN_H
#define CORDON_FLOOR_OPEN_H

#include <stdbool.h>

#include "sup_state.h"

/*
 * The cached fallback posture for this boot and floor build, into *p and
 * floor_error (len bytes): true when there is one (this host has no BPF
 * LSM).
 */
bool posture_cached(struct posture *p, char *floor_error, size_t len);
/*
 * Open the floor and the network floor under the floor lock, reap dead
 * sessions, make and lock s->run_dir.  0, or negative errno, logged (an
 * insufficient posture, --require-full-floor without BPF LSM).
 */
int open_floor(struct sup *s);
/* The posture and what it lacks, on stderr (unless --quiet). */
void print_posture(const struct sup *s);

#endif
