// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A command's output through a terminal, read as fast as it comes
 * (tools/bench/streams.sh).
 *
 *   ptyrun CMD ARGS...
 *
 * Opens a pseudo-terminal (80x24, the kernel's default line discipline
 * settings: cooked, echo, ONLCR), runs CMD as the leader of a new session
 * with the terminal as its controlling terminal and its stdin, stdout and
 * stderr, reads the master in 64 KiB reads until the last slave is gone,
 * and prints "MS BYTES STATUS CPU_MS": the wall time from fork to the end
 * of the output and the child's exit, what came through, the exit status,
 * and the CPU time (user and system) of the command and every descendant
 * it waited for (a session: cordon and the agent's tree).  The
 * same program runs a command bare and under `cordon run`, so both meet
 * the same kind of terminal and the same reader.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	static char buf[64 * 1024];
	struct winsize ws = { .ws_row = 24, .ws_col = 80 };
	struct rusage ru;
	unsigned long long total = 0;
	int m, status = 0;
	double t0;
	pid_t pid;

	if (argc < 2) {
		fprintf(stderr, "usage: ptyrun CMD ARGS...\n");
		return 2;
	}
	t0 = now_ms();
	pid = forkpty(&m, NULL, NULL, &ws);
	if (pid < 0) {
		perror("ptyrun: forkpty");
		return 1;
	}
	if (pid == 0) {
		execvp(argv[1], argv + 1);
		perror(argv[1]);
		_exit(127);
	}
	for (;;) {
		ssize_t n = read(m, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;          /* EIO: no slave left open */
		total += (unsigned long long)n;
	}
	(void)waitpid(pid, &status, 0);
	if (getrusage(RUSAGE_CHILDREN, &ru) < 0)
		memset(&ru, 0, sizeof(ru));
	printf("%.3f %llu %d %.3f\n", now_ms() - t0, total,
	       WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
	       (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3);
	return 0;
}
