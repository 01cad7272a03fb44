/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The fallback posture's self-applied layers: Landlock (files by path
 * hierarchy, TCP ports, IPC scoping) and a seccomp denylist, applied by the
 * agent's own process to itself right before exec.  cgroup-bpf (network by
 * address) is another module's; the supervisor's notify filter goes on top.
 *
 * What this posture cannot close is listed in fallback.c and, at run time,
 * in fallback_report.lacks.
 */
#ifndef CORDON_FALLBACK_H
#define CORDON_FALLBACK_H

#include <stdbool.h>
#include <stdint.h>
#include "policy.h"

#define FALLBACK_MAX_PORTS 8

struct fallback_options {
	/* TCP ports the agent may connect to (cordon's loopback proxies). */
	uint16_t connect_ports[FALLBACK_MAX_PORTS];
	int n_connect_ports;
	/*
	 * false (the default): TCP bind on any port, so dev servers work; the
	 * cgroup-bpf bind programs keep the address on loopback.  true: bind
	 * only to bind_ports (port 0 = an ephemeral port).
	 */
	bool restrict_bind;
	uint16_t bind_ports[FALLBACK_MAX_PORTS];
	int n_bind_ports;
	/*
	 * A directory that is the agent's own copy-on-write layer in the view
	 * the ruleset is built in (userspace/session/home.h), or NULL.  Below it, a
	 * denied name absent from the view splits nothing (what the agent makes
	 * there is its layer's: a credential store is whited out, the real one
	 * out of reach), an existing file whose creation and deletion are
	 * denied keeps its parent's create rights (it cannot be removed to be
	 * made again), and a policy rule's (not an invariant's) denial of
	 * changes there is not kept: Landlock could only keep it by refusing
	 * every creation and write at the home's top (a right on a directory
	 * holds for all below it), and what the agent changes there is its
	 * layer's, which the human's tools never run (a ~/.bashrc or a systemd
	 * unit written there is seen by the agent's later sessions only, which
	 * are sandboxed as this one).  So the agent can make and write its
	 * state at the top of its home.  The full posture keeps such a denial
	 * exactly: it judges objects.
	 */
	const char *layer;
	/*
	 * The caller will cover each directory the report lists (covers[])
	 * with an empty, read-only directory that no agent may list, in the
	 * mount namespace it restricts itself in, before it does.  Then a
	 * directory split around a denied directory keeps its own listing
	 * right (READ_DIR): `ls /etc` works while /etc/sudoers.d stays
	 * unlistable.  See grant() in fallback.c.
	 */
	bool cover_denied_dirs;
	/*
	 * Called with every entry of the policy's compiled filesystem table
	 * as the ruleset is built, when not NULL: a caller that needs another
	 * reading of the same table (userspace/session/view_prep.c, the
	 * agent's /proc) takes it from this compile instead of a second one.
	 * A negative return fails the build.
	 */
	pol_fs_entry_fn tap;
	void *tap_ctx;
};

#define FALLBACK_MAX_COVERS 32
#define FALLBACK_COVER_PATH 256

#define FALLBACK_LACKS_MAX 2048

struct fallback_report {
	int landlock_abi;       /* 0: Landlock unavailable */
	int fs_rules;           /* path-beneath rules added */
	int split_dirs;         /* directories split around a denied path below */
	int net_rules;          /* TCP port rules added */
	bool net_connect;       /* TCP connect restricted by port */
	bool net_bind;          /* TCP bind restricted by port */
	bool scoped_abstract;   /* abstract Unix sockets outside the domain refused */
	bool scoped_signals;    /* signals outside the domain refused */
	bool seccomp;           /* the denylist is installed */
	/*
	 * With cover_denied_dirs: the read-denied directories the ruleset
	 * counts on being covered (fallback_cover_dirs does it).  A caller that
	 * does not cover them must not apply the ruleset.
	 */
	int n_covers;
	char covers[FALLBACK_MAX_COVERS][FALLBACK_COVER_PATH];
	char lacks[FALLBACK_LACKS_MAX];  /* "id: what" lines, one per gap */
	char error[512];        /* on failure: what and where */
};

/*
 * Apply Landlock (every right the ABI has) from the compiled policy, then
 * the seccomp denylist.  Irreversible; call single-threaded in the child
 * right before exec, after prctl(PR_SET_NO_NEW_PRIVS).  Returns 0 or -errno
 * (the report's `error` says what); fills the report.  opt may be NULL.
 */
int fallback_apply(const struct policy *p, const struct fallback_options *opt,
		   struct fallback_report *rep);

/*
 * The same in two steps, so that a supervisor can build the Landlock
 * ruleset (opening every path, splitting directories: the slow part) while
 * it does other start-up work, and the child only restricts itself with it:
 * fallback_prepare returns the ruleset fd (or -errno, the report saying
 * why); fallback_apply_prepared, in the child right before exec, applies it
 * and the seccomp denylist.  The ruleset's rules hold the inodes the paths
 * named when it was built.
 */
int fallback_prepare(const struct policy *p, const struct fallback_options *opt,
		     struct fallback_report *rep);
/*
 * Add to a prepared ruleset: read files and directories beneath DIR (a
 * tree that exists only in the process about to restrict itself, such as
 * its PID namespace's /proc).  0 or -errno.
 */
int fallback_add_read(int ruleset_fd, const char *dir);
int fallback_apply_prepared(int ruleset_fd, struct fallback_report *rep);
/*
 * Cover each of the report's covers[] with an empty, read-only tmpfs of
 * mode 0 owned by root (no agent without CAP_DAC_OVERRIDE lists it), in
 * the caller's mount namespace (a private one: the session agent's own);
 * the directory is opened without following a symlink.  Needs
 * CAP_SYS_ADMIN.  0 or -errno, `why` naming the directory.
 */
int fallback_cover_dirs(const struct fallback_report *rep, char *why, size_t wlen);

/* Only the Landlock part.  Same contract. */
int fallback_landlock_apply(const struct policy *p, const struct fallback_options *opt,
			    struct fallback_report *rep);

/*
 * Only the seccomp denylist, as a BPF filter on every thread of the caller
 * (for reuse by the supervisor, which may stack a notify filter on top).
 * Returns 0 or -errno.
 */
int fallback_seccomp_install(void);

/*
 * A helper outside every session that parses the agent's traffic (the MCP
 * proxy, once its servers run) confined to what it still does: where the
 * kernel has Landlock, a domain in which it may open nothing but what lies
 * below READ_DIR, for reading (no file written, made, removed or run; no
 * TCP; no abstract socket or signal outside it, where the kernel has those
 * scopes); and always the denylist and helper rules: no exec, fork,
 * socket, connect, bind or listen, no signal but to itself, a pidfd's
 * signal 0 only.  Sets no_new_privs.  0, or -errno.
 */
int fallback_confine_helper(const char *read_dir);

#endif /* CORDON_FALLBACK_H */
