/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* cordon run --mcp: the session's MCP proxy (mcp_session.c). */
#ifndef CORDON_MCP_SESSION_H
#define CORDON_MCP_SESSION_H

#include "sup_state.h"

int mcp_session_listen(struct sup *s);
int mcp_session_start(struct sup *s);
void mcp_session_stop(struct sup *s);

#endif
