// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * spawn_helper (base/util.c), which starts the egress broker and the MCP
 * proxy sharing the supervisor's memory until their exec (spawn_shared,
 * which also starts the agent's process): real helpers
 * (/bin/sh), real descriptors, a real death of the parent.  What the
 * helper gets is what the fork it replaced gave: the given descriptors as
 * 3, 4..., and nothing else open but stdin and stdout on /dev/null and
 * stderr; its own process group; the parent's signal mask, not its
 * handlers; killed when the parent dies; a failed exec is exit 125.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

/* The helper's report: what it wrote to the pipe given as its fd 3, until EOF. */
static char *report_of(int rd)
{
	static char buf[8192];
	size_t n = 0;
	ssize_t r;

	while (n < sizeof(buf) - 1 && (r = read(rd, buf + n, sizeof(buf) - 1 - n)) > 0)
		n += (size_t)r;
	buf[n] = '\0';
	return buf;
}

static int exit_status(pid_t pid)
{
	int st;

	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

static volatile sig_atomic_t usr1_seen;

static void on_usr1(int sig)
{
	(void)sig;
	usr1_seen = 1;
}

/* The descriptors, the process group, the mask and the handlers the helper starts with. */
static void helper_world(void **state)
{
	/* Its report to fd 3; /proc/$$ is the shell: the helper itself. */
	const char *script =
		"in=$(readlink /proc/$$/fd/0); out=$(readlink /proc/$$/fd/1); exec >&3;"
		"echo pgid=$(cut -d' ' -f5 /proc/$$/stat);"
		"echo in=$in out=$out;"
		"echo four=$(cat <&4);"
		"echo fds:; ls /proc/$$/fd; echo end";
	const char *argv[] = { "/bin/sh", "-c", script, NULL };
	int out[2], in[2], fds[2];
	char *rep;
	pid_t pid;

	(void)state;
	assert_int_equal(pipe2(out, O_CLOEXEC), 0);
	assert_int_equal(pipe2(in, O_CLOEXEC), 0);
	assert_int_equal(write(in[1], "hello", 5), 5);
	close(in[1]);
	fds[0] = out[1];
	fds[1] = in[0];
	pid = spawn_helper("/bin/sh", argv, fds, 2);
	assert_true(pid > 0);
	/* The parent's own descriptors are untouched (the copies above 3 + n are closed). */
	assert_true(fcntl(out[1], F_GETFD) >= 0 && fcntl(in[0], F_GETFD) >= 0);
	close(out[1]);
	close(in[0]);
	rep = report_of(out[0]);
	close(out[0]);
	assert_int_equal(exit_status(pid), 0);

	/* Its own process group: the terminal's ^C is the supervisor's to forward. */
	{
		long pg = -1;
		const char *p = strstr(rep, "pgid=");

		assert_non_null(p);
		assert_int_equal(sscanf(p, "pgid=%ld", &pg), 1);
		assert_int_equal(pg, (long)pid);
	}
	assert_non_null(strstr(rep, "in=/dev/null out=/dev/null"));
	assert_non_null(strstr(rep, "four=hello"));
	/* 0, 1, 2 and the two given: nothing else of the parent's. */
	assert_non_null(strstr(rep, "fds:\n0\n1\n2\n3\n4\nend\n"));
}

/* A hex field of /proc/PID/status ("SigBlk", "SigCgt"), once PID runs `comm`. */
static unsigned long long status_hex(pid_t pid, const char *comm, const char *field)
{
	char path[64], line[256], name[32] = "";
	unsigned long long v = ~0ULL;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	for (int i = 0; i < 500 && strcmp(name, comm); i++) {
		FILE *f = fopen(path, "re");
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		name[0] = '\0';
		if (f) {
			if (fgets(name, sizeof(name), f))
				name[strcspn(name, "\n")] = '\0';
			fclose(f);
		}
		if (strcmp(name, comm))
			nanosleep(&ts, NULL);
	}
	assert_string_equal(name, comm);
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	{
		FILE *f = fopen(path, "re");
		size_t fl = strlen(field);

		assert_non_null(f);
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, field, fl) && line[fl] == ':')
				v = strtoull(line + fl + 1, NULL, 16);
		fclose(f);
	}
	return v;
}

/*
 * The parent's signal mask, not the everything-blocked one the spawn holds
 * while the child shares its memory, and none of its handlers: a signal
 * the parent catches is sent to the child before and after its exec, and
 * the parent's handler never runs for it.
 */
static void mask_not_handlers(void **state)
{
	const char *argv[] = { "/bin/sleep", "30", NULL };
	struct sigaction sa = { .sa_handler = on_usr1 };
	sigset_t usr2, old;
	pid_t pid;
	int st;

	(void)state;
	assert_int_equal(sigaction(SIGUSR1, &sa, NULL), 0);
	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);
	assert_int_equal(sigprocmask(SIG_BLOCK, &usr2, &old), 0);
	pid = spawn_helper("/bin/sleep", argv, NULL, 0);
	assert_true(pid > 0);
	{
		/* Exactly the parent's mask (SIGUSR2 and whatever the test was started with). */
		unsigned long long want = 0;
		sigset_t cur;

		assert_int_equal(sigprocmask(SIG_BLOCK, NULL, &cur), 0);
		for (int sig = 1; sig <= 64; sig++)
			if (sigismember(&cur, sig) == 1)
				want |= 1ULL << (sig - 1);
		assert_true(want & (1ULL << (SIGUSR2 - 1)));
		assert_int_equal(status_hex(pid, "sleep", "SigBlk"), want);
	}
	assert_int_equal(status_hex(pid, "sleep", "SigCgt"), 0);
	/* SIGUSR1's default kills the helper; the parent's handler stays unrun. */
	assert_int_equal(kill(pid, SIGUSR1), 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGUSR1);
	assert_int_equal(usr1_seen, 0);
	assert_int_equal(sigprocmask(SIG_SETMASK, &old, NULL), 0);
	signal(SIGUSR1, SIG_DFL);
	/* The parent's own mask is its own again after the spawn. */
	assert_int_equal(sigprocmask(SIG_BLOCK, NULL, &old), 0);
	assert_false(sigismember(&old, SIGUSR1));
	assert_false(sigismember(&old, SIGTERM));
}

/* An exec that fails is exit 125, and the parent goes on. */
static void exec_fails(void **state)
{
	const char *argv[] = { "/nonexistent/helper", NULL };
	pid_t pid;

	(void)state;
	pid = spawn_helper("/nonexistent/helper", argv, NULL, 0);
	assert_true(pid > 0);
	assert_int_equal(exit_status(pid), 125);
	/* Too many descriptors: refused before anything starts. */
	{
		int many[9] = { 0, 0, 0, 0, 0, 0, 0, 0, 0 };

		assert_int_equal(spawn_helper("/bin/true", argv, many, 9), -E2BIG);
	}
	/* A descriptor that is not open: refused, nothing started. */
	{
		int bad = 1000;

		assert_int_equal(spawn_helper("/bin/true", argv, &bad, 1), -EBADF);
		assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
		assert_int_equal(errno, ECHILD);
	}
}

static bool alive(pid_t pid)
{
	char path[64], st = 0, *s = NULL;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (fscanf(f, "%*d (%m[^)]) %c", &s, &st) != 2)
		st = 'X';
	free(s);
	fclose(f);
	return st != 'Z' && st != 'X';
}

/* The helper dies with the process that spawned it, however that dies. */
static void dies_with_parent(void **state)
{
	int pp[2];
	pid_t mid, helper = 0;

	(void)state;
	assert_int_equal(pipe(pp), 0);
	mid = fork();
	assert_true(mid >= 0);
	if (mid == 0) {
		const char *argv[] = { "/bin/sleep", "30", NULL };
		pid_t h = spawn_helper("/bin/sleep", argv, NULL, 0);

		close(pp[0]);
		if (write(pp[1], &h, sizeof(h)) != sizeof(h))
			_exit(1);
		pause();        /* killed below */
		_exit(0);
	}
	close(pp[1]);
	assert_int_equal(read(pp[0], &helper, sizeof(helper)), (ssize_t)sizeof(helper));
	close(pp[0]);
	assert_true(helper > 0);
	assert_true(alive(helper));
	assert_int_equal(kill(mid, SIGKILL), 0);
	assert_int_equal(waitpid(mid, NULL, 0), mid);
	/* Reparented and killed by the kernel: gone within a few seconds at most. */
	for (int i = 0; i < 500 && alive(helper); i++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
	assert_false(alive(helper));
}

/* What shared_fn saw: written by the child into the memory it shares (for this test only). */
static volatile pid_t shared_seen_pid;

static int shared_fn(void *arg)
{
	char deep[32 * 1024];           /* a deep stack: the size given is the child's */

	memset(deep, (int)(long)arg, sizeof(deep));
	shared_seen_pid = (pid_t)syscall(SYS_getpid);
	return deep[sizeof(deep) - 1];
}

/*
 * spawn_shared: the child is a process of its own (its pid, its exit
 * status FN's value), runs in the caller's memory (what it wrote is seen
 * after it ends), and the caller waits until it has exited or exec'd.
 */
static void shared_child(void **state)
{
	pid_t pid;

	(void)state;
	shared_seen_pid = 0;
	pid = spawn_shared(shared_fn, (void *)7L, 64 * 1024);
	assert_true(pid > 0);
	/* CLONE_VFORK: the child is done before spawn_shared returns. */
	assert_int_equal(shared_seen_pid, pid);
	assert_true(pid != getpid());
	assert_int_equal(exit_status(pid), 7);
	/* No stack for it: refused, nothing started. */
	assert_int_equal(spawn_shared(shared_fn, (void *)7L, (size_t)1 << 62), -ENOMEM);
}

int main(void)
{
	/* Nothing of the test runner's: the helper's descriptors are counted. */
	(void)close_range(3, ~0U, 0);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(helper_world),
		cmocka_unit_test(mask_not_handlers),
		cmocka_unit_test(exec_fails),
		cmocka_unit_test(dies_with_parent),
		cmocka_unit_test(shared_child),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
