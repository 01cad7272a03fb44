/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * One client connection's life: accepted (capped at MAX_CONNS, one thread
 * each), its socket's cgroup checked against the session's, its head read
 * within --head-timeout, judged, its upstream opened, and handed to the
 * tunnel, the forwarder or the credential pipeline.
 */
#ifndef CORDON_CONN_H
#define CORDON_CONN_H

#include "broker.h"

/* Can this kernel say which cgroup a client's socket was made in?  0, or -errno. */
int conn_peer_check(int listen_fd);

/* Serve hp->listen_fd until a signal (conn_on_signal, installed by the caller): 0. */
int conn_accept_loop(struct hp *hp);
void conn_on_signal(int sig);

#endif /* CORDON_CONN_H */
