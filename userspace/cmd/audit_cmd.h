/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef CORDON_AUDIT_CMD_H
#define CORDON_AUDIT_CMD_H

int cmd_audit(int argc, char **argv);

#endif
