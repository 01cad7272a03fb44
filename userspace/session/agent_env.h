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
 * what --env names, the session's proxies, CA bundle and sentinels.  A
 * NULL-terminated array of malloc'd strings, or NULL (out of memory).
 */
char **build_env(const struct sup *s);
/*
 * ENV's PATH cut to the directories the agent may use (agent_env.c says
 * which), in place.  Call as the agent's uid (DAC is then the agent's),
 * before it restricts itself.  Unchanged with `--env PATH`.
 */
void filter_path(const struct sup *s, char **env);

#endif
