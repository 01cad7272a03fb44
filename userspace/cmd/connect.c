// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `cordon connect HOST PORT`: inside a session, a byte stream to HOST:PORT
 * on stdin and stdout, through the session's egress broker ($HTTPS_PROXY)
 * by CONNECT: ssh's ProxyCommand (cordon run sets GIT_SSH_COMMAND with it,
 * ssh_session.c).  ssh ignores HTTPS_PROXY and the floor refuses it a
 * direct connect; the broker admits the CONNECT only on an approved push's
 * grant for this host and port and this process tree (egress/grants.c).
 * This program holds no privilege and decides nothing: a refusal is the
 * broker's, printed as it said it, and the exit status is 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cmd.h"
#include "util.h"

#define HEAD_MAX 8192

/* http://HOST:PORT[/] (the form cordon run sets) into host and port. */
static int proxy_of(const char *v, char *host, size_t hlen, char *port, size_t plen)
{
	const char *h, *c, *e;

	if (!v || strncmp(v, "http://", 7))
		return -EINVAL;
	h = v + 7;
	if (*h == '[') {
		e = strchr(h, ']');
		if (!e || e[1] != ':')
			return -EINVAL;
		snprintf(host, hlen, "%.*s", (int)(e - h - 1), h + 1);
		c = e + 1;
	} else {
		c = strrchr(h, ':');
		if (!c || c == h)
			return -EINVAL;
		snprintf(host, hlen, "%.*s", (int)(c - h), h);
	}
	snprintf(port, plen, "%.*s", (int)strcspn(c + 1, "/"), c + 1);
	return port[0] ? 0 : -EINVAL;
}

static int dial(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV }, *ai, *a;
	int fd = -ENOENT;

	if (getaddrinfo(host, port, &hints, &ai))
		return -EHOSTUNREACH;
	for (a = ai; a; a = a->ai_next) {
		int s = socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (s >= 0 && connect(s, a->ai_addr, a->ai_addrlen) == 0) {
			fd = s;
			break;
		}
		fd = -errno;
		if (s >= 0)
			close(s);
	}
	freeaddrinfo(ai);
	return fd;
}

/* Both ways until the server closes; stdin's end is passed on as a half close. */
static int relay(int s)
{
	struct pollfd p[2] = { { .fd = STDIN_FILENO, .events = POLLIN }, { .fd = s, .events = POLLIN } };
	char buf[65536];

	for (;;) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (int i = 0; i < 2; i++) {
			ssize_t n;

			if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			n = read(p[i].fd, buf, sizeof(buf));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				if (i == 1)
					return n < 0 ? -errno : 0;
				(void)shutdown(s, SHUT_WR);
				p[0].fd = -1;
				continue;
			}
			if (write_all(i ? STDOUT_FILENO : s, buf, (size_t)n) < 0)
				return -EPIPE;
		}
	}
}

int cmd_connect(int argc, char **argv)
{
	const char *proxy = getenv("HTTPS_PROXY") ?: getenv("https_proxy");
	char phost[256], pport[16], head[HEAD_MAX + 1], req[600], *end, *e;
	size_t len = 0;
	long port;
	int s, code;

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		printf("usage: cordon connect HOST PORT\n"
		       "Inside a session: stdin and stdout to HOST:PORT through the session's\n"
		       "egress broker ($HTTPS_PROXY), by CONNECT (ssh's ProxyCommand for an\n"
		       "approved git push over ssh).  Exit 1 when the broker refuses.\n");
		return 0;
	}
	for (int i = 1; i < argc; i++)
		if (argv[i][0] == '-') {
			log_err("connect: unknown option '%s' (usage: cordon connect HOST PORT)", argv[i]);
			return 2;
		}
	if (argc != 3) {
		fprintf(stderr, "usage: cordon connect HOST PORT\n");
		return 2;
	}
	port = strtol(argv[2], &e, 10);
	if (!argv[1][0] || strlen(argv[1]) > 255 || strpbrk(argv[1], " \t\r\n/@") || *e ||
	    port < 1 || port > 65535) {
		fprintf(stderr, "cordon connect: \"%s\" \"%s\": a host name and a port (1-65535) "
			"expected\n", argv[1], argv[2]);
		return 2;
	}
	if (proxy_of(proxy, phost, sizeof(phost), pport, sizeof(pport)) < 0) {
		fprintf(stderr, "cordon connect: HTTPS_PROXY is %s%s%s: this runs inside a cordon "
			"session with an egress broker (http://HOST:PORT)\n", proxy ? "\"" : "",
			proxy ? proxy : "not set", proxy ? "\"" : "");
		return 1;
	}
	s = dial(phost, pport);
	if (s < 0) {
		fprintf(stderr, "cordon connect: the egress broker at %s:%s: %s\n", phost, pport,
			strerror(-s));
		return 1;
	}
	snprintf(req, sizeof(req), strchr(argv[1], ':') ? "CONNECT [%s]:%ld HTTP/1.1\r\n"
		 "Host: [%s]:%ld\r\n\r\n" : "CONNECT %s:%ld HTTP/1.1\r\nHost: %s:%ld\r\n\r\n",
		 argv[1], port, argv[1], port);
	if (write_all(s, req, strlen(req)) < 0) {
		fprintf(stderr, "cordon connect: the egress broker: %m\n");
		return 1;
	}
	/* The broker's answer, byte by byte up to its blank line: what follows is the stream's. */
	while (len < HEAD_MAX) {
		ssize_t n = read(s, head + len, 1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len++;
		head[len] = '\0';
		if (len >= 4 && !memcmp(head + len - 4, "\r\n\r\n", 4))
			break;
	}
	head[len] = '\0';
	if (sscanf(head, "HTTP/1.%*c %d", &code) != 1) {
		fprintf(stderr, "cordon connect: %s:%ld: the egress broker closed the connection "
			"without an answer\n", argv[1], port);
		return 1;
	}
	if (code != 200) {
		char body[1024];
		ssize_t n;
		size_t b = 0;

		while (b < sizeof(body) - 1 && (n = read(s, body + b, sizeof(body) - 1 - b)) > 0)
			b += (size_t)n;
		body[b] = '\0';
		end = strchr(head, '\r');
		if (end)
			*end = '\0';
		while (b && (body[b - 1] == '\n' || body[b - 1] == '\r'))
			body[--b] = '\0';
		fprintf(stderr, "cordon connect: %s:%ld refused by the session's egress broker "
			"(%s)%s%s\n", argv[1], port, head, b ? ": " : "",
			!strncmp(body, "cordon: ", 8) ? body + 8 : body);
		return 1;
	}
	return relay(s) < 0 ? 1 : 0;
}
