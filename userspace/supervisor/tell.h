/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Words to the agent: what a human decided (tell.c). */
#ifndef CORDON_TELL_H
#define CORDON_TELL_H

#include <sys/types.h>

/*
 * Tell the caller (pid: a thread of the session whose cgroup is CGROUP) in words, on its
 * stderr, when that is a pipe or a pseudo-terminal it holds open for
 * writing, a Unix stream socket whose peer is in the session (a Node or
 * Bun parent's stdio), or a regular file of its own open for writing
 * (Claude Code's tool output): a tool's output, which the model reads.  Never
 * blocks; nothing is written anywhere else (see tell.c for why).
 */
void tell(const char *cgroup, pid_t pid, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
