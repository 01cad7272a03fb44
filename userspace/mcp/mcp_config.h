/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The MCP proxy's configuration: the servers file, parsed strictly (an
 * unknown key is an error, every error names FILE:LINE:COL), and the
 * known secrets the proxy scrubs from results.
 */
#ifndef CORDON_MCP_CONFIG_H
#define CORDON_MCP_CONFIG_H

#include <stdbool.h>

#include "mcp_state.h"

/* A server or session name: [A-Za-z0-9_-], 1 to 63 bytes (no '.': SERVER.TOOL). */
bool mcp_config_name_ok(const char *s);

/*
 * The servers of FILE into P (${WORKSPACE} is WS; roots canonical and
 * existing).  0, or -errno after a message on stderr naming where.
 */
int mcp_config_load_servers(struct proxy *p, const char *file, const char *ws);

/* Register the secrets to scrub: the environment's, and the policy's credentials. */
void mcp_config_collect_secrets(struct proxy *p);

#endif /* CORDON_MCP_CONFIG_H */
