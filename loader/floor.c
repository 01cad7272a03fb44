// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#define _GNU_SOURCE
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "floor.h"
#include "floor.skel.h"
#include "util.h"

struct floor {
	struct floor_bpf *skel;
	struct ring_buffer *rb;
	floor_event_fn fn;
	void *ctx;
};

uint32_t floor_kdev(uint64_t st_dev)
{
	return (major(st_dev) << 20) | minor(st_dev);
}

static int on_event(void *ctx, void *data, size_t len)
{
	struct floor *f = ctx;

	if (len < sizeof(struct cordon_event) || !f->fn)
		return 0;
	return f->fn(f->ctx, data);
}

int floor_open(struct floor **out)
{
	struct floor *f;
	int r;

	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->skel = floor_bpf__open();
	if (!f->skel) {
		r = -errno;
		goto fail;
	}
	r = floor_bpf__load(f->skel);
	if (r)
		goto fail;
	r = floor_bpf__attach(f->skel);
	if (r)
		goto fail;
	f->rb = ring_buffer__new(bpf_map__fd(f->skel->maps.cordon_events), on_event, f, NULL);
	if (!f->rb) {
		r = -errno;
		goto fail;
	}
	*out = f;
	return 0;
fail:
	/* Destroying the skeleton detaches whatever did attach: never half a floor. */
	floor_close(f);
	return r < 0 ? r : -EINVAL;
}

void floor_close(struct floor *f)
{
	if (!f)
		return;
	ring_buffer__free(f->rb);
	floor_bpf__destroy(f->skel);
	free(f);
}

int floor_set_session_level(struct floor *f, uint32_t level)
{
	struct cordon_config cfg = { .session_level = level };
	uint32_t zero = 0;

	if (bpf_map_update_elem(bpf_map__fd(f->skel->maps.cordon_config), &zero, &cfg, 0))
		return -errno;
	return 0;
}

int floor_add_session(struct floor *f, uint64_t cgroup_id, uint32_t policy_id)
{
	struct cordon_session s = { .policy_id = policy_id };

	if (bpf_map_update_elem(bpf_map__fd(f->skel->maps.cordon_sessions), &cgroup_id, &s, 0))
		return -errno;
	return 0;
}

int floor_del_session(struct floor *f, uint64_t cgroup_id)
{
	if (bpf_map_delete_elem(bpf_map__fd(f->skel->maps.cordon_sessions), &cgroup_id))
		return -errno;
	return 0;
}

int floor_add_fs_rule(struct floor *f, uint32_t policy_id, const char *path,
		      uint32_t allow, uint32_t deny, uint32_t rule_id)
{
	struct cordon_fs_key key = { .policy_id = policy_id };
	struct cordon_fs_rule rule = { .allow = allow, .deny = deny, .rule_id = rule_id };
	struct stat st;

	if (stat(path, &st) < 0)
		return -errno;
	key.dev = floor_kdev(st.st_dev);
	key.ino = st.st_ino;
	if (bpf_map_update_elem(bpf_map__fd(f->skel->maps.cordon_fs_rules), &key, &rule, 0))
		return -errno;
	return 0;
}

int floor_poll(struct floor *f, int timeout_ms, floor_event_fn fn, void *ctx)
{
	int r;

	f->fn = fn;
	f->ctx = ctx;
	r = ring_buffer__poll(f->rb, timeout_ms);
	f->fn = NULL;
	return r;
}

int floor_counter(struct floor *f, enum cordon_counter which, uint64_t *out)
{
	int ncpu = libbpf_num_possible_cpus();
	uint32_t key = which;
	uint64_t *vals;

	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	vals = calloc((size_t)ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	if (bpf_map_lookup_elem(bpf_map__fd(f->skel->maps.cordon_counters), &key, vals)) {
		free(vals);
		return -errno;
	}
	*out = 0;
	for (int i = 0; i < ncpu; i++)
		*out += vals[i];
	free(vals);
	return 0;
}
