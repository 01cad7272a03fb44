// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Secret values replaced in text and JSON (see scrub.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>

#include "scrub.h"
#include "util.h"

#define SECRET_NAME_MAX 64

static bool name_valid(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n <= SECRET_NAME_MAX &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == n;
}

int scrub_add(struct scrub *s, const char *name, const char *value)
{
	struct scrub_secret x = { 0 }, *n;
	size_t i;

	if (!s || !name || !value || !*value || !name_valid(name))
		return -EINVAL;
	x.len = strlen(value);
	x.value = strdup(value);
	if (!x.value || asprintf(&x.tag, "[REDACTED:%s]", name) < 0) {
		free(x.value);
		return -ENOMEM;
	}
	x.tag_len = strlen(x.tag);
	n = realloc(s->v, (s->n + 1) * sizeof(*n));
	if (!n) {
		OPENSSL_cleanse(x.value, x.len);
		free(x.value);
		free(x.tag);
		return -ENOMEM;
	}
	s->v = n;
	for (i = s->n; i > 0 && s->v[i - 1].len < x.len; i--)
		s->v[i] = s->v[i - 1];
	s->v[i] = x;
	s->n++;
	return 0;
}

void scrub_free(struct scrub *s)
{
	for (size_t i = 0; i < s->n; i++) {
		OPENSSL_cleanse(s->v[i].value, s->v[i].len);
		free(s->v[i].value);
		free(s->v[i].tag);
	}
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

static int buf_append(char **b, size_t *len, size_t *cap, const char *p, size_t n)
{
	if (*len + n + 1 > *cap) {
		size_t c = (*cap ? *cap : 64);
		char *nb;

		while (c < *len + n + 1)
			c *= 2;
		nb = realloc(*b, c);
		if (!nb)
			return -ENOMEM;
		*b = nb;
		*cap = c;
	}
	memcpy(*b + *len, p, n);
	*len += n;
	(*b)[*len] = 0;
	return 0;
}

int scrub_bytes(const struct scrub *s, const char *in, size_t n, char **out, size_t *out_len,
		size_t *hits)
{
	_cleanup_free_ char *b = NULL;
	size_t len = 0, cap = 0, i = 0, plain = 0;
	int r;

	while (i < n) {
		const struct scrub_secret *hit = NULL;

		for (size_t k = 0; k < s->n && !hit; k++)
			if (n - i >= s->v[k].len && !memcmp(in + i, s->v[k].value, s->v[k].len))
				hit = &s->v[k];
		if (!hit) {
			i++;
			continue;
		}
		r = buf_append(&b, &len, &cap, in + plain, i - plain);
		r = r ?: buf_append(&b, &len, &cap, hit->tag, hit->tag_len);
		if (r < 0)
			return r;
		if (hits)
			(*hits)++;
		i += hit->len;
		plain = i;
	}
	r = buf_append(&b, &len, &cap, in + plain, n - plain);
	if (r < 0)
		return r;
	*out = TAKE_PTR(b);
	*out_len = len;
	return 0;
}

json_t *scrub_json(const struct scrub *s, json_t *v, size_t *hits)
{
	json_t *out = NULL, *x;
	const char *key;
	size_t key_len, i;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		out = json_object();
		if (!out)
			return NULL;
		json_object_keylen_foreach(v, key, key_len, x) {
			_cleanup_free_ char *k = NULL;
			size_t klen;

			if (scrub_bytes(s, key, key_len, &k, &klen, hits) < 0 ||
			    json_object_setn_new(out, k, klen, scrub_json(s, x, hits)) < 0) {
				json_decref(out);
				return NULL;
			}
		}
		return out;
	case JSON_ARRAY:
		out = json_array();
		if (!out)
			return NULL;
		json_array_foreach(v, i, x)
			if (json_array_append_new(out, scrub_json(s, x, hits)) < 0) {
				json_decref(out);
				return NULL;
			}
		return out;
	case JSON_STRING: {
		_cleanup_free_ char *t = NULL;
		size_t tlen;

		if (scrub_bytes(s, json_string_value(v), json_string_length(v), &t, &tlen, hits) < 0)
			return NULL;
		return json_stringn(t, tlen);
	}
	case JSON_INTEGER:
	case JSON_REAL:
	case JSON_TRUE:
	case JSON_FALSE:
	case JSON_NULL:
		return json_deep_copy(v);
	}
	return NULL;
}

void scrub_env_secrets(void (*fn)(void *ctx, const char *name, const char *value), void *ctx)
{
	extern char **environ;
	static const char *const marks[] = { "KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD",
					     "CREDENTIAL", "AUTH", NULL };

	for (char **e = environ; *e; e++) {
		const char *eq = strchr(*e, '=');
		char name[SECRET_NAME_MAX + 1];

		if (!eq || (size_t)(eq - *e) > SECRET_NAME_MAX || strlen(eq + 1) < 8)
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(eq - *e), *e);
		for (int i = 0; marks[i]; i++)
			if (strstr(name, marks[i])) {
				fn(ctx, name, eq + 1);
				break;
			}
	}
}
