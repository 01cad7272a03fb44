/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The tamper-evident audit log: one JSON record per line, chained by SHA-256
 * and authenticated by a per-session HMAC key.  audit.c says what the chain
 * proves and what it cannot.
 */
#ifndef CORDON_AUDIT_H
#define CORDON_AUDIT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The format's primitives and the verifier: own modules, here for the callers of the whole. */
#include "audit_format.h"
#include "audit_verify.h"

/* Bytes kept allocated past the log's end, and the largest record (audit.c). */
#define AUDIT_RESERVE    (4 << 20)
#define AUDIT_RECORD_MAX (1u << 20)

struct audit;

/*
 * Create PATH (O_CREAT|O_EXCL|O_APPEND, mode 0600; an existing file is
 * -EEXIST), generate a 32-byte HMAC key, store it at KEY_DIR/SESSION.key
 * (KEY_DIR defaults to AUDIT_KEY_DIR, created 0700 if missing, -EPERM if
 * it is not ours or others may write it; the key file is 0600 and must not
 * exist: -EEXIST) and write record 0, of type "start", with the
 * caller's START_FIELDS (borrowed, may be NULL) and "reserve", the bytes
 * kept allocated past the log's end (0 where the filesystem cannot; no
 * room for it is audit_open's error, -ENOSPC or -EDQUOT).  SESSION is
 * [A-Za-z0-9][A-Za-z0-9._-]{0,127}: it names the key file.  No secret has
 * been registered yet when record 0 is written, so START_FIELDS must not
 * carry any.
 */
int audit_open(const char *path, const char *session, const char *key_dir, json_t *start_fields,
	       struct audit **out);

/*
 * Register a secret VALUE under NAME ([A-Za-z0-9_.-]{1,64}): from now on any
 * occurrence inside any string of a record (object keys and values, at any
 * depth, and the record type) is replaced with "[REDACTED:NAME]" before the
 * record is hashed and written.
 */
int audit_add_secret(struct audit *a, const char *name, const char *value);

/*
 * Append a record of TYPE ("decision", "lifecycle", "budget", ...) carrying
 * the members of FIELDS (an object, borrowed; NULL for none).  FIELDS may not
 * use the record's own members (seq, time, session, type, prev, hmac):
 * -EINVAL.  Thread-safe; one write(2) per record.  After audit_seal(),
 * -EPIPE.  After a write that failed half-way the log on disk is no longer a
 * chain this handle can extend: every later write returns that error.
 */
int audit_write(struct audit *a, const char *type, json_t *fields);

/*
 * Also send every record, as it is written, through SH (audit_ship.h; the
 * log owns it from now on, even on error): record 0 is sent first; add it
 * before any other record is written (records between are not sent).  At most AUDIT_SHIP_MAX (-ENOSPC); after the seal, -EPIPE.
 * A send that fails is never the log's failure: it is counted, and the log
 * records the outage ("audit-ship-lost", "audit-ship-resumed").  Returns 0,
 * or -ENOTCONN when the records already written could not be sent (the
 * shipper is kept: it resumes when the collector is back), for a warning.
 */
#define AUDIT_SHIP_MAX 2
struct audit_ship;
int audit_ship_add(struct audit *a, struct audit_ship *sh);
/* Messages that could not be sent, over every shipper. */
uint64_t audit_ship_lost(struct audit *a);

/* The bytes written to the log so far. */
uint64_t audit_size(struct audit *a);

/*
 * 0 while every record is kept; once not, the first -errno that stopped one
 * (-ENOSPC: the reserve could not be renewed, -E2BIG: a record over
 * AUDIT_RECORD_MAX, or a write's error), and *DROPPED (may be NULL) how
 * many records were refused since.  The first call that finds it down
 * writes a "lifecycle" record {"event": "audit-down", "error", "dropped"}.
 * A log that is down takes only types "lifecycle" and "budget" and the
 * seal, into its reserve: its owner must stop whatever it records (see
 * AUDIT_RESERVE in audit.c).
 */
int audit_down(struct audit *a, uint64_t *dropped);

/*
 * Go on with the log at PATH, whose writer died without sealing it, so that
 * whoever ended the session can say so and seal it (audit.c says why).  The
 * key is read from KEY_PATH.  The log must be a whole authentic chain with
 * no seal, its last line whole: a sealed log is -EALREADY, anything else
 * -EBADMSG (`cordon audit verify` says what), and the file is left as is.
 * The handle has no secrets registered: callers write only their own
 * closing records.  audit_close seals it and gives back the dead writer's
 * reserve.
 */
int audit_resume(const char *path, const char *key_path, struct audit **out);

/*
 * Write the sealing record: type "seal", with "records" (how many records
 * precede it) and "chain" (SHA-256 of the last line before it) added to
 * FIELDS (borrowed, may be NULL), and fsync the log.  Later writes, and a
 * second seal, fail with -EPIPE.
 */
int audit_seal(struct audit *a, json_t *fields);

/*
 * Seal if not sealed (errors are lost: call audit_seal() to see them), wipe
 * the key and the secrets, free.  No other thread may still be writing.
 */
void audit_close(struct audit *a);
/*
 * Start making the key and its directory entry durable (their fsync) on a
 * thread of its own, which never holds up a record.  audit_open leaves it
 * for later, off the start of a session; a caller that forks without
 * glibc (a raw clone3) calls this only after it has.
 */
void audit_sync_key_start(struct audit *a);
/*
 * Wait until the key and its directory entry are durable, doing the fsync
 * here if no thread was started; audit_seal and audit_close call it in any
 * case.  Idempotent; returns the fsync's result.
 */
int audit_sync_key(struct audit *a);

const char *audit_key_path(const struct audit *a);
const char *audit_session(const struct audit *a);

#endif /* CORDON_AUDIT_H */
