// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * proxy_bench: the two ends of the HTTPS proxy benchmark (tools/bench/proxy.sh).
 *
 *   proxy_bench server --cert C --key K --port-file F [--require-header 'Name: value']
 *   proxy_bench client --host NAME --port P [--proxy ADDR:PORT] --cacert FILE
 *                      [--header 'Name: value'] --requests N --conns C
 *                      [--body BYTES] [--path PATH] [--warmup W]
 *
 * The server: HTTPS/1.1 on 127.0.0.1 (port 0, written to F), one thread per
 * connection, keep-alive; every request (head, then Content-Length bytes of
 * body) is answered with a 1 KB body from one prebuilt response, so the
 * server's cost per request is a read and a write.  With --require-header
 * 'Name: value' a request without that field is answered 403 instead (the
 * credential proxy's row: the real key must arrive, not the sentinel).
 *
 * The client: C connections, each (with --proxy) an HTTP CONNECT NAME:P,
 * then TLS with SNI NAME, the chain verified against --cacert and the name
 * checked; W untimed warm-up requests each, then N timed requests per
 * connection, all connections at once: POST PATH with a BYTES body, one at
 * a time per connection.  A request's latency runs from the first byte
 * written to the last byte of the response read.  Prints one JSON line:
 *   {"rps": R, "p50_us": .., "p90_us": .., "p99_us": .., "errors": E}
 * rps counts the timed requests answered 200 over the wall time from the
 * start line (every connection set up and warmed) to the last answer.
 * With C=1 the latency is what matters; with C>1 the throughput.
 *
 *   proxy_bench wake
 *
 * What one wake-up costs on this machine: two threads pass a byte back and
 * forth over a pair of pipes, both on CPU 0, then on CPUs 0 and 1.  Prints
 *   {"same_cpu_us": S, "cross_cpu_us": X}
 * each the median over batches of the time from one thread's write to its
 * peer's write back, halved: one hop, woken (X is null on one CPU).  On a
 * virtual machine whose idle vCPUs halt, X is the price of every hop that
 * lands on an idle CPU; a proxy path makes four hops a request, so the
 * table's throughput at a few connections follows how often that happens.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#define RESP_BODY 1024
#define RBUF 16384

/* Buffered reading of HTTP/1.1 messages from a TLS stream. */
struct rbuf {
	size_t len;
	char buf[RBUF];
};

static int ssl_err(SSL *s, int r)
{
	switch (SSL_get_error(s, r)) {
	case SSL_ERROR_ZERO_RETURN:
		return -EPIPE;
	case SSL_ERROR_SYSCALL:
		return errno ? -errno : -EPIPE;
	default:
		return -EPROTO;
	}
}

static int write_all(SSL *s, const char *p, size_t n)
{
	while (n) {
		int r = SSL_write(s, p, (int)n);

		if (r <= 0)
			return ssl_err(s, r);
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/* A header field a request must carry: "Name: value". */
struct want {
	const char *name, *value;
	size_t name_len, value_len;
};

/* Whether the head h[0..n) has the field (name case-insensitively, value exactly). */
static bool has_field(const char *h, size_t n, const struct want *w)
{
	for (size_t i = 0; i + 2 + w->name_len < n; i++) {
		const char *v;

		if (h[i] != '\r' || h[i + 1] != '\n' || strncasecmp(h + i + 2, w->name, w->name_len) ||
		    h[i + 2 + w->name_len] != ':')
			continue;
		v = h + i + 3 + w->name_len;
		while (v < h + n && (*v == ' ' || *v == '\t'))
			v++;
		if ((size_t)(h + n - v) >= w->value_len + 2 && !memcmp(v, w->value, w->value_len) &&
		    v[w->value_len] == '\r')
			return true;
	}
	return false;
}

/* The Content-Length of a head (0 when there is none), or -EBADMSG. */
static long long content_length(const char *h, size_t n)
{
	static const char name[] = "\r\ncontent-length:";
	const size_t nl = sizeof(name) - 1;

	for (size_t i = 0; i + nl <= n; i++) {
		char *end;
		long long v;

		if (h[i] != '\r' || strncasecmp(h + i, name, nl))
			continue;
		errno = 0;
		v = strtoll(h + i + nl, &end, 10);
		if (errno || v < 0 || end == h + i + nl)
			return -EBADMSG;
		return v;
	}
	return 0;
}

/*
 * Read one whole message (head and Content-Length body) and consume it,
 * keeping any bytes after it for the next call.  *status gets the status
 * code of a response line ("HTTP/1.1 200 ..."), when status is not NULL;
 * *has whether the head carries the field want, when want is not NULL.
 * Returns 0, -EPIPE at a clean end before a message starts, or -errno.
 */
static int read_msg(SSL *s, struct rbuf *b, int *status, const struct want *want, bool *has)
{
	size_t head, rest;
	long long clen;

	for (;;) {
		char *e = b->len >= 4 ? memmem(b->buf, b->len, "\r\n\r\n", 4) : NULL;
		int r;

		if (e) {
			head = (size_t)(e - b->buf) + 4;
			break;
		}
		if (b->len == sizeof(b->buf))
			return -E2BIG;
		r = SSL_read(s, b->buf + b->len, (int)(sizeof(b->buf) - b->len));
		if (r <= 0)
			return ssl_err(s, r);
		b->len += (size_t)r;
	}
	if (status)
		*status = b->len > 12 && !memcmp(b->buf, "HTTP/1.", 7) ? atoi(b->buf + 9) : -1;
	if (want)
		*has = has_field(b->buf, head, want);
	clen = content_length(b->buf, head);
	if (clen < 0)
		return (int)clen;
	rest = b->len - head;
	if ((unsigned long long)clen <= rest) {
		memmove(b->buf, b->buf + head + clen, rest - (size_t)clen);
		b->len = rest - (size_t)clen;
		return 0;
	}
	/* Only the body's remainder is read, so the next message stays in the TLS buffer. */
	clen -= (long long)rest;
	b->len = 0;
	while (clen > 0) {
		int r = SSL_read(s, b->buf, clen < RBUF ? (int)clen : RBUF);

		if (r <= 0)
			return ssl_err(s, r);
		clen -= r;
	}
	return 0;
}

static void nodelay(int fd)
{
	int one = 1;

	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* --- server ------------------------------------------------------------------------ */

struct srv {
	SSL_CTX *ctx;
	char resp[256 + RESP_BODY];
	size_t resp_len;
	const struct want *want;        /* answered 403 without it */
};

static const char forbidden[] = "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n";

struct srv_conn {
	struct srv *srv;
	int fd;
	struct rbuf in;
};

static void *srv_conn_thread(void *arg)
{
	struct srv_conn *c = arg;
	SSL *s = SSL_new(c->srv->ctx);

	if (s && SSL_set_fd(s, c->fd) == 1 && SSL_accept(s) == 1) {
		bool has = true;

		while (read_msg(s, &c->in, NULL, c->srv->want, &has) == 0) {
			int r = has ? write_all(s, c->srv->resp, c->srv->resp_len)
				    : write_all(s, forbidden, sizeof(forbidden) - 1);

			if (r < 0)
				break;
		}
		(void)SSL_shutdown(s);
	}
	SSL_free(s);
	close(c->fd);
	free(c);
	return NULL;
}

static int server(const char *cert, const char *key, const char *port_file, const struct want *want)
{
	struct srv srv = { .want = want };
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	pthread_attr_t at;
	char tmp[4096];
	FILE *f;
	int lfd, one = 1, n;

	srv.ctx = SSL_CTX_new(TLS_server_method());
	if (!srv.ctx || SSL_CTX_use_certificate_chain_file(srv.ctx, cert) != 1 ||
	    SSL_CTX_use_PrivateKey_file(srv.ctx, key, SSL_FILETYPE_PEM) != 1) {
		fprintf(stderr, "proxy_bench server: %s, %s: ", cert, key);
		ERR_print_errors_fp(stderr);
		return 1;
	}
	n = snprintf(srv.resp, sizeof(srv.resp),
		     "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
		     "Connection: keep-alive\r\n\r\n", RESP_BODY);
	memset(srv.resp + n, 'x', RESP_BODY);
	srv.resp_len = (size_t)n + RESP_BODY;

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(lfd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(lfd, 128) < 0 ||
	    getsockname(lfd, (struct sockaddr *)&a, &al) < 0) {
		fprintf(stderr, "proxy_bench server: listen: %m\n");
		return 1;
	}
	/* Written whole, then renamed: a reader never sees half a port. */
	snprintf(tmp, sizeof(tmp), "%s.tmp", port_file);
	f = fopen(tmp, "w");
	if (!f || fprintf(f, "%u\n", ntohs(a.sin_port)) < 0 || fclose(f) != 0 ||
	    rename(tmp, port_file) < 0) {
		fprintf(stderr, "proxy_bench server: %s: %m\n", port_file);
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	for (;;) {
		struct srv_conn *c;
		pthread_t t;
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE)
				continue;
			fprintf(stderr, "proxy_bench server: accept: %m\n");
			return 1;
		}
		nodelay(fd);
		c = malloc(sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		c->srv = &srv;
		c->fd = fd;
		c->in.len = 0;
		if (pthread_create(&t, &at, srv_conn_thread, c) != 0) {
			close(fd);
			free(c);
		}
	}
}

/* --- client ------------------------------------------------------------------------ */

struct cli {
	const char *host, *port, *proxy;
	SSL_CTX *ctx;
	char *req;
	size_t req_len;
	long requests, warmup;
	pthread_barrier_t start;
	pthread_mutex_t lock;
	char first_err[256];            /* the first failure, for stderr */
};

struct cli_conn {
	struct cli *cli;
	pthread_t t;
	double *lat;                    /* us, one per answered request */
	long n, errors;
	double end;                     /* when its last answer came */
	struct rbuf in;
};

/* Keep the first failure's description, for stderr at the end. */
__attribute__((format(printf, 2, 3))) static void fail(struct cli *cli, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&cli->lock);
	if (!cli->first_err[0]) {
		va_start(ap, fmt);
		vsnprintf(cli->first_err, sizeof(cli->first_err), fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&cli->lock);
}

/* A request's failure: -errno, or the status it was answered with. */
static void fail_req(struct cli *cli, const char *what, int r)
{
	if (r < 0)
		fail(cli, "%s: %s", what, strerror(-r));
	else
		fail(cli, "%s: answered %d", what, r);
}

/* A TCP connection to HOST:PORT, any of its addresses; -errno. */
static int dial(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *ai;
	int fd = -EHOSTUNREACH;

	if (getaddrinfo(host, port, &hints, &res) != 0)
		return -EHOSTUNREACH;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0) {
			fd = -errno;
			continue;
		}
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		close(fd);
		fd = -errno;
	}
	freeaddrinfo(res);
	if (fd >= 0)
		nodelay(fd);
	return fd;
}

/* CONNECT HOST:PORT through the proxy on fd; 0 once it answers 2xx. */
static int connect_tunnel(int fd, const char *host, const char *port)
{
	char b[2048];
	size_t len = 0;
	int n = snprintf(b, sizeof(b), "CONNECT %s:%s HTTP/1.1\r\nHost: %s:%s\r\n\r\n", host, port,
			 host, port);

	if (send(fd, b, (size_t)n, MSG_NOSIGNAL) != n)
		return -EPIPE;
	/* Byte by byte: nothing past the head may be swallowed (the TLS that follows). */
	while (len < sizeof(b) - 1) {
		ssize_t r = recv(fd, b + len, 1, 0);

		if (r <= 0)
			return r < 0 ? -errno : -EPIPE;
		len++;
		if (len >= 4 && !memcmp(b + len - 4, "\r\n\r\n", 4))
			break;
	}
	b[len] = 0;
	if (len < 12 || strncmp(b, "HTTP/1.", 7) || b[9] != '2')
		return -ECONNREFUSED;
	return 0;
}

/* One request and its answer; its latency in *us.  0 if answered 200, else the status or -errno. */
static int round_trip(SSL *s, struct cli_conn *c, double *us)
{
	double t0 = now_us();
	int status, r;

	r = write_all(s, c->cli->req, c->cli->req_len);
	if (r == 0)
		r = read_msg(s, &c->in, &status, NULL, NULL);
	*us = now_us() - t0;
	if (r < 0)
		return r;
	return status == 200 ? 0 : status > 0 ? status : -EBADMSG;
}

static void *cli_conn_thread(void *arg)
{
	struct cli_conn *c = arg;
	struct cli *cli = c->cli;
	SSL *s = NULL;
	int fd, r;
	double us;

	if (cli->proxy) {
		char addr[256];
		const char *colon = strrchr(cli->proxy, ':');

		snprintf(addr, sizeof(addr), "%.*s", (int)(colon - cli->proxy), cli->proxy);
		fd = dial(addr, colon + 1);
	} else {
		fd = dial(cli->host, cli->port);
	}
	if (fd < 0) {
		fail_req(cli, cli->proxy ? "connect to the proxy" : "connect", fd);
		goto wait;
	}
	if (cli->proxy && (r = connect_tunnel(fd, cli->host, cli->port)) < 0) {
		fail_req(cli, "CONNECT", r);
		goto wait;
	}
	s = SSL_new(cli->ctx);
	if (!s || SSL_set_fd(s, fd) != 1 || SSL_set_tlsext_host_name(s, cli->host) != 1 ||
	    SSL_set1_host(s, cli->host) != 1 || SSL_connect(s) != 1) {
		unsigned long e = ERR_get_error();

		fail(cli, "TLS: %s", e ? ERR_error_string(e, NULL) : "handshake failed");
		SSL_free(s);
		s = NULL;
		goto wait;
	}
	for (long i = 0; i < cli->warmup; i++) {
		if ((r = round_trip(s, c, &us)) != 0) {
			fail_req(cli, "a warm-up request", r);
			SSL_free(s);
			s = NULL;
			break;
		}
	}
wait:
	pthread_barrier_wait(&cli->start);
	if (!s) {
		c->errors = cli->requests;
		c->end = now_us();
		goto out;
	}
	for (long i = 0; i < cli->requests; i++) {
		r = round_trip(s, c, &us);
		if (r == 0) {
			c->lat[c->n++] = us;
			continue;
		}
		c->errors++;
		fail_req(cli, "a request", r);
		if (r < 0) {    /* the connection is gone: the rest are errors too */
			c->errors += cli->requests - i - 1;
			break;
		}
	}
	c->end = now_us();
	(void)SSL_shutdown(s);
	SSL_free(s);
out:
	if (fd >= 0)
		close(fd);
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(const double *v, long n, double p)
{
	long i = (long)(p * (double)(n - 1) + 0.5);

	return n ? v[i] : 0;
}

static int client(struct cli *cli, const char *cacert, const char *header, const char *path,
		  long conns, long body)
{
	struct cli_conn *c;
	double start, end = 0, *all;
	long n = 0, errors = 0;
	int hl;

	cli->ctx = SSL_CTX_new(TLS_client_method());
	if (!cli->ctx || SSL_CTX_load_verify_locations(cli->ctx, cacert, NULL) != 1) {
		fprintf(stderr, "proxy_bench client: --cacert %s: ", cacert);
		ERR_print_errors_fp(stderr);
		return 1;
	}
	SSL_CTX_set_verify(cli->ctx, SSL_VERIFY_PEER, NULL);

	/* One request, built once and sent as is every time. */
	cli->req = malloc(4096 + (size_t)body);
	if (!cli->req)
		return 1;
	hl = snprintf(cli->req, 4096,
		      "POST %s HTTP/1.1\r\nHost: %s:%s\r\n%s%s"
		      "Content-Type: application/json\r\nContent-Length: %ld\r\n\r\n",
		      path, cli->host, cli->port, header ? header : "", header ? "\r\n" : "", body);
	if (hl < 0 || hl >= 4096) {
		fprintf(stderr, "proxy_bench client: the request head is too long\n");
		return 1;
	}
	memset(cli->req + hl, 'a', (size_t)body);
	cli->req_len = (size_t)hl + (size_t)body;

	c = calloc((size_t)conns, sizeof(*c));
	all = malloc(sizeof(double) * (size_t)(conns * cli->requests));
	if (!c || !all)
		return 1;
	pthread_barrier_init(&cli->start, NULL, (unsigned)conns + 1);
	pthread_mutex_init(&cli->lock, NULL);
	for (long i = 0; i < conns; i++) {
		c[i].cli = cli;
		c[i].lat = all + i * cli->requests;
		if (pthread_create(&c[i].t, NULL, cli_conn_thread, &c[i]) != 0) {
			fprintf(stderr, "proxy_bench client: pthread_create failed\n");
			return 1;
		}
	}
	pthread_barrier_wait(&cli->start);
	start = now_us();
	for (long i = 0; i < conns; i++) {
		pthread_join(c[i].t, NULL);
		if (c[i].end > end)
			end = c[i].end;
		/* Compact the answered latencies into one array. */
		memmove(all + n, c[i].lat, sizeof(double) * (size_t)c[i].n);
		n += c[i].n;
		errors += c[i].errors;
	}
	qsort(all, (size_t)n, sizeof(double), cmp_double);
	printf("{\"rps\": %.0f, \"p50_us\": %.1f, \"p90_us\": %.1f, \"p99_us\": %.1f, \"errors\": %ld}\n",
	       end > start ? (double)n / ((end - start) / 1e6) : 0, pct(all, n, 0.5), pct(all, n, 0.9),
	       pct(all, n, 0.99), errors);
	if (cli->first_err[0])
		fprintf(stderr, "proxy_bench client: %s\n", cli->first_err);
	return n ? 0 : 1;
}

/* --- wake: the cost of one hop ------------------------------------------------------ */

#define WAKE_BATCH 200
#define WAKE_BATCHES 25

struct wake {
	int ping[2], pong[2];
	int cpu;
	long rounds;
	bool pinned;            /* the peer runs on cpu (else it serves anyway, unpinned) */
};

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *wake_peer(void *arg)
{
	struct wake *w = arg;
	char b;

	w->pinned = pin(w->cpu) == 0;
	for (long i = 0; i < w->rounds; i++)
		if (read(w->ping[0], &b, 1) != 1 || write(w->pong[1], &b, 1) != 1)
			break;
	return NULL;
}

/* The median hop in microseconds between CPU 0 and peer_cpu, or <0. */
static double wake_hop(int peer_cpu)
{
	struct wake w = { .cpu = peer_cpu, .rounds = (long)WAKE_BATCH * WAKE_BATCHES };
	double batch[WAKE_BATCHES], r = -1;
	pthread_t t;
	char b = 'x';

	if (pipe(w.ping) < 0 || pipe(w.pong) < 0 || pin(0) != 0 ||
	    pthread_create(&t, NULL, wake_peer, &w) != 0)
		return -1;
	for (int k = 0; k < WAKE_BATCHES; k++) {
		double t0 = now_us();

		for (int i = 0; i < WAKE_BATCH; i++)
			if (write(w.ping[1], &b, 1) != 1 || read(w.pong[0], &b, 1) != 1)
				goto out;
		batch[k] = (now_us() - t0) / WAKE_BATCH / 2;
	}
	qsort(batch, WAKE_BATCHES, sizeof(double), cmp_double);
	r = batch[WAKE_BATCHES / 2];
out:
	close(w.ping[1]);       /* a peer still reading sees the end */
	pthread_join(t, NULL);
	if (!w.pinned)
		r = -1;
	close(w.ping[0]);
	close(w.pong[0]);
	close(w.pong[1]);
	return r;
}

static int wake(void)
{
	double same = wake_hop(0), cross = sysconf(_SC_NPROCESSORS_ONLN) > 1 ? wake_hop(1) : -1;

	if (same < 0) {
		fprintf(stderr, "proxy_bench wake: %s\n", strerror(errno));
		return 1;
	}
	if (cross < 0)
		printf("{\"same_cpu_us\": %.1f, \"cross_cpu_us\": null}\n", same);
	else
		printf("{\"same_cpu_us\": %.1f, \"cross_cpu_us\": %.1f}\n", same, cross);
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: proxy_bench server --cert C --key K --port-file F [--require-header 'N: v']\n"
		"       proxy_bench client --host NAME --port P [--proxy ADDR:PORT] --cacert FILE\n"
		"                          [--header 'Name: value'] --requests N --conns C\n"
		"                          [--body BYTES] [--path PATH] [--warmup W]\n"
		"       proxy_bench wake\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cert", required_argument, NULL, 'c' },  { "key", required_argument, NULL, 'k' },
		{ "port-file", required_argument, NULL, 'f' }, { "host", required_argument, NULL, 'H' },
		{ "port", required_argument, NULL, 'p' },  { "proxy", required_argument, NULL, 'x' },
		{ "cacert", required_argument, NULL, 'a' }, { "header", required_argument, NULL, 'h' },
		{ "requests", required_argument, NULL, 'n' }, { "conns", required_argument, NULL, 'C' },
		{ "body", required_argument, NULL, 'b' },  { "path", required_argument, NULL, 'P' },
		{ "warmup", required_argument, NULL, 'w' }, { "require-header", required_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cert = NULL, *key = NULL, *port_file = NULL, *cacert = NULL, *header = NULL;
	const char *path = "/v1/messages", *require = NULL;
	struct want want;
	struct cli cli = { .requests = 1000, .warmup = 50 };
	long conns = 1, body = 1024;
	bool is_server;
	int o;

	if (argc < 2)
		usage();
	if (!strcmp(argv[1], "wake") && argc == 2)
		return wake();
	if (!strcmp(argv[1], "server"))
		is_server = true;
	else if (!strcmp(argv[1], "client"))
		is_server = false;
	else
		usage();
	argv++;
	argc--;
	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'c': cert = optarg; break;
		case 'k': key = optarg; break;
		case 'f': port_file = optarg; break;
		case 'H': cli.host = optarg; break;
		case 'p': cli.port = optarg; break;
		case 'x': cli.proxy = optarg; break;
		case 'a': cacert = optarg; break;
		case 'h': header = optarg; break;
		case 'n': cli.requests = strtol(optarg, NULL, 10); break;
		case 'C': conns = strtol(optarg, NULL, 10); break;
		case 'b': body = strtol(optarg, NULL, 10); break;
		case 'P': path = optarg; break;
		case 'w': cli.warmup = strtol(optarg, NULL, 10); break;
		case 'r': require = optarg; break;
		default: usage();
		}
	}
	if (optind != argc)
		usage();
	if (is_server) {
		if (!cert || !key || !port_file)
			usage();
		if (require) {
			const char *colon = strchr(require, ':');

			if (!colon || colon == require)
				usage();
			want.name = require;
			want.name_len = (size_t)(colon - require);
			want.value = colon + 1 + strspn(colon + 1, " \t");
			want.value_len = strlen(want.value);
		}
		return server(cert, key, port_file, require ? &want : NULL);
	}
	if (!cli.host || !cli.port || !cacert || cli.requests < 1 || conns < 1 || conns > 1024 ||
	    body < 0 || body > (1 << 24) || cli.warmup < 0 || (cli.proxy && !strrchr(cli.proxy, ':')))
		usage();
	signal(SIGPIPE, SIG_IGN);
	return client(&cli, cacert, header, path, conns, body);
}
