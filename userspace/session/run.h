/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef CORDON_RUN_H
#define CORDON_RUN_H

/* `cordon run [OPTIONS] -- AGENT [ARGS...]` */
int cmd_run(int argc, char **argv);
/* `cordon pending`, `cordon approve ID [--session]`, `cordon deny ID` */
int cmd_pending(int argc, char **argv);
int cmd_approve(int argc, char **argv);
int cmd_deny(int argc, char **argv);
/* `cordon stop SESSION` */
int cmd_stop(int argc, char **argv);

#endif /* CORDON_RUN_H */
