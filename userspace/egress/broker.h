/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The egress broker's shared state (struct hp, one per `cordon
 * http-proxy`), one client connection (struct conn), and what every part
 * of the broker uses: its records (to the supervisor's channel under
 * cordon run, to --audit alone), plain replies, and the session's budgets.
 * The broker itself is described in http_proxy.c.
 */
#ifndef CORDON_BROKER_H
#define CORDON_BROKER_H

#include <jansson.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "audit.h"
#include "cred_proxy.h"
#include "http.h"
#include "policy.h"
#include "steps.h"
#include "tls_sni.h"

#define IDLE_TIMEOUT_MS 300000         /* the default of --idle-timeout */
#define RELAY_BUF 65536

struct hp {
	struct policy *pol;
	int listen_fd;
	struct audit *audit;
	pthread_mutex_t lock;           /* audit writes */
	atomic_int conns;
	atomic_ullong next_id;
	int head_timeout_ms;
	int hello_timeout_ms;
	int idle_timeout_ms;            /* no byte either way for this long: the connection goes */
	struct creds *creds;            /* credential hosts' secrets and TLS; NULL: none */
	/*
	 * Under cordon run: the channel to the supervisor (helper.c), which
	 * takes the records into the session's log and holds escalated
	 * requests for the session's human; -1 otherwise.
	 */
	int chan_fd;
	pthread_mutex_t chan_lock;      /* writes, and the waiters */
	struct waiter *waiters;
	atomic_ullong next_hold;
	bool chan_gone;
	uint64_t cgroup_id;             /* only sockets made in this cgroup are served; 0: any (alone) */
	/* Spent so far, against the policy's budgets (0 there: unlimited). */
	atomic_ullong spent_requests, spent_bytes, spent_tokens;
	atomic_ullong judging;          /* bytes of request bodies held to be judged, now */
	struct steps steps;             /* the session's steps (steps.h); none alone */
	struct grant *grants;           /* approved pushes' destinations (grants.h); chan_lock */
};

/*
 * A request held for the session's human; or (pids set) a question for the
 * supervisor, which processes hold a socket (grants.c), under the same id.
 */
struct waiter {
	struct waiter *next;
	uint64_t hold;
	pthread_cond_t cond;
	bool decided, allow;
	char why[256];
	pid_t *pids;                    /* the answer: n_pids of them (or -errno), at most cap_pids */
	int n_pids, cap_pids;
};

struct conn {
	struct hp *hp;
	int fd;                         /* the client */
	int up;                         /* upstream, or -1 */
	uint64_t id;
	char buf[HTTP_MAX_HEAD + TLS_HELLO_MAX];
	size_t len;                     /* bytes in buf */
	struct http_request req;
	char addr[INET6_ADDRSTRLEN];    /* upstream address used */
	uint64_t t0_ms;
	uint64_t up_bytes, down_bytes;
	char why[160];                  /* why a transfer was cut, if it was */
	int up_err;                     /* a credential upstream not opened at CONNECT: why, */
	char up_why[640];               /* said inside the tunnel to its first request */
	uint64_t inode;                 /* the client's socket (sock_diag), for grants */
	uint64_t grant;                 /* the grant that admitted it, or 0 */
	bool grant_ssh;                 /* ... for an ssh remote: the tunnel carries SSH, not TLS */
	bool inner;                     /* past the request that opened it (grants: outer only) */
};

/* Send a message (stolen; NULL: a failed send) to the supervisor: 0, or -errno (-EPIPE: gone). */
int chan_send(struct hp *hp, json_t *msg);
/*
 * Send MSG (stolen) and wait for the supervisor's answer to waiter W (its
 * hold set, the rest of it what the answer fills): true when it came, false
 * when the channel failed or is gone (nothing was answered).
 */
bool chan_wait(struct hp *hp, struct waiter *w, json_t *msg);

/* Are records kept (a session's channel or --audit)? */
bool broker_recording(const struct hp *hp);

/* Keep a record of TYPE with FIELDS (stolen; NULL: none). */
void broker_record(struct hp *hp, const char *type, json_t *fields);

/*
 * A record's fields are built only when the record is kept (a session's
 * channel or --audit): a proxy run without either would otherwise pack,
 * and free, two JSON documents per request for nobody.
 */
#define RECORD(hp, type, ...)							\
	do {									\
		if (broker_recording(hp))					\
			broker_record(hp, type, json_pack(__VA_ARGS__));	\
	} while (0)

int send_all(int fd, const char *b, size_t n);

/* The reason phrase of an HTTP status code cordon answers with. */
const char *broker_status_text(int code);

/* A plain answer that closes the connection: its length in b. */
size_t format_reply(char *b, size_t cap, int code, const char *why);

/* A plain answer, then the connection is closed by the caller. */
void broker_reply(struct conn *c, int code, const char *why);

/* Wait for fd to be readable until `deadline` (CLOCK_MONOTONIC ms): 1, 0 timeout, <0. */
int wait_readable(int fd, uint64_t deadline);

/* The budgets (broker.c says how they are counted). */
int spend_request(struct hp *hp, char *why, size_t wlen);
bool spend_bytes(struct hp *hp, uint64_t n, char *why, size_t wlen);
int conn_send(struct conn *c, bool up, const char *b, size_t n);

#endif /* CORDON_BROKER_H */
