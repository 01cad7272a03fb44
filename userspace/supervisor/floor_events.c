// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The kernel floors' events of the session (floor_events.h): what the
 * floor and the network floor decided and enforced, recorded as the
 * kernel's decisions, and the count of those their rings lost.
 */
#define _GNU_SOURCE

#include "audit.h"
#include "floor.h"
#include "floor_events.h"
#include "net.h"
#include "sup_record.h"
#include "util.h"

static int on_floor_event(void *ctx, const struct cordon_event *e)
{
	struct sup *s = ctx;
	char path[CORDON_EVENT_PATH + 64];
	const char *tool = NULL;
	json_t *raw, *event;

	floor_event_path(e, path, sizeof(path));
	switch (e->op) {
	case CORDON_OP_OPEN_WRITE:
	case CORDON_OP_CREATE:
	case CORDON_OP_MKDIR:
	case CORDON_OP_SYMLINK:
	case CORDON_OP_TRUNCATE:
	case CORDON_OP_RENAME:
	case CORDON_OP_LINK:
	case CORDON_OP_CHMOD:
	case CORDON_OP_CHOWN:
		tool = "write_file";
		break;
	case CORDON_OP_UNLINK:
	case CORDON_OP_RMDIR:
		tool = "delete";
		break;
	default:
		break;
	}
	if (tool && e->decision == CORDON_ALLOW)
		sup_record_step(s);
	raw = json_pack("{s:s,s:o,s:i}", "op", floor_op_name(e->op), "path", pol_json_text(path),
			"err", e->err);
	event = tool ? pol_event_fs(tool, path, NULL) : pol_event_kernel(floor_op_name(e->op), path);
	sup_record(s, (pid_t)e->pid, "floor", raw, event,
		   e->decision == CORDON_ALLOW ? "allow" : "deny",
		   NULL, floor_reason_name(e->reason), NULL);
	json_decref(raw);
	json_decref(event);
	return 0;
}

/*
 * Kernel events lost: the session's ring buffer (CORDON_SESSION_RINGBUF) was
 * full, so the floor decided, and enforced, without an itemised record.
 * Attack: an agent floods operations the floor refuses faster than the
 * supervisor drains them (or while it is slow), to bury one among them.  The
 * kernel counts every loss per session (event_start in bpf/common.bpf.h);
 * the log says how many were lost, as soon as it is seen, and the end
 * record says how many in all.  It cannot say what they were.
 */
static void drops_seen(struct sup *s, const char *ring, uint64_t d, uint64_t *seen)
{
	json_t *ev;

	if (d <= *seen)
		return;
	ev = json_pack("{s:s,s:s,s:I,s:I}", "event", "floor-events-dropped", "ring", ring,
		       "dropped", (json_int_t)(d - *seen), "total", (json_int_t)d);
	*seen = d;
	pthread_mutex_lock(&s->lock);
	(void)audit_write(s->audit, "lifecycle", ev);
	sup_audit_check(s);
	pthread_mutex_unlock(&s->lock);
	json_decref(ev);
}

static void floor_drops(struct sup *s)
{
	uint64_t d;

	if (s->fsess && floor_session_drops(s->floor, s->fsess, &d) == 0)
		drops_seen(s, "lsm", d, &s->floor_dropped);
}

void floor_events_drain(struct sup *s)
{
	(void)floor_session_poll(s->fsess, 0, on_floor_event, s);
	floor_drops(s);
}

/*
 * The network floor's events (bpf/net.bpf.c), from the session's own ring:
 * every refusal by cgroup-bpf.  Most of them the supervisor never saw: a
 * datagram's destination (sendto, sendmsg, sendmmsg), a raw, packet or
 * other socket kind, a bind to a non-loopback address, a pathname Unix
 * socket named outside the supervisor's emulation, a connect whose address
 * the agent rewrote after the supervisor read it.  Attack closed: an agent
 * that probes for a way out (DNS to a resolver of its own, raw sockets)
 * leaves no trace in the log although every probe was refused.  Recorded as
 * the kernel's decisions (server "kernel", the operation, the destination as
 * the kernel judged it), not judged again: the floor has already enforced.
 * What it cannot say: events the ring could not hold (net_drops, counted),
 * and a process's comm is its own to choose (it is what the kernel saw).
 */
static int on_net_event(void *ctx, const struct cordon_net_event *e)
{
	struct sup *s = ctx;
	char obj[CORDON_NET_UNIX_PATH + 64], comm[CORDON_COMM_LEN + 1];
	const char *op = net_op_name(e->op), *rule = NULL;
	json_t *raw, *event;

	net_event_str(e, obj, sizeof(obj));
	snprintf(comm, sizeof(comm), "%.*s", (int)strnlen(e->comm, sizeof(e->comm)), e->comm);
	if (e->reason == CORDON_NET_REASON_RULE && e->rule_id < s->pol->n_rules)
		rule = s->pol->rules[e->rule_id].name;
	else if (e->reason == CORDON_NET_REASON_CORDON)
		rule = "cordon";
	raw = json_pack("{s:s,s:o,s:i}", "op", op, "object", pol_json_text(obj), "uid", (int)e->uid);
	event = pol_event_kernel(op, obj);
	sup_record_as(s, (pid_t)e->pid, comm, "net-floor", raw, event,
		      e->decision == CORDON_ALLOW ? "allow" : "deny", rule,
		      net_reason_name(e->reason), NULL);
	json_decref(raw);
	json_decref(event);
	return 0;
}

/* Network floor events lost: as floor_drops, for the session's net ring. */
static void net_drops(struct sup *s)
{
	uint64_t d;

	if (s->nring && net_ring_drops(s->nring, &d) == 0)
		drops_seen(s, "net", d, &s->net_dropped);
}

void floor_events_drain_net(struct sup *s)
{
	(void)net_ring_poll(s->nring, 0, on_net_event, s);
	net_drops(s);
}
