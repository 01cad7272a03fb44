// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The fallback with the shipped coding-agent profile keeps an agent's real
 * work possible: a process started after the sandbox reads /proc/self, runs
 * a shell from /usr, writes the workspace and /tmp, while the credential
 * store under HOME stays unreadable.  (The fixture lives in /var/tmp: a HOME
 * under /tmp would put a protected path under /tmp, and the fallback can
 * only split /tmp around it, which stops files being created directly in
 * /tmp; policy/README.md's fallback notes say so.)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <sys/mount.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "../tap.h"
#include "fallback.h"
#include "policy.h"

/*
 * Run fn in a sandboxed child's grandchild (created after apply).  With
 * `cover`, as cordon run does it: the child's own mount namespace covers
 * the read-denied directories the ruleset's listing rights count on.
 */
static int in_sandbox_as(const struct policy *p, bool cover, int (*fn)(const char *),
			 const char *arg)
{
	int st;
	pid_t c = fork();

	if (c == 0) {
		struct fallback_options opt = { .cover_denied_dirs = cover };
		struct fallback_report rep;
		char why[512];
		int fd;
		pid_t g;

		if (cover && (unshare(CLONE_NEWNS) < 0 ||
			      mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0))
			_exit(202);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
			_exit(200);
		fd = fallback_prepare(p, &opt, &rep);
		if (fd < 0 || (cover && fallback_cover_dirs(&rep, why, sizeof(why)) < 0) ||
		    fallback_apply_prepared(fd, &rep) < 0) {
			printf("# fallback: %s\n", rep.error[0] ? rep.error : why);
			fflush(stdout);
			_exit(200);
		}
		g = fork();
		if (g == 0)
			_exit(fn(arg));
		if (g < 0 || waitpid(g, &st, 0) < 0 || !WIFEXITED(st))
			_exit(201);
		_exit(WEXITSTATUS(st));
	}
	if (c < 0 || waitpid(c, &st, 0) < 0 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static int in_sandbox(const struct policy *p, int (*fn)(const char *), const char *arg)
{
	return in_sandbox_as(p, false, fn, arg);
}

/* Entries of a directory other than . and .., or -errno when it cannot be listed. */
static int list_count(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;

	if (!d)
		return errno == EACCES ? 250 : 251;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n > 0 ? 0 : 252;         /* 0: listed with entries */
}

static int read_file_errno(const char *path)
{
	char b[64];
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return errno;
	if (read(fd, b, sizeof(b)) < 0)
		return errno;
	close(fd);
	return 0;
}

static int create_errno(const char *path)
{
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* "family/type/protocol" -> errno of socket() */
static int socket_errno(const char *spec)
{
	int fam, type, proto, fd;

	if (sscanf(spec, "%d/%d/%d", &fam, &type, &proto) != 3)
		return 254;
	fd = socket(fam, type, proto);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static int run_shell(const char *cmd)
{
	int st;
	pid_t c = fork();

	if (c == 0) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	if (waitpid(c, &st, 0) < 0 || !WIFEXITED(st))
		return 1;
	return WEXITSTATUS(st);
}

int main(void)
{
	char dir[] = "/var/tmp/cordon-fbp-XXXXXX", ws[256], home[256], ssh[300], key[320], out[320];
	struct pol_vars vars = {};
	struct pol_diags ds = {};
	struct policy *p = NULL;
	int r;

	if (!mkdtemp(dir))
		tap_skip_all("cannot make a temporary directory");
	snprintf(ws, sizeof(ws), "%s/ws", dir);
	snprintf(home, sizeof(home), "%s/home", dir);
	snprintf(ssh, sizeof(ssh), "%s/.ssh", home);
	snprintf(key, sizeof(key), "%s/id_rsa", ssh);
	mkdir(ws, 0755);
	mkdir(home, 0755);
	mkdir(ssh, 0700);
	create_errno(key);
	pol_vars_set(&vars, "WORKSPACE", ws);
	pol_vars_set(&vars, "HOME", home);
	pol_vars_set(&vars, "TMPDIR", "/tmp");
	r = pol_load("coding-agent", &vars, &p, &ds);
	if (!tap_ok(r == 0, "coding-agent profile loads"))
		return tap_done();
	{
		int abi = (int)syscall(444 /* landlock_create_ruleset */, NULL, 0, 1);

		if (abi < 1)
			tap_skip_all("Landlock unavailable (the fallback posture needs it)");
	}
	r = in_sandbox(p, read_file_errno, "/proc/self/status");
	tap_ok(r == 0, "a process started after apply reads /proc/self/status (got %d)", r);
	r = in_sandbox(p, run_shell, "echo ok | cat >/dev/null && ls /usr >/dev/null");
	tap_ok(r == 0, "a shell pipeline runs (got %d)", r);
	snprintf(out, sizeof(out), "%s/made.txt", ws);
	r = in_sandbox(p, create_errno, out);
	tap_ok(r == 0, "the workspace is writable (got %d)", r);
	r = in_sandbox(p, create_errno, "/tmp/cordon-fbp-scratch");
	tap_ok(r == 0, "/tmp is writable (got %d)", r);
	unlink("/tmp/cordon-fbp-scratch");
	r = in_sandbox(p, read_file_errno, key);
	tap_ok(r == EACCES, "HOME/.ssh/id_rsa is not readable (got %d)", r);
	/*
	 * Listing: /etc and /sys are split around denied directories
	 * (/etc/ssl/private, /sys/fs/bpf).  As cordon run applies it (cover),
	 * they list, and the denied ones show nothing of theirs; without the
	 * cover, the split takes listing away (fail closed).
	 */
	r = in_sandbox_as(p, true, list_count, "/etc");
	tap_ok(r == 0, "/etc lists, its denied directories covered (got %d)", r);
	r = in_sandbox_as(p, true, list_count, "/sys");
	tap_ok(r == 0, "/sys lists (got %d)", r);
	if (access("/etc/ssl/private", F_OK) == 0) {
		r = in_sandbox_as(p, true, list_count, "/etc/ssl/private");
		tap_ok(r == 250 || r == 252, "/etc/ssl/private shows none of its entries (got %d)", r);
		r = in_sandbox(p, list_count, "/etc");
		tap_ok(r == 250, "without the cover /etc does not list (got %d)", r);
	}
	r = in_sandbox(p, create_errno, "/etc/cordon-fbp");
	tap_ok(r == EACCES, "/etc is not writable (got %d)", r);
	/* Socket families the cgroup sock_create program never sees. */
	r = in_sandbox(p, socket_errno, "17/3/768");     /* AF_PACKET, SOCK_RAW, ETH_P_ALL */
	tap_ok(r == EPERM, "socket(AF_PACKET) refused (got %d)", r);
	r = in_sandbox(p, socket_errno, "16/3/4");       /* NETLINK_SOCK_DIAG */
	tap_ok(r == EPERM, "socket(AF_NETLINK, NETLINK_SOCK_DIAG) refused (got %d)", r);
	r = in_sandbox(p, socket_errno, "40/1/0");       /* AF_VSOCK */
	tap_ok(r == EPERM, "socket(AF_VSOCK) refused (got %d)", r);
	r = in_sandbox(p, socket_errno, "38/5/0");       /* AF_ALG */
	tap_ok(r == EPERM, "socket(AF_ALG) refused (got %d)", r);
	r = in_sandbox(p, socket_errno, "16/3/0");       /* NETLINK_ROUTE */
	tap_ok(r == 0, "socket(AF_NETLINK, NETLINK_ROUTE) still works (got %d)", r);
	r = in_sandbox(p, socket_errno, "2/1/0");
	tap_ok(r == 0, "socket(AF_INET, SOCK_STREAM) still works (got %d)", r);
	pol_free(p);
	pol_vars_free(&vars);
	unlink(out);
	unlink(key);
	rmdir(ssh);
	rmdir(home);
	rmdir(ws);
	rmdir(dir);
	return tap_done();
}
