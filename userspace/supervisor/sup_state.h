/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The state of one `cordon run` session's supervisor (struct sup), shared
 * by the start-up code (run.c), the event loop (supervisor.c) and the
 * modules below it (the handlers sup_exec.c, sup_connect.c, sup_open.c,
 * the held operations sup_held.c, the records sup_record.c) and the grants
 * (push_grant.c), which call back into the loop through struct sup_ops
 * (sup_ops.h) instead of into supervisor.c, so that no module below the
 * loop depends on it (docs/architecture.md).  The modules that own a part
 * are not among them: the approvals (approve.c, struct approvals), the
 * helpers' channel (channel/helper.c, struct helper) and the Unix
 * connector (channel/unix_connector.c, struct unix_conn) each take their
 * part and what they read of the session (wired by the loop, sup_wire);
 * the exec recheck (exec_recheck.c, struct exec_recheck) and the
 * statistics (sup_stats.c, struct sup_stats) are reached only through
 * their functions.  None of them sees struct sup.
 */
#ifndef CORDON_SUP_STATE_H
#define CORDON_SUP_STATE_H

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include <jansson.h>

#include "cordon.h"
#include "git_guard.h"
#include "world.h"
#include "home.h"

struct fallback_report;
#include "policy.h"
#include "posture.h"
#include "steps.h"
#include "approve.h"
#include "exec_recheck.h"
#include "sup_stats.h"
#include "tty_guard.h"
#include "unix_connector.h"
#include "helper.h"
#include "sup_ops.h"

struct floor;
struct floor_session;
struct net;
struct audit;
struct budget;

#define RUN_MAX_ENV 64

struct run_options {
	const char *policy;             /* file or profile name */
	const char *workspace;
	const char *user;
	enum approve_mode approve;
	bool approve_set;
	const char *audit;
	const char *audit_syslog;       /* --audit-syslog SOCKET (else CORDON_AUDIT_SYSLOG) */
	bool audit_journal;             /* --audit-journal (else CORDON_AUDIT_JOURNAL) */
	bool require_full_floor;
	const char *env[RUN_MAX_ENV];   /* --env NAME */
	int n_env;
	const char *vars[RUN_MAX_ENV];  /* --var NAME=VALUE */
	int n_vars;
	bool quiet;
	const char *mcp;                /* --mcp SERVERS.json */
	const char *upstreams[RUN_MAX_ENV];     /* --upstream CREDENTIAL=URL */
	int n_upstreams;
	const char *upstream_ca;        /* --upstream-ca FILE: verifies those upstreams */
	int keep_fd[RUN_MAX_ENV];       /* --keep-fd N: descriptors the agent inherits */
	int n_keep_fd;
	int stop_fd;                    /* --stop-fd N (> 2 when given): the session stops at its end of file */
	char **argv;                    /* the agent's command */
};

struct sup;

/*
 * The supervisor's state, in the parts each module owns; struct sup holds
 * one of each and the session's own facts.  The parts whose module never
 * sees struct sup are defined in its header: struct approvals (approve.h),
 * struct helper (helper.h), struct unix_conn (unix_connector.h), struct
 * exec_recheck (exec_recheck.h), struct sup_stats (sup_stats.h); the
 * terminal's, struct terminal, in tty_guard.h.
 */

struct sup {
	const struct sup_ops *ops;      /* the loop's operations (above) */
	struct run_options *opt;
	char name[40];                  /* session name: cgroup and run dir */
	char run_dir[PATH_MAX];
	char cgroup[PATH_MAX];
	uint64_t cgid;
	struct posture posture;
	char floor_error[256];          /* why BPF LSM is not in use */
	struct policy *pol;
	struct floor *floor;
	struct floor_session *fsess;
	struct net *net;
	struct net_ring *nring;         /* the network floor's events of this session */
	struct budget *budget;
	struct audit *audit;
	char audit_path[PATH_MAX];
	char key_dir[PATH_MAX];

	uid_t uid;                      /* the agent's */
	gid_t gid;
	char user[64];
	char home[PATH_MAX];
	uid_t invoker;                  /* who may approve */
	char workspace[PATH_MAX];
	struct git_guard git;           /* its git metadata, read-only to the session */
	struct world world;             /* the session's private view (world.h) */
	struct home_layer home_layer;   /* the agent's copy-on-write home (home.h) */
	char home_tmp[PATH_MAX];        /* a layer of this session's own, removed at its end, or "" */
	char world_error[PATH_MAX + 128];
	bool ll_wanted;                 /* the view's thread builds the Landlock ruleset too */
	uint32_t proc_rights;           /* fallback: Landlock rights on the agent's own /proc */

	pid_t agent;
	int listener;                   /* seccomp notify */
	int init_chan;                  /* cordon-init's socket: 'T', the agent's job stopped, or -1 */
	struct terminal term;
	struct approvals ap;
	int watchdog_fd;
	int run_lock;                   /* the run directory's flock: this session is live (reap.h) */


	bool notify_open;               /* the policy escalates some file access */
	int ll_fd;                      /* fallback: the Landlock ruleset built for the agent */
	int main_cpu;                   /* where start-up ran when the ruleset thread began */
	int exit_status;                /* what cordon run returns, for the "end" record */
	char ll_error[512];
	struct fallback_report *ll_rep; /* fallback: the ruleset's report (its covers[]) */
	gid_t groups[64];               /* the agent's supplementary groups */
	int n_groups;
	struct sup_stats stats;         /* the end record's figures (sup_stats.h) */
	pid_t told;                     /* last caller told of a refusal (once per PATH search) */
	struct steps steps;             /* every judged operation, the helpers' too (steps.h) */
	uint64_t started_ms;
	char stop_reason[512];          /* a budget spent, the supervisor stopping */
	/* A stop asked for (sup_stop): a signal to cordon run, or `cordon stop`. */
	int stop_sig;                   /* the signal passed on to the session, or 0 */
	uint64_t stop_at;               /* CLOCK_MONOTONIC ms: the cgroup is killed then */
	bool stop_killed;               /* the grace ran out (or a second stop came) */
	char stop_by[128];              /* who asked: "SIGTERM from uid U (pid P)", ... */
	int audit_err;                  /* -errno once the log cannot keep records (atomic) */
	int audit_full;                 /* the audit budget is spent (atomic) */
	uint64_t floor_dropped;         /* kernel events lost so far (floor_drops) */
	uint64_t net_dropped;           /* network floor events lost so far (net_drops) */
	pthread_mutex_t lock;           /* audit/event publication from workers */
	/* cordon run --mcp: the session's MCP proxy (mcp_session.c). */
	char mcp_path[PATH_MAX];        /* its socket, the one the agent may reach */
	int mcp_listen;                 /* the listening socket, until handed over */
	struct unix_conn conn;
	struct helpers_ctx helpers;       /* what both helpers' channels read (sup_wire) */
	struct helper mcp;
	/* The egress broker and credential proxy (egress_session.c). */
	int egress_listen;
	uint16_t egress_port;           /* on 127.0.0.1; 0: none */
	int egress_ca;                  /* the CA bundle, until handed to the broker */
	char ca_path[PATH_MAX];         /* the bundle the agent trusts; "" if none */
	char *sentinels;                /* "ENV=SENTINEL" lines for the agent, or NULL */
	struct helper egress;
	/* A git push over ssh through the broker (ssh_session.c); "" / -1: not wired. */
	char ssh_self[PATH_MAX];        /* cordon's binary in the view (ProxyCommand) */
	char ssh_known[PATH_MAX];       /* the invoker's known host keys, for the agent's ssh */
	char ssh_agent[PATH_MAX];       /* the relayed ssh-agent socket the agent is given */
	char ssh_upstream[PATH_MAX];    /* the invoker's SSH_AUTH_SOCK (the broker's only) */
	int ssh_agent_listen;           /* its listening socket, until handed to the broker */
	struct exec_recheck recheck;    /* the exec recheck's part (exec_recheck.h) */
};

/*
 * How long a session asked to stop (a signal to `cordon run`, `cordon
 * stop`) has to exit on its own before its cgroup is killed.
 */
#define STOP_GRACE_MS 5000


#endif /* CORDON_SUP_STATE_H */
