/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The approval channels: a human's terminal, `cordon approve` (approve.c). */
#ifndef CORDON_APPROVE_H
#define CORDON_APPROVE_H

#include "sup_state.h"

int approve_listen(struct sup *s);
void approve_accept(struct sup *s);
/* A new escalation; returns 0 when held, or a decision to apply now. */
void approve_hold(struct sup *s, struct pending *p);
void approve_tick(struct sup *s);
void approve_tty_input(struct sup *s, const char *buf, size_t n);
/* Apply a decision to every held call of p, unlink and free it. */
void approve_resolve(struct sup *s, struct pending *p, bool allow, bool session,
		     const char *approver);
bool approve_session_allowed(struct sup *s, const char *key);
/*
 * May the peer of an accepted socket speak to the supervisor (approve,
 * events)?  Root or `invoker`, outside every session, not this process.
 * Fills `who` ("uid U (pid P)") when given.
 */
bool host_operator(int fd, uid_t invoker, char *who, size_t wlen);
/* Drop one held call (`nr`, `notif`) from its pending request; the request goes when empty. */
void approve_withdraw(struct sup *s, int nr, uint64_t notif);
void approve_withdraw_all(struct sup *s, int nr);

#endif
