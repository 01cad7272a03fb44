// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A session's private world (what it closes and what not: world.h).
 *
 * Mounts on host objects (the device nodes, the workspace) are made with
 * the new mount API on descriptors opened before anything is covered, so
 * a node under a fresh /dev or a workspace under a fresh /tmp is the
 * host's object, never a name looked up again.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/mount.h>
#include <linux/sched.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "git_guard.h"
#include "policy.h"
#include "util.h"
#include "world.h"

#define TMPFS_FLAGS (MS_NOSUID | MS_NODEV)

/* Device nodes every session has (the policy's devices rule judges them still). */
static const char *const dev_nodes[] = { "null", "zero", "full", "random", "urandom", "tty" };

static const struct {
	const char *name, *target;
} dev_links[] = {
	{ "fd", "/proc/self/fd" }, { "stdin", "/proc/self/fd/0" },
	{ "stdout", "/proc/self/fd/1" }, { "stderr", "/proc/self/fd/2" },
	{ "ptmx", "pts/ptmx" },
};

static int fail(char *why, size_t wlen, int r, const char *what, const char *path)
{
	snprintf(why, wlen, "%s %s: %s", what, path, strerror(-r));
	return r;
}

static int clone_tree(const char *path, bool recursive)
{
	int fd = (int)syscall(SYS_open_tree, AT_FDCWD, path,
			      OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_SYMLINK_NOFOLLOW |
			      (recursive ? AT_RECURSIVE : 0));

	return fd < 0 ? -errno : fd;
}

static int attach(int tree, const char *path)
{
	if (syscall(SYS_move_mount, tree, "", AT_FDCWD, path, MOVE_MOUNT_F_EMPTY_PATH) < 0)
		return -errno;
	return 0;
}

static int tmpfs(const char *path, const char *opts)
{
	if (mount("tmpfs", path, "tmpfs", TMPFS_FLAGS, opts) < 0)
		return -errno;
	return 0;
}

static bool is_dir(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* PATH lies strictly below DIR. */
static bool below(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return !strncmp(path, dir, n) && path[n] == '/';
}

/*
 * The running binary (the kernel's object behind /proc/self/exe, not a
 * path looked up again), cloned before the view's namespace exists (a
 * mount of another namespace cannot be cloned), read-only, without set-id
 * or devices: a detached tree to attach, or -errno.
 */
static int clone_self(void)
{
	struct mount_attr ma = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
					     MOUNT_ATTR_NODEV };
	_cleanup_close_ int exe = open("/proc/self/exe", O_PATH | O_CLOEXEC);
	int t;

	if (exe < 0)
		return -errno;
	t = (int)syscall(SYS_open_tree, exe, "", AT_EMPTY_PATH | OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (t < 0)
		return -errno;
	if (syscall(SYS_mount_setattr, t, "", AT_EMPTY_PATH, &ma, sizeof(ma)) < 0) {
		int e = -errno;

		close(t);
		return e;
	}
	return t;
}

/*
 * /dev: a tmpfs with the host's harmless nodes bound in by descriptor, the
 * usual links, a devpts instance of the session's own (no host terminal
 * has a name there) and a /dev/shm of its own.
 */
static int build_dev(char *why, size_t wlen)
{
	int trees[ARRAY_SIZE(dev_nodes)];
	char p[64];
	int r = 0;

	for (size_t i = 0; i < ARRAY_SIZE(dev_nodes); i++) {
		snprintf(p, sizeof(p), "/dev/%s", dev_nodes[i]);
		trees[i] = clone_tree(p, false);       /* absent on this host: not given */
	}
	if ((r = tmpfs("/dev", "mode=0755,size=64k,nr_inodes=256")) < 0) {
		fail(why, wlen, r, "mounting a tmpfs on", "/dev");
		goto out;
	}
	for (size_t i = 0; i < ARRAY_SIZE(dev_nodes) && r == 0; i++) {
		int fd;

		if (trees[i] < 0)
			continue;
		snprintf(p, sizeof(p), "/dev/%s", dev_nodes[i]);
		fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd < 0)
			r = -errno;
		else
			close(fd);
		r = r ?: attach(trees[i], p);
		if (r < 0)
			fail(why, wlen, r, "binding", p);
	}
	for (size_t i = 0; i < ARRAY_SIZE(dev_links) && r == 0; i++) {
		snprintf(p, sizeof(p), "/dev/%s", dev_links[i].name);
		if (symlink(dev_links[i].target, p) < 0)
			r = fail(why, wlen, -errno, "linking", p);
	}
	if (r == 0 && (mkdir("/dev/pts", 0755) < 0 || mkdir("/dev/shm", 01777) < 0))
		r = fail(why, wlen, -errno, "making", "/dev/pts and /dev/shm");
	if (r == 0 && mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
			    "newinstance,ptmxmode=0666,mode=0620,gid=5") < 0)
		r = fail(why, wlen, -errno, "mounting a devpts instance on", "/dev/pts");
	if (r == 0 && (r = tmpfs("/dev/shm", "mode=1777")) < 0)
		fail(why, wlen, r, "mounting a tmpfs on", "/dev/shm");
out:
	for (size_t i = 0; i < ARRAY_SIZE(dev_nodes); i++)
		if (trees[i] >= 0)
			close(trees[i]);
	return r;
}

/* The session's own, empty at its start. */
static const char *const tmps[] = { "/tmp", "/var/tmp" };
/* Where the human's session services listen: D-Bus, gpg-agent, ssh-agent, screen. */
static const char *const runs[] = { "/run/user", "/run/screen" };

bool world_private(const char *path, const char *workspace)
{
	bool in = pol_path_within(path, "/dev");

	for (size_t i = 0; i < ARRAY_SIZE(tmps); i++)
		in |= pol_path_within(path, tmps[i]) && is_dir(tmps[i]);
	for (size_t i = 0; i < ARRAY_SIZE(runs); i++)
		in |= pol_path_within(path, runs[i]) && is_dir(runs[i]);
	return in && !pol_path_within(path, workspace);
}

int world_build(const struct world_plan *p, struct world *w, char *why, size_t wlen)
{
	_cleanup_close_ int ws = -1;
	_cleanup_close_ int self = -1;
	bool ws_covered = false;
	int r;

	w->ns_fd = -1;
	if (p->self_at && (self = clone_self()) < 0)
		return fail(why, wlen, self, "holding", "cordon's binary (/proc/self/exe)");
	w->host_fd = open("/proc/thread-self/ns/mnt", O_RDONLY | O_CLOEXEC);
	if (w->host_fd < 0)
		return fail(why, wlen, -errno, "holding", "the host's mount namespace");
	if (unshare(CLONE_NEWNS) < 0)
		return fail(why, wlen, -errno, "a mount namespace for", "the session");
	/* Host mounts still reach the session; nothing made here reaches the host. */
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
		return fail(why, wlen, -errno, "making the session's mounts slaves of", "/");
	/* The workspace as it is now, submounts included, before anything covers it. */
	for (size_t i = 0; i < ARRAY_SIZE(tmps); i++)
		ws_covered |= below(p->workspace, tmps[i]);
	ws_covered |= p->home_fd >= 0 && (below(p->workspace, p->home) ||
					  !strcmp(p->workspace, p->home));
	if (ws_covered) {
		ws = clone_tree(p->workspace, true);
		if (ws < 0)
			return fail(why, wlen, ws, "holding the workspace", p->workspace);
	}
	r = build_dev(why, wlen);
	if (r < 0)
		return r;
	for (size_t i = 0; i < ARRAY_SIZE(tmps); i++) {
		if (!is_dir(tmps[i]))
			continue;
		r = tmpfs(tmps[i], "mode=1777");
		if (r < 0)
			return fail(why, wlen, r, "mounting a tmpfs on", tmps[i]);
	}
	for (size_t i = 0; i < ARRAY_SIZE(runs); i++) {
		if (!is_dir(runs[i]))
			continue;
		r = tmpfs(runs[i], "mode=0755,size=64k");
		if (r < 0)
			return fail(why, wlen, r, "mounting a tmpfs on", runs[i]);
	}
	for (size_t i = 0; p->absent && p->absent[i]; i++) {
		if (!is_dir(p->absent[i]) || below(p->workspace, p->absent[i]))
			continue;
		if (mount("tmpfs", p->absent[i], "tmpfs", TMPFS_FLAGS | MS_RDONLY,
			  "mode=0755,size=4k,nr_inodes=1") < 0)
			return fail(why, wlen, -errno, "emptying", p->absent[i]);
	}
	if (p->home_fd >= 0) {
		r = attach(p->home_fd, p->home);
		if (r < 0)
			return fail(why, wlen, r, "placing the home layer on", p->home);
	}
	if (ws >= 0) {
		r = mkdir_p(p->workspace, 0755);      /* in a tmpfs of the view */
		r = r ?: attach(ws, p->workspace);
		if (r < 0)
			return fail(why, wlen, r, "binding the workspace back onto", p->workspace);
	}
	if (self >= 0 && (r = attach(self, p->self_at)) < 0)
		return fail(why, wlen, r, "binding cordon's binary onto", p->self_at);
	/* The workspace's git metadata, read-only (a further copy of this view). */
	if (p->git && (r = git_guard_apply(p->git, why, wlen)) < 0)
		return r;
	w->ns_fd = open("/proc/thread-self/ns/mnt", O_RDONLY | O_CLOEXEC);
	if (w->ns_fd < 0)
		return fail(why, wlen, -errno, "holding", "the session's mount namespace");
	return 0;
}

static int enter(int ns_fd)
{
	if (ns_fd < 0)
		return -EBADF;
	if (unshare(CLONE_FS) < 0 || setns(ns_fd, CLONE_NEWNS) < 0)
		return -errno;
	return 0;
}

int world_enter(const struct world *w)
{
	return enter(w->ns_fd);
}

static void *call_thread(void *arg)
{
	struct world_call *c = arg;

	c->r = enter(c->ns_fd);
	if (c->r == 0)
		c->r = c->fn(c->arg);
	return NULL;
}

static int call_start(int ns_fd, struct world_call *c, int (*fn)(void *arg), void *arg)
{
	int r;

	*c = (struct world_call){ .ns_fd = ns_fd, .fn = fn, .arg = arg };
	r = pthread_create(&c->t, NULL, call_thread, c);
	if (r)
		return -r;
	c->started = true;
	return 0;
}

int world_call_host_start(const struct world *w, struct world_call *c, int (*fn)(void *arg),
			  void *arg)
{
	return call_start(w->host_fd, c, fn, arg);
}

int world_call_join(struct world_call *c)
{
	if (!c->started)
		return -ECHILD;
	pthread_join(c->t, NULL);
	c->started = false;
	return c->r;
}

int world_call(const struct world *w, int (*fn)(void *arg), void *arg)
{
	struct world_call c;
	int r = call_start(w->ns_fd, &c, fn, arg);

	return r < 0 ? r : world_call_join(&c);
}

#define WORLD_NS (CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWNS)

pid_t world_clone(const char *cgroup, bool *in_cgroup)
{
	struct clone_args ca = { .flags = CLONE_INTO_CGROUP | WORLD_NS, .exit_signal = SIGCHLD };
	int fd = cgroup ? open(cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	pid_t pid = -1;

	*in_cgroup = false;
	if (fd >= 0) {
		ca.cgroup = (uint64_t)fd;
		pid = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
		if (pid >= 0)
			*in_cgroup = true;
		close(fd);
	}
	/* Before Linux 5.7: the namespaces still, the cgroup by a move afterwards. */
	if (pid < 0)
		pid = (pid_t)syscall(SYS_clone, SIGCHLD | WORLD_NS, NULL, NULL, NULL, NULL);
	return pid;
}

static int bind_ro(const char *path)
{
	struct mount_attr attr = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
					       MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC };
	_cleanup_close_ int tree = clone_tree(path, true);

	if (tree == -ENOENT)
		return 0;
	if (tree < 0)
		return tree;
	if (syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr,
		    sizeof(attr)) < 0)
		return -errno;
	return attach(tree, path);
}

int world_child_proc(char *why, size_t wlen)
{
	static const char *const ro[] = { "/proc/sys", "/proc/sysrq-trigger", "/proc/irq",
					  "/proc/bus", "/proc/fs" };
	static const char *const hidden[] = { "/proc/kcore", "/proc/keys", "/proc/key-users",
					      "/proc/timer_list", "/proc/sched_debug" };
	int r;

	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
		return fail(why, wlen, -errno, "making the agent's mounts slaves of", "/");
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		return fail(why, wlen, -errno, "mounting the PID namespace's", "/proc");
	for (size_t i = 0; i < ARRAY_SIZE(ro); i++)
		if ((r = bind_ro(ro[i])) < 0)
			return fail(why, wlen, r, "making read-only", ro[i]);
	for (size_t i = 0; i < ARRAY_SIZE(hidden); i++) {
		_cleanup_close_ int t = -1;

		if (access(hidden[i], F_OK) < 0)
			continue;
		t = clone_tree("/dev/null", false);
		if (t < 0 || (r = attach(t, hidden[i])) < 0)
			return fail(why, wlen, t < 0 ? t : r, "hiding", hidden[i]);
	}
	return 0;
}

static void *drop_view(void *arg)
{
	struct world *w = arg;

	close(w->drop_fd);
	return NULL;
}

/* The calling thread is in the mount namespace NS_FD names. */
static bool in_ns(int ns_fd)
{
	struct stat a, b;

	return fstat(ns_fd, &a) == 0 && stat("/proc/thread-self/ns/mnt", &b) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int world_leave(struct world *w)
{
	if (w->ns_fd < 0 || w->host_fd < 0)
		return 0;
	/*
	 * A start that failed before this thread joined the view: only the
	 * view to let go.  Otherwise this thread's filesystem context first
	 * becomes its own, as in enter(): setns refuses (EINVAL) a mount
	 * namespace to a thread whose context another thread shares, and a
	 * thread just joined may not have let go of it yet (the kernel
	 * wakes pthread_join when the thread's memory is released, before
	 * its filesystem context is): about one session in a hundred kept
	 * the view to the end.
	 */
	if (in_ns(w->ns_fd) && (unshare(CLONE_FS) < 0 || setns(w->host_fd, CLONE_NEWNS) < 0))
		return -errno;
	w->drop_fd = w->ns_fd;
	w->ns_fd = -1;
	w->dropping = pthread_create(&w->dropper, NULL, drop_view, w) == 0;
	if (!w->dropping)
		close(w->drop_fd);      /* no thread: let go here */
	return 0;
}

void world_leave_wait(struct world *w)
{
	if (w->dropping)
		pthread_join(w->dropper, NULL);
	w->dropping = false;
}

void world_close(struct world *w)
{
	world_leave_wait(w);
	if (w->ns_fd >= 0)
		close(w->ns_fd);
	if (w->host_fd >= 0)
		close(w->host_fd);
	w->ns_fd = w->host_fd = -1;
}
