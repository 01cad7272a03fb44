/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The kernel floor: the BPF LSM programs, loaded and attached once and
 * pinned under /sys/fs/bpf/cordon so that later sessions reuse them (a
 * session start pays for map updates, not for program loads), and the
 * sessions: cgroups whose tasks the programs confine with a compiled policy.
 */
#ifndef CORDON_FLOOR_H
#define CORDON_FLOOR_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <jansson.h>
#include "cordon.h"

struct floor;
struct floor_session;
struct policy;

/*
 * Open the pinned floor, or load, attach and pin it if it is not there (or
 * was built from another BPF object).  All or nothing: on failure nothing
 * stays attached or pinned, and the error is the kernel's (-EPERM when it
 * refuses LSM programs).
 */
int floor_open(struct floor **out);
/* Load and attach without pinning: the floor lives as long as the handle. */
int floor_load_unpinned(struct floor **out);
void floor_close(struct floor *f);
/* Detach and unpin everything (sessions still running lose their floor). */
int floor_unload(void);

/* Where sessions live: <cgroup2>/cordon/<name>. */
int floor_cgroup_parent(char *out, size_t len);

/*
 * Create a session: a new cgroup, the policy compiled into the maps (rule
 * roots resolved to inodes now; protected directories enumerated file by
 * file), then the session registered, last, so that it is never active
 * half-configured.  name may be NULL.
 */
int floor_session_create(struct floor *f, const struct policy *p, const char *name,
			 struct floor_session **out);
/* Copy the session's rules on device FROM to device TO (the agent's own /proc). */
int floor_session_alias_dev(struct floor *f, struct floor_session *s, uint64_t from,
			    uint64_t to);
/*
 * The same, built where the calling thread's paths are a session's view,
 * with HOST_ROOT an O_PATH descriptor of the host's "/": protected objects
 * are keyed as the host has them too (-1: as floor_session_create).
 */
int floor_session_create_at(struct floor *f, const struct policy *p, const char *name,
			    int host_root, struct floor_session **out);
/*
 * Whether no process but root (CAP_FOWNER) can make a hard link to the
 * object ST: a directory, or with fs.protected_hardlinks on, an object of
 * root's that a non-owner may not link.  Pure.
 */
bool floor_link_guarded(const struct stat *st, bool protected_hardlinks);
/* Whether ST is a directory of root's that only root can search.  Pure. */
bool floor_root_only_dir(const struct stat *st);
/*
 * The number of rule-map entries (of CORDON_MAX_FS_RULES, shared by every
 * session) a session of P would take on this host now; HOST_ROOT as above.
 */
int floor_compile_count(const struct policy *p, int host_root, size_t *n);
uint64_t floor_session_id(const struct floor_session *s);
const char *floor_session_cgroup(const struct floor_session *s);
size_t floor_session_entries(const struct floor_session *s);
/* Move the calling process into the session. */
int floor_session_enter(const struct floor_session *s);
/*
 * Kill every task of the session, remove its cgroup, then its map entries:
 * in that order, so that no task ever runs unconfined.
 */
int floor_session_destroy(struct floor *f, struct floor_session *s);

typedef int (*floor_event_fn)(void *ctx, const struct cordon_event *e);

/* Deliver the session's pending events to fn; waits up to timeout_ms. */
int floor_session_poll(struct floor_session *s, int timeout_ms, floor_event_fn fn, void *ctx);
/* An fd that polls readable when events are pending, or -errno. */
int floor_session_fd(struct floor_session *s);
/* Events the session's ring buffer could not take. */
int floor_session_drops(struct floor *f, const struct floor_session *s, uint64_t *out);

/* Totals of the per-CPU counters (enum cordon_counter). */
int floor_counter(struct floor *f, enum cordon_counter which, uint64_t *out);

/* The event's path as text (joining dentry-walk components). */
void floor_event_path(const struct cordon_event *e, char *out, size_t len);
const char *floor_op_name(uint32_t op);
const char *floor_reason_name(uint32_t reason);

/*
 * What is pinned, as JSON: loaded (bool), stale (bool), links (names),
 * sessions ({id, cgroup or null, entries, drops}), events, drops.  Reads the
 * pins only: never loads anything.
 */
int floor_status_json(json_t **out);

/*
 * Forget sessions whose cgroup no longer exists (their cordon died without
 * cleaning up): their map entries go.  Returns how many were removed.
 */
int floor_gc(void);

/* The build id of the floor's BPF object (what pins are checked against). */
uint64_t floor_build_id(void);
/* Kernel dev_t encoding of a userspace st_dev (MAJOR << 20 | MINOR). */
uint32_t floor_kdev(uint64_t st_dev);

#endif
