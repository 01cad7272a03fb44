#define MAX_CONNS 256
#define CONNECT_TIMEOUT_MS 10000
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
	struct grant *grants;           /* approved pushes' destinations (grants, below); chan_lock */
};

/* A request held for the session's human. */
struct waiter {
	struct waiter *next;
	uint64_t hold;
	pthread_cond_t cond;
	bool decided, allow;
	char why[256];
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
