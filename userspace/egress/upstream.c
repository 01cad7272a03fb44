// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Where the broker connects: name resolution and the address rule (upstream.h). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "upstream.h"
#include "util.h"

#define CONNECT_TIMEOUT_MS 10000

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
int open_upstream(struct conn *c, char *why, size_t wlen)
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
		/* A granted name: the human saw it; link-local never (grants.c). */
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
int open_credential_upstream(struct conn *c, size_t i, char *why, size_t wlen)
{
	const char *sentinel;
	const struct pol_credential *cr = creds_at(c->hp->creds, i, &sentinel);

	return cr && cr->upstream_host ? open_gateway(c, cr, why, wlen) : open_upstream(c, why, wlen);
}

