// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The agent's terminal and the human's job control (agent_tty.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pty.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "agent_tty.h"

/* The human's terminal as cordon found it (stdin), restored at exit and at Ctrl-Z. */
static struct termios saved_tio;
static bool tio_saved;

void restore_tty(void)
{
	if (tio_saved)
		(void)tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_tio);
}

/*
 * With a terminal on stdin, stdout or stderr, the agent gets its own
 * pseudo-terminal in the place of each, and the supervisor relays bytes:
 * the agent never holds a descriptor of cordon's terminal (no TIOCSTI into
 * it, no reading the human's keys or answer to a prompt from it, no
 * sequence written to it unfiltered, tty_guard.c).  Attack closed by
 * taking stdout and stderr too: before, with stdin not a terminal
 * (`cordon run ... </dev/null`, a pipe), the agent wrote to cordon's
 * terminal through its own stdout, so the output filter was not on the way.
 * The human's keys reach the agent only when stdin is the terminal.
 */
int setup_pty(struct terminal *t, int *slave)
{
	int term = isatty(STDIN_FILENO) ? STDIN_FILENO : isatty(STDOUT_FILENO) ? STDOUT_FILENO :
		   isatty(STDERR_FILENO) ? STDERR_FILENO : -1;
	struct winsize ws;
	struct termios raw;
	int m;

	*slave = -1;
	if (term < 0)
		return 0;
	if (ioctl(term, TIOCGWINSZ, &ws) < 0)
		memset(&ws, 0, sizeof(ws));
	if (term == STDIN_FILENO && tcgetattr(STDIN_FILENO, &saved_tio) < 0)
		return -errno;
	if (openpty(&m, slave, NULL, term == STDIN_FILENO ? &saved_tio : NULL, &ws) < 0)
		return -errno;
	(void)fcntl(m, F_SETFD, FD_CLOEXEC);
	/*
	 * Non-blocking: the supervisor reads the agent's output on until
	 * none is ready, without a poll before each read, and waits for
	 * room itself when it writes keys (relay, supervisor.c).  The
	 * master's description is the supervisor's alone.
	 */
	if (fcntl(m, F_SETFL, O_NONBLOCK) < 0) {
		int e = -errno;

		close(m);
		close(*slave);
		*slave = -1;
		return e;
	}
	t->pty_master = m;
	t->term_fd = term;
	t->pty_out = isatty(STDOUT_FILENO) || !isatty(STDERR_FILENO) ? STDOUT_FILENO
								     : STDERR_FILENO;
	if (term != STDIN_FILENO)
		return 0;
	tio_saved = true;
	atexit(restore_tty);
	raw = saved_tio;
	cfmakeraw(&raw);
	(void)tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw);
	t->tty_fd = STDIN_FILENO;
	return 0;
}

/*
 * Ctrl-Z: the agent's job stopped (sup_loop hears it from cordon-init).
 * The human's terminal goes back to the state cordon found it in, and
 * cordon stops with SIGTSTP, so that the shell it was started from takes
 * over (a program started without job control, in an orphaned group,
 * ignores the stop and goes on at once).  At `fg` (SIGCONT) the terminal
 * is cordon's again, raw, and the agent's terminal takes the size it has
 * now.
 */
void suspend_session(struct terminal *t)
{
	struct termios raw = saved_tio;
	struct winsize ws;

	if (!tio_saved)
		return;
	(void)tcsetattr(STDIN_FILENO, TCSADRAIN, &saved_tio);
	(void)kill(0, SIGTSTP);
	cfmakeraw(&raw);
	(void)tcsetattr(STDIN_FILENO, TCSADRAIN, &raw);
	if (t->pty_master >= 0 && ioctl(t->term_fd, TIOCGWINSZ, &ws) == 0)
		(void)ioctl(t->pty_master, TIOCSWINSZ, &ws);
}
