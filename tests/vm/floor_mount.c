// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A session cannot mount, bind, remount, move, unmount or pivot_root, even
 * as root and even with a policy that allows every file right; a host task
 * still can.  Each denial is EPERM with an event.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include "../tap.h"
#include "cgroup.h"
#include "floor.h"
#include "policy.h"

static const char policy_text[] =
	"{\"cordon_policy\": 1, \"rules\": [{\"name\": \"all\", \"decision\": \"allow\","
	" \"fs\": {\"paths\": [\"/\"], \"rights\": [\"all\"]}}]}";

enum what { MOUNT_TMPFS, MOUNT_BIND, REMOUNT, UMOUNT, PIVOT, NEW_API, UNSHARE_MOUNT, MKNOD_BLOCK,
	    MKNOD_CHAR };

static int attempt(enum what w)
{
	int fd, mfd;

	switch (w) {
	case MOUNT_TMPFS:
		return mount("none", "/tmp/fm/a", "tmpfs", 0, NULL) ? errno : 0;
	case MOUNT_BIND:
		return mount("/tmp/fm/b", "/tmp/fm/a", NULL, MS_BIND, NULL) ? errno : 0;
	case REMOUNT:
		return mount(NULL, "/tmp/fm/m", NULL, MS_REMOUNT | MS_RDONLY, NULL) ? errno : 0;
	case UMOUNT:
		return umount2("/tmp/fm/m", MNT_DETACH) ? errno : 0;
	case PIVOT:
		return syscall(SYS_pivot_root, "/tmp/fm/m", "/tmp/fm/m/old") ? errno : 0;
	case NEW_API:
		fd = (int)syscall(SYS_fsopen, "tmpfs", 0);
		if (fd < 0)
			return errno;
		if (syscall(SYS_fsconfig, fd, 6 /* FSCONFIG_CMD_CREATE */, NULL, NULL, 0) < 0)
			return errno;
		mfd = (int)syscall(SYS_fsmount, fd, 0, 0);
		if (mfd < 0)
			return errno;
		return syscall(SYS_move_mount, mfd, "", AT_FDCWD, "/tmp/fm/a",
			       0x4 /* MOVE_MOUNT_F_EMPTY_PATH */) ? errno : 0;
	case MKNOD_BLOCK:
		/* A new node for the first disk: a fresh inode no rule knows. */
		return mknod("/tmp/fm/sda", S_IFBLK | 0600, makedev(8, 0)) ? errno : 0;
	case MKNOD_CHAR:
		return mknod("/tmp/fm/mem", S_IFCHR | 0600, makedev(1, 1)) ? errno : 0;
	case UNSHARE_MOUNT:
		/*
		 * A private mount namespace changes nothing: it needs
		 * CAP_SYS_ADMIN, which a session never gets, and mounting in it
		 * would still meet sb_mount.
		 */
		if (unshare(CLONE_NEWNS))
			return errno;
		return mount("none", "/tmp/fm/a", "tmpfs", 0, NULL) ? errno : 0;
	}
	return -1;
}

static int run_in(const char *cg, enum what w)
{
	int st;
	pid_t c = fork();

	if (c == 0) {
		if (cg && cg_attach_pid(cg, getpid()) < 0)
			_exit(250);
		_exit(attempt(w) & 0xff);
	}
	if (waitpid(c, &st, 0) < 0 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

struct count {
	int mounts, umounts, pivots, caps;
};

/*
 * Root's mount operations meet two layers: capable() refuses CAP_SYS_ADMIN
 * first where the kernel asks for it (umount, pivot_root, unshare), and the
 * mount hooks stand behind it (mount, bind, remount, move_mount reach them).
 */
static int on_event(void *ctx, const struct cordon_event *e)
{
	struct count *c = ctx;

	if (e->decision != CORDON_DENY || e->reason != CORDON_REASON_HARDENING || e->err != -EPERM)
		return 0;
	c->mounts += e->op == CORDON_OP_MOUNT;
	c->umounts += e->op == CORDON_OP_UMOUNT;
	c->pivots += e->op == CORDON_OP_PIVOT_ROOT;
	c->caps += e->op == CORDON_OP_CAPABLE && !strncmp(e->path, "cap 21", 6);
	return 0;
}

int main(void)
{
	static const char *const names[] = { "mount tmpfs", "bind mount", "remount read-only",
					     "umount", "pivot_root", "fsopen/fsmount/move_mount",
					     "mount in a private mount namespace",
					     "mknod of a block device", "mknod of /dev/mem's twin" };
	struct pol_vars vars = {};
	struct pol_diags ds = {};
	struct policy *p = NULL;
	struct floor *f = NULL;
	struct floor_session *s = NULL;
	struct count c = {};
	int r;

	r = floor_open(&f);
	if (r == -EPERM)
		tap_skip_all("BPF LSM: kernel refused LSM program load (EPERM)");
	if (!tap_ok(r == 0, "floor loaded"))
		return tap_done();
	mkdir("/tmp/fm", 0755);
	mkdir("/tmp/fm/a", 0755);
	mkdir("/tmp/fm/b", 0755);
	mkdir("/tmp/fm/m", 0755);
	tap_ok(mount("none", "/tmp/fm/m", "tmpfs", 0, NULL) == 0, "host: a tmpfs to play with");
	mkdir("/tmp/fm/m/old", 0755);
	pol_vars_set(&vars, "HOME", "/root");
	if (pol_load_text(policy_text, strlen(policy_text), "t", &vars, &p, &ds) ||
	    floor_session_create(f, p, NULL, &s)) {
		tap_ok(0, "session");
		return tap_done();
	}
	for (int w = MOUNT_TMPFS; w <= MKNOD_CHAR; w++) {
		r = run_in(floor_session_cgroup(s), (enum what)w);
		tap_ok(r == EPERM, "session root: %s fails with EPERM (got %d)", names[w], r);
	}
	for (int i = 0; i < 20; i++)
		floor_session_poll(s, 50, on_event, &c);
	tap_ok(c.mounts >= 3, "mount-hook events for mount, bind, remount, move_mount (%d)", c.mounts);
	tap_ok(c.caps + c.umounts >= 1, "umount refused with an event (capable %d, umount %d)",
	       c.caps, c.umounts);
	tap_ok(c.caps + c.umounts + c.pivots >= 3,
	       "umount, pivot_root and unshare each refused with an event (%d)",
	       c.caps + c.umounts + c.pivots);
	r = run_in(NULL, MOUNT_BIND);
	tap_ok(r == 0, "host task: bind mount still works (got %d)", r);
	r = run_in(NULL, MKNOD_BLOCK);
	tap_ok(r == 0, "host task: mknod still works (got %d)", r);
	unlink("/tmp/fm/sda");
	umount2("/tmp/fm/a", MNT_DETACH);
	umount2("/tmp/fm/m", MNT_DETACH);
	floor_session_destroy(f, s);
	floor_close(f);
	pol_free(p);
	pol_vars_free(&vars);
	return tap_done();
}
