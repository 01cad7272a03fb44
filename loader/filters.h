/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The two seccomp filters a session's agent gets, written once as libseccomp
 * rules and compiled to classic BPF at build time (tools/seccomp_gen writes
 * build/seccomp_filters.h): generating the ~200-rule denylist with
 * libseccomp in every agent cost ~0.4 ms of each session start, in the one
 * process that must not allocate (a raw clone3 child).  At run time the
 * agent installs the prebuilt programs with seccomp(2) directly.
 *
 *  - the fallback's denylist (see filters.c for what it closes and what it
 *    cannot);
 *  - the notification filter: execve/execveat, connect and (when the policy
 *    escalates file access) the open family go to the supervisor, for each
 *    of the 8 combinations of NOTIFY_* (below).
 */
#ifndef CORDON_FILTERS_H
#define CORDON_FILTERS_H

#include <seccomp.h>

#include "notify_set.h"

/* Add the denylist's rules to `ctx` (made with SCMP_ACT_ALLOW).  0 or -errno. */
int filter_denylist_rules(scmp_filter_ctx ctx);

/* Add the notification rules for `what` (NOTIFY_* bits).  0 or -errno. */
int filter_notify_rules(scmp_filter_ctx ctx, unsigned what);

/* Context attributes each filter is built with. */
int filter_denylist_attrs(scmp_filter_ctx ctx);
int filter_notify_attrs(scmp_filter_ctx ctx);

#define FILTER_NOTIFY_VARIANTS 8

#endif
