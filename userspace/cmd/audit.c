// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `cordon audit verify | show | prune`: check a session's audit log, read
 * it, and remove old ones by the admin's retention rule.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <getopt.h>
#include <sys/stat.h>
#include <time.h>
#include "audit.h"
#include "audit_prune.h"
#include "audit_session.h"
#include "audit_ship.h"
#include "instance.h"
#include "reap.h"
#include "cmd.h"
#include "options.h"
#include "util.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: cordon audit verify FILE [--key KEYFILE | --key-dir DIR] [--anchor FILE|-] [--json]\n"
		"       cordon audit show [--json] FILE\n"
		"       cordon audit prune [--max-age AGE] [--max-count N] [--max-size SIZE]\n"
		"                          [--dry-run] [--json] [--config FILE] [--dir DIR]\n"
		"                          [--key-dir DIR]\n"
		"\n"
		"verify  check every record's HMAC, the hash chain and the seal; name each\n"
		"        problem (modified, inserted, deleted, reordered, appended, bad JSON,\n"
		"        truncated, wrong key) by line and seq.  The key defaults to\n"
		"        DIR/SESSION.key: SESSION from the first record, DIR by default\n"
		"        " AUDIT_KEY_DIR ".\n"
		"        --anchor: also check the log against what a collector received\n"
		"        (its syslog file or `journalctl -o export`, - for stdin): every\n"
		"        record it holds must be in the log, byte for byte, which a root\n"
		"        who rewrites the log with the key cannot fake (docs/audit.md).\n"
		"show    one line per record: time, seq, type, pid/comm, decision, what was\n"
		"        asked, rule, reason.  It does not verify: run verify first.\n"
		"prune   remove the oldest sealed logs of DIR (" AUDIT_DIR ") with their\n"
		"        keys, by the rule in " AUDIT_RETENTION_CONF " (or --config FILE),\n"
		"        each member overridden by its option: --max-age 30d (s m h d w),\n"
		"        --max-count 1000, --max-size 2G (K M G T).  Never a log a session\n"
		"        still writes, nor an unsealed one; nothing outside DIR and the key\n"
		"        directory, no symlink followed.  --dry-run says what it would remove.\n"
		"--json  verify: one object (file, intact, records, problems, lines, anchor);\n"
		"        show: the records as JSON lines, as they are in the log (ASCII-escaped);\n"
		"        prune: one object (pruned, kept, remaining)\n"
		"Exit status: 0 intact (verify), shown or pruned; 1 tampered, or a log that\n"
		"could not be removed; 2 usage or I/O error.\n");
}

/*
 * The log against the anchors a collector kept (audit_ship.c): 0 every
 * anchor matches, 1 not, 2 an I/O error.  Reports on stdout.
 */
static int verify_anchor(const char *file, const char *anchor, FILE *out)
{
	_cleanup_fclose_ FILE *own = NULL;
	FILE *f = stdin;
	size_t n = 0;
	int r;

	if (strcmp(anchor, "-")) {
		own = fopen(anchor, "re");
		if (!own) {
			log_err("audit: cannot read the anchors %s: %m", anchor);
			return 2;
		}
		f = own;
	}
	r = audit_anchor_check(file, f, out, out, &n);
	if (r < 0 && r != -EBADMSG) {
		log_err("audit: cannot check %s against %s: %s", file, anchor, strerror(-r));
		return 2;
	}
	fprintf(out, "%s: %s the collector's %zu anchor%s\n", file,
		r == 0 ? "matches" : "does NOT match", n, n == 1 ? "" : "s");
	return r == 0 ? 0 : 1;
}

/*
 * A log to read must be a file: a directory passed access(R_OK) and then
 * read as "Input/output error".  2 (usage or I/O), said, or 0.
 */
static int check_log_file(const char *file)
{
	struct stat st;

	if (stat(file, &st) < 0 || access(file, R_OK) < 0) {
		log_err("audit: cannot read %s: %m", file);
		return -errno;
	}
	if (S_ISDIR(st.st_mode)) {
		log_err("audit: %s is a directory: give a session's log (%s/SESSION.jsonl)", file,
			file);
		return -EISDIR;
	}
	return 0;
}

/* Split REPORT's lines into a JSON array of strings. */
static json_t *lines_json(const char *report)
{
	json_t *a = json_array();

	for (const char *p = report; p && *p; ) {
		size_t n = strcspn(p, "\n");

		json_array_append_new(a, json_stringn(p, n));
		p += n + (p[n] == '\n');
	}
	return a;
}

/*
 * `audit verify --json`: one object, the same verdict as the text (exit 0
 * intact, 1 tampered, 2 I/O).  R is audit_verify_stats's answer, REPORT the
 * problem lines it wrote.
 */
static int verify_json(const char *file, int r, const struct audit_verify_stats *st,
		       const char *report, const char *anchor)
{
	json_t *o = json_pack("{s:s,s:I,s:I,s:I,s:o}", "file", file,
			      "records", (json_int_t)st->records, "lines", (json_int_t)st->lines,
			      "problem_count", (json_int_t)st->problems, "problems", lines_json(report));
	bool intact = r == 0;
	int code;

	if (anchor) {
		_cleanup_free_ char *arep = NULL;
		size_t alen = 0;
		FILE *af = open_memstream(&arep, &alen);
		int ra;

		if (!af) {
			json_decref(o);
			return 2;
		}
		ra = verify_anchor(file, anchor, af);
		fclose(af);
		if (ra == 2) {
			json_decref(o);
			return 2;
		}
		json_object_set_new(o, "anchor", json_pack("{s:s,s:b,s:o}", "file", anchor,
							     "matches", ra == 0, "report",
							     lines_json(arep)));
		intact = intact && ra == 0;
	}
	json_object_set_new(o, "intact", json_boolean(intact));
	json_object_set_new(o, "sealed", json_boolean(r == 0));
	json_dumpf(o, stdout, JSON_INDENT(2));
	fputc('\n', stdout);
	json_decref(o);
	code = intact ? 0 : 1;
	return code;
}

static int cmd_verify(int argc, char **argv)
{
	_cleanup_free_ char *default_key = NULL;
	const char *key = NULL, *key_dir = NULL, *anchor = NULL, *file;
	bool json = false;
	const struct cmd_option opts[] = {
		{ "key", &key, NULL },
		{ "key-dir", &key_dir, NULL },
		{ "anchor", &anchor, NULL },
		{ "json", NULL, &json },
		{}
	};
	struct audit_verify_stats st = {};
	_cleanup_free_ char *report = NULL;
	size_t report_len = 0;
	FILE *out = stdout;
	int r, ra = -1;

	r = options_parse(argc, argv, opts, usage);
	if (r)
		return r < 0 ? 2 : 0;
	if (key && key_dir) {
		log_err("audit verify: --key and --key-dir conflict (--key names the key itself)");
		return 2;
	}
	if (argc - optind != 1) {
		usage(stderr);
		return 2;
	}
	file = argv[optind];
	if (check_log_file(file) < 0)
		return 2;
	if (!key) {
		r = audit_log_key_path(file, key_dir, &default_key);
		if (r == -EBADMSG) {
			log_err("audit: %s: the first line names no session, so no key; give --key KEYFILE",
				file);
			return 2;
		}
		if (r < 0) {
			log_err("audit: cannot read %s: %s", file, strerror(-r));
			return 2;
		}
		key = default_key;
	}
	if (access(key, R_OK) < 0) {
		log_err("audit: cannot read the key %s: %m", key);
		return 2;
	}
	/* --json: the problem lines verify reports, kept for the object. */
	if (json && !(out = open_memstream(&report, &report_len))) {
		log_err("audit: %m");
		return 2;
	}
	r = audit_verify_stats(file, key, out, &st);
	if (json)
		fclose(out);
	if (r == -EINVAL) {
		log_err("audit: %s is not an audit key (64 hex digits)", key);
		return 2;
	}
	if (r < 0 && r != -EBADMSG) {
		log_err("audit: cannot verify %s: %s", file, strerror(-r));
		return 2;
	}
	if (json)
		return verify_json(file, r, &st, report, anchor);
	if (anchor) {
		ra = verify_anchor(file, anchor, stdout);

		if (ra == 2)
			return 2;
		if (ra == 1 && r == 0) {
			printf("%s: TAMPERED: the key verifies it, the collector's anchors do not (a "
			       "log rewritten by a holder of the key)\n", file);
			return 1;
		}
	}
	if (r == 0) {
		printf("%s: intact: %zu records, sealed\n", file, st.records);
		return 0;
	}
	printf("%s: TAMPERED: %zu problem%s (%zu of %zu lines authenticate)\n", file, st.problems,
	       st.problems == 1 ? "" : "s", st.records, st.lines);
	return 1;
}

/* --- show ------------------------------------------------------------------------ */

static void put_str(FILE *f, const char *s)
{
	cmd_put_safe(f, s, strlen(s));
}

/* Any JSON value as compact ASCII JSON: escaped, so safe as it is. */
static void put_json(FILE *f, json_t *v)
{
	_cleanup_free_ char *s = json_dumps(v, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_ENCODE_ANY);

	fputs(s ? s : "?", f);
}

/* A scalar as text: strings bare (escaped), the rest as JSON. */
static void put_scalar(FILE *f, json_t *v)
{
	if (json_is_string(v))
		cmd_put_safe(f, json_string_value(v), json_string_length(v));
	else
		put_json(f, v);
}

/* An array of scalars, space-separated ("git push origin main"). */
static void put_words(FILE *f, json_t *arr)
{
	size_t i;
	json_t *x;

	json_array_foreach(arr, i, x) {
		if (i)
			fputc(' ', f);
		put_scalar(f, x);
	}
}

/*
 * The arguments of a tool call as a person reads them: an argv or a command
 * line, HOST:PORT, a URL or a path; anything else as JSON.
 */
static void put_arguments(FILE *f, json_t *args)
{
	json_t *host = json_object_get(args, "host"), *port = json_object_get(args, "port");
	static const char *const one[] = { "command", "cmd", "url", "path", "file", "query" };

	if (json_is_string(args)) {
		put_scalar(f, args);
		return;
	}
	if (json_is_array(args)) {
		put_words(f, args);
		return;
	}
	if (json_is_array(json_object_get(args, "argv"))) {
		put_words(f, json_object_get(args, "argv"));
		return;
	}
	if (json_is_string(host)) {
		put_scalar(f, host);
		if (port) {
			fputc(':', f);
			put_scalar(f, port);
		}
		return;
	}
	for (size_t i = 0; i < ARRAY_SIZE(one); i++)
		if (json_is_string(json_object_get(args, one[i]))) {
			put_scalar(f, json_object_get(args, one[i]));
			return;
		}
	if (json_object_size(args))
		put_json(f, args);
}

/*
 * "shell.exec git push origin main" from a decision's event, "openat(/etc/passwd,
 * O_RDONLY)" from its raw syscall, or a lifecycle record's event as it is.
 */
static void put_summary(FILE *f, json_t *rec)
{
	json_t *ev = json_object_get(rec, "event"), *raw = json_object_get(rec, "raw");
	json_t *server = json_object_get(ev, "server"), *tool = json_object_get(ev, "tool");
	json_t *args, *name, *x;
	const char *k;
	bool first = true;

	if (ev && !json_is_object(ev)) {
		put_scalar(f, ev);
		return;
	}
	if (json_is_object(ev)) {
		if (json_is_string(server))
			put_scalar(f, server);
		if (json_is_string(server) && json_is_string(tool))
			fputc('.', f);
		if (json_is_string(tool))
			put_scalar(f, tool);
		args = json_object_get(ev, "arguments");
		if (args && !(json_is_object(args) && json_object_size(args) == 0)) {
			fputc(' ', f);
			put_arguments(f, args);
		}
		return;
	}
	name = json_object_get(raw, "syscall") ?: json_object_get(raw, "name") ?: json_object_get(raw, "nr");
	if (name)
		put_scalar(f, name);
	else
		fputs("raw", f);
	fputc('(', f);
	args = json_object_get(raw, "args");
	if (json_is_array(args)) {
		size_t i;

		json_array_foreach(args, i, x) {
			fputs(i ? ", " : "", f);
			put_scalar(f, x);
		}
	} else {
		json_object_foreach(raw, k, x) {
			if (x == name)
				continue;
			fprintf(f, "%s", first ? "" : ", ");
			put_str(f, k);
			fputc('=', f);
			put_scalar(f, x);
			first = false;
		}
	}
	fputc(')', f);
}

static void show_record(FILE *f, json_t *rec)
{
	/* Members shown in their own place, or not at all (the chain's own). */
	static const char *const shown[] = { "seq", "time", "session", "type", "prev", "hmac", "pid",
					     "comm", "decision", "event", "raw", "rule", "reason",
					     "approver" };
	json_t *seq = json_object_get(rec, "seq"), *pid = json_object_get(rec, "pid");
	json_t *comm = json_object_get(rec, "comm"), *v;
	const char *type = json_string_value(json_object_get(rec, "type")) ?: "?";
	const char *k;

	put_str(f, json_string_value(json_object_get(rec, "time")) ?: "?");
	if (json_is_integer(seq))
		fprintf(f, " %5lld", (long long)json_integer_value(seq));
	else
		fputs("     ?", f);
	fputs(" ", f);
	put_str(f, type);
	fprintf(f, "%*s", strlen(type) < 9 ? (int)(9 - strlen(type)) : 0, "");
	if (!strcmp(type, "start")) {
		fputs(" session=", f);
		put_json(f, json_object_get(rec, "session"));
	}
	if (pid || comm) {
		fputc(' ', f);
		if (pid)
			put_scalar(f, pid);
		if (pid && comm)
			fputc('/', f);
		if (comm)
			put_scalar(f, comm);
	}
	if ((v = json_object_get(rec, "decision"))) {
		fputc(' ', f);
		put_scalar(f, v);
	}
	if (json_object_get(rec, "event") || json_is_object(json_object_get(rec, "raw"))) {
		fputc(' ', f);
		put_summary(f, rec);
	}
	if ((v = json_object_get(rec, "rule"))) {
		fputs(" rule=", f);
		put_scalar(f, v);
	}
	if ((v = json_object_get(rec, "reason"))) {
		fputs(" reason=", f);
		put_json(f, v);
	}
	if ((v = json_object_get(rec, "approver"))) {
		fputs(" approver=", f);
		put_scalar(f, v);
	}
	json_object_foreach(rec, k, v) {
		bool known = false;

		for (size_t i = 0; i < ARRAY_SIZE(shown) && !known; i++)
			known = !strcmp(k, shown[i]);
		if (known)
			continue;
		fputc(' ', f);
		put_str(f, k);
		fputc('=', f);
		put_json(f, v);
	}
	fputc('\n', f);
}

static int cmd_show(int argc, char **argv)
{
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *buf = NULL;
	size_t cap = 0, lineno = 0;
	bool json = false;
	const struct cmd_option opts[] = {
		{ "json", NULL, &json },
		{}
	};
	const char *file;
	ssize_t n;
	int r;

	r = options_parse(argc, argv, opts, usage);
	if (r)
		return r < 0 ? 2 : 0;
	if (argc - optind != 1) {
		usage(stderr);
		return 2;
	}
	file = argv[optind];
	if (check_log_file(file) < 0)
		return 2;
	f = fopen(file, "re");
	if (!f) {
		log_err("audit: cannot read %s: %m", file);
		return 2;
	}
	errno = 0;
	while ((n = getline(&buf, &cap, f)) > 0) {
		json_t *rec = json_loadb(buf, (size_t)n, 0, NULL);

		lineno++;
		if (json) {
			/* Re-encoded as ASCII: agent text cannot reach a terminal raw. */
			json_t *o = json_is_object(rec) ? json_incref(rec) :
				    json_pack("{s:I,s:s,s:s%}", "line", (json_int_t)lineno,
					      "error", "not a record", "text", buf,
					      (size_t)n - (buf[n - 1] == '\n'));

			put_json(stdout, o);
			fputc('\n', stdout);
			json_decref(o);
		} else if (json_is_object(rec)) {
			show_record(stdout, rec);
		} else {
			printf("line %zu: not a record: ", lineno);
			cmd_put_safe(stdout, buf, (size_t)n > 80 ? 80 : (size_t)n - (buf[n - 1] == '\n'));
			fputs((size_t)n > 80 ? "...\n" : "\n", stdout);
		}
		json_decref(rec);
		errno = 0;
	}
	if (ferror(f)) {
		log_err("audit: cannot read %s: %m", file);
		return 2;
	}
	return 0;
}

/* --- prune ----------------------------------------------------------------------- */

/* Each member of the rule given on the command line replaces the file's. */
static int prune_rule(const char *config, const char *age, const char *count, const char *size,
		      struct audit_retention *r)
{
	char why[PATH_MAX + 256];
	int rc;

	rc = audit_retention_load(config ?: AUDIT_RETENTION_CONF, r, why, sizeof(why));
	if (rc < 0 && !(rc == -ENOENT && !config)) {
		log_err("audit: prune: %s", why);
		return rc;
	}
	if (age) {
		if (audit_parse_age(age, &r->max_age_s) < 0) {
			log_err("audit: prune: --max-age %s: not an age (a number and s, m, h, d or "
				"w: 30d)", age);
			return -EINVAL;
		}
		r->has_age = true;
	}
	if (count) {
		if (audit_parse_count(count, &r->max_count) < 0) {
			log_err("audit: prune: --max-count %s: not a count", count);
			return -EINVAL;
		}
		r->has_count = true;
	}
	if (size) {
		if (audit_parse_size(size, &r->max_size) < 0) {
			log_err("audit: prune: --max-size %s: not a size (bytes, or a number and K, "
				"M, G or T: 2G)", size);
			return -EINVAL;
		}
		r->has_size = true;
	}
	if (!r->has_age && !r->has_count && !r->has_size) {
		log_err("audit: prune: no retention rule: give --max-age, --max-count or "
			"--max-size, or set them in %s", config ?: AUDIT_RETENTION_CONF);
		return -EINVAL;
	}
	return 0;
}

/*
 * A directory prune may delete in: no symlink, root's, and no one else may
 * write it (a name another user could plant or swap is not prune's to
 * judge).  Its descriptor, or -errno logged.
 */
static int prune_dir(const char *what, const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;

	if (fd < 0) {
		log_err("audit: prune: the %s %s: %m%s", what, path,
			errno == ELOOP || errno == ENOTDIR ? " (a symlink is not followed)" : "");
		return -EINVAL;
	}
	if (fstat(fd, &st) < 0 || st.st_uid != 0 || (st.st_mode & 022)) {
		log_err("audit: prune: the %s %s must be root's and writable by root only", what,
			path);
		close(fd);
		return -EPERM;
	}
	return fd;
}

static const char *const state_names[] = {
	[AUDIT_PRUNE_SEALED] = "sealed", [AUDIT_PRUNE_UNSEALED] = "unsealed",
	[AUDIT_PRUNE_LIVE] = "live", [AUDIT_PRUNE_NOT_LOG] = "not-a-log",
};

/* What was pruned, to the collectors cordon run ships to (the same environment). */
static void prune_ship(const char *dir, const struct audit_prune_entry *e)
{
	static const struct { const char *var; enum audit_ship_kind kind; const char *dflt; } to[] = {
		{ "CORDON_AUDIT_SYSLOG", AUDIT_SHIP_SYSLOG, NULL },
		{ "CORDON_AUDIT_JOURNAL", AUDIT_SHIP_JOURNAL, AUDIT_JOURNAL_SOCKET },
	};

	for (size_t i = 0; i < ARRAY_SIZE(to); i++) {
		const char *v = getenv(to[i].var), *path;
		struct audit_ship *sh;
		char text[PATH_MAX + 512];
		json_t *f;
		int r;

		if (!v || !*v)
			continue;
		path = to[i].dflt && !strcmp(v, "1") ? to[i].dflt : v;
		if (path[0] != '/' || audit_ship_new(to[i].kind, path, &sh) < 0) {
			log_warn("audit: prune: %s=%s: not shipped", to[i].var, v);
			continue;
		}
		snprintf(text, sizeof(text), "cordon audit prune: removed %s/%s (session %s, %llu "
			 "bytes) and its key, by %s", dir, e->name, e->session,
			 (unsigned long long)e->size, e->rule);
		f = json_pack("{s:s,s:s,s:I,s:I,s:s,s:b}", "session", e->session, "log", e->name,
			      "bytes", (json_int_t)e->size, "mtime", (json_int_t)e->mtime,
			      "rule", e->rule, "key", e->has_key);
		r = f ? audit_ship_note(sh, "prune", AUDIT_SD_PRUNE, f, text) : -ENOMEM;
		if (r < 0)
			log_warn("audit: prune: cannot send to %s: %s", audit_ship_name(sh),
				 strerror(-r));
		json_decref(f);
		audit_ship_free(sh);
	}
}

/*
 * A session of `cordon run` is live while its run directory is held or its
 * log's note is there (reap.h).  A log of another writer (`cordon
 * mcp-proxy --audit`, `http-proxy --audit`: their sessions have no run
 * directory) is done when sealed: its writer seals it last.
 */
static int prune_live(const char *session)
{
	if (!reap_session_name(session))
		return 0;
	/*
	 * Every floor instance's logs share the log directory (instance.h): a
	 * session is taken for live while its own instance says so (lock or
	 * note; unknown is live) or a run directory of that name is left in
	 * any instance (until `cordon floor gc` of that instance reaps it).
	 */
	return reap_session_live(session) != 0 ||
	       instance_session_run_dir_any(CORDON_RUN_DIR, session) != 0;
}

static int cmd_prune(int argc, char **argv)
{
	const char *age = NULL, *count = NULL, *size = NULL, *config = NULL, *dir = NULL,
		   *key_dir = NULL;
	bool dry_run = false, json = false;
	const struct cmd_option opts[] = {
		{ "max-age", &age, NULL },
		{ "max-count", &count, NULL },
		{ "max-size", &size, NULL },
		{ "config", &config, NULL },
		{ "dir", &dir, NULL },
		{ "key-dir", &key_dir, NULL },
		{ "dry-run", NULL, &dry_run },
		{ "json", NULL, &json },
		{}
	};
	_cleanup_close_ int lfd = -1, kfd = -1, lock = -1;
	_cleanup_free_ struct audit_prune_entry *e = NULL;
	struct audit_retention rule = {};
	uint64_t pruned = 0, pruned_bytes = 0, left = 0, left_bytes = 0;
	json_t *out = NULL, *jp = NULL, *jk = NULL;
	int failed = 0, r;
	size_t n = 0;

	r = options_parse(argc, argv, opts, usage);
	if (r)
		return r < 0 ? 2 : 0;
	if (argc - optind != 0) {
		log_err("audit: prune: takes no operand ('%s'): the directory is --dir DIR",
			argv[optind]);
		return 2;
	}
	if (prune_rule(config, age, count, size, &rule) < 0)
		return 2;
	dir = dir ?: AUDIT_DIR;
	key_dir = key_dir ?: getenv("CORDON_AUDIT_KEY_DIR") ?: AUDIT_KEY_DIR;
	lfd = prune_dir("log directory", dir);
	if (lfd < 0)
		return 2;
	kfd = prune_dir("key directory", key_dir);
	if (kfd < 0)
		return 2;
	/*
	 * Under the floor lock, as a reaper: no session starts (its run
	 * directory and note are made under it) or is reaped while the logs'
	 * liveness is read and they are removed.
	 */
	lock = reap_floor_lock();
	if (lock < 0) {
		log_err("audit: prune: %s/.floor.lock: %s", instance_run_dir(), strerror(-lock));
		return 2;
	}
	r = audit_prune_scan(lfd, kfd, prune_live, &e, &n);
	if (r < 0) {
		log_err("audit: prune: cannot read %s: %s", dir, strerror(-r));
		return 2;
	}
	audit_prune_plan(e, n, &rule, time(NULL));
	if (json) {
		out = json_object();
		jp = json_array();
		jk = json_array();
	}
	for (size_t i = 0; i < n; i++) {
		if (!e[i].remove) {
			if (e[i].state != AUDIT_PRUNE_NOT_LOG) {
				left++;
				left_bytes += e[i].size + e[i].key_size;
			}
			if (e[i].state == AUDIT_PRUNE_SEALED)
				continue;
			if (json)
				json_array_append_new(jk, json_pack("{s:s,s:s,s:s,s:s}", "log",
					e[i].name, "session", e[i].session, "state",
					state_names[e[i].state], "why", e[i].why ?: ""));
			else
				printf("kept %s/%s: %s\n", dir, e[i].name, e[i].why ?: "");
			continue;
		}
		r = dry_run ? 0 : audit_prune_remove(lfd, kfd, &e[i]);
		if (r < 0) {
			log_err("audit: prune: cannot remove %s/%s: %s", dir, e[i].name,
				r == -ESTALE ? "it changed since it was read" : strerror(-r));
			failed++;
			continue;
		}
		pruned++;
		pruned_bytes += e[i].size + (e[i].has_key ? e[i].key_size : 0);
		if (!dry_run)
			prune_ship(dir, &e[i]);
		if (json)
			json_array_append_new(jp, json_pack("{s:s,s:s,s:s*,s:I,s:I,s:s}", "log",
				e[i].name, "session", e[i].session, "key",
				e[i].has_key ? e[i].session : NULL, "bytes",
				(json_int_t)e[i].size, "mtime", (json_int_t)e[i].mtime, "rule",
				e[i].rule));
		else
			printf("%s %s/%s (session %s, %llu bytes%s): %s\n",
			       dry_run ? "would prune" : "pruned", dir, e[i].name, e[i].session,
			       (unsigned long long)e[i].size, e[i].has_key ? ", and its key" : "",
			       e[i].rule);
	}
	if (json) {
		json_object_set_new(out, "dry_run", json_boolean(dry_run));
		json_object_set_new(out, "dir", json_string(dir));
		json_object_set_new(out, "key_dir", json_string(key_dir));
		json_object_set_new(out, "pruned", jp);
		json_object_set_new(out, "kept", jk);
		json_object_set_new(out, "pruned_bytes", json_integer((json_int_t)pruned_bytes));
		json_object_set_new(out, "remaining", json_pack("{s:I,s:I}", "logs", (json_int_t)left,
								"bytes", (json_int_t)left_bytes));
		json_object_set_new(out, "failed", json_integer(failed));
		json_dumpf(out, stdout, JSON_COMPACT);
		putchar('\n');
		json_decref(out);
	} else {
		printf("%s %llu log%s (%llu bytes); %llu left (%llu bytes)%s\n",
		       dry_run ? "would prune" : "pruned", (unsigned long long)pruned,
		       pruned == 1 ? "" : "s", (unsigned long long)pruned_bytes,
		       (unsigned long long)left, (unsigned long long)left_bytes,
		       failed ? "; some could not be removed" : "");
	}
	return failed ? 1 : 0;
}

int cmd_audit(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "verify"))
		return cmd_verify(argc - 1, argv + 1);
	if (!strcmp(argv[1], "show"))
		return cmd_show(argc - 1, argv + 1);
	if (!strcmp(argv[1], "prune"))
		return cmd_prune(argc - 1, argv + 1);
	log_err("audit: unknown subcommand '%s' (verify, show, prune)", argv[1]);
	return 2;
}
