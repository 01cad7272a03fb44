// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The exec recheck's kernel side (bpf/exec_recheck.bpf.c) on a real kernel,
 * without a race to win: a forked task waits until an expectation is armed
 * for it, then execs.  The expectation is built as the supervisor builds it
 * (net_exec_expect), then, for each check, one thing the kernel compares is
 * made to differ from what the exec really carries: argv, the path string,
 * the binary's inode, its filesystem, an interpreter's argv tail.  The task
 * must be killed (SIGKILL, before the program prints a byte) and the
 * expectation marked for the supervisor; an unaltered one must run, and its
 * expectation be gone.  A task with nothing armed is not judged here.
 *
 * Skips (77) where the network floor cannot load or the kernel refuses the
 * recheck's programs, or not root, or not in the initial PID namespace.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "../tap.h"
#include "cgroup.h"
#include "net.h"
#include "util.h"

extern char **environ;

enum change { NONE, ARGV, NAME, INODE, MAGIC, TAIL, UNARMED, ELSEWHERE };

struct outcome {
	bool killed, ran;
	int marked;             /* net_exec_killed afterwards */
};

/* The cgroup (v2) this process and its children are in: what an expectation binds. */
static uint64_t own_cgroup;

static int find_own_cgroup(void)
{
	char root[PATH_MAX], path[2 * PATH_MAX], *cg = NULL, *line;
	int r = cg_find_root(root, sizeof(root));

	if (r < 0 || (r = read_file("/proc/self/cgroup", &cg, 65536)) < 0)
		return r;
	line = strstr(cg, "0::");
	if (!line) {
		free(cg);
		return -ENOENT;
	}
	line[strcspn(line, "\n")] = '\0';
	snprintf(path, sizeof(path), "%s%s", root, line + 3);
	free(cg);
	return cg_id(path, &own_cgroup);
}

/*
 * Exec `path` (absolute) with argv in a child that waits for the parent to
 * arm the expectation (altered by `ch`); what became of it.
 */
static struct outcome run(struct net *n, const char *path, char *const *argv, const char *canon,
			  enum change ch)
{
	struct outcome o = { false, false, -1 };
	struct cordon_exec_expect e;
	int go[2], out[2], st = 0;
	char buf[256] = "";
	ssize_t r;
	pid_t c;

	if (pipe(go) < 0 || pipe(out) < 0)
		return o;
	c = fork();
	if (c == 0) {
		char x;

		dup2(out[1], 1);
		close(out[0]);
		close(go[1]);
		if (read(go[0], &x, 1) != 1)
			_exit(3);
		execve(path, argv, environ);
		_exit(126);
	}
	close(go[0]);
	close(out[1]);
	if (ch != UNARMED && net_exec_expect(n, false, AT_FDCWD, path, argv, canon, &e) == 0) {
		e.cgroup = own_cgroup;          /* the supervisor's: its session's */
		switch (ch) {
		case ARGV:
			e.argv_hash ^= 1;
			break;
		case NAME:
			e.name_hash ^= 1;
			break;
		case INODE:
			e.ino ^= 1;
			break;
		case MAGIC:
			e.magic ^= 1;
			break;
		case TAIL:
			e.tail_hash ^= 1;
			break;
		case ELSEWHERE:
			e.argv_hash ^= 1;       /* would be killed, were it the task judged */
			e.cgroup = own_cgroup + 1;
			break;
		case NONE:
		case UNARMED:
			break;
		}
		if (net_exec_arm(n, (uint32_t)c, &e) < 0)
			tap_diag("arm: %s", strerror(errno));
	}
	(void)!write(go[1], "x", 1);
	close(go[1]);
	r = read(out[0], buf, sizeof(buf) - 1);
	close(out[0]);
	waitpid(c, &st, 0);
	o.killed = WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
	o.ran = WIFEXITED(st) && WEXITSTATUS(st) == 0 && r > 0;
	o.marked = net_exec_killed(n, (uint32_t)c);
	return o;
}

int main(void)
{
	char *echo_argv[] = { (char *)"echo", (char *)"judged", (char *)"argv", NULL };
	char dir[] = "/var/tmp/cordon-recheck.XXXXXX", script[PATH_MAX], canon[PATH_MAX];
	char *script_argv[] = { (char *)"anything", (char *)"tail", NULL };
	struct net *n = NULL;
	struct outcome o;
	struct stat st;
	FILE *f;
	int r;

	if (geteuid() != 0)
		tap_skip_all("needs root");
	if (stat("/proc/self/ns/pid", &st) < 0 || st.st_ino != 0xEFFFFFFCu)
		tap_skip_all("not in the initial PID namespace (the recheck keys by kernel tids)");
	r = net_open(&n);
	if (r < 0)
		tap_skip_all("the network floor does not load here: %s", strerror(-r));
	if (!net_exec_recheck(n))
		tap_skip_all("the kernel refused the exec recheck's programs (tp_btf, bpf_loop)");
	if (find_own_cgroup() < 0)
		tap_skip_all("this process's cgroup (v2) cannot be found");
	if (!realpath("/bin/echo", canon) || !mkdtemp(dir))
		tap_skip_all("no /bin/echo or no scratch directory");
	snprintf(script, sizeof(script), "%s/script", dir);
	f = fopen(script, "w");
	if (!f)
		tap_skip_all("cannot write %s", script);
	fputs("#!/bin/sh\necho \"$1\"\n", f);
	fclose(f);
	chmod(script, 0755);

	o = run(n, "/bin/echo", echo_argv, canon, NONE);
	tap_ok(o.ran && !o.killed, "an exec that is what was judged runs");
	tap_ok(o.marked == -ENOENT, "  and its expectation is consumed (%d)", o.marked);
	o = run(n, "/bin/echo", echo_argv, canon, ARGV);
	tap_ok(o.killed && !o.ran, "another argv: killed before it printed");
	tap_ok(o.marked == 1, "  and marked for the supervisor's record (%d)", o.marked);
	o = run(n, "/bin/echo", echo_argv, canon, NAME);
	tap_ok(o.killed && o.marked == 1, "another path string: killed");
	o = run(n, "/bin/echo", echo_argv, canon, MAGIC);
	tap_ok(o.killed && o.marked == 1, "a binary on another filesystem: killed");
	{
		struct cordon_exec_expect e;

		if (net_exec_expect(n, false, AT_FDCWD, "/bin/echo", echo_argv, canon, &e) == 0 &&
		    (e.flags & CORDON_EXEC_INODE)) {
			o = run(n, "/bin/echo", echo_argv, canon, INODE);
			tap_ok(o.killed && o.marked == 1, "another binary (inode): killed");
		} else {
			tap_diag("/bin/echo's filesystem reports no kernel inode numbers: no inode check");
		}
	}
	o = run(n, script, script_argv, script, NONE);
	tap_ok(o.ran && !o.killed, "a #! script, argv[0] replaced by the kernel: runs");
	o = run(n, script, script_argv, script, TAIL);
	tap_ok(o.killed && o.marked == 1, "a #! script with another argv[1..]: killed");
	o = run(n, script, script_argv, script, ARGV);
	tap_ok(o.ran && !o.killed, "  (its whole-argv value is not what is compared: runs)");
	o = run(n, "/bin/echo", echo_argv, canon, UNARMED);
	tap_ok(o.ran && !o.killed, "nothing armed: not judged here, runs");
	/*
	 * A stale expectation (armed for a task of another cgroup that has
	 * gone) under the tid of a task elsewhere: a host process whose tid
	 * was reused is never killed for it.
	 */
	o = run(n, "/bin/echo", echo_argv, canon, ELSEWHERE);
	tap_ok(o.ran && !o.killed, "an expectation for another cgroup's task: not this one, runs");
	tap_ok(o.marked == -ENOENT, "  and the stale expectation is gone (%d)", o.marked);
	unlink(script);
	rmdir(dir);
	net_close(n);
	return tap_done();
}
