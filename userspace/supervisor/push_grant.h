/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * An approved `git push` reaches the remote the human approved, and only
 * it (push_grant.c).
 *
 * The destination: before a held push is shown to the human, the remote's
 * push URLs are read the way git picks them (pushurl over url, --all of
 * them, insteadOf and pushInsteadOf, the branch's pushRemote,
 * remote.pushDefault, its remote, "origin"), by the host's own git, run in
 * the agent's view (its mount namespace, working directory, uid, gid and
 * groups, the push's global options and git environment) and confined
 * (Landlock: read-only, no exec but git, no TCP, scoped; no new
 * privileges, a deadline).  The URLs become the event's "destination":
 * the human approves a destination, not a remote name; batching and
 * "approved for this session" key on it too.
 *
 * The grant: when such a push is allowed by a human, the supervisor tells
 * the egress broker, over its channel, "this pid (and start time), these
 * host:port pairs": the broker admits a CONNECT the policy would refuse by
 * default when it names a granted host:port and the client's socket is
 * held only by that process and its descendants (egress/grants.c), until the
 * process exits or PUSH_GRANT_TTL_MS passes.  Both ends are audited.
 *
 * What it cannot close: see egress/grants.c.  A destination git
 * would pick differently from what was read here is refused by the broker
 * (the grant names what the human saw), never reached.
 */
#ifndef CORDON_PUSH_GRANT_H
#define CORDON_PUSH_GRANT_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>

struct sup;

/* How long a grant may live at most, even while its process runs. */
#define PUSH_GRANT_TTL_MS (10 * 60 * 1000)

/*
 * The push URLs of the git push that pid is about to exec (argv, envp as
 * the exec carries them; event's "remote" argument, if any), resolved in
 * the agent's view.  A JSON array of {"url", ["scheme", "host", "port"]}
 * (host and port for a network URL), or NULL with *why set (git could not
 * say, or nothing confines it here).
 */
json_t *push_dest_resolve(const struct sup *s, pid_t pid, char *const *argv, char *const *envp,
			  const json_t *event, const char **why);

/*
 * A URL git may push to: its scheme, host (lower case, IPv6 without
 * brackets) and port for a network one (https, http, ssh and scp-like
 * [user@]host:path, git); -ENOENT for a local path, file:// or a remote
 * helper's "transport::address"; -EINVAL for a network URL that does not
 * parse (no host, a bad port).
 */
int push_url_parse(const char *url, char *scheme, size_t slen, char *host, size_t hlen, int *port);
/* The URL as shown and recorded: a password in it masked ("user:***@"). */
json_t *push_url_shown(const char *url);

/* Is this a `git push` event (exec-lifted, with no "via")? */
bool push_event(const json_t *event);

/*
 * A human allowed the git push pid runs, as `event` (with its
 * "destination"): grant the egress broker its network destinations for
 * that process.  Audited; nothing happens without a broker or a network
 * destination (the push then fails at the floor, closed).
 */
void push_grant(struct sup *s, pid_t pid, const json_t *event, const char *approver);

#endif /* CORDON_PUSH_GRANT_H */
