/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The credential proxy's state: the session CA, leaf certificates minted
 * for credential hosts, the real secrets and the sentinels that stand for
 * them inside the sandbox, and the TLS contexts facing the agent and the
 * upstream.  The HTTP side (what is read, judged and relayed) is the egress
 * broker's (cred_pipeline.c); this module holds what must never leak.
 */
#ifndef CORDON_CRED_PROXY_H
#define CORDON_CRED_PROXY_H

#include <openssl/ssl.h>
#include <stdbool.h>
#include <stddef.h>

#include "http.h"
#include "policy.h"

/* "cordon-sentinel-" and 192 random bits in base64url (32 characters). */
#define CRED_SENTINEL_PREFIX "cordon-sentinel-"
#define CRED_SENTINEL_LEN (sizeof(CRED_SENTINEL_PREFIX) - 1 + 32)

struct creds;

/*
 * Read every credential's secret from its source (the environment of this
 * process, or a file), make a sentinel for each, and the session CA
 * (constrained to the credential hosts).  A credential whose source is
 * empty or missing stays without secret (requests for it get a 403 saying
 * so).  upstream_ca: trust this file instead of the system store (tests).
 * Errors are logged with the `who` prefix.
 */
int creds_init(struct creds **out, const struct policy *pol, const char *upstream_ca,
	       const char *who);
void creds_free(struct creds *c);
/*
 * Wipe every credential's environment source from this process's
 * environment, in place: for `cordon run`, once its broker (which took its
 * own copy) is up, so that the supervisor does not hold the real secrets
 * for the rest of the session (its /proc/PID/environ, a core dump).
 */
void creds_wipe_sources(const struct policy *pol);
/*
 * The same for one variable NAME of this process's environment, wherever
 * it comes from: `cordon policy draft` wipes the model's key once its
 * credential proxy (which took its own copy at exec) is started.
 */
void creds_wipe_env(const char *name);

/* How many credentials have a secret. */
size_t creds_available(const struct creds *c);
/* The i-th credential of the policy; NULL sentinel if it has no secret. */
const struct pol_credential *creds_at(const struct creds *c, size_t i, const char **sentinel);
size_t creds_count(const struct creds *c);

/* The credential serving this host, or -1. */
int creds_for_host(const struct creds *c, const char *host);

/* The trust bundle for the sandbox: the system CAs and the session CA (PEM). */
int creds_write_bundle(const struct creds *c, int fd);

/*
 * TLS toward the agent: a leaf for `host` (minted once, then cached), the
 * ClientHello bytes already read handed in first.  NULL with `why` set.
 */
SSL *creds_accept(struct creds *c, const char *host, int fd, const char *hello, size_t hello_len,
		  char *why, size_t wlen);
/*
 * TLS toward credential i's upstream, verified for `host`, or for the
 * credential's gateway (its name or address, with its own CA when it names
 * one).  NULL with `why` set.
 */
SSL *creds_connect(struct creds *c, size_t i, const char *host, int fd, char *why, size_t wlen);

/*
 * Is this request, on a tunnel to credential i's `host`:`port`, one to
 * forward?  Checks the endpoint allowlist ("METHOD /path", '*' at the end:
 * any rest, '*' elsewhere: one name without '/' or ':') on a path without dot segments or encoded separators, that the
 * Host names the tunnel's host and port, that no field asks the upstream
 * to take another method, path or host, and that the credential header
 * holds exactly this session's sentinel, and that no sentinel rides in the
 * query (Google's "?key="): one is swapped only in its header.  0, or -403
 * with `why`.
 */
int creds_check(const struct creds *c, size_t i, const struct http_request *req, const char *host,
		uint16_t port, char *why, size_t wlen);

/*
 * The head to send upstream into out (cap bytes): the request with the
 * sentinel replaced by the real secret, hop-by-hop fields, Expect and
 * Accept-Encoding dropped (identity asked for, so responses can be
 * scrubbed), framing re-stated; toward a gateway, its path prefix before
 * the path and its name in Host.  Returns the length, or -E2BIG.
 */
int creds_upstream_head(const struct creds *c, size_t i, const struct http_request *req,
			char *out, size_t cap);

/* The secrets, for the response scrubber: count and i-th (bytes, length). */
size_t creds_n_secrets(const struct creds *c);
const char *creds_secret(const struct creds *c, size_t i, size_t *len);

#endif
