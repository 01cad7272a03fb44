// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* One client connection, accepted to closed (conn.h). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "conn.h"
#include "cred_pipeline.h"
#include "grants.h"
#include "broker_judge.h"
#include "tunnel.h"
#include "upstream.h"
#include "util.h"

#define MAX_CONNS 256

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
			broker_reply(c, -r, why[0] ? why : "malformed request");
			return r;
		}
		if (c->len >= HTTP_MAX_HEAD) {
			broker_reply(c, 431, "request head too large");
			return -431;
		}
		r = wait_readable(c->fd, deadline);
		if (r == 0) {
			/* Slowloris: the head did not arrive in time. */
			broker_reply(c, 408, "the request head did not arrive in time");
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
static void serve(struct conn *c)
{
	struct pol_result res;
	json_t *event;
	char why[640];
	int head = read_head(c), r, ci = -1;

	if (head <= 0)
		return;
	if (c->req.form == HTTP_ORIGIN_FORM || c->req.form == HTTP_ASTERISK_FORM) {
		broker_reply(c, 400, "this is a proxy: send CONNECT host:port, or an absolute URL");
		return;
	}
	if (c->req.form == HTTP_ABSOLUTE_FORM && strcmp(c->req.scheme, "http")) {
		broker_reply(c, 400, "https:// goes through CONNECT");
		return;
	}
	event = event_of(c);
	if (!broker_judge(c, event, c->req.host, c->req.port, &res, why, sizeof(why))) {
		broker_reply(c, 403, why);
		goto out;
	}
	c->inner = true;
	if (c->grant_ssh && c->req.form != HTTP_AUTHORITY_FORM) {
		snprintf(why, sizeof(why), "%s:%u is granted to an ssh push: CONNECT only",
			 c->req.host, c->req.port);
		broker_reply(c, 403, why);
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
			broker_reply(c, 403, why);
			goto out;
		}
	}
	if (spend_request(c->hp, why, sizeof(why)) < 0) {
		RECORD(c->hp, "http", "{s:I,s:O,s:s,s:s}", "conn", (json_int_t)c->id, "event",
		       event, "outcome", "refused", "reason", why);
		broker_reply(c, 403, why);
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
		cred_pipeline_tunnel(c, (size_t)head, event, ci);
		goto out;
	}
	if (r < 0) {
		RECORD(c->hp, "http", "{s:I,s:O,s:s,s:s}", "conn", (json_int_t)c->id, "event",
		       event, "outcome", "refused", "reason", why);
		broker_reply(c, r == -EACCES ? 403 : r == -ETIMEDOUT ? 504 : 502, why);
		goto out;
	}
	c->up = r;
	if (ci >= 0)
		cred_pipeline_tunnel(c, (size_t)head, event, ci);
	else if (c->grant_ssh)
		tunnel_ssh(c, (size_t)head, event);
	else if (c->req.form == HTTP_AUTHORITY_FORM)
		tunnel_connect(c, (size_t)head, event);
	else
		tunnel_forward(c, (size_t)head, event);
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
int conn_peer_check(int listen_fd)
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
		broker_reply(c, 403, "this proxy serves one cordon session, and this client is not in it");
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

void conn_on_signal(int sig)
{
	got_signal = sig;
}

int conn_accept_loop(struct hp *hp)
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

