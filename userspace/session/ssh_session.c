// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A git push over ssh, approved, reaches its remote (the supervisor's side;
 * the grant is push_grant.c's, the tunnel and the agent relay the broker's,
 * egress/tunnel.c and ssh_agent.c).
 *
 * ssh ignores HTTPS_PROXY and the floor refuses it a direct connect, so the
 * agent's environment carries GIT_SSH_COMMAND (unless the invoker passed
 * one with --env) naming:
 *   - ProxyCommand=SSH_DIR/cordon connect %h %p: cordon's own binary, bound
 *     read-only into the view on an empty placeholder (world.c, self_at),
 *     executable by a rule of the session's own (so a test or an install
 *     needs no copy in the workspace).  It CONNECTs through the broker,
 *     which admits it only on a live grant for that host:port held by the
 *     approved push's process tree;
 *   - UserKnownHostsFile=SSH_DIR/NAME.known_hosts: the invoker's known host
 *     keys (public), copied at start (the session cannot read ~/.ssh);
 *     StrictHostKeyChecking=yes, so an unknown or changed host key ends
 *     the push; the agent cannot write the copy (root's, protected);
 *   - SSH_AUTH_SOCK=SSH_DIR/NAME.agent when the invoker has an agent: the
 *     broker's relay, which lists the invoker's keys and signs only for a
 *     process of a live ssh grant's tree (ssh_agent.h).  The invoker's
 *     socket path and the keys stay outside.
 * Attack closed: the known-hosts file planted by the agent to accept a
 * man-in-the-middle key (it is root's, read-only, outside the workspace).
 * The binary in the view runs with the agent's rights only (no set-id, no
 * new privileges): it gives the agent nothing it could not build itself.
 * What it cannot close: the copy shows the agent which hosts the invoker
 * knows (unless ~/.ssh/known_hosts is hashed); an agent that sets its own
 * GIT_SSH_COMMAND loses the ProxyCommand and cannot connect at all.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pwd.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "reap.h"
#include "ssh_session.h"
#include "supervisor.h"
#include "util.h"

#define SSH_DIR CORDON_RUN_SSH_DIR
#define KNOWN_MAX (1 << 20)

/* The invoking user's known_hosts: SUDO_UID's home, or $HOME when cordon was started as root. */
static int invoker_known_hosts(char *path, size_t len, uid_t *owner)
{
	const char *sudo = getenv("SUDO_UID"), *home = getenv("HOME");
	struct passwd *pw = NULL;

	if (sudo && *sudo)
		pw = getpwuid((uid_t)strtoul(sudo, NULL, 10));
	if (pw) {
		home = pw->pw_dir;
		*owner = pw->pw_uid;
	} else {
		*owner = getuid();
	}
	if (!home || home[0] != '/')
		return -ENOENT;
	snprintf(path, len, "%s/.ssh/known_hosts", home);
	return 0;
}

/*
 * Copied, not bound: read once, no symlink followed at its last component,
 * a regular file the invoker (or root) owns, at most KNOWN_MAX bytes (root
 * reads here: a link planted in ~/.ssh to /etc/shadow would otherwise be
 * handed to the agent).  None: an empty file (every host unknown).
 */
static int copy_known_hosts(const char *to)
{
	char from[PATH_MAX], *buf = NULL;
	struct stat st;
	uid_t owner;
	ssize_t n = 0;
	int in = -1, out, r = 0;

	if (invoker_known_hosts(from, sizeof(from), &owner) == 0)
		in = open(from, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (in >= 0 && (fstat(in, &st) < 0 || !S_ISREG(st.st_mode) ||
			(st.st_uid != owner && st.st_uid != 0) || st.st_size > KNOWN_MAX)) {
		log_warn("run: %s: not a regular file of its user's under %d bytes: the agent's "
			 "ssh knows no host", from, KNOWN_MAX);
		close(in);
		in = -1;
	}
	if (in >= 0) {
		buf = malloc(KNOWN_MAX);
		n = buf ? read(in, buf, KNOWN_MAX) : -1;
		close(in);
		if (n < 0) {
			free(buf);
			return -EIO;
		}
	}
	(void)unlink(to);
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (out < 0 || fchmod(out, 0644) < 0 || (n && write_all(out, buf, (size_t)n) < 0))
		r = -errno ?: -EIO;
	if (out >= 0)
		close(out);
	free(buf);
	return r;
}

/* The empty file the view binds cordon's binary onto (world.c). */
static int placeholder(const char *p)
{
	struct stat st;
	int fd = open(p, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0755);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022)) {
		close(fd);
		return -EPERM;
	}
	close(fd);
	return 0;
}

int ssh_session_prepare(struct sup *s)
{
	const char *up = getenv("SSH_AUTH_SOCK");
	struct stat st;
	int r;

	if (!s->egress_port)
		return 0;
	/*
	 * Only for an invoker with an ssh-agent to relay: the session cannot
	 * read a key on disk (~/.ssh is a credential store), so without an
	 * agent no push over ssh could authenticate, and the session gets no
	 * ssh wiring at all (no binary in its view, no known hosts).
	 */
	if (!up || up[0] != '/' || strlen(up) >= 108)
		return 0;
	if (mkdir(SSH_DIR, 0711) < 0 && errno != EEXIST) {
		r = -errno;
		goto fail;
	}
	/* Root's own directory, not something planted there. */
	if (lstat(SSH_DIR, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & 022)) {
		log_err("run: %s must be a directory owned by root, writable by root only", SSH_DIR);
		return -EPERM;
	}
	snprintf(s->ssh_self, sizeof(s->ssh_self), SSH_DIR "/cordon");
	r = placeholder(s->ssh_self);
	r = r ?: pol_grant_path(s->pol, "cordon-connect", s->ssh_self,
				CORDON_FS_READ | CORDON_FS_EXEC);
	r = r ?: pol_protect_path(s->pol, s->ssh_self);
	if (r < 0) {
		log_err("run: cordon's binary for the session (%s): %s", s->ssh_self, strerror(-r));
		s->ssh_self[0] = '\0';
		return r;
	}
	snprintf(s->ssh_known, sizeof(s->ssh_known), SSH_DIR "/%s.known_hosts", s->name);
	r = copy_known_hosts(s->ssh_known);
	r = r ?: pol_grant_path(s->pol, "ssh-known-hosts", s->ssh_known, CORDON_FS_READ);
	r = r ?: pol_protect_path(s->pol, s->ssh_known);
	if (r < 0) {
		log_err("run: the known host keys for the session (%s): %s", s->ssh_known,
			strerror(-r));
		return r;
	}
	snprintf(s->ssh_upstream, sizeof(s->ssh_upstream), "%s", up);
	snprintf(s->ssh_agent, sizeof(s->ssh_agent), SSH_DIR "/%s.agent", s->name);
	/* Root's, group the agent's, 0660, as the MCP socket (mcp_session.c). */
	r = unix_listen(s->ssh_agent, 0);
	if (r >= 0 && (chown(s->ssh_agent, 0, s->gid) < 0 || chmod(s->ssh_agent, 0660) < 0)) {
		int e = -errno;

		close(r);
		r = e;
	}
	if (r < 0) {
		log_err("run: the session's ssh-agent socket %s: %s", s->ssh_agent, strerror(-r));
		(void)unlink(s->ssh_agent);
		s->ssh_agent[0] = '\0';
		return r;
	}
	s->ssh_agent_listen = r;
	r = pol_grant_path(s->pol, "ssh-agent-socket", s->ssh_agent, CORDON_FS_WRITE);
	if (r < 0)
		log_err("run: cannot grant the agent its ssh-agent socket: %s", strerror(-r));
	return r;
fail:
	log_err("run: %s: %s", SSH_DIR, strerror(-r));
	return r;
}

const char *ssh_session_command(const struct sup *s, char *buf, size_t len)
{
	int n;

	if (!s->ssh_self[0] || !s->ssh_known[0])
		return NULL;
	for (int i = 0; i < s->opt->n_env; i++)
		if (!strcmp(s->opt->env[i], "GIT_SSH_COMMAND") && getenv("GIT_SSH_COMMAND"))
			return NULL;
	/* BatchMode: no prompt for a password or passphrase nobody could answer. */
	n = snprintf(buf, len, "ssh -o 'ProxyCommand=%s connect %%h %%p' -o 'UserKnownHostsFile=%s' "
		     "-o StrictHostKeyChecking=yes -o UpdateHostKeys=no -o BatchMode=yes",
		     s->ssh_self, s->ssh_known);
	return n > 0 && (size_t)n < len ? buf : NULL;
}

void ssh_session_stop(struct sup *s)
{
	if (s->ssh_agent_listen >= 0)
		close(s->ssh_agent_listen);
	s->ssh_agent_listen = -1;
	if (s->ssh_agent[0])
		(void)unlink(s->ssh_agent);
	if (s->ssh_known[0])
		(void)unlink(s->ssh_known);
	s->ssh_agent[0] = s->ssh_known[0] = '\0';
}
