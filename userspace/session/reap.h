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
 *  - its run directory and every file named for it (reap_session_files:
 *    sockets, CA bundle, known hosts, a home layer of its own).
 * "If the supervisor dies, the agent dies with it": the next `cordon run`
 * (and `cordon floor gc`) reaps such sessions, killing their tasks first.
 * A start killed before its cgroup or log existed leaves files named for
 * it and no run directory: the run directory is made (and locked) before
 * any of them and removed after them (run.c), so any such file whose run
 * directory is missing is a dead session's, and is removed too.
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
#include <stdbool.h>
#include <stddef.h>
#include "instance.h"

/* CORDON_RUN_DIR, CORDON_OPEN_LOGS_DIR: the live instance's (instance.h). */
#define CORDON_RUN_MCP_DIR "/run/cordon-mcp"
#define CORDON_RUN_SSH_DIR "/run/cordon-ssh"   /* ssh_session.c */
#define CORDON_RUN_CA_DIR  "/run/cordon-ca"    /* egress_session.c */

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

/* What a live session says of itself, in its run directory (0600). */
#define CORDON_RUN_DESC "session.json"

struct net;

/*
 * Describe the session of RUN_DIR for `cordon floor status`: DESC (borrowed;
 * name, user, workspace, pid, started...) written to RUN_DIR/session.json,
 * 0600, by rename so a reader never sees half of it.  0 or -errno.
 */
int reap_describe_run_dir(const char *run_dir, json_t *desc);

/*
 * The sessions under instance_run_dir(), as an array of their session.json
 * objects (or {"name"} where there is none) with "live": true while a
 * cordon holds the run directory's lock, false for one that `cordon floor
 * gc` would reap.  Call with the floor lock held (reap_floor_lock): the
 * probe takes each free lock for an instant, which must not meet a session
 * taking its own (reap_lock_run_dir runs under the floor lock too).
 * NULL on ENOMEM.
 */
json_t *reap_list_sessions(void);

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

/*
 * Every file and directory named for session NAME outside its run
 * directory, and the sockets in it, removed (none is an error): its MCP
 * socket, ssh-agent socket and known hosts, CA bundle, and a home layer of
 * its own (HOME_LAYER_BASE-sessions/NAME, never followed through a
 * symlink).  Not the run directory itself (its callers remove it last: it
 * is what tells a reaper the session is alive), not its cgroups, not its
 * log.  The one list of them: the supervisor's teardown, the watchdog and
 * the reaper all call it.  Call only for a session with no task left.
 */
void reap_session_files(const char *name);

/*
 * Whether session NAME may still write its audit log: 1 when its run
 * directory is held (its cordon or watchdog lives; the lock test above) or
 * its log's note is still there (sealing under way, or a reaper's job), 0
 * when neither, -errno when that cannot be told (then treat it as live).
 * Call with the floor lock held, so that no session starts or is reaped
 * meanwhile.
 */
int reap_session_live(const char *name);

/*
 * The watchdog's end of session NAME, whose supervisor died (watchdog.c):
 * the caller holds NAME's run directory lock (it shares the supervisor's).
 * Under the floor lock, as a reaper: the session's tasks killed with its
 * cgroups, its network and LSM floor entries removed, its files, its log
 * closed with RECORD (borrowed) and sealed, its run directory removed.  WHY
 * says what became of the log.  0 or -errno (a cgroup that will not go: the
 * run directory stays for the next reaper).
 */
int reap_watchdog(const char *name, json_t *record, char *why, size_t wlen);
/* A session's name as run.c makes them: "s" and 16 hex digits. */
bool reap_session_name(const char *n);

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
