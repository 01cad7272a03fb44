/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The network floor's handle, shared by its parts (net.c, net_events.c, net_recheck.c); private to loader/. */
#ifndef CORDON_NET_STATE_H
#define CORDON_NET_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <bpf/libbpf.h>
#include "cordon.h"
#include "net.skel.h"

struct net {
	struct net_bpf *skel;       /* NULL when opened from pins */
	struct bpf_link *links[16];
	size_t n_links;
	int fd_config, fd_rules, fd_events, fd_counters, fd_exec_key, fd_exec_expect;
	int fd_sess_events, fd_drops;
	bool exec_recheck;          /* its programs are loaded and attached */
	bool unix_gate;             /* the cgroup unix programs are loaded and attached */
	struct cordon_exec_key exec_key;
	struct ring_buffer *rb;
	int (*fn)(void *ctx, const struct cordon_net_event *e);   /* net_event_fn */
	void *ctx;
	int delivered;
};

#endif
