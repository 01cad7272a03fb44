#!/bin/bash
# An approved `git push` reaches the remote the human approved, and only
# it (userspace/supervisor/push_grant.h, egress/grants.c): a real git over HTTPS
# to a local git server (git http-backend behind TLS with the test CA's
# certificate for "localhost", tests/net/git_server.py), the shipped
# profile (no egress host), approvals through `cordon approve/deny`.
#   - held: `cordon pending` shows the destination URL, not only "origin";
#   - approved: the push goes through the egress broker on a grant, and the
#     server's repository has the commit; the grant and its use audited;
#   - denied: nothing reaches the server;
#   - while a push is approved (its pre-push hook waits), another process
#     of the session asking the same host is refused (not the approved
#     process), the push's own hook asking another host:port is refused,
#     and after the push the host is refused again;
#   - a push whose remote is a local path: no grant is made.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/tests/lib.sh"
. "$here/tests/lib_run.sh"
. "$here/tests/lib_net.sh"
. "$here/tests/lib_push.sh"
[ "$(id -u)" -eq 0 ] || skip_all "needs root"
net_needs
[ -x /usr/bin/git ] || skip_all "needs git (/usr/bin/git)"
agent_user || skip_all "cannot create an unprivileged user"
new_workspace

t=$(mktemp -d /var/cordon-push.XXXXXX)
chmod 0755 "$t"
pids=
trap 'kill $pids 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$t" "$WS"' EXIT
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY no_proxy NO_PROXY ALL_PROXY all_proxy

net_test_ca "$t" || { echo "Bail out! the test CA: $(tail -n 1 "$t/ca.err")"; exit 1; }
mkdir "$t/srv"
git init -q --bare "$t/srv/repo.git"
$py "$here/tests/net/git_server.py" "$t" "$t/srv" 2>"$t/git_server.err" & pids="$pids $!"
for _ in $(seq 300); do [ -e "$t/git_port" ] && break; sleep 0.05; done
read -r port <"$t/git_port" || { echo "Bail out! the git server did not start: $(cat "$t/git_server.err")"; exit 1; }
url=https://localhost:$port/repo.git

# The agent's repository, in its workspace; the CA its git trusts beside it.
cp "$t/ca.pem" "$WS/ca.pem"
chmod 0644 "$WS/ca.pem"
push_repo "$url"
as_agent git -C "$WS/repo" remote add local "$t/srv/repo.git"
# A pre-push hook that, when asked, says it runs and waits (the push holds
# its grant meanwhile); made before the session (hooks are read-only in it).
push_hook <<EOF
#!/bin/sh
[ -e "$WS/slow" ] || exit 0
# The push's own descendant, asking a host:port other than the approved one.
curl -s -o /dev/null -w 'hook-other %{http_connect}\n' https://127.0.0.1:$port/ >"$WS/hook.out"
touch "$WS/hook-started"
i=0
while [ ! -e "$WS/curl-done" ] && [ \$i -lt 150 ]; do sleep 0.1; i=\$((i + 1)); done
exit 0
EOF

export GIT_SSL_CAINFO=$WS/ca.pem
requests() { wc -l <"$t/git_requests.jsonl" 2>/dev/null || echo 0; }
session() { push_session "$1" "$2" GIT_SSL_CAINFO; }

# --- approved ----------------------------------------------------------------
session ok1 "cd $WS/repo && /usr/bin/git push origin main; echo rc=\$?"
id=$(pending_id)
listing=$("$cordon" pending 2>&1)
ok "a git push is held ($id)" test -n "$id"
ok "  the human sees where it goes: $url" grep -qF -- "-> $url" <<<"$listing"
ok "  the pending event names the destination" \
    bash -c '"$1" pending --json | grep -qF "\"destination\"" ' _ "$cordon"
"$cordon" approve "$id" >/dev/null
wait $sess
ok "approved: the push went through ($(tail -n 1 "$t/ok1.out"))" grep -q 'rc=0' "$t/ok1.out"
ok "  the server's repository has the commit" \
    test "$(server_head)" = "$(agent_head)"
ok "  the grant is audited (pid, destination, approver)" \
    bash -c 'grep "\"type\":\"grant\"" "$1" | grep -q "\"outcome\":\"granted\""' _ "$t/ok1.jsonl"
ok "  each use is audited: allowed by grant" grep -q '"outcome":"allowed by grant"' "$t/ok1.jsonl"
ok "  the audit log verifies" "$cordon" audit verify --key-dir "$CORDON_AUDIT_KEY_DIR" "$t/ok1.jsonl"

# --- denied ------------------------------------------------------------------
commit two
before=$(server_head) n0=$(requests)
session no1 "cd $WS/repo && /usr/bin/git push origin main; echo rc=\$?"
id=$(pending_id)
"$cordon" deny "$id" >/dev/null
wait $sess
ok "denied: the push fails ($(tail -n 1 "$t/no1.out"))" bash -c '! grep -q "rc=0" "$1"' _ "$t/no1.out"
ok "  nothing reached the server (requests $n0 -> $(requests))" test "$(requests)" = "$n0"
ok "  its repository is unchanged" test "$(server_head)" = "$before"
ok "  no grant was made" bash -c '! grep -q "\"outcome\":\"granted\"" "$1"' _ "$t/no1.jsonl"

# --- another process of the session while the push is approved; after it --------
touch "$WS/slow"
chown "$AGENT" "$WS/slow"
rm -f "$WS/hook-started" "$WS/curl-done"
n0=$(requests)
session race "cd $WS/repo
(/usr/bin/git push origin main >$WS/push.out 2>&1; echo push rc=\$? >>$WS/push.out) &
i=0; while [ ! -e $WS/hook-started ] && [ \$i -lt 300 ]; do sleep 0.1; i=\$((i + 1)); done
curl -s -o /dev/null -w 'during %{http_connect}\n' --cacert $WS/ca.pem $url/info/refs
touch $WS/curl-done
wait
curl -s -o /dev/null -w 'after %{http_connect}\n' --cacert $WS/ca.pem $url/info/refs"
id=$(pending_id)
"$cordon" approve "$id" >/dev/null
wait $sess
rm -f "$WS/slow"
ok "the approved push went through meanwhile ($(tail -n 1 "$WS/push.out" 2>/dev/null))" \
    grep -q 'push rc=0' "$WS/push.out"
ok "  the server has the commit" test "$(server_head)" = "$(agent_head)"
ok "another process of the session, same host, during the push: refused ($(grep during "$t/race.out"))" \
    grep -q 'during 403' "$t/race.out"
ok "  as not the approved process (audited)" \
    grep -q '"outcome":"refused: not the approved process"' "$t/race.jsonl"
ok "the push's own hook, asking 127.0.0.1:$port (not the name approved): refused ($(cat "$WS/hook.out"))" \
    grep -q 'hook-other 403' "$WS/hook.out"
ok "after the push, the host is refused again ($(grep after "$t/race.out"))" \
    grep -q 'after 403' "$t/race.out"
ok "  the grant's end is audited" grep -q '"outcome":"grant ended"' "$t/race.jsonl"
ok "  the curls reached nothing: one info/refs since, the push's ($n0 -> $(requests) requests)" \
    test "$(tail -n +$((n0 + 1)) "$t/git_requests.jsonl" | grep -c info/refs)" = 1

# --- a local remote: approved, nothing to grant --------------------------------
commit three
session loc "cd $WS/repo && /usr/bin/git push local main; echo rc=\$?"
id=$(pending_id)
listing=$("$cordon" pending 2>&1)
ok "a push to a local path shows that path ($id)" grep -qF -- "-> $t/srv/repo.git" <<<"$listing"
"$cordon" deny "$id" >/dev/null
wait $sess
ok "  denied, and no grant for it" bash -c '! grep -q "\"outcome\":\"granted\"" "$1"' _ "$t/loc.jsonl"

done_testing
