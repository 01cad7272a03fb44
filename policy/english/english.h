/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The constitution language (issue #34, docs/constitution.md): English
 * sentences compiled deterministically to the JSON policy language of
 * policy/README.md.  No model, no randomness, no locale, no dependence on
 * hash-table order: the same text always yields byte-identical JSON, which
 * the ordinary JSON parser then validates.
 *
 * Threat closed: a compiler that guesses (a language model) can turn "do not
 * allow X" into "allow X".  This one reads a closed grammar; a sentence it
 * cannot read, or can read two ways, is an error with its position, never a
 * best effort.  What it cannot close: a person who writes the wrong sentence;
 * `cordon policy explain --english` and the generated scenarios show them
 * what their sentences mean.
 *
 * Uses jansson and base/ only; no global state; every function is reentrant.
 */
#ifndef CORDON_POLICY_ENGLISH_H
#define CORDON_POLICY_ENGLISH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Where and why a constitution failed to compile.  line/col are 1-based and
 * point at the first token the compiler could not place (col counts bytes).
 * suggestion is the nearest example sentence it can read ("" if none). */
struct en_error {
	char file[256];
	int line;
	int col;
	char message[256];
	char suggestion[256];
};

/* Format as "FILE:LINE:COL: error: MESSAGE\n  did you mean: \"...\"". */
int en_error_format(const struct en_error *err, char *out, size_t outlen);

/* Does this text look like a constitution rather than JSON?  True when the
 * first character that is neither blank nor inside a '#' comment line is
 * not '{' (nor '[' or '"', which start JSON that is no policy: the JSON
 * parser says so).  Empty text is not a constitution (the JSON parser reports it). */
bool en_is_constitution(const char *text, size_t len);

/* Compile a constitution to the JSON policy (a new reference in *out).
 * Every rule and credential carries "source": "FILE:LINE" and its sentence
 * as "description".  0, or -EINVAL with *err filled (nothing in *out).
 * Deterministic. */
int en_compile(const char *text, size_t len, const char *file, json_t **out,
	       struct en_error *err);

/* Compile one intent sentence (imperative: "push the branch feature-x to
 * origin", "let the agent read /srv/data for an hour") to allow rules (a new
 * json array in *rules) and a lifetime in seconds (*ttl_s; 0: the session).
 * 0, or -EINVAL with *err filled. */
int en_compile_intent(const char *text, const char *file, json_t **rules,
		      unsigned *ttl_s, struct en_error *err);

/* The compiled policy as JSON text for the policy loader, one rule a line,
 * so that the loader's positions map back to sentences: (*lines)[L - 1] is
 * the constitution's line of the text's line L (0: none). */
int en_loader_text(const json_t *policy, char **text, int **lines, size_t *n_lines);

/* Scenarios from sentences (the JSON of `cordon policy test`, without
 * "vars"): for each rule, the request it decides and, for an allow, the
 * nearest request it must not allow.  A new reference, or NULL. */
json_t *en_scenarios(const json_t *policy);

/* In a loader message, "line N" of the loader's text becomes the sentence's line. */
void en_map_lines(char *msg, size_t size, const int *lines, size_t n_lines);

/* Render a policy (its JSON form, as parsed or compiled) as sentences of the
 * language, one per line; compiling the result decides as the original.
 * A malloc'd string, or NULL on out of memory or a policy it cannot render
 * (errno set). */
char *en_render(const json_t *policy);

#endif
