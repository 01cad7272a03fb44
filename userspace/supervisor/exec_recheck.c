// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The exec recheck's supervisor side (exec_recheck.h).  The kernel side
 * (bpf/exec_recheck.bpf.c) compares the argv, path and binary an exec
 * received with what the supervisor judged, and kills it before it runs
 * if they differ; here, what was armed is watched so that each kill is
 * recorded and each mark the kernel leaves is collected.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "exec_recheck.h"
#include "net.h"
#include "util.h"

/* The initial PID namespace's /proc/self/ns/pid inode (PROC_PID_INIT_INO). */
#define PID_NS_INIT_INO 0xEFFFFFFCu

bool exec_recheck_setup(struct exec_recheck *r, struct net *net)
{
	struct stat st;

	r->net = net;
	r->on = net_exec_recheck(net) && stat("/proc/self/ns/pid", &st) == 0 &&
		st.st_ino == PID_NS_INIT_INO;
	return r->on;
}

bool exec_recheck_enabled(const struct exec_recheck *r)
{
	return r->on;
}

bool exec_recheck_pending(const struct exec_recheck *r)
{
	return r->n > 0;
}

/* TID's entry, or where a new one goes (index r->n, room made): NULL without memory. */
static struct armed_exec *slot(struct exec_recheck *r, pid_t tid)
{
	struct armed_exec *a;

	for (a = r->armed; a < r->armed + r->n; a++)
		if (a->tid == tid)
			return a;
	if (r->n == r->cap) {
		int cap = r->cap ? r->cap * 2 : 64;
		struct armed_exec *v = realloc(r->armed, (size_t)cap * sizeof(*v));

		if (!v)
			return NULL;
		r->armed = v;
		r->cap = cap;
	}
	return &r->armed[r->n];
}

int exec_recheck_arm(struct exec_recheck *r, pid_t tid, const struct cordon_exec_expect *e,
		     const char *comm, const char *summary, const char **why)
{
	struct armed_exec *a;
	int err;

	if (!r->on) {
		*why = "the exec recheck is not on (unknown means deny)";
		return -EOPNOTSUPP;
	}
	/*
	 * Watched until the kernel has met it, killed it, or its thread has
	 * gone, one entry per thread (a new arm of the thread replaces its
	 * old one in the kernel too).  The room is made first: an
	 * expectation armed and then not watched would be a kill's mark
	 * that nobody collects.
	 */
	a = slot(r, tid);
	if (!a) {
		*why = "out of memory to watch the exec recheck (unknown means deny)";
		return -ENOMEM;
	}
	err = net_exec_arm(r->net, (uint32_t)tid, e);
	if (err < 0) {
		*why = "the exec recheck could not be armed (unknown means deny)";
		return err;
	}
	if (a == r->armed + r->n)
		r->n++;
	a->tid = tid;
	a->t_ms = mono_ms();
	snprintf(a->comm, sizeof(a->comm), "%s", comm ? comm : "?");
	snprintf(a->summary, sizeof(a->summary), "%s", summary ? summary : "");
	return 0;
}

void exec_recheck_disarm(struct exec_recheck *r, pid_t tid)
{
	if (r->on)
		net_exec_disarm(r->net, (uint32_t)tid);
}

void exec_recheck_sweep(struct exec_recheck *r,
			void (*killed)(void *ctx, const struct armed_exec *a), void *ctx)
{
	for (int i = 0; i < r->n;) {
		struct armed_exec *a = &r->armed[i];
		int k = net_exec_killed(r->net, (uint32_t)a->tid);

		if (k == 1 && killed)
			killed(ctx, a);
		if (k != 0) {
			memmove(a, a + 1, (size_t)(r->n - i - 1) * sizeof(*a));
			r->n--;
			continue;
		}
		i++;
	}
}

void exec_recheck_free(struct exec_recheck *r)
{
	free(r->armed);
	r->armed = NULL;
	r->n = r->cap = 0;
}
