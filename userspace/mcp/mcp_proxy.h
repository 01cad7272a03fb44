/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `cordon mcp-proxy`: the one chokepoint between an agent and its MCP
 * servers.  Each downstream server runs in a cordon session of its own;
 * every tools/call is judged by the policy evaluator before it is
 * forwarded, and results are scrubbed of known secrets before they return.
 */
#ifndef CORDON_MCP_PROXY_H
#define CORDON_MCP_PROXY_H

int cmd_mcp_proxy(int argc, char **argv);
/* The agent's side of cordon run --mcp: stdio to the session's MCP socket. */
int cmd_mcp_bridge(int argc, char **argv);

#endif /* CORDON_MCP_PROXY_H */
