/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * An exec the session asked for (sup_exec.c): read from the task, judged
 * (exec_decide.c), answered, held for a human or recorded; and the exec
 * recheck (bpf/exec_recheck.bpf.c, its part exec_recheck.h) armed for each
 * exec let go on and watched until the kernel has met or killed it.  Main
 * loop only.
 */
#ifndef CORDON_SUP_EXEC_H
#define CORDON_SUP_EXEC_H

#include "notify.h"
#include "sup_state.h"

/* A seccomp notification of execve or execveat: answered, held or refused, and recorded. */
void sup_exec_handle(struct sup *s, const struct notify_req *req);

/*
 * Before an exec held in h is let go on: arm the exec recheck with what was
 * judged (h->exec).  comm: the caller's, if already read (else it is read
 * here), for the record of a kill.  0 when armed or when the recheck is off (the callers
 * then keep the weaker rule: no argv-based allow while another task shares
 * the caller's memory); otherwise -errno, with the reason in why.
 */
int sup_exec_arm(struct sup *s, const struct held *h, const char *comm, const char **why);

/*
 * The execs armed so far: the record of each the kernel killed for not
 * being what was judged; those met or gone are forgotten.
 */
void sup_exec_sweep(struct sup *s);

#endif /* CORDON_SUP_EXEC_H */
