// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The whole chain on a real kernel: BPF LSM programs from bpf/, loaded,
 * attached and pinned by loader/, given a session compiled from a policy,
 * deny a file open to a task in the session and to no task outside it, and
 * report the denial as an event naming the file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "../tap.h"
#include "cgroup.h"
#include "floor.h"
#include "policy.h"

#define DIR_ "/tmp/lsm-smoke"
#define SECRET DIR_ "/secret/key"
#define OPEN DIR_ "/open/file"

static const char policy_text[] =
	"{\"cordon_policy\": 1, \"rules\": ["
	"{\"name\": \"everything\", \"decision\": \"allow\", \"fs\": {\"paths\": [\"/\"], \"rights\": [\"read\", \"exec\"]}},"
	"{\"name\": \"secret\", \"decision\": \"deny\", \"fs\": {\"paths\": [\"" DIR_ "/secret\"], \"rights\": [\"read\"]}}]}";

/* errno of open(path, O_RDONLY) run inside cgroup `cg` (NULL: stay put). */
static int open_errno_in(const char *cg, const char *path)
{
	int st;
	pid_t c = fork();

	if (c == 0) {
		int fd;

		if (cg && cg_attach_pid(cg, getpid()) < 0)
			_exit(200);
		fd = open(path, O_RDONLY);
		_exit(fd >= 0 ? 0 : errno);
	}
	if (c < 0 || waitpid(c, &st, 0) < 0 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

struct seen {
	int denials;
	char path[PATH_MAX];
};

static int on_event(void *ctx, const struct cordon_event *e)
{
	struct seen *s = ctx;

	if (e->decision == CORDON_DENY && e->op == CORDON_OP_OPEN_READ) {
		s->denials++;
		floor_event_path(e, s->path, sizeof(s->path));
	}
	return 0;
}

int main(void)
{
	struct pol_vars vars = {};
	struct pol_diags ds = {};
	struct policy *p = NULL;
	struct floor *f = NULL;
	struct floor_session *s = NULL;
	struct seen seen = {};
	char other[PATH_MAX];
	uint64_t drops = 1;
	int r, fd;

	(void)mkdir(DIR_, 0755);
	(void)mkdir(DIR_ "/secret", 0755);
	(void)mkdir(DIR_ "/open", 0755);
	fd = open(SECRET, O_CREAT | O_WRONLY, 0644);
	close(fd);
	fd = open(OPEN, O_CREAT | O_WRONLY, 0644);
	close(fd);

	r = floor_open(&f);
	if (r == -EPERM)
		tap_skip_all("BPF LSM: kernel refused LSM program load (EPERM)");
	if (!tap_ok(r == 0, "floor loads, attaches and pins (%s)", strerror(-r)))
		return tap_done();
	tap_ok(access(CORDON_PIN_DIR "/link_cordon_file_open", F_OK) == 0, "the file_open link is pinned");

	pol_vars_set(&vars, "HOME", "/root");
	r = pol_load_text(policy_text, strlen(policy_text), "smoke.json", &vars, &p, &ds);
	tap_ok(r == 0, "policy loads");
	r = floor_session_create(f, p, NULL, &s);
	if (!tap_ok(r == 0, "session created (%s)", strerror(-r)))
		return tap_done();
	tap_ok(floor_session_entries(s) > 2, "policy compiled into %zu map entries",
	       floor_session_entries(s));

	r = open_errno_in(floor_session_cgroup(s), SECRET);
	tap_ok(r == EACCES, "session task: open of denied file fails with EACCES (got %d)", r);
	r = open_errno_in(floor_session_cgroup(s), OPEN);
	tap_ok(r == 0, "session task: open of allowed file succeeds (got %d)", r);
	r = open_errno_in(floor_session_cgroup(s), "/proc/self/root" SECRET);
	tap_ok(r == EACCES, "session task: /proc/self/root path to the denied file fails (got %d)", r);
	/*
	 * A bystander: a cgroup at the sessions' depth but beside cordon's
	 * parent, not below it (below it, an unregistered cgroup is a stray:
	 * see further down).
	 */
	{
		char root[PATH_MAX / 2], mid[PATH_MAX / 2 + 32];

		cg_find_root(root, sizeof(root));
		snprintf(mid, sizeof(mid), "%s/lsm-bystander", root);
		(void)mkdir(mid, 0755);
		snprintf(other, sizeof(other), "%s/x", mid);
		(void)mkdir(other, 0755);
		r = open_errno_in(other, SECRET);
		tap_ok(r == 0, "bystander cgroup task (beside cordon's parent): open of the same file "
		       "succeeds (got %d)", r);
		rmdir(other);
		rmdir(mid);
	}
	r = open_errno_in(NULL, SECRET);
	tap_ok(r == 0, "host task: open of the same file succeeds (got %d)", r);

	for (int i = 0; i < 20 && seen.denials < 2; i++)
		floor_session_poll(s, 100, on_event, &seen);
	tap_ok(seen.denials == 2, "two denial events delivered (got %d)", seen.denials);
	tap_ok(strcmp(seen.path, SECRET) == 0, "event names the file (%s)", seen.path);
	tap_ok(floor_session_drops(f, s, &drops) == 0 && drops == 0, "no events dropped");

	/* A second handle reuses the pinned floor: no program load. */
	{
		struct floor *g = NULL;

		r = floor_open(&g);
		tap_ok(r == 0, "a second floor_open reuses the pins (%s)", strerror(-r));
		floor_close(g);
	}
	/*
	 * Strays: a cgroup below cordon's parent that no session registered
	 * is denied everything, not passed as a host task.
	 */
	{
		char parent[PATH_MAX], stray[PATH_MAX + 16];

		tap_ok(floor_cgroup_parent(parent, sizeof(parent)) == 0, "cordon's parent cgroup");
		snprintf(stray, sizeof(stray), "%s/stray-%d", parent, (int)getpid());
		tap_ok(mkdir(stray, 0755) == 0, "a cgroup below it that no session registered");
		r = open_errno_in(stray, OPEN);
		tap_ok(r == EACCES, "stray task: open of a file the session may read fails with "
		       "EACCES (got %d)", r);
		(void)rmdir(stray);
	}
	/*
	 * A stale floor (another build's, as after an upgrade) is reloaded
	 * under a running session: the new floor does not know the session,
	 * which is then a stray, denied everything (never a host task).
	 */
	{
		struct cordon_config cfg;
		struct floor *g = NULL;
		uint32_t zero = 0;
		int cfd = bpf_obj_get(CORDON_PIN_DIR "/config");

		r = cfd < 0 || bpf_map_lookup_elem(cfd, &zero, &cfg) ? -1 : 0;
		if (r == 0) {
			cfg.build_id ^= 1;
			r = bpf_map_update_elem(cfd, &zero, &cfg, 0);
		}
		if (cfd >= 0)
			close(cfd);
		tap_ok(r == 0, "the pinned floor marked stale");
		floor_close(f);         /* the links are held by their pins only, as in production */
		f = NULL;
		r = floor_open(&g);
		tap_ok(r == 0, "a stale floor is reloaded (%s)", strerror(-r));
		r = open_errno_in(floor_session_cgroup(s), SECRET);
		tap_ok(r == EACCES, "the old session's task: the denied file still fails (got %d)", r);
		r = open_errno_in(floor_session_cgroup(s), OPEN);
		tap_ok(r == EACCES, "and, unknown to the new floor, so does the allowed one (got %d)", r);
		r = open_errno_in(NULL, SECRET);
		tap_ok(r == 0, "host task: still opens it (got %d)", r);
		f = g;
	}
	r = floor_session_destroy(f, s);
	tap_ok(r == -ENOENT || r == 0, "session destroyed (%s)", strerror(-r));
	floor_close(f);
	tap_ok(floor_unload() == 0, "floor unloaded");
	tap_ok(access(CORDON_PIN_DIR, F_OK) < 0, "no pins left");
	pol_free(p);
	pol_vars_free(&vars);
	return tap_done();
}
