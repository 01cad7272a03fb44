/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Which system calls the agent's notification filter sends to the
 * supervisor: the filter is built here (filters.h), the supervisor reads
 * the notifications (userspace/supervisor/notify.h).
 */
#ifndef CORDON_NOTIFY_SET_H
#define CORDON_NOTIFY_SET_H

#define NOTIFY_EXEC    0x1      /* execve, execveat */
#define NOTIFY_CONNECT 0x2      /* connect */
#define NOTIFY_OPEN    0x4      /* open, openat, openat2, creat */

#endif
