// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The audit log as the supervisor leaves it on disk.
 *
 *   audit_writer write LOG KEY_DIR SESSION
 *     writes the log of a small session for audit_cli.sh (the secret comes
 *     from $AUDIT_SECRET, so it is not on the command line).
 *   audit_writer
 *     tests what a writer killed mid-session (SIGKILL, no audit_close)
 *     leaves behind: every whole record still authenticates, and the only
 *     problem reported is the missing seal (and at most a cut last line: a
 *     fatal signal can stop a write(2) between two pages).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "../tap.h"
#include "audit.h"

static int write_session(const char *log, const char *key_dir, const char *session)
{
	const char *secret = getenv("AUDIT_SECRET");
	struct audit *a = NULL;
	json_t *j;
	int r;

	j = json_pack("{s:s,s:s}", "profile", "coding-agent", "workspace", "/work/p");
	r = audit_open(log, session, key_dir, j, &a);
	json_decref(j);
	if (r < 0) {
		fprintf(stderr, "audit_open %s: %s\n", log, strerror(-r));
		return 1;
	}
	if (secret && audit_add_secret(a, "anthropic", secret) < 0)
		return 1;
#define W(type, ...) do {							\
		j = json_pack(__VA_ARGS__);					\
		if (!j || (r = audit_write(a, type, j)) < 0) {			\
			fprintf(stderr, "audit_write: %s\n", strerror(-r));	\
			return 1;						\
		}								\
		json_decref(j);							\
	} while (0)
	W("lifecycle", "{s:s,s:i}", "event", "agent-started", "pid", 1200);
	W("decision", "{s:i,s:s,s:{s:s,s:s,s:{s:[s,s,s,s]}},s:s,s:s,s:s,s:s}",
	  "pid", 1234, "comm", "git",
	  "event", "server", "shell", "tool", "exec", "arguments", "argv", "git", "push", "origin", "main",
	  "decision", "escalate", "rule", "git-push", "reason", "pushes leave the machine",
	  "approver", "alice");
	W("decision", "{s:i,s:s,s:{s:s,s:s,s:{s:s,s:i}},s:s,s:s,s:s}",
	  "pid", 1240, "comm", "curl",
	  "event", "server", "net", "tool", "connect", "arguments", "host", "1.2.3.4", "port", 443,
	  "decision", "allow", "rule", "api-hosts", "reason", "listed host");
	W("decision", "{s:i,s:s,s:{s:s,s:[s,s]},s:s,s:s,s:s}",
	  "pid", 1250, "comm", "cat",
	  "raw", "syscall", "openat", "args", "/home/agent/.ssh/id_rsa", "O_RDONLY",
	  "decision", "deny", "rule", "credential-store", "reason", "protected path");
	W("decision", "{s:i,s:s,s:{s:s,s:s,s:{s:s,s:s}},s:s,s:s,s:s}",
	  "pid", 1260, "comm", "node",
	  "event", "server", "http", "tool", "fetch", "arguments",
	  "url", "https://api.example.com/v1", "header", secret ? secret : "none",
	  "decision", "allow", "rule", "http-fetch", "reason", "tool allowed");
	/* Agent-controlled text that would clear a terminal and reverse a line. */
	W("decision", "{s:i,s:s,s:{s:s,s:s,s:{s:s}},s:s,s:s,s:s}",
	  "pid", 1270, "comm", "sh",
	  "event", "server", "shell", "tool", "exec", "arguments",
	  "command", "echo \x1b[2J\xe2\x80\xae" "evil",
	  "decision", "deny", "rule", "default", "reason", "no rule allows it");
	W("budget", "{s:i,s:i}", "budget_tokens", 50000, "used_tokens", 1234);
	W("lifecycle", "{s:s,s:i}", "event", "agent-exited", "status", 0);
#undef W
	j = json_pack("{s:s}", "why", "session ended");
	r = audit_seal(a, j);
	json_decref(j);
	audit_close(a);
	if (r < 0) {
		fprintf(stderr, "audit_seal: %s\n", strerror(-r));
		return 1;
	}
	return 0;
}

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	return remove(p);
}

static int killed_writer(void)
{
	char dir[] = "/tmp/cordon-audit-writer.XXXXXX", log[128], keys[128], key[160];
	struct audit_verify_stats st;
	char *rep = NULL, *line, *save = NULL;
	size_t len = 0;
	bool only_truncation = true;
	struct stat sb;
	FILE *f;
	pid_t pid;
	int r, status;

	if (!mkdtemp(dir))
		return tap_ok(0, "mkdtemp: %m"), tap_done();
	snprintf(log, sizeof(log), "%s/audit.jsonl", dir);
	snprintf(keys, sizeof(keys), "%s/keys", dir);
	snprintf(key, sizeof(key), "%s/killed.key", keys);
	pid = fork();
	if (pid == 0) {
		struct audit *a = NULL;

		if (audit_open(log, "killed", keys, NULL, &a) < 0)
			_exit(1);
		for (long i = 0;; i++) {
			json_t *j = json_pack("{s:I,s:s}", "n", (json_int_t)i, "pad",
					      "................................................................"
					      "................................................................");

			if (audit_write(a, "decision", j) < 0)
				_exit(2);
			json_decref(j);
		}
	}
	/* Let it write a few thousand records, then kill it mid-stream. */
	for (int i = 0; i < 500; i++) {
		if (stat(log, &sb) == 0 && sb.st_size > 1 << 20)
			break;
		usleep(2000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	tap_ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "the writer was killed mid-session");

	f = open_memstream(&rep, &len);
	r = audit_verify_stats(log, key, f, &st);
	fclose(f);
	tap_ok(r == -EBADMSG, "an unsealed log does not verify (%d)", r);
	tap_ok(st.lines > 100, "the writer got %zu lines out before it died", st.lines);
	tap_ok(st.records + 1 >= st.lines, "every whole record authenticates (%zu of %zu lines)",
	       st.records, st.lines);
	tap_ok(rep && strstr(rep, "truncated: no seal after the last record"), "the missing seal is reported");
	for (line = strtok_r(rep, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		tap_diag("%s", line);
		if (!strstr(line, "truncated") && !strstr(line, "bad JSON"))
			only_truncation = false;
	}
	tap_ok(only_truncation && st.problems >= 1 && st.problems <= 3,
	       "only the missing seal (or a cut last line) is reported (%zu problems)", st.problems);
	free(rep);
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	return tap_done();
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "write"))
		return write_session(argv[2], argv[3], argv[4]);
	if (argc != 1) {
		fprintf(stderr, "usage: audit_writer [write LOG KEY_DIR SESSION]\n");
		return 2;
	}
	return killed_writer();
}
