// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The streaming masker (userspace/egress/stream_scrub.c): masks keep their
 * secret's length; the output equals a naive one-shot reference however the
 * input is split (every split point, byte at a time, random splits over a
 * small alphabet that makes secrets overlap); what a feed holds back is
 * its trailing word, the same whatever the secrets are (so an echoed
 * guess cannot be scored by the size of what comes out), and an SSE event
 * leaves at once; leftmost, then longest match; flush; the argument checks.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "stream_scrub.h"

#define KEY "sk-ant-api03-Zq9xV2bL7mN4pR8tW1yC6dF3hJ5kS0uE"

/* Deterministic pseudo-random numbers (xorshift64), so a failure replays. */
static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void mask_of(char *out, size_t len)
{
	static const char m[] = SSCRUB_MASK;

	for (size_t i = 0; i < len; i++)
		out[i] = i < sizeof(m) - 1 ? m[i] : '*';
}

/*
 * The reference: at each byte the longest secret that begins there (and is
 * whole in the input) is masked and skipped, else the byte is copied.
 */
static size_t reference(const char *const *sec, const size_t *slen, size_t ns, const char *in,
			size_t n, char *out, size_t *hits)
{
	size_t i = 0;

	*hits = 0;
	while (i < n) {
		size_t best = 0;

		for (size_t k = 0; k < ns; k++)
			if (slen[k] <= n - i && slen[k] > best && !memcmp(in + i, sec[k], slen[k]))
				best = slen[k];
		if (best) {
			mask_of(out + i, best);
			(*hits)++;
			i += best;
		} else {
			out[i] = in[i];
			i++;
		}
	}
	return n;
}

static void add_all(struct sscrub *s, const char *const *sec, const size_t *slen, size_t ns)
{
	for (size_t k = 0; k < ns; k++)
		assert_int_equal(sscrub_add(s, sec[k], slen[k]), 0);
}

/*
 * Feed IN in pieces ending at cuts[0..ncuts) (increasing), then flush:
 * the whole output (malloc'd, *len bytes) and the hits.
 */
static char *run_cuts(const char *const *sec, const size_t *slen, size_t ns, const char *in,
		      size_t n, const size_t *cuts, size_t ncuts, size_t *len, size_t *hits)
{
	struct sscrub s = { 0 };
	char *out = malloc(n + SSCRUB_MAX_LEN);
	size_t o = 0, at = 0;
	ssize_t w;

	assert_non_null(out);
	*hits = 0;
	add_all(&s, sec, slen, ns);
	for (size_t c = 0; c <= ncuts; c++) {
		size_t end = c < ncuts ? cuts[c] : n;
		/* An exact-size copy of each piece, so ASan sees overreads. */
		char *piece = malloc(end - at + 1);
		char *tmp = malloc(SSCRUB_OUT(end - at));

		assert_non_null(piece);
		assert_non_null(tmp);
		memcpy(piece, in + at, end - at);
		w = sscrub_feed(&s, piece, end - at, tmp, SSCRUB_OUT(end - at), hits);
		assert_true(w >= 0);
		assert_true(sscrub_held(&s) < s.max_len || !s.max_len);
		memcpy(out + o, tmp, (size_t)w);
		o += (size_t)w;
		free(piece);
		free(tmp);
		at = end;
	}
	w = sscrub_flush(&s, out + o, SSCRUB_MAX_LEN, hits);
	assert_true(w >= 0);
	o += (size_t)w;
	assert_int_equal(sscrub_held(&s), 0);
	sscrub_free(&s);
	*len = o;
	return out;
}

static void expect_like_reference(const char *const *sec, const size_t *slen, size_t ns,
				  const char *in, size_t n, const size_t *cuts, size_t ncuts)
{
	char *want = malloc(n + 1), *got;
	size_t wh, gh, glen;

	assert_non_null(want);
	reference(sec, slen, ns, in, n, want, &wh);
	got = run_cuts(sec, slen, ns, in, n, cuts, ncuts, &glen, &gh);
	if (glen != n || memcmp(got, want, n) || gh != wh)
		fail_msg("input \"%.*s\" in %zu cuts: got \"%.*s\" (%zu hits), want \"%.*s\" (%zu)",
			 (int)n, in, ncuts, (int)glen, got, gh, (int)n, want, wh);
	free(got);
	free(want);
}

/* IN one shot, byte at a time, and cut once at every point. */
static void expect_every_split(const char *const *sec, const size_t *slen, size_t ns,
			       const char *in, size_t n)
{
	size_t *cuts = malloc((n + 1) * sizeof(*cuts));

	assert_non_null(cuts);
	expect_like_reference(sec, slen, ns, in, n, NULL, 0);
	for (size_t i = 0; i < n; i++)
		cuts[i] = i + 1;
	expect_like_reference(sec, slen, ns, in, n, cuts, n ? n - 1 : 0);
	for (size_t i = 0; i <= n; i++)
		expect_like_reference(sec, slen, ns, in, n, &i, 1);
	free(cuts);
}

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
/* sec[] and slen[] in the caller, for EVERY_SPLIT. */
#define SECRETS(...)                                                                    \
	const char *const sec[] = { __VA_ARGS__ };                                      \
	size_t slen[ARRAY_LEN(sec)];                                                    \
	for (size_t k_ = 0; k_ < ARRAY_LEN(sec); k_++)                                  \
		slen[k_] = strlen(sec[k_])
#define EVERY_SPLIT(text) expect_every_split(sec, slen, ARRAY_LEN(sec), (text), strlen(text))

/* Feed TEXT into S: the bytes that come out must be exactly WANT. */
static void feed_expect(struct sscrub *s, const char *text, const char *want, size_t *hits)
{
	char out[SSCRUB_OUT(256)];
	size_t n = strlen(text);
	ssize_t w;

	assert_true(n <= 256);
	w = sscrub_feed(s, text, n, out, sizeof(out), hits);
	assert_true(w >= 0);
	if ((size_t)w != strlen(want) || memcmp(out, want, (size_t)w))
		fail_msg("fed \"%s\": out \"%.*s\", want \"%s\"", text, (int)w, out, want);
}

static void flush_expect(struct sscrub *s, const char *want, size_t *hits)
{
	char out[SSCRUB_MAX_LEN];
	ssize_t w = sscrub_flush(s, out, sizeof(out), hits);

	assert_true(w >= 0);
	if ((size_t)w != strlen(want) || memcmp(out, want, (size_t)w))
		fail_msg("flush: \"%.*s\", want \"%s\"", (int)w, out, want);
}

/* --- masks ---------------------------------------------------------------------- */

static void masks_keep_the_length(void **state)
{
	struct sscrub s = { 0 };
	size_t hits = 0;

	assert_int_equal(sscrub_add(&s, KEY, strlen(KEY)), 0);
	feed_expect(&s, "{\"error\":\"bad key " KEY "\"}\n",
		    "{\"error\":\"bad key [cordon:redacted]****************************\"}\n",
		    &hits);
	assert_int_equal(hits, 1);
	assert_int_equal(sizeof("[cordon:redacted]****************************") - 1, strlen(KEY));
	sscrub_free(&s);

	/* Shorter than the pattern: truncated; exactly as long: the pattern. */
	assert_int_equal(sscrub_add(&s, "abcd", 4), 0);
	assert_int_equal(sscrub_add(&s, "0123456789abcdefg", 17), 0);
	hits = 0;
	feed_expect(&s, "<abcd|0123456789abcdefg>", "<[cor|[cordon:redacted]>", &hits);
	assert_int_equal(hits, 2);
	sscrub_free(&s);

	/* One byte, and bytes of any value. */
	assert_int_equal(sscrub_add(&s, "Q", 1), 0);
	assert_int_equal(sscrub_add(&s, "\0\xff\n", 3), 0);
	{
		char out[SSCRUB_OUT(8)];
		ssize_t w = sscrub_feed(&s, "aQ\0\xff\nQb", 7, out, sizeof(out), NULL);

		/* A secret with bytes outside the key alphabet: the last 2 wait. */
		assert_int_equal(w, 5);
		assert_memory_equal(out, "a[[co", 5);
		w = sscrub_flush(&s, out, sizeof(out), NULL);
		assert_int_equal(w, 2);
		assert_memory_equal(out, "[b", 2);
	}
	sscrub_free(&s);
}

static void no_secrets_passes_through(void **state)
{
	struct sscrub s = { 0 };
	size_t hits = 0;

	feed_expect(&s, "anything at all\n", "anything at all\n", &hits);
	flush_expect(&s, "", &hits);
	assert_int_equal(hits, 0);
	sscrub_free(&s);
}

/* --- hold-back ---------------------------------------------------------------------- */

/*
 * A feed holds back the stream's trailing run of key-alphabet bytes (at
 * most max_len - 1): a word, whether or not it begins a secret.
 */
static void holds_back_the_trailing_word(void **state)
{
	struct sscrub s = { 0 };
	size_t hits = 0;

	assert_int_equal(sscrub_add(&s, "SECRET123", 9), 0);
	feed_expect(&s, "hello SEC", "hello ", &hits);
	assert_int_equal(sscrub_held(&s), 3);
	feed_expect(&s, "RET", "", &hits);
	assert_int_equal(sscrub_held(&s), 6);
	/* Not the secret after all: out up to the last word, which waits. */
	feed_expect(&s, "12x and more", "SECRET12x and ", &hits);
	assert_int_equal(sscrub_held(&s), 4);
	feed_expect(&s, "!", "more!", &hits);
	assert_int_equal(sscrub_held(&s), 0);
	/* A word that begins no secret waits all the same: "SEX" as "SEC". */
	feed_expect(&s, "a SEX", "a ", &hits);
	assert_int_equal(sscrub_held(&s), 3);
	feed_expect(&s, "\n", "SEX\n", &hits);
	/* A longer word: only its last max_len - 1 bytes wait. */
	feed_expect(&s, "abcdefghijklmnop", "abcdefgh", &hits);
	assert_int_equal(sscrub_held(&s), 8);
	feed_expect(&s, " SES", "ijklmnop ", &hits);
	feed_expect(&s, "ECRET123!", "SE[cordon:r!", &hits);
	assert_int_equal(hits, 1);
	sscrub_free(&s);
}

/*
 * What comes out of each feed, byte for byte in number, is the same
 * whatever the secrets are, as long as the stream holds none whole.
 * Attack closed: with the held tail the part of it that prefixed a
 * secret, an upstream echoing "...sk-proj-Q" at the end of a read told the
 * agent, by the size of the chunk it got, whether the key begins so.
 */
static void held_amount_ignores_the_secrets(void **state)
{
	static const char *const a[] = { "sk-proj-Q7xK2mZ9wq", "ghp_Aa1Bb2Cc3" };
	static const char *const b[] = { "sk-proj-A1bC3dE5zz", "ghp_Zz9Yy8Xx7" };
	static const char alpha[] = "ab-_/=: \n\"{},";

	rng_state = 7;
	for (int round = 0; round < 2000; round++) {
		struct sscrub sa = { 0 }, sb = { 0 };
		char in[256], oa[SSCRUB_OUT(256)], ob[SSCRUB_OUT(256)];
		size_t n = 0;

		for (size_t k = 0; k < 2; k++) {
			assert_int_equal(sscrub_add(&sa, a[k], strlen(a[k])), 0);
			assert_int_equal(sscrub_add(&sb, b[k], strlen(b[k])), 0);
		}
		/* Text, and proper prefixes of a's secrets: guesses, right so far. */
		while (n < sizeof(in) - 20) {
			if (rnd() % 3 == 0) {
				const char *g = a[rnd() % 2];
				size_t l = 1 + rnd() % (strlen(g) - 1);

				memcpy(in + n, g, l);
				n += l;
			} else {
				in[n++] = alpha[rnd() % (sizeof(alpha) - 1)];
			}
		}
		for (size_t at = 0; at < n;) {
			size_t k = 1 + rnd() % 24;
			ssize_t wa, wb;

			if (k > n - at)
				k = n - at;
			wa = sscrub_feed(&sa, in + at, k, oa, sizeof(oa), NULL);
			wb = sscrub_feed(&sb, in + at, k, ob, sizeof(ob), NULL);
			if (wa != wb || sscrub_held(&sa) != sscrub_held(&sb))
				fail_msg("round %d: a feed ending \"%.*s\" gave %zd bytes against a's "
					 "secrets, %zd against b's", round, (int)(at + k), in, wa, wb);
			assert_memory_equal(oa, ob, (size_t)wa);
			at += k;
		}
		sscrub_free(&sa);
		sscrub_free(&sb);
	}
}

static void sse_event_leaves_at_once(void **state)
{
	struct sscrub s = { 0 };
	static const char ev[] = "event: content_block_delta\n"
				 "data: {\"type\":\"content_block_delta\",\"index\":0,"
				 "\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello\"}}\n\n";
	char out[SSCRUB_OUT(sizeof(ev))];
	ssize_t w;

	assert_int_equal(sscrub_add(&s, KEY, strlen(KEY)), 0);
	assert_int_equal(sscrub_add(&s, "second-secret-value", 19), 0);
	w = sscrub_feed(&s, ev, sizeof(ev) - 1, out, sizeof(out), NULL);
	assert_int_equal(w, sizeof(ev) - 1);
	assert_memory_equal(out, ev, sizeof(ev) - 1);
	assert_int_equal(sscrub_held(&s), 0);
	/* Byte at a time: a word waits for the byte after it, and no longer. */
	for (size_t i = 0, o = 0; i < sizeof(ev) - 1; i++) {
		static char got[sizeof(ev)];

		w = sscrub_feed(&s, ev + i, 1, got + o, sizeof(got) - o, NULL);
		assert_true(w >= 0);
		o += (size_t)w;
		assert_memory_equal(got, ev, o);
		if (strchr("\n \"{},", ev[i]))
			assert_int_equal(o, i + 1);
	}
	assert_int_equal(sscrub_held(&s), 0);
	/* A tail that begins the key ("s", "sk-an") waits; the next event frees it. */
	feed_expect(&s, "data: s", "data: ", NULL);
	feed_expect(&s, "k-an", "", NULL);
	assert_int_equal(sscrub_held(&s), 5);
	feed_expect(&s, "\n\n", "sk-an\n\n", NULL);
	assert_int_equal(sscrub_held(&s), 0);
	sscrub_free(&s);

	/*
	 * Only a secret with a byte outside the key alphabet holds an event's
	 * end back: then every feed holds its last max_len - 1 bytes.
	 */
	assert_int_equal(sscrub_add(&s, "\n\nSECRET", 8), 0);
	feed_expect(&s, "data: x\n\n", "da", NULL);
	assert_int_equal(sscrub_held(&s), 7);
	feed_expect(&s, "data", "ta: ", NULL);
	assert_int_equal(sscrub_held(&s), 7);
	flush_expect(&s, "x\n\ndata", NULL);
	sscrub_free(&s);
}

/* --- matching ---------------------------------------------------------------------- */

static void several_secrets(void **state)
{
	SECRETS(KEY, "hunter2-hunter2", "ghp_0123456789abcdefABCDEF");

	EVERY_SPLIT("a " KEY " b hunter2-hunter2 c ghp_0123456789abcdefABCDEF d");
	EVERY_SPLIT(KEY "hunter2-hunter2" KEY);
	EVERY_SPLIT("hunter2-hunter hunter2-hunter2hunter2-hunter2 sk-ant-api03");
}

static void secrets_at_start_and_end(void **state)
{
	struct sscrub s = { 0 };
	size_t hits = 0;
	SECRETS("TOPSECRET", "zz");

	EVERY_SPLIT("TOPSECRET");
	EVERY_SPLIT("TOPSECRET middle TOPSECRET");
	EVERY_SPLIT("TOPSECRETTOPSECRET");
	EVERY_SPLIT("zzzzz");
	EVERY_SPLIT("TOPSECRE");
	EVERY_SPLIT("");

	assert_int_equal(sscrub_add(&s, "TOPSECRET", 9), 0);
	feed_expect(&s, "TOPSECRET", "[cordon:r", &hits);
	feed_expect(&s, "TOPSECRET", "[cordon:r", &hits);
	flush_expect(&s, "", &hits);
	assert_int_equal(hits, 2);
	sscrub_free(&s);
}

static void longest_match_wins(void **state)
{
	struct sscrub s = { 0 };
	size_t hits = 0;
	SECRETS("abc", "abcdef", "cdefgh");

	/* "abcdef" over "abc"; and "cdefgh" never starts inside a masked "abcdef". */
	EVERY_SPLIT("xxabcdefghyy");
	EVERY_SPLIT("xxabcdeyy");
	EVERY_SPLIT("xxabcdyy");
	EVERY_SPLIT("abcabcdefabcdefgh");

	assert_int_equal(sscrub_add(&s, "abc", 3), 0);
	assert_int_equal(sscrub_add(&s, "abcdef", 6), 0);
	feed_expect(&s, "xxabcdef", "xx[cordo", &hits);
	/* "abc" is whole, but "abcdef" may still follow: held until decided. */
	feed_expect(&s, "abc", "", &hits);
	feed_expect(&s, "de", "", &hits);
	feed_expect(&s, "!", "[code!", &hits);
	assert_int_equal(hits, 2);
	/* At the end of the stream the shorter one is what is there. */
	feed_expect(&s, "abcd", "", &hits);
	flush_expect(&s, "[cod", &hits);
	assert_int_equal(hits, 3);
	sscrub_free(&s);
}

static void leftmost_match_wins(void **state)
{
	struct sscrub s = { 0 };
	size_t hits = 0;
	SECRETS("abcde", "bc", "de");

	/* "abcde" would begin first but fails: "bc" is masked. */
	EVERY_SPLIT("abcx");
	EVERY_SPLIT("abcde");
	EVERY_SPLIT("abcdx");
	EVERY_SPLIT("abcdabcde");

	assert_int_equal(sscrub_add(&s, "abcde", 5), 0);
	assert_int_equal(sscrub_add(&s, "bc", 2), 0);
	assert_int_equal(sscrub_add(&s, "de", 2), 0);
	feed_expect(&s, "abc", "", &hits);
	feed_expect(&s, "d", "", &hits);
	feed_expect(&s, "x", "a", &hits);
	feed_expect(&s, "!", "[cdx!", &hits);
	/* Held "abcd" at the end: "bc" inside is masked by the flush. */
	feed_expect(&s, "abcd", "", &hits);
	flush_expect(&s, "a[cd", &hits);
	assert_int_equal(hits, 2);
	sscrub_free(&s);
}

static void self_overlapping_secrets(void **state)
{
	struct sscrub s = { 0 };
	size_t hits = 0;

	{
		SECRETS("aab");

		EVERY_SPLIT("aaab");
		EVERY_SPLIT("aaaaaaaab");
		EVERY_SPLIT("aabaab");
		EVERY_SPLIT("aaaa");
	}
	{
		SECRETS("abab", "aba");

		EVERY_SPLIT("abababab");
		EVERY_SPLIT("ababa");
		EVERY_SPLIT("aabababa");
	}
	assert_int_equal(sscrub_add(&s, "aab", 3), 0);
	feed_expect(&s, "a", "", &hits);
	feed_expect(&s, "a", "", &hits);
	feed_expect(&s, "a", "a", &hits);
	feed_expect(&s, "b", "[co", &hits);
	assert_int_equal(hits, 1);
	sscrub_free(&s);
}

/* Random secrets and inputs over {a, b, c}: overlaps of every kind, random cuts. */
static void random_splits_match_the_reference(void **state)
{
	rng_state = 0x9e3779b97f4a7c15ULL;
	for (int round = 0; round < 3000; round++) {
		char sbuf[SSCRUB_MAX_SECRETS][8], in[64];
		const char *sec[SSCRUB_MAX_SECRETS];
		size_t slen[SSCRUB_MAX_SECRETS], cuts[64], ns = 1 + rnd() % SSCRUB_MAX_SECRETS;
		size_t n = rnd() % sizeof(in), ncuts = 0;

		for (size_t k = 0; k < ns; k++) {
			slen[k] = 1 + rnd() % (round % 3 ? 6 : 3);
			for (size_t i = 0; i < slen[k]; i++)
				sbuf[k][i] = (char)('a' + rnd() % 3);
			sec[k] = sbuf[k];
		}
		for (size_t i = 0; i < n; i++)
			in[i] = (char)('a' + rnd() % (round % 2 ? 2 : 3));
		for (size_t i = 1; i < n; i++)
			if (rnd() % 4 == 0)
				cuts[ncuts++] = i;
		expect_like_reference(sec, slen, ns, in, n, cuts, ncuts);
		expect_like_reference(sec, slen, ns, in, n, NULL, 0);
	}
}

/* The longest secret, a stream past the held buffer, and a stream of its prefixes. */
static void long_secrets_and_streams(void **state)
{
	static char key[SSCRUB_MAX_LEN], key2[SSCRUB_MAX_LEN / 2];
	const char *sec[] = { key, key2 };
	size_t slen[] = { sizeof(key), sizeof(key2) };
	size_t n = 5 * SSCRUB_MAX_LEN + 100, ncuts = 0;
	size_t *cuts = malloc(n * sizeof(*cuts));
	char *in = malloc(n);

	assert_non_null(in);
	assert_non_null(cuts);
	rng_state = 42;
	for (size_t i = 0; i < sizeof(key); i++)
		key[i] = (char)('A' + rnd() % 26);
	memcpy(key2, key, sizeof(key2));     /* the first half of the long key */
	for (size_t i = 0; i < n; i++)
		in[i] = (char)('A' + rnd() % 26);
	memcpy(in + 10, key, sizeof(key));
	memcpy(in + 10 + sizeof(key) + 3, key2, sizeof(key2));
	/* A near miss: the long key but its last byte. */
	memcpy(in + n - sizeof(key) - 50, key, sizeof(key) - 1);
	in[n - 51] = 'a';
	expect_like_reference(sec, slen, 2, in, n, NULL, 0);
	for (size_t i = 1; i < n; i++)
		cuts[ncuts++] = i;
	expect_like_reference(sec, slen, 2, in, n, cuts, ncuts);
	for (int round = 0; round < 20; round++) {
		ncuts = 0;
		for (size_t at = rnd() % 3000; at < n; at += 1 + rnd() % 3000)
			cuts[ncuts++] = at;
		expect_like_reference(sec, slen, 2, in, n, cuts, ncuts);
	}

	/* Every byte the first of a prefix: the held buffer is topped up many times. */
	{
		static char aa[SSCRUB_MAX_LEN];
		const char *sec2[] = { aa };
		size_t slen2[] = { sizeof(aa) };

		memset(aa, 'a', sizeof(aa) - 1);
		aa[sizeof(aa) - 1] = 'b';
		memset(in, 'a', n);
		in[n - 1] = 'b';
		in[n / 2] = 'b';
		expect_like_reference(sec2, slen2, 1, in, n, NULL, 0);
		ncuts = 0;
		for (size_t at = 1; at < n; at += 1 + rnd() % 500)
			cuts[ncuts++] = at;
		expect_like_reference(sec2, slen2, 1, in, n, cuts, ncuts);
	}
	free(cuts);
	free(in);
}

/* --- end of stream, errors -------------------------------------------------------------- */

static void flush_emits_what_was_held(void **state)
{
	struct sscrub s = { 0 };
	size_t hits = 0;
	char out[4];

	assert_int_equal(sscrub_add(&s, "SECRET", 6), 0);
	flush_expect(&s, "", &hits);
	feed_expect(&s, "text SECRE", "text ", &hits);
	/* Not enough room for the held bytes: refused, still held. */
	assert_int_equal(sscrub_flush(&s, out, sizeof(out), &hits), -ENOBUFS);
	assert_int_equal(sscrub_held(&s), 5);
	flush_expect(&s, "SECRE", &hits);
	assert_int_equal(sscrub_held(&s), 0);
	/* A new stream: nothing of the old one is held over. */
	feed_expect(&s, "T", "", &hits);
	feed_expect(&s, " ", "T ", &hits);
	feed_expect(&s, "SECRET", "[cordo", &hits);
	assert_int_equal(hits, 1);
	sscrub_free(&s);
}

static void output_room(void **state)
{
	struct sscrub s = { 0 };
	char out[16];

	assert_int_equal(sscrub_add(&s, "0123456789", 10), 0);
	assert_int_equal(sscrub_feed(&s, "ab 012345", 9, out, 9, NULL), 3);
	assert_int_equal(sscrub_held(&s), 6);
	/* Held 6 plus 9 new need 15: 14 is refused, nothing consumed. */
	assert_int_equal(sscrub_feed(&s, "6789xyzzy", 9, out, 14, NULL), -ENOBUFS);
	assert_int_equal(sscrub_held(&s), 6);
	assert_int_equal(sscrub_feed(&s, "6789xyzzy", 9, out, 15, NULL), 10);
	assert_memory_equal(out, "[cordon:re", 10);
	assert_int_equal(sscrub_held(&s), 5);
	assert_int_equal(sscrub_feed(&s, NULL, 0, out, 5, NULL), 0);
	assert_int_equal(sscrub_flush(&s, out, 5, NULL), 5);
	assert_memory_equal(out, "xyzzy", 5);
	assert_int_equal(sscrub_feed(&s, NULL, 0, out, 0, NULL), 0);
	sscrub_free(&s);
}

static void add_checks(void **state)
{
	struct sscrub s = { 0 };
	static char big[SSCRUB_MAX_LEN + 1];
	char out[SSCRUB_OUT(1)];

	memset(big, 'k', sizeof(big));
	assert_int_equal(sscrub_add(NULL, "x", 1), -EINVAL);
	assert_int_equal(sscrub_add(&s, NULL, 1), -EINVAL);
	assert_int_equal(sscrub_add(&s, "x", 0), -EINVAL);
	assert_int_equal(sscrub_add(&s, big, sizeof(big)), -E2BIG);
	assert_int_equal(sscrub_add(&s, big, sizeof(big) - 1), 0);
	for (int i = 1; i < SSCRUB_MAX_SECRETS; i++)
		assert_int_equal(sscrub_add(&s, "secret", 6), 0);
	assert_int_equal(sscrub_add(&s, "ninth", 5), -ENOSPC);
	sscrub_free(&s);
	/* Freed: empty again, and reusable. */
	assert_int_equal(s.n, 0);
	assert_null(s.v[0].value);
	assert_int_equal(sscrub_add(&s, "secret", 6), 0);
	assert_int_equal(sscrub_feed(&s, " ", 1, out, sizeof(out), NULL), 1);
	/* After the first feed a secret would come too late for what already went. */
	assert_int_equal(sscrub_add(&s, "other", 5), -EBUSY);
	sscrub_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(masks_keep_the_length),
		cmocka_unit_test(no_secrets_passes_through),
		cmocka_unit_test(holds_back_the_trailing_word),
		cmocka_unit_test(held_amount_ignores_the_secrets),
		cmocka_unit_test(sse_event_leaves_at_once),
		cmocka_unit_test(several_secrets),
		cmocka_unit_test(secrets_at_start_and_end),
		cmocka_unit_test(longest_match_wins),
		cmocka_unit_test(leftmost_match_wins),
		cmocka_unit_test(self_overlapping_secrets),
		cmocka_unit_test(random_splits_match_the_reference),
		cmocka_unit_test(long_secrets_and_streams),
		cmocka_unit_test(flush_emits_what_was_held),
		cmocka_unit_test(output_room),
		cmocka_unit_test(add_checks),
	};

	return cmocka_run_group_tests_name("stream_scrub", tests, NULL, NULL);
}
