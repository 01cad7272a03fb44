// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Reaping sessions whose cordon is gone: why and what it cannot close,
 * reap.h.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include "audit.h"
#include "budget.h"
#include "cgroup.h"
#include "floor.h"
#include "home.h"
#include "home_fs.h"
#include "net.h"
#include "reap.h"
#include "util.h"

int reap_floor_lock(void)
{
	const char *run = instance_run_dir();
	int r = mkdir_p(run, 0755), fd;
	char lock[PATH_MAX];

	if (r < 0)
		return r;
	snprintf(lock, sizeof(lock), "%s/.floor.lock", run);
	fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

int reap_lock_run_dir(const char *run_dir)
{
	int r = mkdir_p(run_dir, 0711), fd;

	if (r < 0)
		return r;
	fd = open(run_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* Nobody else may hold it: the floor lock keeps reapers out meanwhile. */
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

bool reap_session_name(const char *n)
{
	if (n[0] != 's' || strlen(n) != 17)
		return false;
	for (int i = 1; i < 17; i++)
		if (!((n[i] >= '0' && n[i] <= '9') || (n[i] >= 'a' && n[i] <= 'f')))
			return false;
	return true;
}

int reap_describe_run_dir(const char *run_dir, json_t *desc)
{
	char tmp[PATH_MAX], dst[PATH_MAX];
	_cleanup_free_ char *text = json_dumps(desc, JSON_COMPACT);
	_cleanup_close_ int fd = -1;
	size_t len;

	if (!text)
		return -ENOMEM;
	len = strlen(text);
	snprintf(tmp, sizeof(tmp), "%s/." CORDON_RUN_DESC, run_dir);
	snprintf(dst, sizeof(dst), "%s/" CORDON_RUN_DESC, run_dir);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len || rename(tmp, dst) < 0) {
		int r = errno ? -errno : -EIO;

		(void)unlink(tmp);
		return r;
	}
	return 0;
}

json_t *reap_list_sessions(void)
{
	json_t *out = json_array();
	struct dirent *de;
	DIR *d;

	if (!out)
		return NULL;
	d = opendir(instance_run_dir());
	while (d && (de = readdir(d))) {
		json_t *o = NULL;
		char *text = NULL;
		bool live;
		int fd, dfd;

		if (!reap_session_name(de->d_name))
			continue;
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		/* Held: a live cordon (reap.h); free: released again at once. */
		live = flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK;
		dfd = openat(fd, CORDON_RUN_DESC, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		if (dfd >= 0) {
			char path[64];

			snprintf(path, sizeof(path), "/proc/self/fd/%d", dfd);
			if (read_file(path, &text, 1 << 16) >= 0)
				o = json_loads(text, 0, NULL);
			free(text);
			close(dfd);
		}
		if (!json_is_object(o)) {
			json_decref(o);
			o = json_object();
		}
		json_object_set_new(o, "name", json_string(de->d_name));
		json_object_set_new(o, "live", json_boolean(live));
		json_array_append_new(out, o);
	}
	if (d)
		closedir(d);
	return out;
}

/* Tasks in a cgroup (its cgroup.procs lines), for the message. */
static int tasks_in(const char *cg)
{
	char file[PATH_MAX * 2 + 16];
	_cleanup_free_ char *procs = NULL;
	int n = 0;

	snprintf(file, sizeof(file), "%s/cgroup.procs", cg);
	if (read_file(file, &procs, 1 << 20) < 0)
		return 0;
	for (char *p = procs; *p; p++)
		n += *p == '\n';
	return n;
}

int reap_note_log(const char *name, const char *log, const char *key)
{
	char p[PATH_MAX];
	FILE *f;
	int fd, r;

	if (!reap_session_name(name) || strchr(log, '\n') || strchr(key, '\n'))
		return -EINVAL;
	r = mkdir_p(instance_open_logs_dir(), 0700);
	if (r < 0)
		return r;
	snprintf(p, sizeof(p), "%s/%s", instance_open_logs_dir(), name);
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		r = -errno;
		close(fd);
		return r;
	}
	r = fprintf(f, "%s\n%s\n", log, key) < 0 ? -EIO : 0;
	if (fclose(f) != 0 && !r)
		r = -errno;
	return r;
}

void reap_forget_log(const char *name)
{
	char p[PATH_MAX];

	if (!reap_session_name(name))
		return;
	snprintf(p, sizeof(p), "%s/%s", instance_open_logs_dir(), name);
	(void)unlink(p);
}

/*
 * Files named for a session outside its run directory: DIR/NAME SUFFIX.
 * A new one belongs here, so that every end path removes it.
 */
static const struct {
	const char *dir, *suffix;
} session_files[] = {
	{ CORDON_RUN_MCP_DIR, ".sock" },        /* mcp_session.c */
	{ CORDON_RUN_SSH_DIR, ".agent" },       /* ssh_session.c */
	{ CORDON_RUN_SSH_DIR, ".known_hosts" },
	{ CORDON_RUN_CA_DIR, ".pem" },          /* egress_session.c */
};

void reap_session_files(const char *name)
{
	char p[PATH_MAX];

	if (!reap_session_name(name))
		return;
	for (size_t i = 0; i < ARRAY_SIZE(session_files); i++) {
		snprintf(p, sizeof(p), "%s/%s%s", session_files[i].dir, name,
			 session_files[i].suffix);
		(void)unlink(p);
	}
	snprintf(p, sizeof(p), "%s/%s/approve.sock", instance_run_dir(), name);
	(void)unlink(p);
	snprintf(p, sizeof(p), "%s/%s/events.sock", instance_run_dir(), name);
	(void)unlink(p);
	snprintf(p, sizeof(p), "%s/%s/" CORDON_RUN_DESC, instance_run_dir(), name);
	(void)unlink(p);
	/* The agent wrote that layer: removed through descriptors, no symlink followed. */
	{
		_cleanup_close_ int d = open(HOME_LAYER_BASE "-sessions",
					     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (d >= 0)
			(void)home_fs_rm_rf_at(d, name);
	}
}

int reap_session_live(const char *name)
{
	char p[PATH_MAX];
	int fd, r;

	if (!reap_session_name(name))
		return -EINVAL;
	snprintf(p, sizeof(p), "%s/%s", instance_open_logs_dir(), name);
	if (access(p, F_OK) == 0)
		return 1;
	if (errno != ENOENT)
		return -errno;
	snprintf(p, sizeof(p), "%s/%s", instance_run_dir(), name);
	fd = open(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	r = flock(fd, LOCK_EX | LOCK_NB) == 0 ? 0 : errno == EWOULDBLOCK ? 1 : -errno;
	close(fd);
	return r;
}

int reap_seal_log(const char *log, const char *key, json_t *fields, char *why, size_t wlen)
{
	struct audit *a;
	int r = audit_resume(log, key, &a);

	if (r == -EALREADY) {
		snprintf(why, wlen, "its log %s was already sealed", log);
		return r;
	}
	if (r < 0) {
		snprintf(why, wlen, "its log %s is left as it was (%s%s)", log, strerror(-r),
			 r == -EBADMSG ? ": not a whole unsealed chain; cordon audit verify says why" : "");
		return r;
	}
	r = audit_write(a, "lifecycle", fields);
	r = r ?: audit_seal(a, NULL);
	audit_close(a);
	if (r < 0)
		snprintf(why, wlen, "its log %s could not be sealed: %s", log, strerror(-r));
	else
		snprintf(why, wlen, "its log %s is sealed", log);
	return r;
}

/*
 * The log session NAME's note names (reap_note_log), sealed after a record
 * of the reaping (TASKS killed; <0: the session had no cgroup left, its
 * host restarted under it or its directories were removed); the note is
 * dropped whatever came of it (a log that could not be closed now never
 * will be).  WHY says what became of the log ("" when there is no note).
 */
static void seal_reaped(const char *name, int tasks, json_t *record, char *why, size_t wlen)
{
	char p[PATH_MAX], *buf = NULL, *key;
	json_t *fields;
	int n;

	why[0] = '\0';
	snprintf(p, sizeof(p), "%s/%s", instance_open_logs_dir(), name);
	n = read_file(p, &buf, 2 * PATH_MAX + 2);
	if (n < 0)
		return;
	key = strchr(buf, '\n');
	if (key && buf[n - 1] == '\n') {
		*key++ = '\0';
		buf[n - 1] = '\0';
		fields = record ? json_incref(record) : tasks >= 0 ?
			 json_pack("{s:s,s:i,s:s}", "event", "reaped", "tasks_killed", tasks,
				   "reason", "its cordon and watchdog were gone") :
			 json_pack("{s:s,s:s}", "event", "reaped", "reason",
				   "its session was gone (the host restarted, or its cgroup "
				   "and run directory were removed) before its cordon closed "
				   "this log");
		if (fields)
			(void)reap_seal_log(buf, key, fields, why, wlen);
		else
			snprintf(why, wlen, "its log %s is left unsealed: out of memory", buf);
		json_decref(fields);
	}
	free(buf);
	reap_forget_log(name);
}

/*
 * Undo one session: its tasks killed with its cgroups first, then its
 * network floor entries (no task runs without them), then its files.  A
 * cgroup that will not go (a task stuck in the kernel) keeps the run
 * directory, so that the next reaper tries again.  The log's last record
 * is RECORD (borrowed), or the reaper's own when NULL; *TASKS how many
 * tasks were killed, WHY what became of the log.
 */
static int reap_one(const char *name, const char *parent, struct net *net, json_t *record,
		    int *tasks_out, char *why, size_t wlen)
{
	char cg[PATH_MAX * 2], p[PATH_MAX + 64];
	uint64_t id = 0;
	int tasks = 0, r;

	snprintf(cg, sizeof(cg), "%s/%s", parent, name);
	if (access(cg, F_OK) == 0) {
		(void)cg_id(cg, &id);
		tasks = tasks_in(cg);
		r = cg_destroy(cg);
		if (r < 0) {
			log_warn("reap: session %s: cannot remove %s: %s", name, cg, strerror(-r));
			return r;
		}
		if (net && id)
			(void)net_session_del(net, id);
	}
	snprintf(cg, sizeof(cg), "%s-unix/%s", parent, name);
	if (access(cg, F_OK) == 0 && (r = cg_destroy(cg)) < 0)
		log_warn("reap: session %s: cannot remove %s: %s", name, cg, strerror(-r));
	budget_reap(name);
	reap_session_files(name);
	seal_reaped(name, tasks, record, why, wlen);
	snprintf(p, sizeof(p), "%s/%s", instance_run_dir(), name);
	(void)rmdir(p);
	*tasks_out = tasks;
	return 0;
}

/* A session no live cordon holds, reaped and said so. */
static int reap_dead(const char *name, const char *parent, struct net *net)
{
	char why[PATH_MAX + 160];
	int tasks = 0, r = reap_one(name, parent, net, NULL, &tasks, why, sizeof(why));

	if (r == 0)
		log_warn("reaped session %s: its cordon and watchdog were gone (%d task%s killed)%s%s",
			 name, tasks, tasks == 1 ? "" : "s", why[0] ? "; " : "", why);
	return r;
}

int reap_watchdog(const char *name, json_t *record, char *why, size_t wlen)
{
	char parent[PATH_MAX], cfg[PATH_MAX];
	struct net *net = NULL;
	int lock, tasks = 0, r;

	why[0] = '\0';
	if (!reap_session_name(name))
		return -EINVAL;
	lock = reap_floor_lock();
	if (lock < 0)
		return lock;
	r = floor_cgroup_parent(parent, sizeof(parent));
	if (r == 0) {
		/* The network floor as pinned (as `cordon floor gc`): never loaded here. */
		snprintf(cfg, sizeof(cfg), "%s/config", instance_net_pin_dir());
		if (access(cfg, F_OK) == 0)
			(void)net_open(&net);
		r = reap_one(name, parent, net, record, &tasks, why, wlen);
		if (net)
			(void)net_gc(net);
		/* The LSM floor's entries of every session whose cgroup is gone, this one's among them. */
		(void)floor_gc();
		net_close(net);
	}
	close(lock);
	return r;
}

int reap_stale(struct net *net)
{
	char parent[PATH_MAX], p[PATH_MAX + 64];
	struct dirent *de;
	int reaped = 0;
	DIR *d;

	if (floor_cgroup_parent(parent, sizeof(parent)) < 0)
		parent[0] = '\0';
	/* Run directories nobody holds. */
	d = opendir(instance_run_dir());
	while (d && (de = readdir(d))) {
		int fd;

		if (!reap_session_name(de->d_name))
			continue;
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (flock(fd, LOCK_EX | LOCK_NB) == 0 && parent[0] &&
		    reap_dead(de->d_name, parent, net) == 0)
			reaped++;
		close(fd);
	}
	if (d)
		closedir(d);
	/*
	 * Session and connector cgroups with no run directory at all (made
	 * after it, removed before it).
	 */
	for (int i = 0; parent[0] && i < 2; i++) {
		snprintf(p, sizeof(p), "%s%s", parent, i ? "-unix" : "");
		d = opendir(p);
		while (d && (de = readdir(d))) {
			char run[PATH_MAX];

			if (!reap_session_name(de->d_name))
				continue;
			snprintf(run, sizeof(run), "%s/%s", instance_run_dir(), de->d_name);
			if (access(run, F_OK) < 0 && errno == ENOENT &&
			    reap_dead(de->d_name, parent, net) == 0)
				reaped++;
		}
		if (d)
			closedir(d);
	}
	/*
	 * Logs still open whose session left nothing else: no run directory
	 * (a live session has had one since before its note, and keeps it
	 * until after the note is gone).
	 */
	d = opendir(instance_open_logs_dir());
	while (d && (de = readdir(d))) {
		char run[PATH_MAX], why[PATH_MAX + 160];

		if (!reap_session_name(de->d_name))
			continue;
		snprintf(run, sizeof(run), "%s/%s", instance_run_dir(), de->d_name);
		if (access(run, F_OK) == 0 || errno != ENOENT)
			continue;
		budget_reap(de->d_name);
		reap_session_files(de->d_name);
		seal_reaped(de->d_name, -1, NULL, why, sizeof(why));
		log_warn("reaped session %s: it was gone before its cordon closed its log%s%s",
			 de->d_name, why[0] ? "; " : "", why);
		reaped++;
	}
	if (d)
		closedir(d);
	/*
	 * Files named for a session that has no run directory: it died (or
	 * its host restarted) with nothing else left.  Sound because every
	 * such file is made after the session's run directory, which is
	 * removed after them (run.c, run_plan and run_teardown).
	 */
	for (size_t i = 0; i <= ARRAY_SIZE(session_files); i++) {
		const char *dir = i < ARRAY_SIZE(session_files) ? session_files[i].dir :
				  HOME_LAYER_BASE "-sessions";
		const char *suffix = i < ARRAY_SIZE(session_files) ? session_files[i].suffix : "";

		d = opendir(dir);
		while (d && (de = readdir(d))) {
			size_t n = strlen(de->d_name), sl = strlen(suffix);
			char name[32];

			if (n != 17 + sl || strcmp(de->d_name + 17, suffix))
				continue;
			snprintf(name, sizeof(name), "%.17s", de->d_name);
			if (!reap_session_name(name))
				continue;
			/*
			 * These directories are shared by every floor instance
			 * (instance.h): a file is a dead session's only when no
			 * instance has a run directory of that name; unknown is alive.
			 */
			if (instance_session_run_dir_any(CORDON_RUN_DIR, name) != 0)
				continue;
			reap_session_files(name);
			log_warn("reaped session %s: removed %s/%s, left by a session with no run "
				 "directory", name, dir, de->d_name);
		}
		if (d)
			closedir(d);
	}
	return reaped;
}
