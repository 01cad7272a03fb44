// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The session's ssh-agent relay (what it closes and what not: ssh_agent.h).
 * One thread accepts; each client gets a thread and its own connection to
 * the invoker's agent, opened at its first relayed request.  A message is
 * read whole (at most MSG_MAX, the agent protocol's own bound) before
 * anything is judged or sent on.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <openssl/evp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "ssh_agent.h"
#include "util.h"

#define MSG_MAX (256 * 1024)
#define CLIENTS_MAX 32
#define IDLE_MS (5 * 60 * 1000)
#define HOSTBOUND "publickey-hostbound-v00@openssh.com"
#define SESSION_BIND "session-bind@openssh.com"

enum {
	AGENT_FAILURE = 5,
	AGENTC_REQUEST_IDENTITIES = 11,
	AGENTC_SIGN_REQUEST = 13,
	AGENTC_EXTENSION = 27,
	MSG_USERAUTH_REQUEST = 50,
};

struct relay {
	int listen_fd;
	const char *upstream;
	const struct ssh_agent_hooks *h;
	atomic_int clients;
	atomic_ullong next_id;
};

struct client {
	struct relay *r;
	int fd, up;
	uint64_t id;
};

/* Exactly n bytes, each wait bounded by IDLE_MS: 0, -ECONNRESET at a clean end, or -errno. */
static int read_n(int fd, void *b, size_t n)
{
	for (size_t got = 0; got < n;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t k;
		int pr = poll(&p, 1, IDLE_MS);

		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0)
			return pr < 0 ? -errno : -ETIMEDOUT;
		k = read(fd, (char *)b + got, n - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -errno : -ECONNRESET;
		got += (size_t)k;
	}
	return 0;
}

/* One message: its body (type first) in *out (malloc'd), its length in *len. */
static int read_msg(int fd, unsigned char **out, uint32_t *len)
{
	unsigned char hdr[4];
	int r = read_n(fd, hdr, 4);

	if (r < 0)
		return r;
	*len = (uint32_t)hdr[0] << 24 | (uint32_t)hdr[1] << 16 | (uint32_t)hdr[2] << 8 | hdr[3];
	if (*len == 0 || *len > MSG_MAX)
		return -EMSGSIZE;
	*out = malloc(*len);
	if (!*out)
		return -ENOMEM;
	r = read_n(fd, *out, *len);
	if (r < 0) {
		free(*out);
		*out = NULL;
	}
	return r;
}

static int send_msg(int fd, const unsigned char *b, uint32_t len)
{
	unsigned char hdr[4] = { len >> 24, len >> 16, len >> 8, len };

	return write_all(fd, hdr, 4) ?: write_all(fd, b, len);
}

/* An SSH string at *p (bounded by end): its bytes and length; false if it does not fit. */
static bool ssh_string(const unsigned char **p, const unsigned char *end,
		       const unsigned char **s, uint32_t *n)
{
	if (end - *p < 4)
		return false;
	*n = (uint32_t)(*p)[0] << 24 | (uint32_t)(*p)[1] << 16 | (uint32_t)(*p)[2] << 8 | (*p)[3];
	*p += 4;
	if ((size_t)(end - *p) < *n)
		return false;
	*s = *p;
	*p += *n;
	return true;
}

static bool str_is(const unsigned char *s, uint32_t n, const char *want)
{
	return n == strlen(want) && !memcmp(s, want, n);
}

/*
 * A SIGN_REQUEST (body after its type byte): key blob, data, flags.  The
 * data must be a public-key user authentication request for that key
 * (RFC 4252 7); its user name is returned for the record.  NULL: what is
 * wrong.
 */
static const char *sign_shape(const unsigned char *b, uint32_t n, const unsigned char **key,
			      uint32_t *klen, char *user, size_t ulen)
{
	const unsigned char *p = b, *end = b + n, *data, *d, *dend, *s;
	bool hostbound = false;
	uint32_t dlen, sl;

	if (!ssh_string(&p, end, key, klen) || !ssh_string(&p, end, &data, &dlen) || end - p != 4)
		return "a malformed sign request";
	d = data;
	dend = data + dlen;
	if (!ssh_string(&d, dend, &s, &sl) || sl == 0 || sl > 64 || d == dend ||
	    *d++ != MSG_USERAUTH_REQUEST)
		return "the data to sign is not an SSH user authentication request";
	if (!ssh_string(&d, dend, &s, &sl) || sl > 255)
		return "the data to sign is not an SSH user authentication request";
	snprintf(user, ulen, "%.*s", (int)sl, (const char *)s);
	for (size_t i = 0; user[i]; i++)
		if ((unsigned char)user[i] < 0x20 || (unsigned char)user[i] == 0x7f)
			user[i] = '?';
	/* OpenSSH's host-bound method adds the server's host key after the user's. */
	if (!ssh_string(&d, dend, &s, &sl) || !str_is(s, sl, "ssh-connection") ||
	    !ssh_string(&d, dend, &s, &sl) ||
	    !(str_is(s, sl, "publickey") || (hostbound = str_is(s, sl, HOSTBOUND))) ||
	    d == dend || *d++ != 1 || !ssh_string(&d, dend, &s, &sl) ||
	    !ssh_string(&d, dend, &s, &sl))
		return "the data to sign is not a public-key authentication request";
	if (sl != *klen || memcmp(s, *key, sl))
		return "the data to sign names another key than the one asked to sign";
	if (hostbound && !ssh_string(&d, dend, &s, &sl))
		return "the data to sign is not a public-key authentication request";
	if (d != dend)
		return "the data to sign has more than an authentication request";
	return NULL;
}

/* An EXTENSION message (after its type) naming session-bind@openssh.com. */
static bool session_bind(const unsigned char *b, uint32_t n)
{
	const unsigned char *p = b, *s;
	uint32_t sl;

	return ssh_string(&p, b + n, &s, &sl) && str_is(s, sl, SESSION_BIND);
}

/* "SHA256:..." as ssh-keygen -l prints it. */
static void fingerprint(const unsigned char *key, uint32_t n, char *out, size_t len)
{
	unsigned char md[EVP_MAX_MD_SIZE], b64[64];
	unsigned int mdl = 0;
	int k;

	if (!EVP_Digest(key, n, md, &mdl, EVP_sha256(), NULL)) {
		snprintf(out, len, "?");
		return;
	}
	k = EVP_EncodeBlock(b64, md, (int)mdl);
	while (k > 0 && b64[k - 1] == '=')
		k--;
	snprintf(out, len, "SHA256:%.*s", k, (const char *)b64);
}

static int upstream(struct client *c)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd;

	if (c->up >= 0)
		return 0;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", c->r->upstream);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		int e = -errno;

		close(fd);
		return e;
	}
	c->up = fd;
	return 0;
}

/* The request to the invoker's agent, its answer back. */
static int pass(struct client *c, const unsigned char *m, uint32_t len)
{
	unsigned char *ans = NULL;
	uint32_t alen;
	int r = upstream(c);

	r = r ?: send_msg(c->up, m, len);
	r = r ?: read_msg(c->up, &ans, &alen);
	r = r ?: send_msg(c->fd, ans, alen);
	free(ans);
	return r;
}

static void *serve_client(void *arg)
{
	struct client *c = arg;
	const struct ssh_agent_hooks *h = c->r->h;
	struct stat st;
	uint64_t self = fstat(c->fd, &st) == 0 ? (uint64_t)st.st_ino : 0;

	for (;;) {
		static const unsigned char failure[] = { AGENT_FAILURE };
		unsigned char *m = NULL;
		uint32_t len;
		int r = read_msg(c->fd, &m, &len);
		const char *why = NULL;
		char whybuf[320] = "", user[256] = "", fp[64] = "";

		if (r < 0)
			break;
		if (m[0] == AGENTC_REQUEST_IDENTITIES && len == 1) {
			r = pass(c, m, len);
			if (r < 0)
				h->record(h->ctx, json_pack("{s:I,s:s,s:s,s:s}", "ssh_agent",
							    (json_int_t)c->id, "request", "identities",
							    "outcome", "failed", "reason",
							    "the invoker's agent did not answer"));
		} else if (m[0] == AGENTC_SIGN_REQUEST) {
			const unsigned char *key = NULL;
			uint32_t klen = 0;
			uint64_t grant = 0;

			why = sign_shape(m + 1, len - 1, &key, &klen, user, sizeof(user));
			if (key && klen)
				fingerprint(key, klen, fp, sizeof(fp));
			if (!why && h->may_sign(h->ctx, self ? unix_peer((unsigned)self) : 0, &grant,
						whybuf, sizeof(whybuf)) < 0)
				why = whybuf;
			if (!why) {
				r = pass(c, m, len);
				h->record(h->ctx, json_pack("{s:I,s:s,s:s,s:s,s:I,s:s,s:s*}", "ssh_agent",
							    (json_int_t)c->id, "request", "sign",
							    "key", fp, "user", user, "grant",
							    (json_int_t)grant, "outcome",
							    r < 0 ? "failed" : "relayed by grant",
							    "reason", r < 0 ?
							    "the invoker's agent did not answer" : NULL));
			}
		} else if (m[0] == AGENTC_EXTENSION && session_bind(m + 1, len - 1)) {
			/*
			 * OpenSSH's session binding (its PROTOCOL.agent): the server's
			 * host key and the session id, signed by that host, told to
			 * the invoker's agent, which then signs only for that session
			 * (and applies its own destination constraints).  It only
			 * narrows what a signature can serve.
			 */
			r = pass(c, m, len);
		} else {
			snprintf(whybuf, sizeof(whybuf), "agent protocol message %u is not relayed "
				 "(only the key list and signatures for an approved ssh push are)",
				 (unsigned)m[0]);
			why = whybuf;
		}
		if (why) {
			h->record(h->ctx, json_pack("{s:I,s:s,s:s*,s:s*,s:s,s:s}", "ssh_agent",
						    (json_int_t)c->id, "request",
						    m[0] == AGENTC_SIGN_REQUEST ? "sign" : "other",
						    "key", fp[0] ? fp : NULL, "user",
						    user[0] ? user : NULL, "outcome", "refused",
						    "reason", why));
			r = send_msg(c->fd, failure, sizeof(failure));
		}
		free(m);
		if (r < 0)
			break;
	}
	close(c->fd);
	if (c->up >= 0)
		close(c->up);
	atomic_fetch_sub(&c->r->clients, 1);
	free(c);
	return NULL;
}

static void *accept_loop(void *arg)
{
	struct relay *r = arg;

	for (;;) {
		struct pollfd p = { .fd = r->listen_fd, .events = POLLIN };
		struct client *c;
		pthread_attr_t at;
		pthread_t t;
		int fd;

		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			break;
		fd = accept4(r->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		c = calloc(1, sizeof(*c));
		if (!c || atomic_fetch_add(&r->clients, 1) >= CLIENTS_MAX) {
			if (c)
				atomic_fetch_sub(&r->clients, 1);
			free(c);
			close(fd);
			continue;
		}
		*c = (struct client){ .r = r, .fd = fd, .up = -1,
				      .id = atomic_fetch_add(&r->next_id, 1) + 1 };
		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&t, &at, serve_client, c) != 0) {
			close(fd);
			free(c);
			atomic_fetch_sub(&r->clients, 1);
		}
		pthread_attr_destroy(&at);
	}
	return NULL;
}

int ssh_agent_start(int listen_fd, const char *up, const struct ssh_agent_hooks *h)
{
	struct relay *r = calloc(1, sizeof(*r));
	pthread_t t;
	int e;

	if (!r)
		return -ENOMEM;
	*r = (struct relay){ .listen_fd = listen_fd, .upstream = up, .h = h };
	e = pthread_create(&t, NULL, accept_loop, r);
	if (e) {
		free(r);
		return -e;
	}
	pthread_detach(t);
	return 0;
}
