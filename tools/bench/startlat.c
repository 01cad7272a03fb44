// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Start latency of sandboxes, side by side (tools/bench/session.sh).
 *
 *   startlat N CMD ARGS... [::: CMD ARGS...]...
 *
 * Runs every command N times, interleaved (round 1 runs each command once,
 * then round 2, ...) so that a host that gets busier or quieter during the
 * run moves every column alike, and prints one line per command:
 *
 *   MEDIAN_MS P10_MS P90_MS FAILED CPU_MS
 *
 * CPU_MS is the mean CPU time (user + system) of a run: the command's and
 * that of every process it waited for (wait4's resource usage), as the
 * kernel accounts it (in ticks on some kernels: hence a mean, not a
 * median).
 * A run is fork, execvp, waitpid, timed with CLOCK_MONOTONIC in this
 * process: no shell and no date(1) in the timed region, so what is measured
 * is the command and nothing of the harness.  In an argument, "%n" becomes
 * the run's number (a fresh audit file per session, say).  The commands'
 * output goes to /dev/null; a run that exits non-zero is counted in FAILED
 * and still timed (a peer that cannot run here shows up, it is not hidden).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_CMDS 16

struct cmd {
	char **argv;
	int argc;
	double *ms;
	double cpu_ms;          /* summed over the runs */
	int failed;
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The argument with "%n" replaced by the run number (a new string). */
static char *subst(const char *arg, int run)
{
	const char *p = strstr(arg, "%n");
	char *out;

	if (!p)
		return strdup(arg);
	if (asprintf(&out, "%.*s%d%s", (int)(p - arg), arg, run, p + 2) < 0)
		return NULL;
	return out;
}

static int run_once(struct cmd *c, int run, double *ms)
{
	char *argv[c->argc + 1];
	int status = 0, devnull;
	double t0;
	pid_t pid;

	for (int i = 0; i < c->argc; i++)
		if (!(argv[i] = subst(c->argv[i], run)))
			return -1;
	argv[c->argc] = NULL;
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	t0 = now_ms();
	pid = fork();
	if (pid == 0) {
		dup2(devnull, 0);
		dup2(devnull, 1);
		dup2(devnull, 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	struct rusage ru = { 0 };

	if (pid > 0)
		while (wait4(pid, &status, 0, &ru) < 0)
			;
	*ms = now_ms() - t0;
	c->cpu_ms += (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
		     (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
	close(devnull);
	for (int i = 0; i < c->argc; i++)
		free(argv[i]);
	return pid < 0 ? -1 : !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The q-quantile of sorted v[0..n) (nearest rank, n > 0). */
static double quantile(const double *v, int n, double q)
{
	int i = (int)(q * (n - 1) + 0.5);

	return v[i];
}

int main(int argc, char **argv)
{
	struct cmd cmds[MAX_CMDS];
	int n, ncmd = 0;

	if (argc < 3 || (n = atoi(argv[1])) < 1) {
		fprintf(stderr, "usage: startlat N CMD ARGS... [::: CMD ARGS...]...\n");
		return 2;
	}
	for (int i = 2; i < argc;) {
		int j = i;

		while (j < argc && strcmp(argv[j], ":::"))
			j++;
		if (j == i || ncmd == MAX_CMDS) {
			fprintf(stderr, "startlat: an empty command or more than %d\n", MAX_CMDS);
			return 2;
		}
		cmds[ncmd] = (struct cmd){ .argv = argv + i, .argc = j - i,
					   .ms = calloc(n, sizeof(double)) };
		if (!cmds[ncmd].ms)
			return 2;
		ncmd++;
		i = j + 1;
	}
	for (int r = 0; r < n; r++)
		for (int c = 0; c < ncmd; c++) {
			int rc = run_once(&cmds[c], r, &cmds[c].ms[r]);

			if (rc < 0) {
				perror("startlat");
				return 2;
			}
			cmds[c].failed += rc;
		}
	for (int c = 0; c < ncmd; c++) {
		qsort(cmds[c].ms, n, sizeof(double), cmp_double);
		printf("%.3f %.3f %.3f %d %.3f\n", quantile(cmds[c].ms, n, 0.5),
		       quantile(cmds[c].ms, n, 0.1), quantile(cmds[c].ms, n, 0.9), cmds[c].failed,
		       cmds[c].cpu_ms / n);
	}
	return 0;
}
