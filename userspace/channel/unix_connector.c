// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The session's Unix connector (unix_connector.h): the supervisor's side,
 * which starts it and hands it each connect, and `cordon unix-connector`.
 *
 * A request is one SOCK_SEQPACKET message on the connector's channel: the
 * socket's last component as data, and three descriptors: a reply socket
 * (one end of a pair made for this request), the agent's socket, the
 * directory.  The connector answers with one int, the errno (0: connected)
 * on the reply socket, from a thread of its own, so a listener with a full
 * backlog holds only the connect that waits for it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "helper_argv.h"
#include "unix_connector.h"
#include "util.h"

#define NAME_MAX_UN ((int)sizeof(((struct sockaddr_un *)0)->sun_path))
#define CREQ_MSG (NAME_MAX_UN + 1 + PATH_MAX)

/* --- the supervisor's side ------------------------------------------------------ */

int unix_connector_start(struct unix_conn *conn, uid_t uid, gid_t gid, const gid_t *groups,
			 int n_groups)
{
	char self[PATH_MAX], uids[16], gids[16], parent[16], list[64 * 12] = "", cg[PATH_MAX];
	const char *argv[20];
	int sp[2], n, r;
	pid_t pid;

	if (conn->pid > 0)
		return 0;
	if (!conn->cgroup[0])
		return -ENOTSUP;
	snprintf(cg, sizeof(cg), "%s", conn->cgroup);
	*strrchr(cg, '/') = '\0';
	r = cg_mkdir(cg);
	r = r ?: cg_mkdir(conn->cgroup);
	if (r < 0)
		return r;
	n = helper_argv_start(argv, self, "unix-connector");
	if (n < 0)
		return n;
	snprintf(uids, sizeof(uids), "%u", (unsigned)uid);
	snprintf(gids, sizeof(gids), "%u", (unsigned)gid);
	snprintf(parent, sizeof(parent), "%d", (int)getpid());
	for (int i = 0, o = 0; i < n_groups; i++)
		o += snprintf(list + o, sizeof(list) - (size_t)o, "%s%u", i ? "," : "",
			      (unsigned)groups[i]);
	argv[n++] = "--channel-fd";
	argv[n++] = "3";
	argv[n++] = "--uid";
	argv[n++] = uids;
	argv[n++] = "--gid";
	argv[n++] = gids;
	argv[n++] = "--groups";
	argv[n++] = list;
	argv[n++] = "--parent";
	argv[n++] = parent;
	argv[n] = NULL;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		return -errno;
	pid = spawn_helper(self, argv, &sp[1], 1);
	close(sp[1]);
	if (pid < 0) {
		close(sp[0]);
		return pid;
	}
	/* Before its first request: out of the human's login session. */
	r = cg_attach_pid(conn->cgroup, pid);
	if (r < 0) {
		(void)kill(pid, SIGKILL);
		(void)waitpid(pid, NULL, 0);
		close(sp[0]);
		return r;
	}
	conn->pid = pid;
	conn->chan = sp[0];
	return 0;
}

int unix_connector_connect(struct unix_conn *conn, int sock, int dirfd, const char *dir,
			   const char *name)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(3 * sizeof(int))];
	} c = { 0 };
	char msg[CREQ_MSG];
	struct iovec iov = { .iov_base = msg };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.buf,
			    .msg_controllen = sizeof(c.buf) };
	int sp[2], err = ECONNREFUSED, k;
	ssize_t n;

	/* "NAME\0DIR\0": the socket's name, and the directory judged, which the connector walks to. */
	k = snprintf(msg, sizeof(msg), "%s%c%s", name, 0, dir);
	if (conn->pid <= 0 || strlen(name) + 1 > NAME_MAX_UN || k < 0 || (size_t)k >= sizeof(msg))
		return ECONNREFUSED;
	iov.iov_len = (size_t)k + 1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		return errno;
	c.h.cmsg_level = SOL_SOCKET;
	c.h.cmsg_type = SCM_RIGHTS;
	c.h.cmsg_len = CMSG_LEN(3 * sizeof(int));
	memcpy(CMSG_DATA(&c.h), (int[]){ sp[1], sock, dirfd }, 3 * sizeof(int));
	n = sendmsg(conn->chan, &m, MSG_NOSIGNAL);
	close(sp[1]);
	/* A connector that is gone answers nothing: the connect is refused, never made. */
	if (n == (ssize_t)iov.iov_len) {
		do
			n = read(sp[0], &err, sizeof(err));
		while (n < 0 && errno == EINTR);
		if (n != sizeof(err))
			err = ECONNREFUSED;
	}
	close(sp[0]);
	return err;
}

void unix_connector_stop(struct unix_conn *conn)
{
	if (conn->pid > 0) {
		/*
		 * Shut, not closed: a worker thread still on its way to it gets
		 * EPIPE (a refused connect), never a reused descriptor number.
		 * cordon run exits soon after, which closes it.
		 */
		(void)shutdown(conn->chan, SHUT_RDWR);
		(void)kill(conn->pid, SIGKILL);
		while (waitpid(conn->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	conn->pid = 0;
	if (conn->cgroup[0])
		(void)cg_destroy(conn->cgroup);
}

/* --- cordon unix-connector ------------------------------------------------------ */

struct creq {
	int reply, sock, dirfd;
	char msg[CREQ_MSG + 1];         /* "NAME\0DIR\0" */
	const char *name, *dir;
};

static void *serve_one(void *arg)
{
	struct creq *q = arg;
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	struct stat st, judged;
	int err = 0, fd = -1, own = -1;

	/*
	 * The directory, walked to again as the agent: DAC on every directory
	 * above the socket is the agent's to pass (the supervisor, root,
	 * opened the judged one, so only its last step was checked, and a
	 * socket below another user's 0700 directory was reachable).  It must
	 * be the one judged: a directory swapped in since is refused.
	 */
	own = (int)syscall(SYS_openat2, AT_FDCWD, q->dir, &how, sizeof(how));
	if (own < 0)
		err = errno;
	else if (fstat(own, &st) < 0 || fstat(q->dirfd, &judged) < 0 ||
		 st.st_dev != judged.st_dev || st.st_ino != judged.st_ino)
		err = ECONNREFUSED;
	/* One component, never a path: the directory is the one judged. */
	else if (!q->name[0] || strchr(q->name, '/') || !strcmp(q->name, "..") ||
		 !strcmp(q->name, "."))
		err = EINVAL;
	else if ((fd = openat(own, q->name, O_PATH | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
		 fstat(fd, &st) < 0)
		err = errno;
	else if (!S_ISSOCK(st.st_mode))
		err = S_ISLNK(st.st_mode) ? ELOOP : ECONNREFUSED;
	if (!err) {
		snprintf(a.sun_path, sizeof(a.sun_path), "/proc/self/fd/%d", fd);
		if (connect(q->sock, (struct sockaddr *)&a, sizeof(a)) < 0)
			err = errno;
	}
	(void)send(q->reply, &err, sizeof(err), MSG_NOSIGNAL);
	if (fd >= 0)
		close(fd);
	if (own >= 0)
		close(own);
	close(q->reply);
	close(q->sock);
	close(q->dirfd);
	free(q);
	return NULL;
}

/* The agent's identity, for good: then no capability is left, and nothing can be regained. */
static int drop_to(uid_t u, gid_t g, const char *list, pid_t parent)
{
	gid_t groups[64];
	size_t n = 0;
	char *end;

	for (const char *p = list; *p; p = *end ? end + 1 : end) {
		unsigned long v = strtoul(p, &end, 10);

		if (end == p || (*end && *end != ',') || n == ARRAY_SIZE(groups))
			return -EINVAL;
		groups[n++] = (gid_t)v;
	}
	return drop_identity(u, g, groups, n, 0, parent);
}

int cmd_unix_connector(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "channel-fd", required_argument, NULL, 'C' },
		{ "uid", required_argument, NULL, 'u' },
		{ "gid", required_argument, NULL, 'g' },
		{ "groups", required_argument, NULL, 'G' },
		{ "parent", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *groups = "";
	long chan = -1, uid = -1, gid = -1, parent = -1;
	int o;

	optind = 1;
	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'C': chan = strtol(optarg, NULL, 10); break;
		case 'u': uid = strtol(optarg, NULL, 10); break;
		case 'g': gid = strtol(optarg, NULL, 10); break;
		case 'G': groups = optarg; break;
		case 'P': parent = strtol(optarg, NULL, 10); break;
		case 'h':
			printf("usage: cordon unix-connector --channel-fd N --uid U --gid G "
			       "--groups LIST --parent PID\n"
			       "Started by cordon run, never by hand: makes a session's Unix socket "
			       "connects\nas its agent (its uid, gids and mount view), for the "
			       "supervisor.\n");
			return 0;
		default: return 2;      /* getopt named the option */
		}
	}
	if (chan < 3 || uid < 0 || gid < 0 || parent < 1 || optind != argc ||
	    fcntl((int)chan, F_GETFD) < 0) {
		log_err("unix-connector: started by cordon run only");
		return 125;
	}
	if (drop_to((uid_t)uid, (gid_t)gid, groups, (pid_t)parent) < 0) {
		log_err("unix-connector: cannot take the agent's identity (uid %ld): refusing to serve",
			uid);
		return 125;
	}
	for (;;) {
		union {
			struct cmsghdr h;
			char buf[CMSG_SPACE(3 * sizeof(int))];
		} c;
		struct creq *q = calloc(1, sizeof(*q));
		struct iovec iov;
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.buf,
				    .msg_controllen = sizeof(c.buf) };
		struct cmsghdr *h;
		pthread_t t;
		pthread_attr_t at;
		ssize_t n;
		int fds[3];

		if (!q)
			return 1;
		iov = (struct iovec){ .iov_base = q->msg, .iov_len = sizeof(q->msg) - 1 };
		n = recvmsg((int)chan, &m, MSG_CMSG_CLOEXEC);
		if (n < 0 && errno == EINTR) {
			free(q);
			continue;
		}
		if (n <= 0) {
			free(q);
			return 0;       /* the supervisor is gone */
		}
		h = CMSG_FIRSTHDR(&m);
		if (!h || h->cmsg_type != SCM_RIGHTS || h->cmsg_len != CMSG_LEN(sizeof(fds)) ||
		    (m.msg_flags & (MSG_CTRUNC | MSG_TRUNC))) {
			/* Only the supervisor writes here: anything else ends the connector. */
			log_err("unix-connector: a malformed request: stopping");
			return 1;
		}
		memcpy(fds, CMSG_DATA(h), sizeof(fds));
		q->reply = fds[0];
		q->sock = fds[1];
		q->dirfd = fds[2];
		q->msg[n] = '\0';
		q->name = q->msg;
		q->dir = q->msg + strlen(q->msg) + 1;
		if (q->dir > q->msg + n || *q->dir != '/') {
			log_err("unix-connector: a malformed request: stopping");
			return 1;
		}
		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&t, &at, serve_one, q) != 0) {
			int err = EAGAIN;

			(void)send(q->reply, &err, sizeof(err), MSG_NOSIGNAL);
			close(q->reply);
			close(q->sock);
			close(q->dirfd);
			free(q);
		}
		pthread_attr_destroy(&at);
	}
}
