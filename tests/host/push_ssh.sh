#!/bin/bash
# An approved `git push` over ssh reaches the remote the human approved, and
# only it (userspace/session/ssh_session.c, userspace/egress/ssh_agent.h and
# egress/grants.c): a real git and ssh against an sshd of the test's
# own on 127.0.0.1 (a free port, its own host key, a throwaway account whose
# authorized key is a throwaway key held by an ssh-agent the test starts as
# the invoker's), the
# shipped profile, approvals through `cordon approve/deny`.
#   - held and denied: nothing reaches sshd or the bare repository;
#   - approved: ssh goes through `cordon connect` and the broker on the
#     grant, signs through the relayed agent, and the commit is in the
#     remote; the grant, the tunnel and the signature audited;
#   - during an approved push: a process of the push's tree may have a
#     user-authentication request signed, not other data; a process
#     outside the tree may not, and cannot CONNECT to the granted host;
#   - with no grant: a direct connect to sshd is refused, `cordon connect`
#     is refused with the broker's reason, the relay refuses a signature
#     and adding or removing keys; the agent sees neither the private key
#     nor the invoker's SSH_AUTH_SOCK path.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/tests/lib.sh"
. "$here/tests/lib_run.sh"
. "$here/tests/lib_net.sh"
. "$here/tests/lib_push.sh"
[ "$(id -u)" -eq 0 ] || skip_all "needs root"
net_needs
[ -x /usr/bin/git ] || skip_all "needs git (/usr/bin/git)"
[ -x /usr/sbin/sshd ] || skip_all "needs sshd (openssh-server; make deps installs it)"
for b in ssh ssh-agent ssh-add ssh-keygen; do
    command -v "$b" >/dev/null || skip_all "needs $b (openssh-client)"
done
agent_user || skip_all "cannot create an unprivileged user"
new_workspace

t=$(mktemp -d /var/cordon-pushssh.XXXXXX)
chmod 0755 "$t"
remote=cordonssh$$
made_run_sshd=
sshd_pid=
cleanup() {
    [ -n "$sshd_pid" ] && kill "$sshd_pid" 2>/dev/null
    [ -n "${SSH_AGENT_PID:-}" ] && kill "$SSH_AGENT_PID" 2>/dev/null
    userdel "$remote" 2>/dev/null
    [ -n "$made_run_sshd" ] && rmdir /run/sshd 2>/dev/null
    [ -n "${KEEP:-}" ] || rm -rf "$t" "$WS"
}
trap cleanup EXIT
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY no_proxy NO_PROXY ALL_PROXY all_proxy
unset GIT_SSH_COMMAND GIT_SSH

# --- the remote: a throwaway account, a bare repository, an sshd of our own ---
useradd --system --no-create-home --home-dir "$t/srv" --shell /bin/sh "$remote" ||
    { echo "Bail out! cannot create the remote's account $remote"; exit 1; }
usermod -p '*' "$remote"       # no password, not locked: a key logs in
mkdir "$t/srv"
git init -q --bare "$t/srv/repo.git"
chown -R "$remote" "$t/srv"
ssh-keygen -q -t ed25519 -N '' -C "cordon test host" -f "$t/hostkey"
ssh-keygen -q -t ed25519 -N '' -C "cordon test throwaway" -f "$t/userkey"
cp "$t/userkey.pub" "$t/authorized_keys"
chmod 0644 "$t/authorized_keys"
port=$($py -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
[ -d /run/sshd ] || { mkdir -m 0755 /run/sshd && made_run_sshd=1; }
cat >"$t/sshd_config" <<EOF
ListenAddress 127.0.0.1:$port
HostKey $t/hostkey
PidFile $t/sshd.pid
AuthorizedKeysFile $t/authorized_keys
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
AllowUsers $remote
LogLevel VERBOSE
EOF
/usr/sbin/sshd -D -e -f "$t/sshd_config" 2>"$t/sshd.log" & sshd_pid=$!
for _ in $(seq 200); do grep -q "Server listening" "$t/sshd.log" 2>/dev/null && break; sleep 0.05; done
grep -q "Server listening" "$t/sshd.log" ||
    { echo "Bail out! sshd did not start: $(tail -n 3 "$t/sshd.log")"; exit 1; }
url=ssh://$remote@localhost:$port$t/srv/repo.git

# --- the invoker: an ssh-agent holding the key, the host's key known -----------
eval "$(ssh-agent -s -a "$t/agent.sock")" >/dev/null
ssh-add -q "$t/userkey" 2>/dev/null || { echo "Bail out! ssh-add failed"; exit 1; }
mkdir -p "$t/invoker/.ssh"
echo "[localhost]:$port $(cut -d' ' -f1,2 "$t/hostkey.pub")" >"$t/invoker/.ssh/known_hosts"
# The remote works from the host, as the invoker (so a failure below is cordon's).
ssh -o UserKnownHostsFile="$t/invoker/.ssh/known_hosts" -o BatchMode=yes -p "$port" \
    "$remote@localhost" true 2>"$t/host-ssh.err" ||
    { echo "Bail out! the remote refuses the invoker: $(tail -n 2 "$t/host-ssh.err")"; exit 1; }
connections() { grep -c "Connection from" "$t/sshd.log"; }
logins() { grep -c "Accepted publickey" "$t/sshd.log"; }

# --- the agent's repository ------------------------------------------------------
cp "$here/tests/net/agent_sign.py" "$WS/agent_sign.py"
chmod 0644 "$WS/agent_sign.py"
push_repo "$url"
# While the push holds its grant (after ssh logged in, before the pack), when
# asked: the push's own descendants ask the relayed agent to sign.
push_hook <<EOF
#!/bin/sh
[ -e "$WS/slow" ] || exit 0
$py $WS/agent_sign.py userauth >"$WS/hook-userauth.out" 2>&1
$py $WS/agent_sign.py other >"$WS/hook-other.out" 2>&1
touch "$WS/hook-started"
i=0
while [ ! -e "$WS/outside-done" ] && [ \$i -lt 150 ]; do sleep 0.1; i=\$((i + 1)); done
exit 0
EOF

session() { HOME=$t/invoker push_session "$1" "$2" SSH_AUTH_SOCK; }
rec() { grep '"ssh_agent":' "$t/$1.jsonl"; }   # rec NAME: the relay's records

# --- no grant: what the session sees and may do ---------------------------------------
c0=$(connections)
session probe "echo \"env SSH_AUTH_SOCK=\$SSH_AUTH_SOCK\"
env | grep -c '$t' | sed 's/^/env-mentions-invoker /'
echo \"git-ssh \$GIT_SSH_COMMAND\"
ssh-add -L 2>&1 | sed 's/^/keys /'
$py $WS/agent_sign.py userauth
$py $WS/agent_sign.py add
ssh-add -D >/dev/null 2>&1; echo \"delete-all rc=\$?\"
cat $t/userkey >/dev/null 2>&1; echo \"read-key rc=\$?\"
timeout 5 bash -c 'exec 3<>/dev/tcp/127.0.0.1/$port' 2>/dev/null; echo \"direct rc=\$?\"
/run/cordon-ssh/cordon connect localhost $port </dev/null 2>&1 | sed 's/^/connect-said /'
/run/cordon-ssh/cordon connect localhost $port </dev/null >/dev/null 2>&1; echo \"connect rc=\$?\""
wait $sess
out=$(cat "$t/probe.out")
ok "the agent's SSH_AUTH_SOCK is cordon's relay ($(grep '^env ' <<<"$out"))" \
    grep -q '^env SSH_AUTH_SOCK=/run/cordon-ssh/.*\.agent$' <<<"$out"
ok "  its environment never names the invoker's socket or key ($t)" \
    grep -qx 'env-mentions-invoker 0' <<<"$out"
ok "  GIT_SSH_COMMAND names cordon connect and the known hosts, strict" \
    bash -c 'grep "^git-ssh " <<<"$1" | grep "ProxyCommand=/run/cordon-ssh/cordon connect %h %p" |
             grep "UserKnownHostsFile=/run/cordon-ssh/" | grep -q "StrictHostKeyChecking=yes"' _ "$out"
ok "  it lists the invoker's public key" grep -q "^keys ssh-ed25519 .* cordon test throwaway" <<<"$out"
ok "  and no private key" bash -c '! grep -q "PRIVATE KEY" <<<"$1"' _ "$out"
ok "  it cannot read the private key file (read-key rc=$(sed -n 's/^read-key rc=//p' <<<"$out"))" \
    bash -c '! grep -qx "read-key rc=0" <<<"$1"' _ "$out"
ok "no push approved: a signature is refused (sign 5 = SSH_AGENT_FAILURE)" \
    grep -qx 'sign 5' <<<"$out"
ok "  audited: no ssh push is approved now" \
    bash -c 'grep "\"outcome\":\"refused\"" <<<"$1" | grep -q "no ssh push is approved now"' _ \
    "$(rec probe)"
ok "adding a key through the relay is refused ($(grep '^add ' <<<"$out"))" grep -qx 'add 5' <<<"$out"
ok "removing the invoker's keys is refused ($(grep '^delete-all' <<<"$out"))" \
    bash -c '! grep -qx "delete-all rc=0" <<<"$1"' _ "$out"
ok "  the invoker's agent still holds its key" ssh-add -l
ok "a direct connect to sshd ($port) is refused ($(grep '^direct' <<<"$out"))" \
    bash -c '! grep -qx "direct rc=0" <<<"$1"' _ "$out"
ok "cordon connect to a host:port nobody granted: refused ($(grep '^connect rc' <<<"$out"))" \
    grep -qx 'connect rc=1' <<<"$out"
ok "  with the broker's reason: $(grep -m1 '^connect-said' <<<"$out" | cut -c13-100)..." \
    grep -q "^connect-said cordon connect: localhost:$port refused by the session's egress broker (HTTP/1.1 403" <<<"$out"
ok "  sshd saw no connection ($c0 -> $(connections))" test "$(connections)" = "$c0"

# --- held, denied -------------------------------------------------------------------
before=$(server_head) c0=$(connections)
session no1 "cd $WS/repo && /usr/bin/git push origin main; echo rc=\$?"
id=$(pending_id)
listing=$("$cordon" pending 2>&1)
ok "a git push over ssh is held ($id)" test -n "$id"
ok "  the human sees where it goes: $url" grep -qF -- "-> $url" <<<"$listing"
"$cordon" deny "$id" >/dev/null
wait $sess
ok "denied: the push fails ($(tail -n 1 "$t/no1.out"))" bash -c '! grep -q "rc=0" "$1"' _ "$t/no1.out"
ok "  sshd saw no connection ($c0 -> $(connections))" test "$(connections)" = "$c0"
ok "  the bare repository is unchanged" test "$(server_head)" = "$before"
ok "  no grant was made" bash -c '! grep -q "\"outcome\":\"granted\"" "$1"' _ "$t/no1.jsonl"

# --- approved -----------------------------------------------------------------------
l0=$(logins)
session ok1 "cd $WS/repo && /usr/bin/git push origin main; echo rc=\$?"
id=$(pending_id)
"$cordon" approve "$id" >/dev/null
wait $sess
ok "approved: the push went through ($(tail -n 1 "$t/ok1.out"))" grep -q 'rc=0' "$t/ok1.out" ||
    tail -n 5 "$t/ok1.out" "$t/ok1.err" >&2
ok "  the remote has the commit" test "$(server_head)" = "$(agent_head)"
ok "  sshd: one login by the throwaway key ($l0 -> $(logins))" test "$(logins)" = $((l0 + 1))
ok "  the grant is audited, for the ssh remote" \
    bash -c 'grep "\"type\":\"grant\"" "$1" | grep "\"outcome\":\"granted\"" | grep -q "\"ssh\":true"' \
    _ "$t/ok1.jsonl"
ok "  the tunnel: allowed by grant, for ssh" \
    bash -c 'grep "\"outcome\":\"allowed by grant\"" "$1" | grep -q "\"protocol\":\"ssh\""' \
    _ "$t/ok1.jsonl"
ok "  the signature: relayed by grant (key's fingerprint recorded)" \
    bash -c 'grep "\"outcome\":\"relayed by grant\"" "$1" | grep -q "\"key\":\"SHA256:"' \
    _ "$t/ok1.jsonl"
ok "  the audit log verifies" "$cordon" audit verify --key-dir "$CORDON_AUDIT_KEY_DIR" "$t/ok1.jsonl"

# --- during an approved push: its tree, and a process outside it ------------------------
commit two
touch "$WS/slow"
chown "$AGENT" "$WS/slow"
rm -f "$WS/hook-started" "$WS/outside-done"
c0=$(connections)
session race "cd $WS/repo
(/usr/bin/git push origin main >$WS/push.out 2>&1; echo push rc=\$? >>$WS/push.out) &
i=0; while [ ! -e $WS/hook-started ] && [ \$i -lt 300 ]; do sleep 0.1; i=\$((i + 1)); done
$py $WS/agent_sign.py userauth | sed 's/^/outside /'
/run/cordon-ssh/cordon connect localhost $port </dev/null >/dev/null 2>$WS/outside.err; echo \"outside connect rc=\$?\"
touch $WS/outside-done
wait"
id=$(pending_id)
"$cordon" approve "$id" >/dev/null
wait $sess
rm -f "$WS/slow"
ok "the approved push went through meanwhile ($(tail -n 1 "$WS/push.out" 2>/dev/null))" \
    grep -q 'push rc=0' "$WS/push.out"
ok "  the remote has the commit" test "$(server_head)" = "$(agent_head)"
ok "the push's own hook: a user-authentication request is signed ($(cat "$WS/hook-userauth.out"))" \
    grep -qx 'sign 14' "$WS/hook-userauth.out"
ok "  other data (an sshsig blob) is not ($(cat "$WS/hook-other.out"))" \
    grep -qx 'sign 5' "$WS/hook-other.out"
ok "  audited: not a user authentication request" \
    bash -c 'grep -q "not an SSH user authentication request" <<<"$1"' _ "$(rec race)"
ok "a process outside the push's tree: no signature ($(grep '^outside sign' "$t/race.out"))" \
    grep -qx 'outside sign 5' "$t/race.out"
ok "  audited: the client's socket is held by a process outside the tree" \
    bash -c 'grep "\"outcome\":\"refused\"" <<<"$1" | grep -q "the client.s socket is held by process"' \
    _ "$(rec race)"
ok "  nor a tunnel to the granted host ($(grep '^outside connect' "$t/race.out"))" \
    grep -qx 'outside connect rc=1' "$t/race.out"
ok "  refused as not the approved process (audited)" \
    grep -q '"outcome":"refused: not the approved process"' "$t/race.jsonl"
ok "  sshd saw the push's connection only ($c0 -> $(connections))" test "$(connections)" = $((c0 + 1))

done_testing
