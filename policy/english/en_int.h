/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Private contract between the files of the constitution compiler: tokens,
 * sentences, the parser state and the tables.  Nothing outside
 * policy/english/ includes this.
 */
#ifndef CORDON_POLICY_EN_INT_H
#define CORDON_POLICY_EN_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include "english.h"

enum en_tok_kind {
	EN_WORD = 0,    /* letters, digits, ' and -; low holds its lower case */
	EN_NUM,         /* 4, 1.5, 200 */
	EN_STR,         /* "...": text without the quotes */
	EN_PATH,        /* /x, ~/x, ./x, ${VAR}/x: text already in policy form */
	EN_DOTTED,      /* a.b, *.a.b, 10.0.0.0/8, .env: a host, a tool or a file name */
	EN_VAR,         /* $NAME: text without the $ */
	EN_COMMA,
	EN_COLON,
};

struct en_tok {
	enum en_tok_kind kind;
	char *text;
	char *low;
	int line;
	int col;
};

struct en_sentence {
	struct en_tok *t;
	size_t n;
	size_t cap;
	int line;
	int col;
	char *text;     /* the sentence, blanks collapsed, with its '.' */
};

struct en_doc {
	struct en_sentence *s;
	size_t n;
	size_t cap;
};

/* Split text into sentences of tokens; -EINVAL with *err at the bad byte. */
int en_lex(const char *text, size_t len, const char *file, struct en_doc *doc,
	   struct en_error *err);
void en_doc_free(struct en_doc *doc);

/* What pass 1 learned, for pass 2: list names, the token price, credential hosts. */
struct en_list {
	char **words;   /* the name as lower-case words */
	size_t n_words;
	char *key;      /* the JSON list name (words joined by '_') */
	int kind;       /* 0: empty, 1: paths, 2: hosts or values */
};

struct en_ctx {
	const char *file;
	struct en_list *lists;
	size_t n_lists;
	double price;   /* dollars per million tokens, 0: none given */
	json_t *cred_hosts;     /* array of host strings */
};

/*
 * The result of reading one sentence: fragments to merge into the policy.
 * Exactly one reading wins; a sentence read two ways that compile to
 * different fragments is an error.
 */
struct en_frag {
	json_t *rules;          /* array of rule objects without name/source/description */
	json_t *lists;          /* object */
	json_t *creds;          /* array */
	json_t *budgets;        /* object */
	json_t *approvals;      /* object */
	json_t *meta;           /* object: name, description, price */
};

/* The parser over one sentence. */
struct en_p {
	const struct en_sentence *s;
	const struct en_ctx *ctx;
	size_t i;
	size_t far;             /* furthest token reached by a failed expectation */
	char expect[3][48];     /* what was expected there */
	int n_expect;
	int quiet;              /* > 0: a table's words; the caller names the class */
	/* A reading that parsed but means something the language refuses. */
	bool sem;
	size_t sem_at;
	char sem_msg[200];
};

/* Read sentence s as every form; 0 with *out filled, or -EINVAL with *err. */
int en_read_sentence(const struct en_ctx *ctx, const struct en_sentence *s,
		     struct en_frag *out, struct en_error *err);
/* Pass 1: a list definition or a price; 1 if it is one (ctx updated). */
int en_read_definition(struct en_ctx *ctx, const struct en_sentence *s);
void en_frag_free(struct en_frag *f);
int en_frag_init(struct en_frag *f);

/* The parser's primitives (en_parse.c), used by the forms (en_forms.c). */
bool en_eof(const struct en_p *p);
const struct en_tok *en_peek(const struct en_p *p, size_t ahead);
void en_fail(struct en_p *p, const char *what);
bool en_word(struct en_p *p, const char *w);
bool en_words(struct en_p *p, const char *ws);
bool en_kind(struct en_p *p, enum en_tok_kind k, const char *what, const struct en_tok **out);
void en_semantic(struct en_p *p, size_t at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
bool en_list_sep(struct en_p *p, bool *last);
/* Merge what a failed attempt p expected into best (the furthest position wins). */
void en_keep_furthest(struct en_p *best, const struct en_p *p);

/* Forms (en_forms.c, en_tools.c, en_other.c): each reads the whole sentence or fails. */
typedef bool (*en_form_fn)(struct en_p *p, struct en_frag *f);
extern const en_form_fn en_forms[];
extern const size_t en_n_forms;
bool en_action(struct en_p *p, struct en_frag *f, const char *decision, bool gerund);
bool en_tool_np(struct en_p *p, struct en_frag *f, const char *decision);
bool en_tool_action(struct en_p *p, struct en_frag *f, const char *decision, bool gerund);
/* A reference to a list defined in pass 1 (longest match), or NULL. */
const struct en_list *en_list_ref(struct en_p *p, bool paths);
bool en_form_list(struct en_p *p, struct en_frag *f);
bool en_form_budget(struct en_p *p, struct en_frag *f);
bool en_form_limits(struct en_p *p, struct en_frag *f);
bool en_form_price(struct en_p *p, struct en_frag *f);
bool en_form_wait(struct en_p *p, struct en_frag *f);
bool en_form_meta(struct en_p *p, struct en_frag *f);
bool en_form_cred(struct en_p *p, struct en_frag *f);

/* Tables (en_tables.c). */
struct en_named_set {
	const char *words;      /* "my ssh keys" */
	const char *paths[10];
};
extern const struct en_named_set en_named_sets[];
struct en_known_cred {
	const char *word;       /* "anthropic" */
	const char *json;       /* the credential, as the coding-agent profile has it */
};
extern const struct en_known_cred en_known_creds[];
extern const char *const en_examples[];

/* The nearest example sentence to these tokens (token edit distance). */
const char *en_nearest_example(const struct en_sentence *s);

#endif
