/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The start of a helper's command line (helper_argv.c), apart from the
 * helpers' channel (helper.h) so that a helper which never sees the
 * supervisor's state (the Unix connector) can be started without it.
 */
#ifndef CORDON_HELPER_ARGV_H
#define CORDON_HELPER_ARGV_H

#include <limits.h>

/*
 * Cordon's own binary and CMD into argv[0] and argv[1]: returns 2, the
 * next free index, or -errno if /proc/self/exe cannot be read (SELF holds
 * PATH_MAX).
 */
int helper_argv_start(const char *argv[], char self[PATH_MAX], const char *cmd);

#endif /* CORDON_HELPER_ARGV_H */
