/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The floor instance: which pinned floors, parent cgroup and run-time state
 * a cordon process serves.  The live one (no name) is what every session
 * uses; a named instance NAME (CORDON_INSTANCE=NAME) is a whole
 * second copy beside it, so that a test suite can load, unload, gc and
 * replace its floors on a host whose live sessions it must not touch:
 *
 *   what                  live                     instance NAME
 *   LSM floor pins        /sys/fs/bpf/cordon       /sys/fs/bpf/cordon_NAME
 *   network floor pins    /sys/fs/bpf/cordon/net   /sys/fs/bpf/cordon_NAME/net
 *   sessions' cgroups     <cgroup2>/cordon         <cgroup2>/cordon_NAME
 *   Unix connectors       <cgroup2>/cordon-unix    <cgroup2>/cordon_NAME-unix
 *   run dirs, floor lock  /run/cordon              /run/cordon/.NAME
 *   open-log notes        /var/lib/cordon/open-logs   .../open-logs/.NAME
 *
 * (An underscore, not a dot: bpffs refuses names with a dot at its root
 * when a preloaded iterator (maps.debug) has set the root's sticky bit.)
 *
 * The parents are siblings, never nested: a cgroup-bpf program attached to
 * one (BPF_F_ALLOW_MULTI) runs for tasks below it only, so the network
 * floors of two instances never judge each other's sessions.  The LSM
 * floor's programs and the exec recheck's tracepoints run for every task
 * on the host, but each judges only tasks whose session cgroup is in its
 * own maps (or below its own parent: a stray), and answers 0 for any other
 * task: BPF LSM returns combine as "any denial denies", so an instance's
 * floor can make nothing outside its sessions more permitted, only its own
 * sessions less.  The run directories of an instance are hidden ('.')
 * below the live ones, where the live reaper and `cordon pending` look
 * only at session names, and inside the paths every policy protects.
 * Session names are random and shared name spaces (/run/cordon-mcp,
 * /var/log/cordon, the home layers) hold per-session files only.
 *
 * Attack: the agent points a supervisor at another floor (its own
 * session's, or a cordon it runs, as root in the sandbox or through a
 * setuid copy of the binary), to run outside the floor its session was
 * registered with.  The name is read once, at start (instance_init, from
 * main, by the commands that serve a floor: never by those that run
 * inside a session, mcp-bridge, connect and the Unix connector), and is
 * an error (set and not empty) for a setuid or setgid cordon (AT_SECURE)
 * or a process in any cordon session's or connector's cgroup (read from
 * /proc/self/cgroup; unreadable counts as inside).  A running supervisor
 * never reads it again, and the agent's environment is rebuilt without it
 * (agent_env.c).  For an unprivileged user outside every session it is
 * honoured and gives nothing: loading, attaching, unpinning and making
 * cgroups below the parents need root, and what a user reaches in an
 * instance's run directories (approval and event sockets) is judged at
 * the other end by the peer checks (root or the session's invoker,
 * outside every session) as in the live one; it is how the invoker of a
 * session in an instance answers its approvals (`cordon pending`).
 * What it cannot close, and need not: root on the host picks any instance
 * (and may unload the live floor anyway).  A user whom sudoers lets pass
 * the environment (sudo -E, SETENV; env_reset, the default, drops it) may
 * pick one too: their sessions are confined by the same binary's floor and
 * policy all the same, only kept apart from the live instance's `floor
 * status`, `pending` and gc.  An instance separates against mistakes (a
 * test suite beside live sessions), not against root.
 */
#ifndef CORDON_INSTANCE_H
#define CORDON_INSTANCE_H

#include <stdbool.h>
#include <stddef.h>

#define INSTANCE_ENV      "CORDON_INSTANCE"
#define INSTANCE_NAME_MAX 16

/* The live instance's run-time state (bpf/cordon.h has its pins and parent). */
#define CORDON_RUN_DIR       "/run/cordon"
#define CORDON_OPEN_LOGS_DIR "/var/lib/cordon/open-logs"

/*
 * Read CORDON_INSTANCE (unset or empty: the live floor) and check it and
 * the caller as above.  0, or -EINVAL (a bad name) or -EPERM (not honoured
 * for this caller) with WHY saying which.  Call once at start, before any
 * other thread; the accessors below call it themselves if no one did, and
 * exit(125) on an error (a program that skips the check at its start).
 */
int instance_init(char *why, size_t wlen);

/* The instance's name, "" for the live floor. */
const char *instance_name(void);
/* CORDON_PIN_DIR or /sys/fs/bpf/cordon_NAME. */
const char *instance_pin_dir(void);
/* CORDON_NET_PIN_DIR or /sys/fs/bpf/cordon_NAME/net. */
const char *instance_net_pin_dir(void);
/* The parent cgroup's name below the cgroup2 root: "cordon" or "cordon_NAME". */
const char *instance_cgroup_parent(void);
/* CORDON_RUN_DIR or /run/cordon/.NAME: run directories and the floor lock. */
const char *instance_run_dir(void);
/* CORDON_OPEN_LOGS_DIR or /var/lib/cordon/open-logs/.NAME. */
const char *instance_open_logs_dir(void);

/*
 * Whether a cgroup path (as /proc/PID/cgroup shows it) is at or below a
 * session or connector parent of any instance: what a peer check that
 * trusts "root outside every session" must refuse.  Pure.
 */
bool instance_cgroup_in_session(const char *cg);

/*
 * Whether session NAME has a run directory in any instance below BASE
 * (CORDON_RUN_DIR): BASE/NAME or BASE/.INSTANCE/NAME.  1 yes, 0 none,
 * -errno when it cannot tell (the caller must then take it for alive).
 * For a reaper of files every instance's sessions share a directory for
 * (/run/cordon-mcp, -ssh, -ca, the home layers' -sessions): a file whose
 * session has no run directory in the reaper's own instance may belong to
 * a live session of another.
 */
int instance_session_run_dir_any(const char *base, const char *name);

/* Whether NAME is a valid instance name ([a-z0-9_], 1 to INSTANCE_NAME_MAX). Pure. */
bool instance_name_ok(const char *name);

#endif /* CORDON_INSTANCE_H */
