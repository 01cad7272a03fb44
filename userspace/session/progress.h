/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What `cordon run` tells the human while a session starts and ends
 * (progress.c): its lines on stderr, and under `cordon -v` how long each
 * start-up phase took.  Neither does any work unless asked: phase() is a
 * clock read only when verbose, so the start path pays nothing for it.
 */
#ifndef CORDON_PROGRESS_H
#define CORDON_PROGRESS_H

#include <stdbool.h>

/* The start of the clock phase() measures from: the first thing `cordon run` does. */
void progress_start(void);
/* Under `cordon -v`: "run: WHAT  N ms" since progress_start().  Any thread. */
void phase(const char *what);
/*
 * "cordon: ..." on stderr, unless QUIET (--quiet).  An int, not a bool: a
 * pointer passed by mistake (the old say(s, ...)) is then a compile error,
 * where a bool would take it as true and silence the line.
 */
void say(int quiet, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
