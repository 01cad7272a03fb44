// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `cordon policy draft [--model PROVIDER/MODEL] [--endpoint URL] [-o FILE]
 * [--yes] WORDS...` (issue #34): a constitution drafted by the model the
 * human configured, from the human's own words.
 *
 * The model is outside the trusted path: it only writes text that the
 * deterministic compiler (en_compile) must accept and the human must read.
 * A sentence that does not compile is shown with its error and dropped
 * (after one more question to the model with the errors: a fixed bound);
 * what remains is shown as sentences, as the rules they compile to
 * (en_render, which says them back in the language's own words) and as the
 * scenarios they yield, and is written only when the human says yes at a
 * terminal, or passed --yes.  Attack: a model (or whoever answers in its
 * name) slips in an allow the human did not ask for.  It cannot reach the
 * policy without the human seeing it rendered and accepting it; what this
 * cannot close is a human who accepts without reading.
 *
 * The key: this process builds the question and parses the answer, so it
 * holds a sentinel only; the draft's own credential proxy (a `cordon
 * http-proxy`, draft/draft_proxy.c) holds the key, reaches the endpoint
 * and nothing else, and is stopped as soon as the model has answered.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cmd.h"
#include "draft_model.h"
#include "draft_proxy.h"
#include "draft_sort.h"
#include "english.h"
#include "util.h"

/* Questions to the model: the first, and one more with the compiler's errors. */
#define DRAFT_ASKS 2

/* The human's words: the arguments joined by blanks, or stdin (64 KiB at most). */
static char *read_words(int argc, char **argv)
{
	char *s = NULL;
	size_t n = 0;
	FILE *f;

	if (argc == 0) {
		int r = read_file("/dev/stdin", &s, 64 << 10);

		return r < 0 ? NULL : s;
	}
	f = open_memstream(&s, &n);
	if (!f)
		return NULL;
	for (int i = 0; i < argc; i++)
		fprintf(f, "%s%s", i ? " " : "", argv[i]);
	if (fclose(f)) {
		free(s);
		return NULL;
	}
	return s;
}

static void show(const struct draft *d, const json_t *policy)
{
	_cleanup_free_ char *rules = en_render(policy);
	json_t *scen = en_scenarios(policy);

	printf("# The sentences (the model's draft, each compiled):\n%s\n", d->kept);
	printf("# The rules they compile to, said back by the compiler:\n%s\n",
	       rules ?: "(cannot render)\n");
	printf("# The scenarios they yield (cordon policy test):\n");
	if (scen)
		json_dumpf(scen, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	printf("\n");
	json_decref(scen);
	fflush(stdout);
}

/* Write text to FILE, new only: an existing policy is never overwritten. */
static int write_new(const char *file, const char *text)
{
	_cleanup_close_ int fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

	if (fd < 0)
		return -errno;
	return write_all(fd, text, strlen(text));
}

static bool human_accepts(const char *file)
{
	char ans[16] = "";

	if (!isatty(STDIN_FILENO) || !isatty(STDERR_FILENO))
		return false;
	fprintf(stderr, "Write these sentences to %s? [y/N] ", file);
	if (!fgets(ans, sizeof(ans), stdin))
		return false;
	return ans[0] == 'y' || ans[0] == 'Y';
}

int cmd_policy_draft(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "model", required_argument, NULL, 'm' },
		{ "endpoint", required_argument, NULL, 'e' },
		{ "upstream-ca", required_argument, NULL, 'U' },
		{ "output", required_argument, NULL, 'o' },
		{ "yes", no_argument, NULL, 'y' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const char *spec = getenv("CORDON_DRAFT_MODEL") ?: "anthropic/claude-sonnet-4-5";
	const char *out = "constitution.en", *upstream_ca = NULL, *key;
	_cleanup_free_ char *words = NULL, *answer = NULL, *question = NULL, *ca_abs = NULL;
	struct draft d = {};
	struct draft_model m = {};
	struct draft_proxy px = {};
	struct en_error e;
	json_t *policy = NULL;
	char err[512];
	bool yes = false, from_stdin;
	int c, r = 2;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:", opts, NULL)) != -1) {
		switch (c) {
		case 'm': spec = optarg; break;
		case 'e': m.endpoint = optarg; break;
		case 'U': upstream_ca = optarg; break;
		case 'o': out = optarg; break;
		case 'y': yes = true; break;
		case 'h':
		default:
			fprintf(c == 'h' ? stdout : stderr,
				"usage: cordon policy draft [--model PROVIDER/MODEL] [--endpoint URL] "
				"[--upstream-ca FILE] [-o FILE] [--yes] WORDS... (or words on stdin)\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (draft_model_parse(spec, &m, err, sizeof(err)) < 0) {
		fprintf(stderr, "policy draft: %s\n", err);
		return 2;
	}
	if (!m.endpoint)
		m.endpoint = draft_default_endpoint(m.provider);
	if (draft_endpoint_check(m.endpoint, err, sizeof(err)) < 0) {
		fprintf(stderr, "policy draft: %s\n", err);
		return 2;
	}
	if (upstream_ca && !(ca_abs = realpath(upstream_ca, NULL))) {
		fprintf(stderr, "policy draft: --upstream-ca %s: %m\n", upstream_ca);
		return 2;
	}
	/* Looked at, never copied: the credential proxy reads it, and it is wiped here. */
	key = getenv(draft_key_env(m.provider));
	if (!key || !*key) {
		fprintf(stderr, "policy draft: %s is not set (the key of %s)\n",
			draft_key_env(m.provider), spec);
		return 2;
	}
	if (strpbrk(key, "\r\n")) {
		fprintf(stderr, "policy draft: %s holds a line break\n", draft_key_env(m.provider));
		return 2;
	}
	from_stdin = argc - optind == 0;
	words = read_words(argc - optind, argv + optind);
	if (!words || !words[strspn(words, " \t\r\n")]) {
		fprintf(stderr, "policy draft: no words: say what the agent may do, as arguments or on stdin\n");
		return 2;
	}
	r = 1;
	if (draft_proxy_start(&m, ca_abs, &px, err, sizeof(err)) < 0) {
		fprintf(stderr, "policy draft: %s\n", err);
		goto out;
	}
	m.via = &px.via;
	question = strdup(words);
	for (int ask = 0; ask < DRAFT_ASKS && question; ask++) {
		free(answer);
		answer = NULL;
		r = draft_ask(&m, draft_system_prompt(), question, &answer, err, sizeof(err));
		draft_proxy_drain(&px);
		if (r < 0) {
			fprintf(stderr, "policy draft: %s\n", err);
			r = 1;
			goto out;
		}
		r = 1;
		draft_free(&d);
		if (draft_sort(answer, &d) < 0)
			goto oom;
		if (!d.n_dropped)
			break;
		free(question);
		if (asprintf(&question,
			     "%s\n\nYour previous answer:\n%s\n\nThe compiler refused these lines:\n%s\n"
			     "Answer again with the whole policy, sentences of the language only.",
			     words, answer, d.dropped) < 0)
			question = NULL;
	}
	/* The model has answered: the key's holder goes now, not when the human has read. */
	draft_proxy_stop(&px);
	if (!question)
		goto oom;
	if (d.n_dropped)
		fprintf(stderr, "policy draft: dropped %u line%s of the model's answer that do not compile:\n%s",
			d.n_dropped, d.n_dropped == 1 ? "" : "s", d.dropped);
	if (!d.n_kept) {
		fprintf(stderr, "policy draft: the model's answer holds no sentence of the language; nothing written\n");
		goto out;
	}
	if (en_compile(d.kept, strlen(d.kept), out, &policy, &e) < 0) {
		en_error_format(&e, err, sizeof(err));
		fprintf(stderr, "policy draft: %s\n", err);
		goto out;
	}
	show(&d, policy);
	if (!yes && !(from_stdin ? false : human_accepts(out))) {
		fprintf(stderr, "policy draft: not accepted: nothing written (--yes writes %s)\n", out);
		goto out;
	}
	r = write_new(out, d.kept);
	if (r < 0) {
		fprintf(stderr, "policy draft: %s: cannot write: %s\n", out,
			r == -EEXIST ? "it exists (a policy is never overwritten; choose another -o)"
				     : strerror(-r));
		r = 1;
		goto out;
	}
	fprintf(stderr, "policy draft: wrote %s (%u sentence%s)\n", out, d.n_kept,
		d.n_kept == 1 ? "" : "s");
	r = 0;
	goto out;
oom:
	fprintf(stderr, "policy draft: out of memory\n");
out:
	draft_proxy_stop(&px);
	json_decref(policy);
	draft_free(&d);
	return r;
}
