/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `cordon policy draft`: a model's answer sorted into the sentences the
 * constitution compiler accepts and the lines it refuses (issue #34).  The
 * compiler is the judge; nothing is repaired.  No I/O, no global state.
 */
#ifndef CORDON_DRAFT_SORT_H
#define CORDON_DRAFT_SORT_H

struct draft {
	char *kept;    /* the sentences that compile, one a line */
	char *dropped; /* for each line that does not: "  line N: LINE\n    error
			* (column C): MESSAGE\n", the line escaped to printable ASCII */
	unsigned n_kept, n_dropped;
};

/* Free what a struct draft holds and zero it (NULL-safe fields). */
void draft_free(struct draft *d);

/*
 * Sort ANSWER into *d (zeroed first; draft_free it): each line, trimmed,
 * compiled with the lines kept before it; blank lines and markdown fences
 * skipped; '#' comment lines kept but not counted.  0, or -ENOMEM.
 */
int draft_sort(const char *answer, struct draft *d);

/* The offset of the first byte of s that could change what a terminal
 * shows (C0/C1 controls, DEL, bidirectional overrides and isolates,
 * zero-width and direction marks), or -1. */
int draft_unsafe_char(const char *s);

#endif /* CORDON_DRAFT_SORT_H */
