// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The exec recheck: the kernel compares what an exec received with what the
 * supervisor judged, before the new image runs a single instruction.
 *
 * The attack it closes: the supervisor judges an exec (its path and argv)
 * by reading the caller's memory, then lets the syscall go on; the kernel
 * then copies path and argv from that memory again.  Anything that can
 * write the memory in between (another thread, a MAP_SHARED or writable
 * file mapping, a process sharing the mm) can swap in an argv or a path the
 * policy denies or escalates (`git push` judged as `git status`), or the
 * argv a human approved.  A symlink in the path swapped after the check
 * runs another binary with the judged argv.
 *
 * How: for every exec it lets go on, the supervisor arms an expectation for
 * the calling thread (struct cordon_exec_expect, keyed by its tid): keyed
 * hashes of the argv bytes and of the path as the kernel forms
 * bprm->filename, and the binary's inode.  At sched_process_exec, after the
 * kernel has copied argv into the new image and before it returns to user
 * space, this program reads the new image's argv (mm->arg_start..arg_end:
 * the kernel's copy; the new program has not run yet, so nothing has
 * rewritten it) and bprm->filename, and compares.  A mismatch sends SIGKILL,
 * which is delivered before the first user instruction, and marks the
 * expectation so the supervisor records the kill.
 *
 * Interpreters (#!, binfmt_misc): the kernel replaces argv[0] with the
 * interpreter and the path, so only the strings from argv[1] on are
 * compared (they end the argument area unchanged), with bprm->filename; the
 * inode compared would be the interpreter's, so it is not.
 *
 * What it cannot close: a script's file swapped through a symlink between
 * the check and the exec runs with the judged argv (its own execs are
 * judged again); on a filesystem whose stat numbers are not the kernel
 * inode's (overlayfs, FUSE, NFS...) the supervisor arms no inode check, so
 * there a symlink swap between two binaries is not caught.  The environment
 * is not compared (no rule judges it).  A thread that execs with no
 * expectation armed is not judged here: every exec of a supervised task is
 * stopped by seccomp and armed before it goes on, and an armed expectation
 * is removed only by this program or when its thread exits.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "cordon.h"

char LICENSE[] SEC("license") = "GPL";

#define SIGKILL 9
#define CHUNK   256

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cordon_exec_key);
} exec_key SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CORDON_EXEC_EXPECT_MAX);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct cordon_exec_expect);
} exec_expect SEC(".maps");

struct chunk {
	__u8 b[CHUNK];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct chunk);
} exec_chunk SEC(".maps");

struct name_buf {
	char b[CORDON_EXEC_NAME_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct name_buf);
} exec_name SEC(".maps");

struct hash_ctx {
	struct cordon_sip s;
	__u64 src;
	__u64 hash;
	__u32 len;
	__u32 off;
	__u32 user;
	__u32 err;
};

/* One CHUNK of the string: read it (user or kernel memory), hash its words. */
static long hash_chunk(__u64 i, void *data)
{
	struct hash_ctx *c = data;
	__u32 zero = 0, words, rem, base;
	__u64 n;
	struct chunk *ch = bpf_map_lookup_elem(&exec_chunk, &zero);
	__u64 last = 0;
	long r;

	if (!ch || c->off >= c->len) {
		c->err = !ch;
		return 1;
	}
	n = c->len - c->off;
	barrier_var(n);
	if (n > CHUNK)
		n = CHUNK;
	barrier_var(n);
	n &= 2 * CHUNK - 1;     /* the verifier's bound, already true */
	if (c->user)
		r = bpf_probe_read_user(ch->b, n, (const void *)(c->src + c->off));
	else
		r = bpf_probe_read_kernel(ch->b, n, (const void *)(c->src + c->off));
	if (r) {
		c->err = 1;
		return 1;
	}
	words = (__u32)n / 8;
	for (__u32 w = 0; w < CHUNK / 8; w++) {
		__u64 m;

		if (w >= words)
			break;
		__builtin_memcpy(&m, &ch->b[w * 8], 8);
		cordon_sip_word(&c->s, m);
	}
	c->off += n;
	if (c->off < c->len)
		return 0;
	rem = (__u32)n & 7;
	base = words * 8;
	for (__u32 j = 0; j < 7; j++)
		if (j < rem)
			last |= (__u64)ch->b[(base + j) & (CHUNK - 1)] << (8 * j);
	c->hash = cordon_sip_final(&c->s, last, c->len);
	return 1;
}

/* The keyed hash of len bytes at src; 0 and *err set if they cannot be read. */
static __u64 hash_mem(const struct cordon_exec_key *k, __u64 src, __u32 len, bool user, int *err)
{
	struct hash_ctx c = { .src = src, .len = len, .user = user };

	cordon_sip_init(&c.s, k);
	if (!len)
		return cordon_sip_final(&c.s, 0, 0);
	bpf_loop((len + CHUNK - 1) / CHUNK, hash_chunk, &c, 0);
	if (c.err || c.off != len) {
		*err = 1;
		return 0;
	}
	return c.hash;
}

static bool matches(const struct cordon_exec_expect *e, const struct cordon_exec_key *k,
		    struct task_struct *p, struct linux_binprm *bprm)
{
	const char *name = BPF_CORE_READ(bprm, filename);
	bool interp = (const char *)BPF_CORE_READ(bprm, interp) != name;
	__u64 start = BPF_CORE_READ(p, mm, arg_start), end = BPF_CORE_READ(p, mm, arg_end);
	__u32 zero = 0;
	struct name_buf *nb = bpf_map_lookup_elem(&exec_name, &zero);
	int err = 0;
	long n;

	if (!nb || end < start || end - start > 0xffffffffULL)
		return false;
	n = bpf_probe_read_kernel_str(nb->b, sizeof(nb->b), name);
	if (n <= 0 || (__u32)(n - 1) != e->name_len ||
	    hash_mem(k, (__u64)name, e->name_len, false, &err) != e->name_hash || err)
		return false;
	if (!interp) {
		struct inode *ino = BPF_CORE_READ(bprm, file, f_inode);

		if (end - start != e->argv_len ||
		    hash_mem(k, start, e->argv_len, true, &err) != e->argv_hash || err)
			return false;
		if ((e->flags & CORDON_EXEC_INODE) &&
		    (BPF_CORE_READ(ino, i_ino) != e->ino || BPF_CORE_READ(ino, i_sb, s_magic) != e->magic))
			return false;
		if ((e->flags & CORDON_EXEC_DEV) && BPF_CORE_READ(ino, i_sb, s_dev) != e->dev)
			return false;
		return true;
	}
	/* The judged argv[1..] end the area, right after a string's NUL. */
	if (end - start < (__u64)e->tail_len + 1)
		return false;
	{
		char before = 1;

		if (bpf_probe_read_user(&before, 1, (const void *)(end - e->tail_len - 1)) || before)
			return false;
	}
	return hash_mem(k, end - e->tail_len, e->tail_len, true, &err) == e->tail_hash && !err;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(cordon_exec_recheck, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tid = (__u32)old_pid, zero = 0;
	struct cordon_exec_expect *e = bpf_map_lookup_elem(&exec_expect, &tid);
	struct cordon_exec_key *k;

	if (!e || e->killed)
		return 0;
	/*
	 * Attack: an expectation outlives its task (the task died between the
	 * supervisor's judgement and the arm, after its exit had already
	 * cleared the way), and its tid is reused by a process anywhere on
	 * the host, whose exec then differs and would be killed.  An
	 * expectation binds the session's cgroup, which a session's task
	 * cannot leave: a task elsewhere is not the one judged, and only the
	 * stale entry goes.
	 */
	if (e->cgroup != bpf_get_current_cgroup_id()) {
		bpf_map_delete_elem(&exec_expect, &tid);
		return 0;
	}
	k = bpf_map_lookup_elem(&exec_key, &zero);
	if (k && matches(e, k, p, bprm)) {
		bpf_map_delete_elem(&exec_expect, &tid);
		return 0;
	}
	/* Not what was judged (or not readable: unknown means deny). */
	e->killed = 1;
	bpf_send_signal(SIGKILL);
	return 0;
}

/* A thread that exits takes its unused expectation with it (not a kill's record). */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(cordon_exec_forget, struct task_struct *p)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct cordon_exec_expect *e = bpf_map_lookup_elem(&exec_expect, &tid);

	if (e && !e->killed)
		bpf_map_delete_elem(&exec_expect, &tid);
	return 0;
}
