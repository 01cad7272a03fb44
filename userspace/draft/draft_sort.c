// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The model's answer sorted by the compiler (draft_sort.h).  No I/O.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <sys/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "draft_sort.h"
#include "english.h"
#include "util.h"

void draft_free(struct draft *d)
{
	free(d->kept);
	free(d->dropped);
	*d = (struct draft){};
}

static int append(char **s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int append(char **s, const char *fmt, ...)
{
	char *add, *n;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&add, fmt, ap);
	va_end(ap);
	if (r < 0)
		return -ENOMEM;
	r = asprintf(&n, "%s%s", *s ?: "", add);
	free(add);
	if (r < 0)
		return -ENOMEM;
	free(*s);
	*s = n;
	return 0;
}

/*
 * The first byte of s that could change what a terminal shows (C0 and C1
 * controls, DEL, bidirectional overrides and isolates, zero-width and
 * direction marks), or -1.  Attack: an answer that moves the cursor or
 * reorders the text hides a sentence from the human who must read it
 * ("Trojan Source"); a line holding one is dropped, whatever it says.
 */
int draft_unsafe_char(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if ((*p < 0x20 && *p != '\t') || *p == 0x7f)
			return (int)(p - (const unsigned char *)s);
		if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
			return (int)(p - (const unsigned char *)s);
		if (p[0] == 0xe2 && p[1] == 0x80 && p[2] &&
		    ((p[2] >= 0x8b && p[2] <= 0x8f) || (p[2] >= 0xaa && p[2] <= 0xae)))
			return (int)(p - (const unsigned char *)s);
		if (p[0] == 0xe2 && p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9)
			return (int)(p - (const unsigned char *)s);
	}
	return -1;
}

/* A dropped line as it may be shown: every byte outside printable ASCII as \xNN. */
static char *escaped(const char *s)
{
	char *out = malloc(strlen(s) * 4 + 1), *w = out;

	if (!out)
		return NULL;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		w += *p >= 0x20 && *p < 0x7f ? sprintf(w, "%c", *p) : sprintf(w, "\\x%02x", *p);
	*w = 0;
	return out;
}

/* A line of the answer and what the compiler said of it. */
struct line {
	char *text; /* trimmed, inside the answer's copy */
	unsigned no;
	bool ok, unsafe;
	struct en_error e;
};

/* The kept lines in the answer's order, with line k added (k < 0: none). */
static char *joined(const struct line *l, size_t n, ssize_t k)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	if (!f)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (l[i].ok || (ssize_t)i == k)
			fprintf(f, "%s\n", l[i].text);
	if (fclose(f)) {
		free(out);
		return NULL;
	}
	return out;
}

/*
 * Sort the model's answer into sentences that compile and lines that do
 * not.  Each line is compiled with the lines kept so far, in the answer's
 * order; passes repeat while one more line is kept (at most one pass a
 * line), so a sentence that uses a list defined further down is kept too.
 * Markdown fences and blank lines are skipped, nothing else is repaired:
 * the compiler is the judge.  Deterministic: the same answer, the same sort.
 */
int draft_sort(const char *answer, struct draft *d)
{
	_cleanup_free_ char *copy = strdup(answer);
	_cleanup_free_ struct line *l = NULL;
	size_t n = 0, cap = 0;
	unsigned lineno = 0;
	bool more = true;

	if (!copy)
		return -ENOMEM;
	*d = (struct draft){};
	for (char *p = copy, *nl; p; p = nl) {
		char *line;
		size_t len;

		nl = strchr(p, '\n');
		if (nl)
			*nl++ = 0;
		lineno++;
		line = p + strspn(p, " \t\r");
		len = strlen(line);
		while (len && strchr(" \t\r", line[len - 1]))
			line[--len] = 0;
		if (!len || !strncmp(line, "```", 3))
			continue;
		if (n == cap) {
			struct line *nl2 = reallocarray(l, cap = cap ? cap * 2 : 32, sizeof(*l));

			if (!nl2)
				return -ENOMEM;
			l = nl2;
		}
		l[n++] = (struct line){ .text = line, .no = lineno };
	}
	for (size_t i = 0; i < n; i++) {
		int bad = draft_unsafe_char(l[i].text);

		if (bad >= 0) {
			l[i].unsafe = true;
			l[i].e.col = bad + 1;
			snprintf(l[i].e.message, sizeof(l[i].e.message),
				 "a control or bidirectional character: a terminal would not show the line as it is");
		}
	}
	while (more) {
		more = false;
		for (size_t i = 0; i < n; i++) {
			_cleanup_free_ char *cand = NULL;
			json_t *j;

			if (l[i].ok || l[i].unsafe)
				continue;
			cand = joined(l, n, (ssize_t)i);
			if (!cand)
				return -ENOMEM;
			if (en_compile(cand, strlen(cand), "draft", &j, &l[i].e) == 0) {
				json_decref(j);
				l[i].ok = more = true;
			}
		}
	}
	d->kept = joined(l, n, -1);
	if (!d->kept)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *shown = NULL;
		const struct en_error *e = &l[i].e;

		if (l[i].ok) {
			if (l[i].text[0] != '#')
				d->n_kept++;
			continue;
		}
		d->n_dropped++;
		shown = escaped(l[i].text);
		if (!shown || append(&d->dropped, "  line %u: %s\n    error (column %d): %s%s%s%s\n",
				     l[i].no, shown, e->col, e->message,
				     e->suggestion[0] ? "\n    did you mean: \"" : "", e->suggestion,
				     e->suggestion[0] ? "\"" : "") < 0)
			return -ENOMEM;
	}
	if (!*d->kept) {
		free(d->kept);
		d->kept = NULL;
	}
	return 0;
}
