/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A command's long options (options.c): the loop every command with plain
 * --NAME VALUE and --FLAG options would write again.
 */
#ifndef CORDON_OPTIONS_H
#define CORDON_OPTIONS_H

#include <stdbool.h>
#include <stdio.h>

/* One option: --NAME VALUE into *value, or --NAME alone setting *flag. */
struct cmd_option {
	const char *name;
	const char **value;
	bool *flag;
};

#define CMD_OPTIONS_MAX 16

/*
 * Parse argv's options (from argv[1], getopt_long with no short ones) into
 * OPTS (a list ended by a NULL name, at most CMD_OPTIONS_MAX); --help is
 * every command's.  Returns 0 to go on (optind: the first operand), 1 after
 * --help printed usage on stdout (exit 0), or -EINVAL after an unknown
 * option or a missing value, usage on stderr (exit 2).
 */
int options_parse(int argc, char **argv, const struct cmd_option *opts, void (*usage)(FILE *f));

/*
 * Write N bytes of S, text the agent chose, so that it cannot drive the
 * terminal it is shown on: C0 and C1 controls as \xNN, invalid UTF-8 as
 * \xNN, characters that reorder or hide text (bidi controls, zero-width,
 * BOM) as \u{NNNN}.
 */
void cmd_put_safe(FILE *f, const char *s, size_t n);

#endif /* CORDON_OPTIONS_H */
