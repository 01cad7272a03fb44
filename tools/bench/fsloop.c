// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * File system work timed inside a sandbox (tools/bench/peers.sh).
 *
 *   fsloop stat ROOT NDIRS NFILES ITERS
 *       open(O_RDONLY) + fstat + close of ROOT/dDD/fFFF, cycling through the
 *       NDIRS x NFILES files of the tree peers.sh made, ITERS times; prints
 *       the nanoseconds per iteration.
 *   fsloop time CMD ARGS...
 *       fork, exec and wait CMD once (its stdout to /dev/null); prints the
 *       wall time in nanoseconds.
 *   fsloop calls N PATH...
 *       the cost of single system calls: getppid (seccomp's per-call
 *       entry), then stat (a path walk Landlock does not judge) and
 *       open+close (the walk Landlock judges, up to the rule granting every
 *       right asked) of each PATH; a line "OP PATH NS" each, the best of 25
 *       batches of N in the thread's CPU time, so another load on the
 *       machine (preemption) stays out of the figure.  docs/benchmarks.md
 *       "Where the time goes in file-heavy work" compares it bare and in a
 *       session.
 *
 * The clock runs inside the sandbox, so a sandbox's start and teardown are
 * not in the figure, only what it costs the work itself: path walks checked
 * by Landlock, system calls passed through gVisor's Sentry and Gofer, and
 * so on.  Paths are formatted before the clock starts.  Any failure (a file
 * that cannot be opened, CMD not exiting 0) prints nothing on stdout and
 * exits 1 with the reason on stderr, so a sandbox that cannot do the work
 * shows up as such instead of as a fast figure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static double cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

enum call { CALL_GETPPID, CALL_STAT, CALL_OPEN };

/* One call of `c` on `path`: 0, or -1 with errno. */
static int one_call(enum call c, const char *path)
{
	struct stat st;
	int fd;

	switch (c) {
	case CALL_GETPPID:
		(void)getppid();
		return 0;
	case CALL_STAT:
		return stat(path, &st);
	case CALL_OPEN:
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -1;
		return close(fd);
	}
	return -1;
}

static int call_cost(enum call c, const char *name, const char *path, long n)
{
	double best = -1;

	for (int batch = 0; batch < 25; batch++) {
		double t0 = cpu_ns(), d;

		for (long i = 0; i < n; i++)
			if (one_call(c, path) < 0) {
				fprintf(stderr, "fsloop: %s %s: %m\n", name, path);
				return 1;
			}
		d = (cpu_ns() - t0) / n;
		if (best < 0 || d < best)
			best = d;
	}
	printf("%s %s %.0f\n", name, path, best);
	return 0;
}

static int calls(long n, char **paths, int npaths)
{
	if (call_cost(CALL_GETPPID, "getppid", "-", n))
		return 1;
	for (int i = 0; i < npaths; i++)
		if (call_cost(CALL_STAT, "stat", paths[i], n) || call_cost(CALL_OPEN, "open", paths[i], n))
			return 1;
	return 0;
}

static int stat_loop(const char *root, int ndirs, int nfiles, long iters)
{
	int n = ndirs * nfiles;
	char **paths = calloc(n, sizeof(*paths));
	double t0, t1;

	if (!paths)
		return 1;
	for (int d = 0; d < ndirs; d++)
		for (int f = 0; f < nfiles; f++)
			if (asprintf(&paths[d * nfiles + f], "%s/d%02d/f%03d", root, d, f) < 0)
				return 1;
	t0 = now_ns();
	for (long i = 0; i < iters; i++) {
		const char *p = paths[i % n];
		struct stat st;
		int fd = open(p, O_RDONLY | O_CLOEXEC);

		if (fd < 0 || fstat(fd, &st) < 0) {
			fprintf(stderr, "fsloop: %s: %m\n", p);
			return 1;
		}
		close(fd);
	}
	t1 = now_ns();
	printf("%.0f\n", (t1 - t0) / iters);
	return 0;
}

static int time_cmd(char **argv)
{
	int status = 0, devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	double t0, t1;
	pid_t pid;

	if (devnull < 0) {
		fprintf(stderr, "fsloop: /dev/null: %m\n");
		return 1;
	}
	t0 = now_ns();
	pid = fork();
	if (pid == 0) {
		dup2(devnull, 1);
		execvp(argv[0], argv);
		fprintf(stderr, "fsloop: %s: %m\n", argv[0]);
		_exit(127);
	}
	if (pid < 0) {
		fprintf(stderr, "fsloop: fork: %m\n");
		return 1;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	t1 = now_ns();
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "fsloop: %s failed (status 0x%x)\n", argv[0], status);
		return 1;
	}
	printf("%.0f\n", t1 - t0);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 6 && !strcmp(argv[1], "stat")) {
		int ndirs = atoi(argv[3]), nfiles = atoi(argv[4]);
		long iters = atol(argv[5]);

		if (ndirs > 0 && ndirs <= 100 && nfiles > 0 && nfiles <= 1000 && iters > 0)
			return stat_loop(argv[2], ndirs, nfiles, iters);
	}
	if (argc >= 3 && !strcmp(argv[1], "time"))
		return time_cmd(argv + 2);
	if (argc >= 3 && !strcmp(argv[1], "calls") && atol(argv[2]) > 0)
		return calls(atol(argv[2]), argv + 3, argc - 3);
	fprintf(stderr, "usage: fsloop stat ROOT NDIRS NFILES ITERS | fsloop time CMD ARGS... | "
		"fsloop calls N PATH...\n");
	return 2;
}
