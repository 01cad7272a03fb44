/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `cordon policy draft` (issue #34): one question to the model the human
 * configured, in the provider's wire format, through the draft's
 * credential proxy (draft_proxy.h), which holds the key.
 *
 * The model is outside the trusted path.  Its answer is only text: the
 * caller compiles it with en_compile (a closed grammar that accepts or
 * names the error) and shows the sentences, the rules and the scenarios to
 * the human, who alone decides to write them.  Nothing the model says is
 * executed, interpreted as an option or written without that consent.
 *
 * Reentrant; no global state.  Functions return 0 or a negative errno with
 * a one-line reason in err (this side never holds the key: a sentinel).
 */
#ifndef CORDON_DRAFT_MODEL_H
#define CORDON_DRAFT_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/x509.h>

enum draft_provider { DRAFT_ANTHROPIC, DRAFT_OPENAI };

/* Where a question goes: the credential proxy that holds the key (draft_proxy.h). */
struct draft_via {
	uint16_t port;          /* it serves 127.0.0.1:port */
	const char *host;       /* the provider's host, asked for through it */
	const char *sentinel;   /* stands for the key in the provider's header */
	X509 *ca;               /* its session CA: the one certificate trusted toward it */
};

struct draft_model {
	enum draft_provider provider;
	const char *model;    /* the provider's model name */
	const char *endpoint; /* https://HOST[:PORT][/PREFIX], no trailing '/' needed */
	const struct draft_via *via; /* set once the proxy serves */
};

/* Parse "PROVIDER/MODEL" (anthropic or openai) into m->provider and
 * m->model (pointing into spec).  -EINVAL with err filled. */
int draft_model_parse(const char *spec, struct draft_model *m, char *err, size_t errlen);

/* The provider's default endpoint, its host (the name asked for through
 * the proxy, whatever the endpoint) and the environment variable of its
 * key (the same names the credential proxy reads for `cordon run`). */
const char *draft_default_endpoint(enum draft_provider p);
const char *draft_provider_host(enum draft_provider p);
const char *draft_key_env(enum draft_provider p);

/* Is URL an endpoint: https://HOST[:PORT][/PATH]?  -EINVAL with err filled. */
int draft_endpoint_check(const char *url, char *err, size_t errlen);

/* The instructions sent with every question: the language's documented
 * forms as examples, one sentence a line, nothing else. */
const char *draft_system_prompt(void);

/*
 * Ask: SYSTEM and USER as the conversation; *answer gets the model's text
 * (malloc'd).  Through m->via: CONNECT to the provider's host, TLS
 * verified against the proxy's session CA only, the sentinel in the
 * provider's header; the proxy verifies the endpoint's TLS and swaps the
 * key in.  Bounded: 4 MiB of answer, 120 s without progress on the
 * socket.  -EPROTO when the answer is no answer of the provider's format,
 * -EIO on a transport or HTTP error (a refusal of the proxy included,
 * with its reason).
 */
int draft_ask(const struct draft_model *m, const char *system, const char *user,
	      char **answer, char *err, size_t errlen);

#endif /* CORDON_DRAFT_MODEL_H */
