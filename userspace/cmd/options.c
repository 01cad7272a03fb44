// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A command's long options (options.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>

#include "options.h"

int options_parse(int argc, char **argv, const struct cmd_option *opts, void (*usage)(FILE *f))
{
	struct option lo[CMD_OPTIONS_MAX + 2] = {};
	int n = 0, c;

	for (; opts[n].name; n++) {
		if (n == CMD_OPTIONS_MAX)
			return -E2BIG;
		lo[n] = (struct option){ opts[n].name,
					 opts[n].value ? required_argument : no_argument, NULL,
					 n + 1 };
	}
	lo[n] = (struct option){ "help", no_argument, NULL, 'h' };
	optind = 1;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return 1;
		}
		if (c < 1 || c > n) {
			usage(stderr);
			return -EINVAL;
		}
		if (opts[c - 1].value)
			*opts[c - 1].value = optarg;
		else
			*opts[c - 1].flag = true;
	}
	return 0;
}
