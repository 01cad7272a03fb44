// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The session's floor opened, its posture measured or remembered (floor_open.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "exec_recheck.h"
#include "floor.h"
#include "floor_open.h"
#include "instance.h"
#include "net.h"
#include "probe.h"
#include "progress.h"
#include "reap.h"
#include "util.h"

/*
 * The fallback's posture, remembered for this boot: a kernel that refused
 * BPF LSM keeps refusing it until it reboots, so later sessions skip the
 * doomed load and the probes (about a hundred milliseconds and several MiB
 * of BTF).  Keyed by the boot id and the floor's build id; /run is cleared
 * at boot; the file is root's, in a directory the agent can never write
 * (the instance's run directory).
 */
static const char *posture_cache_path(char *out, size_t len)
{
	snprintf(out, len, "%s/posture.json", instance_run_dir());
	return out;
}

static bool cache_key(char *out, size_t len)
{
	char *boot = NULL;

	if (read_file("/proc/sys/kernel/random/boot_id", &boot, 64) < 0)
		return false;
	boot[strcspn(boot, "\n")] = '\0';
	snprintf(out, len, "%s/%016llx", boot, (unsigned long long)floor_build_id());
	free(boot);
	return true;
}

bool posture_cached(struct posture *p, char *floor_error, size_t len)
{
	char key[128], path[PATH_MAX];
	json_t *o, *m;
	bool ok = false;

	if (!cache_key(key, sizeof(key)))
		return false;
	o = json_load_file(posture_cache_path(path, sizeof(path)), 0, NULL);
	if (!o || strcmp(json_string_value(json_object_get(o, "key")) ?: "", key))
		goto out;
	m = json_object_get(o, "mechanisms");
	for (int i = 0; i < MECH_MAX; i++) {
		json_t *e = json_object_get(m, mech_name((enum mech)i));

		if (!json_is_object(e))
			goto out;
		p->mech[i].state = (enum mech_state)json_integer_value(json_object_get(e, "state"));
		p->mech[i].value = (int)json_integer_value(json_object_get(e, "value"));
		snprintf(p->mech[i].reason, sizeof(p->mech[i].reason), "%s",
			 json_string_value(json_object_get(e, "reason")) ?: "");
	}
	snprintf(floor_error, len, "%s",
		 json_string_value(json_object_get(o, "floor_error")) ?: "");
	p->root = true;
	posture_compute(p);
	ok = p->level == POSTURE_FALLBACK;
out:
	json_decref(o);
	return ok;
}

static void posture_cache(struct sup *s)
{
	char key[128], path[PATH_MAX], tmp[PATH_MAX + 8];
	json_t *o, *m;
	int fd;

	if (s->posture.level != POSTURE_FALLBACK || !cache_key(key, sizeof(key)))
		return;
	posture_cache_path(path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
	m = json_object();
	for (int i = 0; i < MECH_MAX; i++)
		json_object_set_new(m, mech_name((enum mech)i),
				    json_pack("{s:i,s:i,s:s}", "state", (int)s->posture.mech[i].state,
					      "value", s->posture.mech[i].value,
					      "reason", s->posture.mech[i].reason));
	o = json_pack("{s:s,s:s,s:o}", "key", key, "floor_error", s->floor_error, "mechanisms", m);
	fd = mkstemp(tmp);
	if (fd >= 0) {
		if (json_dumpfd(o, fd, JSON_COMPACT) == 0 && fchmod(fd, 0644) == 0 &&
		    rename(tmp, path) == 0)
			tmp[0] = '\0';
		close(fd);
		if (tmp[0])
			(void)unlink(tmp);
	}
	json_decref(o);
}

/*
 * The floor.  BPF LSM when the kernel takes it; otherwise the fallback
 * (Landlock + cgroup-bpf + seccomp), with the doctor's measured reasons.
 * The network floor (cgroup-bpf) is needed by both: without it the posture
 * is insufficient and nothing starts.
 */
int open_floor(struct sup *s)
{
	_cleanup_close_ int lock = -1;
	int r;

	/*
	 * Sessions starting at once would race to load and pin the same
	 * programs (one of them failing with EEXIST): loading is serialised
	 * by a lock next to the sessions' run directories.
	 */
	lock = reap_floor_lock();
	if (lock < 0) {
		log_err("run: %s/.floor.lock: %s", instance_run_dir(), strerror(-lock));
		return -EIO;
	}
	if (posture_cached(&s->posture, s->floor_error, sizeof(s->floor_error))) {
		r = -EPERM;
	} else {
		r = floor_open(&s->floor);
		if (r < 0) {
			snprintf(s->floor_error, sizeof(s->floor_error), "%s", strerror(-r));
			probe_all(&s->posture);
			posture_cache(s);
		}
	}
	if (r == 0) {
		s->posture.level = POSTURE_FULL;
		s->posture.n_lacks = 0;
	} else {
		if (s->posture.level == POSTURE_FULL)   /* measured yes, loading failed */
			s->posture.level = POSTURE_FALLBACK;
		if (s->opt->require_full_floor) {
			log_err("run: --require-full-floor: the BPF LSM floor cannot be loaded "
				"(%s); BPF LSM: %s", s->floor_error,
				s->posture.mech[MECH_BPF_LSM].reason);
			return -EPERM;
		}
		if (s->posture.level == POSTURE_INSUFFICIENT) {
			log_err("run: this kernel cannot confine an agent (posture insufficient; "
				"`cordon doctor` says why)");
			return -ENOTSUP;
		}
	}
	phase("floor: posture known");
	/* Another loader (an older cordon, a test) may pin at the same moment. */
	for (int tries = 0; (r = net_open(&s->net)) == -EEXIST && tries < 5; tries++)
		usleep(20000);
	if (r < 0) {
		log_err("run: cannot load the network floor (cgroup-bpf): %s", strerror(-r));
		return r;
	}
	/* The exec recheck, where its programs loaded (exec_recheck.h). */
	if (!exec_recheck_setup(&s->recheck, s->net))
		posture_add(&s->posture, &posture_no_exec_recheck);
	/* The fallback's kernel check on pathname Unix sockets (Linux 6.7). */
	if (!s->floor && !net_unix_gate(s->net))
		posture_add(&s->posture, &posture_no_unix_gate);
	/* A pattern denied or escalated: its later matches are not in the tables. */
	for (size_t i = 0; s->pol && i < s->pol->n_rules; i++) {
		const struct pol_rule *ru = &s->pol->rules[i];

		for (size_t j = 0; ru->kind == POL_FS && ru->decision != CORDON_ALLOW &&
				   j < ru->fs.n_paths; j++)
			if (strpbrk(ru->fs.paths[j], "*?["))
				posture_add(&s->posture, &posture_patterns_later);
	}
	/*
	 * Still under the floor lock: sessions whose cordon and watchdog both
	 * died are reaped (reap.h), and this one's run directory is made and
	 * locked for its life, before its cgroup exists, so that no reaper
	 * takes it for dead.
	 */
	phase("floor: network floor open");
	(void)reap_stale(s->net);
	phase("floor: stale sessions reaped");
	(void)net_gc(s->net);
	(void)floor_gc();
	phase("floor: maps collected");
	if (s->run_lock < 0)            /* run_plan holds it already */
		s->run_lock = reap_lock_run_dir(s->run_dir);
	if (s->run_lock < 0) {
		log_err("run: %s: %s", s->run_dir, strerror(-s->run_lock));
		return s->run_lock;
	}
	/*
	 * What `cordon floor status` lists of this session.  Its absence
	 * changes nothing the session enforces, so a failure is a warning.
	 * The directory is cordon's (RUN_DIR is protected from every policy),
	 * so the agent can neither rewrite this nor plant one.
	 */
	{
		json_t *desc = json_pack("{s:s,s:s,s:i,s:i,s:s,s:i,s:I,s:s,s:s,s:s}",
					 "name", s->name, "user", s->user, "uid", (int)s->uid,
					 "invoker", (int)s->invoker, "workspace", s->workspace,
					 "pid", (int)getpid(), "started", (json_int_t)time(NULL),
					 "posture", posture_name(s->posture.level),
					 "policy", s->opt->policy, "audit", s->audit_path);
		int w = desc ? reap_describe_run_dir(s->run_dir, desc) : -ENOMEM;

		if (w < 0)
			log_warn("run: %s/" CORDON_RUN_DESC ": %s (`cordon floor status` will not "
				 "describe this session)", s->run_dir, strerror(-w));
		json_decref(desc);
	}
	return 0;
}

void print_posture(const struct sup *s)
{
	bool quiet = s->opt->quiet;

	if (s->posture.level == POSTURE_FULL) {
		say(quiet, "session %s: full posture (BPF LSM + cgroup-bpf + seccomp notify)%s",
		    s->name, s->posture.n_lacks ? ", and these protections are MISSING:" : "");
		for (int i = 0; i < s->posture.n_lacks; i++)
			say(quiet, "  - %s: %s", s->posture.lacks[i]->id,
			    s->posture.lacks[i]->what);
		return;
	}
	say(quiet, "session %s: FALLBACK posture: BPF LSM unavailable (%s); Landlock + "
	    "cgroup-bpf + seccomp enforce, and these protections are MISSING:", s->name,
	    s->posture.mech[MECH_BPF_LSM].reason);
	for (int i = 0; i < s->posture.n_lacks; i++)
		say(quiet, "  - %s: %s", s->posture.lacks[i]->id, s->posture.lacks[i]->what);
}
