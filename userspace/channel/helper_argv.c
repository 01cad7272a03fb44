// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The start of a helper's command line (helper_argv.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <unistd.h>

#include "helper_argv.h"

/*
 * The helper is cordon's own binary, named by the path the kernel holds
 * for this process: never a PATH lookup or argv[0], which whoever started
 * cordon chose, for a program that runs as root outside the session.
 */
int helper_argv_start(const char *argv[], char self[PATH_MAX], const char *cmd)
{
	ssize_t len = readlink("/proc/self/exe", self, PATH_MAX - 1);

	if (len < 0)
		return -errno;
	self[len] = '\0';
	argv[0] = self;
	argv[1] = cmd;
	return 2;
}
