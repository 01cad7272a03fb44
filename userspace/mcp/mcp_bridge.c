// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `cordon mcp-bridge [SOCKET]`: an MCP server, as far as the agent's MCP
 * client can tell (a stdio command), that is really the session's MCP
 * proxy: bytes from stdin go to the socket ($CORDON_MCP_SOCKET by default),
 * bytes from the socket go to stdout.  It runs inside the session, as the
 * agent, with no privilege: it judges nothing and holds nothing (the proxy
 * does both), so there is nothing in it to attack that the agent could not
 * do with its own connect().  Stdin's end is passed on as a half-close;
 * the bridge exits when the proxy closes its side.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "mcp_proxy.h"
#include "util.h"

int cmd_mcp_bridge(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : getenv("CORDON_MCP_SOCKET");
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	bool in_open = true;
	int fd;

	if (argc == 2 && argv[1][0] == '-' && strcmp(argv[1], "--help") && strcmp(argv[1], "-h")) {
		log_err("mcp-bridge: unknown option '%s' (usage: cordon mcp-bridge [SOCKET])", argv[1]);
		return 2;
	}
	if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
		bool help = argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"));

		fprintf(help ? stdout : stderr,
			"usage: cordon mcp-bridge [SOCKET]\n"
			"Connects stdin/stdout to the session's MCP proxy (SOCKET, default\n"
			"$CORDON_MCP_SOCKET, set by cordon run --mcp).  Use it as the command of\n"
			"the one MCP server the agent's client is configured with.\n");
		return help ? 0 : 2;
	}
	if (!path || !*path) {
		log_err("mcp-bridge: no socket: CORDON_MCP_SOCKET is not set (is this a "
			"cordon run --mcp session?)");
		return 2;
	}
	if (strlen(path) >= sizeof(a.sun_path)) {
		log_err("mcp-bridge: %s: path too long", path);
		return 2;
	}
	strcpy(a.sun_path, path);
	signal(SIGPIPE, SIG_IGN);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		log_err("mcp-bridge: %s: %m", path);
		return 1;
	}
	for (;;) {
		struct pollfd p[2] = {
			{ .fd = fd, .events = POLLIN },
			{ .fd = in_open ? STDIN_FILENO : -1, .events = POLLIN },
		};
		char buf[65536];
		ssize_t n;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		if (p[0].revents) {
			n = read(fd, buf, sizeof(buf));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				return 0;       /* the proxy closed: done */
			if (write_all(STDOUT_FILENO, buf, (size_t)n) < 0)
				return 1;
		}
		if (p[1].revents) {
			n = read(STDIN_FILENO, buf, sizeof(buf));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				in_open = false;
				(void)shutdown(fd, SHUT_WR);
			} else if (write_all(fd, buf, (size_t)n) < 0) {
				return 1;
			}
		}
	}
}
