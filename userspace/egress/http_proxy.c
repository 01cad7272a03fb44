// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The egress broker: the HTTP proxy a session's agent reaches the network
 * through (HTTPS_PROXY / HTTP_PROXY), outside the session, judging every
 * request with the session's policy.
 *
 * What it closes:
 *   - A host no rule lets the agent reach: CONNECT and absolute-form
 *     requests are judged by host name (net rules with "via": "egress")
 *     and by what they carry, lifted into {"server": "http", "tool":
 *     "request", "arguments": {method, host, port[, path]}}, so a tool rule
 *     can escalate or deny, say, a POST to a code host.
 *   - Name games: names are resolved here, on the host; an address that is
 *     not public (loopback, private, link-local, the cloud metadata address,
 *     CGNAT, multicast, v4-mapped forms of those) must itself be listed by an
 *     allowing rule, as must any IP literal a client names.  So an
 *     allowlisted name that resolves (or is rebound) to 169.254.169.254 or
 *     127.0.0.1 is refused.  Every resolved address is judged as well, so a
 *     rule denying an address or CIDR holds whichever name resolves into it.
 *   - Fronting: inside a CONNECT tunnel the first bytes must be a TLS
 *     ClientHello whose server name is the CONNECT host (no name, another
 *     name, or no TLS at all: the tunnel is closed before a byte reaches the
 *     server); a tunnel admitted by an ssh remote's grant carries SSH
 *     instead, and must begin with its identification string
 *     (do_ssh_tunnel).
 *   - Ambiguous HTTP (request smuggling, obs-fold, bare CR, absolute-form
 *     host differing from Host): refused by the strict parser (http.c) with
 *     a plain status; slowloris: a head must arrive whole within
 *     --head-timeout; one thread per connection, capped, so a slow client
 *     costs one thread and never the others' service.
 * What it cannot close: what travels inside an allowed TLS tunnel is opaque
 * here (the credential proxy terminates TLS for credential hosts only); a
 * plain-HTTP request goes upstream as sent (Connection: close added).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <openssl/err.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>

#include "audit.h"
#include "cred_proxy.h"
#include "llm_tools.h"
#include "ssh_agent.h"
#include "llm_usage.h"
#include "stream_scrub.h"
#include "http.h"
#include "jsonrpc.h"
#include "http_proxy.h"
#include "policy.h"
#include "tls_sni.h"
#include "session_policy.h"
#include "steps.h"
#include "util.h"

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

static int send_all(int fd, const char *b, size_t n);

static int chan_send(struct hp *hp, json_t *msg)
{
	size_t len = 0;
	char *line = msg ? jrpc_dump(msg, &len) : NULL;
	int r = -ENOMEM;

	json_decref(msg);
	if (line) {
		pthread_mutex_lock(&hp->chan_lock);
		r = hp->chan_gone ? -EPIPE : send_all(hp->chan_fd, line, len);
		pthread_mutex_unlock(&hp->chan_lock);
		free(line);
	}
	return r;
}

static bool recording(const struct hp *hp)
{
	return hp->chan_fd >= 0 || hp->audit;
}

static void record(struct hp *hp, const char *type, json_t *fields)
{
	if (hp->chan_fd >= 0 && fields) {
		(void)chan_send(hp, json_pack("{s:s,s:s,s:O}", "op", "record", "type", type, "fields",
					      fields));
	} else if (hp->audit && fields) {
		pthread_mutex_lock(&hp->lock);
		(void)audit_write(hp->audit, type, fields);
		pthread_mutex_unlock(&hp->lock);
		if (audit_down(hp->audit, NULL))
			raise(SIGTERM);         /* stop serving: see judge() */
	}
	json_decref(fields);
}

/*
 * A record's fields are built only when the record is kept (a session's
 * channel or --audit): a proxy run without either would otherwise pack,
 * and free, two JSON documents per request for nobody.
 */
#define RECORD(hp, type, ...)							\
	do {									\
		if (recording(hp))						\
			record(hp, type, json_pack(__VA_ARGS__));		\
	} while (0)

static int send_all(int fd, const char *b, size_t n)
{
	while (n) {
		ssize_t w = send(fd, b, n, MSG_NOSIGNAL);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

static const char *status_text(int code)
{
	switch (code) {
	case 400: return "Bad Request";
	case 403: return "Forbidden";
	case 408: return "Request Timeout";
	case 413: return "Content Too Large";
	case 414: return "URI Too Long";
	case 417: return "Expectation Failed";
	case 426: return "Upgrade Required";
	case 431: return "Request Header Fields Too Large";
	case 501: return "Not Implemented";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	case 505: return "HTTP Version Not Supported";
	default: return "Error";
	}
}

/* A plain answer that closes the connection: its length in b. */
static size_t format_reply(char *b, size_t cap, int code, const char *why)
{
	int n = snprintf(b, cap, "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\n"
			 "Connection: close\r\nContent-Length: %zu\r\n\r\ncordon: %.700s\n", code,
			 status_text(code), strnlen(why, 700) + 9, why);

	return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

/* A plain answer, then the connection is closed by the caller. */
static void reply(struct conn *c, int code, const char *why)
{
	char b[1024];

	(void)send_all(c->fd, b, format_reply(b, sizeof(b), code, why));
}

/* Wait for fd to be readable until `deadline` (CLOCK_MONOTONIC ms): 1, 0 timeout, <0. */
static int wait_readable(int fd, uint64_t deadline)
{
	for (;;) {
		uint64_t now = mono_ms();
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int r;

		if (now >= deadline)
			return 0;
		r = poll(&p, 1, (int)(deadline - now));
		if (r < 0 && errno == EINTR)
			continue;
		return r < 0 ? -errno : r;
	}
}

/* --- destinations ------------------------------------------------------------- */

/* Public unicast: anything else must be listed by a rule. */
static bool addr_public(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET) {
		uint32_t a = ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr);

		return !((a >> 24) == 0 || (a >> 24) == 10 || (a >> 24) == 127 ||
			 (a >> 16) == 0xa9fe /* 169.254/16 */ || (a >> 20) == 0xac1 /* 172.16/12 */ ||
			 (a >> 16) == 0xc0a8 /* 192.168/16 */ || (a >> 22) == 0x191 /* 100.64/10 */ ||
			 (a >> 8) == 0xc00000 /* 192.0.0/24 */ || (a >> 17) == 0x6309 /* 198.18/15 */ ||
			 (a >> 28) >= 0xe /* multicast, reserved, broadcast */);
	}
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;

		if (IN6_IS_ADDR_V4MAPPED(a) || IN6_IS_ADDR_V4COMPAT(a)) {
			struct sockaddr_in v4 = { .sin_family = AF_INET };

			memcpy(&v4.sin_addr, &a->s6_addr[12], 4);
			return addr_public((struct sockaddr *)&v4);
		}
		/* Global unicast 2000::/3 only, minus 6to4 and Teredo (they wrap v4). */
		return (a->s6_addr[0] & 0xe0) == 0x20 &&
		       !(a->s6_addr[0] == 0x20 && a->s6_addr[1] == 0x02) &&
		       !(a->s6_addr[0] == 0x20 && a->s6_addr[1] == 0x01 && !a->s6_addr[2] &&
			 !a->s6_addr[3]);
	}
	return false;
}

/* 169.254/16, fe80::/10 (and their v4-mapped forms): the metadata address lives there. */
static bool addr_link_local(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 16) == 0xa9fe;
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;

		if (IN6_IS_ADDR_V4MAPPED(a) || IN6_IS_ADDR_V4COMPAT(a))
			return a->s6_addr[12] == 169 && a->s6_addr[13] == 254;
		return IN6_IS_ADDR_LINKLOCAL(a);
	}
	return true;
}

static void addr_text(const struct sockaddr *sa, char *out, size_t len)
{
	const void *a = sa->sa_family == AF_INET ? (const void *)&((const struct sockaddr_in *)sa)->sin_addr
						 : (const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr;

	if (!inet_ntop(sa->sa_family, a, out, (socklen_t)len))
		snprintf(out, len, "?");
}

/* Connect with a deadline. */
static int connect_to(const struct sockaddr *sa, socklen_t sl)
{
	int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	struct pollfd p;
	int err = 0, one = 1, r;
	socklen_t el = sizeof(err);

	if (fd < 0)
		return -errno;
	if (connect(fd, sa, sl) < 0 && errno != EINPROGRESS) {
		err = errno;
		close(fd);
		return -err;
	}
	p = (struct pollfd){ .fd = fd, .events = POLLOUT };
	do
		r = poll(&p, 1, CONNECT_TIMEOUT_MS);
	while (r < 0 && errno == EINTR);
	if (r <= 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0 || err) {
		close(fd);
		return r == 0 ? -ETIMEDOUT : -(err ?: EIO);
	}
	(void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/*
 * Resolve the host here and connect to the first address the policy lets
 * it reach.  `why` says what refused the last candidate.  Returns the
 * socket, -EACCES (every address refused) or -errno.
 */
static int open_upstream(struct conn *c, char *why, size_t wlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_ADDRCONFIG };
	struct addrinfo *res = NULL, *ai;
	char port[8];
	int r, fd = -EHOSTUNREACH;

	snprintf(port, sizeof(port), "%u", c->req.port);
	r = getaddrinfo(c->req.host, port, &hints, &res);
	if (r) {
		snprintf(why, wlen, "%s does not resolve: %s", c->req.host, gai_strerror(r));
		return -EHOSTUNREACH;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		struct pol_request pr = { .op = POL_OP_CONNECT, .port = c->req.port };
		struct pol_result pres;

		if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
			continue;
		addr_text(ai->ai_addr, c->addr, sizeof(c->addr));
		/*
		 * Every address is judged, public ones too: a rule that denies
		 * (or escalates) an address or CIDR is the strongest decision
		 * about a connection that lands there, whatever name led to it.
		 * A public address no rule names rides on the name's allow; a
		 * non-public one must itself be allowed.
		 */
		pr.host = c->addr;
		pol_eval(c->hp->pol, &pr, &pres);
		if (pres.decision != CORDON_ALLOW && (pres.rule || pres.invariant)) {
			snprintf(why, wlen, "%s resolves to %s, which %s%s%s does not allow",
				 c->req.host, c->addr, pres.rule ? "rule '" : "invariant ",
				 pres.rule ? pres.rule->name : pres.invariant, pres.rule ? "'" : "");
			fd = -EACCES;
			continue;
		}
		/* A granted name: the human saw it; link-local never (grants, above). */
		if (pres.decision != CORDON_ALLOW && !addr_public(ai->ai_addr) &&
		    (!c->grant || addr_link_local(ai->ai_addr))) {
			snprintf(why, wlen, "%s resolves to %s, a non-public address no rule "
				 "lists", c->req.host, c->addr);
			fd = -EACCES;
			continue;
		}
		fd = connect_to(ai->ai_addr, ai->ai_addrlen);
		if (fd >= 0)
			break;
		snprintf(why, wlen, "%s (%s): %s", c->req.host, c->addr, strerror(-fd));
	}
	freeaddrinfo(res);
	return fd;
}

/*
 * A credential's gateway (its "upstream"): named by the policy or by
 * `cordon run --upstream`, that is by the human, never by the agent, so it
 * is connected to as named, a loopback or private address included; what
 * the agent may ask of it is still judged as a request to the provider's
 * host (endpoints, sentinel, tools).
 */
static int open_gateway(struct conn *c, const struct pol_credential *cr, char *why, size_t wlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM };
	struct addrinfo *res = NULL, *ai;
	char port[8];
	int r, fd = -EHOSTUNREACH;

	snprintf(port, sizeof(port), "%u", cr->upstream_port);
	r = getaddrinfo(cr->upstream_host, port, &hints, &res);
	if (r) {
		snprintf(why, wlen, "credential %s's upstream %s does not resolve: %s", cr->name,
			 cr->upstream_host, gai_strerror(r));
		return -EHOSTUNREACH;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
			continue;
		addr_text(ai->ai_addr, c->addr, sizeof(c->addr));
		fd = connect_to(ai->ai_addr, ai->ai_addrlen);
		if (fd >= 0)
			break;
		snprintf(why, wlen, "credential %s's upstream %s (%s): %s", cr->name,
			 cr->upstream_host, c->addr, strerror(-fd));
	}
	freeaddrinfo(res);
	return fd;
}

/* Credential i's upstream: its gateway if it names one, else the host asked for. */
static int open_credential_upstream(struct conn *c, size_t i, char *why, size_t wlen)
{
	const char *sentinel;
	const struct pol_credential *cr = creds_at(c->hp->creds, i, &sentinel);

	return cr && cr->upstream_host ? open_gateway(c, cr, why, wlen) : open_upstream(c, why, wlen);
}

/* --- budgets ------------------------------------------------------------------------ */

/*
 * A request is counted before it goes anywhere; once a budget is spent,
 * every new request is refused with its name.  Bytes are counted as they
 * move, and a transfer that crosses the byte budget is cut; tokens are
 * known only when a response's usage has been read, so the request that
 * crosses the token budget completes and the next is refused.
 */
static int spend_request(struct hp *hp, char *why, size_t wlen)
{
	const struct pol_budgets *b = &hp->pol->budgets;
	uint64_t n = atomic_fetch_add(&hp->spent_requests, 1) + 1;

	if (b->egress_requests && n > b->egress_requests)
		snprintf(why, wlen, "the session's egress_requests budget (%llu) is spent",
			 (unsigned long long)b->egress_requests);
	else if (b->egress_bytes && atomic_load(&hp->spent_bytes) >= b->egress_bytes)
		snprintf(why, wlen, "the session's egress_bytes budget (%llu) is spent",
			 (unsigned long long)b->egress_bytes);
	else if (b->llm_tokens && atomic_load(&hp->spent_tokens) >= b->llm_tokens)
		snprintf(why, wlen, "the session's llm_tokens budget (%llu) is spent",
			 (unsigned long long)b->llm_tokens);
	else
		return 0;
	return -403;
}

/*
 * false once the byte budget is crossed, with the reason in why.  What
 * counts: every byte of a request or response the broker moves (heads and
 * bodies, as relayed or re-framed), not TLS handshakes or record overhead.
 */
static bool spend_bytes(struct hp *hp, uint64_t n, char *why, size_t wlen)
{
	uint64_t lim = hp->pol->budgets.egress_bytes;

	if (!lim || atomic_fetch_add(&hp->spent_bytes, n) + n <= lim)
		return true;
	snprintf(why, wlen, "the session's egress_bytes budget (%llu) is spent",
		 (unsigned long long)lim);
	return false;
}

/*
 * Every byte a plain connection moves goes through here: counted against
 * the byte budget before it is sent (a transfer crossing it is cut), and
 * into the connection's totals.  up: toward the upstream.
 */
static int conn_send(struct conn *c, bool up, const char *b, size_t n)
{
	if (!spend_bytes(c->hp, n, c->why, sizeof(c->why)) || send_all(up ? c->up : c->fd, b, n) < 0)
		return -EPIPE;
	if (up)
		c->up_bytes += n;
	else
		c->down_bytes += n;
	return 0;
}

/* --- relaying --------------------------------------------------------------------- */

/* Both ways until both sides are done (half-closes passed on) or idle too long. */
static void relay(struct conn *c)
{
	char *b = malloc(RELAY_BUF);
	bool up_open = true, down_open = true;

	if (!b)
		return;
	while (up_open || down_open) {
		struct pollfd p[2] = {
			{ .fd = up_open ? c->fd : -1, .events = POLLIN },
			{ .fd = down_open ? c->up : -1, .events = POLLIN },
		};
		int r = poll(p, 2, c->hp->idle_timeout_ms);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		for (int i = 0; i < 2; i++) {
			int from = i ? c->up : c->fd, to = i ? c->fd : c->up;  /* i: downstream */
			ssize_t n;

			if (!p[i].revents)
				continue;
			n = recv(from, b, RELAY_BUF, 0);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				(void)shutdown(to, SHUT_WR);
				if (i)
					down_open = false;
				else
					up_open = false;
				if (n < 0)
					up_open = down_open = false;
				continue;
			}
			if (conn_send(c, !i, b, (size_t)n) < 0) {
				up_open = down_open = false;
				break;
			}
		}
	}
	free(b);
}

/* --- one connection --------------------------------------------------------------- */

static json_t *event_of(const struct conn *c)
{
	return pol_event_http(c->req.method, c->req.host, c->req.port,
			      c->req.form == HTTP_ABSOLUTE_FORM ? c->req.path : NULL);
}

/* The head: whole, within the deadline, or an answer saying why not. */
static int read_head(struct conn *c)
{
	uint64_t deadline = c->t0_ms + (uint64_t)c->hp->head_timeout_ms;
	char why[256] = "";

	for (;;) {
		int r = c->len ? http_parse_request(c->buf, c->len, &c->req, why, sizeof(why)) : 0;
		ssize_t n;

		if (r > 0)
			return r;
		if (r < 0) {
			reply(c, -r, why[0] ? why : "malformed request");
			return r;
		}
		if (c->len >= HTTP_MAX_HEAD) {
			reply(c, 431, "request head too large");
			return -431;
		}
		r = wait_readable(c->fd, deadline);
		if (r == 0) {
			/* Slowloris: the head did not arrive in time. */
			reply(c, 408, "the request head did not arrive in time");
			return -408;
		}
		if (r < 0)
			return r;
		n = recv(c->fd, c->buf + c->len, HTTP_MAX_HEAD - c->len, 0);
		if (n <= 0)
			return n < 0 ? -errno : -ECONNRESET;
		c->len += (size_t)n;
	}
}

/*
 * CONNECT: 200, then the ClientHello, which must name the CONNECT host.
 * 0 with the hello in c->buf[0, c->len) and its name in sni; <0 refused
 * (recorded).
 */
static int read_hello(struct conn *c, size_t head, json_t *event, char *sni, size_t slen)
{
	static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	uint64_t deadline;
	char why[640] = "";
	size_t have = c->len - head;
	int r = 0;

	memmove(c->buf, c->buf + head, have);
	c->len = have;
	if (send_all(c->fd, ok, sizeof(ok) - 1) < 0)
		return -EPIPE;
	deadline = mono_ms() + (uint64_t)c->hp->hello_timeout_ms;
	for (;;) {
		ssize_t n;

		r = c->len ? tls_client_hello_sni((unsigned char *)c->buf, c->len, sni, slen) : 0;
		if (r != 0 || c->len >= TLS_HELLO_MAX)
			break;
		if (wait_readable(c->fd, deadline) <= 0) {
			r = -ETIMEDOUT;
			break;
		}
		n = recv(c->fd, c->buf + c->len, TLS_HELLO_MAX - c->len, 0);
		if (n <= 0) {
			r = -ECONNRESET;
			break;
		}
		c->len += (size_t)n;
	}
	if (r == 1 && strcmp(sni, c->req.host))
		snprintf(why, sizeof(why), "the TLS server name \"%s\" is not the CONNECT host \"%s\"",
			 sni, c->req.host);
	else if (r == -ENOENT)
		snprintf(why, sizeof(why), "a TLS ClientHello without a server name");
	else if (r == -EINVAL || (r == 0 && c->len >= TLS_HELLO_MAX))
		snprintf(why, sizeof(why), "the tunnel does not begin with a TLS ClientHello");
	else if (r == -ETIMEDOUT)
		snprintf(why, sizeof(why), "no TLS ClientHello within %d ms", c->hp->hello_timeout_ms);
	else if (r != 1)
		snprintf(why, sizeof(why), "the client left before its ClientHello");
	if (why[0]) {
		RECORD(c->hp, "http", "{s:I,s:O,s:s,s:s}", "conn", (json_int_t)c->id, "event",
		       event, "outcome", "refused", "reason", why);
		return -EACCES;
	}
	return 0;
}

/* A tunnel cordon does not read: the hello, then both ways. */
static void do_connect(struct conn *c, size_t head, json_t *event)
{
	char sni[256] = "";

	if (read_hello(c, head, event, sni, sizeof(sni)) < 0)
		return;
	if (conn_send(c, true, c->buf, c->len) == 0)
		relay(c);
	RECORD(c->hp, "http", "{s:I,s:O,s:s,s:s,s:s,s:I,s:I,s:I,s:s*}", "conn",
	       (json_int_t)c->id, "event", event, "outcome",
	       c->why[0] ? "cut" : "tunnel closed", "sni", sni, "addr", c->addr,
	       "bytes_up", (json_int_t)c->up_bytes, "bytes_down",
	       (json_int_t)c->down_bytes, "ms", (json_int_t)(mono_ms() - c->t0_ms),
	       "reason", c->why[0] ? c->why : NULL);
}

/*
 * A CONNECT admitted by an ssh remote's grant: the tunnel carries SSH, which
 * has no server name to check against the CONNECT host (the fronting rule
 * above is TLS's); what is checked is that it is SSH at all: the client's
 * identification string ("SSH-2.0-", RFC 4253 4.2; an OpenSSH client sends
 * it first, without waiting for the server's), within the hello timeout.
 * Attack: the approved push's tree using its grant for another protocol
 * to the approved host:port (it still reaches only that host and port).
 */
static void do_ssh_tunnel(struct conn *c, size_t head, json_t *event)
{
	static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	static const char id[] = "SSH-2.0-";
	uint64_t deadline = mono_ms() + (uint64_t)c->hp->hello_timeout_ms;
	size_t have = c->len - head;
	const char *why = NULL;

	memmove(c->buf, c->buf + head, have);
	c->len = have;
	if (send_all(c->fd, ok, sizeof(ok) - 1) < 0)
		return;
	while (c->len < sizeof(id) - 1) {
		ssize_t n;

		if (memcmp(c->buf, id, c->len))
			break;
		if (wait_readable(c->fd, deadline) <= 0) {
			why = "no SSH identification string in time";
			break;
		}
		n = recv(c->fd, c->buf + c->len, sizeof(id) - 1 - c->len, 0);
		if (n <= 0) {
			why = "the client left before its SSH identification string";
			break;
		}
		c->len += (size_t)n;
	}
	if (!why && memcmp(c->buf, id, sizeof(id) - 1))
		why = "the tunnel of an ssh remote's grant does not begin with \"SSH-2.0-\"";
	if (why) {
		RECORD(c->hp, "http", "{s:I,s:O,s:s,s:s}", "conn", (json_int_t)c->id, "event",
		       event, "outcome", "refused", "reason", why);
		return;
	}
	if (conn_send(c, true, c->buf, c->len) == 0)
		relay(c);
	RECORD(c->hp, "http", "{s:I,s:O,s:s,s:s,s:s,s:I,s:I,s:I,s:s*}", "conn",
	       (json_int_t)c->id, "event", event, "outcome",
	       c->why[0] ? "cut" : "tunnel closed", "protocol", "ssh", "addr", c->addr,
	       "bytes_up", (json_int_t)c->up_bytes, "bytes_down",
	       (json_int_t)c->down_bytes, "ms", (json_int_t)(mono_ms() - c->t0_ms),
	       "reason", c->why[0] ? c->why : NULL);
}

/* Hop-by-hop and proxy fields never go upstream. */
static bool hop_header(const struct http_header *h)
{
	static const char *const hop[] = { "connection", "proxy-connection", "keep-alive",
					   "proxy-authorization", "proxy-authenticate", "te",
					   "trailer", "upgrade", NULL };

	for (int i = 0; hop[i]; i++)
		if (h->name_len == strlen(hop[i]) && !strncasecmp(h->name, hop[i], h->name_len))
			return true;
	return false;
}

/* Plain HTTP, absolute-form: the request once, in origin-form, then the response until close. */
static void do_forward(struct conn *c, size_t head, json_t *event)
{
	int ms = c->hp->idle_timeout_ms;
	struct timeval idle = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 };
	char *out = malloc(HTTP_MAX_HEAD + 64);
	size_t o = 0, body = c->len - head;
	int r;

	if (!out)
		return;
	/*
	 * Every read and write below waits at most the idle time: a client
	 * that declares a body and sends none, or an upstream that never
	 * answers or stops reading, costs this thread that long, not for ever
	 * (256 such would have left the proxy refusing everyone with 503).
	 */
	if (setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &idle, sizeof(idle)) < 0 ||
	    setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &idle, sizeof(idle)) < 0 ||
	    setsockopt(c->up, SOL_SOCKET, SO_RCVTIMEO, &idle, sizeof(idle)) < 0 ||
	    setsockopt(c->up, SOL_SOCKET, SO_SNDTIMEO, &idle, sizeof(idle)) < 0) {
		snprintf(c->why, sizeof(c->why), "cannot set the sockets' time limits");
		free(out);
		goto done;
	}
	o += (size_t)snprintf(out, HTTP_MAX_HEAD + 64, "%s %s HTTP/1.1\r\n", c->req.method, c->req.path);
	for (size_t i = 0; i < c->req.n_headers; i++) {
		const struct http_header *h = &c->req.headers[i];

		if (hop_header(h) || o + h->name_len + h->value_len + 4 > HTTP_MAX_HEAD)
			continue;
		memcpy(out + o, h->name, h->name_len);
		o += h->name_len;
		out[o++] = ':';
		out[o++] = ' ';
		memcpy(out + o, h->value, h->value_len);
		o += h->value_len;
		out[o++] = '\r';
		out[o++] = '\n';
	}
	o += (size_t)snprintf(out + o, 64, "Connection: close\r\n\r\n");
	r = conn_send(c, true, out, o);
	free(out);
	if (r < 0)
		goto done;
	/* The body as framed by the client (validated), and nothing after it. */
	if (c->req.chunked) {
		struct http_chunked ch;
		ssize_t k;

		http_chunked_init(&ch);
		for (;;) {
			ssize_t n;

			if (body) {
				k = http_chunked_scan(&ch, c->buf + head, body);
				if (k < 0 || conn_send(c, true, c->buf + head, (size_t)k) < 0)
					goto done;
			}
			if (ch.done)
				break;
			if (wait_readable(c->fd, mono_ms() + (uint64_t)c->hp->idle_timeout_ms) <= 0)
				goto done;
			head = 0;
			n = recv(c->fd, c->buf, sizeof(c->buf), 0);
			if (n <= 0)
				goto done;
			body = (size_t)n;
		}
	} else if (c->req.content_length > 0) {
		uint64_t left = (uint64_t)c->req.content_length;
		size_t first = body < left ? body : (size_t)left;

		if (conn_send(c, true, c->buf + head, first) < 0)
			goto done;
		left -= first;
		while (left) {
			ssize_t n = recv(c->fd, c->buf, left < sizeof(c->buf) ? left : sizeof(c->buf), 0);

			if (n <= 0 || conn_send(c, true, c->buf, (size_t)n) < 0)
				goto done;
			left -= (uint64_t)n;
		}
	}
	/* The response, as it comes, until the server closes. */
	(void)shutdown(c->fd, SHUT_RD);
	for (;;) {
		ssize_t n = recv(c->up, c->buf, sizeof(c->buf), 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || conn_send(c, false, c->buf, (size_t)n) < 0)
			break;
	}
done:
	RECORD(c->hp, "http", "{s:I,s:O,s:s,s:s,s:I,s:I,s:I,s:s*}", "conn",
	       (json_int_t)c->id, "event", event, "outcome",
	       c->why[0] ? "cut" : "forwarded", "addr", c->addr, "bytes_up",
	       (json_int_t)c->up_bytes, "bytes_down", (json_int_t)c->down_bytes,
	       "ms", (json_int_t)(mono_ms() - c->t0_ms), "reason",
	       c->why[0] ? c->why : NULL);
}

/* --- grants ----------------------------------------------------------------------- */

/*
 * A human approved a `git push` (push_grant.h): the supervisor grants that
 * process, named by pid and start time, the push's destinations, over the
 * channel ({"op":"grant","grant":N,"pid":P,"start":T,"ttl_ms":M,
 * "dests":[{"host":H,"port":N}]}).  A CONNECT or absolute-form request the
 * policy refuses by default (no rule or invariant refuses it) or escalates
 * is admitted when a live grant names its host and port and every task
 * holding the client's socket (its inode from sock_diag, looked for in the
 * descriptor tables of every task on the host) is the approved process or
 * one of its descendants (by the parent chain, the approved process's
 * start time checked).  A grant ends when its process has gone (a
 * descendant orphaned by then no longer descends from it) or after its
 * ttl; the end and every use or refusal are recorded.
 *
 * Attacks closed: another process of the session racing for the grant
 * (curl to the same host while the push is approved): its socket is not
 * held by the approved tree; a socket passed into the approved tree over
 * SCM_RIGHTS while its maker keeps a copy: held outside the tree; a
 * remote redirected after approval (-c remote.x.url, the environment, a
 * config edited in /tmp): the grant names the host:port the human saw;
 * the pid reused after the push: the start time differs.
 * What it cannot close: what the approved process and its descendants do
 * with the grant (the repository's hooks and config-named programs run in
 * that tree) reaches only the approved host and port, but anything there;
 * a process of the session that takes the tunnel's descriptor from the
 * approved tree after admission (pidfd_getfd in the fallback, where no
 * LSM judges it) speaks through it, to that destination only; a name the
 * human saw that resolves (or is rebound) to a private or loopback address
 * is connected to (the human approved the name): link-local addresses,
 * the cloud metadata one among them, never are.
 */
#define GRANT_MAX_DESTS 16
#define GRANT_MAX 64
#define HOLDERS_MAX 64

struct grant {
	struct grant *next;
	uint64_t id;
	pid_t pid;
	unsigned long long start;
	uint64_t expires_ms;
	uint64_t uses;
	size_t n;
	struct {
		char host[256];
		uint16_t port;
		bool ssh;               /* an ssh remote: a CONNECT tunnel carrying SSH */
	} d[GRANT_MAX_DESTS];
};

/* Under chan_lock. */
static void grant_add(struct hp *hp, json_t *m)
{
	struct grant *g;
	json_t *d;
	size_t i, n = 0;

	for (g = hp->grants; g; g = g->next)
		n++;
	if (n >= GRANT_MAX || !json_is_integer(json_object_get(m, "pid")) ||
	    !json_is_integer(json_object_get(m, "start")))
		return;
	g = calloc(1, sizeof(*g));
	if (!g)
		return;
	g->id = (uint64_t)json_integer_value(json_object_get(m, "grant"));
	g->pid = (pid_t)json_integer_value(json_object_get(m, "pid"));
	g->start = (unsigned long long)json_integer_value(json_object_get(m, "start"));
	g->expires_ms = mono_ms() + (uint64_t)json_integer_value(json_object_get(m, "ttl_ms"));
	json_array_foreach(json_object_get(m, "dests"), i, d) {
		const char *h = json_string_value(json_object_get(d, "host"));
		json_int_t port = json_integer_value(json_object_get(d, "port"));

		if (!h || strlen(h) >= sizeof(g->d[0].host) || port < 1 || port > 65535 ||
		    g->n >= GRANT_MAX_DESTS)
			continue;
		snprintf(g->d[g->n].host, sizeof(g->d[0].host), "%s", h);
		g->d[g->n].ssh = json_is_true(json_object_get(d, "ssh"));
		g->d[g->n++].port = (uint16_t)port;
	}
	g->next = hp->grants;
	hp->grants = g;
}

/* Fields 4 (ppid) and 22 (start time) of /proc/PID/stat. */
static int proc_stat(pid_t pid, pid_t *ppid, unsigned long long *start)
{
	char p[64], buf[1024], *c;
	int fd, f = 2;
	ssize_t n;

	snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	c = strrchr(buf, ')');
	if (!c)
		return -EINVAL;
	for (c++; *c && f < 22; c++)
		if (*c == ' ') {
			f++;
			if (f == 4)
				*ppid = (pid_t)strtol(c + 1, NULL, 10);
		}
	return f == 22 && sscanf(c, "%llu", start) == 1 ? 0 : -EINVAL;
}

static bool grant_alive(const struct grant *g)
{
	pid_t pp;
	unsigned long long st;

	return proc_stat(g->pid, &pp, &st) == 0 && st == g->start;
}

/*
 * Grants whose process has gone, or whose time is up: dropped, then
 * recorded (the record goes through the channel, which takes chan_lock).
 */
static void grants_sweep(struct hp *hp)
{
	uint64_t now = mono_ms();
	struct grant *ended = NULL;

	pthread_mutex_lock(&hp->chan_lock);
	for (struct grant **pp = &hp->grants; *pp;) {
		struct grant *g = *pp;

		if (now < g->expires_ms && grant_alive(g)) {
			pp = &g->next;
			continue;
		}
		*pp = g->next;
		g->next = ended;
		ended = g;
	}
	pthread_mutex_unlock(&hp->chan_lock);
	while (ended) {
		struct grant *g = ended;

		ended = g->next;
		RECORD(hp, "http", "{s:I,s:i,s:s,s:s,s:I}", "grant", (json_int_t)g->id, "pid",
		       (int)g->pid, "outcome", "grant ended", "reason",
		       now >= g->expires_ms ? "its time is up" : "the approved process exited",
		       "uses", (json_int_t)g->uses);
		free(g);
	}
}

/* Every process (thread group) one of whose tasks holds socket inode ino. */
static int socket_holders(uint64_t ino, pid_t *out, int cap)
{
	char want[64], p[320], l[64];
	DIR *proc = opendir("/proc");
	struct dirent *de;
	int n = 0;

	if (!proc)
		return -errno;
	snprintf(want, sizeof(want), "socket:[%llu]", (unsigned long long)ino);
	while ((de = readdir(proc))) {
		pid_t pid = (pid_t)strtol(de->d_name, NULL, 10);
		DIR *tasks;
		struct dirent *te;
		bool found = false;

		if (pid <= 0 || pid == getpid())
			continue;
		snprintf(p, sizeof(p), "/proc/%d/task", (int)pid);
		tasks = opendir(p);
		while (tasks && !found && (te = readdir(tasks))) {
			DIR *fds;
			struct dirent *fe;

			if (te->d_name[0] == '.')
				continue;
			snprintf(p, sizeof(p), "/proc/%d/task/%s/fd", (int)pid, te->d_name);
			fds = opendir(p);
			while (fds && !found && (fe = readdir(fds))) {
				ssize_t k;

				if (fe->d_name[0] == '.')
					continue;
				k = readlinkat(dirfd(fds), fe->d_name, l, sizeof(l) - 1);
				if (k > 0) {
					l[k] = '\0';
					found = !strcmp(l, want);
				}
			}
			if (fds)
				closedir(fds);
		}
		if (tasks)
			closedir(tasks);
		if (found) {
			if (n == cap) {
				n = -E2BIG;
				break;
			}
			out[n++] = pid;
		}
	}
	closedir(proc);
	return n;
}

/* Is pid the process (root, start) or one of its descendants? */
static bool descends(pid_t pid, pid_t root, unsigned long long start)
{
	for (int depth = 0; pid > 1 && depth < 256; depth++) {
		pid_t pp = 0;
		unsigned long long st;

		if (proc_stat(pid, &pp, &st) < 0)
			return false;
		if (pid == root)
			return st == start;
		pid = pp;
	}
	return false;
}

/*
 * May this client reach host:port on a grant?  0 and *gid: admitted;
 * -ENOENT: no live grant names host:port; -EACCES: one does, and the
 * client is not its process (why says).
 */
static int grant_admits(struct conn *c, const char *host, uint16_t port, uint64_t *gid,
			char *why, size_t wlen)
{
	struct hp *hp = c->hp;
	struct { uint64_t id; pid_t pid; unsigned long long start; bool ssh; } cand[8];
	pid_t holders[HOLDERS_MAX];
	int n_cand = 0, n_hold;

	grants_sweep(hp);
	pthread_mutex_lock(&hp->chan_lock);
	for (struct grant *g = hp->grants; g && n_cand < (int)ARRAY_SIZE(cand); g = g->next)
		for (size_t i = 0; i < g->n; i++)
			if (g->d[i].port == port && !strcasecmp(g->d[i].host, host)) {
				cand[n_cand].id = g->id;
				cand[n_cand].pid = g->pid;
				cand[n_cand].ssh = g->d[i].ssh;
				cand[n_cand++].start = g->start;
				break;
			}
	pthread_mutex_unlock(&hp->chan_lock);
	if (!n_cand)
		return -ENOENT;
	n_hold = c->inode ? socket_holders(c->inode, holders, HOLDERS_MAX) : -ENOENT;
	if (n_hold <= 0) {
		snprintf(why, wlen, "a push to %s:%u is approved, and no process could be found "
			 "holding this client's socket", host, port);
		return -EACCES;
	}
	for (int k = 0; k < n_cand; k++) {
		int h;

		for (h = 0; h < n_hold && descends(holders[h], cand[k].pid, cand[k].start); h++)
			;
		if (h == n_hold) {
			*gid = cand[k].id;
			c->grant_ssh = cand[k].ssh;
			pthread_mutex_lock(&hp->chan_lock);
			for (struct grant *g = hp->grants; g; g = g->next)
				if (g->id == cand[k].id)
					g->uses++;
			pthread_mutex_unlock(&hp->chan_lock);
			return 0;
		}
		snprintf(why, wlen, "a push to %s:%u is approved for process %d and its "
			 "descendants; this client's socket is held by process %d", host, port,
			 (int)cand[k].pid, (int)holders[h]);
	}
	return -EACCES;
}

/*
 * The session's ssh-agent relay (ssh_agent.h): may the client whose end of
 * the connection is Unix socket PEER have a signature?  Only when every
 * process holding it is the approved process of a live grant for an ssh
 * remote, or one of its descendants: the rule grant_admits applies to a
 * CONNECT.
 */
static int agent_may_sign(void *ctx, uint64_t peer, uint64_t *gid, char *why, size_t wlen)
{
	struct hp *hp = ctx;
	struct { uint64_t id; pid_t pid; unsigned long long start; } cand[8];
	pid_t holders[HOLDERS_MAX];
	int n_cand = 0, n_hold;

	grants_sweep(hp);
	pthread_mutex_lock(&hp->chan_lock);
	for (struct grant *g = hp->grants; g && n_cand < (int)ARRAY_SIZE(cand); g = g->next)
		for (size_t i = 0; i < g->n; i++)
			if (g->d[i].ssh) {
				cand[n_cand].id = g->id;
				cand[n_cand].pid = g->pid;
				cand[n_cand++].start = g->start;
				break;
			}
	pthread_mutex_unlock(&hp->chan_lock);
	if (!n_cand) {
		snprintf(why, wlen, "no ssh push is approved now");
		return -ENOENT;
	}
	n_hold = peer ? socket_holders(peer, holders, HOLDERS_MAX) : -ENOENT;
	if (n_hold <= 0) {
		snprintf(why, wlen, "no process could be found holding the client's socket");
		return -EACCES;
	}
	for (int k = 0; k < n_cand; k++) {
		int h;

		for (h = 0; h < n_hold && descends(holders[h], cand[k].pid, cand[k].start); h++)
			;
		if (h == n_hold) {
			*gid = cand[k].id;
			return 0;
		}
		snprintf(why, wlen, "an ssh push is approved for process %d and its descendants; "
			 "the client's socket is held by process %d", (int)cand[k].pid,
			 (int)holders[h]);
	}
	return -EACCES;
}

static void agent_record(void *ctx, json_t *fields)
{
	struct hp *hp = ctx;

	if (recording(hp))
		record(hp, "http", fields);     /* the broker's own type (helper.c) */
	else
		json_decref(fields);
}

/*
 * An escalated request waits, this connection's thread blocked, until the
 * supervisor's decision comes back (the policy's approval timeout is the
 * supervisor's to apply).  A channel that closes decides "no" for all.
 */
static bool wait_for_human(struct conn *c, json_t *event, const char *rule, const char *reason,
			   char *why, size_t wlen)
{
	struct hp *hp = c->hp;
	json_t *args = json_object_get(event, "arguments");
	struct waiter w = { .hold = atomic_fetch_add(&hp->next_hold, 1) + 1 };
	char summary[600];
	bool allow;

	snprintf(summary, sizeof(summary), "http.request %s %s:%d%s",
		 json_string_value(json_object_get(args, "method")) ?: "?",
		 json_string_value(json_object_get(args, "host")) ?: "?",
		 (int)json_integer_value(json_object_get(args, "port")),
		 json_string_value(json_object_get(args, "path")) ?: "");
	pthread_cond_init(&w.cond, NULL);
	pthread_mutex_lock(&hp->chan_lock);
	w.next = hp->waiters;
	hp->waiters = &w;
	pthread_mutex_unlock(&hp->chan_lock);
	if (chan_send(hp, json_pack("{s:s,s:I,s:O,s:s,s:s?,s:s}", "op", "escalate", "hold",
				    (json_int_t)w.hold, "event", event, "summary", summary, "rule",
				    rule, "reason", reason)) < 0) {
		w.decided = true;
		snprintf(w.why, sizeof(w.why), "the approval channel is gone");
	}
	pthread_mutex_lock(&hp->chan_lock);
	while (!w.decided && !hp->chan_gone)
		pthread_cond_wait(&w.cond, &hp->chan_lock);
	for (struct waiter **pp = &hp->waiters; *pp; pp = &(*pp)->next)
		if (*pp == &w) {
			*pp = w.next;
			break;
		}
	allow = w.decided && w.allow;
	if (!w.decided)
		snprintf(w.why, sizeof(w.why), "the approval channel is gone");
	pthread_mutex_unlock(&hp->chan_lock);
	pthread_cond_destroy(&w.cond);
	if (!allow)
		snprintf(why, wlen, "not approved: %s", w.why);
	return allow;
}

/* Decisions from the supervisor, until it goes (then the session is over: so is this). */
static void *chan_reader(void *arg)
{
	struct hp *hp = arg;
	struct linebuf lb;
	char buf[4096], *line;
	size_t len;

	linebuf_init(&lb, 1u << 16);
	for (;;) {
		ssize_t n = read(hp->chan_fd, buf, sizeof(buf));
		int r;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || linebuf_push(&lb, buf, (size_t)n) < 0)
			break;
		while ((r = linebuf_next(&lb, &line, &len)) > 0) {
			json_t *m = json_loadb(line, len, 0, NULL);
			json_t *hold = json_object_get(m, "hold");

			if (m && !strcmp(json_string_value(json_object_get(m, "op")) ?: "", "grant")) {
				pthread_mutex_lock(&hp->chan_lock);
				grant_add(hp, m);
				pthread_mutex_unlock(&hp->chan_lock);
			} else if (m && json_is_integer(hold) &&
			    !strcmp(json_string_value(json_object_get(m, "op")) ?: "", "decision")) {
				pthread_mutex_lock(&hp->chan_lock);
				for (struct waiter *w = hp->waiters; w; w = w->next)
					if (w->hold == (uint64_t)json_integer_value(hold)) {
						w->decided = true;
						w->allow = json_is_true(json_object_get(m, "allow"));
						snprintf(w->why, sizeof(w->why), "%s",
							 json_string_value(json_object_get(m, "why")) ?: "");
						pthread_cond_signal(&w->cond);
					}
				pthread_mutex_unlock(&hp->chan_lock);
			}
			json_decref(m);
		}
		if (r < 0)
			break;
	}
	linebuf_free(&lb);
	pthread_mutex_lock(&hp->chan_lock);
	hp->chan_gone = true;
	for (struct waiter *w = hp->waiters; w; w = w->next)
		pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&hp->chan_lock);
	/* The supervisor is gone, and with it the session: stop serving it. */
	raise(SIGTERM);
	return NULL;
}

/*
 * The policy's word on one request: a CONNECT, an absolute-form request, or
 * a request inside a credential tunnel (with its path), lifted into
 * http.request and recorded.  true: go on; false: refused, why says so.
 */
static bool judge(struct conn *c, json_t *event, const char *host, uint16_t port,
		  struct pol_result *res, char *why, size_t wlen)
{
	struct pol_request pr = { .op = POL_OP_CONNECT, .host = host, .port = port,
				  .ev_server = "http", .ev_tool = "request",
				  .ev_args = json_object_get(event, "arguments") };
	const char *dec, *rule;

	bool hold;

	/* Each judged request is one of the session's steps, a refused one too (steps.h). */
	steps_eval(&c->hp->steps, c->hp->pol, &pr, res);
	/*
	 * An approved push's destination (grants, above): only where the
	 * policy refuses by default or would ask, never over a rule or an
	 * invariant that refuses, and only for the request that opens a
	 * connection, not one inside a credential tunnel (c->inner).
	 * hp->grants is a hint here; grant_admits decides under the lock.
	 */
	if (!c->inner && c->hp->grants &&
	    (res->decision == CORDON_ESCALATE ||
	     (res->decision == CORDON_DENY && !res->rule && !res->invariant))) {
		char gwhy[320] = "";
		uint64_t gid = 0;
		int g = grant_admits(c, host, port, &gid, gwhy, sizeof(gwhy));

		if (g == 0) {
			c->grant = gid;
			RECORD(c->hp, "decision", "{s:s,s:I,s:O,s:s,s:I,s:s,s:s,s:s*}", "raw",
			       "http-proxy", "conn", (json_int_t)c->id, "event", event, "decision",
			       "allow", "grant", (json_int_t)gid, "reason",
			       "the destination of a git push a human approved, for that process",
			       "outcome", "allowed by grant", "protocol",
			       c->grant_ssh ? "ssh" : NULL);
			return true;
		}
		if (g == -EACCES) {
			RECORD(c->hp, "decision", "{s:s,s:I,s:O,s:s,s:s,s:s}", "raw", "http-proxy",
			       "conn", (json_int_t)c->id, "event", event, "decision", "deny",
			       "reason", gwhy, "outcome", "refused: not the approved process");
			snprintf(why, wlen, "%s", gwhy);
			return false;
		}
	}
	rule = res->rule ? res->rule->name : res->invariant;
	dec = res->decision == CORDON_ALLOW ? "allow" :
	      res->decision == CORDON_ESCALATE ? "escalate" : "deny";
	hold = res->decision == CORDON_ESCALATE && c->hp->chan_fd >= 0;
	RECORD(c->hp, "decision", "{s:s,s:I,s:O,s:s,s:s?,s:s,s:s}", "raw", "http-proxy",
	       "conn", (json_int_t)c->id, "event", event, "decision", dec,
	       "rule", rule, "reason", res->reason, "outcome",
	       res->decision == CORDON_ALLOW ? "allowed" :
	       hold ? "held for approval" :
	       res->decision == CORDON_ESCALATE ?
	       "refused: no approval channel" : "refused");
	/*
	 * A log that can no longer keep records (a full disk: AUDIT_RESERVE in
	 * audit.c) allows nothing more, and the proxy stops (record()); its
	 * "audit-down" record follows the last decision it kept.
	 */
	if (c->hp->audit && audit_down(c->hp->audit, NULL)) {
		snprintf(why, wlen, "the audit log cannot keep its records: nothing is allowed");
		return false;
	}
	if (res->decision == CORDON_ALLOW)
		return true;
	if (hold)
		return wait_for_human(c, event, rule, res->reason, why, wlen);
	snprintf(why, wlen, "%s%s", res->decision == CORDON_ESCALATE ?
		 "needs a human's approval, and this proxy has none: " : "", res->reason);
	return false;
}

/* --- inside a credential tunnel ---------------------------------------------------- */

/* Buffered reading from one TLS side. */
struct tls_in {
	SSL *ssl;
	int fd;
	char *buf;
	size_t len;
	size_t cap;
	uint64_t timeo_ms;              /* the socket's SO_RCVTIMEO now */
	uint64_t idle_ms;               /* the proxy's idle time */
};

/*
 * Time limits on a tunnel's socket, both ways, before its TLS handshake:
 * a peer that stalls mid-handshake, mid-record or stops reading costs this
 * connection's thread at most the idle time per read or write, never for
 * ever.  (A peer that dribbles a byte just inside each limit can stretch
 * one record; it ties up only its own session's broker.)
 */
static int tin_limit(struct tls_in *t, uint64_t ms)
{
	struct timeval tv = { .tv_sec = (time_t)(ms / 1000), .tv_usec = (suseconds_t)(ms % 1000) * 1000 };

	if (setsockopt(t->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
		return -errno;
	t->timeo_ms = ms;
	return 0;
}

static int sock_limits(struct tls_in *t, int idle_ms)
{
	struct timeval tv = { .tv_sec = idle_ms / 1000, .tv_usec = (idle_ms % 1000) * 1000 };

	if (setsockopt(t->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0)
		return -errno;
	t->idle_ms = (uint64_t)idle_ms;
	return tin_limit(t, t->idle_ms);
}

/*
 * More bytes (>0), 0 at the end of the stream, -ETIMEDOUT past the
 * deadline (0: the idle time from now), <0 errors.  The wait is the
 * socket's receive timeout, not a poll(2) before each read: one system
 * call per fill on a request/response exchange instead of two.  The
 * timeout is set only when it changes (the idle time, always the same,
 * stays; a head's deadline is re-set for each partial read).
 */
static ssize_t tin_fill(struct tls_in *t, size_t cap, uint64_t deadline)
{
	uint64_t ms = t->idle_ms, now;
	int n, r;

	if (cap > t->cap)
		cap = t->cap;
	if (t->len >= cap)
		return -ENOBUFS;
	if (deadline) {
		now = mono_ms();
		if (deadline <= now)
			return -ETIMEDOUT;
		ms = deadline - now;
	}
	if (ms != t->timeo_ms && (r = tin_limit(t, ms)) < 0)
		return r;
	n = SSL_read(t->ssl, t->buf + t->len, (int)(cap - t->len));
	if (n <= 0) {
		r = SSL_get_error(t->ssl, n);
		ERR_clear_error();
		/* The receive timeout: OpenSSL sees EAGAIN as a read to retry. */
		if (r == SSL_ERROR_WANT_READ || (r == SSL_ERROR_SYSCALL && errno == EAGAIN))
			return -ETIMEDOUT;
		return 0;
	}
	t->len += (size_t)n;
	return n;
}

static void tin_consume(struct tls_in *t, size_t n)
{
	memmove(t->buf, t->buf + n, t->len - n);
	t->len -= n;
}

static int tls_send(SSL *ssl, const char *b, size_t n)
{
	while (n) {
		int w = SSL_write(ssl, b, (int)(n > INT_MAX ? INT_MAX : n));

		if (w <= 0) {
			ERR_clear_error();
			return -EPIPE;
		}
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * Output toward one TLS peer, coalesced: a head and the body that follows
 * it go out as one record and one write(2) rather than several, which on a
 * request/response exchange halves the writes and the wake-ups of the peer.
 * Whoever holds bytes here must flush before it blocks on a read (else a
 * streamed response would stall in the buffer) and at the end of each
 * message.  Flushed bytes are wiped: the upstream's carries the secret.
 */
struct tls_out {
	SSL *ssl;
	char *buf;
	size_t len, cap;
};

static int tout_flush(struct tls_out *o)
{
	int r = o->len ? tls_send(o->ssl, o->buf, o->len) : 0;

	explicit_bzero(o->buf, o->len);
	o->len = 0;
	return r;
}

static int tout_write(struct tls_out *o, const char *b, size_t n)
{
	if (o->len + n > o->cap && tout_flush(o) < 0)
		return -EPIPE;
	if (n > o->cap)
		return tls_send(o->ssl, b, n);
	memcpy(o->buf + o->len, b, n);
	o->len += n;
	return 0;
}

static void tls_reply(SSL *ssl, int code, const char *why)
{
	char b[1024];

	(void)tls_send(ssl, b, format_reply(b, sizeof(b), code, why));
}

/*
 * A refusal inside a credential tunnel, where the client is an LLM SDK:
 * the provider's own error JSON (llm_error_json), so that the agent's CLI
 * shows what was refused and why instead of a parse error or nothing.
 * The status decides whether the CLI retries: 400 is retried by none of
 * them (Codex retries 403 and 422 five times, "Reconnecting... 5/5",
 * before it says anything), so a request that will never pass, a tool the
 * policy refuses, answers 400; an endpoint or sentinel refusal keeps 403.
 */
static void tls_reply_api(SSL *ssl, const char *path, int code, const char *why)
{
	char b[1400], j[1100];
	int n = llm_error_json(path, code, why, j, sizeof(j));
	int m;

	if (n < 0) {
		tls_reply(ssl, code, why);
		return;
	}
	m = snprintf(b, sizeof(b), "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
		     "Connection: close\r\nContent-Length: %d\r\n\r\n%s", code, status_text(code),
		     n, j);
	if (m > 0 && (size_t)m < sizeof(b))
		(void)tls_send(ssl, b, (size_t)m);
}

/* One credential tunnel's state. */
struct ctun {
	struct conn *c;
	int ci;                         /* the credential */
	struct tls_in cl, up;           /* the agent's side, the upstream's */
	struct tls_out to_cl, to_up;    /* what goes to each, coalesced */
	struct sscrub sc;               /* the secrets, masked in responses; one stream each */
	struct http_request *rq;
	struct http_response rs;
	char *out;                      /* scrubbed bytes and chunk framing */
	size_t out_cap;
	uint64_t up_bytes, down_bytes;
	struct llm_usage usage;
	bool usage_estimated;           /* usage unread or cut short: charge by bytes */
	char *jsmall;                   /* a small request body being judged (JUDGE_SMALL) */
	char why[640];
};

/* (Re)open the upstream: TCP by the broker's rules, then TLS verified for the host. */
static int ctun_upstream(struct ctun *t)
{
	struct conn *c = t->c;
	int fd;

	if (t->up.ssl) {
		SSL_free(t->up.ssl);
		t->up.ssl = NULL;
	}
	if (c->up < 0 && c->up_err) {
		/* Not reached at CONNECT: said to this request; the next one tries again. */
		snprintf(t->why, sizeof(t->why), "%s", c->up_why);
		fd = c->up_err;
		c->up_err = 0;
		return fd;
	}
	if (c->up < 0) {
		fd = open_credential_upstream(c, (size_t)t->ci, t->why, sizeof(t->why));
		if (fd < 0)
			return fd;
		c->up = fd;
	}
	t->up.fd = c->up;
	t->up.len = 0;
	if (sock_limits(&t->up, c->hp->idle_timeout_ms) < 0) {
		snprintf(t->why, sizeof(t->why), "cannot set the upstream socket's time limits");
		return -EPROTO;
	}
	t->up.ssl = creds_connect(c->hp->creds, (size_t)t->ci, c->req.host, c->up, t->why, sizeof(t->why));
	t->to_up.ssl = t->up.ssl;
	explicit_bzero(t->to_up.buf, t->to_up.len);
	t->to_up.len = 0;
	return t->up.ssl ? 0 : -EPROTO;
}

/* The request's body as the client framed it, and nothing after it. */
static int ctun_request_body(struct ctun *t)
{
	struct tls_in *cl = &t->cl;

	if (t->rq->chunked) {
		struct http_chunked ch;

		http_chunked_init(&ch);
		while (!ch.done) {
			ssize_t k;

			if (!cl->len && (tout_flush(&t->to_up) < 0 ||
					 tin_fill(cl, cl->cap, 0) <= 0))
				return -EPIPE;
			k = http_chunked_scan(&ch, cl->buf, cl->len);
			if (k < 0)
				return -EBADMSG;
			if (!spend_bytes(t->c->hp, (uint64_t)k, t->why, sizeof(t->why)) ||
			    tout_write(&t->to_up, cl->buf, (size_t)k) < 0)
				return -EPIPE;
			t->up_bytes += (uint64_t)k;
			tin_consume(cl, (size_t)k);
		}
		return tout_flush(&t->to_up);
	}
	for (uint64_t left = t->rq->content_length > 0 ? (uint64_t)t->rq->content_length : 0; left;) {
		size_t k;

		if (!cl->len && (tout_flush(&t->to_up) < 0 ||
				 tin_fill(cl, cl->cap, 0) <= 0))
			return -EPIPE;
		k = cl->len < left ? cl->len : (size_t)left;
		if (!spend_bytes(t->c->hp, k, t->why, sizeof(t->why)) ||
		    tout_write(&t->to_up, cl->buf, k) < 0)
			return -EPIPE;
		t->up_bytes += k;
		left -= k;
		tin_consume(cl, k);
	}
	return tout_flush(&t->to_up);
}

/*
 * Bodies read whole and judged before any of it goes upstream (llm_tools.h):
 * every request body to a credential host but a multipart upload (a file,
 * which no API reads as JSON).  The content type is not trusted further:
 * a server may parse a text/plain body as JSON all the same.  Judged in
 * memory, so bounded: 32 MiB, the largest request the LLM APIs take.
 */
#define JUDGED_BODY_MAX (32u << 20)
/*
 * And all of them at once, in one proxy: the proxy runs outside the
 * session's memory budget, so 256 tunnels each holding 32 MiB would have
 * been 8 GiB of the host's memory the agent could take.  Past this, a
 * request is refused with 503 until others are through.  The buffers are
 * not locked in memory (mlockall is for the secrets, and these are
 * bodies the agent sent).
 */
#define JUDGING_MAX (64u << 20)

/* Memory for a large body being judged: a mapping of its own, unlocked. */
static char *judge_buf(size_t cap)
{
	void *p = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	(void)munlock(p, cap);
	return p;
}

/* Hold n more bytes of the proxy's judging allowance: false when it is spent. */
static bool judging_take(struct hp *hp, size_t n)
{
	unsigned long long now = atomic_load(&hp->judging);

	do {
		if (now + n > JUDGING_MAX)
			return false;
	} while (!atomic_compare_exchange_weak(&hp->judging, &now, now + n));
	return true;
}

static bool body_judged(const struct http_request *rq)
{
	const struct http_header *ct = http_header_get(rq->headers, rq->n_headers, "content-type");

	if (!rq->chunked && rq->content_length <= 0)
		return false;
	return !(ct && ct->value_len >= 10 && !strncasecmp(ct->value, "multipart/", 10));
}

/*
 * A body being judged: in the tunnel's own small buffer while it fits
 * (most requests: no system call for it), past that in a mapping of its
 * own, unlocked and counted against the proxy's allowance.
 */
#define JUDGE_SMALL (64u << 10)

struct jbody {
	char *b;
	size_t n, cap;
	bool mapped;
};

/* The body's memory back, wiped (it holds what the agent sent). */
static void judge_free(struct hp *hp, struct jbody *j)
{
	if (!j->b)
		return;
	explicit_bzero(j->b, j->n);
	if (j->mapped) {
		(void)munmap(j->b, j->cap);
		atomic_fetch_sub(&hp->judging, j->cap);
	}
	*j = (struct jbody){ 0 };
}

/* Room for n bytes in all: 0, -E2BIG, -EBUSY (allowance spent), -ENOMEM. */
static int judge_room(struct ctun *t, struct jbody *j, size_t n)
{
	struct hp *hp = t->c->hp;
	size_t nc = j->cap ? j->cap : JUDGE_SMALL;
	char *nb;

	if (n > JUDGED_BODY_MAX)
		return -E2BIG;
	if (n <= j->cap)
		return 0;
	if (!j->b && n <= JUDGE_SMALL) {
		if (!t->jsmall && !(t->jsmall = malloc(JUDGE_SMALL)))
			return -ENOMEM;
		j->b = t->jsmall;
		j->cap = JUDGE_SMALL;
		return 0;
	}
	while (nc < n)
		nc *= 2;
	if (!judging_take(hp, nc))
		return -EBUSY;
	nb = judge_buf(nc);
	if (!nb) {
		atomic_fetch_sub(&hp->judging, nc);
		return -ENOMEM;
	}
	memcpy(nb, j->b, j->n);
	explicit_bzero(j->b, j->n);
	if (j->mapped) {
		(void)munmap(j->b, j->cap);
		atomic_fetch_sub(&hp->judging, j->cap);
	}
	j->b = nb;
	j->cap = nc;
	j->mapped = true;
	return 0;
}

/*
 * The whole body into J (chunked framing taken off; judge_free after): 0,
 * or -EPIPE (the client went, or no memory), -EBADMSG (bad framing),
 * -E2BIG (past the bound), -EBUSY (the proxy's allowance for bodies being
 * judged is spent).
 */
static int ctun_read_body(struct ctun *t, struct jbody *j)
{
	struct tls_in *cl = &t->cl;
	struct http_chunked ch;
	uint64_t left = t->rq->chunked ? 0 : (uint64_t)t->rq->content_length;
	int r = 0;

	if (left > JUDGED_BODY_MAX)
		return -E2BIG;
	http_chunked_init(&ch);
	for (;;) {
		size_t k = 0;

		if (t->rq->chunked ? ch.done : !left)
			break;
		if (!cl->len && tin_fill(cl, cl->cap, 0) <= 0) {
			r = -EPIPE;
			break;
		}
		if (t->rq->chunked) {
			uint64_t data = http_chunked_data_left(&ch);

			if (!data) {    /* framing, a byte at a time */
				if (http_chunked_scan(&ch, cl->buf, 1) < 0) {
					r = -EBADMSG;
					break;
				}
				tin_consume(cl, 1);
				continue;
			}
			k = cl->len < data ? cl->len : (size_t)data;
			(void)http_chunked_scan(&ch, cl->buf, k);
		} else {
			k = cl->len < left ? cl->len : (size_t)left;
			left -= k;
		}
		if ((r = judge_room(t, j, j->n + k)) < 0)
			break;
		memcpy(j->b + j->n, cl->buf, k);
		j->n += k;
		tin_consume(cl, k);
	}
	if (r == -ENOMEM)
		r = -EPIPE;
	if (r < 0)
		judge_free(t->c->hp, j);
	return r;
}

/* A judged body upstream, framed as the head said (one chunk, then the last). */
static int ctun_send_body(struct ctun *t, const char *b, size_t n)
{
	char hdr[24];
	int h = 0;

	if (t->rq->chunked && n)
		h = snprintf(hdr, sizeof(hdr), "%zx\r\n", n);
	if (!spend_bytes(t->c->hp, (uint64_t)n + (uint64_t)h + (t->rq->chunked ? 7 : 0), t->why,
			 sizeof(t->why)))
		return -EPIPE;
	if ((h && tout_write(&t->to_up, hdr, (size_t)h) < 0) ||
	    (n && tout_write(&t->to_up, b, n) < 0) ||
	    (t->rq->chunked && tout_write(&t->to_up, n ? "\r\n0\r\n\r\n" : "0\r\n\r\n",
					   n ? 7 : 5) < 0))
		return -EPIPE;
	t->up_bytes += (uint64_t)n + (uint64_t)h + (t->rq->chunked ? 7 : 0);
	return tout_flush(&t->to_up);
}

/* Scrub n bytes of body data and send them, framed as a chunk if chunked. */
static int ctun_emit(struct ctun *t, struct sscrub *sc, struct llm_usage_parser *up,
		     const char *data, size_t n, bool chunked, bool last)
{
	size_t o = chunked ? 20 : 0, k = 0;
	char *p = t->out + o;
	ssize_t m = n ? sscrub_feed(sc, data, n, p, t->out_cap - o - 8, NULL) : 0;

	if (m >= 0)
		k = (size_t)m;
	if (m >= 0 && last)
		m = sscrub_flush(sc, p + k, t->out_cap - o - 8 - k, NULL);
	if (m < 0)
		return -EPIPE;  /* cannot happen with out_cap from SSCRUB_OUT: fail closed anyway */
	if (last)
		k += (size_t)m;
	if (up && k)
		llm_usage_feed(up, p, k);
	if (chunked && k) {
		char hdr[20];
		int h = snprintf(hdr, sizeof(hdr), "%zx\r\n", k);

		p -= h;
		memcpy(p, hdr, (size_t)h);
		k += (size_t)h;
		p[k++] = '\r';
		p[k++] = '\n';
	}
	if (chunked && last) {
		memcpy(p + k, "0\r\n\r\n", 5);
		k += 5;
	}
	if (!k)
		return 0;
	if (!spend_bytes(t->c->hp, k, t->why, sizeof(t->why))) {
		/* Nothing of the response sent yet: the agent gets a status and why. */
		if (!t->down_bytes)
			tls_reply(t->cl.ssl, 403, t->why);
		return -EPIPE;
	}
	if (tout_write(&t->to_cl, p, k) < 0)
		return -EPIPE;
	t->down_bytes += k;
	return 0;
}

/* More of the response; what is ready for the client goes first (streaming). */
static ssize_t ctun_fill_up(struct ctun *t, size_t cap)
{
	if (tout_flush(&t->to_cl) < 0)
		return -EPIPE;
	return tin_fill(&t->up, cap, 0);
}

/*
 * The response, streamed: the head and every body byte pass the scrubber
 * (same-length masks, so Content-Length holds; a chunked body is re-framed
 * around the scrubbed data, trailers dropped) as they arrive.  1: the
 * client connection may carry another request; 0: close it; <0: broken.
 */
static int ctun_response(struct ctun *t)
{
	struct tls_in *up = &t->up;
	struct sscrub *sc = &t->sc;
	struct llm_usage_parser usage, *upp = NULL;
	const struct http_header *ct;
	int r, mode;
	size_t head;
	bool again = true;

	for (;;) {
		r = up->len ? http_parse_response(up->buf, up->len, &t->rs, t->why, sizeof(t->why)) : 0;
		if (r < 0)
			goto bad;
		if (r == 0) {
			ssize_t n = ctun_fill_up(t, HTTP_MAX_HEAD);

			if (n <= 0) {
				snprintf(t->why, sizeof(t->why), "the upstream %s",
					 n == -ENOBUFS ? "sent a head too large" :
					 n == -ETIMEDOUT ? "did not answer in time" : "closed the connection");
				goto bad;
			}
			continue;
		}
		head = (size_t)r;
		if (t->rs.status == 101) {
			snprintf(t->why, sizeof(t->why), "the upstream switched protocols");
			goto bad;
		}
		if (t->rs.status >= 200)
			break;
		/* 1xx: passed on, the real answer follows. */
		if (ctun_emit(t, sc, NULL, up->buf, head, false, true) < 0)
			goto broken;
		tin_consume(up, head);
	}
	/*
	 * The body must reach the scrubber as the bytes the client will read.
	 * Attack: the upstream (or whoever answers as it) echoes the real key
	 * in a compressed body, labelled by a second Content-Encoding field or
	 * by "Transfer-Encoding: gzip, chunked"; scrubbed as raw bytes nothing
	 * matches, and the agent decompresses it itself.  Identity is asked
	 * for upstream; a server that ignores that is refused.  What this
	 * cannot close: a key the upstream re-encodes in a form the scrubber
	 * does not list (base64); no upstream the policy trusts with the key
	 * has reason to.  The reason is not the upstream's words: an error
	 * the proxy writes is not scrubbed.
	 */
	if (!http_response_identity(&t->rs)) {
		snprintf(t->why, sizeof(t->why), "the upstream sent an encoded response (a content or "
			 "transfer coding other than identity and chunked), which cannot be scrubbed");
		goto bad;
	}
	mode = http_response_body_mode(&t->rs, t->rq->method);
	ct = http_header_get(t->rs.headers, t->rs.n_headers, "content-type");
	if (ct && ct->value_len >= 17 && !strncasecmp(ct->value, "text/event-stream", 17)) {
		llm_usage_init(&usage, true, 1u << 20);
		upp = &usage;
	} else if (ct && ct->value_len >= 16 && !strncasecmp(ct->value, "application/json", 16)) {
		llm_usage_init(&usage, false, 1u << 20);
		upp = &usage;
	}
	if (t->rs.close || mode == HTTP_BODY_CLOSE)
		again = false;
	if (ctun_emit(t, sc, NULL, up->buf, head, false, true) < 0)
		goto broken;
	tin_consume(up, head);
	if (mode == HTTP_BODY_LENGTH || mode == HTTP_BODY_CLOSE) {
		uint64_t left = mode == HTTP_BODY_LENGTH ? (uint64_t)t->rs.content_length : UINT64_MAX;

		while (left) {
			size_t k;

			if (!up->len) {
				ssize_t n = ctun_fill_up(t, up->cap);

				if (n <= 0 && mode == HTTP_BODY_CLOSE)
					break;
				if (n <= 0)
					goto broken;
			}
			k = up->len < left ? up->len : (size_t)left;
			if (k > RELAY_BUF)
				k = RELAY_BUF;
			if (ctun_emit(t, sc, upp, up->buf, k, false, false) < 0)
				goto broken;
			left -= k;
			tin_consume(up, k);
		}
		if (ctun_emit(t, sc, upp, NULL, 0, false, true) < 0)
			goto broken;
	} else if (mode == HTTP_BODY_CHUNKED) {
		struct http_chunked ch;

		http_chunked_init(&ch);
		while (!ch.done) {
			uint64_t data;

			if (!up->len && ctun_fill_up(t, up->cap) <= 0)
				goto broken;
			data = http_chunked_data_left(&ch);
			if (data) {
				size_t k = up->len < data ? up->len : (size_t)data;

				if (k > RELAY_BUF)
					k = RELAY_BUF;
				(void)http_chunked_scan(&ch, up->buf, k);
				if (ctun_emit(t, sc, upp, up->buf, k, true, false) < 0)
					goto broken;
				tin_consume(up, k);
				continue;
			}
			/* Framing, a byte at a time (a few bytes per chunk). */
			if (http_chunked_scan(&ch, up->buf, 1) < 0) {
				snprintf(t->why, sizeof(t->why), "the upstream's chunked body is malformed");
				goto broken;
			}
			tin_consume(up, 1);
		}
		if (ctun_emit(t, sc, upp, NULL, 0, true, true) < 0)
			goto broken;
	}
	if (tout_flush(&t->to_cl) < 0)
		goto broken;
	if (upp) {
		llm_usage_finish(upp, &t->usage);
		/* A stream that never said its usage (OpenAI's, unless asked), or said it in part. */
		t->usage_estimated = t->usage.truncated || (upp->sse && !t->usage.seen);
		llm_usage_free(upp);
	}
	return again ? 1 : 0;
bad:
	if (tout_flush(&t->to_cl) == 0)
		tls_reply(t->cl.ssl, 502, t->why);
broken:
	if (upp) {
		/* Cut mid-answer (the agent closed early): what was read, and an estimate. */
		llm_usage_finish(upp, &t->usage);
		llm_usage_free(upp);
		t->usage_estimated = true;
	}
	return -EPIPE;
}

/* One request inside the tunnel: 1 keep going, 0 or <0 close. */
static int ctun_request(struct ctun *t)
{
	struct conn *c = t->c;
	struct hp *hp = c->hp;
	struct pol_result res;
	uint64_t t0, deadline = 0;
	json_t *event;
	char upstream_head[HTTP_MAX_HEAD + 4096];
	struct jbody jb = { 0 };
	uint64_t tokens;
	bool judged;
	int r, hl, built;

	/* The head: the first byte may take the idle time, the rest the head timeout. */
	for (;;) {
		ssize_t n;

		r = t->cl.len ? http_parse_request(t->cl.buf, t->cl.len, t->rq, t->why,
						   sizeof(t->why)) : 0;
		if (r > 0)
			break;
		if (r < 0) {
			tls_reply(t->cl.ssl, -r, t->why);
			return r;
		}
		if (t->cl.len && !deadline)
			deadline = mono_ms() + (uint64_t)hp->head_timeout_ms;
		n = tin_fill(&t->cl, HTTP_MAX_HEAD, deadline);
		if (n == -ENOBUFS)
			tls_reply(t->cl.ssl, 431, "request head too large");
		else if (n == -ETIMEDOUT && deadline)
			tls_reply(t->cl.ssl, 408, "the request head did not arrive in time");
		if (n <= 0)
			return 0;
	}
	t0 = mono_ms();
	event = pol_event_http(t->rq->method, c->req.host, c->req.port, t->rq->path);
	/*
	 * A WebSocket (Codex opens one to /v1/responses first) would carry
	 * its requests as frames this proxy does not read: their tools would
	 * reach the provider unjudged.  Refused, as 426, on which Codex falls
	 * back to HTTPS at once (a 403 it retries five times first).
	 */
	if (http_header_get(t->rq->headers, t->rq->n_headers, "upgrade")) {
		snprintf(t->why, sizeof(t->why), "the credential proxy relays HTTP requests, not a "
			 "protocol upgrade (a WebSocket's messages would reach the provider unjudged): "
			 "use HTTPS");
		RECORD(hp, "http", "{s:I,s:O,s:s,s:s}", "conn", (json_int_t)c->id, "event",
		       event, "outcome", "refused", "reason", t->why);
		tls_reply_api(t->cl.ssl, t->rq->path, 426, t->why);
		json_decref(event);
		return 0;
	}
	if (creds_check(hp->creds, (size_t)t->ci, t->rq, c->req.host, c->req.port, t->why,
			sizeof(t->why)) < 0 ||
	    !judge(c, event, c->req.host, c->req.port, &res, t->why, sizeof(t->why)) ||
	    spend_request(hp, t->why, sizeof(t->why)) < 0) {
		RECORD(hp, "http", "{s:I,s:O,s:s,s:s}", "conn", (json_int_t)c->id, "event",
		       event, "outcome", "refused", "reason", t->why);
		tls_reply_api(t->cl.ssl, t->rq->path, 403, t->why);
		json_decref(event);
		return 0;
	}
	t->why[0] = 0;  /* from here on: why the exchange broke, if it does */
	/*
	 * The only place the secret is written: into the upstream TLS stream,
	 * then wiped.  The head is built while the request's header fields
	 * still point at the bytes that were parsed and checked: only then is
	 * the head consumed.  Attack closed: consumed first, the buffer's
	 * memmove put the body where the fields pointed, so body bytes went
	 * upstream as header lines (a body carrying CR LF and a second request
	 * line smuggled any method and path to the credential host, the real
	 * key appended after it).
	 */
	built = creds_upstream_head(hp->creds, (size_t)t->ci, t->rq, upstream_head,
				    sizeof(upstream_head));
	judged = body_judged(t->rq);
	tin_consume(&t->cl, (size_t)r);
	hl = built;
	/*
	 * A body that may declare tools the provider runs is read whole and
	 * judged before the head or any of it goes upstream (llm_tools.h).
	 */
	if (hl >= 0 && judged) {
		const struct pol_credential *cr = creds_at(hp->creds, (size_t)t->ci,
							   &(const char *){ NULL });

		r = t->rq->expect_continue ? tls_send(t->cl.ssl, "HTTP/1.1 100 Continue\r\n\r\n", 25) : 0;
		r = r ?: ctun_read_body(t, &jb);
		if (r == -E2BIG || r == -EBADMSG || r == -EBUSY)
			snprintf(t->why, sizeof(t->why), "%s", r == -E2BIG ?
				 "the request body is larger than the credential proxy judges (32 MiB)" :
				 r == -EBUSY ? "the credential proxy is judging as many request bodies "
				 "as it holds at once: retry" :
				 "the request body's chunked framing is malformed");
		else if (r == 0)
			r = llm_tools_check(jb.b ? jb.b : "", jb.n, cr->server_tools, cr->n_server_tools,
					    t->why, sizeof(t->why));
		/* Refused with a reason (a client that went gets none). */
		if (r < 0 && r != -EPIPE) {
			RECORD(hp, "http", "{s:I,s:O,s:s,s:s}", "conn", (json_int_t)c->id, "event",
			       event, "outcome", "refused", "reason", t->why);
			tls_reply_api(t->cl.ssl, t->rq->path, r == -E2BIG ? 413 : r == -EBUSY ? 503 :
				      400, t->why);
		}
		if (r < 0) {
			explicit_bzero(upstream_head, (size_t)built + 1);
			judge_free(hp, &jb);
			json_decref(event);
			return 0;
		}
	}
	/* Only a request that passed everything reaches the provider, even for a handshake. */
	if (!t->up.ssl && (r = ctun_upstream(t)) < 0) {
		RECORD(hp, "http", "{s:I,s:O,s:s,s:s}", "conn", (json_int_t)c->id, "event",
		       event, "outcome", "refused", "reason", t->why);
		tls_reply(t->cl.ssl, r == -EACCES ? 403 : r == -ETIMEDOUT ? 504 : 502, t->why);
		explicit_bzero(upstream_head, built < 0 ? 0 : (size_t)built + 1);
		judge_free(hp, &jb);
		json_decref(event);
		return -EPIPE;
	}
	if (hl >= 0 && !spend_bytes(hp, (uint64_t)hl, t->why, sizeof(t->why))) {
		tls_reply(t->cl.ssl, 403, t->why);
		hl = -EDQUOT;
	}
	r = hl < 0 ? hl : tout_write(&t->to_up, upstream_head, (size_t)hl);
	/*
	 * What was built, and its NUL (a build that failed wiped the whole
	 * buffer itself): not all 20 KB on every request.
	 */
	explicit_bzero(upstream_head, built < 0 ? 0 : (size_t)built + 1);
	if (hl >= 0)
		t->up_bytes += (uint64_t)hl;
	if (judged) {
		r = r ?: ctun_send_body(t, jb.b, jb.n);
		judge_free(hp, &jb);
	} else {
		if (r == 0 && t->rq->expect_continue)
			r = tls_send(t->cl.ssl, "HTTP/1.1 100 Continue\r\n\r\n", 25);
		r = r ?: ctun_request_body(t);
	}
	memset(&t->usage, 0, sizeof(t->usage));
	t->usage_estimated = false;
	r = r ?: ctun_response(t);
	tokens = t->usage.input + t->usage.output;
	/*
	 * The llm_tokens budget must hold against an agent that hides usage:
	 * a streamed answer without it (OpenAI's chat completions stream
	 * leaves it out unless the request asks), an answer cut short by
	 * closing the tunnel before its last event, a body past what the
	 * parser keeps.  The provider bills those tokens all the same, so
	 * they are charged as the bytes both ways, heads included: a token is
	 * at least a byte of text, so this over-counts rather than under.
	 * What it cannot close: requests already in flight when the budget is
	 * spent are answered (the overshoot is at most one exchange per open
	 * tunnel).
	 */
	if (t->usage_estimated && t->up_bytes + t->down_bytes > tokens)
		tokens = t->up_bytes + t->down_bytes;
	if (tokens)
		atomic_fetch_add(&hp->spent_tokens, tokens);
	RECORD(hp, "http", "{s:I,s:O,s:s,s:s,s:i,s:I,s:I,s:{s:I,s:I,s:I,s:b},s:I,s:s*}", "conn",
	       (json_int_t)c->id, "event", event, "credential",
	       creds_at(hp->creds, (size_t)t->ci, &(const char *){ NULL })->name,
	       "outcome", r < 0 ? "broken" : "forwarded", "status",
	       r < 0 ? 0 : t->rs.status, "bytes_up", (json_int_t)t->up_bytes,
	       "bytes_down", (json_int_t)t->down_bytes, "tokens", "input",
	       (json_int_t)t->usage.input, "output", (json_int_t)t->usage.output,
	       "charged", (json_int_t)tokens, "estimated", t->usage_estimated,
	       "ms", (json_int_t)(mono_ms() - t0), "reason",
	       r < 0 && t->why[0] ? t->why : NULL);
	json_decref(event);
	c->up_bytes += t->up_bytes;
	c->down_bytes += t->down_bytes;
	t->up_bytes = t->down_bytes = 0;
	/* An upstream that closes (its response says so) ends the tunnel too. */
	return r < 0 ? r : r == 1 && !t->rq->close;
}

/*
 * CONNECT to a credential host: cordon is the TLS server (a leaf from the
 * session CA), reads each request, and is the TLS client upstream.
 */
static void do_credential(struct conn *c, size_t head, json_t *event, int ci)
{
	struct ctun t = { .c = c, .ci = ci };
	char sni[256] = "";
	int r = 0;

	if (read_hello(c, head, event, sni, sizeof(sni)) < 0)
		return;
	t.cl.cap = t.up.cap = HTTP_MAX_HEAD + RELAY_BUF;
	t.out_cap = SSCRUB_OUT(RELAY_BUF > HTTP_MAX_HEAD ? RELAY_BUF : HTTP_MAX_HEAD) + 64;
	t.cl.buf = malloc(t.cl.cap);
	t.up.buf = malloc(t.up.cap);
	t.out = malloc(t.out_cap);
	t.rq = malloc(sizeof(*t.rq));
	/* Room for a whole upstream head (HTTP_MAX_HEAD + what cordon adds) and some body. */
	t.to_cl.cap = t.to_up.cap = HTTP_MAX_HEAD + 4096 + RELAY_BUF;
	t.to_cl.buf = malloc(t.to_cl.cap);
	t.to_up.buf = malloc(t.to_up.cap);
	if (!t.cl.buf || !t.up.buf || !t.out || !t.rq || !t.to_cl.buf || !t.to_up.buf)
		goto out;
	/* Every secret is masked in every response, whichever credential the tunnel is for. */
	for (size_t i = 0; i < creds_n_secrets(c->hp->creds); i++) {
		size_t len;
		const char *v = creds_secret(c->hp->creds, i, &len);

		if (v && sscrub_add(&t.sc, v, len) < 0)
			goto out;
	}
	t.cl.fd = c->fd;
	if (sock_limits(&t.cl, c->hp->idle_timeout_ms) < 0)
		goto out;
	t.cl.ssl = creds_accept(c->hp->creds, c->req.host, c->fd, c->buf, c->len, t.why,
				sizeof(t.why));
	t.to_cl.ssl = t.cl.ssl;
	if (!t.cl.ssl) {
		RECORD(c->hp, "http", "{s:I,s:O,s:s,s:s}", "conn", (json_int_t)c->id, "event",
		       event, "outcome", "refused", "reason", t.why);
		goto out;
	}
	while ((r = ctun_request(&t)) == 1)
		;
	SSL_shutdown(t.cl.ssl);
	RECORD(c->hp, "http", "{s:I,s:O,s:s,s:s,s:I,s:I,s:I}", "conn", (json_int_t)c->id,
	       "event", event, "outcome", "tunnel closed", "sni", sni,
	       "bytes_up", (json_int_t)c->up_bytes, "bytes_down",
	       (json_int_t)c->down_bytes, "ms",
	       (json_int_t)(mono_ms() - c->t0_ms));
out:
	if (t.up.ssl)
		SSL_free(t.up.ssl);
	if (t.cl.ssl)
		SSL_free(t.cl.ssl);
	free(t.cl.buf);
	free(t.up.buf);
	free(t.out);
	free(t.rq);
	if (t.to_up.buf)
		explicit_bzero(t.to_up.buf, t.to_up.cap);
	free(t.to_up.buf);
	free(t.to_cl.buf);
	if (t.jsmall)
		explicit_bzero(t.jsmall, JUDGE_SMALL);
	free(t.jsmall);
	sscrub_free(&t.sc);
}

static void serve(struct conn *c)
{
	struct pol_result res;
	json_t *event;
	char why[640];
	int head = read_head(c), r, ci = -1;

	if (head <= 0)
		return;
	if (c->req.form == HTTP_ORIGIN_FORM || c->req.form == HTTP_ASTERISK_FORM) {
		reply(c, 400, "this is a proxy: send CONNECT host:port, or an absolute URL");
		return;
	}
	if (c->req.form == HTTP_ABSOLUTE_FORM && strcmp(c->req.scheme, "http")) {
		reply(c, 400, "https:// goes through CONNECT");
		return;
	}
	event = event_of(c);
	if (!judge(c, event, c->req.host, c->req.port, &res, why, sizeof(why))) {
		reply(c, 403, why);
		goto out;
	}
	c->inner = true;
	if (c->grant_ssh && c->req.form != HTTP_AUTHORITY_FORM) {
		snprintf(why, sizeof(why), "%s:%u is granted to an ssh push: CONNECT only",
			 c->req.host, c->req.port);
		reply(c, 403, why);
		goto out;
	}
	if (res.via == POL_VIA_CRED_PROXY) {
		/* A credential host is reached only with its sentinel, through TLS cordon terminates. */
		ci = creds_for_host(c->hp->creds, c->req.host);
		if (ci < 0 || c->req.form != HTTP_AUTHORITY_FORM) {
			snprintf(why, sizeof(why), ci < 0 ? "%s is reached through the credential proxy, "
				 "and no credential names it" : "%s is reached over TLS (CONNECT) only",
				 c->req.host);
			RECORD(c->hp, "http", "{s:I,s:O,s:s,s:s}", "conn", (json_int_t)c->id,
			       "event", event, "outcome", "refused", "reason",
			       why);
			reply(c, 403, why);
			goto out;
		}
	}
	if (spend_request(c->hp, why, sizeof(why)) < 0) {
		RECORD(c->hp, "http", "{s:I,s:O,s:s,s:s}", "conn", (json_int_t)c->id, "event",
		       event, "outcome", "refused", "reason", why);
		reply(c, 403, why);
		goto out;
	}
	why[0] = '\0';
	r = ci >= 0 ? open_credential_upstream(c, (size_t)ci, why, sizeof(why))
		    : open_upstream(c, why, sizeof(why));
	/*
	 * A credential host's upstream that cannot be reached (a name that
	 * does not resolve, a connection refused or timed out, an address
	 * the policy refuses): the CONNECT still succeeds and the reason is
	 * the answer to the first request inside the tunnel (cordon's own
	 * TLS; nothing goes upstream).  A CONNECT refused reaches an agent's
	 * HTTP client as a bare network failure ("fetch failed"), which the
	 * CLIs retry for minutes without showing why.
	 */
	if (r < 0 && ci >= 0) {
		RECORD(c->hp, "http", "{s:I,s:O,s:s,s:s}", "conn", (json_int_t)c->id, "event",
		       event, "outcome", "upstream unreachable", "reason", why);
		c->up_err = r;
		snprintf(c->up_why, sizeof(c->up_why), "%s", why);
		do_credential(c, (size_t)head, event, ci);
		goto out;
	}
	if (r < 0) {
		RECORD(c->hp, "http", "{s:I,s:O,s:s,s:s}", "conn", (json_int_t)c->id, "event",
		       event, "outcome", "refused", "reason", why);
		reply(c, r == -EACCES ? 403 : r == -ETIMEDOUT ? 504 : 502, why);
		goto out;
	}
	c->up = r;
	if (ci >= 0)
		do_credential(c, (size_t)head, event, ci);
	else if (c->grant_ssh)
		do_ssh_tunnel(c, (size_t)head, event);
	else if (c->req.form == HTTP_AUTHORITY_FORM)
		do_connect(c, (size_t)head, event);
	else
		do_forward(c, (size_t)head, event);
out:
	json_decref(event);
}

/*
 * The cgroup a TCP client's socket was made in, from the kernel
 * (sock_diag's INET_DIAG_CGROUP_ID for the exact 4-tuple): the broker's
 * port on 127.0.0.1 is reachable by every local user, and this is how a
 * process outside the session is told apart (a uid would not do: the agent
 * may run as any user, root included).  0 and *id, or -errno.
 */
static int peer_cgroup(int fd, uint64_t *id, uint64_t *ino)
{
	struct sockaddr_storage peer, self;
	socklen_t pl = sizeof(peer), sl = sizeof(self);
	struct {
		struct nlmsghdr nh;
		struct inet_diag_req_v2 req;
	} q = { 0 };
	char buf[8192];
	ssize_t n;
	int nl, r = -ENOENT;

	if (getpeername(fd, (struct sockaddr *)&peer, &pl) < 0 ||
	    getsockname(fd, (struct sockaddr *)&self, &sl) < 0)
		return -errno;
	q.nh.nlmsg_len = sizeof(q);
	q.nh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	q.nh.nlmsg_flags = NLM_F_REQUEST;
	q.req.sdiag_family = (uint8_t)peer.ss_family;
	q.req.sdiag_protocol = IPPROTO_TCP;
	q.req.idiag_states = ~0u;
	q.req.id.idiag_cookie[0] = q.req.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	/* The client's socket: source is the peer, destination this end. */
	if (peer.ss_family == AF_INET) {
		q.req.id.idiag_sport = ((struct sockaddr_in *)&peer)->sin_port;
		q.req.id.idiag_dport = ((struct sockaddr_in *)&self)->sin_port;
		memcpy(q.req.id.idiag_src, &((struct sockaddr_in *)&peer)->sin_addr, 4);
		memcpy(q.req.id.idiag_dst, &((struct sockaddr_in *)&self)->sin_addr, 4);
	} else {
		q.req.id.idiag_sport = ((struct sockaddr_in6 *)&peer)->sin6_port;
		q.req.id.idiag_dport = ((struct sockaddr_in6 *)&self)->sin6_port;
		memcpy(q.req.id.idiag_src, &((struct sockaddr_in6 *)&peer)->sin6_addr, 16);
		memcpy(q.req.id.idiag_dst, &((struct sockaddr_in6 *)&self)->sin6_addr, 16);
	}
	nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (nl < 0)
		return -errno;
	if (send(nl, &q, sizeof(q), 0) < 0) {
		r = -errno;
		goto out;
	}
	n = recv(nl, buf, sizeof(buf), 0);
	for (struct nlmsghdr *h = (struct nlmsghdr *)buf; n > 0 && NLMSG_OK(h, (size_t)n);
	     h = NLMSG_NEXT(h, n)) {
		struct inet_diag_msg *m = NLMSG_DATA(h);
		struct rtattr *a;
		int alen;

		if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY)
			break;
		if (ino)
			*ino = m->idiag_inode;
		alen = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*m)));
		for (a = (struct rtattr *)(m + 1); RTA_OK(a, alen); a = RTA_NEXT(a, alen))
			if (a->rta_type == INET_DIAG_CGROUP_ID && RTA_PAYLOAD(a) >= 8) {
				memcpy(id, RTA_DATA(a), 8);
				r = 0;
			}
	}
out:
	close(nl);
	return r;
}

/*
 * Before serving anyone: can this kernel say which cgroup a client's
 * socket was made in?  A connection to a listener of its own (the same
 * family, on loopback, never the session's: a client already waiting
 * there must get its verdict, not be taken for the probe) is looked up as
 * a client's would be.  Without it (no tcp_diag, e.g. modules disabled)
 * every client would be refused as foreign: say so once and do not start,
 * rather than run a proxy that refuses all.
 */
static int peer_check_works(int listen_fd)
{
	struct sockaddr_storage a;
	socklen_t al = sizeof(a);
	uint64_t id = 0;
	int l = -1, c = -1, s = -1, r;

	if (getsockname(listen_fd, (struct sockaddr *)&a, &al) < 0)
		return -errno;
	if (a.ss_family == AF_INET6) {
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&a;

		a6->sin6_addr = in6addr_loopback;
		a6->sin6_port = 0;
	} else if (a.ss_family == AF_INET) {
		struct sockaddr_in *a4 = (struct sockaddr_in *)&a;

		a4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		a4->sin_port = 0;
	} else {
		return -EAFNOSUPPORT;
	}
	if ((l = socket(a.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    bind(l, (struct sockaddr *)&a, al) < 0 || listen(l, 1) < 0 ||
	    getsockname(l, (struct sockaddr *)&a, &al) < 0 ||
	    (c = socket(a.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    connect(c, (struct sockaddr *)&a, al) < 0 ||
	    (s = accept4(l, NULL, NULL, SOCK_CLOEXEC)) < 0)
		r = -errno;
	else
		r = peer_cgroup(s, &id, NULL);
	if (s >= 0)
		close(s);
	if (c >= 0)
		close(c);
	if (l >= 0)
		close(l);
	return r;
}

static void *conn_thread(void *arg)
{
	struct conn *c = arg;
	struct hp *hp = c->hp;
	uint64_t cg = 0;

	if (hp->cgroup_id && (peer_cgroup(c->fd, &cg, &c->inode) < 0 || cg != hp->cgroup_id)) {
		RECORD(hp, "http", "{s:I,s:s,s:I}", "conn", (json_int_t)c->id, "outcome",
		       "refused: a client outside the session", "cgroup",
		       (json_int_t)cg);
		reply(c, 403, "this proxy serves one cordon session, and this client is not in it");
	} else {
		serve(c);
	}
	if (c->up >= 0)
		close(c->up);
	close(c->fd);
	free(c);
	atomic_fetch_sub(&hp->conns, 1);
	return NULL;
}

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	got_signal = sig;
}

static int accept_loop(struct hp *hp)
{
	pthread_attr_t at;

	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&at, 256 << 10);
	while (!got_signal) {
		struct pollfd p = { .fd = hp->listen_fd, .events = POLLIN };
		struct conn *c;
		pthread_t t;
		int fd, one = 1;

		if (poll(&p, 1, 1000) <= 0) {
			if (hp->grants)
				grants_sweep(hp);
			continue;
		}
		fd = accept4(hp->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (atomic_load(&hp->conns) >= MAX_CONNS) {
			static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\n"
						   "Content-Length: 0\r\n\r\n";

			(void)send(fd, busy, sizeof(busy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
			close(fd);
			continue;
		}
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		c->hp = hp;
		c->fd = fd;
		c->up = -1;
		c->id = atomic_fetch_add(&hp->next_id, 1) + 1;
		c->t0_ms = mono_ms();
		atomic_fetch_add(&hp->conns, 1);
		if (pthread_create(&t, &at, conn_thread, c) != 0) {
			atomic_fetch_sub(&hp->conns, 1);
			close(fd);
			free(c);
		}
	}
	pthread_attr_destroy(&at);
	return 0;
}

/*
 * In a session: the session's cgroup, from the supervisor, which starts
 * this before the cgroup exists ({"op":"session","cgroup_id":N}, its first
 * message).  Read line by line off the socket (peeked, then taken up to
 * the newline), so nothing of what follows is lost to the reader thread.
 * Nothing is accepted before it arrives: a connection is never served
 * without its cgroup checked.  0; -EPIPE: the channel ended (the
 * supervisor gave up, and said why); -ETIMEDOUT: silent for
 * SESSION_WAIT_MS; -E2BIG, -EBADMSG: a first message too long, or not the
 * session's.
 */
#define SESSION_WAIT_MS 30000
static int session_from_channel(struct hp *hp)
{
	char line[256];
	size_t have = 0;
	json_t *m, *id;
	int r = -EBADMSG;

	for (;;) {
		struct pollfd p = { .fd = hp->chan_fd, .events = POLLIN };
		char *nl;
		ssize_t n;

		if (poll(&p, 1, SESSION_WAIT_MS) == 0)
			return -ETIMEDOUT;
		n = recv(hp->chan_fd, line + have, sizeof(line) - 1 - have, MSG_PEEK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EPIPE;
		line[have + (size_t)n] = '\0';
		nl = strchr(line + have, '\n');
		n = nl ? nl - (line + have) + 1 : n;
		if (recv(hp->chan_fd, line + have, (size_t)n, 0) != n)
			return -EPIPE;
		have += (size_t)n;
		if (nl)
			break;
		if (have == sizeof(line) - 1)
			return -E2BIG;
	}
	m = json_loadb(line, have, 0, NULL);
	id = json_object_get(m, "cgroup_id");
	if (!strcmp(json_string_value(json_object_get(m, "op")) ?: "", "session") &&
	    json_is_integer(id) && json_integer_value(id) > 0) {
		hp->cgroup_id = (uint64_t)json_integer_value(id);
		r = 0;
	}
	json_decref(m);
	return r;
}

/* --- the command ---------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: cordon http-proxy --listen ADDR:PORT [OPTIONS]\n"
		"  --listen ADDR:PORT  where to listen (port 0: any; see --port-file)\n"
		"  --port-file FILE    write the port listened on there\n"
		"  --policy FILE       the policy (default: coding-agent)\n"
		"  --workspace DIR     ${WORKSPACE} (default: the current directory)\n"
		"  --user USER         ${HOME}, ${USER} of this user (default: the caller)\n"
		"  --audit FILE        the audit log\n"
		"  --head-timeout MS   a request head must arrive within this (default 10000)\n"
		"  --idle-timeout MS   a connection that moves no byte for this long goes\n"
		"                      (default 300000)\n"
		"  --var NAME=VALUE    a policy variable\n"
		"  --upstream-ca FILE  verify credential hosts against this CA, not the system's\n"
		"                      (with --upstream: only those gateways)\n"
		"  --upstream CRED=URL  credential CRED's requests go to this https gateway\n"
		"  --ca-out FILE       write the bundle clients must trust (system CAs + session CA)\n"
		"  --sentinels-out FILE  write ENV=SENTINEL for each credential with a secret\n"
		"The egress broker: CONNECT to allowlisted hosts (the TLS server name must be\n"
		"the CONNECT host) and plain-HTTP absolute-form requests, each judged by the\n"
		"policy as http.request {method, host, port[, path]}.  CONNECT to a credential\n"
		"host: TLS terminated with a session CA, the sentinel swapped for the secret.\n");
}

/* What clients need from outside: the CA bundle and the sentinels (never the secrets). */
static int export_creds(struct hp *hp, const char *ca_out, const char *sentinels_out)
{
	if (ca_out) {
		_cleanup_close_ int fd = open(ca_out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		if (fd < 0 || creds_write_bundle(hp->creds, fd) < 0) {
			log_err("http-proxy: --ca-out %s: %m", ca_out);
			return -EIO;
		}
	}
	if (sentinels_out) {
		_cleanup_close_ int fd = open(sentinels_out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
					      0600);

		if (fd < 0) {
			log_err("http-proxy: --sentinels-out %s: %m", sentinels_out);
			return -EIO;
		}
		for (size_t i = 0; i < creds_count(hp->creds); i++) {
			const char *sentinel;
			const struct pol_credential *cr = creds_at(hp->creds, i, &sentinel);

			if (sentinel)
				dprintf(fd, "%s=%s\n", cr->env, sentinel);
		}
	}
	return 0;
}

static int listen_on(const char *spec, char *portfile)
{
	const char *colon = strrchr(spec, ':');
	char host[64], *end;
	unsigned long port;
	struct sockaddr_storage ss = { 0 };
	socklen_t sl;
	int fd, one = 1;
	size_t hl;

	/* ADDR:PORT or [V6]:PORT, an address (no name), port 0 for any. */
	port = colon ? strtoul(colon + 1, &end, 10) : 0;
	hl = colon ? (size_t)(colon - spec) : 0;
	if (hl > 1 && spec[0] == '[' && spec[hl - 1] == ']') {
		spec++;
		hl -= 2;
	}
	if (!colon || !colon[1] || *end || port > 65535 || !hl || hl >= sizeof(host)) {
		log_err("http-proxy: --listen %s: expected ADDR:PORT", spec);
		return -EINVAL;
	}
	memcpy(host, spec, hl);
	host[hl] = '\0';
	if (inet_pton(AF_INET, host, &((struct sockaddr_in *)&ss)->sin_addr) == 1) {
		ss.ss_family = AF_INET;
		((struct sockaddr_in *)&ss)->sin_port = htons((uint16_t)port);
		sl = sizeof(struct sockaddr_in);
	} else if (inet_pton(AF_INET6, host, &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1) {
		ss.ss_family = AF_INET6;
		((struct sockaddr_in6 *)&ss)->sin6_port = htons((uint16_t)port);
		sl = sizeof(struct sockaddr_in6);
	} else {
		log_err("http-proxy: --listen %s: an IP address is needed", spec);
		return -EINVAL;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&ss, sl) < 0 || listen(fd, 128) < 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &sl) < 0) {
		int e = errno;

		log_err("http-proxy: --listen %s: %s", spec, strerror(e));
		if (fd >= 0)
			close(fd);
		return -e;
	}
	if (portfile) {
		char tmp[PATH_MAX + 8], num[16];
		int pf;

		snprintf(tmp, sizeof(tmp), "%s.tmp", portfile);
		snprintf(num, sizeof(num), "%u\n", ntohs(ss.ss_family == AF_INET ?
							 ((struct sockaddr_in *)&ss)->sin_port :
							 ((struct sockaddr_in6 *)&ss)->sin6_port));
		pf = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (pf < 0 || write(pf, num, strlen(num)) != (ssize_t)strlen(num) || close(pf) < 0 ||
		    rename(tmp, portfile) < 0) {
			log_err("http-proxy: --port-file %s: %m", portfile);
			close(fd);
			return -EIO;
		}
	}
	return fd;
}

int cmd_http_proxy(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "port-file", required_argument, NULL, 'P' },
		{ "policy", required_argument, NULL, 'p' },
		{ "workspace", required_argument, NULL, 'w' },
		{ "user", required_argument, NULL, 'u' },
		{ "audit", required_argument, NULL, 'a' },
		{ "head-timeout", required_argument, NULL, 'T' },
		{ "idle-timeout", required_argument, NULL, 'I' },
		{ "var", required_argument, NULL, 'V' },
		{ "upstream-ca", required_argument, NULL, 'U' },
		{ "upstream", required_argument, NULL, 'G' },
		{ "ca-out", required_argument, NULL, 'O' },
		{ "sentinels-out", required_argument, NULL, 'S' },
		{ "channel-fd", required_argument, NULL, 'C' },
		{ "ca-fd", required_argument, NULL, 'F' },
		{ "steps-fd", required_argument, NULL, 'N' },
		/* For cordon run (not in the usage): a listening socket it bound. */
		{ "listen-fd", required_argument, NULL, 'L' },
		{ "ssh-agent-fd", required_argument, NULL, 'A' },
		{ "ssh-auth-sock", required_argument, NULL, 'K' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct hp hp = { .listen_fd = -1, .head_timeout_ms = 10000, .hello_timeout_ms = 10000,
			 .idle_timeout_ms = IDLE_TIMEOUT_MS,
			 .chan_fd = -1, .chan_lock = PTHREAD_MUTEX_INITIALIZER, .steps = { .fd = -1 } };
	int ca_fd = -1;
	pthread_t reader;
	const char *policy = "coding-agent", *workspace = ".", *user = NULL, *audit = NULL;
	const char *upstream_ca = NULL, *ca_out = NULL, *sentinels_out = NULL;
	char *listen_spec = NULL, *portfile = NULL, ws[PATH_MAX];
	const char *vars[32], *gateways[32];
	int n_vars = 0, n_gateways = 0, o, r, ret = 125, listen_fd = -1, agent_fd = -1;
	const char *agent_up = NULL;
	static struct ssh_agent_hooks agent_hooks = { .may_sign = agent_may_sign,
						      .record = agent_record };
	struct passwd *pw;
	struct sigaction sa = { .sa_handler = on_signal };

	optind = 1;
	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (o) {
		case 'l': listen_spec = optarg; break;
		case 'L': listen_fd = atoi(optarg); break;
		case 'A': agent_fd = atoi(optarg); break;
		case 'K': agent_up = optarg; break;
		case 'P': portfile = optarg; break;
		case 'p': policy = optarg; break;
		case 'w': workspace = optarg; break;
		case 'u': user = optarg; break;
		case 'a': audit = optarg; break;
		case 'T':
			hp.head_timeout_ms = atoi(optarg);
			if (hp.head_timeout_ms <= 0) {
				log_err("http-proxy: --head-timeout %s: milliseconds expected", optarg);
				return 125;
			}
			hp.hello_timeout_ms = hp.head_timeout_ms;
			break;
		case 'I':
			hp.idle_timeout_ms = atoi(optarg);
			if (hp.idle_timeout_ms <= 0) {
				log_err("http-proxy: --idle-timeout %s: milliseconds expected", optarg);
				return 125;
			}
			break;
		case 'V':
			if (n_vars == (int)ARRAY_SIZE(vars)) {
				log_err("http-proxy: too many --var");
				return 125;
			}
			vars[n_vars++] = optarg;
			break;
		case 'U': upstream_ca = optarg; break;
		case 'G':
			if (n_gateways == (int)ARRAY_SIZE(gateways)) {
				log_err("http-proxy: too many --upstream");
				return 125;
			}
			gateways[n_gateways++] = optarg;
			break;
		case 'C': hp.chan_fd = atoi(optarg); break;
		case 'F': ca_fd = atoi(optarg); break;
		case 'N':
			if (steps_attach(&hp.steps, atoi(optarg)) < 0) {
				log_err("http-proxy: --steps-fd %s: not cordon's steps counter", optarg);
				return 125;
			}
			break;
		case 'O': ca_out = optarg; break;
		case 'S': sentinels_out = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 125;
		}
	}
	if (!listen_spec == (listen_fd < 0) || optind != argc) {
		usage(stderr);
		return 125;
	}
	pw = !user ? getpwuid(getuid()) : (user[0] >= '0' && user[0] <= '9') ?
	     getpwuid((uid_t)strtoul(user, NULL, 10)) : getpwnam(user);
	if (!pw) {
		log_err("http-proxy: --user %s: no such user", user ? user : "(caller)");
		return 125;
	}
	if (!realpath(workspace, ws)) {
		log_err("http-proxy: workspace %s: %m", workspace);
		return 125;
	}
	{
		struct session_vars sv = { ws, pw->pw_dir, pw->pw_name, pw->pw_uid };

		char why[512];

		if (policy_load_session("http-proxy", policy, &sv, vars, n_vars, &hp.pol) < 0)
			return 125;
		/* With --upstream, --upstream-ca verifies those gateways only. */
		for (int i = 0; i < n_gateways; i++)
			if (pol_apply_upstream(hp.pol, gateways[i], upstream_ca, why, sizeof(why)) < 0) {
				log_err("http-proxy: %s", why);
				goto out;
			}
		if (n_gateways)
			upstream_ca = NULL;
	}
	/* Before any thread: the secrets are taken from this environment and wiped. */
	if (hp.pol->n_creds &&
	    (creds_init(&hp.creds, hp.pol, upstream_ca, "http-proxy") < 0 ||
	     export_creds(&hp, ca_out, sentinels_out) < 0))
		goto out;
	if (ca_fd >= 0 && hp.creds) {
		r = creds_write_bundle(hp.creds, ca_fd);
		close(ca_fd);
		if (r < 0) {
			log_err("http-proxy: the CA bundle: %s", strerror(-r));
			goto out;
		}
	}
	pthread_mutex_init(&hp.lock, NULL);
	if (audit && hp.chan_fd < 0) {
		char session[48];
		unsigned char rnd[8];
		json_t *start;

		if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd)) {
			log_err("http-proxy: getrandom: %m");
			goto out;
		}
		snprintf(session, sizeof(session), "http%02x%02x%02x%02x%02x%02x%02x%02x", rnd[0], rnd[1],
			 rnd[2], rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]);
		start = json_pack("{s:s,s:s}", "what", "http-proxy", "policy", policy);
		r = audit_open(audit, session, getenv("CORDON_AUDIT_KEY_DIR") ?: AUDIT_KEY_DIR, start,
			       &hp.audit);
		json_decref(start);
		if (r < 0) {
			log_err("http-proxy: --audit %s: %s", audit, strerror(-r));
			goto out;
		}
	}
	if (listen_fd >= 0) {
		int type = 0;
		socklen_t tl = sizeof(type);

		if (getsockopt(listen_fd, SOL_SOCKET, SO_TYPE, &type, &tl) < 0 || type != SOCK_STREAM) {
			log_err("http-proxy: --listen-fd %d: not a listening stream socket", listen_fd);
			goto out;
		}
		(void)fcntl(listen_fd, F_SETFD, FD_CLOEXEC);
		hp.listen_fd = listen_fd;
	} else {
		hp.listen_fd = listen_on(listen_spec, portfile);
	}
	if (hp.listen_fd < 0)
		goto out;
	if (hp.chan_fd >= 0) {
		(void)fcntl(hp.chan_fd, F_SETFD, FD_CLOEXEC);
		r = session_from_channel(&hp);
		if (r == -ETIMEDOUT)
			log_err("http-proxy: no session from the supervisor in %d s",
				SESSION_WAIT_MS / 1000);
		else if (r == -E2BIG || r == -EBADMSG)
			log_err("http-proxy: the supervisor's first message is not the session's cgroup");
		if (r < 0)
			goto out;     /* -EPIPE: the supervisor gave up, and said why */
	}
	if (hp.cgroup_id && (r = peer_check_works(hp.listen_fd)) < 0) {
		log_err("http-proxy: cannot tell which cgroup a client's socket belongs to (sock_diag: "
			"%s; is the tcp_diag module available?): every client would be refused",
			strerror(-r));
		goto out;
	}
	signal(SIGPIPE, SIG_IGN);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if (hp.chan_fd >= 0) {
		json_t *sent = json_object();

		for (size_t i = 0; hp.creds && i < creds_count(hp.creds); i++) {
			const char *v;
			const struct pol_credential *cr = creds_at(hp.creds, i, &v);

			if (v)
				json_object_set_new(sent, cr->env, json_string(v));
		}
		if (pthread_create(&reader, NULL, chan_reader, &hp) != 0 ||
		    chan_send(&hp, json_pack("{s:s,s:o}", "op", "ready", "sentinels", sent)) < 0) {
			log_err("http-proxy: the supervisor's channel: %m");
			goto out;
		}
	}
	/* After the session is known: the relay judges its clients by the grants. */
	if (agent_fd >= 0 && agent_up) {
		(void)fcntl(agent_fd, F_SETFD, FD_CLOEXEC);
		agent_hooks.ctx = &hp;
		r = ssh_agent_start(agent_fd, agent_up, &agent_hooks);
		if (r < 0) {
			log_err("http-proxy: the session's ssh-agent relay: %s", strerror(-r));
			goto out;
		}
	}
	ret = accept_loop(&hp) < 0 ? 125 : 0;
	r = audit_down(hp.audit, NULL);
	if (r < 0) {
		log_err("http-proxy: stopped: the audit log cannot keep its records (%s)", strerror(-r));
		ret = 125;
	}
	/* Connections still open end with the process; their records so far are in. */
out:
	if (hp.listen_fd >= 0)
		close(hp.listen_fd);
	if (hp.audit) {
		pthread_mutex_lock(&hp.lock);
		(void)audit_seal(hp.audit, NULL);
		pthread_mutex_unlock(&hp.lock);
	}
	creds_free(hp.creds);
	/*
	 * Its last record is sent: the supervisor, which reads the channel to
	 * its end before sealing the session's log, goes on now rather than
	 * when this process's exit (unmapping its locked memory) closes it.
	 */
	if (hp.chan_fd >= 0) {
		pthread_mutex_lock(&hp.chan_lock);
		hp.chan_gone = true;
		(void)shutdown(hp.chan_fd, SHUT_RDWR);
		pthread_mutex_unlock(&hp.chan_lock);
	}
	return ret;
}
