/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The curl and wget recogniser (lift_fetch.c), for pol_lift_exec (lift.c):
 * http.fetch {url, method} for each URL, curl's {a,b} and [1-3] globs
 * expanded so that each host a pattern reaches is judged (more than the
 * recogniser follows: L->overflow, a refusal), and http.fetch {url_file}
 * for URLs argv cannot show (curl -K, wget -i, -e).
 */
#ifndef CORDON_POLICY_LIFT_FETCH_H
#define CORDON_POLICY_LIFT_FETCH_H

#include "lifted.h"

/* prog is "curl" or "wget". */
void lift_fetch(struct lift *L, const char *prog, const char *const *argv, int argc);

#endif
