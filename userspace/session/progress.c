// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* What `cordon run` tells the human while a session starts and ends (progress.h). */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"
#include "util.h"

/* `cordon -v run`: how long each start-up phase took (ms since start). */
static struct timespec t_start;
/*
 * The main thread's CPU time at the start: a process's clock counts from
 * its fork, so it holds what its parent's child did before the exec (a
 * shell's redirections and copy-on-write faults: several ms on a
 * virtualised host), which is not cordon's.
 */
static double cpu_start_ms;
static pid_t main_tid;

static double thread_cpu_ms(void)
{
	struct timespec c;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c);
	return (double)c.tv_sec * 1e3 + (double)c.tv_nsec / 1e6;
}

void progress_start(void)
{
	clock_gettime(CLOCK_MONOTONIC, &t_start);
	cpu_start_ms = thread_cpu_ms();
	main_tid = gettid();
}

void phase(const char *what)
{
	struct timespec t;

	if (log_verbose() <= 0)
		return;
	clock_gettime(CLOCK_MONOTONIC, &t);
	/*
	 * The calling thread's CPU time too: a phase that waits shows it.
	 * Other threads and the agent's first process count from their start.
	 */
	log_debug("run: %-24s %.2f ms (this thread's CPU %.2f ms)", what,
		  (double)(t.tv_sec - t_start.tv_sec) * 1e3 +
		  (double)(t.tv_nsec - t_start.tv_nsec) / 1e6,
		  thread_cpu_ms() - (gettid() == main_tid ? cpu_start_ms : 0));
}

void say(int quiet, const char *fmt, ...)
{
	va_list ap;

	if (quiet)
		return;
	fputs("cordon: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	log_newline(stderr);
}
