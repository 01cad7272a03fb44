// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The directory chain cache never outlives the tree it describes: after a
 * host process renames a directory into a denied tree, bind-mounts a denied
 * tree, or deletes and recreates a directory, a session's warm cache gives
 * the same answers as a full walk would.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "../tap.h"
#include "cgroup.h"
#include "floor.h"
#include "policy.h"

static const char policy_text[] =
	"{\"cordon_policy\": 1, \"rules\": ["
	"{\"name\": \"ok\", \"decision\": \"allow\", \"fs\": {\"paths\": [\"/tmp/c/ok\"], \"rights\": [\"read\"]}},"
	"{\"name\": \"bad\", \"decision\": \"deny\", \"fs\": {\"paths\": [\"/tmp/c/bad\"], \"rights\": [\"read\"]}},"
	"{\"name\": \"cg\", \"decision\": \"allow\", \"fs\": {\"paths\": [\"/sys/fs/cgroup\"], \"rights\": [\"read\", \"write\"]}}]}";

static int open_in_mode(const char *cg, const char *path, int mode);

static int open_in(const char *cg, const char *path)
{
	return open_in_mode(cg, path, O_RDONLY);
}

static int open_in_mode(const char *cg, const char *path, int mode)
{
	int st;
	pid_t c = fork();

	if (c == 0) {
		int fd;

		if (cg_attach_pid(cg, getpid()) < 0)
			_exit(250);
		fd = open(path, mode);
		_exit(fd >= 0 ? 0 : errno);
	}
	if (waitpid(c, &st, 0) < 0 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static void touch(const char *p)
{
	int fd = open(p, O_CREAT | O_WRONLY, 0644);

	if (fd >= 0)
		close(fd);
}

int main(void)
{
	struct pol_vars vars = {};
	struct pol_diags ds = {};
	struct policy *p = NULL;
	struct floor *f = NULL;
	struct floor_session *s = NULL;
	const char *cg;
	int r;

	r = floor_open(&f);
	if (r == -EPERM)
		tap_skip_all("BPF LSM: kernel refused LSM program load (EPERM)");
	mkdir("/tmp/c", 0755);
	mkdir("/tmp/c/ok", 0755);
	mkdir("/tmp/c/bad", 0755);
	mkdir("/tmp/c/ok/d", 0755);
	mkdir("/tmp/c/ok/m", 0755);
	mkdir("/tmp/c/ok/r", 0755);
	touch("/tmp/c/ok/d/f");
	touch("/tmp/c/ok/m/f");
	touch("/tmp/c/bad/f");
	touch("/tmp/c/ok/r/f");
	pol_vars_set(&vars, "HOME", "/root");
	if (pol_load_text(policy_text, strlen(policy_text), "t", &vars, &p, &ds) ||
	    floor_session_create(f, p, NULL, &s)) {
		tap_ok(0, "session");
		return tap_done();
	}
	cg = floor_session_cgroup(s);

	tap_ok(open_in(cg, "/tmp/c/ok/d/f") == 0, "warm: ok/d/f readable");
	tap_ok(open_in(cg, "/tmp/c/ok/d/f") == 0, "warm again (cached chain)");
	tap_ok(rename("/tmp/c/ok/d", "/tmp/c/bad/d") == 0, "host moves ok/d into bad/");
	r = open_in(cg, "/tmp/c/bad/d/f");
	tap_ok(r == EACCES, "after the move, the same file is denied (got %d)", r);

	tap_ok(open_in(cg, "/tmp/c/ok/m/f") == 0, "warm: ok/m/f readable");
	tap_ok(mount("/tmp/c/bad", "/tmp/c/ok/m", NULL, MS_BIND, NULL) == 0,
	       "host bind-mounts bad/ over ok/m");
	r = open_in(cg, "/tmp/c/ok/m/f");
	tap_ok(r == EACCES, "through the bind mount, bad/f is denied (got %d)", r);
	umount2("/tmp/c/ok/m", MNT_DETACH);

	tap_ok(open_in(cg, "/tmp/c/ok/r/f") == 0, "warm: ok/r/f readable");
	unlink("/tmp/c/ok/r/f");
	tap_ok(rmdir("/tmp/c/ok/r") == 0, "host removes ok/r");
	mkdir("/tmp/c/bad/new", 0755);
	touch("/tmp/c/bad/new/f");
	r = open_in(cg, "/tmp/c/bad/new/f");
	tap_ok(r == EACCES, "a directory created after an rmdir is judged afresh (got %d)", r);

	/* A renamed file keeps its dentry: its cached verdict must not follow it. */
	touch("/tmp/c/ok/x");
	tap_ok(open_in(cg, "/tmp/c/ok/x") == 0, "warm: ok/x readable");
	tap_ok(rename("/tmp/c/ok/x", "/tmp/c/bad/x") == 0, "host moves the file ok/x into bad/");
	r = open_in(cg, "/tmp/c/bad/x");
	tap_ok(r == EACCES, "the moved file is denied in its new place (got %d)", r);

	/* The verdict cache keeps the superblock class, not a verdict for one right. */
	{
		char procs[4200];

		snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
		r = open_in_mode(cg, procs, O_WRONLY);
		tap_ok(r == EACCES, "cgroupfs write denied even where the policy allows it (got %d)", r);
		r = open_in(cg, procs);
		tap_ok(r == 0, "then a cgroupfs read is allowed (got %d)", r);
		r = open_in_mode(cg, procs, O_WRONLY);
		tap_ok(r == EACCES, "and the write is still denied from the cache (got %d)", r);
	}

	floor_session_destroy(f, s);
	floor_close(f);
	pol_free(p);
	pol_vars_free(&vars);
	return tap_done();
}
