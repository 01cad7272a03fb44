/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The MCP proxy's state (mcp_proxy.c says what the proxy closes): its
 * servers, clients and the calls it waits for, and the primitives every
 * part of it uses to change them: bounded output queues (no peer makes it
 * buffer without bound), records (to the session's channel or the proxy's
 * own log), answers to clients, requests to servers, and stopping a
 * server (which fails every call waiting on it).  One thread: nothing here
 * locks.  Nothing here calls the server or client side: they call it.
 */
#ifndef CORDON_MCP_STATE_H
#define CORDON_MCP_STATE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "jsonrpc.h"
#include "policy.h"
#include "scrub.h"
#include "steps.h"
#include "util.h"

#define PROXY_VERSION "0.1.0"
#define MAX_SERVERS 32
#define CLIENT_MAX_MSG (4u << 20)       /* a request from the agent */
#define SERVER_MAX_MSG (32u << 20)      /* a result (file contents) */
#define QUEUE_MAX (64u << 20)           /* unsent bytes to one peer */
#define CLIENTS_QUEUE_MAX (256u << 20)  /* unsent bytes to all clients */
#define MAX_CLIENTS 64                  /* connected at once */
#define READ_CHUNK 65536                /* per descriptor per round: fairness */
#define INIT_TIMEOUT_MS 60000
#define DEFAULT_CALL_TIMEOUT_S 120


struct outq {
	char *buf;
	size_t len, off, cap;
};

enum srv_state { SRV_STARTING = 0, SRV_LISTING, SRV_READY, SRV_DEAD };

struct srv {
	char name[64];
	char **argv;                    /* the server's command */
	char policy[PATH_MAX];          /* profile name or policy file */
	char **roots;                   /* canonical; NULL-terminated */
	char **env;                     /* names passed through; NULL-terminated */
	uint32_t timeout_s;
	pid_t pid;
	int wfd, rfd;
	int stop_fd;                    /* its session's --stop-fd, our end: closed, it stops */
	struct linebuf in;
	struct outq out;
	enum srv_state state;
	json_t *tools;                  /* the server's tools, its own names */
	json_t *acc;                    /* tools/list pages being gathered */
	char dead[256];
	uint64_t next_id;
	bool overflow;                  /* its input queue is full: to be stopped */
};

struct client {
	struct client *next;
	int rfd, wfd;
	unsigned n;                     /* for the audit log */
	struct linebuf in;
	struct outq out;
	bool initialized, eof, gone;
	char proto[16];
};

/*
 * CALL_HELD: a tools/call the policy escalated, waiting for the session's
 * human (cordon run --mcp): nothing has reached the server yet.
 */
enum call_kind { CALL_TOOL = 0, CALL_INIT, CALL_LIST, CALL_HELD };

/* A request the proxy sent downstream and waits for. */
struct call {
	struct call *next;
	enum call_kind kind;
	struct srv *s;
	uint64_t did;                   /* its id toward the server */
	struct client *c;               /* CALL_TOOL: who asked */
	json_t *cid;                    /* CALL_TOOL: the client's id */
	json_t *token;                  /* the client's progress token, or NULL */
	json_t *event;                  /* {server, tool, arguments}, as recorded (pol_event_kept) */
	json_t *fwd;                    /* CALL_HELD: the params to send once approved */
	uint64_t hold;                  /* CALL_HELD: its id on the channel */
	char rule[128];                 /* CALL_HELD: the escalating rule */
	uint64_t deadline_ms;
	uint64_t t0_us;
};

struct proxy {
	struct policy *pol;
	struct srv srv[MAX_SERVERS];
	size_t n_srv;
	size_t n_ready_ever;            /* servers that came up at least once */
	struct client *clients;
	unsigned n_clients;             /* ever connected: the next client's number */
	unsigned live_clients;          /* connected now */
	struct call *calls;
	int listen_fd;
	uid_t client_uid;               /* socket peers: this uid or root */
	struct scrub scrub;
	struct audit *audit;
	char audit_path[PATH_MAX];
	const char *user;               /* the servers run as */
	char self[PATH_MAX];
	bool stdio;
	bool stopping;
	/*
	 * Under `cordon run --mcp`: the channel to the session's supervisor
	 * (audit records go into the session's log; escalations wait for the
	 * session's approval channel), and the session whose tasks, alone, may
	 * connect.
	 */
	int chan_fd;
	struct linebuf chan_in;
	struct outq chan_out;
	uint64_t next_hold;
	char session[40];
	struct steps steps;             /* the session's steps (steps.h); none alone */
};

/* Protocol revisions, newest first, NULL-terminated (mcp_state.c says how they are chosen). */
extern const char *const mcp_state_versions[];

/* Is V one of mcp_state_versions? */
bool mcp_state_version_known(const char *v);

/* CLOCK_MONOTONIC in microseconds. */
uint64_t mcp_state_now_us(void);

/* Free a NULL-terminated array of strings (NULL: nothing). */
void mcp_state_strv_free(char **v);

/* O_NONBLOCK on FD: 0 or -errno. */
int mcp_state_set_nonblock(int fd);

/* Queue one message; -ENOBUFS when the peer has QUEUE_MAX unread already, -ENOMEM. */
int mcp_state_q_put(struct outq *q, const json_t *msg);

/* Write what the descriptor takes now: 0, or -errno (the peer is gone). */
int mcp_state_q_flush(struct outq *q, int fd);

/*
 * Read what FD has (at most READ_CHUNK: one peer cannot starve the others)
 * into LB: 1 read, 0 nothing yet, -EPIPE end of input or an error, -ENOMEM.
 */
int mcp_state_pull(int fd, struct linebuf *lb);

/* To the supervisor's channel (takes MSG); a channel that stopped reading stops the proxy. */
void mcp_state_chan_send(struct proxy *p, json_t *msg);

/* An audit record of TYPE (takes FIELDS): the session's log, or the proxy's own. */
void mcp_state_record(struct proxy *p, const char *type, json_t *fields);

/* Queue MSG (taken) to client C; a client that does not read is dropped, not buffered. */
void mcp_state_client_send(struct proxy *p, struct client *c, json_t *msg);

/* A JSON-RPC error to client C for request ID. */
void mcp_state_client_error(struct proxy *p, struct client *c, json_t *id, int code,
			    const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Queue MSG (taken) to server S; one that does not read is stopped by the loop. */
void mcp_state_srv_send(struct proxy *p, struct srv *s, json_t *msg);

/* A new call of KIND toward S, with its id and deadline, on P's list; NULL: out of memory. */
struct call *mcp_state_call_new(struct proxy *p, enum call_kind kind, struct srv *s);
void mcp_state_call_free(struct proxy *p, struct call *k);

/* A held call that will not be decided after all: the human is told so. */
void mcp_state_withdraw(struct proxy *p, struct call *k, const char *why);

/* A JSON-RPC request (takes PARAMS; NULL: {}). */
json_t *mcp_state_request(uint64_t id, const char *method, json_t *params);

/* Tell the server a call is abandoned (it then sends no answer). */
void mcp_state_cancel_down(struct proxy *p, struct call *k, const char *reason);

/* Stop a server's session (its --stop-fd closed); the caller reaps it. */
void mcp_state_srv_stop(struct srv *s);
/* Fail every call waiting on a server that stopped, and mark it dead (its session is ended). */
void mcp_state_srv_kill(struct proxy *p, struct srv *s, const char *why);

#endif /* CORDON_MCP_STATE_H */
