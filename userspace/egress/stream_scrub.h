/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A streaming masker for the credential proxy: the real secrets it swaps
 * in for the agent's sentinels are replaced in everything the upstream
 * sends back, as it streams, by masks of the same length (so that
 * Content-Length and chunk sizes stay true).  What a feed holds back is
 * chosen without looking at the secrets' bytes.  Pure (no I/O); secrets and held bytes are
 * wiped when freed.  What it closes and what not: stream_scrub.c.
 */
#ifndef CORDON_STREAM_SCRUB_H
#define CORDON_STREAM_SCRUB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SSCRUB_MAX_SECRETS 8
#define SSCRUB_MAX_LEN 4096     /* bytes of one secret */

/*
 * A secret of length L becomes the first L bytes of SSCRUB_MASK, padded
 * with '*' when L is longer: "[cordon:redacted]***..." for an API key,
 * "[cor" for a 4-byte secret.
 */
#define SSCRUB_MASK "[cordon:redacted]"

/*
 * Output room that always suffices for sscrub_feed of N bytes (N plus the
 * most that can be held back); SSCRUB_MAX_LEN suffices for sscrub_flush.
 */
#define SSCRUB_OUT(n) ((n) + SSCRUB_MAX_LEN)

struct sscrub_secret {
	char *value;
	size_t len;
};

/* Zero-initialise ({ 0 }), sscrub_add each secret, then feed. */
struct sscrub {
	struct sscrub_secret v[SSCRUB_MAX_SECRETS];
	size_t n;
	size_t max_len;                 /* of the secrets */
	uint64_t first[4];              /* bitmap of the secrets' first bytes */
	int only_first;                 /* the one first byte they all share, or -1 */
	bool any_other;                 /* a secret holds a byte outside the key alphabet */
	bool started;                   /* fed once: no more secrets */
	/*
	 * Held-back bytes: the stream's tail, shorter than max_len.  Twice a
	 * secret's room so that topping it up from the input moves each byte
	 * a bounded number of times.
	 */
	char held[2 * SSCRUB_MAX_LEN];
	size_t held_len;
};

/*
 * Copy a secret of LEN bytes (1..SSCRUB_MAX_LEN, any bytes).  0, -EINVAL
 * (NULL or empty), -E2BIG (longer than SSCRUB_MAX_LEN), -ENOSPC (already
 * SSCRUB_MAX_SECRETS), -EBUSY (after the first feed: bytes already let
 * through were never checked against it), -ENOMEM.
 */
int sscrub_add(struct sscrub *s, const char *secret, size_t len);

/*
 * Take the next N bytes of the stream; write to OUT what is now safe to
 * send (every whole occurrence of a secret masked, see SSCRUB_MASK) and
 * hold back the stream's trailing run of key-alphabet bytes, shorter than
 * the longest secret (the last max_len - 1 bytes when a secret holds
 * another byte): how much comes out never depends on the secrets' bytes,
 * so it cannot tell the agent how much of an echoed guess was right.  Where occurrences overlap, the one that begins first wins, and
 * of those beginning at one byte the longest; the output is the same
 * however the stream is split into feeds.  *hits (may be NULL) grows by one
 * per secret masked.
 *
 * Returns the bytes written (at most N plus those held before the call),
 * or -ENOBUFS, consuming nothing, when OUTCAP is below that bound;
 * SSCRUB_OUT(N) always suffices.  OUT must not overlap IN.
 */
ssize_t sscrub_feed(struct sscrub *s, const char *in, size_t n, char *out, size_t outcap,
		    size_t *hits);

/*
 * End of stream: write the held bytes, masking any secret they still hold
 * (a shorter secret the held prefix of a longer one was waiting on).
 * Returns the bytes written, or -ENOBUFS when OUTCAP is below
 * sscrub_held(s) (SSCRUB_MAX_LEN always suffices).  The masker can then
 * take a new stream.
 */
ssize_t sscrub_flush(struct sscrub *s, char *out, size_t outcap, size_t *hits);

/* Bytes held back now: at most the longest secret's length minus one. */
size_t sscrub_held(const struct sscrub *s);

/* Wipe and free the secrets and the held bytes; S is then empty ({ 0 }). */
void sscrub_free(struct sscrub *s);

#endif /* CORDON_STREAM_SCRUB_H */
