/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Resource budgets of a session: memory, pids and CPU limits put on the
 * session's cgroup, and the question the supervisor asks afterwards ("has
 * one been spent?") so that it can stop the agent and audit which.
 *
 * A session is the cgroup v2 directory <cgroup2>/cordon/<name>.  Each
 * controller is taken from cgroup v2 when the session can have it (enabled
 * in cgroup.subtree_control from the root down to the session's parent);
 * otherwise, on a hybrid host whose controller is bound to a cgroup v1
 * hierarchy, from a v1 cgroup <v1 mount>/cordon/<name> that the agent joins
 * as well (budget_join_self).  A budget that neither can enforce is an error:
 * the caller refuses to start rather than run the agent unlimited.
 *
 * wall_time and steps are the supervisor's to count; this module ignores
 * them.
 */
#ifndef CORDON_BUDGET_H
#define CORDON_BUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>

struct pol_budgets;
struct budget;

/*
 * Prepare the limits of the session cgroup V2_PATH (exists, empty), named
 * NAME (one path component: the v1 cgroups are <v1 mount>/cordon/NAME):
 * memory.max (+ memory.swap.max 0 where present) or memory.limit_in_bytes
 * (+ memory.memsw.limit_in_bytes where present); pids.max; cpu.max
 * "QUOTA 100000" or cpu.cfs_period_us 100000 + cpu.cfs_quota_us QUOTA.
 * Zero fields are unlimited and touch nothing: all-zero budgets create no
 * cgroup and enable no controller.  B may be NULL (all zero).
 *
 * Returns 0 and *out, -EOPNOTSUPP when a budget is set and its controller is
 * available neither in v2 nor as a v1 hierarchy, or another -errno.  On
 * failure it says why, once, on stderr ("budget: ..."; which controller,
 * which file): the caller refuses to start and need not repeat it.  The v1
 * cgroups it created are removed; controllers it enabled on the ancestors
 * stay enabled (the other sessions share them).
 */
int budget_setup(const struct pol_budgets *b, const char *v2_path, const char *name,
		 struct budget **out);

/*
 * Put the calling thread in the v1 cgroups as well (moving it into the v2
 * session is the caller's), by writing 0 to
 * each one's `tasks` file.  For the agent itself, between its fork and
 * its exec, when it is one thread (the whole process).  The kernel moves
 * a thread that moves itself without its global threadgroup lock, so
 * without the RCU grace period a move by pid waits for (measured here:
 * 6 to 42 ms, ~16 ms median, per session start; cgroup_procs_write_start
 * in kernel/cgroup/cgroup.c).  Needs the privilege to write the files
 * (root), so before the agent drops it; before it execs, too: v1 does not
 * move the memory a task already charged, and every process the agent
 * forks later inherits both memberships.  0 when there is no v1 cgroup, or
 * -errno with nothing said (the caller is the forked child).
 */
int budget_join_self(const struct budget *bg);

/*
 * Has a budget been spent since setup?  1 with WHICH = "memory" or "pids"
 * and DETAIL a sentence for the human and the audit ("memory: 3 OOM kills
 * at the 64 MiB limit"), 0 if not, -errno.  Memory is spent when the OOM
 * killer ran in the session (v2 memory.events oom_kill/oom, v1
 * memory.oom_control oom_kill); pids when a fork was refused at the limit
 * (pids.events max, v1 and v2).  Reaching the memory limit and reclaiming
 * page cache (v2 "max", v1 memory.failcnt) is normal operation, not a spent
 * budget: it is reported by budget_usage instead.  CPU is a throttle and is
 * never spent.  Memory is reported first when both are.  Does not log.
 */
int budget_check(struct budget *bg, char *which, size_t wlen, char *detail, size_t dlen);

/*
 * Usage for the audit's final record, a new JSON object:
 *   "memory": { "limit_bytes", "peak_bytes", "oom_kills", "limit_hits", "cgroup" }
 *   "pids":   { "limit", "current", "peak", "refused_forks", "cgroup" }
 *   "cpu":    { "cores", "usage_usec", "nr_throttled", "throttled_usec", "cgroup" }
 * "memory" and "pids" only when budgeted; "cpu" always (usage_usec comes
 * from the v2 session's cpu.stat, which exists without the controller).
 * A number the kernel does not offer (memory.peak before 5.19, pids.peak
 * before 6.1) is absent.  limit_hits is v2 memory.events "max" or v1
 * memory.failcnt (recent kernels leave the v1 count at 0 once memsw is
 * limited).  "cgroup" is "v2" or "v1".  Does not log.
 */
int budget_usage(struct budget *bg, json_t **out);

/*
 * An fd that becomes readable when the counters budget_check reads may
 * have changed.  Poll it for POLLIN, not POLLPRI: it is an epoll set of the
 * kernel's notifications (v2 memory.events and pids.events, which signal
 * POLLPRI, and on v1 memory an eventfd registered for memory.oom_control).
 * Every wake-up must be followed by budget_check, which re-arms it.  -1 when
 * some budget that can be spent has no notification (v1 pids: see
 * budget.c), or when nothing can be spent: the caller then calls
 * budget_check on a timer.  Owned by BG.
 */
int budget_pollfd(struct budget *bg);

/*
 * Kill whatever remains in the v1 cgroups and remove them; close the fds.
 * The v2 session cgroup is the caller's.  NULL-safe.
 */
void budget_destroy(struct budget *bg);

/* --- pure helpers, exposed for the unit tests ------------------------------ */

enum budget_ctl {
	BUDGET_MEMORY = 0,
	BUDGET_PIDS,
	BUDGET_CPU,
	BUDGET_NCTL,
};

const char *budget_ctl_name(enum budget_ctl c);

/*
 * The mount point of the cgroup v1 hierarchy that carries controller CTL
 * ("memory", "pids", "cpu") in the text of /proc/self/mountinfo: a "cgroup"
 * mount whose super options hold CTL as a whole word (so "cpu" is found in
 * "rw,cpu,cpuacct" but not in "rw,cpuset").  0, -ENOENT, -ENAMETOOLONG.
 */
/* Remove the v1 budget groups of session name, whose cordon is gone (reap.c). */
void budget_reap(const char *name);

int budget_v1_mount(const char *mountinfo, const char *ctl, char *out, size_t outlen);

/* Is CTL a word of a cgroup.controllers / cgroup.subtree_control text? */
bool budget_has_word(const char *list, const char *ctl);

/*
 * The value of KEY in a flat-keyed file ("oom_kill 3\nmax 0\n": the
 * *.events, *.stat and memory.oom_control files).  0, -ENOENT, -EINVAL.
 */
int budget_key_u64(const char *text, const char *key, uint64_t *val);

/*
 * CFS quota in microseconds per BUDGET_CPU_PERIOD_US for CORES (> 0), never
 * below the kernel's 1 ms minimum.  0 for "no limit" (cores <= 0 or NaN).
 */
#define BUDGET_CPU_PERIOD_US 100000ULL
uint64_t budget_cpu_quota(double cores);

/* "64 MiB", "1 GiB", "4097 bytes": a size as the detail sentences say it. */
void budget_fmt_size(uint64_t bytes, char *out, size_t len);

#endif /* CORDON_BUDGET_H */
