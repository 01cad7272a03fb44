// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <dirent.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>
#include "cordon.h"
#include "instance.h"
#include "pin.h"
#include "util.h"

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN && (log_verbose() > 0 || getenv("CORDON_BPF_LOG")))
		return vfprintf(stderr, fmt, ap);
	return 0;
}

int pin_ring_create(const char *name, uint32_t bytes)
{
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_RINGBUF;
	a.max_entries = bytes;
	snprintf(a.map_name, sizeof(a.map_name), "%s", name);
	fd = (int)syscall(SYS_bpf, BPF_MAP_CREATE, &a, sizeof(a));
	if (fd >= 0 && fd < 3) {
		/* Never a standard stream's number (a caller started without one), as libbpf. */
		int hi = fcntl(fd, F_DUPFD_CLOEXEC, 3);

		close(fd);
		fd = hi;
	}
	return fd < 0 ? -errno : fd;
}

void pin_quiet_libbpf(void)
{
	libbpf_set_print(quiet);
}

int pin_count_links(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, "link_", 5))
			n++;
	closedir(d);
	return n;
}

int pin_ensure_dir(const char *dir)
{
	const char *top = instance_pin_dir();
	struct statfs sf;
	int r;

	if (mkdir(top, 0700) < 0 && errno != EEXIST) {
		/*
		 * ENOENT or, from sysfs, EPERM: no bpffs at /sys/fs/bpf yet.
		 * Only then: a bpffs mounted over one that is there would
		 * hide every pin below it (the live floor's among them)
		 * while its programs stay attached, judging sessions the
		 * next load knows nothing of.  bpffs answers EPERM itself
		 * for a name it refuses (a dot at its root).
		 */
		r = -errno;
		if (r != -ENOENT && r != -EPERM)
			return r;
		if (statfs("/sys/fs/bpf", &sf) < 0)
			return -errno;
		if (sf.f_type == BPF_FS_MAGIC)
			return r;
		if (mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700") < 0)
			return -errno;
		if (mkdir(top, 0700) < 0 && errno != EEXIST)
			return -errno;
	}
	if (strcmp(dir, top) && mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static int clear(int parent, const char *name, bool recurse)
{
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	int r = 0;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return errno == ENOENT ? 0 : -errno;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (de->d_type == DT_DIR && recurse)
			r = clear(dirfd(d), de->d_name, false) ?: r;
		else if (unlinkat(dirfd(d), de->d_name, 0) < 0)
			r = -errno;
	}
	closedir(d);
	if (unlinkat(parent, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		r = r ?: -errno;
	return r;
}

int pin_clear_dir(const char *dir)
{
	return clear(AT_FDCWD, dir, true);
}

int pin_clear_files(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int r = 0;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' && de->d_type != DT_DIR &&
		    unlinkat(dirfd(d), de->d_name, 0) < 0)
			r = -errno;
	closedir(d);
	if (rmdir(dir) < 0 && errno != ENOENT && errno != ENOTEMPTY && errno != EEXIST)
		r = r ?: -errno;
	return r;
}

/*
 * Links held across a reload.  Unpinning a link detaches its program at
 * once when nothing else holds it, and a running supervisor opens a floor
 * from its maps, not its links: unload-then-load would leave every running
 * session without that floor (and, the LSM floor's unload clearing net/
 * too, without its network floor) until the new programs attach, a window
 * of milliseconds in which an agent's connect or open is not checked.  So
 * every link pinned under the instance's pin directory (instance.h) is
 * opened first and kept open
 * through the reload; afterwards a link whose pin the new load replaced is
 * let go (the new program is attached by then), and one whose pin nothing
 * replaced (another floor's, or this floor's after a failed load) is pinned
 * again where it was: it stays attached, as before the reload.  After a
 * load that succeeded, a link of this floor's own directory that the new
 * object did not replace is let go too: its program is one this build no
 * longer has (an older or newer cordon's), judging from maps no session of
 * this build writes to, and kept attached it would judge every session by
 * them.
 */
#define MAX_HELD 64

struct held {
	int fd;
	char path[PATH_MAX];
};

static size_t hold_dir(const char *dir, struct held *h, size_t n, bool recurse)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return n;
	while ((de = readdir(d)) && n < MAX_HELD) {
		char path[PATH_MAX];

		if (de->d_name[0] == '.' ||
		    (size_t)snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= sizeof(path))
			continue;
		if (de->d_type == DT_DIR) {
			if (recurse)
				n = hold_dir(path, h, n, false);
			continue;
		}
		if (strncmp(de->d_name, "link_", 5))
			continue;
		h[n].fd = bpf_obj_get(path);
		if (h[n].fd < 0)
			continue;
		snprintf(h[n].path, sizeof(h[n].path), "%s", path);
		n++;
	}
	closedir(d);
	return n;
}

/* Pin again what nothing replaced, except in `own` (NULL: everywhere). */
static void release(struct held *h, size_t n, const char *own)
{
	for (size_t i = 0; i < n; i++) {
		if (access(h[i].path, F_OK) < 0) {
			char dir[PATH_MAX], *slash;

			snprintf(dir, sizeof(dir), "%s", h[i].path);
			slash = strrchr(dir, '/');
			if (slash) {
				*slash = 0;
				if (own && !strcmp(dir, own)) {
					close(h[i].fd);
					continue;
				}
				(void)pin_ensure_dir(dir);
			}
			if (bpf_obj_pin(h[i].fd, h[i].path) < 0)
				fprintf(stderr, "cordon: warning: could not pin %s again (%s): "
					"its program is now detached\n", h[i].path, strerror(errno));
		}
		close(h[i].fd);
	}
}

int pin_open_or_load(const struct pin_ops *ops, void **out)
{
	struct held held[MAX_HELD];
	size_t n_held;
	void *h;
	int r;

	pin_quiet_libbpf();
	r = ops->ensure_dir();
	if (r < 0)
		return r;
	h = ops->create();
	if (!h)
		return -ENOMEM;
	if (ops->open_pinned(h) == 0) {
		*out = h;
		return 0;
	}
	ops->close(h);
	/* Absent, partial or stale: start clean, the attached programs held. */
	n_held = hold_dir(instance_pin_dir(), held, 0, true);
	(void)ops->unload();
	r = ops->ensure_dir();
	if (r < 0) {
		release(held, n_held, NULL);
		return r;
	}
	h = ops->create();
	if (!h) {
		release(held, n_held, NULL);
		return -ENOMEM;
	}
	r = ops->load(h);
	if (r < 0) {
		ops->close(h);
		(void)ops->unload();
		release(held, n_held, NULL);
		return r;
	}
	release(held, n_held, ops->dir);
	*out = h;
	return 0;
}
