// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The network floor's loader: load once, attach to cordon's parent cgroup,
 * pin under /sys/fs/bpf/cordon/net, reuse; sessions as map entries.
 *
 * The pattern is the LSM floor's (loader/floor.c), kept separate so that it
 * works where that one cannot load.  A pinned network floor is reused only
 * if it is whole (every map and every program's link pinned), was built from
 * this BPF object, and is attached to the cordon parent cgroup that exists
 * now (a parent removed and recreated has a new id and no programs).
 * Anything else is unpinned and loaded afresh; a load that fails anywhere
 * leaves nothing attached or pinned.
 */
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
#include "instance.h"
#include "util.h"

static const struct {
	const char *pin;  /* below the instance's network pin directory */
	size_t off;
} net_pins[] = {
#define M(n, field) { n, offsetof(struct net, field) }
	M("config", fd_config),
	M("rules", fd_rules),
	M("events", fd_events),
	M("counters", fd_counters),
	M("exec_key", fd_exec_key),
	M("exec_expect", fd_exec_expect),
	M("session_events", fd_sess_events),
	M("drops", fd_drops),
#undef M
};

static int *fd_at(struct net *n, size_t i)
{
	return (int *)((char *)n + net_pins[i].off);
}

static uint64_t build_id(void)
{
	return net_BUILD_ID;     /* build/net.id.h */
}

/* A map's pin: PATH_MAX bytes at out. */
static const char *net_pin(char *out, size_t i)
{
	snprintf(out, PATH_MAX, "%s/%s", instance_net_pin_dir(), net_pins[i].pin);
	return out;
}

static int ensure_pin_dir(void)
{
	return pin_ensure_dir(instance_net_pin_dir());
}

int net_unload(void)
{
	int r = pin_clear_dir(instance_net_pin_dir());

	/* The shared parent goes too if nothing else (the LSM floor) lives there. */
	(void)rmdir(instance_pin_dir());
	return r;
}

static struct net *net_new(void)
{
	struct net *n = calloc(1, sizeof(*n));

	if (n)
		for (size_t i = 0; i < ARRAY_SIZE(net_pins); i++)
			*fd_at(n, i) = -1;
	return n;
}

void net_close(struct net *n)
{
	if (!n)
		return;
	ring_buffer__free(n->rb);
	if (!n->skel)
		for (size_t i = 0; i < ARRAY_SIZE(net_pins); i++)
			if (*fd_at(n, i) >= 0)
				close(*fd_at(n, i));
	for (size_t i = 0; i < n->n_links; i++)
		bpf_link__destroy(n->links[i]);
	net_bpf__destroy(n->skel);
	free(n);
}

static int open_pinned(struct net *n)
{
	struct cordon_net_config cfg;
	char parent[PATH_MAX], pin[PATH_MAX];
	uint32_t zero = 0, level;
	uint64_t parent_id;
	int r;

	for (size_t i = 0; i < ARRAY_SIZE(net_pins); i++) {
		*fd_at(n, i) = bpf_obj_get(net_pin(pin, i));
		if (*fd_at(n, i) < 0)
			return -ENOENT;
	}
	if (bpf_map_lookup_elem(n->fd_config, &zero, &cfg) || cfg.build_id != build_id())
		return -ESTALE;
	if (cg_session_parent(parent, sizeof(parent), &level, &parent_id) < 0 ||
	    level != cfg.session_level || parent_id != cfg.parent_id)
		return -ESTALE;
	/*
	 * Every program's link still pinned, counted against what the loader
	 * recorded (same object by build id), without parsing the object again.
	 */
	r = pin_count_links(instance_net_pin_dir());
	if (r < 0)
		return r;
	if (!cfg.n_links || (uint32_t)r != cfg.n_links)
		return -ENOENT;
	n->exec_recheck = cfg.exec_recheck;
	n->unix_gate = cfg.unix_gate;
	if (bpf_map_lookup_elem(n->fd_exec_key, &zero, &n->exec_key))
		return -errno;
	return 0;
}

static bool is_exec_recheck(const struct bpf_program *prog)
{
	return bpf_program__type(prog) == BPF_PROG_TYPE_TRACING;
}

/* Linux 6.7's attach types, for a libbpf and uapi headers that predate them. */
#define NET_CGROUP_UNIX_CONNECT 49      /* BPF_CGROUP_UNIX_CONNECT */
#define NET_CGROUP_UNIX_SENDMSG 50      /* BPF_CGROUP_UNIX_SENDMSG */

/* The unix gate's programs (bpf/net.bpf.c), by name: 0 for any other. */
static int unix_gate_attach_type(const struct bpf_program *prog)
{
	const char *name = bpf_program__name(prog);

	if (!strcmp(name, "cordon_connect_unix"))
		return NET_CGROUP_UNIX_CONNECT;
	if (!strcmp(name, "cordon_sendmsg_unix"))
		return NET_CGROUP_UNIX_SENDMSG;
	return 0;
}

/*
 * Load the object.  Two parts are optional, each tried with and without:
 * - the exec recheck, refused without tp_btf or bpf_loop, or under
 *   lockdown=confidentiality (no bpf_probe_read_kernel): the supervisor
 *   then keeps its weaker rule (refuse argv-based allows when another task
 *   shares the caller's memory) and the posture says so;
 * - the unix gate, refused before Linux 6.7 (no cgroup unix hooks): a
 *   fallback session then has no kernel check on pathname Unix sockets, and
 *   the posture says so.
 */
static int open_and_load(struct net *n, struct cordon_net_config *cfg)
{
	static const struct { bool recheck, gate; } tries[] = {
		{ true, true }, { true, false }, { false, true }, { false, false },
	};
	int r = -EINVAL;

	for (size_t t = 0; t < ARRAY_SIZE(tries); t++) {
		struct bpf_program *prog;

		n->skel = net_bpf__open();
		if (!n->skel)
			return -errno;
		n->skel->rodata->session_level = cfg->session_level;
		n->skel->rodata->parent_id = cfg->parent_id;
		bpf_object__for_each_program(prog, n->skel->obj) {
			int type = unix_gate_attach_type(prog);

			if (is_exec_recheck(prog))
				bpf_program__set_autoload(prog, tries[t].recheck);
			if (type) {
				bpf_program__set_type(prog, BPF_PROG_TYPE_CGROUP_SOCK_ADDR);
				bpf_program__set_expected_attach_type(prog, (enum bpf_attach_type)type);
				bpf_program__set_autoload(prog, tries[t].gate);
			}
		}
		r = net_bpf__load(n->skel);
		if (!r) {
			cfg->exec_recheck = (uint32_t)tries[t].recheck;
			cfg->unix_gate = (uint32_t)tries[t].gate;
			return 0;
		}
		net_bpf__destroy(n->skel);
		n->skel = NULL;
	}
	return r;
}

static int load(struct net *n)
{
	struct cordon_net_config cfg = { .build_id = build_id() };
	struct bpf_program *prog;
	char path[PATH_MAX], parent[PATH_MAX];
	uint32_t zero = 0;
	uint64_t parent_id;
	_cleanup_close_ int cgfd = -1;
	int r;

	r = cg_session_parent(parent, sizeof(parent), &cfg.session_level, &parent_id);
	if (r < 0)
		return r;
	cfg.parent_id = parent_id;
	cgfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cgfd < 0)
		return -errno;
	r = open_and_load(n, &cfg);
	if (r)
		return r;
	n->exec_recheck = cfg.exec_recheck;
	n->unix_gate = cfg.unix_gate;
	if (getrandom(&n->exec_key, sizeof(n->exec_key), 0) != sizeof(n->exec_key))
		return -EIO;
	n->fd_exec_key = bpf_map__fd(n->skel->maps.exec_key);
	n->fd_exec_expect = bpf_map__fd(n->skel->maps.exec_expect);
	if (bpf_map_update_elem(n->fd_exec_key, &zero, &n->exec_key, 0))
		return -errno;
	n->fd_config = bpf_map__fd(n->skel->maps.net_config);
	n->fd_rules = bpf_map__fd(n->skel->maps.net_rules);
	n->fd_events = bpf_map__fd(n->skel->maps.net_events);
	n->fd_counters = bpf_map__fd(n->skel->maps.net_counters);
	n->fd_sess_events = bpf_map__fd(n->skel->maps.net_session_events);
	n->fd_drops = bpf_map__fd(n->skel->maps.net_drops);
	/* Configured before attaching: a program never runs unconfigured. */
	if (bpf_map_update_elem(n->fd_config, &zero, &cfg, 0))
		return -errno;
	for (size_t i = 0; i < ARRAY_SIZE(net_pins); i++)
		if (bpf_obj_pin(*fd_at(n, i), net_pin(path, i)))
			return -errno;
	bpf_object__for_each_program(prog, n->skel->obj) {
		struct bpf_link *link;

		if (n->n_links >= ARRAY_SIZE(n->links))
			return -E2BIG;
		if (!bpf_program__autoload(prog))
			continue;
		/* A link, not a legacy attach: it detaches when its last reference goes. */
		link = is_exec_recheck(prog) ? bpf_program__attach(prog)
					     : bpf_program__attach_cgroup(prog, cgfd);
		if (!link)
			return -errno;
		n->links[n->n_links++] = link;
		snprintf(path, sizeof(path), "%s/link_%s", instance_net_pin_dir(),
			 bpf_program__name(prog));
		r = bpf_link__pin(link, path);
		if (r)
			return r;
	}
	/* Last: the count a later open checks the pins against (userspace only). */
	cfg.n_links = (uint32_t)n->n_links;
	if (bpf_map_update_elem(n->fd_config, &zero, &cfg, 0))
		return -errno;
	return 0;
}

static void *net_create(void)
{
	return net_new();
}

static int net_open_pinned(void *h)
{
	return open_pinned(h);
}

static int net_load(void *h)
{
	return load(h);
}

static void net_close_any(void *h)
{
	net_close(h);
}

int net_open(struct net **out)
{
	const struct pin_ops ops = {
		.create = net_create, .open_pinned = net_open_pinned, .load = net_load,
		.close = net_close_any, .unload = net_unload, .ensure_dir = ensure_pin_dir,
		.dir = instance_net_pin_dir(),
	};
	void *h = NULL;
	int r = pin_open_or_load(&ops, &h);

	if (r == 0)
		*out = h;
	return r;
}

/* --- sessions --------------------------------------------------------------- */

struct prefix {
	int family;             /* 4 or 6 */
	uint8_t prefix;
	uint8_t addr[16];       /* bits beyond prefix cleared */
};

struct compiled {
	struct pol_net_entry *e;
	size_t n, cap;
};

static void mask(uint8_t *addr, unsigned bits, unsigned total)
{
	for (unsigned i = 0; i < total / 8; i++) {
		if (bits >= (i + 1) * 8)
			continue;
		addr[i] &= bits > i * 8 ? (uint8_t)(0xff << (8 - (bits - i * 8))) : 0;
	}
}

static int on_net_entry(void *ctx, const struct pol_net_entry *pe)
{
	struct compiled *c = ctx;

	if (pe->family != 4 && pe->family != 6)
		return -EINVAL;
	if (pe->prefix > (pe->family == 4 ? 32 : 128) || pe->port_lo > pe->port_hi)
		return -EINVAL;
	if (c->n == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 32;
		struct pol_net_entry *ne = realloc(c->e, ncap * sizeof(*ne));

		if (!ne)
			return -ENOMEM;
		c->e = ne;
		c->cap = ncap;
	}
	c->e[c->n] = *pe;
	mask(c->e[c->n].addr, pe->prefix, pe->family == 4 ? 32 : 128);
	if (pe->family == 4)
		memset(c->e[c->n].addr + 4, 0, 12);
	c->n++;
	return 0;
}

/* Does entry a's prefix cover (equal or contain) b's? */
static bool covers(const struct pol_net_entry *a, const struct pol_net_entry *b)
{
	uint8_t t[16];

	if (a->family != b->family || a->prefix > b->prefix)
		return false;
	memcpy(t, b->addr, 16);
	mask(t, a->prefix, a->family == 4 ? 32 : 128);
	return memcmp(t, a->addr, 16) == 0;
}

static int add_range(struct cordon_net_rule *v, uint16_t lo, uint16_t hi, uint32_t decision,
		     uint32_t rule_id)
{
	for (uint32_t i = 0; i < v->n; i++)
		if (v->r[i].lo == lo && v->r[i].hi == hi && v->r[i].decision == decision)
			return 0;       /* the same range and decision: one suffices */
	if (v->n >= CORDON_NET_RANGES)
		return -E2BIG;
	v->r[v->n++] = (struct cordon_net_range){ .lo = lo, .hi = hi, .decision = decision,
						  .rule_id = rule_id };
	return 0;
}

static void make_key(struct cordon_net_key *k, uint64_t sid, int family, const uint8_t *addr,
		     unsigned prefix)
{
	memset(k, 0, sizeof(*k));
	k->prefixlen = CORDON_NET_KEY_BITS + prefix;
	k->family = (uint32_t)family;
	k->session = sid;
	memcpy(k->addr, addr, family == 4 ? 4 : 16);
}

/* The session's own entry: present while it is registered, with its flags. */
static void session_key(struct cordon_net_key *k, uint64_t sid)
{
	memset(k, 0, sizeof(*k));
	k->prefixlen = CORDON_NET_KEY_BITS;
	k->family = CORDON_NET_FAMILY_SESSION;
	k->session = sid;
}

static int session_get(struct net *n, uint64_t sid, struct cordon_net_rule *v)
{
	struct cordon_net_key k;

	session_key(&k, sid);
	return bpf_map_lookup_elem(n->fd_rules, &k, v) ? -errno : 0;
}

static int by_prefix_up(const void *a, const void *b)
{
	const struct cordon_net_key *x = a, *y = b;

	return (x->prefixlen > y->prefixlen) - (x->prefixlen < y->prefixlen);
}

/*
 * Delete every entry of a session: keys collected first, then deleted least
 * specific first (the session's own entry, the shortest, leads), so that a
 * lookup meanwhile finds what it found before or nothing (see net_rules in
 * bpf/net.bpf.c).  A leftover rule would still let the cgroup's tasks
 * through, so a pass that could not hold every key is repeated until none
 * is left, and a failed deletion is an error.
 */
static int remove_rules(struct net *n, uint64_t sid)
{
	for (;;) {
		struct cordon_net_key key, next, *del = NULL;
		size_t nd = 0, cap = 0;
		bool partial = false;
		void *prev = NULL;
		int r = 0;

		while (bpf_map_get_next_key(n->fd_rules, prev, &next) == 0) {
			if (next.session == sid) {
				if (nd == cap) {
					size_t ncap = cap ? cap * 2 : 64;
					struct cordon_net_key *nk = realloc(del, ncap * sizeof(*nk));

					if (!nk) {
						partial = true;
						break;
					}
					del = nk;
					cap = ncap;
				}
				del[nd++] = next;
			}
			key = next;
			prev = &key;
		}
		if (!partial && errno != ENOENT)
			r = -errno;     /* the walk stopped short of the end */
		if (nd)
			qsort(del, nd, sizeof(*del), by_prefix_up);
		for (size_t i = 0; i < nd; i++)
			if (bpf_map_delete_elem(n->fd_rules, &del[i]) && errno != ENOENT)
				r = -errno;
		free(del);
		if (r < 0 || !partial)
			return r;
		if (!nd)
			return -ENOMEM;
	}
}

struct entry {
	struct cordon_net_key k;
	struct cordon_net_rule v;
};

static int by_prefix_down(const void *a, const void *b)
{
	return by_prefix_up(b, a);
}

/*
 * Each distinct prefix of the policy gets one trie entry carrying the ranges
 * of every prefix that covers it (itself included): the trie answers with
 * the most specific prefix only, and a broader deny (or allow) must still
 * count there.  They are written most specific first and the session's own
 * entry last: connect and sendmsg judge a hit without the session's entry,
 * and in this order a lookup during the writes finds the entry the whole set
 * would give, or none (a denial), never a broader allow that a more specific
 * entry, not yet written, would narrow.
 */
int net_session_add(struct net *n, uint64_t cgroup_id, const struct policy *p, uint32_t flags)
{
	struct compiled c = {};
	struct cordon_net_rule self = { .flags = flags };
	struct cordon_net_key k;
	struct entry *es = NULL;
	size_t ne = 0;
	int r;

	/* 0 is no session to the programs (caller_sid). */
	if (!cgroup_id || flags & ~CORDON_NET_SESSION_FLAGS)
		return -EINVAL;
	if (session_get(n, cgroup_id, &self) == 0)
		return -EEXIST;
	/* Leftovers of an earlier add for this cgroup that failed half-way (a crash). */
	r = remove_rules(n, cgroup_id);
	if (r < 0)
		return r;

	r = pol_compile_net(p, on_net_entry, &c);
	if (r < 0)
		goto out;
	es = calloc(c.n ?: 1, sizeof(*es));
	if (!es) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < c.n; i++) {
		struct entry *e = &es[ne];
		bool dup = false;

		for (size_t j = 0; j < i && !dup; j++)
			dup = c.e[j].family == c.e[i].family && c.e[j].prefix == c.e[i].prefix &&
			      !memcmp(c.e[j].addr, c.e[i].addr, 16);
		if (dup)
			continue;
		e->v.flags = flags;
		for (size_t j = 0; j < c.n && r == 0; j++)
			if (covers(&c.e[j], &c.e[i]))
				r = add_range(&e->v, c.e[j].port_lo, c.e[j].port_hi, c.e[j].decision,
					      c.e[j].rule_id);
		if (r < 0)
			goto out;
		make_key(&e->k, cgroup_id, c.e[i].family, c.e[i].addr, c.e[i].prefix);
		ne++;
	}
	qsort(es, ne, sizeof(*es), by_prefix_down);
	for (size_t i = 0; i < ne; i++)
		if (bpf_map_update_elem(n->fd_rules, &es[i].k, &es[i].v, BPF_ANY)) {
			r = errno == ENOSPC ? -E2BIG : -errno;
			goto fail;
		}
	self = (struct cordon_net_rule){ .flags = flags };
	session_key(&k, cgroup_id);
	if (bpf_map_update_elem(n->fd_rules, &k, &self, BPF_NOEXIST)) {
		r = errno == ENOSPC ? -E2BIG : -errno;
		goto fail;
	}
	goto out;
fail:
	(void)remove_rules(n, cgroup_id);
out:
	free(es);
	free(c.e);
	return r;
}

int net_session_allow(struct net *n, uint64_t cgroup_id, int family, const void *addr,
		      uint16_t port)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
	struct cordon_net_rule self, v = {};
	struct cordon_net_key k;
	uint8_t a[16] = {};
	int fam, r;

	if (family == AF_INET || family == 4) {
		fam = 4;
		memcpy(a, addr, 4);
	} else if (family == AF_INET6 || family == 6) {
		fam = 6;
		memcpy(a, addr, 16);
		if (!memcmp(a, mapped, 12)) {
			fam = 4;
			memmove(a, a + 12, 4);
			memset(a + 4, 0, 12);
		}
	} else {
		return -EAFNOSUPPORT;
	}
	if (session_get(n, cgroup_id, &self))
		return -ENOENT;
	/* The longest match holds every range covering this host already. */
	make_key(&k, cgroup_id, fam, a, fam == 4 ? 32 : 128);
	if (bpf_map_lookup_elem(n->fd_rules, &k, &v))
		memset(&v, 0, sizeof(v));
	v.flags = self.flags;
	r = add_range(&v, port, port, CORDON_ALLOW, CORDON_NET_RULE_CORDON);
	if (r < 0)
		return r;
	if (bpf_map_update_elem(n->fd_rules, &k, &v, BPF_ANY))
		return errno == ENOSPC ? -E2BIG : -errno;
	return 0;
}

/*
 * The session's own entry goes first: sock_create and bind refuse at once,
 * and so does every destination without an entry.  Its rules follow, least
 * specific first (remove_rules).
 */
int net_session_del(struct net *n, uint64_t cgroup_id)
{
	struct cordon_net_rule self;
	struct cordon_net_key k;
	int r;

	if (session_get(n, cgroup_id, &self))
		return -ENOENT;
	session_key(&k, cgroup_id);
	if (bpf_map_delete_elem(n->fd_rules, &k))
		return -errno;
	r = remove_rules(n, cgroup_id);
	/* Its ring, if any (a reader holding it keeps it until it closes). */
	(void)bpf_map_delete_elem(n->fd_sess_events, &cgroup_id);
	(void)bpf_map_delete_elem(n->fd_drops, &cgroup_id);
	return r;
}

/*
 * The ids of the cgroups at the session level now (children of cordon's
 * parent), sorted; *out is malloc'd.
 */
static int live_ids(uint64_t **out, size_t *n)
{
	char parent[PATH_MAX];
	uint64_t *ids = NULL;
	size_t cap = 0;
	struct dirent *de;
	uint32_t level;
	uint64_t pid;
	DIR *d;
	int r;

	*n = 0;
	r = cg_session_parent(parent, sizeof(parent), &level, &pid);
	if (r < 0)
		return r;
	d = opendir(parent);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		char path[PATH_MAX * 2];
		uint64_t id;

		if (de->d_name[0] == '.' || de->d_type != DT_DIR)
			continue;
		snprintf(path, sizeof(path), "%s/%s", parent, de->d_name);
		if (cg_id(path, &id) < 0)
			continue;
		if (*n == cap) {
			uint64_t *m = realloc(ids, (cap = cap ? cap * 2 : 64) * sizeof(*ids));

			if (!m) {
				closedir(d);
				free(ids);
				return -ENOMEM;
			}
			ids = m;
		}
		ids[(*n)++] = id;
	}
	closedir(d);
	*out = ids;
	return 0;
}

static bool has_id(const uint64_t *ids, size_t n, uint64_t id)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

/*
 * Sessions registered for a cgroup that is gone: their supervisor (and its
 * watchdog) died before net_session_del.  No task can be in a cgroup that
 * no longer exists, so the entries allow nobody anything, but they fill the
 * rule map (CORDON_MAX_NET_RULES across all sessions) until no new session
 * can register: the denial of service this closes.  Their rings and drops
 * entries go with them.
 */
/*
 * Exec expectations (exec_recheck.bpf.c) left by a dead session.  Attack:
 * a supervisor killed before it collected a kill's mark (the kernel keeps
 * a killed expectation until the supervisor reads it), or one killed
 * between its judgement and the arm, leaves the entry for good; enough of
 * them fill the map, and then every session's execs are refused (an arm
 * that fails is a denial).  Answer: an entry whose session cgroup is gone
 * and whose thread no longer exists is garbage, and goes.
 * What it cannot close: between this look and the delete, a new thread
 * reusing the tid, in a new session, could be armed; its arm would be
 * deleted here and its exec go unchecked by the kernel (the supervisor
 * still judged it).  Both the look and the delete are single map
 * operations apart, and the entry is read again just before the delete,
 * so the window is one system call.
 */
static void exec_gc(struct net *n, const uint64_t *live, size_t n_live)
{
	struct cordon_exec_expect e;
	uint32_t tid, next;
	void *prev = NULL;

	while (bpf_map_get_next_key(n->fd_exec_expect, prev, &next) == 0) {
		char proc[32];
		uint64_t cg;

		tid = next;
		prev = &tid;
		if (bpf_map_lookup_elem(n->fd_exec_expect, &tid, &e) < 0 || has_id(live, n_live, e.cgroup))
			continue;
		snprintf(proc, sizeof(proc), "/proc/%u", tid);
		if (access(proc, F_OK) == 0 || errno != ENOENT)
			continue;
		cg = e.cgroup;
		if (bpf_map_lookup_elem(n->fd_exec_expect, &tid, &e) == 0 && e.cgroup == cg &&
		    bpf_map_delete_elem(n->fd_exec_expect, &tid) == 0)
			prev = NULL;    /* the walk starts again: its key is gone */
	}
}

int net_gc(struct net *n)
{
	_cleanup_free_ uint64_t *live = NULL, *dead = NULL;
	size_t n_live = 0, n_dead = 0, cap = 0;
	struct cordon_net_key key, next;
	uint64_t id, nid;
	void *prev = NULL;
	int r, removed = 0;

	r = live_ids(&live, &n_live);
	if (r < 0)
		return r;
	while (bpf_map_get_next_key(n->fd_rules, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (key.family != CORDON_NET_FAMILY_SESSION || key.prefixlen != CORDON_NET_KEY_BITS ||
		    has_id(live, n_live, key.session) || has_id(dead, n_dead, key.session))
			continue;
		if (n_dead == cap) {
			uint64_t *m = realloc(dead, (cap = cap ? cap * 2 : 16) * sizeof(*dead));

			if (!m)
				return -ENOMEM;
			dead = m;
		}
		dead[n_dead++] = key.session;
	}
	for (size_t i = 0; i < n_dead; i++)
		if (net_session_del(n, dead[i]) == 0)
			removed++;
	/* A ring or drops entry whose session was never registered, or is gone. */
	prev = NULL;
	while (bpf_map_get_next_key(n->fd_drops, prev, &nid) == 0) {
		id = nid;
		prev = &id;
		if (has_id(live, n_live, id))
			continue;
		(void)bpf_map_delete_elem(n->fd_sess_events, &id);
		if (bpf_map_delete_elem(n->fd_drops, &id) == 0)
			prev = NULL;    /* the walk starts again: its key is gone */
	}
	exec_gc(n, live, n_live);
	return removed;
}
