// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The floor's filesystem hooks on a real kernel, operation by operation:
 * every check runs in a fresh task inside a session and asserts the errno
 * the task gets and the event its session reports (op, decision, reason,
 * path).  The matrix runs three times: as the agent (uid 1000, owner of the
 * whole fixture, so DAC never answers for the floor), as root in the
 * session (capabilities are still held, so only the floor can say no), and
 * on the host, where every operation must succeed and leave no event.
 *
 * Besides the plain operations it tries the ways around an object check:
 * symlinks, a hardlink and a bind mount of a protected file made before the
 * session, /proc/self/root and /proc/self/fd re-opens, io_uring, file
 * handles, a detached open_tree clone, renames and links that would launder
 * a denial (REFER), a walk deeper than the floor looks, the control
 * filesystems (and a fresh cgroup2 mount), a double-forked orphan, and a
 * second session with the opposite policy.  And the other way round: what
 * no policy can name (pipes, memfds) must keep working.
 */
#define _GNU_SOURCE
#include <linux/io_uring.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include "floor_util.h"

#define R      "/tmp/ff"
#define WS     R "/ws"
#define RO     R "/ro"
#define DEN    R "/denied"
#define DROP   R "/drop"
#define HOMED  R "/home"
#define SSH    HOMED "/.ssh"
#define XD     R "/x"
#define BIND   WS "/sshbind"
#define PRIV   WS "/private"

/* Rule ids are indexes in the policy's rules. */
enum { RULE_WS, RULE_RO, RULE_DROP, RULE_DENIED, RULE_PRIVATE };

static const char policy_main[] =
	"{\"cordon_policy\": 1, \"rules\": ["
	"{\"name\": \"workspace\", \"decision\": \"allow\","
	" \"fs\": {\"paths\": [\"${WORKSPACE}\"], \"rights\": [\"all\"]}},"
	"{\"name\": \"readonly\", \"decision\": \"allow\","
	" \"fs\": {\"paths\": [\"${FIXTURE}/ro\", \"${FIXTURE}/x\"], \"rights\": [\"read\"]}},"
	"{\"name\": \"dropbox\", \"decision\": \"allow\","
	" \"fs\": {\"paths\": [\"${FIXTURE}/drop\"],"
	" \"rights\": [\"read\", \"write\", \"create\", \"delete\"]}},"
	"{\"name\": \"denied\", \"decision\": \"deny\","
	" \"fs\": {\"paths\": [\"${FIXTURE}/denied\"], \"rights\": [\"all\"]}},"
	"{\"name\": \"private\", \"decision\": \"deny\","
	" \"fs\": {\"paths\": [\"${WORKSPACE}/private\"], \"rights\": [\"read\"]}}]}";

/* The second session's policy: the same x directory, denied. */
static const char policy_other[] =
	"{\"cordon_policy\": 1, \"rules\": ["
	"{\"name\": \"workspace\", \"decision\": \"allow\","
	" \"fs\": {\"paths\": [\"${WORKSPACE}\"], \"rights\": [\"all\"]}},"
	"{\"name\": \"x-denied\", \"decision\": \"deny\","
	" \"fs\": {\"paths\": [\"${FIXTURE}/x\"], \"rights\": [\"read\"]}}]}";
#define RULE_OTHER_X 1

#define RO_TEXT "read only\n"

/* 4 x 70-byte names: a 300-byte path, past half the event buffer. */
#define N70 "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn"
#define LONGD  WS "/" N70 "1/" N70 "2/" N70 "3/" N70 "4"
/* and 8 of them: longer than the event buffer itself. */
#define LONGER LONGD "/" N70 "5/" N70 "6/" N70 "7/" N70 "8"

static char deep_ok[PATH_MAX], deep_bound[PATH_MAX];

#define OP(f, ...) (&(const struct fl_op){ .fn = (f), __VA_ARGS__ })

/* --- operations, run in the task ------------------------------------------ */

static int op_open(const struct fl_op *op, struct fl_report *r)
{
	int fd = open(op->a, op->flags | O_CLOEXEC, 0644);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static int op_mkfifo(const struct fl_op *op, struct fl_report *r)
{
	return mkfifo(op->a, 0644) < 0 ? errno : 0;
}

static int op_mkdir(const struct fl_op *op, struct fl_report *r)
{
	return mkdir(op->a, 0755) < 0 ? errno : 0;
}

static int op_symlink(const struct fl_op *op, struct fl_report *r)
{
	return symlink(op->b, op->a) < 0 ? errno : 0;
}

static int op_unlink(const struct fl_op *op, struct fl_report *r)
{
	return unlink(op->a) < 0 ? errno : 0;
}

static int op_rmdir(const struct fl_op *op, struct fl_report *r)
{
	return rmdir(op->a) < 0 ? errno : 0;
}

static int op_rename(const struct fl_op *op, struct fl_report *r)
{
	return syscall(SYS_renameat2, AT_FDCWD, op->a, AT_FDCWD, op->b, op->flags) < 0 ? errno : 0;
}

static int op_link(const struct fl_op *op, struct fl_report *r)
{
	return link(op->a, op->b) < 0 ? errno : 0;
}

static int op_truncate(const struct fl_op *op, struct fl_report *r)
{
	return truncate(op->a, 0) < 0 ? errno : 0;
}

static int op_chmod(const struct fl_op *op, struct fl_report *r)
{
	return chmod(op->a, 0640) < 0 ? errno : 0;
}

static int op_chown(const struct fl_op *op, struct fl_report *r)
{
	return chown(op->a, AGENT_UID, AGENT_UID) < 0 ? errno : 0;
}

static int op_utimes(const struct fl_op *op, struct fl_report *r)
{
	return utimensat(AT_FDCWD, op->a, NULL, 0) < 0 ? errno : 0;
}

/* Open, then a second operation on the result: a moved directory keeps its rule. */
static int op_rename_then_open(const struct fl_op *op, struct fl_report *r)
{
	int fd;

	if (rename(op->a, op->b) < 0)
		return errno;
	fd = open(op->inner->a, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/*
 * Open a with flags (O_PATH is never judged by file_open), then open it
 * again through /proc/self/fd with flags2: the second open is a new struct
 * file of the same object and must be judged as one.
 */
static int op_reopen(const struct fl_op *op, struct fl_report *r)
{
	char path[64];
	int fd = open(op->a, op->flags | O_CLOEXEC), fd2;

	if (fd < 0)
		return errno;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	fd2 = open(path, op->flags2 | O_CLOEXEC);
	if (fd2 < 0)
		return errno;
	close(fd2);
	return 0;
}

/*
 * IORING_OP_OPENAT through raw syscalls: the open runs inline or in an
 * io-wq worker, either way not through open(2).  A kernel without io_uring
 * (or with it disabled) skips the check.
 */
static int op_uring_open(const struct fl_op *op, struct fl_report *r)
{
	struct io_uring_params p = {};
	struct io_uring_sqe *sqes, *sqe;
	struct io_uring_cqe *cqes;
	unsigned int *tail, *mask, *array, *chead, *ctail, idx;
	size_t sq_sz, cq_sz;
	char *sq, *cq;
	int fd, res;

	fd = (int)syscall(__NR_io_uring_setup, 4, &p);
	if (fd < 0) {
		if (errno == ENOSYS || errno == EPERM)
			r->aux = FL_AUX_SKIP;
		return errno;
	}
	sq_sz = p.sq_off.array + p.sq_entries * sizeof(unsigned int);
	cq_sz = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	if (p.features & IORING_FEAT_SINGLE_MMAP)
		sq_sz = cq_sz = sq_sz > cq_sz ? sq_sz : cq_sz;
	sq = mmap(NULL, sq_sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
		  IORING_OFF_SQ_RING);
	if (sq == MAP_FAILED)
		return errno;
	cq = (p.features & IORING_FEAT_SINGLE_MMAP) ? sq :
		mmap(NULL, cq_sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
		     IORING_OFF_CQ_RING);
	if (cq == MAP_FAILED)
		return errno;
	sqes = mmap(NULL, p.sq_entries * sizeof(*sqes), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQES);
	if (sqes == MAP_FAILED)
		return errno;
	tail = (unsigned int *)(sq + p.sq_off.tail);
	mask = (unsigned int *)(sq + p.sq_off.ring_mask);
	array = (unsigned int *)(sq + p.sq_off.array);
	idx = *tail & *mask;
	sqe = &sqes[idx];
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_OPENAT;
	sqe->fd = AT_FDCWD;
	sqe->addr = (uintptr_t)op->a;
	sqe->open_flags = (uint32_t)op->flags;
	array[idx] = idx;
	__atomic_store_n(tail, *tail + 1, __ATOMIC_RELEASE);
	if (syscall(__NR_io_uring_enter, fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
		return errno;
	chead = (unsigned int *)(cq + p.cq_off.head);
	ctail = (unsigned int *)(cq + p.cq_off.tail);
	cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
	if (*chead == __atomic_load_n(ctail, __ATOMIC_ACQUIRE))
		return EIO;     /* no completion: not an answer from the floor */
	res = cqes[*chead & *(unsigned int *)(cq + p.cq_off.ring_mask)].res;
	close(fd);
	if (res < 0)
		return -res;
	close(res);
	return 0;
}

/* Move this task into the cgroup whose cgroup.procs is a. */
static int op_cg_write(const struct fl_op *op, struct fl_report *r)
{
	char pid[16];
	int n = snprintf(pid, sizeof(pid), "%d", (int)getpid());
	int fd = open(op->a, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return errno;
	if (write(fd, pid, (size_t)n) != n) {
		close(fd);
		return errno;
	}
	close(fd);
	return 0;
}

/*
 * A memfd is anonymous memory with a file descriptor: no path a policy
 * could name.  Programs size them with ftruncate (shared-memory buffers,
 * JIT double mappings), so the floor must not judge them as files.
 */
static int op_memfd(const struct fl_op *op, struct fl_report *r)
{
	int fd = memfd_create("floor-files", MFD_CLOEXEC);

	if (fd < 0 || write(fd, "x", 1) != 1 || ftruncate(fd, 65536) < 0 || fchmod(fd, 0600) < 0)
		return errno;
	close(fd);
	return 0;
}

/*
 * Re-open both ends of a pipe through /proc/self/fd: what `cmd /dev/stdin`
 * and a shell's process substitution (`diff <(a) <(b)`) do.  A pipe is not
 * an object any policy can name.
 */
static int op_pipe_reopen(const struct fl_op *op, struct fl_report *r)
{
	char path[64];
	int p[2], fd;

	if (pipe2(p, O_CLOEXEC) < 0)
		return errno;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", p[0]);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno;
	close(fd);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", p[1]);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/*
 * open_by_handle_at (CAP_DAC_READ_SEARCH): no path at all, only a handle.
 * The handle is taken in the task (name_to_handle_at is not judged); the
 * mount fd is the workspace, which the task may read.
 */
static int op_open_by_handle(const struct fl_op *op, struct fl_report *r)
{
	struct {
		struct file_handle h;
		unsigned char buf[MAX_HANDLE_SZ];
	} fh = { .h.handle_bytes = MAX_HANDLE_SZ };
	int mnt_id, mfd, fd;

	if (name_to_handle_at(AT_FDCWD, op->a, &fh.h, &mnt_id, 0) < 0)
		return errno;
	mfd = open(op->b, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (mfd < 0)
		return errno;
	fd = open_by_handle_at(mfd, &fh.h, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/*
 * A detached clone of a tree (open_tree(OPEN_TREE_CLONE), CAP_SYS_ADMIN;
 * never attached, so no mount hook sees it) rooted below a denied
 * directory: the walk from a file in it ends at the clone's root, short of
 * the rule, and what keeps the file closed is that a detached tree is not
 * a kernel-internal one: default deny, not a free pass.
 */
static int op_open_tree(const struct fl_op *op, struct fl_report *r)
{
	int tfd = (int)syscall(SYS_open_tree, AT_FDCWD, op->a, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	int fd;

	if (tfd < 0)
		return errno;
	fd = openat(tfd, op->b, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/*
 * Root's way out of its cgroup: mount cgroup2 afresh where the path rules
 * do not reach and write to the root cgroup's cgroup.procs.  Two walls: the
 * mount is refused to a session, and the control filesystems are judged by
 * superblock, so even a fresh mount would be no way out.
 */
static int op_cg_remount(const struct fl_op *op, struct fl_report *r)
{
	char procs[PATH_MAX];

	if (mount("cgroup2", op->a, "cgroup2", 0, NULL) < 0)
		return errno;
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", op->a);
	return op_cg_write(OP(op_cg_write, procs), r);
}

/* The same for a memfd backed by huge pages (hugetlbfs's internal mount). */
static int op_memfd_huge(const struct fl_op *op, struct fl_report *r)
{
	int fd = memfd_create("floor-files-huge", MFD_HUGETLB | MFD_CLOEXEC);

	if (fd < 0) {
		if (errno == EINVAL || errno == ENOSYS)
			r->aux = FL_AUX_SKIP;
		return errno;
	}
	if (ftruncate(fd, 2 << 20) < 0)
		return errno;
	close(fd);
	return 0;
}

/*
 * The classic daemon escape: fork, let the parent die so the grandchild is
 * re-parented, setsid.  None of it leaves the cgroup, so the grandchild is
 * still judged; it reports itself, flagging that it really was orphaned.
 */
static int op_double_fork(const struct fl_op *op, struct fl_report *r)
{
	pid_t parent = getpid(), g = fork();

	if (g < 0)
		return errno;
	if (g > 0)
		return FL_REPORTED;
	for (int i = 0; i < 2000 && getppid() == parent; i++)
		usleep(1000);
	{
		struct fl_report me = { .pid = getpid() };
		bool orphan = getppid() != parent;

		me.aux = (setsid() == getpid() && orphan) ? FL_AUX_ORPHANED : FL_AUX_NONE;
		me.err = op->inner->fn(op->inner, &me);
		fl_send(&me);
	}
	_exit(0);
}

/* --- the fixture ----------------------------------------------------------- */

static void fixture_remove(void)
{
	(void)umount2(BIND, MNT_DETACH);
	(void)umount2(WS "/cg2", MNT_DETACH);
	fl_rm_tree(R);
}

static int mkchain(char *out, size_t len, const char *base, int depth)
{
	size_t o = (size_t)snprintf(out, len, "%s", base);

	for (int i = 0; i < depth && o + 3 < len; i++) {
		o += (size_t)snprintf(out + o, len - o, "/d");
		if (mkdir(out, 0755) < 0)
			return -errno;
	}
	snprintf(out + o, len - o, "/file");
	return fl_putstr(out, "deep\n");
}

/*
 * Each mutating check has its own target, so that on the host (where all
 * of them succeed) no check disturbs another.  The hardlink and the bind
 * mount of the protected ~/.ssh are made here, before the session exists.
 */
static int fixture(void)
{
	static const char *const dirs[] = {
		R, WS, RO, DEN, DROP, HOMED, SSH, XD, WS "/dir", RO "/dir", BIND, PRIV, WS "/cg2",
		DEN "/sub",
		WS "/" N70 "1", WS "/" N70 "1/" N70 "2", WS "/" N70 "1/" N70 "2/" N70 "3", LONGD,
		LONGD "/" N70 "5", LONGD "/" N70 "5/" N70 "6", LONGD "/" N70 "5/" N70 "6/" N70 "7",
		LONGER, WS "/deep40", WS "/deep70",
	};
	static const char *const files[] = {
		WS "/file", WS "/trunc", WS "/trunc2", WS "/gone", WS "/a", WS "/b", WS "/c",
		WS "/e1", WS "/e2", WS "/e3", WS "/e4", RO "/unlinkme", DEN "/secret",
		DEN "/unlinkme", DEN "/moveme", DEN "/ex", DROP "/f", DROP "/g", DROP "/l",
		HOMED "/notes", XD "/file", LONGD "/file", LONGER "/file", PRIV "/key",
		PRIV "/key-mv", PRIV "/key-ln", PRIV "/key2", DEN "/sub/file",
	};
	int r;

	fixture_remove();
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (mkdir(dirs[i], 0755) < 0)
			return -errno;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if ((r = fl_putstr(files[i], "data\n")) < 0)
			return r;
	if ((r = fl_putstr(RO "/file", RO_TEXT)) < 0 ||
	    (r = fl_put(SSH "/id_rsa", "KEY\n", 4, 0600)) < 0 ||
	    (r = fl_put(SSH "/id_rsa2", "KEY2\n", 5, 0600)) < 0 ||
	    (r = mkchain(deep_ok, sizeof(deep_ok), WS "/deep40", 40)) < 0 ||
	    (r = mkchain(deep_bound, sizeof(deep_bound), WS "/deep70", 70)) < 0)
		return r;
	if (symlink(DEN "/secret", WS "/todenied") < 0 || link(SSH "/id_rsa", WS "/idlink") < 0)
		return -errno;
	if ((r = fl_chown_tree(R)) < 0)
		return r;
	if (mount(SSH, BIND, NULL, MS_BIND, NULL) < 0)
		return -errno;
	return 0;
}

/* --- checks ------------------------------------------------------------------ */

static off_t size_of(const char *path)
{
	struct stat st;

	return stat(path, &st) < 0 ? -1 : st.st_size;
}

/*
 * The path of an event whose real path is long: either whole, or flagged
 * truncated and then a tail of the real one (dentry-walk paths keep the
 * names nearest the leaf).  Never silently cut.
 */
static void check_long_path(struct fl_ctx *c, const char *what, const char *real)
{
	char path[PATH_MAX];
	const struct cordon_event *e = c->match;
	bool trunc, ok;
	size_t pl, rl = strlen(real);

	if (!c->cg)
		return;
	if (!e) {
		tap_ok(0, "[%s] %s: event path complete or flagged truncated (no event)",
		       c->mode, what);
		return;
	}
	floor_event_path(e, path, sizeof(path));
	pl = strlen(path);
	trunc = e->flags & CORDON_EV_PATH_TRUNCATED;
	if (!trunc)
		ok = strcmp(path, real) == 0;
	else
		ok = pl == 0 || (pl <= rl && strcmp(real + rl - pl, path) == 0) ||
		     strncmp(real, path, pl) == 0;
	tap_ok(ok, "[%s] %s: event path (%zu of %zu bytes) %s", c->mode, what, pl, rl,
	       trunc ? "flagged truncated" : "complete");
	if (!ok)
		tap_diag("  got '%s'", path);
}

static void files_matrix(struct fl_ctx *c, const char *procs, const char *subcg)
{
	/* open */
	fl_check(c, "open O_RDONLY in the workspace", OP(op_open, WS "/file", .flags = O_RDONLY),
		 FL_SILENT);
	fl_check(c, "open O_RDONLY in the read-only dir",
		 OP(op_open, RO "/file", .flags = O_RDONLY),
		 FL_SILENT);
	fl_check(c, "open O_RDONLY of a denied file", OP(op_open, DEN "/secret", .flags = O_RDONLY),
		 FL_DENY_RULE(CORDON_OP_OPEN_READ, RULE_DENIED, DEN "/secret"));
	fl_check(c, "open O_RDONLY where no rule applies",
		 OP(op_open, HOMED "/notes", .flags = O_RDONLY),
		 FL_DENY(EACCES, CORDON_OP_OPEN_READ, CORDON_REASON_DEFAULT, HOMED "/notes"));
	fl_check(c, "open O_WRONLY in the workspace", OP(op_open, WS "/file", .flags = O_WRONLY),
		 FL_ALLOW(CORDON_OP_OPEN_WRITE, WS "/file"));
	fl_check(c, "open O_WRONLY in the read-only dir",
		 OP(op_open, RO "/file", .flags = O_WRONLY),
		 FL_DENY(EACCES, CORDON_OP_OPEN_WRITE, CORDON_REASON_DEFAULT, RO "/file"));
	fl_check(c, "open O_RDWR of a denied file", OP(op_open, DEN "/secret", .flags = O_RDWR),
		 FL_DENY_RULE(CORDON_OP_OPEN_WRITE, RULE_DENIED, DEN "/secret"));
	fl_check(c, "O_APPEND in the workspace",
		 OP(op_open, WS "/file", .flags = O_WRONLY | O_APPEND),
		 FL_ALLOW(CORDON_OP_OPEN_WRITE, WS "/file"));
	fl_check(c, "O_APPEND in the read-only dir",
		 OP(op_open, RO "/file", .flags = O_WRONLY | O_APPEND),
		 FL_DENY(EACCES, CORDON_OP_OPEN_WRITE, CORDON_REASON_DEFAULT, RO "/file"));
	fl_check(c, "O_TRUNC in the workspace",
		 OP(op_open, WS "/trunc", .flags = O_WRONLY | O_TRUNC),
		 FL_ALLOW(CORDON_OP_TRUNCATE, WS "/trunc"));
	fl_check(c, "O_WRONLY|O_TRUNC in the read-only dir",
		 OP(op_open, RO "/file", .flags = O_WRONLY | O_TRUNC),
		 FL_DENY(EACCES, CORDON_OP_OPEN_WRITE, CORDON_REASON_DEFAULT, RO "/file"));
	fl_check(c, "O_RDONLY|O_TRUNC in the read-only dir (read allowed, truncate not)",
		 OP(op_open, RO "/file", .flags = O_RDONLY | O_TRUNC),
		 FL_DENY(EACCES, CORDON_OP_TRUNCATE, CORDON_REASON_DEFAULT, RO "/file"));
	if (c->cg)
		tap_ok(size_of(RO "/file") == (off_t)strlen(RO_TEXT),
		       "[%s] the read-only file kept its contents (%lld bytes)", c->mode,
		       (long long)size_of(RO "/file"));

	/* creation: the create right on the parent */
	fl_check(c, "O_CREAT of a new file in the workspace",
		 OP(op_open, WS "/new1", .flags = O_WRONLY | O_CREAT | O_EXCL),
		 FL_ALLOW(CORDON_OP_CREATE, WS "/new1"));
	fl_check(c, "O_CREAT of a new file in the read-only dir",
		 OP(op_open, RO "/new1", .flags = O_WRONLY | O_CREAT | O_EXCL),
		 FL_DENY(EACCES, CORDON_OP_CREATE, CORDON_REASON_DEFAULT, RO "/new1"));
	fl_check(c, "O_CREAT of a new file in the denied dir",
		 OP(op_open, DEN "/new1", .flags = O_WRONLY | O_CREAT | O_EXCL),
		 FL_DENY_RULE(CORDON_OP_CREATE, RULE_DENIED, DEN "/new1"));
	fl_check(c, "mkfifo in the workspace", OP(op_mkfifo, WS "/fifo"),
		 FL_ALLOW(CORDON_OP_CREATE, WS "/fifo"));
	fl_check(c, "mkfifo in the read-only dir", OP(op_mkfifo, RO "/fifo"),
		 FL_DENY(EACCES, CORDON_OP_CREATE, CORDON_REASON_DEFAULT, RO "/fifo"));
	fl_check(c, "mkdir in the workspace", OP(op_mkdir, WS "/newdir"),
		 FL_ALLOW(CORDON_OP_MKDIR, WS "/newdir"));
	fl_check(c, "mkdir in the read-only dir", OP(op_mkdir, RO "/newdir"),
		 FL_DENY(EACCES, CORDON_OP_MKDIR, CORDON_REASON_DEFAULT, RO "/newdir"));
	fl_check(c, "symlink in the workspace", OP(op_symlink, WS "/sl", "file"),
		 FL_ALLOW(CORDON_OP_SYMLINK, WS "/sl"));
	fl_check(c, "symlink in the read-only dir", OP(op_symlink, RO "/sl", "file"),
		 FL_DENY(EACCES, CORDON_OP_SYMLINK, CORDON_REASON_DEFAULT, RO "/sl"));

	/* deletion: the delete right on the object */
	fl_check(c, "unlink in the workspace", OP(op_unlink, WS "/gone"),
		 FL_ALLOW(CORDON_OP_UNLINK, WS "/gone"));
	fl_check(c, "unlink in the read-only dir", OP(op_unlink, RO "/unlinkme"),
		 FL_DENY(EACCES, CORDON_OP_UNLINK, CORDON_REASON_DEFAULT, RO "/unlinkme"));
	fl_check(c, "unlink in the denied dir", OP(op_unlink, DEN "/unlinkme"),
		 FL_DENY_RULE(CORDON_OP_UNLINK, RULE_DENIED, DEN "/unlinkme"));
	fl_check(c, "rmdir in the workspace", OP(op_rmdir, WS "/dir"),
		 FL_ALLOW(CORDON_OP_RMDIR, WS "/dir"));
	fl_check(c, "rmdir in the read-only dir", OP(op_rmdir, RO "/dir"),
		 FL_DENY(EACCES, CORDON_OP_RMDIR, CORDON_REASON_DEFAULT, RO "/dir"));

	/* rename: delete, create, and REFER between the parents */
	fl_check(c, "rename within the workspace", OP(op_rename, WS "/a", WS "/a2"),
		 FL_ALLOW(CORDON_OP_RENAME, WS "/a"));
	fl_check(c, "rename out of the denied dir", OP(op_rename, DEN "/moveme", WS "/moved"),
		 FL_DENY_RULE(CORDON_OP_RENAME, RULE_DENIED, DEN "/moveme"));
	fl_check(c, "rename into the denied dir", OP(op_rename, WS "/b", DEN "/b"),
		 FL_DENY_RULE(CORDON_OP_RENAME, RULE_DENIED, WS "/b"));
	fl_check(c, "rename from the dropbox to where it gains rights",
		 OP(op_rename, DROP "/f", WS "/f"),
		 FL_DENY(EXDEV, CORDON_OP_RENAME, CORDON_REASON_REFER, DROP "/f"));
	fl_check(c, "rename from the workspace to where it has fewer rights",
		 OP(op_rename, WS "/c", DROP "/c"), FL_ALLOW(CORDON_OP_RENAME, WS "/c"));
	fl_check(c, "RENAME_EXCHANGE within the workspace",
		 OP(op_rename, WS "/e1", WS "/e2", .flags = RENAME_EXCHANGE),
		 FL_ALLOW(CORDON_OP_RENAME, WS "/e1"));
	fl_check(c, "RENAME_EXCHANGE workspace <-> dropbox",
		 OP(op_rename, WS "/e3", DROP "/g", .flags = RENAME_EXCHANGE),
		 FL_DENY(EXDEV, CORDON_OP_RENAME, CORDON_REASON_REFER, WS "/e3"));
	fl_check(c, "RENAME_EXCHANGE workspace <-> denied dir",
		 OP(op_rename, WS "/e4", DEN "/ex", .flags = RENAME_EXCHANGE),
		 FL_DENY_RULE(CORDON_OP_RENAME, RULE_DENIED, WS "/e4"));
	fl_check(c, "rename a protected key out of ~/.ssh",
		 OP(op_rename, SSH "/id_rsa2", WS "/stolen"),
		 FL_DENY(EACCES, CORDON_OP_RENAME, CORDON_REASON_PROTECTED, SSH "/id_rsa2"));

	/* link: create at the new place, REFER from the old */
	fl_check(c, "link within the workspace", OP(op_link, WS "/file", WS "/hl"),
		 FL_ALLOW(CORDON_OP_LINK, WS "/file"));
	fl_check(c, "link from the dropbox into the more permissive workspace",
		 OP(op_link, DROP "/l", WS "/hl2"),
		 FL_DENY(EXDEV, CORDON_OP_LINK, CORDON_REASON_REFER, DROP "/l"));
	fl_check(c, "link into the read-only dir", OP(op_link, WS "/file", RO "/hl"),
		 FL_DENY(EACCES, CORDON_OP_LINK, CORDON_REASON_DEFAULT, WS "/file"));
	fl_check(c, "hardlink of ~/.ssh/id_rsa into the workspace, from inside",
		 OP(op_link, SSH "/id_rsa", WS "/idlink2"),
		 FL_DENY(EXDEV, CORDON_OP_LINK, CORDON_REASON_REFER, SSH "/id_rsa"));

	/* attributes */
	fl_check(c, "truncate(2) in the workspace", OP(op_truncate, WS "/trunc2"),
		 FL_ALLOW(CORDON_OP_TRUNCATE, WS "/trunc2"));
	fl_check(c, "truncate(2) in the read-only dir", OP(op_truncate, RO "/file"),
		 FL_DENY(EACCES, CORDON_OP_TRUNCATE, CORDON_REASON_DEFAULT, RO "/file"));
	fl_check(c, "truncate(2) of a denied file", OP(op_truncate, DEN "/secret"),
		 FL_DENY_RULE(CORDON_OP_TRUNCATE, RULE_DENIED, DEN "/secret"));
	fl_check(c, "chmod in the workspace", OP(op_chmod, WS "/file"),
		 FL_ALLOW(CORDON_OP_CHMOD, WS "/file"));
	fl_check(c, "chmod in the read-only dir", OP(op_chmod, RO "/file"),
		 FL_DENY(EACCES, CORDON_OP_CHMOD, CORDON_REASON_DEFAULT, RO "/file"));
	fl_check(c, "chmod of a denied file", OP(op_chmod, DEN "/secret"),
		 FL_DENY_RULE(CORDON_OP_CHMOD, RULE_DENIED, DEN "/secret"));
	fl_check(c, "chown in the workspace", OP(op_chown, WS "/file"),
		 FL_ALLOW(CORDON_OP_CHOWN, WS "/file"));
	fl_check(c, "chown in the read-only dir", OP(op_chown, RO "/file"),
		 FL_DENY(EACCES, CORDON_OP_CHOWN, CORDON_REASON_DEFAULT, RO "/file"));
	/*
	 * policy/README.md: timestamps are not judged (the kernel's only hook
	 * for them sees no mount).  Asserted, so that a change is noticed.
	 */
	fl_check(c, "utimensat in the read-only dir (timestamps are not judged)",
		 OP(op_utimes, RO "/file"), FL_SILENT);
	fl_check(c, "O_TMPFILE in the read-only dir", OP(op_open, RO, .flags = O_TMPFILE | O_RDWR),
		 FL_DENY(EACCES, CORDON_OP_OPEN_WRITE, CORDON_REASON_DEFAULT, NULL));

	/* a denied subtree inside the workspace: its files cannot be laundered out */
	fl_check(c, "open in a read-denied dir inside the workspace",
		 OP(op_open, PRIV "/key", .flags = O_RDONLY),
		 FL_DENY_RULE(CORDON_OP_OPEN_READ, RULE_PRIVATE, PRIV "/key"));
	fl_check(c, "rename a file out of the read-denied dir into the workspace",
		 OP(op_rename, PRIV "/key-mv", WS "/key"),
		 FL_DENY(EXDEV, CORDON_OP_RENAME, CORDON_REASON_REFER, PRIV "/key-mv"));
	fl_check(c, "hardlink a file of the read-denied dir into the workspace",
		 OP(op_link, PRIV "/key-ln", WS "/key-link"),
		 FL_DENY(EXDEV, CORDON_OP_LINK, CORDON_REASON_REFER, PRIV "/key-ln"));
	fl_check(c, "rename the read-denied dir itself, then open in it",
		 OP(op_rename_then_open, PRIV, WS "/public", .inner = OP(NULL, WS "/public/key2")),
		 FL_DENY_RULE(CORDON_OP_OPEN_READ, RULE_PRIVATE, WS "/public/key2"));

	/* redirection: every way of naming the object ends at the object */
	fl_check(c, "open through a workspace symlink into the denied dir",
		 OP(op_open, WS "/todenied", .flags = O_RDONLY),
		 FL_DENY_RULE(CORDON_OP_OPEN_READ, RULE_DENIED, DEN "/secret"));
	fl_check(c, "open ~/.ssh/id_rsa", OP(op_open, SSH "/id_rsa", .flags = O_RDONLY),
		 FL_DENY(EACCES, CORDON_OP_OPEN_READ, CORDON_REASON_PROTECTED, SSH "/id_rsa"));
	fl_check(c, "open a pre-session hardlink of ~/.ssh/id_rsa in the workspace",
		 OP(op_open, WS "/idlink", .flags = O_RDONLY),
		 FL_DENY(EACCES, CORDON_OP_OPEN_READ, CORDON_REASON_PROTECTED, WS "/idlink"));
	fl_check(c, "open through a pre-session bind mount of ~/.ssh",
		 OP(op_open, BIND "/id_rsa", .flags = O_RDONLY),
		 FL_DENY(EACCES, CORDON_OP_OPEN_READ, CORDON_REASON_PROTECTED, BIND "/id_rsa"));
	fl_check(c, "create a file in ~/.ssh through the bind mount",
		 OP(op_open, BIND "/authorized_keys", .flags = O_WRONLY | O_CREAT | O_EXCL),
		 FL_DENY(EACCES, CORDON_OP_CREATE, CORDON_REASON_PROTECTED,
			 BIND "/authorized_keys"));
	fl_check(c, "rename over the pre-session hardlink of ~/.ssh/id_rsa",
		 OP(op_rename, WS "/e2", WS "/idlink"),
		 FL_DENY(EACCES, CORDON_OP_RENAME, CORDON_REASON_PROTECTED, WS "/e2"));
	fl_check(c, "unlink the pre-session hardlink of ~/.ssh/id_rsa", OP(op_unlink, WS "/idlink"),
		 FL_DENY(EACCES, CORDON_OP_UNLINK, CORDON_REASON_PROTECTED, WS "/idlink"));
	fl_check(c, "open /proc/self/root" DEN "/secret",
		 OP(op_open, "/proc/self/root" DEN "/secret", .flags = O_RDONLY),
		 FL_DENY_RULE(CORDON_OP_OPEN_READ, RULE_DENIED, DEN "/secret"));
	fl_check(c, "O_PATH of a denied file, re-opened O_RDONLY via /proc/self/fd",
		 OP(op_reopen, DEN "/secret", .flags = O_PATH, .flags2 = O_RDONLY),
		 FL_DENY_RULE(CORDON_OP_OPEN_READ, RULE_DENIED, DEN "/secret"));
	fl_check(c, "O_RDONLY fd of a read-only file, re-opened O_WRONLY via /proc/self/fd",
		 OP(op_reopen, RO "/file", .flags = O_RDONLY, .flags2 = O_WRONLY),
		 FL_DENY(EACCES, CORDON_OP_OPEN_WRITE, CORDON_REASON_DEFAULT, RO "/file"));

	/* long paths and deep trees */
	fl_check(c, "O_CREAT at a 300-byte path in the workspace",
		 OP(op_open, LONGD "/new", .flags = O_WRONLY | O_CREAT | O_EXCL),
		 FL_ALLOW(CORDON_OP_CREATE, NULL));
	check_long_path(c, "create at a 300-byte path", LONGD "/new");
	fl_check(c, "open O_WRONLY at a 300-byte path in the workspace",
		 OP(op_open, LONGD "/file", .flags = O_WRONLY),
		 FL_ALLOW(CORDON_OP_OPEN_WRITE, NULL));
	check_long_path(c, "open at a 300-byte path", LONGD "/file");
	fl_check(c, "open O_WRONLY at a 590-byte path in the workspace",
		 OP(op_open, LONGER "/file", .flags = O_WRONLY),
		 FL_ALLOW(CORDON_OP_OPEN_WRITE, NULL));
	check_long_path(c, "open at a 590-byte path", LONGER "/file");
	fl_check(c, "open 40 directories down in the workspace",
		 OP(op_open, deep_ok, .flags = O_RDONLY),
		 FL_SILENT);
	fl_check(c, "open 70 directories down in the workspace (past the walk bound)",
		 OP(op_open, deep_bound, .flags = O_RDONLY),
		 FL_DENY(EACCES, CORDON_OP_OPEN_READ, CORDON_REASON_WALK_BOUND, deep_bound));

	fl_check(c, "memfd: write, ftruncate, fchmod", OP(op_memfd), FL_NO_DENIAL);
	fl_check(c, "MFD_HUGETLB memfd: ftruncate", OP(op_memfd_huge), FL_NO_DENIAL);
	fl_check(c, "re-open a pipe through /proc/self/fd (process substitution)",
		 OP(op_pipe_reopen), FL_NO_DENIAL);
	/*
	 * Root would need CAP_SYS_ADMIN for a detached clone: the hardening
	 * floor refuses the capability first (the file rule stands behind it).
	 */
	fl_check(c, "open_tree clone below the denied dir, open a file in it",
		 OP(op_open_tree, DEN "/sub", "file"),
		 c->uid ? FL_NOT_FLOOR(EPERM) :
		 FL_DENY(EPERM, CORDON_OP_CAPABLE, CORDON_REASON_HARDENING, NULL));
	fl_check(c, "open_by_handle_at of a denied file",
		 OP(op_open_by_handle, DEN "/secret", WS),
		 c->uid ? FL_NOT_FLOOR(EPERM) :
		 FL_DENY_RULE(CORDON_OP_OPEN_READ, RULE_DENIED, DEN "/secret"));

	/* io_uring */
	fl_check(c, "io_uring openat in the workspace",
		 OP(op_uring_open, WS "/file", .flags = O_RDONLY),
		 FL_SILENT);
	fl_check(c, "io_uring openat of a denied file",
		 OP(op_uring_open, DEN "/secret", .flags = O_RDONLY),
		 FL_DENY_RULE(CORDON_OP_OPEN_READ, RULE_DENIED, DEN "/secret"));

	/* the control filesystems */
	fl_check(c, "write own pid to its own cgroup.procs", OP(op_cg_write, procs),
		 FL_DENY(EACCES, CORDON_OP_OPEN_WRITE, CORDON_REASON_CONTROL_FS, procs));
	fl_check(c, "mkdir a sub-cgroup", OP(op_mkdir, subcg),
		 FL_DENY(EACCES, CORDON_OP_MKDIR, CORDON_REASON_CONTROL_FS, subcg));
	(void)rmdir(subcg);
	/* The mount itself is refused to any session task (hardening.bpf.c). */
	fl_check(c, "mount cgroup2 afresh in the workspace, to write its root cgroup.procs",
		 OP(op_cg_remount, WS "/cg2"),
		 FL_DENY(EPERM, CORDON_OP_MOUNT, CORDON_REASON_HARDENING, WS "/cg2"));
	(void)umount2(WS "/cg2", MNT_DETACH);
	/* bpffs is mode 0700: for the agent, DAC answers before the floor does. */
	fl_check(c, "open " CORDON_PIN_DIR "/config",
		 OP(op_open, CORDON_PIN_DIR "/config", .flags = O_RDONLY),
		 c->uid ? FL_NOT_FLOOR(EACCES) :
		 FL_DENY(EACCES, CORDON_OP_OPEN_READ, CORDON_REASON_CONTROL_FS,
			 CORDON_PIN_DIR "/config"));

	/* a double-forked, re-parented, setsid'd grandchild */
	fl_check(c, "orphaned setsid grandchild opens a denied file",
		 OP(op_double_fork, .inner = OP(op_open, DEN "/secret", .flags = O_RDONLY)),
		 FL_DENY_RULE(CORDON_OP_OPEN_READ, RULE_DENIED, DEN "/secret"));
	tap_ok(c->rep.aux == FL_AUX_ORPHANED && c->rep.pid != 0,
	       "[%s] the grandchild (pid %d) really was re-parented and in its own session",
	       c->mode, c->rep.pid);
}

/* --- two sessions at once ------------------------------------------------------ */

static struct fl_events other_evs;

/*
 * One task in each session, released together, each opening the same file
 * with flags_a / flags_b.  Each must get its own session's answer, and each
 * session's ring buffer must hold its own task's events only.
 */
static void concurrent_round(struct fl_ctx *c, struct floor_session *b, int flags_a,
			     const struct fl_expect *xa, int flags_b, const struct fl_expect *xb,
			     const char *what)
{
	const struct fl_op *oa = OP(op_open, XD "/file", .flags = flags_a);
	const struct fl_op *ob = OP(op_open, XD "/file", .flags = flags_b);
	const struct cordon_event *m;
	struct fl_report ra, rb;
	struct fl_task ta, tb;
	char why[PATH_MAX + 128];
	size_t cross_a = 0, cross_b = 0;
	int go[2];
	bool ok;

	fl_drain(c->s, &c->evs, 0);
	fl_drain(b, &other_evs, 0);
	if (pipe2(go, O_CLOEXEC) < 0 || fl_spawn(&ta, c->cg, c->uid, oa, go[0]) < 0 ||
	    fl_spawn(&tb, floor_session_cgroup(b), c->uid, ob, go[0]) < 0) {
		tap_ok(0, "[%s] two sessions: spawn: %s", c->mode, strerror(errno));
		return;
	}
	if (write(go[1], "gg", 2) != 2)
		tap_diag("go pipe: %s", strerror(errno));
	close(go[0]);
	close(go[1]);
	fl_collect(&ta, &ra);
	fl_collect(&tb, &rb);
	fl_drain(c->s, &c->evs, xa->op ? 2000 : 50);
	fl_drain(b, &other_evs, xb->op ? 2000 : 50);

	ok = fl_judge(&c->evs, &ra, c->uid, floor_session_id(c->s), xa, false, &m, why,
		      sizeof(why));
	tap_ok(ok, "[%s] two sessions, %s: session A's task gets A's answer", c->mode, what);
	if (!ok) {
		tap_diag("  %s", why);
		fl_dump(&c->evs, 0);
	}
	ok = fl_judge(&other_evs, &rb, c->uid, floor_session_id(b), xb, false, &m, why,
		      sizeof(why));
	tap_ok(ok, "[%s] two sessions, %s: session B's task gets B's answer", c->mode, what);
	if (!ok) {
		tap_diag("  %s", why);
		fl_dump(&other_evs, 0);
	}
	for (size_t i = 0; i < c->evs.n; i++)
		cross_a += c->evs.e[i].pid == (uint32_t)rb.pid ||
			   c->evs.e[i].session != floor_session_id(c->s);
	for (size_t i = 0; i < other_evs.n; i++)
		cross_b += other_evs.e[i].pid == (uint32_t)ra.pid ||
			   other_evs.e[i].session != floor_session_id(b);
	tap_ok(!cross_a && !cross_b,
	       "[%s] two sessions, %s: each ring buffer holds its own session's events only "
	       "(%zu, %zu strays)", c->mode, what, cross_a, cross_b);
}

static void concurrent(struct fl_ctx *c, struct floor_session *b)
{
	concurrent_round(c, b, O_RDONLY, FL_SILENT, O_RDONLY,
			 FL_DENY_RULE(CORDON_OP_OPEN_READ, RULE_OTHER_X, XD "/file"), "both read");
	concurrent_round(c, b, O_WRONLY,
			 FL_DENY(EACCES, CORDON_OP_OPEN_WRITE, CORDON_REASON_DEFAULT, XD "/file"),
			 O_RDONLY, FL_DENY_RULE(CORDON_OP_OPEN_READ, RULE_OTHER_X, XD "/file"),
			 "both denied");
}

/* --- passes ---------------------------------------------------------------- */

static struct fl_ctx ctx;

static void pass(struct floor *f, const char *mode, uid_t uid, bool host)
{
	struct policy *pa = NULL, *pb = NULL;
	struct floor_session *sa = NULL, *sb = NULL;
	char procs[PATH_MAX + 32], sub[PATH_MAX + 32], own[PATH_MAX];
	uint64_t drops = 0;
	int r;

	r = fixture();
	if (!tap_ok(r == 0, "[%s] fixture under " R " (%s)", mode, strerror(-r)))
		goto out;
	r = fl_policy(policy_main, &pa, "WORKSPACE", WS, "HOME", HOMED, "FIXTURE", R, NULL);
	r = r ?: fl_policy(policy_other, &pb, "WORKSPACE", WS, "HOME", HOMED, "FIXTURE", R, NULL);
	if (!tap_ok(r == 0, "[%s] policies load", mode))
		goto out;
	r = floor_session_create(f, pa, NULL, &sa);
	r = r ?: floor_session_create(f, pb, NULL, &sb);
	if (!tap_ok(r == 0, "[%s] two sessions created (%s)", mode, strerror(-r)))
		goto out;

	memset(&ctx, 0, sizeof(ctx));
	ctx.f = f;
	ctx.s = sa;
	ctx.uid = uid;
	snprintf(ctx.mode, sizeof(ctx.mode), "%s", mode);
	if (host) {
		/* The host task moves into its own cgroup and makes a sibling: both allowed. */
		if (fl_own_cgroup(own, sizeof(own)) < 0)
			snprintf(own, sizeof(own), "/sys/fs/cgroup");
	} else {
		ctx.cg = floor_session_cgroup(sa);
		snprintf(own, sizeof(own), "%s", ctx.cg);
	}
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", own);
	snprintf(sub, sizeof(sub), "%s/%s", own, host ? "floor-files-probe" : "sub");
	/* Delegated to the agent, so that DAC does not answer for the floor. */
	if (!host && uid && (chown(ctx.cg, uid, uid) < 0 || chown(procs, uid, uid) < 0))
		tap_diag("delegating %s: %s", ctx.cg, strerror(errno));

	files_matrix(&ctx, procs, sub);
	if (!host)
		concurrent(&ctx, sb);
	tap_ok(floor_session_drops(f, sa, &drops) == 0 && drops == 0,
	       "[%s] no events dropped (%llu)", mode, (unsigned long long)drops);
out:
	if (sa)
		tap_ok(floor_session_destroy(f, sa) == 0, "[%s] session A destroyed", mode);
	if (sb)
		tap_ok(floor_session_destroy(f, sb) == 0, "[%s] session B destroyed", mode);
	pol_free(pa);
	pol_free(pb);
	fixture_remove();
}

int main(void)
{
	struct floor *f = NULL;
	int r;

	if (geteuid() != 0)
		tap_skip_all("needs root (loads BPF LSM programs, creates cgroups)");
	r = floor_open(&f);
	if (r == -EPERM)
		tap_skip_all("BPF LSM: kernel refused LSM program load (EPERM)");
	if (!tap_ok(r == 0, "floor opened (%s)", strerror(-r)))
		return tap_done();

	pass(f, "uid 1000", AGENT_UID, false);
	pass(f, "root", 0, false);
	pass(f, "host", 0, true);

	floor_close(f);
	return tap_done();
}
