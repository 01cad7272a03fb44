// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The keys of a git config that run a program, dropped (contract:
 * git_config_strip.h).  The reader follows git's config.c
 * (git_parse_source, get_base_var, get_value, parse_value) step for step:
 * where it and git disagree, a key could hide from it, so where git would
 * refuse the file this refuses it too and the caller holds the whole file.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "git_config_strip.h"

/*
 * SECTION.KEY: the key in a section without a subsection; SECTION.*.KEY:
 * with any subsection; SECTION.*: any key of the section (every alias:
 * one without '!' can still say `-c core.fsmonitor=...`); a leading '!'
 * on the key: only when the value holds a '!' (a shell command);
 * a leading '^': only when the value starts with "ext::".
 */
static const char *const runs_code[] = {
	"core.fsmonitor", "core.hookspath", "core.sshcommand", "core.pager", "core.editor",
	"core.askpass", "core.gitproxy", "core.alternaterefscommand",
	"sequence.editor", "diff.external", "diff.*.textconv", "diff.*.command",
	"difftool.*.cmd", "difftool.*.path", "mergetool.*.cmd", "mergetool.*.path",
	"merge.*.driver", "filter.*.clean", "filter.*.smudge", "filter.*.process",
	"credential.helper", "credential.*.helper", "include.path", "includeif.*.path",
	"alias.*", "gpg.program", "gpg.*.program", "gpg.*.defaultkeycommand",
	"uploadpack.packobjectshook", "remote.*.receivepack", "remote.*.uploadpack",
	"remote.*.vcs", "remote.*.^url", "remote.*.^pushurl", "protocol.*", "pager.*",
	"interactive.difffilter", "submodule.*.!update", "sendemail.*", "tar.*.command",
	"man.*.cmd", "man.*.path", "web.browser", "browser.*.cmd", "browser.*.path",
	"instaweb.*", "trailer.*.command", "trailer.*.cmd", "guitool.*.cmd",
	"hook.*.command", "imap.tunnel", "help.browser", "man.viewer",
};

struct entry {
	const char *section;            /* lower case */
	bool has_sub;
	const char *key;                /* lower case */
	bool bang, ext;                 /* the value holds '!'; starts with "ext::" */
	char *val;                      /* NULL, or the value as git reads it (VLEN bytes) */
	size_t vlen, vn;
	bool vlong;                     /* it did not fit */
};

static void val_put(struct entry *e, int c)
{
	if (!e->val)
		return;
	if (e->vn + 1 < e->vlen)
		e->val[e->vn++] = (char)c;
	else
		e->vlong = true;
	e->val[e->vn] = 0;
}

static bool match(const char *pat, const struct entry *e)
{
	const char *dot = strchr(pat, '.'), *k;
	size_t sl = (size_t)(dot - pat);

	if (strlen(e->section) != sl || strncmp(pat, e->section, sl))
		return false;
	k = dot + 1;
	if (!strcmp(k, "*"))
		return true;
	if (!strncmp(k, "*.", 2)) {
		if (!e->has_sub)
			return false;
		k += 2;
	} else if (e->has_sub) {
		return false;
	}
	if (*k == '!') {
		if (!e->bang)
			return false;
		k++;
		if (!*k)                /* "alias.!": any key */
			return true;
	} else if (*k == '^') {
		if (!e->ext)
			return false;
		k++;
	}
	return !strcmp(k, e->key);
}

static bool runs(const struct entry *e)
{
	for (size_t i = 0; i < sizeof(runs_code) / sizeof(runs_code[0]); i++)
		if (match(runs_code[i], e))
			return true;
	return false;
}

struct reader {
	const char *s;
	size_t len, i;
	int line;
	bool eof;
};

/* git's get_next_char: CR LF reads as LF, the end as a last LF. */
static int next(struct reader *r)
{
	int c;

	if (r->i >= r->len) {
		if (!r->eof)
			r->line++;
		r->eof = true;
		return '\n';
	}
	c = (unsigned char)r->s[r->i++];
	if (c == '\r' && r->i < r->len && r->s[r->i] == '\n')
		c = r->s[r->i++];
	if (c == '\n')
		r->line++;
	return c;
}

static bool keychar(int c)
{
	return isalnum(c) || c == '-';
}

/* After '[': the section (lower case) and whether a subsection follows; -1 where git errs. */
static int header(struct reader *r, char *sec, size_t slen, bool *has_sub)
{
	size_t n = 0;
	int c;

	*has_sub = false;
	for (;;) {
		c = next(r);
		if (r->eof)
			return -1;
		if (c == ']')
			break;
		if (isspace(c)) {
			/* [section "sub"]: the subsection, escapes and all, then ']'. */
			do
				c = next(r);
			while (c == ' ' || c == '\t');
			if (c != '"')
				return -1;
			for (;;) {
				c = next(r);
				if (c == '\n')
					return -1;
				if (c == '"')
					break;
				if (c == '\\' && next(r) == '\n')
					return -1;
			}
			if (next(r) != ']')
				return -1;
			*has_sub = true;
			break;
		}
		if (!keychar(c) && c != '.')
			return -1;
		if (n + 1 < slen)
			sec[n++] = (char)tolower(c);
	}
	sec[n] = 0;
	/*
	 * [section.sub]: the deprecated form of a subsection; [section.a "b"]:
	 * git joins them, section "section", subsection "a.b" (an attack hid
	 * [filter.x "y"] from the list as section "filter.x").
	 */
	if (strchr(sec, '.')) {
		*strchr(sec, '.') = 0;
		*has_sub = true;
	}
	return n ? 0 : -1;
}

/* After '=': git's parse_value, noting only what the list asks of a value. */
static int value(struct reader *r, struct entry *e)
{
	bool quote = false, comment = false;
	size_t n = 0, space = 0;
	char head[6] = "";
	int c;

	for (;;) {
		c = next(r);
		if (c == '\n') {
			if (quote)
				return -1;
			e->ext = !strcasecmp(head, "ext::");
			return 0;
		}
		if (comment)
			continue;
		if (isspace(c) && !quote) {
			if (n)
				space++;
			continue;
		}
		if (!quote && (c == ';' || c == '#')) {
			comment = true;
			continue;
		}
		for (; space; space--, n++) {
			if (n < 5)
				head[n] = ' ';
			val_put(e, ' ');
		}
		if (c == '\\') {
			c = next(r);
			if (c == '\n')         /* a continuation (at the end: nothing) */
				continue;
			if (c != 't' && c != 'b' && c != 'n' && c != '\\' && c != '"')
				return -1;
			val_put(e, c == 't' ? '\t' : c == 'b' ? '\b' : c == 'n' ? '\n' : c);
			if (n < 5)
				head[n] = (char)c;
			n++;
			continue;
		} else if (c == '"') {
			quote = !quote;
			continue;
		}
		if (c == '!')
			e->bang = true;
		if (n < 5)
			head[n] = (char)c;
		n++;
		val_put(e, c);
	}
}

static void note(char *keys, size_t klen, const struct entry *e)
{
	size_t u = strlen(keys);

	if (u < klen)
		snprintf(keys + u, klen - u, "%s%s.%s%s", u ? ", " : "", e->section,
			 e->has_sub ? "<sub>." : "", e->key);
}

/*
 * git's parse of IN: FN called with each entry (START and END: where its
 * text begins and its last line ends; the value in E->val when VAL is
 * given, VLEN bytes).  0, FN's first nonzero value, or -EINVAL where git
 * would refuse the file (*BAD_LINE says where).
 */
static int walk(const char *in, size_t len,
		int (*fn)(void *ctx, const struct entry *e, size_t start, size_t end), void *ctx,
		char *val, size_t vlen, int *bad_line)
{
	struct reader r = { .s = in, .len = len, .line = 1 };
	char sec[128] = "", key[128];
	bool has_sub = false, comment = false;
	int c, ret;

	if (len >= 3 && !memcmp(in, "\xef\xbb\xbf", 3))
		r.i = 3;
	for (;;) {
		size_t start = r.i;

		c = next(&r);
		if (c == '\n') {
			if (r.eof)
				return 0;
			comment = false;
			continue;
		}
		if (comment || isspace(c))
			continue;
		if (c == '#' || c == ';') {
			comment = true;
			continue;
		}
		if (c == '[') {
			if (header(&r, sec, sizeof(sec), &has_sub) < 0)
				goto bad;
			continue;
		}
		if (!isalpha(c) || !sec[0])
			goto bad;
		{
			struct entry e = { .section = sec, .has_sub = has_sub, .key = key,
					   .val = val, .vlen = vlen };
			size_t n = 0;

			if (val)
				val[0] = 0;
			key[n++] = (char)tolower(c);
			for (;;) {
				c = next(&r);
				if (r.eof || !keychar(c))
					break;
				if (n + 1 < sizeof(key))
					key[n++] = (char)tolower(c);
			}
			key[n] = 0;
			while (c == ' ' || c == '\t')
				c = next(&r);
			if (c != '\n') {
				if (c != '=' || value(&r, &e) < 0)
					goto bad;
			}
			ret = fn(ctx, &e, start, r.i);
			if (ret)
				return ret;
		}
	}
bad:
	if (bad_line)
		*bad_line = r.line;
	return -EINVAL;
}

struct strip {
	const char *in;
	char *buf, *keys;
	size_t klen, copied, o;
	int dropped;
};

static int strip_entry(void *ctx, const struct entry *e, size_t start, size_t end)
{
	struct strip *st = ctx;
	const char *in = st->in;
	bool alone = true;

	if (!runs(e))
		return 0;
	/*
	 * Dropped from the key to its last line's end; with its line when
	 * nothing but blanks stood before it there (a header before it on its
	 * line keeps its newline).
	 */
	for (size_t k = start; k > 0 && in[k - 1] != '\n'; k--)
		if (!isspace((unsigned char)in[k - 1]))
			alone = false;
	if (alone)
		while (start > 0 && in[start - 1] != '\n')
			start--;
	memcpy(st->buf + st->o, in + st->copied, start - st->copied);
	st->o += start - st->copied;
	if (!alone)
		st->buf[st->o++] = '\n';
	st->copied = end;
	note(st->keys, st->klen, e);
	st->dropped++;
	return 0;
}

int git_config_strip(const char *in, size_t len, char **out, size_t *out_len, char *keys,
		     size_t klen, int *bad_line)
{
	struct strip st = { .in = in, .keys = keys, .klen = klen };

	*out = NULL;
	*out_len = 0;
	if (klen)
		keys[0] = 0;
	st.buf = malloc(len + 1);
	if (!st.buf)
		return -ENOMEM;
	if (walk(in, len, strip_entry, &st, NULL, 0, bad_line) < 0) {
		free(st.buf);
		return -EINVAL;
	}
	memcpy(st.buf + st.o, in + st.copied, len - st.copied);
	st.o += len - st.copied;
	st.buf[st.o] = 0;
	*out = st.buf;
	*out_len = st.o;
	return st.dropped;
}

struct paths {
	int (*fn)(void *ctx, const char *key, const char *value);
	void *ctx;
};

static int path_entry(void *ctx, const struct entry *e, size_t start, size_t end)
{
	const struct paths *p = ctx;
	const char *key = NULL;

	(void)start;
	(void)end;
	if (!strcmp(e->section, "core") && !e->has_sub && !strcmp(e->key, "hookspath"))
		key = "core.hookspath";
	else if (!strcmp(e->section, "include") && !e->has_sub && !strcmp(e->key, "path"))
		key = "include.path";
	else if (!strcmp(e->section, "includeif") && e->has_sub && !strcmp(e->key, "path"))
		key = "includeif.path";
	else if (!strcmp(e->section, "core") && !e->has_sub && !strcmp(e->key, "worktree"))
		key = "core.worktree";
	if (!key || !e->val)
		return 0;
	/* A value too long to keep is one git could still read: no guess, a refusal. */
	return e->vlong ? -ENAMETOOLONG : p->fn(p->ctx, key, e->val);
}

int git_config_paths(const char *in, size_t len,
		     int (*fn)(void *ctx, const char *key, const char *value), void *ctx,
		     int *bad_line)
{
	struct paths p = { fn, ctx };
	char val[4096];

	return walk(in, len, path_entry, &p, val, sizeof(val), bad_line);
}
