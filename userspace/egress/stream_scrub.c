// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Streaming masker (see stream_scrub.h).  The credential proxy puts the
 * real API key into requests; an upstream that echoes it (an error message
 * quoting the header, a debug endpoint, a model asked to repeat its
 * request) must not hand it to the agent.
 *
 * What this closes:
 *  - a secret verbatim anywhere in what passes through it (response head
 *    or body, a chunk-size line included), however the stream is cut into
 *    reads, TLS records or chunks: the output does not depend on where the
 *    feeds split it, so a secret split across two reads is masked like a
 *    whole one;
 *  - framing: a mask is exactly as long as its secret, so Content-Length,
 *    chunk sizes and offsets stay valid and the proxy need not re-frame.
 *
 * What it cannot close:
 *  - any encoded form of a secret: base64, URL or percent-encoding, JSON
 *    "\u0073" escapes, HTML entities, a compressed body (the proxy asks for
 *    identity encoding and must refuse or scrub-by-decoding anything else),
 *    chunked framing that splits a secret (a chunk-size line between its
 *    halves: the proxy must feed the decoded chunk data, not the raw body,
 *    to catch that);
 *  - partial echoes: the last 4 characters of a key, a key with one byte
 *    changed, every other character;
 *  - a secret assembled from a mask's own bytes and its neighbours (only a
 *    secret made of "[cordon:redacted]*" characters could be).
 *
 * Matching is leftmost, then longest: at each byte the longest secret that
 * begins there and is whole in the stream is masked, and scanning resumes
 * after it; a byte where none begins is emitted.  Such a decision needs
 * only the next max_len bytes, and is final as soon as no secret is still
 * merely a prefix of what follows.
 *
 * What is held back at the end of a feed does not depend on the secrets'
 * bytes.  Attack closed: holding exactly the tail that is still a prefix
 * of a secret (as this did) told the agent, byte for byte, how much of its
 * guess was right: it has the upstream echo "...sk-proj-Q" so that the
 * echo ends a read, and the size of the chunk or TLS record it gets back
 * says whether the key begins "sk-proj-Q"; a character at a time, any
 * key.  Now the held tail is the stream's trailing run of key-alphabet
 * bytes (letters, digits and "-_.+/=:~"), at most max_len - 1 of them: a
 * word the agent can see, whatever the secrets are.  A secret is made of
 * those bytes, so none can begin before that run and still be open; a
 * secret holding any other byte makes the held tail the last max_len - 1
 * bytes, whatever they are.  What it still tells: max_len, when a run is
 * longer (an API key's length is its vendor's format).  An SSE event's
 * closing "\n\n" still leaves in the feed that brings it, unless a secret
 * holds a byte outside the alphabet.
 *
 * Cost: each byte that can begin a secret (found by memchr(3) when the
 * secrets share their first byte, else by a first-byte bitmap) costs a
 * memcmp per secret, as long as the stream agrees with the secret; random
 * keys make that a few bytes unless the stream already holds the key.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stream_scrub.h"

/* The bytes API keys and tokens are written in; a held tail is a run of these. */
static bool key_byte(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_' || c == '.' || c == '+' || c == '/' || c == '=' || c == ':' ||
	       c == '~';
}

int sscrub_add(struct sscrub *s, const char *secret, size_t len)
{
	char *v;

	if (!s || !secret || !len)
		return -EINVAL;
	if (len > SSCRUB_MAX_LEN)
		return -E2BIG;
	if (s->n >= SSCRUB_MAX_SECRETS)
		return -ENOSPC;
	if (s->started)
		return -EBUSY;
	v = malloc(len);
	if (!v)
		return -ENOMEM;
	memcpy(v, secret, len);
	s->v[s->n].value = v;
	s->v[s->n].len = len;
	s->n++;
	if (len > s->max_len)
		s->max_len = len;
	for (size_t k = 0; k < len; k++)
		if (!key_byte((unsigned char)secret[k]))
			s->any_other = true;
	s->first[(unsigned char)secret[0] >> 6] |= 1ULL << ((unsigned char)secret[0] & 63);
	s->only_first = s->n == 1 || s->only_first == (unsigned char)secret[0] ?
			(unsigned char)secret[0] : -1;
	return 0;
}

void sscrub_free(struct sscrub *s)
{
	for (size_t i = 0; i < s->n; i++) {
		explicit_bzero(s->v[i].value, s->v[i].len);
		free(s->v[i].value);
	}
	explicit_bzero(s, sizeof(*s));
}

size_t sscrub_held(const struct sscrub *s)
{
	return s->held_len;
}

static bool may_begin(const struct sscrub *s, unsigned char c)
{
	return s->first[c >> 6] & (1ULL << (c & 63));
}

/*
 * The decision at the first byte of BUF, of which AVAIL bytes are known
 * (and no more will come when EOF): the length of the longest secret
 * beginning there, 0 for none, or -1 while some secret still only
 * prefix-matches what is known.
 */
static ssize_t decide(const struct sscrub *s, const char *buf, size_t avail, bool eof)
{
	size_t best = 0;
	bool open = false;

	for (size_t k = 0; k < s->n; k++) {
		const struct sscrub_secret *x = &s->v[k];
		size_t m = x->len < avail ? x->len : avail;

		if (memcmp(buf, x->value, m))
			continue;
		if (m == x->len) {
			if (x->len > best)
				best = x->len;
		} else if (!eof) {
			open = true;
		}
	}
	return open ? -1 : (ssize_t)best;
}

static void put_mask(char *out, size_t len)
{
	size_t m = sizeof(SSCRUB_MASK) - 1;

	if (m > len)
		m = len;
	memcpy(out, SSCRUB_MASK, m);
	memset(out + m, '*', len - m);
}

/*
 * Where the tail a feed ending BUF[len) holds back begins: the trailing
 * run of key-alphabet bytes, at most max_len - 1, or the last max_len - 1
 * bytes when a secret holds another byte (see the header comment).
 */
static size_t hold_from(const struct sscrub *s, const char *buf, size_t len)
{
	size_t keep = s->max_len - 1, j = len;

	if (s->any_other)
		return len > keep ? len - keep : 0;
	while (j > 0 && len - j < keep && key_byte((unsigned char)buf[j - 1]))
		j--;
	return j;
}

/*
 * Decide BUF[0..len) byte by byte into OUT + *o, the bytes from LIMIT on
 * left undecided (a match that begins before LIMIT is taken whole), and
 * stop early where a decision is open: returns where it stopped.  With
 * LIMIT from hold_from no decision before it is open.
 */
static size_t walk(const struct sscrub *s, const char *buf, size_t len, size_t limit, bool eof,
		   char *out, size_t *o, size_t *hits)
{
	size_t i = 0, plain = 0;

	while (i < limit) {
		ssize_t d;

		if (s->only_first >= 0) {
			/*
			 * One first byte for all (one key, or keys of one vendor's
			 * prefix): memchr(3) skips to the next candidate a vector
			 * at a time instead of a bitmap test per byte.
			 */
			const char *at = memchr(buf + i, s->only_first, limit - i);

			if (!at) {
				i = limit;
				break;
			}
			i = (size_t)(at - buf);
		} else if (!may_begin(s, (unsigned char)buf[i])) {
			i++;
			continue;
		}
		d = decide(s, buf + i, len - i, eof);
		if (d < 0)
			break;
		if (d == 0) {
			i++;
			continue;
		}
		memcpy(out + *o, buf + plain, i - plain);
		*o += i - plain;
		put_mask(out + *o, (size_t)d);
		*o += (size_t)d;
		if (hits)
			(*hits)++;
		i += (size_t)d;
		plain = i;
	}
	if (i > plain)
		memcpy(out + *o, buf + plain, i - plain);
	*o += i - plain;
	return i;
}

ssize_t sscrub_feed(struct sscrub *s, const char *in, size_t n, char *out, size_t outcap,
		    size_t *hits)
{
	size_t o = 0, i = 0, q;

	if (outcap < s->held_len || outcap - s->held_len < n)
		return -ENOBUFS;
	s->started = true;
	if (!s->n) {
		if (n)
			memcpy(out, in, n);
		return (ssize_t)n;
	}
	/*
	 * Bytes held from earlier feeds first: top them up from IN so the open
	 * decision can be taken, walk, keep the tail that is still open.  The
	 * buffer holds 2 * SSCRUB_MAX_LEN and an open tail is shorter than
	 * max_len, so each round moves at most max_len bytes and decides at
	 * least max_len; a round that ends with nothing held leaves the rest
	 * of IN to be walked where it lies.
	 */
	while (s->held_len && i < n) {
		size_t take = sizeof(s->held) - s->held_len;

		if (take > n - i)
			take = n - i;
		memcpy(s->held + s->held_len, in + i, take);
		s->held_len += take;
		i += take;
		/* Only where the feed ends is the held tail chosen. */
		q = walk(s, s->held, s->held_len,
			 i < n ? s->held_len : hold_from(s, s->held, s->held_len), false, out, &o,
			 hits);
		memmove(s->held, s->held + q, s->held_len - q);
		s->held_len -= q;
	}
	if (i < n) {
		q = walk(s, in + i, n - i, hold_from(s, in + i, n - i), false, out, &o, hits);
		memcpy(s->held, in + i + q, n - i - q);
		s->held_len = n - i - q;
	}
	return (ssize_t)o;
}

ssize_t sscrub_flush(struct sscrub *s, char *out, size_t outcap, size_t *hits)
{
	size_t o = 0;

	if (outcap < s->held_len)
		return -ENOBUFS;
	(void)walk(s, s->held, s->held_len, s->held_len, true, out, &o, hits);
	explicit_bzero(s->held, sizeof(s->held));
	s->held_len = 0;
	return (ssize_t)o;
}
