// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Audit shipping (audit_ship.h).
 *
 * Attack: root on the host holds the session key (audit.c's header), so it
 * can rewrite the local log: change a record, cut records off the end, or
 * re-chain the whole log with the key, and `cordon audit verify` says
 * intact.  Answer: every record leaves the host as it is written, with its
 * seq and the SHA-256 of its line, and the seal is followed by an anchor
 * naming the chain head.  What the collector holds was sent before the
 * rewrite; `cordon audit verify --anchor` finds every record whose line no
 * longer hashes to what was sent, and every sent record that is gone.
 * Nothing a root does later on this host changes a message already sent
 * (forward security: it holds for the past, not for records written after
 * the root took the host, which it can forge from then on).
 *
 * What it cannot close:
 *  - a collector reachable by others: anyone who can send to its socket can
 *    send messages naming a session.  A forged anchor that disagrees with
 *    a true one is reported (two hashes for one seq); a forged one alone
 *    makes verify fail, never pass.  The collector should accept only
 *    cordon's sender (imuxsock's peer credentials, or TLS from the host).
 *  - a lost message: datagrams are sent without blocking (a collector that
 *    is slow or down never holds up the agent's calls); one that cannot be
 *    sent is counted, and the log records the loss ("audit-ship-lost") and
 *    its end ("audit-ship-resumed"), so the gap is on record and the
 *    collector's own copy shows the missing seqs.  What was never sent is
 *    checked by the key alone.
 *  - a record larger than the socket takes (a Unix datagram is limited by
 *    the sender's buffer, about 200 KiB by default, and the collector's
 *    message size): it is lost as above (-EMSGSIZE).  The journal's memfd
 *    path for large entries is not spoken.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "audit_ship.h"
#include "util.h"

struct audit_ship {
	enum audit_ship_kind kind;
	int fd;
	int dfd;                          /* the socket's directory, or -1 */
	struct sockaddr_un addr;
	socklen_t addr_len;
	char host[256];
	char name[sizeof(((struct sockaddr_un *)0)->sun_path) + 16];
};

int audit_ship_new(enum audit_ship_kind kind, const char *path, struct audit_ship **out)
{
	struct audit_ship *sh;

	if (!path || !*path || !out)
		return -EINVAL;
	sh = calloc(1, sizeof(*sh));
	if (!sh)
		return -ENOMEM;
	sh->kind = kind;
	sh->addr.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sh->addr.sun_path)) {
		free(sh);
		return -ENAMETOOLONG;
	}
	strcpy(sh->addr.sun_path, path);
	/*
	 * The session's supervisor goes on in a mount namespace of its own,
	 * where the path may name nothing (a private /tmp or /var/tmp): the
	 * socket's directory is held open here, and each send names the socket
	 * through it (/proc/self/fd/N/NAME), so a collector that restarts (a new
	 * socket in that directory) is found again.  A directory that cannot be
	 * opened leaves the path as given.
	 */
	{
		_cleanup_free_ char *dir = strdup(path);
		char *slash = dir ? strrchr(dir, '/') : NULL;
		char via[sizeof(sh->addr.sun_path) + 32];

		sh->dfd = -1;
		if (slash) {
			*slash = 0;
			sh->dfd = open(slash == dir ? "/" : dir,
				       O_PATH | O_DIRECTORY | O_CLOEXEC);
		}
		if (sh->dfd >= 0 && (size_t)snprintf(via, sizeof(via), "/proc/self/fd/%d/%s", sh->dfd,
						     strrchr(path, '/') + 1) < sizeof(sh->addr.sun_path))
			strcpy(sh->addr.sun_path, via);
	}
	sh->addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
				   strlen(sh->addr.sun_path) + 1);
	sh->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (sh->fd < 0) {
		int r = -errno;

		if (sh->dfd >= 0)
			close(sh->dfd);
		free(sh);
		return r;
	}
	if (gethostname(sh->host, sizeof(sh->host) - 1) < 0 || !sh->host[0])
		strcpy(sh->host, "-");
	/* RFC 5424 HOSTNAME: PRINTUSASCII, at most 255. */
	for (char *p = sh->host; *p; p++)
		if (*p <= 32 || *p >= 127)
			*p = '_';
	snprintf(sh->name, sizeof(sh->name), "%s:%.108s",
		 kind == AUDIT_SHIP_SYSLOG ? "syslog" : "journal", path);
	*out = sh;
	return 0;
}

void audit_ship_free(struct audit_ship *sh)
{
	if (!sh)
		return;
	if (sh->fd >= 0)
		close(sh->fd);
	if (sh->dfd >= 0)
		close(sh->dfd);
	free(sh);
}

const char *audit_ship_name(const struct audit_ship *sh)
{
	return sh ? sh->name : "";
}

static int send_buf(struct audit_ship *sh, const char *p, size_t n)
{
	ssize_t w;

	do
		w = sendto(sh->fd, p, n, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&sh->addr,
			   sh->addr_len);
	while (w < 0 && errno == EINTR);
	if (w < 0)
		return -errno;
	return (size_t)w == n ? 0 : -EMSGSIZE;
}

/* --- syslog (RFC 5424) ------------------------------------------------------------ */

/* A growing buffer; ok false once an allocation failed. */
struct sbuf {
	char *p;
	size_t n, cap;
	bool bad;
};

static void sb_put(struct sbuf *b, const char *s, size_t n)
{
	if (b->bad)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t cap = (b->n + n + 1) * 2;
		char *p = realloc(b->p, cap);

		if (!p) {
			b->bad = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = 0;
}

static void sb_str(struct sbuf *b, const char *s)
{
	sb_put(b, s, strlen(s));
}

/* RFC 5424 PARAM-VALUE: '"', '\' and ']' escaped with '\'. */
static void sb_param(struct sbuf *b, const char *name, const char *v)
{
	sb_str(b, " ");
	sb_str(b, name);
	sb_str(b, "=\"");
	for (; *v; v++) {
		if (*v == '"' || *v == '\\' || *v == ']')
			sb_put(b, "\\", 1);
		sb_put(b, v, 1);
	}
	sb_str(b, "\"");
}

/* SD-NAME: 1-32 PRINTUSASCII but '=', ' ', ']', '"'. */
static bool sd_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 32)
		return false;
	for (; *s; s++)
		if (*s <= 32 || *s >= 127 || *s == '=' || *s == ']' || *s == '"')
			return false;
	return true;
}

/* The record's scalar members as SD-PARAMs (objects and arrays are in MSG only). */
static void sb_fields(struct sbuf *b, json_t *rec)
{
	static const char *const skip[] = { "seq", "session", "type", "prev", "time" };
	const char *k;
	json_t *v;
	char num[64];

	sb_str(b, "[" AUDIT_SD_FIELDS);
	json_object_foreach(rec, k, v) {
		bool skipped = false;

		for (size_t i = 0; i < ARRAY_SIZE(skip); i++)
			skipped |= !strcmp(k, skip[i]);
		if (skipped || !sd_name_ok(k))
			continue;
		if (json_is_string(v))
			sb_param(b, k, json_string_value(v));
		else if (json_is_integer(v))
			snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(v)),
				sb_param(b, k, num);
		else if (json_is_real(v))
			snprintf(num, sizeof(num), "%.17g", json_real_value(v)), sb_param(b, k, num);
		else if (json_is_boolean(v))
			sb_param(b, k, json_is_true(v) ? "true" : "false");
	}
	sb_str(b, "]");
}

/* MSGID: 1-32 PRINTUSASCII. */
static void sb_msgid(struct sbuf *b, const char *type)
{
	size_t n = 0;

	for (const char *p = type; *p && n < 32; p++, n++)
		sb_put(b, (*p > 32 && *p < 127) ? p : "_", 1);
	if (!n)
		sb_str(b, "-");
}

/* HEADER: <PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID.  authpriv (10), info (6): 86. */
static void sb_header(struct sbuf *b, struct audit_ship *sh, const char *time, const char *type)
{
	char pid[32];

	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	sb_str(b, "<86>1 ");
	sb_str(b, time && *time ? time : "-");
	sb_str(b, " ");
	sb_str(b, sh->host);
	sb_str(b, " cordon ");
	sb_str(b, pid);
	sb_str(b, " ");
	sb_msgid(b, type);
	sb_str(b, " ");
}

/* --- journal (native protocol) ---------------------------------------------------- */

/*
 * One field: NAME=VALUE\n, or, when VALUE holds a newline, NAME\n, its
 * length as 64-bit little-endian, VALUE, \n (systemd's journal native
 * protocol).
 */
static void jr_field(struct sbuf *b, const char *name, const char *v, size_t n)
{
	sb_str(b, name);
	if (!memchr(v, '\n', n)) {
		sb_str(b, "=");
		sb_put(b, v, n);
	} else {
		unsigned char len[8];

		sb_str(b, "\n");
		for (int i = 0; i < 8; i++)
			len[i] = (unsigned char)((uint64_t)n >> (8 * i));
		sb_put(b, (char *)len, 8);
		sb_put(b, v, n);
	}
	sb_str(b, "\n");
}

static void jr_str(struct sbuf *b, const char *name, const char *v)
{
	jr_field(b, name, v, strlen(v));
}

int audit_ship_record(struct audit_ship *sh, json_t *rec, const char *line, size_t n,
		      const unsigned char hash[AUDIT_HASH_LEN])
{
	struct sbuf b = {};
	char hex[AUDIT_HEX_LEN + 1], seq[32];
	const char *type = json_string_value(json_object_get(rec, "type")) ?: "-";
	const char *session = json_string_value(json_object_get(rec, "session")) ?: "-";
	const char *prev = json_string_value(json_object_get(rec, "prev")) ?: "";
	int r;

	hex_encode(hash, AUDIT_HASH_LEN, hex);
	snprintf(seq, sizeof(seq), "%lld", (long long)json_integer_value(json_object_get(rec, "seq")));
	if (sh->kind == AUDIT_SHIP_SYSLOG) {
		sb_header(&b, sh, json_string_value(json_object_get(rec, "time")), type);
		sb_str(&b, "[" AUDIT_SD_RECORD);
		sb_param(&b, "session", session);
		sb_param(&b, "seq", seq);
		sb_param(&b, "type", type);
		sb_param(&b, "hash", hex);
		sb_param(&b, "prev", prev);
		sb_str(&b, "]");
		sb_fields(&b, rec);
		sb_str(&b, " ");
		sb_put(&b, line, n);
	} else {
		jr_field(&b, "MESSAGE", line, n);
		jr_str(&b, "PRIORITY", "6");
		jr_str(&b, "SYSLOG_FACILITY", "10");
		jr_str(&b, "SYSLOG_IDENTIFIER", "cordon");
		jr_str(&b, "CORDON_SESSION", session);
		jr_str(&b, "CORDON_SEQ", seq);
		jr_str(&b, "CORDON_TYPE", type);
		jr_str(&b, "CORDON_HASH", hex);
		jr_str(&b, "CORDON_PREV", prev);
	}
	r = b.bad ? -ENOMEM : send_buf(sh, b.p, b.n);
	free(b.p);
	return r;
}

int audit_ship_anchor(struct audit_ship *sh, const char *session, uint64_t seq,
		      const unsigned char hash[AUDIT_HASH_LEN])
{
	struct sbuf b = {};
	char hex[AUDIT_HEX_LEN + 1], s[32];
	int r;

	hex_encode(hash, AUDIT_HASH_LEN, hex);
	snprintf(s, sizeof(s), "%llu", (unsigned long long)seq);
	if (sh->kind == AUDIT_SHIP_SYSLOG) {
		sb_header(&b, sh, NULL, "anchor");
		sb_str(&b, "[" AUDIT_SD_ANCHOR);
		sb_param(&b, "session", session);
		sb_param(&b, "seq", s);
		sb_param(&b, "hash", hex);
		sb_str(&b, "] cordon audit anchor: session ");
		sb_str(&b, session);
		sb_str(&b, " sealed at seq ");
		sb_str(&b, s);
		sb_str(&b, ", chain head ");
		sb_str(&b, hex);
	} else {
		char msg[512];

		snprintf(msg, sizeof(msg), "cordon audit anchor: session %s sealed at seq %s, "
			 "chain head %s", session, s, hex);
		jr_str(&b, "MESSAGE", msg);
		jr_str(&b, "PRIORITY", "6");
		jr_str(&b, "SYSLOG_FACILITY", "10");
		jr_str(&b, "SYSLOG_IDENTIFIER", "cordon");
		jr_str(&b, "CORDON_SESSION", session);
		jr_str(&b, "CORDON_SEQ", s);
		jr_str(&b, "CORDON_TYPE", "anchor");
		jr_str(&b, "CORDON_HASH", hex);
	}
	r = b.bad ? -ENOMEM : send_buf(sh, b.p, b.n);
	free(b.p);
	return r;
}

int audit_ship_note(struct audit_ship *sh, const char *what, const char *sd_id, json_t *fields,
		    const char *text)
{
	struct sbuf b = {};
	const char *k;
	json_t *v;
	int r;

	if (!sd_name_ok(sd_id))
		return -EINVAL;
	if (sh->kind == AUDIT_SHIP_SYSLOG) {
		sb_header(&b, sh, NULL, what);
		sb_str(&b, "[");
		sb_str(&b, sd_id);
		json_object_foreach(fields, k, v) {
			char num[32];

			if (!sd_name_ok(k))
				continue;
			if (json_is_string(v))
				sb_param(&b, k, json_string_value(v));
			else if (json_is_integer(v))
				snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(v)),
					sb_param(&b, k, num);
		}
		sb_str(&b, "] ");
		sb_str(&b, text);
	} else {
		jr_str(&b, "MESSAGE", text);
		jr_str(&b, "PRIORITY", "6");
		jr_str(&b, "SYSLOG_FACILITY", "10");
		jr_str(&b, "SYSLOG_IDENTIFIER", "cordon");
		jr_str(&b, "CORDON_EVENT", what);
		/*
		 * CORDON_<WHAT>_<MEMBER>, upper case, other bytes '_': never a
		 * record's own CORDON_SESSION, which the anchor check reads.
		 */
		json_object_foreach(fields, k, v) {
			char name[128], num[32];
			const char *val = json_string_value(v);

			snprintf(name, sizeof(name), "CORDON_%.32s_%.64s", what, k);
			for (char *c = name; *c; c++)
				*c = isalnum((unsigned char)*c) ? (char)toupper((unsigned char)*c) : '_';
			if (json_is_integer(v)) {
				snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(v));
				val = num;
			}
			if (val)
				jr_str(&b, name, val);
		}
	}
	r = b.bad ? -ENOMEM : send_buf(sh, b.p, b.n);
	free(b.p);
	return r;
}

/* --- checking a log against the collector's anchors ------------------------------- */

struct anchor {
	long long seq;
	unsigned char hash[AUDIT_HASH_LEN];
	bool seal;
};

struct anchors {
	struct anchor *a;
	size_t n, cap;
	int err;
};

static void anchors_add(struct anchors *as, long long seq, const char *hex, bool seal)
{
	struct anchor an = { .seq = seq, .seal = seal };

	if (seq < 0 || !hex || strlen(hex) != AUDIT_HEX_LEN ||
	    audit_format_hex_decode(hex, AUDIT_HASH_LEN, an.hash) < 0)
		return;
	if (as->n == as->cap) {
		size_t cap = as->cap ? 2 * as->cap : 64;
		struct anchor *p = realloc(as->a, cap * sizeof(*p));

		if (!p) {
			as->err = -ENOMEM;
			return;
		}
		as->a = p;
		as->cap = cap;
	}
	as->a[as->n++] = an;
}

/* The value of PARAM in the SD element starting at EL (after its ID), unescaped, or NULL. */
static char *sd_get(const char *el, const char *param)
{
	size_t pl = strlen(param);
	const char *p = el;

	while (*p && *p != ']') {
		while (*p == ' ')
			p++;
		if (!strncmp(p, param, pl) && p[pl] == '=' && p[pl + 1] == '"') {
			char *out = malloc(strlen(p) + 1), *o = out;

			if (!out)
				return NULL;
			for (p += pl + 2; *p && *p != '"'; p++) {
				if (*p == '\\' && p[1])
					p++;
				*o++ = *p;
			}
			*o = 0;
			return out;
		}
		/* Skip NAME="VALUE". */
		while (*p && *p != '"' && *p != ']')
			p++;
		if (*p != '"')
			break;
		for (p++; *p && *p != '"'; p++)
			if (*p == '\\' && p[1])
				p++;
		if (*p)
			p++;
	}
	return NULL;
}

static void anchors_from_sd(struct anchors *as, const char *line, const char *id,
			    const char *session, bool seal)
{
	char key[64];

	snprintf(key, sizeof(key), "[%s ", id);
	for (const char *p = strstr(line, key); p; p = strstr(p + 1, key)) {
		_cleanup_free_ char *s = sd_get(p + strlen(key), "session");
		_cleanup_free_ char *q = sd_get(p + strlen(key), "seq");
		_cleanup_free_ char *h = sd_get(p + strlen(key), "hash");
		char *end;
		long long seq;

		if (!s || !q || !h || strcmp(s, session))
			continue;
		errno = 0;
		seq = strtoll(q, &end, 10);
		if (errno || end == q || *end)
			continue;
		anchors_add(as, seq, h, seal);
	}
}

/* Read ANCHORS for SESSION: RFC 5424 lines and journal export entries. */
static int anchors_read(struct anchors *as, FILE *f, const char *session)
{
	_cleanup_free_ char *buf = NULL;
	char *j_session = NULL, *j_seq = NULL, *j_hash = NULL, *j_type = NULL;
	size_t cap = 0;
	ssize_t n;

	for (;;) {
		n = getline(&buf, &cap, f);
		if (n > 0 && buf[n - 1] == '\n')
			buf[--n] = 0;
		if (n <= 0) {
			/* The end of a journal export entry. */
			if (j_session && j_seq && j_hash && !strcmp(j_session, session)) {
				char *end;
				long long seq;

				errno = 0;
				seq = strtoll(j_seq, &end, 10);
				if (!errno && end != j_seq && !*end)
					anchors_add(as, seq, j_hash,
						    j_type && !strcmp(j_type, "anchor"));
			}
			free(j_session), free(j_seq), free(j_hash), free(j_type);
			j_session = j_seq = j_hash = j_type = NULL;
			if (n < 0)
				break;
			continue;
		}
		anchors_from_sd(as, buf, AUDIT_SD_RECORD, session, false);
		anchors_from_sd(as, buf, AUDIT_SD_ANCHOR, session, true);
		if (!strncmp(buf, "CORDON_SESSION=", 15))
			free(j_session), j_session = strdup(buf + 15);
		else if (!strncmp(buf, "CORDON_SEQ=", 11))
			free(j_seq), j_seq = strdup(buf + 11);
		else if (!strncmp(buf, "CORDON_HASH=", 12))
			free(j_hash), j_hash = strdup(buf + 12);
		else if (!strncmp(buf, "CORDON_TYPE=", 12))
			free(j_type), j_type = strdup(buf + 12);
	}
	if (ferror(f))
		return -EIO;
	return as->err;
}

/* What the local log holds: per line, its seq and hash. */
struct local_rec {
	long long seq;
	unsigned char hash[AUDIT_HASH_LEN];
	size_t line;
};

static int cmp_anchor(const void *x, const void *y)
{
	const struct anchor *a = x, *b = y;

	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

int audit_anchor_check(const char *path, FILE *anchors, FILE *report, FILE *notes,
		       size_t *anchored)
{
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *buf = NULL, *session = NULL;
	_cleanup_free_ struct local_rec *loc = NULL;
	struct anchors as = {};
	size_t cap = 0, n_loc = 0, cap_loc = 0, lineno = 0, problems = 0;
	long long max_local = -1, max_anchor = -1;
	bool sealed_anchor = false;
	ssize_t n;
	int r;

	*anchored = 0;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while ((n = getline(&buf, &cap, f)) > 0) {
		json_t *rec;
		struct local_rec lr = { .seq = -1, .line = ++lineno };

		if (buf[n - 1] == '\n')
			buf[--n] = 0;
		if (audit_format_sha256(buf, (size_t)n, lr.hash) < 0)
			return -EIO;
		rec = json_loadb(buf, (size_t)n, 0, NULL);
		if (json_is_integer(json_object_get(rec, "seq")))
			lr.seq = json_integer_value(json_object_get(rec, "seq"));
		if (lineno == 1 && json_is_string(json_object_get(rec, "session")))
			session = strdup(json_string_value(json_object_get(rec, "session")));
		json_decref(rec);
		if (n_loc == cap_loc) {
			size_t c = cap_loc ? 2 * cap_loc : 256;
			struct local_rec *p = realloc(loc, c * sizeof(*p));

			if (!p)
				return -ENOMEM;
			loc = p;
			cap_loc = c;
		}
		loc[n_loc++] = lr;
		if (lr.seq > max_local)
			max_local = lr.seq;
	}
	if (ferror(f))
		return -EIO;
	if (!session) {
		if (report)
			fprintf(report, "line 1: names no session: the anchors cannot be matched\n");
		return -EBADMSG;
	}
	r = anchors_read(&as, anchors, session);
	if (r < 0) {
		free(as.a);
		return r;
	}
	*anchored = as.n;
	if (as.n == 0) {
		if (report)
			fprintf(report, "no anchor names session %s: the collector never received "
				"this session, or the log's first record was rewritten\n", session);
		free(as.a);
		return -EBADMSG;
	}
	qsort(as.a, as.n, sizeof(*as.a), cmp_anchor);
	for (size_t i = 0; i < as.n; i++) {
		const struct anchor *an = &as.a[i];
		bool seen_seq = false, match = false;
		size_t at = 0;

		/* Messages sent twice (a resent record, an anchor after the seal's own) agree. */
		if (i > 0 && as.a[i - 1].seq == an->seq) {
			if (memcmp(as.a[i - 1].hash, an->hash, AUDIT_HASH_LEN)) {
				problems++;
				if (report)
					fprintf(report, "seq %lld: the collector holds two different "
						"hashes for it (a forged message to the collector?)\n",
						an->seq);
			}
			continue;
		}
		if (an->seq > max_anchor)
			max_anchor = an->seq;
		sealed_anchor |= an->seal;
		for (size_t k = 0; k < n_loc; k++) {
			if (loc[k].seq != an->seq)
				continue;
			if (!seen_seq)
				at = loc[k].line;
			seen_seq = true;
			if (!memcmp(loc[k].hash, an->hash, AUDIT_HASH_LEN)) {
				match = true;
				break;
			}
		}
		if (match)
			continue;
		problems++;
		if (!report)
			continue;
		if (seen_seq)
			fprintf(report, "line %zu (seq %lld): rewritten: its line is not the one the "
				"collector received\n", at, an->seq);
		else
			fprintf(report, "seq %lld: removed: the collector received it, the log does "
				"not hold it\n", an->seq);
	}
	if (sealed_anchor && max_local > max_anchor) {
		problems++;
		if (report)
			fprintf(report, "seq %lld..%lld: added after the anchored seal\n",
				max_anchor + 1, max_local);
	}
	if (notes) {
		/* Records the collector never got: checked by the key alone. */
		long long missing = 0;

		for (size_t k = 0; k < n_loc; k++) {
			struct anchor key = { .seq = loc[k].seq };

			if (loc[k].seq >= 0 &&
			    !bsearch(&key, as.a, as.n, sizeof(*as.a), cmp_anchor))
				missing++;
		}
		if (missing)
			fprintf(notes, "note: %lld record%s of the log never reached the collector "
				"(checked by the key alone)\n", missing, missing == 1 ? "" : "s");
		if (!sealed_anchor)
			fprintf(notes, "note: the collector holds no anchored seal for session %s\n",
				session);
	}
	free(as.a);
	return problems ? -EBADMSG : 0;
}
