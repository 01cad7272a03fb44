// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The fallback's Landlock ruleset is built by a thread while the supervisor
 * opens the audit log and creates the session (opening every path of the
 * policy and splitting directories takes a millisecond or two); the agent
 * only restricts itself with it.  The thread reads the policy only, and is
 * joined before the agent is forked (a raw clone3 child must not inherit a
 * lock another thread holds).  (view_prep.h)
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fallback.h"
#include "home_session.h"
#include "progress.h"
#include "util.h"
#include "view_prep.h"
#include "world.h"

/*
 * Run the calling thread on a CPU other than `busy` (where the thread that
 * started it runs), if it may use one.  A new thread starts on its
 * creator's CPU and the scheduler moves it only later, so two threads that
 * should overlap would take turns on one CPU; a hint, and harmless where
 * it cannot be followed.
 */
static void move_off_cpu(int busy)
{
	cpu_set_t set;

	if (busy < 0 || sched_getaffinity(0, sizeof(set), &set) < 0 || CPU_COUNT(&set) < 2 ||
	    !CPU_ISSET(busy, &set))
		return;
	CPU_CLR(busy, &set);
	(void)sched_setaffinity(0, sizeof(set), &set);
}

/*
 * The fallback's rights on the agent's own /proc, which exists only once
 * its PID namespace does (the child adds the rule): what the policy allows
 * on /proc, read only, or nothing when the policy refuses reading something
 * below it that world_child_proc does not already hide.  Read off the
 * ruleset's own compile (fallback_options.tap): rights[0] the rights,
 * rights[1] set when something below is refused.
 */
static int proc_entry(void *ctx, const struct pol_fs_entry *e)
{
	static const char *const hidden[] = { "/proc/kcore", "/proc/sysrq-trigger" };
	uint32_t *rights = ctx;
	bool masked = false;

	if (!strcmp(e->path, "/proc")) {
		rights[0] |= e->allow & ~(e->deny | e->escalate) & CORDON_FS_READ;
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(hidden); i++)
		masked |= !strcmp(e->path, hidden[i]);
	if (!masked && pol_path_within(e->path, "/proc") &&
	    ((e->deny | e->escalate) & CORDON_FS_READ))
		rights[1] = 1;
	return 0;
}

/*
 * The view's thread: it builds the session's private world (world.h), and
 * then, where the fallback is wanted, the Landlock ruleset inside it, so
 * that each rule names the object the agent will reach (its /tmp is not
 * the host's).  When the ruleset turns out to be wanted only after the
 * floor was tried (the first session of a boot), a second run of this
 * thread joins the view and builds it.
 */
void *prepare_view(void *arg)
{
	struct sup *s = arg;
	struct fallback_report *rep;

	move_off_cpu(s->main_cpu);
	if (s->world.ns_fd < 0) {
		/*
		 * Host services whose sockets a session's libc probes on its own:
		 * nscd (every user and group lookup; also a resolver, which
		 * would carry names past the network floor).  Emptied in the
		 * view unless the policy lets the agent connect to them.
		 */
		static const char *const probed[][2] = { { "/run/nscd", "/run/nscd/socket" } };
		const char *absent[ARRAY_SIZE(probed) + 1] = { NULL };
		struct world_plan plan = { .git = &s->git, .home_fd = -1, .home = s->home,
					   .workspace = s->workspace, .absent = absent,
					   .self_at = s->ssh_self[0] ? s->ssh_self : NULL };
		size_t n_absent = 0;
		int r;

		for (size_t i = 0; i < ARRAY_SIZE(probed); i++) {
			struct pol_request pr = { .op = POL_OP_WRITE, .path = probed[i][1] };
			struct pol_result res;

			pol_eval(s->pol, &pr, &res);
			if (res.decision != CORDON_ALLOW)
				absent[n_absent++] = probed[i][0];
		}

		phase("view thread: begins");
		if (open_home_layer(s, &plan.home_fd) < 0)
			return NULL;
		phase("view thread: home layer mounted");
		r = world_build(&plan, &s->world, s->world_error, sizeof(s->world_error));
		close(plan.home_fd);
		if (r < 0) {
			world_close(&s->world);
			return NULL;
		}
		phase("view thread: view built");
	} else if (world_enter(&s->world) < 0) {
		snprintf(s->world_error, sizeof(s->world_error), "joining the session's view: %m");
		return NULL;
	}
	if (!s->ll_wanted)
		return NULL;
	rep = calloc(1, sizeof(*rep));
	if (!rep) {
		s->ll_fd = -ENOMEM;
		return NULL;
	}
	{
		/* The agent's own mount namespace covers what its listing rights count on. */
		uint32_t proc[2] = { 0, 0 };
		struct fallback_options o = { .layer = s->home, .cover_denied_dirs = true,
					      .tap = proc_entry, .tap_ctx = proc };

		s->ll_fd = fallback_prepare(s->pol, &o, rep);
		s->proc_rights = proc[1] ? 0 : proc[0];
	}
	phase("view thread: ruleset built");
	log_debug("run: view thread: the ruleset has %d path rules, %d directories split, %d covered",
		  rep->fs_rules, rep->split_dirs, rep->n_covers);
	if (s->ll_fd < 0)
		snprintf(s->ll_error, sizeof(s->ll_error), "%s", rep->error);
	free(s->ll_rep);
	s->ll_rep = rep;
	return NULL;
}

