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
 *     127.0.0.1 is refused.
 *   - Fronting: inside a CONNECT tunnel the first bytes must be a TLS
 *     ClientHello whose server name is the CONNECT host (no name, another
 *     name, or no TLS at all: the tunnel is closed before a byte reaches the
 *     server).
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
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>

#include "audit.h"
#include "http.h"
#include "http_proxy.h"
#include "policy.h"
#include "tls_sni.h"
#include "policy_cmd.h"
#include "util.h"

#define MAX_CONNS 256
#define CONNECT_TIMEOUT_MS 10000
#define IDLE_TIMEOUT_MS 300000
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
};

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void record(struct hp *hp, const char *type, json_t *fields)
{
	if (hp->audit && fields) {
		pthread_mutex_lock(&hp->lock);
		(void)audit_write(hp->audit, type, fields);
		pthread_mutex_unlock(&hp->lock);
	}
	json_decref(fields);
}

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
	case 414: return "URI Too Long";
	case 417: return "Expectation Failed";
	case 431: return "Request Header Fields Too Large";
	case 501: return "Not Implemented";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	case 505: return "HTTP Version Not Supported";
	default: return "Error";
	}
}

/* A plain answer, then the connection is closed by the caller. */
static void reply(struct conn *c, int code, const char *why)
{
	char b[1024];
	int n = snprintf(b, sizeof(b), "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\n"
			 "Connection: close\r\nContent-Length: %zu\r\n\r\ncordon: %s\n", code,
			 status_text(code), strlen(why) + 9, why);

	if (n > 0)
		(void)send_all(c->fd, b, (size_t)n < sizeof(b) ? (size_t)n : sizeof(b) - 1);
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
		if (!addr_public(ai->ai_addr)) {
			pr.host = c->addr;
			pol_eval(c->hp->pol, &pr, &pres);
			if (pres.decision != CORDON_ALLOW) {
				snprintf(why, wlen, "%s resolves to %s, a non-public address no rule "
					 "lists", c->req.host, c->addr);
				fd = -EACCES;
				continue;
			}
		}
		fd = connect_to(ai->ai_addr, ai->ai_addrlen);
		if (fd >= 0)
			break;
		snprintf(why, wlen, "%s (%s): %s", c->req.host, c->addr, strerror(-fd));
	}
	freeaddrinfo(res);
	return fd;
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
		int r = poll(p, 2, IDLE_TIMEOUT_MS);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		for (int i = 0; i < 2; i++) {
			int from = i ? c->up : c->fd, to = i ? c->fd : c->up;
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
			if (send_all(to, b, (size_t)n) < 0) {
				up_open = down_open = false;
				break;
			}
			if (i)
				c->down_bytes += (uint64_t)n;
			else
				c->up_bytes += (uint64_t)n;
		}
	}
	free(b);
}

/* --- one connection --------------------------------------------------------------- */

static json_t *event_of(const struct conn *c)
{
	json_t *args = json_pack("{s:s,s:s,s:i}", "method", c->req.method, "host", c->req.host,
				 "port", (int)c->req.port);

	if (c->req.form == HTTP_ABSOLUTE_FORM)
		json_object_set_new(args, "path", json_string(c->req.path));
	return json_pack("{s:s,s:s,s:o}", "server", "http", "tool", "request", "arguments", args);
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

/* CONNECT: 200, then the ClientHello must name the CONNECT host. */
static void do_connect(struct conn *c, size_t head, json_t *event)
{
	static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	uint64_t deadline;
	char sni[256] = "", why[640] = "";
	size_t have = c->len - head;
	int r = 0;

	memmove(c->buf, c->buf + head, have);
	c->len = have;
	if (send_all(c->fd, ok, sizeof(ok) - 1) < 0)
		return;
	deadline = mono_ms() + (uint64_t)c->hp->hello_timeout_ms;
	for (;;) {
		ssize_t n;

		r = c->len ? tls_client_hello_sni((unsigned char *)c->buf, c->len, sni, sizeof(sni)) : 0;
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
		record(c->hp, "http", json_pack("{s:I,s:O,s:s,s:s}", "conn", (json_int_t)c->id, "event",
						event, "outcome", "refused", "reason", why));
		return;
	}
	if (send_all(c->up, c->buf, c->len) < 0)
		return;
	c->up_bytes += c->len;
	relay(c);
	record(c->hp, "http", json_pack("{s:I,s:O,s:s,s:s,s:s,s:I,s:I,s:I}", "conn", (json_int_t)c->id,
					"event", event, "outcome", "tunnel closed", "sni", sni,
					"addr", c->addr, "bytes_up", (json_int_t)c->up_bytes,
					"bytes_down", (json_int_t)c->down_bytes, "ms",
					(json_int_t)(mono_ms() - c->t0_ms)));
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
	char *out = malloc(HTTP_MAX_HEAD + 64);
	size_t o = 0, body = c->len - head;
	int r;

	if (!out)
		return;
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
	r = send_all(c->up, out, o);
	free(out);
	if (r < 0)
		return;
	/* The body as framed by the client (validated), and nothing after it. */
	if (c->req.chunked) {
		struct http_chunked ch;
		ssize_t k;

		http_chunked_init(&ch);
		for (;;) {
			ssize_t n;

			if (body) {
				k = http_chunked_scan(&ch, c->buf + head, body);
				if (k < 0 || send_all(c->up, c->buf + head, (size_t)k) < 0)
					return;
				c->up_bytes += (uint64_t)k;
			}
			if (ch.done)
				break;
			if (wait_readable(c->fd, mono_ms() + IDLE_TIMEOUT_MS) <= 0)
				return;
			head = 0;
			n = recv(c->fd, c->buf, sizeof(c->buf), 0);
			if (n <= 0)
				return;
			body = (size_t)n;
		}
	} else if (c->req.content_length > 0) {
		uint64_t left = (uint64_t)c->req.content_length;
		size_t first = body < left ? body : (size_t)left;

		if (send_all(c->up, c->buf + head, first) < 0)
			return;
		left -= first;
		c->up_bytes += first;
		while (left) {
			ssize_t n = recv(c->fd, c->buf, left < sizeof(c->buf) ? left : sizeof(c->buf), 0);

			if (n <= 0 || send_all(c->up, c->buf, (size_t)n) < 0)
				return;
			left -= (uint64_t)n;
			c->up_bytes += (uint64_t)n;
		}
	}
	/* The response, as it comes, until the server closes. */
	(void)shutdown(c->fd, SHUT_RD);
	for (;;) {
		ssize_t n = recv(c->up, c->buf, sizeof(c->buf), 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || send_all(c->fd, c->buf, (size_t)n) < 0)
			break;
		c->down_bytes += (uint64_t)n;
	}
	record(c->hp, "http", json_pack("{s:I,s:O,s:s,s:s,s:I,s:I,s:I}", "conn", (json_int_t)c->id,
					"event", event, "outcome", "forwarded", "addr", c->addr,
					"bytes_up", (json_int_t)c->up_bytes, "bytes_down",
					(json_int_t)c->down_bytes, "ms", (json_int_t)(mono_ms() - c->t0_ms)));
}

static void serve(struct conn *c)
{
	struct pol_request pr = { .op = POL_OP_CONNECT };
	struct pol_result res;
	json_t *event;
	char why[640];
	const char *dec, *rule;
	int head = read_head(c), r;

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
	pr.host = c->req.host;
	pr.port = c->req.port;
	pr.ev_server = "http";
	pr.ev_tool = "request";
	pr.ev_args = json_object_get(event, "arguments");
	pol_eval(c->hp->pol, &pr, &res);
	rule = res.rule ? res.rule->name : res.invariant;
	dec = res.decision == CORDON_ALLOW ? "allow" : res.decision == CORDON_ESCALATE ? "escalate" : "deny";
	if (res.decision == CORDON_ALLOW && res.via == POL_VIA_CRED_PROXY) {
		/* A credential host is reached with its sentinel, through TLS cordon terminates. */
		snprintf(res.reason, sizeof(res.reason), "%s is a credential host: only the credential "
			 "proxy reaches it", c->req.host);
		res.decision = CORDON_DENY;
		dec = "deny";
	}
	record(c->hp, "decision", json_pack("{s:s,s:I,s:O,s:s,s:s?,s:s,s:s}", "raw", "http-proxy",
					    "conn", (json_int_t)c->id, "event", event, "decision", dec,
					    "rule", rule, "reason", res.reason, "outcome",
					    res.decision == CORDON_ALLOW ? "connecting" :
					    res.decision == CORDON_ESCALATE ?
					    "refused: no approval channel" : "refused"));
	if (res.decision != CORDON_ALLOW) {
		snprintf(why, sizeof(why), "%s%s", res.decision == CORDON_ESCALATE ?
			 "needs a human's approval, and this proxy has none: " : "", res.reason);
		reply(c, 403, why);
		json_decref(event);
		return;
	}
	why[0] = '\0';
	r = open_upstream(c, why, sizeof(why));
	if (r < 0) {
		record(c->hp, "http", json_pack("{s:I,s:O,s:s,s:s}", "conn", (json_int_t)c->id, "event",
						event, "outcome", "refused", "reason", why));
		reply(c, r == -EACCES ? 403 : r == -ETIMEDOUT ? 504 : 502, why);
		json_decref(event);
		return;
	}
	c->up = r;
	if (c->req.form == HTTP_AUTHORITY_FORM)
		do_connect(c, (size_t)head, event);
	else
		do_forward(c, (size_t)head, event);
	json_decref(event);
}

static void *conn_thread(void *arg)
{
	struct conn *c = arg;
	struct hp *hp = c->hp;

	serve(c);
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

		if (poll(&p, 1, 1000) <= 0)
			continue;
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
		"  --var NAME=VALUE    a policy variable\n"
		"The egress broker: CONNECT to allowlisted hosts (the TLS server name must be\n"
		"the CONNECT host) and plain-HTTP absolute-form requests, each judged by the\n"
		"policy as http.request {method, host, port[, path]}.\n");
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
		{ "var", required_argument, NULL, 'V' },
		/* For cordon run (not in the usage): a listening socket it bound. */
		{ "listen-fd", required_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct hp hp = { .listen_fd = -1, .head_timeout_ms = 10000, .hello_timeout_ms = 10000 };
	const char *policy = "coding-agent", *workspace = ".", *user = NULL, *audit = NULL;
	char *listen_spec = NULL, *portfile = NULL, ws[PATH_MAX];
	const char *vars[32];
	int n_vars = 0, o, r, ret = 125, listen_fd = -1;
	struct passwd *pw;
	struct sigaction sa = { .sa_handler = on_signal };

	optind = 1;
	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (o) {
		case 'l': listen_spec = optarg; break;
		case 'L': listen_fd = atoi(optarg); break;
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
		case 'V':
			if (n_vars == (int)ARRAY_SIZE(vars)) {
				log_err("http-proxy: too many --var");
				return 125;
			}
			vars[n_vars++] = optarg;
			break;
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

		if (policy_load_session("http-proxy", policy, &sv, vars, n_vars, &hp.pol) < 0)
			return 125;
	}
	pthread_mutex_init(&hp.lock, NULL);
	if (audit) {
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
	signal(SIGPIPE, SIG_IGN);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	ret = accept_loop(&hp) < 0 ? 125 : 0;
	/* Connections still open end with the process; their records so far are in. */
out:
	if (hp.listen_fd >= 0)
		close(hp.listen_fd);
	if (hp.audit) {
		pthread_mutex_lock(&hp.lock);
		(void)audit_seal(hp.audit, NULL);
		pthread_mutex_unlock(&hp.lock);
	}
	return ret;
}
