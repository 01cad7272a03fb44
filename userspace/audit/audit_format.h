/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The audit log's format (cordon-audit-v1, audit.c's header says what it
 * proves): its constants and the side-effect-free primitives the writer
 * (audit.c) and the verifier (audit_verify.c) share, so both hash, encode
 * and name things one way: lower-case hex, SHA-256 and HMAC-SHA256, the
 * chain's start, the session names that name key files.
 */
#ifndef CORDON_AUDIT_FORMAT_H
#define CORDON_AUDIT_FORMAT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "util.h"

/*
 * Where session keys live.  The caller (`cordon run`) must add this directory
 * to the policy's protected paths: whoever reads a key can forge that
 * session's log.
 */
#define AUDIT_KEY_DIR "/var/lib/cordon/audit-keys"
#define AUDIT_KEY_LEN 32
/* Named by record 0's "format"; record 0's prev is SHA-256 of "FORMAT:SESSION". */
#define AUDIT_FORMAT "cordon-audit-v1"
#define AUDIT_CHAIN_TAG AUDIT_FORMAT ":"

#define AUDIT_HASH_LEN     32
#define AUDIT_HEX_LEN      (2 * AUDIT_HASH_LEN)
#define AUDIT_SESSION_MAX  128
#define AUDIT_DUMP_FLAGS   (JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII)
/* `,"hmac":"` + 64 hex digits + `"}`: how every line ends. */
#define AUDIT_HMAC_MEMBER  ",\"hmac\":\""
#define AUDIT_HMAC_TAIL    (sizeof(AUDIT_HMAC_MEMBER) - 1 + AUDIT_HEX_LEN + 2)

/* jansson's own json_decrefp(), spelled like the other cleanup helpers. */
#define _cleanup_json_ _cleanup_(json_decrefp)

/* Decode 2*N lower-case hex digits of S into OUT (upper case refused).  0 or -EINVAL. */
int audit_format_hex_decode(const char *s, size_t n, unsigned char *out);

/* SHA-256 of P's N bytes.  0 or -EIO. */
int audit_format_sha256(const void *p, size_t n, unsigned char out[AUDIT_HASH_LEN]);

/* HMAC-SHA256 (RFC 2104) of P's N bytes with KEY; wipes its state.  0 or -EIO. */
int audit_format_hmac256(const unsigned char key[AUDIT_KEY_LEN], const void *p, size_t n,
			 unsigned char out[AUDIT_HASH_LEN]);

/* Record 0's prev: SHA-256 of AUDIT_CHAIN_TAG SESSION.  0, -ENOMEM or -EIO. */
int audit_format_chain_start(const char *session, unsigned char out[AUDIT_HASH_LEN]);

/* Does S name a file: [A-Za-z0-9][A-Za-z0-9._-]*, at most AUDIT_SESSION_MAX? */
bool audit_format_session_valid(const char *s);

/* KEY_DIR/SESSION.key (KEY_DIR NULL: AUDIT_KEY_DIR).  -EINVAL for a bad session name. */
int audit_key_path_for(const char *key_dir, const char *session, char **out);


#endif /* CORDON_AUDIT_FORMAT_H */
