// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The session's cgroup and kernel rules, made and undone (session_cgroup.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "budget.h"
#include "cgroup.h"
#include "floor.h"
#include "net.h"
#include "session_cgroup.h"
#include "reap.h"
#include "util.h"
#include "world.h"

/* The kernel rules name objects as the agent reaches them: built in the view. */
struct floor_call {
	struct sup *s;
	int host_root;
};

static int create_floor_session(void *arg)
{
	struct floor_call *c = arg;

	return floor_session_create_at(c->s->floor, c->s->pol, c->s->name, c->host_root,
				       &c->s->fsess);
}

int make_session(struct sup *s)
{
	char parent[PATH_MAX];
	int r;

	if (s->floor) {
		struct floor_call c = { .s = s };

		/* This thread is still in the host's namespace: its "/" is the host's. */
		c.host_root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		r = c.host_root < 0 ? -errno : world_call(&s->world, create_floor_session, &c);
		if (c.host_root >= 0)
			close(c.host_root);
		if (r == -E2BIG) {
			/* The shared maps' bounds (bpf/cordon.h): a clear refusal,
			 * never a session started without its rules. */
			log_err("run: cannot create the session's kernel rules: the floor's maps are "
				"full (at most %d sessions at once, %d file-rule entries among them): "
				"too many sessions running", CORDON_MAX_SESSIONS, CORDON_MAX_FS_RULES);
			return r;
		}
		if (r < 0) {
			log_err("run: cannot create the session's kernel rules: %s",
				pol_compile_strerror(r));
			return r;
		}
		snprintf(s->cgroup, sizeof(s->cgroup), "%s", floor_session_cgroup(s->fsess));
	} else {
		r = floor_cgroup_parent(parent, sizeof(parent));
		r = r ?: cg_mkdir(parent);
		if (r < 0) {
			log_err("run: cgroup2: %s", strerror(-r));
			return r;
		}
		if ((size_t)snprintf(s->cgroup, sizeof(s->cgroup), "%s/%s", parent, s->name) >=
		    sizeof(s->cgroup) ||
		    (size_t)snprintf(s->conn.cgroup, sizeof(s->conn.cgroup), "%s-unix/%s", parent,
				     s->name) >= sizeof(s->conn.cgroup)) {
			log_err("run: cgroup path too long");
			return -ENAMETOOLONG;
		}
		if (mkdir(s->cgroup, 0755) < 0) {
			r = -errno;
			log_err("run: mkdir %s: %m", s->cgroup);
			s->cgroup[0] = '\0';
			return r;
		}
	}
	r = cg_id(s->cgroup, &s->cgid);
	/* The session's own ring first: none of its refusals goes to the shared one. */
	r = r ?: net_ring_open(s->net, s->cgid, &s->nring);
	/*
	 * Allowed connects are audited by the supervisor, not the kernel.  In
	 * the fallback the session may not name a pathname Unix socket itself:
	 * the supervisor judges and performs those connects (sup_connect.c).
	 */
	r = r ?: net_session_add(s->net, s->cgid, s->pol,
				 s->floor ? 0 : CORDON_NET_SESSION_UNIX_GATE);
	if (r == -E2BIG) {
		log_err("run: cannot register the session with the network floor: its maps are full "
			"(at most %d sessions at once, %d address rules among them): too many "
			"sessions running", CORDON_MAX_SESSIONS, CORDON_MAX_NET_RULES);
		return r;
	}
	if (r < 0) {
		log_err("run: cannot register the session with the network floor: %s", strerror(-r));
		return r;
	}
	r = budget_setup(&s->pol->budgets, s->cgroup, s->name, &s->budget);
	if (r < 0) {
		log_err("run: budgets: %s", strerror(-r));
		return r;
	}
	return 0;
}

/*
 * Undo the session: kill every task, then the kernel rules.  In that order,
 * so that no task of the session ever runs without its floor.
 */
void teardown(struct sup *s)
{
	if (s->cgroup[0])
		(void)cg_destroy(s->cgroup);
	budget_destroy(s->budget);
	s->budget = NULL;
	if (s->fsess) {
		(void)floor_session_destroy(s->floor, s->fsess);
		s->fsess = NULL;
	}
	if (s->net && s->cgid)
		(void)net_session_del(s->net, s->cgid);
	net_ring_close(s->nring);
	s->nring = NULL;
	s->cgid = 0;
	s->cgroup[0] = '\0';
}

void remove_run_dir(const struct sup *s)
{
	char p[PATH_MAX + 32];

	if (!s->run_dir[0])
		return;
	snprintf(p, sizeof(p), "%s/approve.sock", s->run_dir);
	(void)unlink(p);
	snprintf(p, sizeof(p), "%s/events.sock", s->run_dir);
	(void)unlink(p);
	snprintf(p, sizeof(p), "%s/" CORDON_RUN_DESC, s->run_dir);
	(void)unlink(p);
	(void)rmdir(s->run_dir);
	if (s->mcp_path[0])
		(void)unlink(s->mcp_path);
}

void *attach_agent(void *arg)
{
	struct attach *a = arg;

	a->r = cg_attach_pid(a->s->cgroup, a->pid);
	return NULL;
}
