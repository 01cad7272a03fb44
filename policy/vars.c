// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A policy's variables (${WORKSPACE}, ${HOME}, ...): their defaults from the
 * environment and the values the caller sets (policy.h).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "policy.h"
#include "util.h"

const char *pol_vars_get(const struct pol_vars *vars, const char *name)
{
	for (size_t i = 0; vars && i < vars->n; i++)
		if (!strcmp(vars->v[i].name, name))
			return vars->v[i].value;
	return NULL;
}

int pol_vars_set(struct pol_vars *vars, const char *name, const char *value)
{
	char *v;

	for (const char *c = name; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '_')
			return -EINVAL;
	if (!*name)
		return -EINVAL;
	v = strdup(value);
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < vars->n; i++)
		if (!strcmp(vars->v[i].name, name)) {
			free(vars->v[i].value);
			vars->v[i].value = v;
			return 0;
		}
	if (vars->n >= ARRAY_SIZE(vars->v)) {
		free(v);
		return -E2BIG;
	}
	vars->v[vars->n].name = strdup(name);
	if (!vars->v[vars->n].name) {
		free(v);
		return -ENOMEM;
	}
	vars->v[vars->n++].value = v;
	return 0;
}

void pol_vars_free(struct pol_vars *vars)
{
	for (size_t i = 0; i < vars->n; i++) {
		free(vars->v[i].name);
		free(vars->v[i].value);
	}
	vars->n = 0;
}

int pol_vars_defaults(struct pol_vars *vars)
{
	char cwd[PATH_MAX], num[32];
	struct passwd *pw = getpwuid(getuid());
	const char *home = getenv("HOME");
	int r = 0;

	if (!home || home[0] != '/')
		home = pw ? pw->pw_dir : "/";
	snprintf(num, sizeof(num), "%u", (unsigned)getuid());
	if (getcwd(cwd, sizeof(cwd)))
		r = r ?: pol_vars_set(vars, "WORKSPACE", cwd);
	r = r ?: pol_vars_set(vars, "HOME", home);
	r = r ?: pol_vars_set(vars, "USER", pw ? pw->pw_name : num);
	r = r ?: pol_vars_set(vars, "UID", num);
	r = r ?: pol_vars_set(vars, "TMPDIR", "/tmp");
	return r;
}
