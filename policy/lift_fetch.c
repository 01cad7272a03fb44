// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * curl and wget: each URL they would fetch, as http.fetch {url, method}
 * (lift_fetch.h).
 */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lift_fetch.h"
#include "lifted.h"
#include "policy.h"
#include "scan.h"
#include "util.h"

enum { C_URL = 1, C_METHOD, C_POST, C_PUT, C_GET, C_HEAD, C_CONFIG, C_PROTO_DEFAULT, C_GLOBOFF,
       C_INPUT };

/*
 * curl's options (its tool_getparam.c table, `curl --help all`): every one
 * that takes a value.  Flags are listed when they have a short letter (so
 * a cluster such as -sSfL reads right) or matter here; a long flag not
 * listed is unknown and read both ways, which costs nothing but an extra
 * candidate.  curl 7 accepts unique prefixes of long names.
 */
static const struct opt curl_opts[] = {
	{ "abstract-unix-socket", 0, A_VAL, 0 }, { "alt-svc", 0, A_VAL, 0 },
	{ "aws-sigv4", 0, A_VAL, 0 }, { "cacert", 0, A_VAL, 0 }, { "capath", 0, A_VAL, 0 },
	{ "cert", 'E', A_VAL, 0 }, { "cert-type", 0, A_VAL, 0 }, { "ciphers", 0, A_VAL, 0 },
	{ "config", 'K', A_VAL, C_CONFIG }, { "connect-timeout", 0, A_VAL, 0 },
	{ "connect-to", 0, A_VAL, 0 }, { "continue-at", 'C', A_VAL, 0 },
	{ "cookie", 'b', A_VAL, 0 }, { "cookie-jar", 'c', A_VAL, 0 },
	{ "create-file-mode", 0, A_VAL, 0 }, { "crlfile", 0, A_VAL, 0 }, { "curves", 0, A_VAL, 0 },
	{ "data", 'd', A_VAL, C_POST }, { "data-ascii", 0, A_VAL, C_POST },
	{ "data-binary", 0, A_VAL, C_POST }, { "data-raw", 0, A_VAL, C_POST },
	{ "data-urlencode", 0, A_VAL, C_POST }, { "delegation", 0, A_VAL, 0 },
	{ "dns-interface", 0, A_VAL, 0 }, { "dns-ipv4-addr", 0, A_VAL, 0 },
	{ "dns-ipv6-addr", 0, A_VAL, 0 }, { "dns-servers", 0, A_VAL, 0 },
	{ "doh-url", 0, A_VAL, 0 }, { "dump-header", 'D', A_VAL, 0 }, { "ech", 0, A_VAL, 0 },
	{ "egd-file", 0, A_VAL, 0 }, { "engine", 0, A_VAL, 0 }, { "etag-compare", 0, A_VAL, 0 },
	{ "etag-save", 0, A_VAL, 0 }, { "expect100-timeout", 0, A_VAL, 0 },
	{ "form", 'F', A_VAL, C_POST }, { "form-string", 0, A_VAL, C_POST },
	{ "ftp-account", 0, A_VAL, 0 }, { "ftp-alternative-to-user", 0, A_VAL, 0 },
	{ "ftp-method", 0, A_VAL, 0 }, { "ftp-port", 'P', A_VAL, 0 },
	{ "ftp-ssl-ccc-mode", 0, A_VAL, 0 }, { "happy-eyeballs-timeout-ms", 0, A_VAL, 0 },
	{ "haproxy-clientip", 0, A_VAL, 0 }, { "header", 'H', A_VAL, 0 },
	{ "help", 'h', A_VAL, 0 }, { "hostpubmd5", 0, A_VAL, 0 }, { "hostpubsha256", 0, A_VAL, 0 },
	{ "hsts", 0, A_VAL, 0 }, { "interface", 0, A_VAL, 0 }, { "ip-tos", 0, A_VAL, 0 },
	{ "ipfs-gateway", 0, A_VAL, 0 }, { "json", 0, A_VAL, C_POST },
	{ "keepalive-cnt", 0, A_VAL, 0 }, { "keepalive-time", 0, A_VAL, 0 },
	{ "key", 0, A_VAL, 0 }, { "key-type", 0, A_VAL, 0 }, { "knownhosts", 0, A_VAL, 0 },
	{ "krb", 0, A_VAL, 0 }, { "krb4", 0, A_VAL, 0 }, { "libcurl", 0, A_VAL, 0 },
	{ "limit-rate", 0, A_VAL, 0 }, { "local-port", 0, A_VAL, 0 },
	{ "login-options", 0, A_VAL, 0 }, { "mail-auth", 0, A_VAL, 0 },
	{ "mail-from", 0, A_VAL, 0 }, { "mail-rcpt", 0, A_VAL, 0 },
	{ "max-filesize", 0, A_VAL, 0 }, { "max-redirs", 0, A_VAL, 0 },
	{ "max-time", 'm', A_VAL, 0 }, { "netrc-file", 0, A_VAL, 0 }, { "noproxy", 0, A_VAL, 0 },
	{ "oauth2-bearer", 0, A_VAL, 0 }, { "output", 'o', A_VAL, 0 },
	{ "output-dir", 0, A_VAL, 0 }, { "parallel-max", 0, A_VAL, 0 },
	{ "parallel-max-host", 0, A_VAL, 0 }, { "pass", 0, A_VAL, 0 },
	{ "pinnedpubkey", 0, A_VAL, 0 }, { "preproxy", 0, A_VAL, 0 }, { "proto", 0, A_VAL, 0 },
	{ "proto-default", 0, A_VAL, C_PROTO_DEFAULT }, { "proto-redir", 0, A_VAL, 0 },
	{ "proxy", 'x', A_VAL, 0 }, { "proxy-cacert", 0, A_VAL, 0 },
	{ "proxy-capath", 0, A_VAL, 0 }, { "proxy-cert", 0, A_VAL, 0 },
	{ "proxy-cert-type", 0, A_VAL, 0 }, { "proxy-ciphers", 0, A_VAL, 0 },
	{ "proxy-crlfile", 0, A_VAL, 0 }, { "proxy-header", 0, A_VAL, 0 },
	{ "proxy-key", 0, A_VAL, 0 }, { "proxy-key-type", 0, A_VAL, 0 },
	{ "proxy-pass", 0, A_VAL, 0 }, { "proxy-pinnedpubkey", 0, A_VAL, 0 },
	{ "proxy-service-name", 0, A_VAL, 0 }, { "proxy-tls13-ciphers", 0, A_VAL, 0 },
	{ "proxy-tlsauthtype", 0, A_VAL, 0 }, { "proxy-tlspassword", 0, A_VAL, 0 },
	{ "proxy-tlsuser", 0, A_VAL, 0 }, { "proxy-user", 'U', A_VAL, 0 },
	{ "proxy1.0", 0, A_VAL, 0 }, { "pubkey", 0, A_VAL, 0 }, { "quote", 'Q', A_VAL, 0 },
	{ "random-file", 0, A_VAL, 0 }, { "range", 'r', A_VAL, 0 }, { "rate", 0, A_VAL, 0 },
	{ "referer", 'e', A_VAL, 0 }, { "request", 'X', A_VAL, C_METHOD },
	{ "request-target", 0, A_VAL, 0 }, { "resolve", 0, A_VAL, 0 }, { "retry", 0, A_VAL, 0 },
	{ "retry-delay", 0, A_VAL, 0 }, { "retry-max-time", 0, A_VAL, 0 },
	{ "sasl-authzid", 0, A_VAL, 0 }, { "service-name", 0, A_VAL, 0 },
	{ "sigalgs", 0, A_VAL, 0 }, { "socks4", 0, A_VAL, 0 }, { "socks4a", 0, A_VAL, 0 },
	{ "socks5", 0, A_VAL, 0 }, { "socks5-gssapi-service", 0, A_VAL, 0 },
	{ "socks5-hostname", 0, A_VAL, 0 }, { "speed-limit", 'Y', A_VAL, 0 },
	{ "speed-time", 'y', A_VAL, 0 }, { "ssl-sessions", 0, A_VAL, 0 },
	{ "stderr", 0, A_VAL, 0 }, { "telnet-option", 't', A_VAL, 0 },
	{ "tftp-blksize", 0, A_VAL, 0 }, { "time-cond", 'z', A_VAL, 0 },
	{ "tls-max", 0, A_VAL, 0 }, { "tls13-ciphers", 0, A_VAL, 0 },
	{ "tlsauthtype", 0, A_VAL, 0 }, { "tlspassword", 0, A_VAL, 0 },
	{ "tlsuser", 0, A_VAL, 0 }, { "trace", 0, A_VAL, 0 }, { "trace-ascii", 0, A_VAL, 0 },
	{ "trace-config", 0, A_VAL, 0 }, { "unix-socket", 0, A_VAL, 0 },
	{ "upload-file", 'T', A_VAL, C_PUT }, { "upload-flags", 0, A_VAL, 0 },
	{ "url", 0, A_VAL, C_URL }, { "url-query", 0, A_VAL, 0 }, { "user", 'u', A_VAL, 0 },
	{ "user-agent", 'A', A_VAL, 0 }, { "variable", 0, A_VAL, 0 },
	{ "vlan-priority", 0, A_VAL, 0 }, { "write-out", 'w', A_VAL, 0 },
	/* flags with a letter, and those that change the method or the URLs */
	{ "append", 'a', A_NO, 0 }, { "buffer", 'N', A_NO, 0 }, { "disable", 'q', A_NO, 0 },
	{ "fail", 'f', A_NO, 0 }, { "get", 'G', A_NO, C_GET }, { "globoff", 'g', A_NO, C_GLOBOFF },
	{ "head", 'I', A_NO, C_HEAD }, { "http1.0", '0', A_NO, 0 }, { "include", 'i', A_NO, 0 },
	{ "show-headers", 0, A_NO, 0 }, { "insecure", 'k', A_NO, 0 }, { "ipv4", '4', A_NO, 0 },
	{ "ipv6", '6', A_NO, 0 }, { "junk-session-cookies", 'j', A_NO, 0 },
	{ "list-only", 'l', A_NO, 0 }, { "location", 'L', A_NO, 0 }, { "manual", 'M', A_NO, 0 },
	{ "netrc", 'n', A_NO, 0 }, { "next", ':', A_NO, 0 }, { "parallel", 'Z', A_NO, 0 },
	{ "progress-bar", '#', A_NO, 0 }, { "proxytunnel", 'p', A_NO, 0 },
	{ "remote-header-name", 'J', A_NO, 0 }, { "remote-name", 'O', A_NO, 0 },
	{ "remote-name-all", 0, A_NO, 0 }, { "remote-time", 'R', A_NO, 0 },
	{ "show-error", 'S', A_NO, 0 }, { "silent", 's', A_NO, 0 }, { "sslv2", '2', A_NO, 0 },
	{ "sslv3", '3', A_NO, 0 }, { "tlsv1", '1', A_NO, 0 }, { "use-ascii", 'B', A_NO, 0 },
	{ "verbose", 'v', A_NO, 0 }, { "version", 'V', A_NO, 0 },
	{ "location-trusted", 0, A_NO, 0 }, { "compressed", 0, A_NO, 0 },
	{ "create-dirs", 0, A_NO, 0 }, { "http1.1", 0, A_NO, 0 }, { "http2", 0, A_NO, 0 },
	{ "http3", 0, A_NO, 0 }, { "fail-with-body", 0, A_NO, 0 }, { "retry-all-errors", 0, A_NO, 0 },
	{ "retry-connrefused", 0, A_NO, 0 }, { "no-progress-meter", 0, A_NO, 0 },
	{ "no-buffer", 0, A_NO, 0 }, { "no-keepalive", 0, A_NO, 0 }, { "no-sessionid", 0, A_NO, 0 },
};
static const struct optset curl_set = OPTSET(curl_opts, OS_ABBREV | OS_NEG);

/* wget --help (1.21): getopt_long, so prefixes; -nv is -n with the value v. */
static const struct opt wget_opts[] = {
	{ "version", 'V', A_NO, 0 }, { "help", 'h', A_NO, 0 }, { "background", 'b', A_NO, 0 },
	{ "execute", 'e', A_VAL, C_CONFIG }, { "output-file", 'o', A_VAL, 0 },
	{ "append-output", 'a', A_VAL, 0 }, { "debug", 'd', A_NO, 0 }, { "quiet", 'q', A_NO, 0 },
	{ "verbose", 'v', A_NO, 0 }, { NULL, 'n', A_VAL, 0 }, { "report-speed", 0, A_VAL, 0 },
	{ "input-file", 'i', A_VAL, C_INPUT }, { "force-html", 'F', A_NO, 0 },
	{ "base", 'B', A_VAL, 0 }, { "config", 0, A_VAL, C_CONFIG },
	{ "rejected-log", 0, A_VAL, 0 }, { "tries", 't', A_VAL, 0 },
	{ "retry-on-http-error", 0, A_VAL, 0 }, { "output-document", 'O', A_VAL, 0 },
	{ "continue", 'c', A_NO, 0 }, { "start-pos", 0, A_VAL, 0 }, { "progress", 0, A_VAL, 0 },
	{ "timestamping", 'N', A_NO, 0 }, { "server-response", 'S', A_NO, 0 },
	{ "spider", 0, A_NO, 0 }, { "timeout", 'T', A_VAL, 0 }, { "dns-timeout", 0, A_VAL, 0 },
	{ "connect-timeout", 0, A_VAL, 0 }, { "read-timeout", 0, A_VAL, 0 },
	{ "wait", 'w', A_VAL, 0 }, { "waitretry", 0, A_VAL, 0 }, { "quota", 'Q', A_VAL, 0 },
	{ "bind-address", 0, A_VAL, 0 }, { "limit-rate", 0, A_VAL, 0 },
	{ "restrict-file-names", 0, A_VAL, 0 }, { "inet4-only", '4', A_NO, 0 },
	{ "inet6-only", '6', A_NO, 0 }, { "prefer-family", 0, A_VAL, 0 }, { "user", 0, A_VAL, 0 },
	{ "password", 0, A_VAL, 0 }, { "use-askpass", 0, A_VAL, 0 },
	{ "local-encoding", 0, A_VAL, 0 }, { "remote-encoding", 0, A_VAL, 0 },
	{ "force-directories", 'x', A_NO, 0 }, { "directory-prefix", 'P', A_VAL, 0 },
	{ "cut-dirs", 0, A_VAL, 0 }, { "http-user", 0, A_VAL, 0 },
	{ "http-password", 0, A_VAL, 0 }, { "default-page", 0, A_VAL, 0 },
	{ "adjust-extension", 'E', A_NO, 0 }, { "header", 0, A_VAL, 0 },
	{ "compression", 0, A_VAL, 0 }, { "max-redirect", 0, A_VAL, 0 },
	{ "proxy-user", 0, A_VAL, 0 }, { "proxy-password", 0, A_VAL, 0 },
	{ "referer", 0, A_VAL, 0 }, { "user-agent", 'U', A_VAL, 0 },
	{ "load-cookies", 0, A_VAL, 0 }, { "save-cookies", 0, A_VAL, 0 },
	{ "post-data", 0, A_VAL, C_POST }, { "post-file", 0, A_VAL, C_POST },
	{ "method", 0, A_VAL, C_METHOD }, { "body-data", 0, A_VAL, 0 },
	{ "body-file", 0, A_VAL, 0 }, { "secure-protocol", 0, A_VAL, 0 },
	{ "certificate", 0, A_VAL, 0 }, { "certificate-type", 0, A_VAL, 0 },
	{ "private-key", 0, A_VAL, 0 }, { "private-key-type", 0, A_VAL, 0 },
	{ "ca-certificate", 0, A_VAL, 0 }, { "ca-directory", 0, A_VAL, 0 },
	{ "crl-file", 0, A_VAL, 0 }, { "pinnedpubkey", 0, A_VAL, 0 }, { "ciphers", 0, A_VAL, 0 },
	{ "hsts-file", 0, A_VAL, 0 }, { "ftp-user", 0, A_VAL, 0 }, { "ftp-password", 0, A_VAL, 0 },
	{ "warc-file", 0, A_VAL, 0 }, { "warc-header", 0, A_VAL, 0 },
	{ "warc-max-size", 0, A_VAL, 0 }, { "warc-dedup", 0, A_VAL, 0 },
	{ "warc-tempdir", 0, A_VAL, 0 }, { "recursive", 'r', A_NO, 0 }, { "level", 'l', A_VAL, 0 },
	{ "convert-links", 'k', A_NO, 0 }, { "backups", 0, A_VAL, 0 },
	{ "backup-converted", 'K', A_NO, 0 }, { "mirror", 'm', A_NO, 0 },
	{ "page-requisites", 'p', A_NO, 0 }, { "accept", 'A', A_VAL, 0 }, { "reject", 'R', A_VAL, 0 },
	{ "accept-regex", 0, A_VAL, 0 }, { "reject-regex", 0, A_VAL, 0 },
	{ "regex-type", 0, A_VAL, 0 }, { "domains", 'D', A_VAL, 0 },
	{ "exclude-domains", 0, A_VAL, 0 }, { "follow-tags", 0, A_VAL, 0 },
	{ "ignore-tags", 0, A_VAL, 0 }, { "span-hosts", 'H', A_NO, 0 }, { "relative", 'L', A_NO, 0 },
	{ "include-directories", 'I', A_VAL, 0 }, { "exclude-directories", 'X', A_VAL, 0 },
};
static const struct optset wget_set = OPTSET(wget_opts, OS_ABBREV | OS_NEG);

/* The first glob of url: a {set}, or a [range] with a '-' ([::1] is an IPv6 literal). */
static const char *glob_open(const char *url)
{
	for (const char *p = url; *p; p++) {
		const char *close;

		if (*p == '{')
			return p;
		if (*p != '[')
			continue;
		close = strchr(p, ']');
		if (!close)
			return p;
		if (memchr(p, '-', (size_t)(close - p)))
			return p;
		p = close;
	}
	return NULL;
}

/*
 * curl's URL globbing: {a,b} sets and [1-3] / [a-c:2] ranges, expanded so
 * that each host a pattern can reach is judged.  -1 when there are more
 * than max, or nesting deeper than we follow: the caller refuses the exec.
 */
static int glob_expand(const char *url, char out[][PATH_MAX], int max, int depth)
{
	const char *open = glob_open(url), *close;
	char alts[64][64];
	int na = 0, n = 0;

	if (depth > 8)
		return -1;      /* each level holds a URL on the stack: bounded */
	if (!open) {
		if (max < 1 || strlen(url) >= PATH_MAX)
			return -1;
		memcpy(out[0], url, strlen(url) + 1);
		return 1;
	}
	close = strchr(open, *open == '{' ? '}' : ']');
	if (!close)
		return -1;
	if (*open == '{') {
		for (const char *p = open + 1; p <= close;) {
			size_t l = strcspn(p, ",}");

			if (na == 64 || l >= 64)
				return -1;
			memcpy(alts[na], p, l);
			alts[na++][l] = 0;
			p += l + 1;
		}
	} else {
		char spec[64], lo_s[32], hi_s[32];
		size_t l = (size_t)(close - open - 1);
		long step = 1;

		if (l >= sizeof(spec))
			return -1;
		memcpy(spec, open + 1, l);
		spec[l] = 0;
		if (sscanf(spec, "%31[^-]-%31[^:]:%ld", lo_s, hi_s, &step) < 2 || step < 1)
			return -1;
		if (isdigit((unsigned char)lo_s[0])) {
			long lo = strtol(lo_s, NULL, 10), hi = strtol(hi_s, NULL, 10);
			int width = lo_s[0] == '0' ? (int)strlen(lo_s) : 0;

			for (long v = lo; v <= hi; v += step) {
				if (na == 64)
					return -1;
				snprintf(alts[na++], sizeof(alts[0]), "%0*ld", width, v);
			}
		} else {
			for (int c = (unsigned char)lo_s[0]; c <= (unsigned char)hi_s[0]; c += (int)step) {
				if (na == 64)
					return -1;
				alts[na][0] = (char)c;
				alts[na++][1] = 0;
			}
		}
	}
	for (int j = 0; j < na; j++) {
		size_t head = (size_t)(open - url), al = strlen(alts[j]), tl = strlen(close + 1);
		char next[PATH_MAX];
		int k;

		if (head + al + tl >= sizeof(next))
			return -1;
		memcpy(next, url, head);
		memcpy(next + head, alts[j], al);
		memcpy(next + head + al, close + 1, tl + 1);
		k = glob_expand(next, out + n, max - n, depth + 1);
		if (k < 0)
			return -1;
		n += k;
	}
	return n;
}

/* A URL as the program reads it: curl and wget take "host/path" as http. */
static void fetch_event(struct lift *L, const char *url, const char *method, bool globbing,
			const char *proto_default)
{
	enum { MAXG = 16 };
	char (*urls)[PATH_MAX] = malloc(MAXG * PATH_MAX);
	int n;

	if (!urls) {
		L->overflow = true;
		return;
	}
	n = globbing ? glob_expand(url, urls, MAXG, 0) : -2;
	if (n == -2 && strlen(url) < PATH_MAX) {
		strcpy(urls[0], url);
		n = 1;
	}
	if (n < 0)
		L->overflow = true;     /* a pattern reaching more hosts than we judge: refuse */
	for (int i = 0; i < n; i++) {
		char full[PATH_MAX + 16];
		const char *u = urls[i];

		if (!strstr(u, "://")) {
			snprintf(full, sizeof(full), "%s://%s", proto_default ? proto_default : "http", u);
			u = full;
		}
		lifted_add(L, "http", "fetch", json_pack("{s:o,s:o}", "url", pol_json_text(u), "method",
							 pol_json_text(method)));
	}
	free(urls);
}

void lift_fetch(struct lift *L, const char *prog, const char *const *argv, int argc)
{
	bool curl = !strcmp(prog, "curl"), globbing = curl, get = false, head = false;
	const char *method = NULL, *implied = NULL, *proto_default = NULL;
	struct scan s;
	struct tok t;
	int k = 0;

	/* Two passes: the method and the globbing apply to every URL, wherever they stand. */
	for (int pass = 0; pass < 2; pass++) {
		scan_init(&s, argv, argc, 1, curl ? &curl_set : &wget_set);
		for (scan_next(&s, &t); t.k != T_END; scan_next(&s, &t)) {
			unsigned tag = t.k == T_OPT && t.o ? t.o->tag : 0;
			const char *m = method ? method : head ? "HEAD" : get ? "GET" :
					implied ? implied : "GET";

			if (pass == 0) {
				if (tag == C_METHOD && t.val)
					method = t.val;
				else if (tag == C_POST && !implied)
					implied = "POST";
				else if (tag == C_PUT)
					implied = "PUT";
				else if (tag == C_GET)
					get = true;
				else if (tag == C_HEAD)
					head = true;
				else if (tag == C_GLOBOFF)
					globbing = false;
				else if (tag == C_PROTO_DEFAULT && t.val)
					proto_default = t.val;
				continue;
			}
			if (t.k == T_ARG || (tag == C_URL && t.val)) {
				const char *u = t.k == T_ARG ? t.arg : t.val;

				if (tag == C_URL && u[0] == '@') {
					lifted_add(L, "http", "fetch", json_pack("{s:o,s:o}", "url_file",
						pol_json_text(u + 1), "method", pol_json_text(m)));
					continue;
				}
				fetch_event(L, u, m, globbing, proto_default);
				k++;
			} else if (tag == C_CONFIG || tag == C_INPUT) {
				/* URLs from a file or a wgetrc command: argv cannot show them. */
				lifted_add(L, "http", "fetch", json_pack("{s:o,s:o}", "url_file",
					pol_json_text(t.val ? t.val : ""), "method", pol_json_text(m)));
			}
		}
	}
	(void)k;
}
