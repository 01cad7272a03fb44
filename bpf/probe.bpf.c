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

SEC("cgroup/connect4")
int probe_connect4(struct bpf_sock_addr *ctx)
{
	return 1;
}
