/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Known secret values, and JSON with them replaced by "[REDACTED:NAME]":
 * the audit log redacts its records with it, the MCP proxy scrubs tool
 * results before they reach the agent.  Pure (no I/O); values are wiped
 * when freed.
 */
#ifndef CORDON_SCRUB_H
#define CORDON_SCRUB_H

#include <jansson.h>
#include <stddef.h>

struct scrub_secret {
	char *value;
	size_t len;
	char *tag;        /* "[REDACTED:name]" */
	size_t tag_len;
};

struct scrub {
	struct scrub_secret *v;   /* longest first */
	size_t n;
};

/* NAME: [A-Za-z0-9_.-]{1,64}; VALUE non-empty.  -EINVAL, -ENOMEM. */
int scrub_add(struct scrub *s, const char *name, const char *value);
void scrub_free(struct scrub *s);

/*
 * IN (N bytes) with every secret replaced by its tag: *out malloc'd and NUL
 * terminated, *hits incremented per replacement (hits may be NULL).
 * Secrets are tried longest first, so a secret containing another is
 * replaced whole.  Only verbatim occurrences are caught: base64, URL
 * encoding or a value split across two strings go through as they are.
 */
int scrub_bytes(const struct scrub *s, const char *in, size_t n, char **out, size_t *out_len,
		size_t *hits);
/*
 * Call fn(ctx, NAME, VALUE) for each variable of this process's environment
 * whose name says it holds a secret (KEY, TOKEN, SECRET, PASSWORD, PASSWD,
 * CREDENTIAL, AUTH) and whose value is long enough (8+) to redact without
 * mangling ordinary text.  The one rule: `cordon run`'s audit and the MCP
 * proxy's scrub use it.
 */
void scrub_env_secrets(void (*fn)(void *ctx, const char *name, const char *value), void *ctx);

/* A scrubbed deep copy of V (object keys too), or NULL (out of memory). */
json_t *scrub_json(const struct scrub *s, json_t *v, size_t *hits);

#endif /* CORDON_SCRUB_H */
