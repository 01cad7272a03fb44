// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: policy/jsonpos.c, the position scanner every policy
 * diagnostic relies on, alone.
 *
 * Memory safety is for the sanitizers.  Correctness is checked against
 * jansson, which parses the same text for the policy loader:
 *  - text jansson accepts, jpos_scan accepts too (unless nested deeper than
 *    JPOS_MAX_DEPTH): otherwise the loader refuses a policy jansson read
 *    and has no position to tell the user why;
 *  - every value of jansson's tree has a position under its JSON Pointer,
 *    and the character there starts a value of that type (a member's key
 *    position holds the '"' of its name), so a diagnostic points at what
 *    it names.
 * The input is also used whole as a pointer, to fuzz the pointer parser.
 */
#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "jsonpos.h"

/* Positions checked per input, so a big array does not make a run quadratic. */
#define MAX_CHECKS 2000

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct walk {
	const struct jpos_map *m;
	const unsigned char *text;
	size_t len;
	size_t *line_start;     /* byte offset of each line, 1-based */
	size_t n_lines;
	char *ptr;              /* the pointer being built */
	size_t ptr_size;
	int checks;
};

static void fail(const struct walk *w, const char *what, int line, int col)
{
	fprintf(stderr, "jsonpos_fuzz: %s at \"%s\" (line %d, col %d)\n", what, w->ptr, line, col);
	__builtin_trap();
}

/*
 * The byte at (line, col), counting columns the way jsonpos documents:
 * code points, i.e. every byte but UTF-8 continuation bytes.  -1 if the
 * position is outside the text.
 */
static int byte_at_pos(const struct walk *w, int line, int col)
{
	int c = 1;

	if (line < 1 || (size_t)line > w->n_lines || col < 1)
		return -1;
	for (size_t i = w->line_start[line]; i < w->len; i++) {
		if ((w->text[i] & 0xc0) == 0x80)
			continue;
		if (c == col)
			return w->text[i];
		if (w->text[i] == '\n')
			return -1;
		c++;
	}
	return -1;
}

static bool starts(const json_t *v, int ch)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return ch == '{';
	case JSON_ARRAY:
		return ch == '[';
	case JSON_STRING:
		return ch == '"';
	case JSON_INTEGER:
	case JSON_REAL:
		return ch == '-' || (ch >= '0' && ch <= '9');
	case JSON_TRUE:
		return ch == 't';
	case JSON_FALSE:
		return ch == 'f';
	case JSON_NULL:
		return ch == 'n';
	}
	return false;
}

/* Check v at w->ptr; `member`: v is an object member, so its key has a '"'. */
static void check(struct walk *w, const json_t *v, bool member)
{
	int line = 0, col = 0, r;

	if (w->checks++ >= MAX_CHECKS)
		return;
	r = jpos_get(w->m, w->ptr, false, &line, &col);
	if (r < 0)
		fail(w, "no position for a value jansson found", r, 0);
	if (!starts(v, byte_at_pos(w, line, col)))
		fail(w, "the value's position holds another character", line, col);
	r = jpos_get(w->m, w->ptr, true, &line, &col);
	if (r < 0)
		fail(w, "no key position for a value jansson found", r, 0);
	if (member ? byte_at_pos(w, line, col) != '"' : !starts(v, byte_at_pos(w, line, col)))
		fail(w, "the key position holds another character", line, col);
}

static void walk(struct walk *w, const json_t *v, bool member)
{
	size_t cut = strlen(w->ptr), i;
	const char *k;
	json_t *e;

	check(w, v, member);
	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, k, e) {
			if (jpos_push(w->ptr, w->ptr_size, k) < 0)
				fail(w, "pointer buffer too small", 0, 0);
			walk(w, e, true);
			w->ptr[cut] = 0;
		}
	} else if (json_is_array(v)) {
		json_array_foreach((json_t *)v, i, e) {
			if (jpos_push_index(w->ptr, w->ptr_size, i) < 0)
				fail(w, "pointer buffer too small", 0, 0);
			walk(w, e, false);
			w->ptr[cut] = 0;
		}
	}
}

/* Lines by byte offset; NULL when out of memory. */
static size_t *line_starts(const unsigned char *text, size_t len, size_t *n)
{
	size_t lines = 1, *ls;

	for (size_t i = 0; i < len; i++)
		lines += text[i] == '\n';
	ls = calloc(lines + 1, sizeof(*ls));
	if (!ls)
		return NULL;
	*n = 1;
	for (size_t i = 0; i < len; i++)
		if (text[i] == '\n')
			ls[++*n] = i + 1;
	return ls;
}

static void pointer_probes(const struct jpos_map *m, const uint8_t *data, size_t size)
{
	static const char *const fixed[] = { "", "/", "~", "/~", "/~2", "/a~", "/~0~1", "x",
					     "/0", "/0/0", "//", "/-", "/rules/0/fs/paths/0",
					     NULL };
	char *whole = malloc(size + 1);
	int line, col;

	for (int i = 0; fixed[i]; i++) {
		(void)jpos_get(m, fixed[i], false, &line, &col);
		(void)jpos_get(m, fixed[i], true, NULL, NULL);
	}
	if (!whole)
		return;
	memcpy(whole, data, size);
	whole[size] = 0;
	(void)jpos_get(m, whole, false, &line, &col);
	(void)jpos_get(m, whole, true, &line, &col);
	free(whole);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jpos_map *m = NULL;
	json_error_t je;
	json_t *root;
	int r;

	r = jpos_scan((const char *)data, size, &m);
	if ((r == 0) != (m != NULL))
		__builtin_trap();
	if (r < 0 && r != -EINVAL && r != -E2BIG && r != -ENOMEM)
		__builtin_trap();
	root = json_loadb((const char *)data, size, JSON_DECODE_ANY, &je);
	/*
	 * jansson 2.14 skips a NUL byte that follows a number or a literal
	 * ("[1\0]" loads); jpos_scan is right to refuse it, so text holding a
	 * NUL byte is compared no further.
	 */
	if (root && memchr(data, 0, size)) {
		json_decref(root);
		root = NULL;
	}
	if (root && r < 0 && r != -E2BIG && r != -ENOMEM) {
		fprintf(stderr, "jsonpos_fuzz: jansson accepts the text, jpos_scan says %d\n", r);
		__builtin_trap();
	}
	if (root && m) {
		struct walk w = { .m = m, .text = data, .len = size };

		w.line_start = line_starts(data, size, &w.n_lines);
		w.ptr_size = 2 * size + 16;
		w.ptr = calloc(1, w.ptr_size);
		if (w.line_start && w.ptr)
			walk(&w, root, false);
		free(w.line_start);
		free(w.ptr);
	}
	if (m)
		pointer_probes(m, data, size);
	json_decref(root);
	jpos_free(m);
	return 0;
}
