// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The workspace walk of git_guard's plan and end (git_guard_walk.h). */
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

#include "git_guard_walk.h"
#include "util.h"

#define STR_(x) #x
#define STR(x) STR_(x)

static int extend(struct git_guard_walk *w, size_t plen, const char *name)
{
	size_t n = strlen(name);

	if (plen + 1 + n >= sizeof(w->path)) {
		w->path[plen] = 0;
		w->cap = "the path length (PATH_MAX)";
		return -ENAMETOOLONG;
	}
	w->path[plen] = '/';
	memcpy(w->path + plen + 1, name, n + 1);
	return (int)(plen + 1 + n);
}

/*
 * getdents64 on the descriptor, not readdir: fdopendir costs a dup, an
 * fstat and two fcntl per directory, half the walk's system calls (4,900
 * of 9,700 on a 1,600-directory tree).
 */
static int walk_dir(struct git_guard_walk *w, int dfd, size_t plen, bool top)
{
	bool head = false, objects = false, refs = false, repo = false;
	bool objects_any = false, refs_any = false, commondir = false, top_repo = false;
	_cleanup_free_ char *subs = NULL;       /* the subdirectories' names, NUL after each */
	size_t n_subs = 0, subs_len = 0, subs_cap = 0;
	ssize_t got = 0, off = 0;
	int r = 0, fd;

	while (r >= 0) {
		struct dirent64 *de;
		unsigned char type;
		struct stat st;
		int l;

		if (off >= got) {
			got = getdents64(dfd, w->buf, sizeof(w->buf));
			off = 0;
			if (got < 0 && w->skipped) {
				w->skipped(w, -errno);
				break;
			}
			if (got <= 0) {
				r = got < 0 ? -errno : 0;
				break;
			}
		}
		de = (struct dirent64 *)(w->buf + off);
		off += de->d_reclen;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (++w->entries > (w->max_entries ?: GIT_GUARD_MAX_ENTRIES)) {
			w->cap = w->max_entries ? "its cap of directory entries" :
				 "GIT_GUARD_MAX_ENTRIES (" STR(GIT_GUARD_MAX_ENTRIES) " directory entries)";
			r = -E2BIG;
			break;
		}
		type = de->d_type;
		if (type == DT_UNKNOWN) {
			if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
				if (w->skipped && extend(w, plen, de->d_name) >= 0) {
					w->skipped(w, -errno);
					w->path[plen] = 0;
					continue;
				}
				r = -errno;
				break;
			}
			type = (unsigned char)IFTODT(st.st_mode);
		}
		if (!strcmp(de->d_name, ".git") && (type == DT_DIR || type == DT_REG || type == DT_LNK)) {
			repo = true;
			if ((l = extend(w, plen, ".git")) < 0) {
				r = l;
				break;
			}
			if (type != DT_DIR) {
				r = w->gitfile(w, dfd);
			} else if ((fd = openat(dfd, ".git", O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
						O_CLOEXEC)) < 0) {
				r = -errno;
			} else {
				r = w->gitdir(w, fd);
				close(fd);
			}
			w->path[plen] = 0;
			/* The end goes into it too, after this directory is read (one buffer). */
			if (r < 0 || type != DT_DIR || !w->into_gitdirs)
				continue;
		}
		/*
		 * git takes HEAD as a symlink too, objects and refs through one,
		 * and is content with any objects and refs it may search (even
		 * executable files), or a commondir naming where they are.
		 */
		if (type != DT_DIR && !strcmp(de->d_name, "HEAD"))
			head = true;
		objects_any |= !strcmp(de->d_name, "objects");
		refs_any |= !strcmp(de->d_name, "refs");
		commondir |= !strcmp(de->d_name, "commondir");
		if (type == DT_LNK) {
			objects |= !strcmp(de->d_name, "objects");
			refs |= !strcmp(de->d_name, "refs");
		}
		if (type != DT_DIR)
			continue;
		objects |= !strcmp(de->d_name, "objects");
		refs |= !strcmp(de->d_name, "refs");
		l = (int)strlen(de->d_name) + 1;
		if (subs_len + (size_t)l > subs_cap) {
			size_t nc = 2 * subs_cap + 256;
			char *ns = realloc(subs, nc);

			if (!ns) {
				r = -ENOMEM;
				break;
			}
			subs = ns;
			subs_cap = nc;
		}
		memcpy(subs + subs_len, de->d_name, (size_t)l);
		subs_len += (size_t)l;
		n_subs++;
	}
	if (r < 0)
		return r;
	if (!top && head && objects && refs && !w->into_gitdirs)
		return w->gitdir(w, dfd);       /* a bare repository, at w->path */
	/*
	 * One git would take for a repository, of an odd shape, or any in the
	 * end's walk, or the workspace's top itself (a bare repository with
	 * its worktrees inside, in the plan too): handed over, and walked.
	 */
	if (head && ((objects_any && refs_any) || commondir)) {
		r = w->gitdir(w, dfd);
		if (r < 0)
			return r;
		top_repo = top;
	}
	for (size_t o = 0; n_subs--; o += strlen(subs + o) + 1) {
		int l;

		/* The plan does not go through a top repository's objects (its cost); the end does. */
		if (top_repo && !w->into_gitdirs && !strcmp(subs + o, "objects"))
			continue;
		l = extend(w, plen, subs + o);

		if (l < 0 && w->skipped) {
			w->skipped(w, l);       /* w->path: its parent (PATH_MAX) */
			w->cap = NULL;
			continue;
		}
		if (l < 0)
			return l;
		fd = openat(dfd, subs + o, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 && w->skipped) {
			w->skipped(w, -errno);
			w->path[plen] = 0;
			continue;
		}
		if (fd < 0) {
			r = -errno;
			break;
		}
		r = walk_dir(w, fd, (size_t)l, false);
		close(fd);
		if (r < 0)
			return r;       /* w->path names where */
		w->path[plen] = 0;
	}
	if (r < 0)
		return r;
	return repo || top ? w->root(w, plen) : 0;
}

int git_guard_walk(struct git_guard_walk *w, const char *workspace)
{
	_cleanup_close_ int fd = open(workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	size_t n = strlen(workspace);

	if (fd < 0)
		return -errno;
	if (n >= sizeof(w->path))
		return -ENAMETOOLONG;
	memcpy(w->path, workspace, n + 1);
	return walk_dir(w, fd, n, true);
}
