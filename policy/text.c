// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Bytes from a task as JSON, as the audit keeps them, as a human sees them
 * (text.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/evp.h>
#include "text.h"
#include "util.h"

/*
 * Attack: a task passes bytes that are not UTF-8 (an argument, a file or
 * directory name); JSON cannot hold them, and a string jansson refuses
 * became NULL, so an argument dropped out of the event the policy judged
 * (the others moving up a place), a cwd lost the whole shell.exec event,
 * and a path or reason its audit record.  Every such string is now kept,
 * its stray bytes spelled out.  What this cannot do: tell the text \xff
 * from the byte 0xff in a record (the raw argv's digest, when one is
 * written, is of the bytes); no policy names either, policies being UTF-8.
 */
static size_t utf8_len(const unsigned char *p)
{
	unsigned c = p[0];
	size_t n;
	unsigned cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	/* Overlong forms, surrogates and past U+10FFFF are not UTF-8. */
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

json_t *pol_json_text(const char *s)
{
	json_t *j = s ? json_string(s) : NULL;
	const unsigned char *p = (const unsigned char *)s;
	char *out, *o;

	if (j || !s)
		return j;
	o = out = malloc(strlen(s) * 4 + 1);
	if (!out)
		return NULL;
	while (*p) {
		size_t n = utf8_len(p);

		if (n) {
			memcpy(o, p, n);
			o += n;
			p += n;
		} else {
			o += sprintf(o, "\\x%02x", *p++);
		}
	}
	*o = '\0';
	j = json_string(out);
	free(out);
	return j;
}

/*
 * An event as the audit records keep it.  Attack: an MCP tool call whose
 * arguments run to megabytes (a request may hold 4 MiB), made again and
 * again, fills the host's disk through the audit log (each call is recorded
 * at its decision and at its result), and one such record would not fit the
 * log's reserve (AUDIT_RECORD_MAX): the session would stop.  Up to
 * POL_RECORD_ARGS_BYTES of arguments (compact JSON, keys sorted) the event
 * is kept whole; past it, its arguments are kept as {truncated, bytes,
 * sha256, head}: the size and SHA-256 of that JSON text, and its first
 * POL_RECORD_ARGS_BYTES, so the record still names exactly what was judged.
 * The policy and the approver always see the whole event.
 */
int pol_json_sha256(json_t *v, char hex[65], size_t *bytes)
{
	char *text = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	unsigned char md[32];
	size_t n = text ? strlen(text) : 0;
	bool ok = text && EVP_Digest(text, n, md, NULL, EVP_sha256(), NULL) == 1;

	free(text);
	if (!ok)
		return -ENOMEM;
	hex_encode(md, sizeof(md), hex);
	if (bytes)
		*bytes = n;
	return 0;
}

json_t *pol_json_kept(json_t *v)
{
	unsigned char md[32];
	char hex[65], *text;
	json_t *head;
	size_t n, cut;

	text = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	if (!text)
		return NULL;
	n = strlen(text);
	if (n <= POL_RECORD_ARGS_BYTES) {
		free(text);
		return json_incref(v);
	}
	if (EVP_Digest(text, n, md, NULL, EVP_sha256(), NULL) != 1) {
		free(text);
		return NULL;
	}
	hex_encode(md, sizeof(md), hex);
	/* The head ends on a character, not inside one. */
	for (cut = POL_RECORD_ARGS_BYTES; cut > 0 && ((unsigned char)text[cut] & 0xc0) == 0x80; cut--)
		;
	text[cut] = '\0';
	head = pol_json_text(text);
	free(text);
	if (!head)
		return NULL;
	return json_pack("{s:b,s:I,s:s,s:o}", "truncated", 1, "bytes", (json_int_t)n,
			 "sha256", hex, "head", head);
}

json_t *pol_event_kept(json_t *event)
{
	json_t *args = json_object_get(event, "arguments"), *kept, *ka;

	if (!args)
		return json_incref(event);
	ka = pol_json_kept(args);
	if (ka == args) {
		json_decref(ka);
		return json_incref(event);
	}
	kept = ka ? json_copy(event) : NULL;
	if (!kept || json_object_set_new(kept, "arguments", ka) < 0) {
		json_decref(kept);
		return NULL;
	}
	return kept;
}

/*
 * Attack: an argv or a path shown in the approval prompt carries terminal
 * escapes (move the cursor up, erase the line) or newlines, and paints a
 * harmless command over the one held, or bidi controls that reorder it;
 * or it is long enough that what matters lies past the cut.  Shown here,
 * no byte can steer a terminal, and a cut says how much was left out.
 */
/* One piece of s shown: the bytes consumed, the text in *piece (esc when escaped). */
static size_t shown_piece(const unsigned char *p, char esc[5], const char **piece, size_t *plen)
{
	size_t n = utf8_len(p);

	/*
	 * C0 and DEL are one byte; C1 (U+0080..U+009F) is 0xc2 0x80..0x9f.
	 * Characters that reorder or hide text are shown as bytes too:
	 * zero-width and directional marks (U+200B..U+200F), bidi embeddings
	 * and overrides (U+202A..U+202E), isolates (U+2066..U+2069), BOM.
	 * Attack: "./git push origin " then U+202E and a reversed name shows
	 * another branch than the one held.  Its bytes after the first, alone,
	 * are not UTF-8 and are escaped in turn.
	 */
	if (!n || *p < 0x20 || *p == 0x7f || (n == 2 && p[0] == 0xc2 && p[1] < 0xa0) ||
	    (n == 3 && p[0] == 0xe2 && p[1] == 0x80 &&
	     ((p[2] >= 0x8b && p[2] <= 0x8f) || (p[2] >= 0xaa && p[2] <= 0xae))) ||
	    (n == 3 && p[0] == 0xe2 && p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9) ||
	    (n == 3 && p[0] == 0xef && p[1] == 0xbb && p[2] == 0xbf)) {
		snprintf(esc, 5, "\\x%02x", *p);
		*piece = esc;
		*plen = 4;
		return 1;
	}
	*piece = (const char *)p;
	*plen = n;
	return n;
}

#define SHOWN_TAIL 40   /* room for " ...[+N bytes]" */

void pol_printable(char *out, size_t len, const char *s)
{
	const unsigned char *p;
	const char *piece;
	size_t o = 0, want = 0, plen, n;
	char esc[5];

	if (!len)
		return;
	for (p = (const unsigned char *)s; *p; p += n) {
		n = shown_piece(p, esc, &piece, &plen);
		want += plen;
	}
	for (p = (const unsigned char *)s; *p; p += n) {
		n = shown_piece(p, esc, &piece, &plen);
		if (want >= len && o + plen + SHOWN_TAIL >= len)
			break;
		if (o + plen >= len)
			break;
		memcpy(out + o, piece, plen);
		o += plen;
	}
	out[o] = '\0';
	if (*p && o + SHOWN_TAIL < len)
		snprintf(out + o, len - o, " ...[+%zu bytes]", strlen((const char *)p));
}
