// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The agent's environment and PATH (agent_env.h). */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent_env.h"
#include "ssh_session.h"
#include "util.h"

static const char *const keep_env[] = {
	"PATH", "TERM", "LANG", "LANGUAGE", "TZ", "COLORTERM", "COLUMNS", "LINES",
	"NO_COLOR", "FORCE_COLOR", "EDITOR", "VISUAL", "PAGER", NULL,
};

/*
 * The environment is rebuilt, not filtered: only a short list of harmless
 * variables, the identity of the agent's user, and what --env names.  A
 * secret in the invoking shell's environment (cloud keys, tokens, SSH agent
 * sockets) therefore never reaches the agent unless the user passes it.
 */
char **build_env(const struct sup *s)
{
	size_t n = 0, cap = 48 + (size_t)s->opt->n_env + s->pol->n_creds;
	char **env = calloc(cap + 1, sizeof(char *));
	char buf[PATH_MAX + 64];

	if (!env)
		return NULL;
#define PUT(...) do { snprintf(buf, sizeof(buf), __VA_ARGS__); if (n < cap) env[n++] = strdup(buf); } while (0)
	for (int i = 0; keep_env[i]; i++) {
		const char *v = getenv(keep_env[i]);

		if (v)
			PUT("%s=%s", keep_env[i], v);
	}
	for (int i = 0; i < s->opt->n_env; i++) {
		const char *v = getenv(s->opt->env[i]);

		/* The relay stands in for the invoker's agent: its path stays outside. */
		if (s->ssh_agent[0] && !strcmp(s->opt->env[i], "SSH_AUTH_SOCK"))
			continue;
		if (v)
			PUT("%s=%s", s->opt->env[i], v);
	}
	if (!getenv("PATH"))
		PUT("PATH=/usr/local/bin:/usr/bin:/bin");
	PUT("HOME=%s", s->home);
	PUT("USER=%s", s->user);
	PUT("LOGNAME=%s", s->user);
	PUT("PWD=%s", s->workspace);
	PUT("TMPDIR=/tmp");
	PUT("CORDON_SESSION=%s", s->name);
	if (s->mcp_path[0])
		PUT("CORDON_MCP_SOCKET=%s", s->mcp_path);
	if (ssh_session_command(s, buf + 16, sizeof(buf) - 16)) {
		memcpy(buf, "GIT_SSH_COMMAND=", 16);
		if (n < cap)
			env[n++] = strdup(buf);
	}
	if (s->ssh_agent[0])
		PUT("SSH_AUTH_SOCK=%s", s->ssh_agent);
	if (s->egress_port) {
		/* Both spellings: curl reads the lower case, others the upper. */
		PUT("HTTPS_PROXY=http://127.0.0.1:%u", s->egress_port);
		PUT("HTTP_PROXY=http://127.0.0.1:%u", s->egress_port);
		PUT("https_proxy=http://127.0.0.1:%u", s->egress_port);
		PUT("http_proxy=http://127.0.0.1:%u", s->egress_port);
	}
	if (s->ca_path[0]) {
		/* The bundle (system CAs and the session CA) where the common clients look. */
		PUT("SSL_CERT_FILE=%s", s->ca_path);
		PUT("NODE_EXTRA_CA_CERTS=%s", s->ca_path);
		PUT("REQUESTS_CA_BUNDLE=%s", s->ca_path);
		PUT("CURL_CA_BUNDLE=%s", s->ca_path);
	}
	/*
	 * Each credential's sentinel (never the secret) is added by the
	 * agent's first process when the session is whole (env_add_lines).
	 */
#undef PUT
	env[n] = NULL;
	return env;
}

char **env_add_lines(char **env, const char *lines)
{
	size_t n = 0, more = 0;
	char **ne;

	while (env[n])
		n++;
	for (const char *l = lines; *l; l++)
		more += *l == '\n';
	ne = realloc(env, (n + more + 2) * sizeof(char *));
	if (!ne) {
		free(env);
		return NULL;
	}
	for (const char *l = lines; *l;) {
		size_t k = strcspn(l, "\n");

		if (k && !(ne[n++] = strndup(l, k)))
			return NULL;
		l += k + (l[k] == '\n');
	}
	ne[n] = NULL;
	return ne;
}

/*
 * The agent's PATH: the invoker's directories in the invoker's order, each
 * kept only if it is there for the agent: an absolute path, in its view, a
 * directory its own uid may search, where the policy lets it run programs
 * (allow or escalate), not a repeat, and no sbin directory unless the agent
 * is root.  Run in the agent's first process after it dropped to the
 * agent's identity (DAC is then the agent's) and before it restricts
 * itself.  Why: a PATH search tries each directory in turn, and each
 * attempt in a directory the agent may not run from (root's ~/.cargo/bin,
 * say) was a denied exec and a record, about ten per command an agent
 * started.  `--env PATH` asks for the invoker's PATH as it is, unfiltered.
 * Never empty: with nothing left, the filtered default (/usr/bin:/bin at
 * worst); an exec is still judged wherever it is found.
 */
static bool path_dir_ok(const struct sup *s, const char *dir)
{
	char canon[PATH_MAX], probe[PATH_MAX + 32];
	struct pol_request pr = { .op = POL_OP_EXEC, .cwd = "/" };
	struct pol_result res;
	const char *last = strrchr(dir, '/');
	struct stat st;

	if (dir[0] != '/' || (s->uid != 0 && last && !strcmp(last + 1, "sbin")))
		return false;
	if (!realpath(dir, canon) || stat(canon, &st) < 0 || !S_ISDIR(st.st_mode) ||
	    access(canon, X_OK) < 0)
		return false;
	if (s->uid != 0 && (last = strrchr(canon, '/')) && !strcmp(last + 1, "sbin"))
		return false;
	snprintf(probe, sizeof(probe), "%s/%s", strcmp(canon, "/") ? canon : "", "cordon-path-probe");
	pr.path = probe;
	pol_eval(s->pol, &pr, &res);
	return res.decision != CORDON_DENY;
}

void filter_path(const struct sup *s, char **env)
{
	char **slot = NULL, *out;
	const char *src;
	size_t n = 0;

	for (int i = 0; i < s->opt->n_env; i++)
		if (!strcmp(s->opt->env[i], "PATH"))
			return;
	for (char **e = env; *e; e++)
		if (!strncmp(*e, "PATH=", 5))
			slot = e;
	if (!slot)
		return;
	src = *slot + 5;
	out = malloc(strlen(src) + sizeof("PATH=/usr/local/bin:/usr/bin:/bin"));
	if (!out)
		return;
	for (int pass = 0; pass < 2 && n == 0; pass++) {
		const char *p = pass ? "/usr/local/bin:/usr/bin:/bin" : src;

		n = (size_t)sprintf(out, "PATH=");
		while (*p) {
			size_t l = strcspn(p, ":");
			char dir[PATH_MAX];
			bool seen = false;

			if (l && l < sizeof(dir)) {
				memcpy(dir, p, l);
				dir[l] = '\0';
				for (const char *q = out + 5; *q && !seen;) {
					size_t k = strcspn(q, ":");

					seen = k == l && !memcmp(q, dir, l);
					q += k + (q[k] == ':');
				}
				if (!seen && path_dir_ok(s, dir))
					n += (size_t)sprintf(out + n, "%s%s", n > 5 ? ":" : "", dir);
			}
			p += l + (p[l] == ':');
		}
		n -= 5;
	}
	if (n == 0)
		strcpy(out, "PATH=/usr/bin:/bin");
	free(*slot);
	*slot = out;
}
