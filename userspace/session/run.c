// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `cordon run [options] -- AGENT [ARGS...]`: start-up and teardown of a
 * session.  The event loop is supervisor.c's.
 *
 * Order of start-up, and why:
 *   1. everything that can fail on bad input (user, workspace, policy) is
 *      checked before anything is created, so an error leaves nothing behind;
 *   2. the floor: BPF LSM if the kernel takes it (full posture), otherwise
 *      the fallback, and the lacks of the posture are printed (never
 *      pretend); --require-full-floor refuses the fallback;
 *   3. the session cgroup with its kernel rules, registered before any task
 *      enters it (a task in an unregistered session cgroup is denied
 *      everything by the network floor);
 *   4. the watchdog, so that from here on a dead supervisor means a dead
 *      session (cgroup.kill);
 *   5. the agent: forked, moved into the cgroup by the supervisor, then it
 *      drops privileges, sets no_new_privs, applies the fallback layers when
 *      needed, installs the notify filter, hands its listener over and execs.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <linux/sched.h>
#include <pty.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>

#include "audit.h"
#include "scrub.h"
#include "budget.h"
#include "cgroup.h"
#include "fallback.h"
#include "floor.h"
#include "net.h"
#include "notify.h"
#include "session_policy.h"
#include "probe.h"
#include "reap.h"
#include "cmd.h"
#include "supervisor.h"
#include "approve.h"
#include "helper.h"
#include "egress_session.h"
#include "ssh_session.h"
#include "mcp_session.h"
#include "unix_connector.h"
#include "util.h"
#include "world.h"

#define EXIT_CORDON 125

/* `cordon -v run`: how long each start-up phase took (ms since start). */
static struct timespec t_start;
static void phase(const char *what)
{
	struct timespec t;

	if (log_verbose() <= 0)
		return;
	clock_gettime(CLOCK_MONOTONIC, &t);
	log_debug("run: %-24s %.2f ms", what, (double)(t.tv_sec - t_start.tv_sec) * 1e3 +
		  (double)(t.tv_nsec - t_start.tv_nsec) / 1e6);
}
#define RUN_DIR CORDON_RUN_DIR
#define AUDIT_DIR "/var/log/cordon"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: cordon run [OPTIONS] -- AGENT [ARGS...]\n"
		"  --profile NAME        shipped profile (default: coding-agent)\n"
		"  --policy FILE         a policy file instead of a profile\n"
		"  --workspace DIR       the project directory (default: the current directory)\n"
		"  --user USER           run the agent as USER (default: the invoking user, SUDO_UID);\n"
		"                        `--user root` runs it as uid 0 with every capability dropped\n"
		"  --approve MODE        tty (default with a terminal), socket (`cordon approve`),\n"
		"                        or deny (every escalation is denied)\n"
		"  --audit FILE          the audit log (default: " AUDIT_DIR "/SESSION.jsonl)\n"
		"  --require-full-floor  refuse to start without BPF LSM\n"
		"  --env NAME            pass this variable through (the rest is scrubbed)\n"
		"  --var NAME=VALUE      set a policy variable\n"
		"  --upstream CRED=URL   send credential CRED's requests to URL (https://HOST[:PORT]\n"
		"                        [/PATH]: an LLM gateway, a private address) instead of\n"
		"                        the provider's host; the agent still asks the provider's\n"
		"  --upstream-ca FILE    the CA that verifies the --upstream gateways (default: the\n"
		"                        system's)\n"
		"  --keep-fd N           the agent inherits descriptor N too (only 0, 1 and 2\n"
		"                        otherwise)\n"
		"  --mcp SERVERS.json    the session's MCP proxy (see cordon mcp-proxy --help): the\n"
		"                        agent reaches it at $CORDON_MCP_SOCKET (cordon mcp-bridge),\n"
		"                        escalated tool calls wait for this session's approver\n"
		"  -q, --quiet           print only errors and approval prompts\n"
		"Exit status: the agent's; 125 a cordon error; 126 the agent cannot run;\n"
		"127 the agent was not found.\n");
}

static int parse_args(int argc, char **argv, struct run_options *o)
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

#define NEEDV() do { if (!v) { log_err("run: %s needs a value", a); return -EINVAL; } i++; } while (0)
		if (!strcmp(a, "--")) {
			i++;
			break;
		} else if (!strcmp(a, "--profile") || !strcmp(a, "--policy")) {
			NEEDV();
			o->policy = v;
		} else if (!strcmp(a, "--workspace")) {
			NEEDV();
			o->workspace = v;
		} else if (!strcmp(a, "--user")) {
			NEEDV();
			o->user = v;
		} else if (!strcmp(a, "--approve")) {
			NEEDV();
			if (!strcmp(v, "tty"))
				o->approve = APPROVE_TTY;
			else if (!strcmp(v, "socket"))
				o->approve = APPROVE_SOCKET;
			else if (!strcmp(v, "deny"))
				o->approve = APPROVE_DENY;
			else {
				log_err("run: --approve %s: expected tty, socket or deny", v);
				return -EINVAL;
			}
			o->approve_set = true;
		} else if (!strcmp(a, "--audit")) {
			NEEDV();
			o->audit = v;
		} else if (!strcmp(a, "--mcp")) {
			NEEDV();
			o->mcp = v;
		} else if (!strcmp(a, "--keep-fd")) {
			char *end;
			long fd;

			NEEDV();
			fd = strtol(v, &end, 10);
			if (!*v || *end || fd < 3 || fd > INT_MAX || fcntl((int)fd, F_GETFD) < 0) {
				log_err("run: --keep-fd %s: not an open descriptor above 2", v);
				return -EINVAL;
			}
			if (o->n_keep_fd >= RUN_MAX_ENV) {
				log_err("run: too many --keep-fd options");
				return -E2BIG;
			}
			o->keep_fd[o->n_keep_fd++] = (int)fd;
		} else if (!strcmp(a, "--upstream")) {
			NEEDV();
			if (o->n_upstreams >= RUN_MAX_ENV) {
				log_err("run: too many --upstream options");
				return -E2BIG;
			}
			o->upstreams[o->n_upstreams++] = v;
		} else if (!strcmp(a, "--upstream-ca")) {
			NEEDV();
			if (v[0] != '/' || access(v, R_OK) < 0) {
				log_err("run: --upstream-ca %s: not a readable absolute path", v);
				return -EINVAL;
			}
			o->upstream_ca = v;
		} else if (!strcmp(a, "--require-full-floor")) {
			o->require_full_floor = true;
		} else if (!strcmp(a, "--env") || !strcmp(a, "--var")) {
			bool env = !strcmp(a, "--env");

			NEEDV();
			if ((env ? o->n_env : o->n_vars) >= RUN_MAX_ENV) {
				log_err("run: too many %s options", a);
				return -E2BIG;
			}
			if (env)
				o->env[o->n_env++] = v;
			else
				o->vars[o->n_vars++] = v;
		} else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
			o->quiet = true;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			exit(0);
		} else if (a[0] == '-') {
			log_err("run: unknown option '%s' (try `cordon run --help`)", a);
			return -EINVAL;
		} else {
			break;
		}
#undef NEEDV
	}
	if (o->upstream_ca && !o->n_upstreams) {
		log_err("run: --upstream-ca needs --upstream (the gateway it verifies)");
		return -EINVAL;
	}
	if (i >= argc) {
		log_err("run: no agent command given (cordon run [OPTIONS] -- AGENT [ARGS...])");
		return -EINVAL;
	}
	o->argv = argv + i;
	return 0;
}

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


static void say(const struct sup *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const struct sup *s, const char *fmt, ...)
{
	va_list ap;

	if (s->opt->quiet)
		return;
	fputs("cordon: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/*
 * The fallback's posture, remembered for this boot: a kernel that refused
 * BPF LSM keeps refusing it until it reboots, so later sessions skip the
 * doomed load and the probes (about a hundred milliseconds and several MiB
 * of BTF).  Keyed by the boot id and the floor's build id; /run is cleared
 * at boot; the file is root's, in a directory the agent can never write.
 */
#define POSTURE_CACHE RUN_DIR "/posture.json"

static bool cache_key(char *out, size_t len)
{
	char *boot = NULL;

	if (read_file("/proc/sys/kernel/random/boot_id", &boot, 64) < 0)
		return false;
	boot[strcspn(boot, "\n")] = '\0';
	snprintf(out, len, "%s/%016llx", boot, (unsigned long long)floor_build_id());
	free(boot);
	return true;
}

static bool posture_cached(struct sup *s)
{
	char key[128];
	json_t *o, *m;
	bool ok = false;

	if (!cache_key(key, sizeof(key)))
		return false;
	o = json_load_file(POSTURE_CACHE, 0, NULL);
	if (!o || strcmp(json_string_value(json_object_get(o, "key")) ?: "", key))
		goto out;
	m = json_object_get(o, "mechanisms");
	for (int i = 0; i < MECH_MAX; i++) {
		json_t *e = json_object_get(m, mech_name((enum mech)i));

		if (!json_is_object(e))
			goto out;
		s->posture.mech[i].state = (enum mech_state)json_integer_value(json_object_get(e, "state"));
		s->posture.mech[i].value = (int)json_integer_value(json_object_get(e, "value"));
		snprintf(s->posture.mech[i].reason, sizeof(s->posture.mech[i].reason), "%s",
			 json_string_value(json_object_get(e, "reason")) ?: "");
	}
	snprintf(s->floor_error, sizeof(s->floor_error), "%s",
		 json_string_value(json_object_get(o, "floor_error")) ?: "");
	s->posture.root = true;
	posture_compute(&s->posture);
	ok = s->posture.level == POSTURE_FALLBACK;
out:
	json_decref(o);
	return ok;
}

static void posture_cache(struct sup *s)
{
	char key[128], tmp[] = POSTURE_CACHE ".XXXXXX";
	json_t *o, *m;
	int fd;

	if (s->posture.level != POSTURE_FALLBACK || !cache_key(key, sizeof(key)))
		return;
	m = json_object();
	for (int i = 0; i < MECH_MAX; i++)
		json_object_set_new(m, mech_name((enum mech)i),
				    json_pack("{s:i,s:i,s:s}", "state", (int)s->posture.mech[i].state,
					      "value", s->posture.mech[i].value,
					      "reason", s->posture.mech[i].reason));
	o = json_pack("{s:s,s:s,s:o}", "key", key, "floor_error", s->floor_error, "mechanisms", m);
	fd = mkstemp(tmp);
	if (fd >= 0) {
		if (json_dumpfd(o, fd, JSON_COMPACT) == 0 && fchmod(fd, 0644) == 0 &&
		    rename(tmp, POSTURE_CACHE) == 0)
			tmp[0] = '\0';
		close(fd);
		if (tmp[0])
			(void)unlink(tmp);
	}
	json_decref(o);
}

/*
 * The floor.  BPF LSM when the kernel takes it; otherwise the fallback
 * (Landlock + cgroup-bpf + seccomp), with the doctor's measured reasons.
 * The network floor (cgroup-bpf) is needed by both: without it the posture
 * is insufficient and nothing starts.
 */
static int open_floor(struct sup *s)
{
	_cleanup_close_ int lock = -1;
	int r;

	/*
	 * Sessions starting at once would race to load and pin the same
	 * programs (one of them failing with EEXIST): loading is serialised
	 * by a lock next to the sessions' run directories.
	 */
	lock = reap_floor_lock();
	if (lock < 0) {
		log_err("run: " RUN_DIR "/.floor.lock: %s", strerror(-lock));
		return -EIO;
	}
	if (posture_cached(s)) {
		r = -EPERM;
	} else {
		r = floor_open(&s->floor);
		if (r < 0) {
			snprintf(s->floor_error, sizeof(s->floor_error), "%s", strerror(-r));
			probe_all(&s->posture);
			posture_cache(s);
		}
	}
	if (r == 0) {
		s->posture.level = POSTURE_FULL;
		s->posture.n_lacks = 0;
	} else {
		if (s->posture.level == POSTURE_FULL)   /* measured yes, loading failed */
			s->posture.level = POSTURE_FALLBACK;
		if (s->opt->require_full_floor) {
			log_err("run: --require-full-floor: the BPF LSM floor cannot be loaded "
				"(%s); BPF LSM: %s", s->floor_error,
				s->posture.mech[MECH_BPF_LSM].reason);
			return -EPERM;
		}
		if (s->posture.level == POSTURE_INSUFFICIENT) {
			log_err("run: this kernel cannot confine an agent (posture insufficient; "
				"`cordon doctor` says why)");
			return -ENOTSUP;
		}
	}
	/* Another loader (an older cordon, a test) may pin at the same moment. */
	for (int tries = 0; (r = net_open(&s->net)) == -EEXIST && tries < 5; tries++)
		usleep(20000);
	if (r < 0) {
		log_err("run: cannot load the network floor (cgroup-bpf): %s", strerror(-r));
		return r;
	}
	/*
	 * The exec recheck keys expectations by the kernel's thread ids: the
	 * ids seccomp reports here are those only in the initial PID
	 * namespace (its /proc/self/ns/pid inode is fixed, PROC_PID_INIT_INO).
	 */
	{
		struct stat st;

		s->recheck.on = net_exec_recheck(s->net) && stat("/proc/self/ns/pid", &st) == 0 &&
				  st.st_ino == 0xEFFFFFFCu;
		if (!s->recheck.on)
			posture_add(&s->posture, &posture_no_exec_recheck);
	}
	/* The fallback's kernel check on pathname Unix sockets (Linux 6.7). */
	if (!s->floor && !net_unix_gate(s->net))
		posture_add(&s->posture, &posture_no_unix_gate);
	/*
	 * Still under the floor lock: sessions whose cordon and watchdog both
	 * died are reaped (reap.h), and this one's run directory is made and
	 * locked for its life, before its cgroup exists, so that no reaper
	 * takes it for dead.
	 */
	(void)reap_stale(s->net);
	(void)net_gc(s->net);
	(void)floor_gc();
	s->run_lock = reap_lock_run_dir(s->run_dir);
	if (s->run_lock < 0) {
		log_err("run: %s: %s", s->run_dir, strerror(-s->run_lock));
		return s->run_lock;
	}
	return 0;
}

static void print_posture(const struct sup *s)
{
	if (s->posture.level == POSTURE_FULL) {
		say(s, "session %s: full posture (BPF LSM + cgroup-bpf + seccomp notify)%s", s->name,
		    s->posture.n_lacks ? ", and these protections are MISSING:" : "");
		for (int i = 0; i < s->posture.n_lacks; i++)
			say(s, "  - %s: %s", s->posture.lacks[i]->id, s->posture.lacks[i]->what);
		return;
	}
	say(s, "session %s: FALLBACK posture: BPF LSM unavailable (%s); Landlock + "
	    "cgroup-bpf + seccomp enforce, and these protections are MISSING:", s->name,
	    s->posture.mech[MECH_BPF_LSM].reason);
	for (int i = 0; i < s->posture.n_lacks; i++)
		say(s, "  - %s: %s", s->posture.lacks[i]->id, s->posture.lacks[i]->what);
}

/* The kernel rules name objects as the agent reaches them: built in the view. */
struct floor_call {
	struct sup *s;
	int host_root;
};

static int create_floor_session(void *arg)
{
	struct floor_call *c = arg;

	return floor_session_create_at(c->s->floor, c->s->pol, c->s->name, c->host_root,
				       &c->s->fsess);
}

static int make_session(struct sup *s)
{
	char parent[PATH_MAX];
	int r;

	if (s->floor) {
		struct floor_call c = { .s = s };

		/* This thread is still in the host's namespace: its "/" is the host's. */
		c.host_root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		r = c.host_root < 0 ? -errno : world_call(&s->world, create_floor_session, &c);
		if (c.host_root >= 0)
			close(c.host_root);
		if (r < 0) {
			log_err("run: cannot create the session's kernel rules: %s", strerror(-r));
			return r;
		}
		snprintf(s->cgroup, sizeof(s->cgroup), "%s", floor_session_cgroup(s->fsess));
	} else {
		r = floor_cgroup_parent(parent, sizeof(parent));
		r = r ?: cg_mkdir(parent);
		if (r < 0) {
			log_err("run: cgroup2: %s", strerror(-r));
			return r;
		}
		if ((size_t)snprintf(s->cgroup, sizeof(s->cgroup), "%s/%s", parent, s->name) >=
		    sizeof(s->cgroup) ||
		    (size_t)snprintf(s->conn.cgroup, sizeof(s->conn.cgroup), "%s-unix/%s", parent,
				     s->name) >= sizeof(s->conn.cgroup)) {
			log_err("run: cgroup path too long");
			return -ENAMETOOLONG;
		}
		if (mkdir(s->cgroup, 0755) < 0) {
			r = -errno;
			log_err("run: mkdir %s: %m", s->cgroup);
			s->cgroup[0] = '\0';
			return r;
		}
	}
	r = cg_id(s->cgroup, &s->cgid);
	/* The session's own ring first: none of its refusals goes to the shared one. */
	r = r ?: net_ring_open(s->net, s->cgid, &s->nring);
	/*
	 * Allowed connects are audited by the supervisor, not the kernel.  In
	 * the fallback the session may not name a pathname Unix socket itself:
	 * the supervisor judges and performs those connects (sup_connect.c).
	 */
	r = r ?: net_session_add(s->net, s->cgid, s->pol,
				 s->floor ? 0 : CORDON_NET_SESSION_UNIX_GATE);
	if (r < 0) {
		log_err("run: cannot register the session with the network floor: %s", strerror(-r));
		return r;
	}
	r = budget_setup(&s->pol->budgets, s->cgroup, s->name, &s->budget);
	if (r < 0) {
		log_err("run: budgets: %s", strerror(-r));
		return r;
	}
	return 0;
}

/*
 * Undo the session: kill every task, then the kernel rules.  In that order,
 * so that no task of the session ever runs without its floor.
 */
static void teardown(struct sup *s)
{
	if (s->cgroup[0])
		(void)cg_destroy(s->cgroup);
	budget_destroy(s->budget);
	s->budget = NULL;
	if (s->fsess) {
		(void)floor_session_destroy(s->floor, s->fsess);
		s->fsess = NULL;
	}
	if (s->net && s->cgid)
		(void)net_session_del(s->net, s->cgid);
	net_ring_close(s->nring);
	s->nring = NULL;
	s->cgid = 0;
	s->cgroup[0] = '\0';
}

static void remove_run_dir(const struct sup *s)
{
	char p[PATH_MAX + 32];

	if (!s->run_dir[0])
		return;
	snprintf(p, sizeof(p), "%s/approve.sock", s->run_dir);
	(void)unlink(p);
	snprintf(p, sizeof(p), "%s/events.sock", s->run_dir);
	(void)unlink(p);
	(void)rmdir(s->run_dir);
	if (s->mcp_path[0])
		(void)unlink(s->mcp_path);
}

/*
 * The watchdog: a process outside the session that holds a pipe from the
 * supervisor.  When the supervisor dies, however it dies (kill -9 included),
 * the pipe reads EOF and the watchdog kills the session's cgroup and removes
 * its rules.  A clean exit writes 'D' first.  It ignores the terminal's
 * signals; only SIGKILL of both supervisor and watchdog leaves a session
 * running, and then still on its floor (pinned programs, rules kept until
 * the cgroup is gone and `cordon floor gc` runs).
 */
static int start_watchdog(struct sup *s)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		int e = errno;
		close(p[0]);
		close(p[1]);
		return -e;
	}
	if (pid == 0) {
		char c = 0;

		close(p[1]);
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		signal(SIGQUIT, SIG_IGN);
		signal(SIGPIPE, SIG_IGN);
		(void)setpgid(0, 0);
		while (read(p[0], &c, 1) < 0 && errno == EINTR)
			;
		if (c != 'D') {
			char why[PATH_MAX + 160];
			json_t *fields = json_pack("{s:s,s:s}", "event", "supervisor-died", "reason",
						   "the watchdog found the supervisor gone and "
						   "killed the session");

			if (s->cgroup[0])
				(void)cg_destroy(s->cgroup);
			if (s->conn.cgroup[0])
				(void)cg_destroy(s->conn.cgroup);       /* its connector died with us */
			budget_destroy(s->budget);
			if (s->fsess)
				(void)floor_session_destroy(s->floor, s->fsess);
			if (s->net && s->cgid)
				(void)net_session_del(s->net, s->cgid);
			/*
			 * The log ends with what happened, sealed, rather than
			 * just stopping (audit_resume in audit.c).
			 */
			why[0] = '\0';
			if (s->audit && fields)
				(void)reap_seal_log(s->audit_path, audit_key_path(s->audit), fields,
						    why, sizeof(why));
			json_decref(fields);
			reap_forget_log(s->name);
			remove_run_dir(s);
			fprintf(stderr, "cordon: watchdog: the supervisor of session %s died; "
				"the session was killed%s%s\n", s->name, why[0] ? "; " : "", why);
		}
		_exit(0);
	}
	close(p[0]);
	s->watchdog_fd = p[1];
	return 0;
}

/* --- the agent's side ----------------------------------------------------- */

static const char *const keep_env[] = {
	"PATH", "TERM", "LANG", "LANGUAGE", "TZ", "COLORTERM", "COLUMNS", "LINES",
	"NO_COLOR", "FORCE_COLOR", "EDITOR", "VISUAL", "PAGER", NULL,
};

/*
 * The environment is rebuilt, not filtered: only a short list of harmless
 * variables, the identity of the agent's user, and what --env names.  A
 * secret in the invoking shell's environment (cloud keys, tokens, SSH agent
 * sockets) therefore never reaches the agent unless the user passes it.
 */
static char **build_env(const struct sup *s)
{
	size_t n = 0, cap = 48 + (size_t)s->opt->n_env + s->pol->n_creds;
	char **env = calloc(cap + 1, sizeof(char *));
	char buf[PATH_MAX + 64];

	if (!env)
		return NULL;
#define PUT(...) do { snprintf(buf, sizeof(buf), __VA_ARGS__); if (n < cap) env[n++] = strdup(buf); } while (0)
	for (int i = 0; keep_env[i]; i++) {
		const char *v = getenv(keep_env[i]);

		if (v)
			PUT("%s=%s", keep_env[i], v);
	}
	for (int i = 0; i < s->opt->n_env; i++) {
		const char *v = getenv(s->opt->env[i]);

		/* The relay stands in for the invoker's agent: its path stays outside. */
		if (s->ssh_agent[0] && !strcmp(s->opt->env[i], "SSH_AUTH_SOCK"))
			continue;
		if (v)
			PUT("%s=%s", s->opt->env[i], v);
	}
	if (!getenv("PATH"))
		PUT("PATH=/usr/local/bin:/usr/bin:/bin");
	PUT("HOME=%s", s->home);
	PUT("USER=%s", s->user);
	PUT("LOGNAME=%s", s->user);
	PUT("PWD=%s", s->workspace);
	PUT("TMPDIR=/tmp");
	PUT("CORDON_SESSION=%s", s->name);
	if (s->mcp_path[0])
		PUT("CORDON_MCP_SOCKET=%s", s->mcp_path);
	if (ssh_session_command(s, buf + 16, sizeof(buf) - 16)) {
		memcpy(buf, "GIT_SSH_COMMAND=", 16);
		if (n < cap)
			env[n++] = strdup(buf);
	}
	if (s->ssh_agent[0])
		PUT("SSH_AUTH_SOCK=%s", s->ssh_agent);
	if (s->egress_port) {
		/* Both spellings: curl reads the lower case, others the upper. */
		PUT("HTTPS_PROXY=http://127.0.0.1:%u", s->egress_port);
		PUT("HTTP_PROXY=http://127.0.0.1:%u", s->egress_port);
		PUT("https_proxy=http://127.0.0.1:%u", s->egress_port);
		PUT("http_proxy=http://127.0.0.1:%u", s->egress_port);
	}
	if (s->ca_path[0]) {
		/* The bundle (system CAs and the session CA) where the common clients look. */
		PUT("SSL_CERT_FILE=%s", s->ca_path);
		PUT("NODE_EXTRA_CA_CERTS=%s", s->ca_path);
		PUT("REQUESTS_CA_BUNDLE=%s", s->ca_path);
		PUT("CURL_CA_BUNDLE=%s", s->ca_path);
	}
	/* Each credential's sentinel, in the variable the policy names: never the secret. */
	for (const char *l = s->sentinels; l && *l;) {
		size_t k = strcspn(l, "\n");

		PUT("%.*s", (int)k, l);
		l += k + (l[k] == '\n');
	}
#undef PUT
	env[n] = NULL;
	return env;
}

/*
 * The agent's PATH: the invoker's directories in the invoker's order, each
 * kept only if it is there for the agent: an absolute path, in its view, a
 * directory its own uid may search, where the policy lets it run programs
 * (allow or escalate), not a repeat, and no sbin directory unless the agent
 * is root.  Run in the agent's first process after it dropped to the
 * agent's identity (DAC is then the agent's) and before it restricts
 * itself.  Why: a PATH search tries each directory in turn, and each
 * attempt in a directory the agent may not run from (root's ~/.cargo/bin,
 * say) was a denied exec and a record, about ten per command an agent
 * started.  `--env PATH` asks for the invoker's PATH as it is, unfiltered.
 * Never empty: with nothing left, the filtered default (/usr/bin:/bin at
 * worst); an exec is still judged wherever it is found.
 */
static bool path_dir_ok(const struct sup *s, const char *dir)
{
	char canon[PATH_MAX], probe[PATH_MAX + 32];
	struct pol_request pr = { .op = POL_OP_EXEC, .cwd = "/" };
	struct pol_result res;
	const char *last = strrchr(dir, '/');
	struct stat st;

	if (dir[0] != '/' || (s->uid != 0 && last && !strcmp(last + 1, "sbin")))
		return false;
	if (!realpath(dir, canon) || stat(canon, &st) < 0 || !S_ISDIR(st.st_mode) ||
	    access(canon, X_OK) < 0)
		return false;
	if (s->uid != 0 && (last = strrchr(canon, '/')) && !strcmp(last + 1, "sbin"))
		return false;
	snprintf(probe, sizeof(probe), "%s/%s", strcmp(canon, "/") ? canon : "", "cordon-path-probe");
	pr.path = probe;
	pol_eval(s->pol, &pr, &res);
	return res.decision != CORDON_DENY;
}

static void filter_path(const struct sup *s, char **env)
{
	char **slot = NULL, *out;
	const char *src;
	size_t n = 0;

	for (int i = 0; i < s->opt->n_env; i++)
		if (!strcmp(s->opt->env[i], "PATH"))
			return;
	for (char **e = env; *e; e++)
		if (!strncmp(*e, "PATH=", 5))
			slot = e;
	if (!slot)
		return;
	src = *slot + 5;
	out = malloc(strlen(src) + sizeof("PATH=/usr/local/bin:/usr/bin:/bin"));
	if (!out)
		return;
	for (int pass = 0; pass < 2 && n == 0; pass++) {
		const char *p = pass ? "/usr/local/bin:/usr/bin:/bin" : src;

		n = (size_t)sprintf(out, "PATH=");
		while (*p) {
			size_t l = strcspn(p, ":");
			char dir[PATH_MAX];
			bool seen = false;

			if (l && l < sizeof(dir)) {
				memcpy(dir, p, l);
				dir[l] = '\0';
				for (const char *q = out + 5; *q && !seen;) {
					size_t k = strcspn(q, ":");

					seen = k == l && !memcmp(q, dir, l);
					q += k + (q[k] == ':');
				}
				if (!seen && path_dir_ok(s, dir))
					n += (size_t)sprintf(out + n, "%s%s", n > 5 ? ":" : "", dir);
			}
			p += l + (p[l] == ':');
		}
		n -= 5;
	}
	if (n == 0)
		strcpy(out, "PATH=/usr/bin:/bin");
	free(*slot);
	*slot = out;
}

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
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = { { 0 } };

	for (int cap = 0; cap <= 63; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
			child_fail(EXIT_CORDON, "dropping capability %d from the bounding set: %m", cap);
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
	if (syscall(SYS_capset, &hdr, data) < 0)
		child_fail(EXIT_CORDON, "clearing capabilities: %m");
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
static void __attribute__((noreturn)) agent_child(struct sup *s, int sock, int pty_slave)
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
	agent = fork();
	if (agent < 0)
		child_fail(EXIT_CORDON, "fork: %m");
	if (agent == 0) {
		close(sock);
		if (pty_slave >= 0) {
			/* As a shell does: its own group, then the terminal's foreground. */
			signal(SIGTTOU, SIG_IGN);
			if (setpgid(0, 0) < 0 || tcsetpgrp(pty_slave, getpid()) < 0)
				child_fail(EXIT_CORDON, "the agent's job on its terminal: %m");
			signal(SIGTTOU, SIG_DFL);
			if (pty_slave > 2)
				close(pty_slave);
		} else if (setsid() < 0) {
			child_fail(EXIT_CORDON, "setsid: %m");
		}
		keep_only_fds(s->opt);
		execvpe(s->opt->argv[0], s->opt->argv, env);
		r = errno;
		child_fail(r == ENOENT ? 127 : 126, "cannot run %s: %s", s->opt->argv[0], strerror(r));
	}
	if (pty_slave >= 0)
		(void)setpgid(agent, agent);    /* no race with the child's own */
	session_init(agent, pty_slave >= 0 ? sock : -1);
}

/* --- the supervisor's side ------------------------------------------------ */

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

/* Where the audit log and its key go: decided before the policy is compiled,
 * so that both can be protected from the agent. */
static int audit_paths(struct sup *s)
{
	if (s->opt->audit) {
		if (s->opt->audit[0] == '/')
			snprintf(s->audit_path, sizeof(s->audit_path), "%s", s->opt->audit);
		else {
			char cwd[PATH_MAX];

			if (!getcwd(cwd, sizeof(cwd)))
				return -errno;
			if ((size_t)snprintf(s->audit_path, sizeof(s->audit_path), "%s/%s", cwd,
					     s->opt->audit) >= sizeof(s->audit_path))
				return -ENAMETOOLONG;
		}
	} else {
		snprintf(s->audit_path, sizeof(s->audit_path), AUDIT_DIR "/%s.jsonl", s->name);
	}
	/* CORDON_AUDIT_KEY_DIR moves the keys (tests); cordon's environment, not the agent's. */
	snprintf(s->key_dir, sizeof(s->key_dir), "%s", getenv("CORDON_AUDIT_KEY_DIR") ?: AUDIT_KEY_DIR);
	return 0;
}

static const char *audit_dir_of(const struct sup *s)
{
	static char dir[PATH_MAX];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", s->audit_path);
	slash = strrchr(dir, '/');
	if (slash)
		slash[slash == dir] = '\0';
	return dir;
}

/*
 * Where the log may lie, and its protection from the agent.  Called once
 * the audit path is known (audit_paths) and before any rule is compiled.
 *   - In the agent's home: refused, in both postures.  The agent sees its
 *     home as a layer over the real one (home.h): what it writes to the
 *     log's name lands in its layer, and `cordon home apply` could carry
 *     that over the log.
 *   - In a tree the view replaces (/tmp, /var/tmp outside the workspace,
 *     world_private): no task of the session can reach it, so no rule is
 *     made for it.  Before, its denial split the agent's own /tmp, where
 *     it could then create nothing: `cc` and every Claude Code command
 *     failed.
 *   - In the workspace, where the policy lets the agent create or delete
 *     beside it: *split names that rule; run refuses it in the fallback
 *     posture, whose Landlock cannot deny one file in a directory it lets
 *     the agent change without taking the directory's rights away (the
 *     full posture judges the log's inode).
 *   - Elsewhere: protected, as before.
 */
static int audit_place(struct sup *s, const char **split)
{
	char canon[PATH_MAX], probe[PATH_MAX + 32];
	struct pol_request pr = { .path = probe };
	struct pol_result res;

	*split = NULL;
	if (pol_canon_path(s->audit_path, "/", canon, sizeof(canon)) < 0) {
		log_err("run: --audit %s: path too long", s->audit_path);
		return -ENAMETOOLONG;
	}
	if (strcmp(s->home, "/") && pol_path_within(canon, s->home)) {
		log_err("run: --audit %s: inside the agent's home, which it sees as a layer of its "
			"own over yours: its writes to that name would land in the layer, and `cordon "
			"home apply` could carry them over the log; put the log outside %s",
			s->audit_path, s->home);
		return -EPERM;
	}
	if (world_private(canon, s->workspace))
		return 0;
	(void)pol_protect_path(s->pol, s->audit_path);
	if (strcmp(canon, s->audit_path))
		(void)pol_protect_path(s->pol, canon);
	/*
	 * Only the workspace is refused: elsewhere (a policy that opens "/")
	 * the directories above the log lose their own create and delete
	 * rights, as before, and the session's work goes on below them.
	 */
	if (!pol_path_within(canon, s->workspace))
		return 0;
	snprintf(probe, sizeof(probe), "%s.cordon-probe", canon);
	for (int op = POL_OP_CREATE; op <= POL_OP_DELETE && !*split; op++) {
		pr.op = (enum pol_op)op;
		pol_eval(s->pol, &pr, &res);
		if (res.decision != CORDON_DENY)
			*split = res.rule ? res.rule->name : "?";
	}
	return 0;
}

static int open_audit(struct sup *s)
{
	json_t *start;
	int r;

	if (!s->opt->audit) {
		r = mkdir_p(AUDIT_DIR, 0700);
		if (r < 0) {
			log_err("run: %s: %s", AUDIT_DIR, strerror(-r));
			return r;
		}
	}
	start = json_pack("{s:s,s:s,s:s,s:i,s:s,s:s}", "event", "start",
			  "posture", posture_name(s->posture.level), "user", s->user,
			  "uid", (int)s->uid, "workspace", s->workspace, "policy", s->opt->policy);
	{
		json_t *argv = json_array(), *lacks = json_array();

		for (int i = 0; s->opt->argv[i]; i++)
			json_array_append_new(argv, json_string(s->opt->argv[i]));
		for (int i = 0; i < s->posture.n_lacks; i++)
			json_array_append_new(lacks, json_string(s->posture.lacks[i]->id));
		json_object_set_new(start, "argv", argv);
		json_object_set_new(start, "lacks", lacks);
	}
	if (s->git.n_dirs || s->git.n_ro) {
		json_t *ro = json_array();

		for (size_t i = 0; i < s->git.n_ro; i++)
			json_array_append_new(ro, pol_json_text(s->git.ro[i]));
		json_object_set_new(start, "git_read_only", ro);
	}
	r = audit_open(s->audit_path, s->name, s->key_dir, start, &s->audit);
	json_decref(start);
	if (r < 0) {
		if (r == -ENOSPC || r == -EDQUOT)
			log_err("run: audit log %s: %s (it keeps %d MiB allocated ahead of its "
				"records)", s->audit_path, strerror(-r), AUDIT_RESERVE >> 20);
		else
			log_err("run: audit log %s: %s", s->audit_path, strerror(-r));
		return r;
	}
	/* So that a watchdog or reaper that ends this session can close its log. */
	r = reap_note_log(s->name, s->audit_path, audit_key_path(s->audit));
	if (r < 0) {
		log_err("run: " CORDON_OPEN_LOGS_DIR "/%s: %s", s->name, strerror(-r));
		return r;
	}
	return 0;
}

/*
 * The values of variables the scrub removed that look like secrets: the
 * audit log redacts them wherever they appear (an agent echoing one into a
 * command line does not put it in the log).
 */
static void add_secret(void *ctx, const char *name, const char *value)
{
	(void)audit_add_secret(ctx, name, value);
}

static void register_secrets(struct sup *s)
{
	scrub_env_secrets(add_secret, s->audit);
}

static struct termios saved_tio;
static bool tio_saved;

static void restore_tty(void)
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
static int setup_pty(struct sup *s, int *slave)
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
	s->term.pty_master = m;
	s->term.term_fd = term;
	s->term.pty_out = isatty(STDOUT_FILENO) || !isatty(STDERR_FILENO) ? STDOUT_FILENO : STDERR_FILENO;
	if (term != STDIN_FILENO)
		return 0;
	tio_saved = true;
	atexit(restore_tty);
	raw = saved_tio;
	cfmakeraw(&raw);
	(void)tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw);
	s->term.tty_fd = STDIN_FILENO;
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
static void suspend_session(struct sup *s)
{
	struct termios raw = saved_tio;
	struct winsize ws;

	if (!tio_saved)
		return;
	(void)tcsetattr(STDIN_FILENO, TCSADRAIN, &saved_tio);
	(void)kill(0, SIGTSTP);
	cfmakeraw(&raw);
	(void)tcsetattr(STDIN_FILENO, TCSADRAIN, &raw);
	if (s->term.pty_master >= 0 && ioctl(s->term.term_fd, TIOCGWINSZ, &ws) == 0)
		(void)ioctl(s->term.pty_master, TIOCSWINSZ, &ws);
}

/*
 * The fallback's Landlock ruleset is built by a thread while the supervisor
 * opens the audit log and creates the session (opening every path of the
 * policy and splitting directories takes a millisecond or two); the agent
 * only restricts itself with it.  The thread reads the policy only, and is
 * joined before the agent is forked (a raw clone3 child must not inherit a
 * lock another thread holds).
 */
/*
 * Run the calling thread on a CPU other than `busy` (where the thread that
 * started it runs), if it may use one.  A new thread starts on its
 * creator's CPU and the scheduler moves it only later, so two threads that
 * should overlap would take turns on one CPU; a hint, and harmless where
 * it cannot be followed.
 */
static void move_off_cpu(int busy)
{
	cpu_set_t set;

	if (busy < 0 || sched_getaffinity(0, sizeof(set), &set) < 0 || CPU_COUNT(&set) < 2 ||
	    !CPU_ISSET(busy, &set))
		return;
	CPU_CLR(busy, &set);
	(void)sched_setaffinity(0, sizeof(set), &set);
}

/*
 * The view's thread: it builds the session's private world (world.h), and
 * then, where the fallback is wanted, the Landlock ruleset inside it, so
 * that each rule names the object the agent will reach (its /tmp is not
 * the host's).  When the ruleset turns out to be wanted only after the
 * floor was tried (the first session of a boot), a second run of this
 * thread joins the view and builds it.
 */
/*
 * The agent's home layer (home.h), opened and mounted detached before the
 * view is built.  A second session of the same user and profile finds the
 * layer held: it gets a layer of its own below HOME_LAYER_BASE-sessions,
 * removed when it ends (said at start; its home changes are not kept).
 */
static int open_home_layer(struct sup *s, int *fd)
{
	const char *profile = s->pol->name && *s->pol->name ? s->pol->name : "policy";
	char why[PATH_MAX + 128] = "";
	int r = home_layer_open(NULL, s->home, s->uid, s->gid, profile, &s->home_layer, why,
				sizeof(why));

	if (r == -EBUSY) {
		snprintf(s->home_tmp, sizeof(s->home_tmp), HOME_LAYER_BASE "-sessions/%s", s->name);
		r = mkdir_p(HOME_LAYER_BASE "-sessions", 0700);
		r = r ?: home_layer_open(s->home_tmp, s->home, s->uid, s->gid, profile,
					 &s->home_layer, why, sizeof(why));
	}
	r = r ?: home_layer_mount(&s->home_layer, fd, why, sizeof(why));
	if (r < 0)
		snprintf(s->world_error, sizeof(s->world_error), "the agent's home layer: %s%s",
			 why[0] ? why : strerror(-r), r == -EOPNOTSUPP || r == -EINVAL ?
			 " (" HOME_LAYER_BASE " must be on a filesystem that can hold an overlay's "
			 "upper layer: ext4, xfs, btrfs or tmpfs)" : "");
	return r;
}

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return (type == FTW_DP ? rmdir(path) : unlink(path)) < 0 && errno != ENOENT ? -1 : 0;
}

static int count_change(void *ctx, const struct home_change *c)
{
	(void)c;
	(*(size_t *)ctx)++;
	return 0;
}

struct home_count {
	const struct sup *s;
	size_t n;
};

static int count_changes(void *arg)
{
	struct home_count *c = arg;

	return home_diff(c->s->home_layer.dir, c->s->home, count_change, &c->n);
}

/*
 * What the agent changed outside the workspace: said when the session ends.
 * Compared with the real home, seen from the host's namespace (this thread
 * is in the view, where the home is the layer itself).
 */
static void home_summary(const struct sup *s)
{
	struct home_count c = { .s = s };
	size_t n;

	if (s->home_layer.lock_fd < 0 || world_call_host(&s->world, count_changes, &c) < 0 || !c.n)
		return;
	n = c.n;
	if (s->home_tmp[0])
		say(s, "the agent changed %zu path%s in its home, in a layer of this session's own, "
		    "now discarded (another session held the layer)", n, n == 1 ? "" : "s");
	else
		say(s, "the agent's home layer differs from your home in %zu path%s: `cordon home "
		    "diff --user %s --profile %s` shows them, `cordon home apply` takes them", n,
		    n == 1 ? "" : "s", s->user, s->pol->name && *s->pol->name ? s->pol->name : "policy");
}

/* After the session's last process: the layer's lock, and a session-own layer removed. */
static void close_home_layer(struct sup *s)
{
	home_layer_close(&s->home_layer);
	if (s->home_tmp[0] &&
	    nftw(s->home_tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) < 0)
		log_warn("run: %s: cannot remove this session's home layer: %m", s->home_tmp);
	s->home_tmp[0] = '\0';
}

static void *prepare_view(void *arg)
{
	struct sup *s = arg;
	struct fallback_report *rep;

	move_off_cpu(s->main_cpu);
	if (s->world.ns_fd < 0) {
		/*
		 * Host services whose sockets a session's libc probes on its own:
		 * nscd (every user and group lookup; also a resolver, which
		 * would carry names past the network floor).  Emptied in the
		 * view unless the policy lets the agent connect to them.
		 */
		static const char *const probed[][2] = { { "/run/nscd", "/run/nscd/socket" } };
		const char *absent[ARRAY_SIZE(probed) + 1] = { NULL };
		struct world_plan plan = { .git = &s->git, .home_fd = -1, .home = s->home,
					   .workspace = s->workspace, .absent = absent,
					   .self_at = s->ssh_self[0] ? s->ssh_self : NULL };
		size_t n_absent = 0;
		int r;

		for (size_t i = 0; i < ARRAY_SIZE(probed); i++) {
			struct pol_request pr = { .op = POL_OP_WRITE, .path = probed[i][1] };
			struct pol_result res;

			pol_eval(s->pol, &pr, &res);
			if (res.decision != CORDON_ALLOW)
				absent[n_absent++] = probed[i][0];
		}

		phase("view thread: begins");
		if (open_home_layer(s, &plan.home_fd) < 0)
			return NULL;
		phase("view thread: home layer mounted");
		r = world_build(&plan, &s->world, s->world_error, sizeof(s->world_error));
		close(plan.home_fd);
		if (r < 0) {
			world_close(&s->world);
			return NULL;
		}
		phase("view thread: view built");
	} else if (world_enter(&s->world) < 0) {
		snprintf(s->world_error, sizeof(s->world_error), "joining the session's view: %m");
		return NULL;
	}
	if (!s->ll_wanted)
		return NULL;
	rep = calloc(1, sizeof(*rep));
	if (!rep) {
		s->ll_fd = -ENOMEM;
		return NULL;
	}
	{
		/* The agent's own mount namespace covers what its listing rights count on. */
		struct fallback_options o = { .layer = s->home, .cover_denied_dirs = true };

		s->ll_fd = fallback_prepare(s->pol, &o, rep);
	}
	phase("view thread: ruleset built");
	if (s->ll_fd < 0)
		snprintf(s->ll_error, sizeof(s->ll_error), "%s", rep->error);
	free(s->ll_rep);
	s->ll_rep = rep;
	return NULL;
}

/*
 * The fallback's rights on the agent's own /proc, which exists only once
 * its PID namespace does (the child adds the rule): what the policy allows
 * on /proc, read only, or nothing when the policy refuses reading something
 * below it that world_child_proc does not already hide.
 */
static int proc_entry(void *ctx, const struct pol_fs_entry *e)
{
	static const char *const hidden[] = { "/proc/kcore", "/proc/sysrq-trigger" };
	uint32_t *rights = ctx;
	bool masked = false;

	if (!strcmp(e->path, "/proc")) {
		rights[0] |= e->allow & ~(e->deny | e->escalate) & CORDON_FS_READ;
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(hidden); i++)
		masked |= !strcmp(e->path, hidden[i]);
	if (!masked && pol_path_within(e->path, "/proc") &&
	    ((e->deny | e->escalate) & CORDON_FS_READ))
		rights[1] = 1;
	return 0;
}

static uint32_t proc_rights(const struct policy *p)
{
	uint32_t r[2] = { 0, 0 };

	if (pol_compile_fs(p, proc_entry, r) < 0 || r[1])
		return 0;
	return r[0];
}

/*
 * The agent's move into its v2 cgroup, where clone3 could not put it
 * (kernels before 5.7): a move by pid, which may wait for an RCU grace
 * period, so on a thread while start-up goes on.  (The v1 budget cgroups
 * the agent joins itself.)
 */
struct attach {
	struct sup *s;
	pid_t pid;
	int r;
};

static void *attach_agent(void *arg)
{
	struct attach *a = arg;

	a->r = cg_attach_pid(a->s->cgroup, a->pid);
	return NULL;
}

/* The end of the log: the "end" record, the seal, the key wiped. */
/*
 * What the agent left that would run code as the human (git_guard.h): held
 * aside when the session ends, on record, said.
 */
static void held_aside(void *ctx, const struct git_guard_held *h)
{
	static const char *const what[] = { "commondir", "hook", "config", "gitfile",
					     "file-created", "file-changed", "file-deleted",
					     "incomplete" };
	struct sup *s = ctx;
	json_t *ev = json_pack("{s:s,s:s,s:s,s:s?,s:b,s:s?}", "event", "workspace-held",
			       "what", what[h->what], "path", h->path, "moved_to", h->moved_to,
			       "restored", h->restored, "detail", h->detail);

	if (s->audit && ev) {
		pthread_mutex_lock(&s->lock);
		(void)audit_write(s->audit, "lifecycle", ev);
		pthread_mutex_unlock(&s->lock);
	}
	json_decref(ev);
	log_warn("run: %s %s%s%s%s", what[h->what], h->path,
		 h->moved_to ? ": the agent's version is held aside at " : "",
		 h->moved_to ? h->moved_to : "", h->restored ? "; the original is back" : "");
	if (h->detail)
		log_warn("run:   %s", h->detail);
}

/* Only once every task of the session is dead (sup_loop's end killed its cgroup). */
static void git_quarantine(struct sup *s)
{
	(void)git_guard_end(&s->git, held_aside, s);
}

static void *seal_audit(void *arg)
{
	struct sup *s = arg;
	json_t *fin = json_pack("{s:s,s:i,s:I,s:o}", "event", "end", "exit", s->exit_status,
				"steps", (json_int_t)steps_count(&s->steps), "held", sup_stats(s));

	uint64_t dropped = 0;

	if (fin && s->stop_reason[0])
		json_object_set_new(fin, "stopped", json_string(s->stop_reason));
	if (fin && audit_down(s->audit, &dropped) < 0)
		json_object_set_new(fin, "records_dropped", json_integer((json_int_t)dropped));
	if (fin && s->floor_dropped)
		json_object_set_new(fin, "floor_events_dropped",
				    json_integer((json_int_t)s->floor_dropped));
	if (fin && s->stats.n_unix_absent)      /* connects to a socket not in the view (sup_connect.c) */
		json_object_set_new(fin, "unix_absent", json_integer((json_int_t)s->stats.n_unix_absent));
	if (fin && s->stats.n_exec_absent)      /* execs of a path not in the view (sup_exec.c) */
		json_object_set_new(fin, "exec_absent", json_integer((json_int_t)s->stats.n_exec_absent));
	if (fin && s->net_dropped)
		json_object_set_new(fin, "net_events_dropped",
				    json_integer((json_int_t)s->net_dropped));
	(void)audit_write(s->audit, "lifecycle", fin);
	json_decref(fin);
	(void)audit_seal(s->audit, NULL);
	audit_close(s->audit);
	s->audit = NULL;
	reap_forget_log(s->name);
	return NULL;
}

static int exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return EXIT_CORDON;
}

int cmd_run(int argc, char **argv)
{
	struct run_options opt = { .policy = "coding-agent" };
	struct sup s = { .ops = &sup_ops, .opt = &opt, .listener = -1, .term.tty_fd = -1, .term.pty_master = -1, .init_chan = -1,
			 .term.pty_out = STDOUT_FILENO, .term.term_fd = -1, .ap.approve_sock = -1, .ap.events_sock = -1,
			 .watchdog_fd = -1, .ll_fd = -1, .run_lock = -1, .world = { .ns_fd = -1, .host_fd = -1 },
			 .home_layer = { .lock_fd = -1 },
			 .mcp_listen = -1, .egress_listen = -1, .ssh_agent_listen = -1, .egress_ca = -1, .conn.chan = -1,
			 .mcp = { .what = "MCP proxy", .raw_name = "tools/call", .record_type = "mcp",
				  .held = HELD_MCP, .chan = -1 },
			 .egress = { .what = "egress broker", .raw_name = "http-proxy",
				     .record_type = "http", .held = HELD_HTTP, .chan = -1 },
			 .steps = { .fd = -1 } };
	int sp[2] = { -1, -1 }, slave = -1, status = 0, r, ret = EXIT_CORDON;
	bool in_cgroup = false, prep_started = false, att_started = false;
	const char *audit_split = NULL;
	pthread_t prep_thread, att_thread, seal_thread;
	bool sealing;
	struct attach att = { 0 };
	char ws[PATH_MAX];
	struct stat st;
	pid_t pid;

	clock_gettime(CLOCK_MONOTONIC, &t_start);
	if (parse_args(argc, argv, &opt) < 0)
		return EXIT_CORDON;
	/*
	 * A question on the terminal needs the terminal's keys, which reach
	 * cordon only on its stdin (setup_pty).  --approve tty without it was
	 * accepted and nobody was ever asked; without --approve the session
	 * silently denied every escalation.  Now the first is refused, and the
	 * second said (unless -q).
	 */
	if (!opt.approve_set) {
		opt.approve = isatty(STDIN_FILENO) ? APPROVE_TTY : APPROVE_DENY;
		if (opt.approve == APPROVE_DENY && !opt.quiet)
			fprintf(stderr, "cordon: no terminal on stdin and no --approve: every "
				"escalation will be denied (--approve socket holds them for "
				"`cordon approve`)\n");
	} else if (opt.approve == APPROVE_TTY && !isatty(STDIN_FILENO)) {
		log_err("run: --approve tty needs a terminal on stdin to ask on (stdin is not "
			"one); use --approve socket (`cordon pending`, `cordon approve`) or "
			"--approve deny");
		return EXIT_CORDON;
	}
	pthread_mutex_init(&s.lock, NULL);
	if (geteuid() != 0) {
		log_err("run: needs root to load the kernel floor and create the session's "
			"cgroup; run it with sudo (the agent then runs as you, without privileges)");
		return EXIT_CORDON;
	}
	if (resolve_user(&s) < 0)
		return EXIT_CORDON;
	phase("user resolved");
	if (!realpath(opt.workspace ? opt.workspace : ".", ws) || stat(ws, &st) < 0) {
		log_err("run: workspace %s: %m", opt.workspace ? opt.workspace : ".");
		return EXIT_CORDON;
	}
	if (!S_ISDIR(st.st_mode)) {
		log_err("run: workspace %s: not a directory", ws);
		return EXIT_CORDON;
	}
	snprintf(s.workspace, sizeof(s.workspace), "%s", ws);
	if (load_policy(&s) < 0)
		return EXIT_CORDON;
	/* --env cannot hand the agent a secret the credential proxy stands in for. */
	for (int i = 0; i < opt.n_env; i++)
		for (size_t k = 0; k < s.pol->n_creds; k++) {
			const struct pol_credential *cr = &s.pol->creds[k];

			if (!strcmp(opt.env[i], cr->env) ||
			    (cr->source_env && !strcmp(opt.env[i], cr->source_env))) {
				log_err("run: --env %s: that is credential %s's, which the agent gets "
					"only as a sentinel", opt.env[i], cr->name);
				return EXIT_CORDON;
			}
		}
	phase("policy loaded");
	/* Before any helper starts: they count their calls in it too. */
	r = steps_create(&s.steps, s.pol->budgets.steps);
	if (r < 0) {
		log_err("run: the steps counter: %s", strerror(-r));
		pol_free(s.pol);
		return EXIT_CORDON;
	}
	/*
	 * Opens are notified only when the policy escalates some file access
	 * (the kernel cannot hold a call for a human; the supervisor can):
	 * every other open is judged by the floor alone, at no cost here.
	 */
	for (size_t i = 0; i < s.pol->n_rules; i++)
		if (s.pol->rules[i].kind == POL_FS && s.pol->rules[i].decision == CORDON_ESCALATE)
			s.notify_open = true;
	if (random_name(s.name, sizeof(s.name)) < 0) {
		log_err("run: /dev/urandom: %m");
		goto out;
	}
	s.started_ms = mono_ms();
	{
		char gwhy[PATH_MAX + 256] = "";

		r = git_guard_plan_session(s.workspace, s.name, &s.git, gwhy, sizeof(gwhy));
		if (r < 0) {
			log_err("run: the workspace's repositories and agent files: %s",
				gwhy[0] ? gwhy : strerror(-r));
			goto out;
		}
	}
	snprintf(s.run_dir, sizeof(s.run_dir), RUN_DIR "/%s", s.name);
	/* cordon's own paths: never writable from inside, whatever the policy says. */
	(void)pol_protect_path(s.pol, RUN_DIR);
	(void)pol_protect_path(s.pol, AUDIT_DIR);
	(void)pol_protect_path(s.pol, "/var/lib/cordon");
	if (audit_paths(&s) < 0) {
		log_err("run: --audit %s: path too long", opt.audit);
		goto out;
	}
	if (audit_place(&s, &audit_split) < 0)
		goto out;
	(void)pol_protect_path(s.pol, s.key_dir);
	/* The MCP socket exists before any rule is compiled: the floor keys its grant by inode. */
	if (opt.mcp && mcp_session_listen(&s) < 0)
		goto out;
	/*
	 * So does the egress broker's port: the network floor's grant names it.
	 * The broker is started now, while this process is single-threaded,
	 * and readies itself while the floor and the session are made; it is
	 * told the session's cgroup and waited for before the agent is forked.
	 */
	if (egress_session_wanted(&s) &&
	    (egress_session_listen(&s) < 0 || ssh_session_prepare(&s) < 0 ||
	     egress_session_spawn(&s) < 0))
		goto out;
	/*
	 * When the posture cache says this host has no BPF LSM, the fallback's
	 * ruleset is started now, while the floor is opened (the cache is
	 * re-read under the floor lock; if the floor loads after all, the
	 * ruleset is dropped unused).
	 */
	{
		struct sup probe = { .ops = &sup_ops, .opt = &opt };

		s.main_cpu = sched_getcpu();
		s.ll_wanted = posture_cached(&probe);
		r = pthread_create(&prep_thread, NULL, prepare_view, &s);
		if (r) {
			log_err("run: a thread for the session's view: %s", strerror(r));
			goto out;
		}
		prep_started = true;
	}
	if (open_floor(&s) < 0)
		goto out;
	phase("floor open");
	if (audit_split && !s.floor) {
		log_err("run: --audit %s: the agent may create and delete files in %s (rule '%s'), "
			"and the fallback posture (Landlock) can keep it from the log there only by "
			"taking those rights from that directory and each one above it up to the "
			"rule's: the session would break (a compiler, an agent's own files); put the "
			"log where the agent may not write (the default, " AUDIT_DIR ", or any "
			"directory outside the workspace)", s.audit_path, audit_dir_of(&s), audit_split);
		goto out;
	}
	if (s.floor || !s.ll_wanted) {
		/* The LSM floor's rules are built in the view: it must be whole first. */
		pthread_join(prep_thread, NULL);
		prep_started = false;
		if (s.ll_fd >= 0)
			close(s.ll_fd);
		s.ll_fd = -1;
		if (s.world.ns_fd < 0) {
			log_err("run: the session's private world: %s", s.world_error);
			goto out;
		}
	}
	if (!s.floor && !s.ll_wanted) {
		s.main_cpu = sched_getcpu();
		s.ll_wanted = true;
		r = pthread_create(&prep_thread, NULL, prepare_view, &s);
		if (r) {
			log_err("run: a thread for the Landlock ruleset: %s", strerror(r));
			goto out;
		}
		prep_started = true;
	}
	s.proc_rights = proc_rights(s.pol);
	if (opt.user && s.uid == 0 && s.posture.level != POSTURE_FULL) {
		log_err("run: --user root needs the full posture: in the fallback posture an "
			"agent with uid 0 can write /proc/sysrq-trigger (Landlock cannot deny "
			"it); run the agent as an unprivileged user");
		goto out;
	}
	/* The log exists before the rules are compiled: the floor protects its inode. */
	if (open_audit(&s) < 0)
		goto out;
	phase("audit log open");
	resolve_groups(&s);
	phase("groups resolved");
	if (make_session(&s) < 0)
		goto out;
	phase("session created");
	if (start_watchdog(&s) < 0) {
		log_err("run: cannot start the watchdog: %m");
		goto out;
	}
	phase("watchdog started");
	if (opt.mcp && mcp_session_start(&s) < 0)
		goto out;
	if (s.egress_port && egress_session_start(&s) < 0)
		goto out;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0) {
		log_err("run: socketpair: %m");
		goto out;
	}
	if (prep_started)
		pthread_join(prep_thread, NULL);
	prep_started = false;
	phase("landlock ruleset built");
	if (s.world.ns_fd < 0) {
		log_err("run: the session's private world: %s", s.world_error);
		goto out;
	}
	if (!s.floor && s.ll_fd < 0) {
		log_err("run: fallback floor: %s", s.ll_error[0] ? s.ll_error :
			"cannot build the Landlock ruleset");
		goto out;
	}
	/*
	 * This thread joins the session's view (world.h) for the rest of the
	 * session: the agent is born in a copy of it, the paths it names are
	 * judged in it, and its terminal is made in the view's own devpts.  The
	 * helpers and the watchdog, started before, stay in the host's.
	 */
	if (world_enter(&s.world) < 0) {
		log_err("run: joining the session's view: %m");
		goto out;
	}
	phase("in the session's view");
	if (setup_pty(&s, &slave) < 0) {
		log_err("run: cannot create the agent's terminal: %m");
		goto out;
	}
	/*
	 * The agent is forked now, while the supervisor is single-threaded (a
	 * raw clone3 child must not inherit a lock another thread holds).  It
	 * readies itself while the rest of start-up goes on, then waits.
	 */
	{
		pid = world_clone(s.floor ? NULL : s.cgroup, &in_cgroup);
		if (pid < 0) {
			log_err("run: fork: %m");
			goto out;
		}
		if (pid == 0) {
			close(sp[0]);
			agent_child(&s, sp[1], slave);
		}
	}
	s.agent = pid;
	phase("agent forked");
	close(sp[1]);
	sp[1] = -1;
	if (slave >= 0)
		close(slave);
	att.s = &s;
	att.pid = pid;
	if (!in_cgroup && !s.floor) {
		if (pthread_create(&att_thread, NULL, attach_agent, &att) == 0)
			att_started = true;
		else
			attach_agent(&att);
	}
	print_posture(&s);
	register_secrets(&s);
	r = approve_listen(&s);
	phase("sockets listening");
	if (att_started)
		pthread_join(att_thread, NULL);
	att_started = false;
	if (r < 0)
		goto out;
	if (att.r < 0) {
		log_err("run: cannot move the agent into its session: %s", strerror(-att.r));
		goto out;
	}
	phase("agent in its session");
	s.listener = notify_recv_fd(sp[0]);
	phase("agent's listener received");
	if (s.listener < 0) {
		/* The child said why on stderr; reap it for its exit status. */
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		ret = exit_code(status);
		s.agent = 0;
		goto out;
	}
	/* Full posture: the rules on the host's /proc, for the agent's own. */
	if (s.floor) {
		char p[64];
		struct stat hp, ap;

		snprintf(p, sizeof(p), "/proc/%d/root/proc", (int)pid);
		r = stat("/proc", &hp) < 0 || stat(p, &ap) < 0 ? -errno :
		    floor_session_alias_dev(s.floor, s.fsess, hp.st_dev, ap.st_dev);
		if (r < 0) {
			log_err("run: the kernel rules for the agent's /proc: %s", strerror(-r));
			goto out;
		}
	}
	if (write(sp[0], "R", 1) != 1) {
		log_err("run: the agent died during start-up");
		goto out;
	}
	if (s.term.pty_master >= 0) {
		/* cordon-init's word when the agent's job stops (session_init). */
		s.init_chan = sp[0];
		sp[0] = -1;
		(void)fcntl(s.init_chan, F_SETFL, O_NONBLOCK);
		if (s.term.tty_fd >= 0)
			s.term.suspend = suspend_session;
	} else {
		close(sp[0]);
		sp[0] = -1;
	}
	phase("agent exec answered");
	r = sup_loop(&s, &status);
	phase("agent exited");
	ret = r < 0 ? EXIT_CORDON : exit_code(status);
	s.agent = 0;
out:
	if (prep_started)
		pthread_join(prep_thread, NULL);
	if (att_started)
		pthread_join(att_thread, NULL);
	if (s.ll_fd >= 0)
		close(s.ll_fd);
	if (s.agent > 0)
		(void)kill(s.agent, SIGKILL);
	if (sp[0] >= 0)
		close(sp[0]);
	if (s.term.pty_master >= 0)
		close(s.term.pty_master);
	if (s.init_chan >= 0)
		close(s.init_chan);
	restore_tty();
	/* The proxy's last records go into the log before it is sealed. */
	mcp_session_stop(&s);
	egress_session_stop(&s);
	ssh_session_stop(&s);
	if (s.listener >= 0)
		git_quarantine(&s);       /* only after an agent ran, and is gone */
	phase("teardown starts");
	/*
	 * The last records and the seal's fsync (a journal commit) on a
	 * thread while the session is taken down: nothing in the teardown
	 * reads the log, and the log says nothing about the teardown.
	 */
	s.exit_status = ret;
	sealing = s.audit && pthread_create(&seal_thread, NULL, seal_audit, &s) == 0;
	if (s.audit && !sealing)
		seal_audit(&s);
	teardown(&s);
	phase("session removed");
	if (s.watchdog_fd >= 0) {
		(void)!write(s.watchdog_fd, "D", 1);
		close(s.watchdog_fd);
	}
	if (s.floor)
		floor_close(s.floor);
	if (s.net)
		net_close(s.net);
	unix_connector_stop(&s);
	/* The helpers sent their last records and closed their channels; now their exits. */
	helper_reap(&s.mcp);
	helper_reap(&s.egress);
	if (sealing)
		pthread_join(seal_thread, NULL);
	phase("audit sealed");
	/*
	 * Only now, with the log sealed and its note gone: a reaper that found
	 * the run directory gone and the note still there would take the log
	 * for abandoned and write into it beside the seal.
	 */
	remove_run_dir(&s);
	if (s.run_lock >= 0)
		close(s.run_lock);      /* after the directory is gone: no reaper finds it */
	home_summary(&s);
	close_home_layer(&s);
	pol_free(s.pol);
	free(s.ll_rep);
	steps_close(&s.steps);
	git_guard_free(&s.git);
	world_close(&s.world);
	phase("done");
	if (s.stop_reason[0])
		fprintf(stderr, "cordon: session %s stopped: %s\n", s.name, s.stop_reason);
	return ret;
}
