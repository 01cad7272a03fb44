// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The kernel floor's cost on a real kernel, behind tools/bench/floor_vm.sh,
 * which boots one VM and runs this program there (BPF LSM needs a kernel
 * booted with lsm=...,bpf; TCG makes every syscall several times slower
 * than native, so only ratios between conditions of one boot mean much).
 *
 * Three questions, each asked of the same fixture (5,000 files in 50
 * directories 3 to 5 levels below the workspace):
 *
 *  1. What does an open/stat-heavy task pay?  Every file is opened, read
 *     (one byte), closed and stat()ed, once per pass, in three conditions:
 *     "bare" (no floor attached at all: unloaded and its links verified
 *     gone), "session" (the floor attached and the task confined by a
 *     100-rule policy that allows the reads, so every open walks the rule
 *     map from the file to /) and "host" (the floor attached, the task in an
 *     ordinary cgroup at the sessions' depth: one ancestor lookup and one
 *     hash miss per hook).  The conditions are interleaved round by round,
 *     reloading the floor each round.
 *  2. The same for busybox find -type f over the tree (a fork and exec per
 *     sample, then mostly lstat and directory opens).
 *  3. The other two workloads of the host's peers table (tools/bench/
 *     peers.sh), against the whole of cordon rather than a bare floor
 *     session: the start latency of `cordon run` (the shipped default
 *     profile, --require-full-floor) running /bin/true, against /bin/true
 *     run bare, both timed from fork to wait here; and fork+exec of
 *     /bin/true, timed inside by tests/agents/attack exec-loop (ns per
 *     fork+exec), bare and under `cordon run`.  `cordon run` is a host task
 *     that opens the floor this program pinned; its agent is the unprivileged
 *     `agent` of the VM.  These run bare and in a session only, and in the
 *     first rounds only (a thousand fork+execs take seconds under TCG).
 *  4. Does the event path keep up?  A task in a session opens allowed files
 *     for writing (each open is an event) at a paced rate and at full
 *     speed while this program consumes the session's ring buffer; we
 *     report generated, received, drops (the session's and the global
 *     counter) and the delivery latency.  A last run stalls the consumer
 *     so that the ring overflows: every event must then be received or
 *     counted as a drop.
 *
 * Every sample also proves its condition: a session task must be refused a
 * canary file a rule denies, a bare or host task must read it, and every
 * open of the loop must succeed, or the program exits 1 before printing
 * any result.  A `cordon run` round starts with an untimed session whose
 * agent must find itself in a cgroup below cordon/; every `cordon run`
 * must exit 0.
 *
 * Output, one line per measurement, for floor_vm.sh to lay out:
 *   INFO|KEY|VALUE
 *   ROW|TEST|CONDITION|MEDIAN_NS|P90_NS|SAMPLES       (ns per pass, run or exec)
 *   SPREAD|TEST|CONDITION|MIN|MEDIAN|MAX              (per-round ratios to bare)
 *   EV|MODE|TARGET_RATE|ELAPSED_NS|GENERATED|FAILED|RECEIVED|SESSION_DROPS|
 *      GLOBAL_DROPS|LAT_MEDIAN_NS|LAT_P99_NS|LAT_MAX_NS
 * MODE is paced (TARGET_RATE opens per second), full (as fast as one task
 * can) or stalled (full speed, nothing read until the generator is done:
 * the drop accounting itself under test).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "cgroup.h"
#include "floor.h"
#include "policy.h"
#include "util.h"

#define FIX       "/tmp/floorbench"
#define WS        FIX "/ws"
#define EVDIR     FIX "/ev"
#define OTHER     FIX "/other"
#define CANARY    OTHER "/r00/canary"
#define BUSYBOX   "/bin/busybox"
#define AGENT_WS  FIX "/agent"
#define CORDON    "/usr/local/bin/cordon"
#define ATTACK    "/opt/cordon/build/tests/agents/attack"
#define AGENT     "agent"

#define N_TOP     5
#define N_MID     2
#define N_LEAF    5
#define N_DIRS    (N_TOP * N_MID * N_LEAF)
#define N_FILES   100
#define N_PATHS   (N_DIRS * N_FILES)
#define N_EVFILES 64
#define N_OTHER   19
#define MAX_LAT   (1u << 20)

enum cond {
	COND_BARE = 0,
	COND_SESSION,
	COND_HOST,
	N_CONDS,
};

static const char *const cond_names[N_CONDS] = { "bare", "session", "host" };

/*
 * Odd rounds run the conditions in reverse, so that drift in the emulator
 * (other VMs on the host) weighs on each condition alike; the floor is
 * loaded once per round, around the two conditions that need it.
 */
static const enum cond order[2][N_CONDS] = {
	{ COND_BARE, COND_SESSION, COND_HOST },
	{ COND_HOST, COND_SESSION, COND_BARE },
};

enum test {
	TEST_OPENSTAT = 0,
	TEST_FIND,
	TEST_START,             /* `cordon run` from here on, bare and session only */
	TEST_EXEC,
	N_TESTS,
};

static const char *const test_names[N_TESTS] = { "openstat", "find", "start", "exec" };

static __attribute__((noreturn, format(printf, 1, 2))) void die(const char *fmt, ...)
{
	va_list ap;

	fputs("floor_bench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Sorts v; returns the median, and the q-quantile (nearest rank) in *pq. */
static uint64_t quantiles(uint64_t *v, size_t n, double q, uint64_t *pq)
{
	if (!n) {
		*pq = 0;
		return 0;
	}
	qsort(v, n, sizeof(*v), cmp_u64);
	*pq = v[(size_t)(q * (double)(n - 1) + 0.5)];
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* --- the fixture ------------------------------------------------------------ */

static char *paths[N_PATHS];
static char *evpaths[N_EVFILES];
static char dirs[N_DIRS][PATH_MAX];

static void mkdirs(const char *path)
{
	int r = mkdir_p(path, 0755);

	if (r < 0)
		die("mkdir -p %s: %s", path, strerror(-r));
}

static void touch(const char *path, const char *content)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0 || write(fd, content, strlen(content)) < 0)
		die("create %s: %m", path);
	close(fd);
}

/*
 * 50 leaf directories, ws/tT/mM/lL, one or two levels deeper for two in
 * three of them (a real tree is not flat, and the floor's walk is as long
 * as the path), 100 files each.
 */
static void build_fixture(void)
{
	static const char content[] = "floor bench fixture: a little text to read one byte of\n";
	char p[PATH_MAX];
	size_t k = 0, n = 0;

	for (unsigned t = 0; t < N_TOP; t++)
		for (unsigned m = 0; m < N_MID; m++)
			for (unsigned l = 0; l < N_LEAF; l++, k++) {
				snprintf(dirs[k], sizeof(dirs[k]), WS "/t%u/m%u/l%u%s", t, m, l,
					 k % 3 == 0 ? "" : k % 3 == 1 ? "/x" : "/x/y");
				mkdirs(dirs[k]);
				for (unsigned f = 0; f < N_FILES; f++) {
					snprintf(p, sizeof(p), "%s/f%02u.txt", dirs[k], f);
					touch(p, content);
					paths[n] = strdup(p);
					if (!paths[n++])
						die("out of memory");
				}
			}
	mkdirs(EVDIR);
	for (unsigned i = 0; i < N_EVFILES; i++) {
		snprintf(p, sizeof(p), EVDIR "/e%02u", i);
		touch(p, "");
		evpaths[i] = strdup(p);
		if (!evpaths[i])
			die("out of memory");
	}
	for (unsigned i = 0; i < N_OTHER; i++) {
		snprintf(p, sizeof(p), OTHER "/r%02u", i);
		mkdirs(p);
	}
	touch(CANARY, "canary\n");
}

/* --- the policy ------------------------------------------------------------- */

/* Rights and decisions a rule on the read path may carry: none denies read. */
static const struct {
	const char *decision;
	const char *rights;
} on_path[] = {
	{ "allow", "\"read\"" },
	{ "allow", "\"read\", \"write\"" },
	{ "deny", "\"delete\"" },
	{ "escalate", "\"chmod\"" },
	{ "deny", "\"exec\"" },
	{ "escalate", "\"create\", \"delete\"" },
};

/* Rules off the read path: anything goes. */
static const struct {
	const char *decision;
	const char *rights;
} off_path[] = {
	{ "deny", "\"read\"" },
	{ "deny", "\"write\", \"create\", \"delete\", \"chmod\"" },
	{ "escalate", "\"write\"" },
	{ "allow", "\"all\"" },
	{ "allow", "\"read\", \"exec\"" },
	{ "escalate", "\"exec\"" },
	{ "deny", "\"all\"" },
};

/* Real directories of the guest (a rule whose path is missing keys nothing). */
static const char *const system_dirs[] = {
	"/etc/ssl", "/usr/local", "/usr/lib/modules", "/var/tmp", "/home/agent",
	"/root", "/mnt", "/run", "/opt/cordon", "/dev/shm",
};

/*
 * 100 rules: the workspace allow, system read/exec and devices (what a
 * session needs to run busybox at all), one rule on each leaf, middle and
 * top directory of the tree (mixed decisions, none denying read), rules on
 * system directories and on directories beside the tree (one of them
 * denies reading the canary), one net and one tool rule.
 */
static char *policy_text(size_t *len, unsigned *n_fs)
{
	char *buf = NULL;
	FILE *m = open_memstream(&buf, len);
	unsigned r = 0, k = 0;

	if (!m)
		die("open_memstream: %m");
	fprintf(m, "{\"cordon_policy\": 1, \"name\": \"floor-bench\", \"rules\": [\n");
	fprintf(m, "{\"name\": \"workspace\", \"decision\": \"allow\", "
		"\"fs\": {\"paths\": [\"${WORKSPACE}\"], \"rights\": [\"all\"]}},\n");
	fprintf(m, "{\"name\": \"system-exec\", \"decision\": \"allow\", \"fs\": {\"paths\": "
		"[\"/usr\", \"/bin\", \"/sbin\", \"/lib\", \"/lib64\", \"/opt\"], "
		"\"rights\": [\"read\", \"exec\"]}},\n");
	fprintf(m, "{\"name\": \"system-read\", \"decision\": \"allow\", \"fs\": {\"paths\": "
		"[\"/etc\", \"/proc\", \"/sys\"], \"rights\": [\"read\"]}},\n");
	fprintf(m, "{\"name\": \"devices\", \"decision\": \"allow\", \"fs\": {\"paths\": "
		"[\"/dev/null\", \"/dev/zero\", \"/dev/urandom\"], \"rights\": [\"read\", \"write\"]}},\n");
	r = 4;
	for (unsigned i = 0; i < N_DIRS; i++, r++, k++)
		fprintf(m, "{\"name\": \"leaf-%u\", \"decision\": \"%s\", \"fs\": {\"paths\": [\"%s\"], "
			"\"rights\": [%s]}},\n", i, on_path[k % ARRAY_SIZE(on_path)].decision, dirs[i],
			on_path[k % ARRAY_SIZE(on_path)].rights);
	for (unsigned t = 0; t < N_TOP; t++) {
		for (unsigned mm = 0; mm <= N_MID; mm++, r++, k++) {
			char d[PATH_MAX];

			if (mm == N_MID)
				snprintf(d, sizeof(d), WS "/t%u", t);
			else
				snprintf(d, sizeof(d), WS "/t%u/m%u", t, mm);
			fprintf(m, "{\"name\": \"inner-%u\", \"decision\": \"%s\", \"fs\": {\"paths\": "
				"[\"%s\"], \"rights\": [%s]}},\n", r, on_path[k % ARRAY_SIZE(on_path)].decision,
				d, on_path[k % ARRAY_SIZE(on_path)].rights);
		}
	}
	for (unsigned i = 0; i < ARRAY_SIZE(system_dirs); i++, r++)
		fprintf(m, "{\"name\": \"system-%u\", \"decision\": \"%s\", \"fs\": {\"paths\": [\"%s\"], "
			"\"rights\": [%s]}},\n", i, off_path[(i + 1) % ARRAY_SIZE(off_path)].decision,
			system_dirs[i], off_path[(i + 1) % ARRAY_SIZE(off_path)].rights);
	for (unsigned i = 0; i < N_OTHER; i++, r++)
		fprintf(m, "{\"name\": \"other-%u\", \"decision\": \"%s\", \"fs\": {\"paths\": "
			"[\"" OTHER "/r%02u\"], \"rights\": [%s]}},\n", i,
			off_path[i % ARRAY_SIZE(off_path)].decision, i,
			off_path[i % ARRAY_SIZE(off_path)].rights);
	*n_fs = r;
	fprintf(m, "{\"name\": \"llm\", \"decision\": \"allow\", \"net\": {\"hosts\": "
		"[\"api.anthropic.com\"], \"ports\": [443], \"via\": \"credential-proxy\"}},\n");
	fprintf(m, "{\"name\": \"fs-tools\", \"decision\": \"allow\", \"tool\": {\"name\": "
		"\"filesystem.*\", \"args\": {\"path\": {\"within\": [\"${WORKSPACE}\"]}}}}\n");
	fprintf(m, "]}\n");
	if (fclose(m))
		die("policy text: %m");
	return buf;
}

static struct policy *load_policy(void)
{
	struct pol_vars vars = {};
	struct pol_diags ds = {};
	struct policy *p = NULL;
	unsigned n_fs;
	size_t len;
	char *text = policy_text(&len, &n_fs);
	int r;

	pol_vars_set(&vars, "WORKSPACE", FIX);
	pol_vars_set(&vars, "HOME", "/root");
	r = pol_load_text(text, len, "floor-bench.json", &vars, &p, &ds);
	if (r < 0) {
		pol_diags_print(&ds, "floor-bench.json", stderr);
		die("the generated policy does not load: %s", strerror(-r));
	}
	printf("INFO|rules|%zu\n", p->n_rules);
	printf("INFO|fs_rules|%u\n", n_fs);
	pol_diags_free(&ds);
	pol_vars_free(&vars);
	free(text);
	return p;
}

/* --- the floor, up and down ------------------------------------------------- */

/* BPF LSM links attached now, whoever made them. */
static int lsm_links(void)
{
	__u32 id = 0;
	int n = 0;

	while (!bpf_link_get_next_id(id, &id)) {
		struct bpf_link_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_link_get_fd_by_id(id);

		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) && info.type == BPF_LINK_TYPE_TRACING &&
		    info.tracing.attach_type == BPF_LSM_MAC)
			n++;
		close(fd);
	}
	return n;
}

struct up {
	struct floor *f;
	struct floor_session *s;
};

static uint64_t load_ns[64], session_ns[64];
static size_t n_load;

static void floor_up(struct up *u, const struct policy *p)
{
	uint64_t t0 = now_ns(), t1;
	int r = floor_open(&u->f);

	if (r == -EPERM) {
		printf("SKIP|BPF LSM: kernel refused LSM program load (EPERM)\n");
		exit(77);
	}
	if (r < 0)
		die("floor_open: %s", strerror(-r));
	t1 = now_ns();
	r = floor_session_create(u->f, p, NULL, &u->s);
	if (r < 0)
		die("floor_session_create: %s", strerror(-r));
	if (n_load < ARRAY_SIZE(load_ns)) {
		load_ns[n_load] = t1 - t0;
		session_ns[n_load++] = now_ns() - t1;
	}
}

/*
 * Detach for real: destroy the session, close our handle (our link fds),
 * unpin, then wait until the kernel has released the links (the last
 * reference of a pin goes from an RCU callback, so detaching lags unpin).
 */
static void floor_down(struct up *u)
{
	int r;

	if (u->s && (r = floor_session_destroy(u->f, u->s)) < 0)
		die("floor_session_destroy: %s", strerror(-r));
	u->s = NULL;
	floor_close(u->f);
	u->f = NULL;
	r = floor_unload();
	if (r < 0)
		die("floor_unload: %s", strerror(-r));
	for (int i = 0; lsm_links(); i++) {
		if (i == 500)
			die("BPF LSM links still attached 5 s after floor_unload");
		usleep(10000);
	}
	/*
	 * Programs, maps and the ring buffers are freed by deferred work after
	 * the links go; let it finish before the next bare sample runs.
	 */
	usleep(300000);
}

/* --- children ---------------------------------------------------------------- */

typedef int (*job_fn)(int wfd, const void *arg);

/*
 * Run fn in a child moved into cgroup `cg` first (the move itself is done
 * by the child while it is still outside any session: a session task may
 * never write cgroupfs).  fn writes uint64_t samples to wfd and returns an
 * exit code; a nonzero one ends the benchmark.
 */
static size_t run_in(const char *cg, job_fn fn, const void *arg, uint64_t *out, size_t max,
		     const char *what)
{
	int pfd[2], st;
	size_t n = 0;
	ssize_t got;
	pid_t c;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		die("pipe: %m");
	fflush(stdout);
	c = fork();
	if (c < 0)
		die("fork: %m");
	if (c == 0) {
		close(pfd[0]);
		if (cg && cg_attach_pid(cg, getpid()) < 0)
			_exit(100);
		_exit(fn(pfd[1], arg));
	}
	close(pfd[1]);
	while (n < max && (got = read(pfd[0], &out[n], sizeof(*out))) == sizeof(*out))
		n++;
	close(pfd[0]);
	if (waitpid(c, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		die("%s: child failed (status %d%s)", what, WIFEXITED(st) ? WEXITSTATUS(st) : -1,
		    WIFEXITED(st) && WEXITSTATUS(st) == 100 ? ": could not join its cgroup" : "");
	return n;
}

static int put(int wfd, uint64_t v)
{
	return write(wfd, &v, sizeof(v)) == sizeof(v) ? 0 : -EIO;
}

struct job {
	enum cond cond;
	unsigned passes;        /* passes, finds, starts or fork+execs */
	int devnull;
};

/* The canary proves the condition: denied in a session, readable elsewhere. */
static int check_canary(enum cond cond)
{
	int fd = open(CANARY, O_RDONLY | O_CLOEXEC);

	if (cond == COND_SESSION) {
		if (fd >= 0 || errno != EACCES) {
			fprintf(stderr, "floor_bench: session task read the denied canary (%m)\n");
			return 3;
		}
		return 0;
	}
	if (fd < 0) {
		fprintf(stderr, "floor_bench: %s task cannot read the canary: %m\n",
			cond_names[cond]);
		return 3;
	}
	close(fd);
	return 0;
}

static int openstat_pass(void)
{
	struct stat st;
	char c;

	for (size_t i = 0; i < N_PATHS; i++) {
		int fd = open(paths[i], O_RDONLY | O_CLOEXEC);

		if (fd < 0 || read(fd, &c, 1) != 1) {
			fprintf(stderr, "floor_bench: %s: %m\n", paths[i]);
			return 4;
		}
		close(fd);
		if (stat(paths[i], &st) < 0) {
			fprintf(stderr, "floor_bench: stat %s: %m\n", paths[i]);
			return 4;
		}
	}
	return 0;
}

/* One untimed pass (warm caches), then `passes` timed ones. */
static int job_openstat(int wfd, const void *arg)
{
	const struct job *j = arg;
	int r = check_canary(j->cond);

	r = r ?: openstat_pass();
	for (unsigned i = 0; i < j->passes && !r; i++) {
		uint64_t t0 = now_ns();

		r = openstat_pass();
		if (!r && put(wfd, now_ns() - t0))
			r = 5;
	}
	return r;
}

static int find_once(int devnull)
{
	int st;
	pid_t c = fork();

	if (c < 0)
		return 6;
	if (c == 0) {
		dup2(devnull, STDOUT_FILENO);
		execl(BUSYBOX, "find", WS, "-type", "f", (char *)NULL);
		_exit(127);
	}
	if (waitpid(c, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "floor_bench: find failed (status 0x%x)\n", st);
		return 6;
	}
	return 0;
}

/*
 * busybox find writes its 5,000 names to /dev/null opened before the
 * child joined its cgroup: the output costs the same in every condition.
 */
static int job_find(int wfd, const void *arg)
{
	const struct job *j = arg;
	int r = check_canary(j->cond);

	r = r ?: find_once(j->devnull);
	for (unsigned i = 0; i < j->passes && !r; i++) {
		uint64_t t0 = now_ns();

		r = find_once(j->devnull);
		if (!r && put(wfd, now_ns() - t0))
			r = 5;
	}
	return r;
}

/* --- the peers' workloads, under `cordon run` -------------------------------- */

/*
 * cmd as the condition runs it: itself (bare), or as the agent of a
 * `cordon run` session under the default profile (session), which must
 * get the BPF LSM floor.  argv has room for 16 pointers.
 */
static void agent_argv(const char **argv, enum cond cond, const char *const *cmd)
{
	static const char *const run[] = {
		CORDON, "run", "-q", "--require-full-floor", "--user", AGENT,
		"--workspace", AGENT_WS, "--",
	};
	size_t n = 0;

	if (cond == COND_SESSION)
		for (size_t i = 0; i < ARRAY_SIZE(run); i++)
			argv[n++] = run[i];
	while (*cmd && n < 15)
		argv[n++] = *cmd++;
	argv[n] = NULL;
}

/*
 * Fork, exec argv with stdout to out_fd (or into buf through a pipe when
 * out_fd < 0, NUL-terminated), wait.  0 when it exited 0.
 */
static int spawn(const char *const *argv, int out_fd, char *buf, size_t len)
{
	int pfd[2] = { -1, -1 }, st;
	size_t n = 0;
	ssize_t got;
	pid_t c;

	if (out_fd < 0) {
		if (pipe2(pfd, O_CLOEXEC) < 0)
			return -errno;
		out_fd = pfd[1];
	}
	c = fork();
	if (c < 0) {
		int e = errno;

		if (pfd[0] >= 0) {
			close(pfd[0]);
			close(pfd[1]);
		}
		return -e;
	}
	if (c == 0) {
		dup2(out_fd, STDOUT_FILENO);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	if (pfd[0] >= 0) {
		close(pfd[1]);
		while (n + 1 < len && (got = read(pfd[0], buf + n, len - 1 - n)) > 0)
			n += (size_t)got;
		buf[n] = 0;
		close(pfd[0]);
	}
	if (waitpid(c, &st, 0) < 0)
		return -errno;
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		fputs("floor_bench:", stderr);
		for (size_t i = 0; argv[i]; i++)
			fprintf(stderr, " %s", argv[i]);
		fprintf(stderr, ": failed (status 0x%x)\n", st);
		return -ECHILD;
	}
	return 0;
}

/*
 * Prove the condition before timing it: a bare task reads the canary; the
 * agent of a `cordon run` session lives in a cgroup below cordon/ (this
 * first session also pins the network floor, which the floor's reload
 * took away, so that no timed start pays for it).
 */
static int check_agent(enum cond cond)
{
	static const char *const cat[] = { "/bin/cat", "/proc/self/cgroup", NULL };
	const char *argv[16];
	char out[512];

	if (cond != COND_SESSION)
		return check_canary(cond);
	agent_argv(argv, cond, cat);
	if (spawn(argv, -1, out, sizeof(out)) < 0)
		return 7;
	if (!strstr(out, "/" CORDON_CGROUP_PARENT "/")) {
		fprintf(stderr, "floor_bench: the agent of cordon run is not in a session: %s", out);
		return 7;
	}
	return 0;
}

/* Wall time of /bin/true, itself or run by cordon, from fork to wait. */
static int job_start(int wfd, const void *arg)
{
	static const char *const truth[] = { "/bin/true", NULL };
	const struct job *j = arg;
	const char *argv[16];
	int r = check_agent(j->cond);

	agent_argv(argv, j->cond, truth);
	r = r ?: (spawn(argv, j->devnull, NULL, 0) ? 8 : 0);
	for (unsigned i = 0; i < j->passes && !r; i++) {
		uint64_t t0 = now_ns();

		r = spawn(argv, j->devnull, NULL, 0) ? 8 : 0;
		if (!r && put(wfd, now_ns() - t0))
			r = 5;
	}
	return r;
}

/* One sample: ns per fork+exec of /bin/true over j->passes, timed inside. */
static int job_exec(int wfd, const void *arg)
{
	const struct job *j = arg;
	const char *argv[16];
	char n[16], out[64], *end;
	const char *cmd[] = { ATTACK, "exec-loop", n, NULL };
	unsigned long long ns;

	snprintf(n, sizeof(n), "%u", j->passes);
	agent_argv(argv, j->cond, cmd);
	if (spawn(argv, -1, out, sizeof(out)) < 0)
		return 9;
	errno = 0;
	ns = strtoull(out, &end, 10);
	if (errno || end == out || (*end && *end != '\n') || !ns) {
		fprintf(stderr, "floor_bench: attack exec-loop said \"%s\"\n", out);
		return 9;
	}
	return put(wfd, ns) ? 5 : 0;
}

/* The agent's workspace, its own (the session runs it as that user). */
static void agent_workspace(void)
{
	struct passwd *pw = getpwnam(AGENT);

	if (!pw)
		die("no user " AGENT " (tools/vmtest creates it)");
	if (access(CORDON, X_OK) < 0 || access(ATTACK, X_OK) < 0)
		die(CORDON " or " ATTACK " missing (tools/vmtest copies them from the build)");
	mkdirs(AGENT_WS);
	if (chown(AGENT_WS, pw->pw_uid, pw->pw_gid) < 0)
		die("chown " AGENT_WS ": %m");
}

/* --- events ------------------------------------------------------------------ */

struct gen {
	unsigned rate;          /* opens per second; 0: as fast as possible */
	double secs;
};

/*
 * Open allowed files for writing (each one an event) for `secs`, paced to
 * `rate`: sleep until the next open is due, then catch up in a burst, so a
 * coarse timer costs burstiness, not rate.
 */
static int job_events(int wfd, const void *arg)
{
	const struct gen *g = arg;
	uint64_t t0 = now_ns(), end = t0 + (uint64_t)(g->secs * 1e9), t, done = 0, failed = 0;

	while ((t = now_ns()) < end) {
		uint64_t due = g->rate ? (t - t0) * g->rate / 1000000000ull + 1 : done + 64;

		while (done < due) {
			int fd = open(evpaths[done % N_EVFILES], O_WRONLY | O_CLOEXEC);

			if (fd < 0)
				failed++;
			else
				close(fd);
			done++;
		}
		if (g->rate) {
			uint64_t next = t0 + done * 1000000000ull / g->rate;
			struct timespec ts = { .tv_sec = (time_t)(next / 1000000000ull),
					       .tv_nsec = (long)(next % 1000000000ull) };

			(void)clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		}
	}
	return put(wfd, now_ns() - t0) || put(wfd, done) || put(wfd, failed) ? 5 : 0;
}

struct consumer {
	uint64_t received;
	uint64_t *lat;
	size_t n_lat;
};

static int on_event(void *ctx, const struct cordon_event *e)
{
	struct consumer *c = ctx;

	if (e->op != CORDON_OP_OPEN_WRITE)
		return 0;
	c->received++;
	if (c->n_lat < MAX_LAT)
		c->lat[c->n_lat++] = now_ns() - e->ts_ns;
	return 0;
}

enum ev_mode {
	EV_PACED = 0,
	EV_FULL,
	EV_STALLED,
};

static const char *const ev_mode_names[] = { "paced", "full", "stalled" };

/*
 * One generator run in a fresh session.  EV_STALLED reads nothing until the
 * generator is done: the ring buffer must overflow, and every event must
 * then be either received or counted as dropped.
 */
static void events_run(const struct policy *p, enum ev_mode mode, unsigned rate, double secs)
{
	struct gen g = { .rate = mode == EV_PACED ? rate : 0, .secs = secs };
	struct consumer c = { .lat = calloc(MAX_LAT, sizeof(uint64_t)) };
	uint64_t d0 = 0, d1 = 0, sdrops = 0, res[3] = { 0 }, lmed, l99, lmax;
	struct up u = {};
	int pfd[2], st = 0, r, exited = 0, idle = 0;
	size_t n = 0;
	pid_t pid;

	if (!c.lat)
		die("out of memory");
	floor_up(&u, p);
	if (floor_counter(u.f, CORDON_CNT_DROPS, &d0) < 0)
		die("floor_counter");
	if (pipe2(pfd, O_CLOEXEC) < 0)
		die("pipe: %m");
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		die("fork: %m");
	if (pid == 0) {
		close(pfd[0]);
		if (cg_attach_pid(floor_session_cgroup(u.s), getpid()) < 0)
			_exit(100);
		_exit(job_events(pfd[1], &g));
	}
	close(pfd[1]);
	if (mode == EV_STALLED) {
		if (waitpid(pid, &st, 0) != pid)
			die("waitpid: %m");
		exited = 1;
	}
	/* Consume while the generator runs, then until the ring stays empty. */
	while (!exited || idle < 3) {
		r = floor_session_poll(u.s, exited ? 50 : 10, on_event, &c);
		if (r < 0 && r != -EINTR)
			die("floor_session_poll: %s", strerror(-r));
		if (!exited && waitpid(pid, &st, WNOHANG) == pid)
			exited = 1;
		else if (exited)
			idle = r > 0 ? 0 : idle + 1;
	}
	while (n < 3 && read(pfd[0], &res[n], sizeof(res[n])) == sizeof(res[n]))
		n++;
	close(pfd[0]);
	if (!WIFEXITED(st) || WEXITSTATUS(st) || n != 3)
		die("event generator failed (status 0x%x)", st);
	if (floor_session_drops(u.f, u.s, &sdrops) < 0 || floor_counter(u.f, CORDON_CNT_DROPS, &d1) < 0)
		die("reading the drop counters");
	lmed = quantiles(c.lat, c.n_lat, 0.99, &l99);
	lmax = c.n_lat ? c.lat[c.n_lat - 1] : 0;
	printf("EV|%s|%u|%llu|%llu|%llu|%llu|%llu|%llu|%llu|%llu|%llu\n", ev_mode_names[mode], g.rate,
	       (unsigned long long)res[0], (unsigned long long)res[1], (unsigned long long)res[2],
	       (unsigned long long)c.received, (unsigned long long)sdrops,
	       (unsigned long long)(d1 - d0), (unsigned long long)lmed, (unsigned long long)l99,
	       (unsigned long long)lmax);
	floor_down(&u);
	free(c.lat);
}

/* --- main -------------------------------------------------------------------- */

struct series {
	uint64_t *v;
	size_t n, cap;
};

static void series_add(struct series *s, const uint64_t *v, size_t n)
{
	if (s->n + n > s->cap) {
		size_t cap = (s->n + n) * 2;
		uint64_t *nv = realloc(s->v, cap * sizeof(*nv));

		if (!nv)
			die("out of memory");
		s->v = nv;
		s->cap = cap;
	}
	memcpy(s->v + s->n, v, n * sizeof(*v));
	s->n += n;
}

static uint64_t median_of(uint64_t *v, size_t n)
{
	uint64_t q;

	return quantiles(v, n, 0.5, &q);
}

static void usage(void)
{
	fputs("usage: floor_bench [-r ROUNDS] [-p PASSES] [-f FIND_RUNS] [-e EVENT_SECONDS] "
	      "[-R RATE]... [-a AGENT_ROUNDS] [-s STARTS] [-x EXECS]\n", stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned rounds = 12, passes = 3, find_runs = 2, rates[8], n_rates = 0;
	unsigned agent_rounds = 4, starts = 3, execs = 1000, n_ratios[N_TESTS] = { 0 };
	double ev_secs = 3;
	struct series ser[N_TESTS][N_CONDS] = {};
	double ratios[N_TESTS][N_CONDS][64];
	char cgroot[PATH_MAX], hostcg[PATH_MAX + 32];
	struct policy *p;
	uint64_t t0, buf[256], lq;
	int opt, devnull;

	while ((opt = getopt(argc, argv, "r:p:f:e:R:a:s:x:")) != -1) {
		switch (opt) {
		case 'r':
			rounds = (unsigned)atoi(optarg);
			break;
		case 'p':
			passes = (unsigned)atoi(optarg);
			break;
		case 'f':
			find_runs = (unsigned)atoi(optarg);
			break;
		case 'e':
			ev_secs = atof(optarg);
			break;
		case 'R':
			if (n_rates == ARRAY_SIZE(rates))
				usage();
			rates[n_rates++] = (unsigned)atoi(optarg);
			break;
		case 'a':
			agent_rounds = (unsigned)atoi(optarg);
			break;
		case 's':
			starts = (unsigned)atoi(optarg);
			break;
		case 'x':
			execs = (unsigned)atoi(optarg);
			break;
		default:
			usage();
		}
	}
	if (!rounds || rounds > 64 || !passes || passes > 64 || !find_runs || find_runs > 64 ||
	    !starts || starts > 64 || !execs)
		usage();
	if (agent_rounds > rounds)
		agent_rounds = rounds;
	if (!n_rates) {
		rates[n_rates++] = 10000;
		rates[n_rates++] = 20000;
		rates[n_rates++] = 0;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (geteuid() != 0)
		die("needs root (BPF LSM, cgroups): run it in the VM (tools/bench/floor_vm.sh)");

	t0 = now_ns();
	build_fixture();
	printf("INFO|fixture_ms|%.0f\n", (double)(now_ns() - t0) / 1e6);
	printf("INFO|files|%d\n", N_PATHS);
	printf("INFO|dirs|%d\n", N_DIRS);
	p = load_policy();
	if (agent_rounds)
		agent_workspace();

	/* A floor left by someone else would make "bare" a lie. */
	(void)floor_unload();
	if (lsm_links())
		die("%d BPF LSM links attached before the benchmark: no bare baseline possible",
		    lsm_links());
	/* Bare and host tasks live at the sessions' depth, like a user's shell. */
	if (cg_find_root(cgroot, sizeof(cgroot)) < 0)
		die("no cgroup2 hierarchy");
	snprintf(hostcg, sizeof(hostcg), "%s/floorbench", cgroot);
	if (cg_mkdir(hostcg) < 0)
		die("mkdir %s: %m", hostcg);
	strcat(hostcg, "/host");
	if (cg_mkdir(hostcg) < 0)
		die("mkdir %s: %m", hostcg);
	devnull = open("/dev/null", O_WRONLY);
	if (devnull < 0)
		die("/dev/null: %m");

	for (unsigned r = 0; r < rounds; r++) {
		uint64_t med[N_TESTS][N_CONDS];
		struct up u = {};

		for (int i = 0; i < N_CONDS; i++) {
			enum cond c = order[r % 2][i];
			struct job j = { .cond = c, .devnull = devnull };
			const char *cg = hostcg;
			size_t n;

			if (c == COND_BARE && u.f)
				floor_down(&u);
			if (c != COND_BARE && !u.f) {
				floor_up(&u, p);
				if (r == 0) {
					printf("INFO|map_entries|%zu\n", floor_session_entries(u.s));
					printf("INFO|lsm_links|%d\n", lsm_links());
				}
			}
			if (c == COND_SESSION)
				cg = floor_session_cgroup(u.s);
			j.passes = passes;
			n = run_in(cg, job_openstat, &j, buf, ARRAY_SIZE(buf), "open/stat loop");
			series_add(&ser[TEST_OPENSTAT][c], buf, n);
			med[TEST_OPENSTAT][c] = median_of(buf, n);
			j.passes = find_runs;
			n = run_in(cg, job_find, &j, buf, ARRAY_SIZE(buf), "find");
			series_add(&ser[TEST_FIND][c], buf, n);
			med[TEST_FIND][c] = median_of(buf, n);
			/* `cordon run` is a host task: it runs from the host cgroup. */
			if (r >= agent_rounds || c == COND_HOST)
				continue;
			j.passes = starts;
			n = run_in(hostcg, job_start, &j, buf, ARRAY_SIZE(buf), "start latency");
			series_add(&ser[TEST_START][c], buf, n);
			med[TEST_START][c] = median_of(buf, n);
			j.passes = execs;
			n = run_in(hostcg, job_exec, &j, buf, ARRAY_SIZE(buf), "fork+exec loop");
			series_add(&ser[TEST_EXEC][c], buf, n);
			med[TEST_EXEC][c] = median_of(buf, n);
		}
		if (u.f)
			floor_down(&u);
		for (int t = 0; t < N_TESTS; t++) {
			int conds = t >= TEST_START ? COND_HOST : N_CONDS;

			if (t >= TEST_START && r >= agent_rounds)
				continue;
			for (int c = 0; c < conds; c++)
				ratios[t][c][n_ratios[t]] = (double)med[t][c] / (double)med[t][COND_BARE];
			n_ratios[t]++;
		}
	}
	for (int t = 0; t < N_TESTS; t++) {
		unsigned nr = n_ratios[t];

		for (int c = 0; c < N_CONDS; c++) {
			struct series *s = &ser[t][c];
			uint64_t p90, m = quantiles(s->v, s->n, 0.9, &p90);

			if (!s->n)
				continue;
			printf("ROW|%s|%s|%llu|%llu|%zu\n", test_names[t], cond_names[c],
			       (unsigned long long)m, (unsigned long long)p90, s->n);
			qsort(ratios[t][c], nr, sizeof(double), cmp_double);
			printf("SPREAD|%s|%s|%.3f|%.3f|%.3f\n", test_names[t], cond_names[c],
			       ratios[t][c][0], nr % 2 ? ratios[t][c][nr / 2] :
			       (ratios[t][c][nr / 2 - 1] + ratios[t][c][nr / 2]) / 2,
			       ratios[t][c][nr - 1]);
			free(s->v);
		}
	}
	for (unsigned i = 0; i < n_rates; i++)
		events_run(p, rates[i] ? EV_PACED : EV_FULL, rates[i], ev_secs);
	events_run(p, EV_STALLED, 0, 1);
	printf("INFO|floor_open_ms|%.0f\n", (double)quantiles(load_ns, n_load, 0.5, &lq) / 1e6);
	printf("INFO|session_create_ms|%.1f\n",
	       (double)quantiles(session_ns, n_load, 0.5, &lq) / 1e6);
	printf("INFO|rounds|%u\n", rounds);
	printf("INFO|agent_rounds|%u\n", agent_rounds);
	printf("INFO|starts|%u\n", starts);
	printf("INFO|execs|%u\n", execs);
	close(devnull);
	(void)rmdir(hostcg);
	*strrchr(hostcg, '/') = 0;
	(void)rmdir(hostcg);
	pol_free(p);
	return 0;
}
