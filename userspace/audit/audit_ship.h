/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shipping audit records off the log's file as they are written: to a
 * syslog collector (RFC 5424, structured data) and to the journal (its
 * native datagram protocol), each over a Unix datagram socket.  Each
 * record's message carries its seq and the SHA-256 of its line (the hash
 * the next record's prev holds), and the seal is followed by an anchor
 * message naming the chain head: a collector that keeps these can tell
 * `cordon audit verify --anchor` what the log said when it was written,
 * which a root who rewrites the local log (key and all) cannot change.
 * audit_ship.c says what this closes and what it cannot.
 */
#ifndef CORDON_AUDIT_SHIP_H
#define CORDON_AUDIT_SHIP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "audit_format.h"

/* RFC 5424 SD-IDs (32473: RFC 5612's example enterprise number). */
#define AUDIT_SD_RECORD "cordon@32473"
#define AUDIT_SD_FIELDS "cordon-fields@32473"
#define AUDIT_SD_ANCHOR "cordon-anchor@32473"
#define AUDIT_JOURNAL_SOCKET "/run/systemd/journal/socket"

enum audit_ship_kind { AUDIT_SHIP_SYSLOG, AUDIT_SHIP_JOURNAL };

struct audit_ship;

/*
 * A shipper to the Unix datagram socket at PATH (its name, at most 107
 * bytes: -ENAMETOOLONG).  Nothing is connected yet: every message is one
 * sendto(2), so a collector that is down at the start, or restarts, gets
 * what is sent once it is back.
 */
int audit_ship_new(enum audit_ship_kind kind, const char *path, struct audit_ship **out);
void audit_ship_free(struct audit_ship *sh);

/*
 * Send the record REC (its members, as hashed) whose line is LINE (N bytes,
 * no newline) and whose line hash is HASH.  0, or the -errno of the send
 * (the message is lost: the caller records that).  Never blocks.
 */
int audit_ship_record(struct audit_ship *sh, json_t *rec, const char *line, size_t n,
		      const unsigned char hash[AUDIT_HASH_LEN]);

/* The anchor after the seal: SESSION, the seal's SEQ, RECORDS, and the seal line's HASH. */
int audit_ship_anchor(struct audit_ship *sh, const char *session, uint64_t seq,
		      const unsigned char hash[AUDIT_HASH_LEN]);

/*
 * A message about the logs, not a record of one (no session chain: the
 * anchor check ignores it): MSGID (syslog) or CORDON_EVENT (journal) WHAT,
 * the scalar members of FIELDS (borrowed) as SD-PARAMs of SD_ID (syslog)
 * or CORDON_<NAME> fields (journal), and TEXT as the message.  `cordon
 * audit prune` says with it what it removed.  0 or -errno; never blocks.
 */
#define AUDIT_SD_PRUNE "cordon-prune@32473"
int audit_ship_note(struct audit_ship *sh, const char *what, const char *sd_id, json_t *fields,
		    const char *text);

/* "syslog:PATH" or "journal:PATH", for records and messages. */
const char *audit_ship_name(const struct audit_ship *sh);

/*
 * Check the log at PATH against the anchors read from ANCHORS (a collector's
 * file: any line holding a cordon@32473 or cordon-anchor@32473 SD element,
 * as rsyslog writes them, or `journalctl -o export` entries with
 * CORDON_SESSION, CORDON_SEQ and CORDON_HASH).  Writes one line per problem
 * to REPORT and notes (records the collector never got) to NOTES.
 * Returns 0 when every anchor of the log's session matches its record,
 * -EBADMSG if not (or if no anchor names the session), -errno on I/O.
 * *ANCHORED: how many anchors named the session.
 */
int audit_anchor_check(const char *path, FILE *anchors, FILE *report, FILE *notes,
		       size_t *anchored);

#endif /* CORDON_AUDIT_SHIP_H */
