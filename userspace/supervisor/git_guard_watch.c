// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The watched files' state, read without following a symlink (git_guard_watch.h). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "git_guard_watch.h"
#include "util.h"

/* ROOT relative to the workspace, opened without following any symlink. */
int git_guard_watch_open_root(int wsfd, const char *rel)
{
	struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
					   RESOLVE_BENEATH };

	int fd = *rel ? (int)syscall(SYS_openat2, wsfd, rel, &how, sizeof(how)) :
			fcntl(wsfd, F_DUPFD_CLOEXEC, 3);

	return fd < 0 ? -errno : fd;
}

/* The directory component of REL ("" for none) into COMP. */
const char *git_guard_watch_split(const char *rel, char *comp, size_t clen)
{
	const char *slash = strchr(rel, '/');

	if (!slash) {
		comp[0] = 0;
		return rel;
	}
	snprintf(comp, clen, "%.*s", (int)(slash - rel), rel);
	return slash + 1;
}

/*
 * The state of ROOT/REL, never through a symlink: a symlink, as the
 * directory component or the file, is W_OTHER and not looked into.  *PFD
 * gets the file's directory (-1 when it is not one); with KEEP (the bytes
 * left to keep, taken from), a file up to GIT_GUARD_SAVE_MAX is kept
 * whole.  0 or -errno.
 */
int git_guard_watch_probe(int rootfd, const char *rel, struct git_guard_wstate *s, size_t *keep,
			  int *pfd)
{
	unsigned char buf[65536];
	char comp[64];
	const char *leaf = git_guard_watch_split(rel, comp, sizeof(comp));
	_cleanup_close_ int dfd = -1, fd = -1;
	EVP_MD_CTX *md = NULL;
	size_t got = 0;
	ssize_t n;
	int r = 0;

	memset(s, 0, sizeof(*s));
	*pfd = -1;
	if (comp[0]) {
		if (fstatat(rootfd, comp, &s->dst, AT_SYMLINK_NOFOLLOW) < 0)
			return errno == ENOENT ? 0 : -errno;
		if (!S_ISDIR(s->dst.st_mode)) {
			s->dir = W_OTHER;
			return 0;
		}
		dfd = openat(rootfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	} else {
		dfd = fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
	}
	if (dfd < 0)
		return -errno;
	s->dir = W_DIR;
	if (fstatat(dfd, leaf, &s->st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno != ENOENT)
			return -errno;
		*pfd = TAKE_FD(dfd);
		return 0;
	}
	if (!S_ISREG(s->st.st_mode)) {
		s->leaf = W_OTHER;
		*pfd = TAKE_FD(dfd);
		return 0;
	}
	s->leaf = W_REG;
	fd = openat(dfd, leaf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &s->st) < 0)
		return -errno;
	if ((size_t)s->st.st_size > GIT_GUARD_HASH_MAX) {
		s->big = true;
		*pfd = TAKE_FD(dfd);
		return 0;
	}
	if (keep && (size_t)s->st.st_size <= GIT_GUARD_SAVE_MAX &&
	    (size_t)s->st.st_size <= *keep) {
		if (!(s->data = malloc((size_t)s->st.st_size + 1)))
			return -ENOMEM;
		*keep -= (size_t)s->st.st_size;
	}
	if (!(md = EVP_MD_CTX_new()) || EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1) {
		r = -ENOMEM;
		goto out;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		if (EVP_DigestUpdate(md, buf, (size_t)n) != 1) {
			r = -EIO;
			goto out;
		}
		if (s->data && got + (size_t)n <= (size_t)s->st.st_size)
			memcpy(s->data + got, buf, (size_t)n);
		got += (size_t)n;
	}
	if (n < 0)
		r = -errno;
	else if (EVP_DigestFinal_ex(md, s->sha, NULL) != 1)
		r = -EIO;
	else if (got != (size_t)s->st.st_size)
		r = -EAGAIN;            /* it changed under the read: nothing runs at the plan or the end */
out:
	EVP_MD_CTX_free(md);
	if (r < 0) {
		free(s->data);
		s->data = NULL;
		return r;
	}
	*pfd = TAKE_FD(dfd);
	return 0;
}

bool git_guard_watch_same_obj(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_mode == b->st_mode;
}

bool git_guard_watch_same_leaf(const struct git_guard_wstate *a,
			       const struct git_guard_wstate *b)
{
	if (a->leaf != b->leaf)
		return false;
	if (a->leaf == W_REG)
		return !a->big && !b->big && !memcmp(a->sha, b->sha, sizeof(a->sha)) &&
		       a->st.st_mode == b->st.st_mode;
	return a->leaf == W_ABSENT || git_guard_watch_same_obj(&a->st, &b->st);
}

/* The original back, as it was (content, mode, owner), in DFD; 0 or -errno. */
int git_guard_watch_restore(int dfd, const char *leaf, const struct git_guard_wstate *p)
{
	_cleanup_close_ int fd = openat(dfd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
					O_CLOEXEC, 0600);
	int r;

	if (fd < 0)
		return -errno;
	r = write_all(fd, p->data, (size_t)p->st.st_size);
	if (r < 0)
		return r;
	if (fchown(fd, p->st.st_uid, p->st.st_gid) < 0 || fchmod(fd, p->st.st_mode & 07777) < 0)
		return -errno;
	return 0;
}
