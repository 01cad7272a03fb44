/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Sessions whose cordon is gone.  A session normally undoes itself (its
 * supervisor at exit, or its watchdog when the supervisor dies).  When both
 * die at once (SIGKILL of the process group by an operator or a service
 * manager, the OOM killer taking both), the session stays behind:
 *  - its cgroups (the session's, its Unix connector's, its v1 budget
 *    groups), with any task of the agent still in them: a daemonised child
 *    of the agent runs on, confined, but unsupervised and unaudited;
 *  - its entries in the network floor's maps, which fill the rule map
 *    until no new session can register;
 *  - its run directory and MCP socket.
 * "If the supervisor dies, the agent dies with it": the next `cordon run`
 * (and `cordon floor gc`) reaps such sessions, killing their tasks first.
 *
 * Which sessions are gone: each supervisor holds an flock on its run
 * directory for its whole life (its watchdog shares the lock, so a session
 * whose watchdog is still cleaning up is not touched), taken under the
 * floor lock before its cgroup exists; the reaper runs under the same lock.
 * So a run directory whose lock can be taken, and a session cgroup with no
 * run directory, belong to no live cordon.  What it cannot close: a
 * session of a cordon older than this one (no lock) is taken for dead; a
 * floor reload on upgrade ends such sessions anyway (their maps are gone).
 */
#ifndef CORDON_REAP_H
#define CORDON_REAP_H

#include <jansson.h>
#include <stddef.h>
#include "instance.h"

/* CORDON_RUN_DIR, CORDON_OPEN_LOGS_DIR: the live instance's (instance.h). */
#define CORDON_RUN_MCP_DIR "/run/cordon-mcp"
#define CORDON_RUN_SSH_DIR "/run/cordon-ssh"   /* ssh_session.c */

/*
 * Open logs: one file per session (its name) in instance_open_logs_dir(),
 * holding the log's path and its key's, one per line, from the log's start
 * until its seal.  On disk that outlives /run (a host restart, a power
 * loss), so that a log whose session ended without its cordon is found and
 * closed even with no run directory or cgroup left to find the session by.
 *
 * Everything here is the instance's (instance.h): its run directories, its
 * floor lock, its cgroups, its notes.  A reaper of one instance never
 * touches another's sessions, live or dead.
 */

struct net;

/* Take the floor lock (instance_run_dir()/.floor.lock), exclusive: its fd, or -errno. */
int reap_floor_lock(void);

/*
 * Create run_dir (0711) and lock it for this process's life: the returned
 * fd (close-on-exec) holds the lock.  Call with the floor lock held.
 */
int reap_lock_run_dir(const char *run_dir);

/*
 * Reap every session no live cordon holds, and close the log of each
 * (reap_seal_log), also of a session with nothing left but its log's note
 * (the host restarted under it); net may be NULL (the network floor's
 * entries are then left for net_gc).  Call with the floor lock
 * held, then net_gc and floor_gc for the kernel entries of any session
 * whose cgroup is gone.  Returns how many sessions were reaped.
 */
int reap_stale(struct net *net);

/*
 * Note where session NAME's log and its key are (instance_open_logs_dir()/NAME,
 * 0600; the directory 0700), so that whoever ends the session without its
 * supervisor (its watchdog, a reaper) can close the log: 0 or -errno.
 * Not fsynced: after a power loss a note may be missing, and its log is
 * then left unsealed, as before.
 */
int reap_note_log(const char *name, const char *log, const char *key);

/* The log of session NAME is sealed (or beyond closing): drop its note. */
void reap_forget_log(const char *name);

/*
 * Close the log of a session whose supervisor died: one "lifecycle" record
 * of FIELDS (borrowed), then the seal (audit_resume in audit.h: a log
 * that is not a whole unsealed chain is left as it is).  0, or -errno with
 * WHY saying what happened to the log, for the caller's message.
 */
int reap_seal_log(const char *log, const char *key, json_t *fields, char *why, size_t wlen);

#endif
