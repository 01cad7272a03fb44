/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Bytes from a task made fit for what reads them (text.c): a JSON string
 * (the policy, the approver and the audit see every byte), an audit record
 * of bounded size that still names exactly what was judged, and text shown
 * to a human that no byte can steer.  Pure; policy.h includes this header.
 */
#ifndef CORDON_POLICY_TEXT_H
#define CORDON_POLICY_TEXT_H

#include <jansson.h>
#include <stddef.h>

/*
 * Bytes from a task (an argument, a path, a comm) as a JSON string, always:
 * valid UTF-8 as it is, else each byte that is not part of a valid
 * sequence written as the four characters \xNN.  Never NULL for a
 * non-NULL s (NULL only when out of memory).
 */
json_t *pol_json_text(const char *s);
/*
 * A value from a task as the audit records keep it (a new reference): V
 * itself while it is at most POL_RECORD_ARGS_BYTES of compact JSON with
 * sorted keys, else {truncated: true, bytes, sha256, head}: that JSON
 * text's size, its SHA-256 and its first POL_RECORD_ARGS_BYTES.  NULL
 * when out of memory.
 */
#define POL_RECORD_ARGS_BYTES (64u << 10)
json_t *pol_json_kept(json_t *v);
/*
 * The SHA-256 (hex) of V's JSON text as pol_json_kept hashes it (compact,
 * keys sorted), and in *BYTES (may be NULL) that text's size.  0, or -ENOMEM.
 */
int pol_json_sha256(json_t *v, char hex[65], size_t *bytes);
/* EVENT ({server, tool, arguments, ...}) with its arguments as pol_json_kept keeps them. */
json_t *pol_event_kept(json_t *event);
/*
 * Text from a task made fit to show a human in `out` (len bytes): UTF-8
 * kept, control characters (C0, DEL, C1) and bytes that are not UTF-8
 * written as \xNN, and when it does not fit, cut and ended with
 * " ...[+N bytes]", so a cut is never silent.
 */
void pol_printable(char *out, size_t len, const char *s);

#endif
