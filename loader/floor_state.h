/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The kernel floor's handles, shared by its parts (floor.c, floor_events.c); private to loader/. */
#ifndef CORDON_FLOOR_STATE_H
#define CORDON_FLOOR_STATE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <bpf/libbpf.h>
#include "cordon.h"
#include "floor.skel.h"

struct floor {
	struct floor_bpf *skel;     /* NULL when opened from pins */
	struct bpf_link *links[64];
	size_t n_links;
	int fd_config, fd_sessions, fd_rules, fd_events, fd_counters, fd_sess_events, fd_tree_gen;
	bool pinned;
};

struct floor_session {
	char cgroup[PATH_MAX];
	uint64_t id;
	uint32_t policy_id;
	struct cordon_fs_key *keys;
	size_t n_keys;
	int rb_fd;
	struct ring_buffer *rb;
	int (*fn)(void *ctx, const struct cordon_event *e);       /* floor_event_fn */
	void *ctx;
};

#endif
