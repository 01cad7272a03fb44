// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include "cgroup.h"
#include "cordon.h"
#include "instance.h"
#include "util.h"

void cg_unescape(char *s)
{
	char *w = s;

	for (char *r = s; *r; ) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' &&
		    r[2] >= '0' && r[2] <= '7' && r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)(((r[1] - '0') << 6) | ((r[2] - '0') << 3) | (r[3] - '0'));
			r += 4;
		} else {
			*w++ = *r++;
		}
	}
	*w = 0;
}

int cg_parse_mountinfo(const char *mountinfo, char *out, size_t outlen)
{
	const char *line = mountinfo;

	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char buf[4096], *fields[16], *sep, *save = NULL, *tok;
		int n = 0;

		if (len < sizeof(buf)) {
			memcpy(buf, line, len);
			buf[len] = 0;
			/* "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SRC SUPEROPTS" */
			sep = strstr(buf, " - ");
			if (sep) {
				*sep = 0;
				for (tok = strtok_r(buf, " ", &save); tok && n < 16;
				     tok = strtok_r(NULL, " ", &save))
					fields[n++] = tok;
				if (n >= 5 && strncmp(sep + 3, "cgroup2 ", 8) == 0) {
					cg_unescape(fields[4]);
					if (strlen(fields[4]) + 1 > outlen)
						return -ENAMETOOLONG;
					strcpy(out, fields[4]);
					return 0;
				}
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	return -ENOENT;
}

/*
 * /proc/self/mountinfo, read once per process and mount namespace: a
 * session start asks for the cgroup mounts from three places (the net
 * floor, the LSM floor, the budgets), and the kernel renders the whole
 * mount table each time (~0.1 ms here).  A process that enters another
 * mount namespace (a forked test child, say) reads it afresh.  cordon does
 * not mount or move cgroup hierarchies while it runs; one unmounted under
 * it by someone else makes the paths fail (ENOENT), never name another
 * cgroup.  The text stays valid for the life of the process.
 */
static pthread_mutex_t mountinfo_lock = PTHREAD_MUTEX_INITIALIZER;
static char *mountinfo_text;
static ino_t mountinfo_ns;

int cg_mountinfo(const char **text)
{
	struct stat ns;
	char *fresh = NULL;
	int r = 0;

	if (stat("/proc/self/ns/mnt", &ns) < 0)
		ns.st_ino = 0;
	pthread_mutex_lock(&mountinfo_lock);
	if (!mountinfo_text || mountinfo_ns != ns.st_ino) {
		r = read_file("/proc/self/mountinfo", &fresh, 1 << 20);
		if (r >= 0) {
			/* An older text may still be in use: kept, not freed. */
			mountinfo_text = fresh;
			mountinfo_ns = ns.st_ino;
		}
	}
	*text = mountinfo_text;
	pthread_mutex_unlock(&mountinfo_lock);
	return r < 0 ? r : 0;
}

int cg_find_root(char *out, size_t outlen)
{
	const char *text;
	int r = cg_mountinfo(&text);

	if (r < 0)
		return r;
	return cg_parse_mountinfo(text, out, outlen);
}

int cg_level(const char *root, const char *path)
{
	size_t rl = strlen(root);
	int level = 0;

	while (rl > 1 && root[rl - 1] == '/')
		rl--;
	if (strncmp(root, path, rl) != 0 || (path[rl] != 0 && path[rl] != '/'))
		return -EINVAL;
	for (const char *p = path + rl; *p; p++)
		if (*p == '/' && p[1] && p[1] != '/')
			level++;
	return level;
}

int cg_id(const char *path, uint64_t *id)
{
	struct {
		struct file_handle fh;
		uint64_t cgid;
	} h = { .fh.handle_bytes = sizeof(uint64_t) };
	int mount_id;

	/* cgroupfs file handles are exactly the 64-bit cgroup (kernfs) id. */
	if (name_to_handle_at(AT_FDCWD, path, &h.fh, &mount_id, 0) < 0)
		return -errno;
	if (h.fh.handle_bytes != sizeof(uint64_t))
		return -EPROTO;
	*id = h.cgid;
	return 0;
}

int cg_mkdir(const char *path)
{
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

int cg_attach_pid(const char *path, int pid)
{
	char file[PATH_MAX], num[32];

	if ((size_t)snprintf(file, sizeof(file), "%s/cgroup.procs", path) >= sizeof(file))
		return -ENAMETOOLONG;
	snprintf(num, sizeof(num), "%d", pid);
	return write_file(file, num);
}

int cg_kill(const char *path)
{
	char file[PATH_MAX];
	_cleanup_free_ char *procs = NULL;
	int r;

	if ((size_t)snprintf(file, sizeof(file), "%s/cgroup.kill", path) >= sizeof(file))
		return -ENAMETOOLONG;
	if (write_file(file, "1") == 0)
		return 0;
	/* Before 5.14: signal each member; new forks are caught on the next pass. */
	snprintf(file, sizeof(file), "%s/cgroup.procs", path);
	r = read_file(file, &procs, 1 << 20);
	if (r < 0)
		return r;
	for (char *p = procs; *p; ) {
		long pid = strtol(p, &p, 10);
		if (pid > 0)
			(void)kill((pid_t)pid, SIGKILL);
		while (*p == '\n')
			p++;
		if (pid <= 0)
			break;
	}
	return 0;
}

int cg_destroy(const char *path)
{
	struct timespec ts = { 0, 2 * 1000 * 1000 };

	for (int i = 0; i < 500; i++) {
		if (rmdir(path) == 0 || errno == ENOENT)
			return 0;
		if (errno != EBUSY)
			return -errno;
		(void)cg_kill(path);
		nanosleep(&ts, NULL);
	}
	return -EBUSY;
}

int cg_session_parent(char *parent, size_t len, uint32_t *level, uint64_t *parent_id)
{
	char root[PATH_MAX], buf[PATH_MAX];
	int r = cg_find_root(root, sizeof(root));

	if (r < 0)
		return r;
	if ((size_t)snprintf(buf, sizeof(buf), "%s/%s", root, instance_cgroup_parent()) >= sizeof(buf))
		return -ENAMETOOLONG;
	r = cg_mkdir(buf);
	if (r < 0)
		return r;
	r = cg_level(root, buf);
	if (r < 0)
		return r;
	*level = (uint32_t)r + 1;
	if (parent && (size_t)snprintf(parent, len, "%s", buf) >= len)
		return -ENAMETOOLONG;
	return cg_id(buf, parent_id);
}
