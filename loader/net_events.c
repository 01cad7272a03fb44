// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The network floor's events: the rings, their drops, and their names (net.h). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cgroup.h"
#include "net.h"
#include "net_state.h"
#include "pin.h"
#include "net.skel.h"
#include "net.id.h"
#include "policy.h"
#include "util.h"


struct net_ring {
	struct net *n;
	uint64_t id;
	int rb_fd;
	struct ring_buffer *rb;
	net_event_fn fn;
	void *ctx;
	int delivered;
};

/*
 * The drops entry first, then the ring: an event the ring cannot take is
 * counted under the session from the moment the ring exists.
 */
int net_ring_open(struct net *n, uint64_t cgroup_id, struct net_ring **out)
{
	struct net_ring *g;
	uint64_t zero = 0;
	int r;

	if (!cgroup_id)
		return -EINVAL;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->n = n;
	g->id = cgroup_id;
	g->rb_fd = pin_ring_create("cordon_net_rb", CORDON_NET_SESSION_RINGBUF);
	if (g->rb_fd < 0) {
		r = g->rb_fd;
		free(g);
		return r;
	}
	if (bpf_map_update_elem(n->fd_drops, &cgroup_id, &zero, BPF_NOEXIST)) {
		r = -errno;
		goto fail;
	}
	if (bpf_map_update_elem(n->fd_sess_events, &cgroup_id, &g->rb_fd, BPF_NOEXIST)) {
		r = -errno;
		(void)bpf_map_delete_elem(n->fd_drops, &cgroup_id);
		goto fail;
	}
	*out = g;
	return 0;
fail:
	close(g->rb_fd);
	free(g);
	return r;
}

static int on_ring(void *ctx, void *data, size_t len)
{
	struct net_ring *g = ctx;

	if (len < sizeof(struct cordon_net_event) || !g->fn)
		return 0;
	g->delivered++;
	return g->fn(g->ctx, data);
}

int net_ring_fd(struct net_ring *g)
{
	if (!g->rb) {
		g->rb = ring_buffer__new(g->rb_fd, on_ring, g, NULL);
		if (!g->rb)
			return -errno;
	}
	return ring_buffer__epoll_fd(g->rb);
}

int net_ring_poll(struct net_ring *g, int timeout_ms, net_event_fn fn, void *ctx)
{
	int r = net_ring_fd(g);

	if (r < 0)
		return r;
	g->fn = fn;
	g->ctx = ctx;
	g->delivered = 0;
	r = ring_buffer__poll(g->rb, timeout_ms);
	g->fn = NULL;
	return r < 0 ? r : g->delivered;
}

int net_ring_drops(const struct net_ring *g, uint64_t *out)
{
	if (bpf_map_lookup_elem(g->n->fd_drops, &g->id, out))
		return -errno;
	return 0;
}

void net_ring_close(struct net_ring *g)
{
	if (!g)
		return;
	(void)bpf_map_delete_elem(g->n->fd_sess_events, &g->id);
	(void)bpf_map_delete_elem(g->n->fd_drops, &g->id);
	ring_buffer__free(g->rb);
	close(g->rb_fd);
	free(g);
}

static int on_rb(void *ctx, void *data, size_t len)
{
	struct net *n = ctx;

	if (len < sizeof(struct cordon_net_event) || !n->fn)
		return 0;
	n->delivered++;
	return n->fn(n->ctx, data);
}

int net_poll(struct net *n, int timeout_ms, net_event_fn fn, void *ctx)
{
	int r;

	if (!n->rb) {
		n->rb = ring_buffer__new(n->fd_events, on_rb, n, NULL);
		if (!n->rb)
			return -errno;
	}
	n->fn = fn;
	n->ctx = ctx;
	n->delivered = 0;
	r = ring_buffer__poll(n->rb, timeout_ms);
	n->fn = NULL;
	return r < 0 ? r : n->delivered;
}

int net_counter(struct net *n, uint32_t which, uint64_t *out)
{
	int ncpu = libbpf_num_possible_cpus();
	uint32_t key = which;
	_cleanup_free_ uint64_t *vals = NULL;

	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	vals = calloc((size_t)ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	if (bpf_map_lookup_elem(n->fd_counters, &key, vals))
		return -errno;
	*out = 0;
	for (int i = 0; i < ncpu; i++)
		*out += vals[i];
	return 0;
}

const char *net_op_name(uint32_t op)
{
	static const char *const names[] = {
		[CORDON_NET_OP_CONNECT] = "connect", [CORDON_NET_OP_SENDMSG] = "sendmsg",
		[CORDON_NET_OP_BIND] = "bind", [CORDON_NET_OP_SOCKET] = "socket",
		[CORDON_NET_OP_UNIX_CONNECT] = "unix-connect",
		[CORDON_NET_OP_UNIX_SENDMSG] = "unix-sendmsg",
		[CORDON_NET_OP_INGRESS] = "ingress",
	};
	return op < ARRAY_SIZE(names) && names[op] ? names[op] : "?";
}

const char *net_reason_name(uint32_t reason)
{
	static const char *const names[] = {
		[CORDON_NET_REASON_RULE] = "rule", [CORDON_NET_REASON_DEFAULT] = "default-deny",
		[CORDON_NET_REASON_NO_SESSION] = "no-session",
		[CORDON_NET_REASON_NONLOCAL] = "non-loopback-bind",
		[CORDON_NET_REASON_SOCKET_KIND] = "socket-kind",
		[CORDON_NET_REASON_FAMILY] = "family-mismatch",
		[CORDON_NET_REASON_CORDON] = "cordon",
		[CORDON_NET_REASON_UNIX_PATH] = "unix-path",
		[CORDON_NET_REASON_LISTENER] = "inbound-to-listener",
		[CORDON_NET_REASON_NOT_INET] = "not-tcp-udp",
	};
	return reason < ARRAY_SIZE(names) && names[reason] ? names[reason] : "?";
}

void net_event_str(const struct cordon_net_event *e, char *out, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	if (e->op == CORDON_NET_OP_UNIX_CONNECT || e->op == CORDON_NET_OP_UNIX_SENDMSG)
		snprintf(out, len, "unix %.*s", (int)strnlen(e->path, sizeof(e->path)), e->path);
	else if (e->op == CORDON_NET_OP_SOCKET)
		snprintf(out, len, "family %u type %u proto %u", e->family, e->port, e->proto);
	else if (e->family == 4)
		snprintf(out, len, "%s:%u", inet_ntop(AF_INET, e->addr, a, sizeof(a)) ?: "?", e->port);
	else
		snprintf(out, len, "[%s]:%u", inet_ntop(AF_INET6, e->addr, a, sizeof(a)) ?: "?",
			 e->port);
}
