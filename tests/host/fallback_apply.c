// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The fallback posture on a real kernel: a forked child drops to the agent
 * (uid 1000) or stays root, sets PR_SET_NO_NEW_PRIVS, applies
 * fallback_apply() from a policy and then attacks; every check asserts the
 * errno it gets.  Each check also runs once without the sandbox (the
 * control), as the same user, where it must succeed: a denial the control
 * shares is DAC's, not the fallback's.
 *
 * Landlock checks that the running ABI cannot express are skipped naming
 * the ABI, so the same binary proves ABI-degraded behaviour in the VM
 * (Linux 6.1, ABI 2).  The known gap (a hardlink to a protected file made
 * before the session) is asserted to be open, with a diagnostic.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/sched.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include "../tap.h"
#include "fallback.h"
#include "landlock_compat.h"
#include "policy.h"

#define AGENT_UID 1000

static const char policy_text[] =
	"{\"cordon_policy\": 1, \"rules\": ["
	"{\"name\": \"workspace\", \"decision\": \"allow\","
	" \"fs\": {\"paths\": [\"${WORKSPACE}\"], \"rights\": [\"all\"]}},"
	"{\"name\": \"home\", \"decision\": \"allow\","
	" \"fs\": {\"paths\": [\"${HOME}\"], \"rights\": [\"read\"]}},"
	"{\"name\": \"readonly\", \"decision\": \"allow\","
	" \"fs\": {\"paths\": [\"${FIXTURE}/ro\"], \"rights\": [\"read\"]}},"
	"{\"name\": \"dropbox\", \"decision\": \"allow\","
	" \"fs\": {\"paths\": [\"${FIXTURE}/drop\"],"
	" \"rights\": [\"read\", \"write\", \"create\", \"delete\"]}},"
	"{\"name\": \"system\", \"decision\": \"allow\","
	" \"fs\": {\"paths\": [\"/usr\", \"/bin\", \"/lib\", \"/lib64\"], \"rights\": [\"read\", \"exec\"]}},"
	"{\"name\": \"etc\", \"decision\": \"allow\","
	" \"fs\": {\"paths\": [\"/etc\"], \"rights\": [\"read\"]}},"
	"{\"name\": \"devices\", \"decision\": \"allow\","
	" \"fs\": {\"paths\": [\"/dev/null\", \"/dev/ptmx\", \"/dev/pts\"], \"rights\": [\"read\", \"write\"]}}]}";

static char R[PATH_MAX], WS[PATH_MAX + 8], HOMED[PATH_MAX + 8], RO[PATH_MAX + 8],
	    DROP[PATH_MAX + 8], OUT[PATH_MAX + 8];
static struct policy *pol;
static int abi;
static uint16_t port_ok, port_no;
static char abstract_name[64];
static pid_t helper;
static bool as_agent;

/* --- fixture --------------------------------------------------------------- */

static void pathf(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void pathf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if ((size_t)vsnprintf(buf, len, fmt, ap) >= len)
		abort();
	va_end(ap);
}

static void put(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		perror(path);
		exit(1);
	}
	(void)close(fd);
}

static void copy(const char *from, const char *to)
{
	char buf[65536];
	ssize_t n;
	int in = open(from, O_RDONLY | O_CLOEXEC);
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);

	if (in < 0 || out < 0) {
		perror(to);
		exit(1);
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			exit(1);
	(void)close(in);
	(void)close(out);
}

static void mk(const char *path)
{
	if (mkdir(path, 0755) < 0 && errno != EEXIST) {
		perror(path);
		exit(1);
	}
}

static void chown_all(const char *dir)
{
	char cmd[PATH_MAX + 64];

	pathf(cmd, sizeof(cmd), "chown -R %d:%d '%s'", AGENT_UID, AGENT_UID, dir);
	if (system(cmd) != 0)
		exit(1);
}

static void setup_fixture(void)
{
	char p[PATH_MAX + 64];

	if (!mkdtemp(strcpy(R, "/tmp/cordon-fallback.XXXXXX")))
		exit(1);
	(void)chmod(R, 0755);
	pathf(WS, sizeof(WS), "%s/ws", R);
	pathf(HOMED, sizeof(HOMED), "%s/home", R);
	pathf(RO, sizeof(RO), "%s/ro", R);
	pathf(DROP, sizeof(DROP), "%s/drop", R);
	pathf(OUT, sizeof(OUT), "%s/out", R);
	mk(WS);
	mk(HOMED);
	mk(RO);
	mk(DROP);
	mk(OUT);
	pathf(p, sizeof(p), "%s/.ssh", HOMED);
	mk(p);
	pathf(p, sizeof(p), "%s/.ssh/id_rsa", HOMED);
	put(p, "PRIVATE KEY\n", 0600);
	pathf(p, sizeof(p), "%s/notes.txt", HOMED);
	put(p, "notes\n", 0644);
	pathf(p, sizeof(p), "%s/file.txt", WS);
	put(p, "workspace\n", 0644);
	pathf(p, sizeof(p), "%s/existing", OUT);
	put(p, "outside\n", 0644);
	pathf(p, sizeof(p), "%s/true", WS);
	copy("/bin/true", p);
	pathf(p, sizeof(p), "%s/true", RO);
	copy("/bin/true", p);
	{
		/* The known gap: a hardlink to the key, made before the session. */
		char key[PATH_MAX + 64];

		pathf(key, sizeof(key), "%s/.ssh/id_rsa", HOMED);
		pathf(p, sizeof(p), "%s/id_rsa.link", WS);
		if (link(key, p) < 0) {
			perror("link");
			exit(1);
		}
	}
	chown_all(R);
}

static void load_policy(void)
{
	struct pol_vars vars = { 0 };
	struct pol_diags diags = { 0 };
	char file[PATH_MAX + 16];

	pathf(file, sizeof(file), "%s/policy.json", R);
	if (pol_vars_defaults(&vars) < 0 || pol_vars_set(&vars, "WORKSPACE", WS) < 0 ||
	    pol_vars_set(&vars, "HOME", HOMED) < 0 || pol_vars_set(&vars, "FIXTURE", R) < 0) {
		printf("Bail out! variables\n");
		exit(1);
	}
	if (pol_load_text(policy_text, sizeof(policy_text) - 1, file, &vars, &pol, &diags) < 0) {
		pol_diags_print(&diags, file, stdout);
		printf("Bail out! policy does not load\n");
		exit(1);
	}
	pol_diags_free(&diags);
	pol_vars_free(&vars);
}

static int tcp_listener(uint16_t *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 64) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0)
		exit(1);
	*port = ntohs(a.sin_port);
	return fd;
}

static socklen_t abstract_addr(struct sockaddr_un *a)
{
	size_t n = strlen(abstract_name);

	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	memcpy(a->sun_path + 1, abstract_name, n);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

static int abstract_listener(void)
{
	struct sockaddr_un a;
	socklen_t len;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(abstract_name, sizeof(abstract_name), "cordon-fallback-test-%d", (int)getpid());
	len = abstract_addr(&a);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, len) < 0 || listen(fd, 64) < 0)
		exit(1);
	return fd;
}

static void become(uid_t uid)
{
	if (uid == 0)
		return;
	if (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0) {
		perror("drop privileges");
		_exit(3);
	}
}

/* A process of the same user, outside any sandbox: the target of kill and ptrace. */
static pid_t start_helper(uid_t uid)
{
	pid_t pid = fork();

	if (pid == 0) {
		become(uid);
		for (;;)
			pause();
	}
	return pid;
}

/* --- operations: each returns 0 or the errno it got ------------------------- */

static int e(long r)
{
	return r < 0 ? errno : 0;
}

static int read_file_at(const char *path)
{
	char buf[64];
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return errno;
	err = read(fd, buf, sizeof(buf)) < 0 ? errno : 0;
	(void)close(fd);
	return err;
}

static int write_file_at(const char *path, int flags)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | flags, 0644), err;

	if (fd < 0)
		return errno;
	err = write(fd, "x", 1) < 0 ? errno : 0;
	(void)close(fd);
	return err;
}

/* Run a program; 0 if it ran and exited 0, the exec errno if it could not run. */
static int run(const char *path, char *const argv[])
{
	int st;
	pid_t pid = fork();

	if (pid < 0)
		return errno;
	if (pid == 0) {
		execv(path, argv);
		_exit(200 + (errno < 55 ? errno : 0));
	}
	if (waitpid(pid, &st, 0) < 0)
		return errno;
	if (WIFEXITED(st) && WEXITSTATUS(st) >= 200)
		return WEXITSTATUS(st) - 200;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static char p1[PATH_MAX + 64], p2[PATH_MAX + 64];

static int op_ws_read(void) { pathf(p1, sizeof(p1), "%s/file.txt", WS); return read_file_at(p1); }
static int op_ws_write(void) { pathf(p1, sizeof(p1), "%s/file.txt", WS); return write_file_at(p1, O_TRUNC); }

static int op_ws_create_delete(void)
{
	int r;

	pathf(p1, sizeof(p1), "%s/new-%d", WS, (int)getpid());
	pathf(p2, sizeof(p2), "%s/dir-%d", WS, (int)getpid());
	if ((r = write_file_at(p1, O_CREAT | O_EXCL)) || (r = e(mkdir(p2, 0755))))
		return r;
	if ((r = e(unlink(p1))) || (r = e(rmdir(p2))))
		return r;
	return 0;
}

static int op_ws_exec(void)
{
	char *argv[] = { "true", NULL };

	pathf(p1, sizeof(p1), "%s/true", WS);
	return run(p1, argv);
}

static int op_out_create(void)
{
	pathf(p1, sizeof(p1), "%s/new-%d", OUT, (int)getpid());
	return write_file_at(p1, O_CREAT | O_EXCL);
}

static int op_out_write(void) { pathf(p1, sizeof(p1), "%s/existing", OUT); return write_file_at(p1, 0); }
static int op_home_read(void) { pathf(p1, sizeof(p1), "%s/notes.txt", HOMED); return read_file_at(p1); }
static int op_key_read(void) { pathf(p1, sizeof(p1), "%s/.ssh/id_rsa", HOMED); return read_file_at(p1); }

static int op_ssh_list(void)
{
	int fd;

	pathf(p1, sizeof(p1), "%s/.ssh", HOMED);
	fd = open(p1, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	(void)close(fd);
	return 0;
}

/* Moving ~/.ssh aside would take it out from under its denial. */
static int op_ssh_rename(void)
{
	int r;

	pathf(p1, sizeof(p1), "%s/.ssh", HOMED);
	pathf(p2, sizeof(p2), "%s/ssh-moved", HOMED);
	r = e(rename(p1, p2));
	if (!r)
		(void)rename(p2, p1);
	return r;
}

static int op_passwd_read(void) { return read_file_at("/etc/passwd"); }
static int op_shadow_read(void) { return read_file_at("/etc/shadow"); }

static int op_ro_exec(void)
{
	char *argv[] = { "true", NULL };

	pathf(p1, sizeof(p1), "%s/true", RO);
	return run(p1, argv);
}

/* To a place granting fewer rights: the file loses rights, allowed. */
static int op_rename_to_fewer(void)
{
	int r;

	pathf(p1, sizeof(p1), "%s/a-%d", WS, (int)getpid());
	pathf(p2, sizeof(p2), "%s/a-%d", DROP, (int)getpid());
	if ((r = write_file_at(p1, O_CREAT | O_EXCL)))
		return r;
	return e(rename(p1, p2));
}

/* To a place granting more (exec): laundering, EXDEV. */
static int op_rename_to_more(void)
{
	int r;

	pathf(p1, sizeof(p1), "%s/b-%d", DROP, (int)getpid());
	pathf(p2, sizeof(p2), "%s/b-%d", WS, (int)getpid());
	if ((r = write_file_at(p1, O_CREAT | O_EXCL)))
		return r;
	return e(rename(p1, p2));
}

static int op_hardlink_read(void) { pathf(p1, sizeof(p1), "%s/id_rsa.link", WS); return read_file_at(p1); }

static int tcp_connect(uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), r;

	if (fd < 0)
		return errno;
	r = e(connect(fd, (struct sockaddr *)&a, sizeof(a)));
	(void)close(fd);
	return r;
}

static int op_connect_allowed(void) { return tcp_connect(port_ok); }
static int op_connect_denied(void) { return tcp_connect(port_no); }

static int op_bind_any(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), r;

	if (fd < 0)
		return errno;
	r = e(bind(fd, (struct sockaddr *)&a, sizeof(a)));
	if (!r)
		r = e(listen(fd, 1));
	(void)close(fd);
	return r;
}

static int op_abstract(void)
{
	struct sockaddr_un a;
	socklen_t len = abstract_addr(&a);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), r;

	if (fd < 0)
		return errno;
	r = e(connect(fd, (struct sockaddr *)&a, len));
	(void)close(fd);
	return r;
}

static int op_kill(void) { return e(kill(helper, 0)); }
static int op_ptrace(void) { return e(ptrace(PTRACE_ATTACH, helper, NULL, NULL)); }
static int op_bpf(void) { return e(syscall(__NR_bpf, 5 /* BPF_PROG_LOAD */, NULL, 0)); }
static int op_mount(void) { return e(mount("none", "/tmp", "tmpfs", 0, NULL)); }
static int op_unshare_user(void) { return e(unshare(CLONE_NEWUSER)); }

static int op_clone_newns(void)
{
	long r = syscall(__NR_clone, CLONE_NEWNS | SIGCHLD, NULL, NULL, NULL, NULL);

	if (r == 0)
		_exit(0);
	if (r > 0) {
		(void)waitpid((pid_t)r, NULL, 0);
		return 0;
	}
	return errno;
}

static int op_clone3(void)
{
	struct clone_args ca = { .exit_signal = SIGCHLD };
	long r = syscall(__NR_clone3, &ca, sizeof(ca));

	if (r == 0)
		_exit(0);
	if (r > 0) {
		(void)waitpid((pid_t)r, NULL, 0);
		return 0;
	}
	return errno;
}

static int op_io_uring(void)
{
	char params[120] = { 0 };
	long r = syscall(__NR_io_uring_setup, 1, params);

	if (r >= 0)
		(void)close((int)r);
	return e(r);
}

static int op_keyctl(void) { return e(syscall(__NR_keyctl, 0 /* GET_KEYRING_ID */, -3, 0)); }
static int op_init_module(void) { return e(syscall(__NR_init_module, NULL, 0, "")); }
static int op_perf(void) { return e(syscall(__NR_perf_event_open, NULL, 0, -1, -1, 0)); }

static int pty = -1;
static int op_tiocsti(void) { char c = 'x'; return e(ioctl(pty, 0x5412, &c)); }
/* High bits the kernel ignores must not slip past the filter. */
static int op_tiocsti_hibits(void) { char c = 'x'; return e(syscall(__NR_ioctl, pty, 0xdead00005412UL, &c)); }
static int op_x32(void) { return e(syscall(0x40000000 | 39 /* x32 getpid */)); }

/* int 0x80 getpid in a throwaway child: a kernel without ia32 emulation kills it. */
static int op_int80(void)
{
	int st;
	pid_t pid = fork();

	if (pid == 0) {
		long ret;

		__asm__ volatile("int $0x80" : "=a"(ret) : "a"(20L) : "memory");
		_exit(ret == -EPERM ? 1 : ret > 0 ? 0 : 2);
	}
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return -1;
	if (!WIFEXITED(st))
		return -2;      /* no ia32 emulation */
	return WEXITSTATUS(st) == 1 ? EPERM : WEXITSTATUS(st) == 0 ? 0 : -1;
}

static int op_sh(void)
{
	int fds[2], st;
	char buf[16] = { 0 };
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return errno;
	pid = fork();
	if (pid == 0) {
		(void)dup2(fds[1], 1);
		execl("/bin/sh", "sh", "-c", "echo ok", (char *)NULL);
		_exit(127);
	}
	(void)close(fds[1]);
	(void)!read(fds[0], buf, sizeof(buf) - 1);
	(void)close(fds[0]);
	if (waitpid(pid, &st, 0) < 0)
		return errno;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 && !strcmp(buf, "ok\n") ? 0 : -1;
}

static void *thread_fn(void *arg)
{
	return arg;
}

static int op_threads(void)
{
	pthread_t t[4];
	void *ret;

	for (long i = 0; i < 4; i++)
		if ((errno = pthread_create(&t[i], NULL, thread_fn, (void *)i)))
			return errno;
	for (long i = 0; i < 4; i++)
		if (pthread_join(t[i], &ret) || ret != (void *)i)
			return -1;
	return 0;
}

/* --- the matrix ------------------------------------------------------------ */

#define ANY  (-100)     /* control: do not run (destructive or meaningless unsandboxed) */

struct check {
	const char *name;
	int (*fn)(void);
	int want;               /* sandboxed */
	int control;            /* unsandboxed, same user; ANY: not run */
	int min_abi;            /* skipped below this Landlock ABI */
	int want_old;           /* below min_abi: still run, expecting this (ANY: skip) */
	bool gap;               /* a known fallback gap: asserted open */
};

static const struct check checks[] = {
	{ "workspace read", op_ws_read, 0, 0, 1, ANY, false },
	{ "workspace write (O_TRUNC)", op_ws_write, 0, 0, 1, ANY, false },
	{ "workspace create, mkdir, unlink, rmdir", op_ws_create_delete, 0, 0, 1, ANY, false },
	{ "workspace exec of a copied binary", op_ws_exec, 0, 0, 1, ANY, false },
	{ "create outside the workspace", op_out_create, EACCES, 0, 1, ANY, false },
	{ "write an existing file outside the workspace", op_out_write, EACCES, 0, 1, ANY, false },
	{ "HOME is readable (policy rule)", op_home_read, 0, 0, 1, ANY, false },
	{ "HOME/.ssh/id_rsa is not, though HOME is (split)", op_key_read, EACCES, 0, 1, ANY, false },
	{ "HOME/.ssh cannot be listed", op_ssh_list, EACCES, 0, 1, ANY, false },
	{ "HOME/.ssh cannot be renamed out from under its denial", op_ssh_rename, EACCES, ANY, 1, ANY, false },
	{ "/etc/passwd readable (policy allows /etc)", op_passwd_read, 0, 0, 1, ANY, false },
	{ "/etc/shadow is not (invariant split out of /etc)", op_shadow_read, EACCES, ANY, 1, ANY, false },
	{ "exec of a binary copied into a read-only dir", op_ro_exec, EACCES, 0, 1, ANY, false },
	{ "rename to a dir with fewer rights", op_rename_to_fewer, 0, 0, 2, EXDEV, false },
	{ "rename to a dir with more rights (REFER)", op_rename_to_more, EXDEV, 0, 2, EXDEV, false },
	{ "KNOWN GAP: hardlink to id_rsa made before the session, in the workspace", op_hardlink_read, 0, 0, 1, ANY, true },
	{ "TCP connect to an allowed loopback port", op_connect_allowed, 0, 0, 4, 0, false },
	{ "TCP connect to a port not allowed", op_connect_denied, EACCES, 0, 4, ANY, false },
	{ "TCP bind on any port (bind not restricted)", op_bind_any, 0, 0, 1, ANY, false },
	{ "abstract Unix connect to a host listener", op_abstract, EPERM, 0, 6, ANY, false },
	{ "kill(host process of the same user, 0)", op_kill, EPERM, 0, 6, ANY, false },
	{ "ptrace(PTRACE_ATTACH, host process)", op_ptrace, EPERM, ANY, 1, ANY, false },
	{ "bpf()", op_bpf, EPERM, ANY, 1, ANY, false },
	{ "mount", op_mount, EPERM, ANY, 1, ANY, false },
	{ "unshare(CLONE_NEWUSER)", op_unshare_user, EPERM, ANY, 1, ANY, false },
	{ "clone(CLONE_NEWNS)", op_clone_newns, EPERM, ANY, 1, ANY, false },
	{ "clone3 (ENOSYS: libc falls back to clone)", op_clone3, ENOSYS, 0, 1, ANY, false },
	{ "io_uring_setup", op_io_uring, EPERM, ANY, 1, ANY, false },
	{ "keyctl", op_keyctl, EPERM, ANY, 1, ANY, false },
	{ "init_module", op_init_module, EPERM, ANY, 1, ANY, false },
	{ "perf_event_open", op_perf, EPERM, ANY, 1, ANY, false },
	{ "ioctl(pty, TIOCSTI)", op_tiocsti, EPERM, ANY, 1, ANY, false },
	{ "ioctl(pty, TIOCSTI | garbage high bits)", op_tiocsti_hibits, EPERM, ANY, 1, ANY, false },
	{ "x32 ABI syscall", op_x32, EPERM, ANY, 1, ANY, false },
	{ "i386 ABI syscall (int 0x80)", op_int80, EPERM, ANY, 1, ANY, false },
	{ "sh -c 'echo ok' through a pipe", op_sh, 0, 0, 1, ANY, false },
	{ "pthread_create (clone3 ENOSYS, clone fallback)", op_threads, 0, 0, 1, ANY, false },
};

static const char *errname(int err)
{
	static char buf[32];

	switch (err) {
	case 0: return "success";
	case -1: return "unexpected outcome";
	case -2: return "killed (no ia32 emulation)";
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case EXDEV: return "EXDEV";
	case ENOSYS: return "ENOSYS";
	case EFAULT: return "EFAULT";
	case EINVAL: return "EINVAL";
	case ENOENT: return "ENOENT";
	case EIO: return "EIO";
	default:
		snprintf(buf, sizeof(buf), "errno %d", err);
		return buf;
	}
}

/*
 * In a forked child: become the user, (sandboxed) apply the fallback, run
 * every check.  TAP lines are the child's; it sends its counters back.
 */
static void run_matrix(uid_t uid, bool sandboxed)
{
	const char *who = uid ? "agent" : "root";
	int cnt[2], fds[2], st;
	pid_t pid;

	if (pipe(fds) < 0)
		exit(1);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct fallback_options opt = { .connect_ports = { port_ok }, .n_connect_ports = 1 };
		struct fallback_report rep;
		int r;

		(void)close(fds[0]);
		become(uid);
		as_agent = uid != 0;
		pty = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
		if (sandboxed) {
			if (!tap_ok(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0, "%s: no_new_privs", who))
				_exit(1);
			r = fallback_apply(pol, &opt, &rep);
			if (!tap_ok(r == 0, "%s: fallback_apply returns 0 (%s%s%s)", who,
				    r ? strerror(-r) : "ok", r ? ": " : "", rep.error))
				goto done;
			tap_ok(rep.landlock_abi == abi, "%s: report: Landlock ABI %d", who, rep.landlock_abi);
			tap_ok(rep.fs_rules > 0 && rep.split_dirs > 0, "%s: report: %d fs rules, %d dirs split",
			       who, rep.fs_rules, rep.split_dirs);
			tap_ok(rep.seccomp, "%s: report: seccomp denylist installed", who);
			tap_ok(rep.net_connect == (abi >= 4) && rep.net_rules == (abi >= 4 ? 1 : 0) &&
			       !rep.net_bind, "%s: report: connect restricted %d (%d port rules), bind %d",
			       who, rep.net_connect, rep.net_rules, rep.net_bind);
			tap_ok(rep.scoped_abstract == (abi >= 6) && rep.scoped_signals == (abi >= 6),
			       "%s: report: scoping abstract=%d signals=%d at ABI %d", who,
			       rep.scoped_abstract, rep.scoped_signals, abi);
			tap_ok(strstr(rep.lacks, "hardlink: ") != NULL,
			       "%s: report lacks names the hardlink gap", who);
			if (abi < 6)
				tap_ok(strstr(rep.lacks, "scope-signal: ") != NULL,
				       "%s: report lacks names signal scoping at ABI %d", who, abi);
			if (uid)
				for (char *l = rep.lacks, *nl; *l; l = nl + 1) {
					nl = strchr(l, '\n');
					if (!nl)
						break;
					tap_diag("lacks %.*s", (int)(nl - l), l);
				}
		}
		for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
			const struct check *c = &checks[i];
			int want = sandboxed ? c->want : c->control, got;

			if (!sandboxed && c->control == ANY)
				continue;
			if (sandboxed && abi < c->min_abi) {
				if (c->want_old == ANY) {
					printf("ok %d - %s: %s # SKIP needs Landlock ABI %d, kernel has %d\n",
					       ++tap_n, who, c->name, c->min_abi, abi);
					continue;
				}
				want = c->want_old;
			}
			got = c->fn();
			if (got == -2) {
				printf("ok %d - %s: %s # SKIP kernel has no ia32 emulation\n", ++tap_n,
				       who, c->name);
				continue;
			}
			tap_ok(got == want, "%s%s: %s: %s (want %s)", sandboxed ? "" : "control ", who,
			       c->name, errname(got), errname(want));
			if (c->gap && sandboxed && got == 0)
				tap_diag("the fallback cannot close this: Landlock judges the path a file "
					 "is reached by, not its inode; only the BPF LSM floor (full "
					 "posture) denies a pre-existing hardlink to a protected file");
		}
done:
		fflush(stdout);
		cnt[0] = tap_n;
		cnt[1] = tap_failed;
		(void)!write(fds[1], cnt, sizeof(cnt));
		_exit(0);
	}
	(void)close(fds[1]);
	if (read(fds[0], cnt, sizeof(cnt)) == sizeof(cnt)) {
		tap_n = cnt[0];
		tap_failed = cnt[1];
	} else {
		tap_ok(0, "%s%s: the checking child reported back", sandboxed ? "" : "control ", who);
	}
	(void)close(fds[0]);
	(void)waitpid(pid, &st, 0);
}

/*
 * Fail closed: a split that needs more rules than the bound is refused with
 * an error naming the directory (never a partial domain), and an escalated
 * right is denied (Landlock cannot hold a call for a human).
 */
static const char policy_big[] =
	"{\"cordon_policy\": 1, \"rules\": ["
	"{\"name\": \"big\", \"decision\": \"allow\","
	" \"fs\": {\"paths\": [\"${FIXTURE}/big\"], \"rights\": [\"read\"]}},"
	"{\"name\": \"hole\", \"decision\": \"deny\","
	" \"fs\": {\"paths\": [\"${FIXTURE}/big/f0\"], \"rights\": [\"read\"]}}]}";

static const char policy_esc[] =
	"{\"cordon_policy\": 1, \"rules\": ["
	"{\"name\": \"workspace\", \"decision\": \"allow\","
	" \"fs\": {\"paths\": [\"${WORKSPACE}\"], \"rights\": [\"all\"]}},"
	"{\"name\": \"ask\", \"decision\": \"escalate\","
	" \"fs\": {\"paths\": [\"${WORKSPACE}/file.txt\"], \"rights\": [\"write\"]}}]}";

static struct policy *load_other(const char *text)
{
	struct pol_vars vars = { 0 };
	struct pol_diags diags = { 0 };
	struct policy *p = NULL;

	if (pol_vars_defaults(&vars) < 0 || pol_vars_set(&vars, "WORKSPACE", WS) < 0 ||
	    pol_vars_set(&vars, "HOME", HOMED) < 0 || pol_vars_set(&vars, "FIXTURE", R) < 0 ||
	    pol_load_text(text, strlen(text), "other.json", &vars, &p, &diags) < 0) {
		pol_diags_print(&diags, "other.json", stdout);
		printf("Bail out! policy does not load\n");
		exit(1);
	}
	pol_diags_free(&diags);
	pol_vars_free(&vars);
	return p;
}

static void run_fail_closed(void)
{
	char p[PATH_MAX + 64];
	struct policy *big, *esc;
	int st;
	pid_t pid;

	pathf(p, sizeof(p), "%s/big", R);
	mk(p);
	for (int i = 0; i < 8300; i++) {
		char f[PATH_MAX + 80];

		pathf(f, sizeof(f), "%s/f%d", p, i);
		put(f, "", 0644);
	}
	big = load_other(policy_big);
	esc = load_other(policy_esc);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct fallback_report rep;
		int r;

		(void)prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
		r = fallback_apply(big, NULL, &rep);
		_exit(r == -E2BIG && strstr(rep.error, "more than") && strstr(rep.error, "/big") ? 0 : 1);
	}
	(void)waitpid(pid, &st, 0);
	tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	       "a split past the rule bound fails closed with E2BIG naming the directory");
	pid = fork();
	if (pid == 0) {
		struct fallback_report rep;

		(void)prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
		if (fallback_apply(esc, NULL, &rep) < 0)
			_exit(2);
		pathf(p1, sizeof(p1), "%s/file.txt", WS);
		_exit(write_file_at(p1, 0) == EACCES && read_file_at(p1) == 0 ? 0 : 1);
	}
	(void)waitpid(pid, &st, 0);
	tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	       "an escalated write is denied, the rest of the rule's rights stay (status %d)",
	       WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	pol_free(big);
	pol_free(esc);
}

static void cleanup(void)
{
	char cmd[PATH_MAX + 16];

	if (helper > 0) {
		(void)kill(helper, SIGKILL);
		(void)waitpid(helper, NULL, 0);
	}
	if (R[0]) {
		pathf(cmd, sizeof(cmd), "rm -rf '%s'", R);
		(void)!system(cmd);
	}
}

int main(void)
{
	int lfd_ok, lfd_no, lfd_abs;

	abi = landlock_abi();
	if (abi < 0)
		tap_skip_all("Landlock is unavailable (%s)", strerror(-abi));
	if (geteuid() != 0)
		tap_skip_all("needs root (to run the matrix as uid %d and as root)", AGENT_UID);
	tap_diag("Landlock ABI %d", abi);
	setup_fixture();
	atexit(cleanup);
	load_policy();
	lfd_ok = tcp_listener(&port_ok);
	lfd_no = tcp_listener(&port_no);
	lfd_abs = abstract_listener();

	for (int i = 0; i < 2; i++) {
		uid_t uid = i == 0 ? AGENT_UID : 0;

		helper = start_helper(uid);
		run_matrix(uid, false);
		run_matrix(uid, true);
		(void)kill(helper, SIGKILL);
		(void)waitpid(helper, NULL, 0);
		helper = 0;
	}
	run_fail_closed();
	(void)close(lfd_ok);
	(void)close(lfd_no);
	(void)close(lfd_abs);
	pol_free(pol);
	return tap_done();
}
