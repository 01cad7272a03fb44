// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The broker's end of the supervisor's channel, read (broker_chan.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "broker_chan.h"
#include "grants.h"
#include "jsonrpc.h"
#include "proto.h"

/* Decisions from the supervisor, until it goes (then the session is over: so is this). */
void *chan_reader(void *arg)
{
	struct hp *hp = arg;
	struct linebuf lb;
	char buf[4096], *line;
	size_t len;

	linebuf_init(&lb, 1u << 16);
	for (;;) {
		ssize_t n = read(hp->chan_fd, buf, sizeof(buf));
		int r;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || linebuf_push(&lb, buf, (size_t)n) < 0)
			break;
		while ((r = linebuf_next(&lb, &line, &len)) > 0) {
			json_t *j = json_loadb(line, len, 0, NULL);
			struct proto_msg m;

			/* A message not what its op says (proto.h) decides nothing. */
			if (!j || proto_read(j, &m) < 0) {
				json_decref(j);
				continue;
			}
			if (m.op == PROTO_GRANT) {
				pthread_mutex_lock(&hp->chan_lock);
				grant_add(hp, &m);
				pthread_mutex_unlock(&hp->chan_lock);
			} else if (m.op == PROTO_HOLDERS && m.pids) {
				pthread_mutex_lock(&hp->chan_lock);
				for (struct waiter *w = hp->waiters; w; w = w->next)
					if (w->hold == m.query && w->pids && !w->decided) {
						size_t np = json_array_size(m.pids);

						w->n_pids = m.error ? -m.error : np > (size_t)w->cap_pids ?
							    -E2BIG : (int)np;
						for (int k = 0; k < w->n_pids; k++)
							w->pids[k] = (pid_t)json_integer_value(
								json_array_get(m.pids, (size_t)k));
						w->decided = true;
						pthread_cond_signal(&w->cond);
					}
				pthread_mutex_unlock(&hp->chan_lock);
			} else if (m.op == PROTO_DECISION) {
				pthread_mutex_lock(&hp->chan_lock);
				for (struct waiter *w = hp->waiters; w; w = w->next)
					if (w->hold == m.hold && !w->pids) {
						w->decided = true;
						w->allow = m.allow;
						snprintf(w->why, sizeof(w->why), "%s", m.why ?: "");
						pthread_cond_signal(&w->cond);
					}
				pthread_mutex_unlock(&hp->chan_lock);
			}
			json_decref(j);
		}
		if (r < 0)
			break;
	}
	linebuf_free(&lb);
	pthread_mutex_lock(&hp->chan_lock);
	hp->chan_gone = true;
	for (struct waiter *w = hp->waiters; w; w = w->next)
		pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&hp->chan_lock);
	/* The supervisor is gone, and with it the session: stop serving it. */
	raise(SIGTERM);
	return NULL;
}

/*
 * In a session: the session's cgroup, from the supervisor, which starts
 * this before the cgroup exists ({"op":"session","cgroup_id":N}, its first
 * message).  Read line by line off the socket (peeked, then taken up to
 * the newline), so nothing of what follows is lost to the reader thread.
 * Nothing is accepted before it arrives: a connection is never served
 * without its cgroup checked.  0; -EPIPE: the channel ended, or the
 * supervisor that started the broker is gone (it gave up, and said why, or
 * died; its watchdog may still hold the channel's other end); -ETIMEDOUT:
 * silent for SESSION_WAIT_MS; -E2BIG, -EBADMSG: a first message too long,
 * or not the session's.
 */
int session_from_channel(struct hp *hp)
{
	pid_t parent = getppid();
	char line[256];
	size_t have = 0;
	struct proto_msg m;
	json_t *j;
	int r = -EBADMSG, waited = 0;

	for (;;) {
		struct pollfd p = { .fd = hp->chan_fd, .events = POLLIN };
		char *nl;
		ssize_t n;

		if (poll(&p, 1, SESSION_POLL_MS) == 0) {
			if (getppid() != parent)
				return -EPIPE;
			waited += SESSION_POLL_MS;
			if (waited >= SESSION_WAIT_MS)
				return -ETIMEDOUT;
			continue;
		}
		n = recv(hp->chan_fd, line + have, sizeof(line) - 1 - have, MSG_PEEK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EPIPE;
		line[have + (size_t)n] = '\0';
		nl = strchr(line + have, '\n');
		n = nl ? nl - (line + have) + 1 : n;
		if (recv(hp->chan_fd, line + have, (size_t)n, 0) != n)
			return -EPIPE;
		have += (size_t)n;
		if (nl)
			break;
		if (have == sizeof(line) - 1)
			return -E2BIG;
	}
	j = json_loadb(line, have, 0, NULL);
	if (j && proto_read(j, &m) == 0 && m.op == PROTO_SESSION && m.cgroup_id > 0) {
		hp->cgroup_id = m.cgroup_id;
		r = 0;
	}
	json_decref(j);
	return r;
}

