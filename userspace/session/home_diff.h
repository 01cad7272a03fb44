/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the agent changed in its home layer (home.h), for the human to
 * review before taking any of it (`cordon home diff`, and the count the
 * session prints at its end): the upper layer walked against the real home
 * through descriptors, never following a symlink out of either.  A change
 * that is a credential store, or below one, is flagged: apply refuses it.
 */
#ifndef CORDON_HOME_DIFF_H
#define CORDON_HOME_DIFF_H

#include <stdbool.h>
#include <sys/types.h>

enum home_change_kind {
	HOME_ADDED,
	HOME_MODIFIED,
	HOME_DELETED,
};

struct home_change {
	enum home_change_kind kind;
	const char *path;       /* relative to the home */
	mode_t mode;            /* type and mode: the layer's, the home's when deleted */
	long long size;         /* bytes in the layer; 0 when deleted */
	long long old_size;     /* bytes in the home; -1 when added */
	const char *link;       /* a symlink's target in the layer, else NULL */
	bool store;             /* a credential store or below one: apply refuses it */
};

/*
 * What the layer in LAYER_DIR changed relative to the real HOME, in name
 * order, parents before children, one call of FN per change (its strings
 * live for the call only).  A file copied up but left the same (type,
 * mode, owner, content) is not a change.  Reads only; takes no lock (a
 * running session may change the layer under it).  FN returning < 0 stops
 * the walk with that value.  0, or -errno (-ENOENT: no layer yet).
 */
int home_diff(const char *layer_dir, const char *home,
	      int (*fn)(void *ctx, const struct home_change *c), void *ctx);

/* How many changes home_diff would report, into *N: the same walk, fewer stats. */
int home_diff_count(const char *layer_dir, const char *home, size_t *n);

#endif /* CORDON_HOME_DIFF_H */
