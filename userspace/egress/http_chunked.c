// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The chunked body's scanner (http_chunked.h). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "http_chunked.h"
#include "http_lex.h"

/*
 * RFC 9112 7.1:
 *   chunk-size [ chunk-ext ] CRLF chunk-data CRLF ... last-chunk trailer-section CRLF
 *   chunk-ext = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] )
 * The states up to CH_EXT_QEND are inside a chunk-size line.
 */
enum {
	CH_SIZE,                /* hex digits */
	CH_BWS,                 /* whitespace after the size or an extension: ';' next */
	CH_EXT_NAME0,           /* after ';': whitespace, then a name */
	CH_EXT_NAME,
	CH_EXT_NAME_BWS,        /* whitespace after a name: '=' or ';' next */
	CH_EXT_VAL0,            /* after '=': whitespace, then a token or a quoted-string */
	CH_EXT_TOKEN,
	CH_EXT_QUOTED,
	CH_EXT_QPAIR,
	CH_EXT_QEND,            /* after the closing quote */
	CH_SIZE_LF,
	CH_DATA,
	CH_DATA_CR,
	CH_DATA_LF,
	CH_TR_LINE,             /* a trailer line begins, or the final CRLF */
	CH_TR_NAME,
	CH_TR_VALUE,
	CH_TR_LF,
	CH_END_LF,
	CH_DONE,
	CH_ERROR,
};

void http_chunked_init(struct http_chunked *c)
{
	memset(c, 0, sizeof(*c));
	c->state = CH_SIZE;
}

/* Framing and routing fields in a trailer would mean something to a server that merges trailers. */
static bool forbidden_trailer(const struct http_chunked *c)
{
	static const char *const names[] = { "content-length", "transfer-encoding", "host" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (c->name_len == strlen(names[i]) && !memcmp(c->name, names[i], c->name_len))
			return true;
	return false;
}

/* The state after a byte that may end a chunk-size line element (token, quote, size). */
static int ext_next(unsigned char b)
{
	if (is_ows(b))
		return CH_BWS;
	if (b == ';')
		return CH_EXT_NAME0;
	if (b == '\r')
		return CH_SIZE_LF;
	return CH_ERROR;
}

uint64_t http_chunked_data_left(const struct http_chunked *c)
{
	return c->state == CH_DATA ? c->left : 0;
}

ssize_t http_chunked_scan(struct http_chunked *c, const char *buf, size_t len)
{
	size_t i = 0;

	if (c->state == CH_ERROR)
		return -400;
	if (c->state == CH_DONE)
		return 0;
	while (i < len) {
		unsigned char b = (unsigned char)buf[i];
		int s = c->state;

		if (s == CH_DATA) {
			size_t n = len - i < c->left ? len - i : (size_t)c->left;

			i += n;
			c->left -= n;
			if (!c->left)
				c->state = CH_DATA_CR;
			continue;
		}
		i++;
		if (s <= CH_EXT_QEND && b != '\r' && ++c->line > HTTP_MAX_CHUNK_LINE)
			goto bad;
		if (s >= CH_TR_LINE && s <= CH_END_LF && ++c->trailer > HTTP_MAX_HEAD)
			goto bad;
		switch (s) {
		case CH_SIZE:
			if (is_xdigit(b)) {
				if (++c->digits > 16)
					goto bad;
				c->size = c->size * 16 +
					  (uint64_t)(is_digit(b) ? b - '0' : (b | 0x20) - 'a' + 10);
				if (c->size >= (uint64_t)1 << 40)
					goto bad;
				break;
			}
			if (!c->digits)
				goto bad;
			c->state = ext_next(b);
			break;
		case CH_BWS:
			if (b == ';')
				c->state = CH_EXT_NAME0;
			else if (!is_ows(b))
				goto bad;
			break;
		case CH_EXT_NAME0:
			if (is_tchar(b))
				c->state = CH_EXT_NAME;
			else if (!is_ows(b))
				goto bad;
			break;
		case CH_EXT_NAME:
			if (is_tchar(b))
				break;
			if (b == '=')
				c->state = CH_EXT_VAL0;
			else if (is_ows(b))
				c->state = CH_EXT_NAME_BWS;
			else
				c->state = ext_next(b);
			break;
		case CH_EXT_NAME_BWS:
			if (b == '=')
				c->state = CH_EXT_VAL0;
			else if (b == ';')
				c->state = CH_EXT_NAME0;
			else if (!is_ows(b))
				goto bad;
			break;
		case CH_EXT_VAL0:
			if (is_tchar(b))
				c->state = CH_EXT_TOKEN;
			else if (b == '"')
				c->state = CH_EXT_QUOTED;
			else if (!is_ows(b))
				goto bad;
			break;
		case CH_EXT_TOKEN:
			if (!is_tchar(b))
				c->state = ext_next(b);
			break;
		case CH_EXT_QUOTED:
			/* qdtext: HTAB, SP, VCHAR but '"' and '\', obs-text. */
			if (b == '"')
				c->state = CH_EXT_QEND;
			else if (b == '\\')
				c->state = CH_EXT_QPAIR;
			else if (!is_field_byte(b))
				goto bad;
			break;
		case CH_EXT_QPAIR:
			if (!is_field_byte(b))
				goto bad;
			c->state = CH_EXT_QUOTED;
			break;
		case CH_EXT_QEND:
			c->state = ext_next(b);
			break;
		case CH_SIZE_LF:
			if (b != '\n')
				goto bad;
			if (c->size) {
				c->left = c->size;
				c->state = CH_DATA;
			} else {
				c->state = CH_TR_LINE;
			}
			c->size = 0;
			c->digits = 0;
			c->line = 0;
			break;
		case CH_DATA_CR:
			if (b != '\r')
				goto bad;
			c->state = CH_DATA_LF;
			break;
		case CH_DATA_LF:
			if (b != '\n')
				goto bad;
			c->state = CH_SIZE;
			break;
		case CH_TR_LINE:
			if (b == '\r') {
				c->state = CH_END_LF;
				break;
			}
			/* Whitespace here would be obs-fold; ':' an empty name. */
			if (!is_tchar(b))
				goto bad;
			c->name_len = 0;
			c->state = CH_TR_NAME;
			/* fall through */
		case CH_TR_NAME:
			if (b == ':') {
				if (forbidden_trailer(c))
					goto bad;
				c->state = CH_TR_VALUE;
				break;
			}
			if (!is_tchar(b))
				goto bad;
			if (c->name_len < sizeof(c->name))
				c->name[c->name_len] = (char)lc(b);
			c->name_len++;
			break;
		case CH_TR_VALUE:
			if (b == '\r')
				c->state = CH_TR_LF;
			else if (!is_field_byte(b))
				goto bad;
			break;
		case CH_TR_LF:
			if (b != '\n')
				goto bad;
			c->state = CH_TR_LINE;
			break;
		case CH_END_LF:
			if (b != '\n')
				goto bad;
			c->state = CH_DONE;
			c->done = true;
			return (ssize_t)i;
		default:
			goto bad;
		}
		if (c->state == CH_ERROR)
			goto bad;
	}
	return (ssize_t)i;
bad:
	c->state = CH_ERROR;
	return -400;
}
