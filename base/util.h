/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Small helpers used everywhere: scope-bound cleanup, ownership transfer and
 * logging.  Side-effect free apart from log_*.
 */
#ifndef CORDON_UTIL_H
#define CORDON_UTIL_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static inline void freep(void *p)
{
	free(*(void **)p);
}

static inline void closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		(void)close(*fd);
		errno = saved;
	}
}

static inline void fclosep(FILE **f)
{
	if (*f)
		(void)fclose(*f);
}

#define _cleanup_(f)       __attribute__((cleanup(f)))
#define _cleanup_free_     _cleanup_(freep)
#define _cleanup_close_    _cleanup_(closep)
#define _cleanup_fclose_   _cleanup_(fclosep)

/* Take ownership of *pp, leaving NULL (or -1) behind for the cleanup. */
#define TAKE_PTR(p)  ({ __typeof__(p) _p = (p); (p) = NULL; _p; })
#define TAKE_FD(fd)  ({ int _fd = (fd); (fd) = -1; _fd; })

/*
 * Logging, at the boundary only.  Inner helpers return -errno; the caller
 * that knows what the user asked for logs once, with a subsystem prefix.
 */
/* CLOCK_MONOTONIC in milliseconds: deadlines, ages, budgets. */
uint64_t mono_ms(void);

void log_set_verbose(int level);
int log_verbose(void);
void log_msg(const char *level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * End a line on F: "\r\n" where F is a terminal in raw mode (no ONLCR: a
 * session's supervisor holds the human's terminal so while it relays the
 * agent's), else "\n".  A bare "\n" there staircases every later line.
 */
void log_newline(FILE *f);
#define log_err(...)   log_msg("error", __VA_ARGS__)
#define log_warn(...)  log_msg("warning", __VA_ARGS__)
#define log_info(...)  log_msg(NULL, __VA_ARGS__)
#define log_debug(...) do { if (log_verbose() > 0) log_msg("debug", __VA_ARGS__); } while (0)

/* n bytes as 2n lower-case hex digits and a NUL in out. */
void hex_encode(const unsigned char *b, size_t n, char *out);
/* Read a whole small file (procfs, sysfs) into a NUL-terminated buffer. */
int read_file(const char *path, char **out, size_t max);
/* Write a string to a file (sysfs, cgroupfs). */
int write_file(const char *path, const char *s);
/* mkdir -p: the parents 0755, the last mode; existing ones are fine.  0 or -errno. */
int mkdir_p(const char *path, mode_t mode);
/* Write all of BUF to FD (retrying short writes and EINTR): 0, or -errno (-EIO on a 0 write). */
int write_all(int fd, const void *buf, size_t n);

/*
 * One message of LEN bytes on Unix socket SOCK with descriptor FD beside it
 * (SCM_RIGHTS; none when FD < 0): 0, or -errno (-EIO when cut short).
 */
int fd_send(int sock, const void *buf, size_t len, int fd);
/*
 * One message into BUF (at most LEN bytes) and the one descriptor beside
 * it, if any, close-on-exec, in *FD (-1 when none, or not exactly one):
 * the message's length (0 at EOF), or -errno.
 */
ssize_t fd_recv(int sock, void *buf, size_t len, int *fd);

/*
 * The capability bounding set emptied but for KEEP (a mask of CAP_* bits;
 * needs CAP_SETPCAP), and the permitted and effective sets made exactly
 * KEEP (the inheritable empty): 0 or -errno.
 */
int caps_bound_to(uint64_t keep);
int caps_set(uint64_t keep);

/*
 * The identity a root helper that parses the agent's traffic takes once
 * started (the egress broker, the MCP proxy): HELPER_UID_BASE plus its pid,
 * unique among live helpers, above the ranges SSSD and systemd hand out,
 * owning no file.
 */
#define HELPER_UID_BASE 0x7f000000u
uid_t helper_uid(void);

/*
 * A root helper's identity changed for good to U:G with supplementary
 * groups GROUPS[N]: the capability bounding set emptied first but for the
 * capabilities in KEEP (a mask of CAP_* bits), then the ids, checked; no
 * capability but those is left, no_new_privs is set, the process is not
 * dumpable, and it still dies with PARENT (the change clears the
 * parent-death signal: set again, then the parent checked).  U must not be
 * 0.  glibc's wrappers: every thread of the process changes.  0 or -errno.
 */
int drop_identity(uid_t u, gid_t g, const gid_t *groups, size_t n, uint64_t keep,
		  pid_t parent);

/*
 * Every process (thread group) but SELF one of whose tasks holds socket
 * inode INO, from every task's descriptor table (which needs root for other
 * users' tasks): how many (at most CAP, else -E2BIG), or -errno.
 */
int socket_holders_scan(uint64_t ino, pid_t self, pid_t *out, int cap);

/*
 * A listening Unix stream socket at PATH (replacing what is there), mode
 * 0600, owned by OWNER, non-blocking and close-on-exec: -errno on failure.
 */
int unix_listen(const char *path, unsigned owner);

/* The inode of the peer of connected Unix socket inode INO, from sock_diag; 0 if none. */
unsigned unix_peer(unsigned ino);

/*
 * The peer of an accepted Unix stream socket: its credentials as the
 * kernel captured them at connect (SO_PEERCRED) and the text of its
 * /proc/PID/cgroup, read race-free where the kernel allows (see util.c).
 * 0 (*cg to free), or -errno: -ESRCH when the peer has gone.
 */
struct ucred;
int peer_read(int fd, struct ucred *cr, char **cg);

/*
 * Run fn(arg) in a child process that shares this one's memory until it
 * execs or exits (clone with CLONE_VM | CLONE_VFORK, as posix_spawn does:
 * no page tables copied, no copy-on-write faults after), on a stack of
 * stack_size bytes; the caller waits meanwhile.  FN may make system calls
 * and must end in an exec or return (its value is the exit status); it
 * must not allocate, take a lock or change memory the parent reads (errno
 * aside).  The child starts with the parent's signal mask and none of its
 * handlers.  The pid, or -errno.
 */
pid_t spawn_shared(int (*fn)(void *), void *arg, size_t stack_size);
/*
 * Start one of cordon's own helpers (the MCP proxy, the egress broker) from
 * the supervisor: `path` with `argv`, the descriptors fds[0..n) as 3, 4...,
 * stdin and stdout on /dev/null, its own process group (the terminal's ^C
 * is the supervisor's to forward), killed when the supervisor dies.  The
 * pid, or -errno.
 */
pid_t spawn_helper(const char *path, const char *const argv[], const int *fds, int n);

#endif /* CORDON_UTIL_H */
