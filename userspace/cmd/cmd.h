/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The commands of the cordon binary (main.c dispatches), one file each in
 * cmd/: options and printing, the work in the subsystem it names.  The
 * helpers cordon starts outside a session (http-proxy, mcp-proxy,
 * mcp-bridge, unix-connector) have their entry points in their subsystems'
 * headers.
 */
#ifndef CORDON_CMD_H
#define CORDON_CMD_H

/* `cordon run [OPTIONS] -- AGENT [ARGS...]` (cmd/run.c; the session is session/run.c's). */
int cmd_run(int argc, char **argv);
/* `cordon pending`, `cordon approve ID [--session]`, `cordon deny ID`, `cordon stop SESSION` */
int cmd_pending(int argc, char **argv);
/* `cordon intent SESSION "SENTENCE" [--for D]`, `--list`, `--revoke ID` (approve.c) */
int cmd_intent(int argc, char **argv);
int cmd_approve(int argc, char **argv);
int cmd_deny(int argc, char **argv);
int cmd_stop(int argc, char **argv);
/* `cordon audit verify | show` */
int cmd_audit(int argc, char **argv);
/* `cordon doctor [--json]` */
int cmd_doctor(int argc, char **argv);
/* `cordon floor status | load | unload | gc` */
int cmd_floor(int argc, char **argv);
/* `cordon home diff | apply | discard` */
int cmd_home(int argc, char **argv);
/* `cordon policy check | explain | test | compile` */
int cmd_policy(int argc, char **argv);
/* `cordon policy draft ...` (cmd/draft.c; the model's side in draft/draft_model.c) */
int cmd_policy_draft(int argc, char **argv);
/*
 * `cordon connect HOST PORT` (cmd/connect.c): inside a session, stdin and
 * stdout to HOST:PORT through the egress broker (ssh's ProxyCommand).
 * Exit 0 when the stream ends, 1 refused or unreachable, 2 bad usage.
 */
int cmd_connect(int argc, char **argv);

#endif
