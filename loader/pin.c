// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <dirent.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <string.h>
#include <sys/stat.h>
#include <bpf/libbpf.h>
#include "cordon.h"
#include "pin.h"
#include "util.h"

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN && (log_verbose() > 0 || getenv("CORDON_BPF_LOG")))
		return vfprintf(stderr, fmt, ap);
	return 0;
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
	struct stat st;

	if (mkdir(CORDON_PIN_DIR, 0700) < 0 && errno != EEXIST) {
		/* ENOENT or, from sysfs, EPERM: no bpffs at /sys/fs/bpf yet. */
		if (errno != ENOENT && errno != EPERM)
			return -errno;
		if (stat("/sys/fs/bpf", &st) < 0)
			return -errno;
		if (mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700") < 0)
			return -errno;
		if (mkdir(CORDON_PIN_DIR, 0700) < 0 && errno != EEXIST)
			return -errno;
	}
	if (strcmp(dir, CORDON_PIN_DIR) && mkdir(dir, 0700) < 0 && errno != EEXIST)
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

int pin_open_or_load(const struct pin_ops *ops, void **out)
{
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
	/* Absent, partial or stale: start clean. */
	(void)ops->unload();
	r = ops->ensure_dir();
	if (r < 0)
		return r;
	h = ops->create();
	if (!h)
		return -ENOMEM;
	r = ops->load(h);
	if (r < 0) {
		ops->close(h);
		(void)ops->unload();
		return r;
	}
	*out = h;
	return 0;
}
