// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `cordon run --mcp SERVERS.json`: the session's MCP proxy, the agent's one
 * way to its tools.
 *
 * The supervisor binds the socket (RUN_MCP_DIR/SESSION.sock, root's, group
 * the agent's, mode 0660) before the session's rules are compiled, and
 * grants the agent write on exactly that path (pol_grant_path), which is
 * what connecting to a Unix socket takes: the BPF LSM floor keys the grant
 * by the socket's inode, the fallback's supervisor emulates the connect
 * after the same judgement.  The invariant "cordon-mcp" refuses creating,
 * removing or re-moding anything in RUN_MCP_DIR, so the agent cannot put
 * another socket where its own is expected.  The proxy (cordon mcp-proxy,
 * outside the session, as root, killed with the supervisor) accepts a peer
 * only from this session's cgroup (or host root: the emulating
 * supervisor), so another session's agent that reached the socket is still
 * refused.
 *
 * The proxy talks to the supervisor over a helper channel (helper.c): its
 * records go into the session's log, and an escalated tools/call waits in
 * the proxy (nothing reaches the server) as a pending request of the
 * session, decided like a held exec or connect.
 *
 * What this cannot close: what the proxy's servers do inside their own
 * sessions is their profiles' business; a proxy that died leaves the agent
 * without tools (its connect is refused), never with unjudged ones.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "audit.h"
#include "jsonrpc.h"
#include "supervisor.h"
#include "helper.h"
#include "mcp_session.h"
#include "util.h"

#define RUN_MCP_DIR "/run/cordon-mcp"

int mcp_session_listen(struct sup *s)
{
	struct stat st;
	int r;

	if (mkdir(RUN_MCP_DIR, 0711) < 0 && errno != EEXIST) {
		r = -errno;
		log_err("run: --mcp: %s: %s", RUN_MCP_DIR, strerror(-r));
		return r;
	}
	/* Root's own directory, not something planted there. */
	if (lstat(RUN_MCP_DIR, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & 022)) {
		log_err("run: --mcp: %s must be a directory owned by root, writable by root only",
			RUN_MCP_DIR);
		return -EPERM;
	}
	snprintf(s->mcp_path, sizeof(s->mcp_path), RUN_MCP_DIR "/%s.sock", s->name);
	/*
	 * Root's, group the agent's, 0660: the agent can connect but, not
	 * owning it, cannot re-mode it for others (the fallback has no
	 * metadata right to stop an owner's chmod).  Set before any agent runs.
	 */
	r = unix_listen(s->mcp_path, 0);
	if (r >= 0 && (chown(s->mcp_path, 0, s->gid) < 0 || chmod(s->mcp_path, 0660) < 0)) {
		int e = -errno;

		close(r);
		r = e;
	}
	if (r < 0) {
		log_err("run: --mcp: %s: %s", s->mcp_path, strerror(-r));
		(void)unlink(s->mcp_path);
		s->mcp_path[0] = '\0';
		return r;
	}
	s->mcp_listen = r;
	r = pol_grant_path(s->pol, "mcp-socket", s->mcp_path, CORDON_FS_WRITE);
	if (r < 0) {
		log_err("run: --mcp: cannot grant the agent its MCP socket: %s", strerror(-r));
		return r;
	}
	return 0;
}

int mcp_session_start(struct sup *s)
{
	char self[PATH_MAX], lfd[] = "3", sfd[] = "4";
	const char *argv[48 + 2 * RUN_MAX_ENV];
	int fds[2] = { s->mcp_listen, s->steps.fd }, n, chan_arg, r;
	json_t *ready = NULL;

	n = helper_argv_start(argv, self, "mcp-proxy");
	if (n < 0) {
		log_err("run: --mcp: /proc/self/exe: %s", strerror(-n));
		return n;
	}
	argv[n++] = "--servers";
	argv[n++] = s->opt->mcp;
	n = helper_argv_session(s->opt->policy, s->workspace, s->user, argv, n);
	argv[n++] = "--listen-fd";
	argv[n++] = lfd;
	argv[n++] = "--steps-fd";
	argv[n++] = sfd;
	argv[n++] = "--channel-fd";
	chan_arg = n++;
	argv[n++] = "--session";
	argv[n++] = s->name;
	argv[n++] = "--audit";
	argv[n++] = s->audit_path;
	n = helper_argv_vars(s->opt->vars, s->opt->n_vars, argv, n);
	argv[n] = NULL;
	r = helper_start(&s->mcp, argv, chan_arg, fds, 2, &ready);
	json_decref(ready);
	if (r < 0) {
		log_err("run: --mcp %s: the MCP proxy did not start%s", s->opt->mcp,
			r == -ETIMEDOUT ? " in time" : "");
		return r;
	}
	/* Only the proxy holds it now: if the proxy dies, connects fail at once. */
	close(s->mcp_listen);
	s->mcp_listen = -1;
	return 0;
}

void mcp_session_stop(struct sup *s)
{
	/* SIGTERM: it stops its servers (their supervisors seal their logs). */
	helper_stop(&s->mcp);
	if (s->mcp_listen >= 0)
		close(s->mcp_listen);
	s->mcp_listen = -1;
	if (s->mcp_path[0])
		(void)unlink(s->mcp_path);
}
