/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What Debian 12's <linux/landlock.h> (Linux 6.1 UAPI: ABI 1 and 2) lacks,
 * and raw syscall wrappers (glibc has none).  Each addition is guarded, so a
 * newer header wins where it has the definition; the values are the
 * kernel's UAPI and never change.
 *
 * The ruleset attribute is cordon's own struct rather than the header's: a
 * struct cannot grow a field under #ifndef, and the kernel reads only the
 * size we pass (copy_struct_from_user), so landlock_abi_attr_size() gives
 * the size each ABI knows.
 */
#ifndef CORDON_LANDLOCK_COMPAT_H
#define CORDON_LANDLOCK_COMPAT_H

#include <errno.h>
#include <linux/landlock.h>
#include <linux/types.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_add_rule
#define __NR_landlock_add_rule 445
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif

#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif

/* ABI 2 (5.19) */
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
/* ABI 3 (6.2) */
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
/* ABI 5 (6.10) */
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif

/*
 * ABI 4 (6.7): TCP port rules.  Newer headers make LANDLOCK_RULE_NET_PORT
 * an enum constant (not testable with #ifdef) but define the access macros
 * in the same release, so those guard the whole group.
 */
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_RULE_NET_PORT 2
struct landlock_net_port_attr {
	__u64 allowed_access;
	__u64 port;
};
#define LANDLOCK_ACCESS_NET_BIND_TCP    (1ULL << 0)
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#endif

/* ABI 6 (6.12): IPC scoping. */
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#endif
#ifndef LANDLOCK_SCOPE_SIGNAL
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif

/* struct landlock_ruleset_attr as of ABI 6 (handled_access_net: ABI 4). */
struct cordon_landlock_ruleset_attr {
	__u64 handled_access_fs;
	__u64 handled_access_net;
	__u64 scoped;
};

static inline size_t landlock_abi_attr_size(int abi)
{
	if (abi >= 6)
		return offsetof(struct cordon_landlock_ruleset_attr, scoped) + sizeof(__u64);
	if (abi >= 4)
		return offsetof(struct cordon_landlock_ruleset_attr, handled_access_net) + sizeof(__u64);
	return sizeof(__u64);
}

/* Every filesystem right each ABI knows (the Landlock docs' table). */
#define LL_FS_ABI1 (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | \
		    LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR | \
		    LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE | \
		    LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | \
		    LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK | \
		    LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK | \
		    LANDLOCK_ACCESS_FS_MAKE_SYM)

/* Rights that may be granted on a non-directory (the rest need a directory). */
#define LL_FS_FILE (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | \
		    LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE | \
		    LANDLOCK_ACCESS_FS_IOCTL_DEV)

static inline __u64 landlock_abi_fs(int abi)
{
	__u64 m = LL_FS_ABI1;

	if (abi >= 2)
		m |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		m |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		m |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return m;
}

static inline __u64 landlock_abi_net(int abi)
{
	return abi >= 4 ? LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP : 0;
}

static inline __u64 landlock_abi_scope(int abi)
{
	return abi >= 6 ? LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL : 0;
}

/* The running kernel's ABI: >= 1, or -errno (ENOSYS: not built, EOPNOTSUPP: disabled). */
static inline int landlock_abi(void)
{
	long r = syscall(__NR_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

	return r < 0 ? -errno : (int)r;
}

static inline int landlock_create_ruleset(const struct cordon_landlock_ruleset_attr *attr,
					  size_t size, __u32 flags)
{
	return (int)syscall(__NR_landlock_create_ruleset, attr, size, flags);
}

static inline int landlock_add_rule(int ruleset_fd, int rule_type, const void *attr, __u32 flags)
{
	return (int)syscall(__NR_landlock_add_rule, ruleset_fd, rule_type, attr, flags);
}

static inline int landlock_restrict_self(int ruleset_fd, __u32 flags)
{
	return (int)syscall(__NR_landlock_restrict_self, ruleset_fd, flags);
}

#endif /* CORDON_LANDLOCK_COMPAT_H */
