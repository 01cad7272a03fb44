/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A git config file without the keys that make git run a program: the
 * parser git_guard uses on a repository the agent created (git_guard.h).
 * Side-effect free.
 *
 * The keys are a LIST (git_config_strip.c, runs_code[]), written from
 * git-config(1) as of git 2.47: a key a later git adds that names a
 * program passes.  It errs towards removing: every alias (one without
 * '!' can still pass `-c core.fsmonitor=...`), a submodule update whose
 * value holds a '!' anywhere, any pager.*, sendemail.*,
 * protocol.*, instaweb.* key.  http.* keys are not on it: none names a
 * program (a proxy or a cookie file is data).
 */
#ifndef CORDON_GIT_CONFIG_STRIP_H
#define CORDON_GIT_CONFIG_STRIP_H

#include <stddef.h>

/*
 * Parse IN (LEN bytes) as git does (sections on a line of their own or
 * with a key after them, quoted values, backslash continuations, comments)
 * and write to *OUT (malloc'd, NUL-terminated, *OUT_LEN bytes) the same
 * text without the entries whose key runs code, each dropped with its
 * continuation lines.  KEYS gets their names ("core.fsmonitor, alias.x"),
 * truncated to KLEN.  Returns how many were dropped; -EINVAL if git would
 * not parse the file either (*BAD_LINE says where; *OUT is NULL), or
 * -ENOMEM.
 */
int git_config_strip(const char *in, size_t len, char **out, size_t *out_len, char *keys,
		     size_t klen, int *bad_line);

/*
 * The same parse, for the values that make git read or run files
 * elsewhere: FN(CTX, KEY, VALUE) for each core.hooksPath
 * ("core.hookspath"), include.path, includeIf.<condition>.path
 * ("includeif.path") and core.worktree, VALUE as git reads it (quotes and
 * escapes undone).  0, FN's first nonzero value, -EINVAL if git would not
 * parse the file (*BAD_LINE says where), -ENAMETOOLONG for a value over 4 KiB
 * (no path git could open).
 */
int git_config_paths(const char *in, size_t len,
		     int (*fn)(void *ctx, const char *key, const char *value), void *ctx,
		     int *bad_line);

#endif /* CORDON_GIT_CONFIG_STRIP_H */
