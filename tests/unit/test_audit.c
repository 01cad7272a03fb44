// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The audit log: an intact log verifies; every way of tampering with it
 * (an edited field or hmac, an inserted, deleted, replayed or moved record,
 * a cut tail, a record after the seal, a line that is not JSON, the wrong
 * key) is reported, naming the line and seq, and nothing else is; secrets
 * never reach the file; concurrent writers keep the chain whole; the files
 * are created the way the threat model needs (O_EXCL, 0600, 0700); a dead
 * writer's log, and only a whole one, is resumed and sealed.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <openssl/evp.h>
#include "audit.h"

#define N_DECISIONS 10           /* seq 0 start, 1..10 decisions, 11 seal: lines 1..12 */
#define SECRET "sk-ant-api03-Zx9QvT4mNw8KpL2rJ7sB"

struct fixture {
	char dir[64];
	char keys[96];
	char log[96];
	char key[160];
};

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	return remove(p);
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	strcpy(fx->dir, "/tmp/cordon-test-audit.XXXXXX");
	if (!mkdtemp(fx->dir))
		return -1;
	snprintf(fx->keys, sizeof(fx->keys), "%s/keys", fx->dir);
	snprintf(fx->log, sizeof(fx->log), "%s/audit.jsonl", fx->dir);
	snprintf(fx->key, sizeof(fx->key), "%s/s1.key", fx->keys);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	nftw(fx->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(fx);
	return 0;
}

static json_t *decision(int i)
{
	return json_pack("{s:i,s:s,s:{s:s,s:s,s:{s:[s,s,s,s]}},s:s,s:s,s:s}",
			 "pid", 1000 + i, "comm", "bash",
			 "event", "server", "shell", "tool", "exec", "arguments", "argv",
			 "git", "push", "origin", "main",
			 "decision", i % 2 ? "allow" : "deny", "rule", "git-push", "reason", "test");
}

/* A sealed log: start, N_DECISIONS decisions, seal. */
static void write_log(struct fixture *fx)
{
	struct audit *a = NULL;
	json_t *start = json_pack("{s:s}", "profile", "coding-agent");

	assert_int_equal(audit_open(fx->log, "s1", fx->keys, start, &a), 0);
	json_decref(start);
	for (int i = 1; i <= N_DECISIONS; i++) {
		json_t *d = decision(i);

		assert_int_equal(audit_write(a, "decision", d), 0);
		json_decref(d);
	}
	assert_int_equal(audit_seal(a, NULL), 0);
	audit_close(a);
}

/* --- the file as lines ----------------------------------------------------------- */

struct lines {
	char *v[64];
	size_t n;
};

static void lines_read(const char *path, struct lines *l)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0;
	ssize_t n;

	assert_non_null(f);
	l->n = 0;
	while ((n = getline(&buf, &cap, f)) > 0) {
		assert_true(l->n < 64);
		if (buf[n - 1] == '\n')
			buf[n - 1] = 0;
		l->v[l->n++] = strdup(buf);
	}
	free(buf);
	fclose(f);
}

static void lines_write(const char *path, struct lines *l)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	for (size_t i = 0; i < l->n; i++) {
		fprintf(f, "%s\n", l->v[i]);
		free(l->v[i]);
	}
	fclose(f);
	l->n = 0;
}

/* Line NO (1-based) with its first FROM replaced by TO. */
static void lines_edit(struct lines *l, size_t no, const char *from, const char *to)
{
	char *s = l->v[no - 1], *p = strstr(s, from), *n;

	assert_non_null(p);
	assert_true(asprintf(&n, "%.*s%s%s", (int)(p - s), s, to, p + strlen(from)) > 0);
	free(s);
	l->v[no - 1] = n;
}

static void lines_delete(struct lines *l, size_t no)
{
	free(l->v[no - 1]);
	memmove(&l->v[no - 1], &l->v[no], (l->n - no) * sizeof(char *));
	l->n--;
}

/* Insert S so that it becomes line NO. */
static void lines_insert(struct lines *l, size_t no, const char *s)
{
	memmove(&l->v[no], &l->v[no - 1], (l->n - no + 1) * sizeof(char *));
	l->v[no - 1] = strdup(s);
	l->n++;
}

/* Verify; return the report (caller frees) and the result in *r. */
static char *verify(const char *log, const char *key, int *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	*r = audit_verify(log, key, f);
	fclose(f);
	/* The report as TAP comments, for whoever reads a failure. */
	for (char *p = buf, *e; *p; p = e + 1) {
		e = strchrnul(p, '\n');
		print_message("# %.*s\n", (int)(e - p), p);
		if (!*e)
			break;
	}
	return buf;
}

static size_t count_lines(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* The log is reported tampered with exactly one problem, which says WANT. */
static void assert_one_problem(struct fixture *fx, const char *want)
{
	int r;
	char *rep = verify(fx->log, fx->key, &r);

	assert_int_equal(r, -EBADMSG);
	assert_non_null(strstr(rep, want));
	assert_int_equal(count_lines(rep), 1);
	free(rep);
}

/* --- tests ------------------------------------------------------------------------- */

static void intact_log_verifies(void **state)
{
	struct fixture *fx = *state;
	struct audit_verify_stats st;
	char *path = NULL;

	write_log(fx);
	assert_int_equal(audit_verify_stats(fx->log, fx->key, stderr, &st), 0);
	assert_int_equal(st.lines, N_DECISIONS + 2);
	assert_int_equal(st.records, N_DECISIONS + 2);
	assert_int_equal(st.problems, 0);
	assert_true(st.sealed);
	/* The default key is the one the first record's session names. */
	assert_int_equal(audit_log_key_path(fx->log, fx->keys, &path), 0);
	assert_string_equal(path, fx->key);
	free(path);
}

static void sha256_hex(const char *s, char out[65])
{
	unsigned char h[32];

	assert_int_equal(EVP_Digest(s, strlen(s), h, NULL, EVP_sha256(), NULL), 1);
	for (int i = 0; i < 32; i++)
		sprintf(out + 2 * i, "%02x", h[i]);
}

/* The format as documented, checked without the verifier. */
static void records_follow_the_format(void **state)
{
	struct fixture *fx = *state;
	struct lines l;
	char want[65];

	write_log(fx);
	lines_read(fx->log, &l);
	assert_int_equal(l.n, N_DECISIONS + 2);
	sha256_hex(AUDIT_CHAIN_TAG "s1", want);
	for (size_t i = 0; i < l.n; i++) {
		json_error_t je;
		json_t *j = json_loads(l.v[i], 0, &je);
		const char *t = json_string_value(json_object_get(j, "time"));
		const char *type = json_string_value(json_object_get(j, "type"));

		assert_non_null(j);
		assert_int_equal(json_integer_value(json_object_get(j, "seq")), i);
		assert_string_equal(json_string_value(json_object_get(j, "session")), "s1");
		assert_string_equal(json_string_value(json_object_get(j, "prev")), want);
		/* 2024-05-01T12:34:56.123456Z */
		assert_non_null(t);
		assert_int_equal(strlen(t), 27);
		assert_true(t[4] == '-' && t[10] == 'T' && t[19] == '.' && t[26] == 'Z');
		assert_string_equal(type, i == 0 ? "start" : i == l.n - 1 ? "seal" : "decision");
		if (i == 0) {
			assert_string_equal(json_string_value(json_object_get(j, "profile")), "coding-agent");
			assert_string_equal(json_string_value(json_object_get(j, "format")), AUDIT_FORMAT);
		}
		/* hmac is the last member, 64 lower-case hex digits. */
		assert_non_null(strstr(l.v[i], ",\"hmac\":\""));
		assert_int_equal(strlen(strstr(l.v[i], ",\"hmac\":\"")), 9 + 64 + 2);
		sha256_hex(l.v[i], want);
		if (i == l.n - 1) {
			assert_int_equal(json_integer_value(json_object_get(j, "records")), i);
			assert_string_equal(json_string_value(json_object_get(j, "chain")),
					    json_string_value(json_object_get(j, "prev")));
		}
		json_decref(j);
	}
	lines_write(fx->log, &l);
}

static void modified_field_is_named(void **state)
{
	struct fixture *fx = *state;
	struct lines l;

	write_log(fx);
	lines_read(fx->log, &l);
	lines_edit(&l, 5, "\"decision\":\"deny\"", "\"decision\":\"allow\"");
	lines_write(fx->log, &l);
	assert_one_problem(fx, "line 5 (seq 4): modified: its HMAC does not match");
}

static void modified_hmac_is_named(void **state)
{
	struct fixture *fx = *state;
	struct lines l;
	char *h;

	write_log(fx);
	lines_read(fx->log, &l);
	h = strstr(l.v[6], "\"hmac\":\"") + 8;
	*h = *h == '0' ? '1' : '0';
	lines_write(fx->log, &l);
	assert_one_problem(fx, "line 7 (seq 6): modified: its HMAC does not match");
}

static void uppercase_hmac_is_modified(void **state)
{
	struct fixture *fx = *state;
	struct lines l;
	char *h;

	write_log(fx);
	lines_read(fx->log, &l);
	for (h = strstr(l.v[2], "\"hmac\":\"") + 8; *h != '"'; h++)
		if (*h >= 'a' && *h <= 'f')
			*h = (char)(*h - 'a' + 'A');
	lines_write(fx->log, &l);
	assert_one_problem(fx, "line 3 (seq 2): modified");
}

static void inserted_copy_with_forged_seq_is_named(void **state)
{
	struct fixture *fx = *state;
	struct lines l;
	char *copy;

	write_log(fx);
	lines_read(fx->log, &l);
	/* Record 3, renumbered to pass for record 6, put after record 5. */
	copy = strdup(l.v[3]);
	lines_insert(&l, 7, copy);
	lines_edit(&l, 7, "\"seq\":3", "\"seq\":6");
	free(copy);
	lines_write(fx->log, &l);
	assert_one_problem(fx, "line 7 (seq 6): inserted: not part of the chain");
}

static void replayed_copy_is_named(void **state)
{
	struct fixture *fx = *state;
	struct lines l;

	write_log(fx);
	lines_read(fx->log, &l);
	lines_insert(&l, 9, l.v[2]);
	lines_write(fx->log, &l);
	assert_one_problem(fx, "line 9 (seq 2): inserted: a replayed copy of line 3 (seq 2)");
}

static void deleted_record_is_named(void **state)
{
	struct fixture *fx = *state;
	struct lines l;

	write_log(fx);
	lines_read(fx->log, &l);
	lines_delete(&l, 6);
	lines_write(fx->log, &l);
	assert_one_problem(fx, "seq 5: deleted: missing between line 5 (seq 4) and line 6 (seq 6)");
}

static void deleted_run_is_named(void **state)
{
	struct fixture *fx = *state;
	struct lines l;

	write_log(fx);
	lines_read(fx->log, &l);
	lines_delete(&l, 4);
	lines_delete(&l, 4);
	lines_delete(&l, 4);
	lines_write(fx->log, &l);
	assert_one_problem(fx, "seq 3-5: deleted: 3 records missing between line 3 (seq 2) and line 4 (seq 6)");
}

static void swapped_records_are_named(void **state)
{
	struct fixture *fx = *state;
	struct lines l;
	char *t, *rep;
	int r;

	write_log(fx);
	lines_read(fx->log, &l);
	t = l.v[4];
	l.v[4] = l.v[5];
	l.v[5] = t;
	lines_write(fx->log, &l);
	rep = verify(fx->log, fx->key, &r);
	assert_int_equal(r, -EBADMSG);
	assert_int_equal(count_lines(rep), 2);
	assert_non_null(strstr(rep, "line 5 (seq 5): reordered: out of place between line 4 (seq 3) and line 6 (seq 4)\n"));
	assert_non_null(strstr(rep, "line 6 (seq 4): reordered: out of place between line 5 (seq 5) and line 7 (seq 6)\n"));
	free(rep);
}

static void moved_record_is_named_once(void **state)
{
	struct fixture *fx = *state;
	struct lines l;
	char *moved;

	write_log(fx);
	lines_read(fx->log, &l);
	/* Record 8 moved up to sit after record 2. */
	moved = l.v[8];
	memmove(&l.v[4], &l.v[3], 5 * sizeof(char *));
	l.v[3] = moved;
	lines_write(fx->log, &l);
	assert_one_problem(fx, "line 4 (seq 8): reordered");
}

static void removed_seal_is_truncation(void **state)
{
	struct fixture *fx = *state;
	struct lines l;

	write_log(fx);
	lines_read(fx->log, &l);
	lines_delete(&l, l.n);
	lines_write(fx->log, &l);
	assert_one_problem(fx, "line 11 (seq 10): truncated: no seal after the last record");
}

static void removed_tail_is_truncation(void **state)
{
	struct fixture *fx = *state;
	struct lines l;

	write_log(fx);
	lines_read(fx->log, &l);
	for (int i = 0; i < 4; i++)
		lines_delete(&l, l.n);
	lines_write(fx->log, &l);
	assert_one_problem(fx, "line 8 (seq 7): truncated: no seal");
}

static void cut_mid_line_is_truncation(void **state)
{
	struct fixture *fx = *state;
	struct stat st;
	char *rep;
	int r;

	write_log(fx);
	assert_int_equal(stat(fx->log, &st), 0);
	assert_int_equal(truncate(fx->log, st.st_size - 30), 0);
	rep = verify(fx->log, fx->key, &r);
	assert_int_equal(r, -EBADMSG);
	assert_non_null(strstr(rep, "line 12: truncated: the last line has no newline"));
	assert_non_null(strstr(rep, "line 12: bad JSON"));
	assert_non_null(strstr(rep, "line 11 (seq 10): truncated: no seal"));
	assert_int_equal(count_lines(rep), 3);
	free(rep);
}

/* A seal that does not authenticate seals nothing. */
static void modified_seal_leaves_the_log_unsealed(void **state)
{
	struct fixture *fx = *state;
	struct audit_verify_stats st;
	struct lines l;
	char *rep = NULL;
	size_t len = 0;
	FILE *f;

	write_log(fx);
	lines_read(fx->log, &l);
	lines_edit(&l, l.n, "\"records\":11", "\"records\":12");
	lines_write(fx->log, &l);
	f = open_memstream(&rep, &len);
	assert_int_equal(audit_verify_stats(fx->log, fx->key, f, &st), -EBADMSG);
	fclose(f);
	assert_false(st.sealed);
	assert_int_equal(st.problems, 2);
	assert_non_null(strstr(rep, "line 11 (seq 10): truncated: no seal"));
	assert_non_null(strstr(rep, "line 12 (seq 11): modified: its HMAC does not match"));
	free(rep);
}

static void record_after_seal_is_named(void **state)
{
	struct fixture *fx = *state;
	struct lines l;

	write_log(fx);
	lines_read(fx->log, &l);
	lines_insert(&l, l.n + 1, l.v[4]);
	lines_edit(&l, l.n, "\"seq\":4", "\"seq\":12");
	lines_write(fx->log, &l);
	assert_one_problem(fx, "line 13 (seq 12): appended: after the seal (line 12 (seq 11))");
}

static void non_json_line_is_named(void **state)
{
	struct fixture *fx = *state;
	struct lines l;

	write_log(fx);
	lines_read(fx->log, &l);
	lines_insert(&l, 4, "this is not {json");
	lines_write(fx->log, &l);
	assert_one_problem(fx, "line 4: bad JSON: ");

	/* In place of a record, it stands for that record. */
	lines_read(fx->log, &l);
	lines_delete(&l, 4);
	lines_edit(&l, 6, "{", "{{");
	lines_write(fx->log, &l);
	assert_one_problem(fx, "line 6: bad JSON, where seq 5 belongs: ");
}

static void wrong_key_is_named(void **state)
{
	struct fixture *fx = *state;
	struct audit *other = NULL;
	char other_log[128], other_key[160];
	char *rep;
	int r;

	write_log(fx);
	snprintf(other_log, sizeof(other_log), "%s/other.jsonl", fx->dir);
	snprintf(other_key, sizeof(other_key), "%s/s2.key", fx->keys);
	assert_int_equal(audit_open(other_log, "s2", fx->keys, NULL, &other), 0);
	audit_close(other);
	assert_int_equal(audit_verify(other_log, other_key, NULL), 0);
	rep = verify(fx->log, other_key, &r);
	assert_int_equal(r, -EBADMSG);
	assert_non_null(strstr(rep, "wrong key: not one of the 12 records authenticates"));
	assert_int_equal(count_lines(rep), 1);
	free(rep);
	/* A file that is not a key, and no key at all, are errors, not verdicts. */
	assert_int_equal(audit_verify(fx->log, other_log, NULL), -EINVAL);
	assert_int_equal(audit_verify(fx->log, "/nonexistent/k.key", NULL), -ENOENT);
}

static void several_problems_in_file_order(void **state)
{
	struct fixture *fx = *state;
	struct lines l;
	char *rep, *a, *b, *c;
	int r;

	write_log(fx);
	lines_read(fx->log, &l);
	lines_edit(&l, 9, "\"rule\":\"git-push\"", "\"rule\":\"allow-all\"");
	lines_delete(&l, 3);
	lines_delete(&l, l.n);
	lines_write(fx->log, &l);
	rep = verify(fx->log, fx->key, &r);
	assert_int_equal(r, -EBADMSG);
	assert_int_equal(count_lines(rep), 3);
	a = strstr(rep, "seq 2: deleted");
	b = strstr(rep, "line 8 (seq 8): modified");
	c = strstr(rep, "line 10 (seq 10): truncated");
	assert_true(a && b && c && a < b && b < c);
	free(rep);
}

static void secrets_never_reach_the_file(void **state)
{
	struct fixture *fx = *state;
	struct audit *a = NULL;
	char *text = NULL;
	FILE *f;
	size_t len = 0;
	json_t *d;

	assert_int_equal(audit_open(fx->log, "s1", fx->keys, NULL, &a), 0);
	assert_int_equal(audit_add_secret(a, "anthropic", SECRET), 0);
	/* A secret that is a prefix of another: the longer one is replaced whole. */
	assert_int_equal(audit_add_secret(a, "short", "sk-ant-api03"), 0);
	assert_int_equal(audit_add_secret(a, "sentinel", "CANARY-7f3e"), 0);
	d = json_pack("{s:{s:s,s:s,s:{s:s,s:[s,{s:s}],s:s}},s:s}",
		      "event", "server", "http", "tool", "fetch",
		      "arguments", "header", "Authorization: Bearer " SECRET,
		      "list", "x" SECRET "y", SECRET "-as-key", "CANARY-7f3e",
		      "twice", SECRET SECRET,
		      "reason", "the key sk-ant-api03 alone");
	assert_int_equal(audit_write(a, "decision", d), 0);
	json_decref(d);
	d = json_pack("{s:s}", "note", "nothing secret");
	assert_int_equal(audit_write(a, SECRET, d), 0);   /* even in the type */
	json_decref(d);
	audit_close(a);

	assert_int_equal(audit_verify(fx->log, fx->key, stderr), 0);
	f = fopen(fx->log, "r");
	assert_non_null(f);
	assert_true(getdelim(&text, &len, 0, f) > 0);
	fclose(f);
	assert_null(strstr(text, SECRET));
	assert_null(strstr(text, "Zx9QvT4mNw8KpL2rJ7sB"));
	assert_null(strstr(text, "CANARY-7f3e"));
	assert_non_null(strstr(text, "\"header\":\"Authorization: Bearer [REDACTED:anthropic]\""));
	assert_non_null(strstr(text, "\"x[REDACTED:anthropic]y\""));
	assert_non_null(strstr(text, "{\"[REDACTED:anthropic]-as-key\":\"[REDACTED:sentinel]\"}"));
	assert_non_null(strstr(text, "\"[REDACTED:anthropic][REDACTED:anthropic]\""));
	assert_non_null(strstr(text, "\"the key [REDACTED:short] alone\""));
	assert_non_null(strstr(text, "\"type\":\"[REDACTED:anthropic]\""));
	free(text);
}

static void the_key_stays_in_its_file(void **state)
{
	struct fixture *fx = *state;
	char *key = NULL, *log = NULL;
	struct stat st;
	size_t len = 0;
	FILE *f;

	snprintf(fx->keys, sizeof(fx->keys), "%s/a/b/keys", fx->dir);
	snprintf(fx->key, sizeof(fx->key), "%s/s1.key", fx->keys);
	write_log(fx);
	assert_int_equal(stat(fx->keys, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_int_equal(stat(fx->key, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(st.st_size, 65);
	assert_int_equal(stat(fx->log, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	f = fopen(fx->key, "r");
	assert_non_null(f);
	assert_int_equal(getline(&key, &len, f), 65);
	fclose(f);
	key[64] = 0;
	f = fopen(fx->log, "r");
	assert_non_null(f);
	len = 0;
	assert_true(getdelim(&log, &len, 0, f) > 0);
	fclose(f);
	assert_null(strstr(log, key));
	free(key);
	free(log);
}

static void refuses_existing_files(void **state)
{
	struct fixture *fx = *state;
	struct audit *a = NULL;
	char other_log[128];
	struct stat st;
	int fd;

	fd = open(fx->log, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "keep\n", 5), 5);
	close(fd);
	assert_int_equal(audit_open(fx->log, "s1", fx->keys, NULL, &a), -EEXIST);
	assert_null(a);
	assert_int_equal(stat(fx->log, &st), 0);
	assert_int_equal(st.st_size, 5);
	assert_int_equal(stat(fx->key, &st), -1);   /* no key left behind */

	/* A session whose key exists is refused too, and leaves no log. */
	assert_int_equal(unlink(fx->log), 0);
	write_log(fx);
	snprintf(other_log, sizeof(other_log), "%s/again.jsonl", fx->dir);
	assert_int_equal(audit_open(other_log, "s1", fx->keys, NULL, &a), -EEXIST);
	assert_int_equal(stat(other_log, &st), -1);
	assert_int_equal(audit_verify(fx->log, fx->key, NULL), 0);
}

static void refuses_bad_arguments(void **state)
{
	struct fixture *fx = *state;
	struct audit *a = NULL;
	json_t *j;

	assert_int_equal(audit_open(fx->log, "../escape", fx->keys, NULL, &a), -EINVAL);
	assert_int_equal(audit_open(fx->log, ".hidden", fx->keys, NULL, &a), -EINVAL);
	assert_int_equal(audit_open(fx->log, "", fx->keys, NULL, &a), -EINVAL);
	j = json_pack("{s:i}", "seq", 7);
	assert_int_equal(audit_open(fx->log, "s1", fx->keys, j, &a), -EINVAL);
	assert_int_equal(access(fx->log, F_OK), -1);

	assert_int_equal(audit_open(fx->log, "s1", fx->keys, NULL, &a), 0);
	assert_int_equal(audit_write(a, "decision", j), -EINVAL);
	json_decref(j);
	j = json_pack("{s:s}", "hmac", "00");
	assert_int_equal(audit_write(a, "decision", j), -EINVAL);
	json_decref(j);
	j = json_pack("[]");
	assert_int_equal(audit_write(a, "decision", j), -EINVAL);
	json_decref(j);
	assert_int_equal(audit_write(a, "seal", NULL), -EINVAL);
	assert_int_equal(audit_write(a, "start", NULL), -EINVAL);
	assert_int_equal(audit_add_secret(a, "bad name", "value"), -EINVAL);
	assert_int_equal(audit_add_secret(a, "empty", ""), -EINVAL);
	/* None of the refused writes reached the file. */
	assert_int_equal(audit_write(a, "lifecycle", NULL), 0);
	j = json_pack("{s:s}", "records", "mine");
	assert_int_equal(audit_seal(a, j), -EINVAL);
	json_decref(j);
	assert_int_equal(audit_seal(a, NULL), 0);
	assert_int_equal(audit_write(a, "lifecycle", NULL), -EPIPE);
	assert_int_equal(audit_seal(a, NULL), -EPIPE);
	audit_close(a);
	assert_int_equal(audit_verify(fx->log, fx->key, stderr), 0);
}

static void group_writable_key_dir_is_refused(void **state)
{
	struct fixture *fx = *state;
	struct audit *a = NULL;

	assert_int_equal(mkdir(fx->keys, 0700), 0);
	assert_int_equal(chmod(fx->keys, 0770), 0);
	assert_int_equal(audit_open(fx->log, "s1", fx->keys, NULL, &a), -EPERM);
	assert_int_equal(access(fx->log, F_OK), -1);
}

static void close_seals(void **state)
{
	struct fixture *fx = *state;
	struct audit_verify_stats st;
	struct audit *a = NULL;

	assert_int_equal(audit_open(fx->log, "s1", fx->keys, NULL, &a), 0);
	assert_string_equal(audit_key_path(a), fx->key);
	assert_int_equal(audit_write(a, "lifecycle", NULL), 0);
	audit_close(a);
	assert_int_equal(audit_verify_stats(fx->log, fx->key, stderr, &st), 0);
	assert_int_equal(st.records, 3);
	assert_true(st.sealed);
}

static void empty_log_is_truncated(void **state)
{
	struct fixture *fx = *state;
	int fd;

	write_log(fx);
	fd = open(fx->log, O_TRUNC | O_WRONLY);
	assert_true(fd >= 0);
	close(fd);
	assert_one_problem(fx, "truncated: the log is empty");
}

/*
 * A record over AUDIT_RECORD_MAX is refused and puts the log down: from then
 * on decisions are dropped and counted, cordon's closing records still go
 * in, and the first audit_down() records why.
 */
static void oversized_record_puts_the_log_down(void **state)
{
	struct fixture *fx = *state;
	struct audit_verify_stats st;
	struct audit *a = NULL;
	char *big = malloc(AUDIT_RECORD_MAX + 1);
	json_t *d;
	uint64_t dropped = 0;
	FILE *f;
	char line[4096];
	bool said = false;

	assert_non_null(big);
	memset(big, 'x', AUDIT_RECORD_MAX);
	big[AUDIT_RECORD_MAX] = 0;
	assert_int_equal(audit_open(fx->log, "s1", fx->keys, NULL, &a), 0);
	assert_int_equal(audit_down(a, NULL), 0);
	d = json_pack("{s:s}", "argv", big);
	assert_int_equal(audit_write(a, "decision", d), -E2BIG);
	json_decref(d);
	free(big);
	d = decision(1);
	assert_int_equal(audit_write(a, "decision", d), -E2BIG);
	assert_int_equal(audit_down(a, &dropped), -E2BIG);
	assert_int_equal(dropped, 2);
	assert_int_equal(audit_write(a, "mcp", d), -E2BIG);
	json_decref(d);
	assert_int_equal(audit_write(a, "lifecycle", NULL), 0);
	assert_int_equal(audit_write(a, "budget", NULL), 0);
	audit_close(a);
	assert_int_equal(audit_verify_stats(fx->log, fx->key, stderr, &st), 0);
	assert_int_equal(st.records, 5);        /* start, audit-down, lifecycle, budget, seal */
	assert_true(st.sealed);
	f = fopen(fx->log, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		said |= strstr(line, "\"dropped\":2,\"error\":\"Argument list too long\","
				     "\"event\":\"audit-down\"") != NULL;
	fclose(f);
	assert_true(said);
}

static long long allocated(const char *path, long long *size)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	*size = st.st_size;
	return (long long)st.st_blocks * 512;
}

/*
 * The reserve: AUDIT_RESERVE bytes allocated past the end from the start,
 * renewed as the log grows, given back at close; record 0 states it.
 */
static void reserve_is_kept_and_given_back(void **state)
{
	struct fixture *fx = *state;
	struct audit *a = NULL;
	char *big = malloc(100000);
	long long size, alloc;
	FILE *f;
	char line[512];

	assert_non_null(big);
	memset(big, 'y', 99999);
	big[99999] = 0;
	assert_int_equal(audit_open(fx->log, "s1", fx->keys, NULL, &a), 0);
	f = fopen(fx->log, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	if (strstr(line, "\"reserve\":0,")) {
		audit_close(a);
		free(big);
		skip();         /* this filesystem has no fallocate(2) */
	}
	assert_non_null(strstr(line, "\"reserve\":4194304,"));
	alloc = allocated(fx->log, &size);
	assert_true(size < 4096 && alloc >= AUDIT_RESERVE);
	/* 3 MB of records: past half the reserve, so it was renewed. */
	for (int i = 0; i < 30; i++) {
		json_t *d = json_pack("{s:s}", "argv", big);

		assert_int_equal(audit_write(a, "decision", d), 0);
		json_decref(d);
	}
	alloc = allocated(fx->log, &size);
	assert_true(size > 3000000);
	assert_true(alloc >= size + AUDIT_RESERVE / 2);
	assert_int_equal(audit_down(a, NULL), 0);
	audit_close(a);
	alloc = allocated(fx->log, &size);
	assert_true(alloc <= size + 65536);
	free(big);
}

/* --- resuming a dead writer's log (audit_resume) ------------------------------------ */

/* What a writer killed between records leaves: start and N_DECISIONS decisions, no seal. */
static void write_dead_log(struct fixture *fx)
{
	pid_t pid = fork();
	int st;

	assert_true(pid >= 0);
	if (pid == 0) {
		struct audit *a = NULL;

		if (audit_open(fx->log, "s1", fx->keys, NULL, &a) < 0)
			_exit(1);
		for (int i = 1; i <= N_DECISIONS; i++) {
			json_t *d = decision(i);

			if (audit_write(a, "decision", d) < 0)
				_exit(1);
			json_decref(d);
		}
		(void)audit_sync_key(a);
		_exit(0);       /* no seal, no close: as if killed */
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static char *file_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0;

	assert_non_null(f);
	assert_true(getdelim(&buf, &cap, '\0', f) >= 0);
	fclose(f);
	return buf;
}

/*
 * The ender of a session resumes the log: its record follows the dead
 * writer's last one in the chain, the seal closes it, the log verifies, and
 * the dead writer's reserve is given back.
 */
static void resume_closes_a_dead_writers_log(void **state)
{
	struct fixture *fx = *state;
	struct audit_verify_stats st;
	struct audit *a = NULL;
	struct lines l;
	long long size, alloc;
	json_t *f = json_pack("{s:s,s:i}", "event", "reaped", "tasks_killed", 2);
	int r;
	char *rep;

	write_dead_log(fx);
	rep = verify(fx->log, fx->key, &r);
	assert_int_equal(r, -EBADMSG);
	assert_non_null(strstr(rep, "truncated: no seal"));
	free(rep);
	assert_int_equal(audit_resume(fx->log, fx->key, &a), 0);
	assert_string_equal(audit_session(a), "s1");
	assert_int_equal(audit_write(a, "lifecycle", f), 0);
	json_decref(f);
	audit_close(a);
	assert_int_equal(audit_verify_stats(fx->log, fx->key, stderr, &st), 0);
	assert_true(st.sealed);
	assert_int_equal(st.records, N_DECISIONS + 3);
	lines_read(fx->log, &l);
	assert_int_equal(l.n, N_DECISIONS + 3);
	assert_non_null(strstr(l.v[N_DECISIONS + 1], "\"event\":\"reaped\""));
	assert_non_null(strstr(l.v[N_DECISIONS + 1], "\"seq\":11,"));
	assert_non_null(strstr(l.v[N_DECISIONS + 2], "\"type\":\"seal\""));
	for (size_t i = 0; i < l.n; i++)
		free(l.v[i]);
	alloc = allocated(fx->log, &size);
	assert_true(alloc <= size + 65536);
	/* Sealed now: a second ender finds nothing to do. */
	assert_int_equal(audit_resume(fx->log, fx->key, &a), -EALREADY);
}

/* audit_resume refuses the log with WANT, and the file is byte for byte as it was. */
static void refused_untouched(struct fixture *fx, int want)
{
	struct audit *a = NULL;
	char *before = file_text(fx->log), *after;

	assert_int_equal(audit_resume(fx->log, fx->key, &a), want);
	assert_null(a);
	after = file_text(fx->log);
	assert_string_equal(before, after);
	free(before);
	free(after);
}

/* Anything but a whole, authentic, unsealed chain is left byte for byte as it was. */
static void resume_leaves_other_logs_alone(void **state)
{
	struct fixture *fx = *state;
	struct audit *a = NULL;
	struct stat st;
	struct lines l;
	char other[200];

	/* A sealed log. */
	write_log(fx);
	refused_untouched(fx, -EALREADY);
	assert_int_equal(unlink(fx->log), 0);
	assert_int_equal(unlink(fx->key), 0);

	/* Its last record cut mid-line (killed inside a write). */
	write_dead_log(fx);
	assert_int_equal(stat(fx->log, &st), 0);
	assert_int_equal(truncate(fx->log, st.st_size - 30), 0);
	refused_untouched(fx, -EBADMSG);

	/* An edited record. */
	assert_int_equal(unlink(fx->log), 0);
	assert_int_equal(unlink(fx->key), 0);
	write_dead_log(fx);
	lines_read(fx->log, &l);
	lines_edit(&l, 3, "deny", "allow");
	lines_write(fx->log, &l);
	refused_untouched(fx, -EBADMSG);

	/* A record deleted from the middle. */
	assert_int_equal(unlink(fx->log), 0);
	assert_int_equal(unlink(fx->key), 0);
	write_dead_log(fx);
	lines_read(fx->log, &l);
	lines_delete(&l, 5);
	lines_write(fx->log, &l);
	refused_untouched(fx, -EBADMSG);

	/* The wrong key; a missing log; a symlink in the log's place. */
	assert_int_equal(unlink(fx->log), 0);
	assert_int_equal(unlink(fx->key), 0);
	write_dead_log(fx);
	snprintf(other, sizeof(other), "%s/other.key", fx->dir);
	{
		FILE *k = fopen(other, "w");

		assert_non_null(k);
		fprintf(k, "%064d\n", 7);
		fclose(k);
	}
	assert_int_equal(audit_resume(fx->log, other, &a), -EBADMSG);
	snprintf(other, sizeof(other), "%s/nothing.jsonl", fx->dir);
	assert_int_equal(audit_resume(other, fx->key, &a), -ENOENT);
	assert_int_equal(symlink(fx->log, other), 0);
	assert_int_equal(audit_resume(other, fx->key, &a), -ELOOP);
	assert_int_equal(audit_resume(NULL, fx->key, &a), -EINVAL);
}

#define THREADS 4
#define PER_THREAD 250

static void *writer(void *arg)
{
	struct audit *a = arg;
	long bad = 0;

	for (int i = 0; i < PER_THREAD; i++) {
		json_t *d = decision(i);

		bad += audit_write(a, "decision", d) != 0;
		json_decref(d);
	}
	return (void *)bad;
}

static void concurrent_writers_keep_the_chain(void **state)
{
	struct fixture *fx = *state;
	struct audit_verify_stats st;
	struct audit *a = NULL;
	pthread_t t[THREADS];

	assert_int_equal(audit_open(fx->log, "s1", fx->keys, NULL, &a), 0);
	for (int i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, writer, a), 0);
	for (int i = 0; i < THREADS; i++) {
		void *bad;

		assert_int_equal(pthread_join(t[i], &bad), 0);
		assert_int_equal((long)bad, 0);
	}
	assert_int_equal(audit_seal(a, NULL), 0);
	audit_close(a);
	assert_int_equal(audit_verify_stats(fx->log, fx->key, stderr, &st), 0);
	assert_int_equal(st.lines, THREADS * PER_THREAD + 2);
	assert_int_equal(st.records, THREADS * PER_THREAD + 2);
	assert_true(st.sealed);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(intact_log_verifies, setup, teardown),
		cmocka_unit_test_setup_teardown(oversized_record_puts_the_log_down, setup, teardown),
		cmocka_unit_test_setup_teardown(reserve_is_kept_and_given_back, setup, teardown),
		cmocka_unit_test_setup_teardown(records_follow_the_format, setup, teardown),
		cmocka_unit_test_setup_teardown(modified_field_is_named, setup, teardown),
		cmocka_unit_test_setup_teardown(modified_hmac_is_named, setup, teardown),
		cmocka_unit_test_setup_teardown(uppercase_hmac_is_modified, setup, teardown),
		cmocka_unit_test_setup_teardown(inserted_copy_with_forged_seq_is_named, setup, teardown),
		cmocka_unit_test_setup_teardown(replayed_copy_is_named, setup, teardown),
		cmocka_unit_test_setup_teardown(deleted_record_is_named, setup, teardown),
		cmocka_unit_test_setup_teardown(deleted_run_is_named, setup, teardown),
		cmocka_unit_test_setup_teardown(swapped_records_are_named, setup, teardown),
		cmocka_unit_test_setup_teardown(moved_record_is_named_once, setup, teardown),
		cmocka_unit_test_setup_teardown(removed_seal_is_truncation, setup, teardown),
		cmocka_unit_test_setup_teardown(removed_tail_is_truncation, setup, teardown),
		cmocka_unit_test_setup_teardown(cut_mid_line_is_truncation, setup, teardown),
		cmocka_unit_test_setup_teardown(modified_seal_leaves_the_log_unsealed, setup, teardown),
		cmocka_unit_test_setup_teardown(record_after_seal_is_named, setup, teardown),
		cmocka_unit_test_setup_teardown(non_json_line_is_named, setup, teardown),
		cmocka_unit_test_setup_teardown(wrong_key_is_named, setup, teardown),
		cmocka_unit_test_setup_teardown(several_problems_in_file_order, setup, teardown),
		cmocka_unit_test_setup_teardown(secrets_never_reach_the_file, setup, teardown),
		cmocka_unit_test_setup_teardown(the_key_stays_in_its_file, setup, teardown),
		cmocka_unit_test_setup_teardown(refuses_existing_files, setup, teardown),
		cmocka_unit_test_setup_teardown(refuses_bad_arguments, setup, teardown),
		cmocka_unit_test_setup_teardown(group_writable_key_dir_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(close_seals, setup, teardown),
		cmocka_unit_test_setup_teardown(empty_log_is_truncated, setup, teardown),
		cmocka_unit_test_setup_teardown(concurrent_writers_keep_the_chain, setup, teardown),
		cmocka_unit_test_setup_teardown(resume_closes_a_dead_writers_log, setup, teardown),
		cmocka_unit_test_setup_teardown(resume_leaves_other_logs_alone, setup, teardown),
	};

	return cmocka_run_group_tests_name("audit", tests, NULL, NULL);
}
