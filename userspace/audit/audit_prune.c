// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Retention of audit logs (audit_prune.h).
 *
 * Attack: a prune run as root over a directory is a delete primitive.  A
 * name planted in the log directory (a symlink to /etc/shadow, a hard link
 * of another file, a file swapped between the scan and the unlink) must
 * not make it remove or truncate anything but a log it read.  Answer: the
 * directories are opened once (O_NOFOLLOW) and every file is reached by
 * name relative to their descriptors, opened O_NOFOLLOW, taken only if it
 * is a regular file with one link whose first record is an audit log's
 * start and whose last is that session's seal; the unlink re-checks the
 * name is still that inode.  A symlink is never followed and never
 * removed: it is reported.  The rule file decides what is deleted, so it
 * is taken only from root and writable by root alone.
 *
 * A log is removed only sealed and only when its session no longer runs
 * (the caller's liveness test: reap.h's run-directory lock and the
 * open-log note).  An unsealed log is kept, whatever the rule: it is a
 * session that still writes it, or one that died without its cordon, and
 * then it is evidence: `cordon floor gc` seals one whose note survives,
 * and one that cannot be sealed (not a whole chain: `cordon audit verify`
 * says why) waits for a human, who may read it before deleting it.
 *
 * What it cannot close: root can delete logs by hand, as before; the
 * collector's copy (docs/audit.md, shipping) is the record of what was
 * pruned.  Logs outside the directory (`cordon run --audit` elsewhere) are
 * not found; their keys stay.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit.h"
#include "audit_prune.h"
#include "util.h"

static int parse_num(const char *s, const char **end, uint64_t *out)
{
	uint64_t v = 0;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	for (; isdigit((unsigned char)*s); s++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*end = s;
	*out = v;
	return 0;
}

static int scaled(uint64_t v, uint64_t unit, uint64_t *out)
{
	if (unit && v > UINT64_MAX / unit)
		return -EINVAL;
	*out = v * unit;
	return 0;
}

int audit_parse_age(const char *s, uint64_t *out)
{
	static const struct { char c; uint64_t s; } units[] = {
		{ 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 }, { 'w', 7 * 86400 },
	};
	const char *end;
	uint64_t v;

	if (!s || parse_num(s, &end, &v) < 0 || !end[0] || end[1])
		return -EINVAL;
	for (size_t i = 0; i < ARRAY_SIZE(units); i++)
		if (*end == units[i].c)
			return scaled(v, units[i].s, out);
	return -EINVAL;
}

int audit_parse_size(const char *s, uint64_t *out)
{
	static const char suffixes[] = "KMGT";
	const char *end, *u;
	uint64_t v, unit = 1;

	if (!s || parse_num(s, &end, &v) < 0)
		return -EINVAL;
	if (!*end)
		return scaled(v, 1, out);
	if (end[1] || !(u = strchr(suffixes, toupper((unsigned char)*end))))
		return -EINVAL;
	for (const char *p = suffixes; p <= u; p++)
		unit *= 1024;
	return scaled(v, unit, out);
}

int audit_parse_count(const char *s, uint64_t *out)
{
	const char *end;

	if (!s || parse_num(s, &end, out) < 0 || *end)
		return -EINVAL;
	return 0;
}

int audit_retention_load(const char *path, struct audit_retention *r, char *why, size_t wlen)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *line = NULL;
	bool seen[3] = { false, false, false };
	size_t cap = 0, lineno = 0;
	struct stat st;

	if (fd < 0) {
		snprintf(why, wlen, "%s: %s", path, strerror(errno));
		return -errno;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022)) {
		snprintf(why, wlen, "%s: must be a regular file owned by root that only root may "
			 "write (it decides which audit logs are deleted)", path);
		return -EPERM;
	}
	f = fdopen(fd, "r");
	if (!f) {
		snprintf(why, wlen, "%s: %s", path, strerror(errno));
		return -errno;
	}
	fd = -1;        /* the FILE owns it */
	while (getline(&line, &cap, f) > 0) {
		static const char *const keys[] = { "max-age", "max-count", "max-size" };
		char *p = line, *k, *eq, *v, *e;
		size_t kl;
		int i = -1, rc;

		lineno++;
		line[strcspn(line, "\n")] = '\0';
		p += strspn(p, " \t");
		if (!*p || *p == '#')
			continue;
		k = p;
		kl = strcspn(k, " \t=");
		eq = k + kl + strspn(k + kl, " \t");
		if (*eq != '=') {
			snprintf(why, wlen, "%s:%zu:%zu: expected NAME = VALUE", path, lineno,
				 (size_t)(eq - line) + 1);
			return -EINVAL;
		}
		v = eq + 1 + strspn(eq + 1, " \t");
		for (e = v + strlen(v); e > v && (e[-1] == ' ' || e[-1] == '\t'); e--)
			;
		*e = '\0';
		for (size_t j = 0; j < ARRAY_SIZE(keys); j++)
			if (strlen(keys[j]) == kl && !strncmp(k, keys[j], kl))
				i = (int)j;
		if (i < 0) {
			snprintf(why, wlen, "%s:%zu:%zu: unknown member '%.*s' (max-age, max-count, "
				 "max-size)", path, lineno, (size_t)(k - line) + 1, (int)kl, k);
			return -EINVAL;
		}
		if (seen[i]) {
			snprintf(why, wlen, "%s:%zu:%zu: %s given twice", path, lineno,
				 (size_t)(k - line) + 1, keys[i]);
			return -EINVAL;
		}
		seen[i] = true;
		rc = i == 0 ? audit_parse_age(v, &r->max_age_s) :
		     i == 1 ? audit_parse_count(v, &r->max_count) : audit_parse_size(v, &r->max_size);
		if (rc < 0) {
			snprintf(why, wlen, "%s:%zu:%zu: %s: '%s' is not %s", path, lineno,
				 (size_t)(v - line) + 1, keys[i], v,
				 i == 0 ? "an age (a number and s, m, h, d or w: 30d)" :
				 i == 1 ? "a count" : "a size (bytes, or a number and K, M, G or T: 2G)");
			return -EINVAL;
		}
		if (i == 0)
			r->has_age = true;
		else if (i == 1)
			r->has_count = true;
		else
			r->has_size = true;
	}
	if (ferror(f)) {
		snprintf(why, wlen, "%s: %s", path, strerror(errno));
		return -EIO;
	}
	return 0;
}

/* Read from FD at OFF until a newline (kept out) or MAX bytes: a NUL-ended line, or NULL. */
static char *read_line_at(int fd, off_t off, size_t max)
{
	size_t have = 0, cap = 0;
	char *buf = NULL;

	while (have < max) {
		size_t want = max - have < 65536 ? max - have : 65536;
		char *nb, *nl;
		ssize_t n;

		if (have + want + 1 > cap) {
			cap = have + want + 1;
			nb = realloc(buf, cap);
			if (!nb)
				break;
			buf = nb;
		}
		n = pread(fd, buf + have, want, off + (off_t)have);
		if (n <= 0)
			break;
		nl = memchr(buf + have, '\n', (size_t)n);
		if (nl) {
			*nl = '\0';
			return buf;
		}
		have += (size_t)n;
	}
	free(buf);
	return NULL;
}

/* The record's "type" is T and "session" SESSION (NULL: any, copied to OUT). */
static bool record_is(const char *line, const char *t, const char *session, char *out, size_t len)
{
	json_t *rec = line ? json_loads(line, 0, NULL) : NULL;
	const char *type = json_string_value(json_object_get(rec, "type"));
	const char *sess = json_string_value(json_object_get(rec, "session"));
	bool ok = json_is_object(rec) && type && !strcmp(type, t) && sess &&
		  audit_format_session_valid(sess) && (!session || !strcmp(sess, session));

	if (ok && out)
		snprintf(out, len, "%s", sess);
	json_decref(rec);
	return ok;
}

/* The last line of FD (SIZE bytes, ending in a newline): NULL if longer than 64 KiB. */
static char *last_line(int fd, uint64_t size)
{
	size_t win = size < 65536 ? (size_t)size : 65536;
	off_t at = (off_t)(size - win);
	char *buf = malloc(win + 1), *p;

	if (!buf || win < 2 || pread(fd, buf, win, at) != (ssize_t)win || buf[win - 1] != '\n') {
		free(buf);
		return NULL;
	}
	buf[win - 1] = '\0';
	p = memrchr(buf, '\n', win - 1);
	if (!p && at > 0) {
		free(buf);
		return NULL;
	}
	p = p ? p + 1 : buf;
	memmove(buf, p, strlen(p) + 1);
	return buf;
}

static void scan_one(int log_dir, int key_dir, int (*live)(const char *),
		     struct audit_prune_entry *e)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *first = NULL, *last = NULL;
	char key[AUDIT_SESSION_MAX + 8];
	struct stat st, ks;
	int l;

	e->state = AUDIT_PRUNE_NOT_LOG;
	if (fstatat(log_dir, e->name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		e->why = "gone while read";
		return;
	}
	if (S_ISLNK(st.st_mode)) {
		e->why = "a symlink: not followed, not removed";
		return;
	}
	/* Not even opened: a device's open can act (a tape rewinds), a FIFO's block. */
	if (!S_ISREG(st.st_mode)) {
		e->why = "not a regular file";
		return;
	}
	fd = openat(log_dir, e->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		e->why = "not a regular file";
		return;
	}
	if (st.st_nlink != 1) {
		e->why = "a file with more than one link: not an audit log cordon wrote";
		return;
	}
	e->dev = st.st_dev;
	e->ino = st.st_ino;
	e->size = (uint64_t)st.st_size;
	e->mtime = st.st_mtime;
	first = read_line_at(fd, 0, AUDIT_RECORD_MAX + 1);
	if (!record_is(first, "start", NULL, e->session, sizeof(e->session))) {
		e->session[0] = '\0';
		e->why = "its first line is not an audit log's start record";
		return;
	}
	snprintf(key, sizeof(key), "%s.key", e->session);
	if (fstatat(key_dir, key, &ks, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(ks.st_mode)) {
		e->has_key = true;
		e->key_size = (uint64_t)ks.st_size;
	}
	l = live ? live(e->session) : 0;
	if (l != 0) {
		e->state = AUDIT_PRUNE_LIVE;
		e->why = l > 0 ? "its session has not ended" :
			 "whether its session has ended cannot be told";
		return;
	}
	last = last_line(fd, e->size);
	if (!record_is(last, "seal", e->session, NULL, 0)) {
		e->state = AUDIT_PRUNE_UNSEALED;
		e->why = "not sealed: its session ended without its cordon (`cordon floor gc` "
			 "seals it if it can; one that cannot be sealed waits for a human)";
		return;
	}
	e->state = AUDIT_PRUNE_SEALED;
	e->why = NULL;
}

int audit_prune_scan(int log_dir, int key_dir, int (*live)(const char *session),
		     struct audit_prune_entry **out, size_t *n)
{
	struct audit_prune_entry *v = NULL;
	size_t cnt = 0, cap = 0;
	struct dirent *de;
	DIR *d;
	int dfd = openat(log_dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (dfd < 0)
		return -errno;
	d = fdopendir(dfd);
	if (!d) {
		int r = -errno;

		close(dfd);
		return r;
	}
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (len <= 6 || strcmp(de->d_name + len - 6, ".jsonl") || de->d_name[0] == '.')
			continue;
		if (cnt == cap) {
			size_t nc = cap ? cap * 2 : 64;
			struct audit_prune_entry *nv = realloc(v, nc * sizeof(*nv));

			if (!nv) {
				free(v);
				closedir(d);
				return -ENOMEM;
			}
			v = nv;
			cap = nc;
		}
		memset(&v[cnt], 0, sizeof(v[cnt]));
		snprintf(v[cnt].name, sizeof(v[cnt].name), "%s", de->d_name);
		scan_one(log_dir, key_dir, live, &v[cnt]);
		cnt++;
	}
	closedir(d);
	*out = v;
	*n = cnt;
	return 0;
}

static int by_mtime(const void *a, const void *b)
{
	const struct audit_prune_entry *x = a, *y = b;

	if (x->mtime != y->mtime)
		return x->mtime < y->mtime ? -1 : 1;
	return strcmp(x->name, y->name);
}

void audit_prune_plan(struct audit_prune_entry *e, size_t n, const struct audit_retention *r,
		      time_t now)
{
	uint64_t count = 0, bytes = 0;

	qsort(e, n, sizeof(*e), by_mtime);
	for (size_t i = 0; i < n; i++) {
		e[i].remove = false;
		e[i].rule = NULL;
		if (e[i].state == AUDIT_PRUNE_NOT_LOG)
			continue;
		count++;
		bytes += e[i].size + e[i].key_size;
	}
	for (size_t i = 0; i < n; i++) {
		if (e[i].state != AUDIT_PRUNE_SEALED)
			continue;
		if (r->has_age && now > e[i].mtime && (uint64_t)(now - e[i].mtime) > r->max_age_s)
			e[i].rule = "max-age";
		else if (r->has_count && count > r->max_count)
			e[i].rule = "max-count";
		else if (r->has_size && bytes > r->max_size)
			e[i].rule = "max-size";
		if (!e[i].rule)
			continue;
		e[i].remove = true;
		count--;
		bytes -= e[i].size + e[i].key_size;
	}
	/* A key another log kept still needs (two copies of one session's log) stays. */
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; e[i].remove && e[i].has_key && j < n; j++)
			if (!e[j].remove && e[j].state != AUDIT_PRUNE_NOT_LOG &&
			    !strcmp(e[i].session, e[j].session))
				e[i].has_key = false;
}

int audit_prune_remove(int log_dir, int key_dir, const struct audit_prune_entry *e)
{
	char key[AUDIT_SESSION_MAX + 8];
	struct stat st;

	if (fstatat(log_dir, e->name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_dev != e->dev || st.st_ino != e->ino)
		return -ESTALE;
	if (unlinkat(log_dir, e->name, 0) < 0)
		return -errno;
	if (!e->has_key)
		return 0;
	snprintf(key, sizeof(key), "%s.key", e->session);
	if (fstatat(key_dir, key, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISREG(st.st_mode))
		return -ESTALE;
	return unlinkat(key_dir, key, 0) < 0 && errno != ENOENT ? -errno : 0;
}
