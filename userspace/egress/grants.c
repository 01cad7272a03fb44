// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Grants: an approved push's destinations, for its process (grants.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "grants.h"
#include "proto.h"
#include "util.h"

/*
 * A human approved a `git push` (push_grant.h): the supervisor grants that
 * process, named by pid and start time, the push's destinations, over the
 * channel ({"op":"grant","grant":N,"pid":P,"start":T,"ttl_ms":M,
 * "dests":[{"host":H,"port":N}]}).  A CONNECT or absolute-form request the
 * policy refuses by default (no rule or invariant refuses it) or escalates
 * is admitted when a live grant names its host and port and every task
 * holding the client's socket (its inode from sock_diag, looked for in the
 * descriptor tables of every task on the host) is the approved process or
 * one of its descendants (by the parent chain, the approved process's
 * start time checked).  A grant ends when its process has gone (a
 * descendant orphaned by then no longer descends from it) or after its
 * ttl; the end and every use or refusal are recorded.
 *
 * Attacks closed: another process of the session racing for the grant
 * (curl to the same host while the push is approved): its socket is not
 * held by the approved tree; a socket passed into the approved tree over
 * SCM_RIGHTS while its maker keeps a copy: held outside the tree; a
 * remote redirected after approval (-c remote.x.url, the environment, a
 * config edited in /tmp): the grant names the host:port the human saw;
 * the pid reused after the push: the start time differs.
 * What it cannot close: what the approved process and its descendants do
 * with the grant (the repository's hooks and config-named programs run in
 * that tree) reaches only the approved host and port, but anything there;
 * a process of the session that takes the tunnel's descriptor from the
 * approved tree after admission (pidfd_getfd in the fallback, where no
 * LSM judges it) speaks through it, to that destination only; a name the
 * human saw that resolves (or is rebound) to a private or loopback address
 * is connected to (the human approved the name): link-local addresses,
 * the cloud metadata one among them, never are.
 */
#define GRANT_MAX_DESTS 16
#define GRANT_MAX 64
#define HOLDERS_MAX 64

struct grant {
	struct grant *next;
	uint64_t id;
	pid_t pid;
	unsigned long long start;
	uint64_t expires_ms;
	uint64_t uses;
	size_t n;
	struct {
		char host[256];
		uint16_t port;
		bool ssh;               /* an ssh remote: a CONNECT tunnel carrying SSH */
	} d[GRANT_MAX_DESTS];
};

/* Under chan_lock. */
void grant_add(struct hp *hp, const struct proto_msg *m)
{
	struct grant *g;
	json_t *d;
	size_t i, n = 0;

	for (g = hp->grants; g; g = g->next)
		n++;
	if (n >= GRANT_MAX)
		return;
	g = calloc(1, sizeof(*g));
	if (!g)
		return;
	g->id = m->grant;
	g->pid = m->pid;
	g->start = (unsigned long long)m->start;
	g->expires_ms = mono_ms() + m->ttl_ms;
	json_array_foreach(m->dests, i, d) {
		const char *h = json_string_value(json_object_get(d, "host"));
		json_int_t port = json_integer_value(json_object_get(d, "port"));

		if (!h || strlen(h) >= sizeof(g->d[0].host) || port < 1 || port > 65535 ||
		    g->n >= GRANT_MAX_DESTS)
			continue;
		snprintf(g->d[g->n].host, sizeof(g->d[0].host), "%s", h);
		g->d[g->n].ssh = json_is_true(json_object_get(d, "ssh"));
		g->d[g->n++].port = (uint16_t)port;
	}
	g->next = hp->grants;
	hp->grants = g;
}

/* Fields 4 (ppid) and 22 (start time) of /proc/PID/stat. */
static int proc_stat(pid_t pid, pid_t *ppid, unsigned long long *start)
{
	char p[64], buf[1024], *c;
	int fd, f = 2;
	ssize_t n;

	snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	c = strrchr(buf, ')');
	if (!c)
		return -EINVAL;
	for (c++; *c && f < 22; c++)
		if (*c == ' ') {
			f++;
			if (f == 4)
				*ppid = (pid_t)strtol(c + 1, NULL, 10);
		}
	return f == 22 && sscanf(c, "%llu", start) == 1 ? 0 : -EINVAL;
}

static bool grant_alive(const struct grant *g)
{
	pid_t pp;
	unsigned long long st;

	return proc_stat(g->pid, &pp, &st) == 0 && st == g->start;
}

/*
 * Grants whose process has gone, or whose time is up: dropped, then
 * recorded (the record goes through the channel, which takes chan_lock).
 */
void grants_sweep(struct hp *hp)
{
	uint64_t now = mono_ms();
	struct grant *ended = NULL;

	pthread_mutex_lock(&hp->chan_lock);
	for (struct grant **pp = &hp->grants; *pp;) {
		struct grant *g = *pp;

		if (now < g->expires_ms && grant_alive(g)) {
			pp = &g->next;
			continue;
		}
		*pp = g->next;
		g->next = ended;
		ended = g;
	}
	pthread_mutex_unlock(&hp->chan_lock);
	while (ended) {
		struct grant *g = ended;

		ended = g->next;
		RECORD(hp, "http", "{s:I,s:i,s:s,s:s,s:I}", "grant", (json_int_t)g->id, "pid",
		       (int)g->pid, "outcome", "grant ended", "reason",
		       now >= g->expires_ms ? "its time is up" : "the approved process exited",
		       "uses", (json_int_t)g->uses);
		free(g);
	}
}

/*
 * Every process but this one holding socket inode INO: found by the
 * supervisor in a session (listing other users' tasks' descriptors needs
 * root, which the broker gave up: http_proxy.c), here otherwise.
 */
static int socket_holders(struct hp *hp, uint64_t ino, pid_t *out, int cap)
{
	struct waiter w = { .hold = atomic_fetch_add(&hp->next_hold, 1) + 1, .pids = out,
			    .n_pids = -EIO, .cap_pids = cap };

	if (hp->chan_fd < 0)
		return socket_holders_scan(ino, getpid(), out, cap);
	return chan_wait(hp, &w, proto_holders_ask(w.hold, ino)) ? w.n_pids : -EIO;
}

/* Is pid the process (root, start) or one of its descendants? */
static bool descends(pid_t pid, pid_t root, unsigned long long start)
{
	for (int depth = 0; pid > 1 && depth < 256; depth++) {
		pid_t pp = 0;
		unsigned long long st;

		if (proc_stat(pid, &pp, &st) < 0)
			return false;
		if (pid == root)
			return st == start;
		pid = pp;
	}
	return false;
}

/*
 * May this client reach host:port on a grant?  0 and *gid: admitted;
 * -ENOENT: no live grant names host:port; -EACCES: one does, and the
 * client is not its process (why says).
 */
int grant_admits(struct conn *c, const char *host, uint16_t port, uint64_t *gid,
		 char *why, size_t wlen)
{
	struct hp *hp = c->hp;
	struct { uint64_t id; pid_t pid; unsigned long long start; bool ssh; } cand[8];
	pid_t holders[HOLDERS_MAX];
	int n_cand = 0, n_hold;

	grants_sweep(hp);
	pthread_mutex_lock(&hp->chan_lock);
	for (struct grant *g = hp->grants; g && n_cand < (int)ARRAY_SIZE(cand); g = g->next)
		for (size_t i = 0; i < g->n; i++)
			if (g->d[i].port == port && !strcasecmp(g->d[i].host, host)) {
				cand[n_cand].id = g->id;
				cand[n_cand].pid = g->pid;
				cand[n_cand].ssh = g->d[i].ssh;
				cand[n_cand++].start = g->start;
				break;
			}
	pthread_mutex_unlock(&hp->chan_lock);
	if (!n_cand)
		return -ENOENT;
	n_hold = c->inode ? socket_holders(hp, c->inode, holders, HOLDERS_MAX) : -ENOENT;
	if (n_hold <= 0) {
		snprintf(why, wlen, "a push to %s:%u is approved, and no process could be found "
			 "holding this client's socket", host, port);
		return -EACCES;
	}
	for (int k = 0; k < n_cand; k++) {
		int h;

		for (h = 0; h < n_hold && descends(holders[h], cand[k].pid, cand[k].start); h++)
			;
		if (h == n_hold) {
			*gid = cand[k].id;
			c->grant_ssh = cand[k].ssh;
			pthread_mutex_lock(&hp->chan_lock);
			for (struct grant *g = hp->grants; g; g = g->next)
				if (g->id == cand[k].id)
					g->uses++;
			pthread_mutex_unlock(&hp->chan_lock);
			return 0;
		}
		snprintf(why, wlen, "a push to %s:%u is approved for process %d and its "
			 "descendants; this client's socket is held by process %d", host, port,
			 (int)cand[k].pid, (int)holders[h]);
	}
	return -EACCES;
}

/*
 * The session's ssh-agent relay (ssh_agent.h): may the client whose end of
 * the connection is Unix socket PEER have a signature?  Only when every
 * process holding it is the approved process of a live grant for an ssh
 * remote, or one of its descendants: the rule grant_admits applies to a
 * CONNECT.
 */
int grants_agent_may_sign(void *ctx, uint64_t peer, uint64_t *gid, char *why, size_t wlen)
{
	struct hp *hp = ctx;
	struct { uint64_t id; pid_t pid; unsigned long long start; } cand[8];
	pid_t holders[HOLDERS_MAX];
	int n_cand = 0, n_hold;

	grants_sweep(hp);
	pthread_mutex_lock(&hp->chan_lock);
	for (struct grant *g = hp->grants; g && n_cand < (int)ARRAY_SIZE(cand); g = g->next)
		for (size_t i = 0; i < g->n; i++)
			if (g->d[i].ssh) {
				cand[n_cand].id = g->id;
				cand[n_cand].pid = g->pid;
				cand[n_cand++].start = g->start;
				break;
			}
	pthread_mutex_unlock(&hp->chan_lock);
	if (!n_cand) {
		snprintf(why, wlen, "no ssh push is approved now");
		return -ENOENT;
	}
	n_hold = peer ? socket_holders(hp, peer, holders, HOLDERS_MAX) : -ENOENT;
	if (n_hold <= 0) {
		snprintf(why, wlen, "no process could be found holding the client's socket");
		return -EACCES;
	}
	for (int k = 0; k < n_cand; k++) {
		int h;

		for (h = 0; h < n_hold && descends(holders[h], cand[k].pid, cand[k].start); h++)
			;
		if (h == n_hold) {
			*gid = cand[k].id;
			return 0;
		}
		snprintf(why, wlen, "an ssh push is approved for process %d and its descendants; "
			 "the client's socket is held by process %d", (int)cand[k].pid,
			 (int)holders[h]);
	}
	return -EACCES;
}

void grants_agent_record(void *ctx, json_t *fields)
{
	struct hp *hp = ctx;

	if (broker_recording(hp))
		broker_record(hp, "http", fields);     /* the broker's own type (helper.c) */
	else
		json_decref(fields);
}

