// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The policy evaluator benchmark behind tools/bench/policy.sh.
 *
 * Every supervised operation (an exec, an MCP call, a connection through
 * the broker) waits for pol_eval, so its latency on a large policy is a
 * cost the agent pays on each step.  This program writes a realistic
 * 1,000-rule policy in memory (600 fs rules on distinct trees at various
 * depths, 250 net rules with names, suffixes, v4 and v6 CIDRs and port
 * ranges, 150 tool rules with argument conditions), loads it, and times a
 * mixed stream of pre-built requests through pol_eval (indexed) and
 * pol_eval_linear (every rule scanned, the baseline).
 *
 * The two must agree on every request of the stream: a fast answer that
 * differs from the plain one is a bug, not a speed-up, so a disagreement
 * exits 1 before anything is timed.
 *
 * Output, one measurement a line, for policy.sh to lay out:
 *   info KEY VALUE
 *   load WHAT MEDIAN_MS P90_MS RUNS
 *   eval EVALUATOR CLASS MEDIAN_NS P90_NS SAMPLES
 *   check RULES MEDIAN_MS P90_MS RUNS WARNINGS BYTES
 * where an eval sample is the mean of BATCH consecutive evaluations, and a
 * check is `policy check` of a policy of RULES rules with the same mix
 * (`policy_bench check N` runs only that, once, to profile it).
 * Everything is seeded: two runs judge the same requests.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include "policy.h"
#include "english.h"
#include "util.h"

#define N_FS_RULES    600
#define N_NET_RULES   250
#define N_TOOL_RULES  150
#define N_REQUESTS    4096
#define BATCH         1000
#define SAMPLES_ALL   201
#define SAMPLES_CLASS 51
#define LOAD_RUNS     11

enum req_class {
	CLASS_FS = 0,
	CLASS_NET,
	CLASS_TOOL,
	N_CLASSES,
};

static const char *const class_names[N_CLASSES] = { "fs", "net", "tool" };

/* --- a growing string ------------------------------------------------------ */

struct sb {
	char *buf;
	size_t len, cap;
};

__attribute__((format(printf, 2, 3)))
static int sb_printf(struct sb *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		size_t room = b->cap - b->len;

		va_start(ap, fmt);
		n = vsnprintf(b->buf ? b->buf + b->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0)
			return -EINVAL;
		if ((size_t)n < room) {
			b->len += (size_t)n;
			return 0;
		}
		{
			size_t ncap = (b->cap ? b->cap * 2 : 4096) + (size_t)n;
			char *nb = realloc(b->buf, ncap);

			if (!nb)
				return -ENOMEM;
			b->buf = nb;
			b->cap = ncap;
		}
	}
}

/* xorshift64*: a fixed seed, so every run writes and judges the same things. */
static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)
{
	rnd_state ^= rnd_state >> 12;
	rnd_state ^= rnd_state << 25;
	rnd_state ^= rnd_state >> 27;
	return (uint32_t)((rnd_state * 2685821657736338717ull) >> 33) % n;
}

static __attribute__((noreturn, format(printf, 1, 2))) void die(const char *fmt, ...)
{
	va_list ap;

	fputs("policy_bench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* --- the policy -------------------------------------------------------------- */

static const char *const fs_tops[] = { "${WORKSPACE}", "/srv/data", "/opt/tools", "${HOME}",
				       "/var/cache/build", "/data/sets" };
static const char *const fs_rights[] = {
	"\"read\"", "\"read\", \"exec\"", "\"read\", \"write\"",
	"\"read\", \"write\", \"create\", \"delete\"", "\"all\"", "\"write\", \"create\"",
};

static const char *decision(unsigned i, unsigned deny_every, unsigned esc_every)
{
	if (i % deny_every == 0)
		return "deny";
	if (i % esc_every == 0)
		return "escalate";
	return "allow";
}

/* Root of fs rule i: its own tree, 3 to 7 components deep. */
static void fs_root(char *out, size_t len, unsigned i)
{
	unsigned t = i / ARRAY_SIZE(fs_tops);
	int o = snprintf(out, len, "%s/p%03u", fs_tops[i % ARRAY_SIZE(fs_tops)], t);

	for (unsigned d = 0; d < t % 5 && o > 0 && (size_t)o < len; d++)
		o += snprintf(out + o, len - (size_t)o, "/l%u", d);
}

static int gen_fs(struct sb *b, unsigned i)
{
	char root[256], extra[300] = "";
	const char *dec;

	/*
	 * Every tenth rule closes a subtree of a neighbour's tree (the usual
	 * "allow the project, deny its secrets"), a few are globs (scanned on
	 * every request even by the index), one uses a list.
	 */
	if (i % 10 == 9) {
		fs_root(root, sizeof(root), i - ARRAY_SIZE(fs_tops));
		strcat(root, "/secret");
		dec = i % 20 == 9 ? "deny" : "escalate";
	} else if (i % 100 == 50) {
		snprintf(root, sizeof(root), "/home/*/cache%02u", i / 100);
		dec = "allow";
	} else {
		fs_root(root, sizeof(root), i);
		dec = decision(i, 13, 17);
	}
	if (i % 7 == 0)
		snprintf(extra, sizeof(extra), ", \"%s/q%03u\"", fs_tops[(i + 1) % ARRAY_SIZE(fs_tops)],
			 i);
	if (i == 1)
		snprintf(extra, sizeof(extra), ", \"@build_tools\"");
	return sb_printf(b, "{ \"name\": \"fs-%u\", \"decision\": \"%s\", "
			 "\"fs\": { \"paths\": [\"%s\"%s], \"rights\": [%s] } },\n",
			 i, dec, root, extra, fs_rights[i % ARRAY_SIZE(fs_rights)]);
}

static int gen_net(struct sb *b, unsigned j)
{
	const char *dec = decision(j + 1, 9, 11);
	unsigned k = j / 5, o = k & 255;        /* an octet (k itself below 256 rules) */

	switch (j % 5) {
	case 0:
		return sb_printf(b, "{ \"name\": \"net-%u\", \"decision\": \"%s\", \"net\": { "
				 "\"hosts\": [\"api%u.svc%u.example.com\"], \"ports\": [443], "
				 "\"via\": \"credential-proxy\" } },\n", j, dec, k, k % 10);
	case 1:
		return sb_printf(b, "{ \"name\": \"net-%u\", \"decision\": \"%s\", \"net\": { "
				 "\"hosts\": [\"*.corp%u.example.net\"], "
				 "\"ports\": [443, \"8000-8100\"] } },\n", j, dec, k);
	case 2:
		switch (k % 4) {
		case 0:
			return sb_printf(b, "{ \"name\": \"net-%u\", \"decision\": \"%s\", \"net\": { "
					 "\"hosts\": [\"10.%u.0.0/16\"] } },\n", j, dec, o);
		case 1:
			return sb_printf(b, "{ \"name\": \"net-%u\", \"decision\": \"%s\", \"net\": { "
					 "\"hosts\": [\"10.%u.%u.0/24\"], \"ports\": [\"1-1024\"] } },\n",
					 j, dec, 100 + k % 100, o);
		case 2:
			return sb_printf(b, "{ \"name\": \"net-%u\", \"decision\": \"%s\", \"net\": { "
					 "\"hosts\": [\"192.168.%u.0/28\", \"172.16.%u.%u\"] } },\n",
					 j, dec, o, o, k % 250 + 1);
		default:
			return sb_printf(b, "{ \"name\": \"net-%u\", \"decision\": \"%s\", \"net\": { "
					 "\"hosts\": [\"10.%u.0.0/12\"], \"ports\": [5432, 6379] } },\n",
					 j, dec, 16 * (k % 16));
		}
	case 3:
		if (k % 3 == 0)
			return sb_printf(b, "{ \"name\": \"net-%u\", \"decision\": \"%s\", \"net\": { "
					 "\"hosts\": [\"2001:db8:%x::/48\"] } },\n", j, dec, k);
		if (k % 3 == 1)
			return sb_printf(b, "{ \"name\": \"net-%u\", \"decision\": \"%s\", \"net\": { "
					 "\"hosts\": [\"2001:db8:ff:%x::/64\"], \"ports\": [443] } },\n",
					 j, dec, k);
		return sb_printf(b, "{ \"name\": \"net-%u\", \"decision\": \"%s\", \"net\": { "
				 "\"hosts\": [\"fd00::%x\"] } },\n", j, dec, k);
	default:
		return sb_printf(b, "{ \"name\": \"net-%u\", \"decision\": \"%s\", \"net\": { "
				 "\"hosts\": [\"pkg%u.registry.example.io\", \"*.mirror%u.example.io\", "
				 "\"198.51.100.%u\"], \"ports\": [80, 443], \"via\": \"egress\" } },\n",
				 j, dec, k, k, k % 250 + 1);
	}
}

static int gen_tool(struct sb *b, unsigned k)
{
	const char *dec = decision(k + 3, 8, 5);
	char name[64];

	if (k == N_TOOL_RULES - 1)
		snprintf(name, sizeof(name), "*.delete_everything");
	else if (k % 25 == 24)
		snprintf(name, sizeof(name), "srv%02u.*", k % 30);
	else
		snprintf(name, sizeof(name), "srv%02u.t%u", k % 30, k / 30);
	switch (k % 6) {
	case 0:
		return sb_printf(b, "{ \"name\": \"tool-%u\", \"decision\": \"%s\", \"tool\": { "
				 "\"name\": \"%s\", \"args\": { \"path\": { \"within\": "
				 "[\"${WORKSPACE}/m%u\", \"${TMPDIR}\"] } } } },\n", k, dec, name, k);
	case 1:
		return sb_printf(b, "{ \"name\": \"tool-%u\", \"decision\": \"%s\", \"tool\": { "
				 "\"name\": \"%s\", \"args\": { \"url\": { \"domain_in\": "
				 "[\"docs%u.example.org\", \"*.example.com\"] }, "
				 "\"method\": { \"in\": [\"GET\", \"HEAD\"] } } } },\n", k, dec, name, k);
	case 2:
		return sb_printf(b, "{ \"name\": \"tool-%u\", \"decision\": \"%s\", \"tool\": { "
				 "\"name\": \"%s\", \"args\": { \"mode\": { \"in\": [\"fast\", \"safe\"] }, "
				 "\"n\": { \"any\": true } } } },\n", k, dec, name);
	case 3:
		return sb_printf(b, "{ \"name\": \"tool-%u\", \"decision\": \"%s\", \"tool\": { "
				 "\"name\": \"%s\", \"args\": { \"branch\": { \"prefix\": \"feature/\" }, "
				 "\"remote\": { \"equals\": \"origin\" } } } },\n", k, dec, name);
	case 4:
		return sb_printf(b, "{ \"name\": \"tool-%u\", \"decision\": \"%s\", \"tool\": { "
				 "\"name\": \"%s\", \"args\": { \"name\": { \"glob\": \"*.txt\" } } } },\n",
				 k, dec, name);
	default:
		return sb_printf(b, "{ \"name\": \"tool-%u\", \"decision\": \"%s\", \"tool\": { "
				 "\"name\": \"%s\", \"args\": { \"force\": { \"equals\": false } } } },\n",
				 k, dec, name);
	}
}

/* The policy text, NUL-terminated, in b: n_fs, n_net and n_tool rules. */
static int gen_policy(struct sb *b, unsigned n_fs, unsigned n_net, unsigned n_tool)
{
	unsigned nf = 0, nn = 0, nt = 0;
	int r;

	r = sb_printf(b, "{\n\"cordon_policy\": 1,\n\"name\": \"bench-%u\",\n"
		      "\"description\": \"generated by tools/bench/policy_bench.c\",\n"
		      "\"lists\": { \"build_tools\": [\"/opt/tools/bin\", \"/opt/tools/lib\"] },\n"
		      "\"rules\": [\n", n_fs + n_net + n_tool);
	/* Interleaved, as a hand-grown policy is, rather than grouped by kind. */
	while (!r && (nf < n_fs || nn < n_net || nt < n_tool)) {
		unsigned pick = rnd(n_fs + n_net + n_tool);

		if (pick < n_fs && nf < n_fs)
			r = gen_fs(b, nf++);
		else if (pick >= n_fs && pick < n_fs + n_net && nn < n_net)
			r = gen_net(b, nn++);
		else if (pick >= n_fs + n_net && nt < n_tool)
			r = gen_tool(b, nt++);
	}
	if (r)
		return r;
	b->len -= 2;    /* the last ",\n" */
	return sb_printf(b, "\n],\n\"approvals\": { \"timeout\": \"120s\", \"on_timeout\": \"deny\" },\n"
			 "\"budgets\": { \"wall_time\": \"2h\", \"steps\": 20000, \"memory\": \"4G\", "
			 "\"pids\": 512, \"cpu\": 2 }\n}\n");
}

/* --- the request stream -------------------------------------------------------- */

struct stream {
	struct pol_request *reqs;
	enum req_class *cls;
	size_t n;
	char **strs;            /* everything the requests point at, to free */
	size_t n_strs, cap_strs;
	json_t **args;
	size_t n_args;
};

static const char *keep(struct stream *s, char *str)
{
	if (!str)
		die("out of memory");
	if (s->n_strs == s->cap_strs) {
		s->cap_strs = s->cap_strs ? s->cap_strs * 2 : 1024;
		s->strs = realloc(s->strs, s->cap_strs * sizeof(*s->strs));
		if (!s->strs)
			die("out of memory");
	}
	s->strs[s->n_strs++] = str;
	return str;
}

static const struct pol_rule *pick_rule(const struct policy *p, enum pol_kind kind)
{
	for (;;) {
		const struct pol_rule *r = &p->rules[rnd((uint32_t)p->n_rules)];

		if (r->kind == kind)
			return r;
	}
}

static size_t depth(const char *path)
{
	size_t d = 0;

	for (; *path; path++)
		d += *path == '/';
	return d;
}

static void make_fs(struct stream *s, const struct policy *p, struct pol_request *req)
{
	static const char *const parts[] = { "src", "lib", "include", "test", "build", "docs",
					     "v2", "internal", "util", "core" };
	static const char *const files[] = { "main.c", "README.md", "index.ts", "mod.rs",
					     "data.json", "Makefile" };
	unsigned dice = rnd(100);
	size_t want = 4 + rnd(5);       /* 4 to 8 components */
	char path[PATH_MAX];
	int o;

	req->op = dice % 10 < 6 ? POL_OP_READ : dice % 10 < 9 ? POL_OP_WRITE : POL_OP_CREATE;
	if (dice < 70) {
		const struct pol_rule *r;

		do
			r = pick_rule(p, POL_FS);
		while (strpbrk(r->fs.paths[0], "*?["));
		o = snprintf(path, sizeof(path), "%s", r->fs.paths[rnd((uint32_t)r->fs.n_paths)]);
	} else if (dice < 80) {
		o = snprintf(path, sizeof(path), "/home/user%u/cache%02u", rnd(50), rnd(6));
	} else if (dice < 90) {
		/* A sibling whose name extends a rule's root: must not match. */
		o = snprintf(path, sizeof(path), "%sx", pick_rule(p, POL_FS)->fs.paths[0]);
		for (char *c = path; *c; c++)
			if (*c == '*')
				*c = 'z';
	} else {
		o = snprintf(path, sizeof(path), "/usr/share/doc/pkg%u", rnd(1000));
	}
	do
		o += snprintf(path + o, sizeof(path) - (size_t)o, "/%s",
			      depth(path) + 1 < want ? parts[rnd(ARRAY_SIZE(parts))] :
						       files[rnd(ARRAY_SIZE(files))]);
	while (depth(path) < want);
	req->path = keep(s, strdup(path));
}

static void make_net(struct stream *s, const struct policy *p, struct pol_request *req)
{
	static const uint16_t ports[] = { 443, 443, 443, 80, 8080, 8443, 5432, 22 };
	unsigned dice = rnd(100);
	char host[300];

	req->op = POL_OP_CONNECT;
	req->port = ports[rnd(ARRAY_SIZE(ports))];
	if (dice < 80) {
		const struct pol_rule *r = pick_rule(p, POL_NET);
		const struct pol_host *h = &r->net.hosts[rnd((uint32_t)r->net.n_hosts)];
		uint8_t a[16];

		if (r->net.n_ports && dice < 60)
			req->port = r->net.ports[0].lo;
		switch (h->kind) {
		case POL_HOST_NAME:
			snprintf(host, sizeof(host), "%s", h->name);
			break;
		case POL_HOST_SUFFIX:
			snprintf(host, sizeof(host), "build%u%s", rnd(100), h->name);
			break;
		case POL_HOST_CIDR4:
		case POL_HOST_CIDR6:
			/* A random address inside the prefix. */
			memcpy(a, h->addr, sizeof(a));
			for (unsigned bit = h->prefix; bit < (h->kind == POL_HOST_CIDR4 ? 32u : 128u);
			     bit++)
				if (rnd(2))
					a[bit / 8] |= (uint8_t)(0x80 >> (bit % 8));
			if (!inet_ntop(h->kind == POL_HOST_CIDR4 ? AF_INET : AF_INET6, a, host,
				       sizeof(host)))
				die("inet_ntop: %m");
			break;
		}
	} else if (dice < 87) {
		snprintf(host, sizeof(host), "cdn%u.unknown-%u.org", rnd(1000), rnd(50));
	} else if (dice < 94) {
		snprintf(host, sizeof(host), "203.0.113.%u", rnd(256));
	} else {
		snprintf(host, sizeof(host), "2001:db8:ffff::%x", rnd(65536));
	}
	req->host = keep(s, strdup(host));
}

/* An argument value that meets condition c, or (meet false) misses it. */
static json_t *arg_value(const struct pol_cond *c, bool meet)
{
	char buf[PATH_MAX];

	switch (c->kind) {
	case POL_COND_ANY:
		return json_integer(rnd(100));
	case POL_COND_EQUALS:
		return meet ? json_deep_copy(c->value) : json_true();
	case POL_COND_IN:
		return meet ? json_deep_copy(json_array_get(c->value, 0)) : json_string("slow");
	case POL_COND_WITHIN:
		snprintf(buf, sizeof(buf), "%s/src/file%u.c", c->strs[0], rnd(100));
		return json_string(meet ? buf : "/etc/passwd");
	case POL_COND_DOMAIN_IN:
		snprintf(buf, sizeof(buf), "https://%s%s/v1/items?q=%u",
			 c->hosts[0].kind == POL_HOST_SUFFIX ? "api" : "", c->hosts[0].name, rnd(100));
		return json_string(meet ? buf : "https://evil.test/upload");
	case POL_COND_PREFIX:
		snprintf(buf, sizeof(buf), "%stopic-%u", c->strs[0], rnd(100));
		return json_string(meet ? buf : "main");
	case POL_COND_GLOB:
		snprintf(buf, sizeof(buf), "notes%u.txt", rnd(100));
		return json_string(meet ? buf : "image.bin");
	}
	return json_null();
}

static void make_tool(struct stream *s, const struct policy *p, struct pol_request *req)
{
	unsigned dice = rnd(100);
	json_t *args = json_object();
	char name[64];

	if (!args)
		die("out of memory");
	req->op = POL_OP_TOOL;
	if (dice < 90) {
		const struct pol_rule *r = pick_rule(p, POL_TOOL);

		if (strcmp(r->tool.server, "*"))
			req->server = r->tool.server;
		else
			req->server = keep(s, (snprintf(name, sizeof(name), "srv%02u", rnd(30)),
					       strdup(name)));
		if (strcmp(r->tool.tool, "*"))
			req->tool = r->tool.tool;
		else
			req->tool = keep(s, (snprintf(name, sizeof(name), "t%u", rnd(8)),
					     strdup(name)));
		for (size_t i = 0; i < r->tool.n_conds; i++)
			json_object_set_new(args, r->tool.conds[i].key,
					    arg_value(&r->tool.conds[i], dice < 65));
	} else {
		req->server = keep(s, (snprintf(name, sizeof(name), "other%u", rnd(20)),
				       strdup(name)));
		req->tool = "run";
		json_object_set_new(args, "cmd", json_string("ls"));
	}
	req->args = args;
	s->args[s->n_args++] = args;
}

static void make_stream(struct stream *s, const struct policy *p, size_t n)
{
	s->reqs = calloc(n, sizeof(*s->reqs));
	s->cls = calloc(n, sizeof(*s->cls));
	s->args = calloc(n, sizeof(*s->args));
	if (!s->reqs || !s->cls || !s->args)
		die("out of memory");
	s->n = n;
	for (size_t i = 0; i < n; i++) {
		unsigned dice = rnd(100);

		if (dice < 50) {
			s->cls[i] = CLASS_FS;
			make_fs(s, p, &s->reqs[i]);
		} else if (dice < 75) {
			s->cls[i] = CLASS_NET;
			make_net(s, p, &s->reqs[i]);
		} else {
			s->cls[i] = CLASS_TOOL;
			make_tool(s, p, &s->reqs[i]);
		}
	}
}

static void free_stream(struct stream *s)
{
	for (size_t i = 0; i < s->n_strs; i++)
		free(s->strs[i]);
	for (size_t i = 0; i < s->n_args; i++)
		json_decref(s->args[i]);
	free(s->strs);
	free(s->args);
	free(s->reqs);
	free(s->cls);
}

/* --- measuring ------------------------------------------------------------------ */

typedef void (*eval_fn)(const struct policy *p, const struct pol_request *req,
			struct pol_result *res);

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median and 90th percentile of v[n]; sorts v. */
static void percentiles(double *v, size_t n, double *median, double *p90)
{
	qsort(v, n, sizeof(*v), cmp_double);
	*median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	*p90 = v[(size_t)(0.9 * (double)(n - 1) + 0.5)];
}

static volatile uint32_t sink;

/*
 * `samples` batches of BATCH evaluations each, walking the requests in
 * order and wrapping around; each sample is the mean ns of its batch.
 */
static void bench_eval(const char *evaluator, const char *cls, eval_fn fn,
		       const struct policy *p, const struct pol_request *const *reqs, size_t n,
		       size_t samples)
{
	double *v = calloc(samples, sizeof(*v)), median, p90;
	struct pol_result res;
	size_t k = 0;

	if (!v)
		die("out of memory");
	/* Warm the caches and the branch predictors on the whole stream once. */
	for (size_t i = 0; i < n; i++)
		fn(p, reqs[i], &res);
	for (size_t s = 0; s < samples; s++) {
		double t0 = now_ns();

		for (size_t i = 0; i < BATCH; i++) {
			fn(p, reqs[k], &res);
			sink += res.decision;
			if (++k == n)
				k = 0;
		}
		v[s] = (now_ns() - t0) / BATCH;
	}
	percentiles(v, samples, &median, &p90);
	printf("eval %s %s %.1f %.1f %zu\n", evaluator, cls, median, p90, samples);
	free(v);
}

/*
 * The structural invariants alone, as pol_eval checks them before any rule
 * on every fs request: the share of the fs latency that is not rule matching.
 */
static void invariants_only(const struct policy *p, const struct pol_request *req,
			    struct pol_result *res)
{
	static const uint32_t rights[] = {
		[POL_OP_READ] = CORDON_FS_READ, [POL_OP_WRITE] = CORDON_FS_WRITE,
		[POL_OP_CREATE] = CORDON_FS_CREATE, [POL_OP_DELETE] = CORDON_FS_DELETE,
		[POL_OP_EXEC] = CORDON_FS_EXEC, [POL_OP_CHMOD] = CORDON_FS_CHMOD,
	};
	const char *why = NULL;

	res->decision = (unsigned)req->op < ARRAY_SIZE(rights) &&
			pol_invariant_fs(p, req->path, rights[req->op], &why) ?
			CORDON_DENY : CORDON_ALLOW;
}

static void set_vars(struct pol_vars *vars)
{
	if (pol_vars_set(vars, "WORKSPACE", "/work/project") < 0 ||
	    pol_vars_set(vars, "HOME", "/home/agent") < 0 ||
	    pol_vars_set(vars, "USER", "agent") < 0 ||
	    pol_vars_set(vars, "UID", "1000") < 0 ||
	    pol_vars_set(vars, "TMPDIR", "/tmp") < 0)
		die("cannot set variables");
}

static struct policy *load(const struct sb *text, const struct pol_vars *vars, bool warnings)
{
	struct pol_diags diags = { .no_warnings = !warnings };
	struct policy *p = NULL;
	int r = pol_load_text(text->buf, text->len, "bench.json", vars, &p, &diags);

	if (r < 0) {
		pol_diags_print(&diags, "bench.json", stderr);
		die("the generated policy does not load: %s", strerror(-r));
	}
	pol_diags_free(&diags);
	return p;
}

static void bench_load(const char *what, const struct sb *text, const struct pol_vars *vars,
		       bool warnings)
{
	double v[LOAD_RUNS], median, p90;

	for (size_t i = 0; i < LOAD_RUNS; i++) {
		double t0 = now_ns();

		pol_free(load(text, vars, warnings));
		v[i] = (now_ns() - t0) / 1e6;
	}
	percentiles(v, LOAD_RUNS, &median, &p90);
	printf("load %s %.3f %.3f %d\n", what, median, p90, LOAD_RUNS);
}

/*
 * `cordon policy check` (load with every warning) of policies of n rules,
 * the 1,000-rule policy's mix scaled up (60% fs, 25% net, 15% tool): the
 * check used to be quadratic (shadowing compared every pair of rules; rule
 * names and canonical directories were found by scans), 28 s at 60,000
 * rules; the rows compare the time per rule at two sizes.  Each run is a
 * fresh process, as the command is: a heap another run already grew would
 * hide the page faults a real check pays (a third of its time here).
 */
static double check_once(const struct sb *text, const struct pol_vars *vars, unsigned n,
			 size_t *warnings)
{
	int fds[2];
	pid_t pid;
	struct { double ms; size_t warnings; } res = { -1, 0 };

	if (pipe(fds) < 0 || (pid = fork()) < 0)
		die("pipe or fork: %m");
	if (pid == 0) {
		struct pol_diags diags = { 0 };
		struct policy *p = NULL;
		double t0 = now_ns();
		int r = pol_load_text(text->buf, text->len, "bench.json", vars, &p, &diags);

		res.ms = (now_ns() - t0) / 1e6;
		res.warnings = diags.n;
		if (r < 0) {
			pol_diags_print(&diags, "bench.json", stderr);
			res.ms = -1;
		}
		if (write(fds[1], &res, sizeof(res)) != (ssize_t)sizeof(res))
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	if (read(fds[0], &res, sizeof(res)) != (ssize_t)sizeof(res) || res.ms < 0)
		die("the generated %u-rule policy does not load", n);
	close(fds[0]);
	(void)waitpid(pid, NULL, 0);
	*warnings = res.warnings;
	return res.ms;
}

static void bench_check(unsigned n, const struct pol_vars *vars, int runs)
{
	struct sb text = { 0 };
	double v[LOAD_RUNS], median, p90;
	size_t warnings = 0;

	if (gen_policy(&text, n * 60 / 100, n * 25 / 100, n - n * 60 / 100 - n * 25 / 100) < 0)
		die("out of memory");
	fflush(stdout);
	for (int i = 0; i < runs; i++)
		v[i] = check_once(&text, vars, n, &warnings);
	percentiles(v, (size_t)runs, &median, &p90);
	printf("check %u %.3f %.3f %d %zu %zu\n", n, median, p90, runs, warnings, text.len);
	free(text.buf);
}

/*
 * A 1,000-sentence constitution (policy/english/), every form that makes
 * rules in turn, each sentence on its own tree: the time to compile it to
 * JSON, and to load it as `cordon run` does (compile, validate, index).
 */
#define N_SENTENCES 1000

static void gen_constitution(struct sb *t)
{
	for (int i = 0; i < N_SENTENCES; i++)
		switch (i % 6) {
		case 0: sb_printf(t, "The agent may read and change anything in /srv/t%d.\n", i); break;
		case 1: sb_printf(t, "Never read /data/d%d/secret.\n", i); break;
		case 2: sb_printf(t, "The agent may reach h%d.example.com on port %d.\n", i, 1024 + i); break;
		case 3: sb_printf(t, "Ask me before reading /var/a%d.\n", i); break;
		case 4: sb_printf(t, "The agent may call s%d.t when path is within /srv/t%d and mode "
				  "may be anything.\n", i, i); break;
		default: sb_printf(t, "The agent may read anything in /opt/o%d except /opt/o%d/private.\n",
				   i, i); break;
		}
}

static void bench_constitution(const struct pol_vars *vars)
{
	double v[LOAD_RUNS], w[LOAD_RUNS], median, p90;
	struct sb text = { 0 };
	struct en_error e;

	gen_constitution(&text);
	if (!text.buf)
		die("out of memory");
	for (size_t i = 0; i < LOAD_RUNS; i++) {
		struct pol_diags diags = { .no_warnings = true };
		struct policy *p = NULL;
		json_t *j = NULL;
		double t0 = now_ns();

		if (en_compile(text.buf, text.len, "bench.en", &j, &e) < 0)
			die("the generated constitution does not compile: %d:%d: %s", e.line, e.col,
			    e.message);
		v[i] = (now_ns() - t0) / 1e6;
		json_decref(j);
		t0 = now_ns();
		if (pol_load_text(text.buf, text.len, "bench.en", vars, &p, &diags) < 0)
			die("the generated constitution does not load");
		w[i] = (now_ns() - t0) / 1e6;
		pol_free(p);
		pol_diags_free(&diags);
	}
	printf("info en_sentences %d\ninfo en_bytes %zu\n", N_SENTENCES, text.len);
	percentiles(v, LOAD_RUNS, &median, &p90);
	printf("load en-compile %.3f %.3f %d\n", median, p90, LOAD_RUNS);
	percentiles(w, LOAD_RUNS, &median, &p90);
	printf("load en-load %.3f %.3f %d\n", median, p90, LOAD_RUNS);
	free(text.buf);
}

/* Indexed and linear must give the same answer on every request. */
static void check_agreement(const struct policy *p, const struct stream *s)
{
	size_t counts[3] = { 0 };

	for (size_t i = 0; i < s->n; i++) {
		const struct pol_request *req = &s->reqs[i];
		struct pol_result a, b;

		pol_eval(p, req, &a);
		pol_eval_linear(p, req, &b);
		if (a.decision != b.decision || a.rule != b.rule || a.via != b.via ||
		    (a.invariant != b.invariant &&
		     (!a.invariant || !b.invariant || strcmp(a.invariant, b.invariant))))
			die("request %zu (%s %s%s%s%s): indexed says %s (%s), linear says %s (%s)", i,
			    pol_op_name(req->op), req->path ? req->path : "", req->host ? req->host : "",
			    req->server ? req->server : "", req->tool ? req->tool : "",
			    pol_decision_name(a.decision), a.reason, pol_decision_name(b.decision),
			    b.reason);
		if (a.decision < ARRAY_SIZE(counts))
			counts[a.decision]++;
	}
	printf("info agree %zu\n", s->n);
	printf("info allow %zu\ninfo escalate %zu\ninfo deny %zu\n", counts[CORDON_ALLOW],
	       counts[CORDON_ESCALATE], counts[CORDON_DENY]);
}

int main(int argc, char **argv)
{
	const struct pol_request **all, **by_class[N_CLASSES];
	size_t n_class[N_CLASSES] = { 0 };
	struct pol_vars vars = { 0 };
	struct stream s = { 0 };
	struct sb text = { 0 };
	struct policy *p;
	size_t counts[3] = { 0 };

	set_vars(&vars);
	/* "check N": only the check of an N-rule policy (to profile it). */
	if (argc == 3 && !strcmp(argv[1], "check")) {
		bench_check((unsigned)strtoul(argv[2], NULL, 10), &vars, 1);
		pol_vars_free(&vars);
		return 0;
	}
	if (gen_policy(&text, N_FS_RULES, N_NET_RULES, N_TOOL_RULES) < 0)
		die("out of memory");
	p = load(&text, &vars, false);
	for (size_t i = 0; i < p->n_rules; i++)
		counts[p->rules[i].kind]++;
	printf("info rules %zu\ninfo fs_rules %zu\ninfo net_rules %zu\ninfo tool_rules %zu\n",
	       p->n_rules, counts[POL_FS], counts[POL_NET], counts[POL_TOOL]);
	printf("info policy_bytes %zu\n", text.len);
	if (p->n_rules != N_FS_RULES + N_NET_RULES + N_TOOL_RULES)
		die("expected %d rules, loaded %zu", N_FS_RULES + N_NET_RULES + N_TOOL_RULES,
		    p->n_rules);

	make_stream(&s, p, N_REQUESTS);
	check_agreement(p, &s);

	all = calloc(s.n, sizeof(*all));
	for (int c = 0; c < N_CLASSES; c++)
		by_class[c] = calloc(s.n, sizeof(*by_class[c]));
	if (!all || !by_class[0] || !by_class[1] || !by_class[2])
		die("out of memory");
	for (size_t i = 0; i < s.n; i++) {
		all[i] = &s.reqs[i];
		by_class[s.cls[i]][n_class[s.cls[i]]++] = &s.reqs[i];
	}
	printf("info requests %zu\n", s.n);
	for (int c = 0; c < N_CLASSES; c++)
		printf("info requests_%s %zu\n", class_names[c], n_class[c]);
	fflush(stdout);

	bench_eval("indexed", "all", pol_eval, p, all, s.n, SAMPLES_ALL);
	bench_eval("linear", "all", pol_eval_linear, p, all, s.n, SAMPLES_ALL);
	for (int c = 0; c < N_CLASSES; c++) {
		bench_eval("indexed", class_names[c], pol_eval, p, by_class[c], n_class[c],
			   SAMPLES_CLASS);
		bench_eval("linear", class_names[c], pol_eval_linear, p, by_class[c], n_class[c],
			   SAMPLES_CLASS);
	}
	bench_eval("invariants", "fs", invariants_only, p, by_class[CLASS_FS], n_class[CLASS_FS],
		   SAMPLES_CLASS);
	bench_constitution(&vars);
	bench_load("parse+index", &text, &vars, false);
	bench_load("parse+index+shadowing", &text, &vars, true);
	bench_check(15000, &vars, 5);
	bench_check(60000, &vars, 5);

	for (int c = 0; c < N_CLASSES; c++)
		free(by_class[c]);
	free(all);
	free_stream(&s);
	pol_free(p);
	pol_vars_free(&vars);
	free(text.buf);
	return 0;
}
