// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * One question to a model, through the draft's credential proxy
 * (draft_model.h).
 *
 * This process holds a sentinel, never the key: it parses what a remote
 * party wrote (the HTTP answer, its JSON, then the compiler reads the
 * text), and a bug there must have no key to disclose.  The key is held
 * by `cordon http-proxy`, the session's own credential proxy, started for
 * the draft with a policy that lets it reach the model's endpoint and
 * nothing else (draft_proxy.c says what this closes and what it cannot).
 * The exchange is the one an agent's SDK has with it: CONNECT to the
 * provider's host, TLS verified against the proxy's session CA (the only
 * certificate trusted here), the request with the sentinel in the
 * provider's header.  The proxy checks the endpoint and the sentinel,
 * verifies the endpoint's certificate (the system's CAs, SSL_CERT_FILE
 * honoured, or --upstream-ca), swaps the key in and masks it in the answer.
 *
 * What the model controls is the answer's text alone; it is compiled by
 * the deterministic compiler and shown to the human (cmd/draft.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <jansson.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "draft_model.h"
#include "policy.h"
#include "util.h"

#define ANSWER_MAX (4u << 20)
#define TIMEOUT_S 120

int draft_model_parse(const char *spec, struct draft_model *m, char *err, size_t errlen)
{
	const char *slash = strchr(spec, '/');
	size_t n = slash ? (size_t)(slash - spec) : 0;

	if (!slash || !slash[1]) {
		snprintf(err, errlen, "--model '%s': expected PROVIDER/MODEL (anthropic/..., openai/...)",
			 spec);
		return -EINVAL;
	}
	if (n == 9 && !strncmp(spec, "anthropic", n))
		m->provider = DRAFT_ANTHROPIC;
	else if (n == 6 && !strncmp(spec, "openai", n))
		m->provider = DRAFT_OPENAI;
	else {
		snprintf(err, errlen, "--model '%s': unknown provider '%.*s' (anthropic, openai)",
			 spec, (int)n, spec);
		return -EINVAL;
	}
	/* The name goes into a JSON string only, but a model name is a short
	 * token: refuse anything else rather than send it. */
	for (const char *p = slash + 1; *p; p++)
		if (!(*p == '-' || *p == '.' || *p == '_' || *p == ':' || *p == '@' ||
		      (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))) {
			snprintf(err, errlen, "--model '%s': bad character in the model name", spec);
			return -EINVAL;
		}
	m->model = slash + 1;
	return 0;
}

const char *draft_default_endpoint(enum draft_provider p)
{
	return p == DRAFT_OPENAI ? "https://api.openai.com" : "https://api.anthropic.com";
}

const char *draft_provider_host(enum draft_provider p)
{
	return p == DRAFT_OPENAI ? "api.openai.com" : "api.anthropic.com";
}

const char *draft_key_env(enum draft_provider p)
{
	return p == DRAFT_OPENAI ? "OPENAI_API_KEY" : "ANTHROPIC_API_KEY";
}

const char *draft_system_prompt(void)
{
	return "You write security policies for an AI coding agent in cordon's constitution "
	       "language: plain English sentences that a strict, deterministic compiler reads. "
	       "It accepts only the forms below; anything else is an error.\n"
	       "Answer with sentences of the language only: one sentence a line, each ending "
	       "with a period, no commentary, no markdown, no numbering. Lines starting with # "
	       "are comments. Say only what the user asked for; the policy denies everything "
	       "not allowed.\n\n"
	       "Forms (examples):\n"
	       "This policy is called my-project.\n"
	       "The agent may read, change and run anything in the workspace except ./secrets.\n"
	       "The agent may read and change anything in the workspace.\n"
	       "The agent may read, write and run anything in the workspace except files named .env.\n"
	       "The agent may read and run the system directories.\n"
	       "The agent may read /etc.\n"
	       "The agent may read anything under /srv but not /srv/private.\n"
	       "Never read my SSH keys or cloud credentials.\n"
	       "Never read files named .env anywhere.\n"
	       "Never change or chmod the shell's start-up files.\n"
	       "Do not let the agent delete anything in my home.\n"
	       "Ask me before changing /etc.\n"
	       "The agent may write /srv/data only with my approval.\n"
	       "Code hosts are github.com and gitlab.com.\n"
	       "The agent may reach code hosts over HTTPS.\n"
	       "The agent may reach github.com over HTTPS.\n"
	       "The agent may connect to 10.0.0.0/8 on port 5432 directly.\n"
	       "The agent may reach any subdomain of example.com on ports 8000 to 8100.\n"
	       "Never reach evil.example.com.\n"
	       "Use my Anthropic key.\n"
	       "Use the secret in $GITHUB_TOKEN for api.github.com in the header authorization "
	       "with the prefix \"Bearer \" only for GET /repos/*, POST /graphql.\n"
	       "Ask me before any git push.\n"
	       "Never allow a force push.\n"
	       "Ask me before a push to the branch main.\n"
	       "Ask me before publishing any package.\n"
	       "Ask me before installing packages.\n"
	       "The agent may fetch URLs from example.com.\n"
	       "The agent may run the command \"git status\".\n"
	       "The agent may call filesystem.read_file when path is within the workspace.\n"
	       "Tokens cost 15 dollars per million.\n"
	       "Stop after 4 hours or 200 dollars.\n"
	       "Stop after 1 million tokens.\n"
	       "Use at most 8 GB of memory, 1024 processes and 2 CPUs.\n"
	       "Wait 2 minutes for my answer, then deny.\n\n"
	       "Verbs: read, write, change (write, create and delete), create, delete, run, chmod. "
	       "Paths start with /, ~/ or ./ (the workspace). Scopes: in the workspace, in my home, "
	       "in the temporary directory, under PATH, anywhere. A deny or an ask cannot have an "
	       "exception: say it narrowly instead.\n";
}

/* The endpoint split: host (for SNI, verification, Host), port, path prefix. */
struct endpoint {
	char host[256];
	char port[8];
	char prefix[512];
};

static int endpoint_parse(const char *url, struct endpoint *e, char *err, size_t errlen)
{
	const char *h, *end, *colon, *slash;
	size_t hl;

	if (strncmp(url, "https://", 8)) {
		snprintf(err, errlen, "--endpoint '%s': must start with https:// (the key is sent there)",
			 url);
		return -EINVAL;
	}
	h = url + 8;
	slash = strchr(h, '/');
	end = slash ? slash : h + strlen(h);
	colon = memchr(h, ':', (size_t)(end - h));
	hl = (size_t)((colon ? colon : end) - h);
	if (!hl || hl >= sizeof(e->host) || memchr(h, '@', (size_t)(end - h)) ||
	    memchr(h, '[', (size_t)(end - h))) {
		snprintf(err, errlen, "--endpoint '%s': expected https://HOST[:PORT][/PATH]", url);
		return -EINVAL;
	}
	memcpy(e->host, h, hl);
	e->host[hl] = 0;
	if (colon) {
		size_t pl = (size_t)(end - colon - 1);

		if (!pl || pl >= sizeof(e->port) || strspn(colon + 1, "0123456789") < pl) {
			snprintf(err, errlen, "--endpoint '%s': bad port", url);
			return -EINVAL;
		}
		memcpy(e->port, colon + 1, pl);
		e->port[pl] = 0;
	} else {
		strcpy(e->port, "443");
	}
	snprintf(e->prefix, sizeof(e->prefix), "%s", slash ? slash : "");
	hl = strlen(e->prefix);
	while (hl && e->prefix[hl - 1] == '/')
		e->prefix[--hl] = 0;
	for (const char *p = e->prefix; *p; p++)
		if (*p <= ' ' || *p == 0x7f) {
			snprintf(err, errlen, "--endpoint '%s': bad character in the path", url);
			return -EINVAL;
		}
	return 0;
}

int draft_endpoint_check(const char *url, char *err, size_t errlen)
{
	struct pol_credential scratch = { 0 };
	struct endpoint e;
	char why[512];
	int r = endpoint_parse(url, &e, err, errlen);

	if (r < 0)
		return r;
	/* The policy's own reading too: the proxy, which takes it as its upstream, then cannot refuse it. */
	r = pol_credential_set_upstream(&scratch, url, NULL, why, sizeof(why));
	free(scratch.upstream_host);
	free(scratch.upstream_prefix);
	if (r < 0)
		snprintf(err, errlen, "--endpoint: %s", why);
	return r;
}

/* A TCP connection to the proxy on 127.0.0.1 (the socket this process bound and handed it). */
static int proxy_connect(const struct draft_via *px, char *err, size_t errlen)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(px->port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct timeval tv = { .tv_sec = TIMEOUT_S };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0 ||
	    connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		snprintf(err, errlen, "the credential proxy (127.0.0.1:%u): %m", px->port);
		if (fd >= 0)
			close(fd);
		return -EIO;
	}
	return fd;
}

/*
 * CONNECT host:443 through the proxy.  Its answer's head is read a byte at
 * a time, so that nothing of the TLS that follows is taken with it; a
 * refusal is shown with the proxy's reason (its body, one line).
 */
static int proxy_tunnel(int fd, const char *host, char *err, size_t errlen)
{
	char req[512], head[4096], body[800];
	size_t len = 0;
	ssize_t n;
	int status = 0;

	snprintf(req, sizeof(req), "CONNECT %s:443 HTTP/1.1\r\nHost: %s:443\r\n\r\n", host, host);
	if (write_all(fd, req, strlen(req)) < 0)
		goto broken;
	while (len < sizeof(head) - 1) {
		n = recv(fd, head + len, 1, 0);
		if (n <= 0)
			goto broken;
		len++;
		if (len >= 4 && !memcmp(head + len - 4, "\r\n\r\n", 4))
			break;
	}
	head[len] = 0;
	if (sscanf(head, "HTTP/1.%*d %d", &status) != 1)
		goto broken;
	if (status == 200)
		return 0;
	n = recv(fd, body, sizeof(body) - 1, 0);
	body[n > 0 ? n : 0] = 0;
	body[strcspn(body, "\r\n")] = 0;
	snprintf(err, errlen, "the credential proxy refused CONNECT %s:443: HTTP %d: %s", host, status,
		 body);
	return -EIO;
broken:
	snprintf(err, errlen, "the credential proxy closed the connection without an answer");
	return -EIO;
}

/* Undo chunked transfer coding in place; -EPROTO if malformed or unfinished. */
static int dechunk(char *b, size_t len, size_t *out)
{
	size_t r = 0, w = 0;

	for (;;) {
		char *e;
		unsigned long n;

		if (r >= len)
			return -EPROTO;
		n = strtoul(b + r, &e, 16);
		e = memmem(b + r, len - r, "\r\n", 2);
		if (!e)
			return -EPROTO;
		r = (size_t)(e - b) + 2;
		if (n == 0) {
			*out = w;
			return 0;
		}
		if (n > len - r || len - r - n < 2)
			return -EPROTO;
		memmove(b + w, b + r, n);
		w += n;
		r += n + 2;
	}
}

/*
 * POST body to path on the provider's host, through the proxy; *status and
 * *resp (the body, malloc'd, NUL-ended).  `host` names the endpoint in
 * messages.
 */
static int proxy_post(const struct draft_via *px, const char *host, const char *path,
		      const char *headers, const char *body, int *status, char **resp, char *err,
		      size_t errlen)
{
	_cleanup_free_ char *req = NULL, *buf = NULL;
	_cleanup_close_ int fd = -1;
	SSL_CTX *ctx = NULL;
	SSL *ssl = NULL;
	size_t len = 0, cap = 0, hlen, blen;
	char *hend, *p;
	int n, r = -EIO;

	if (asprintf(&req,
		     "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
		     "Accept: application/json\r\nAccept-Encoding: identity\r\n"
		     "Connection: close\r\nContent-Length: %zu\r\n%s\r\n%s",
		     path, px->host, strlen(body), headers, body) < 0)
		return -ENOMEM;
	fd = proxy_connect(px, err, errlen);
	if (fd < 0)
		return fd;
	r = proxy_tunnel(fd, px->host, err, errlen);
	if (r < 0)
		return r;
	r = -EIO;
	/* The proxy's leaf for the provider's host, from its session CA and nothing else. */
	ctx = SSL_CTX_new(TLS_client_method());
	if (!ctx || SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 ||
	    X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), px->ca) != 1)
		goto tls_err;
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	ssl = SSL_new(ctx);
	if (!ssl || SSL_set_fd(ssl, fd) != 1 || SSL_set_tlsext_host_name(ssl, px->host) != 1 ||
	    SSL_set1_host(ssl, px->host) != 1)
		goto tls_err;
	if (SSL_connect(ssl) != 1) {
		long v = SSL_get_verify_result(ssl);

		if (v != X509_V_OK)
			snprintf(err, errlen, "the credential proxy's certificate for %s is not its "
				 "session CA's: %s", px->host, X509_verify_cert_error_string(v));
		else
			goto tls_err;
		goto out;
	}
	if (SSL_write(ssl, req, (int)strlen(req)) != (int)strlen(req))
		goto tls_err;
	for (;;) {
		if (cap - len < 16384) {
			char *nb;

			if (cap >= ANSWER_MAX) {
				snprintf(err, errlen, "%s: the answer exceeds %u bytes", host, ANSWER_MAX);
				goto out;
			}
			cap = cap ? cap * 2 : 65536;
			nb = realloc(buf, cap + 1);
			if (!nb) {
				r = -ENOMEM;
				goto out;
			}
			buf = nb;
		}
		n = SSL_read(ssl, buf + len, (int)(cap - len));
		if (n <= 0)
			break; /* close_notify or not: completeness is checked below */
		len += (size_t)n;
	}
	if (!buf)
		goto short_answer;
	buf[len] = 0;
	hend = memmem(buf, len, "\r\n\r\n", 4);
	if (!hend || sscanf(buf, "HTTP/1.%*d %d", status) != 1)
		goto short_answer;
	hlen = (size_t)(hend - buf) + 4;
	blen = len - hlen;
	*hend = 0;
	if ((p = strcasestr(buf, "\r\ntransfer-encoding:")) && strcasestr(p, "chunked")) {
		if (dechunk(buf + hlen, blen, &blen) < 0)
			goto short_answer;
	} else if ((p = strcasestr(buf, "\r\ncontent-length:"))) {
		size_t cl = strtoull(p + 17, NULL, 10);

		if (cl > blen)
			goto short_answer;
		blen = cl;
	}
	*resp = strndup(buf + hlen, blen);
	r = *resp ? 0 : -ENOMEM;
	goto out;
short_answer:
	snprintf(err, errlen, "%s: no complete HTTP answer", host);
	r = -EIO;
	goto out;
tls_err:
	snprintf(err, errlen, "the credential proxy: TLS: %s",
		 ERR_reason_error_string(ERR_peek_last_error()) ?: "connection failed");
out:
	ERR_clear_error();
	if (ssl)
		SSL_free(ssl);
	SSL_CTX_free(ctx);
	return r;
}

/* The text of an answer in the provider's format, or NULL. */
static char *answer_text(enum draft_provider p, json_t *j)
{
	json_t *v, *blk;
	size_t i;
	char *out = NULL;
	size_t n = 0;
	FILE *f;

	if (p == DRAFT_OPENAI) {
		v = json_object_get(json_array_get(json_object_get(j, "choices"), 0), "message");
		v = json_object_get(v, "content");
		return json_is_string(v) ? strdup(json_string_value(v)) : NULL;
	}
	v = json_object_get(j, "content");
	if (!json_is_array(v) || !(f = open_memstream(&out, &n)))
		return NULL;
	json_array_foreach(v, i, blk) {
		json_t *t = json_object_get(blk, "text");

		if (json_is_string(t) && !strcmp(json_string_value(json_object_get(blk, "type")) ?: "",
						"text"))
			fputs(json_string_value(t), f);
	}
	fclose(f);
	if (out && !*out) {
		free(out);
		out = NULL;
	}
	return out;
}

/*
 * An answer's words in our messages: its trailing line end dropped, and no
 * other control byte of the remote party reaches the terminal.
 */
static void defang(char *s)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' '))
		s[--n] = '\0';
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

int draft_ask(const struct draft_model *m, const char *system, const char *user,
	      char **answer, char *err, size_t errlen)
{
	_cleanup_free_ char *body = NULL, *hdr = NULL, *resp = NULL;
	struct endpoint e;
	json_t *req, *j;
	json_error_t je;
	int status = 0, r;

	r = endpoint_parse(m->endpoint, &e, err, errlen);
	if (r < 0)
		return r;
	/* The sentinel where the key goes: the proxy swaps it (creds_check, creds_upstream_head). */
	if (m->provider == DRAFT_OPENAI) {
		req = json_pack("{s:s, s:[{s:s, s:s}, {s:s, s:s}], s:i}", "model", m->model,
				"messages", "role", "system", "content", system, "role", "user",
				"content", user, "temperature", 0);
		r = asprintf(&hdr, "Authorization: Bearer %s\r\n", m->via->sentinel);
	} else {
		req = json_pack("{s:s, s:i, s:s, s:[{s:s, s:s}], s:i}", "model", m->model,
				"max_tokens", 4096, "system", system, "messages", "role", "user",
				"content", user, "temperature", 0);
		r = asprintf(&hdr, "x-api-key: %s\r\nanthropic-version: 2023-06-01\r\n",
			     m->via->sentinel);
	}
	if (!req || r < 0 || !(body = json_dumps(req, JSON_COMPACT))) {
		json_decref(req);
		return -ENOMEM;
	}
	json_decref(req);
	r = proxy_post(m->via, e.host,
		       m->provider == DRAFT_OPENAI ? "/v1/chat/completions" : "/v1/messages", hdr,
		       body, &status, &resp, err, errlen);
	if (r < 0)
		return r;
	if (status != 200) {
		j = json_loads(resp, 0, NULL);
		json_t *msg = json_object_get(json_object_get(j, "error"), "message");

		snprintf(err, errlen, "%s: HTTP %d: %.300s", e.host, status,
			 json_is_string(msg) ? json_string_value(msg) : resp);
		json_decref(j);
		defang(err);
		return -EIO;
	}
	j = json_loads(resp, 0, &je);
	*answer = j ? answer_text(m->provider, j) : NULL;
	json_decref(j);
	if (!*answer) {
		snprintf(err, errlen, "%s: the answer is not a %s reply with text: %.120s", e.host,
			 m->provider == DRAFT_OPENAI ? "chat completion" : "Messages API", resp);
		defang(err);
		return -EPROTO;
	}
	return 0;
}
