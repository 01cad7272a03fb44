/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The session's Unix connector: in the fallback posture, the process that
 * performs the pathname Unix connects the supervisor judged and allowed
 * (sup_connect.c, handle_unix), so that the listener's view of its peer is
 * a process of the agent, never the supervisor.
 *
 * The attack it closes: the kernel gives a listener the pid of the task
 * that called connect (SO_PEERCRED, SO_PEERPIDFD).  When the supervisor
 * made the connect itself, a server that looks its peer up by pid found
 * cordon: a root process, outside the session, in the human's login
 * session.  The system bus's polkit and logind resolve a caller's login
 * session from its pid's cgroup, so an agent allowed the bus socket was
 * taken for the human at the console ("allow_active": reboot, mounts,
 * network changes), and a server checking the peer's /proc saw uid 0.
 *
 * The connector is a fresh image of cordon (nothing of the supervisor's
 * memory), started on the first such connect.  It drops to the agent's
 * uid, gid and groups (no capabilities; it refuses uid 0, which the
 * fallback refuses too) before it serves, is not dumpable, dies with the supervisor, and lives
 * in a cgroup of its own outside the human's login session
 * (<cgroup2>/cordon-unix/SESSION).  The listener sees a live process with
 * the agent's identity and nothing more; the unix gate passes it because
 * it is not in the session (bpf/net.bpf.c).
 *
 * What it cannot close: the pid is the connector's, not that of the agent
 * process that asked (a server that ties a connection to one process of
 * the agent sees the same connector for every one); the connector's
 * /proc/PID/exe is cordon.  Without Landlock's signal scope (ABI < 6) the
 * agent, having the same uid, can kill it: the session's later Unix
 * connects are then refused, never made another way.
 */
#ifndef CORDON_UNIX_CONNECTOR_H
#define CORDON_UNIX_CONNECTOR_H

#include <limits.h>
#include <sys/types.h>

/* The session's connector, started on first use; the supervisor's part of it. */
struct unix_conn {
	int chan;
	pid_t pid;
	char cgroup[PATH_MAX];          /* <cgroup2>/cordon-unix/NAME; "" with the LSM floor */
};

/*
 * Start it, once (main thread: it dies with the thread that forks it), as
 * the agent: UID, GID and its N_GROUPS supplementary GROUPS.  0 or -errno.
 */
int unix_connector_start(struct unix_conn *conn, uid_t uid, gid_t gid, const gid_t *groups,
			 int n_groups);

/*
 * Connect SOCK (a copy of the agent's socket) to NAME in directory DIRFD
 * (opened without following symlinks), from the connector: the last
 * component is opened O_PATH without following a symlink, must be a
 * socket, and is connected through /proc/self/fd so that the inode judged
 * is the one reached.  Any thread.  0, or the errno the agent gets.
 */
int unix_connector_connect(struct unix_conn *conn, int sock, int dirfd, const char *dir,
			   const char *name);

/* Kill it, reap it, remove its cgroup. */
void unix_connector_stop(struct unix_conn *conn);

/* cordon unix-connector: the connector itself (started by cordon run only). */
int cmd_unix_connector(int argc, char **argv);

#endif
