/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A session's private world: what the agent's tree sees of the host is
 * made for it, not shared with it.
 *
 * The view (one mount namespace per session, built by world_build): /tmp,
 * /var/tmp and /dev/shm are empty tmpfs of the session's own, and so are
 * /run/user and /run/screen (the human's D-Bus session bus, gpg-agent and
 * ssh-agent sockets, screen sessions); /dev is a
 * tmpfs holding only null, zero, full, random, urandom and tty (bound from
 * the host's nodes) and a devpts instance of its own, where the agent's
 * terminal is made.  The supervisor judges paths in this view too (it
 * joins it before the agent is forked), and the Landlock ruleset and the
 * LSM floor's rules are built in it, so a rule names the object the agent
 * really reaches.  The agent's tree then gets, at its birth (world_clone),
 * its own PID and IPC namespaces and a copy of the view where /proc is the
 * PID namespace's own (world_child_proc).
 *
 * Attack: a session living in the host's world reaches host services by
 * their shared names: a tmux server or ssh-agent socket in /tmp, the
 * human's terminal through /dev/pts, a host process through /proc/PID or
 * by its pid (prlimit, setpriority, F_SETOWN signals, cordon's own
 * supervisor as a root agent), SysV shared memory and message queues.
 * None of these has a name inside the session: the object is absent, not
 * denied.  What it cannot close: what the view shares on purpose (the
 * workspace, the system's files, the home as its policy and layer allow);
 * abstract Unix sockets and loopback ports are the network floor's (the
 * network namespace is the host's, so the proxies and allowed services stay
 * reachable); the kernel keyrings are not namespaced (the seccomp denylist
 * refuses them in both postures).
 */
#ifndef CORDON_WORLD_H
#define CORDON_WORLD_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct git_guard;

struct world_plan {
	const struct git_guard *git;    /* the workspace's git metadata to bind read-only, or NULL */
	int home_fd;                    /* a detached mount to place on HOME, or -1 */
	const char *home;               /* the agent's home (where home_fd goes) */
	const char *workspace;          /* bound back in when it lies below HOME */
	/*
	 * Directories of host services the session may not use, made empty
	 * (a read-only tmpfs) so that what they hold is absent, not denied:
	 * a probe of them (glibc asks nscd at every user lookup) then finds
	 * nothing and leaves no record (task_path.c, task_path_absent).
	 * NULL-terminated, or NULL.
	 */
	const char *const *absent;
	/*
	 * An empty file (root's) the view binds cordon's own binary onto,
	 * read-only, or NULL: `cordon connect` at a fixed path inside the
	 * session (ssh_session.c).
	 */
	const char *self_at;
};

struct world {
	int ns_fd;                      /* the view's mount namespace, or -1 */
	int host_fd;                    /* the host's, where the view was built from, or -1 */
	int drop_fd;                    /* the view's, being let go by *dropper (world_leave) */
	bool dropping;
	pthread_t dropper;
};

/*
 * Build the view in a new mount namespace of the calling thread (root; the
 * thread's filesystem state is unshared).  Host mounts still propagate into
 * it; nothing made here reaches the host.  On success the thread stays in
 * the view and W holds it.  0, or -errno with WHY.
 */
int world_build(const struct world_plan *p, struct world *w, char *why, size_t wlen);

/*
 * PATH (canonical, as the host has it) lies in a tree the view replaces
 * with the session's own (/tmp, /var/tmp, /dev, /run/user, /run/screen)
 * and not in the workspace (bound back in): no session task can reach it.
 */
bool world_private(const char *path, const char *workspace);

/* Move the calling thread into the view (its filesystem state unshared first). */
int world_enter(const struct world *w);

/* Run FN(ARG) on a short-lived thread inside the view; FN's result, or -errno. */
int world_call(const struct world *w, int (*fn)(void *arg), void *arg);

/*
 * The same in the host's mount namespace (the real home, where the view
 * shows a layer), begun and left running (0, or -errno: nothing started),
 * and its thread joined (FN's result, or -errno; -ECHILD if none started).
 */
struct world_call {
	pthread_t t;
	bool started;
	int ns_fd;
	int (*fn)(void *arg);
	void *arg;
	int r;
};
int world_call_host_start(const struct world *w, struct world_call *c, int (*fn)(void *arg),
			  void *arg);
int world_call_join(struct world_call *c);

/*
 * Fork the agent's first process into CGROUP (a v2 directory, or NULL: the
 * child joins it itself; a kernel that refuses is retried without it and
 * *in_cgroup says which) with new PID, IPC and mount namespaces: the child
 * is PID 1 of its namespace.  Call from a single-threaded process inside
 * the view.
 */
pid_t world_clone(const char *cgroup, bool *in_cgroup);

/*
 * In the child, still root: /proc becomes the PID namespace's own, with
 * the host's kernel knobs read-only (/proc/sys, sysrq-trigger, irq, bus,
 * fs) and what describes other sessions' or the kernel's secrets hidden
 * (/proc/kcore, keys, key-users, timer_list, sched_debug).  0 or -errno,
 * with WHY.
 */
int world_child_proc(char *why, size_t wlen);

/*
 * The calling thread back in the host's mount namespace, and the view let
 * go on a thread of its own: the last reference to a mount namespace takes
 * its mounts down (the home layer's overlay, the tmpfs of /tmp, /dev...)
 * and waits for RCU grace periods, 4-5 ms of wall here (and up to 100 ms
 * seen on a busy host), which the rest of the teardown no longer waits
 * for.  world_leave_wait: that is done.  Call when no task of the
 * session is left and nothing more is done in the view.
 */
int world_leave(struct world *w);
void world_leave_wait(struct world *w);

void world_close(struct world *w);

#endif
