// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A session's start-up and teardown, in order (run.h); `cordon run`'s
 * options are cmd/run.c's, the event loop supervisor.c's.
 *
 * Order of start-up, and why (each step a function below; run_session
 * calls them in turn, and run_teardown undoes whatever was made, on every
 * path past the first check):
 *   1. everything that can fail on bad input (user, workspace, policy) is
 *      checked before anything is created, so an error leaves nothing behind
 *      (run_check); then the session's name and the paths the rules name,
 *      and the helpers whose sockets they grant (run_plan);
 *   2. the floor: BPF LSM if the kernel takes it (full posture), otherwise
 *      the fallback, and the lacks of the posture are printed (never
 *      pretend); --require-full-floor refuses the fallback (run_open_floor);
 *   3. the session cgroup with its kernel rules, registered before any task
 *      enters it (a task in an unregistered session cgroup is denied
 *      everything by the network floor) (run_make_session);
 *   4. the watchdog, so that from here on a dead supervisor means a dead
 *      session (cgroup.kill) (run_make_session);
 *   5. the agent: forked, moved into the cgroup by the supervisor, then it
 *      drops privileges, sets no_new_privs, applies the fallback layers when
 *      needed, installs the notify filter, hands its listener over and execs
 *      (run_fork_agent, run_start_agent; its own side is agent_child.c).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent_child.h"
#include "agent_tty.h"
#include "approve.h"
#include "audit_session.h"
#include "egress_session.h"
#include "exec_recheck.h"
#include "floor.h"
#include "floor_open.h"
#include "helper.h"
#include "home_session.h"
#include "mcp_session.h"
#include "net.h"
#include "notify.h"
#include "progress.h"
#include "reap.h"
#include "run.h"
#include "session_cgroup.h"
#include "session_policy.h"
#include "ssh_session.h"
#include "instance.h"
#include "steps.h"
#include "supervisor.h"
#include "unix_connector.h"
#include "util.h"
#include "view_prep.h"
#include "watchdog.h"
#include "world.h"

#define RUN_DIR CORDON_RUN_DIR

/*
 * Who the agent runs as.  Never with capabilities: the invoking user (the
 * uid sudo was called by), or --user.  Plain root without --user is refused:
 * an agent running as uid 0 owns every root-owned file the floor does not
 * cover (and in the fallback posture, /proc/sysrq-trigger).
 */
static int resolve_user(struct sup *s)
{
	const char *name = s->opt->user;
	const char *sudo_uid = getenv("SUDO_UID");
	struct passwd *pw = NULL;
	char *end;

	if (name) {
		unsigned long n = strtoul(name, &end, 10);

		pw = (*name && !*end) ? getpwuid((uid_t)n) : getpwnam(name);
		if (!pw) {
			log_err("run: --user %s: no such user", name);
			return -ENOENT;
		}
	} else if (sudo_uid && *sudo_uid) {
		unsigned long n = strtoul(sudo_uid, &end, 10);

		if (*end || !(pw = getpwuid((uid_t)n))) {
			log_err("run: SUDO_UID=%s names no user", sudo_uid);
			return -ENOENT;
		}
	} else {
		log_err("run: refusing to run the agent as root: pass --user USER (or "
			"--user root to run it as uid 0 with every capability dropped)");
		return -EPERM;
	}
	s->uid = pw->pw_uid;
	s->gid = pw->pw_gid;
	snprintf(s->user, sizeof(s->user), "%s", pw->pw_name);
	snprintf(s->home, sizeof(s->home), "%s", pw->pw_dir && pw->pw_dir[0] == '/' ? pw->pw_dir : "/");
	s->invoker = sudo_uid && *sudo_uid ? (uid_t)strtoul(sudo_uid, NULL, 10) : 0;
	return 0;
}

/*
 * The agent's supplementary groups.  Looked up in the supervisor, not in
 * the child (NSS is slow, may load modules, and is not the child's
 * business), and after the Landlock ruleset's thread has started: nothing
 * before the fork needs them, and NSS (which may search systemd's userdb
 * directories) then overlaps that thread instead of delaying it.
 */
static void resolve_groups(struct sup *s)
{
	s->n_groups = (int)ARRAY_SIZE(s->groups);
	if (getgrouplist(s->user, s->gid, s->groups, &s->n_groups) < 0)
		s->n_groups = (int)ARRAY_SIZE(s->groups);     /* the first 64 */
}

static int load_policy(struct sup *s)
{
	struct session_vars sv = { s->workspace, s->home, s->user, s->uid };
	char why[512];

	if (policy_load_session("run", s->opt->policy, &sv, s->opt->vars, s->opt->n_vars,
				&s->pol) < 0)
		return -EINVAL;
	/* Checked here, so a mistake fails the start; the broker applies them too. */
	for (int i = 0; i < s->opt->n_upstreams; i++)
		if (pol_apply_upstream(s->pol, s->opt->upstreams[i], s->opt->upstream_ca, why,
				       sizeof(why)) < 0) {
			log_err("run: %s", why);
			return -EINVAL;
		}
	return 0;
}

static int random_name(char *out, size_t len)
{
	unsigned char b[8];
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (read(fd, b, sizeof(b)) != sizeof(b)) {
		close(fd);
		return -EIO;
	}
	close(fd);
	snprintf(out, len, "s%02x%02x%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3], b[4],
		 b[5], b[6], b[7]);
	return 0;
}

static int exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return EXIT_CORDON;
}

/*
 * One `cordon run`: the supervisor's state, and what start-up holds that
 * run_teardown must undo (threads to join, descriptors to close).
 */
struct run {
	struct sup s;
	int sp[2];              /* the socketpair to the agent's first process */
	int slave;              /* the agent's terminal (setup_pty), until the fork */
	pid_t pid;              /* the agent's first process */
	bool in_cgroup;         /* born in its v2 cgroup (world_clone) */
	bool prep_started, att_started;
	pthread_t prep_thread, att_thread;
	struct attach att;
	const char *audit_split;        /* audit_place's rule, else NULL */
	int status, ret;
};

/*
 * A workspace is a project: the policy gives ${WORKSPACE} every right
 * (write, create, delete, exec) to the agent.  `--workspace /` was
 * accepted and handed it the host; so would a system tree (/etc, /usr,
 * /home: every user's, /var) or a pseudo-filesystem (/proc, /sys, /dev).
 * Refused: "/", every top-level directory of the FHS, and anything under
 * /proc, /sys and /dev.  What it cannot close: a project directory that
 * holds something precious below it (the policy's invariants still keep
 * cordon's own state and the credential stores out).
 */
static bool workspace_ok(const char *ws)
{
	static const char *const top[] = { "bin", "boot", "dev", "etc", "home", "lib", "lib32",
					   "lib64", "libx32", "media", "mnt", "opt", "proc", "root",
					   "run", "sbin", "srv", "sys", "tmp", "usr", "var" };
	static const char *const pseudo[] = { "/proc", "/sys", "/dev" };

	if (!strcmp(ws, "/")) {
		log_err("run: workspace /: the whole host; give the project's directory");
		return false;
	}
	for (size_t i = 0; i < ARRAY_SIZE(top); i++)
		if (ws[0] == '/' && !strcmp(ws + 1, top[i])) {
			log_err("run: workspace %s: a system directory, not a project (the policy "
				"gives the agent every right in its workspace)", ws);
			return false;
		}
	for (size_t i = 0; i < ARRAY_SIZE(pseudo); i++)
		if (pol_path_within(ws, pseudo[i])) {
			log_err("run: workspace %s: under %s, not a project", ws, pseudo[i]);
			return false;
		}
	return true;
}

/*
 * Step 1: bad input refused before anything is made (root, the agent's
 * user, the workspace, the policy, --env naming a credential), then the
 * steps counter.  0, or negative with the reason logged and nothing left
 * to undo.
 */
static int run_check(struct run *run)
{
	struct sup *s = &run->s;
	const struct run_options *opt = s->opt;
	char ws[PATH_MAX];
	struct stat st;
	int r;

	if (geteuid() != 0) {
		log_err("run: needs root to load the kernel floor and create the session's "
			"cgroup; run it with sudo (the agent then runs as you, without privileges)");
		return -EPERM;
	}
	if (resolve_user(s) < 0)
		return -EINVAL;
	phase("user resolved");
	if (!realpath(opt->workspace ? opt->workspace : ".", ws) || stat(ws, &st) < 0) {
		log_err("run: workspace %s: %m", opt->workspace ? opt->workspace : ".");
		return -EINVAL;
	}
	if (!S_ISDIR(st.st_mode)) {
		log_err("run: workspace %s: not a directory", ws);
		return -EINVAL;
	}
	if (!workspace_ok(ws))
		return -EINVAL;
	snprintf(s->workspace, sizeof(s->workspace), "%s", ws);
	if (load_policy(s) < 0)
		return -EINVAL;
	/* --env cannot hand the agent a secret the credential proxy stands in for. */
	for (int i = 0; i < opt->n_env; i++)
		for (size_t k = 0; k < s->pol->n_creds; k++) {
			const struct pol_credential *cr = &s->pol->creds[k];

			if (!strcmp(opt->env[i], cr->env) ||
			    (cr->source_env && !strcmp(opt->env[i], cr->source_env))) {
				log_err("run: --env %s: that is credential %s's, which the agent gets "
					"only as a sentinel", opt->env[i], cr->name);
				return -EINVAL;
			}
		}
	phase("policy loaded");
	/* Before any helper starts: they count their calls in it too. */
	r = steps_create(&s->steps, s->pol->budgets.steps);
	if (r < 0) {
		log_err("run: the steps counter: %s", strerror(-r));
		pol_free(s->pol);
		return r;
	}
	return 0;
}

/*
 * Step 1, continued: the session's name and every path a rule will name,
 * before any rule is compiled: cordon's own paths and the audit log's
 * place protected, the MCP socket and the egress broker's port made, the
 * broker started while this process is still single-threaded, then its
 * repositories' plan.  0, or negative, logged.
 */
static int run_plan(struct run *run)
{
	struct sup *s = &run->s;
	const struct run_options *opt = s->opt;
	int r;

	/*
	 * Opens are notified only when the policy escalates some file access
	 * (the kernel cannot hold a call for a human; the supervisor can):
	 * every other open is judged by the floor alone, at no cost here.
	 */
	for (size_t i = 0; i < s->pol->n_rules; i++)
		if (s->pol->rules[i].kind == POL_FS && s->pol->rules[i].decision == CORDON_ESCALATE)
			s->notify_open = true;
	if (random_name(s->name, sizeof(s->name)) < 0) {
		log_err("run: /dev/urandom: %m");
		return -EIO;
	}
	s->started_ms = mono_ms();
	snprintf(s->run_dir, sizeof(s->run_dir), "%s/%s", instance_run_dir(), s->name);
	/*
	 * The run directory, held for the session's life, before any file
	 * named for the session exists (its MCP socket, CA bundle, ssh files,
	 * home layer): a reaper removes such a file only when no run directory
	 * of its session is there, so a start killed at any point leaves
	 * nothing a reaper cannot find (reap.h).
	 */
	{
		_cleanup_close_ int lock = reap_floor_lock();

		s->run_lock = lock < 0 ? lock : reap_lock_run_dir(s->run_dir);
		if (s->run_lock < 0) {
			log_err("run: %s: %s", s->run_dir, strerror(-s->run_lock));
			s->run_dir[0] = '\0';   /* not ours to remove */
			return s->run_lock;
		}
	}
	/* Every fact the owned parts read is known now, before any helper starts. */
	sup_wire(s);
	/*
	 * cordon's own paths: never writable from inside, whatever the policy
	 * says (RUN_DIR holds every instance's run directories).
	 */
	(void)pol_protect_path(s->pol, RUN_DIR);
	(void)pol_protect_path(s->pol, AUDIT_DIR);
	(void)pol_protect_path(s->pol, "/var/lib/cordon");
	if (audit_paths(s) < 0) {
		log_err("run: --audit %s: path too long", opt->audit);
		return -ENAMETOOLONG;
	}
	r = audit_place(s, &run->audit_split);
	if (r < 0)
		return r;
	(void)pol_protect_path(s->pol, s->key_dir);
	/* The MCP socket exists before any rule is compiled: the floor keys its grant by inode. */
	if (opt->mcp && mcp_session_listen(s) < 0)
		return -EIO;
	/*
	 * So does the egress broker's port: the network floor's grant names it.
	 * The broker is started now, while this process is single-threaded,
	 * and readies itself while the floor and the session are made; it is
	 * told the session's cgroup and waited for before the agent is forked.
	 */
	if (egress_session_wanted(s) &&
	    (egress_session_listen(s) < 0 || ssh_session_prepare(s) < 0 ||
	     egress_session_spawn(s) < 0))
		return -EIO;
	/*
	 * The workspace's repositories, walked after the broker is started:
	 * the walk (every directory of the workspace) is then off the broker's
	 * start, which the agent's fork waits for.  Nothing before needs it;
	 * the view and the log's first record do.
	 */
	{
		char gwhy[PATH_MAX + 256] = "", tag[64];
		uint32_t nonce = 0;

		/*
		 * What is held aside at the end is named for the session and a
		 * nonce the agent never sees (it knows the session's name): it
		 * cannot put a directory in the way of the names beforehand.
		 */
		if (getrandom(&nonce, sizeof(nonce), 0) != sizeof(nonce)) {
			log_err("run: getrandom: %m");
			return -EIO;
		}
		snprintf(tag, sizeof(tag), "%s.%08x", s->name, nonce);
		r = git_guard_plan_session(s->workspace, tag, s->home, &s->git, gwhy, sizeof(gwhy));
		if (r < 0) {
			log_err("run: the workspace's repositories and agent files: %s",
				gwhy[0] ? gwhy : strerror(-r));
			return r;
		}
	}
	return 0;
}

/*
 * Step 2: the floor, with the view's thread (view_prep.h) building the
 * session's private world meanwhile, and the fallback's ruleset when it is
 * known to be wanted; the checks that need the posture (a log in the
 * workspace, --user root).  0, or negative, logged.
 */
static int run_open_floor(struct run *run)
{
	struct sup *s = &run->s;
	int r;

	/*
	 * When the posture cache says this host has no BPF LSM, the fallback's
	 * ruleset is started now, while the floor is opened (the cache is
	 * re-read under the floor lock; if the floor loads after all, the
	 * ruleset is dropped unused).
	 */
	{
		/* Scratch: the session's own posture is open_floor's to fill. */
		struct posture probe = { 0 };
		char why[sizeof(s->floor_error)];

		s->main_cpu = sched_getcpu();
		s->ll_wanted = posture_cached(&probe, why, sizeof(why));
		r = pthread_create(&run->prep_thread, NULL, prepare_view, s);
		if (r) {
			log_err("run: a thread for the session's view: %s", strerror(r));
			return -r;
		}
		run->prep_started = true;
	}
	r = open_floor(s);
	if (r < 0)
		return r;
	phase("floor open");
	if (run->audit_split && !s->floor) {
		log_err("run: --audit %s: the agent may create and delete files in %s (rule '%s'), "
			"and the fallback posture (Landlock) can keep it from the log there only by "
			"taking those rights from that directory and each one above it up to the "
			"rule's: the session would break (a compiler, an agent's own files); put the "
			"log where the agent may not write (the default, " AUDIT_DIR ", or any "
			"directory outside the workspace)", s->audit_path, audit_dir_of(s),
			run->audit_split);
		return -EPERM;
	}
	if (s->floor || !s->ll_wanted) {
		/* The LSM floor's rules are built in the view: it must be whole first. */
		pthread_join(run->prep_thread, NULL);
		run->prep_started = false;
		if (s->ll_fd >= 0)
			close(s->ll_fd);
		s->ll_fd = -1;
		if (s->world.ns_fd < 0) {
			log_err("run: the session's private world: %s", s->world_error);
			return -EIO;
		}
	}
	if (!s->floor && !s->ll_wanted) {
		s->main_cpu = sched_getcpu();
		s->ll_wanted = true;
		r = pthread_create(&run->prep_thread, NULL, prepare_view, s);
		if (r) {
			log_err("run: a thread for the Landlock ruleset: %s", strerror(r));
			return -r;
		}
		run->prep_started = true;
	}
	if (s->opt->user && s->uid == 0 && s->posture.level != POSTURE_FULL) {
		log_err("run: --user root needs the full posture: in the fallback posture an "
			"agent with uid 0 can write /proc/sysrq-trigger (Landlock cannot deny "
			"it); run the agent as an unprivileged user");
		return -EPERM;
	}
	return 0;
}

/*
 * Steps 3 and 4: the audit log (before the rules are compiled: the floor
 * protects its inode), the session's cgroup and rules, the watchdog, then
 * the helpers told the session.  0, or negative, logged.
 */
static int run_make_session(struct run *run)
{
	struct sup *s = &run->s;
	int r;

	r = open_audit(s);
	if (r < 0)
		return r;
	phase("audit log open");
	resolve_groups(s);
	phase("groups resolved");
	r = make_session(s);
	if (r < 0)
		return r;
	phase("session created");
	r = watchdog_arm(s);
	if (r < 0) {
		log_err("run: cannot arm the watchdog: %s", strerror(-r));
		return -EIO;
	}
	phase("watchdog armed");
	if (s->opt->mcp && mcp_session_start(s) < 0)
		return -EIO;
	if (s->egress_port && egress_session_tell(s) < 0)
		return -EIO;
	return 0;
}

/*
 * Step 5: the view whole (and the fallback's ruleset built), this thread in
 * it, the agent's terminal, and the agent's first process forked into the
 * session (agent_child.h).  0, or negative, logged.
 */
static int run_fork_agent(struct run *run)
{
	struct sup *s = &run->s;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, run->sp) < 0) {
		log_err("run: socketpair: %m");
		return -EIO;
	}
	if (run->prep_started)
		pthread_join(run->prep_thread, NULL);
	run->prep_started = false;
	phase("landlock ruleset built");
	if (s->world.ns_fd < 0) {
		log_err("run: the session's private world: %s", s->world_error);
		return -EIO;
	}
	if (!s->floor && s->ll_fd < 0) {
		log_err("run: fallback floor: %s", s->ll_error[0] ? s->ll_error :
			"cannot build the Landlock ruleset");
		return -EIO;
	}
	/*
	 * This thread joins the session's view (world.h) for the rest of the
	 * session: the agent is born in a copy of it, the paths it names are
	 * judged in it, and its terminal is made in the view's own devpts.  The
	 * helpers and the watchdog, started before, stay in the host's.
	 */
	if (world_enter(&s->world) < 0) {
		log_err("run: joining the session's view: %m");
		return -EIO;
	}
	phase("in the session's view");
	if (setup_pty(&s->term, &run->slave) < 0) {
		log_err("run: cannot create the agent's terminal: %m");
		return -EIO;
	}
	/*
	 * The agent is forked now, while the supervisor is single-threaded (a
	 * raw clone3 child must not inherit a lock another thread holds).  It
	 * readies itself while the rest of start-up goes on, then waits.
	 */
	run->pid = world_clone(s->floor ? NULL : s->cgroup, &run->in_cgroup);
	if (run->pid < 0) {
		log_err("run: fork: %m");
		return -EIO;
	}
	if (run->pid == 0) {
		close(run->sp[0]);
		agent_child(s, run->sp[1], run->slave);
	}
	s->agent = run->pid;
	phase("agent forked");
	return 0;
}

/*
 * Step 5, the supervisor's half: the agent moved into its cgroup, the
 * posture said, the approval sockets listening, the agent's listener
 * received, and its word to go ('R').  0, or negative, logged (the agent's
 * own failure: its exit status in run->ret).
 */
static int run_start_agent(struct run *run)
{
	struct sup *s = &run->s;
	int r;

	close(run->sp[1]);
	run->sp[1] = -1;
	if (run->slave >= 0)
		close(run->slave);
	run->att.s = s;
	run->att.pid = run->pid;
	if (!run->in_cgroup && !s->floor) {
		if (pthread_create(&run->att_thread, NULL, attach_agent, &run->att) == 0)
			run->att_started = true;
		else
			attach_agent(&run->att);
	}
	print_posture(s);
	say(s->opt->quiet, "audit log: %s (`cordon audit show %s`)", s->audit_path, s->audit_path);
	register_secrets(s);
	r = approve_listen(&s->ap);
	phase("sockets listening");
	if (run->att_started)
		pthread_join(run->att_thread, NULL);
	run->att_started = false;
	if (r < 0)
		return r;
	if (run->att.r < 0) {
		log_err("run: cannot move the agent into its session: %s", strerror(-run->att.r));
		return run->att.r;
	}
	phase("agent in its session");
	s->listener = notify_recv_fd(run->sp[0]);
	phase("agent's listener received");
	if (s->listener < 0) {
		/* The child said why on stderr; reap it for its exit status. */
		while (waitpid(run->pid, &run->status, 0) < 0 && errno == EINTR)
			;
		run->ret = exit_code(run->status);
		s->agent = 0;
		return s->listener;
	}
	/* Full posture: the rules on the host's /proc, for the agent's own. */
	if (s->floor) {
		char p[64];
		struct stat hp, ap;

		snprintf(p, sizeof(p), "/proc/%d/root/proc", (int)run->pid);
		r = stat("/proc", &hp) < 0 || stat(p, &ap) < 0 ? -errno :
		    floor_session_alias_dev(s->floor, s->fsess, hp.st_dev, ap.st_dev);
		if (r < 0) {
			log_err("run: the kernel rules for the agent's /proc: %s", strerror(-r));
			return r;
		}
	}
	if (s->egress_port) {
		if (egress_session_ready(s) < 0)
			return -EIO;
		phase("egress broker ready");
	}
	/* The word to go, then the sentinels (agent_child.c: read_sentinels). */
	{
		const char *lines = s->sentinels ? s->sentinels : "";
		size_t len = strlen(lines);

		if (len >= SENTINELS_MAX) {
			log_err("run: the credentials' sentinels take %zu bytes (at most %d)", len,
				SENTINELS_MAX - 1);
			return -E2BIG;
		}
		if (write_all(run->sp[0], "R", 1) < 0 || write_all(run->sp[0], lines, len + 1) < 0) {
			log_err("run: the agent died during start-up");
			return -EPIPE;
		}
	}
	if (s->term.pty_master >= 0) {
		/* cordon-init's word when the agent's job stops (session_init). */
		s->init_chan = run->sp[0];
		run->sp[0] = -1;
		(void)fcntl(s->init_chan, F_SETFL, O_NONBLOCK);
		if (s->term.tty_fd >= 0)
			s->term.suspend = suspend_session;
	} else {
		close(run->sp[0]);
		run->sp[0] = -1;
	}
	phase("agent exec answered");
	return 0;
}

/*
 * A signal that ends `cordon run` (INT, TERM, HUP, QUIT) while the session
 * starts, before the supervisor's loop takes them on its signalfd.  Their
 * default action would kill cordon mid-start and leave what it made to the
 * watchdog (once it runs) or the next reaper; instead the signal is noted,
 * the start stops at the next step and run_teardown undoes it, or, once
 * the agent runs, the session is stopped as a signal in the loop stops it
 * (sup_stop: the agent told, its grace, its log's record).  The one global
 * a signal handler needs.
 */
static volatile sig_atomic_t start_signal;
static const int start_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

static void note_start_signal(int sig)
{
	start_signal = sig;
}

static void catch_start_signals(void)
{
	struct sigaction sa = { .sa_handler = note_start_signal, .sa_flags = SA_RESTART };

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < ARRAY_SIZE(start_signals); i++)
		(void)sigaction(start_signals[i], &sa, NULL);
}

/* A signal came during start-up: stop here (its exit status set). */
static bool start_stopped(struct run *run)
{
	int sig = start_signal;

	if (!sig)
		return false;
	log_err("run: session %s: SIG%s during start-up; stopping", run->s.name,
		sigabbrev_np(sig) ?: "?");
	run->ret = 128 + sig;
	return true;
}

/* The session runs: the supervisor's loop until the agent exits; its status in run->ret. */
static void run_supervise(struct run *run)
{
	sigset_t mask;
	int r;

	/*
	 * From here the loop's signalfd takes them: blocked first, then the
	 * flag read, so none falls between the handler and the signalfd.
	 */
	sigemptyset(&mask);
	for (size_t i = 0; i < ARRAY_SIZE(start_signals); i++)
		sigaddset(&mask, start_signals[i]);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	if (start_signal) {
		char by[64];

		snprintf(by, sizeof(by), "SIG%s during start-up", sigabbrev_np(start_signal) ?: "?");
		sup_stop(&run->s, start_signal, by);
	}
	r = sup_loop(&run->s, &run->status);

	phase("agent exited");
	run->ret = r < 0 ? EXIT_CORDON : exit_code(run->status);
	run->s.agent = 0;
}

/*
 * Undo whatever start-up made, whichever step it reached: the agent and
 * the helpers stopped, the log's last records and seal, the session's
 * cgroup and rules, the watchdog told, the run directory and home layer.
 * Returns run->ret, the exit status of `cordon run`.
 */
static int run_teardown(struct run *run)
{
	struct sup *s = &run->s;
	struct home_tally tally;
	pthread_t seal_thread;
	bool sealing;

	if (run->prep_started)
		pthread_join(run->prep_thread, NULL);
	if (run->att_started)
		pthread_join(run->att_thread, NULL);
	if (s->ll_fd >= 0)
		close(s->ll_fd);
	if (s->agent > 0)
		(void)kill(s->agent, SIGKILL);
	if (run->sp[0] >= 0)
		close(run->sp[0]);
	if (s->term.pty_master >= 0)
		close(s->term.pty_master);
	if (s->init_chan >= 0)
		close(s->init_chan);
	restore_tty();
	/* The proxy's last records go into the log before it is sealed. */
	mcp_session_stop(s);
	egress_session_stop(s);
	ssh_session_stop(s);
	if (s->listener >= 0)
		git_quarantine(s);       /* only after an agent ran, and is gone */
	/*
	 * Nothing more is done in the view: this thread goes back to the
	 * host's mount namespace and the view's teardown (world_leave: 4-5 ms
	 * of waiting for grace periods, at the process's exit before) runs
	 * beside the rest.  Every name from here on is the host's, as the
	 * steps below mean them (the log, the run directory, the layer).
	 */
	if (world_leave(&s->world) < 0)
		log_warn("run: leaving the session's view: %m (it goes at exit)");
	phase("teardown starts");
	home_summary_start(s, &tally);
	/*
	 * The last records and the seal's fsync (a journal commit) on a
	 * thread while the session is taken down: nothing in the teardown
	 * reads the log, and the log says nothing about the teardown.
	 */
	s->exit_status = run->ret;
	sealing = s->audit && pthread_create(&seal_thread, NULL, seal_audit, s) == 0;
	if (s->audit && !sealing)
		seal_audit(s);
	teardown(s);
	phase("session removed");
	if (s->watchdog_fd >= 0) {
		(void)!write(s->watchdog_fd, "D", 1);
		close(s->watchdog_fd);
	}
	if (s->floor)
		floor_close(s->floor);
	if (s->net)
		net_close(s->net);
	unix_connector_stop(&s->conn);
	/* The helpers sent their last records and closed their channels; now their exits. */
	helper_reap(&s->mcp);
	helper_reap(&s->egress);
	if (sealing)
		pthread_join(seal_thread, NULL);
	phase("audit sealed");
	/*
	 * The view's mounts, the home layer's overlay with them, gone before
	 * the layer's lock is let go: the next session to take the layer
	 * mounts it on the same upper and work directories.
	 */
	world_leave_wait(&s->world);
	phase("the view's mounts gone");
	home_summary(&tally);
	close_home_layer(s);
	/*
	 * Only now, with the log sealed and its note gone: a reaper that found
	 * the run directory gone and the note still there would take the log
	 * for abandoned and write into it beside the seal.  First whatever
	 * file an earlier step left, by the one list (reap.h): the run
	 * directory goes last, since a reaper removes a session's files only
	 * once it is gone.
	 */
	reap_session_files(s->name);
	remove_run_dir(s);
	if (s->run_lock >= 0)
		close(s->run_lock);      /* after the directory is gone: no reaper finds it */
	pol_free(s->pol);
	free(s->ll_rep);
	exec_recheck_free(&s->recheck);
	steps_close(&s->steps);
	git_guard_free(&s->git);
	world_close(&s->world);
	phase("done");
	if (s->stop_reason[0])
		fprintf(stderr, "cordon: session %s stopped: %s\n", s->name, s->stop_reason);
	return run->ret;
}

int run_session(struct run_options *opt)
{
	struct run run = {
		.s = { .ops = &sup_ops, .opt = opt, .listener = -1, .term.tty_fd = -1,
		       .term.pty_master = -1, .init_chan = -1, .term.pty_out = STDOUT_FILENO,
		       .term.term_fd = -1, .ap.approve_sock = -1, .ap.events_sock = -1,
		       .watchdog_fd = -1, .ll_fd = -1, .run_lock = -1,
		       .world = { .ns_fd = -1, .host_fd = -1, .drop_fd = -1 }, .home_layer = { .lock_fd = -1 },
		       .mcp_listen = -1, .egress_listen = -1, .ssh_agent_listen = -1,
		       .egress_ca = -1, .conn.chan = -1,
		       .mcp = { .what = "MCP proxy", .raw_name = "tools/call", .record_type = "mcp",
				.held = HELD_MCP, .chan = -1 },
		       .egress = { .what = "egress broker", .raw_name = "http-proxy",
				   .record_type = "http", .held = HELD_HTTP, .chan = -1 },
		       .steps = { .fd = -1 } },
		.sp = { -1, -1 }, .slave = -1, .ret = EXIT_CORDON,
	};

	/* Before anything else, while this process is small (watchdog.c). */
	{
		int r = watchdog_start(&run.s);

		if (r < 0) {
			log_err("run: cannot start the watchdog: %s", strerror(-r));
			return EXIT_CORDON;
		}
	}
	pthread_mutex_init(&run.s.lock, NULL);
	if (run_check(&run) < 0) {
		close(run.s.watchdog_fd);       /* unarmed: it just exits */
		return EXIT_CORDON;     /* nothing made yet: nothing to undo */
	}
	catch_start_signals();
	if (run_plan(&run) == 0 && !start_stopped(&run) && run_open_floor(&run) == 0 &&
	    !start_stopped(&run) && run_make_session(&run) == 0 && !start_stopped(&run) &&
	    run_fork_agent(&run) == 0 && run_start_agent(&run) == 0)
		run_supervise(&run);
	else
		/*
		 * A step that failed with a start signal noted: the signal's
		 * status, as a stop between steps gives (a call the signal
		 * interrupted is the likeliest cause; the step said what failed).
		 */
		(void)start_stopped(&run);
	return run_teardown(&run);
}
