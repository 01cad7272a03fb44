/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef CORDON_PROBE_H
#define CORDON_PROBE_H

#include "posture.h"

/*
 * Measure every mechanism by trying it, then compute the posture.  Every
 * object a probe creates (BPF programs, links, scratch cgroups, child
 * processes) is gone when this returns.  Never fails: a probe that cannot
 * run says why in its reason.
 */
void probe_all(struct posture *p);

#endif /* CORDON_PROBE_H */
