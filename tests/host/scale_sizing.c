// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The shared session maps hold 500 sessions of the default profile (issue
 * 36), and what one session takes of the shared file-rule map does not grow
 * with cordon's own state or with the sessions alive: objects under a
 * protected directory that only root could hard-link, and directories only
 * root can search, take no entry (loader/floor.c, enumerate).  Before, a
 * session keyed every audit log, audit key, home layer and live session's
 * run directory: 1,601 entries on a host with some history, forty sessions
 * of the full posture's 65,536.  No floor is loaded: floor_compile_count
 * compiles a policy as a session start does, against this host's files.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "../tap.h"
#include "cordon.h"
#include "floor.h"
#include "policy.h"

#define SCALE_SESSIONS 500      /* the target: docs/benchmarks.md, Scale */

static char dir[] = "/var/tmp/cordon-scale.XXXXXX";

static int count(const char *ws, const char *home, size_t *n)
{
	struct pol_vars vars = {};
	struct pol_diags ds = {};
	struct policy *p = NULL;
	int r;

	pol_vars_set(&vars, "WORKSPACE", ws);
	pol_vars_set(&vars, "HOME", home);
	pol_vars_set(&vars, "TMPDIR", "/tmp");
	r = pol_load("coding-agent", &vars, &p, &ds);
	if (r == 0)
		r = floor_compile_count(p, -1, n);
	pol_free(p);
	pol_diags_free(&ds);
	pol_vars_free(&vars);
	return r;
}

static void file(const char *d, const char *name, mode_t mode, uid_t uid)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", d, name);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || fchmod(fd, mode) < 0 || fchown(fd, uid, 0) < 0)
		tap_diag("%s: %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
}

static void sock(const char *d, const char *name)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (snprintf(a.sun_path, sizeof(a.sun_path), "%s/%s", d, name) >= (int)sizeof(a.sun_path))
		tap_diag("%s/%s: too long for a socket's path", d, name);
	else if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		tap_diag("%s: %s", a.sun_path, strerror(errno));
	if (fd >= 0)
		close(fd);
}

static bool guarded(mode_t type_mode, uid_t uid, bool ph)
{
	struct stat st = { .st_mode = type_mode, .st_uid = uid };

	return floor_link_guarded(&st, ph);
}

int main(void)
{
	char ws[600], home[600], ssh[700], d[800], name[32];
	size_t n0 = 0, n1 = 0, n2 = 0;
	bool ph;
	int c;

	/* The predicates, both halves. */
	tap_ok(guarded(S_IFDIR | 0777, 1000, false), "a directory cannot be hard-linked by anyone");
	tap_ok(guarded(S_IFREG | 0600, 0, true), "root's 0600 file: only root links it (protected_hardlinks)");
	tap_ok(guarded(S_IFREG | 0644, 0, true), "root's 0644 file: readable is not enough to link it");
	tap_ok(guarded(S_IFSOCK | 0666, 0, true), "root's socket: only its owner links a non-regular file");
	tap_ok(guarded(S_IFREG | 04777, 0, true), "root's setuid file is never linkable by others");
	tap_ok(!guarded(S_IFREG | 0666, 0, true), "root's 0666 file: anyone may link it");
	tap_ok(!guarded(S_IFREG | 0660, 0, true), "root's 0660 file: its group may link it");
	tap_ok(!guarded(S_IFREG | 0600, 1000, true), "a user's own file: its owner links it");
	tap_ok(!guarded(S_IFREG | 0600, 0, false), "without protected_hardlinks, anything may be linked");
	{
		struct stat a = { .st_mode = S_IFDIR | 0700 }, b = { .st_mode = S_IFDIR | 0711 },
			    u = { .st_mode = S_IFDIR | 0700, .st_uid = 1000 };

		tap_ok(floor_root_only_dir(&a) && !floor_root_only_dir(&b) && !floor_root_only_dir(&u),
		       "only a root-owned directory without search for others is root-only");
	}

	tap_ok(CORDON_MAX_SESSIONS >= SCALE_SESSIONS, "the session maps hold %d sessions (%d)",
	       SCALE_SESSIONS, CORDON_MAX_SESSIONS);
	if (geteuid() != 0)
		tap_skip_all("needs root: root-owned objects under a protected directory");
	if (!mkdtemp(dir))
		tap_skip_all("cannot make a temporary directory");
	c = open("/proc/sys/fs/protected_hardlinks", O_RDONLY);
	{
		char v = '0';

		ph = c >= 0 && read(c, &v, 1) == 1 && v == '1';
		if (c >= 0)
			close(c);
	}
	snprintf(ws, sizeof(ws), "%s/ws", dir);
	snprintf(home, sizeof(home), "%s/home", dir);
	snprintf(ssh, sizeof(ssh), "%s/.ssh", home);
	mkdir(ws, 0755);
	mkdir(home, 0755);
	mkdir(ssh, 0700);

	c = count(ws, home, &n0);
	tap_ok(c == 0, "the default profile compiles (%zu entries)", n0);
	tap_ok(n0 * SCALE_SESSIONS <= CORDON_MAX_FS_RULES,
	       "%d sessions of it fit the shared rule map (%zu x %d <= %d)", SCALE_SESSIONS, n0,
	       SCALE_SESSIONS, CORDON_MAX_FS_RULES);

	/* A protected directory (the credential store ~/.ssh) filled as cordon
	 * fills its own state: a root-only directory of many files, and a run
	 * directory (0711) of root's files and sockets per session. */
	snprintf(d, sizeof(d), "%s/state", ssh);
	mkdir(d, 0700);
	for (int i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "log%d", i);
		file(d, name, 0600, 1000);  /* even a user's: nobody else can name them */
	}
	for (int i = 0; i < 100; i++) {
		snprintf(d, sizeof(d), "%s/s%d", ssh, i);
		mkdir(d, 0711);
		file(d, "session.json", 0644, 0);
		sock(d, "approve.sock");
	}
	c = count(ws, home, &n1);
	tap_ok(c == 0, "the profile compiles beside 100 run directories");
	if (ph)
		tap_ok(n1 == n0, "they add no entry (%zu, before %zu)", n1, n0);
	else
		tap_ok(1, "run directories keyed (%zu) # SKIP fs.protected_hardlinks is off", n1);

	/* What others could link is keyed: a user's file, root's 0666 file. */
	snprintf(d, sizeof(d), "%s/s0", ssh);
	file(d, "mine", 0600, 1000);
	file(d, "open", 0666, 0);
	c = count(ws, home, &n2);
	tap_ok(c == 0 && n2 == n1 + 2,
	       "a file its user owns and one anyone may write are keyed (%zu, before %zu)", n2, n1);

	{
		char cmd[700];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			tap_diag("could not remove %s", dir);
	}
	return tap_done();
}
