/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The supervisor of one `cordon run` session: the state shared by the
 * start-up code (run.c), the event loop (supervisor.c) and the approval
 * channels (approve.c).
 */
#ifndef CORDON_SUPERVISOR_H
#define CORDON_SUPERVISOR_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>

#include "cordon.h"
#include "git_guard.h"
#include "world.h"
#include "home.h"

struct fallback_report;
#include "policy.h"
#include "posture.h"
#include "steps.h"
#include "tty_guard.h"

struct floor;
struct floor_session;
struct net;
struct audit;
struct budget;

enum approve_mode {
	APPROVE_TTY = 0,
	APPROVE_SOCKET,
	APPROVE_DENY,
};

#define RUN_MAX_ENV 64

struct run_options {
	const char *policy;             /* file or profile name */
	const char *workspace;
	const char *user;
	enum approve_mode approve;
	bool approve_set;
	const char *audit;
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
	char **argv;                    /* the agent's command */
};

/*
 * struct held.nr of an operation held by a helper of the session (notif:
 * its hold id): a tools/call in the MCP proxy, a request in the egress
 * broker.
 */
#define HELD_MCP (-1)
#define HELD_HTTP (-2)

/* A helper the supervisor started outside the session, and its channel (helper.c). */
struct helper {
	const char *what;               /* "MCP proxy", ...: messages */
	const char *raw_name;           /* the raw name of its decisions' records */
	const char *record_type;        /* the record type it may write besides "decision" */
	int held;                       /* HELD_MCP, HELD_HTTP */
	pid_t pid;
	uint64_t stop_end;              /* helper_stop(): by when it must have exited */
	int chan;                       /* supervisor <-> helper, or -1 */
	void *in;                       /* struct linebuf of the channel */
};

/* One escalated operation held while a human decides. */
struct pending {
	struct pending *next;
	unsigned id;                    /* shown to humans */
	/*
	 * The SHA-256 of the canonical semantic event, whole (pol_json_sha256):
	 * identical requests are batched under one answer, and "approved for
	 * this session" is kept as this key.  Whole, because one cut at 1 KB
	 * never matched again, so such an approval of a long request did not
	 * hold, and one compared cut would let a request that differs after
	 * the cut ride on another's approval; a digest, because the event
	 * itself may be megabytes (see SUP_MAX_PENDING).
	 */
	char key[65];
	/*
	 * The same, of the event alone (an exec's binary left out): what a
	 * human's denial is remembered as (approve_resolve, sup_human_denied).
	 */
	char deny_key[65];
	char summary[1024];
	char rule[128];
	char risk[512];
	json_t *kept;                   /* the event as shown and recorded (bounded) */
	uint64_t deadline_ms;           /* CLOCK_MONOTONIC */
	uint64_t created_ms;            /* CLOCK_MONOTONIC: its age, for `cordon pending` */
	/* The held notifications (identical requests are batched here). */
	struct held {
		uint64_t notif;
		pid_t pid;
		int nr;
		uint64_t args[6];
		unsigned char addr[128];        /* connect: the address as read */
		uint32_t addrlen;
		char path[PATH_MAX];            /* open: the canonical path judged */
		int oflags;
		unsigned omode;
		struct cordon_exec_expect exec; /* exec: what the kernel must receive */
		char summary[128];              /* exec: the judged argv, for a kill's record */
	} held[16];
	int n_held;
	bool prompted;
};

struct sup {
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
	int tty_fd;                     /* cordon's terminal (prompts), or -1 */
	int pty_master;                 /* the agent's terminal, or -1 */
	int pty_out;                    /* where its output goes: cordon's stdout or stderr */
	int term_fd;                    /* a descriptor of cordon's terminal (its size) */
	int init_chan;                  /* cordon-init's socket: 'T', the agent's job stopped, or -1 */
	/*
	 * Ctrl-Z on the agent's terminal stopped its job (run.c): give the
	 * human's terminal back and stop cordon itself; returns at `fg`, the
	 * terminal cordon's again.  NULL: no terminal of the human's to give.
	 */
	void (*suspend)(struct sup *s);
	int approve_sock;
	int events_sock;
	int watchdog_fd;
	int run_lock;                   /* the run directory's flock: this session is live (reap.h) */
	int clients[16];                /* event subscribers */
	int n_clients;

	struct pending *pending;
	unsigned next_pending;
	char **approved;                /* "for this session" event keys */
	size_t n_approved;
	char **denied;                  /* deny_key of every request a human denied */
	size_t n_denied;
	pid_t told;                     /* the last caller told of a refusal (once per PATH search) */
	bool prompt_active;             /* the agent's output waits meanwhile (tty_guard.c) */
	uint64_t prompt_at;             /* when the question was written (PROMPT_GRACE_MS) */
	struct tty_keys keys;           /* cordon's terminal's input, parsed */
	struct tty_out out;             /* the agent's output, filtered */

	bool notify_open;               /* the policy escalates some file access */
	int ll_fd;                      /* fallback: the Landlock ruleset built for the agent */
	int main_cpu;                   /* where start-up ran when the ruleset thread began */
	int exit_status;                /* what cordon run returns, for the "end" record */
	char ll_error[512];
	struct fallback_report *ll_rep; /* fallback: the ruleset's report (its covers[]) */
	gid_t groups[64];               /* the agent's supplementary groups */
	int n_groups;
	/* How long the supervisor held each notified call (receive to answer), in
	 * microseconds: the last 4096 of each kind, for the end record. */
	uint32_t lat_exec[4096], lat_connect[4096];
	uint64_t n_exec, n_connect;
	uint64_t n_unix_absent;         /* connects to a socket path not in the view (ENOENT) */
	uint64_t n_exec_absent;         /* execs of a path not in the view (ENOENT) */
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
	/* The fallback's Unix connector (unix_connector.h), started on first use. */
	int conn_chan;
	pid_t conn_pid;
	char conn_cgroup[PATH_MAX];     /* <cgroup2>/cordon-unix/NAME; "" with the LSM floor */
	struct helper mcp;
	/* The egress broker and credential proxy (egress_session.c). */
	int egress_listen;
	uint16_t egress_port;           /* on 127.0.0.1; 0: none */
	int egress_ca;                  /* the CA bundle, until handed to the broker */
	char ca_path[PATH_MAX];         /* the bundle the agent trusts; "" if none */
	char *sentinels;                /* "ENV=SENTINEL" lines for the agent, or NULL */
	struct helper egress;
	/*
	 * The exec recheck (bpf/exec_recheck.bpf.c): on when its programs are
	 * attached and this supervisor sees the kernel's thread ids (the
	 * initial PID namespace).  Execs let go on, watched until the kernel
	 * has met or killed them, for the audit record of a kill.
	 */
	bool exec_recheck;
	struct armed_exec {
		pid_t tid;
		uint64_t t_ms;
		char comm[16];
		char summary[128];
	} *armed;                       /* one per thread, grown as needed */
	int n_armed, cap_armed;
};

uint64_t sup_now_ms(void);

/*
 * Requests held for a human at once (distinct ones: identical requests
 * share one).  Attack: an agent holds many distinct escalated requests,
 * each with megabytes of arguments (an exec's argv up to 6 MiB, built once
 * and shared by its forks), and the supervisor, which runs outside the
 * session's memory budget, keeps a copy of each: a small agent makes the
 * host's root process take gigabytes.  A held request keeps only its
 * bounded record form (64 KiB of arguments at most, then a digest) and the
 * SHA-256 key of the whole event; past SUP_MAX_PENDING the next one is
 * refused at once and recorded as such.
 */
#define SUP_MAX_PENDING 256

/*
 * Keys typed within this long of a question do not answer it.  Attack:
 * the agent reads what the human types to it, so it can raise a question
 * just as the human is about to press y or s in some other word ("yes",
 * "this"): the key meant for the agent would approve.  A second is as
 * long as browsers keep their security dialogs' buttons off, for the same
 * reason; a human reads the question for longer than that anyway.
 */
#define PROMPT_GRACE_MS 1000

/* Why sup_hold refused (its -errno), as the record says. */
const char *sup_hold_error(int r);

/*
 * After a record was written (s->lock held): if the log can no longer keep
 * records (audit_down), stop the session at once.  See supervisor.c.
 */
void sup_audit_check(struct sup *s);

/*
 * If the session's steps (steps.h) passed its budget, by the supervisor's
 * count or a helper's, stop the session and say so.  Main loop only.
 */
void sup_steps_check(struct sup *s);

/*
 * Before an exec held in h is let go on: arm the exec recheck with what was
 * judged (h->exec).  comm: the caller's, if already read (else it is read
 * here), for the record of a kill.  0 when armed or when the recheck is off (the callers
 * then keep the weaker rule: no argv-based allow while another task shares
 * the caller's memory); otherwise -errno, with the reason in why.
 */
int sup_exec_arm(struct sup *s, const struct held *h, const char *comm, const char **why);

/*
 * How long a session asked to stop (a signal to `cordon run`, `cordon
 * stop`) has to exit on its own before its cgroup is killed.
 */
#define STOP_GRACE_MS 5000

/*
 * Stop the session as a whole: SIG to every process of it (cordon-init
 * passes it to its whole PID namespace), then, STOP_GRACE_MS later or at a
 * second stop, SIGKILL to its cgroup.  BY says who asked, for the record
 * and the last words.  Main loop only.
 */
void sup_stop(struct sup *s, int sig, const char *by);

/* The event loop: returns when the agent has exited; *status is its wait status. */
int sup_loop(struct sup *s, int *status);

/* Time the supervisor held notified calls: {exec: {count, median_us, p99_us}, connect: ...}. */
json_t *sup_stats(const struct sup *s);

/* Publish a decision: audit record and event-socket notification. */
void sup_record(struct sup *s, pid_t pid, const char *raw_name, json_t *raw, json_t *event,
		const char *decision, const char *rule, const char *reason, const char *approver);

/* approve.c: the approval channels. */
int approve_listen(struct sup *s);
void approve_accept(struct sup *s);
/* A new escalation; returns 0 when held, or a decision to apply now. */
void approve_hold(struct sup *s, struct pending *p);
void approve_tick(struct sup *s);
void approve_tty_input(struct sup *s, const char *buf, size_t n);
/* Apply a decision to every held call of p, unlink and free it. */
void approve_resolve(struct sup *s, struct pending *p, bool allow, bool session,
		     const char *approver);
bool approve_session_allowed(struct sup *s, const char *key);
/*
 * May the peer of an accepted socket speak to the supervisor (approve,
 * events)?  Root or `invoker`, outside every session, not this process.
 * Fills `who` ("uid U (pid P)") when given.
 */
bool host_operator(int fd, uid_t invoker, char *who, size_t wlen);
/* Drop one held call (`nr`, `notif`) from its pending request; the request goes when empty. */
void approve_withdraw(struct sup *s, int nr, uint64_t notif);
void approve_withdraw_all(struct sup *s, int nr);

/*
 * Hold an escalated operation for a human: a new pending request, or one
 * more call batched into an identical one.  `kept`: the event as its
 * records keep it (an exec's large argv as a digest), or NULL for `event`.
 * -ENOMEM: not held (the caller refuses it).
 */
int sup_hold(struct sup *s, const struct held *h, json_t *event, json_t *kept, const char *binary,
	     const char *summary, const char *rule, const char *risk);
/*
 * What "the same request" means, for batching, for "approved for this
 * session" and for a denial that is not asked again:
 *   - its semantic event, whole and canonical (pol_json_sha256): the lifted
 *     operation with all its arguments, and for an exec its whole argv and
 *     working directory too (the event's "also"), for a connect the address,
 *     for an open the canonical path and the access;
 *   - for an approval (and batching, which shares one answer) also the
 *     canonical binary of an exec (BINARY; NULL otherwise): an approval of
 *     /usr/bin/git's push is not one of a ./git that takes the same argv;
 *   - for a denial, not the binary: the shell's PATH retries of one
 *     command (/usr/local/bin/git, /usr/bin/git, /bin/git) are the one
 *     request the human refused, and a denial wider than the question can
 *     only refuse more.
 * Nothing else (the caller's pid, the time) is part of it.
 */
bool sup_session_approved(struct sup *s, json_t *event, const char *binary);
/* A human denied this event earlier in the session (see above): refuse it unasked. */
bool sup_human_denied(struct sup *s, json_t *event);
/*
 * tell.c: tell the caller (pid: a thread of the session) in words, on its
 * stderr, when that is a pipe or a pseudo-terminal it holds open for
 * writing, a Unix stream socket whose peer is in the session (a Node or
 * Bun parent's stdio), or a regular file of its own open for writing
 * (Claude Code's tool output): a tool's output, which the model reads.  Never
 * blocks; nothing is written anywhere else (see tell.c for why).
 */
void sup_tell(const struct sup *s, pid_t pid, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* mcp_session.c: cordon run --mcp. */
int mcp_session_listen(struct sup *s);
int mcp_session_start(struct sup *s);
void mcp_session_stop(struct sup *s);

/*
 * helper.c: a helper's command line, built in the caller's argv (room for
 * RUN_MAX_ENV --var pairs and its own options), each call returning the
 * next free index: helper_argv_start() writes cordon's own binary and CMD
 * (-errno if /proc/self/exe cannot be read; SELF holds PATH_MAX),
 * helper_argv_session() the session's --policy, --workspace and --user,
 * helper_argv_vars() its --var NAME=VALUE, in order,
 * helper_argv_upstreams() its --upstream and --upstream-ca (room for
 * RUN_MAX_ENV more pairs).  The caller puts its own options around them.
 */
int helper_argv_start(const char *argv[], char self[PATH_MAX], const char *cmd);
int helper_argv_session(const struct sup *s, const char *argv[], int n);
int helper_argv_vars(const struct sup *s, const char *argv[], int n);
int helper_argv_upstreams(const struct sup *s, const char *argv[], int n);
/*
 * helper.c: the channel to a helper.  helper_spawn() starts it with FDS as
 * its fds 3... and the channel after them (argv[chan_arg] is set to the
 * channel's fd), without waiting; helper_ready() waits for its "ready"
 * (-ETIMEDOUT, or -EINVAL if it exited or said something else: it wrote
 * why on stderr); helper_start() is both.  helper_send() sends one message
 * without waiting (-EPIPE: it is gone or not reading).
 */
int helper_spawn(struct helper *h, const char *argv[], int chan_arg, const int *fds, int n_fds);
int helper_ready(struct helper *h, json_t **ready);
int helper_start(struct helper *h, const char *argv[], int chan_arg, const int *fds, int n_fds,
		 json_t **ready);
int helper_send(struct helper *h, json_t *msg);
void helper_input(struct sup *s, struct helper *h);
void helper_decide(struct sup *s, struct helper *h, uint64_t hold, bool allow, const char *why,
		   const char *approver);
struct helper *helper_of_held(struct sup *s, int nr);
/*
 * helper_stop(): SIGTERM, and its last records into the log until it
 * closes the channel; helper_reap(): then its exit, waited for (SIGKILL
 * STOP_TIMEOUT_MS after the stop), so that the wait overlaps the rest of
 * the teardown.
 */
void helper_stop(struct sup *s, struct helper *h);
void helper_reap(struct helper *h);

/* egress_session.c: the session's egress broker. */
bool egress_session_wanted(const struct sup *s);
int egress_session_listen(struct sup *s);
int egress_session_spawn(struct sup *s);
int egress_session_start(struct sup *s);
void egress_session_stop(struct sup *s);

/* Run a held or allowed operation: exec continue, connect emulation. */
void sup_apply(struct sup *s, struct held *h, bool allow, bool emulate, const char *why);

#endif /* CORDON_SUPERVISOR_H */
