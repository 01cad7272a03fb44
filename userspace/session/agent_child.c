// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The agent's side of a session, from its fork to its exec (agent_child.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/securebits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "agent_child.h"
#include "agent_env.h"
#include "budget.h"
#include "cgroup.h"
#include "fallback.h"
#include "notify.h"
#include "progress.h"
#include "util.h"
#include "world.h"

static void child_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
static void child_fail(int code, const char *fmt, ...)
{
	va_list ap;

	fputs("cordon: error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	_exit(code);
}

/*
 * Drop to the agent's identity.  The capability bounding set is emptied
 * and the securebits locked first (while CAP_SETPCAP is still held), so
 * that nothing the agent execs, setuid-root binaries included (no_new_privs
 * stops those too), can bring a capability back, and uid 0 (--user root)
 * gets no capability from being uid 0.
 */
static void drop_privileges(const struct sup *s)
{
	int r = caps_bound_to(0);

	if (r < 0)
		child_fail(EXIT_CORDON, "emptying the capability bounding set: %s", strerror(-r));
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		child_fail(EXIT_CORDON, "clearing ambient capabilities: %m");
	if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED |
		  SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED |
		  SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |
		  SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED, 0, 0, 0) < 0)
		child_fail(EXIT_CORDON, "locking securebits: %m");
	/*
	 * Raw system calls, not glibc's wrappers: those apply the change to
	 * every thread glibc knows of, signalling each one and waiting for it,
	 * and this child may come from a raw clone3 (fork_into), which leaves
	 * glibc's list of threads as the parent's.  A thread of the parent's
	 * that existed at the fork then never answers (a hang seen while one
	 * did).  The child is one thread: the kernel's per-thread call is the
	 * whole process's.
	 */
	if (syscall(SYS_setgroups, (size_t)s->n_groups, s->groups) < 0)
		child_fail(EXIT_CORDON, "setting groups for %s: %m", s->user);
	if (syscall(SYS_setresgid, s->gid, s->gid, s->gid) < 0)
		child_fail(EXIT_CORDON, "setresgid(%u): %m", (unsigned)s->gid);
	if (syscall(SYS_setresuid, s->uid, s->uid, s->uid) < 0)
		child_fail(EXIT_CORDON, "setresuid(%u): %m", (unsigned)s->uid);
	/* With NO_SETUID_FIXUP, a move to a non-zero uid keeps the sets: clear them. */
	if ((r = caps_set(0)) < 0)
		child_fail(EXIT_CORDON, "clearing capabilities: %s", strerror(-r));
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		child_fail(EXIT_CORDON, "no_new_privs: %m");
}

static void wait_byte(int sock, char want)
{
	char c = 0;

	while (read(sock, &c, 1) < 0 && errno == EINTR)
		;
	if (c != want)
		_exit(EXIT_CORDON);     /* the supervisor gave up: say nothing more */
}

/*
 * After the word to go, the credentials' sentinels (NAME=VALUE lines, then
 * a NUL): the egress broker makes them, and the agent's first process
 * readies itself while the broker finishes its start, so they come last.
 * Anything else (EOF, too long) and the supervisor gave up.
 */
static char *read_sentinels(int sock)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);

	for (;;) {
		ssize_t got;

		if (!buf)
			_exit(EXIT_CORDON);
		got = read(sock, buf + len, 1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got != 1)
			_exit(EXIT_CORDON);
		if (buf[len] == '\0')
			return buf;
		if (++len == cap) {
			if (cap >= SENTINELS_MAX)
				_exit(EXIT_CORDON);
			cap *= 2;
			buf = realloc(buf, cap);
		}
	}
}

/*
 * The agent's descriptors: 0, 1, 2 and what --keep-fd names; every other
 * one the invoker held (an IDE's, a CI runner's, a root-opened file) is
 * closed before the agent's code runs.
 */
static void keep_only_fds(const struct run_options *o)
{
	unsigned lo = 3;
	int keep[RUN_MAX_ENV];
	int n = o->n_keep_fd;

	memcpy(keep, o->keep_fd, (size_t)n * sizeof(*keep));
	for (int i = 1; i < n; i++)             /* a few at most: insertion sort */
		for (int j = i; j > 0 && keep[j - 1] > keep[j]; j--) {
			int t = keep[j];

			keep[j] = keep[j - 1];
			keep[j - 1] = t;
		}
	for (int i = 0; i < n; i++) {
		if ((unsigned)keep[i] > lo)
			(void)syscall(SYS_close_range, lo, (unsigned)keep[i] - 1, 0);
		lo = (unsigned)keep[i] + 1;
	}
	(void)syscall(SYS_close_range, lo, ~0U, 0);
}

/*
 * PID 1 of the session: the agent's parent, which forwards what the
 * supervisor signals (the supervisor sees only this process of the tree
 * by a pid it can name) and reaps orphans.  When the agent ends it exits
 * with the agent's status, and the kernel kills whatever the agent left in
 * the namespace.  It holds one descriptor, its socket to the supervisor
 * (CHAN, or -1), on which it says 'T' when the agent was stopped from its
 * terminal (Ctrl-Z: SIGTSTP, or SIGTTIN, SIGTTOU): the supervisor then
 * gives the human's terminal back to their shell and stops itself, and at
 * `fg` sends SIGCONT, which continues the agent's process group.
 */
static volatile pid_t init_agent;       /* this child's only global: its signal handler's */

/*
 * The stop signals go to every process of the namespace (kill(-1) from its
 * init reaches exactly those), not only the agent's top one: a wrapper that
 * handles SIGTERM must not be the only one told the session ends (the
 * supervisor kills the cgroup after its grace, sup_stop).  The others
 * (SIGWINCH, SIGUSR1, ...) are the agent's.
 */
static void init_forward(int sig)
{
	if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGQUIT) {
		(void)kill(-1, sig);
	} else if (init_agent > 0) {
		if (sig == SIGCONT)
			(void)kill(-init_agent, sig);   /* its job, stopped as a whole */
		(void)kill(init_agent, sig);
	}
}

/* What the agent's process needs from its parent (agent_exec). */
struct agent_exec {
	const struct sup *s;
	int sock, pty_slave;
	char **env;
};

/*
 * The agent's process, from its parent's spawn to its exec, in its
 * parent's memory (spawn_shared): system calls only, and child_fail's one
 * line on stderr if the exec fails.
 */
static int agent_exec(void *p)
{
	const struct agent_exec *a = p;
	int r;

	close(a->sock);
	if (a->pty_slave >= 0) {
		/* As a shell does: its own group, then the terminal's foreground. */
		signal(SIGTTOU, SIG_IGN);
		if (setpgid(0, 0) < 0 || tcsetpgrp(a->pty_slave, getpid()) < 0)
			child_fail(EXIT_CORDON, "the agent's job on its terminal: %m");
		signal(SIGTTOU, SIG_DFL);
		if (a->pty_slave > 2)
			close(a->pty_slave);
	} else if (setsid() < 0) {
		child_fail(EXIT_CORDON, "setsid: %m");
	}
	keep_only_fds(a->s->opt);
	execvpe(a->s->opt->argv[0], a->s->opt->argv, a->env);
	r = errno;
	child_fail(r == ENOENT ? 127 : 126, "cannot run %s: %s", a->s->opt->argv[0], strerror(r));
}

static void __attribute__((noreturn)) session_init(pid_t agent, int chan)
{
	static const int fwd[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2,
				   SIGWINCH, SIGCONT, SIGALRM };
	struct sigaction sa = { .sa_handler = init_forward, .sa_flags = SA_RESTART };
	int st;

	init_agent = agent;
	for (size_t i = 0; i < ARRAY_SIZE(fwd); i++)
		(void)sigaction(fwd[i], &sa, NULL);
	if (chan >= 0 && chan != 3) {
		if (dup2(chan, 3) < 0)
			_exit(EXIT_CORDON);
		chan = 3;
	}
	(void)syscall(SYS_close_range, chan >= 0 ? 4u : 0u, ~0U, 0);
	if (chan >= 0)
		(void)syscall(SYS_close_range, 0u, 2u, 0);
	(void)prctl(PR_SET_NAME, "cordon-init", 0, 0, 0);
	for (;;) {
		pid_t w = waitpid(-1, &st, WUNTRACED);

		if (w == agent && WIFSTOPPED(st)) {
			int sig = WSTOPSIG(st);

			if (chan >= 0 && (sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU))
				(void)!write(chan, "T", 1);
			continue;
		}
		if (w == agent)
			_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
		if (w < 0 && errno != EINTR)
			_exit(EXIT_CORDON);
	}
}

/*
 * The agent's first process, PID 1 of its namespace and born in its
 * session cgroup: still root, it makes /proc its own; then it drops to the
 * agent's identity, restricts itself (Landlock in the fallback; the seccomp
 * denylist in both postures) and hands the supervisor its notify listener.
 * On 'R' it forks the agent, which runs in a session and a terminal of its
 * own, and stays as its init.
 */
void agent_child(struct sup *s, int sock, int pty_slave)
{
	struct fallback_report rep;
	char why[PATH_MAX + 128];
	char **env;
	int listener, r;
	pid_t agent;

	/*
	 * The supervisor's pid is not visible from here (another PID
	 * namespace), so a supervisor that died before this call is noticed
	 * at wait_byte instead: its end of the socket reads EOF.
	 */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		_exit(EXIT_CORDON);
	/*
	 * Every disposition back to its default: cordon started in the
	 * background of a script ignores SIGINT and SIGQUIT (POSIX has the
	 * shell do so), and the agent inherited that, so a stop by SIGQUIT
	 * found nobody listening.
	 */
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			(void)signal(sig, SIG_DFL);
	/* No controlling terminal of cordon's: no TIOCSTI into it, no signals from it. */
	if (setsid() < 0)
		child_fail(EXIT_CORDON, "setsid: %m");
	if (world_child_proc(why, sizeof(why)) < 0)
		child_fail(EXIT_CORDON, "the session's own /proc: %s", why);
	/* Before the ruleset is applied: its listing rights count on these covers. */
	if (!s->floor && s->ll_rep && fallback_cover_dirs(s->ll_rep, why, sizeof(why)) < 0)
		child_fail(EXIT_CORDON, "fallback floor: %s", why);
	/*
	 * With the LSM floor a session's task may not mount, /proc included:
	 * this process was born outside the session's cgroup, and joins it
	 * now, before anything of the agent's runs.
	 */
	if (s->floor && (r = cg_attach_pid(s->cgroup, 0)) < 0)
		child_fail(EXIT_CORDON, "joining the session's cgroup: %s", strerror(-r));
	phase("agent: /proc its own");
	if (pty_slave >= 0)
		for (int fd = 0; fd < 3; fd++)
			if (isatty(fd) && dup2(pty_slave, fd) < 0)
				child_fail(EXIT_CORDON, "dup2: %m");
	/*
	 * The v1 budget cgroups (hybrid hosts): this task moves itself, while
	 * it is one thread and still root (see budget_join_self: no RCU grace
	 * period, unlike a move by pid).  The v2 session cgroup it was born in.
	 */
	r = budget_join_self(s->budget);
	if (r < 0)
		child_fail(EXIT_CORDON, "joining the session's budget cgroups: %s", strerror(-r));
	/*
	 * Everything up to the exec is cordon's code, run while the supervisor
	 * finishes start-up (listens on its sockets, moves us into the v2
	 * cgroup where clone3 could not); the agent's own code runs only after
	 * 'R', when the session is whole.  The fallback's Landlock ruleset was
	 * built in the view before the fork and is inherited.
	 */
	if (chdir(s->workspace) < 0)
		child_fail(EXIT_CORDON, "workspace %s: %m", s->workspace);
	env = build_env(s);
	if (!env)
		child_fail(EXIT_CORDON, "out of memory");
	drop_privileges(s);
	filter_path(s, env);
	/*
	 * This process is a copy of the supervisor that never execs: its
	 * environment (cordon's, secrets the agent's was rebuilt without) and
	 * its memory must not be the agent's to read.  Attack: a root agent
	 * (the same uid: a uid that did not change keeps the process
	 * dumpable) reads /proc/1/environ or /proc/1/mem.  The strings are
	 * wiped where /proc/PID/environ reads them (the agent's own, built
	 * above, become this process's), and the process is not dumpable (no
	 * ptrace, no /proc/1/mem, environ or fd for the agent).
	 */
	{
		char **old = environ;

		environ = env;          /* execvpe searches the agent's PATH, as before */
		for (char **e = old; e && *e; e++)
			explicit_bzero(*e, strlen(*e));
	}
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		child_fail(EXIT_CORDON, "PR_SET_DUMPABLE: %m");
	phase("agent: privileges dropped");
	memset(&rep, 0, sizeof(rep));
	if (!s->floor) {
		if ((s->proc_rights & CORDON_FS_READ) && (r = fallback_add_read(s->ll_fd, "/proc")) < 0)
			child_fail(EXIT_CORDON, "fallback floor: the session's /proc: %s", strerror(-r));
		r = fallback_apply_prepared(s->ll_fd, &rep);
		if (r < 0)
			child_fail(EXIT_CORDON, "fallback floor: %s", rep.error);
		close(s->ll_fd);
	} else if ((r = fallback_seccomp_install()) < 0) {
		/* Defence in depth behind the LSM: keyrings, clone3, io_uring, ... */
		child_fail(EXIT_CORDON, "the seccomp denylist: %s", strerror(-r));
	}
	phase("agent: fallback applied");
	listener = notify_install(NOTIFY_EXEC | NOTIFY_CONNECT | (s->notify_open ? NOTIFY_OPEN : 0));
	if (listener < 0)
		child_fail(EXIT_CORDON, "seccomp user notification: %s", strerror(-listener));
	if (notify_send_fd(sock, listener) < 0)
		_exit(EXIT_CORDON);
	close(listener);        /* only the supervisor holds it now */
	phase("agent: ready to exec");
	wait_byte(sock, 'R');   /* in every cgroup of the session: go */
	{
		char *lines = read_sentinels(sock);

		env = env_add_lines(env, lines);
		free(lines);
		if (!env)
			child_fail(EXIT_CORDON, "out of memory");
		environ = env;
	}
	/*
	 * Job control on the agent's terminal.  The agent in a session of its
	 * own had a process group without a parent in another group of its
	 * session: an orphaned group, for which the kernel discards SIGTSTP,
	 * so Ctrl-Z did nothing.  With a terminal this process is the session
	 * leader that holds it, and the agent a foreground job of that session
	 * (its own group, as a shell makes one), whose stop this process sees.
	 */
	if (pty_slave >= 0 && ioctl(pty_slave, TIOCSCTTY, 0) < 0)
		child_fail(EXIT_CORDON, "TIOCSCTTY: %m");
	{
		/*
		 * The agent's process shares this one's memory until its exec
		 * (spawn_shared): a fork made every page either wrote afterwards
		 * a copy-on-write fault, ~20 of them in the agent before its exec
		 * and more here.  The stack holds execvpe's PATH search and, for
		 * a script, its argv once more.
		 */
		struct agent_exec a = { .s = s, .sock = sock, .pty_slave = pty_slave, .env = env };
		size_t argc = 0;

		while (s->opt->argv[argc])
			argc++;
		agent = spawn_shared(agent_exec, &a, 64 * 1024 + (argc + 2) * sizeof(char *));
		if (agent < 0)
			child_fail(EXIT_CORDON, "the agent's process: %s", strerror(-agent));
	}
	if (pty_slave >= 0)
		(void)setpgid(agent, agent);    /* no race with the child's own */
	session_init(agent, pty_slave >= 0 ? sock : -1);
}
