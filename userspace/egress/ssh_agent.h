/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The session's ssh-agent (ssh_agent.c): a socket the agent's ssh is given
 * as SSH_AUTH_SOCK, served by the egress broker, relaying to the invoker's
 * own agent, whose keys never leave it.
 *
 * Per message of the agent protocol (draft-miller-ssh-agent):
 *   - REQUEST_IDENTITIES: relayed (public keys only);
 *   - SIGN_REQUEST: relayed only when its data is an SSH user
 *     authentication request (RFC 4252 7: session id, USERAUTH_REQUEST,
 *     user, "ssh-connection", "publickey", TRUE, algorithm, the same key),
 *     and the hooks' may_sign admits the client: every process holding the
 *     client's end of the connection belongs to a live grant's tree for an
 *     ssh remote (grants.c, the broker's grant rule);
 *     (or OpenSSH's host-bound variant, which adds the server's key);
 *   - the session-bind@openssh.com extension: relayed (it only narrows
 *     what the invoker's agent will sign: that session, that host);
 *   - anything else (add or remove keys, lock, unlock, other extensions,
 *     the SSH-1 messages): SSH_AGENT_FAILURE, never relayed.
 * Each sign request and each refusal is recorded.
 *
 * Attack closed: a process of the session that the human did not approve
 * (the agent's own shell, a build script, a process racing the push)
 * using the invoker's keys to log in anywhere, or to sign other data (a
 * git commit or tag signature, an sshsig file, a certificate) with them;
 * the agent adding its own key to the invoker's agent, removing or
 * locking theirs.  The client is judged by the holders of its socket, not
 * SO_PEERCRED: in the fallback posture the Unix connector makes the
 * connection (its pid is the peer's), and a socket connected by one
 * process and passed to another keeps the first's credentials.
 * What it cannot close: the approved push's tree (its hooks, the programs
 * its config names) may have any user-authentication request signed while
 * its grant lives: the session id is opaque here, so a signature for a
 * login to another server is possible, though the tree's network reaches
 * only the approved host and port; the invoker's agent may confirm each
 * use (ssh-add -c) where that matters.
 */
#ifndef CORDON_SSH_AGENT_H
#define CORDON_SSH_AGENT_H

#include <jansson.h>
#include <stdint.h>

struct ssh_agent_hooks {
	void *ctx;
	/*
	 * May the client whose end of the connection is Unix socket inode
	 * PEER have a signature?  0 with *grant set; <0 with WHY.
	 */
	int (*may_sign)(void *ctx, uint64_t peer, uint64_t *grant, char *why, size_t wlen);
	/* A record for the session's log (takes FIELDS). */
	void (*record)(void *ctx, json_t *fields);
};

/*
 * Serve LISTEN_FD (a listening Unix stream socket) on a thread of its
 * own, each client on one more, relaying to UPSTREAM (a path, connected
 * anew for each client).  The hooks must live as long as the process.
 * 0, or -errno.
 */
int ssh_agent_start(int listen_fd, const char *upstream, const struct ssh_agent_hooks *h);

#endif
