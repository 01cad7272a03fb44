// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `cordon policy draft`'s credential proxy (draft_proxy.h).
 *
 * The draft reads the model's answer, text a remote party wrote, with a
 * JSON parser, an HTTP parser and the constitution compiler.  So the
 * process that does so holds no key: the question goes through the same
 * `cordon http-proxy` a session's agent uses (its credential pipeline, no
 * second HTTP client or key-injection path), started here as a separate
 * program (exec'd, a fresh image) with a policy of its own:
 *
 *   - one net rule, the provider's host on 443 "via": "credential-proxy",
 *     and nothing else: any other host, or that host directly, is refused;
 *   - one credential, the provider's key from this environment, for that
 *     host only, in the provider's header, on the one endpoint the draft
 *     uses (POST /v1/messages or POST /v1/chat/completions), its upstream
 *     the --endpoint (a gateway as `cordon run --upstream` names one: the
 *     human chose it), verified against the system's CAs or --upstream-ca.
 *
 * The proxy reads the key at exec, wipes it from its own environment, is
 * not dumpable and locks its memory (cred_proxy.c); this process wipes its
 * copy of both providers' keys as soon as the proxy is spawned, before any
 * byte goes to the network or comes back, and asks with the sentinel the
 * proxy reports over the helpers' channel.  The proxy serves only sockets
 * made in this process's cgroup, and only requests carrying the sentinel.
 *
 * What it closes: a bug in parsing the model's answer (an over-read into
 * the output or an error message, a core dump, /proc/PID/environ) cannot
 * disclose the key, which is not in this process's memory; the key goes
 * only to the endpoint's verified TLS peer, and an answer echoing it comes
 * back masked (the proxy's scrubber).
 * What it cannot close: code that takes control of this process can still
 * ask the proxy what its policy allows (the model's endpoint, with the
 * key) while the draft runs; run as root, it can also read the proxy's
 * memory; and the proxy shares this process's cgroup, so another process
 * of that cgroup may connect (it still needs the sentinel).  Other secrets
 * in the human's environment are not the draft's to wipe.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <openssl/err.h>
#include <openssl/pem.h>

#include "cgroup.h"
#include "draft_proxy.h"
#include "helper_argv.h"
#include "proto.h"
#include "util.h"

#define CA_MAX (16u << 20)

/*
 * The cgroup v2 id of this process's cgroup: the proxy serves only sockets
 * made there (conn.c), as a session's broker serves only its session's.
 */
static int own_cgroup(uint64_t *id)
{
	_cleanup_free_ char *text = NULL;
	char root[PATH_MAX], path[PATH_MAX * 2];
	char *line;
	int r = read_file("/proc/self/cgroup", &text, 65536);

	if (r < 0)
		return r;
	line = !strncmp(text, "0::", 3) ? text : strstr(text, "\n0::");
	if (!line)
		return -ENOENT;
	line += line == text ? 3 : 4;
	line[strcspn(line, "\n")] = '\0';
	r = cg_find_root(root, sizeof(root));
	if (r < 0)
		return r;
	if ((size_t)snprintf(path, sizeof(path), "%s%s", root, line) >= sizeof(path))
		return -ENAMETOOLONG;
	return cg_id(path, id);
}

/* The draft's policy (draft_proxy.c's opening comment), as JSON text. */
static char *draft_policy(const struct draft_model *m, const char *host, const char *upstream_ca)
{
	bool openai = m->provider == DRAFT_OPENAI;
	const char *env = draft_key_env(m->provider);
	json_t *cred, *pol;
	char *text = NULL;

	cred = json_pack("{s:s, s:s, s:{s:s}, s:[s], s:s, s:[s], s:s}", "name", "model", "env", env,
			 "source", "env", env, "hosts", host, "header",
			 openai ? "authorization" : "x-api-key", "endpoints",
			 openai ? "POST /v1/chat/completions" : "POST /v1/messages", "upstream",
			 m->endpoint);
	if (cred && openai && json_object_set_new(cred, "prefix", json_string("Bearer ")) < 0)
		goto out;
	if (cred && upstream_ca && json_object_set_new(cred, "upstream_ca", json_string(upstream_ca)) < 0)
		goto out;
	pol = cred ? json_pack("{s:i, s:s, s:[{s:s, s:s, s:{s:[s], s:[i], s:s}}], s:[O]}",
			       "cordon_policy", 1, "name", "policy-draft", "rules", "name", "model",
			       "decision", "allow", "net", "hosts", host, "ports", 443, "via",
			       "credential-proxy", "credentials", cred) : NULL;
	text = pol ? json_dumps(pol, JSON_INDENT(2)) : NULL;
	json_decref(pol);
out:
	json_decref(cred);
	return text;
}

/* 127.0.0.1:0, bound here: only the proxy will hold it, so whatever answers there is the proxy. */
static int listen_loopback(uint16_t *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), r;

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 16) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &al) < 0) {
		r = -errno;
		if (fd >= 0)
			close(fd);
		return r;
	}
	*port = ntohs(a.sin_port);
	return fd;
}

/*
 * The proxy's session CA from the bundle it wrote (the system's CAs, then
 * its own): the last certificate.  Only it is trusted toward the proxy.
 */
static X509 *session_ca(int fd)
{
	_cleanup_free_ char *pem = NULL;
	struct stat st;
	X509 *last = NULL, *x;
	BIO *b;
	size_t got = 0;

	if (fstat(fd, &st) < 0 || st.st_size <= 0 || (size_t)st.st_size > CA_MAX ||
	    !(pem = malloc((size_t)st.st_size)))
		return NULL;
	while (got < (size_t)st.st_size) {
		ssize_t n = pread(fd, pem + got, (size_t)st.st_size - got, (off_t)got);

		if (n <= 0)
			return NULL;
		got += (size_t)n;
	}
	b = BIO_new_mem_buf(pem, (int)got);
	while (b && (x = PEM_read_bio_X509(b, NULL, NULL, NULL))) {
		X509_free(last);
		last = x;
	}
	BIO_free(b);
	ERR_clear_error();
	return last;
}

/* The providers' keys out of this process's environment, but KEEP's (NULL: all). */
static void wipe_keys(const char *keep)
{
	static const enum draft_provider providers[] = { DRAFT_ANTHROPIC, DRAFT_OPENAI };

	for (size_t i = 0; i < ARRAY_SIZE(providers); i++)
		if (!keep || strcmp(keep, draft_key_env(providers[i])))
			creds_wipe_env(draft_key_env(providers[i]));
}

int draft_proxy_start(const struct draft_model *m, const char *upstream_ca, struct draft_proxy *p,
		      char *err, size_t errlen)
{
	const char *tmp = getenv("TMPDIR") ?: "/tmp";
	char self[PATH_MAX], dir[PATH_MAX], file[PATH_MAX + 16], lfd[] = "3", cfd[] = "4";
	const char *argv[24];
	_cleanup_free_ char *text = NULL;
	_cleanup_close_ int ca_fd = -1;
	int listen_fd = -1, fds[2], n, r, chan_arg;
	json_t *ready = NULL, *sent;
	uint64_t cgid = 0;

	*p = (struct draft_proxy){ .h = { .what = "credential proxy", .raw_name = "http-proxy",
					  .record_type = "http", .chan = -1 },
				   .via.host = draft_provider_host(m->provider) };
	r = own_cgroup(&cgid);
	if (r < 0) {
		snprintf(err, errlen, "the credential proxy: cannot tell this process's cgroup v2 "
			 "(it serves only that cgroup's sockets): %s", strerror(-r));
		return r;
	}
	text = draft_policy(m, p->via.host, upstream_ca);
	if (!text)
		return -ENOMEM;
	r = (size_t)snprintf(dir, sizeof(dir), "%s/cordon-draft.XXXXXX", tmp) >= sizeof(dir) ?
	    -ENAMETOOLONG : mkdtemp(dir) ? 0 : -errno;
	if (r < 0) {
		snprintf(err, errlen, "the credential proxy's policy: cannot make a directory in %s: %s",
			 tmp, strerror(-r));
		return r;
	}
	snprintf(file, sizeof(file), "%s/policy.json", dir);
	{
		_cleanup_close_ int fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

		r = fd < 0 ? -errno : write_all(fd, text, strlen(text));
	}
	if (r < 0) {
		snprintf(err, errlen, "the credential proxy's policy %s: %s", file, strerror(-r));
		goto out;
	}
	listen_fd = listen_loopback(&p->via.port);
	ca_fd = memfd_create("cordon-draft-ca", MFD_CLOEXEC);
	if (listen_fd < 0 || ca_fd < 0) {
		r = listen_fd < 0 ? listen_fd : -errno;
		snprintf(err, errlen, "the credential proxy's %s: %s",
			 listen_fd < 0 ? "socket on 127.0.0.1" : "CA file", strerror(-r));
		goto out;
	}
	n = helper_argv_start(argv, self, "http-proxy");
	if (n < 0) {
		r = n;
		snprintf(err, errlen, "the credential proxy: /proc/self/exe: %s", strerror(-r));
		goto out;
	}
	argv[n++] = "--listen-fd";
	argv[n++] = lfd;
	argv[n++] = "--ca-fd";
	argv[n++] = cfd;
	argv[n++] = "--policy";
	argv[n++] = file;
	argv[n++] = "--workspace";
	argv[n++] = "/";
	argv[n++] = "--channel-fd";
	chan_arg = n++;
	argv[n] = NULL;
	fds[0] = listen_fd;
	fds[1] = ca_fd;
	/* The proxy gets this provider's key only; then this process keeps none. */
	wipe_keys(draft_key_env(m->provider));
	r = helper_spawn(&p->h, argv, chan_arg, fds, 2);
	wipe_keys(NULL);
	if (r < 0) {
		snprintf(err, errlen, "the credential proxy did not start: %s", strerror(-r));
		goto out;
	}
	r = helper_send(&p->h, proto_session(cgid));
	r = r ?: helper_ready(&p->h, &ready);
	if (r < 0) {
		snprintf(err, errlen, r == -ETIMEDOUT ? "the credential proxy did not start in time" :
			 "the credential proxy did not start (it said why above)");
		goto out;
	}
	sent = json_object_get(json_object_get(ready, "sentinels"), draft_key_env(m->provider));
	if (!json_is_string(sent) || strlen(json_string_value(sent)) != CRED_SENTINEL_LEN) {
		r = -ENOKEY;
		snprintf(err, errlen, "the credential proxy holds no key in %s",
			 draft_key_env(m->provider));
		goto out;
	}
	memcpy(p->sentinel, json_string_value(sent), CRED_SENTINEL_LEN + 1);
	p->via.sentinel = p->sentinel;
	p->via.ca = session_ca(ca_fd);
	if (!p->via.ca) {
		r = -EPROTO;
		snprintf(err, errlen, "the credential proxy wrote no CA certificate");
		goto out;
	}
	r = 0;
out:
	json_decref(ready);
	if (listen_fd >= 0)
		close(listen_fd);
	/* Read at the proxy's start, which is over now (ready, or gone). */
	(void)unlink(file);
	(void)rmdir(dir);
	if (r < 0)
		draft_proxy_stop(p);
	return r;
}

void draft_proxy_drain(struct draft_proxy *p)
{
	if (p->h.chan >= 0)
		helper_input(&p->h);
}

void draft_proxy_stop(struct draft_proxy *p)
{
	if (p->h.pid > 0) {
		helper_stop(&p->h);
		helper_reap(&p->h);
	}
	X509_free(p->via.ca);
	p->via.ca = NULL;
	explicit_bzero(p->sentinel, sizeof(p->sentinel));
}
