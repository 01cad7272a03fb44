/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The MCP proxy's server side (mcp_proxy.c says what the proxy closes):
 * each server started in a cordon session of its own, initialized as the
 * proxy's own client (roots offered, nothing else), its tools listed, and
 * what it sends read: answers to the proxy's calls (results scrubbed of
 * known secrets before a client sees them), its requests (roots and ping,
 * answered by the proxy), its notifications (progress passed on to the
 * client that asked).  A server that cannot speak JSON-RPC, floods, or
 * dies fails only its own calls (mcp_state_srv_kill).
 */
#ifndef CORDON_MCP_SERVER_H
#define CORDON_MCP_SERVER_H

#include "mcp_state.h"

/*
 * Start S in a session of its own: `cordon run` with the entry's profile,
 * its first root as the workspace, approvals denied, the proxy's user;
 * its stdio the proxy's pipes.  0 or -errno.
 */
int mcp_server_start(struct proxy *p, struct srv *s);

/* Send S the proxy's initialize; its tools are listed once it answers. */
void mcp_server_initialize(struct proxy *p, struct srv *s);

/* S's output is readable: read it and handle every whole message. */
void mcp_server_readable(struct proxy *p, struct srv *s);

#endif /* CORDON_MCP_SERVER_H */
