/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Grants: the destinations of a git push a human approved, for that
 * process and its descendants only (grants.c says what this closes and
 * what it cannot), and the session's ssh-agent relay's rule built on them.
 * The list is hp->grants, under hp->chan_lock.
 */
#ifndef CORDON_GRANTS_H
#define CORDON_GRANTS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "broker.h"
#include "proto.h"

/* A grant from the supervisor (proto_read's), under chan_lock: added (no room: ignored). */
void grant_add(struct hp *hp, const struct proto_msg *m);

/* Drop the grants whose process has gone or whose time is up, and record their end. */
void grants_sweep(struct hp *hp);

/* 0 and *gid: admitted; -ENOENT: no live grant names host:port; -EACCES: not its process. */
int grant_admits(struct conn *c, const char *host, uint16_t port, uint64_t *gid,
		 char *why, size_t wlen);

/* The ssh-agent relay's hooks (ssh_agent.h); CTX: the struct hp. */
int grants_agent_may_sign(void *ctx, uint64_t peer, uint64_t *gid, char *why, size_t wlen);
void grants_agent_record(void *ctx, json_t *fields);

#endif /* CORDON_GRANTS_H */
