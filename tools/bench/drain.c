// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The reading end of a stream benchmark (tools/bench/streams.sh).
 *
 *   drain [FILE]
 *
 * Reads stdin to its end and writes "BYTES MS" to FILE (stdout without
 * one): MS is the time from the first byte to the last, on
 * CLOCK_MONOTONIC, so neither a session's start (the writer blocked on a
 * full pipe meanwhile) nor its end (the end of file comes when the last
 * holder of the pipe closes it: `cordon run` itself, after its teardown)
 * is counted as the stream's.  Its buffer is cat's (128 KiB).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
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
	static char buf[128 * 1024];
	unsigned long long total = 0;
	double first = 0, last = 0;
	FILE *f = stdout;

	for (;;) {
		ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			perror("drain: read");
			return 1;
		}
		if (n == 0)
			break;
		last = now_ms();
		if (!total)
			first = last;
		total += (unsigned long long)n;
	}
	if (argc > 1 && !(f = fopen(argv[1], "w"))) {
		perror(argv[1]);
		return 1;
	}
	fprintf(f, "%llu %.3f\n", total, last - first);
	return fclose(f) ? 1 : 0;
}
