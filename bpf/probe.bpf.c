// SPDX-License-Identifier: GPL-2.0
/*
 * Trivial programs the doctor loads to learn, by trying, what this kernel
 * accepts.  Each one changes nothing: it returns the verdict it was given.
 * The loader enables one program at a time (autoload), so a kernel that
 * refuses LSM programs can still be asked about cgroup-bpf.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("lsm/file_open")
int BPF_PROG(probe_lsm, struct file *file, int ret)
{
	return ret;
}

/* Written by probe_connect4, so that its read is not optimised away. */
__u64 probe_cgroup_level;

/*
 * cgroup-bpf as the network floor uses it: a connect4 program that reads
 * the calling task's cgroup through the task's BTF pointer (bpf/net.bpf.c,
 * caller_sid), which needs the kernel's BTF and the helper in cgroup
 * programs.
 */
SEC("cgroup/connect4")
int probe_connect4(struct bpf_sock_addr *ctx)
{
	struct task_struct *t = bpf_get_current_task_btf();

	probe_cgroup_level = t->cgroups->dfl_cgrp->level;
	return 1;
}
