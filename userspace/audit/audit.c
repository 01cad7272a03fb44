// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The tamper-evident audit log.
 *
 * Format (cordon-audit-v1).  One JSON object per line.  Every record has
 *   seq      0, 1, 2, ... in the order written
 *   time     RFC 3339, UTC, microseconds
 *   session  the session name (it also names the key file)
 *   type     "start" (record 0), "decision", "lifecycle", ..., "seal" (last)
 *   prev     hex SHA-256 of the previous record's line, without its newline;
 *            for record 0, SHA-256 of "cordon-audit-v1:" + session
 *   hmac     hex HMAC-SHA256, keyed with the session key, of the record's
 *            body: the record without hmac, serialised by jansson with
 *            JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII
 * and the caller's members; record 0 also has "format": "cordon-audit-v1"
 * and "reserve" (the bytes kept allocated past the log's end, below).
 * The line is the body with `,"hmac":"<hex>"` put before its closing brace,
 * so a verifier gets the body back byte for byte by cutting that member
 * out: it never has to re-serialise (and no two JSON libraries have to
 * agree on number or escape formatting).  The seal, written last, adds
 * "records" (how many records precede it) and "chain" (the hash of the line
 * before it).  Registered secrets are replaced before a record is hashed.
 * The key is 32 random bytes, written as 64 hex digits to
 * KEY_DIR/<session>.key and nowhere else, and wiped from memory on close.
 *
 * What this proves, to a verifier holding the key:
 *  - every line that authenticates is, byte for byte, a record this process
 *    wrote for this session: an edited field, an edited hmac or a forged
 *    record does not authenticate;
 *  - seq and prev fix the order: a deleted record is a gap in seq, an
 *    inserted line fits no slot of the chain, a replayed copy repeats a seq,
 *    a moved record is out of place among its neighbours;
 *  - the seal says the writer finished: a log without one was truncated.
 * What it cannot prove:
 *  - anything against a holder of the key.  Root on the host can read the
 *    key file and rewrite the log, chain, seal and all.  The agent cannot
 *    only because cordon's policy invariants keep it out of the key
 *    directory and the log: the caller (`cordon run`) must add KEY_DIR and
 *    the log's path to the policy's protected paths.  This module cannot.
 *    A symmetric key also means whoever verifies can forge; only a
 *    signing key that never sits on the host, or records shipped off the
 *    host as they are written, would close that.
 *  - that the log exists: deleting the whole file, or the file and its key,
 *    leaves nothing to verify.  Shipping records (or just the latest chain
 *    hash) off the host is the only answer to that.
 *  - the difference between a truncated log and a writer that died before
 *    sealing: both end without a seal, and both are reported as truncated.
 *  - that the records are true: the log authenticates what the supervisor
 *    said, when the host clock said it.
 *
 * Strings in records come from the agent (commands, tool arguments).
 * JSON_ENSURE_ASCII escapes every control and non-ASCII character, so the
 * raw file shown in a terminal cannot carry escape sequences or bidi
 * overrides; `cordon audit show` escapes them again after decoding.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <openssl/crypto.h>
#include "audit.h"
#include "audit_ship.h"
#include "scrub.h"
#include "util.h"

/*
 * The log's reserve.  Attack: the agent fills the filesystem that holds the
 * log (its workspace and /var/log are often one filesystem), and from then
 * on every record fails to be written while the session runs on: nothing it
 * does is on record, and the log ends cut, with no seal and no reason.
 * Answer: AUDIT_RESERVE bytes past the log's end are kept allocated
 * (fallocate(2), FALLOC_FL_KEEP_SIZE: the file's size does not change, the
 * blocks are its own), renewed whenever less than half of it is left.  A
 * renewal that fails, or any record that fails to be written, puts the log
 * down: audit_down() says why, the caller stops the session, and from then
 * on only cordon's own closing records (types "lifecycle", "budget", the
 * seal) are written, into what is left of the reserve.  Every record is at
 * most AUDIT_RECORD_MAX bytes (callers keep digests of what is larger; a
 * larger one is refused, -E2BIG, and puts the log down), so at least
 * AUDIT_RESERVE / 2 - AUDIT_RECORD_MAX bytes are left for them.
 * What it cannot do: a filesystem without fallocate (some network and FUSE
 * filesystems) keeps no reserve ("reserve": 0 in record 0), and there the
 * first record that fails is lost before the session stops; and root on the
 * host can still fill a quota or remove the file.
 */

struct audit {
	pthread_mutex_t lock;
	int fd;
	uint64_t seq;                     /* of the next record */
	unsigned char prev[AUDIT_HASH_LEN];     /* SHA-256 of the last line written */
	unsigned char key[AUDIT_KEY_LEN];
	char *session;
	char *key_path;
	struct scrub secrets;
	bool sealed;
	int broken;                       /* -errno of a write that left half a line */
	int down;                         /* -errno: records can no longer be kept (above) */
	uint64_t dropped;                 /* records refused since */
	bool down_said;                   /* its "audit-down" record is written */
	off_t end;                        /* the log's size, as written */
	off_t reserved;                   /* allocated up to here; 0: no fallocate */
	/*
	 * The key is made durable (fsync of the file and of its directory) by
	 * a thread audit_sync_key_start starts, so the two journal commits
	 * overlap the session instead of adding to its start; sealing joins
	 * it.  key_lock, not lock: records are written meanwhile.
	 */
	pthread_mutex_t key_lock;
	int key_fd;                       /* until the key is on disk */
	int key_dfd;
	int key_err;                      /* -errno of that fsync, once done */
	pthread_t key_thread;
	bool key_thread_live;             /* started and not yet joined */
	/* Where records also go as they are written (audit_ship.c). */
	struct shipper {
		struct audit_ship *sh;
		uint64_t sent, lost;
		uint64_t lost_now;                /* in the current outage */
		bool down;                        /* its last send failed */
	} ship[AUDIT_SHIP_MAX];
	size_t n_ship;
	bool ship_noting;                 /* writing a record about shipping */
	char *line0;                      /* record 0's line, for a shipper added after it */
};

/* The members every record carries; a caller's fields may not shadow them. */
static const char *const own_members[] = { "seq", "time", "session", "type", "prev", "hmac" };

static int now_rfc3339(char *buf, size_t len)
{
	struct timespec ts;
	struct tm tm;
	size_t n;

	if (clock_gettime(CLOCK_REALTIME, &ts) < 0 || !gmtime_r(&ts.tv_sec, &tm))
		return -errno;
	n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	if (n == 0 || (size_t)snprintf(buf + n, len - n, ".%06ldZ", ts.tv_nsec / 1000) >= len - n)
		return -ENOSPC;
	return 0;
}

/* A redacted deep copy of V (a new reference), or NULL. */
static json_t *redact(const struct audit *a, json_t *v)
{
	return scrub_json(&a->secrets, v, NULL);
}

static bool shadows_own_member(json_t *fields)
{
	for (size_t i = 0; i < ARRAY_SIZE(own_members); i++)
		if (json_object_get(fields, own_members[i]))
			return true;
	return false;
}

/* --- writing ------------------------------------------------------------------ */

/* Write all of P; *done says how much reached the file if it fails. */
static int write_counted(int fd, const char *p, size_t n, size_t *done)
{
	*done = 0;
	while (*done < n) {
		ssize_t w = write(fd, p + *done, n - *done);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (w == 0)
			return -EIO;
		*done += (size_t)w;
	}
	return 0;
}

/* What a log that is down still takes: cordon's own closing records. */
static bool closing_type(const char *type)
{
	return !strcmp(type, "lifecycle") || !strcmp(type, "budget") || !strcmp(type, "seal");
}

/*
 * fallocate, again when a signal interrupted it: tmpfs (and ext4 on a
 * fatal signal) returns EINTR, not restarted even under SA_RESTART, and a
 * SIGTERM caught during `cordon run`'s start (run.c) failed the log's
 * opening with it instead of stopping the start.
 */
static int reserve(int fd, off_t off, off_t len)
{
	int r;

	while ((r = fallocate(fd, FALLOC_FL_KEEP_SIZE, off, len)) < 0 && errno == EINTR)
		;
	return r;
}

/* Renew the reserve when less than half of it is left; a failure puts the log down. */
static void keep_reserve(struct audit *a)
{
	if (!a->reserved || a->down || a->reserved - a->end >= AUDIT_RESERVE / 2)
		return;
	if (reserve(a->fd, a->end, AUDIT_RESERVE) == 0)
		a->reserved = a->end + AUDIT_RESERVE;
	else
		a->down = -errno;
}

static int append_locked(struct audit *a, const char *type, json_t *fields, json_t *extra);

/*
 * Send the record just written to every shipper.  A send that fails starts
 * an outage: the log says so at once ("audit-ship-lost", naming the first
 * seq lost), and says when a send succeeds again ("audit-ship-resumed",
 * with how many were lost), so the gap is on record both here and, by its
 * missing seqs, at the collector.  The caller holds the lock.
 */
static void ship_locked(struct audit *a, json_t *rec, const char *line, size_t n)
{
	for (size_t i = 0; i < a->n_ship; i++) {
		struct shipper *p = &a->ship[i];
		int r = audit_ship_record(p->sh, rec, line, n, a->prev);
		_cleanup_json_ json_t *ev = NULL;

		if (r == 0) {
			p->sent++;
			if (!p->down)
				continue;
			p->down = false;
			ev = json_pack("{s:s,s:s,s:I}", "event", "audit-ship-resumed", "to",
				       audit_ship_name(p->sh), "lost", (json_int_t)p->lost_now);
			p->lost_now = 0;
		} else {
			p->lost++;
			p->lost_now++;
			if (p->down)
				continue;
			p->down = true;
			ev = json_pack("{s:s,s:s,s:s,s:I}", "event", "audit-ship-lost", "to",
				       audit_ship_name(p->sh), "error", strerror(-r), "first_seq",
				       json_integer_value(json_object_get(rec, "seq")));
		}
		/* One level: the note's own shipping changes no state worth a second note. */
		if (ev && !a->ship_noting && !a->sealed && !a->broken) {
			a->ship_noting = true;
			(void)append_locked(a, "lifecycle", ev, NULL);
			a->ship_noting = false;
		}
	}
}

/*
 * Serialise, authenticate and append one record; the caller holds the lock.
 * EXTRA holds members this module adds (the seal's), already checked.
 */
static int append_locked(struct audit *a, const char *type, json_t *fields, json_t *extra)
{
	_cleanup_json_ json_t *rec = NULL;
	_cleanup_free_ char *body = NULL, *line = NULL;
	char ts[64], prev_hex[AUDIT_HEX_LEN + 1], mac_hex[AUDIT_HEX_LEN + 1];
	unsigned char mac[AUDIT_HASH_LEN];
	size_t blen, llen, done;
	const char *k;
	json_t *v, *jtype;
	int r;

	if (a->broken)
		return a->broken;
	if (a->sealed)
		return -EPIPE;
	if (fields && (!json_is_object(fields) || shadows_own_member(fields)))
		return -EINVAL;
	if (a->down && !closing_type(type)) {
		a->dropped++;
		return a->down;
	}
	json_object_foreach(extra, k, v)
		if (json_object_get(fields, k))
			return -EINVAL;
	rec = fields ? redact(a, fields) : json_object();
	if (!rec)
		return -ENOMEM;
	r = now_rfc3339(ts, sizeof(ts));
	if (r < 0)
		return r;
	jtype = json_string(type);
	if (!jtype)
		return -EINVAL;   /* not UTF-8 */
	hex_encode(a->prev, AUDIT_HASH_LEN, prev_hex);
	if (json_object_set_new(rec, "type", jtype) < 0 ||
	    json_object_set_new(rec, "seq", json_integer((json_int_t)a->seq)) < 0 ||
	    json_object_set_new(rec, "time", json_string(ts)) < 0 ||
	    json_object_set_new(rec, "session", json_string(a->session)) < 0 ||
	    json_object_set_new(rec, "prev", json_string(prev_hex)) < 0 ||
	    (extra && json_object_update(rec, extra) < 0))
		return -ENOMEM;
	body = json_dumps(rec, AUDIT_DUMP_FLAGS);
	if (!body)
		return -ENOMEM;
	blen = strlen(body);
	r = audit_format_hmac256(a->key, body, blen, mac);
	if (r < 0)
		return r;
	hex_encode(mac, AUDIT_HASH_LEN, mac_hex);
	/* body minus its '}', the hmac member, '}', '\n'. */
	llen = blen - 1 + AUDIT_HMAC_TAIL + 1;
	if (llen > AUDIT_RECORD_MAX) {
		a->dropped++;
		if (!a->down)
			a->down = -E2BIG;
		return -E2BIG;
	}
	line = malloc(llen + 1);
	if (!line)
		return -ENOMEM;
	memcpy(line, body, blen - 1);
	snprintf(line + blen - 1, llen - blen + 2, "%s%s\"}\n", AUDIT_HMAC_MEMBER, mac_hex);
	/*
	 * One write(2) on an O_APPEND file: a record is never interleaved with
	 * another, and a writer killed between records leaves whole lines.  If
	 * only part of the line made it, the file no longer ends where our
	 * chain does: refuse to extend it.
	 */
	r = write_counted(a->fd, line, llen, &done);
	if (r < 0) {
		if (done > 0)
			a->broken = r;
		if (!a->down)
			a->down = r;
		a->dropped++;
		return r;
	}
	r = audit_format_sha256(line, llen - 1, a->prev);
	if (r < 0) {
		a->broken = r;
		return r;
	}
	if (a->seq == 0)
		a->line0 = strndup(line, llen - 1);
	a->seq++;
	a->end += (off_t)llen;
	keep_reserve(a);
	if (a->n_ship) {
		bool seal = !strcmp(type, "seal");

		/* The seal is final before its own shipping (no note may follow it). */
		if (seal)
			a->sealed = true;
		ship_locked(a, rec, line, llen - 1);
		for (size_t i = 0; seal && i < a->n_ship; i++)
			if (audit_ship_anchor(a->ship[i].sh, a->session, a->seq - 1, a->prev) < 0)
				a->ship[i].lost++;
	}
	return 0;
}

static int audit_write_type(struct audit *a, const char *type, json_t *fields)
{
	_cleanup_free_ char *t = NULL;
	size_t tlen;
	int r;

	pthread_mutex_lock(&a->lock);
	r = scrub_bytes(&a->secrets, type, strlen(type), &t, &tlen, NULL);
	if (r == 0)
		r = append_locked(a, t, fields, NULL);
	pthread_mutex_unlock(&a->lock);
	return r;
}

int audit_write(struct audit *a, const char *type, json_t *fields)
{
	if (!a || !type || !*type)
		return -EINVAL;
	/* The verifier trusts these two types to mean the first and the last record. */
	if (!strcmp(type, "start") || !strcmp(type, "seal"))
		return -EINVAL;
	return audit_write_type(a, type, fields);
}

static int seal_locked(struct audit *a, json_t *fields)
{
	_cleanup_json_ json_t *extra = NULL;
	char chain[AUDIT_HEX_LEN + 1];
	int r;

	if (a->sealed)
		return -EPIPE;
	hex_encode(a->prev, AUDIT_HASH_LEN, chain);
	extra = json_pack("{s:I,s:s}", "records", (json_int_t)a->seq, "chain", chain);
	if (!extra)
		return -ENOMEM;
	r = append_locked(a, "seal", fields, extra);
	if (r < 0)
		return r;
	a->sealed = true;
	return fsync(a->fd) < 0 ? -errno : 0;
}

int audit_seal(struct audit *a, json_t *fields)
{
	int r;

	if (!a)
		return -EINVAL;
	r = audit_sync_key(a);
	if (r < 0)
		return r;
	pthread_mutex_lock(&a->lock);
	r = seal_locked(a, fields);
	pthread_mutex_unlock(&a->lock);
	return r;
}

int audit_ship_add(struct audit *a, struct audit_ship *sh)
{
	unsigned char hash[AUDIT_HASH_LEN];
	int r = 0;

	if (!a || !sh)
		return -EINVAL;
	pthread_mutex_lock(&a->lock);
	if (a->n_ship == AUDIT_SHIP_MAX || a->sealed) {
		r = a->sealed ? -EPIPE : -ENOSPC;
		pthread_mutex_unlock(&a->lock);
		audit_ship_free(sh);
		return r;
	}
	a->ship[a->n_ship++] = (struct shipper){ .sh = sh };
	/* Record 0, written before any shipper could be added (audit_open), sent now. */
	if (a->line0) {
		json_t *rec = json_loads(a->line0, 0, NULL);
		struct shipper *p = &a->ship[a->n_ship - 1];

		if (rec && audit_format_sha256(a->line0, strlen(a->line0), hash) == 0 &&
		    audit_ship_record(sh, rec, a->line0, strlen(a->line0), hash) == 0) {
			p->sent++;
		} else {
			p->lost++;
			p->lost_now++;
			p->down = true;
		}
		json_decref(rec);
	}
	if (a->ship[a->n_ship - 1].down && !a->broken) {
		_cleanup_json_ json_t *ev = json_pack("{s:s,s:s,s:s,s:i}", "event", "audit-ship-lost",
						      "to", audit_ship_name(sh), "error",
						      "not reachable when the log was opened",
						      "first_seq", 0);

		a->ship_noting = true;
		(void)append_locked(a, "lifecycle", ev, NULL);
		a->ship_noting = false;
		r = -ENOTCONN;
	}
	pthread_mutex_unlock(&a->lock);
	return r;
}

uint64_t audit_ship_lost(struct audit *a)
{
	uint64_t n = 0;

	if (!a)
		return 0;
	pthread_mutex_lock(&a->lock);
	for (size_t i = 0; i < a->n_ship; i++)
		n += a->ship[i].lost;
	pthread_mutex_unlock(&a->lock);
	return n;
}

int audit_add_secret(struct audit *a, const char *name, const char *value)
{
	int r;

	if (!a)
		return -EINVAL;
	pthread_mutex_lock(&a->lock);
	r = scrub_add(&a->secrets, name, value);
	pthread_mutex_unlock(&a->lock);
	return r;
}

const char *audit_key_path(const struct audit *a)
{
	return a ? a->key_path : NULL;
}

const char *audit_session(const struct audit *a)
{
	return a ? a->session : NULL;
}

/* Free without sealing (audit_open's failure path). */
static void audit_free(struct audit *a)
{
	if (!a)
		return;
	if (a->key_thread_live)
		pthread_join(a->key_thread, NULL);
	if (a->key_fd >= 0)
		(void)close(a->key_fd);
	if (a->key_dfd >= 0)
		(void)close(a->key_dfd);
	OPENSSL_cleanse(a->key, sizeof(a->key));
	scrub_free(&a->secrets);
	for (size_t i = 0; i < a->n_ship; i++)
		audit_ship_free(a->ship[i].sh);
	if (a->fd >= 0)
		(void)close(a->fd);
	free(a->session);
	free(a->key_path);
	free(a->line0);
	pthread_mutex_destroy(&a->lock);
	pthread_mutex_destroy(&a->key_lock);
	free(a);
}

static inline void audit_freep(struct audit **a)
{
	audit_free(*a);
}

void audit_close(struct audit *a)
{
	if (!a)
		return;
	(void)audit_sync_key(a);
	pthread_mutex_lock(&a->lock);
	if (!a->sealed && !a->broken)
		(void)seal_locked(a, NULL);
	/*
	 * Give back what is left of the reserve past the end: a truncate to
	 * the file's own size (ext4 and XFS drop blocks past the end then;
	 * ext4 punches no hole there), and a hole punched (tmpfs keeps them
	 * through a truncate that changes nothing).
	 */
	if (a->reserved > a->end) {
		struct stat st;

		if (fstat(a->fd, &st) == 0) {
			(void)!ftruncate(a->fd, st.st_size);
			if (a->reserved > st.st_size)
				(void)fallocate(a->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
						st.st_size, a->reserved - st.st_size);
		}
	}
	pthread_mutex_unlock(&a->lock);
	audit_free(a);
}

uint64_t audit_size(struct audit *a)
{
	uint64_t n;

	if (!a)
		return 0;
	pthread_mutex_lock(&a->lock);
	n = (uint64_t)a->end;
	pthread_mutex_unlock(&a->lock);
	return n;
}

int audit_down(struct audit *a, uint64_t *dropped)
{
	int r;

	if (!a)
		return 0;
	pthread_mutex_lock(&a->lock);
	r = a->down;
	if (dropped)
		*dropped = a->dropped;
	if (r && !a->down_said) {
		_cleanup_json_ json_t *ev = json_pack("{s:s,s:s,s:I}", "event", "audit-down",
						      "error", strerror(-r), "dropped",
						      (json_int_t)a->dropped);

		a->down_said = true;
		(void)append_locked(a, "lifecycle", ev, NULL);
	}
	pthread_mutex_unlock(&a->lock);
	return r;
}

/*
 * Create KEY_DIR (0700, missing parents 0755) and open it.  It must belong
 * to us and be writable by nobody else: whoever can write it can swap a key
 * for one they know after we wrote it, and then forge the log.
 */
static int key_dir_open(const char *dir)
{
	_cleanup_free_ char *p = strdup(dir);
	_cleanup_close_ int fd = -1;
	struct stat st;

	if (!p)
		return -ENOMEM;
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)))
		return -EPERM;
	return TAKE_FD(fd);
}

/* Write the key as 64 hex digits; O_EXCL|O_NOFOLLOW: never through a planted file or link. */
/* Write the key; returns its open fd (made durable later, by audit_sync_key). */
static int key_write(int dfd, const char *name, const unsigned char key[AUDIT_KEY_LEN])
{
	_cleanup_close_ int fd = -1;
	char text[AUDIT_HEX_LEN + 2];
	size_t done;
	int r;

	fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	hex_encode(key, AUDIT_KEY_LEN, text);
	text[AUDIT_HEX_LEN] = '\n';
	r = write_counted(fd, text, AUDIT_HEX_LEN + 1, &done);
	OPENSSL_cleanse(text, sizeof(text));
	if (r < 0)
		return r;
	return TAKE_FD(fd);
}

/* fsync the key and its directory entry, once; later calls return the result. */
static int key_sync_now(struct audit *a)
{
	int r;

	pthread_mutex_lock(&a->key_lock);
	if (a->key_fd >= 0) {
		if (fsync(a->key_fd) < 0 || fsync(a->key_dfd) < 0)
			a->key_err = -errno;
		close(a->key_fd);
		close(a->key_dfd);
		a->key_fd = a->key_dfd = -1;
	}
	r = a->key_err;
	pthread_mutex_unlock(&a->key_lock);
	return r;
}

static void *key_sync_thread(void *a)
{
	(void)key_sync_now(a);
	return NULL;
}

void audit_sync_key_start(struct audit *a)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->key_lock);
	/* No thread: audit_sync_key does the work when the log is sealed. */
	if (!a->key_thread_live && a->key_fd >= 0)
		a->key_thread_live = pthread_create(&a->key_thread, NULL, key_sync_thread, a) == 0;
	pthread_mutex_unlock(&a->key_lock);
}

/*
 * Wait until the key and its directory entry are durable.  A sealed log
 * must never outlive its key's directory entry, so sealing calls this
 * first.  audit_open started the work on a thread; without one (it could
 * not be created) it is done here.
 */
int audit_sync_key(struct audit *a)
{
	if (!a)
		return -EINVAL;
	pthread_mutex_lock(&a->key_lock);
	if (a->key_thread_live) {
		a->key_thread_live = false;
		pthread_mutex_unlock(&a->key_lock);
		pthread_join(a->key_thread, NULL);
	} else {
		pthread_mutex_unlock(&a->key_lock);
	}
	return key_sync_now(a);
}

/* A handle with nothing open yet (audit_free undoes it). */
static struct audit *audit_new(void)
{
	struct audit *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->fd = -1;
	a->key_fd = a->key_dfd = -1;
	pthread_mutex_init(&a->lock, NULL);
	pthread_mutex_init(&a->key_lock, NULL);
	return a;
}

int audit_open(const char *path, const char *session, const char *key_dir, json_t *start_fields,
	       struct audit **out)
{
	_cleanup_(audit_freep) struct audit *a = NULL;
	_cleanup_close_ int dfd = -1;
	_cleanup_json_ json_t *extra = NULL;
	const char *key_name;
	bool log_made = false, key_made = false;
	int r;

	if (!path || !session || !out)
		return -EINVAL;
	/* Refuse bad fields before anything is made on disk. */
	if (start_fields && (!json_is_object(start_fields) || shadows_own_member(start_fields) ||
			     json_object_get(start_fields, "format") ||
			     json_object_get(start_fields, "reserve")))
		return -EINVAL;
	a = audit_new();
	if (!a)
		return -ENOMEM;
	r = audit_key_path_for(key_dir, session, &a->key_path);
	if (r < 0)
		return r;
	a->session = strdup(session);
	if (!a->session)
		return -ENOMEM;
	r = audit_format_chain_start(session, a->prev);
	if (r < 0)
		return r;
	dfd = key_dir_open(key_dir ? key_dir : AUDIT_KEY_DIR);
	if (dfd < 0)
		return dfd;
	a->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (a->fd < 0)
		return -errno;
	log_made = true;
	key_name = strrchr(a->key_path, '/') + 1;
	/* The kernel's CSPRNG directly: OpenSSL's DRBG would be seeded from it
	 * anyway, at a cost on every session start. */
	if (getrandom(a->key, AUDIT_KEY_LEN, 0) != AUDIT_KEY_LEN) {
		r = -EIO;
		goto fail;
	}
	r = key_write(dfd, key_name, a->key);
	if (r < 0)
		goto fail;
	key_made = true;
	a->key_fd = r;
	a->key_dfd = TAKE_FD(dfd);
	/* The reserve (above), before record 0: no room for it, no session. */
	if (reserve(a->fd, 0, AUDIT_RESERVE) == 0) {
		a->reserved = AUDIT_RESERVE;
	} else if (errno != EOPNOTSUPP) {
		r = -errno;
		goto fail;
	}
	extra = json_pack("{s:s,s:I}", "format", AUDIT_FORMAT, "reserve", (json_int_t)a->reserved);
	if (!extra) {
		r = -ENOMEM;
		goto fail;
	}
	r = append_locked(a, "start", start_fields, extra);
	if (r < 0)
		goto fail;
	*out = TAKE_PTR(a);
	return 0;
fail:
	/* Both files are ours, just made: leave nothing half-made behind. */
	if (key_made)
		(void)unlinkat(a->key_dfd, key_name, 0);
	if (log_made)
		(void)unlink(path);
	return r;
}

/*
 * Resuming a log whose writer died.  Attack: the supervisor is killed (the
 * watchdog then ends the session) or it and its watchdog both are (the
 * reaper does), and the log just stops: it reads the same as a log cut by
 * someone hiding the session's end, and nothing says what ended it.
 * Answer: whoever ends the session closes the log itself, with the
 * session's key, after a record saying why; a log that is anything but a
 * whole, authentic, unsealed chain ending in a whole line is left exactly
 * as it is (a record cut mid-write by the kill, or a tampered log, keeps
 * its evidence; nothing here truncates or repairs).
 * What it cannot do: it proves no more than the key does (audit.c's
 * header): the closing record says what the ender saw, not that nothing
 * was lost before the kill (a record the supervisor never wrote is not
 * there to verify).
 */
int audit_resume(const char *path, const char *key_path, struct audit **out)
{
	_cleanup_(audit_freep) struct audit *a = NULL;
	struct audit_verify_stats st = {};
	struct audit_verify_state v = {};
	struct stat before, after, named;
	const struct audit_verify_rec *last;
	int r;

	if (!path || !key_path || !out)
		return -EINVAL;
	a = audit_new();
	if (!a)
		return -ENOMEM;
	/* Opened first: the chain read below is the file this descriptor appends to. */
	a->fd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	if (a->fd < 0)
		return -errno;
	if (fstat(a->fd, &before) < 0)
		return -errno;
	if (!S_ISREG(before.st_mode))
		return -EINVAL;
	r = audit_verify_run(&v, path, key_path, &st);
	if (r < 0)
		goto out;
	/*
	 * Only the one problem a dead writer leaves: no seal.  Every line an
	 * authentic record, none replayed, the last one whole, and the file
	 * unchanged since it was opened.
	 */
	r = st.sealed ? -EALREADY : -EBADMSG;
	if (st.sealed || v.n == 0 || v.n_probs != 1 || st.records != v.n)
		goto out;
	last = &v.recs[v.n - 1];
	if (last->seq != (long long)v.n - 1 || !v.recs[0].session ||
	    !audit_format_session_valid(v.recs[0].session))
		goto out;
	if (fstat(a->fd, &after) < 0 || stat(path, &named) < 0) {
		r = -errno;
		goto out;
	}
	if (after.st_size != before.st_size || named.st_ino != before.st_ino ||
	    named.st_dev != before.st_dev)
		goto out;
	a->session = strdup(v.recs[0].session);
	a->key_path = strdup(key_path);
	if (!a->session || !a->key_path) {
		r = -ENOMEM;
		goto out;
	}
	memcpy(a->key, v.key, AUDIT_KEY_LEN);
	memcpy(a->prev, last->hash, AUDIT_HASH_LEN);
	a->seq = (uint64_t)v.n;
	a->end = before.st_size;
	/* The dead writer's reserve may still be allocated: audit_close gives it back. */
	a->reserved = a->end + AUDIT_RESERVE;
	*out = TAKE_PTR(a);
	r = 0;
out:
	audit_verify_free(&v);
	return r;
}
