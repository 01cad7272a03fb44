// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The supervisor's side of a connect (sup_connect.h), Unix and inet.
 *
 * What a decision may rest on (seccomp_unotify(2)): the task's memory can
 * change after the supervisor reads it.
 *   - connect (inet): an allow is CONTINUEd because the cgroup-bpf program
 *     judges the address the kernel receives.  An approved escalation (which
 *     the kernel floor denies, as it cannot wait for a human) is performed by
 *     the supervisor on a pidfd_getfd copy of the socket with the address it
 *     read and judged, and the result is returned to the task.
 *   - connect (unix): the floor judges pathname sockets by object (BPF LSM)
 *     and abstract ones by scope (Landlock ABI >= 6 in the fallback); the
 *     supervisor lifts and audits.  In the fallback it judges a pathname
 *     socket by its canonical path and performs the connect itself, and
 *     the network floor's unix gate keeps the session from naming one in
 *     the kernel (an address rewritten after the check is refused there).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/openat2.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>

#include "sup_connect.h"
#include "sup_held.h"
#include "sup_record.h"
#include "sup_stats.h"
#include "task_path.h"
#include "unix_connector.h"
#include "util.h"

/*
 * A pathname Unix socket in the fallback posture, where no LSM judges it by
 * object (Landlock has no hook for it): the supervisor judges the canonical
 * path (the write right, as the BPF LSM floor does on the socket inode) and
 * has the connect performed on a copy of the task's socket.  The
 * session may not name such a socket itself: the network floor's unix gate
 * refuses it in the kernel (bpf/net.bpf.c), so an address rewritten after
 * this check, and a datagram sent with a destination, never reach a path
 * unjudged.
 *
 * The connect is made by the session's Unix connector (unix_connector.h), a
 * process with the agent's whole identity (uid, gid and groups, no
 * capabilities) outside the session and outside the human's login session:
 * DAC applies as to the agent, and the listener's SO_PEERCRED and
 * SO_PEERPIDFD name a process of the agent, never root and never cordon (a
 * server that authorises by peer uid, such as the system bus, or resolves
 * the peer's login session from its pid, as polkit and logind do, must not
 * see the supervisor).  It passes the gate because it is not in the
 * session.  The socket's directory was opened here without following
 * symlinks; the connector opens the last component O_PATH without
 * following one, requires a socket, and connects through that descriptor
 * (/proc/self/fd/N), so it reaches the very inode checked, and a symlink
 * swapped in after the judgement is refused.  A worker thread waits for
 * its answer, so a listener with a full backlog holds only that connect.
 *
 * What remains: the pid the listener sees is the connector's, one for the
 * whole session, not that of the agent process that asked; a socket
 * renamed into the judged path by a task that may write that directory is
 * the object at that path, which the rule allowed.
 */
struct unix_emul {
	struct sup *s;
	struct held h;
	int sock;
	int dirfd;
	char name[108];
	char dir[PATH_MAX];             /* the directory judged, which dirfd is */
};

static void *unix_worker(void *arg)
{
	struct unix_emul *e = arg;
	int err = unix_connector_connect(&e->s->conn, e->sock, e->dirfd, e->dir, e->name);

	(void)notify_return(e->s->listener, e->h.notif, 0, err);
	close(e->sock);
	close(e->dirfd);
	free(e);
	return NULL;
}

static int emulate_unix(struct sup *s, const struct held *h, const char *canon)
{
	struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	const char *slash = strrchr(canon, '/');
	char dir[PATH_MAX];
	struct unix_emul *e;

	if (!slash || strlen(slash + 1) >= sizeof(e->name) || !slash[1])
		return -ENAMETOOLONG;
	/* Here, on the main thread: the connector dies with the thread that started it. */
	if (unix_connector_start(&s->conn, s->uid, s->gid, s->groups, s->n_groups) < 0)
		return -ECONNREFUSED;
	snprintf(dir, sizeof(dir), "%.*s", slash == canon ? 1 : (int)(slash - canon), canon);
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->s = s;
	e->h = *h;
	snprintf(e->name, sizeof(e->name), "%s", slash + 1);
	snprintf(e->dir, sizeof(e->dir), "%s", dir);
	e->dirfd = (int)syscall(SYS_openat2, AT_FDCWD, dir, &how, sizeof(how));
	e->sock = e->dirfd < 0 ? -1 : notify_getfd(h->pid, (int)h->args[0]);
	if (e->dirfd < 0 || e->sock < 0 || !notify_valid(s->listener, h->notif)) {
		int r = e->dirfd < 0 ? -errno : e->sock < 0 ? e->sock : -ESRCH;

		if (e->dirfd >= 0)
			close(e->dirfd);
		if (e->sock >= 0)
			close(e->sock);
		free(e);
		return r;
	}
	if (sup_held_spawn(unix_worker, e) < 0) {
		close(e->dirfd);
		close(e->sock);
		free(e);
		return -EAGAIN;
	}
	return 0;
}

static void handle_unix(struct sup *s, const struct notify_req *req, struct held *h,
			const struct sockaddr_storage *ss, uint32_t len)
{
	const struct sockaddr_un *un = (const struct sockaddr_un *)ss;
	size_t plen = len > offsetof(struct sockaddr_un, sun_path) ?
		      len - offsetof(struct sockaddr_un, sun_path) : 0;
	char name[sizeof(un->sun_path) + 2], cwd[PATH_MAX], canon[PATH_MAX];
	struct pol_request pr = { .op = POL_OP_WRITE };
	struct pol_result res = { .decision = CORDON_ALLOW };
	const char *why = "judged by the kernel floor";
	bool abstract = plen && un->sun_path[0] == '\0';
	json_t *raw, *event;
	int r, resolved = -EINVAL;

	if (abstract)
		snprintf(name, sizeof(name), "@%.*s", (int)(plen - 1), un->sun_path + 1);
	else
		snprintf(name, sizeof(name), "%.*s", (int)strnlen(un->sun_path, plen), un->sun_path);
	if (!notify_valid(s->listener, req->id))
		return;
	sup_record_step(s);
	event = pol_event_unix(name, abstract);
	raw = json_pack("{s:i,s:o}", "fd", (int)req->args[0], "unix", pol_json_text(name));
	/*
	 * A socket that is not there, in the session's view, is answered as
	 * the kernel would answer (ENOENT) and counted for the end record
	 * ("unix_absent"), not recorded one by one.  Why: glibc asks nscd at
	 * /run/nscd/socket for every user and group lookup, so each `ls`,
	 * `git` and `id` left two denials.  Nothing is hidden: no object was
	 * refused (the path names none, and the agent could stat it: see
	 * task_path_absent), and a socket that exists is judged and
	 * recorded as ever.  In the full posture too: answered here, not
	 * continued, so a socket made after this look is not reached unseen.
	 */
	if (!abstract && name[0]) {
		r = task_path_fd(req->pid, AT_FDCWD, cwd, sizeof(cwd));
		r = r ?: task_path_canon(name, cwd, canon, sizeof(canon));
		resolved = r;
		if (r == 0 && task_path_absent(canon, s->uid, s->gid, s->groups, s->n_groups)) {
			(void)notify_return(s->listener, req->id, 0, ENOENT);
			sup_stats_absent(&s->stats, SUP_STATS_CONNECT);
			goto out;
		}
	}
	if (s->floor || abstract || !name[0]) {
		/*
		 * BPF LSM judges pathname sockets by object; abstract sockets
		 * are refused outside the session by the LSM floor or Landlock
		 * scoping (ABI >= 6; the posture lists it missing below that).
		 * In the fallback the address is CONTINUEd as read here only
		 * because the unix gate refuses it in the kernel should another
		 * thread have made it a path since (without the gate, Linux <
		 * 6.7, the posture lists unix-gate missing).
		 */
		sup_record(s, req->pid, "connect", raw, event, "allow", NULL, why, NULL);
		(void)notify_continue(s->listener, req->id);
		goto out;
	}
	r = resolved;           /* a pathname socket here: resolved above */
	if (r < 0) {
		sup_record(s, req->pid, "connect", raw, event, "deny", NULL,
			   "the socket path cannot be resolved", NULL);
		(void)notify_return(s->listener, req->id, 0, r == -ENAMETOOLONG ? ENAMETOOLONG : EACCES);
		goto out;
	}
	json_object_set_new(json_object_get(event, "arguments"), "path", pol_json_text(canon));
	pr.path = canon;
	pol_eval(s->pol, &pr, &res);
	if (res.decision != CORDON_ALLOW) {
		sup_record(s, req->pid, "connect", raw, event, "deny", sup_record_rule(&res),
			   res.reason, NULL);
		(void)notify_return(s->listener, req->id, 0, EACCES);
		goto out;
	}
	sup_record(s, req->pid, "connect", raw, event, "allow", sup_record_rule(&res),
		   "emulated by the supervisor (the fallback has no kernel check)", NULL);
	r = emulate_unix(s, h, canon);
	if (r < 0)
		(void)notify_return(s->listener, req->id, 0, r == -ESRCH ? EPERM : -r);
out:
	json_decref(raw);
	json_decref(event);
}

void sup_connect_handle(struct sup *s, const struct notify_req *req)
{
	struct held h = { .notif = req->id, .pid = req->pid, .nr = req->nr };
	struct sockaddr_storage ss;
	char host[INET6_ADDRSTRLEN], summary[600];
	uint32_t len = (uint32_t)req->args[2];
	struct pol_request pr = { .op = POL_OP_CONNECT };
	struct pol_result res;
	json_t *raw, *event;
	ssize_t n;
	uint16_t port = 0;

	memcpy(h.args, req->args, sizeof(h.args));
	if (len > sizeof(h.addr))
		len = sizeof(h.addr);
	memset(&ss, 0, sizeof(ss));
	n = len ? notify_read(req->pid, req->args[1], &ss, len) : 0;
	if (n < 0 || (uint32_t)n != len || len < sizeof(sa_family_t)) {
		/* Unreadable or too short: unknown means deny (the kernel would
		 * also refuse a bad pointer or length). */
		raw = json_pack("{s:i,s:I,s:i}", "fd", (int)req->args[0], "read", (json_int_t)n,
				"len", (int)len);
		sup_record(s, req->pid, "connect", raw, NULL, "deny", NULL,
			   "the address cannot be read from the task", NULL);
		json_decref(raw);
		(void)notify_return(s->listener, req->id, 0, len < sizeof(sa_family_t) ? EINVAL : EFAULT);
		return;
	}
	memcpy(h.addr, &ss, len);
	h.addrlen = len;
	if (ss.ss_family == AF_UNIX) {
		handle_unix(s, req, &h, &ss, len);
		return;
	}
	if (ss.ss_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		port = ntohs(in->sin_port);
	} else if ((ss.ss_family == AF_INET && len < sizeof(struct sockaddr_in)) ||
		   (ss.ss_family == AF_INET6 && len < 24)) {
		/* Shorter than the kernel takes (EINVAL there too): no record, nothing done. */
		(void)notify_return(s->listener, req->id, 0, EINVAL);
		return;
	} else if (ss.ss_family == AF_INET6) {
		/*
		 * The kernel takes 24 bytes (RFC 2133's sockaddr_in6, without
		 * sin6_scope_id): judged as IPv6 like the full 28 (such a
		 * connect went on unjudged and unrecorded, as a short address).
		 */
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

		/* A v4-mapped address is the IPv4 address: judge it as such. */
		if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr))
			inet_ntop(AF_INET, &in6->sin6_addr.s6_addr[12], host, sizeof(host));
		else
			inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		port = ntohs(in6->sin6_port);
	} else {
		/*
		 * AF_UNSPEC (dissolve a UDP association) and other families.
		 * Rewritten to a Unix path by another thread before the kernel
		 * copies it: in the fallback the unix gate refuses it there.
		 */
		(void)notify_continue(s->listener, req->id);
		return;
	}
	sup_record_step(s);
	pr.host = host;
	pr.port = port;
	pol_eval_event(s->pol, &pr, &res, &event);
	raw = json_pack("{s:i,s:s,s:i}", "fd", (int)req->args[0], "addr", host, "port", port);
	snprintf(summary, sizeof(summary), "connect to %s%s%s port %u",
		 strchr(host, ':') ? "[" : "", host, strchr(host, ':') ? "]" : "", port);
	/*
	 * The address read is the task's own only if it was still in the call
	 * after the read.  As for an exec (sup_exec.c), a plain answer is its
	 * own check: the kernel refuses it (ENOENT) once the task has left the
	 * call, and then nothing is recorded.  An escalated connect acts before
	 * its answer (a grant, a word to the task, a human asked): it checks
	 * first (ID_VALID).
	 */
	if (res.decision == CORDON_ESCALATE && !notify_valid(s->listener, req->id))
		goto out;
	if (res.decision == CORDON_ESCALATE && sup_session_approved(s, event, NULL)) {
		sup_record(s, req->pid, "connect", raw, event, "allow", sup_record_rule(&res),
			   "approved for this session", NULL);
		sup_apply(s, &h, true, true, NULL);
	} else if (res.decision == CORDON_ESCALATE && sup_human_denied(s, event)) {
		sup_held_tell_refused(s, req->pid, summary);
		sup_apply(s, &h, false, false, REFUSED_AGAIN);
		sup_record(s, req->pid, "connect", raw, event, "deny", sup_record_rule(&res), REFUSED_AGAIN,
			   NULL);
	} else if (res.decision == CORDON_ESCALATE && s->opt->approve != APPROVE_DENY) {
		sup_record(s, req->pid, "connect", raw, event, "escalate", sup_record_rule(&res),
			   res.reason, NULL);
		sup_held_escalate(s, &h, "connect", event, NULL, NULL, summary, &res);
	} else {
		bool allow = res.decision == CORDON_ALLOW;
		_cleanup_close_ int comm_fd = -1;       /* closed after the answer */
		char comm[32];
		int ans;

		sup_record_comm_keep(req->pid, comm, sizeof(comm), &comm_fd);
		/* Answer first, as for exec; as sup_apply answers a connect (the network floor re-checks). */
		ans = allow ? notify_continue(s->listener, req->id) :
			      notify_return(s->listener, req->id, 0, EPERM);
		if (ans == -ENOENT)
			goto out;       /* the task left the call: nothing done, nothing to record */
		sup_stats_answered(&s->stats);
		sup_record_as(s, req->pid, comm, "connect", raw, event, allow ? "allow" : "deny",
			      sup_record_rule(&res), res.decision == CORDON_ESCALATE ?
			      "escalation with --approve deny" : res.reason, NULL);
	}
out:
	json_decref(raw);
	json_decref(event);
}
