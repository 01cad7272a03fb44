/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `cordon policy draft` (issue #34): one question to the model the human
 * configured, over HTTPS, in the provider's wire format.
 *
 * The model is outside the trusted path.  Its answer is only text: the
 * caller compiles it with en_compile (a closed grammar that accepts or
 * names the error) and shows the sentences, the rules and the scenarios to
 * the human, who alone decides to write them.  Nothing the model says is
 * executed, interpreted as an option or written without that consent.
 *
 * Reentrant; no global state.  Functions return 0 or a negative errno with
 * a one-line reason in err (never the key: see draft_model.c).
 */
#ifndef CORDON_DRAFT_MODEL_H
#define CORDON_DRAFT_MODEL_H

#include <stddef.h>

enum draft_provider { DRAFT_ANTHROPIC, DRAFT_OPENAI };

struct draft_model {
	enum draft_provider provider;
	const char *model;    /* the provider's model name */
	const char *endpoint; /* https://HOST[:PORT][/PREFIX], no trailing '/' needed */
	const char *key;      /* the API key, borrowed; never copied into a message */
};

/* Parse "PROVIDER/MODEL" (anthropic or openai) into m->provider and
 * m->model (pointing into spec).  -EINVAL with err filled. */
int draft_model_parse(const char *spec, struct draft_model *m, char *err, size_t errlen);

/* The provider's default endpoint and the environment variable of its key
 * (the same names the credential proxy reads for `cordon run`). */
const char *draft_default_endpoint(enum draft_provider p);
const char *draft_key_env(enum draft_provider p);

/* The instructions sent with every question: the language's documented
 * forms as examples, one sentence a line, nothing else. */
const char *draft_system_prompt(void);

/*
 * Ask: SYSTEM and USER as the conversation; *answer gets the model's text
 * (malloc'd).  TLS is verified against the system store (SSL_CERT_FILE
 * honoured) and the endpoint's host name.  Bounded: 4 MiB of answer,
 * 120 s without progress on the socket.  -EPROTO when the answer is no
 * answer of the provider's format, -EIO on a transport or HTTP error.
 */
int draft_ask(const struct draft_model *m, const char *system, const char *user,
	      char **answer, char *err, size_t errlen);

#endif /* CORDON_DRAFT_MODEL_H */
