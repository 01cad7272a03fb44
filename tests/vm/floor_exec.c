// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The floor's exec hooks on a real kernel: execve of binaries and scripts,
 * execveat of file descriptors, fileless exec (memfd, O_TMPFILE, a file
 * unlinked after open), and PROT_EXEC file mappings by mmap and mprotect.
 * Every check asserts the errno and the session's event; the matrix runs
 * as the agent (uid 1000), as root in the session, and on the host, where
 * everything must work and nothing be reported.
 *
 * The policy gives read and exec on the system directories (the guest's
 * /bin/sh is busybox), everything on the workspace, read alone on one
 * directory and exec alone on another: the exec right, not the read right,
 * is what exec needs.
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <sys/syscall.h>
#include "floor_util.h"

#define R      "/tmp/fx"
#define WS     R "/ws"
#define RO     R "/ro"
#define XO     R "/xo"
#define HOMED  R "/home"

enum { RULE_SYSTEM, RULE_WS, RULE_RO, RULE_XO };

static const char policy_text[] =
	"{\"cordon_policy\": 1, \"rules\": ["
	"{\"name\": \"system\", \"decision\": \"allow\","
	" \"fs\": {\"paths\": [\"/bin\", \"/sbin\", \"/usr\", \"/lib\"],"
	" \"rights\": [\"read\", \"exec\"]}},"
	"{\"name\": \"workspace\", \"decision\": \"allow\","
	" \"fs\": {\"paths\": [\"${WORKSPACE}\"], \"rights\": [\"all\"]}},"
	"{\"name\": \"readonly\", \"decision\": \"allow\","
	" \"fs\": {\"paths\": [\"${FIXTURE}/ro\"], \"rights\": [\"read\"]}},"
	"{\"name\": \"exec-only\", \"decision\": \"allow\","
	" \"fs\": {\"paths\": [\"${FIXTURE}/xo\"], \"rights\": [\"exec\"]}}]}";

#define SCRIPT     "#!/bin/sh\nexit 42\n"
#define BADINTERP  "#!" RO "/busybox sh\nexit 42\n"

/* busybox, read by the test before any task enters a session. */
static char *busybox;
static size_t busybox_len;

#define OP(f, ...) (&(const struct fl_op){ .fn = (f), __VA_ARGS__ })

/* --- operations, run in the task ------------------------------------------ */

static char *const exec_env[] = { "PATH=/bin:/usr/bin", NULL };

/* argv for busybox as sh: the program exits FL_EXEC_STATUS if it ran. */
static char *const sh_argv[] = { "sh", "-c", "exit 42", NULL };

static int execveat_fd(int fd)
{
	syscall(SYS_execveat, fd, "", sh_argv, exec_env, AT_EMPTY_PATH);
	return errno;
}

/* execve of a: a binary (run as busybox sh) or, with b set, a script. */
static int op_exec(const struct fl_op *op, struct fl_report *r)
{
	char *const script_argv[] = { (char *)op->a, NULL };

	execve(op->a, op->b ? script_argv : sh_argv, exec_env);
	return errno;
}

/* execveat(fd, "", AT_EMPTY_PATH) of a file opened with flags. */
static int op_execveat(const struct fl_op *op, struct fl_report *r)
{
	int fd = open(op->a, op->flags);

	if (fd < 0)
		return errno;
	return execveat_fd(fd);
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The classic fileless exec: a binary written into a memfd and run from it. */
static int op_exec_memfd(const struct fl_op *op, struct fl_report *r)
{
	int fd = memfd_create("floor-exec", 0);

	if (fd < 0 || write_all(fd, busybox, busybox_len) < 0)
		return errno;
	return execveat_fd(fd);
}

/*
 * The same with an O_TMPFILE file in the workspace.  Exec refuses a file
 * open for writing (ETXTBSY), so the test re-opens it read-only through
 * /proc/self/fd and closes the writer; the file still has no name.
 */
static int op_exec_tmpfile(const struct fl_op *op, struct fl_report *r)
{
	char path[64];
	int fd = open(op->a, O_TMPFILE | O_RDWR, 0755), rfd;

	if (fd < 0 || write_all(fd, busybox, busybox_len) < 0)
		return errno;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	rfd = open(path, O_RDONLY);
	if (rfd < 0)
		return errno;
	close(fd);
	return execveat_fd(rfd);
}

/* A named, allowed binary, opened, then unlinked, then run from the fd. */
static int op_exec_unlinked(const struct fl_op *op, struct fl_report *r)
{
	int fd = open(op->a, O_RDONLY);

	if (fd < 0 || unlink(op->a) < 0)
		return errno;
	return execveat_fd(fd);
}

static int op_mmap_exec(const struct fl_op *op, struct fl_report *r)
{
	int fd = open(op->a, O_RDONLY | O_CLOEXEC);
	void *p;

	if (fd < 0)
		return errno;
	p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return errno;
	munmap(p, 4096);
	return 0;
}

/*
 * The JIT double-mapping trick with a memfd: its PROT_EXEC view is
 * fileless.  Sized by write, not ftruncate, so that only the mapping is
 * judged here (floor_files checks ftruncate of a memfd).
 */
static int op_mmap_memfd_exec(const struct fl_op *op, struct fl_report *r)
{
	static const char page[4096];
	int fd = memfd_create("floor-jit", MFD_CLOEXEC);
	void *p;

	if (fd < 0 || write_all(fd, page, sizeof(page)) < 0)
		return errno;
	p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return errno;
	munmap(p, 4096);
	return 0;
}

/* Map read-only, then ask for exec: the door mmap_file alone would leave open. */
static int op_mprotect_exec(const struct fl_op *op, struct fl_report *r)
{
	int fd = open(op->a, O_RDONLY | O_CLOEXEC);
	void *p;

	if (fd < 0)
		return errno;
	p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return errno;
	if (mprotect(p, 4096, PROT_READ | PROT_EXEC) < 0)
		return errno;
	munmap(p, 4096);
	return 0;
}

/* What a JIT does: anonymous RWX, and RW then RX; each runs a `ret`. */
static int op_anon_exec(const struct fl_op *op, struct fl_report *r)
{
	unsigned char *p, *q;

	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (p == MAP_FAILED)
		return errno;
	p[0] = 0xc3;
	((void (*)(void))p)();
	q = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (q == MAP_FAILED)
		return errno;
	q[0] = 0xc3;
	if (mprotect(q, 4096, PROT_READ | PROT_EXEC) < 0)
		return errno;
	((void (*)(void))q)();
	return 0;
}

/*
 * A memfd backed by huge pages is as fileless as any memfd, but it lives
 * on hugetlbfs's own internal mount, which the kernel makes with fc_mount()
 * and so does not mark internal the way kern_mount() marks shmem's: the
 * answer must not depend on which internal mount holds the memfd.  Filled
 * through a shared writable mapping, which also sizes it (hugetlbfs has no
 * write(2); ftruncate is floor_files' business); without reserved huge
 * pages the check is skipped.
 */
#define HUGE_SZ (2u << 20)

/* No hugetlbfs or no huge pages: a skip.  Anything else (EACCES) is an answer. */
static int huge_missing(struct fl_report *r)
{
	if (errno == ENOMEM || errno == EINVAL || errno == ENOSPC || errno == ENOSYS)
		r->aux = FL_AUX_SKIP;
	return -1;
}

static int memfd_huge(const char *text, size_t len, struct fl_report *r)
{
	int fd = memfd_create("floor-huge", MFD_HUGETLB);
	char *p;

	if (fd < 0)
		return huge_missing(r);
	p = mmap(NULL, HUGE_SZ, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return huge_missing(r);
	memcpy(p, text, len);
	munmap(p, HUGE_SZ);
	return fd;
}

/* A script in it: an ELF would need 2 MiB-aligned segments to load from hugetlbfs. */
static int op_exec_memfd_huge(const struct fl_op *op, struct fl_report *r)
{
	char *const argv[] = { "script", NULL };
	int fd = memfd_huge(SCRIPT, strlen(SCRIPT), r);

	if (fd < 0)
		return errno;
	syscall(SYS_execveat, fd, "", argv, exec_env, AT_EMPTY_PATH);
	return errno;
}

static int op_mmap_memfd_huge_exec(const struct fl_op *op, struct fl_report *r)
{
	int fd = memfd_huge("\xc3", 1, r);
	void *p;

	if (fd < 0)
		return errno;
	p = mmap(NULL, HUGE_SZ, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return errno;
	munmap(p, HUGE_SZ);
	return 0;
}

/* --- the fixture ----------------------------------------------------------- */

static int fixture(void)
{
	static const char *const dirs[] = { R, WS, RO, XO, HOMED };
	static const char *const bins[] = {
		WS "/busybox", WS "/unl", RO "/busybox", XO "/busybox",
	};
	char data[8192];
	int r;

	fl_rm_tree(R);
	memset(data, 0xc3, sizeof(data));
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (mkdir(dirs[i], 0755) < 0)
			return -errno;
	for (size_t i = 0; i < sizeof(bins) / sizeof(bins[0]); i++)
		if ((r = fl_put(bins[i], busybox, busybox_len, 0755)) < 0)
			return r;
	if ((r = fl_put(WS "/script.sh", SCRIPT, strlen(SCRIPT), 0755)) < 0 ||
	    (r = fl_put(RO "/script.sh", SCRIPT, strlen(SCRIPT), 0755)) < 0 ||
	    (r = fl_put(WS "/badinterp.sh", BADINTERP, strlen(BADINTERP), 0755)) < 0 ||
	    (r = fl_put(WS "/data", data, sizeof(data), 0644)) < 0 ||
	    (r = fl_put(RO "/data", data, sizeof(data), 0644)) < 0)
		return r;
	return fl_chown_tree(R);
}

/* --- checks ------------------------------------------------------------------ */

static void exec_matrix(struct fl_ctx *c)
{
	/* execve */
	fl_check(c, "exec a binary in the workspace", OP(op_exec, WS "/busybox"),
		 FL_ALLOW(CORDON_OP_EXEC, WS "/busybox"));
	fl_check(c, "exec a binary in a dir with read but no exec right",
		 OP(op_exec, RO "/busybox"),
		 FL_DENY(EACCES, CORDON_OP_EXEC, CORDON_REASON_DEFAULT, RO "/busybox"));
	fl_check(c, "exec a binary in a dir with exec but no read right",
		 OP(op_exec, XO "/busybox"),
		 FL_ALLOW(CORDON_OP_EXEC, XO "/busybox"));
	fl_check(c, "exec a #!/bin/sh script in the workspace",
		 OP(op_exec, WS "/script.sh", "script"),
		 FL_ALLOW(CORDON_OP_EXEC, WS "/script.sh"));
	fl_check(c, "exec a #!/bin/sh script in the read-only dir",
		 OP(op_exec, RO "/script.sh", "script"),
		 FL_DENY(EACCES, CORDON_OP_EXEC, CORDON_REASON_DEFAULT, RO "/script.sh"));
	fl_check(c, "exec a workspace script whose interpreter has no exec right",
		 OP(op_exec, WS "/badinterp.sh", "script"),
		 FL_DENY(EACCES, CORDON_OP_EXEC, CORDON_REASON_DEFAULT, RO "/busybox"));

	/* execveat of descriptors */
	fl_check(c, "execveat(AT_EMPTY_PATH) of an O_RDONLY fd of an allowed binary",
		 OP(op_execveat, WS "/busybox", .flags = O_RDONLY),
		 FL_ALLOW(CORDON_OP_EXEC, WS "/busybox"));
	fl_check(c, "execveat(AT_EMPTY_PATH) of an O_PATH fd of an allowed binary",
		 OP(op_execveat, WS "/busybox", .flags = O_PATH),
		 FL_ALLOW(CORDON_OP_EXEC, WS "/busybox"));
	fl_check(c, "execveat(AT_EMPTY_PATH) of an fd of a binary without exec right",
		 OP(op_execveat, RO "/busybox", .flags = O_RDONLY),
		 FL_DENY(EACCES, CORDON_OP_EXEC, CORDON_REASON_DEFAULT, RO "/busybox"));

	/* fileless exec */
	fl_check(c, "memfd_create + write busybox + execveat(AT_EMPTY_PATH)", OP(op_exec_memfd),
		 FL_DENY(EACCES, CORDON_OP_EXEC, CORDON_REASON_FILELESS, NULL));
	fl_check(c, "memfd_create(MFD_HUGETLB) + a #!/bin/sh script + execveat",
		 OP(op_exec_memfd_huge),
		 FL_DENY(EACCES, CORDON_OP_EXEC, CORDON_REASON_FILELESS, NULL));
	fl_check(c, "O_TMPFILE in the workspace + write busybox + execveat",
		 OP(op_exec_tmpfile, WS),
		 FL_DENY(EACCES, CORDON_OP_EXEC, CORDON_REASON_FILELESS, NULL));
	fl_check(c, "open an allowed binary, unlink it, execveat the fd",
		 OP(op_exec_unlinked, WS "/unl"),
		 &(const struct fl_expect){ .err = EACCES, .op = CORDON_OP_EXEC,
					    .decision = CORDON_DENY,
					    .reason = CORDON_REASON_FILELESS, .rule = -1,
					    .path = WS "/unl", .prefix = true });

	/* code mapped from files */
	fl_check(c, "mmap(PROT_EXEC) of a file without exec right", OP(op_mmap_exec, RO "/data"),
		 FL_DENY(EACCES, CORDON_OP_MMAP_EXEC, CORDON_REASON_DEFAULT, RO "/data"));
	fl_check(c, "mmap(PROT_EXEC) of a file with exec right", OP(op_mmap_exec, WS "/data"),
		 FL_SILENT);
	fl_check(c, "mmap(PROT_EXEC) of a memfd", OP(op_mmap_memfd_exec),
		 FL_DENY(EACCES, CORDON_OP_MMAP_EXEC, CORDON_REASON_FILELESS, NULL));
	fl_check(c, "mmap(PROT_EXEC) of a MFD_HUGETLB memfd", OP(op_mmap_memfd_huge_exec),
		 FL_DENY(EACCES, CORDON_OP_MMAP_EXEC, CORDON_REASON_FILELESS, NULL));
	fl_check(c, "mprotect(+PROT_EXEC) of a read-only mapping without exec right",
		 OP(op_mprotect_exec, RO "/data"),
		 FL_DENY(EACCES, CORDON_OP_MPROTECT_EXEC, CORDON_REASON_DEFAULT, RO "/data"));
	fl_check(c, "mprotect(+PROT_EXEC) of a mapping with exec right",
		 OP(op_mprotect_exec, WS "/data"),
		 FL_SILENT);
	fl_check(c, "anonymous PROT_EXEC memory (RWX, and RW then RX) runs", OP(op_anon_exec),
		 FL_SILENT);
}

/* --- passes ---------------------------------------------------------------- */

static struct fl_ctx ctx;

static void pass(struct floor *f, const char *mode, uid_t uid, bool host)
{
	struct policy *p = NULL;
	struct floor_session *s = NULL;
	uint64_t drops = 0;
	int r;

	r = fixture();
	if (!tap_ok(r == 0, "[%s] fixture under " R " (%s)", mode, strerror(-r)))
		goto out;
	r = fl_policy(policy_text, &p, "WORKSPACE", WS, "HOME", HOMED, "FIXTURE", R, NULL);
	if (!tap_ok(r == 0, "[%s] policy loads", mode))
		goto out;
	r = floor_session_create(f, p, NULL, &s);
	if (!tap_ok(r == 0, "[%s] session created (%s)", mode, strerror(-r)))
		goto out;

	memset(&ctx, 0, sizeof(ctx));
	ctx.f = f;
	ctx.s = s;
	ctx.uid = uid;
	ctx.cg = host ? NULL : floor_session_cgroup(s);
	snprintf(ctx.mode, sizeof(ctx.mode), "%s", mode);
	exec_matrix(&ctx);
	tap_ok(floor_session_drops(f, s, &drops) == 0 && drops == 0,
	       "[%s] no events dropped (%llu)", mode, (unsigned long long)drops);
out:
	if (s)
		tap_ok(floor_session_destroy(f, s) == 0, "[%s] session destroyed", mode);
	pol_free(p);
	fl_rm_tree(R);
}

#define NR_HUGEPAGES "/proc/sys/vm/nr_hugepages"

static int sysctl_write(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), r = 0;
	ssize_t len = (ssize_t)strlen(value);

	if (fd < 0)
		return -errno;
	if (write(fd, value, (size_t)len) != len)
		r = -errno;
	close(fd);
	return r;
}

int main(void)
{
	struct floor *f = NULL;
	char *huge_was = NULL;
	size_t huge_len = 0;
	int r;

	if (geteuid() != 0)
		tap_skip_all("needs root (loads BPF LSM programs, creates cgroups)");
	r = fl_slurp("/bin/busybox", &busybox, &busybox_len);
	if (r < 0)
		tap_skip_all("no /bin/busybox to run in the sessions (%s)", strerror(-r));
	r = floor_open(&f);
	if (r == -EPERM)
		tap_skip_all("BPF LSM: kernel refused LSM program load (EPERM)");
	if (!tap_ok(r == 0, "floor opened (%s)", strerror(-r)))
		return tap_done();

	/* A few huge pages for the MFD_HUGETLB checks, given back at the end. */
	if (fl_slurp(NR_HUGEPAGES, &huge_was, &huge_len) == 0 && sysctl_write(NR_HUGEPAGES, "4\n") < 0)
		tap_diag("cannot reserve huge pages: the MFD_HUGETLB checks will skip");

	pass(f, "uid 1000", AGENT_UID, false);
	pass(f, "root", 0, false);
	pass(f, "host", 0, true);

	if (huge_was)
		(void)sysctl_write(NR_HUGEPAGES, huge_was);
	free(huge_was);
	floor_close(f);
	free(busybox);
	return tap_done();
}
