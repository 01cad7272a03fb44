// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Pure helpers of the policy language: paths, URLs, hosts, durations, sizes,
 * rights.  Apart from pol_canon_path (which asks the filesystem to resolve
 * symlinks) nothing here touches the OS.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include "policy.h"
#include "util.h"

const char *pol_decision_name(uint32_t d)
{
	switch (d) {
	case CORDON_ALLOW:
		return "allow";
	case CORDON_ESCALATE:
		return "escalate";
	case CORDON_DENY:
		return "deny";
	}
	return "deny";
}

int pol_decision_parse(const char *s)
{
	if (!strcmp(s, "allow"))
		return CORDON_ALLOW;
	if (!strcmp(s, "escalate"))
		return CORDON_ESCALATE;
	if (!strcmp(s, "deny"))
		return CORDON_DENY;
	return -EINVAL;
}

const char *pol_via_name(enum pol_via v)
{
	switch (v) {
	case POL_VIA_DIRECT:
		return "direct";
	case POL_VIA_EGRESS:
		return "egress";
	case POL_VIA_CRED_PROXY:
		return "credential-proxy";
	}
	return "direct";
}

const char *pol_op_name(enum pol_op op)
{
	static const char *const names[] = {
		[POL_OP_READ] = "read", [POL_OP_WRITE] = "write", [POL_OP_CREATE] = "create",
		[POL_OP_DELETE] = "delete", [POL_OP_EXEC] = "exec", [POL_OP_CHMOD] = "chmod",
		[POL_OP_CONNECT] = "connect", [POL_OP_TOOL] = "tool",
	};
	return (unsigned)op < ARRAY_SIZE(names) ? names[op] : "?";
}

static const struct {
	const char *name;
	uint32_t bits;
} rights[] = {
	{ "read", CORDON_FS_READ },
	{ "write", CORDON_FS_WRITE },
	{ "create", CORDON_FS_CREATE },
	{ "delete", CORDON_FS_DELETE },
	{ "exec", CORDON_FS_EXEC },
	{ "chmod", CORDON_FS_CHMOD },
	{ "all", CORDON_FS_ALL },
};

int pol_right_parse(const char *s, uint32_t *bit)
{
	for (size_t i = 0; i < ARRAY_SIZE(rights); i++)
		if (!strcmp(s, rights[i].name)) {
			*bit = rights[i].bits;
			return 0;
		}
	return -EINVAL;
}

const char *pol_rights_str(uint32_t r, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = 0;
	for (size_t i = 0; i + 1 < ARRAY_SIZE(rights); i++)
		if (r & rights[i].bits) {
			int n = snprintf(buf + used, len - used, "%s%s", used ? "," : "",
					 rights[i].name);
			if (n < 0 || (size_t)n >= len - used)
				break;
			used += (size_t)n;
		}
	return buf;
}

/*
 * Lexical normalisation: collapse "//", drop ".", resolve ".." against the
 * components before it (never above "/").  The input must be absolute.
 */
int pol_normalize_path(const char *path, char *out, size_t outlen)
{
	size_t o = 0;
	const char *p = path;

	if (!path || path[0] != '/' || outlen < 2)
		return -EINVAL;
	out[o++] = '/';
	while (*p) {
		const char *start, *end;
		size_t n;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		start = p;
		while (*p && *p != '/')
			p++;
		end = p;
		n = (size_t)(end - start);
		if (n == 1 && start[0] == '.')
			continue;
		if (n == 2 && start[0] == '.' && start[1] == '.') {
			if (o > 1) {
				o--;                       /* drop trailing '/' */
				while (o > 1 && out[o - 1] != '/')
					o--;
			}
			continue;
		}
		if (o + n + 1 >= outlen)
			return -ENAMETOOLONG;
		memcpy(out + o, start, n);
		o += n;
		out[o++] = '/';
	}
	if (o > 1)
		o--;                                   /* no trailing '/' */
	out[o] = 0;
	return 0;
}

/*
 * Canonicalise against the filesystem: the longest existing prefix is
 * resolved with realpath (so symlinks, "/proc/self/root" and friends are
 * followed to the object they name), the rest is normalised lexically.  The
 * result is what the kernel would reach, as far as it exists today; the
 * floor re-checks the object itself at the time of the operation.
 */
int pol_canon_path(const char *path, const char *cwd, char *out, size_t outlen)
{
	char abs[PATH_MAX * 2], head[PATH_MAX];
	size_t cut;

	if (!path || !*path)
		return -EINVAL;
	if (path[0] == '/') {
		if (strlen(path) >= sizeof(abs))
			return -ENAMETOOLONG;
		strcpy(abs, path);
	} else {
		if (!cwd || cwd[0] != '/')
			return -EINVAL;
		if ((size_t)snprintf(abs, sizeof(abs), "%s/%s", cwd, path) >= sizeof(abs))
			return -ENAMETOOLONG;
	}
	if (strlen(abs) >= PATH_MAX)
		return -ENAMETOOLONG;
	/*
	 * Resolve before normalising, as the kernel does: "link/.." is the
	 * parent of the link's target, not the directory holding the link.
	 * Cut components off the end until a prefix resolves.
	 */
	cut = strlen(abs);
	for (;;) {
		char saved = abs[cut];
		char *ok;
		size_t i;

		abs[cut] = 0;
		ok = realpath(abs, head);
		abs[cut] = saved;
		if (ok)
			break;
		if (errno != ENOENT && errno != ENOTDIR && errno != EACCES)
			return -errno;          /* ELOOP, ENAMETOOLONG: refuse */
		for (i = cut; i > 0 && abs[i - 1] != '/'; i--)
			;
		if (i <= 1) {
			strcpy(head, "/");
			cut = 0;
			break;
		}
		cut = i - 1;
	}
	{
		char joined[PATH_MAX * 2];

		if ((size_t)snprintf(joined, sizeof(joined), "%s/%s", head, abs + cut) >=
		    sizeof(joined))
			return -ENAMETOOLONG;
		return pol_normalize_path(joined, out, outlen);
	}
}

/* A directory as written in a policy, where it really is, and whether it exists. */
struct pol_canon_dir {
	char *dir;
	char *real;
	bool exists;
};

void pol_canon_memo_free(struct pol_canon_memo *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++) {
		free(m->e[i].dir);
		free(m->e[i].real);
	}
	free(m->e);
	free(m->slots);
	*m = (struct pol_canon_memo){ 0 };
}

/*
 * The memo's directories by name, hashed (FNV-1a): a policy of 60,000 rules
 * names as many directories, and a scan of the memo for each was most of
 * the load's time.
 */
static uint64_t memo_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

static ssize_t memo_find(const struct pol_canon_memo *m, const char *dir)
{
	if (!m->n_slots)
		return -1;
	for (size_t i = memo_hash(dir) & (m->n_slots - 1);; i = (i + 1) & (m->n_slots - 1)) {
		uint32_t v = m->slots[i];

		if (!v)
			return -1;
		if (!strcmp(m->e[v - 1].dir, dir))
			return (ssize_t)(v - 1);
	}
}

/* Enter e[idx] into the table (growing it).  0 or -ENOMEM. */
static int memo_insert(struct pol_canon_memo *m, size_t idx)
{
	if ((m->n + 1) * 2 > m->n_slots) {
		size_t ns = m->n_slots ? m->n_slots * 2 : 64;
		uint32_t *t = calloc(ns, sizeof(*t));

		if (!t)
			return -ENOMEM;
		for (size_t k = 0; k < idx; k++) {
			size_t i = memo_hash(m->e[k].dir) & (ns - 1);

			while (t[i])
				i = (i + 1) & (ns - 1);
			t[i] = (uint32_t)(k + 1);
		}
		free(m->slots);
		m->slots = t;
		m->n_slots = ns;
	}
	{
		size_t i = memo_hash(m->e[idx].dir) & (m->n_slots - 1);

		while (m->slots[i])
			i = (i + 1) & (m->n_slots - 1);
		m->slots[i] = (uint32_t)(idx + 1);
	}
	return 0;
}

/* A path memo_resolve can take component by component: absolute, no "."
 * or ".." component, no empty one, no trailing '/'. */
static bool plain_path(const char *p)
{
	if (p[0] != '/' || (p[1] && p[strlen(p) - 1] == '/'))
		return false;
	for (const char *c = p; *c; c++) {
		if (*c != '/')
			continue;
		if (c[1] == '/')
			return false;
		if (c[1] == '.' && (c[2] == '/' || c[2] == 0 ||
				    (c[2] == '.' && (c[3] == '/' || c[3] == 0))))
			return false;
	}
	return true;
}

/*
 * Resolve plain absolute `p` into out; *exists says whether it names an
 * existing object (so its children are looked up, not appended).
 */
static int memo_resolve(struct pol_canon_memo *m, const char *p, char *out, size_t outlen,
			bool *exists)
{
	char dir[PATH_MAX], real[PATH_MAX], full[PATH_MAX * 2];
	const char *slash = strrchr(p, '/'), *name = slash + 1;
	bool dir_exists = true;
	struct stat st;
	int r;

	if (!p[1]) {
		snprintf(out, outlen, "/");
		*exists = true;
		return 0;
	}
	if ((size_t)(slash - p) >= sizeof(dir))
		return -ENAMETOOLONG;
	memcpy(dir, p, (size_t)(slash - p));
	dir[slash - p] = 0;
	if (!dir[0])
		strcpy(dir, "/");
	/* The parent: remembered, or resolved now and remembered. */
	{
		ssize_t i = memo_find(m, dir);

		if (i >= 0) {
			size_t l = strlen(m->e[i].real);

			if (l >= sizeof(real))
				return -ENAMETOOLONG;
			memcpy(real, m->e[i].real, l + 1);
			dir_exists = m->e[i].exists;
		} else {
			struct pol_canon_dir *e;

			r = memo_resolve(m, dir, real, sizeof(real), &dir_exists);
			if (r < 0)
				return r;
			if (m->n == m->cap) {
				size_t cap = m->cap ? 2 * m->cap : 32;

				e = realloc(m->e, cap * sizeof(*e));
				if (!e)
					return -ENOMEM;
				m->e = e;
				m->cap = cap;
			}
			e = &m->e[m->n];
			e->dir = strdup(dir);
			e->real = strdup(real);
			e->exists = dir_exists;
			if (!e->dir || !e->real || memo_insert(m, m->n) < 0) {
				free(e->dir);
				free(e->real);
				return -ENOMEM;
			}
			m->n++;
		}
	}
	/* Joined by hand: snprintf was a fifth of this function's time, at every start. */
	{
		size_t lr = strlen(real), ls = strcmp(real, "/") ? 1 : 0, ln = strlen(name);

		if (lr + ls + ln >= PATH_MAX)
			return -ENAMETOOLONG;
		memcpy(full, real, lr);
		full[lr] = '/';
		memcpy(full + lr + ls, name, ln + 1);
	}
	*exists = false;
	if (dir_exists) {
		if (lstat(full, &st) == 0) {
			if (S_ISLNK(st.st_mode)) {
				/* Where the link leads: realpath's answer, walked whole. */
				r = pol_canon_path(full, NULL, out, outlen);
				if (r < 0)
					return r;
				*exists = stat(out, &st) == 0;
				return 0;
			}
			*exists = true;
		} else if (errno != ENOENT && errno != ENOTDIR && errno != EACCES) {
			return -errno;
		}
	}
	if (strlen(full) >= outlen)
		return -ENAMETOOLONG;
	strcpy(out, full);
	return 0;
}

int pol_canon_path_memo(struct pol_canon_memo *m, const char *path, char *out, size_t outlen)
{
	bool exists;

	if (!m || !path || !plain_path(path) || strlen(path) >= PATH_MAX)
		return pol_canon_path(path, NULL, out, outlen);
	return memo_resolve(m, path, out, outlen, &exists);
}

bool pol_path_within(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 1 && dir[0] == '/')
		return path[0] == '/';
	return strncmp(path, dir, n) == 0 && (path[n] == 0 || path[n] == '/');
}

static void lower(char *s)
{
	for (; *s; s++)
		*s = (char)tolower((unsigned char)*s);
}

/*
 * Normalise an IP literal to its canonical text.  inet_aton accepts every
 * historical IPv4 form (0x7f.1, 2130706433, 0177.0.0.1), so an allowlist or
 * denylist entry cannot be dodged by spelling an address differently.
 * IPv4-mapped IPv6 becomes plain IPv4.  Returns 4, 6, or 0 for "not an IP".
 */
static int canon_ip(const char *in, char *out, size_t outlen, uint8_t addr[16])
{
	struct in_addr a4;
	struct in6_addr a6;
	char buf[INET6_ADDRSTRLEN + 2];
	size_t n = strlen(in);

	if (n >= 2 && in[0] == '[' && in[n - 1] == ']' && n - 2 < sizeof(buf)) {
		memcpy(buf, in + 1, n - 2);
		buf[n - 2] = 0;
		in = buf;
	}
	if (inet_pton(AF_INET6, in, &a6) == 1) {
		if (IN6_IS_ADDR_V4MAPPED(&a6)) {
			memcpy(&a4, &a6.s6_addr[12], 4);
			goto v4;
		}
		memset(addr, 0, 16);
		memcpy(addr, &a6, 16);
		if (!inet_ntop(AF_INET6, &a6, out, (socklen_t)outlen))
			return 0;
		return 6;
	}
	/* inet_aton accepts trailing garbage after a space; refuse that. */
	for (const char *c = in; *c; c++)
		if (!isxdigit((unsigned char)*c) && *c != '.' && *c != 'x' && *c != 'X')
			return 0;
	if (!*in || inet_aton(in, &a4) == 0)
		return 0;
v4:
	memset(addr, 0, 16);
	memcpy(addr, &a4, 4);
	if (!inet_ntop(AF_INET, &a4, out, (socklen_t)outlen))
		return 0;
	return 4;
}

int pol_url_host(const char *url, char *out, size_t outlen)
{
	const char *p, *host, *end;
	char buf[256];
	uint8_t addr[16];
	size_t n;

	for (p = url; *p; p++)
		if ((unsigned char)*p <= 0x20 || *p == 0x7f || *p == '\\')
			return -EINVAL;
	if (!strncasecmp(url, "https://", 8))
		host = url + 8;
	else if (!strncasecmp(url, "http://", 7))
		host = url + 7;
	else
		return -EINVAL;
	end = host + strcspn(host, "/?#");
	/* Userinfo: clients disagree about "a@b@c"; refuse any '@'. */
	if (memchr(host, '@', (size_t)(end - host)))
		return -EINVAL;
	if (*host == '[') {
		const char *rb = memchr(host, ']', (size_t)(end - host));
		if (!rb)
			return -EINVAL;
		n = (size_t)(rb - host) + 1;
		if (rb + 1 < end && rb[1] != ':')
			return -EINVAL;
	} else {
		const char *colon = memchr(host, ':', (size_t)(end - host));
		n = (size_t)((colon ? colon : end) - host);
	}
	if (n == 0 || n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, host, n);
	buf[n] = 0;
	if (strchr(buf, '%'))
		return -EINVAL;
	lower(buf);
	if (n > 1 && buf[n - 1] == '.')
		buf[--n] = 0;
	if (canon_ip(buf, out, outlen, addr))
		return 0;
	if (buf[0] == '[')
		return -EINVAL;
	for (const char *c = buf; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '-' && *c != '.' && *c != '_')
			return -EINVAL;
	if (n >= outlen)
		return -ENAMETOOLONG;
	strcpy(out, buf);
	return 0;
}

static bool valid_dns_name(const char *s)
{
	size_t label = 0;

	if (!*s || strlen(s) > 253)
		return false;
	for (; *s; s++) {
		if (*s == '.') {
			if (label == 0)
				return false;
			label = 0;
			continue;
		}
		if (!isalnum((unsigned char)*s) && *s != '-' && *s != '_')
			return false;
		if (++label > 63)
			return false;
	}
	return label > 0;
}

int pol_host_parse(const char *s, struct pol_host *h)
{
	char buf[256], canon[INET6_ADDRSTRLEN];
	const char *slash;
	int fam;

	memset(h, 0, sizeof(*h));
	if (strlen(s) >= sizeof(buf))
		return -ENAMETOOLONG;
	strcpy(buf, s);
	lower(buf);
	slash = strchr(buf, '/');
	if (slash) {
		char *endp;
		long pfx;

		buf[slash - buf] = 0;
		fam = canon_ip(buf, canon, sizeof(canon), h->addr);
		if (!fam || !slash[1])
			return -EINVAL;
		errno = 0;
		pfx = strtol(slash + 1, &endp, 10);
		if (*endp || errno || pfx < 0 || pfx > (fam == 4 ? 32 : 128))
			return -EINVAL;
		h->kind = fam == 4 ? POL_HOST_CIDR4 : POL_HOST_CIDR6;
		h->prefix = (uint8_t)pfx;
		return 0;
	}
	fam = canon_ip(buf, canon, sizeof(canon), h->addr);
	if (fam) {
		h->kind = fam == 4 ? POL_HOST_CIDR4 : POL_HOST_CIDR6;
		h->prefix = fam == 4 ? 32 : 128;
		return 0;
	}
	if (buf[0] == '*' && buf[1] == '.') {
		if (!valid_dns_name(buf + 2))
			return -EINVAL;
		h->kind = POL_HOST_SUFFIX;
		h->name = strdup(buf + 1);      /* ".example.com" */
		return h->name ? 0 : -ENOMEM;
	}
	if (strlen(buf) > 1 && buf[strlen(buf) - 1] == '.')
		buf[strlen(buf) - 1] = 0;
	if (!valid_dns_name(buf))
		return -EINVAL;
	h->kind = POL_HOST_NAME;
	h->name = strdup(buf);
	return h->name ? 0 : -ENOMEM;
}

static bool prefix_match(const uint8_t *a, const uint8_t *b, unsigned bits)
{
	unsigned whole = bits / 8, rest = bits % 8;

	if (memcmp(a, b, whole))
		return false;
	if (rest) {
		uint8_t mask = (uint8_t)(0xff << (8 - rest));
		return (a[whole] & mask) == (b[whole] & mask);
	}
	return true;
}

/* host: a name (any case) or an IP literal. */
bool pol_host_match(const struct pol_host *h, const char *host)
{
	char canon[INET6_ADDRSTRLEN], name[256];
	uint8_t addr[16];
	int fam = canon_ip(host, canon, sizeof(canon), addr);
	size_t n, m;

	switch (h->kind) {
	case POL_HOST_CIDR4:
		return fam == 4 && prefix_match(addr, h->addr, h->prefix);
	case POL_HOST_CIDR6:
		return fam == 6 && prefix_match(addr, h->addr, h->prefix);
	case POL_HOST_NAME:
	case POL_HOST_SUFFIX:
		if (fam || strlen(host) >= sizeof(name))
			return false;
		strcpy(name, host);
		lower(name);
		n = strlen(name);
		if (n > 1 && name[n - 1] == '.')
			name[--n] = 0;
		if (h->kind == POL_HOST_NAME)
			return !strcmp(name, h->name);
		m = strlen(h->name);
		return n > m && !strcmp(name + n - m, h->name);
	}
	return false;
}

struct unit {
	const char *suffix;
	uint64_t mul;
};

/* A decimal number followed by one of `units` (the first has suffix ""). */
static int parse_scaled(const char *s, const struct unit *units, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!*s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -ERANGE;
	for (const struct unit *u = units; u->suffix; u++)
		if (!strcmp(end, u->suffix)) {
			if (v > UINT64_MAX / u->mul)
				return -ERANGE;
			*out = v * u->mul;
			return 0;
		}
	return -EINVAL;
}

int pol_parse_duration(const char *s, uint64_t *secs)
{
	static const struct unit units[] = {
		{ "", 1 }, { "s", 1 }, { "m", 60 }, { "h", 3600 }, { "d", 86400 }, { NULL, 0 },
	};
	return parse_scaled(s, units, secs);
}

int pol_parse_size(const char *s, uint64_t *bytes)
{
	static const struct unit units[] = {
		{ "", 1 }, { "B", 1 }, { "K", 1ull << 10 }, { "KiB", 1ull << 10 },
		{ "M", 1ull << 20 }, { "MiB", 1ull << 20 }, { "G", 1ull << 30 }, { "GiB", 1ull << 30 },
		{ "T", 1ull << 40 }, { "TiB", 1ull << 40 }, { NULL, 0 },
	};
	return parse_scaled(s, units, bytes);
}

/* --- paths against patterns ------------------------------------------------ */

static bool has_glob(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] == '*' || s[i] == '?' || s[i] == '[')
			return true;
	return false;
}

static bool is_starstar(const char *s, size_t n)
{
	return n == 2 && s[0] == '*' && s[1] == '*';
}

int pol_pattern_check(const char *pattern, const char **why)
{
	size_t n = 0;
	bool glob_seen = false;

	for (const char *q = pattern; *q;) {
		size_t qn;

		while (*q == '/')
			q++;
		if (!*q)
			break;
		qn = strcspn(q, "/");
		if (!is_starstar(q, qn) && memmem(q, qn, "**", 2)) {
			*why = "\"**\" must be a whole path component (\"a/**/b\": any depth, "
			       "as in .gitignore)";
			return -EINVAL;
		}
		/*
		 * ".." after a glob has no lexical meaning: a "**" then ".." is
		 * beside any directory below (and above it too), but normalising
		 * dropped both, leaving a deny that named one file.
		 */
		if (glob_seen && qn == 2 && q[0] == '.' && q[1] == '.') {
			*why = "\"..\" after a glob component cannot be resolved without the "
			       "files (\"a/**/..\" is not \"a\"): name the directory";
			return -EINVAL;
		}
		if (has_glob(q, qn))
			glob_seen = true;
		if (qn > NAME_MAX) {
			*why = "a path component is longer than 255 bytes";
			return -EINVAL;
		}
		if (++n > POL_GLOB_MAX_COMPONENTS) {
			*why = "a pattern has more than 128 components";
			return -EINVAL;
		}
		q += qn;
	}
	return 0;
}

static bool comp_match(const char *q, size_t qn, const char *p, size_t pn)
{
	char pc[NAME_MAX + 1], qc[NAME_MAX + 1];

	if (!has_glob(q, qn))
		return pn == qn && !memcmp(p, q, pn);
	if (pn > NAME_MAX || qn > NAME_MAX)
		return false;
	memcpy(pc, p, pn);
	pc[pn] = 0;
	memcpy(qc, q, qn);
	qc[qn] = 0;
	return fnmatch(qc, pc, FNM_PERIOD) == 0;
}

/*
 * The path's components are fed to the pattern as to an automaton whose
 * states are pattern positions: a plain component or a one-component glob
 * moves on when it matches, "**" both stays (it took one more directory)
 * and is skipped (it took none), so the pattern a, "**", .env matches a/.env,
 * a/b/.env and a/b/c/.env, and dot directories too (as .gitignore reads
 * it; "*" alone never matches a leading dot).  Time: components of the
 * path times components of the pattern, never exponential in the "**"s.
 * A pattern longer than POL_GLOB_MAX_COMPONENTS matches nothing: the
 * parser refuses such patterns (pol_pattern_check), the invariants have none.
 */
/* One component for one: the patterns without "**" (every invariant), on every request. */
static enum pol_glob_rel glob_rel_flat(const char *path, const char *pattern)
{
	const char *p = path, *q = pattern;

	for (;;) {
		size_t pn, qn;

		while (*p == '/')
			p++;
		while (*q == '/')
			q++;
		if (!*q)
			return POL_GLOB_WITHIN;
		if (!*p)
			return POL_GLOB_ANCESTOR;
		pn = strcspn(p, "/");
		qn = strcspn(q, "/");
		if (!comp_match(q, qn, p, pn))
			return POL_GLOB_NONE;
		p += pn;
		q += qn;
	}
}

static bool has_starstar(const char *pattern)
{
	for (const char *s = strstr(pattern, "**"); s; s = strstr(s + 1, "**"))
		if (s[-1] == '/' && (s[2] == '/' || !s[2]))
			return true;
	return false;
}

enum pol_glob_rel pol_glob_rel(const char *path, const char *pattern)
{
	const char *qs[POL_GLOB_MAX_COMPONENTS];
	size_t qn[POL_GLOB_MAX_COMPONENTS], m = 0;
	bool cur[POL_GLOB_MAX_COMPONENTS + 1] = { false }, nxt[POL_GLOB_MAX_COMPONENTS + 1];
	const char *p = path, *q = pattern;
	bool any;

	if (!has_starstar(pattern))
		return glob_rel_flat(path, pattern);
	for (;;) {
		while (*q == '/')
			q++;
		if (!*q)
			break;
		if (m == POL_GLOB_MAX_COMPONENTS)
			return POL_GLOB_NONE;
		qs[m] = q;
		qn[m] = strcspn(q, "/");
		q += qn[m++];
	}
	cur[0] = true;
	for (size_t j = 0; j < m; j++)          /* "**" may take no directory */
		if (cur[j] && is_starstar(qs[j], qn[j]))
			cur[j + 1] = true;
	if (cur[m])
		return POL_GLOB_WITHIN;
	for (;;) {
		size_t pn;

		while (*p == '/')
			p++;
		if (!*p)
			return POL_GLOB_ANCESTOR;
		pn = strcspn(p, "/");
		memset(nxt, 0, sizeof(nxt));
		any = false;
		for (size_t j = 0; j < m; j++) {
			if (!cur[j])
				continue;
			if (is_starstar(qs[j], qn[j]))
				nxt[j] = any = true;
			else if (comp_match(qs[j], qn[j], p, pn))
				nxt[j + 1] = any = true;
		}
		if (!any)
			return POL_GLOB_NONE;
		for (size_t j = 0; j < m; j++)
			if (nxt[j] && is_starstar(qs[j], qn[j]))
				nxt[j + 1] = true;
		if (nxt[m])
			return POL_GLOB_WITHIN;
		memcpy(cur, nxt, sizeof(cur));
		p += pn;
	}
}

bool pol_glob_within(const char *path, const char *pattern)
{
	return pol_glob_rel(path, pattern) == POL_GLOB_WITHIN;
}
