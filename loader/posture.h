/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Posture: what the kernel lets cordon enforce, derived from measured
 * mechanism results.  Pure functions; the measuring lives in probe.c.
 */
#ifndef CORDON_POSTURE_H
#define CORDON_POSTURE_H

#include <stdbool.h>

enum mech {
	MECH_BPF_LSM = 0,
	MECH_CGROUP2,
	MECH_CGROUP_BPF,
	MECH_LANDLOCK,
	MECH_SECCOMP_NOTIFY,
	MECH_SECCOMP_ADDFD_SEND,
	MECH_PIDFD_GETFD,
	MECH_USERNS,
	MECH_IO_URING,
	MECH_MAX,
};

enum mech_state {
	MECH_UNAVAILABLE = 0,
	MECH_AVAILABLE,
	MECH_NOT_CHECKED,        /* needs privileges the caller lacks */
};

struct mech_result {
	enum mech_state state;
	int value;               /* Landlock ABI version, 0 elsewhere */
	char reason[256];
};

enum posture_level {
	POSTURE_INSUFFICIENT = 0,
	POSTURE_FALLBACK,
	POSTURE_FULL,
};

/* A protection that some posture cannot provide. */
struct lack {
	const char *id;
	const char *what;
};

#define POSTURE_MAX_LACKS 32

struct posture {
	enum posture_level level;
	struct mech_result mech[MECH_MAX];
	const struct lack *lacks[POSTURE_MAX_LACKS];
	int n_lacks;
	bool root;
};

/* A lack found after probing (at session start); added once. */
extern const struct lack posture_no_exec_recheck;
extern const struct lack posture_no_unix_gate;
extern const struct lack posture_patterns_later;
void posture_add(struct posture *p, const struct lack *l);

const char *mech_name(enum mech m);
const char *mech_label(enum mech m);
const char *posture_name(enum posture_level l);

/*
 * Fill p->level and p->lacks from p->mech.  A mechanism that was not checked
 * counts as unavailable: unknown means deny.
 */
void posture_compute(struct posture *p);

#endif /* CORDON_POSTURE_H */
