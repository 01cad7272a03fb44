/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Reading argv the way the program does (scan.c), for the recognisers
 * (lift_git.c, lift_pkg.c, lift_fetch.c).  Pure.
 */
#ifndef CORDON_POLICY_SCAN_H
#define CORDON_POLICY_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include "util.h"

/*
 * An option table is data: each program's options as its own parser knows
 * them (curl's tool_getparam.c table, wget --help, `git CMD -h`, pip's
 * optparse groups, npm's config definitions), with whether each takes a
 * value.  One scanner reads them all: -abc clusters, -ovalue and -o value,
 * --opt=value and --opt value, --no-opt, unique prefixes of long names
 * where the program accepts them, and -- ending the options.
 *
 * Attack: an option's value taken for a positional (`curl -m 5 URL` judged
 * as a fetch of "5"), or a positional taken for a value, so the rule on the
 * real URL, subcommand or remote never sees it.
 *
 * Fail-closed on what a table does not hold (a newer version's option, a
 * misspelling the program reads some way we do not): an unknown option may
 * or may not take the next argument, so that argument is marked `maybe`
 * and the recognisers take both readings: it is a URL candidate, a
 * subcommand candidate (and so is the next), and an unknown option of git
 * push makes the push count as forced.  Extra events can only make the
 * decision stricter (a lifted event never allows what the floor refuses),
 * so reading too much is safe and reading too little is not.
 */
enum { A_NO, A_VAL, A_ATT };    /* no value; a value (attached or next); attached only */

struct opt {
	const char *l;          /* long name without "--", or NULL */
	char s;                 /* short letter, or 0 */
	unsigned char arg;      /* A_* */
	unsigned char tag;      /* what the recogniser makes of it (0: nothing) */
};

#define OS_ABBREV  1u   /* a unique prefix of a long name stands for it */
#define OS_NEG     2u   /* --no-NAME negates a flag */
#define OS_SLONG   4u   /* -name may be a long name (npm's -ws, wget's -nv is -n v) */

struct optset {
	const struct opt *o;
	size_t n;
	unsigned flags;
};
#define OPTSET(t, f) { t, ARRAY_SIZE(t), f }

enum tok_kind { T_END, T_OPT, T_ARG };

struct tok {
	enum tok_kind k;
	const struct opt *o;    /* T_OPT: NULL when the table does not hold it */
	const char *val;        /* T_OPT: its value, or NULL */
	bool neg;               /* T_OPT: --no-NAME */
	bool maybe;             /* T_ARG: may be an unknown option's value */
	int idx;                /* argv index */
	const char *arg;        /* T_ARG: the argument */
};

struct scan {
	const char *const *argv;
	int argc, i;
	const struct optset *set;
	const char *cluster;    /* the rest of a short-option cluster */
	bool ended, maybe, unknown;
};

struct lift;

/*
 * The subcommand candidates of a program whose options come first: the
 * first positional, and while a candidate may be an unknown option's value,
 * the next one too.  Calls fn for each with the scan positioned after it.
 */
typedef void (*sub_fn)(struct lift *L, const char *prog, const char *sub,
		       const char *const *argv, int argc, int next, void *ctx);

/* Scan argv[i..argc) with the option table set. */
void scan_init(struct scan *s, const char *const *argv, int argc, int i,
	       const struct optset *set);
/* The next token into t: an option (with its value), an argument, or T_END. */
void scan_next(struct scan *s, struct tok *t);
/* Call fn for each subcommand candidate of argv[i..argc) (above). */
void scan_subcommands(struct lift *L, const char *prog, const char *const *argv, int argc,
		      int i, const struct optset *set, sub_fn fn, void *ctx);

#endif
