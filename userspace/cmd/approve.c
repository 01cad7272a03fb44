// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `cordon pending [--all] [--json]`, `cordon approve [SESSION:]ID
 * [--session]`, `cordon deny [SESSION:]ID`, `cordon stop SESSION`: the
 * human's side of the approval socket of every running session (see
 * approve.c for who may speak to it).
 *
 * Scope.  A session is the caller's own when its invoker (the user who
 * started it: SUDO_UID under sudo, else root) is the caller (SUDO_UID too
 * when root runs this under sudo, else the real uid).  `pending` lists the
 * caller's own sessions; root sees every session only with --all (root's
 * own by default: on a shared host, another user's question is not root's
 * to answer by accident).  A bare ID is looked up in the caller's own
 * sessions only, and refused when it is pending in more than one of them
 * (the choices are printed as SESSION:ID); SESSION:ID names one session,
 * which the supervisor then authorises (root or its invoker).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "cmd.h"
#include "instance.h"
#include "policy.h"
#include "util.h"
#include <jansson.h>

#define REPLY_MAX (64u << 20)

/* One request to one session; returns the reply or NULL (errno-style in *err). */
static json_t *ask(const char *session, json_t *req, int *err)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char *line = json_dumps(req, JSON_COMPACT), *buf = NULL;
	size_t got = 0, cap = 0;
	json_t *rep;
	int fd;

	*err = 0;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s/%s/approve.sock", instance_run_dir(), session);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || !line ||
	    send(fd, line, strlen(line), MSG_NOSIGNAL) < 0) {
		*err = errno;
		if (fd >= 0)
			close(fd);
		free(line);
		return NULL;
	}
	free(line);
	/* The answer is one line, read whole (a long pending list included), up to REPLY_MAX. */
	for (;;) {
		ssize_t n;

		if (cap - got < 4096) {
			char *b = cap < REPLY_MAX ? realloc(buf, cap ? cap * 2 : 1 << 16) : NULL;

			if (!b)
				break;
			buf = b;
			cap = cap ? cap * 2 : 1 << 16;
		}
		n = recv(fd, buf + got, cap - 1 - got, 0);
		if (n <= 0)
			break;
		if (memchr(buf + got, '\n', (size_t)n)) {
			got += (size_t)n;
			break;
		}
		got += (size_t)n;
	}
	close(fd);
	rep = NULL;
	if (buf) {
		buf[got] = '\0';
		rep = json_loads(buf, 0, NULL);
	}
	free(buf);
	if (!rep)
		*err = EPROTO;
	return rep;
}

static int sessions(char names[][40], int max)
{
	DIR *d = opendir(instance_run_dir());
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)) && n < max)
		if (e->d_name[0] == 's' && strlen(e->d_name) < 40)
			snprintf(names[n++], 40, "%s", e->d_name);
	closedir(d);
	return n;
}

/* The caller as a session's invoker would be recorded (run.c: SUDO_UID or root). */
static uid_t caller_uid(void)
{
	const char *su = getenv("SUDO_UID");
	char *end;
	unsigned long v;

	if (getuid() != 0 || !su || !*su)
		return getuid();
	v = strtoul(su, &end, 10);
	return *end || v > UINT32_MAX - 1 ? 0 : (uid_t)v;
}

/* Every reachable session's `pending` reply (own only unless all), in an array. */
static json_t *gather(bool all)
{
	char names[256][40];
	int n = sessions(names, 256);
	uid_t me = caller_uid();
	json_t *out = json_array();

	for (int i = 0; i < n; i++) {
		json_t *req = json_pack("{s:s}", "cmd", "pending"), *rep;
		int err;

		rep = ask(names[i], req, &err);
		json_decref(req);
		if (!rep)
			continue;       /* a session that ended, or not ours to see */
		if (json_object_get(rep, "error")) {
			if (all)
				log_err("pending: session %s: %s", names[i],
					json_string_value(json_object_get(rep, "error")));
			json_decref(rep);
			continue;
		}
		if (!all && (uid_t)json_integer_value(json_object_get(rep, "invoker")) != me) {
			json_decref(rep);
			continue;
		}
		json_array_append_new(out, rep);
	}
	return out;
}

static void print_age(long long ms)
{
	long long sec = ms / 1000;

	if (sec < 120)
		printf("%llds", sec);
	else if (sec < 7200)
		printf("%lldm", sec / 60);
	else
		printf("%lldh", sec / 3600);
}

static void print_intent(const char *session, json_t *v)
{
	json_t *exp = json_object_get(v, "expires_in_ms");

	printf("%s intent %lld: %s\n    stated by %s, ", session,
	       (long long)json_integer_value(json_object_get(v, "id")),
	       json_string_value(json_object_get(v, "sentence")),
	       json_string_value(json_object_get(v, "approver")));
	if (json_is_integer(exp))
		printf("expires in %lld s\n", (long long)json_integer_value(exp) / 1000);
	else
		printf("lives as long as the session\n");
}

int cmd_pending(int argc, char **argv)
{
	bool json = false, all = false;
	json_t *sess, *flat = json_array(), *v, *r;
	size_t i, j;
	int shown = 0;

	for (int k = 1; k < argc; k++) {
		if (!strcmp(argv[k], "--help") || !strcmp(argv[k], "-h")) {
			printf("usage: cordon pending [--all] [--json]\n"
			       "What waits for a human in your running sessions: each held request\n"
			       "([SESSION:]ID for `cordon approve` / `cordon deny`), who and where,\n"
			       "the rule that holds it, and the live intents.  --all: every user's\n"
			       "sessions (root only).\n");
			return 0;
		}
		if (!strcmp(argv[k], "--json"))
			json = true;
		else if (!strcmp(argv[k], "--all"))
			all = true;
		else {
			log_err("pending: unexpected argument '%s' (usage: cordon pending [--all] "
				"[--json])", argv[k]);
			return 2;
		}
	}
	if (all && getuid() != 0) {
		log_err("pending: --all needs root (you see your own sessions)");
		return 2;
	}
	sess = gather(all);
	json_array_foreach(sess, i, r) {
		json_array_foreach(json_object_get(r, "pending"), j, v) {
			json_t *e = json_deep_copy(v);

			json_object_set(e, "user", json_object_get(r, "user"));
			json_object_set(e, "workspace", json_object_get(r, "workspace"));
			json_object_set(e, "command", json_object_get(r, "command"));
			json_array_append_new(flat, e);
			if (json) {
				shown++;
				continue;
			}
			printf("%s:%lld  %s\n    user %s, workspace %s, command %s\n"
			       "    rule %s: %s\n    %lld call(s) waiting for ",
			       json_string_value(json_object_get(r, "session")),
			       (long long)json_integer_value(json_object_get(v, "id")),
			       json_string_value(json_object_get(v, "summary")),
			       json_string_value(json_object_get(r, "user")),
			       json_string_value(json_object_get(r, "workspace")),
			       json_string_value(json_object_get(r, "command")),
			       json_string_value(json_object_get(v, "rule")),
			       json_string_value(json_object_get(v, "risk")),
			       (long long)json_integer_value(json_object_get(v, "waiting")));
			print_age((long long)json_integer_value(json_object_get(v, "age_ms")));
			printf(", %lld s left\n",
			       (long long)json_integer_value(json_object_get(v, "expires_in_ms")) / 1000);
			shown++;
		}
	}
	/* The live intents: what a held request is approved by without asking. */
	json_array_foreach(sess, i, r) {
		json_array_foreach(json_object_get(r, "intents"), j, v) {
			json_t *e = json_deep_copy(v);

			json_object_set(e, "session", json_object_get(r, "session"));
			json_object_set_new(e, "type", json_string("intent"));
			json_array_append_new(flat, e);
			if (!json)
				print_intent(json_string_value(json_object_get(r, "session")), v);
			shown++;
		}
	}
	if (json) {
		json_dumpf(flat, stdout, JSON_INDENT(2));
		fputc('\n', stdout);
	} else if (!shown) {
		printf("nothing pending%s\n", all ? "" : " in your sessions");
	}
	json_decref(flat);
	json_decref(sess);
	return 0;
}

/* A bare ID: the one own session where it is pending; else NULL, the error said. */
static bool find_bare(const char *cmd, unsigned long id, char out[40])
{
	json_t *sess = gather(false), *r, *v;
	size_t i, j;
	int hits = 0;

	json_array_foreach(sess, i, r)
		json_array_foreach(json_object_get(r, "pending"), j, v)
			if ((unsigned long)json_integer_value(json_object_get(v, "id")) == id) {
				if (!hits++)
					snprintf(out, 40, "%s", json_string_value(json_object_get(r, "session")));
			}
	if (hits == 0) {
		log_err("%s: no session of yours has a pending request %lu (see `cordon pending`%s)",
			cmd, id, getuid() == 0 ? "; another user's: SESSION:ID, from `cordon pending --all`" : "");
	} else if (hits > 1) {
		log_err("%s: %lu is pending in %d sessions; name one:", cmd, id, hits);
		json_array_foreach(sess, i, r)
			json_array_foreach(json_object_get(r, "pending"), j, v)
				if ((unsigned long)json_integer_value(json_object_get(v, "id")) == id)
					fprintf(stderr, "  cordon %s %s:%lu    # %s (workspace %s)\n", cmd,
						json_string_value(json_object_get(r, "session")), id,
						json_string_value(json_object_get(v, "summary")),
						json_string_value(json_object_get(r, "workspace")));
	}
	json_decref(sess);
	return hits == 1;
}

static int decide(int argc, char **argv, const char *cmd)
{
	char session[40] = "";
	bool sess = false;
	const char *id_s = NULL, *colon;
	unsigned long id;
	char *end;
	json_t *req, *rep;
	int err;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("usage: cordon %s [SESSION:]ID%s\n", cmd,
			       !strcmp(cmd, "approve") ? " [--session]" : "");
			printf("%s the request ID that `cordon pending` lists (SESSION:ID names the\n"
			       "session when ID is pending in more than one of yours, or another\n"
			       "user's, as root).%s\n", !strcmp(cmd, "approve") ? "Approve" : "Deny",
			       !strcmp(cmd, "approve") ? "  --session: approve every call like it for the "
							 "rest\nof the session." : "");
			return 0;
		}
		if (!strcmp(argv[i], "--session") && !strcmp(cmd, "approve"))
			sess = true;
		else if (!id_s && argv[i][0] != '-')
			id_s = argv[i];
		else {
			log_err("%s: unexpected argument '%s'", cmd, argv[i]);
			return 2;
		}
	}
	if (!id_s) {
		fprintf(stderr, "usage: cordon %s [SESSION:]ID%s\n", cmd,
			!strcmp(cmd, "approve") ? " [--session]" : "");
		return 2;
	}
	colon = strchr(id_s, ':');
	if (colon) {
		if ((size_t)(colon - id_s) >= sizeof(session) || colon == id_s ||
		    memchr(id_s, '/', (size_t)(colon - id_s))) {
			log_err("%s: '%.*s' is not a session name", cmd, (int)(colon - id_s), id_s);
			return 2;
		}
		snprintf(session, sizeof(session), "%.*s", (int)(colon - id_s), id_s);
		id_s = colon + 1;
	}
	id = strtoul(id_s, &end, 10);
	if (!*id_s || *end || !id || id > INT32_MAX) {
		log_err("%s: '%s' is not a request id (see `cordon pending`)", cmd, id_s);
		return 2;
	}
	if (!session[0] && !find_bare(cmd, id, session))
		return 1;
	req = json_pack("{s:s,s:i,s:b}", "cmd", cmd, "id", (int)id, "session", sess);
	rep = ask(session, req, &err);
	json_decref(req);
	if (!rep) {
		log_err("%s: session %s: %s", cmd, session, err == ENOENT ? "no such running session" :
			strerror(err));
		return 1;
	}
	if (json_is_true(json_object_get(rep, "ok"))) {
		printf("%s:%lu %s (%lld call%s)\n", session, id,
		       !strcmp(cmd, "deny") ? "denied" : sess ? "approved for the session" : "approved",
		       (long long)json_integer_value(json_object_get(rep, "calls")),
		       json_integer_value(json_object_get(rep, "calls")) == 1 ? "" : "s");
		json_decref(rep);
		return 0;
	}
	log_err("%s: %s: %s", cmd, session,
		json_string_value(json_object_get(rep, "error")) ?: "refused");
	json_decref(rep);
	return 1;
}

int cmd_approve(int argc, char **argv)
{
	return decide(argc, argv, "approve");
}

int cmd_deny(int argc, char **argv)
{
	return decide(argc, argv, "deny");
}

static int intent_usage(int code)
{
	fprintf(code ? stderr : stdout,
		"usage: cordon intent SESSION \"SENTENCE\" [--for DURATION] [--json]\n"
		"       cordon intent SESSION --list [--json]\n"
		"       cordon intent SESSION --revoke ID\n"
		"State what you want the session's agent to do, in the constitution's language\n"
		"(\"push the branch feature-x to origin\", \"read /srv/data for an hour\"): a held\n"
		"request it covers is approved, now and until it expires (--for, or the sentence's\n"
		"own \"for an hour\"; default: the session) or is revoked.  It only approves what the\n"
		"session's policy would ask about; what the policy denies stays denied.\n");
	return code;
}

/*
 * `cordon intent`: over approve.sock only, as approve (the supervisor
 * checks the peer: root or the invoker, outside every session), so the
 * agent cannot state an intent for itself.
 */
int cmd_intent(int argc, char **argv)
{
	const char *session = NULL, *sentence = NULL, *revoke = NULL;
	bool list = false, json = false;
	uint64_t for_s = 0;
	json_t *req, *rep, *v;
	size_t i;
	int err;

	for (int k = 1; k < argc; k++) {
		if (!strcmp(argv[k], "--help") || !strcmp(argv[k], "-h"))
			return intent_usage(0);
		if (!strcmp(argv[k], "--list")) {
			list = true;
		} else if (!strcmp(argv[k], "--json")) {
			json = true;
		} else if (!strcmp(argv[k], "--revoke") && k + 1 < argc) {
			revoke = argv[++k];
		} else if (!strcmp(argv[k], "--for") && k + 1 < argc) {
			if (pol_parse_duration(argv[++k], &for_s) < 0 || !for_s || for_s > UINT32_MAX) {
				log_err("intent: --for '%s' is not a duration (e.g. 30m, 2h)", argv[k]);
				return 2;
			}
		} else if (argv[k][0] != '-' && !session) {
			session = argv[k];
		} else if (argv[k][0] != '-' && !sentence) {
			sentence = argv[k];
		} else {
			log_err("intent: unexpected argument '%s'", argv[k]);
			return intent_usage(2);
		}
	}
	if (!session || strchr(session, '/') || strlen(session) >= 40 ||
	    (!!sentence + list + !!revoke) != 1 || (for_s && !sentence))
		return intent_usage(2);
	if (revoke) {
		char *end;
		unsigned long id = strtoul(revoke, &end, 10);

		if (!*revoke || *end || !id || id > INT32_MAX) {
			log_err("intent: --revoke '%s' is not an intent id", revoke);
			return 2;
		}
		req = json_pack("{s:s,s:i}", "cmd", "revoke", "id", (int)id);
	} else if (list) {
		req = json_pack("{s:s}", "cmd", "intents");
	} else {
		req = json_pack("{s:s,s:s,s:I}", "cmd", "intent", "sentence", sentence, "for_s",
				(json_int_t)for_s);
	}
	rep = ask(session, req, &err);
	json_decref(req);
	if (!rep) {
		log_err("intent: session %s: %s", session, err == ENOENT ? "no such running session" :
			strerror(err));
		return 1;
	}
	if (json_object_get(rep, "error")) {
		log_err("intent: session %s: %s", session,
			json_string_value(json_object_get(rep, "error")));
		json_decref(rep);
		return 1;
	}
	if (json) {
		json_dumpf(rep, stdout, JSON_INDENT(2));
		fputc('\n', stdout);
	} else if (revoke) {
		printf("%s: intent %s revoked\n", session, revoke);
	} else if (list) {
		json_array_foreach(json_object_get(rep, "intents"), i, v)
			print_intent(session, v);
		if (!json_array_size(json_object_get(rep, "intents")))
			printf("%s: no live intents\n", session);
	} else {
		printf("%s: intent %lld stated (%lld held call%s approved by it)\n", session,
		       (long long)json_integer_value(json_object_get(rep, "id")),
		       (long long)json_integer_value(json_object_get(rep, "calls")),
		       json_integer_value(json_object_get(rep, "calls")) == 1 ? "" : "s");
	}
	json_decref(rep);
	return 0;
}

/*
 * `cordon stop SESSION`: the session's supervisor stops it as on SIGTERM
 * (sup_stop: every process told, the cgroup killed after the grace).  Who
 * may: root or the session's invoker, as for approvals (approve.c).
 */
int cmd_stop(int argc, char **argv)
{
	json_t *req, *rep;
	int err;

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: cordon stop SESSION\nStop a running session: every process told "
		       "(SIGTERM), its cgroup killed\nafter a grace.  SESSION as `cordon pending` or "
		       "the session's start shows it.\n");
		return 0;
	}
	for (int i = 1; i < argc; i++)
		if (argv[i][0] == '-') {
			log_err("stop: unknown option '%s' (usage: cordon stop SESSION)", argv[i]);
			return 2;
		}
	if (argc != 2 || strchr(argv[1], '/') || strlen(argv[1]) >= 40) {
		fprintf(stderr, "usage: cordon stop SESSION   (SESSION as `cordon pending` or the "
			"session's start shows it)\n");
		return 2;
	}
	req = json_pack("{s:s}", "cmd", "stop");
	rep = ask(argv[1], req, &err);
	json_decref(req);
	if (!rep) {
		log_err("stop: session %s: %s", argv[1], err == ENOENT ? "no such running session" :
			strerror(err));
		return 1;
	}
	if (!json_is_true(json_object_get(rep, "ok"))) {
		log_err("stop: session %s: %s", argv[1],
			json_string_value(json_object_get(rep, "error")) ?: "refused");
		json_decref(rep);
		return 1;
	}
	printf("%s: stopping (killed in %lld s if still running)\n", argv[1],
	       (long long)json_integer_value(json_object_get(rep, "grace_ms")) / 1000);
	json_decref(rep);
	return 0;
}
