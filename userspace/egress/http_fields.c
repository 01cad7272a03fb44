// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The header section of a head (http_fields.h). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "http_fields.h"
#include "http_lex.h"

const struct http_header *http_header_get(const struct http_header *h, size_t n,
					  const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (ieq(h[i].name, h[i].name_len, name))
			return &h[i];
	return NULL;
}

size_t http_header_count(const struct http_header *h, size_t n, const char *name)
{
	size_t c = 0;

	for (size_t i = 0; i < n; i++)
		c += ieq(h[i].name, h[i].name_len, name);
	return c;
}

void http_fields_list_init(struct http_fields_list *l, const struct http_header *h)
{
	l->p = h->value;
	l->end = h->value + h->value_len;
	l->done = false;
}

bool http_fields_list_next(struct http_fields_list *l, const char **e, size_t *n)
{
	const char *s = l->p, *c;

	if (l->done)
		return false;
	c = memchr(s, ',', (size_t)(l->end - s));
	if (c) {
		l->p = c + 1;
	} else {
		c = l->end;
		l->done = true;
	}
	while (s < c && is_ows((unsigned char)*s))
		s++;
	while (c > s && is_ows((unsigned char)c[-1]))
		c--;
	*e = s;
	*n = (size_t)(c - s);
	return true;
}

/* 1: a line [*line, *line + *n) that ended in CRLF; 0: more bytes; -400 or -431 with *err. */
int http_fields_next_line(struct http_fields_lines *l, const char **line, size_t *n,
			  const char **err)
{
	for (size_t i = l->pos; i < l->win; i++) {
		char c = l->buf[i];

		if (c == '\n') {
			*err = "bare LF: every line must end in CRLF";
			l->bad = l->no + 1;
			return -400;
		}
		if (c != '\r')
			continue;
		if (i + 1 == l->win)
			break;
		if (l->buf[i + 1] != '\n') {
			*err = "bare CR in the head";
			l->bad = l->no + 1;
			return -400;
		}
		*line = l->buf + l->pos;
		*n = i - l->pos;
		l->pos = i + 2;
		l->no++;
		return 1;
	}
	if (l->len >= HTTP_MAX_HEAD) {
		*err = "head longer than 16384 bytes";
		return -431;
	}
	return 0;
}

static const char *parse_field(const char *line, size_t n, struct http_header *h)
{
	size_t i, b, e;

	if (is_ows((unsigned char)line[0]))
		return "obs-fold: a field line begins with whitespace";
	for (i = 0; i < n && line[i] != ':'; i++) {
		if (is_ows((unsigned char)line[i]))
			return "whitespace in a field name or before its colon";
		if (!is_tchar((unsigned char)line[i]))
			return "bad byte in a field name";
	}
	if (i == n)
		return "field line without a colon";
	if (i == 0)
		return "empty field name";
	for (b = i + 1; b < n; b++)
		if (!is_field_byte((unsigned char)line[b]))
			return "control byte in a field value";
	b = i + 1;
	e = n;
	while (b < e && is_ows((unsigned char)line[b]))
		b++;
	while (e > b && is_ows((unsigned char)line[e - 1]))
		e--;
	h->name = line;
	h->name_len = i;
	h->value = line + b;
	h->value_len = e - b;
	return NULL;
}

/* Field lines up to the empty one: the head's length, 0 for more bytes, or -status. */
int http_fields_read(struct http_fields_lines *l, struct http_header *h, size_t *nh,
		     const char **err)
{
	const char *line;
	size_t n;
	int rc;

	for (;;) {
		rc = http_fields_next_line(l, &line, &n, err);
		if (rc <= 0)
			return rc;
		if (n == 0)
			return (int)l->pos;
		if (*nh == HTTP_MAX_HEADERS) {
			*err = "more than 64 header fields";
			return -431;
		}
		*err = parse_field(line, n, &h[*nh]);
		if (*err) {
			l->bad = l->no;
			return -400;
		}
		(*nh)++;
	}
}

bool http_fields_length(const struct http_header *h, int64_t *out)
{
	int64_t v = 0;

	/* 15 digits: below 2^53, and far beyond any body worth forwarding. */
	if (h->value_len == 0 || h->value_len > 15)
		return false;
	for (size_t i = 0; i < h->value_len; i++) {
		if (!is_digit((unsigned char)h->value[i]))
			return false;
		v = v * 10 + (h->value[i] - '0');
	}
	*out = v;
	return true;
}

/* close / keep-alive from every Connection field; -400 for a non-token element. */
int http_fields_connection(const struct http_header *h, size_t nh, bool *close,
			   bool *keep_alive, const char **err)
{
	for (size_t i = 0; i < nh; i++) {
		struct http_fields_list l;
		const char *e;
		size_t n;

		if (!ieq(h[i].name, h[i].name_len, "connection"))
			continue;
		http_fields_list_init(&l, &h[i]);
		while (http_fields_list_next(&l, &e, &n)) {
			if (n == 0)
				continue;
			if (!is_token(e, n)) {
				*err = "bad Connection header";
				return -400;
			}
			if (ieq(e, n, "close"))
				*close = true;
			else if (ieq(e, n, "keep-alive"))
				*keep_alive = true;
		}
	}
	return 0;
}
