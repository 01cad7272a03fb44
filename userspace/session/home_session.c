// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The agent's home layer for one session (home_session.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "home.h"
#include "home_session.h"
#include "progress.h"
#include "util.h"
#include "world.h"

/*
 * The agent's home layer (home.h), opened and mounted detached before the
 * view is built.  A second session of the same user and profile finds the
 * layer held: it gets a layer of its own below HOME_LAYER_BASE-sessions,
 * removed when it ends (said at start; its home changes are not kept).
 */
int open_home_layer(struct sup *s, int *fd)
{
	const char *profile = s->pol->name && *s->pol->name ? s->pol->name : "policy";
	char why[PATH_MAX + 128] = "";
	int r = home_layer_open(NULL, s->home, s->uid, s->gid, profile, &s->home_layer, why,
				sizeof(why));

	if (r == -EBUSY) {
		snprintf(s->home_tmp, sizeof(s->home_tmp), HOME_LAYER_BASE "-sessions/%s", s->name);
		r = mkdir_p(HOME_LAYER_BASE "-sessions", 0700);
		r = r ?: home_layer_open(s->home_tmp, s->home, s->uid, s->gid, profile,
					 &s->home_layer, why, sizeof(why));
	}
	r = r ?: home_layer_mount(&s->home_layer, fd, why, sizeof(why));
	if (r < 0)
		snprintf(s->world_error, sizeof(s->world_error), "the agent's home layer: %s%s",
			 why[0] ? why : strerror(-r), r == -EOPNOTSUPP || r == -EINVAL ?
			 " (" HOME_LAYER_BASE " must be on a filesystem that can hold an overlay's "
			 "upper layer: ext4, xfs, btrfs or tmpfs)" : "");
	return r;
}

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return (type == FTW_DP ? rmdir(path) : unlink(path)) < 0 && errno != ENOENT ? -1 : 0;
}

static int count_changes(void *arg)
{
	struct home_tally *t = arg;

	return home_diff_count(t->s->home_layer.dir, t->s->home, &t->n);
}

/*
 * What the agent changed outside the workspace: said when the session ends.
 * Compared with the real home, seen from the host's namespace (in the
 * view, the home is the layer itself).
 */
void home_summary_start(const struct sup *s, struct home_tally *t)
{
	*t = (struct home_tally){ .s = s };
	if (s->home_layer.lock_fd >= 0 && !s->opt->quiet)
		(void)world_call_host_start(&s->world, &t->call, count_changes, t);
}

void home_summary(struct home_tally *t)
{
	const struct sup *s = t->s;
	size_t n;

	if (world_call_join(&t->call) < 0 || !(n = t->n))
		return;
	if (s->home_tmp[0])
		say(s->opt->quiet, "the agent changed %zu path%s in its home, in a layer of this "
		    "session's own, now discarded (another session held the layer)", n,
		    n == 1 ? "" : "s");
	else
		say(s->opt->quiet, "the agent's home layer differs from your home in %zu path%s: "
		    "`cordon home diff --user %s --profile %s` shows them, `cordon home apply` "
		    "takes them", n, n == 1 ? "" : "s", s->user,
		    s->pol->name && *s->pol->name ? s->pol->name : "policy");
}

/* After the session's last process: the layer's lock, and a session-own layer removed. */
void close_home_layer(struct sup *s)
{
	home_layer_close(&s->home_layer);
	if (s->home_tmp[0] &&
	    nftw(s->home_tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) < 0)
		log_warn("run: %s: cannot remove this session's home layer: %m", s->home_tmp);
	s->home_tmp[0] = '\0';
}
