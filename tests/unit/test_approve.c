// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Who may speak to the supervisor's own sockets (host_operator,
 * userspace/supervisor/approve.c) and how a socket's peer is read
 * (peer_read, base/util.c), on real Unix sockets with real peers: forked
 * children that take a uid, join a cgroup under cordon's session parent,
 * or exit before they are judged.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "approve.h"
#include "util.h"

#define OTHER_UID 4242

struct peer {
	int fd;                 /* the accepted end */
	pid_t pid;              /* the child on the other end */
};

/*
 * A child that takes `uid` and connects to a listener of this process,
 * then is moved into `cg`, if given; it stays until its end is closed, or
 * exits at once when `leave`.  The accepted end in p->fd: 0, or -1 (the test fails).
 */
static int peer_start(struct peer *p, uid_t uid, const char *cg, bool leave)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	socklen_t al = offsetof(struct sockaddr_un, sun_path) + 1 +
		(socklen_t)snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, "cordon-test-peer-%d",
				    (int)getpid());
	int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	char c;

	if (l < 0 || bind(l, (struct sockaddr *)&a, al) < 0 || listen(l, 1) < 0)
		return -1;
	p->pid = fork();
	if (p->pid == 0) {
		int s;

		if (setresuid(uid, uid, uid) < 0)
			_exit(3);
		s = socket(AF_UNIX, SOCK_STREAM, 0);
		if (s < 0 || connect(s, (struct sockaddr *)&a, al) < 0)
			_exit(4);
		if (write(s, "r", 1) != 1)
			_exit(5);
		if (!leave)
			c = read(s, &c, 1) < 0;
		_exit(0);
	}
	/* A child that failed before its connect is not waited for. */
	p->fd = p->pid > 0 && poll(&(struct pollfd){ .fd = l, .events = POLLIN }, 1, 5000) == 1 ?
		accept4(l, NULL, NULL, SOCK_CLOEXEC) : -1;
	close(l);
	/*
	 * Connected when its byte arrives; then into the session's cgroup (a
	 * stray cgroup under cordon's parent may not connect at all, the
	 * network floor sees to that; the cgroup judged is the peer's now).
	 */
	if (p->fd >= 0 && (poll(&(struct pollfd){ .fd = p->fd, .events = POLLIN }, 1, 5000) != 1 ||
			   read(p->fd, &c, 1) != 1 || (cg && cg_attach_pid(cg, p->pid) < 0))) {
		close(p->fd);
		p->fd = -1;
	}
	if (p->fd < 0 && p->pid > 0) {
		kill(p->pid, SIGKILL);
		(void)waitpid(p->pid, NULL, 0);
	}
	return p->fd < 0 ? -1 : 0;
}

/* Close the accepted end, reap the child: its exit status (0: it ran as asked). */
static int peer_end(struct peer *p)
{
	int st = 0;

	close(p->fd);
	if (waitpid(p->pid, &st, 0) != p->pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* This very process, as the supervisor's Unix worker would be: refused, whoever it claims to be. */
static void own_process_refused(void **state)
{
	int sv[2];
	struct ucred cr;
	char *cg = NULL, who[64] = "", want[64];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(peer_read(sv[0], &cr, &cg), 0);
	assert_int_equal(cr.pid, getpid());
	assert_non_null(cg);
	free(cg);
	assert_false(host_operator(sv[0], getuid(), who, sizeof(who)));
	assert_false(host_operator(sv[0], 0, NULL, 0));
	snprintf(want, sizeof(want), "uid %u (pid %d)", (unsigned)getuid(), (int)getpid());
	assert_string_equal(who, want);
	close(sv[0]);
	close(sv[1]);
}

/* Host root and the invoking user are admitted; any other user is not. */
static void users(void **state)
{
	struct peer p;
	char who[64];

	(void)state;
	if (geteuid() != 0)
		skip();
	assert_int_equal(peer_start(&p, 0, NULL, false), 0);
	assert_true(host_operator(p.fd, OTHER_UID, who, sizeof(who)));
	assert_non_null(strstr(who, "uid 0 (pid "));
	assert_int_equal(peer_end(&p), 0);

	assert_int_equal(peer_start(&p, OTHER_UID, NULL, false), 0);
	assert_false(host_operator(p.fd, 0, NULL, 0));
	assert_false(host_operator(p.fd, OTHER_UID + 1, NULL, 0));
	assert_true(host_operator(p.fd, OTHER_UID, NULL, 0));
	assert_int_equal(peer_end(&p), 0);
}

/* A task of a cordon session (a cgroup below cordon's parent) is refused, root or not. */
static void session_task_refused(void **state)
{
	char parent[4096], cg[4200];
	struct peer p;
	uint64_t id;
	uint32_t level;

	(void)state;
	if (geteuid() != 0 || cg_session_parent(parent, sizeof(parent), &level, &id) < 0)
		skip();
	snprintf(cg, sizeof(cg), "%s/unit-peer-%d", parent, (int)getpid());
	assert_int_equal(cg_mkdir(cg), 0);
	assert_int_equal(peer_start(&p, 0, cg, false), 0);
	assert_false(host_operator(p.fd, 0, NULL, 0));
	assert_int_equal(peer_end(&p), 0);
	assert_int_equal(peer_start(&p, OTHER_UID, cg, false), 0);
	assert_false(host_operator(p.fd, OTHER_UID, NULL, 0));
	assert_int_equal(peer_end(&p), 0);
	assert_int_equal(cg_destroy(cg), 0);
}

/*
 * A session's Unix connector (a cgroup below cordon's "-unix" parent) is
 * refused, with the invoker's uid too: it connects as the agent, and the
 * agent may run as the invoker.
 */
static void unix_connector_refused(void **state)
{
	char parent[4096], up[4200], cg[4300];
	struct peer p;
	uint64_t id;
	uint32_t level;
	bool made;

	(void)state;
	if (geteuid() != 0 || cg_session_parent(parent, sizeof(parent), &level, &id) < 0)
		skip();
	snprintf(up, sizeof(up), "%s-unix", parent);
	made = mkdir(up, 0755) == 0;
	assert_true(made || errno == EEXIST);
	snprintf(cg, sizeof(cg), "%s/unit-peer-%d", up, (int)getpid());
	assert_int_equal(cg_mkdir(cg), 0);
	assert_int_equal(peer_start(&p, OTHER_UID, cg, false), 0);
	assert_false(host_operator(p.fd, OTHER_UID, NULL, 0));
	assert_int_equal(peer_end(&p), 0);
	assert_int_equal(cg_destroy(cg), 0);
	if (made)
		(void)rmdir(up);
}

/*
 * A peer that has exited (and been reaped) before it is judged: its pid
 * may belong to anyone by now, so it is refused, not read.
 */
static void gone_peer_refused(void **state)
{
	struct peer p;
	struct ucred cr;
	char *cg = NULL;
	int st;

	(void)state;
	if (geteuid() != 0)
		skip();
	assert_int_equal(peer_start(&p, 0, NULL, true), 0);
	assert_int_equal(waitpid(p.pid, &st, 0), p.pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_true(peer_read(p.fd, &cr, &cg) < 0);
	assert_null(cg);
	assert_false(host_operator(p.fd, 0, NULL, 0));
	close(p.fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(own_process_refused),
		cmocka_unit_test(users),
		cmocka_unit_test(session_task_refused),
		cmocka_unit_test(unix_connector_refused),
		cmocka_unit_test(gone_peer_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
