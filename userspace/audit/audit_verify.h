/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Verifying an audit log (audit.c's header says what a log proves to a
 * holder of its key, and what it cannot): every line's HMAC, the chain
 * (seq and prev), the seal.  Reads only.  audit_verify_stats is the
 * verifier's front; the state below is for audit_resume (audit.c), which
 * resumes only a log that verifies but for its missing seal.
 */
#ifndef CORDON_AUDIT_VERIFY_H
#define CORDON_AUDIT_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "audit_format.h"

/*
 * The key file of the log at PATH: the session named by its first line
 * (unauthenticated: it only chooses which key to try) under KEY_DIR.
 * -EBADMSG if the first line names no valid session.
 */
int audit_log_key_path(const char *path, const char *key_dir, char **out);

struct audit_verify_stats {
	size_t lines;     /* lines in the file */
	size_t records;   /* records that authenticate, seal included */
	size_t problems;  /* lines written to the report */
	bool sealed;
};

/*
 * Verify the log at PATH with the key at KEY_PATH (NULL: the log's own key
 * under AUDIT_KEY_DIR).  Returns 0 if every line authenticates, the chain is
 * whole and the log is sealed; -EBADMSG if not; -errno if the log or key
 * cannot be read (-EINVAL: the key file is not a key).  Writes one line per
 * problem to REPORT (may be NULL), in file order, naming the line and seq:
 *   line N (seq S): modified: ...       the record's HMAC does not match
 *   line N (seq S): inserted: ...       a line that is not part of the chain
 *   seq S: deleted: ...                 a record missing from the chain
 *   line N (seq S): reordered: ...      an authentic record out of place
 *   line N: bad JSON: ...               a line that is not a JSON object
 *   line N (seq S): appended: ...       a line after the seal
 *   line N (seq S): truncated: ...      no seal (or a seal that disagrees)
 *   wrong key: ...                      not one record authenticates
 * STATS may be NULL.
 */
int audit_verify_stats(const char *path, const char *key_path, FILE *report,
		       struct audit_verify_stats *stats);
int audit_verify(const char *path, const char *key_path, FILE *report);

/* What the verifier learns from one line. */
struct audit_verify_rec {
	size_t line;
	long long seq;                   /* -1: none (or not a record) */
	unsigned char hash[AUDIT_HASH_LEN];    /* of the line, as the next record's prev */
	unsigned char prev[AUDIT_HASH_LEN];
	bool has_prev;
	bool parsed;                     /* a JSON object */
	bool has_hmac;                   /* ends with a well-formed hmac member */
	bool auth;                       /* ... that matches */
	bool dup, moved;
	bool seal;
	long long seal_records;
	unsigned char seal_chain[AUDIT_HASH_LEN];
	bool seal_chain_ok;
	char *session;                   /* record 0's, for its chain start */
	char *err;                       /* why it is not JSON */
};

struct audit_verify_problem {
	size_t line;                     /* sort key: file order */
	size_t order;
	char *text;
};

struct audit_verify_state {
	unsigned char key[AUDIT_KEY_LEN];
	struct audit_verify_rec *recs;
	size_t n, cap;
	struct audit_verify_problem *probs;
	size_t n_probs, cap_probs;
	int oom;
	/* Indexed by seq, 0..max_seq (max_seq comes from authentic records only). */
	long long max_seq;
	ssize_t *at;                     /* the authentic record holding each seq, or -1 */
	bool *claimed;                   /* a line that fails its HMAC stands in for it */
	long long tail_claimed;          /* the same, past max_seq */
};

/*
 * Verify the log at PATH with the key at KEY_PATH into V (zeroed by the
 * caller): the problems in V->probs (file order once sorted), counts into
 * ST.  0 (problems or not), or -errno when the log or key cannot be read.
 * audit_verify_free after, either way.
 */
int audit_verify_run(struct audit_verify_state *v, const char *path, const char *key_path,
		     struct audit_verify_stats *st);

/* Free what V holds, the key wiped. */
void audit_verify_free(struct audit_verify_state *v);

#endif /* CORDON_AUDIT_VERIFY_H */
