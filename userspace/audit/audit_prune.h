/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Retention of audit logs (`cordon audit prune`): the oldest sealed logs
 * of a directory removed with their keys, by a rule the admin sets (age,
 * count, size).  audit_prune.c says what it refuses to remove and why.
 *
 * Three steps, so that the choice is pure and unit-tested: scan (reads the
 * directory through its descriptor, tells each log's state), plan (which
 * to remove; no I/O), remove (unlinkat relative to the directories).
 */
#ifndef CORDON_AUDIT_PRUNE_H
#define CORDON_AUDIT_PRUNE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "audit_format.h"

/* The admin's file; each member may also be given on the command line. */
#define AUDIT_RETENTION_CONF "/etc/cordon/retention"

/* A rule: any member set (has_*) removes a sealed log it matches, oldest first. */
struct audit_retention {
	bool has_age, has_count, has_size;
	uint64_t max_age_s;     /* a log last written longer ago than this */
	uint64_t max_count;     /* logs kept in the directory at most */
	uint64_t max_size;      /* bytes of logs and keys kept at most */
};

/*
 * "30d", "12h", "90m", "45s", "2w": a whole number and one unit.  A bare
 * number is refused (seconds or days?): 0 or -EINVAL.  Pure.
 */
int audit_parse_age(const char *s, uint64_t *out);

/* "2G", "500M", "64K", "1T" (powers of 1024), or bytes: 0 or -EINVAL.  Pure. */
int audit_parse_size(const char *s, uint64_t *out);

/* A count: a whole number, 0 or more: 0 or -EINVAL.  Pure. */
int audit_parse_count(const char *s, uint64_t *out);

/*
 * Read the rule in PATH into R (members it does not set are left as they
 * are): lines "max-age = 30d", "max-count = 1000", "max-size = 2G", '#'
 * comments and blank lines.  The file must be a regular file of root's
 * that no one else may write (it decides what is deleted): -EPERM.  An
 * unknown or repeated member, or a bad value, is -EINVAL with WHY naming
 * the file, line and column.  A missing file is -ENOENT (WHY set too).
 */
int audit_retention_load(const char *path, struct audit_retention *r, char *why, size_t wlen);

enum audit_prune_state {
	AUDIT_PRUNE_SEALED,     /* a sealed log no session writes: the rule may remove it */
	AUDIT_PRUNE_UNSEALED,   /* no seal, its session gone (it crashed); kept */
	AUDIT_PRUNE_LIVE,       /* its session has not ended (or that cannot be told); kept */
	AUDIT_PRUNE_NOT_LOG,    /* not a regular file with one link, or not an audit log */
};

struct audit_prune_entry {
	char name[NAME_MAX + 1];                /* in the log directory */
	char session[AUDIT_SESSION_MAX + 1];    /* from its first record; "" if none */
	enum audit_prune_state state;
	const char *why;                        /* for a log kept or skipped */
	dev_t dev;
	ino_t ino;
	uint64_t size;                          /* the log's bytes */
	uint64_t key_size;                      /* its key's, 0 if none */
	bool has_key;
	time_t mtime;                           /* its last write (the seal) */
	bool remove;                            /* plan's answer */
	const char *rule;                       /* which member chose it: "max-age", ... */
};

/*
 * Every *.jsonl entry of LOG_DIR (a descriptor), its key looked up in
 * KEY_DIR (a descriptor): *OUT (free()), *N.  Nothing is followed: a
 * symlink is NOT_LOG.  LIVE(session) says whether a session may still
 * write its log (1, 0, or -errno, which counts as live); NULL: sealed is
 * enough.  0 or -errno (the directory could not be read).
 */
int audit_prune_scan(int log_dir, int key_dir, int (*live)(const char *session),
		     struct audit_prune_entry **out, size_t *n);

/*
 * Mark (remove, rule) the entries rule R removes at time NOW: oldest
 * first, only SEALED ones; every log (sealed or not) counts towards
 * max-count and max-size, so that an unsealed one kept makes an older
 * sealed one go.  Sorts E by mtime, oldest first.  Pure.
 */
void audit_prune_plan(struct audit_prune_entry *e, size_t n, const struct audit_retention *r,
		      time_t now);

/*
 * Remove E's log from LOG_DIR, then its key from KEY_DIR: each by name,
 * unlinkat, after checking the name is still the regular file scanned
 * (same device and inode: -ESTALE if not).  The log goes first: a key
 * left without its log is harmless, a log without its key is
 * unverifiable.  0 or -errno.
 */
int audit_prune_remove(int log_dir, int key_dir, const struct audit_prune_entry *e);

#endif /* CORDON_AUDIT_PRUNE_H */
