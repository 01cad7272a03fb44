/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef CORDON_FLOOR_CMD_H
#define CORDON_FLOOR_CMD_H

int cmd_floor(int argc, char **argv);

#endif
