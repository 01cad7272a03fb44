// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `cordon pending`, `cordon approve ID [--session]`, `cordon deny ID`: the
 * human's side of the approval socket of every running session (see
 * approve.c for who may speak to it).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "run.h"
#include "util.h"
#include <jansson.h>

#define RUN_DIR "/run/cordon"
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
	snprintf(a.sun_path, sizeof(a.sun_path), RUN_DIR "/%s/approve.sock", session);
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
	DIR *d = opendir(RUN_DIR);
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

int cmd_pending(int argc, char **argv)
{
	char names[256][40];
	bool json = argc > 1 && !strcmp(argv[1], "--json");
	int n = sessions(names, 256), shown = 0;
	json_t *all = json_array();

	for (int i = 0; i < n; i++) {
		json_t *req = json_pack("{s:s}", "cmd", "pending"), *rep, *v;
		size_t j;
		int err;

		rep = ask(names[i], req, &err);
		json_decref(req);
		if (!rep)
			continue;       /* a session that ended, or not ours to see */
		if (json_object_get(rep, "error")) {
			log_err("pending: session %s: %s", names[i],
				json_string_value(json_object_get(rep, "error")));
			json_decref(rep);
			continue;
		}
		json_array_foreach(json_object_get(rep, "pending"), j, v) {
			json_array_append(all, v);
			if (!json)
				printf("%s:%lld  %s\n    rule %s: %s\n    %lld call(s) waiting, %lld s left\n",
				       names[i], (long long)json_integer_value(json_object_get(v, "id")),
				       json_string_value(json_object_get(v, "summary")),
				       json_string_value(json_object_get(v, "rule")),
				       json_string_value(json_object_get(v, "risk")),
				       (long long)json_integer_value(json_object_get(v, "waiting")),
				       (long long)json_integer_value(json_object_get(v, "expires_in_ms")) / 1000);
			shown++;
		}
		json_decref(rep);
	}
	if (json) {
		json_dumpf(all, stdout, JSON_INDENT(2));
		fputc('\n', stdout);
	} else if (!shown) {
		printf("nothing pending\n");
	}
	json_decref(all);
	return 0;
}

static int decide(int argc, char **argv, const char *cmd)
{
	char names[256][40], session[40] = "";
	bool sess = false;
	const char *id_s = NULL, *colon;
	unsigned long id;
	char *end;
	int n, tried = 0;

	for (int i = 1; i < argc; i++) {
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
		snprintf(session, sizeof(session), "%.*s", (int)(colon - id_s), id_s);
		id_s = colon + 1;
	}
	id = strtoul(id_s, &end, 10);
	if (!*id_s || *end || !id) {
		log_err("%s: '%s' is not a request id (see `cordon pending`)", cmd, id_s);
		return 2;
	}
	n = session[0] ? 1 : sessions(names, 256);
	if (session[0])
		snprintf(names[0], 40, "%s", session);
	for (int i = 0; i < n; i++) {
		json_t *req = json_pack("{s:s,s:i,s:b}", "cmd", cmd, "id", (int)id, "session", sess);
		json_t *rep;
		int err;

		rep = ask(names[i], req, &err);
		json_decref(req);
		if (!rep)
			continue;
		tried++;
		if (json_is_true(json_object_get(rep, "ok"))) {
			printf("%s:%lu %s (%lld call%s)\n", names[i], id,
			       !strcmp(cmd, "deny") ? "denied" : sess ? "approved for the session" : "approved",
			       (long long)json_integer_value(json_object_get(rep, "calls")),
			       json_integer_value(json_object_get(rep, "calls")) == 1 ? "" : "s");
			json_decref(rep);
			return 0;
		}
		if (session[0] || n == 1)
			log_err("%s: %s: %s", cmd, names[i],
				json_string_value(json_object_get(rep, "error")) ?: "refused");
		json_decref(rep);
	}
	if (!tried)
		log_err("%s: no running session%s%s reachable", cmd, session[0] ? " " : "", session);
	else if (!session[0] && n != 1)
		log_err("%s: no session has a pending request %lu", cmd, id);
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
