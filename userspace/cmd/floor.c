// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `cordon floor status | load | unload | gc`: the pinned kernel floor.
 */
#include <dirent.h>
#include <time.h>
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
	fprintf(f, "usage: cordon floor status [--json] | load | unload | gc [--json]\n"
		   "  status  each part of the floor and whether it is in force: the BPF LSM\n"
		   "          floor (%s), the network floor and its exec\n"
		   "          recheck (%s); then the sessions under\n"
		   "          %s: name, user, pid, age, workspace (root)\n"
		   "  load    load, attach and pin the BPF LSM floor (needs root and BPF LSM)\n"
		   "  unload  detach and unpin it (running sessions lose their floor)\n"
		   "  gc      reap sessions whose cordon is gone (their tasks killed),\n"
		   "          and forget kernel entries of sessions whose cgroup is gone\n"
		   "CORDON_INSTANCE=NAME: another floor instance than the live one\n"
		   "(pins, cgroups and run directories of its own; docs/floor.md, Instances)\n",
		instance_pin_dir(), instance_net_pin_dir(), instance_run_dir());
}

/* The links pinned in DIR (files link_NAME), as names; an absent DIR: none. */
static json_t *pinned_links(const char *dir)
{
	json_t *a = json_array();
	struct dirent *de;
	DIR *d = opendir(dir);

	while (d && (de = readdir(d)))
		if (!strncmp(de->d_name, "link_", 5))
			json_array_append_new(a, json_string(de->d_name + 5));
	if (d)
		closedir(d);
	return a;
}

/*
 * Why the BPF LSM floor is not there, as the last session to start this
 * boot measured it (floor_open.c's posture cache), else NULL: status does
 * not probe (a probe loads programs; `cordon doctor` does that).
 */
static json_t *lsm_reason(void)
{
	_cleanup_free_ char *text = NULL;
	char path[PATH_MAX];
	json_t *c, *r = NULL;

	snprintf(path, sizeof(path), "%s/posture.json", instance_run_dir());
	if (read_file(path, &text, 1 << 16) < 0)
		return NULL;
	c = json_loads(text, 0, NULL);
	r = json_object_get(json_object_get(json_object_get(c, "mechanisms"), "bpf_lsm"), "reason");
	r = json_is_string(r) ? json_incref(r) : NULL;
	json_decref(c);
	return r;
}

/*
 * Every part in its own member, each saying whether it is in force: the
 * fallback posture has no LSM floor but a network floor and an exec
 * recheck that confine every session (this said "not loaded" and nothing
 * more while sessions ran under them).  Sessions: the run directories, as
 * the reaper sees them (live while their cordon holds the lock).
 */
static json_t *status_json(void)
{
	json_t *o = json_object(), *lsm = NULL, *net, *links, *sess = NULL, *why;
	int r = floor_status_json(&lsm), lock;

	if (r < 0) {
		lsm = json_pack("{s:b,s:s}", "loaded", 0, "error", strerror(-r));
	}
	if (!json_is_true(json_object_get(lsm, "loaded")) && (why = lsm_reason()))
		json_object_set_new(lsm, "unavailable", why);
	json_object_set_new(o, "lsm", lsm);
	links = pinned_links(instance_net_pin_dir());
	net = json_pack("{s:b,s:o}", "loaded", json_array_size(links) > 0, "links", links);
	{
		bool recheck = false;
		size_t i;
		json_t *v;

		json_array_foreach(links, i, v)
			recheck = recheck || !strcmp(json_string_value(v), "cordon_exec_recheck");
		json_object_set_new(net, "exec_recheck", json_boolean(recheck));
	}
	json_object_set_new(o, "net", net);
	json_object_set_new(o, "posture", json_string(
		json_is_true(json_object_get(lsm, "loaded")) ? "full" :
		json_is_true(json_object_get(net, "loaded")) ? "fallback" : "none loaded"));
	lock = reap_floor_lock();
	if (lock >= 0) {
		time_t now = time(NULL);
		size_t i;
		json_t *v;

		sess = reap_list_sessions();
		close(lock);
		json_array_foreach(sess, i, v)
			if (json_is_integer(json_object_get(v, "started")))
				json_object_set_new(v, "age_s", json_integer((json_int_t)now -
						    json_integer_value(json_object_get(v, "started"))));
	} else {
		json_object_set_new(o, "sessions_error", json_sprintf("%s: %s", instance_run_dir(),
								      strerror(-lock)));
	}
	json_object_set_new(o, "sessions", sess ?: json_null());
	json_object_set_new(o, "instance", json_string(instance_name()));
	json_object_set_new(o, "pin_dir", json_string(instance_pin_dir()));
	json_object_set_new(o, "run_dir", json_string(instance_run_dir()));
	return o;
}

/* "42s", "7m", "3h", "2d" (or "?"). */
static const char *age_text(json_t *v, char *buf, size_t len)
{
	long long s = json_integer_value(v);

	if (!json_is_integer(v) || s < 0)
		snprintf(buf, len, "?");
	else if (s < 120)
		snprintf(buf, len, "%llds", s);
	else if (s < 7200)
		snprintf(buf, len, "%lldm", s / 60);
	else if (s < 172800)
		snprintf(buf, len, "%lldh", s / 3600);
	else
		snprintf(buf, len, "%lldd", s / 86400);
	return buf;
}

static const char *str(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k)) ?: "?";
}

static int status(bool json)
{
	json_t *o = status_json(), *lsm = json_object_get(o, "lsm"), *net = json_object_get(o, "net");
	json_t *sess = json_object_get(o, "sessions"), *v;
	size_t i, live = 0;

	if (json) {
		json_dumpf(o, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
		fputc('\n', stdout);
		json_decref(o);
		return 0;
	}
	if (json_object_get(lsm, "error")) {
		printf("floor: cannot read %s: %s\n", instance_pin_dir(), str(lsm, "error"));
	} else if (!json_is_true(json_object_get(lsm, "loaded"))) {
		printf("floor: BPF LSM floor not loaded (%s)\n",
		       json_object_get(lsm, "unavailable") ?
		       str(lsm, "unavailable") : "`cordon floor load`, or any `cordon run`, loads it");
	} else {
		printf("floor: loaded%s, %zu programs attached:",
		       json_is_true(json_object_get(lsm, "stale")) ? " (STALE: built from another object)" : "",
		       json_array_size(json_object_get(lsm, "links")));
		json_array_foreach(json_object_get(lsm, "links"), i, v)
			printf(" %s", json_string_value(v));
		printf("\nevents: %lld, dropped: %lld\nkernel entries: %zu session(s)\n",
		       (long long)json_integer_value(json_object_get(lsm, "events")),
		       (long long)json_integer_value(json_object_get(lsm, "drops")),
		       json_array_size(json_object_get(lsm, "sessions")));
		json_array_foreach(json_object_get(lsm, "sessions"), i, v)
			printf("  %-12lld %-6lld entries %-6lld drops  %s\n",
			       (long long)json_integer_value(json_object_get(v, "id")),
			       (long long)json_integer_value(json_object_get(v, "entries")),
			       (long long)json_integer_value(json_object_get(v, "drops")),
			       json_string_value(json_object_get(v, "cgroup")) ?: "(cgroup gone: `cordon floor gc`)");
	}
	if (json_is_true(json_object_get(net, "loaded")))
		printf("network floor: loaded, %zu programs attached (exec recheck %s)\n",
		       json_array_size(json_object_get(net, "links")),
		       json_is_true(json_object_get(net, "exec_recheck")) ? "on" : "NOT attached");
	else
		printf("network floor: not loaded (any `cordon run` loads it)\n");
	printf("posture in force: %s\n", str(o, "posture"));
	if (!json_is_array(sess)) {
		printf("sessions: unknown (%s)\n", str(o, "sessions_error"));
		json_decref(o);
		return 0;
	}
	json_array_foreach(sess, i, v)
		live += json_is_true(json_object_get(v, "live"));
	printf("sessions: %zu live", live);
	if (json_array_size(sess) > live)
		printf(", %zu whose cordon is gone (`cordon floor gc` reaps them)",
		       json_array_size(sess) - live);
	printf("\n");
	if (json_array_size(sess))
		printf("  %-18s %-5s %-12s %-8s %-5s %s\n", "NAME", "STATE", "USER", "PID", "AGE",
		       "WORKSPACE");
	json_array_foreach(sess, i, v) {
		char age[24];

		printf("  %-18s %-5s %-12s %-8lld %-5s %s\n", str(v, "name"),
		       json_is_true(json_object_get(v, "live")) ? "live" : "gone", str(v, "user"),
		       (long long)json_integer_value(json_object_get(v, "pid")),
		       age_text(json_object_get(v, "age_s"), age, sizeof(age)), str(v, "workspace"));
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

/*
 * SUB's options: --help (usage, exit 0) and, where JSON is non-NULL,
 * --json; anything else is an error naming it (exit 2).  -1 to go on.
 */
static int sub_options(int argc, char **argv, bool *json)
{
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		}
		if (json && !strcmp(argv[i], "--json")) {
			*json = true;
			continue;
		}
		log_err("floor %s: unknown %s '%s' (try `cordon floor --help`)", argv[1],
			argv[i][0] == '-' ? "option" : "argument", argv[i]);
		return 2;
	}
	return -1;
}

static int gc(bool json)
{
	struct net *net = NULL;
	int lock = reap_floor_lock(), reaped, r;
	char cfg[PATH_MAX];

	if (lock < 0) {
		log_err("floor: gc: %s/.floor.lock: %s", instance_run_dir(), strerror(-lock));
		return 1;
	}
	/* The network floor as pinned; gc never loads it. */
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
	if (json)
		printf("{\"stale_removed\": %d, \"reaped\": %d}\n", r, reaped < 0 ? 0 : reaped);
	else
		printf("floor: %d stale session(s) removed, %d dead session(s) reaped\n", r,
		       reaped < 0 ? 0 : reaped);
	return 0;
}

int cmd_floor(int argc, char **argv)
{
	bool json = false;
	int r;

	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return 0;
	}
	if (argc < 2)
		return status(false);
	if (!strcmp(argv[1], "status"))
		return (r = sub_options(argc, argv, &json)) >= 0 ? r : status(json);
	if (!strcmp(argv[1], "gc"))
		return (r = sub_options(argc, argv, &json)) >= 0 ? r : gc(json);
	if (!strcmp(argv[1], "load"))
		return (r = sub_options(argc, argv, NULL)) >= 0 ? r : load();
	if (!strcmp(argv[1], "unload")) {
		if ((r = sub_options(argc, argv, NULL)) >= 0)
			return r;
		r = floor_unload();
		if (r < 0) {
			log_err("floor: unload: %s", strerror(-r));
			return 1;
		}
		printf("floor: unloaded\n");
		return 0;
	}
	log_err("floor: unknown subcommand '%s' (status, load, unload, gc)", argv[1]);
	usage(stderr);
	return 2;
}
