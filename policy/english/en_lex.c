// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The constitution's lexer: text -> sentences of tokens with positions.
 *
 * A sentence ends at a '.' followed by a blank or the end of the text, so a
 * '.' inside a host name, path, version or quoted string never ends one.
 * A line whose first non-blank character is '#' is a comment.  Words keep
 * their text (paths and hosts are case-sensitive) and a lower-case copy
 * (words are not).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "en_int.h"

struct lexer {
	const char *t;
	size_t len;
	size_t i;
	int line;
	int col;
	bool line_start;        /* only blanks so far on this line */
};

static void set_err(struct en_error *err, const char *file, int line, int col, const char *msg)
{
	memset(err, 0, sizeof(*err));
	snprintf(err->file, sizeof(err->file), "%s", file);
	err->line = line;
	err->col = col;
	snprintf(err->message, sizeof(err->message), "%s", msg);
}

static void adv(struct lexer *lx)
{
	if (lx->t[lx->i] == '\n') {
		lx->line++;
		lx->col = 1;
		lx->line_start = true;
	} else {
		lx->col++;
		if (!isspace((unsigned char)lx->t[lx->i]))
			lx->line_start = false;
	}
	lx->i++;
}

static bool ends_sentence(const struct lexer *lx, size_t at)
{
	return lx->t[at] == '.' && (at + 1 >= lx->len || isspace((unsigned char)lx->t[at + 1]));
}

static int push_tok(struct en_sentence *s, enum en_tok_kind k, const char *text, size_t n,
		    int line, int col)
{
	struct en_tok *t;

	/* Doubling: a sentence of a million tokens must not cost a million copies. */
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;

		t = reallocarray(s->t, cap, sizeof(*t));
		if (!t)
			return -ENOMEM;
		s->t = t;
		s->cap = cap;
	}
	t = &s->t[s->n];
	t->kind = k;
	t->text = strndup(text, n);
	t->low = strndup(text, n);
	if (!t->text || !t->low) {
		free(t->text);
		free(t->low);
		return -ENOMEM;
	}
	for (char *c = t->low; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	t->line = line;
	t->col = col;
	s->n++;
	return 0;
}

static bool all_num(const char *c, size_t n)
{
	int dots = 0;

	if (!n || !isdigit((unsigned char)c[0]) || !isdigit((unsigned char)c[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++) {
		if (c[i] == '.')
			dots++;
		else if (!isdigit((unsigned char)c[i]))
			return false;
	}
	return dots <= 1 && !(dots == 1 && n > 1 && memchr(c, '.', n) == c + n - 1);
}

static enum en_tok_kind classify(const char *c, size_t n)
{
	if (c[0] == '/' || (n > 1 && c[0] == '~' && c[1] == '/') || (n > 1 && c[0] == '.' && c[1] == '/') ||
	    (n > 1 && c[0] == '$' && c[1] == '{'))
		return EN_PATH;
	if (c[0] == '$')
		return EN_VAR;
	if (all_num(c, n))
		return EN_NUM;
	if (memchr(c, '.', n) || memchr(c, ':', n) || memchr(c, '/', n) || c[0] == '*')
		return EN_DOTTED;
	return EN_WORD;
}

/* A path's policy form: ~/x -> ${HOME}/x, ./x -> ${WORKSPACE}/x, "~" alone -> ${HOME}. */
static int push_chunk(struct en_sentence *s, const char *c, size_t n, int line, int col)
{
	enum en_tok_kind k = classify(c, n);
	char buf[4096];

	if (k == EN_PATH && c[0] == '~') {
		snprintf(buf, sizeof(buf), "${HOME}%.*s", (int)n - 1, c + 1);
		return push_tok(s, k, buf, strlen(buf), line, col);
	}
	if (k == EN_PATH && c[0] == '.') {
		snprintf(buf, sizeof(buf), "${WORKSPACE}%.*s", (int)n - 1, c + 1);
		return push_tok(s, k, buf, strlen(buf), line, col);
	}
	if (k == EN_VAR)
		return push_tok(s, k, c + 1, n - 1, line, col);
	return push_tok(s, k, c, n, line, col);
}

static int end_sentence(struct en_doc *doc, struct en_sentence *cur, const char *text,
			size_t from, size_t to)
{
	struct en_sentence *s;
	char *d;
	size_t o = 0;

	if (doc->n == doc->cap) {
		size_t cap = doc->cap ? doc->cap * 2 : 64;

		s = reallocarray(doc->s, cap, sizeof(*s));
		if (!s)
			return -ENOMEM;
		doc->s = s;
		doc->cap = cap;
	}
	d = malloc(to - from + 2);
	if (!d)
		return -ENOMEM;
	/* The sentence as written, blanks collapsed, comment lines dropped. */
	for (size_t i = from; i < to; i++) {
		if (text[i] == '#' && (i == from || text[i - 1] == '\n')) {
			while (i < to && text[i] != '\n')
				i++;
			continue;
		}
		if (isspace((unsigned char)text[i])) {
			if (o && d[o - 1] != ' ')
				d[o++] = ' ';
			continue;
		}
		d[o++] = text[i];
	}
	while (o && d[o - 1] == ' ')
		o--;
	d[o] = 0;
	cur->text = d;
	doc->s[doc->n++] = *cur;
	memset(cur, 0, sizeof(*cur));
	return 0;
}

static int lex_string(struct lexer *lx, struct en_sentence *cur, const char *file,
		      struct en_error *err)
{
	int line = lx->line, col = lx->col;
	size_t start;

	adv(lx);
	start = lx->i;
	while (lx->i < lx->len && lx->t[lx->i] != '"' && lx->t[lx->i] != '\n')
		adv(lx);
	if (lx->i >= lx->len || lx->t[lx->i] != '"') {
		set_err(err, file, line, col, "a quoted string does not end on its line");
		return -EINVAL;
	}
	if (push_tok(cur, EN_STR, lx->t + start, lx->i - start, line, col) < 0)
		return -ENOMEM;
	adv(lx);
	return 0;
}

/* A chunk: a run of anything but blanks, ',' and '"'; a final '.' or ':' is split off. */
static int lex_chunk(struct lexer *lx, struct en_sentence *cur, bool *end)
{
	int line = lx->line, col = lx->col;
	size_t start = lx->i, n;
	bool colon = false;

	while (lx->i < lx->len && !isspace((unsigned char)lx->t[lx->i]) && lx->t[lx->i] != ',' &&
	       lx->t[lx->i] != '"' && !ends_sentence(lx, lx->i))
		adv(lx);
	n = lx->i - start;
	if (n > 1 && lx->t[start + n - 1] == ':' && lx->t[start] != '/') {
		n--;
		colon = true;
	}
	if (n && push_chunk(cur, lx->t + start, n, line, col) < 0)
		return -ENOMEM;
	if (colon && push_tok(cur, EN_COLON, ":", 1, line, col + (int)n) < 0)
		return -ENOMEM;
	if (lx->i < lx->len && ends_sentence(lx, lx->i)) {
		adv(lx);
		*end = true;
	}
	return 0;
}

/*
 * The whole text must be UTF-8 without NUL: jansson refuses other strings,
 * and a sentence whose rule could not be built must be an error, never a
 * rule silently missing (a missing deny would allow).  0, or the byte
 * offset + 1 of the first bad byte.
 */
static size_t bad_utf8(const unsigned char *t, size_t len)
{
	for (size_t i = 0; i < len;) {
		unsigned char c = t[i];
		size_t n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 :
			   (c & 0xf8) == 0xf0 ? 4 : 0;
		unsigned cp;

		if (!n || c == 0 || i + n > len || (n == 2 && c < 0xc2))
			return i + 1;
		cp = n == 1 ? c : c & (0x7f >> n);
		for (size_t k = 1; k < n; k++) {
			if ((t[i + k] & 0xc0) != 0x80)
				return i + 1;
			cp = cp << 6 | (t[i + k] & 0x3f);
		}
		if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return i + 1;
		i += n;
	}
	return 0;
}

/*
 * What the compiler reads must be what a reader sees.  Refused, with the
 * offset + 1 of the character (0: none) and a message:
 * - outside comment lines, anything but ASCII: a Cyrillic 'е' or a
 *   zero-width space inside a path makes a deny name a file that never
 *   exists while the text looks right (~/.ssh stays readable), and no list
 *   of look-alikes is complete, so a name with other characters needs the
 *   JSON policy;
 * - anywhere, comments included: control characters other than tab, LF and
 *   CR LF (a bare CR, a form feed or an escape sequence shows text over
 *   other text), and the invisible and line-breaking characters (U+0085,
 *   U+00A0, U+00AD, U+2000-U+200F, U+2028-U+202F, U+205F-U+206F, U+FEFF):
 *   a line separator in a comment shows the rest of the line as a sentence
 *   the compiler drops with the comment, a bidi override reorders it.
 * Text inside a comment may otherwise be any UTF-8.  Not closed: an
 * all-ASCII name that reads like another ("rn" for "m"), which is the
 * reader's to check.
 */
static size_t unseen_char(const unsigned char *t, size_t len, char *msg, size_t msglen)
{
	bool line_start = true, comment = false;

	for (size_t i = 0; i < len;) {
		unsigned char c = t[i];
		size_t n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : 4;
		unsigned cp = n == 1 ? c : c & (0x7f >> n);

		for (size_t k = 1; k < n; k++)
			cp = cp << 6 | (t[i + k] & 0x3f);
		if (cp == '\n') {
			line_start = true;
			comment = false;
		} else if (cp == '#' && line_start) {
			comment = true;
		} else if (cp != ' ' && cp != '\t' && !(cp == '\r' && i + 1 < len && t[i + 1] == '\n')) {
			line_start = false;
		}
		if ((cp < 0x20 && cp != '\n' && cp != '\t' &&
		     !(cp == '\r' && i + 1 < len && t[i + 1] == '\n')) || cp == 0x7f) {
			snprintf(msg, msglen, "a control character (0x%02x): it can show text over "
				 "other text; only tab and line ends (LF, CR LF) are blanks", cp);
			return i + 1;
		}
		if (cp == 0x85 || cp == 0xa0 || cp == 0xad || (cp >= 0x2000 && cp <= 0x200f) ||
		    (cp >= 0x2028 && cp <= 0x202f) || (cp >= 0x205f && cp <= 0x206f) ||
		    cp == 0xfeff) {
			snprintf(msg, msglen, "an invisible or line-breaking character (U+%04X): "
				 "what is shown would not be what is compiled", cp);
			return i + 1;
		}
		if (cp >= 0x80 && !comment) {
			snprintf(msg, msglen, "a non-ASCII character (U+%04X) outside a comment: a "
				 "look-alike letter would make a name mean another; a path with "
				 "such a name needs the JSON policy", cp);
			return i + 1;
		}
		i += n;
	}
	return 0;
}

int en_lex(const char *text, size_t len, const char *file, struct en_doc *doc,
	   struct en_error *err)
{
	struct lexer lx = { .t = text, .len = len, .line = 1, .col = 1, .line_start = true };
	struct en_sentence cur = {};
	size_t from = 0;
	char msg[200];
	int r = 0;

	memset(doc, 0, sizeof(*doc));
	{
		size_t bad = bad_utf8((const unsigned char *)text, len);

		if (bad) {
			while (lx.i < bad - 1)
				adv(&lx);
			set_err(err, file, lx.line, lx.col, text[bad - 1] ? "not UTF-8" :
				"NUL byte in the text");
			return -EINVAL;
		}
		bad = unseen_char((const unsigned char *)text, len, msg, sizeof(msg));
		if (bad) {
			while (lx.i < bad - 1)
				adv(&lx);
			set_err(err, file, lx.line, lx.col, msg);
			return -EINVAL;
		}
	}
	while (lx.i < len) {
		char c = text[lx.i];
		bool end = false;

		if (c == 0) {
			set_err(err, file, lx.line, lx.col, "NUL byte in the text");
			r = -EINVAL;
			break;
		}
		if (isspace((unsigned char)c)) {
			adv(&lx);
			continue;
		}
		if (c == '#' && lx.line_start) {
			while (lx.i < len && text[lx.i] != '\n')
				adv(&lx);
			continue;
		}
		if (!cur.n) {
			cur.line = lx.line;
			cur.col = lx.col;
			from = lx.i;
		}
		if (c == '"') {
			r = lex_string(&lx, &cur, file, err);
		} else if (c == ',') {
			r = push_tok(&cur, EN_COMMA, ",", 1, lx.line, lx.col);
			adv(&lx);
		} else if (ends_sentence(&lx, lx.i)) {
			adv(&lx);
			end = true;
		} else {
			r = lex_chunk(&lx, &cur, &end);
		}
		if (r < 0)
			break;
		if (end && !cur.n) {
			set_err(err, file, lx.line, lx.col - 1, "a '.' with no sentence before it");
			r = -EINVAL;
			break;
		}
		if (end && (r = end_sentence(doc, &cur, text, from, lx.i)) < 0)
			break;
	}
	if (!r && cur.n) {
		const struct en_tok *last = &cur.t[cur.n - 1];

		set_err(err, file, last->line, last->col + (int)strlen(last->text),
			"the sentence does not end with '.'");
		r = -EINVAL;
	}
	if (r < 0) {
		for (size_t i = 0; i < cur.n; i++) {
			free(cur.t[i].text);
			free(cur.t[i].low);
		}
		free(cur.t);
		en_doc_free(doc);
		if (r == -ENOMEM)
			set_err(err, file, 1, 1, "out of memory");
	}
	return r;
}

void en_doc_free(struct en_doc *doc)
{
	for (size_t i = 0; i < doc->n; i++) {
		for (size_t j = 0; j < doc->s[i].n; j++) {
			free(doc->s[i].t[j].text);
			free(doc->s[i].t[j].low);
		}
		free(doc->s[i].t);
		free(doc->s[i].text);
	}
	free(doc->s);
	memset(doc, 0, sizeof(*doc));
}
