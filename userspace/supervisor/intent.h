/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Intents: what a human stated, while a session runs, that it wants done
 * ("push the branch feature-x to origin"), compiled by en_compile_intent
 * into allow rules scoped to that one session, with a lifetime (intent.c).
 * An intent is an approver, nothing more: the loop asks it only about a
 * request the session's policy escalated, so a deny or an invariant of the
 * policy is never reached by it (escalate-only by construction).  "Approve
 * for this session" is an intent of exactly one request (its key).
 * Main loop only; not thread-safe.
 */
#ifndef CORDON_INTENT_H
#define CORDON_INTENT_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <jansson.h>

struct policy;
struct pol_vars;

struct intent {
	unsigned id;
	char sentence[512];             /* as stated (printable), or the request's summary */
	char approver[128];             /* who stated it: "socket: uid U (pid P)", "tty: uid U" */
	int64_t stated_at;              /* wall clock, seconds */
	uint64_t expires_ms;            /* CLOCK_MONOTONIC; 0: with the session */
	bool revoked;
	struct policy *pol;             /* the compiled rules, or NULL for a key intent */
	json_t *rules;                  /* the same as JSON: the argument keys they name */
	char key[65];                   /* "approve for this session": that request's key */
};

struct intents {
	struct intent **v;
	size_t n;
	unsigned next_id;
};

/*
 * State an intent: compile SENTENCE (a lifetime in it, or FOR_S seconds
 * when not 0, else the session's), load it as a policy of its own with
 * VARS.  The new intent's id, or -EINVAL with the compiler's or loader's
 * message in ERR, or -ENOMEM.
 */
int intent_state(struct intents *in, const char *sentence, unsigned for_s, const char *approver,
		 const struct pol_vars *vars, uint64_t now_ms, char *err, size_t elen);
/* "Approve for this session" of the request keyed KEY (its SUMMARY shown): its id, or -ENOMEM. */
int intent_state_key(struct intents *in, const char *key, const char *summary,
		     const char *approver, uint64_t now_ms);
/*
 * The live intent that allows EVENT (a semantic event, pol_event), or one
 * whose key is KEY (may be NULL), else NULL.  An exec's event with several
 * lifted operations ("more") is covered only when every one is.  LIFTED:
 * the event was lifted from a command line (an exec), and is judged as
 * the policy judges those: an argument the intent's rules do not name is
 * not asked about, except a flag set to true (--force, --tags, ...),
 * which the sentence did not speak of and so does not cover.  Not LIFTED
 * (a tool call): every argument must be one the rules name.
 */
const struct intent *intent_covers(const struct intents *in, json_t *event, const char *key,
				   bool lifted, uint64_t now_ms);
/* Revoke intent ID: 0, or -ENOENT (none such, or no longer live). */
int intent_revoke(struct intents *in, unsigned id, uint64_t now_ms);
/* The live intents, for `cordon pending` and `cordon intent --list`. */
json_t *intent_list_json(const struct intents *in, uint64_t now_ms);
/* "intent N: SENTENCE (stated by WHO)": the approver a covered request is recorded with. */
void intent_approver(const struct intent *it, char *out, size_t len);
void intents_free(struct intents *in);

#endif
