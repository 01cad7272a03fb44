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

/*
 * Protocol revisions, newest first.  A client asking for one of these gets
 * it; any other gets the newest (the client then decides).  Downstream, the
 * proxy asks for the newest and accepts any of these.
 */
static const char *const versions[] = {
	"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2024-10-07", NULL,
};

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

static uint64_t now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000 + (uint64_t)t.tv_nsec / 1000;
}

static void strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* --- output queues ----------------------------------------------------------- */

/* Queue one message; -ENOBUFS when the peer has QUEUE_MAX unread already. */
static int q_put(struct outq *q, const json_t *msg)
{
	size_t n;
	_cleanup_free_ char *line = jrpc_dump(msg, &n);

	if (!line)
		return -ENOMEM;
	if (q->len - q->off + n > QUEUE_MAX)
		return -ENOBUFS;
	if (q->off && q->off == q->len)
		q->off = q->len = 0;
	if (q->len + n > q->cap) {
		size_t cap = q->cap ? q->cap : 8192;
		char *b;

		if (q->off) {
			memmove(q->buf, q->buf + q->off, q->len - q->off);
			q->len -= q->off;
			q->off = 0;
		}
		while (cap < q->len + n)
			cap *= 2;
		if (cap != q->cap) {
			b = realloc(q->buf, cap);
			if (!b)
				return -ENOMEM;
			q->buf = b;
			q->cap = cap;
		}
	}
	memcpy(q->buf + q->len, line, n);
	q->len += n;
	return 0;
}

/* Write what the descriptor takes now: 0, or -errno (the peer is gone). */
static int q_flush(struct outq *q, int fd)
{
	while (q->off < q->len) {
		ssize_t w = write(fd, q->buf + q->off, q->len - q->off);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return 0;
			return -errno;
		}
		q->off += (size_t)w;
	}
	q->off = q->len = 0;
	return 0;
}

/* --- audit ---------------------------------------------------------------------- */

static void chan_send(struct proxy *p, json_t *msg)
{
	if (p->chan_fd >= 0 && msg && q_put(&p->chan_out, msg) < 0)
		p->stopping = true;     /* the supervisor stopped reading: fail closed */
	json_decref(msg);
}

static void record(struct proxy *p, const char *type, json_t *fields)
{
	if (p->chan_fd >= 0)
		chan_send(p, json_pack("{s:s,s:s,s:O}", "op", "record", "type", type, "fields", fields));
	else if (p->audit) {
		(void)audit_write(p->audit, type, fields);
		/*
		 * A log that can no longer keep records (a full disk:
		 * AUDIT_RESERVE in audit.c) stops the proxy, and no call is
		 * forwarded meanwhile (on_tools_call).
		 */
		if (audit_down(p->audit, NULL))
			p->stopping = true;
	}
	json_decref(fields);
}

/* --- sending -------------------------------------------------------------------- */

/* Bytes queued to every client and not yet read. */
static size_t clients_unread(const struct proxy *p)
{
	size_t n = 0;

	for (const struct client *c = p->clients; c; c = c->next)
		n += c->out.len - c->out.off;
	return n;
}

static void client_send(struct proxy *p, struct client *c, json_t *msg)
{
	const char *why = NULL;

	if (!msg)
		return;
	/*
	 * A client that does not read its answers is dropped, not buffered:
	 * past QUEUE_MAX of its own, or when the answers no client has read
	 * pass CLIENTS_QUEUE_MAX (MAX_CLIENTS idle clients would otherwise
	 * hold this process, outside the session's memory budget, to 4 GiB).
	 */
	if (!c->gone && q_put(&c->out, msg) < 0)
		why = "it left more than 64 MiB unread";
	else if (!c->gone && clients_unread(p) > CLIENTS_QUEUE_MAX)
		why = "the clients left more than 256 MiB unread";
	if (why) {
		c->gone = true;
		record(p, "mcp", json_pack("{s:s,s:i,s:s}", "what", "client dropped", "client", c->n,
					   "reason", why));
	}
	json_decref(msg);
}

static void client_error(struct proxy *p, struct client *c, json_t *id, int code, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static void client_error(struct proxy *p, struct client *c, json_t *id, int code, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	client_send(p, c, jrpc_error(id, code, msg, NULL));
}

static void srv_kill(struct proxy *p, struct srv *s, const char *why);

static void srv_send(struct proxy *p, struct srv *s, json_t *msg)
{
	if (!msg)
		return;
	/*
	 * A server that does not read is stopped, but by the loop, not here:
	 * stopping it frees its calls, and the caller may still hold one.
	 */
	if (s->state != SRV_DEAD && q_put(&s->out, msg) < 0)
		s->overflow = true;
	json_decref(msg);
}

static struct call *call_new(struct proxy *p, enum call_kind kind, struct srv *s)
{
	struct call *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	k->kind = kind;
	k->s = s;
	k->did = ++s->next_id;
	k->t0_us = now_us();
	k->deadline_ms = mono_ms() + (kind == CALL_TOOL ? (uint64_t)s->timeout_s * 1000 : INIT_TIMEOUT_MS);
	k->next = p->calls;
	p->calls = k;
	return k;
}

static void call_free(struct proxy *p, struct call *k)
{
	for (struct call **pp = &p->calls; *pp; pp = &(*pp)->next)
		if (*pp == k) {
			*pp = k->next;
			break;
		}
	json_decref(k->cid);
	json_decref(k->token);
	json_decref(k->event);
	json_decref(k->fwd);
	free(k);
}

/* A held call that will not be decided after all: the human is told so. */
static void withdraw(struct proxy *p, struct call *k, const char *why)
{
	chan_send(p, json_pack("{s:s,s:I,s:s}", "op", "withdraw", "hold", (json_int_t)k->hold,
			       "reason", why));
}

static json_t *request(uint64_t id, const char *method, json_t *params)
{
	return json_pack("{s:s,s:I,s:s,s:o}", "jsonrpc", "2.0", "id", (json_int_t)id, "method",
			 method, "params", params ? params : json_object());
}

/* Fail every call waiting on a server that stopped, and mark it dead. */
static void srv_kill(struct proxy *p, struct srv *s, const char *why)
{
	if (s->state == SRV_DEAD)
		return;
	s->state = SRV_DEAD;
	snprintf(s->dead, sizeof(s->dead), "%s", why);
	/*
	 * SIGTERM to the session's supervisor: it kills its whole session
	 * (cgroup) and seals its audit log; it is reaped when the proxy ends.
	 */
	if (s->pid > 0)
		(void)kill(s->pid, SIGTERM);
	record(p, "mcp", json_pack("{s:s,s:s,s:s}", "what", "server stopped", "server", s->name,
				   "reason", why));
	for (struct call *k = p->calls, *next; k; k = next) {
		next = k->next;
		if (k->s != s)
			continue;
		if (k->kind == CALL_HELD)
			withdraw(p, k, "the server stopped");
		if (k->kind == CALL_TOOL || k->kind == CALL_HELD)
			client_error(p, k->c, k->cid, JRPC_INTERNAL_ERROR,
				     "MCP server \"%s\" failed during the call: %s", s->name, why);
		call_free(p, k);
	}
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ? -errno : 0;
}

static bool version_known(const char *v)
{
	for (int i = 0; versions[i]; i++)
		if (!strcmp(v, versions[i]))
			return true;
	return false;
}

/*
 * Read what one descriptor has (at most READ_CHUNK: one peer cannot starve
 * the others) into its line buffer: 1 read, 0 nothing yet, -EPIPE end of
 * input or an error, -ENOMEM.
 */
static int pull(int fd, struct linebuf *lb)
{
	char buf[READ_CHUNK];
	ssize_t n = read(fd, buf, sizeof(buf));

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0)
		return -EPIPE;
	return linebuf_push(lb, buf, (size_t)n) < 0 ? -ENOMEM : 1;
}

/* Tell the server a call is abandoned (it then sends no answer). */
static void cancel_down(struct proxy *p, struct call *k, const char *reason)
{
	srv_send(p, k->s, json_pack("{s:s,s:s,s:{s:I,s:s}}", "jsonrpc", "2.0", "method",
				    "notifications/cancelled", "params", "requestId",
				    (json_int_t)k->did, "reason", reason));
}

