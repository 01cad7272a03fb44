// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `cordon floor status | load | unload | gc`: the pinned kernel floor.
 */
#include <limits.h>
#include <unistd.h>
#include "floor.h"
#include "instance.h"
#include "cmd.h"
#include "net.h"
#include "probe.h"
#include "reap.h"
#include "util.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: cordon floor status [--json] | load | unload | gc\n"
		   "  status  what is pinned under %s: programs, sessions, events\n"
		   "  load    load, attach and pin the BPF LSM floor (needs root and BPF LSM)\n"
		   "  unload  detach and unpin it (running sessions lose their floor)\n"
		   "  gc      reap sessions whose cordon is gone (their tasks killed),\n"
		   "          and forget kernel entries of sessions whose cgroup is gone\n"
		   "CORDON_INSTANCE=NAME: another floor instance than the live one\n"
		   "(pins, cgroups and run directories of its own; docs/floor.md, Instances)\n",
		instance_pin_dir());
}

static int status(bool json)
{
	json_t *o = NULL, *v;
	size_t i;
	int r = floor_status_json(&o);

	if (r < 0) {
		log_err("floor: cannot read %s: %s", instance_pin_dir(), strerror(-r));
		return 1;
	}
	json_object_set_new(o, "instance", json_string(instance_name()));
	json_object_set_new(o, "pin_dir", json_string(instance_pin_dir()));
	json_object_set_new(o, "run_dir", json_string(instance_run_dir()));
	if (json) {
		json_dumpf(o, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
		fputc('\n', stdout);
	} else if (!json_is_true(json_object_get(o, "loaded"))) {
		printf("floor: not loaded (`cordon floor load`, or any `cordon run`, loads it)\n");
	} else {
		printf("floor: loaded%s, %zu programs attached:",
		       json_is_true(json_object_get(o, "stale")) ? " (STALE: built from another object)" : "",
		       json_array_size(json_object_get(o, "links")));
		json_array_foreach(json_object_get(o, "links"), i, v)
			printf(" %s", json_string_value(v));
		printf("\nevents: %lld, dropped: %lld\nsessions: %zu\n",
		       (long long)json_integer_value(json_object_get(o, "events")),
		       (long long)json_integer_value(json_object_get(o, "drops")),
		       json_array_size(json_object_get(o, "sessions")));
		json_array_foreach(json_object_get(o, "sessions"), i, v)
			printf("  %-12lld %-6lld entries %-6lld drops  %s\n",
			       (long long)json_integer_value(json_object_get(v, "id")),
			       (long long)json_integer_value(json_object_get(v, "entries")),
			       (long long)json_integer_value(json_object_get(v, "drops")),
			       json_string_value(json_object_get(v, "cgroup")) ?: "(cgroup gone: `cordon floor gc`)");
	}
	json_decref(o);
	return 0;
}

static int load(void)
{
	struct floor *f = NULL;
	struct posture p;
	int r = floor_open(&f);

	if (r == 0) {
		floor_close(f);
		printf("floor: loaded and pinned under %s\n", instance_pin_dir());
		return 0;
	}
	/* Say why in the doctor's words: the kernel's own answer, measured. */
	probe_all(&p);
	log_err("floor: cannot load the BPF LSM floor: %s; BPF LSM: %s (posture %s)",
		strerror(-r), p.mech[MECH_BPF_LSM].reason, posture_name(p.level));
	return 1;
}

int cmd_floor(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "status"))
		return status(argc > 2 && !strcmp(argv[2], "--json"));
	if (!strcmp(argv[1], "load"))
		return load();
	if (!strcmp(argv[1], "unload")) {
		int r = floor_unload();
		if (r < 0) {
			log_err("floor: unload: %s", strerror(-r));
			return 1;
		}
		printf("floor: unloaded\n");
		return 0;
	}
	if (!strcmp(argv[1], "gc")) {
		struct net *net = NULL;
		int lock = reap_floor_lock(), reaped, r;

		if (lock < 0) {
			log_err("floor: gc: %s/.floor.lock: %s", instance_run_dir(), strerror(-lock));
			return 1;
		}
		/* The network floor as pinned; gc never loads it. */
		char cfg[PATH_MAX];

		snprintf(cfg, sizeof(cfg), "%s/config", instance_net_pin_dir());
		if (access(cfg, F_OK) == 0 && (r = net_open(&net)) < 0)
			log_warn("floor: gc: the network floor: %s", strerror(-r));
		reaped = reap_stale(net);
		if (net && (r = net_gc(net)) < 0)
			log_warn("floor: gc: the network floor: %s", strerror(-r));
		r = floor_gc();
		net_close(net);
		close(lock);
		if (r < 0) {
			log_err("floor: gc: %s", strerror(-r));
			return 1;
		}
		printf("floor: %d stale session(s) removed, %d dead session(s) reaped\n", r,
		       reaped < 0 ? 0 : reaped);
		return 0;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	usage(stderr);
	return 2;
}
