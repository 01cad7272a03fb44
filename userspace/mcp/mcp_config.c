// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The MCP proxy's servers file and secrets (mcp_config.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "audit.h"
#include "jsonpos.h"
#include "mcp_config.h"
#include "mcp_state.h"
#include "policy.h"
#include "scrub.h"
#include "util.h"

static void cfg_err(const char *file, const struct jpos_map *m, const char *ptr, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void cfg_err(const char *file, const struct jpos_map *m, const char *ptr, const char *fmt, ...)
{
	int line = 1, col = 1;
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (m)
		(void)jpos_get(m, ptr, false, &line, &col);
	fprintf(stderr, "%s:%d:%d: error: %s\n", file, line, col, msg);
}

bool mcp_config_name_ok(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n < 64 &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == n;
}

/* "${WORKSPACE}" in a string: the one variable a servers file may use. */
static char *expand_ws(const char *s, const char *ws)
{
	const char *v = strstr(s, "${WORKSPACE}");
	char *out;

	if (!v)
		return strdup(s);
	if (asprintf(&out, "%.*s%s%s", (int)(v - s), s, ws, v + 12) < 0)
		return NULL;
	return out;
}

/*
 * SERVERS.json:
 *   { "servers": { "NAME": { "command": ["prog", "arg", ...],
 *                            "profile": "mcp-server" | "/path/policy.json",
 *                            "roots": ["/dir", ...], "env": ["NAME", ...],
 *                            "timeout": SECONDS } } }
 * Unknown keys are errors; every error names FILE:LINE:COL.
 */
int mcp_config_load_servers(struct proxy *p, const char *file, const char *ws)
{
	_cleanup_free_ char *text = NULL;
	struct jpos_map *m = NULL;
	json_error_t e;
	json_t *root = NULL, *servers, *v;
	const char *name;
	int r = -EINVAL;

	r = read_file(file, &text, 1 << 20);
	if (r < 0) {
		fprintf(stderr, "%s: error: %s\n", file, strerror(-r));
		return r;
	}
	r = -EINVAL;
	root = json_loads(text, JSON_REJECT_DUPLICATES, &e);
	if (!root) {
		fprintf(stderr, "%s:%d:%d: error: %s\n", file, e.line, e.column, e.text);
		return -EINVAL;
	}
	(void)jpos_scan(text, strlen(text), &m);
	servers = json_object_get(root, "servers");
	{
		const char *k;

		json_object_foreach(root, k, v)
			if (strcmp(k, "servers")) {
				char ptr[256];

				snprintf(ptr, sizeof(ptr), "/%s", k);
				cfg_err(file, m, ptr, "unknown key \"%s\" (expected \"servers\")", k);
				goto out;
			}
	}
	if (!json_is_object(servers) || !json_object_size(servers)) {
		cfg_err(file, m, "/servers", "\"servers\" must be an object naming at least one server");
		goto out;
	}
	json_object_foreach(servers, name, v) {
		struct srv *s = &p->srv[p->n_srv];
		char ptr[256], sub[320];
		const char *k;
		json_t *x, *cmd, *roots;
		size_t i;

		snprintf(ptr, sizeof(ptr), "/servers/%s", name);
		if (!mcp_config_name_ok(name)) {
			cfg_err(file, m, ptr, "server name \"%s\": use letters, digits, '_' and '-' "
				"(a '.' would make SERVER.TOOL ambiguous)", name);
			goto out;
		}
		if (p->n_srv == MAX_SERVERS) {
			cfg_err(file, m, ptr, "more than %d servers", MAX_SERVERS);
			goto out;
		}
		if (!json_is_object(v)) {
			cfg_err(file, m, ptr, "a server is an object");
			goto out;
		}
		json_object_foreach(v, k, x)
			if (strcmp(k, "command") && strcmp(k, "profile") && strcmp(k, "roots") &&
			    strcmp(k, "env") && strcmp(k, "timeout")) {
				snprintf(sub, sizeof(sub), "%s/%s", ptr, k);
				cfg_err(file, m, sub, "unknown key \"%s\" (command, profile, roots, env, "
					"timeout)", k);
				goto out;
			}
		memset(s, 0, sizeof(*s));
		s->rfd = s->wfd = s->stop_fd = -1;
		snprintf(s->name, sizeof(s->name), "%s", name);
		p->n_srv++;
		cmd = json_object_get(v, "command");
		snprintf(sub, sizeof(sub), "%s/command", ptr);
		if (!json_is_array(cmd) || !json_array_size(cmd)) {
			cfg_err(file, m, json_is_array(cmd) || cmd ? sub : ptr,
				"\"command\" must be a non-empty array of strings");
			goto out;
		}
		s->argv = calloc(json_array_size(cmd) + 1, sizeof(char *));
		if (!s->argv)
			goto oom;
		json_array_foreach(cmd, i, x) {
			if (!json_is_string(x)) {
				snprintf(sub, sizeof(sub), "%s/command/%zu", ptr, i);
				cfg_err(file, m, sub, "\"command\" items must be strings");
				goto out;
			}
			if (!(s->argv[i] = expand_ws(json_string_value(x), ws)))
				goto oom;
		}
		x = json_object_get(v, "profile");
		if (x && !json_is_string(x)) {
			snprintf(sub, sizeof(sub), "%s/profile", ptr);
			cfg_err(file, m, sub, "\"profile\" must be a profile name or a policy file");
			goto out;
		}
		snprintf(s->policy, sizeof(s->policy), "%s", x ? json_string_value(x) : "mcp-server");
		roots = json_object_get(v, "roots");
		if (roots && (!json_is_array(roots) || !json_array_size(roots))) {
			snprintf(sub, sizeof(sub), "%s/roots", ptr);
			cfg_err(file, m, sub, "\"roots\" must be a non-empty array of directories");
			goto out;
		}
		s->roots = calloc((roots ? json_array_size(roots) : 1) + 1, sizeof(char *));
		if (!s->roots)
			goto oom;
		for (i = 0; i < (roots ? json_array_size(roots) : 1); i++) {
			_cleanup_free_ char *raw = NULL;
			char canon[PATH_MAX];
			struct stat st;

			x = roots ? json_array_get(roots, i) : NULL;
			snprintf(sub, sizeof(sub), "%s/roots/%zu", ptr, i);
			if (roots && !json_is_string(x)) {
				cfg_err(file, m, sub, "a root must be a string");
				goto out;
			}
			raw = expand_ws(x ? json_string_value(x) : ws, ws);
			if (!raw)
				goto oom;
			if (raw[0] != '/' || pol_canon_path(raw, NULL, canon, sizeof(canon)) < 0 ||
			    stat(canon, &st) < 0 || !S_ISDIR(st.st_mode)) {
				cfg_err(file, m, roots ? sub : ptr, "root \"%s\" is not an existing "
					"directory given by absolute path", raw);
				goto out;
			}
			if (!(s->roots[i] = strdup(canon)))
				goto oom;
		}
		x = json_object_get(v, "env");
		if (x && !json_is_array(x)) {
			snprintf(sub, sizeof(sub), "%s/env", ptr);
			cfg_err(file, m, sub, "\"env\" must be an array of variable names");
			goto out;
		}
		s->env = calloc(json_array_size(x) + 1, sizeof(char *));
		if (!s->env)
			goto oom;
		{
			json_t *y;

			json_array_foreach(x, i, y) {
				if (!json_is_string(y)) {
					snprintf(sub, sizeof(sub), "%s/env/%zu", ptr, i);
					cfg_err(file, m, sub, "\"env\" items must be variable names");
					goto out;
				}
				if (!(s->env[i] = strdup(json_string_value(y))))
					goto oom;
			}
		}
		x = json_object_get(v, "timeout");
		if (x && (!json_is_integer(x) || json_integer_value(x) < 1 ||
			  json_integer_value(x) > 86400)) {
			snprintf(sub, sizeof(sub), "%s/timeout", ptr);
			cfg_err(file, m, sub, "\"timeout\" must be seconds, 1 to 86400");
			goto out;
		}
		s->timeout_s = x ? (uint32_t)json_integer_value(x) : DEFAULT_CALL_TIMEOUT_S;
	}
	r = 0;
	goto out;
oom:
	fprintf(stderr, "%s: error: out of memory\n", file);
	r = -ENOMEM;
out:
	jpos_free(m);
	json_decref(root);
	return r;
}

/*
 * Known secrets, scrubbed from results: the values of the proxy's own
 * environment variables whose names say they are secrets (the same rule
 * as `cordon run`'s audit redaction), and the policy's credentials.
 */
static void add_secret(void *ctx, const char *name, const char *value)
{
	struct proxy *p = ctx;

	(void)scrub_add(&p->scrub, name, value);
	if (p->audit)
		(void)audit_add_secret(p->audit, name, value);
}

void mcp_config_collect_secrets(struct proxy *p)
{
	scrub_env_secrets(add_secret, p);
	for (size_t i = 0; i < p->pol->n_creds; i++) {
		const struct pol_credential *cr = &p->pol->creds[i];
		_cleanup_free_ char *val = NULL;

		if (cr->source_env && getenv(cr->source_env))
			val = strdup(getenv(cr->source_env));
		else if (cr->source_file && read_file(cr->source_file, &val, 65536) == 0)
			val[strcspn(val, "\r\n")] = '\0';
		if (val && strlen(val) >= 8)
			add_secret(p, cr->name, val);
		if (val)
			explicit_bzero(val, strlen(val));
	}
}
