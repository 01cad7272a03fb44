// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The supervisor's side of an open (sup_open.h), notified only when the
 * policy escalates some file access: anything but an escalation is the
 * floor's to judge; an escalation is held for a human, and an approved
 * open is performed by the supervisor (sup_held.c).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "sup_held.h"
#include "sup_open.h"
#include "sup_record.h"
#include "task_path.h"
#include "util.h"

void sup_open_handle(struct sup *s, const struct notify_req *req)
{
	struct held h = { .notif = req->id, .pid = req->pid, .nr = req->nr };
	char path[PATH_MAX], base[PATH_MAX], joined[PATH_MAX], own[PATH_MAX];
	char summary[PATH_MAX + 64];
	struct pol_request pr = { 0 };
	struct pol_result res, res2;
	uint64_t path_addr;
	const char *verb;
	int dirfd = AT_FDCWD, flags, acc, r;
	unsigned mode = 0;
	json_t *raw, *event;
	struct stat st;

	memcpy(h.args, req->args, sizeof(h.args));
	if (req->nr == SYS_open || req->nr == SYS_creat) {
		path_addr = req->args[0];
		flags = req->nr == SYS_creat ? O_CREAT | O_WRONLY | O_TRUNC : (int)req->args[1];
		mode = (unsigned)(req->nr == SYS_creat ? req->args[1] : req->args[2]);
	} else if (req->nr == SYS_openat) {
		dirfd = (int)req->args[0];
		path_addr = req->args[1];
		flags = (int)req->args[2];
		mode = (unsigned)req->args[3];
	} else {                /* openat2: struct open_how */
		struct open_how how = { 0 };

		dirfd = (int)req->args[0];
		path_addr = req->args[1];
		if (req->args[3] < sizeof(how) ||
		    notify_read(req->pid, req->args[2], &how, sizeof(how)) != sizeof(how)) {
			(void)notify_return(s->listener, req->id, 0, EFAULT);
			return;
		}
		/* RESOLVE_* restrictions only narrow: judging the plain path is safe. */
		flags = (int)how.flags;
		mode = (unsigned)how.mode;
	}
	/*
	 * The path as the task names it: /proc/self, /dev/fd and /dev/std*
	 * are the task's own, not this process's (canonicalised here they
	 * would have named the supervisor's terminal or files, which an
	 * approval would then have opened for the agent).
	 */
	r = notify_read_string(req->pid, path_addr, path, sizeof(path));
	if (r == 0 && path[0] != '/') {
		if ((r = task_path_fd(req->pid, dirfd, base, sizeof(base))) == 0 &&
		    (size_t)snprintf(joined, sizeof(joined), "%s/%s", base, path) >= sizeof(joined))
			r = -ENAMETOOLONG;
	} else if (r == 0) {
		snprintf(joined, sizeof(joined), "%s", path);
	}
	if (r == 0 && (r = task_path_own(req->pid, joined, own, sizeof(own))) == 0)
		r = pol_canon_path(own, "/", h.path, sizeof(h.path));
	if (r < 0) {
		if (notify_valid(s->listener, req->id))
			(void)notify_return(s->listener, req->id, 0, r == -ENAMETOOLONG ? ENAMETOOLONG : EFAULT);
		return;
	}
	acc = flags & O_ACCMODE;
	pr.path = h.path;
	pr.op = (flags & O_CREAT) && stat(h.path, &st) < 0 ? POL_OP_CREATE :
		acc == O_RDONLY && !(flags & O_TRUNC) ? POL_OP_READ : POL_OP_WRITE;
	pol_eval(s->pol, &pr, &res);
	if (acc == O_RDWR && pr.op != POL_OP_READ) {
		pr.op = POL_OP_READ;
		pol_eval(s->pol, &pr, &res2);
		if (res2.decision > res.decision)
			res = res2;
	}
	/*
	 * Anything but an escalation is the floor's to judge: CONTINUE, and
	 * the kernel (BPF LSM file_open or Landlock) decides on the object it
	 * actually opens, whatever the memory says by then.
	 */
	if (res.decision != CORDON_ESCALATE) {
		(void)notify_continue(s->listener, req->id);
		return;
	}
	if (!notify_valid(s->listener, req->id))
		return;
	sup_record_step(s);
	h.oflags = flags;
	h.omode = mode;
	/*
	 * What the human is asked is what the open does: O_TRUNC empties the
	 * file and O_CREAT makes one even when opened read-only (shown as a
	 * read, an approval had truncated the file).
	 */
	verb = pr.op == POL_OP_READ ? "read" : acc == O_RDWR ? "read-write" :
	       (flags & O_TRUNC) ? "truncate" : pr.op == POL_OP_CREATE ? "create" : "write";
	event = pol_event_fs(pr.op == POL_OP_READ ? "read_file" : "write_file", h.path, verb);
	raw = json_pack("{s:o,s:i}", "path", pol_json_text(path), "flags", flags);
	snprintf(summary, sizeof(summary), "%s %s", verb, h.path);
	/*
	 * Kernel interfaces and devices are never opened on the agent's
	 * behalf: the open below runs outside the floor (its hardening rules,
	 * such as no /proc/PID/mem of tasks outside the session, are not
	 * asked), so an approval of "/proc/1234/mem" or a terminal would hand
	 * out what the floor exists to keep.
	 */
	if (pol_path_within(h.path, "/proc") || pol_path_within(h.path, "/sys") ||
	    pol_path_within(h.path, "/dev")) {
		sup_record(s, req->pid, "open", raw, event, "deny", sup_record_rule(&res),
			   "cordon does not open /proc, /sys or /dev files on the agent's behalf", NULL);
		(void)notify_return(s->listener, req->id, 0, EACCES);
	} else if (sup_human_denied(s, event)) {
		sup_held_tell_refused(s, req->pid, summary);
		sup_record(s, req->pid, "open", raw, event, "deny", sup_record_rule(&res),
			   REFUSED_AGAIN, NULL);
		(void)notify_return(s->listener, req->id, 0, EACCES);
	} else if (sup_session_approved(s, event, NULL)) {
		sup_record(s, req->pid, "open", raw, event, "allow", sup_record_rule(&res),
			   "approved for this session", NULL);
		sup_apply(s, &h, true, true, NULL);
	} else if (s->opt->approve != APPROVE_DENY) {
		sup_record(s, req->pid, "open", raw, event, "escalate", sup_record_rule(&res),
			   res.reason, NULL);
		sup_held_escalate(s, &h, "open", event, NULL, NULL, summary, &res);
	} else {
		sup_record(s, req->pid, "open", raw, event, "deny", sup_record_rule(&res),
			   "escalation with --approve deny", NULL);
		(void)notify_return(s->listener, req->id, 0, EACCES);
	}
	json_decref(raw);
	json_decref(event);
}
