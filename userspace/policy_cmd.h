/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef CORDON_POLICY_CMD_H
#define CORDON_POLICY_CMD_H

int cmd_policy(int argc, char **argv);

#endif
