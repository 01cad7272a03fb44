// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * An approved git push, its destination and its grant (contract and
 * threat: push_grant.h).
 *
 * The destination is read by the host's git because git's own rules
 * (includes, conditional includes, -c and GIT_CONFIG_*, insteadOf, the
 * default remote) are what the push will follow; a reader of our own would
 * disagree somewhere.  That git reads configuration the agent wrote, so it
 * runs as the agent would and confined more than the agent is:
 *   - the agent's uid, gid and groups, no new privileges, in the agent's
 *     mount namespace and working directory (its view of the repository,
 *     /tmp and its home layer);
 *   - Landlock: every file readable (DAC still the agent's), nothing
 *     writable (but /dev/null) or creatable, exec of git and its loader only, no TCP
 *     bind or connect, abstract Unix sockets and signals scoped; without
 *     Landlock's TCP rules (ABI 4) nothing is run and no destination is
 *     known (the push cannot then be granted: closed);
 *   - only builtins that never start a program (symbolic-ref,
 *     for-each-ref, config, remote get-url, ls-remote --get-url); of the
 *     agent's environment only the variables that say where configuration
 *     is (GIT_DIR, GIT_CONFIG_*, HOME...); of the push's global options
 *     only -C, -c, --git-dir, --work-tree, --namespace, --bare;
 *   - a deadline (GIT_DEADLINE_MS) and an output cap.
 * What it cannot close: the agent's git and this one may still disagree
 * (an environment rewritten after the check, a config file changed between
 * the two reads): the broker then refuses the push, since the grant names
 * what the human saw.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <elf.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "audit.h"
#include "landlock_compat.h"
#include "push_grant.h"
#include "sup_state.h"
#include "helper.h"
#include "proto.h"
#include "util.h"

#define GIT_PATH "/usr/bin/git"
#define GIT_DEADLINE_MS 3000
#define GIT_OUT_MAX 16384
#define MAX_DESTS 16

/* The variables that say where git's configuration and repository are. */
static bool env_kept(const char *e)
{
	static const char *const names[] = {
		"GIT_DIR=", "GIT_WORK_TREE=", "GIT_COMMON_DIR=", "GIT_NAMESPACE=",
		"GIT_CONFIG=", "GIT_CONFIG_GLOBAL=", "GIT_CONFIG_SYSTEM=", "GIT_CONFIG_NOSYSTEM=",
		"GIT_CONFIG_COUNT=", "GIT_CONFIG_PARAMETERS=", "GIT_CEILING_DIRECTORIES=",
		"GIT_DISCOVERY_ACROSS_FILESYSTEM=", "HOME=", "XDG_CONFIG_HOME=", NULL,
	};

	if (!strncmp(e, "GIT_CONFIG_KEY_", 15) || !strncmp(e, "GIT_CONFIG_VALUE_", 17))
		return true;
	for (int i = 0; names[i]; i++)
		if (!strncmp(e, names[i], strlen(names[i])))
			return true;
	return false;
}

/* The loader git names (PT_INTERP), for Landlock's exec right; "" if none could be read. */
static void elf_interp(int fd, char *out, size_t len)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;

	out[0] = '\0';
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(ph))
		return;
	for (int i = 0; i < eh.e_phnum && i < 64; i++) {
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * sizeof(ph))) !=
		    sizeof(ph))
			return;
		if (ph.p_type == PT_INTERP && ph.p_filesz > 1 && ph.p_filesz < len) {
			if (pread(fd, out, ph.p_filesz, (off_t)ph.p_offset) != (ssize_t)ph.p_filesz)
				out[0] = '\0';
			else
				out[ph.p_filesz - 1] = '\0';
			return;
		}
	}
}

struct view {
	const struct sup *s;
	int mnt, cwd, git;              /* the agent's mount ns and cwd; the host's git */
	char interp[256];
	int abi;
	char **env;                     /* what git gets */
	const char **globals;           /* the push's global options kept */
	int n_globals;
};

static int ll_rule(int ruleset, int dirfd, const char *path, __u64 access)
{
	struct landlock_path_beneath_attr pb = { .allowed_access = access };
	int r;

	pb.parent_fd = path ? openat(dirfd, path, O_PATH | O_CLOEXEC) : dirfd;
	if (pb.parent_fd < 0)
		return -1;
	r = (int)syscall(__NR_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0);
	if (path)
		close(pb.parent_fd);
	return r;
}

/* In the child: only system calls from here on (the parent has threads). */
static __attribute__((noreturn)) void child(const struct view *v, const char **argv, int out)
{
	struct cordon_landlock_ruleset_attr ra = {
		.handled_access_fs = landlock_abi_fs(v->abi),
		.handled_access_net = landlock_abi_net(v->abi),
		.scoped = landlock_abi_scope(v->abi),
	};
	struct rlimit cpu = { 2, 2 };
	int rs, devnull = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(out, 1) < 0 || dup2(devnull, 2) < 0)
		_exit(126);
	if (setns(v->mnt, CLONE_NEWNS) < 0 || fchdir(v->cwd) < 0)
		_exit(126);
	if (syscall(SYS_setgroups, (size_t)v->s->n_groups, v->s->groups) < 0 ||
	    syscall(SYS_setresgid, v->s->gid, v->s->gid, v->s->gid) < 0 ||
	    syscall(SYS_setresuid, v->s->uid, v->s->uid, v->s->uid) < 0 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || setrlimit(RLIMIT_CPU, &cpu) < 0)
		_exit(126);
	rs = landlock_create_ruleset(&ra, landlock_abi_attr_size(v->abi), 0);
	if (rs < 0 ||
	    ll_rule(rs, AT_FDCWD, "/", LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR) < 0 ||
	    ll_rule(rs, AT_FDCWD, "/dev/null", LANDLOCK_ACCESS_FS_READ_FILE |
		    LANDLOCK_ACCESS_FS_WRITE_FILE) < 0 ||
	    ll_rule(rs, v->git, NULL, LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE) < 0 ||
	    (v->interp[0] && ll_rule(rs, AT_FDCWD, v->interp, LANDLOCK_ACCESS_FS_EXECUTE |
				     LANDLOCK_ACCESS_FS_READ_FILE) < 0) ||
	    syscall(__NR_landlock_restrict_self, rs, 0) < 0)
		_exit(126);
	(void)syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC);
	syscall(SYS_execveat, v->git, "", argv, v->env, AT_EMPTY_PATH);
	_exit(127);
}

/*
 * git ARGS in the agent's view: its output (trailing newline cut) into
 * out.  0; -ENOENT: git said no (a non-zero exit); -ETIMEDOUT; -errno.
 */
static int git_in_view(const struct view *v, const char *const *args, char *out, size_t cap)
{
	const char *argv[64];
	int n = 0, p[2], status, r = 0;
	uint64_t end = mono_ms() + GIT_DEADLINE_MS;
	size_t have = 0;
	pid_t pid;

	argv[n++] = "git";
	for (int i = 0; i < v->n_globals && n < 40; i++)
		argv[n++] = v->globals[i];
	for (int i = 0; args[i] && n < 62; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		r = -errno;
		close(p[0]);
		close(p[1]);
		return r;
	}
	if (pid == 0)
		child(v, argv, p[1]);
	close(p[1]);
	for (;;) {
		struct pollfd pf = { .fd = p[0], .events = POLLIN };
		uint64_t now = mono_ms();
		ssize_t k;

		if (now >= end) {
			r = -ETIMEDOUT;
			break;
		}
		if (poll(&pf, 1, (int)(end - now)) <= 0)
			continue;
		k = read(p[0], out + have, cap - 1 - have);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		have += (size_t)k;
		if (have == cap - 1) {
			r = -E2BIG;
			break;
		}
	}
	close(p[0]);
	if (r < 0)
		(void)kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	out[have] = '\0';
	while (have && out[have - 1] == '\n')
		out[--have] = '\0';
	if (!r && (!WIFEXITED(status) || WEXITSTATUS(status)))
		r = -ENOENT;
	return r;
}

/*
 * A URL git may push to: its scheme, host and port for a network one
 * (https, http, ssh and scp-like, git); -ENOENT for a local path, file://
 * or a remote helper's "transport::address".
 */
int push_url_parse(const char *url, char *scheme, size_t slen, char *host, size_t hlen, int *port)
{
	const char *sep = strstr(url, "://"), *h, *e, *colon, *slash;

	if (!sep) {
		/* scp-like [user@]host:path, when the first ':' comes before any '/' */
		colon = strchr(url, ':');
		slash = strchr(url, '/');
		if (!colon || (slash && slash < colon) || colon == url || strstr(url, "::"))
			return -ENOENT;
		h = strchr(url, '@');
		h = h && h < colon ? h + 1 : url;
		if ((size_t)(colon - h) >= hlen || colon == h)
			return -EINVAL;
		snprintf(scheme, slen, "ssh");
		snprintf(host, hlen, "%.*s", (int)(colon - h), h);
		*port = 22;
		return 0;
	}
	if ((size_t)(sep - url) >= slen)
		return -ENOENT;
	snprintf(scheme, slen, "%.*s", (int)(sep - url), url);
	for (char *c = scheme; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	if (!strcmp(scheme, "https"))
		*port = 443;
	else if (!strcmp(scheme, "http"))
		*port = 80;
	else if (!strcmp(scheme, "ssh") || !strcmp(scheme, "git+ssh") || !strcmp(scheme, "ssh+git"))
		*port = 22;
	else if (!strcmp(scheme, "git"))
		*port = 9418;
	else
		return -ENOENT;
	h = sep + 3;
	e = h + strcspn(h, "/?#");
	/* userinfo: the last '@' before the path */
	for (const char *a = h; a < e; a++)
		if (*a == '@')
			h = a + 1;
	if (*h == '[') {
		const char *rb = memchr(h, ']', (size_t)(e - h));

		if (!rb || (size_t)(rb - h - 1) >= hlen)
			return -EINVAL;
		snprintf(host, hlen, "%.*s", (int)(rb - h - 1), h + 1);
		colon = rb + 1 < e && rb[1] == ':' ? rb + 1 : NULL;
	} else {
		colon = memchr(h, ':', (size_t)(e - h));
		if ((size_t)((colon ?: e) - h) >= hlen)
			return -EINVAL;
		snprintf(host, hlen, "%.*s", (int)((colon ?: e) - h), h);
	}
	if (colon && colon + 1 < e) {
		char *end;
		long pn = strtol(colon + 1, &end, 10);

		if (end != e || pn < 1 || pn > 65535)
			return -EINVAL;
		*port = (int)pn;
	}
	for (char *c = host; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	return host[0] ? 0 : -EINVAL;
}

/* The URL as shown and recorded: a password in it masked. */
json_t *push_url_shown(const char *url)
{
	const char *sep = strstr(url, "://"), *e, *at = NULL, *pw;
	char *o;
	json_t *j;

	if (!sep)
		return pol_json_text(url);
	e = sep + 3 + strcspn(sep + 3, "/?#");
	for (const char *a = sep + 3; a < e; a++)
		if (*a == '@')
			at = a;
	pw = at ? memchr(sep + 3, ':', (size_t)(at - sep - 3)) : NULL;
	if (!pw)
		return pol_json_text(url);
	if (asprintf(&o, "%.*s:***%s", (int)(pw - url), url, at) < 0)
		return NULL;
	j = pol_json_text(o);
	free(o);
	return j;
}

/*
 * Only `git push` itself: the other ways the recognisers call a push (a
 * "via": send-pack, a fetch run from the remote's side, an alias) name
 * their remote otherwise; they get no destination, hence no grant (a
 * network one then fails at the floor, closed).
 */
bool push_event(const json_t *event)
{
	return !strcmp(json_string_value(json_object_get(event, "server")) ?: "", "git") &&
	       !strcmp(json_string_value(json_object_get(event, "tool")) ?: "", "push") &&
	       !json_object_get(json_object_get(event, "arguments"), "via");
}

/* The push's global options git needs to find the same repository and configuration. */
static int keep_globals(char *const *argv, const char **out, int cap)
{
	static const char *const with_value[] = { "-C", "-c", "--git-dir", "--work-tree",
						  "--namespace", NULL };
	static const char *const skip_value[] = { "--exec-path", "--config-env", "--super-prefix",
						  "--attr-source", NULL };
	int n = 0;

	for (int i = 1; argv[i] && argv[i][0] == '-' && n + 2 <= cap; i++) {
		const char *a = argv[i];
		bool kept = false;

		for (int k = 0; with_value[k]; k++)
			if (!strcmp(a, with_value[k]) && argv[i + 1]) {
				out[n++] = a;
				out[n++] = argv[++i];
				kept = true;
			}
		for (int k = 0; !kept && skip_value[k]; k++)
			if (!strcmp(a, skip_value[k]) && argv[i + 1]) {
				i++;
				kept = true;
			}
		if (!kept && (!strncmp(a, "--git-dir=", 10) || !strncmp(a, "--work-tree=", 12) ||
			      !strncmp(a, "--namespace=", 12) || !strcmp(a, "--bare")))
			out[n++] = a;
	}
	return n;
}

json_t *push_dest_resolve(const struct sup *s, pid_t pid, char *const *argv, char *const *envp,
			  const json_t *event, const char **why)
{
	struct view v = { .s = s, .mnt = -1, .cwd = -1, .git = -1 };
	const char *globals[32], *remote;
	char p[64], out[GIT_OUT_MAX], name[256], *line, *save;
	char *env[RUN_MAX_ENV + 8];
	json_t *dests = NULL;
	int n_env = 0, r;

	*why = NULL;
	v.abi = landlock_abi();
	if (v.abi < 4) {
		*why = "git's configuration cannot be read confined here (Landlock with TCP rules "
		       "is missing)";
		return NULL;
	}
	v.n_globals = keep_globals(argv, globals, (int)ARRAY_SIZE(globals));
	v.globals = globals;
	env[n_env++] = "PATH=/usr/bin:/bin";
	env[n_env++] = "LC_ALL=C";
	env[n_env++] = "GIT_TERMINAL_PROMPT=0";
	env[n_env++] = "GIT_OPTIONAL_LOCKS=0";
	env[n_env++] = "GIT_PAGER=cat";
	for (int i = 0; envp && envp[i] && n_env < (int)ARRAY_SIZE(env) - 1; i++)
		if (env_kept(envp[i]))
			env[n_env++] = envp[i];
	env[n_env] = NULL;
	v.env = env;
	snprintf(p, sizeof(p), "/proc/%d/ns/mnt", (int)pid);
	v.mnt = open(p, O_RDONLY | O_CLOEXEC);
	snprintf(p, sizeof(p), "/proc/%d/cwd", (int)pid);
	v.cwd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	v.git = open(GIT_PATH, O_RDONLY | O_CLOEXEC);
	if (v.mnt < 0 || v.cwd < 0 || v.git < 0) {
		*why = "the pushing process's view could not be opened";
		goto out;
	}
	elf_interp(v.git, v.interp, sizeof(v.interp));

	remote = json_string_value(json_object_get(json_object_get(event, "arguments"), "remote"));
	if (remote) {
		snprintf(name, sizeof(name), "%s", remote);
	} else {
		/* git's default: the branch's pushRemote, remote.pushDefault, its remote, origin. */
		const char *head[] = { "symbolic-ref", "-q", "HEAD", NULL };
		char ref[512];

		name[0] = '\0';
		if (git_in_view(&v, head, ref, sizeof(ref)) == 0 && !strncmp(ref, "refs/heads/", 11)) {
			const char *fe[] = { "for-each-ref", "--format=%(push:remotename)", ref, NULL };

			(void)git_in_view(&v, fe, name, sizeof(name));
		} else {
			const char *pd[] = { "config", "--get", "remote.pushDefault", NULL };

			(void)git_in_view(&v, pd, name, sizeof(name));
		}
		if (!name[0] || strchr(name, '\n'))
			snprintf(name, sizeof(name), "origin");
	}
	{
		const char *gu[] = { "remote", "get-url", "--push", "--all", "--", name, NULL };
		const char *lr[] = { "ls-remote", "--get-url", "--", name, NULL };

		/*
		 * A configured remote; else the name is itself a URL or a path
		 * (a bare word that is neither would be a path git fails to
		 * find: said to be no remote rather than shown as one).
		 */
		r = git_in_view(&v, gu, out, sizeof(out));
		if (r == -ENOENT && !strpbrk(name, "/:")) {
			*why = "no remote of that name in this repository";
			goto out;
		}
		if (r == -ENOENT)
			r = git_in_view(&v, lr, out, sizeof(out));
	}
	if (r < 0 || !out[0]) {
		*why = r == -ETIMEDOUT ? "git did not say in time where the push goes" :
		       "git could not say where the push goes";
		goto out;
	}
	dests = json_array();
	for (line = strtok_r(out, "\n", &save); line && json_array_size(dests) < MAX_DESTS;
	     line = strtok_r(NULL, "\n", &save)) {
		char scheme[16], host[256];
		int port = 0;
		json_t *d = json_pack("{s:o}", "url", push_url_shown(line));

		if (d && push_url_parse(line, scheme, sizeof(scheme), host, sizeof(host), &port) == 0)
			json_object_update_new(d, json_pack("{s:s,s:o,s:i}", "scheme", scheme, "host",
							    pol_json_text(host), "port", port));
		json_array_append_new(dests, d);
	}
out:
	if (v.mnt >= 0)
		close(v.mnt);
	if (v.cwd >= 0)
		close(v.cwd);
	if (v.git >= 0)
		close(v.git);
	return dests;
}

/* Field 22 of /proc/PID/stat: with the pid, names the process across pid reuse. */
static int start_time(pid_t pid, unsigned long long *st)
{
	char p[64], *buf = NULL, *c;
	int r, f = 2;

	snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
	r = read_file(p, &buf, 4096);
	if (r < 0)
		return r;
	c = strrchr(buf, ')');
	for (; c && *c && f < 22; c++)
		if (*c == ' ')
			f++;
	r = c && f == 22 && sscanf(c, "%llu", st) == 1 ? 0 : -EINVAL;
	free(buf);
	return r;
}

static void grant_record(struct sup *s, json_t *fields)
{
	pthread_mutex_lock(&s->lock);
	if (s->audit && fields) {
		(void)audit_write(s->audit, "grant", fields);
		s->ops->audit_check(s);
	}
	pthread_mutex_unlock(&s->lock);
	json_decref(fields);
}

void push_grant(struct sup *s, pid_t pid, const json_t *event, const char *approver)
{
	static uint64_t next_grant;     /* the supervisor's loop is the only caller */
	json_t *dest = json_object_get(json_object_get(event, "arguments"), "destination");
	json_t *grant = json_array(), *d;
	unsigned long long st = 0;
	const char *why = NULL;
	size_t i;

	json_array_foreach(dest, i, d) {
		const char *scheme = json_string_value(json_object_get(d, "scheme"));

		bool ssh = scheme && (!strcmp(scheme, "ssh") || !strcmp(scheme, "git+ssh") ||
				      !strcmp(scheme, "ssh+git"));

		/*
		 * Through the broker: https (CONNECT), http (absolute-form), and
		 * ssh (CONNECT from `cordon connect`, the agent's ssh ProxyCommand,
		 * carrying SSH: egress/tunnel.c, tunnel_ssh).
		 */
		if (scheme && (ssh || !strcmp(scheme, "https") || !strcmp(scheme, "http")))
			json_array_append_new(grant, json_pack("{s:O,s:O,s:b}", "host",
							       json_object_get(d, "host"), "port",
							       json_object_get(d, "port"), "ssh", ssh));
		else if (scheme)
			why = "git:// remotes do not go through the egress broker: not granted";
	}
	if (!json_array_size(grant)) {
		if (json_array_size(dest))
			grant_record(s, json_pack("{s:i,s:O,s:s,s:s}", "pid", (int)pid, "destination",
						  dest, "outcome", "no grant", "reason",
						  why ?: "a local destination: nothing to grant"));
		json_decref(grant);
		return;
	}
	if (s->egress.chan < 0)
		why = "this session has no egress broker: the push cannot reach the network";
	else if (start_time(pid, &st) < 0)
		why = "the approved process is gone";
	if (!why) {
		uint64_t id = ++next_grant;

		if (helper_send(&s->egress, proto_grant(id, pid, st, PUSH_GRANT_TTL_MS, grant)) < 0)
			why = "the egress broker did not take the grant";
		else
			grant_record(s, json_pack("{s:I,s:i,s:O,s:O,s:s,s:s?,s:I}", "grant",
						  (json_int_t)id, "pid", (int)pid, "destination",
						  dest, "hosts", grant, "outcome", "granted",
						  "approver", approver, "ttl_ms",
						  (json_int_t)PUSH_GRANT_TTL_MS));
	}
	if (why)
		grant_record(s, json_pack("{s:i,s:O,s:s,s:s}", "pid", (int)pid, "destination", dest,
					  "outcome", "no grant", "reason", why));
	json_decref(grant);
}
