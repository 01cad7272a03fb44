// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The agent's home layer (userspace/session/home.c) on real overlay mounts, in a
 * private mount namespace of this process (nothing reaches the host): the
 * real home read through the view, writes landing in the layer only,
 * credential stores absent (not merely denied) and a recreated ~/.ssh
 * showing only itself, one session per layer, and diff and apply: what
 * they list, what apply copies, and what it refuses (a store, a directory
 * holding one, a symlink on either side, a running session).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/mount.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "home.h"

#define AGENT 12345
#define PROFILE "unit/test"     /* sanitised to unit_test */

struct fx {
	char root[64];
	char home[128], base[128], view[128], layer_dir[PATH_MAX - 16], upper[PATH_MAX];
	struct home_layer l;
	bool mounted;
};

static void path(char *out, size_t len, const char *dir, const char *rel)
{
	assert_true((size_t)snprintf(out, len, "%s/%s", dir, rel) < len);
}

static void put(const char *dir, const char *rel, const char *text)
{
	char p[PATH_MAX];
	FILE *fp;

	path(p, sizeof(p), dir, rel);
	fp = fopen(p, "w");
	assert_non_null(fp);
	fputs(text, fp);
	assert_int_equal(fclose(fp), 0);
}

static bool read_is(const char *dir, const char *rel, const char *want)
{
	char p[PATH_MAX], buf[256] = "";
	FILE *fp;
	size_t n;

	path(p, sizeof(p), dir, rel);
	if (!(fp = fopen(p, "r")))
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	buf[n] = 0;
	fclose(fp);
	return !strcmp(buf, want);
}

static int lstat_errno(const char *dir, const char *rel)
{
	char p[PATH_MAX];
	struct stat st;

	path(p, sizeof(p), dir, rel);
	return lstat(p, &st) == 0 ? 0 : errno;
}

static bool listed(const char *dir, const char *rel, const char *name)
{
	char p[PATH_MAX];
	struct dirent *de;
	bool found = false;
	DIR *d;

	path(p, sizeof(p), dir, rel);
	d = opendir(p);
	assert_non_null(d);
	while ((de = readdir(d)))
		found |= !strcmp(de->d_name, name);
	closedir(d);
	return found;
}

static void mkd(const char *dir, const char *rel)
{
	char p[PATH_MAX];

	path(p, sizeof(p), dir, rel);
	assert_int_equal(mkdir(p, 0755), 0);
}

/* Act as the agent's user for what the view creates. */
static void as_agent(bool on)
{
	(void)setfsgid(on ? AGENT : 0);
	(void)setfsuid(on ? AGENT : 0);
}

/* rm -rf or chown -R (WHAT) of PATH. */
static void sh(const char *what, const char *p)
{
	char cmd[PATH_MAX + 64];

	snprintf(cmd, sizeof(cmd), "%s '%s'", what, p);
	assert_int_equal(system(cmd), 0);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	snprintf(f->root, sizeof(f->root), "/var/tmp/cordon-home-test.XXXXXX");
	if (!mkdtemp(f->root) || chmod(f->root, 0755) < 0)
		return -1;
	snprintf(f->home, sizeof(f->home), "%s/home", f->root);
	snprintf(f->base, sizeof(f->base), "%s/base", f->root);
	snprintf(f->view, sizeof(f->view), "%s/view", f->root);
	mkd(f->root, "home");
	mkd(f->root, "view");
	mkd(f->home, ".ssh");
	put(f->home, ".ssh/id_rsa", "SECRET KEY");
	mkd(f->home, ".config");
	mkd(f->home, ".config/gh");
	put(f->home, ".config/gh/hosts.yml", "oauth_token: SECRET");
	put(f->home, ".config/app.conf", "a=1");
	put(f->home, "notes.txt", "hello");
	put(f->home, "old.txt", "to be deleted");
	mkd(f->home, "docs");
	put(f->home, "docs/readme", "read me");
	/* A directory outside the home, and a symlink in the home to it. */
	mkd(f->root, "outside");
	path(f->layer_dir, sizeof(f->layer_dir), f->home, "out");
	assert_int_equal(symlink("../outside", f->layer_dir), 0);
	sh("chown -R 12345:12345", f->home);
	assert_int_equal(chmod(f->home, 0750), 0);
	assert_int_equal(home_layer_path(f->base, AGENT, PROFILE, f->layer_dir, sizeof(f->layer_dir)), 0);
	path(f->upper, sizeof(f->upper), f->layer_dir, "upper");
	f->l.lock_fd = -1;
	*state = f;
	return 0;
}

static void unmount_view(struct fx *f)
{
	if (f->mounted)
		assert_int_equal(umount2(f->view, MNT_DETACH), 0);
	f->mounted = false;
	home_layer_close(&f->l);
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	as_agent(false);
	if (f->mounted)
		(void)umount2(f->view, MNT_DETACH);
	home_layer_close(&f->l);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->root);
	if (system(cmd) != 0)
		fprintf(stderr, "# could not remove %s\n", f->root);
	free(f);
	return 0;
}

/* Open the layer, mount it detached, attach it at the view. */
static void start(struct fx *f)
{
	char why[512] = "";
	int fd, r;

	r = home_layer_open(f->base, f->home, AGENT, AGENT, PROFILE, &f->l, why, sizeof(why));
	if (r < 0)
		fail_msg("home_layer_open: %s", why);
	r = home_layer_mount(&f->l, &fd, why, sizeof(why));
	if (r < 0)
		fail_msg("home_layer_mount: %s", why);
	assert_int_equal(syscall(SYS_move_mount, fd, "", AT_FDCWD, f->view, MOVE_MOUNT_F_EMPTY_PATH), 0);
	close(fd);
	f->mounted = true;
}

static void layer_is_private_and_named(void **state)
{
	struct fx *f = *state;
	struct stat st;
	char p[PATH_MAX];

	start(f);
	assert_non_null(strstr(f->layer_dir, "/12345-unit_test"));
	assert_int_equal(stat(f->base, &st), 0);
	assert_int_equal(st.st_uid, 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	/* The view's root looks like the home: owner and mode. */
	assert_int_equal(stat(f->view, &st), 0);
	assert_int_equal(st.st_uid, AGENT);
	assert_int_equal(st.st_mode & 07777, 0750);
	path(p, sizeof(p), f->layer_dir, "work");
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_uid, 0);
	assert_int_equal(home_layer_path(NULL, 1, "", p, sizeof(p)), -EINVAL);
}

static void reads_the_home_writes_the_layer(void **state)
{
	struct fx *f = *state;

	start(f);
	assert_true(read_is(f->view, "notes.txt", "hello"));
	assert_true(read_is(f->view, "docs/readme", "read me"));
	assert_true(read_is(f->view, ".config/app.conf", "a=1"));
	as_agent(true);
	put(f->view, "new.txt", "agent wrote this");
	put(f->view, "notes.txt", "changed");
	as_agent(false);
	assert_true(read_is(f->view, "notes.txt", "changed"));
	assert_true(read_is(f->upper, "new.txt", "agent wrote this"));
	assert_true(read_is(f->upper, "notes.txt", "changed"));
	assert_int_equal(lstat_errno(f->home, "new.txt"), ENOENT);
	assert_true(read_is(f->home, "notes.txt", "hello"));
}

static void stores_are_absent(void **state)
{
	struct fx *f = *state;

	start(f);
	assert_int_equal(lstat_errno(f->view, ".ssh"), ENOENT);
	assert_int_equal(lstat_errno(f->view, ".ssh/id_rsa"), ENOENT);
	assert_false(listed(f->view, ".", ".ssh"));
	assert_int_equal(lstat_errno(f->view, ".config/gh"), ENOENT);
	assert_int_equal(lstat_errno(f->view, ".config/gh/hosts.yml"), ENOENT);
	assert_false(listed(f->view, ".config", "gh"));
	/* Their neighbours stay. */
	assert_true(listed(f->view, ".config", "app.conf"));
	assert_true(listed(f->view, ".", "notes.txt"));
	/* A parent the home lacks is hidden at the parent, not shown empty. */
	assert_int_equal(lstat_errno(f->view, ".docker"), ENOENT);
	assert_false(listed(f->view, ".", ".docker"));
	/* The real stores are untouched. */
	assert_true(read_is(f->home, ".ssh/id_rsa", "SECRET KEY"));
}

static void a_recreated_store_shows_only_itself(void **state)
{
	struct fx *f = *state;
	char p[PATH_MAX];
	struct stat st;

	start(f);
	as_agent(true);
	mkd(f->view, ".ssh");
	put(f->view, ".ssh/mine", "agent's");
	as_agent(false);
	assert_true(listed(f->view, ".ssh", "mine"));
	assert_false(listed(f->view, ".ssh", "id_rsa"));
	assert_int_equal(lstat_errno(f->view, ".ssh/id_rsa"), ENOENT);
	/* Deleting it brings nothing back. */
	path(p, sizeof(p), f->view, ".ssh/mine");
	assert_int_equal(unlink(p), 0);
	path(p, sizeof(p), f->view, ".ssh");
	assert_int_equal(rmdir(p), 0);
	assert_int_equal(lstat_errno(f->view, ".ssh"), ENOENT);
	/* Made again and kept across sessions: still only the agent's. */
	as_agent(true);
	mkd(f->view, ".ssh");
	as_agent(false);
	unmount_view(f);
	start(f);
	assert_int_equal(stat(p, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_false(listed(f->view, ".ssh", "id_rsa"));
	assert_int_equal(lstat_errno(f->view, ".ssh/id_rsa"), ENOENT);
}

/*
 * Mark the layer's mask directory; is the mark still there?  (A directory
 * made anew may get the inode number of the one removed: the mark does
 * not survive.)
 */
static void mark_mask(struct fx *f)
{
	char p[PATH_MAX];

	path(p, sizeof(p), f->layer_dir, "mask");
	assert_int_equal(setxattr(p, "user.cordon-test", "1", 1, 0), 0);
}

static bool mask_marked(struct fx *f)
{
	char p[PATH_MAX], v[4];

	path(p, sizeof(p), f->layer_dir, "mask");
	return getxattr(p, "user.cordon-test", v, sizeof(v)) == 1;
}

/*
 * The mask is kept from one session to the next while it is exactly what
 * the home as it is now needs, and made anew as soon as it is not: a
 * store's missing parent that the home now has, a mirrored directory whose
 * mode changed, an entry no build makes.  Each time the view hides every
 * store and shows everything else.
 */
static void mask_kept_only_while_current(void **state)
{
	struct fx *f = *state;
	char p[PATH_MAX];

	start(f);
	mark_mask(f);
	unmount_view(f);
	start(f);
	assert_true(mask_marked(f));    /* kept: nothing changed */
	assert_int_equal(lstat_errno(f->view, ".ssh"), ENOENT);
	unmount_view(f);

	/* ~/.docker, hidden whole while missing, now exists with a neighbour of the store. */
	mkd(f->home, ".docker");
	put(f->home, ".docker/config.json", "{\"auths\": \"SECRET\"}");
	put(f->home, ".docker/daemon.json", "{}");
	sh("chown -R 12345:12345", f->home);
	start(f);
	assert_false(mask_marked(f));   /* made anew */
	mark_mask(f);
	assert_true(listed(f->view, ".docker", "daemon.json"));
	assert_int_equal(lstat_errno(f->view, ".docker/config.json"), ENOENT);
	unmount_view(f);

	/* A mirrored directory's mode changes in the home. */
	path(p, sizeof(p), f->home, ".config");
	assert_int_equal(chmod(p, 0700), 0);
	start(f);
	assert_false(mask_marked(f));
	mark_mask(f);
	path(p, sizeof(p), f->view, ".config");
	{
		struct stat st;

		assert_int_equal(stat(p, &st), 0);
		assert_int_equal(st.st_mode & 07777, 0700);
	}
	assert_int_equal(lstat_errno(f->view, ".config/gh"), ENOENT);
	unmount_view(f);

	/* An entry no build makes (a whiteout over a file the agent should see). */
	path(p, sizeof(p), f->layer_dir, "mask/notes.txt");
	assert_int_equal(mknod(p, S_IFCHR | 0000, makedev(0, 0)), 0);
	start(f);
	assert_false(mask_marked(f));
	assert_true(read_is(f->view, "notes.txt", "hello"));
	assert_int_equal(lstat_errno(f->view, ".ssh/id_rsa"), ENOENT);
	unmount_view(f);

	/* A store's whiteout replaced by a directory: rebuilt, the store hidden again. */
	mark_mask(f);
	path(p, sizeof(p), f->layer_dir, "mask/.ssh");
	assert_int_equal(unlink(p), 0);
	assert_int_equal(mkdir(p, 0700), 0);
	start(f);
	assert_false(mask_marked(f));
	assert_int_equal(lstat_errno(f->view, ".ssh"), ENOENT);
	assert_false(listed(f->view, ".", ".ssh"));
}

static void one_session_per_layer(void **state)
{
	struct fx *f = *state;
	struct home_layer second;
	char why[512] = "";

	start(f);
	assert_int_equal(home_layer_open(f->base, f->home, AGENT, AGENT, PROFILE, &second, why,
					 sizeof(why)), -EBUSY);
	assert_non_null(strstr(why, "in use by another session"));
	assert_int_equal(second.lock_fd, -1);
	home_layer_close(&second);
	/* Another profile is another layer. */
	assert_int_equal(home_layer_open(f->base, f->home, AGENT, AGENT, "other", &second, why,
					 sizeof(why)), 0);
	home_layer_close(&second);
	unmount_view(f);
	start(f);
	assert_true(f->mounted);
}

struct seen {
	int n;
	char path[16][64];
	enum home_change_kind kind[16];
	bool store[16];
	long long size[16];
};

static int collect(void *ctx, const struct home_change *c)
{
	struct seen *s = ctx;

	assert_true(s->n < 16);
	snprintf(s->path[s->n], sizeof(s->path[0]), "%s", c->path);
	s->kind[s->n] = c->kind;
	s->store[s->n] = c->store;
	s->size[s->n] = c->kind == HOME_DELETED ? c->old_size : c->size;
	s->n++;
	return 0;
}

static int find(const struct seen *s, const char *p)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->path[i], p))
			return i;
	return -1;
}

/* The changes the diff and apply tests share, made through the view. */
static void agent_changes(struct fx *f)
{
	char p[PATH_MAX];
	int fd;

	as_agent(true);
	put(f->view, "new.txt", "twelve bytes");
	put(f->view, "notes.txt", "changed");
	path(p, sizeof(p), f->view, "old.txt");
	assert_int_equal(unlink(p), 0);
	mkd(f->view, ".ssh");
	put(f->view, ".ssh/authorized_keys", "agent key");
	mkd(f->view, ".docker");
	put(f->view, ".docker/config.json", "{\"credsStore\": \"evil\"}");
	/* Copied up, left the same: not a change. */
	path(p, sizeof(p), f->view, "docs/readme");
	fd = open(p, O_RDWR);
	assert_true(fd >= 0);
	close(fd);
	as_agent(false);
}

static void diff_lists_added_modified_deleted(void **state)
{
	struct fx *f = *state;
	struct seen s = { 0 };
	int i;

	start(f);
	agent_changes(f);
	assert_true(read_is(f->upper, "docs/readme", "read me"));     /* it was copied up */
	assert_int_equal(home_diff(f->layer_dir, f->home, collect, &s), 0);
	i = find(&s, "new.txt");
	assert_true(i >= 0);
	assert_int_equal(s.kind[i], HOME_ADDED);
	assert_int_equal(s.size[i], 12);
	i = find(&s, "notes.txt");
	assert_true(i >= 0);
	assert_int_equal(s.kind[i], HOME_MODIFIED);
	i = find(&s, "old.txt");
	assert_true(i >= 0);
	assert_int_equal(s.kind[i], HOME_DELETED);
	assert_int_equal(s.size[i], 13);
	i = find(&s, ".ssh");
	assert_true(i >= 0);
	assert_true(s.store[i]);
	i = find(&s, ".docker/config.json");
	assert_true(i >= 0);
	assert_int_equal(s.kind[i], HOME_ADDED);
	assert_true(s.store[i]);
	assert_int_equal(find(&s, "docs/readme"), -1);
	assert_int_equal(find(&s, "docs"), -1);
	/* Nothing of the mask is in the layer. */
	assert_int_equal(find(&s, ".config/gh"), -1);
	assert_int_equal(home_diff("/nonexistent/layer", f->home, collect, &s), -ENOENT);
}

/*
 * The session's end counts without a stat where the home has no such
 * directory (home_diff_count): the same number as home_diff reports, over
 * added, modified and deleted files, stores, a new tree with a
 * subdirectory and a symlink, and a whiteout inside it.
 */
static void count_is_the_diffs(void **state)
{
	struct fx *f = *state;
	struct seen s = { 0 };
	char p[PATH_MAX];
	size_t n = 99;

	start(f);
	agent_changes(f);
	as_agent(true);
	mkd(f->view, "tree");
	mkd(f->view, "tree/sub");
	put(f->view, "tree/a", "a");
	put(f->view, "tree/sub/b", "b");
	put(f->view, "tree/sub/gone", "c");
	path(p, sizeof(p), f->view, "tree/sub/gone");
	assert_int_equal(unlink(p), 0);
	path(p, sizeof(p), f->view, "tree/link");
	assert_int_equal(symlink("a", p), 0);
	as_agent(false);
	assert_int_equal(home_diff(f->layer_dir, f->home, collect, &s), 0);
	assert_true(find(&s, "tree/sub/b") >= 0);
	assert_true(find(&s, "tree/link") >= 0);
	assert_int_equal(find(&s, "tree/sub/gone"), -1);
	assert_int_equal(home_diff_count(f->layer_dir, f->home, &n), 0);
	assert_int_equal(n, (size_t)s.n);
	assert_int_equal(home_diff_count("/nonexistent/layer", f->home, &n), -ENOENT);
}

static void apply_copies_and_refuses(void **state)
{
	struct fx *f = *state;
	char why[1024] = "", p[PATH_MAX];
	struct stat st;

	start(f);
	agent_changes(f);
	/* A session holds the layer: refused. */
	assert_int_equal(home_apply(f->layer_dir, f->home, "new.txt", why, sizeof(why)), -EBUSY);
	assert_non_null(strstr(why, "running"));
	assert_int_equal(lstat_errno(f->home, "new.txt"), ENOENT);
	unmount_view(f);

	assert_int_equal(home_apply(f->layer_dir, f->home, "new.txt", why, sizeof(why)), 0);
	assert_true(read_is(f->home, "new.txt", "twelve bytes"));
	path(p, sizeof(p), f->home, "new.txt");
	assert_int_equal(lstat(p, &st), 0);
	assert_int_equal(st.st_uid, AGENT);
	assert_int_equal(lstat_errno(f->upper, "new.txt"), ENOENT);   /* dropped from the layer */
	/* Absolute below the home; a deletion. */
	path(p, sizeof(p), f->home, "old.txt");
	assert_int_equal(home_apply(f->layer_dir, f->home, p, why, sizeof(why)), 0);
	assert_int_equal(lstat_errno(f->home, "old.txt"), ENOENT);
	/* Not chosen: not copied. */
	assert_true(read_is(f->home, "notes.txt", "hello"));

	/* Stores: by name, below one, and a directory holding one. */
	assert_int_equal(home_apply(f->layer_dir, f->home, ".ssh", why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "credential store"));
	assert_int_equal(home_apply(f->layer_dir, f->home, ".ssh/authorized_keys", why, sizeof(why)), -EPERM);
	assert_int_equal(home_apply(f->layer_dir, f->home, ".docker", why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, ".docker/config.json"));
	assert_int_equal(lstat_errno(f->home, ".docker"), ENOENT);
	assert_true(read_is(f->home, ".ssh/id_rsa", "SECRET KEY"));
	assert_false(listed(f->home, ".ssh", "authorized_keys"));

	/* A symlink in the layer on the way: never followed. */
	path(p, sizeof(p), f->upper, "esc");
	assert_int_equal(symlink("/etc", p), 0);
	assert_int_equal(home_apply(f->layer_dir, f->home, "esc/passwd", why, sizeof(why)), -ELOOP);
	/* A symlink at a store's parent name: refused whole. */
	path(p, sizeof(p), f->upper, ".docker");
	sh("rm -rf", p);
	assert_int_equal(symlink("/var/tmp", p), 0);
	assert_int_equal(home_apply(f->layer_dir, f->home, ".docker", why, sizeof(why)), -EPERM);
	/* A symlink in the home on the way (home/out -> ../outside): nothing written there. */
	path(p, sizeof(p), f->upper, "out");
	assert_int_equal(mkdir(p, 0755), 0);
	put(p, "f", "through the link");
	sh("chown -R 12345:12345", p);
	assert_int_equal(home_apply(f->layer_dir, f->home, "out/f", why, sizeof(why)), -ELOOP);
	assert_int_equal(lstat_errno(f->root, "outside/f"), ENOENT);
	/* Outside the home, and no change. */
	assert_int_equal(home_apply(f->layer_dir, f->home, "/etc/passwd", why, sizeof(why)), -EXDEV);
	assert_int_equal(home_apply(f->layer_dir, f->home, "../x", why, sizeof(why)), -EINVAL);
	assert_int_equal(home_apply(f->layer_dir, f->home, "docs/missing", why, sizeof(why)), -ENOENT);
}

static void discard_empties_the_layer(void **state)
{
	struct fx *f = *state;
	char why[512] = "";

	start(f);
	as_agent(true);
	put(f->view, "new.txt", "x");
	as_agent(false);
	assert_int_equal(home_discard(f->layer_dir, why, sizeof(why)), -EBUSY);
	unmount_view(f);
	assert_int_equal(home_discard(f->layer_dir, why, sizeof(why)), 0);
	assert_int_equal(lstat_errno(f->layer_dir, "upper"), ENOENT);
	start(f);
	assert_int_equal(lstat_errno(f->view, "new.txt"), ENOENT);
	assert_true(read_is(f->view, "notes.txt", "hello"));
}

/*
 * The agent nests directories far deeper than a descriptor limit (and
 * widens one with many), links out of the layer at every level: discard
 * removes it all with 64 descriptors, and no link's target is touched.
 * (Holding a descriptor a level, it failed with EMFILE.)
 */
static void discard_a_tree_deeper_than_the_fd_limit(void **state)
{
	struct fx *f = *state;
	struct rlimit was, low;
	char why[512] = "", outside[PATH_MAX];
	int fd, next;

	start(f);
	unmount_view(f);
	path(outside, sizeof(outside), f->root, "outside");
	assert_true(mkdir(outside, 0755) == 0 || errno == EEXIST);
	put(outside, "keep", "kept");
	fd = open(f->upper, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	for (int i = 0; i < 2000; i++) {
		assert_int_equal(symlinkat(outside, fd, "out"), 0);
		assert_int_equal(mkdirat(fd, "d", 0755), 0);
		if (i == 1000)
			for (int k = 0; k < 300; k++) {
				char n[16];

				snprintf(n, sizeof(n), "w%d", k);
				assert_int_equal(mkdirat(fd, n, 0755), 0);
			}
		next = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		assert_true(next >= 0);
		close(fd);
		fd = next;
	}
	close(fd);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &was), 0);
	low = (struct rlimit){ 64, was.rlim_max };
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	fd = home_discard(f->layer_dir, why, sizeof(why));
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &was), 0);
	if (fd != 0)
		fail_msg("home_discard: %d: %s", fd, why);
	assert_int_equal(lstat_errno(f->layer_dir, "upper"), ENOENT);
	assert_true(read_is(outside, "keep", "kept"));
}

static int group_setup(void **state)
{
	if (geteuid() != 0) {
		printf("# SKIP: needs root (overlay mounts, whiteouts)\n");
		exit(77);
	}
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		printf("# SKIP: no private mount namespace: %m\n");
		exit(77);
	}
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(layer_is_private_and_named, setup, teardown),
		cmocka_unit_test_setup_teardown(reads_the_home_writes_the_layer, setup, teardown),
		cmocka_unit_test_setup_teardown(stores_are_absent, setup, teardown),
		cmocka_unit_test_setup_teardown(a_recreated_store_shows_only_itself, setup, teardown),
		cmocka_unit_test_setup_teardown(mask_kept_only_while_current, setup, teardown),
		cmocka_unit_test_setup_teardown(one_session_per_layer, setup, teardown),
		cmocka_unit_test_setup_teardown(diff_lists_added_modified_deleted, setup, teardown),
		cmocka_unit_test_setup_teardown(count_is_the_diffs, setup, teardown),
		cmocka_unit_test_setup_teardown(apply_copies_and_refuses, setup, teardown),
		cmocka_unit_test_setup_teardown(discard_empties_the_layer, setup, teardown),
		cmocka_unit_test_setup_teardown(discard_a_tree_deeper_than_the_fd_limit, setup, teardown),
	};

	return cmocka_run_group_tests(tests, group_setup, NULL);
}
