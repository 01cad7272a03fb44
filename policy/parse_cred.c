// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The credentials of a policy: what the credential proxy puts into a
 * request, for which hosts and endpoints, and the upstream it may be
 * redirected to (the policy's "upstream", or --upstream).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <strings.h>
#include "jsonpos.h"
#include "parse_cred.h"
#include "pctx.h"
#include "policy.h"
#include "util.h"

static bool valid_env_name(const char *s)
{
	if (!*s || isdigit((unsigned char)*s))
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return false;
	return true;
}

static char *req_string(struct pctx *c, json_t *o, const char *ptr, const char *key, bool required)
{
	json_t *v = json_object_get(o, key);
	char cp[1024];

	pctx_child(cp, sizeof(cp), ptr, key);
	if (!v) {
		if (required)
			pctx_err(c, ptr, "missing \"%s\"", key);
		return NULL;
	}
	if (!json_is_string(v)) {
		pctx_err(c, cp, "\"%s\" must be a string, got %s", key, pctx_type_name(v));
		return NULL;
	}
	return pctx_expand(c, json_string_value(v), cp);
}

struct strs_ctx {
	char ***out;
	size_t *n;
	int kind;   /* 0 host name, 1 endpoint, 2 server tool type */
};

static int cred_str_item(struct pctx *c, json_t *item, const char *ptr, void *ctx)
{
	static const char *const methods[] = { "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD",
					       "OPTIONS", NULL };
	struct strs_ctx *sc = ctx;
	char *s = pctx_string_item(c, item, ptr, sc->kind == 2 ? "a server tool type" :
				   sc->kind ? "an endpoint" : "a host");
	struct pol_host h;

	if (!s)
		return -1;
	if (sc->kind == 2) {
		if (!s[0] || strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(s)) {
			pctx_err(c, ptr, "server tool type \"%s\" must be a tool type or its prefix "
				 "(lower-case letters, digits and '_', such as \"web_search\")", s);
			free(s);
			return -1;
		}
	} else if (sc->kind == 0) {
		if (pol_host_parse(s, &h) < 0 || h.kind != POL_HOST_NAME) {
			pctx_err(c, ptr, "credential host \"%s\" must be a DNS name", s);
			free(h.name);
			free(s);
			return -1;
		}
		free(s);
		s = h.name;
	} else {
		const char *sp = strchr(s, ' ');
		bool ok = false;

		for (int i = 0; sp && methods[i] && !ok; i++)
			ok = strlen(methods[i]) == (size_t)(sp - s) && !strncmp(s, methods[i], (size_t)(sp - s));
		if (!ok || sp[1] != '/' || strchr(sp + 1, ' ')) {
			pctx_err(c, ptr, "endpoint \"%s\" must be \"METHOD /path\" (METHOD one of GET, POST, "
				 "PUT, PATCH, DELETE, HEAD, OPTIONS)", s);
			free(s);
			return -1;
		}
	}
	return pctx_push_str(sc->out, sc->n, s);
}

int pol_credential_set_upstream(struct pol_credential *cr, const char *url, const char *ca,
				char *why, size_t wlen)
{
	const char *h = url + 8, *end, *hend, *rest;
	char host[256];
	unsigned long port = 443;
	char *e;

	if (strncasecmp(url, "https://", 8)) {
		snprintf(why, wlen, "upstream \"%s\" must be https://HOST[:PORT][/PATH] (the real key "
			 "never goes upstream in clear)", url);
		return -EINVAL;
	}
	end = h + strcspn(h, "/?#");
	if (strpbrk(end, "?#")) {
		snprintf(why, wlen, "upstream \"%s\": no query or fragment", url);
		return -EINVAL;
	}
	/* The authority: HOST, HOST:PORT, [V6] or [V6]:PORT. */
	if (*h == '[') {
		hend = memchr(h, ']', (size_t)(end - h));
		rest = hend ? hend + 1 : NULL;
		h++;
	} else {
		hend = memchr(h, ':', (size_t)(end - h));
		hend = hend ? hend : end;
		rest = hend;
	}
	if (!rest || (rest != end && *rest != ':')) {
		snprintf(why, wlen, "upstream \"%s\": a bad host (an IPv6 address goes in brackets)", url);
		return -EINVAL;
	}
	if (rest != end) {
		errno = 0;
		port = strtoul(rest + 1, &e, 10);
		if (e != end || rest + 1 == end || errno || !port || port > 65535) {
			snprintf(why, wlen, "upstream \"%s\": the port must be 1-65535", url);
			return -EINVAL;
		}
	}
	if (hend == h || (size_t)(hend - h) >= sizeof(host)) {
		snprintf(why, wlen, "upstream \"%s\": no host", url);
		return -EINVAL;
	}
	memcpy(host, h, (size_t)(hend - h));
	host[hend - h] = 0;
	for (const char *q = host; *q; q++)
		if (!isalnum((unsigned char)*q) && !strchr(".-:_", *q)) {
			snprintf(why, wlen, "upstream \"%s\": the host has a character a host name "
				 "cannot have", url);
			return -EINVAL;
		}
	for (const char *q = end; *q; q++)
		if ((unsigned char)*q <= ' ' || *q == 0x7f || *q == '%' || *q == '\\') {
			snprintf(why, wlen, "upstream \"%s\": the path must be plain (no spaces, "
				 "escapes or control bytes)", url);
			return -EINVAL;
		}
	if (strstr(end, "/../") || strstr(end, "/./") || (strlen(end) >= 3 &&
	    !strcmp(end + strlen(end) - 3, "/..")) || strstr(end, "//")) {
		snprintf(why, wlen, "upstream \"%s\": the path has dot segments or an empty one", url);
		return -EINVAL;
	}
	if (ca && ca[0] != '/') {
		snprintf(why, wlen, "upstream CA \"%s\" must be an absolute path", ca);
		return -EINVAL;
	}
	free(cr->upstream_host);
	free(cr->upstream_prefix);
	cr->upstream_host = strdup(host);
	cr->upstream_port = (uint16_t)port;
	/* "/" alone is no prefix; a trailing slash is dropped (the request's path has its own). */
	cr->upstream_prefix = strndup(end, strlen(end) - (strlen(end) && end[strlen(end) - 1] == '/'));
	if (ca) {
		free(cr->upstream_ca);
		cr->upstream_ca = strdup(ca);
	}
	if (!cr->upstream_host || !cr->upstream_prefix || (ca && !cr->upstream_ca)) {
		snprintf(why, wlen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

int pol_apply_upstream(struct policy *p, const char *spec, const char *ca, char *why, size_t wlen)
{
	const char *eq = strchr(spec, '=');

	if (!eq || eq == spec) {
		snprintf(why, wlen, "--upstream %s: expected CREDENTIAL=https://HOST[:PORT][/PATH]", spec);
		return -EINVAL;
	}
	for (size_t i = 0; i < p->n_creds; i++) {
		struct pol_credential *cr = &p->creds[i];
		char w[400];

		if (strlen(cr->name) != (size_t)(eq - spec) || strncmp(cr->name, spec, (size_t)(eq - spec)))
			continue;
		if (pol_credential_set_upstream(cr, eq + 1, ca, w, sizeof(w)) < 0) {
			snprintf(why, wlen, "--upstream %s: %s", spec, w);
			return -EINVAL;
		}
		return 0;
	}
	snprintf(why, wlen, "--upstream %s: the policy has no credential \"%.*s\"%s", spec,
		 (int)(eq - spec), spec, p->n_creds ? "" : " (it has none)");
	return -ENOENT;
}

static void parse_upstream(struct pctx *c, struct pol_credential *cr, json_t *o, const char *ptr)
{
	char *url = req_string(c, o, ptr, "upstream", false);
	char *ca = req_string(c, o, ptr, "upstream_ca", false);
	char cp[1024], why[512];

	if (ca && !url) {
		pctx_child(cp, sizeof(cp), ptr, "upstream_ca");
		pctx_err(c, cp, "\"upstream_ca\" needs \"upstream\"");
	} else if (url && pol_credential_set_upstream(cr, url, ca, why, sizeof(why)) < 0) {
		pctx_child(cp, sizeof(cp), ptr, "upstream");
		pctx_err(c, cp, "%s", why);
	}
	free(url);
	free(ca);
}

void parse_credential(struct pctx *c, struct pol_credential *cr, json_t *o, const char *ptr)
{
	static const char *const keys[] = { "name", "env", "source", "hosts", "header", "prefix",
					    "endpoints", "server_tools", "upstream", "upstream_ca", NULL };
	static const char *const skeys[] = { "env", "file", NULL };
	json_t *src, *arr;
	char cp[1024];

	if (jpos_get(c->pos, ptr, false, &cr->pos.line, &cr->pos.col) < 0)
		cr->pos.line = cr->pos.col = 1;
	if (!json_is_object(o)) {
		pctx_err(c, ptr, "a credential must be an object, got %s", pctx_type_name(o));
		return;
	}
	pctx_check_keys(c, o, ptr, "a credential", keys);
	cr->name = req_string(c, o, ptr, "name", true);
	cr->env = req_string(c, o, ptr, "env", true);
	if (cr->env && !valid_env_name(cr->env)) {
		pctx_child(cp, sizeof(cp), ptr, "env");
		pctx_err(c, cp, "\"%s\" is not a valid environment variable name", cr->env);
	}
	cr->header = req_string(c, o, ptr, "header", true);
	cr->prefix = req_string(c, o, ptr, "prefix", false);
	src = json_object_get(o, "source");
	pctx_child(cp, sizeof(cp), ptr, "source");
	if (!src || !json_is_object(src)) {
		pctx_err(c, src ? cp : ptr, "credential needs \"source\": {\"env\": NAME} or {\"file\": PATH}");
	} else {
		pctx_check_keys(c, src, cp, "a credential source", skeys);
		cr->source_env = req_string(c, src, cp, "env", false);
		cr->source_file = req_string(c, src, cp, "file", false);
		if (!!cr->source_env == !!cr->source_file)
			pctx_err(c, cp, "source has exactly one of \"env\" and \"file\"");
		if (cr->source_file && cr->source_file[0] != '/')
			pctx_err(c, cp, "source file must be an absolute path");
	}
	arr = json_object_get(o, "hosts");
	pctx_child(cp, sizeof(cp), ptr, "hosts");
	if (!arr)
		pctx_err(c, ptr, "credential needs \"hosts\"");
	else if (pctx_each_item(c, arr, cp, cred_str_item,
				&(struct strs_ctx){ &cr->hosts, &cr->n_hosts, 0 }) == 0)
		pctx_err(c, cp, "\"hosts\" is empty");
	arr = json_object_get(o, "endpoints");
	pctx_child(cp, sizeof(cp), ptr, "endpoints");
	if (!arr)
		pctx_err(c, ptr, "credential needs \"endpoints\" (the allowed \"METHOD /path\")");
	else if (pctx_each_item(c, arr, cp, cred_str_item,
				&(struct strs_ctx){ &cr->endpoints, &cr->n_endpoints, 1 }) == 0)
		pctx_err(c, cp, "\"endpoints\" is empty");
	arr = json_object_get(o, "server_tools");
	pctx_child(cp, sizeof(cp), ptr, "server_tools");
	if (arr)
		(void)pctx_each_item(c, arr, cp, cred_str_item,
				     &(struct strs_ctx){ &cr->server_tools, &cr->n_server_tools, 2 });
	parse_upstream(c, cr, o, ptr);
}

