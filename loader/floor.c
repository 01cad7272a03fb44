// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The kernel floor's loader: load once, pin, reuse; sessions as map entries.
 *
 * Pinning keeps the programs attached after the cordon that loaded them
 * exits, so a session start costs map updates only.  The pinned config map
 * carries a hash of the BPF object: a floor built from another object is
 * unpinned and loaded afresh rather than trusted.
 *
 * Failure is all or nothing: if any program refuses to load or attach,
 * every link made so far is destroyed and every pin removed, so the kernel
 * never runs half a floor that cordon would report as whole.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <bpf/btf.h>
#include "cgroup.h"
#include "floor.h"
#include "floor_state.h"
#include "floor.skel.h"
#include "floor.id.h"
#include "pin.h"
#include "policy.h"
#include "instance.h"
#include "util.h"



static const struct {
	const char *pin;  /* below the instance's pin directory */
	size_t off;       /* offset of the fd in struct floor */
} map_pins[] = {
#define M(n, field) { n, offsetof(struct floor, field) }
	M("config", fd_config),
	M("sessions", fd_sessions),
	M("fs_rules", fd_rules),
	M("events", fd_events),
	M("counters", fd_counters),
	M("session_events", fd_sess_events),
	M("tree_gen", fd_tree_gen),
#undef M
};



uint32_t floor_kdev(uint64_t st_dev)
{
	return (major(st_dev) << 20) | minor(st_dev);
}

static int *fd_at(struct floor *f, size_t i)
{
	return (int *)((char *)f + map_pins[i].off);
}

static uint64_t build_id(void);

uint64_t floor_build_id(void)
{
	return build_id();
}

static uint64_t build_id(void)
{
	return floor_BUILD_ID;     /* build/floor.id.h */
}

/* bpffs at /sys/fs/bpf, mounting it if it is not there. */
/* A map's pin: PATH_MAX bytes at out. */
static const char *map_pin(char *out, size_t i)
{
	snprintf(out, PATH_MAX, "%s/%s", instance_pin_dir(), map_pins[i].pin);
	return out;
}

static int ensure_bpffs(void)
{
	return pin_ensure_dir(instance_pin_dir());
}

int floor_unload(void)
{
	/* Everything cordon pinned, the network floor's net/ included. */
	return pin_clear_dir(instance_pin_dir());
}

/*
 * The LSM floor's own pins, for a reload of a stale one: the network
 * floor in net/ is not this floor's to remove (it may be current, and
 * sessions use it).
 */
static int floor_unload_own(void)
{
	return pin_clear_files(instance_pin_dir());
}

int floor_cgroup_parent(char *out, size_t len)
{
	char root[PATH_MAX];
	int r = cg_find_root(root, sizeof(root));

	if (r < 0)
		return r;
	if ((size_t)snprintf(out, len, "%s/%s", root, instance_cgroup_parent()) >= len)
		return -ENAMETOOLONG;
	return 0;
}

static void close_fds(struct floor *f)
{
	for (size_t i = 0; i < ARRAY_SIZE(map_pins); i++)
		if (*fd_at(f, i) >= 0 && !f->skel)
			close(*fd_at(f, i));
}

void floor_close(struct floor *f)
{
	if (!f)
		return;
	close_fds(f);
	for (size_t i = 0; i < f->n_links; i++)
		bpf_link__destroy(f->links[i]);
	floor_bpf__destroy(f->skel);
	free(f);
}

static struct floor *floor_new(void)
{
	struct floor *f = calloc(1, sizeof(*f));

	if (f)
		for (size_t i = 0; i < ARRAY_SIZE(map_pins); i++)
			*fd_at(f, i) = -1;
	return f;
}

/*
 * How many arguments the running kernel's LSM hook `name` takes (bpf_lsm_<name>
 * in its BTF), -1 if it has no such hook.
 */
static int hook_arity(const struct btf *btf, const char *name)
{
	const struct btf_type *t;
	char fn[128];
	int id;

	snprintf(fn, sizeof(fn), "bpf_lsm_%s", name);
	id = btf ? btf__find_by_name_kind(btf, fn, BTF_KIND_FUNC) : -1;
	if (id <= 0)
		return -1;
	t = btf__type_by_id(btf, btf__type_by_id(btf, id)->type);
	return t && btf_is_func_proto(t) ? (int)btf_vlen(t) : -1;
}

/*
 * Programs that exist in two layouts, or for hooks only some kernels have:
 * keep the ones this kernel has.  The bpf hook takes a fourth argument from
 * 6.16; inode_set_acl and inode_remove_acl exist from 6.2 (before, an ACL
 * change comes through inode_setxattr).  Without the kernel's BTF the
 * defaults are the older kernels'.
 */
static void select_programs(struct floor_bpf *skel)
{
	struct btf *btf = btf__load_vmlinux_btf();

	if (hook_arity(btf, "bpf") >= 4)
		bpf_program__set_autoload(skel->progs.cordon_bpf, false);
	else
		bpf_program__set_autoload(skel->progs.cordon_bpf_kernel_arg, false);
	if (hook_arity(btf, "inode_set_acl") < 0)
		bpf_program__set_autoload(skel->progs.cordon_inode_set_acl, false);
	if (hook_arity(btf, "inode_remove_acl") < 0)
		bpf_program__set_autoload(skel->progs.cordon_inode_remove_acl, false);
	btf__free(btf);
}

/* Open every pinned map; 0 only if the floor there is whole and ours. */
static int open_pinned(struct floor *f)
{
	struct cordon_config cfg;
	char pin[PATH_MAX];
	uint32_t zero = 0;

	for (size_t i = 0; i < ARRAY_SIZE(map_pins); i++) {
		*fd_at(f, i) = bpf_obj_get(map_pin(pin, i));
		if (*fd_at(f, i) < 0)
			return -ENOENT;
	}
	if (bpf_map_lookup_elem(f->fd_config, &zero, &cfg) || cfg.build_id != build_id())
		return -ESTALE;
	/* A parent removed and made again has a new id: strays would pass as hosts. */
	{
		uint32_t level = 0;
		uint64_t parent_id = 0;

		if (cg_session_parent(NULL, 0, &level, &parent_id) < 0 || level != cfg.session_level ||
		    parent_id != cfg.parent_id)
			return -ESTALE;
	}
	/*
	 * Every program's link must be pinned: a floor missing a hook is not the
	 * floor.  Counted against what the loader pinned (the same object, by
	 * build id, on the same kernel), without opening the object again: that
	 * would parse it and the kernel's BTF on every session start.
	 */
	{
		int n = pin_count_links(instance_pin_dir());

		if (n < 0)
			return n;
		if (!cfg.n_links || (uint32_t)n != cfg.n_links)
			return -ENOENT;
	}
	f->pinned = true;
	return 0;
}

static int load(struct floor *f, bool pin)
{
	struct cordon_config cfg = { .build_id = build_id() };
	struct bpf_program *prog;
	uint32_t zero = 0;
	char path[PATH_MAX];
	int r;

	{
		uint64_t parent_id = 0;

		r = cg_session_parent(NULL, 0, &cfg.session_level, &parent_id);
		cfg.parent_id = parent_id;
	}
	if (r < 0)
		return r;
	f->skel = floor_bpf__open();
	if (!f->skel)
		return -errno;
	select_programs(f->skel);
	r = floor_bpf__load(f->skel);
	if (r)
		return r;
	bpf_object__for_each_program(prog, f->skel->obj) {
		struct bpf_link *link;

		if (!bpf_program__autoload(prog))
			continue;       /* the other layout of a hook */
		link = bpf_program__attach(prog);

		if (!link)
			return -errno;
		if (pin) {
			snprintf(path, sizeof(path), "%s/link_%s", instance_pin_dir(),
				 bpf_program__name(prog));
			r = bpf_link__pin(link, path);
			if (r) {
				bpf_link__destroy(link);
				return r;
			}
		}
		/* Closing the fd detaches an unpinned link; a pinned one stays. */
		if (f->n_links >= ARRAY_SIZE(f->links)) {
			bpf_link__destroy(link);
			return -E2BIG;
		}
		f->links[f->n_links++] = link;
	}
	f->fd_config = bpf_map__fd(f->skel->maps.cordon_config);
	f->fd_sessions = bpf_map__fd(f->skel->maps.cordon_sessions);
	f->fd_rules = bpf_map__fd(f->skel->maps.cordon_fs_rules);
	f->fd_events = bpf_map__fd(f->skel->maps.cordon_events);
	f->fd_counters = bpf_map__fd(f->skel->maps.cordon_counters);
	f->fd_sess_events = bpf_map__fd(f->skel->maps.cordon_session_events);
	f->fd_tree_gen = bpf_map__fd(f->skel->maps.cordon_tree_gen);
	cfg.n_links = (uint32_t)f->n_links;
	if (bpf_map_update_elem(f->fd_config, &zero, &cfg, 0))
		return -errno;
	if (pin)
		for (size_t i = 0; i < ARRAY_SIZE(map_pins); i++)
			if (bpf_obj_pin(*fd_at(f, i), map_pin(path, i)))
				return -errno;
	f->pinned = pin;
	return 0;
}

static void *floor_create(void)
{
	return floor_new();
}

static int floor_open_pinned(void *h)
{
	return open_pinned(h);
}

static int floor_load_pinned(void *h)
{
	return load(h, true);
}

static void floor_close_any(void *h)
{
	floor_close(h);
}

int floor_open(struct floor **out)
{
	const struct pin_ops ops = {
		.create = floor_create, .open_pinned = floor_open_pinned, .load = floor_load_pinned,
		.close = floor_close_any, .unload = floor_unload_own, .ensure_dir = ensure_bpffs,
		.dir = instance_pin_dir(),
	};
	void *h = NULL;
	int r = pin_open_or_load(&ops, &h);

	if (r == 0)
		*out = h;
	return r;
}

int floor_load_unpinned(struct floor **out)
{
	struct floor *f = floor_new();
	int r;

	if (!f)
		return -ENOMEM;
	pin_quiet_libbpf();
	r = load(f, false);
	if (r < 0) {
		floor_close(f);
		return r;
	}
	*out = f;
	return 0;
}

/* --- compiling a policy into map entries -------------------------------- */

/*
 * Files enumerated under a session's protected directories at most: the
 * bound on what one session can take of the shared rule map through a
 * protected directory the host filled (beyond it the directory's own entry
 * still covers every path through it; only a hard link to a file past the
 * bound, made before the session, goes unseen).
 */
#define CORDON_PROTECTED_BUDGET 20000

struct entry {
	struct cordon_fs_key key;
	struct cordon_fs_rule rule;
};

struct entries {
	struct entry *e;
	size_t n, cap;
	uint32_t policy_id;
	int err;
	size_t protected_budget;    /* files enumerated under protected dirs */
	bool links_guarded;         /* fs.protected_hardlinks is on */
	int host_root;              /* "/" of the host's mount namespace, or -1 */
};

static int add_entry(struct entries *es, const struct stat *st, const struct pol_fs_entry *pe)
{
	struct entry *e;

	if (es->n == es->cap) {
		size_t ncap = es->cap ? es->cap * 2 : 256;
		struct entry *n = realloc(es->e, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		es->e = n;
		es->cap = ncap;
	}
	e = &es->e[es->n++];
	memset(e, 0, sizeof(*e));
	e->key.policy_id = es->policy_id;
	e->key.dev = floor_kdev(st->st_dev);
	e->key.ino = st->st_ino;
	e->rule.allow = pe->allow;
	e->rule.deny = pe->deny;
	e->rule.escalate = pe->escalate;
	e->rule.allow_rule = pe->allow ? pe->rule_id : 0;
	e->rule.deny_rule = pe->deny ? pe->rule_id : 0;
	if (pe->invariant)
		e->rule.flags |= CORDON_RULE_INVARIANT;
	return 0;
}

bool floor_link_guarded(const struct stat *st, bool protected_hardlinks)
{
	mode_t m = st->st_mode;

	if (S_ISDIR(m))
		return true;    /* link(2) refuses a directory to every caller */
	if (!protected_hardlinks || st->st_uid != 0)
		return false;
	/* fs/namei.c may_linkat: a non-owner without CAP_FOWNER links only a
	 * regular file, not setuid, not setgid-executable, that it may both
	 * read and write (an ACL's grant shows in the group bits, its mask). */
	if (!S_ISREG(m) || m & S_ISUID || (m & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP))
		return true;
	return (m & 0006) != 0006 && (m & 0060) != 0060;
}

bool floor_root_only_dir(const struct stat *st)
{
	return S_ISDIR(st->st_mode) && st->st_uid == 0 && !(st->st_mode & 0011);
}

/* fs.protected_hardlinks as the kernel has it now; unreadable counts as off. */
static bool protected_hardlinks(void)
{
	char c = '0';
	int fd = open("/proc/sys/fs/protected_hardlinks", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (read(fd, &c, 1) != 1)
			c = '0';
		close(fd);
	}
	return c == '1';
}

/*
 * Every object under a protected directory that someone other than root
 * could hard-link gets the deny-all entry itself, so that a hard link to
 * it elsewhere, made before the session, is still found by the walk's
 * first lookup; a path through the directory finds the directory's own
 * entry by the walk (and a walk longer than CORDON_WALK_DEPTH is denied).
 * Bounded in depth and count; beyond the bound the directory's own entry
 * still covers every path that goes through it.
 *
 * Only what others could link is keyed (floor_link_guarded), and a
 * directory only root can search is not entered (floor_root_only_dir):
 * nobody else can name, so link, anything below it.  Without that, a
 * session keyed every audit log, audit key and home layer in cordon's own
 * state and every live session's run directory: its entries grew with the
 * host's history and with the sessions alive, and the shared rule map
 * (CORDON_MAX_FS_RULES) held some forty sessions of the default profile
 * (docs/benchmarks.md, Scale).  Now a session's entries are those of its
 * policy and of the user's own files under protected paths.
 * Attack: the agent, or the user's other processes before the session,
 * hard-link a protected object into the workspace to reach it by a path
 * the policy allows.  Closed for every object a non-root process can link
 * (what fs.protected_hardlinks allows it, or everything when it is off).
 * What it cannot close: a link made while the object was still linkable
 * (another owner or wider modes, narrowed later: cordon makes its own
 * files root's and narrow from the start), and links root on the host
 * makes (trusted); the agent's root in a session cannot name the objects
 * at all, their directories being denied to it.
 */
static int enumerate(struct entries *es, int dirfd, const struct pol_fs_entry *pe, int depth)
{
	DIR *d;
	struct dirent *de;
	int r = 0;

	if (depth > 16)
		return 0;
	d = fdopendir(dirfd);
	if (!d) {
		close(dirfd);
		return 0;
	}
	while ((de = readdir(d)) && r == 0 && es->protected_budget) {
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		es->protected_budget--;
		if (!floor_link_guarded(&st, es->links_guarded))
			r = add_entry(es, &st, pe);
		if (r == 0 && S_ISDIR(st.st_mode) && !floor_root_only_dir(&st)) {
			int fd = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (fd >= 0)
				r = enumerate(es, fd, pe, depth + 1);
		}
	}
	closedir(d);
	return r;
}

/*
 * A protected object (a credential store) as the host has it, when the
 * rules are built in a session's view where it is absent or another object
 * (userspace/session/world.h: the home layer whites the stores out): its inode is
 * keyed too, so a hard link to it elsewhere (made before the session, in
 * the workspace) is still refused.
 */
static int on_host_entry(struct entries *es, const struct pol_fs_entry *pe, const struct stat *seen)
{
	struct stat st;
	int r, fd;

	if (es->host_root < 0 || pe->path[0] != '/' ||
	    fstatat(es->host_root, pe->path + 1, &st, 0) < 0 ||
	    (seen && st.st_dev == seen->st_dev && st.st_ino == seen->st_ino))
		return 0;
	r = add_entry(es, &st, pe);
	if (r == 0 && S_ISDIR(st.st_mode)) {
		fd = openat(es->host_root, pe->path + 1, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0)
			r = enumerate(es, fd, pe, 0);
	}
	return r;
}

static int on_fs_entry(void *ctx, const struct pol_fs_entry *pe)
{
	struct entries *es = ctx;
	struct stat st;
	int r;

	if (stat(pe->path, &st) < 0)    /* nothing there now: nothing to key */
		return pe->protected_object ? on_host_entry(es, pe, NULL) : 0;
	r = add_entry(es, &st, pe);
	if (r == 0 && pe->protected_object)
		r = on_host_entry(es, pe, &st);
	if (r == 0 && pe->protected_object && S_ISDIR(st.st_mode)) {
		int fd = open(pe->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (fd >= 0)
			r = enumerate(es, fd, pe, 0);
	}
	return r;
}

static int cmp_key(const void *a, const void *b)
{
	return memcmp(&((const struct entry *)a)->key, &((const struct entry *)b)->key,
		      sizeof(struct cordon_fs_key));
}

/* Sort and merge entries for the same object: masks OR together. */
static void merge(struct entries *es)
{
	size_t o = 0;

	qsort(es->e, es->n, sizeof(*es->e), cmp_key);
	for (size_t i = 0; i < es->n; i++) {
		if (o && !cmp_key(&es->e[o - 1], &es->e[i])) {
			struct cordon_fs_rule *a = &es->e[o - 1].rule, *b = &es->e[i].rule;

			if (b->deny && !(a->flags & CORDON_RULE_INVARIANT))
				a->deny_rule = b->deny_rule;
			if (b->allow && !a->allow)
				a->allow_rule = b->allow_rule;
			a->allow |= b->allow;
			a->deny |= b->deny;
			a->escalate |= b->escalate;
			a->flags |= b->flags;
			continue;
		}
		es->e[o++] = es->e[i];
	}
	es->n = o;
}

/*
 * How many rule-map entries a session of policy P takes, compiled as
 * floor_session_create_at would (rule roots resolved to inodes, protected
 * directories enumerated, entries for one object merged), without a floor:
 * what sizes the shared rule map against the sessions it must hold.
 */
int floor_compile_count(const struct policy *p, int host_root, size_t *n)
{
	struct entries es = { .protected_budget = CORDON_PROTECTED_BUDGET, .host_root = host_root,
			      .links_guarded = protected_hardlinks() };
	int r;

	r = pol_compile_fs(p, on_fs_entry, &es);
	if (r == 0) {
		merge(&es);
		*n = es.n;
	}
	free(es.e);
	return r;
}

static bool policy_id_used(struct floor *f, uint32_t id)
{
	uint64_t key, next;
	struct cordon_session s;
	void *prev = NULL;

	while (bpf_map_get_next_key(f->fd_sessions, prev, &next) == 0) {
		if (bpf_map_lookup_elem(f->fd_sessions, &next, &s) == 0 && s.policy_id == id)
			return true;
		key = next;
		prev = &key;
	}
	return false;
}

/*
 * Remove the session's rules: in batches (one system call for all, where
 * the kernel has BPF_MAP_DELETE_BATCH), then one by one for whatever a
 * batch left (a key already gone stops a batch).
 */
static void remove_rules(struct floor *f, struct floor_session *s)
{
	size_t done = 0;

	while (done < s->n_keys) {
		uint32_t count = (uint32_t)(s->n_keys - done);

		if (bpf_map_delete_batch(f->fd_rules, &s->keys[done], &count, NULL) == 0 && count)
			done += count;
		else
			(void)bpf_map_delete_elem(f->fd_rules, &s->keys[done++]);
	}
}

static void session_free(struct floor_session *s)
{
	if (!s)
		return;
	ring_buffer__free(s->rb);
	if (s->rb_fd >= 0)
		close(s->rb_fd);
	free(s->keys);
	free(s);
}

int floor_session_create(struct floor *f, const struct policy *p, const char *name,
			 struct floor_session **out)
{
	return floor_session_create_at(f, p, name, -1, out);
}

int floor_session_create_at(struct floor *f, const struct policy *p, const char *name,
			    int host_root, struct floor_session **out)
{
	struct entries es = { .protected_budget = CORDON_PROTECTED_BUDGET, .host_root = host_root,
			      .links_guarded = protected_hardlinks() };
	struct cordon_session sess = {};
	struct floor_session *s;
	char parent[PATH_MAX], root[PATH_MAX];
	uint32_t zero = 0;
	struct cordon_config cfg;
	int r, level;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->rb_fd = -1;
	r = cg_find_root(root, sizeof(root));
	r = r ?: floor_cgroup_parent(parent, sizeof(parent));
	r = r ?: cg_mkdir(parent);
	if (r < 0)
		goto fail;
	if (name)
		r = snprintf(s->cgroup, sizeof(s->cgroup), "%s/%s", parent, name);
	else
		r = snprintf(s->cgroup, sizeof(s->cgroup), "%s/s%d-%ld", parent, (int)getpid(),
			     (long)random());
	if (r < 0 || (size_t)r >= sizeof(s->cgroup)) {
		r = -ENAMETOOLONG;
		goto fail;
	}
	if (mkdir(s->cgroup, 0755) < 0) {
		r = -errno;             /* never adopt an existing cgroup */
		goto fail;
	}
	level = cg_level(root, s->cgroup);
	if (bpf_map_lookup_elem(f->fd_config, &zero, &cfg) || level < 0 ||
	    (uint32_t)level != cfg.session_level) {
		r = -EXDEV;             /* the floor was loaded for another hierarchy */
		goto fail_cg;
	}
	r = cg_id(s->cgroup, &s->id);
	if (r < 0)
		goto fail_cg;
	s->policy_id = (uint32_t)(s->id ^ (s->id >> 32));
	while (!s->policy_id || policy_id_used(f, s->policy_id))
		s->policy_id++;

	es.policy_id = s->policy_id;
	r = pol_compile_fs(p, on_fs_entry, &es);
	if (r < 0)
		goto fail_cg;
	merge(&es);
	s->keys = calloc(es.n + 1, sizeof(*s->keys));
	if (!s->keys) {
		r = -ENOMEM;
		goto fail_cg;
	}
	/* One batch update where the kernel has it (a system call per rule
	 * costs milliseconds at every session start), else one by one. */
	{
		struct cordon_fs_rule *vals = calloc(es.n + 1, sizeof(*vals));
		uint32_t count = (uint32_t)es.n;

		if (!vals) {
			r = -ENOMEM;
			goto fail_rules;
		}
		for (size_t i = 0; i < es.n; i++) {
			s->keys[i] = es.e[i].key;
			vals[i] = es.e[i].rule;
		}
		if (es.n && bpf_map_update_batch(f->fd_rules, s->keys, vals, &count, NULL) == 0)
			s->n_keys = count;
		else
			s->n_keys = 0;
		for (size_t i = s->n_keys; i < es.n; i++) {
			if (bpf_map_update_elem(f->fd_rules, &s->keys[i], &vals[i], BPF_ANY)) {
				r = -errno;     /* -E2BIG: the rule map is full */
				free(vals);
				goto fail_rules;
			}
			s->n_keys = i + 1;
		}
		free(vals);
	}
	s->rb_fd = pin_ring_create("cordon_sess_rb", CORDON_SESSION_RINGBUF);
	if (s->rb_fd < 0) {
		r = s->rb_fd;
		goto fail_rules;
	}
	if (bpf_map_update_elem(f->fd_sess_events, &s->id, &s->rb_fd, BPF_ANY)) {
		r = -errno;
		goto fail_rules;
	}
	/*
	 * A policy id may have served an earlier session: invalidate every
	 * cached directory chain before this one becomes active.
	 */
	{
		uint64_t gen = 0;

		if (bpf_map_lookup_elem(f->fd_tree_gen, &zero, &gen) == 0) {
			gen++;
			(void)bpf_map_update_elem(f->fd_tree_gen, &zero, &gen, BPF_ANY);
		}
	}
	sess.policy_id = s->policy_id;
	if (bpf_map_update_elem(f->fd_sessions, &s->id, &sess, BPF_NOEXIST)) {
		r = -errno;
		goto fail_rb;
	}
	free(es.e);
	*out = s;
	return 0;
fail_rb:
	(void)bpf_map_delete_elem(f->fd_sess_events, &s->id);
fail_rules:
	remove_rules(f, s);
fail_cg:
	(void)cg_destroy(s->cgroup);
fail:
	free(es.e);
	session_free(s);
	return r;
}

/*
 * The agent's /proc is its PID namespace's own instance (userspace/session/world.h):
 * another superblock, so rules keyed by the host's proc device would never
 * match it.  procfs numbers its fixed entries the same in every instance,
 * so each rule on the FROM device is copied to the TO device.  Called
 * before the agent's own code runs.
 */
int floor_session_alias_dev(struct floor *f, struct floor_session *s, uint64_t from,
			    uint64_t to)
{
	uint32_t kf = floor_kdev(from), kt = floor_kdev(to), zero = 0;
	size_t n = s->n_keys, add = 0;
	struct cordon_fs_key *nk;
	uint64_t gen = 0;

	for (size_t i = 0; i < n; i++)
		add += s->keys[i].dev == kf;
	if (!add || kf == kt)
		return 0;
	nk = realloc(s->keys, (n + add + 1) * sizeof(*nk));
	if (!nk)
		return -ENOMEM;
	s->keys = nk;
	for (size_t i = 0; i < n; i++) {
		struct cordon_fs_rule v;
		struct cordon_fs_key k = nk[i];

		if (k.dev != kf)
			continue;
		if (bpf_map_lookup_elem(f->fd_rules, &nk[i], &v))
			return -errno;
		k.dev = kt;
		if (bpf_map_update_elem(f->fd_rules, &k, &v, BPF_ANY))
			return -errno;
		nk[s->n_keys++] = k;
	}
	if (bpf_map_lookup_elem(f->fd_tree_gen, &zero, &gen) == 0) {
		gen++;
		(void)bpf_map_update_elem(f->fd_tree_gen, &zero, &gen, BPF_ANY);
	}
	return 0;
}

uint64_t floor_session_id(const struct floor_session *s)
{
	return s->id;
}

const char *floor_session_cgroup(const struct floor_session *s)
{
	return s->cgroup;
}

size_t floor_session_entries(const struct floor_session *s)
{
	return s->n_keys;
}

int floor_session_enter(const struct floor_session *s)
{
	return cg_attach_pid(s->cgroup, getpid());
}

int floor_session_destroy(struct floor *f, struct floor_session *s)
{
	int r;

	if (!s)
		return 0;
	r = cg_destroy(s->cgroup);
	if (r < 0)
		return r;       /* tasks may remain: keep them confined */
	(void)bpf_map_delete_elem(f->fd_sessions, &s->id);
	(void)bpf_map_delete_elem(f->fd_sess_events, &s->id);
	remove_rules(f, s);
	session_free(s);
	return 0;
}

int floor_counter(struct floor *f, enum cordon_counter which, uint64_t *out)
{
	int ncpu = libbpf_num_possible_cpus();
	uint32_t key = which;
	uint64_t *vals;

	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	vals = calloc((size_t)ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	if (bpf_map_lookup_elem(f->fd_counters, &key, vals)) {
		free(vals);
		return -errno;
	}
	*out = 0;
	for (int i = 0; i < ncpu; i++)
		*out += vals[i];
	free(vals);
	return 0;
}

/* --- status and garbage collection, from the pins alone ---------------------- */

/* Find the cgroup under cordon's parent whose id is `id`. */
static bool find_cgroup(uint64_t id, char *out, size_t len)
{
	char parent[PATH_MAX];
	struct dirent *de;
	bool found = false;
	DIR *d;

	if (floor_cgroup_parent(parent, sizeof(parent)) < 0 || !(d = opendir(parent)))
		return false;
	while (!found && (de = readdir(d))) {
		char path[PATH_MAX * 2];
		uint64_t cid;

		if (de->d_name[0] == '.' || de->d_type != DT_DIR)
			continue;
		snprintf(path, sizeof(path), "%s/%s", parent, de->d_name);
		if (cg_id(path, &cid) == 0 && cid == id && strlen(path) < len) {
			memcpy(out, path, strlen(path) + 1);
			found = true;
		}
	}
	closedir(d);
	return found;
}

static size_t count_rules(int fd_rules, uint32_t policy_id, bool remove)
{
	struct cordon_fs_key key, next;
	void *prev = NULL;
	size_t n = 0;

	while (bpf_map_get_next_key(fd_rules, prev, &next) == 0) {
		if (next.policy_id == policy_id) {
			n++;
			if (remove) {
				/* Deleting the current key: restart from the previous one. */
				(void)bpf_map_delete_elem(fd_rules, &next);
				continue;
			}
		}
		key = next;
		prev = &key;
	}
	return n;
}

static int open_maps(struct floor *f)
{
	char pin[PATH_MAX];

	for (size_t i = 0; i < ARRAY_SIZE(map_pins); i++) {
		*fd_at(f, i) = bpf_obj_get(map_pin(pin, i));
		if (*fd_at(f, i) < 0)
			return -errno;
	}
	return 0;
}

int floor_status_json(json_t **out)
{
	json_t *o = json_object(), *links = json_array(), *sessions = json_array();
	struct cordon_config cfg;
	struct floor *f = floor_new();
	uint64_t key, next, v;
	void *prev = NULL;
	uint32_t zero = 0;
	struct dirent *de;
	DIR *d;

	if (!f)
		return -ENOMEM;
	d = opendir(instance_pin_dir());
	while (d && (de = readdir(d)))
		if (!strncmp(de->d_name, "link_", 5))
			json_array_append_new(links, json_string(de->d_name + 5));
	if (d)
		closedir(d);
	json_object_set_new(o, "links", links);
	if (open_maps(f) < 0) {
		json_object_set_new(o, "loaded", json_false());
		json_object_set_new(o, "sessions", sessions);
		close_fds(f);
		free(f);
		*out = o;
		return 0;
	}
	json_object_set_new(o, "loaded", json_boolean(json_array_size(links) > 0));
	json_object_set_new(o, "stale", json_boolean(bpf_map_lookup_elem(f->fd_config, &zero, &cfg) ||
						     cfg.build_id != build_id()));
	json_object_set_new(o, "session_level", json_integer(cfg.session_level));
	while (bpf_map_get_next_key(f->fd_sessions, prev, &next) == 0) {
		struct cordon_session s;
		char cg[PATH_MAX];
		json_t *so;

		if (bpf_map_lookup_elem(f->fd_sessions, &next, &s) == 0) {
			so = json_pack("{s:I,s:I,s:I}", "id", (json_int_t)next,
				       "entries", (json_int_t)count_rules(f->fd_rules, s.policy_id, false),
				       "drops", (json_int_t)s.drops);
			json_object_set_new(so, "cgroup", find_cgroup(next, cg, sizeof(cg)) ?
					    json_string(cg) : json_null());
			json_array_append_new(sessions, so);
		}
		key = next;
		prev = &key;
	}
	json_object_set_new(o, "sessions", sessions);
	if (floor_counter(f, CORDON_CNT_EVENTS, &v) == 0)
		json_object_set_new(o, "events", json_integer((json_int_t)v));
	if (floor_counter(f, CORDON_CNT_DROPS, &v) == 0)
		json_object_set_new(o, "drops", json_integer((json_int_t)v));
	close_fds(f);
	free(f);
	*out = o;
	return 0;
}

int floor_gc(void)
{
	struct floor *f = floor_new();
	uint64_t key, next;
	void *prev = NULL;
	int removed = 0, r;

	if (!f)
		return -ENOMEM;
	r = open_maps(f);
	if (r < 0) {
		close_fds(f);
		free(f);
		return r == -ENOENT ? 0 : r;
	}
	while (bpf_map_get_next_key(f->fd_sessions, prev, &next) == 0) {
		struct cordon_session s;
		char cg[PATH_MAX];

		if (bpf_map_lookup_elem(f->fd_sessions, &next, &s) == 0 &&
		    !find_cgroup(next, cg, sizeof(cg))) {
			/* No cgroup, no task: nothing can run under these entries. */
			(void)bpf_map_delete_elem(f->fd_sessions, &next);
			(void)bpf_map_delete_elem(f->fd_sess_events, &next);
			count_rules(f->fd_rules, s.policy_id, true);
			removed++;
			continue;
		}
		key = next;
		prev = &key;
	}
	close_fds(f);
	free(f);
	return removed;
}
