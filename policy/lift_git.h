/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The git recogniser (lift_git.c), for pol_lift_exec (lift.c): git push and
 * send-pack as git.push, one event per refspec with its force; the other
 * roads that send code off; a fetch into a repository outside the
 * workspace (a push seen from the remote's side); -c aliases expanded, and
 * a command git does not have read as an alias that may push; git commit
 * as git.commit {message}.
 */
#ifndef CORDON_POLICY_LIFT_GIT_H
#define CORDON_POLICY_LIFT_GIT_H

#include "lifted.h"

/* git, or its dashed form git-SUB (prog, argv[0]'s last component). */
void lift_git(struct lift *L, const char *prog, const char *const *argv, int argc);

#endif
