// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The whole chain on a real kernel: a BPF LSM program from bpf/, loaded and
 * attached by loader/, configured through its maps, denies a file open to a
 * task in a session cgroup and to no task outside it, and reports the
 * denial as an event naming the file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "../tap.h"
#include "cgroup.h"
#include "floor.h"

#define DIR_ "/tmp/lsm-smoke"
#define SECRET DIR_ "/secret/key"
#define OPEN DIR_ "/open/file"

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
	char path[CORDON_EVENT_PATH];
	uint64_t session;
};

static int on_event(void *ctx, const struct cordon_event *e)
{
	struct seen *s = ctx;

	if (e->decision == CORDON_DENY && e->op == CORDON_OP_OPEN_READ) {
		s->denials++;
		memcpy(s->path, e->path, sizeof(s->path));
		s->session = e->session;
	}
	return 0;
}

int main(void)
{
	char root[PATH_MAX], parent[PATH_MAX + 16], sess[PATH_MAX + 32], other[PATH_MAX + 32];
	struct floor *f = NULL;
	struct seen seen = {};
	uint64_t cgid, drops = 1;
	int r, level, fd;

	r = floor_open(&f);
	if (r == -EPERM)
		tap_skip_all("BPF LSM: kernel refused LSM program load (EPERM)");
	if (!tap_ok(r == 0, "floor loads and attaches (%s)", strerror(-r)))
		return tap_done();

	if (cg_find_root(root, sizeof(root)) < 0)
		tap_skip_all("cgroup v2 not mounted");
	snprintf(parent, sizeof(parent), "%s/cordon-test", root);
	snprintf(sess, sizeof(sess), "%s/s%d", parent, (int)getpid());
	snprintf(other, sizeof(other), "%s/o%d", parent, (int)getpid());
	tap_ok(cg_mkdir(parent) == 0 && cg_mkdir(sess) == 0 && cg_mkdir(other) == 0,
	       "session and bystander cgroups created");
	level = cg_level(root, sess);
	tap_ok(level == 2, "session cgroup is at level 2 (got %d)", level);
	r = cg_id(sess, &cgid);
	tap_ok(r == 0 && cgid != 0, "session cgroup id %llu", (unsigned long long)cgid);

	(void)mkdir(DIR_, 0755);
	(void)mkdir(DIR_ "/secret", 0755);
	(void)mkdir(DIR_ "/open", 0755);
	fd = open(SECRET, O_CREAT | O_WRONLY, 0644);
	close(fd);
	fd = open(OPEN, O_CREAT | O_WRONLY, 0644);
	close(fd);

	/* Policy 7: read and exec everywhere, read denied below /tmp/lsm-smoke/secret. */
	r = floor_set_session_level(f, (uint32_t)level);
	r = r ?: floor_add_session(f, cgid, 7);
	r = r ?: floor_add_fs_rule(f, 7, "/", CORDON_FS_READ | CORDON_FS_EXEC, 0, 1);
	r = r ?: floor_add_fs_rule(f, 7, DIR_ "/secret", 0, CORDON_FS_READ, 2);
	tap_ok(r == 0, "maps populated (%s)", strerror(-r));

	r = open_errno_in(sess, SECRET);
	tap_ok(r == EACCES, "session task: open of denied file fails with EACCES (got %d)", r);
	r = open_errno_in(sess, OPEN);
	tap_ok(r == 0, "session task: open of allowed file succeeds (got %d)", r);
	r = open_errno_in(sess, "/proc/self/root" SECRET);
	tap_ok(r == EACCES, "session task: /proc/self/root path to the denied file fails (got %d)", r);
	r = open_errno_in(other, SECRET);
	tap_ok(r == 0, "bystander cgroup task: open of the same file succeeds (got %d)", r);
	r = open_errno_in(NULL, SECRET);
	tap_ok(r == 0, "host task: open of the same file succeeds (got %d)", r);

	for (int i = 0; i < 20 && seen.denials < 2; i++)
		floor_poll(f, 100, on_event, &seen);
	tap_ok(seen.denials == 2, "two denial events delivered (got %d)", seen.denials);
	tap_ok(strcmp(seen.path, SECRET) == 0, "event names the file (%s)", seen.path);
	tap_ok(seen.session == cgid, "event names the session");
	tap_ok(floor_counter(f, CORDON_CNT_DROPS, &drops) == 0 && drops == 0, "no events dropped");

	floor_close(f);
	r = open_errno_in(sess, SECRET);
	tap_ok(r == 0, "after the floor is closed the session task opens the file (got %d)", r);
	(void)cg_destroy(sess);
	(void)cg_destroy(other);
	(void)cg_destroy(parent);
	return tap_done();
}
