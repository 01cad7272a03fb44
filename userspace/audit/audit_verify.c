// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The audit log's verifier (audit_verify.h): what audit.c's header says a
 * log proves, checked line by line, every problem named by line and seq.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <openssl/crypto.h>
#include "audit_format.h"
#include "audit_verify.h"
#include "util.h"

__attribute__((format(printf, 3, 4)))
static void problem(struct audit_verify_state *v, size_t line, const char *fmt, ...)
{
	struct audit_verify_problem *p;
	va_list ap;
	char *text;

	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) < 0)
		text = NULL;
	va_end(ap);
	if (!text) {
		v->oom = -ENOMEM;
		return;
	}
	if (v->n_probs == v->cap_probs) {
		size_t c = v->cap_probs ? 2 * v->cap_probs : 16;

		p = realloc(v->probs, c * sizeof(*p));
		if (!p) {
			free(text);
			v->oom = -ENOMEM;
			return;
		}
		v->probs = p;
		v->cap_probs = c;
	}
	v->probs[v->n_probs] = (struct audit_verify_problem){ .line = line, .order = v->n_probs,
							      .text = text };
	v->n_probs++;
}

static int problem_cmp(const void *x, const void *y)
{
	const struct audit_verify_problem *a = x, *b = y;

	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

/* "line N (seq S)" for a line, as every report names it. */
static const char *where(const struct audit_verify_rec *r, char *buf, size_t len)
{
	if (r->seq >= 0)
		snprintf(buf, len, "line %zu (seq %lld)", r->line, r->seq);
	else
		snprintf(buf, len, "line %zu", r->line);
	return buf;
}

/* "line N (seq S)" if seq S is in the file, else "seq S". */
static const char *where_seq(const struct audit_verify_state *v, long long seq, char *buf,
			     size_t len)
{
	if (seq >= 0 && seq <= v->max_seq && v->at[seq] >= 0)
		return where(&v->recs[v->at[seq]], buf, len);
	snprintf(buf, len, "seq %lld", seq);
	return buf;
}

static int load_key(const char *path, unsigned char key[AUDIT_KEY_LEN])
{
	char *buf = NULL;
	int n = read_file(path, &buf, 2 * AUDIT_HEX_LEN), r = 0;

	if (n < 0)
		return n;
	if (n > 0 && buf[n - 1] == '\n')
		n--;
	if (n != AUDIT_HEX_LEN || audit_format_hex_decode(buf, AUDIT_KEY_LEN, key) < 0)
		r = -EINVAL;
	OPENSSL_cleanse(buf, (size_t)n);
	free(buf);
	return r;
}

/* Parse one line (S, N bytes without its newline; S is ours to scribble on). */
static int parse_line(struct audit_verify_state *v, char *s, size_t n, size_t lineno)
{
	_cleanup_json_ json_t *j = NULL;
	struct audit_verify_rec *rec;
	json_error_t je;
	json_t *x;
	int r;

	if (v->n == v->cap) {
		size_t c = v->cap ? 2 * v->cap : 256;
		struct audit_verify_rec *nr = realloc(v->recs, c * sizeof(*nr));

		if (!nr)
			return -ENOMEM;
		v->recs = nr;
		v->cap = c;
	}
	rec = &v->recs[v->n++];
	memset(rec, 0, sizeof(*rec));
	rec->line = lineno;
	rec->seq = -1;
	r = audit_format_sha256(s, n, rec->hash);
	if (r < 0)
		return r;
	j = json_loadb(s, n, JSON_REJECT_DUPLICATES, &je);
	if (!j || !json_is_object(j)) {
		if (asprintf(&rec->err, "%s (column %d)", j ? "not a JSON object" : je.text,
			     j ? 1 : je.column) < 0)
			return -ENOMEM;
		return 0;
	}
	rec->parsed = true;
	x = json_object_get(j, "seq");
	if (json_is_integer(x) && json_integer_value(x) >= 0)
		rec->seq = json_integer_value(x);
	x = json_object_get(j, "prev");
	rec->has_prev = json_is_string(x) && json_string_length(x) == AUDIT_HEX_LEN &&
			audit_format_hex_decode(json_string_value(x), AUDIT_HASH_LEN, rec->prev) == 0;
	x = json_object_get(j, "type");
	if (json_is_string(x) && !strcmp(json_string_value(x), "seal")) {
		rec->seal = true;
		x = json_object_get(j, "records");
		rec->seal_records = json_is_integer(x) ? json_integer_value(x) : -1;
		x = json_object_get(j, "chain");
		rec->seal_chain_ok = json_is_string(x) && json_string_length(x) == AUDIT_HEX_LEN &&
				     audit_format_hex_decode(json_string_value(x), AUDIT_HASH_LEN, rec->seal_chain) == 0;
	}
	if (rec->seq == 0) {
		x = json_object_get(j, "session");
		rec->session = strdup(json_is_string(x) ? json_string_value(x) : "");
		if (!rec->session)
			return -ENOMEM;
	}
	/*
	 * The body is the line with its final hmac member cut out.  Matching
	 * the member at the very end of a line that parsed as one object (no
	 * duplicate keys) means it is the object's last member, not text inside
	 * a string.
	 */
	if (n > AUDIT_HMAC_TAIL &&
	    !memcmp(s + n - AUDIT_HMAC_TAIL, AUDIT_HMAC_MEMBER, sizeof(AUDIT_HMAC_MEMBER) - 1) &&
	    s[n - 2] == '"' && s[n - 1] == '}') {
		unsigned char want[AUDIT_HASH_LEN], got[AUDIT_HASH_LEN];

		rec->has_hmac = audit_format_hex_decode(s + n - 2 - AUDIT_HEX_LEN, AUDIT_HASH_LEN, want) == 0;
		if (rec->has_hmac) {
			s[n - AUDIT_HMAC_TAIL] = '}';
			r = audit_format_hmac256(v->key, s, n - AUDIT_HMAC_TAIL + 1, got);
			if (r < 0)
				return r;
			rec->auth = rec->seq >= 0 && CRYPTO_memcmp(want, got, AUDIT_HASH_LEN) == 0;
		}
	}
	return 0;
}

/* Read every line of PATH into v->recs; *no_newline: the last line was cut. */
static int read_log(struct audit_verify_state *v, const char *path, bool *no_newline)
{
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *buf = NULL;
	size_t cap = 0, lineno = 0;
	ssize_t n;
	int r;

	f = fopen(path, "re");
	if (!f)
		return -errno;
	*no_newline = false;
	errno = 0;
	while ((n = getline(&buf, &cap, f)) > 0) {
		lineno++;
		if (buf[n - 1] == '\n')
			n--;
		else
			*no_newline = true;
		r = parse_line(v, buf, (size_t)n, lineno);
		if (r < 0)
			return r;
		errno = 0;
	}
	if (ferror(f))
		return errno ? -errno : -EIO;
	return 0;
}

/* Authentic records in file order, each seq's first occurrence; later copies are replays. */
static int index_seqs(struct audit_verify_state *v)
{
	char w[64], w2[64];

	v->max_seq = -1;
	for (size_t i = 0; i < v->n; i++)
		if (v->recs[i].auth && v->recs[i].seq > v->max_seq)
			v->max_seq = v->recs[i].seq;
	v->tail_claimed = v->max_seq;
	v->at = malloc(((size_t)v->max_seq + 1) * sizeof(*v->at));
	v->claimed = calloc((size_t)v->max_seq + 1, sizeof(*v->claimed));
	if (!v->at || !v->claimed)
		return -ENOMEM;
	for (long long s = 0; s <= v->max_seq; s++)
		v->at[s] = -1;
	for (size_t i = 0; i < v->n; i++) {
		struct audit_verify_rec *r = &v->recs[i];

		if (!r->auth)
			continue;
		if (v->at[r->seq] >= 0) {
			r->dup = true;
			problem(v, r->line, "%s: inserted: a replayed copy of %s",
				where(r, w, sizeof(w)), where(&v->recs[v->at[r->seq]], w2, sizeof(w2)));
			continue;
		}
		v->at[r->seq] = (ssize_t)i;
	}
	return 0;
}

/*
 * An authentic record is out of place when neither file neighbour is its
 * chain neighbour and it breaks the file's ascending order.  Both tests are
 * needed: a record between two deletions has no chain neighbours but is in
 * order; of a swapped pair, both records are reported.
 */
static int find_moved(struct audit_verify_state *v)
{
	_cleanup_free_ size_t *idx = malloc((v->n + 1) * sizeof(*idx));
	_cleanup_free_ long long *min_after = malloc((v->n + 1) * sizeof(*min_after));
	size_t m = 0;
	long long max_before = -1;
	char w[64], w1[64], w2[64];

	if (!idx || !min_after)
		return -ENOMEM;
	for (size_t i = 0; i < v->n; i++)
		if (v->recs[i].auth && !v->recs[i].dup)
			idx[m++] = i;
	for (size_t k = m; k-- > 0; )
		min_after[k] = k + 1 < m ? (v->recs[idx[k + 1]].seq < min_after[k + 1] ?
					    v->recs[idx[k + 1]].seq : min_after[k + 1]) : LLONG_MAX;
	for (size_t k = 0; k < m; k++) {
		struct audit_verify_rec *r = &v->recs[idx[k]];
		bool prev_ok = k == 0 ? r->seq == 0 : v->recs[idx[k - 1]].seq == r->seq - 1;
		bool next_ok = k + 1 == m || v->recs[idx[k + 1]].seq == r->seq + 1;

		if (!prev_ok && !next_ok && (r->seq < max_before || r->seq > min_after[k])) {
			r->moved = true;
			problem(v, r->line, "%s: reordered: out of place between %s and %s",
				where(r, w, sizeof(w)),
				k > 0 ? where(&v->recs[idx[k - 1]], w1, sizeof(w1)) : "the start",
				k + 1 < m ? where(&v->recs[idx[k + 1]], w2, sizeof(w2)) : "the end");
		}
		if (r->seq > max_before)
			max_before = r->seq;
	}
	return 0;
}

/* A free slot in [lo, hi) no authentic record and no other line fills. */
static bool slot_free(const struct audit_verify_state *v, long long s, long long lo, long long hi)
{
	if (s < lo || s >= hi)
		return false;
	if (s > v->max_seq)
		return s > v->tail_claimed;
	return v->at[s] < 0 && !v->claimed[s];
}

static void claim(struct audit_verify_state *v, long long s)
{
	if (s > v->max_seq)
		v->tail_claimed = s;
	else
		v->claimed[s] = true;
}

/*
 * Lines that fail their HMAC between two in-place authentic records A and B
 * (NULL: the start or the end).  One that claims a free seq between them is
 * that record, modified; a line that is not JSON takes the first free seq
 * if one is left; anything else is inserted.  After the seal, every line is
 * appended.
 */
static void resolve(struct audit_verify_state *v, const struct audit_verify_rec *a,
		    const struct audit_verify_rec *b, const size_t *pending, size_t n)
{
	long long lo = a ? a->seq + 1 : 0, hi = b ? b->seq : LLONG_MAX;
	char w[64], w2[64];
	bool *done = calloc(n ? n : 1, sizeof(*done));

	if (!done) {
		v->oom = -ENOMEM;
		return;
	}
	for (size_t k = 0; k < n; k++) {
		struct audit_verify_rec *r = &v->recs[pending[k]];

		if (a && a->seal) {
			if (r->parsed)
				problem(v, r->line, "%s: appended: after the seal (%s), and its HMAC does not match",
					where(r, w, sizeof(w)), where(a, w2, sizeof(w2)));
			else
				problem(v, r->line, "line %zu: appended: after the seal (%s), not JSON: %s",
					r->line, where(a, w2, sizeof(w2)), r->err);
			done[k] = true;
		} else if (r->parsed && slot_free(v, r->seq, lo, hi)) {
			claim(v, r->seq);
			problem(v, r->line, "%s: modified: %s", where(r, w, sizeof(w)),
				r->has_hmac ? "its HMAC does not match" : "its hmac member is missing or malformed");
			done[k] = true;
		}
	}
	for (size_t k = 0; k < n; k++) {
		struct audit_verify_rec *r = &v->recs[pending[k]];
		long long s = lo;

		if (done[k])
			continue;
		if (r->parsed) {
			problem(v, r->line, "%s: inserted: not part of the chain (its HMAC does not match)",
				where(r, w, sizeof(w)));
			continue;
		}
		while (s < hi && s <= v->max_seq && !slot_free(v, s, lo, hi))
			s++;
		if (s < hi && s <= v->max_seq) {
			claim(v, s);
			problem(v, r->line, "line %zu: bad JSON, where seq %lld belongs: %s", r->line, s, r->err);
		} else {
			problem(v, r->line, "line %zu: bad JSON: %s", r->line, r->err);
		}
	}
	free(done);
}

/* Walk the in-place authentic records, resolving the lines between them and checking each link. */
static int walk_chain(struct audit_verify_state *v)
{
	_cleanup_free_ size_t *pending = malloc((v->n + 1) * sizeof(*pending));
	const struct audit_verify_rec *last = NULL;
	size_t np = 0;
	char w[64], w2[64];

	if (!pending)
		return -ENOMEM;
	for (size_t i = 0; i < v->n; i++) {
		struct audit_verify_rec *r = &v->recs[i];
		unsigned char start[AUDIT_HASH_LEN];

		if (!r->auth) {
			pending[np++] = i;
			continue;
		}
		if (r->dup || r->moved)
			continue;
		resolve(v, last, r, pending, np);
		np = 0;
		if (r->seq == 0) {
			if (audit_format_chain_start(r->session, start) < 0)
				return -ENOMEM;
			if (!r->has_prev || memcmp(r->prev, start, AUDIT_HASH_LEN))
				problem(v, r->line, "%s: chain break: prev is not the start of session \"%s\"",
					where(r, w, sizeof(w)), r->session);
		} else if (last && last->seq == r->seq - 1 &&
			   (!r->has_prev || memcmp(r->prev, last->hash, AUDIT_HASH_LEN))) {
			problem(v, r->line, "%s: chain break: prev is not the hash of %s",
				where(r, w, sizeof(w)), where(last, w2, sizeof(w2)));
		}
		last = r;
	}
	resolve(v, last, NULL, pending, np);
	return 0;
}

/* Seqs up to the highest authentic one that no line holds or stands in for. */
static void find_deleted(struct audit_verify_state *v)
{
	char w1[64], w2[64];

	for (long long s = 0; s <= v->max_seq; s++) {
		long long e = s;
		const struct audit_verify_rec *after;

		if (v->at[s] >= 0 || v->claimed[s])
			continue;
		while (e + 1 <= v->max_seq && v->at[e + 1] < 0 && !v->claimed[e + 1])
			e++;
		/* max_seq is held by an authentic record, so e + 1 is in the file. */
		after = v->at[e + 1] >= 0 ? &v->recs[v->at[e + 1]] : NULL;
		if (s == e)
			problem(v, after ? after->line : 0, "seq %lld: deleted: missing between %s and %s",
				s, s > 0 ? where_seq(v, s - 1, w1, sizeof(w1)) : "the start",
				where_seq(v, e + 1, w2, sizeof(w2)));
		else
			problem(v, after ? after->line : 0,
				"seq %lld-%lld: deleted: %lld records missing between %s and %s", s, e, e - s + 1,
				s > 0 ? where_seq(v, s - 1, w1, sizeof(w1)) : "the start",
				where_seq(v, e + 1, w2, sizeof(w2)));
		s = e;
	}
}

/* The seal: present, and agreeing with the chain it closes. */
static bool check_seal(struct audit_verify_state *v)
{
	const struct audit_verify_rec *seal = NULL, *last = NULL;
	char w[64];

	for (size_t i = 0; i < v->n; i++) {
		const struct audit_verify_rec *r = &v->recs[i];

		if (!r->auth || r->dup)
			continue;
		if (r->seal)
			seal = r;
		if (!last || r->seq > last->seq)
			last = r;
	}
	if (!seal) {
		problem(v, last->line, "%s: truncated: no seal after the last record "
			"(the log was cut, or its writer died before sealing)", where(last, w, sizeof(w)));
		return false;
	}
	if (seal->seq != v->max_seq) {
		problem(v, seal->line, "%s: truncated: the seal is not the last record (seq %lld follows)",
			where(seal, w, sizeof(w)), v->max_seq);
		return false;
	}
	if (seal->seal_records != seal->seq || !seal->seal_chain_ok || !seal->has_prev ||
	    memcmp(seal->seal_chain, seal->prev, AUDIT_HASH_LEN)) {
		problem(v, seal->line, "%s: truncated: the seal counts %lld records and a chain hash "
			"that disagree with its place in the chain", where(seal, w, sizeof(w)), seal->seal_records);
		return false;
	}
	return true;
}

void audit_verify_free(struct audit_verify_state *v)
{
	OPENSSL_cleanse(v->key, sizeof(v->key));
	for (size_t i = 0; i < v->n; i++) {
		free(v->recs[i].session);
		free(v->recs[i].err);
	}
	free(v->recs);
	for (size_t i = 0; i < v->n_probs; i++)
		free(v->probs[i].text);
	free(v->probs);
	free(v->at);
	free(v->claimed);
}

int audit_verify_run(struct audit_verify_state *v, const char *path, const char *key_path,
		      struct audit_verify_stats *st)
{
	size_t n_records = 0, n_auth = 0;
	bool no_newline = false;
	int r;

	r = load_key(key_path, v->key);
	if (r < 0)
		return r;
	r = read_log(v, path, &no_newline);
	if (r < 0)
		return r;
	st->lines = v->n;
	if (v->n == 0) {
		problem(v, 0, "line 1: truncated: the log is empty (no start record)");
		return v->oom;
	}
	if (no_newline)
		problem(v, v->n, "line %zu: truncated: the last line has no newline (cut mid-record?)", v->n);
	for (size_t i = 0; i < v->n; i++) {
		n_records += v->recs[i].parsed;
		n_auth += v->recs[i].auth;
	}
	if (n_auth == 0) {
		if (n_records > 0) {
			problem(v, 0, "wrong key: not one of the %zu records authenticates with %s "
				"(the wrong key, or every record rewritten)", n_records, key_path);
		} else {
			for (size_t i = 0; i < v->n; i++)
				problem(v, v->recs[i].line, "line %zu: bad JSON: %s", v->recs[i].line, v->recs[i].err);
		}
		return v->oom;
	}
	r = index_seqs(v);
	if (r < 0)
		return r;
	r = find_moved(v);
	if (r < 0)
		return r;
	r = walk_chain(v);
	if (r < 0)
		return r;
	find_deleted(v);
	st->sealed = check_seal(v);
	for (size_t i = 0; i < v->n; i++)
		st->records += v->recs[i].auth && !v->recs[i].dup;
	return v->oom;
}

int audit_verify_stats(const char *path, const char *key_path, FILE *report,
		       struct audit_verify_stats *stats)
{
	_cleanup_free_ char *default_key = NULL;
	struct audit_verify_stats st = {};
	struct audit_verify_state v = {};
	int r;

	if (!path)
		return -EINVAL;
	if (!key_path) {
		r = audit_log_key_path(path, NULL, &default_key);
		if (r < 0)
			return r;
		key_path = default_key;
	}
	r = audit_verify_run(&v, path, key_path, &st);
	if (r == 0) {
		if (v.n_probs)
			qsort(v.probs, v.n_probs, sizeof(*v.probs), problem_cmp);
		for (size_t i = 0; i < v.n_probs && report; i++)
			fprintf(report, "%s\n", v.probs[i].text);
		st.problems = v.n_probs;
		r = v.n_probs ? -EBADMSG : 0;
	}
	audit_verify_free(&v);
	if (stats)
		*stats = st;
	return r;
}

int audit_verify(const char *path, const char *key_path, FILE *report)
{
	return audit_verify_stats(path, key_path, report, NULL);
}


int audit_log_key_path(const char *path, const char *key_dir, char **out)
{
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *buf = NULL;
	_cleanup_json_ json_t *j = NULL;
	size_t cap = 0;
	ssize_t n;

	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = getline(&buf, &cap, f);
	if (n < 0)
		return ferror(f) ? -EIO : -EBADMSG;
	j = json_loadb(buf, (size_t)n, JSON_DISABLE_EOF_CHECK, NULL);
	if (!json_is_string(json_object_get(j, "session")))
		return -EBADMSG;
	if (audit_key_path_for(key_dir, json_string_value(json_object_get(j, "session")), out) < 0)
		return -EBADMSG;
	return 0;
}
