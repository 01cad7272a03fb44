// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Resource budgets: a session's memory, pids and CPU limits, from cgroup v2
 * where the session can have the controller, from a cgroup v1 hierarchy on
 * hybrid hosts, and never silently from neither.
 *
 * What each limit closes, and what it does not:
 *
 *  memory  Exhausting the host's memory, which would make the kernel's
 *          global OOM killer pick a victim among the host's processes (the
 *          supervisor, the proxies, the user's editor).  With the limit the
 *          session reclaims and OOM-kills inside itself.  Swap is limited
 *          too (memory.swap.max 0, v1 memsw = the limit) so that the agent
 *          cannot push the host into swap instead.  Not closed, v1 and v2
 *          alike: kernel memory that is not charged to a cgroup (allocations
 *          without __GFP_ACCOUNT; the accounted set grows with each kernel),
 *          page cache of files the host had cached before the session read
 *          them (charged to whoever touched them first), and on v1 socket
 *          buffers unless memory.kmem.tcp.limit_in_bytes is set (done here,
 *          where the file exists; v2 always charges them).
 *  pids    Fork bombs: every task (threads included) counts, so a runaway
 *          fork() or clone() loop gets EAGAIN at the limit instead of
 *          filling the host's pid space and task memory.  It bounds no
 *          other resource, and a too small limit breaks thread-pool runtimes
 *          (node, the JVM): the number is the policy's.
 *  cpu     CPU starvation of the supervisor and the host by a busy loop:
 *          CFS bandwidth gives the session at most CORES x 100 ms of CPU per
 *          100 ms period.  It throttles and never kills, does not bound wall
 *          time (the supervisor's wall_time budget does) and reserves
 *          nothing for the supervisor against other load.  Real-time
 *          scheduling would escape it, which is why the floor refuses
 *          CAP_SYS_NICE to a session.
 *
 * A v1 cgroup is a second membership, beside the v2 session.  A task that
 * could write cgroupfs could move itself back to the v1 root and drop the
 * limit while staying in its v2 session; cordon's policy invariant
 * "cgroupfs" (no write below /sys/fs/cgroup) and the floor's refusal of
 * mount (no cgroupfs of its own elsewhere) are what forbid it, not the
 * cgroup itself.  A v1 hierarchy mounted outside /sys/fs/cgroup is outside
 * that invariant: the supervisor should protect its path (pol_protect_path).
 * cgroup v1 memory is deprecated: 6.x kernels log once per boot that
 * oom_control and kmem.tcp.limit_in_bytes will go.  v2 is the way ahead;
 * v1 is here because hybrid hosts still exist.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include "budget.h"
#include "cgroup.h"
#include "cordon.h"
#include "instance.h"
#include "policy.h"
#include "util.h"

struct ctl {
	bool on;                /* budgeted */
	bool v1;                /* limited in a v1 hierarchy, else in the v2 session */
	bool created;           /* a v1 cgroup made by budget_setup */
	char dir[PATH_MAX];     /* the cgroup whose files hold the limit */
};

struct budget {
	struct pol_budgets b;
	char v2[PATH_MAX];
	struct ctl c[BUDGET_NCTL];
	int mem_events_fd;      /* v2 memory.events, kept open: reading it re-arms poll */
	int pids_events_fd;     /* pids.events, v1 or v2 */
	int oom_efd;            /* v1: eventfd signalled by memory.oom_control */
	int epfd;               /* -1 unless every spendable budget notifies */
	uint64_t base_oom_kill, base_oom, base_pids_max;
};

static const char *const ctl_names[BUDGET_NCTL] = {
	[BUDGET_MEMORY] = "memory",
	[BUDGET_PIDS] = "pids",
	[BUDGET_CPU] = "cpu",
};

const char *budget_ctl_name(enum budget_ctl c)
{
	return c < BUDGET_NCTL ? ctl_names[c] : "?";
}

/* --- pure helpers ----------------------------------------------------------- */

bool budget_has_word(const char *list, const char *ctl)
{
	size_t n = strlen(ctl);

	for (const char *p = list; (p = strstr(p, ctl)); p += n) {
		bool start = p == list || p[-1] == ' ' || p[-1] == ',' || p[-1] == '\n';
		bool end = p[n] == 0 || p[n] == ' ' || p[n] == ',' || p[n] == '\n';

		if (start && end)
			return true;
	}
	return false;
}

int budget_key_u64(const char *text, const char *key, uint64_t *val)
{
	size_t n = strlen(key);

	for (const char *line = text; line && *line; ) {
		if (!strncmp(line, key, n) && line[n] == ' ') {
			char *end;
			unsigned long long v;

			errno = 0;
			v = strtoull(line + n + 1, &end, 10);
			if (errno || end == line + n + 1 || (*end && *end != '\n'))
				return -EINVAL;
			*val = v;
			return 0;
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return -ENOENT;
}


int budget_v1_mount(const char *mountinfo, const char *ctl, char *out, size_t outlen)
{
	for (const char *line = mountinfo, *next; line && *line; line = next) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char buf[4096], *sep, *save = NULL, *tok, *mnt = NULL, *fstype, *opts;
		int n = 0;

		next = nl ? nl + 1 : NULL;
		if (len >= sizeof(buf))
			continue;
		memcpy(buf, line, len);
		buf[len] = 0;
		/* "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SRC SUPEROPTS" */
		sep = strstr(buf, " - ");
		if (!sep)
			continue;
		*sep = 0;
		for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
			if (++n == 5)
				mnt = tok;
		save = NULL;
		fstype = strtok_r(sep + 3, " ", &save);
		(void)strtok_r(NULL, " ", &save);
		opts = strtok_r(NULL, " ", &save);
		if (!mnt || !fstype || !opts || strcmp(fstype, "cgroup") || !budget_has_word(opts, ctl))
			continue;
		cg_unescape(mnt);
		if (strlen(mnt) + 1 > outlen)
			return -ENAMETOOLONG;
		strcpy(out, mnt);
		return 0;
	}
	return -ENOENT;
}

uint64_t budget_cpu_quota(double cores)
{
	double q;

	if (!(cores > 0))       /* also NaN */
		return 0;
	q = cores * (double)BUDGET_CPU_PERIOD_US + 0.5;
	if (q < 1000)
		return 1000;
	if (q > 1e15)           /* far beyond any machine; keeps the cast defined */
		q = 1e15;
	return (uint64_t)q;
}

void budget_fmt_size(uint64_t bytes, char *out, size_t len)
{
	static const char *const units[] = { "TiB", "GiB", "MiB", "KiB" };

	for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
		uint64_t u = 1ULL << (10 * (4 - i));

		if (bytes >= u && bytes % u == 0) {
			snprintf(out, len, "%llu %s", (unsigned long long)(bytes / u), units[i]);
			return;
		}
	}
	snprintf(out, len, "%llu bytes", (unsigned long long)bytes);
}

/* --- cgroupfs ------------------------------------------------------------ */

static int path_join(char *out, size_t len, const char *dir, const char *file)
{
	if ((size_t)snprintf(out, len, "%s/%s", dir, file) >= len)
		return -ENAMETOOLONG;
	return 0;
}

static int cg_read(const char *dir, const char *file, char **text)
{
	char path[PATH_MAX + 64];
	int r = path_join(path, sizeof(path), dir, file);

	return r < 0 ? r : read_file(path, text, 64 * 1024);
}

static int cg_write(const char *dir, const char *file, const char *s)
{
	char path[PATH_MAX + 64];
	int r = path_join(path, sizeof(path), dir, file);

	return r < 0 ? r : write_file(path, s);
}

static int cg_write_u64(const char *dir, const char *file, uint64_t v)
{
	char num[32];

	snprintf(num, sizeof(num), "%llu", (unsigned long long)v);
	return cg_write(dir, file, num);
}

/* A single-number file; "max" reads as UINT64_MAX. */
static int cg_read_u64(const char *dir, const char *file, uint64_t *v)
{
	_cleanup_free_ char *text = NULL;
	char *end;
	int r = cg_read(dir, file, &text);

	if (r < 0)
		return r;
	if (!strncmp(text, "max", 3)) {
		*v = UINT64_MAX;
		return 0;
	}
	errno = 0;
	*v = strtoull(text, &end, 10);
	if (errno || end == text)
		return -EINVAL;
	return 0;
}

static int cg_open(const char *dir, const char *file)
{
	char path[PATH_MAX + 64];
	int r = path_join(path, sizeof(path), dir, file);

	if (r < 0)
		return r;
	r = open(path, O_RDONLY | O_CLOEXEC);
	return r < 0 ? -errno : r;
}

/*
 * Read a kernfs file through a descriptor kept open, from the start.  The
 * read is also what re-arms its POLLPRI: kernfs reports a change to each
 * open file until that file is read again.
 */
static int fd_read_text(int fd, char *buf, size_t len)
{
	ssize_t n = pread(fd, buf, len - 1, 0);

	if (n < 0)
		return -errno;
	buf[n] = 0;
	return 0;
}

static int fd_key_u64(int fd, const char *key, uint64_t *v)
{
	char buf[1024];
	int r = fd_read_text(fd, buf, sizeof(buf));

	return r < 0 ? r : budget_key_u64(buf, key, v);
}

/*
 * Make CTL available to SESSION: enable it in cgroup.subtree_control of
 * every ancestor from ROOT down to SESSION's parent.  Writing there is
 * allowed because no process lives in those ancestors except the root,
 * which is exempt (cgroup v2's "no internal processes" rule); a host that
 * keeps processes in them gets -EBUSY here and the v1 fallback.  WHY says
 * where it stopped.  Controllers enabled on the way stay enabled: the
 * sessions beside this one share them.  The parents' own limits (a
 * systemd slice's MemoryMax=) apply on top of the session's: a budget is a
 * ceiling, never a reservation.
 */
static int v2_enable(const char *root, const char *session, const char *ctl,
		     char *why, size_t wlen)
{
	size_t end = strlen(root), plen = (size_t)(strrchr(session, '/') - session);
	char dir[PATH_MAX];
	int r;

	while (end > 1 && root[end - 1] == '/')
		end--;
	for (;;) {
		_cleanup_free_ char *avail = NULL;
		_cleanup_free_ char *on = NULL;
		char plus[32];

		memcpy(dir, session, end);
		dir[end] = 0;
		r = cg_read(dir, "cgroup.controllers", &avail);
		if (r < 0) {
			snprintf(why, wlen, "cannot read %s/cgroup.controllers: %s", dir, strerror(-r));
			return r;
		}
		if (!budget_has_word(avail, ctl)) {
			size_t l = strlen(avail);

			while (l && avail[l - 1] == '\n')
				avail[--l] = 0;
			snprintf(why, wlen, "not in %s/cgroup.controllers (\"%s\")", dir, avail);
			return -EOPNOTSUPP;
		}
		r = cg_read(dir, "cgroup.subtree_control", &on);
		if (r < 0 || !budget_has_word(on, ctl)) {
			snprintf(plus, sizeof(plus), "+%s", ctl);
			r = cg_write(dir, "cgroup.subtree_control", plus);
			if (r < 0) {
				snprintf(why, wlen, "cannot enable it in %s/cgroup.subtree_control: %s",
					 dir, strerror(-r));
				return r;
			}
		}
		if (end >= plen)
			break;
		end = (size_t)(strchrnul(session + end + 1, '/') - session);
	}
	return 0;
}

static bool v2_has(const char *session, const char *ctl)
{
	_cleanup_free_ char *avail = NULL;

	return cg_read(session, "cgroup.controllers", &avail) >= 0 && budget_has_word(avail, ctl);
}

/* Register an eventfd that memcg v1 signals on each OOM of DIR. */
static int v1_oom_eventfd(const char *dir)
{
	_cleanup_close_ int efd = -1;
	_cleanup_close_ int ofd = -1;
	char line[64];
	int r;

	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (efd < 0)
		return -errno;
	ofd = cg_open(dir, "memory.oom_control");
	if (ofd < 0)
		return ofd;
	snprintf(line, sizeof(line), "%d %d", efd, ofd);
	r = cg_write(dir, "cgroup.event_control", line);
	if (r < 0)
		return r;
	return TAKE_FD(efd);
}

/* --- counters ------------------------------------------------------------ */

struct mem_counters {
	uint64_t oom_kill, oom, limit_hits;
};

static int read_mem(struct budget *bg, struct mem_counters *m)
{
	const struct ctl *c = &bg->c[BUDGET_MEMORY];
	int r;

	memset(m, 0, sizeof(*m));
	if (!c->v1) {
		char buf[1024];

		r = fd_read_text(bg->mem_events_fd, buf, sizeof(buf));
		if (r < 0)
			return r;
		r = budget_key_u64(buf, "oom_kill", &m->oom_kill);
		if (r < 0)
			return r;
		(void)budget_key_u64(buf, "oom", &m->oom);
		(void)budget_key_u64(buf, "max", &m->limit_hits);
		return 0;
	} else {
		_cleanup_free_ char *text = NULL;
		uint64_t ev;

		/* Drain the eventfd so that the epoll set quietens until the next OOM. */
		if (bg->oom_efd >= 0)
			(void)!read(bg->oom_efd, &ev, sizeof(ev));
		r = cg_read(c->dir, "memory.oom_control", &text);
		if (r < 0)
			return r;
		r = budget_key_u64(text, "oom_kill", &m->oom_kill);
		if (r < 0)
			return r;
		m->oom = m->oom_kill;
		/* Whichever counter refused the charge (memsw when it is limited as
		 * well); recent kernels count neither once memsw is limited. */
		(void)cg_read_u64(c->dir, "memory.failcnt", &m->limit_hits);
		if (cg_read_u64(c->dir, "memory.memsw.failcnt", &ev) == 0 && ev > m->limit_hits)
			m->limit_hits = ev;
		return 0;
	}
}

static int read_pids_max(struct budget *bg, uint64_t *v)
{
	return fd_key_u64(bg->pids_events_fd, "max", v);
}

/* --- setup ------------------------------------------------------------- */

static bool valid_name(const char *name)
{
	return name && *name && strlen(name) < NAME_MAX && !strchr(name, '/') &&
	       strcmp(name, ".") && strcmp(name, "..");
}

/* Where CTL's limit will live: the v2 session, or a new v1 cgroup. */
static int place(struct budget *bg, enum budget_ctl i, const char *root, const char *mountinfo,
		 const char *name)
{
	struct ctl *c = &bg->c[i];
	const char *ctl = ctl_names[i];
	char why[PATH_MAX + 128], mnt[PATH_MAX], parent[PATH_MAX + 16];
	int r;

	r = v2_enable(root, bg->v2, ctl, why, sizeof(why));
	if (r == 0 && v2_has(bg->v2, ctl)) {
		snprintf(c->dir, sizeof(c->dir), "%s", bg->v2);
		return 0;
	}
	if (r == 0)
		snprintf(why, sizeof(why), "enabled on the ancestors of %s but not offered to it", bg->v2);
	if (budget_v1_mount(mountinfo, ctl, mnt, sizeof(mnt)) < 0) {
		log_err("budget: a %s budget is set but the %s controller is missing: cgroup v2: %s; "
			"and no cgroup v1 hierarchy carries it", ctl, ctl, why);
		return -EOPNOTSUPP;
	}
	if ((size_t)snprintf(parent, sizeof(parent), "%s/%s", mnt, instance_cgroup_parent()) >=
		    sizeof(parent) ||
	    (size_t)snprintf(c->dir, sizeof(c->dir), "%s/%s", parent, name) >= sizeof(c->dir)) {
		log_err("budget: %s: path too long below %s", ctl, mnt);
		return -ENAMETOOLONG;
	}
	r = cg_mkdir(parent);
	if (r == 0 && mkdir(c->dir, 0755) < 0)
		r = -errno;
	if (r < 0) {
		/* An existing one is a stale session's or another's: its members and
		 * counters are not this session's, so it is not adopted. */
		log_err("budget: cannot create the cgroup v1 %s cgroup %s: %s", ctl, c->dir, strerror(-r));
		return r;
	}
	c->v1 = true;
	c->created = true;
	log_debug("budget: %s: cgroup v2 %s; using cgroup v1 %s", ctl, why, c->dir);
	return 0;
}

static int set_limits(struct budget *bg)
{
	const struct pol_budgets *b = &bg->b;
	struct ctl *c;
	char quota[64];
	const char *file;
	int r;

	c = &bg->c[BUDGET_MEMORY];
	if (c->on) {
		file = c->v1 ? "memory.limit_in_bytes" : "memory.max";
		r = cg_write_u64(c->dir, file, b->memory_bytes);
		if (r < 0)
			goto fail;
		/* No swap beyond the limit (v1: memory+swap = memory).  Absent when
		 * the kernel does not account swap, and then swap is not the
		 * session's to fill either way. */
		file = c->v1 ? "memory.memsw.limit_in_bytes" : "memory.swap.max";
		r = c->v1 ? cg_write_u64(c->dir, file, b->memory_bytes) : cg_write(c->dir, file, "0");
		if (r < 0 && r != -ENOENT)
			goto fail;
		/* v1 charges socket buffers only once this is set (deprecated in
		 * recent kernels, hence best effort). */
		if (c->v1)
			(void)cg_write_u64(c->dir, "memory.kmem.tcp.limit_in_bytes", b->memory_bytes);
	}
	c = &bg->c[BUDGET_PIDS];
	if (c->on) {
		file = "pids.max";
		r = cg_write_u64(c->dir, file, b->pids);
		if (r < 0)
			goto fail;
	}
	c = &bg->c[BUDGET_CPU];
	if (c->on) {
		uint64_t q = budget_cpu_quota(b->cpu);

		if (c->v1) {
			file = "cpu.cfs_period_us";
			r = cg_write_u64(c->dir, file, BUDGET_CPU_PERIOD_US);
			if (r < 0)
				goto fail;
			file = "cpu.cfs_quota_us";
			r = cg_write_u64(c->dir, file, q);
		} else {
			file = "cpu.max";
			snprintf(quota, sizeof(quota), "%llu %llu", (unsigned long long)q,
				 BUDGET_CPU_PERIOD_US);
			r = cg_write(c->dir, file, quota);
		}
		if (r < 0)
			goto fail;
	}
	return 0;
fail:
	log_err("budget: cannot set %s/%s: %s", c->dir, file, strerror(-r));
	return r;
}

/*
 * Baselines of the counters (a reused v2 cgroup may carry old events) and
 * the descriptors that notify.  The epoll set exists only if every budget
 * that can be spent has a notification: half a set would let the caller
 * sleep through the other.
 */
static int watch(struct budget *bg)
{
	struct ctl *m = &bg->c[BUDGET_MEMORY], *p = &bg->c[BUDGET_PIDS];
	struct mem_counters mc;
	bool notify = true;
	int r;

	if (m->on) {
		if (!m->v1) {
			bg->mem_events_fd = cg_open(m->dir, "memory.events");
			if (bg->mem_events_fd < 0) {
				r = bg->mem_events_fd;
				log_err("budget: cannot open %s/memory.events: %s", m->dir, strerror(-r));
				return r;
			}
		} else {
			bg->oom_efd = v1_oom_eventfd(m->dir);
			if (bg->oom_efd < 0) {
				log_debug("budget: no OOM notification for %s: %s", m->dir,
					  strerror(-bg->oom_efd));
				notify = false;
			}
		}
		r = read_mem(bg, &mc);
		if (r < 0) {
			log_err("budget: cannot read the memory events of %s: %s", m->dir, strerror(-r));
			return r;
		}
		bg->base_oom_kill = mc.oom_kill;
		bg->base_oom = mc.oom;
	}
	if (p->on) {
		bg->pids_events_fd = cg_open(p->dir, "pids.events");
		r = bg->pids_events_fd < 0 ? bg->pids_events_fd : read_pids_max(bg, &bg->base_pids_max);
		if (r < 0) {
			log_err("budget: cannot read %s/pids.events: %s", p->dir, strerror(-r));
			return r;
		}
		/* Since the hierarchical pids events (6.13) a v1 refusal notifies a
		 * file v1 does not have: pids.events counts, poll never wakes (seen
		 * on 6.18).  The caller's timer is the only sure way. */
		if (p->v1)
			notify = false;
	}
	if (!notify || (!m->on && !p->on))
		return 0;
	bg->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (bg->epfd < 0) {
		r = -errno;
		log_err("budget: epoll_create1: %s", strerror(-r));
		return r;
	}
	{
		struct { int fd; uint32_t ev; } w[] = {
			{ bg->mem_events_fd, EPOLLPRI },
			{ bg->oom_efd, EPOLLIN },
			{ bg->pids_events_fd, EPOLLPRI },
		};

		for (size_t i = 0; i < ARRAY_SIZE(w); i++) {
			struct epoll_event e = { .events = w[i].ev, .data.fd = w[i].fd };

			if (w[i].fd >= 0 && epoll_ctl(bg->epfd, EPOLL_CTL_ADD, w[i].fd, &e) < 0) {
				r = -errno;
				log_err("budget: epoll_ctl: %s", strerror(-r));
				return r;
			}
		}
	}
	return 0;
}

static void budget_destroyp(struct budget **bg)
{
	budget_destroy(*bg);
}

int budget_setup(const struct pol_budgets *b, const char *v2_path, const char *name,
		 struct budget **out)
{
	_cleanup_(budget_destroyp) struct budget *bg = NULL;
	const char *mountinfo;
	char root[PATH_MAX];
	struct stat st;
	size_t len;
	int r;

	if (!v2_path || !out || !valid_name(name)) {
		log_err("budget: bad session (cgroup %s, name %s)", v2_path ?: "(null)", name ?: "(null)");
		return -EINVAL;
	}
	bg = calloc(1, sizeof(*bg));
	if (!bg) {
		log_err("budget: out of memory");
		return -ENOMEM;
	}
	bg->mem_events_fd = bg->pids_events_fd = bg->oom_efd = bg->epfd = -1;
	if (b)
		bg->b = *b;
	len = strlen(v2_path);
	while (len > 1 && v2_path[len - 1] == '/')
		len--;
	if (len >= sizeof(bg->v2)) {
		log_err("budget: session cgroup path too long: %s", v2_path);
		return -ENAMETOOLONG;
	}
	memcpy(bg->v2, v2_path, len);
	bg->v2[len] = 0;
	bg->c[BUDGET_MEMORY].on = bg->b.memory_bytes > 0;
	bg->c[BUDGET_PIDS].on = bg->b.pids > 0;
	bg->c[BUDGET_CPU].on = budget_cpu_quota(bg->b.cpu) > 0;
	if (!bg->c[BUDGET_MEMORY].on && !bg->c[BUDGET_PIDS].on && !bg->c[BUDGET_CPU].on) {
		*out = TAKE_PTR(bg);
		return 0;
	}

	r = cg_find_root(root, sizeof(root));
	if (r < 0) {
		log_err("budget: no cgroup2 hierarchy: %s", strerror(-r));
		return r;
	}
	if (cg_level(root, bg->v2) < 1 || stat(bg->v2, &st) < 0 || !S_ISDIR(st.st_mode)) {
		log_err("budget: %s is not a cgroup below the cgroup2 root %s", bg->v2, root);
		return -EINVAL;
	}
	r = cg_mountinfo(&mountinfo);
	if (r < 0) {
		log_err("budget: cannot read /proc/self/mountinfo: %s", strerror(-r));
		return r;
	}
	for (int i = 0; i < BUDGET_NCTL; i++) {
		if (!bg->c[i].on)
			continue;
		r = place(bg, (enum budget_ctl)i, root, mountinfo, name);
		if (r < 0)
			return r;
	}
	r = set_limits(bg);
	if (r < 0)
		return r;
	r = watch(bg);
	if (r < 0)
		return r;
	*out = TAKE_PTR(bg);
	return 0;
}

int budget_join_self(const struct budget *bg)
{
	for (int i = 0; bg && i < BUDGET_NCTL; i++) {
		const struct ctl *c = &bg->c[i];
		char file[PATH_MAX];
		int r;

		if (!c->on || !c->v1)
			continue;
		if ((size_t)snprintf(file, sizeof(file), "%s/tasks", c->dir) >= sizeof(file))
			return -ENAMETOOLONG;
		r = write_file(file, "0");
		if (r < 0)
			return r;
	}
	return 0;
}

/* --- check, usage -------------------------------------------------------- */

int budget_check(struct budget *bg, char *which, size_t wlen, char *detail, size_t dlen)
{
	char size[32];
	int r;

	if (bg->c[BUDGET_MEMORY].on) {
		struct mem_counters mc;
		uint64_t kills, ooms;

		r = read_mem(bg, &mc);
		if (r < 0)
			return r;
		kills = mc.oom_kill - bg->base_oom_kill;
		ooms = mc.oom - bg->base_oom;
		if (kills || ooms) {
			budget_fmt_size(bg->b.memory_bytes, size, sizeof(size));
			snprintf(which, wlen, "memory");
			if (kills)
				snprintf(detail, dlen, "memory: %llu OOM kill%s at the %s limit",
					 (unsigned long long)kills, kills == 1 ? "" : "s", size);
			else
				snprintf(detail, dlen, "memory: out of memory %llu time%s at the %s limit "
					 "(nothing left to reclaim, no process killed yet)",
					 (unsigned long long)ooms, ooms == 1 ? "" : "s", size);
			return 1;
		}
	}
	if (bg->c[BUDGET_PIDS].on) {
		uint64_t max, refused;

		r = read_pids_max(bg, &max);
		if (r < 0)
			return r;
		refused = max - bg->base_pids_max;
		if (refused) {
			snprintf(which, wlen, "pids");
			snprintf(detail, dlen, "pids: %llu fork%s refused at the %llu-task limit",
				 (unsigned long long)refused, refused == 1 ? "" : "s",
				 (unsigned long long)bg->b.pids);
			return 1;
		}
	}
	return 0;
}

static void set_u64(json_t *o, const char *key, uint64_t v)
{
	json_object_set_new(o, key, json_integer((json_int_t)(v > INT64_MAX ? INT64_MAX : v)));
}

static void set_file_u64(json_t *o, const char *key, const char *dir, const char *file)
{
	uint64_t v;

	if (cg_read_u64(dir, file, &v) == 0 && v != UINT64_MAX)
		set_u64(o, key, v);
}

int budget_usage(struct budget *bg, json_t **out)
{
	json_auto_t *o = json_object();
	json_auto_t *cpu = json_object();
	_cleanup_free_ char *stat = NULL;
	const struct ctl *c;
	uint64_t v;
	int r;

	if (!o || !cpu)
		return -ENOMEM;
	c = &bg->c[BUDGET_MEMORY];
	if (c->on) {
		json_t *m = json_object();
		struct mem_counters mc;

		if (!m)
			return -ENOMEM;
		json_object_set_new(o, "memory", m);
		set_u64(m, "limit_bytes", bg->b.memory_bytes);
		set_file_u64(m, "peak_bytes", c->dir, c->v1 ? "memory.max_usage_in_bytes" : "memory.peak");
		r = read_mem(bg, &mc);
		if (r < 0)
			return r;
		set_u64(m, "oom_kills", mc.oom_kill - bg->base_oom_kill);
		set_u64(m, "limit_hits", mc.limit_hits);
		json_object_set_new(m, "cgroup", json_string(c->v1 ? "v1" : "v2"));
	}
	c = &bg->c[BUDGET_PIDS];
	if (c->on) {
		json_t *p = json_object();

		if (!p)
			return -ENOMEM;
		json_object_set_new(o, "pids", p);
		set_u64(p, "limit", bg->b.pids);
		set_file_u64(p, "current", c->dir, "pids.current");
		set_file_u64(p, "peak", c->dir, "pids.peak");
		r = read_pids_max(bg, &v);
		if (r < 0)
			return r;
		set_u64(p, "refused_forks", v - bg->base_pids_max);
		json_object_set_new(p, "cgroup", json_string(c->v1 ? "v1" : "v2"));
	}

	/* Usage from the v2 session, which every member is in whatever the
	 * hierarchy of the limit; throttling from where the limit is. */
	c = &bg->c[BUDGET_CPU];
	if (c->on)
		json_object_set_new(cpu, "cores", json_real(bg->b.cpu));
	r = cg_read(bg->v2, "cpu.stat", &stat);
	if (r < 0)
		return r;
	if (budget_key_u64(stat, "usage_usec", &v) == 0)
		set_u64(cpu, "usage_usec", v);
	if (c->on) {
		_cleanup_free_ char *st = NULL;

		if (c->v1 && cg_read(c->dir, "cpu.stat", &st) >= 0) {
			if (budget_key_u64(st, "nr_throttled", &v) == 0)
				set_u64(cpu, "nr_throttled", v);
			if (budget_key_u64(st, "throttled_time", &v) == 0)
				set_u64(cpu, "throttled_usec", v / 1000);
		} else if (!c->v1) {
			if (budget_key_u64(stat, "nr_throttled", &v) == 0)
				set_u64(cpu, "nr_throttled", v);
			if (budget_key_u64(stat, "throttled_usec", &v) == 0)
				set_u64(cpu, "throttled_usec", v);
		}
		json_object_set_new(cpu, "cgroup", json_string(c->v1 ? "v1" : "v2"));
	}
	json_object_set_new(o, "cpu", TAKE_PTR(cpu));
	*out = TAKE_PTR(o);
	return 0;
}

int budget_pollfd(struct budget *bg)
{
	return bg->epfd;
}

void budget_reap(const char *name)
{
	const char *mountinfo = NULL;

	if (!valid_name(name) || cg_mountinfo(&mountinfo) < 0)
		return;
	for (int i = 0; i < BUDGET_NCTL; i++) {
		char mnt[PATH_MAX], dir[PATH_MAX * 2];
		int r;

		if (budget_v1_mount(mountinfo, ctl_names[i], mnt, sizeof(mnt)) < 0)
			continue;
		snprintf(dir, sizeof(dir), "%s/%s/%s", mnt, instance_cgroup_parent(), name);
		r = access(dir, F_OK) == 0 ? cg_destroy(dir) : 0;
		if (r < 0)
			log_warn("budget: cannot remove %s: %s", dir, strerror(-r));
	}
}

void budget_destroy(struct budget *bg)
{
	if (!bg)
		return;
	if (bg->epfd >= 0)
		close(bg->epfd);
	if (bg->mem_events_fd >= 0)
		close(bg->mem_events_fd);
	if (bg->pids_events_fd >= 0)
		close(bg->pids_events_fd);
	if (bg->oom_efd >= 0)
		close(bg->oom_efd);
	for (int i = 0; i < BUDGET_NCTL; i++) {
		int r;

		if (!bg->c[i].created)
			continue;
		r = cg_destroy(bg->c[i].dir);
		if (r < 0)      /* no caller to return it to */
			log_warn("budget: cannot remove %s: %s", bg->c[i].dir, strerror(-r));
	}
	free(bg);
}
