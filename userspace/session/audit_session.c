// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The session's audit log, from its placement to its seal (audit_session.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

#include "audit.h"
#include "audit_ship.h"
#include "audit_session.h"
#include "reap.h"
#include "scrub.h"
#include "steps.h"
#include "sup_stats.h"
#include "util.h"
#include "world.h"

/* Where the audit log and its key go: decided before the policy is compiled,
 * so that both can be protected from the agent. */
int audit_paths(struct sup *s)
{
	if (s->opt->audit) {
		if (s->opt->audit[0] == '/')
			snprintf(s->audit_path, sizeof(s->audit_path), "%s", s->opt->audit);
		else {
			char cwd[PATH_MAX];

			if (!getcwd(cwd, sizeof(cwd)))
				return -errno;
			if ((size_t)snprintf(s->audit_path, sizeof(s->audit_path), "%s/%s", cwd,
					     s->opt->audit) >= sizeof(s->audit_path))
				return -ENAMETOOLONG;
		}
	} else {
		snprintf(s->audit_path, sizeof(s->audit_path), AUDIT_DIR "/%s.jsonl", s->name);
	}
	/* CORDON_AUDIT_KEY_DIR moves the keys (tests); cordon's environment, not the agent's. */
	snprintf(s->key_dir, sizeof(s->key_dir), "%s", getenv("CORDON_AUDIT_KEY_DIR") ?: AUDIT_KEY_DIR);
	return 0;
}

const char *audit_dir_of(const struct sup *s)
{
	static char dir[PATH_MAX];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", s->audit_path);
	slash = strrchr(dir, '/');
	if (slash)
		slash[slash == dir] = '\0';
	return dir;
}

/*
 * Where the log may lie, and its protection from the agent.  Called once
 * the audit path is known (audit_paths) and before any rule is compiled.
 *   - In the agent's home: refused, in both postures.  The agent sees its
 *     home as a layer over the real one (home.h): what it writes to the
 *     log's name lands in its layer, and `cordon home apply` could carry
 *     that over the log.
 *   - In a tree the view replaces (/tmp, /var/tmp outside the workspace,
 *     world_private): no task of the session can reach it, so no rule is
 *     made for it.  Before, its denial split the agent's own /tmp, where
 *     it could then create nothing: `cc` and every Claude Code command
 *     failed.
 *   - In the workspace, where the policy lets the agent create or delete
 *     beside it: *split names that rule; run refuses it in the fallback
 *     posture, whose Landlock cannot deny one file in a directory it lets
 *     the agent change without taking the directory's rights away (the
 *     full posture judges the log's inode).
 *   - Elsewhere: protected, as before.
 */
int audit_place(struct sup *s, const char **split)
{
	char canon[PATH_MAX], probe[PATH_MAX + 32];
	struct pol_request pr = { .path = probe };
	struct pol_result res;

	*split = NULL;
	if (pol_canon_path(s->audit_path, "/", canon, sizeof(canon)) < 0) {
		log_err("run: --audit %s: path too long", s->audit_path);
		return -ENAMETOOLONG;
	}
	if (strcmp(s->home, "/") && pol_path_within(canon, s->home)) {
		log_err("run: --audit %s: inside the agent's home, which it sees as a layer of its "
			"own over yours: its writes to that name would land in the layer, and `cordon "
			"home apply` could carry them over the log; put the log outside %s",
			s->audit_path, s->home);
		return -EPERM;
	}
	if (world_private(canon, s->workspace))
		return 0;
	(void)pol_protect_path(s->pol, s->audit_path);
	if (strcmp(canon, s->audit_path))
		(void)pol_protect_path(s->pol, canon);
	/*
	 * Only the workspace is refused: elsewhere (a policy that opens "/")
	 * the directories above the log lose their own create and delete
	 * rights, as before, and the session's work goes on below them.
	 */
	if (!pol_path_within(canon, s->workspace))
		return 0;
	snprintf(probe, sizeof(probe), "%s.cordon-probe", canon);
	for (int op = POL_OP_CREATE; op <= POL_OP_DELETE && !*split; op++) {
		pr.op = (enum pol_op)op;
		pol_eval(s->pol, &pr, &res);
		if (res.decision != CORDON_DENY)
			*split = res.rule ? res.rule->name : "?";
	}
	return 0;
}

/*
 * Shipping the records off the host (audit_ship.c says what it closes):
 * asked for in cordon's own environment, as the key directory is, by
 * whoever starts `cordon run` (a site sets it in the unit or the profile
 * that starts sessions; docs/audit.md):
 *   CORDON_AUDIT_SYSLOG=SOCKET   RFC 5424 to a syslog daemon's Unix
 *                                datagram socket
 *   CORDON_AUDIT_JOURNAL=1|SOCKET  the journal's native protocol, to
 *                                AUDIT_JOURNAL_SOCKET or SOCKET
 * or on its command line, which wins: `--audit-syslog SOCKET`,
 * `--audit-journal` (as CORDON_AUDIT_JOURNAL=1).
 * A value that is not an absolute path (or 1) is an error and no session
 * starts; a collector that is not there is not: the session runs, its log
 * says the records were not shipped, and a warning says so now.
 */
static int ship_one(struct sup *s, const char *var, const char *opt, enum audit_ship_kind kind,
		    const char *dflt, bool check)
{
	const char *v = opt ?: getenv(var), *path;
	struct audit_ship *sh;
	int r;

	if (!v || !*v)
		return 0;
	path = dflt && !strcmp(v, "1") ? dflt : v;
	if (path[0] != '/') {
		log_err("run: %s=%s: not an absolute path to a Unix datagram socket%s", var, v,
			dflt ? " (or 1)" : "");
		return -EINVAL;
	}
	if (strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		log_err("run: %s=%s: %s", var, v, strerror(ENAMETOOLONG));
		return -ENAMETOOLONG;
	}
	if (check)
		return 0;
	r = audit_ship_new(kind, path, &sh);
	if (r < 0) {
		log_err("run: %s=%s: %s", var, v, strerror(-r));
		return r;
	}
	r = audit_ship_add(s->audit, sh);
	if (r == -ENOTCONN)
		log_warn("run: %s: cannot send to %s now; the session runs, and its audit log "
			 "records every record the collector misses", var, path);
	else if (r < 0) {
		log_err("run: %s: %s", var, strerror(-r));
		return r;
	}
	return 0;
}

/* CHECK: only the values, before the log is made (a bad one makes no log). */
static int ship_audit(struct sup *s, bool check)
{
	const struct run_options *o = s->opt;
	const char *sl = o->audit_syslog ?: s->pol->ship_syslog;
	const char *jn = o->audit_journal ? "1" : s->pol->ship_journal;
	int r = ship_one(s, o->audit_syslog ? "--audit-syslog" : sl ? "the policy's audit_shipping.syslog" :
			 "CORDON_AUDIT_SYSLOG", sl, AUDIT_SHIP_SYSLOG, NULL, check);

	return r < 0 ? r : ship_one(s, o->audit_journal ? "--audit-journal" :
				    jn ? "the policy's audit_shipping.journal" : "CORDON_AUDIT_JOURNAL",
				    jn, AUDIT_SHIP_JOURNAL, AUDIT_JOURNAL_SOCKET, check);
}

int open_audit(struct sup *s)
{
	json_t *start;
	int r;

	r = ship_audit(s, true);
	if (r < 0)
		return r;
	if (!s->opt->audit) {
		r = mkdir_p(AUDIT_DIR, 0700);
		if (r < 0) {
			log_err("run: %s: %s", AUDIT_DIR, strerror(-r));
			return r;
		}
	}
	start = json_pack("{s:s,s:s,s:s,s:i,s:s,s:s}", "event", "start",
			  "posture", posture_name(s->posture.level), "user", s->user,
			  "uid", (int)s->uid, "workspace", s->workspace, "policy", s->opt->policy);
	{
		json_t *argv = json_array(), *lacks = json_array();

		for (int i = 0; s->opt->argv[i]; i++)
			json_array_append_new(argv, json_string(s->opt->argv[i]));
		for (int i = 0; i < s->posture.n_lacks; i++)
			json_array_append_new(lacks, json_string(s->posture.lacks[i]->id));
		json_object_set_new(start, "argv", argv);
		json_object_set_new(start, "lacks", lacks);
	}
	if (s->git.n_dirs || s->git.n_ro) {
		json_t *ro = json_array();

		for (size_t i = 0; i < s->git.n_ro; i++)
			json_array_append_new(ro, pol_json_text(s->git.ro[i]));
		json_object_set_new(start, "git_read_only", ro);
	}
	r = audit_open(s->audit_path, s->name, s->key_dir, start, &s->audit);
	json_decref(start);
	if (r < 0) {
		if (r == -ENOSPC || r == -EDQUOT)
			log_err("run: audit log %s: %s (it keeps %d MiB allocated ahead of its "
				"records)", s->audit_path, strerror(-r), AUDIT_RESERVE >> 20);
		else
			log_err("run: audit log %s: %s", s->audit_path, strerror(-r));
		return r;
	}
	r = ship_audit(s, false);
	if (r < 0)
		return r;
	/* So that a watchdog or reaper that ends this session can close its log. */
	r = reap_note_log(s->name, s->audit_path, audit_key_path(s->audit));
	if (r < 0) {
		log_err("run: %s/%s: %s", instance_open_logs_dir(), s->name, strerror(-r));
		return r;
	}
	return 0;
}

/*
 * The values of variables the scrub removed that look like secrets: the
 * audit log redacts them wherever they appear (an agent echoing one into a
 * command line does not put it in the log).
 */
static void add_secret(void *ctx, const char *name, const char *value)
{
	(void)audit_add_secret(ctx, name, value);
}

void register_secrets(struct sup *s)
{
	scrub_env_secrets(add_secret, s->audit);
}

/*
 * What the agent left that would run code as the human (git_guard.h): held
 * aside when the session ends, on record, said.
 */
static void held_aside(void *ctx, const struct git_guard_held *h)
{
	static const char *const what[] = { "commondir", "hook", "config", "gitfile",
					     "file-created", "file-changed", "file-deleted",
					     "incomplete", "pointed", "redirect" };
	struct sup *s = ctx;
	json_t *ev = json_pack("{s:s,s:s,s:s,s:s?,s:b,s:s?}", "event", "workspace-held",
			       "what", what[h->what], "path", h->path, "moved_to", h->moved_to,
			       "restored", h->restored, "detail", h->detail);

	if (s->audit && ev) {
		pthread_mutex_lock(&s->lock);
		(void)audit_write(s->audit, "lifecycle", ev);
		pthread_mutex_unlock(&s->lock);
	}
	json_decref(ev);
	log_warn("run: %s %s%s%s%s", what[h->what], h->path,
		 h->moved_to ? ": the agent's version is held aside at " : "",
		 h->moved_to ? h->moved_to : "", h->restored ? "; the original is back" : "");
	if (h->detail)
		log_warn("run:   %s", h->detail);
}

/* Only once every task of the session is dead (sup_loop's end killed its cgroup). */
void git_quarantine(struct sup *s)
{
	(void)git_guard_end(&s->git, held_aside, s);
}

/* The end of the log: the "end" record, the seal, the key wiped. */
void *seal_audit(void *arg)
{
	struct sup *s = arg;
	json_t *fin = json_pack("{s:s,s:i,s:I}", "event", "end", "exit", s->exit_status,
				"steps", (json_int_t)steps_count(&s->steps));
	uint64_t dropped = 0;

	if (fin)        /* "held", and the calls answered ENOENT unrecorded */
		(void)sup_stats_to_json(&s->stats, fin);
	if (fin && s->stop_reason[0])
		json_object_set_new(fin, "stopped", json_string(s->stop_reason));
	if (fin && audit_down(s->audit, &dropped) < 0)
		json_object_set_new(fin, "records_dropped", json_integer((json_int_t)dropped));
	if (fin && s->floor_dropped)
		json_object_set_new(fin, "floor_events_dropped",
				    json_integer((json_int_t)s->floor_dropped));
	if (fin && audit_ship_lost(s->audit))
		json_object_set_new(fin, "ship_lost", json_integer((json_int_t)audit_ship_lost(s->audit)));
	if (fin && s->net_dropped)
		json_object_set_new(fin, "net_events_dropped",
				    json_integer((json_int_t)s->net_dropped));
	(void)audit_write(s->audit, "lifecycle", fin);
	json_decref(fin);
	(void)audit_seal(s->audit, NULL);
	audit_close(s->audit);
	s->audit = NULL;
	reap_forget_log(s->name);
	return NULL;
}
