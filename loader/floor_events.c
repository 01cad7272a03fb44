// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The floor's events: a session's ring, its drops, the counters, and their names (floor.h). */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <bpf/btf.h>
#include "cgroup.h"
#include "floor.h"
#include "floor_state.h"
#include "floor.skel.h"
#include "floor.id.h"
#include "pin.h"
#include "policy.h"
#include "util.h"


static int on_rb(void *ctx, void *data, size_t len)
{
	struct floor_session *s = ctx;

	if (len < sizeof(struct cordon_event) || !s->fn)
		return 0;
	return s->fn(s->ctx, data);
}

int floor_session_fd(struct floor_session *s)
{
	if (!s->rb) {
		s->rb = ring_buffer__new(s->rb_fd, on_rb, s, NULL);
		if (!s->rb)
			return -errno;
	}
	return ring_buffer__epoll_fd(s->rb);
}

int floor_session_poll(struct floor_session *s, int timeout_ms, floor_event_fn fn, void *ctx)
{
	int r = floor_session_fd(s);

	if (r < 0)
		return r;
	s->fn = fn;
	s->ctx = ctx;
	r = ring_buffer__poll(s->rb, timeout_ms);
	s->fn = NULL;
	return r;
}

int floor_session_drops(struct floor *f, const struct floor_session *s, uint64_t *out)
{
	struct cordon_session v;

	if (bpf_map_lookup_elem(f->fd_sessions, &s->id, &v))
		return -errno;
	*out = v.drops;
	return 0;
}

void floor_event_path(const struct cordon_event *e, char *out, size_t len)
{
	const char *comp[CORDON_EVENT_PATH / 2];
	size_t n = 0, o = 0, i = 0;

	if (!(e->flags & CORDON_EV_PATH_COMPONENTS)) {
		snprintf(out, len, "%.*s", (int)sizeof(e->path), e->path);
		return;
	}
	while (i < sizeof(e->path) && e->path[i] && n < ARRAY_SIZE(comp)) {
		size_t l = strnlen(e->path + i, sizeof(e->path) - i);

		comp[n++] = e->path + i;
		i += l + 1;
	}
	if (n == 0)
		snprintf(out, len, "/");
	else
		out[0] = 0;
	while (n-- > 0 && o + 1 < len) {
		int w = snprintf(out + o, len - o, "/%s", comp[n]);

		if (w < 0)
			break;
		o += (size_t)w;
	}
	if (o >= len)
		out[len - 1] = 0;
}

const char *floor_op_name(uint32_t op)
{
	static const char *const names[] = {
		[CORDON_OP_NONE] = "none", [CORDON_OP_OPEN_READ] = "open-read",
		[CORDON_OP_OPEN_WRITE] = "open-write", [CORDON_OP_CREATE] = "create",
		[CORDON_OP_MKDIR] = "mkdir", [CORDON_OP_SYMLINK] = "symlink",
		[CORDON_OP_UNLINK] = "unlink", [CORDON_OP_RMDIR] = "rmdir",
		[CORDON_OP_RENAME] = "rename", [CORDON_OP_LINK] = "link",
		[CORDON_OP_TRUNCATE] = "truncate", [CORDON_OP_CHMOD] = "chmod",
		[CORDON_OP_CHOWN] = "chown", [CORDON_OP_EXEC] = "exec",
		[CORDON_OP_MMAP_EXEC] = "mmap-exec", [CORDON_OP_MPROTECT_EXEC] = "mprotect-exec",
		[CORDON_OP_MOUNT] = "mount", [CORDON_OP_UMOUNT] = "umount",
		[CORDON_OP_PIVOT_ROOT] = "pivot-root", [CORDON_OP_PTRACE] = "ptrace",
		[CORDON_OP_SIGNAL] = "signal", [CORDON_OP_BPF] = "bpf",
		[CORDON_OP_MODULE] = "module-request", [CORDON_OP_KERNEL_LOAD] = "kernel-load",
		[CORDON_OP_KERNEL_READ] = "kernel-read-file", [CORDON_OP_CAPABLE] = "capable",
		[CORDON_OP_IOCTL] = "ioctl", [CORDON_OP_PERF] = "perf-event-open",
		[CORDON_OP_USERNS] = "userns-create", [CORDON_OP_UNIX_CONNECT] = "unix-connect",
		[CORDON_OP_UNIX_SEND] = "unix-send", [CORDON_OP_SOCKET] = "socket", [CORDON_OP_SCHED] = "sched",
		[CORDON_OP_XATTR] = "xattr", [CORDON_OP_SIGIO] = "sigio", [CORDON_OP_CLONE] = "clone",
		[CORDON_OP_NOTIFY] = "notify",
	};
	return op < ARRAY_SIZE(names) && names[op] ? names[op] : "?";
}

const char *floor_reason_name(uint32_t reason)
{
	static const char *const names[] = {
		[CORDON_REASON_RULE] = "rule", [CORDON_REASON_DEFAULT] = "default-deny",
		[CORDON_REASON_WALK_BOUND] = "walk-bound", [CORDON_REASON_PROTECTED] = "invariant",
		[CORDON_REASON_FILELESS] = "fileless-exec", [CORDON_REASON_REFER] = "refer",
		[CORDON_REASON_CONTROL_FS] = "control-fs", [CORDON_REASON_ESCALATE] = "escalate",
		[CORDON_REASON_HARDENING] = "hardening", [CORDON_REASON_INTERNAL] = "internal-object",
		[CORDON_REASON_DISCONNECTED] = "disconnected",
	};
	return reason < ARRAY_SIZE(names) && names[reason] ? names[reason] : "?";
}
