/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The agent's environment (agent_env.c): rebuilt from a short list, never
 * filtered from cordon's, so a secret in the invoker's shell reaches the
 * agent only when --env names it; and its PATH, cut to the directories the
 * agent may search and run programs from.
 */
#ifndef CORDON_AGENT_ENV_H
#define CORDON_AGENT_ENV_H

#include "sup_state.h"

/*
 * The agent's environment: the harmless variables, the agent's identity,
 * what --env names, the session's proxies and CA bundle (its sentinels
 * come later: env_add_lines).  A
 * NULL-terminated array of malloc'd strings, or NULL (out of memory).
 */
char **build_env(const struct sup *s);
/*
 * ENV (build_env's, malloc'ed) with each NAME=VALUE line of LINES appended
 * (the credentials' sentinels, which reach the agent's first process only
 * when the session is whole: agent_child.c).  The new array, or NULL (ENV
 * freed) when out of memory.
 */
char **env_add_lines(char **env, const char *lines);
/*
 * ENV's PATH cut to the directories the agent may use (agent_env.c says
 * which), in place.  Call as the agent's uid (DAC is then the agent's),
 * before it restricts itself.  Unchanged with `--env PATH`.
 */
void filter_path(const struct sup *s, char **env);

#endif
