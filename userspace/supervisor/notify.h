/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * seccomp user notification: the filter the agent installs on itself right
 * before exec (its listener goes to the supervisor, and only there), and
 * the supervisor's tools for reading a stopped task's arguments and
 * answering it.
 *
 * Everything read from the task's memory is a snapshot: another thread (or
 * a CLONE_VM sibling) can change it after the read.  Callers therefore
 * never answer CONTINUE on a decision about memory unless the kernel floor
 * judges the same thing again (exec: the floor re-checks the binary), and
 * emulate the rest on copies (connect on a pidfd_getfd copy of the socket,
 * with the address the supervisor read).  seccomp_unotify(2) says the same.
 */
#ifndef CORDON_NOTIFY_H
#define CORDON_NOTIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "notify_set.h"

/*
 * Child side: install a filter that sends the chosen calls to a listener,
 * and return the listener fd (to be passed to the supervisor and closed).
 * Needs no_new_privs or CAP_SYS_ADMIN.  Returns the fd or -errno.
 */
int notify_install(unsigned what);

/* Pass an fd over a Unix socket (SCM_RIGHTS) and receive it. */
int notify_send_fd(int sock, int fd);
int notify_recv_fd(int sock);

/* The supervisor's view of one notification. */
struct notify_req {
	uint64_t id;
	pid_t pid;
	int nr;                 /* system call number */
	uint64_t args[6];
};

/* Wait for the next notification (the fd is readable). 0 or -errno. */
int notify_receive(int listener, struct notify_req *req);
/* Is the notification still pending (the task has not died, the pid not been reused)? */
bool notify_valid(int listener, uint64_t id);
/* Answer: let the call run (CONTINUE), or fail it with -err / return val. */
int notify_continue(int listener, uint64_t id);
int notify_return(int listener, uint64_t id, int64_t val, int err);

/*
 * Read from the task's memory at addr (pread on /proc/PID/mem).  Returns
 * the bytes read (may be short at the end of a mapping) or -errno.
 */
ssize_t notify_read(pid_t pid, uint64_t addr, void *buf, size_t len);
/* A NUL-terminated string of at most len-1 bytes; -ENAMETOOLONG if longer. */
int notify_read_string(pid_t pid, uint64_t addr, char *buf, size_t len);
/*
 * A NULL-terminated char *argv[] at addr: at most max_args strings and
 * max_bytes in total (-E2BIG beyond).  *out is one allocation (free()).
 */
int notify_read_argv(pid_t pid, uint64_t addr, size_t max_args, size_t max_bytes, char ***out);
/*
 * An exec's path (as notify_read_string into path) and argv (as
 * notify_read_argv), with as few system calls as it can.  *path_read says
 * whether the path was read, whatever the return.
 */
int notify_read_exec(pid_t pid, uint64_t path_addr, char *path, size_t path_len,
		     uint64_t argv_addr, size_t max_args, size_t max_bytes, char ***argv,
		     bool *path_read);

/*
 * Does another task share the address space of pid (a thread, or a
 * CLONE_VM child)?  A vfork parent that is waiting for pid and has no
 * other thread does not count: it cannot run until pid execs or exits.
 * Candidates are the processes of the session's cgroup (a task cannot
 * leave it).  Returns 1, 0 or -errno (unknown: callers treat it as shared).
 */
int notify_memory_shared(pid_t pid, const char *cgroup);

/*
 * Install fd in the task as the result of its pending call (ADDFD with
 * SEND: atomically the new fd and the answer).  Returns the task's fd
 * number or -errno.
 */
int notify_addfd_send(int listener, uint64_t id, int fd, bool cloexec);

/* Copy of the task's fd (pidfd_getfd), or -errno. */
int notify_getfd(pid_t pid, int fd);

#endif /* CORDON_NOTIFY_H */
