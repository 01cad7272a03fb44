/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The lexical helpers every part of the HTTP parser shares (http.c says
 * what the parser closes): byte classes (locale-free), a case-insensitive
 * compare, the token rule, and the refusal's wording.  Private to
 * userspace/egress/http*.c; static inline, so each part (and the fuzz
 * targets, which compile the sources directly) carries its own copy.
 */
#ifndef CORDON_HTTP_LEX_H
#define CORDON_HTTP_LEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* The reason, naming the head's line (1 = the start line) when one line is to blame. */
static inline int fail(char *why, size_t whylen, int status, unsigned line, const char *msg)
{
	if (!msg)
		msg = "malformed";
	if (why && whylen && line)
		snprintf(why, whylen, "line %u: %s", line, msg);
	else if (why && whylen)
		snprintf(why, whylen, "%s", msg);
	return -status;
}

/* Byte classes, locale-free. */
static inline bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static inline bool is_alpha(unsigned char c)
{
	return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
}

static inline bool is_xdigit(unsigned char c)
{
	return is_digit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

static inline bool is_tchar(unsigned char c)
{
	return is_digit(c) || is_alpha(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

static inline bool is_ows(unsigned char c)
{
	return c == ' ' || c == '\t';
}

/* field-vchar, obs-text, SP or HTAB: anything but CTLs and DEL. */
static inline bool is_field_byte(unsigned char c)
{
	return c == '\t' || (c >= 0x20 && c != 0x7f);
}

static inline unsigned char lc(unsigned char c)
{
	return c >= 'A' && c <= 'Z' ? (unsigned char)(c + 32) : c;
}

static inline bool ieq(const char *a, size_t n, const char *lit)
{
	if (n != strlen(lit))
		return false;
	for (size_t i = 0; i < n; i++)
		if (lc((unsigned char)a[i]) != lc((unsigned char)lit[i]))
			return false;
	return true;
}

static inline bool is_token(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!is_tchar((unsigned char)s[i]))
			return false;
	return true;
}


#endif /* CORDON_HTTP_LEX_H */
