/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The package-manager recognisers (lift_pkg.c), for pol_lift_exec (lift.c):
 * npm.install, pip.install, and npm.publish, pip.publish, cargo.publish,
 * gem.publish for every way to publish or change a published package.
 * prog is argv[0]'s last component.
 */
#ifndef CORDON_POLICY_LIFT_PKG_H
#define CORDON_POLICY_LIFT_PKG_H

#include <stdbool.h>
#include "lifted.h"

/* npm, pnpm, yarn, bun. */
void lift_pkg_npm(struct lift *L, const char *prog, const char *const *argv, int argc);
/* pip, pip3...: pip's own options and subcommand. */
void lift_pkg_pip(struct lift *L, const char *const *argv, int argc);
/* python -m pip / -m twine..., python setup.py upload. */
void lift_pkg_python(struct lift *L, const char *const *argv, int argc);
/* Is prog a publisher with a subcommand (twine, flit, poetry, cargo, gem...)? */
bool lift_pkg_is_publisher(const char *prog);
/* PROG SUB for such a publisher (cargo +TOOLCHAIN SUB too). */
void lift_pkg_publisher(struct lift *L, const char *prog, const char *const *argv, int argc);

#endif
