/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The MCP proxy's client side (mcp_proxy.c says what the proxy closes):
 * the agent's connections (stdio, or a Unix socket whose peers must be the
 * session's own), its requests (initialize, tools/list of every server's
 * tools named SERVER.TOOL, tools/call judged by the policy before anything
 * reaches a server, cancellation), and the supervisor's decisions on the
 * calls the policy escalated, which wait here, unsent, until the human
 * says yes.
 */
#ifndef CORDON_MCP_CLIENT_H
#define CORDON_MCP_CLIENT_H

#include "mcp_state.h"

/* A client on RFD/WFD (made non-blocking); NULL: out of memory. */
struct client *mcp_client_add(struct proxy *p, int rfd, int wfd);

/* Drop C: its calls cancelled or withdrawn, its descriptors closed (not 0-2). */
void mcp_client_remove(struct proxy *p, struct client *c);

/* C's input is readable: read it and handle every whole message. */
void mcp_client_readable(struct proxy *p, struct client *c);

/* Accept a socket peer: the agent's user or root, and under a session one of its tasks. */
void mcp_client_accept(struct proxy *p);

/* The supervisor's channel is readable: its decisions on held calls. */
void mcp_client_channel_readable(struct proxy *p);

#endif /* CORDON_MCP_CLIENT_H */
