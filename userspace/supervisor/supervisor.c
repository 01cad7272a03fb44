// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The supervisor's event loop: seccomp notifications (exec, connect), the
 * floor's ring buffer (writes, deletes, denials), approvals, the agent's
 * terminal, budgets.  Every operation it sees becomes a semantic event shaped
 * like an MCP tool call, judged by the one evaluator (policy/eval.c),
 * published on the session's event socket and written to the audit log.
 *
 * What a decision may rest on (seccomp_unotify(2)): the task's memory can
 * change after the supervisor reads it.  Each handler says what its answers
 * rest on: an exec (sup_exec.c), a connect, inet or unix (sup_connect.c),
 * an open (sup_open.c).  The modules below the loop, lowest first: the
 * records (sup_record.c), the paths as the task means them (task_path.c),
 * the held operations (sup_held.c), the handlers, the floors' events
 * (floor_events.c); none calls the loop but through s->ops.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "audit.h"
#include "budget.h"
#include "cgroup.h"
#include "exec_recheck.h"
#include "floor.h"
#include "floor_events.h"
#include "net.h"
#include "notify.h"
#include "supervisor.h"
#include "approve.h"
#include "helper.h"
#include "sup_connect.h"
#include "sup_exec.h"
#include "sup_held.h"
#include "sup_open.h"
#include "sup_record.h"
#include "sup_stats.h"
#include "util.h"

static void handle_notification(struct sup *s)
{
	struct notify_req req;
	struct timespec t0;

	if (notify_receive(s->listener, &req) < 0)
		return;         /* the task died before we read it */
	if (__atomic_load_n(&s->audit_err, __ATOMIC_ACQUIRE) ||
	    __atomic_load_n(&s->audit_full, __ATOMIC_ACQUIRE)) {
		/* Nothing more can be recorded: nothing more is allowed (sup_audit_check). */
		(void)notify_return(s->listener, req.id, 0, EPERM);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (req.nr == SYS_execve || req.nr == SYS_execveat) {
		sup_exec_handle(s, &req);
		sup_stats_note(&s->stats, SUP_STATS_EXEC, &t0);
	} else if (req.nr == SYS_connect) {
		sup_connect_handle(s, &req);
		sup_stats_note(&s->stats, SUP_STATS_CONNECT, &t0);
	}
	else if (req.nr == SYS_open || req.nr == SYS_openat || req.nr == SYS_openat2 ||
		 req.nr == SYS_creat)
		sup_open_handle(s, &req);
	else
		(void)notify_return(s->listener, req.id, 0, ENOSYS);
}

/* --- terminal relay ------------------------------------------------------- */

/*
 * The agent's output to cordon's terminal goes through tty_out_filter
 * (what only draws passes; its reporting modes are tracked), and the
 * terminal's input to the agent through the key parser, so that the
 * parser knows where a report stands when a prompt begins (tty_guard.c).
 *
 * Heavy output: a pty's master gives at most 4 KiB a read (the line
 * discipline's buffer), so one read, one filter pass and one write per
 * pass of the loop cost a poll over every descriptor of the session and a
 * write to cordon's terminal for each 4 KiB.  The master is non-blocking
 * (setup_pty): the agent's output is read on until none is ready, up to
 * RELAY_BUF, and written in one piece: fewer writes to the terminal,
 * fewer passes of the loop, no poll between reads.  It stops as soon as a
 * prompt is up (none of the agent's output is written then, tty_guard.c)
 * and at the first read that would wait, so nothing is held back from
 * the terminal.  Keys to the agent wait for room in its pty, as a
 * blocking write did: none is dropped.
 */
#define RELAY_BUF (32 * 1024)

static void relay(struct sup *s, int from, int to)
{
	char in[RELAY_BUF], filtered[TTY_OUT_MAX(sizeof(in))];
	const char *buf = in;
	bool agent = from == s->term.pty_master;
	ssize_t n = read(from, in, sizeof(in));

	if (n <= 0)
		return;
	while (agent && (size_t)n < sizeof(in) && !approve_prompting(&s->ap)) {
		ssize_t r = read(from, in + n, sizeof(in) - (size_t)n);

		if (r <= 0)
			break;  /* EAGAIN: none ready; EIO: the agent's side closed */
		n += r;
	}
	if (agent) {
		n = (ssize_t)tty_out_filter(&s->term.out, in, (size_t)n, filtered);
		buf = filtered;
	} else {
		for (ssize_t i = 0; i < n; i++)
			(void)tty_keys_feed(&s->term.keys, (unsigned char)in[i]);
	}
	for (ssize_t off = 0; off < n;) {
		ssize_t w = write(to, buf + off, (size_t)(n - off));

		if (w < 0 && errno == EAGAIN) {
			struct pollfd p = { .fd = to, .events = POLLOUT };

			(void)poll(&p, 1, -1);
			continue;
		}
		if (w < 0 && errno != EINTR)
			break;
		if (w > 0)
			off += w;
	}
}

/* --- the loop ------------------------------------------------------------- */

/*
 * Attack closed: a stop signal reached only the agent's top process, so a
 * wrapper that handled it (or a child it left behind) kept the session
 * alive after the human asked it to end.  Every process of the session
 * gets the signal (to clean up), and whatever is left at the grace's end
 * is killed with the cgroup, which nothing inside can leave.
 */
void sup_stop(struct sup *s, int sig, const char *by)
{
	if (s->stop_sig) {
		/* A second stop: no more grace. */
		if (!s->stop_killed)
			s->stop_at = mono_ms();
		return;
	}
	s->stop_sig = sig;
	s->stop_at = mono_ms() + STOP_GRACE_MS;
	snprintf(s->stop_by, sizeof(s->stop_by), "%s", by);
	if (!s->opt->quiet)
		fprintf(stderr, "\r\ncordon: stopping session %s (%s); killed in %d s if still "
			"running\r\n", s->name, by, STOP_GRACE_MS / 1000);
	(void)kill(s->agent, sig);      /* cordon-init: to its whole namespace */
}

/* --stop-fd: its end of file (or an error) stops the session as SIGTERM does; bytes are read away. */
static void stop_fd_input(struct sup *s)
{
	char buf[64];
	ssize_t r = read(s->opt->stop_fd, buf, sizeof(buf));

	if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
		sup_stop(s, SIGTERM, "its --stop-fd closed (the MCP proxy stopped its server)");
}

static void stop_tick(struct sup *s, uint64_t now)
{
	if (!s->stop_sig || s->stop_killed || now < s->stop_at)
		return;
	s->stop_killed = true;
	(void)cg_destroy(s->cgroup);
}

/*
 * cordon-init says the agent's job stopped (Ctrl-Z): cordon stops too, as
 * any program stopped at its shell's prompt, and at `fg` the job goes on.
 * Without a terminal of the human's there is no shell to go back to: the
 * job is continued at once (the agent stopped itself; nobody could resume
 * it).  Whatever else the session runs is not stopped, and what it asks
 * for waits for the human as before.
 */
static void init_input(struct sup *s)
{
	char buf[16];
	ssize_t n = read(s->init_chan, buf, sizeof(buf));

	if (n <= 0) {
		if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
			close(s->init_chan);
			s->init_chan = -1;
		}
		return;
	}
	if (!memchr(buf, 'T', (size_t)n))
		return;
	if (s->term.suspend)
		s->term.suspend(&s->term);
	(void)kill(s->agent, SIGCONT);  /* cordon-init: to the agent's job */
}

/* A helper's held call went (it was cancelled, or the helper exited). */
static void withdraw(struct sup *s, int nr, uint64_t notif)
{
	approve_withdraw(&s->ap, nr, notif);
}

static void withdraw_all(struct sup *s, int nr)
{
	approve_withdraw_all(&s->ap, nr);
}

/* A helper's own record, or its lifecycle: written as the loop writes its own. */
static void audit_write_checked(struct sup *s, const char *type, json_t *fields)
{
	pthread_mutex_lock(&s->lock);
	(void)audit_write(s->audit, type, fields);
	sup_audit_check(s);
	pthread_mutex_unlock(&s->lock);
}

const struct sup_ops sup_ops = {
	.record = sup_record,
	.audit_check = sup_audit_check,
	.audit_write = audit_write_checked,
	.hold = sup_hold,
	.session_approved = sup_session_approved,
	.human_denied = sup_human_denied,
	.apply = sup_apply,
	.exec_arm = sup_exec_arm,
	.stop = sup_stop,
	.withdraw = withdraw,
	.withdraw_all = withdraw_all,
};

static int stop_asked(struct sup *s, int sig, const char *by)
{
	sup_stop(s, sig, by);
	return STOP_GRACE_MS;
}

static const struct approvals_ops approvals_ops = {
	.decided = sup_held_decided,
	.stop = stop_asked,
};

void sup_wire(struct sup *s)
{
	s->ap.ctx = (struct approvals_ctx){
		.name = s->name, .run_dir = s->run_dir, .invoker = s->invoker, .pol = s->pol,
		.vars = &s->pol->vars, .mode = s->opt->approve, .quiet = s->opt->quiet, .term = &s->term,
		.user = s->user, .uid = s->uid, .workspace = s->workspace, .argv = s->opt->argv,
		.started_ms = s->started_ms, .ops = &approvals_ops, .owner = s,
	};
	s->helpers = (struct helpers_ctx){
		.pol = s->pol, .mode = s->opt->approve, .ops = &sup_ops, .owner = s,
	};
	s->mcp.ctx = &s->helpers;
	s->egress.ctx = &s->helpers;
}

int sup_loop(struct sup *s, int *status)
{
	sigset_t mask;
	int sfd, ffd = -1, nfd = -1, bfd;
	bool agent_done = false;
	uint64_t wall = s->pol->budgets.wall_time_s * 1000;
	/*
	 * The counters' look on the timer (every second; the only one where a
	 * budget has no notification, v1 pids) starts a second in: from a
	 * clock at 0 it came at the loop's first wake-up, reading the budget
	 * files (ten system calls) while the agent's first exec waited, when
	 * nothing can have been spent yet.
	 */
	uint64_t last_budget = mono_ms();
	bool audit_stop = false;        /* stop_reason is the log's, said by its own record */
	/*
	 * The listener hangs up when no task holds the filter any more (the
	 * whole tree has exited, its init last); poll() would then return at
	 * once for ever, and the loop spun until SIGCHLD came: ~2 ms of a CPU
	 * at every session's end, taken from the tree's own exit.
	 */
	bool listener_gone = false;

	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGQUIT);
	sigaddset(&mask, SIGWINCH);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0)
		return -errno;
	if (s->fsess)
		ffd = floor_session_fd(s->fsess);
	if (s->nring)
		nfd = net_ring_fd(s->nring);
	bfd = budget_pollfd(s->budget);
	/* The agent is forked (a raw clone3, see run.c): threads may start now. */
	audit_sync_key_start(s->audit);
	{
		json_t *ev = json_pack("{s:s,s:i}", "event", "agent-started", "pid", (int)s->agent);

		pthread_mutex_lock(&s->lock);
		(void)audit_write(s->audit, "lifecycle", ev);
		sup_audit_check(s);
		pthread_mutex_unlock(&s->lock);
		json_decref(ev);
	}
	while (!agent_done) {
		struct pollfd p[13];
		int n = 0, i_listen = -1, i_sig, i_appr = -1, i_ev = -1, i_pty = -1, i_tty = -1, i_init = -1,
		    i_floor = -1, i_net = -1, i_budget = -1, i_mcp = -1, i_http = -1, i_stop = -1,
		    timeout = 1000;
		uint64_t now = mono_ms();

		timeout = approve_wait_ms(&s->ap, timeout);
		if (exec_recheck_pending(&s->recheck) && timeout > 50)
			timeout = 50;   /* a killed exec is recorded promptly */
		if (s->stop_sig && !s->stop_killed)
			timeout = s->stop_at <= now ? 0 : s->stop_at - now < (uint64_t)timeout ?
				  (int)(s->stop_at - now) : timeout;
		if (!listener_gone)
			p[i_listen = n++] = (struct pollfd){ .fd = s->listener, .events = POLLIN };
		p[i_sig = n++] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		if (s->ap.approve_sock >= 0)
			p[i_appr = n++] = (struct pollfd){ .fd = s->ap.approve_sock, .events = POLLIN };
		if (s->ap.events_sock >= 0)
			p[i_ev = n++] = (struct pollfd){ .fd = s->ap.events_sock, .events = POLLIN };
		/* While a prompt is up the agent's output waits (tty_guard.c). */
		if (s->term.pty_master >= 0 && !approve_prompting(&s->ap))
			p[i_pty = n++] = (struct pollfd){ .fd = s->term.pty_master, .events = POLLIN };
		if (s->term.tty_fd >= 0)
			p[i_tty = n++] = (struct pollfd){ .fd = s->term.tty_fd, .events = POLLIN };
		if (ffd >= 0)
			p[i_floor = n++] = (struct pollfd){ .fd = ffd, .events = POLLIN };
		if (nfd >= 0)
			p[i_net = n++] = (struct pollfd){ .fd = nfd, .events = POLLIN };
		if (bfd >= 0)
			p[i_budget = n++] = (struct pollfd){ .fd = bfd, .events = POLLIN };
		if (s->mcp.chan >= 0)
			p[i_mcp = n++] = (struct pollfd){ .fd = s->mcp.chan, .events = POLLIN };
		if (s->egress.chan >= 0)
			p[i_http = n++] = (struct pollfd){ .fd = s->egress.chan, .events = POLLIN };
		if (s->init_chan >= 0)
			p[i_init = n++] = (struct pollfd){ .fd = s->init_chan, .events = POLLIN };
		if (s->opt->stop_fd > 2 && !s->stop_sig)
			p[i_stop = n++] = (struct pollfd){ .fd = s->opt->stop_fd, .events = POLLIN };
		if (poll(p, (nfds_t)n, timeout) < 0 && errno != EINTR)
			return -errno;
		if (i_stop >= 0 && p[i_stop].revents)
			stop_fd_input(s);
		if (i_listen >= 0 && (p[i_listen].revents & POLLIN))
			handle_notification(s);
		else if (i_listen >= 0 && (p[i_listen].revents & (POLLHUP | POLLERR | POLLNVAL)))
			listener_gone = true;
		if (i_floor >= 0 && (p[i_floor].revents & POLLIN))
			floor_events_drain(s);
		if (i_net >= 0 && (p[i_net].revents & POLLIN))
			floor_events_drain_net(s);
		if (i_appr >= 0 && (p[i_appr].revents & POLLIN))
			approve_accept(&s->ap);
		if (i_mcp >= 0 && p[i_mcp].revents)
			helper_input(&s->mcp);
		if (i_http >= 0 && p[i_http].revents)
			helper_input(&s->egress);
		/* A helper refuses the call that spends the budget; the session stops here. */
		sup_steps_check(s);
		if (i_ev >= 0 && (p[i_ev].revents & POLLIN))
			approve_events_accept(&s->ap);
		/* A prompt begun in this pass (a notification above): the output waits. */
		if (i_pty >= 0 && (p[i_pty].revents & (POLLIN | POLLHUP)) &&
		    !approve_prompting(&s->ap)) {
			if (p[i_pty].revents & POLLIN)
				relay(s, s->term.pty_master, s->term.pty_out);
			else
				s->term.pty_master = -1;     /* closed at exit */
		}
		if (i_tty >= 0 && (p[i_tty].revents & POLLIN)) {
			if (approve_prompting(&s->ap)) {
				char buf[64];
				ssize_t r = read(s->term.tty_fd, buf, sizeof(buf));

				if (r > 0)
					approve_tty_input(&s->ap, buf, (size_t)r);
			} else if (s->term.pty_master >= 0) {
				relay(s, s->term.tty_fd, s->term.pty_master);
			}
		}
		if (i_init >= 0 && p[i_init].revents)
			init_input(s);
		if (p[i_sig].revents & POLLIN) {
			struct signalfd_siginfo si;

			while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGWINCH && s->term.pty_master >= 0) {
					struct winsize ws;

					if (ioctl(s->term.term_fd, TIOCGWINSZ, &ws) == 0)
						(void)ioctl(s->term.pty_master, TIOCSWINSZ, &ws);
				} else if (si.ssi_signo == SIGINT || si.ssi_signo == SIGTERM ||
					   si.ssi_signo == SIGHUP || si.ssi_signo == SIGQUIT) {
					char by[128];

					snprintf(by, sizeof(by), "SIG%s from uid %u (pid %u)",
						 sigabbrev_np((int)si.ssi_signo) ?: "?",
						 si.ssi_uid, si.ssi_pid);
					sup_stop(s, (int)si.ssi_signo, by);
				} else if (si.ssi_signo != SIGCHLD) {
					(void)kill(s->agent, (int)si.ssi_signo);
				}
			}
			if (waitpid(s->agent, status, WNOHANG) == s->agent)
				agent_done = true;
		}
		now = mono_ms();
		if (__atomic_load_n(&s->audit_err, __ATOMIC_ACQUIRE) && !s->stop_reason[0]) {
			audit_stop = true;
			snprintf(s->stop_reason, sizeof(s->stop_reason),
				 "the audit log cannot keep its records (%s)",
				 strerror(-__atomic_load_n(&s->audit_err, __ATOMIC_ACQUIRE)));
			(void)cg_destroy(s->cgroup);
		}
		if (__atomic_load_n(&s->audit_full, __ATOMIC_ACQUIRE) && !s->stop_reason[0]) {
			snprintf(s->stop_reason, sizeof(s->stop_reason),
				 "audit budget spent (%llu bytes of records)",
				 (unsigned long long)s->pol->budgets.audit_bytes);
			(void)cg_destroy(s->cgroup);
		}
		approve_tick(&s->ap);
		stop_tick(s, now);
		if (exec_recheck_pending(&s->recheck))
			sup_exec_sweep(s);
		if (wall && now - s->started_ms > wall && !s->stop_reason[0]) {
			snprintf(s->stop_reason, sizeof(s->stop_reason),
				 "wall_time budget spent (%llu s)",
				 (unsigned long long)s->pol->budgets.wall_time_s);
			(void)cg_destroy(s->cgroup);
		}
		if ((i_budget >= 0 && (p[i_budget].revents & POLLIN)) || now - last_budget >= 1000) {
			char which[32], detail[256];

			last_budget = now;
			if (budget_check(s->budget, which, sizeof(which), detail, sizeof(detail)) == 1 &&
			    !s->stop_reason[0]) {
				snprintf(s->stop_reason, sizeof(s->stop_reason), "%s budget spent: %s",
					 which, detail);
				(void)cg_destroy(s->cgroup);
			}
		}
	}
	/* A budget spent in the last moments (the OOM kill that ended the agent). */
	if (!s->stop_reason[0]) {
		char which[32], detail[256];

		if (budget_check(s->budget, which, sizeof(which), detail, sizeof(detail)) == 1)
			snprintf(s->stop_reason, sizeof(s->stop_reason), "%s budget spent: %s",
				 which, detail);
	}
	/*
	 * The agent has exited: what it left running (a daemon it forked) is
	 * killed now, before the last events are drained, the helpers stopped
	 * and the log sealed.  Attack closed: a daemon that waits for its
	 * parent to go acted in the seconds the helpers take to stop, its
	 * kernel events never read, under a log sealed as whole.
	 */
	(void)cg_destroy(s->cgroup);
	/* Drain what the floor reported before the session ended. */
	if (exec_recheck_pending(&s->recheck))
		sup_exec_sweep(s);
	if (ffd >= 0)
		floor_events_drain(s);
	if (nfd >= 0)
		floor_events_drain_net(s);
	if (s->term.pty_master >= 0) {
		struct pollfd pp = { .fd = s->term.pty_master, .events = POLLIN };

		while (poll(&pp, 1, 0) > 0 && (pp.revents & POLLIN))
			relay(s, s->term.pty_master, s->term.pty_out);
	}
	if (s->stop_reason[0] && !audit_stop) {
		json_t *ev = json_pack("{s:s,s:s}", "event", "budget", "stopped", s->stop_reason);

		pthread_mutex_lock(&s->lock);
		(void)audit_write(s->audit, "budget", ev);
		pthread_mutex_unlock(&s->lock);
		json_decref(ev);
	}
	if (s->stop_sig) {
		char sig[16];
		json_t *ev;

		snprintf(sig, sizeof(sig), "SIG%s", sigabbrev_np(s->stop_sig) ?: "?");
		ev = json_pack("{s:s,s:s,s:s,s:b}", "event", "stopped", "by", s->stop_by,
			       "signal", sig, "killed", s->stop_killed);

		pthread_mutex_lock(&s->lock);
		(void)audit_write(s->audit, "lifecycle", ev);
		pthread_mutex_unlock(&s->lock);
		json_decref(ev);
		if (!s->stop_reason[0])
			snprintf(s->stop_reason, sizeof(s->stop_reason), "%s%s", s->stop_by,
				 s->stop_killed ? "; still running at the end of the grace: killed" : "");
	}
	/* Anything left pending dies with the session. */
	approve_end(&s->ap);
	close(sfd);
	return 0;
}
