// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The agent's seccomp filters as libseccomp rules (see filters.h): compiled
 * to BPF by tools/seccomp_gen at build time, and by the unit test that
 * checks the prebuilt programs are these rules.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <linux/sched.h>
#include "filters.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/*
 * The seccomp denylist: syscalls a sandboxed agent has no business making,
 * judged on registers only (seccomp cannot read memory without racing the
 * caller).  Each closes a way out of the Landlock domain or into the
 * kernel's attack surface:
 *  - ptrace, process_vm_*: reading or steering another process of the same
 *    uid outside the session (and the supervisor);
 *  - bpf, perf_event_open, userfaultfd: kernel attack surface and the means
 *    to detach or read cordon's own programs;
 *  - the mount API, pivot_root, setns, unshare/clone with namespace flags:
 *    a new mount or user namespace re-roots paths under Landlock's feet and
 *    grants capabilities over it;
 *  - modules, kexec, reboot, swap, acct, syslog, quotactl, vhangup,
 *    lookup_dcookie: root-on-the-host operations (a root agent keeps
 *    capabilities unless the caller drops them);
 *  - io_uring: its operations run in kernel workers that seccomp never sees;
 *  - keyctl/add_key/request_key: the kernel keyrings hold other sessions'
 *    secrets and are not namespaced by path;
 *  - name_to_handle_at/open_by_handle_at: opening by handle skips the path
 *    walk Landlock judges;
 *  - ioctl TIOCSTI/TIOCLINUX: typing into the controlling terminal, i.e.
 *    running commands outside the sandbox.  The request is compared in its
 *    low 32 bits only, as the kernel reads it, so high garbage bits do not
 *    slip past;
 *  - clone3 gets ENOSYS: its flags live in memory seccomp cannot read, and
 *    libc falls back to clone, whose flags are a register;
 *  - any other ABI (int 0x80 i386, x32): syscall numbers differ there, so a
 *    filter written for x86_64 would judge the wrong calls.  libseccomp
 *    answers foreign arches and x32 numbers with the bad-arch action.
 *  - socket(): only AF_UNIX, AF_INET, AF_INET6 and NETLINK_ROUTE.  The
 *    cgroup sock_create program only ever sees inet families, so packet
 *    sockets (sniffing, raw frames), other netlink families (sock_diag lists
 *    the host's sockets; audit, uevents), vsock (the hypervisor), AF_ALG
 *    (kernel crypto attack surface), AF_KEY, bluetooth, CAN, TIPC, RDS,
 *    XDP... are refused here, by the family register.  NETLINK_ROUTE stays:
 *    glibc's getaddrinfo and `ip` need it; it lists interfaces and routes,
 *    and changes need CAP_NET_ADMIN.
 * What it cannot close: an ioctl judged on its object; namespaces made
 * before apply; any syscall not listed (a denylist: new kernel syscalls are
 * allowed until added here); sockets passed in over SCM_RIGHTS.
 */
static const int deny_eperm[] = {
	__NR_ptrace, __NR_process_vm_readv, __NR_process_vm_writev,
	__NR_bpf, __NR_perf_event_open, __NR_userfaultfd,
	__NR_mount, __NR_umount2, __NR_pivot_root, __NR_move_mount, __NR_open_tree,
	__NR_fsopen, __NR_fsconfig, __NR_fsmount, __NR_fspick, __NR_mount_setattr,
	__NR_setns,
	__NR_init_module, __NR_finit_module, __NR_delete_module,
	__NR_kexec_load, __NR_kexec_file_load, __NR_reboot,
	__NR_swapon, __NR_swapoff, __NR_acct, __NR_syslog, __NR_vhangup,
	__NR_quotactl, __NR_lookup_dcookie,
#ifdef __NR_quotactl_fd
	__NR_quotactl_fd,
#endif
	__NR_io_uring_setup, __NR_io_uring_enter, __NR_io_uring_register,
	__NR_keyctl, __NR_add_key, __NR_request_key,
	__NR_name_to_handle_at, __NR_open_by_handle_at,
};

#define NS_FLAGS_CLONE (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | \
			CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET)
#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

int filter_denylist_attrs(scmp_filter_ctx ctx)
{
	int r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(EPERM));

	if (!r)
		r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
	return r > 0 ? -r : r;
}

int filter_denylist_rules(scmp_filter_ctx ctx)
{
	int r = 0;

	for (size_t i = 0; !r && i < ARRAY_LEN(deny_eperm); i++)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), deny_eperm[i], 0);
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), __NR_clone3, 0);
	/* One rule per bit: libseccomp has no "masked not equal". */
	for (unsigned bit = 0; !r && bit < 64; bit++) {
		uint64_t b = 1ULL << bit;

		if (b & NS_FLAGS_CLONE)
			r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), __NR_clone, 1,
					     SCMP_A0(SCMP_CMP_MASKED_EQ, b, b));
		if (!r && (b & (NS_FLAGS_CLONE | CLONE_NEWTIME)))
			r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), __NR_unshare, 1,
					     SCMP_A0(SCMP_CMP_MASKED_EQ, b, b));
	}
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), __NR_ioctl, 1,
				     SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, 0x5412 /* TIOCSTI */));
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), __NR_ioctl, 1,
				     SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, 0x541C /* TIOCLINUX */));
	/* Socket families: every family number but the four allowed ones. */
	for (int fam = 0; !r && fam < 64; fam++) {
		if (fam == AF_UNIX || fam == AF_INET || fam == AF_INET6)
			continue;
		if (fam == AF_NETLINK)
			r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), __NR_socket, 2,
					     SCMP_A0(SCMP_CMP_EQ, (uint64_t)fam),
					     SCMP_A2(SCMP_CMP_NE, 0 /* NETLINK_ROUTE */));
		else
			r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), __NR_socket, 1,
					     SCMP_A0(SCMP_CMP_EQ, (uint64_t)fam));
	}
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), __NR_socket, 1,
				     SCMP_A0(SCMP_CMP_GE, 64));
	return r > 0 ? -r : r;
}

int filter_notify_attrs(scmp_filter_ctx ctx)
{
	/*
	 * Other architectures' system calls would bypass the numbers below: a
	 * 32-bit execve through int 0x80 is refused outright.
	 */
	int r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);

	return r > 0 ? -r : r;
}

int filter_notify_rules(scmp_filter_ctx ctx, unsigned what)
{
	int r = 0;

	if (!r && (what & NOTIFY_EXEC))
		r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(execve), 0);
	if (!r && (what & NOTIFY_EXEC))
		r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(execveat), 0);
	if (!r && (what & NOTIFY_CONNECT))
		r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(connect), 0);
	if (!r && (what & NOTIFY_OPEN))
		r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(open), 0);
	if (!r && (what & NOTIFY_OPEN))
		r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(openat), 0);
	if (!r && (what & NOTIFY_OPEN))
		r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(openat2), 0);
	if (!r && (what & NOTIFY_OPEN))
		r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(creat), 0);
	return r > 0 ? -r : r;
}
