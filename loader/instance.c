// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The floor instance this process serves: names, paths and who may pick one (instance.h). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>
#include "cordon.h"
#include "instance.h"
#include "util.h"

/*
 * Set once, before any other thread (instance_init from main, or the first
 * accessor through pthread_once), read-only after: the one process-wide
 * setting every path of the floor and the run-time state derives from.
 */
static struct {
	char name[INSTANCE_NAME_MAX + 1];
	char pin_dir[64];
	char net_pin_dir[80];
	char cgroup_parent[32];
	char run_dir[64];
	char open_logs_dir[80];
} inst;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int init_r = 1;  /* 1: not yet */
static char init_why[256];

bool instance_name_ok(const char *name)
{
	size_t n = strlen(name);

	if (n < 1 || n > INSTANCE_NAME_MAX)
		return false;
	/*
	 * No '/' (nesting), '-' (another instance's "-unix" parent), '.'
	 * (bpffs refuses it in names at its root once a preloaded iterator has
	 * set the root's sticky bit).
	 */
	for (size_t i = 0; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9') ||
		      name[i] == '_'))
			return false;
	return true;
}

bool instance_cgroup_in_session(const char *cg)
{
	for (const char *p = cg; (p = strstr(p, "/" CORDON_CGROUP_PARENT)); p++) {
		const char *q = p + 1 + strlen(CORDON_CGROUP_PARENT);

		if (*q == '_') {
			q++;
			while ((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') || *q == '_')
				q++;
		}
		if (*q == '/' || !strncmp(q, "-unix/", 6))
			return true;
	}
	return false;
}

int instance_session_run_dir_any(const char *base, const char *name)
{
	_cleanup_close_ int fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent *de;
	DIR *d;
	int r = 0;

	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (faccessat(fd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
		return 1;
	if (errno != ENOENT)
		return -errno;
	d = fdopendir(TAKE_FD(fd));
	if (!d)
		return -errno;
	while (r == 0 && (de = readdir(d))) {
		char p[PATH_MAX];

		if (de->d_name[0] != '.' || !instance_name_ok(de->d_name + 1))
			continue;
		snprintf(p, sizeof(p), "%s/%s", de->d_name, name);
		if (faccessat(dirfd(d), p, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
			r = 1;
		else if (errno != ENOENT)
			r = -errno;
	}
	closedir(d);
	return r;
}

/* Whether this process sits in a session's or connector's cgroup of any instance. */
static bool in_session(void)
{
	char *cg = NULL;
	bool r;

	/* Unreadable: taken as inside, so that the name is refused. */
	if (read_file("/proc/self/cgroup", &cg, 1 << 16) < 0)
		return true;
	r = instance_cgroup_in_session(cg);
	free(cg);
	return r;
}

static int set_paths(const char *name)
{
	snprintf(inst.name, sizeof(inst.name), "%s", name);
	if (!*name) {
		snprintf(inst.pin_dir, sizeof(inst.pin_dir), "%s", CORDON_PIN_DIR);
		snprintf(inst.net_pin_dir, sizeof(inst.net_pin_dir), "%s", CORDON_NET_PIN_DIR);
		snprintf(inst.cgroup_parent, sizeof(inst.cgroup_parent), "%s", CORDON_CGROUP_PARENT);
		snprintf(inst.run_dir, sizeof(inst.run_dir), "%s", CORDON_RUN_DIR);
		snprintf(inst.open_logs_dir, sizeof(inst.open_logs_dir), "%s", CORDON_OPEN_LOGS_DIR);
		return 0;
	}
	snprintf(inst.pin_dir, sizeof(inst.pin_dir), "%s_%s", CORDON_PIN_DIR, name);
	snprintf(inst.net_pin_dir, sizeof(inst.net_pin_dir), "%s/net", inst.pin_dir);
	snprintf(inst.cgroup_parent, sizeof(inst.cgroup_parent), "%s_%s", CORDON_CGROUP_PARENT, name);
	snprintf(inst.run_dir, sizeof(inst.run_dir), "%s/.%s", CORDON_RUN_DIR, name);
	snprintf(inst.open_logs_dir, sizeof(inst.open_logs_dir), "%s/.%s", CORDON_OPEN_LOGS_DIR, name);
	return 0;
}

static int init(char *why, size_t wlen)
{
	const char *name = getenv(INSTANCE_ENV);

	if (!name || !*name)
		return set_paths("");
	if (!instance_name_ok(name)) {
		snprintf(why, wlen, INSTANCE_ENV "='%.32s': not an instance name (1 to %d of a-z, "
			 "0-9, _)", name, INSTANCE_NAME_MAX);
		return -EINVAL;
	}
	if (getauxval(AT_SECURE)) {
		snprintf(why, wlen, INSTANCE_ENV " is not honoured for a setuid or setgid cordon");
		return -EPERM;
	}
	if (in_session()) {
		snprintf(why, wlen, INSTANCE_ENV " is not honoured inside a cordon session");
		return -EPERM;
	}
	return set_paths(name);
}

static void init_once(void)
{
	init_r = init(init_why, sizeof(init_why));
}

int instance_init(char *why, size_t wlen)
{
	pthread_once(&once, init_once);
	if (init_r < 0 && why)
		snprintf(why, wlen, "%s", init_why);
	return init_r;
}

static void need(void)
{
	if (instance_init(NULL, 0) < 0) {
		log_err("%s", init_why);
		exit(125);
	}
}

const char *instance_name(void)
{
	need();
	return inst.name;
}

const char *instance_pin_dir(void)
{
	need();
	return inst.pin_dir;
}

const char *instance_net_pin_dir(void)
{
	need();
	return inst.net_pin_dir;
}

const char *instance_cgroup_parent(void)
{
	need();
	return inst.cgroup_parent;
}

const char *instance_run_dir(void)
{
	need();
	return inst.run_dir;
}

const char *instance_open_logs_dir(void)
{
	need();
	return inst.open_logs_dir;
}
