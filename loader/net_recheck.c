// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The exec recheck's user side: what the kernel must see, armed per thread (net.h). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cgroup.h"
#include "net.h"
#include "net_state.h"
#include "pin.h"
#include "net.skel.h"
#include "net.id.h"
#include "policy.h"
#include "util.h"


bool net_unix_gate(const struct net *n)
{
	return n && n->unix_gate;
}

bool net_exec_recheck(const struct net *n)
{
	return n && n->exec_recheck;
}

uint64_t net_exec_hash(const struct cordon_exec_key *k, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	struct cordon_sip s;
	uint64_t m, last = 0;
	size_t i;

	cordon_sip_init(&s, k);
	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&m, p + i, 8);
		cordon_sip_word(&s, m);
	}
	for (size_t j = 0; i + j < len; j++)
		last |= (uint64_t)p[i + j] << (8 * j);
	return cordon_sip_final(&s, last, len);
}

/*
 * What the exec recheck compares (bpf/exec_recheck.bpf.c), built from what
 * was judged: argv as read (with the "" the kernel puts in an empty argv),
 * the path as the kernel forms bprm->filename from execve/execveat's
 * arguments, and the binary's inode and filesystem where stat reports the
 * kernel's own numbers (ext2/3/4, XFS, tmpfs; btrfs: inode only, its
 * devices are per subvolume).  Elsewhere (overlayfs, FUSE, network
 * filesystems) no inode is compared, and the kernel's comparison says so
 * in its comment.
 */
int net_exec_expect(const struct net *nt, bool at, int dirfd, const char *path, char *const *argv,
		    const char *canon, struct cordon_exec_expect *e)
{
	return net_exec_expect_known(nt, at, dirfd, path, argv, canon, NULL, NULL, e);
}

int net_exec_expect_known(const struct net *nt, bool at, int dirfd, const char *path,
			  char *const *argv, const char *canon, const struct stat *known,
			  const struct statfs *known_fs, struct cordon_exec_expect *e)
{
	const struct cordon_exec_key *k = &nt->exec_key;
	char name[PATH_MAX + 32];
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, len0 = 1;
	struct statfs sf;
	struct stat st;
	int n;

	memset(e, 0, sizeof(*e));
	if (!at || dirfd == AT_FDCWD || path[0] == '/')
		n = snprintf(name, sizeof(name), "%s", path);
	else if (!path[0])
		n = snprintf(name, sizeof(name), "/dev/fd/%d", dirfd);
	else
		n = snprintf(name, sizeof(name), "/dev/fd/%d/%s", dirfd, path);
	if (n < 0 || (size_t)n >= sizeof(name) || (size_t)n >= CORDON_EXEC_NAME_MAX)
		return -ENAMETOOLONG;
	for (int i = 0; argv && argv[i]; i++)
		len += strlen(argv[i]) + 1;
	buf = malloc(len + 1);
	if (!buf)
		return -ENOMEM;
	if (!len) {
		buf[0] = '\0';         /* the kernel runs an empty argv as { "" } */
		len = 1;
	} else {
		size_t o = 0;

		for (int i = 0; argv[i]; i++) {
			size_t l = strlen(argv[i]) + 1;

			memcpy(buf + o, argv[i], l);
			o += l;
		}
		len0 = strlen(argv[0]) + 1;
	}
	e->name_len = (uint32_t)n;
	e->name_hash = net_exec_hash(k, name, (size_t)n);
	e->argv_len = (uint32_t)len;
	e->argv_hash = net_exec_hash(k, buf, len);
	e->tail_len = (uint32_t)(len - len0);
	e->tail_hash = net_exec_hash(k, buf + len0, len - len0);
	if (known && known_fs) {
		st = *known;
		sf = *known_fs;
	}
	if ((known && known_fs) || (stat(canon, &st) == 0 && statfs(canon, &sf) == 0)) {
		switch ((unsigned long)sf.f_type) {
		case EXT4_SUPER_MAGIC:
		case XFS_SUPER_MAGIC:
		case TMPFS_MAGIC:
			e->flags = CORDON_EXEC_INODE | CORDON_EXEC_DEV;
			break;
		case BTRFS_SUPER_MAGIC:
			e->flags = CORDON_EXEC_INODE;
			break;
		}
		e->ino = st.st_ino;
		e->magic = (unsigned long)sf.f_type;
		e->dev = (uint32_t)(major(st.st_dev) << 20 | minor(st.st_dev));
	}
	return 0;
}

int net_exec_arm(struct net *n, uint32_t tid, const struct cordon_exec_expect *e)
{
	if (!net_exec_recheck(n))
		return -EOPNOTSUPP;
	if (bpf_map_update_elem(n->fd_exec_expect, &tid, e, BPF_ANY))
		return -errno;
	return 0;
}

void net_exec_disarm(struct net *n, uint32_t tid)
{
	struct cordon_exec_expect e;

	/* A kill's mark stays for net_exec_killed. */
	if (!bpf_map_lookup_elem(n->fd_exec_expect, &tid, &e) && !e.killed)
		(void)bpf_map_delete_elem(n->fd_exec_expect, &tid);
}

int net_exec_killed(struct net *n, uint32_t tid)
{
	struct cordon_exec_expect e;

	if (bpf_map_lookup_elem(n->fd_exec_expect, &tid, &e))
		return -errno;
	if (!e.killed)
		return 0;
	(void)bpf_map_delete_elem(n->fd_exec_expect, &tid);
	return 1;
}
