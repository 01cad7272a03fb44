/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The session's audit log (audit_session.c): where it lies and its
 * protection from the agent, decided before any rule is compiled; its
 * opening with the "start" record; the secrets it redacts; what the agent
 * left in the workspace that is held aside at the end; the "end" record
 * and the seal.  The log itself is audit.h's.
 */
#ifndef CORDON_AUDIT_SESSION_H
#define CORDON_AUDIT_SESSION_H

#include "sup_state.h"

/* The default directory of the logs, SESSION.jsonl each. */
#define AUDIT_DIR "/var/log/cordon"

/*
 * s->audit_path (--audit made absolute, or AUDIT_DIR/SESSION.jsonl) and
 * s->key_dir.  0, or -ENAMETOOLONG or another negative errno (not logged).
 */
int audit_paths(struct sup *s);
/* The directory of s->audit_path, for messages (a static buffer). */
const char *audit_dir_of(const struct sup *s);
/*
 * Where the log may lie, and its protection in s->pol (audit_session.c
 * says which places and why).  *SPLIT names the rule that lets the agent
 * create or delete beside a log in the workspace (the caller refuses that
 * in the fallback posture), else NULL.  0, or negative errno, logged.
 */
int audit_place(struct sup *s, const char **split);
/* The log opened with its "start" record, and noted for a reaper.  Logged. */
int open_audit(struct sup *s);
/* The scrubbed variables' secret-looking values, redacted from the log. */
void register_secrets(struct sup *s);
/*
 * What the agent left that would run code as the human, held aside and
 * recorded.  Only once every task of the session is dead.
 */
void git_quarantine(struct sup *s);
/*
 * The "end" record (s->exit_status, the statistics), the seal, the log
 * closed and its note forgotten.  A thread function (ARG is the struct
 * sup), run while the session is taken down.
 */
void *seal_audit(void *arg);

#endif
