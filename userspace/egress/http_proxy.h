/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `cordon http-proxy`: the egress broker.  CONNECT to allowlisted hosts
 * (the tunnel's TLS server name must be the CONNECT host) and plain-HTTP
 * absolute-form requests, each judged by the policy as an http.request.
 */
#ifndef CORDON_HTTP_PROXY_H
#define CORDON_HTTP_PROXY_H

int cmd_http_proxy(int argc, char **argv);

#endif /* CORDON_HTTP_PROXY_H */
