// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <string.h>
#include "posture.h"
#include "util.h"

static const struct {
	const char *name;   /* JSON key */
	const char *label;  /* human label */
} mechs[MECH_MAX] = {
	[MECH_BPF_LSM]            = { "bpf_lsm", "BPF LSM" },
	[MECH_CGROUP2]            = { "cgroup2", "cgroup v2" },
	[MECH_CGROUP_BPF]         = { "cgroup_bpf", "cgroup-bpf" },
	[MECH_LANDLOCK]           = { "landlock", "Landlock" },
	[MECH_SECCOMP_NOTIFY]     = { "seccomp_notify", "seccomp user notification" },
	[MECH_SECCOMP_ADDFD_SEND] = { "seccomp_addfd_send", "seccomp ADDFD + SEND" },
	[MECH_PIDFD_GETFD]        = { "pidfd_getfd", "pidfd_getfd" },
	[MECH_USERNS]             = { "user_namespaces", "user namespaces" },
	[MECH_IO_URING]           = { "io_uring", "io_uring" },
};

const char *mech_name(enum mech m)
{
	return m < MECH_MAX ? mechs[m].name : "?";
}

const char *mech_label(enum mech m)
{
	return m < MECH_MAX ? mechs[m].label : "?";
}

const char *posture_name(enum posture_level l)
{
	switch (l) {
	case POSTURE_FULL:
		return "full";
	case POSTURE_FALLBACK:
		return "fallback";
	case POSTURE_INSUFFICIENT:
		return "insufficient";
	}
	return "insufficient";
}

/*
 * What each missing mechanism costs.  These are the protections the BPF LSM
 * floor provides and the fallback (Landlock + cgroup-bpf + seccomp) cannot,
 * because the mechanism has no hook for them; docs/floor.md's posture table
 * says the same.
 */
static const struct lack no_lsm[] = {
	{ "hardlink-protected-inodes",
	  "credential stores reached through a hardlink made before the session: "
	  "Landlock judges the path hierarchy, not the inode" },
	{ "mmap-exec",
	  "mapping a non-executable file PROT_EXEC: Landlock has no mmap hook" },
	{ "unix-socket-by-object",
	  "pathname Unix sockets judged by inode in the kernel: the supervisor "
	  "judges the canonical path and a connector process with the agent's "
	  "identity connects a copy of the socket (SO_PEERCRED names that "
	  "process, not the one that asked); a datagram sent with a "
	  "pathname destination is refused rather than judged (connect, then "
	  "send, is judged)" },
	{ "capable",
	  "per-capability denial in the kernel for root in the sandbox: "
	  "capabilities are dropped at start instead" },
	{ "floor-events",
	  "a kernel event for every filesystem denial: Landlock returns EACCES "
	  "without telling cordon" },
	{ "ioctl-by-object",
	  "ioctl judged on the file object: seccomp sees only the request number" },
	{ "metadata",
	  "chmod, chown, setxattr and utimes: Landlock has no right for them" },
	{ "split-snapshot",
	  "a deny below an allowed directory: the directory is split around it once, "
	  "and entries created in it later get only its direct rights" },
	{ "proc-root",
	  "an agent running as uid 0 can write /proc/sysrq-trigger (Landlock cannot "
	  "deny one /proc file without freezing /proc/PID)" },
	{ "fs-notify",
	  "inotify and fanotify watches on paths the agent may not read: Landlock has no "
	  "hook for them, so the names made, opened and removed in a host directory it "
	  "cannot list are seen" },
};

static const struct lack landlock_old[] = {
	{ "landlock-refer", "renaming or linking across directories (Landlock ABI < 2)" },
	{ "landlock-truncate", "truncate judged as a write (Landlock ABI < 3)" },
	{ "landlock-tcp", "TCP bind/connect in Landlock (ABI < 4); cgroup-bpf still judges them" },
	{ "landlock-ioctl-dev", "ioctl on devices (Landlock ABI < 5)" },
	{ "landlock-scope", "abstract Unix sockets and signals scoped to the session (Landlock ABI < 6)" },
};

static const struct lack no_cgroup_bpf[] = {
	{ "network", "network confinement: connect, sendmsg, bind and socket "
	  "creation are not judged in the kernel" },
};

static const struct lack no_notify[] = {
	{ "supervisor", "semantic lifting and human approval: the supervisor "
	  "cannot hold exec and connect for a decision" },
};

static const struct lack no_addfd_send[] = {
	{ "emulated-open", "escalated opens cannot be performed by the supervisor "
	  "race-free (no ADDFD + SEND): escalations on files become denials" },
};

static const struct lack no_getfd[] = {
	{ "emulated-connect", "connect cannot be emulated on a copy of the socket "
	  "(no pidfd_getfd): escalations on connect become denials" },
};

static const struct lack no_floor[] = {
	{ "filesystem", "filesystem confinement: neither BPF LSM nor Landlock is available" },
};

static bool have(const struct posture *p, enum mech m)
{
	return p->mech[m].state == MECH_AVAILABLE;
}

static void add(struct posture *p, const struct lack *l, size_t n)
{
	for (size_t i = 0; i < n && p->n_lacks < POSTURE_MAX_LACKS; i++)
		p->lacks[p->n_lacks++] = &l[i];
}

/* Found at session start, in the fallback posture (userspace/session/run.c). */
const struct lack posture_no_unix_gate = {
	"unix-gate",
	"pathname Unix sockets kept from the session in the kernel (cgroup "
	"connect_unix and sendmsg_unix, Linux 6.7): a datagram sent to a pathname "
	"socket is not judged, and a connect whose address reads as abstract or "
	"not Unix when judged, rewritten to a path by another thread before the "
	"kernel reads it, reaches that path unjudged (within the agent's DAC "
	"rights)" };

/* Found at session start, in any posture (userspace/session/run.c). */
const struct lack posture_no_exec_recheck = {
	"exec-recheck",
	"an exec's argv and binary compared by the kernel with what was judged "
	"(tp_btf, bpf_loop and bpf_probe_read_kernel refused, or cordon is not in the "
	"initial PID namespace): argv-based allows are refused while another task "
	"shares the caller's memory, but argv in a MAP_SHARED or file mapping, or a "
	"symlink swapped after the check, is not caught" };

/*
 * Found at session start, in any posture, when the policy denies or
 * escalates by pattern (userspace/session/floor_open.c): the floor's
 * tables hold the matches that existed then (policy/compile.c).
 */
const struct lack posture_patterns_later = {
	"patterns-later",
	"a file created during the session at a name a pattern rule denies or "
	"escalates (\"*\", \"**\": ${WORKSPACE}/**/.env) is not in the kernel's "
	"tables, which hold the matches that existed at start: the floor does not "
	"refuse it (in the fallback, one created in a directory that holds a match "
	"gets only the rights no denial touches); the supervisor and the MCP proxy "
	"judge it by pattern where they see it" };

void posture_add(struct posture *p, const struct lack *l)
{
	for (int i = 0; i < p->n_lacks; i++)
		if (p->lacks[i] == l)
			return;
	add(p, l, 1);
}

void posture_compute(struct posture *p)
{
	bool lsm = have(p, MECH_BPF_LSM);
	bool ll = have(p, MECH_LANDLOCK);
	bool cgb = have(p, MECH_CGROUP_BPF) && have(p, MECH_CGROUP2);
	bool notify = have(p, MECH_SECCOMP_NOTIFY);
	int abi = ll ? p->mech[MECH_LANDLOCK].value : 0;

	p->n_lacks = 0;
	if (lsm && cgb && notify)
		p->level = POSTURE_FULL;
	else if (ll && cgb && notify)
		p->level = POSTURE_FALLBACK;
	else
		p->level = POSTURE_INSUFFICIENT;

	if (!lsm) {
		if (ll) {
			add(p, no_lsm, ARRAY_SIZE(no_lsm));
			if (abi < 6)
				add(p, &landlock_old[abi < 1 ? 0 : abi - 1],
				    ARRAY_SIZE(landlock_old) - (size_t)(abi < 1 ? 0 : abi - 1));
		} else {
			add(p, no_floor, ARRAY_SIZE(no_floor));
		}
	}
	if (!cgb)
		add(p, no_cgroup_bpf, ARRAY_SIZE(no_cgroup_bpf));
	if (!notify)
		add(p, no_notify, ARRAY_SIZE(no_notify));
	if (notify && !have(p, MECH_SECCOMP_ADDFD_SEND))
		add(p, no_addfd_send, ARRAY_SIZE(no_addfd_send));
	if (notify && !have(p, MECH_PIDFD_GETFD))
		add(p, no_getfd, ARRAY_SIZE(no_getfd));
}
