#!/bin/sh
# [5/8] `cordon run`: start-up errors and exit status, the agent's identity
# and environment, lifted events, escalations held for a human and answered
# through `cordon approve/deny` (and by timeout), the seccomp-notify
# argument races, the event socket, the audit log, budgets, and a
# supervisor killed with SIGKILL.  Same script on this host (fallback) and in
# the VM (full posture).  POSIX sh.
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib_run.sh"
session_test cli
mkdir -p "$scratch/allowed" "$scratch/forbidden" "$scratch/denied"
chmod -R 0755 "$scratch"
cleanup() {
    kill $bg 2>/dev/null
    rm -rf "$WS" "$scratch"
    rm -f /var/cordon-audit.*.jsonl
}
bg=
trap cleanup EXIT
"$BUILD/tests/agents/attack" serve "$scratch/allowed" & bg="$bg $!"
"$BUILD/tests/agents/attack" serve "$scratch/forbidden" & bg="$bg $!"
"$BUILD/tests/agents/attack" serve "$scratch/denied" & bg="$bg $!"
i=0
while { [ ! -e "$scratch/allowed/ports" ] || [ ! -e "$scratch/forbidden/ports" ] ||
        [ ! -e "$scratch/denied/ports" ]; } && [ $i -lt 100 ]; do
    sleep 0.05; i=$((i + 1))
done
read -r allowed _ _ _ <"$scratch/allowed/ports"
read -r forbidden _ _ _ <"$scratch/forbidden/ports"
read -r denied _ _ _ <"$scratch/denied/ports"
asked=$forbidden

# A small policy: the workspace, the system read-only, one loopback port
# allowed directly, the forbidden listener's port escalated, git push
# escalated; approvals time out after 3 s.
policy=$scratch/policy.json
cat >"$policy" <<EOF
{
  "cordon_policy": 1,
  "name": "run-test",
  "rules": [
    { "name": "workspace", "decision": "allow", "fs": { "paths": ["\${WORKSPACE}"], "rights": ["all"] } },
    { "name": "system", "decision": "allow",
      "fs": { "paths": ["/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc", "/proc", "/sys", "/opt"], "rights": ["read", "exec"] } },
    { "name": "devices", "decision": "allow", "fs": { "paths": ["/dev/null", "/dev/tty", "/dev/pts", "/dev/urandom"], "rights": ["read", "write"] } },
    { "name": "tmp", "decision": "allow", "fs": { "paths": ["/tmp"], "rights": ["all"] } },
    { "name": "loopback-allowed", "decision": "allow",
      "net": { "hosts": ["127.0.0.1"], "ports": [$allowed], "via": "direct" } },
    { "name": "ask-port", "decision": "escalate", "description": "a port a human must approve",
      "net": { "hosts": ["127.0.0.1"], "ports": [$asked], "via": "direct" } },
    { "name": "git-push", "decision": "escalate", "description": "code leaves the machine",
      "tool": { "name": "git.push" } }
  ],
  "approvals": { "timeout": "3s", "on_timeout": "deny" }
}
EOF
printf '#!/bin/sh\nexit 0\n' >"$WS/git"     # a "git" whose push is harmless
chmod 0755 "$WS/git"
chown "$AGENT" "$WS/git"

# --- start-up errors and exit status -----------------------------------------
o=$("$BUILD/tests/agents/attack" su "$AGENT_UID" "$cordon" run -- /bin/true 2>&1); rc=$?
ok "not root: refused with 125 (rc=$rc)" test $rc -eq 125
ok "  and says why: $o" sh -c 'printf %s "$1" | grep -q "needs root"' _ "$o"
o=$(env -u SUDO_UID "$cordon" run --workspace "$WS" -- /bin/true 2>&1); rc=$?
ok "root without --user or SUDO_UID: refused (rc=$rc)" test $rc -eq 125
ok "  and says so" sh -c 'printf %s "$1" | grep -q "refusing to run the agent as root"' _ "$o"
o=$(SUDO_UID=$AGENT_UID "$cordon" run -q --workspace "$WS" --audit "$scratch/sudo.jsonl" -- /usr/bin/id -u 2>&1); rc=$?
ok "under sudo, the agent runs as SUDO_UID ($o)" test "$o" = "$AGENT_UID"
printf '{\n  "cordon_policy": 1,\n  "rules": [ { "name": "x", "decision": "perhaps" } ]\n}\n' >"$scratch/bad.json"
in_session --policy "$scratch/bad.json" -- /bin/true
ok "a bad policy: refused with 125 (rc=$rc)" test $rc -eq 125
ok "  naming FILE:LINE:COL" said "$scratch/bad.json:3:"
o=$("$cordon" run --user "$AGENT" --workspace /nonexistent/ws -- /bin/true 2>&1); rc=$?
ok "a missing workspace: 125 (rc=$rc)" test $rc -eq 125
ok "  naming it" sh -c 'printf %s "$1" | grep -q "workspace /nonexistent/ws"' _ "$o"
in_session --policy "$policy" -- /bin/sh -c 'exit 3'
ok "the agent's exit status is cordon's (3, rc=$rc)" test $rc -eq 3
in_session --policy "$policy" -- /bin/sh -c 'kill -9 $$'
ok "killed by a signal: 128+9 (rc=$rc)" test $rc -eq 137
# What the agent leaves running dies when it exits, before the session's
# last records: a daemon that waits for its parent to go never acts.
rm -f "$WS/late"
in_session --policy "$policy" -- /bin/sh -c "(sleep 0.3; echo late >$WS/late) </dev/null >/dev/null 2>&1 & exit 0"
sleep 0.6
ok "a daemon the agent leaves behind is killed when it exits (rc=$rc)" test ! -e "$WS/late"
in_session --policy "$policy" -- /no/such/agent
ok "an agent that does not exist: 127 (rc=$rc)" test $rc -eq 127
printf 'not a program\n' >"$WS/notexec"
in_session --policy "$policy" -- "$WS/notexec"
ok "an agent that cannot run: 126 (rc=$rc)" test $rc -eq 126
in_session --policy "$policy" -- /usr/bin/id -u
ok "cordon's own errors are never 126/127 (the agent ran: $out)" test "$out" = "$AGENT_UID"

# --- the workspace's git metadata: read-only to the agent ---------------------
# (userspace/supervisor/git_guard.h) config and hooks would run as the human at the
# next git status; a new commondir would point git at the agent's own.
# With git installed (the host) a real repository, and a commit still
# works; without it (the VM's busybox) one made by hand.
gws=$scratch/gitws
mkdir -p "$gws"
if command -v git >/dev/null 2>&1; then
    git init -q "$gws" && git -C "$gws" -c user.email=t@t -c user.name=t commit -q --allow-empty -m init
    havegit=1
else
    mkdir -p "$gws/.git/hooks" "$gws/.git/objects" "$gws/.git/refs"
    printf 'ref: refs/heads/main\n' >"$gws/.git/HEAD"
    printf '[core]\n\trepositoryformatversion = 0\n' >"$gws/.git/config"
    havegit=0
fi
chown -R "$AGENT" "$gws"
cp "$gws/.git/config" "$scratch/git-config.before"
cat >"$gws/agent.sh" <<'EOF2'
cd "$1"
echo "config: $( (echo '[core] fsmonitor = evil' >>.git/config) 2>&1 || true)"
echo "hook: $( (printf '#!/bin/sh\necho pwned\n' >.git/hooks/pre-commit) 2>&1 || true)"
echo "rename: $(mv .git .git-old 2>&1 || true)"
echo "unlink: $(rm -f .git/config 2>&1 || true)"
echo "replace: $(cp .git/HEAD .git/cfg.new && mv .git/cfg.new .git/config 2>&1 || true)"
echo "work: $(echo work >newfile && echo ok)"
if [ "$2" = 1 ]; then
    git add newfile && git -c user.email=a@a -c user.name=a commit -q -m agent && echo "commit: ok"
fi
echo ../../elsewhere >.git/commondir && echo "commondir: planted"
EOF2
chmod 0755 "$gws/agent.sh"
audit_g=$scratch/git.jsonl
o=$("$cordon" run -q --user "$AGENT" --workspace "$gws" --policy "$policy" --audit "$audit_g" \
    -- /bin/sh "$gws/agent.sh" "$gws" "$havegit" 2>"$scratch/git.err" </dev/null)
ok "git metadata: .git/config cannot be written ($(printf '%s\n' "$o" | sed -n 's/^config: //p'))" \
    sh -c 'printf "%s\n" "$1" | grep -q "^config: .*Read-only file system" && ! grep -q fsmonitor "$2"' \
    _ "$o" "$gws/.git/config"
ok "  nor a hook created" sh -c '[ ! -e "$1/.git/hooks/pre-commit" ]' _ "$gws"
ok "  nor .git moved away and replaced ($(printf '%s\n' "$o" | sed -n 's/^rename: //p' | cut -c1-60))" \
    sh -c '[ -d "$1/.git" ] && [ ! -e "$1/.git-old" ]' _ "$gws"
ok "  nor config removed or renamed over" cmp -s "$gws/.git/config" "$scratch/git-config.before"
ok "  the rest of the workspace is the agent's ($(printf '%s\n' "$o" | sed -n 's/^work: //p'))" \
    test -e "$gws/newfile"
if [ "$havegit" = 1 ]; then
    ok "  and git works: the agent committed" sh -c 'printf "%s\n" "$1" | grep -q "^commit: ok" &&
        git -c safe.directory="*" -C "$2" log --format=%s | grep -q "^agent$"' _ "$o" "$gws"
fi
ok "  the start record lists what was read-only" grep -q '"git_read_only":\[".*/\.git/config"' "$audit_g"
ok "a commondir the agent planted is held aside at the end, said and recorded" \
    sh -c '[ ! -e "$1/.git/commondir" ] && ls "$1"/.git/cordon-held-*/commondir >/dev/null &&
        grep -q "commondir $1/.git/commondir: the agent.s version is held aside at" "$2" &&
        grep -q "\"workspace-held\".*\"commondir\"" "$3"' \
    _ "$gws" "$scratch/git.err" "$audit_g"
ok "  and the host never saw the session's mounts" sh -c '! grep -q " $1/.git" /proc/self/mountinfo' _ "$gws"

# --- the agent's home layer (userspace/session/home.h) -------------------------
# A copy-on-write view of its home: it changes and creates files there, they
# persist for its next session, and the human's home never changes.
mkdir -p "$AGENT_HOME/.cache" "$AGENT_HOME/.ssh"
echo before >"$AGENT_HOME/.cache/cordon-existing"
echo key >"$AGENT_HOME/.ssh/cordon-probe"
chown -R "$AGENT" "$AGENT_HOME/.cache" "$AGENT_HOME/.ssh"
rm -f "$AGENT_HOME/.cordon-state.json"
"$cordon" home discard --user "$AGENT" --profile coding-agent >/dev/null 2>&1
in_session -- /bin/sh -c 'echo agent >>"$HOME/.cache/cordon-existing" && echo changed
    echo "{}" >"$HOME/.cordon-state.json" && echo created
    ls -a "$HOME" | grep -c "^\.ssh\$"'
ok "home layer: the agent changes a file of its home (copied up)" \
    sh -c 'printf "%s\n" "$1" | grep -q "^changed$"' _ "$out"
ok "  and creates its own state there" sh -c 'printf "%s\n" "$1" | grep -q "^created$"' _ "$out"
ok "  its ~/.ssh is absent from the view, not merely refused" \
    sh -c 'printf "%s\n" "$1" | tail -n 1 | grep -qx 0' _ "$out"
ok "  the real home is unchanged" sh -c '[ "$(cat "$1/.cache/cordon-existing")" = before ] &&
    [ ! -e "$1/.cordon-state.json" ]' _ "$AGENT_HOME"
hd=$("$cordon" home diff --user "$AGENT" --profile coding-agent 2>&1)
ok "  cordon says so at the end, and home diff lists both ($(printf '%s' "$hd" | tr '\n' ' ' | cut -c1-80))" \
    sh -c 'printf "%s\n" "$1" | grep -q "home layer differs" &&
        printf "%s\n" "$2" | grep -q "^A.*cordon-state.json" && printf "%s\n" "$2" | grep -q "^M.*cordon-existing"' \
    _ "$err" "$hd"
n_diff=$(printf '%s\n' "$hd" | grep -c .)
ok "  the end's count is home diff's ($n_diff paths)" \
    sh -c 'printf "%s\n" "$1" | grep -q "home layer differs from your home in $2 path"' _ "$err" "$n_diff"
in_session -q -- /bin/sh -c 'cat "$HOME/.cordon-state.json"'
ok "  the next session finds its state (the layer persists)" sh -c 'printf "%s\n" "$1" | grep -qx "{}"' _ "$out"
ok "  and under -q nothing is said at the end ($(printf '%s' "$err" | head -c 60))" \
    sh -c '! printf "%s\n" "$1" | grep -q "home layer"' _ "$err"
"$cordon" home apply --user "$AGENT" --profile coding-agent .cordon-state.json >/dev/null 2>&1
ok "  home apply takes a chosen file into the real home" test -e "$AGENT_HOME/.cordon-state.json"
"$cordon" home discard --user "$AGENT" --profile coding-agent >/dev/null 2>&1
rm -f "$AGENT_HOME/.cordon-state.json" "$AGENT_HOME/.cache/cordon-existing" "$AGENT_HOME/.ssh/cordon-probe"

# The view's end (userspace/session/world.c, world_leave): the supervisor
# leaves the view for the host's mount namespace and a thread of its own
# drops the view, its home overlay with it, before the layer's lock is let
# go.  The setns back failed (EINVAL) when a thread just joined still
# shared the supervisor's filesystem context: the view then stayed to the
# process's exit, after the lock.  A race: with three sessions at a time,
# 6 of 300 before the fix, 0 of 300 after.  Short sessions, three at a
# time, each saying when its mounts were gone (-v).
end_loop() {
    _i=0 _left=0 _gone=0
    while [ $_i -lt "$2" ]; do
        "$cordon" -v run -q --user "$AGENT" --workspace "$WS" --approve deny \
            --audit "$scratch/end$1.jsonl" -- /bin/true </dev/null >/dev/null 2>"$scratch/end$1.err"
        grep -q "leaving the session's view" "$scratch/end$1.err" && _left=$((_left + 1))
        grep -q "the view's mounts gone" "$scratch/end$1.err" && _gone=$((_gone + 1))
        rm -f "$scratch/end$1.jsonl"
        _i=$((_i + 1))
    done
    echo "$_gone $_left" >"$scratch/end$1.count"
}
n_end=40
[ "${CORDON_IN_VM:-}" = 1 ] && n_end=5      # TCG: a start takes a second
end_loop 1 "$n_end" & p1=$!
end_loop 2 "$n_end" & p2=$!
end_loop 3 "$n_end" & p3=$!
wait "$p1" "$p2" "$p3"
gone=$(cat "$scratch"/end?.count | awk '{ g += $1 } END { print g + 0 }')
left=$(cat "$scratch"/end?.count | awk '{ l += $2 } END { print l + 0 }')
ok "the view is let go before the home layer's lock, every time ($gone of $((3 * n_end)), $left kept to the exit)" \
    test "$gone" = "$((3 * n_end))" -a "$left" = 0

# --- the agent's identity and environment ------------------------------------
in_session --policy "$policy" -- /bin/cat /proc/self/status
cap() { printf '%s\n' "$out" | awk -v k="$1:" '$1 == k { print $2 }'; }
ok "no effective capability ($(cap CapEff))" test "$(cap CapEff)" = 0000000000000000
ok "an empty bounding set ($(cap CapBnd))" test "$(cap CapBnd)" = 0000000000000000
ok "no_new_privs" test "$(cap NoNewPrivs)" = 1
ok "a seccomp filter" test "$(cap Seccomp)" = 2
sid=$(cut -d' ' -f6 /proc/$$/stat)
in_session --policy "$policy" -- /bin/sh -c 'cut -d" " -f6 /proc/$$/stat; readlink /proc/$$/fd/0'
ok "a session of its own (setsid): $(echo $out | cut -d' ' -f1) != $sid" test "$(echo "$out" | head -n 1)" != "$sid"
out=$(SECRET_TOKEN=tok-0123456789 AWS_SECRET_ACCESS_KEY=aws-0123456789 KEEPME=kept \
      "$cordon" run -q --user "$AGENT" --workspace "$WS" --policy "$policy" --env KEEPME \
      --audit "$scratch/env.jsonl" -- /usr/bin/env 2>/dev/null)
ok "secrets in cordon's environment never reach the agent" sh -c '! printf %s "$1" | grep -q -e tok-0123 -e aws-0123' _ "$out"
ok "--env passes a variable through" sh -c 'printf %s "$1" | grep -qx KEEPME=kept' _ "$out"
ok "HOME is the agent's ($AGENT_HOME)" sh -c 'printf %s "$1" | grep -qx "HOME=$2"' _ "$out" "$AGENT_HOME"
out=$(API_TOKEN=supersecret-42-value "$cordon" run -q --user "$AGENT" --workspace "$WS" \
      --policy "$policy" --env API_TOKEN --audit "$scratch/redact.jsonl" -- \
      /bin/sh -c '/bin/echo "$API_TOKEN" >/dev/null' 2>/dev/null)
ok "a known secret on a command line is redacted in the audit" \
    sh -c '! grep -q supersecret-42-value "$1" && grep -q "REDACTED:API_TOKEN" "$1"' _ "$scratch/redact.jsonl"

# --- lifted events -------------------------------------------------------------
in_session --policy "$policy" -- /bin/sh -c "$attack connect 127.0.0.1 $allowed; $attack connect 127.0.0.1 1"
ok "an allowed connect goes through: $(echo $out)" sh -c 'printf %s "$1" | head -n 1 | grep -q BREACH' _ "$out"
ok "  lifted as net.connect and audited allow" audited allow net connect "\"port\":$allowed"
ok "  a forbidden one is audited deny" audited deny net connect '"port":1'
ok "exec lifted as shell.exec with argv and cwd" audited allow shell exec "\"cwd\":\"$WS\""
in_session --policy "$policy" -- /bin/sh -c "cd $WS && ./git commit -m wip"
ok "git commit lifted as git.commit" audited allow git commit '"message":"wip"'

# --- an argv of any size the kernel accepts --------------------------------------
# 20000 arguments (109 KB): judged and run, where the supervisor once
# refused more than 4096.  The record keeps the first 4 KiB of argv, the
# count, the size and the SHA-256 of the whole argv (strings with their NULs).
in_session --policy "$policy" -- /bin/sh -c 'set -- $(seq 20000); /bin/true "$@" && echo ran'
ok "an exec of 20001 arguments runs" test "$out" = ran
big=$(grep -F '"argc":20001' "$audit" | grep -F '"decision":"allow"')
sum=$({ printf '/bin/true\0'; seq 20000 | tr '\n' '\0'; } | sha256sum | cut -d' ' -f1)
ok "  audited with its size and the SHA-256 of the whole argv" \
    sh -c 'printf %s "$1" | grep -F "\"argv_sha256\":\"$2\"" | grep -qF "\"argv_truncated\":true"' _ "$big" "$sum"
ok "  the record is bounded: $(printf %s "$big" | wc -c) bytes" test "$(printf %s "$big" | wc -c)" -lt 16384
# Past the kernel's own ceiling (6 MiB of argv, whatever the stack limit):
# E2BIG, as the kernel would answer, and a record of the refusal.
in_session --policy "$policy" -- /bin/sh -c \
    'ulimit -s unlimited; set -- $(seq 1000000); /bin/true "$@" 2>/dev/null; echo "rc=$?"'
ok "an argv past the kernel's ceiling is refused ($out)" test "$out" = rc=126 -o "$out" = rc=2
ok "  audited deny: E2BIG" sh -c 'grep -F "\"decision\":\"deny\"" "$1" | grep -F "\"path\":\"/bin/true\"" | grep -qF E2BIG' _ "$audit"

# --- escalations ---------------------------------------------------------------
# Held: the agent's connect blocks until `cordon approve` answers.
pending_count() {  # pending_count TEXT N: until N lines of `cordon pending --json` hold TEXT (5 s); prints the count
    i=0
    while [ $i -lt 100 ]; do
        n=$("$cordon" pending --json | grep -c "$1")
        [ "$n" = "$2" ] && break
        sleep 0.05; i=$((i + 1))
    done
    echo "$n"
}
run_bg() {  # run_bg OUTFILE ARGS...: a session in the background
    f=$1; shift
    "$cordon" run -q --user "$AGENT" --workspace "$WS" --policy "$policy" --approve socket \
        --audit "$f.jsonl" "$@" >"$f.out" 2>"$f.err" </dev/null &
}
run_bg "$scratch/esc1" -- "$attack" connect 127.0.0.1 "$asked"
id=$(pending_id 5)
ok "an escalated connect is held and listed by cordon pending ($id)" test -n "$id"
ok "  with its summary and rule" sh -c "'$cordon' pending | grep -q 'connect to 127.0.0.1 port $asked' && '$cordon' pending | grep -q 'rule ask-port'"
ok "cordon approve answers it" "$cordon" approve "$id"
wait $!
ok "  the connect then succeeds, performed on a copy of the socket: $(cat $scratch/esc1.out)" grep -q BREACH "$scratch/esc1.out"
ok "  the listener saw it" test -e "$scratch/forbidden/tcp4.hit"
ok "  (and the denied listener never did)" test ! -e "$scratch/denied/tcp4.hit"
ok "  audited with the approver" grep -q '"approver":"socket: uid 0' "$scratch/esc1.jsonl"

run_bg "$scratch/esc2" -- "$attack" connect 127.0.0.1 "$asked"
id=$(pending_id 5)
ok "cordon deny answers another" "$cordon" deny "$id"
wait $!
ok "  the connect fails: $(cat $scratch/esc2.out)" grep -q contained "$scratch/esc2.out"
ok "  audited deny with the approver" sh -c "grep '\"decision\":\"deny\"' '$scratch/esc2.jsonl' | grep -q approver"

t0=$(date +%s)
run_bg "$scratch/esc3" -- "$attack" connect 127.0.0.1 "$asked"
wait $!
t1=$(date +%s)
ok "nobody answers: the policy's timeout (3 s) denies ($((t1 - t0)) s): $(cat $scratch/esc3.out)" grep -q contained "$scratch/esc3.out"
ok "  audited with approver timeout" grep -q '"approver":"timeout"' "$scratch/esc3.jsonl"

# Batching: two identical pushes pending at once are one request.
run_bg "$scratch/esc4" -- /bin/sh -c "cd $WS && (./git push origin main & ./git push origin main & wait); echo done"
n=$(pending_count '"waiting": 2' 1)
ok "two identical pushes are batched into one request waiting for 2 calls" test "$n" = 1
id=$(pending_id 5)
o=$("$cordon" approve "$id" --session)
ok "  one approval answers both ($o)" sh -c 'printf %s "$1" | grep -q "2 calls"' _ "$o"
wait $!
ok "  and the agent went on" grep -q done "$scratch/esc4.out"

# Two pushes that differ only after their first 1100 bytes are two requests,
# never one answer for both (the batching key is the whole event); the
# terminal escapes their branch starts with are shown spelled out, and the
# cut says how much it left out.
pad=$(head -c 1100 /dev/zero | tr '\0' x)
esc=$(printf '\033[1A\033[2K')
run_bg "$scratch/esc5" -- /bin/sh -c "cd $WS && (./git push origin '${esc}${pad}a' & ./git push origin '${esc}${pad}b' & wait); echo done"
n=$(pending_count '"waiting": 1' 2)
ok "two pushes that differ past 1 KB are two requests ($n waiting alone)" test "$n" = 2
listing=$("$cordon" pending)
ok "  no terminal escape reaches the approver" sh -c '! printf %s "$1" | grep -q "$(printf "\033")"' _ "$listing"
ok "  it is spelled out (\\x1b) and the cut is said" \
    sh -c 'printf %s "$1" | grep -qF "\\x1b[1A\\x1b[2K" && printf %s "$1" | grep -q "\.\.\.\[+[0-9]* bytes\]"' _ "$listing"
wait $!

# An escalated exec of 100 KB of argv, denied by a human: every record of
# it (the escalation, the answer) keeps the argv's digest, not all of it,
# and the approver's list still fits its reply.
big=$(head -c 100000 /dev/zero | tr '\0' y)
run_bg "$scratch/esc6" -- /bin/sh -c "cd $WS && ./git push origin '$big'; echo done"
id=$(pending_id 5)
ok "an escalated exec of 100 KB of argv is held ($id)" test -n "$id"
"$cordon" deny "$id" >/dev/null
wait $!
# (The session's start record holds cordon's own command line, 100 KB here:
# the operator's, not the agent's.)
longest=$(grep -F '"decision"' "$scratch/esc6.jsonl" | awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }')
ok "  its decision records are bounded (longest: $longest bytes)" test "$longest" -gt 0 -a "$longest" -lt 20000
ok "  the human's answer is recorded with the digest" \
    sh -c 'grep -F "\"approver\"" "$1" | grep -qF "\"truncated\":true"' _ "$scratch/esc6.jsonl"

# Distinct escalations past SUP_MAX_PENDING (256) at once: each next one is
# refused at once, recorded as such, while the 256 stay held (the
# supervisor, outside the session's memory budget, keeps a bounded copy of
# each and no more of them).
# (Approvals wait 60 s here, not 3 s: in the VM 260 execs take longer.)
sed 's/"timeout": "3s"/"timeout": "60s"/' "$policy" >"$scratch/hold.json"
p3=$policy
policy=$scratch/hold.json
run_bg "$scratch/esc7" -- /bin/sh -c "cd $WS; i=0
    while [ \$i -lt 260 ]; do ./git push origin b\$i >/dev/null 2>&1 & i=\$((i + 1)); done; wait"
esc7=$!
policy=$p3
i=0
while [ $i -lt 1200 ] &&
      [ "$(cat "$scratch/esc7.jsonl" 2>/dev/null | grep -c 'too many requests are waiting')" -lt 4 ]; do
    sleep 0.05; i=$((i + 1))
done
ok "held requests past 256: each refused at once, and recorded ($(grep -c 'too many requests are waiting' "$scratch/esc7.jsonl") of 4)" \
    test "$(grep -F '"decision":"deny"' "$scratch/esc7.jsonl" | grep -c 'too many requests are waiting')" -eq 4
n=$("$cordon" pending --json | grep -c '"waiting"')
ok "  the 256 others stay held ($n)" test "$n" -eq 256
kill -TERM $esc7
wait $esc7

# Bytes that are not UTF-8: kept in the event and the record, spelled out
# (an argument was dropped from both, a binary's exec had no record at all,
# a working directory lost the whole event).
bad=$(printf 'b\377c')
mkdir -p "$WS/d$bad" "$WS/t$bad"
cp "$attack" "$WS/t$bad/git"    # an ELF (busybox's true would not know its name)
chown -R "$AGENT" "$WS/d$bad" "$WS/t$bad"
in_session --policy "$policy" -- /bin/sh -c "/bin/echo a '$bad' d >/dev/null; '$WS/t$bad/git' >/dev/null && cd '$WS/d$bad' && /bin/true && echo ran"
ok "a session with names that are not UTF-8 runs ($out)" test "$out" = ran
ok "  an argument that is not UTF-8 keeps its place in the event" \
    audited allow shell exec '"argv":["/bin/echo","a","b\\xffc","d"]'
ok "  a binary whose name is not UTF-8 has its record" \
    sh -c 'grep -F "\"decision\":\"allow\"" "$1" | grep -qF "\"path\":\"$2/tb\\\\xffc/git\""' _ "$audit" "$WS"
ok "  so has an exec from a directory whose name is not UTF-8" \
    audited allow shell exec "\"cwd\":\"$WS/db\\\\xffc\""

in_session --policy "$policy" --approve deny -- /bin/sh -c "cd $WS && ./git push origin main"
ok "--approve deny: an escalation is denied at once (rc=$rc)" test $rc -ne 0
ok "  audited as such" audited deny git push "escalation with --approve deny"

# --- the seccomp-notify argument races ---------------------------------------
# argv[1] flips between status and push while each exec is judged and
# performed, for a git that is a script (the kernel keeps argv[1..] behind
# the interpreter) and one that is an ELF (this attack program as "git").
# With the exec recheck the kernel kills an exec whose argv is not what was
# judged; without it (declared), a thread of the caller is refused and a
# MAP_SHARED page is not caught.
mkdir -p "$WS/race" "$WS/elf"
printf '#!/bin/sh\necho "ran $1"\n' >"$WS/race/git"
cp "$attack" "$WS/elf/git"
chmod 0755 "$WS/race/git" "$WS/elf/git"
chown -R "$AGENT" "$WS/race" "$WS/elf"
in_session --policy "$policy" -- /bin/true
if said "- exec-recheck:"; then recheck=0; else recheck=1; fi
# What must keep working under it: every form real programs exec by.
in_session --policy "$policy" -- "$attack" exec-forms "$WS/race"
ok "execve, fexecve, execveat on a dirfd, from a thread, 4000 arguments, #! with an argument and with an empty argv, a symlink, /proc/self/exe: all run ($out)" \
    sh -c 'printf "%s\n" "$1" | grep -q "^forms: 9 of 9 ran"' _ "$out"
ok "  and none was killed" sh -c "! grep -q 'killed by the kernel at exec' '$audit'"
for g in "$WS/race/git" "$WS/elf/git"; do
    for mode in thread shared; do
        in_session --policy "$policy" -- "$attack" argv-race "$g" 300 "$mode"
        if [ $recheck = 1 ]; then
            ok "exec of $g, argv rewritten by $mode memory after the check: $out" contained
            # A thread's rewrite lands in a few of 300 tries, or none when the
            # exec's wake-up preempts both rewriters; a process on a shared
            # page lands in tens.
            [ $mode = thread ] || ok "  the kernel killed the execs that changed, audited" \
                grep -q '"reason":"killed by the kernel at exec' "$audit"
        elif [ $mode = thread ]; then
            ok "exec of $g, argv rewritten by a thread: refused ($out)" contained
            ok "  because another task shares the caller's memory" \
                audited deny shell exec "shares the caller's memory"
        else
            ok "GAP exec of $g, argv rewritten in a MAP_SHARED page: $out" breach
            ok "  and cordon run declared it" said "- exec-recheck:"
        fi
    done
done
in_session --policy "$policy" -- "$attack" connect-race "$allowed" "$denied" 300
ok "connect while a thread flips the port to a forbidden one: $out" contained
# The escalated port approved for the session: every later connect to it is
# performed by the supervisor on a copy of the socket, with the address it read.
run_bg "$scratch/race2" -- "$attack" connect-race "$asked" "$denied" 300
id=$(pending_id 5)
"$cordon" approve "$id" --session >/dev/null
wait $!
ok "approved connects (emulated) while a thread flips the port: $(cat $scratch/race2.out)" \
    grep -q '^contained: [1-9]' "$scratch/race2.out"

# --- escalated opens: performed by the supervisor, fd injected (ADDFD+SEND) ---
sed -e 's|"rules": \[|"rules": [\n    { "name": "ask-file", "decision": "escalate", "description": "a file a human must release", "fs": { "paths": ["${WORKSPACE}/ask"], "rights": ["read"] } },|' \
    -e 's|"timeout": "3s"|"timeout": "60s"|' "$policy" >"$scratch/ask.json"
mkdir -p "$WS/ask" "$AGENT_HOME/.ssh"
echo ASKED >"$WS/ask/secret"
echo OTHER >"$AGENT_HOME/.ssh/cordon-race"
chown -R "$AGENT" "$WS/ask" "$AGENT_HOME/.ssh"
policy_saved=$policy
policy=$scratch/ask.json
run_bg "$scratch/open1" -- /bin/cat "$WS/ask/secret"
id=$(pending_id 5)
ok "an escalated read is held ($id)" sh -c "'$cordon' pending | grep -q 'read $WS/ask/secret'"
"$cordon" approve "$id" >/dev/null
wait $!
ok "  approved: the supervisor opened it and the agent read it ($(cat $scratch/open1.out))" grep -q ASKED "$scratch/open1.out"
run_bg "$scratch/open2" -- /bin/cat "$WS/ask/secret"
id=$(pending_id 5)
"$cordon" deny "$id" >/dev/null
wait $!
ok "  denied: the open fails ($(cat $scratch/open2.err | tail -n 1))" sh -c '! grep -q ASKED "$1"' _ "$scratch/open2.out"
# The human approves reading $WS/ask/secret for the session, which covers
# that one path.  The supervisor may also read a path the other thread is
# half-way through rewriting (a torn copy such as $WS/ask/see): that is a
# new question under ask-file, held like any other, and the human here
# denies each such question until the agent is done.
run_bg "$scratch/open3" -- "$attack" open-race "$WS/ask/secret" "$AGENT_HOME/.ssh/cordon-race" 300
agent=$!
torn=0 approved=0 i=0
while kill -0 $agent 2>/dev/null && [ $i -lt 3000 ]; do
    line=$("$cordon" pending 2>/dev/null | awk '/^s[0-9a-f]+:[0-9]+ / { print; exit }')
    set -- $line
    if [ $# -ge 3 ] && [ "$2 $3" = "read $WS/ask/secret" ]; then
        "$cordon" approve "$1" --session >/dev/null && approved=$((approved + 1))
    elif [ $# -ge 1 ]; then
        "$cordon" deny "$1" >/dev/null 2>&1 && torn=$((torn + 1))
    else
        sleep 0.02; i=$((i + 1))
    fi
done
wait $agent
echo "# approvals of $WS/ask/secret: $approved; other questions the race raised (torn paths), denied: $torn"
ok "open while a thread flips the path to a credential store: $(cat $scratch/open3.out)" grep -q '^contained' "$scratch/open3.out"
ok "  the approved file was read (approved for the session, performed by the supervisor)" \
    sh -c 'grep -q "^contained: [1-9]" "$1" || { grep -o "\"decision\":\"[a-z]*\".\{0,40\}\|\"reason\":\"[^\"]*\"" "$2" | sort | uniq -c >&2; exit 1; }' _ \
    "$scratch/open3.out" "$scratch/open3.jsonl"
ok "  every approved open was done by the supervisor" grep -q '"approved for this session"' "$scratch/open3.jsonl"
# What the human is asked is what the open does: O_RDONLY|O_TRUNC empties
# the file (it was shown as a read).  And no device, /proc or /sys file is
# opened on the agent's behalf, whatever is approved.
sed -e 's|"rules": \[|"rules": [\n    { "name": "ask-write", "decision": "escalate", "fs": { "paths": ["${WORKSPACE}/ask"], "rights": ["write"] } },\n    { "name": "ask-device", "decision": "escalate", "fs": { "paths": ["/dev/full"], "rights": ["read", "write"] } },|' \
    "$scratch/ask.json" >"$scratch/askw.json"
policy=$scratch/askw.json
run_bg "$scratch/open4" -- "$attack" truncate-ro "$WS/ask/secret"
id=$(pending_id 5)
ok "an escalated O_RDONLY|O_TRUNC open is asked as a truncation" \
    sh -c "'$cordon' pending | grep -q 'truncate $WS/ask/secret'"
"$cordon" deny "$id" >/dev/null
wait $!
ok "  denied: the file is whole" grep -q ASKED "$WS/ask/secret"
"$cordon" run -q --user "$AGENT" --workspace "$WS" --policy "$policy" --approve socket \
    --audit "$scratch/open5.jsonl" -- /bin/cat /dev/full >"$scratch/open5.out" 2>&1 </dev/null
ok "an escalated open of a device is refused at once, never asked" \
    grep -q "cordon does not open /proc, /sys or /dev files on the agent's behalf" "$scratch/open5.jsonl"
policy=$policy_saved

# --- approval on cordon's terminal ---------------------------------------------
# cordon under a pseudo-terminal (tests/terminal.py): the prompt appears
# there, a key answers it, and the agent holds a terminal of its own, not
# cordon's.
tty_session() {  # tty_session KEY AUDIT CMD...: prints what the terminal showed, then "exit N"
    key=$1 a=$2; shift 2
    python3 "$(dirname "$0")/../terminal.py" "$key" "${TTY_DELAY:-1.2}" "$scratch/tty.log" -- "$cordon" run -q \
        --user "$AGENT" --workspace "$WS" --policy "$policy" --audit "$a" -- "$@" >/dev/null 2>&1
    rc=$?
    sed 's/<<[A-Z]*>>//g' "$scratch/tty.log"
    echo "exit $rc"
}
if command -v python3 >/dev/null 2>&1; then
    o=$(tty_session y "$scratch/tty1.jsonl" /bin/sh -c "cd $WS && ./git push origin main && echo \$(readlink /proc/self/fd/0) \$(stat -L -c %d /proc/self/fd/0)")
    ok "tty: the prompt names the operation" sh -c 'printf %s "$1" | grep -q "The agent asks to: ./git push origin main"' _ "$o"
    ok "  and the rule with its reason" sh -c 'printf %s "$1" | grep -q "rule: git-push - code leaves the machine"' _ "$o"
    # (Once in about ten runs this failed with nothing to show: the terminal's
    # last lines and the audit's decisions go with a failure now.)
    ok "  y approves once: the push ran (exit 0)" \
        sh -c 'printf %s "$1" | grep -q "^exit 0" ||
               { printf %s "$1" | tail -n 8; grep -o "\"decision\":\"[a-z]*\".\{0,120\}" "$2" | tail -n 4; exit 1; } >&2' \
        _ "$o" "$scratch/tty1.jsonl"
    ok "  audited with approver tty" grep -q '"approver":"tty"' "$scratch/tty1.jsonl"
    agent_tty=$(printf %s "$o" | grep '^/dev/pts' | head -n 1)
    cordon_tty=$(printf %s "$o" | sed -n 's/^cordon-tty //p')
    ok "  the agent's terminal ($agent_tty) is a pty of its own, not cordon's ($cordon_tty)" \
        sh -c '[ -n "$1" ] && [ -n "$2" ] && [ "$1" != "$2" ]' _ "$agent_tty" "$cordon_tty"
    o=$(tty_session n "$scratch/tty2.jsonl" /bin/sh -c "cd $WS && ./git push origin main")
    ok "tty: n denies (the push failed)" sh -c 'printf %s "$1" | grep -q "^exit [1-9]"' _ "$o"
    # Type-ahead: a key meant for the agent, pressed as the question appears.
    o=$(TTY_DELAY=0.2 tty_session y "$scratch/tty5.jsonl" /bin/sh -c "cd $WS && ./git push origin main")
    ok "tty: a y typed 0.2 s after the question appeared does not answer it (refused at the timeout)" \
        sh -c 'printf %s "$1" | grep -q "^exit [1-9]" && grep -q "\"approver\":\"timeout\"" "$2"' \
        _ "$o" "$scratch/tty5.jsonl"

    # The agent answers through the terminal (userspace/supervisor/tty_guard.c): before
    # its push it writes ENQ (answerback "PuTTY"), sets the title to "yes"
    # and asks for it back, has a DECRQSS request echoed with a "y", and
    # turns on mouse tracking (reports whose raw coordinates are "y" and
    # "s"); while the push waits, another of its processes asks for
    # XTVERSION ("kitty").  tests/terminal.py answers all of it, 150 ms
    # late as over ssh.  Each one alone approved the push before.  It also
    # writes the host's clipboard (OSC 52) and programs a key (DECUDK),
    # which must not reach the terminal, and sets a title, which must.
    tty_attack="cd $WS && printf '\\033]52;c;cm0gLXJmIH4K\\007\\033P1;1|17/726d\\033\\\\\\033]0;kept-title\\007';
        printf '\\005\\033]0;yes\\007\\033[21t\\033P\$qy\\033\\\\\\033[?1003h';
        (sleep 0.5; printf '\\033[>0q\\005'; echo while-held) & ./git push origin main; echo push=\$?; wait"
    tty_term() {  # tty_term KEY NAME: the attack in a session, KEY typed 1.2 s after the question
        python3 "$(dirname "$0")/../terminal.py" "$1" 1.2 "$scratch/$2.term" -- "$cordon" run -q --user "$AGENT" \
            --workspace "$WS" --policy "$policy" --audit "$scratch/$2.jsonl" -- /bin/sh -c "$tty_attack" \
            >/dev/null 2>&1
    }
    tty_term - tty3
    ok "tty: the terminal's reports do not answer the prompt (no human: the push is refused at the timeout)" \
        sh -c 'grep -q "push=[1-9]" "$1" && grep -q "\"approver\":\"timeout\"" "$2" &&
               ! grep -q "\"approver\":\"tty\"" "$2" ||
               { tail -c 600 "$1" | cat -v; grep -o "\"decision\":\"[a-z]*\".\{0,120\}" "$2" | tail -n 3; exit 1; } >&2' \
        _ "$scratch/tty3.term" "$scratch/tty3.jsonl"
    tty_term y tty4
    ok "  with the same reports flowing, a human's y approves (the push ran)" \
        sh -c 'grep -q "push=0" "$1" && grep -q "\"approver\":\"tty\"" "$2"' _ "$scratch/tty4.term" "$scratch/tty4.jsonl"
    ok "  the agent's output waited while the question was up (none between it and the answer)" \
        sh -c 'sed -n "s/.*<<PROMPT>>\(.*\)<<KEY>>.*/\1/p" "$1" | grep -q "^$" &&
               sed -n "/<<KEY>>/,\$p" "$1" | sed "s/.*<<KEY>>//" | grep -q while-held' _ "$scratch/tty4.term"
    ok "  ENQ never reached the terminal" sh -c '! grep -q "$(printf "\005")" "$1"' _ "$scratch/tty4.term"
    ok "  nor a clipboard write or a programmed key, while a title did" \
        sh -c '! grep -q "]52;" "$1" && ! grep -q "P1;1|" "$1" && grep -q "]0;kept-title" "$1"' _ "$scratch/tty4.term"
    ok "  mouse reports were turned off for the question and back on after it" \
        sh -c 'sed "/<<PROMPT>>/q" "$1" | sed "s/<<PROMPT>>.*//" | grep -q "$(printf "\033")\[?1003l" &&
               sed -n "/<<KEY>>/,\$p" "$1" | sed "s/.*<<KEY>>//" | grep -q "$(printf "\033")\[?1003h"' _ "$scratch/tty4.term"

    # stdin not a terminal, stdout and stderr one: the agent gets a pty in
    # their place too, so its output goes through the same filter; before,
    # it wrote to cordon's terminal directly.
    python3 "$(dirname "$0")/../terminal.py" - 0 "$scratch/tty6.term" -- /bin/sh -c 'exec "$0" "$@" </dev/null' \
        "$cordon" run -q --user "$AGENT" --workspace "$WS" --policy "$policy" --audit "$scratch/tty6.jsonl" -- \
        /bin/sh -c "printf '\\033]52;c;cm0gLXJmIH4K\\007'; echo; for f in 0 1 2; do echo \$(readlink /proc/\$\$/fd/\$f) \$(stat -L -c %d /proc/\$\$/fd/\$f); done" \
        >/dev/null 2>&1
    ok "tty: with stdin not a terminal, the agent's stdout and stderr are a pty of its own and its stdin stays" \
        sh -c 't=$(sed -n "s/^cordon-tty //p" "$1"); [ -n "$t" ] && grep -q "^/dev/null " "$1" &&
               [ "$(grep -c "^/dev/pts/" "$1")" -eq 2 ] && ! grep -q "^$t$" "$1" ||
               { cat -v "$1"; exit 1; } >&2' _ "$scratch/tty6.term"
    ok "  and its clipboard write did not reach the terminal" sh -c '! grep -q "]52;" "$1"' _ "$scratch/tty6.term"

    # Job control on the session's own terminal: a shell stops and resumes
    # its job; ps sees only the session's processes, PID 1 its init.
    if command -v bash >/dev/null 2>&1; then
        python3 "$(dirname "$0")/../terminal.py" - 0 "$scratch/tty7.term" -- \
            "$cordon" run -q --user "$AGENT" --workspace "$WS" --policy "$policy" --audit "$scratch/tty7.jsonl" -- \
            bash --norc -ic 'set -m; sleep 30 & kill -STOP %1; sleep 0.3; jobs; kill -CONT %1; kill %1; wait
                ps -e -o pid=,comm= 2>/dev/null | sed "s/^ */ps /"' >/dev/null 2>&1
        ok "tty: job control works on the session's terminal (a job stopped and resumed)" \
            sh -c 'grep -q "Stopped.*sleep 30" "$1" || { cat -v "$1"; exit 1; } >&2' _ "$scratch/tty7.term"
        ok "  ps lists the session's processes only, its init as PID 1" \
            sh -c 'grep -q "^ps 1 cordon-init" "$1" && [ "$(grep -c "^ps " "$1")" -le 6 ] ||
                { cat -v "$1"; exit 1; } >&2' _ "$scratch/tty7.term"
    fi
    # Ctrl-Z on cordon's terminal, under a job-control shell (tests/jobctl.py):
    # the agent's job stops (its process group was orphaned, and the kernel
    # dropped the SIGTSTP), cordon stops and gives the shell its terminal,
    # and fg resumes the job where it was.
    rm -f "$WS/count"
    o=$(python3 "$(dirname "$0")/../jobctl.py" "$WS/count" -- "$cordon" run -q --user "$AGENT" \
        --workspace "$WS" --policy "$policy" --audit "$scratch/tty9.jsonl" -- \
        /bin/sh -c "i=0; while [ \$i -lt 30 ]; do i=\$((i + 1)); echo \$i >$WS/count; sleep 0.1; done" 2>&1); rc=$?
    ok "tty: Ctrl-Z stops the agent and cordon, the shell gets its terminal, fg resumes ($(echo $o))" \
        sh -c '[ $1 -eq 0 ] && printf %s "$2" | grep -q "^stopped" && printf %s "$2" | grep -q "^exit 0"' _ $rc "$o"
    ok "  nothing of the agent's job ran while it was stopped" \
        sh -c 'printf %s "$1" | grep -q "^frozen \([1-9][0-9]*\) \1$"' _ "$o"
    # n is final: the same push tried again is refused unasked, and the
    # agent's terminal says a human refused it.
    o=$(tty_session n "$scratch/tty8.jsonl" /bin/sh -c "cd $WS && ./git push origin main; ./git push origin main; echo second=\$?")
    ok "tty: after n, the same push again is not asked (one question)" \
        sh -c '[ "$(printf %s "$1" | grep -c "The agent asks to")" = 1 ] && printf %s "$1" | grep -q "second=126" &&
               grep -q "denied by a human earlier in this session" "$2" ||
               { printf %s "$1" | tail -n 8; exit 1; } >&2' _ "$o" "$scratch/tty8.jsonl"
    ok "  the agent's terminal says a human denied it" \
        sh -c 'printf %s "$1" | grep -q "cordon: denied by a human (tty): ./git push origin main"' _ "$o"
fi

# --- a human's no, and the words the agent gets ----------------------------------
# The same push through a PATH search (a missing directory first, then two
# gits): one question; denied, the next PATH entry and a second try are
# refused unasked, and the caller's stderr (a pipe, as a tool's output is)
# says a human refused.  What "the same request" is: sup_held.h.
mkdir -p "$WS/bin1" "$WS/bin2"
cp "$WS/git" "$WS/bin1/git"
cp "$WS/git" "$WS/bin2/git"
chown -R "$AGENT" "$WS/bin1" "$WS/bin2"
search="cd $WS && PATH=/nonexistent:$WS/bin1:$WS/bin2 $(command -v env) git push origin main"
run_bg "$scratch/no1" -- /bin/sh -c "$search 2>&1 | cat; $search 2>&1 | cat; echo end"
id=$(pending_id 5)
ok "deny: one question for a push a PATH search tries three times ($id)" "$cordon" deny "$id"
wait $!
ok "  the agent's tool output says a human denied it" \
    grep -q "^cordon: denied by a human (socket: uid 0" "$scratch/no1.out"
ok "  and not to try another way" grep -q "Do not retry it or try another way" "$scratch/no1.out"
ok "  its retries (the next PATH entry, a second try) are refused unasked, and said so" \
    sh -c '[ "$(grep -c "\"decision\":\"escalate\"" "$1")" = 1 ] &&
           grep -q "denied by a human earlier in this session (not asked again)" "$1" &&
           grep -q "^cordon: refused: git push origin main" "$2"' _ "$scratch/no1.jsonl" "$scratch/no1.out"
ok "  the missing /nonexistent/git was never a question" \
    sh -c '! grep "/nonexistent/git" "$1" | grep -q "\"decision\":\"escalate\""' _ "$scratch/no1.jsonl"
# A timeout is no human's no: the next try is asked again.
run_bg "$scratch/no2" -- /bin/sh -c "cd $WS && ./git push origin main 2>&1 | cat; ./git push origin main; echo end"
id=$(pending_id 5)
sleep 3.5
id2=$(pending_id 5)
ok "a push refused at the timeout is asked again ($id, then $id2)" test -n "$id2" -a "$id2" != "$id"
ok "  and its caller was told nobody answered" grep -q "^cordon: not approved: .*git push origin main" "$scratch/no2.out"
"$cordon" approve "$id2" >/dev/null
wait $!
# A tool run by a Node or Bun parent has a socketpair for its stderr
# (libuv's pipes): the words reach it too, its peer being in the session.
if [ ! -x /usr/bin/python3 ]; then
    skip "  a socketpair to the session gets the words: needs python3 (not in the VM's guest)"
else
run_bg "$scratch/no3" -- /usr/bin/python3 -c "
import socket, subprocess
a, b = socket.socketpair()
p = subprocess.Popen(['/bin/sh', '-c', './git push origin main'], cwd='$WS', stderr=b)
b.close(); p.wait(); a.settimeout(5)
print('stderr:', a.recv(4096).decode(errors='replace'))"
id=$(pending_id 5)
"$cordon" deny "$id" >/dev/null
wait $!
ok "  a socketpair to the session (a Node parent's stdio) gets the words too" \
    grep -q "^stderr: cordon: denied by a human" "$scratch/no3.out"
fi
# Claude Code's shell tool sends a command's output to a file of its own.
run_bg "$scratch/no4" -- /bin/sh -c "cd $WS && ./git push origin main 2>/tmp/out.txt; cat /tmp/out.txt"
id=$(pending_id 5)
"$cordon" deny "$id" >/dev/null
wait $!
ok "  so does a file of the agent's own (Claude Code's tool output)" \
    grep -q "^cordon: denied by a human" "$scratch/no4.out"

# --- pending: whose, and which ------------------------------------------------
# A session whose invoker is $AGENT (started with sudo by that user) is not
# root's own: root sees it with --all only; its invoker sees it.
env SUDO_UID="$AGENT_UID" "$cordon" run -q --user "$AGENT" --workspace "$WS" --policy "$policy" \
    --approve socket --audit "$scratch/sc1.jsonl" -- /bin/sh -c "cd $WS && ./git push origin main" \
    >"$scratch/sc1.out" 2>"$scratch/sc1.err" </dev/null &
sc1=$!
run_bg "$scratch/sc2" -- /bin/sh -c "cd $WS && ./git push origin main"
sc2=$!
n=$(pending_count '"summary": "./git push origin main"' 1)
all=$("$cordon" pending --all)
mine=$(SUDO_UID=$AGENT_UID "$cordon" pending)
ok "pending lists root's own sessions only (1: $n); --all lists both" \
    sh -c '[ "$1" = 1 ] && [ "$(printf %s "$2" | grep -c "^s[0-9a-f]*:1 ")" = 2 ]' _ "$n" "$all"
ok "  the other user's invoker sees theirs" sh -c '[ "$(printf %s "$1" | grep -c "^s[0-9a-f]*:1 ")" = 1 ]' _ "$mine"
ok "  with user, workspace, command and age" \
    sh -c 'printf %s "$1" | grep -q "user $2, workspace $3, command /bin/sh -c cd $3" &&
           printf %s "$1" | grep -q "call(s) waiting for [0-9]*s,"' _ "$all" "$AGENT" "$WS"
o=$(SUDO_UID= "$cordon" pending --all --json)
ok "  --json carries them too" sh -c 'printf %s "$1" | grep -q "\"workspace\": \"$2\"" &&
    printf %s "$1" | grep -q "\"age_ms\""' _ "$o" "$WS"
o=$("$BUILD/tests/agents/attack" su "$AGENT_UID" "$cordon" pending --all 2>&1); rc=$?
ok "  --all is root's (rc=$rc)" test $rc -eq 2
# The same ID in two of one's own sessions: a bare ID is refused, with the choices.
run_bg "$scratch/sc3" -- /bin/sh -c "cd $WS && ./git push origin main"
sc3=$!
n=$(pending_count '"summary": "./git push origin main"' 2)
o=$("$cordon" approve 1 2>&1); rc=$?
ok "a bare ID pending in two sessions is refused (rc=$rc)" test $rc -eq 1 -a "$n" = 2
ok "  naming the choices as SESSION:ID" \
    sh -c '[ "$(printf %s "$1" | grep -c "cordon approve s[0-9a-f]*:1 ")" = 2 ]' _ "$o"
for f in sc1 sc2 sc3; do
    s=$(head -n 1 "$scratch/$f.jsonl" | sed 's/.*"session":"\([^"]*\)".*/\1/')
    "$cordon" deny "$s:1" >/dev/null || echo "# deny $s:1 failed" >&2
done
wait $sc1 $sc2 $sc3
ok "  each then answered by SESSION:ID" sh -c 'for f in sc1 sc2 sc3; do grep -q "\"approver\":\"socket" "$1/$f.jsonl" || exit 1; done' _ "$scratch"

# --- how escalations are answered without a terminal ------------------------------
o=$("$cordon" run --user "$AGENT" --workspace "$WS" --policy "$policy" --audit "$scratch/nt1.jsonl" \
    -- /bin/true 2>&1 </dev/null); rc=$?
ok "no terminal, no --approve: cordon says escalations will be denied (rc=$rc)" \
    sh -c 'printf %s "$1" | grep -q "no terminal on stdin and no --approve: every escalation will be denied"' _ "$o"
o=$("$cordon" run -q --user "$AGENT" --workspace "$WS" --policy "$policy" --approve tty \
    --audit "$scratch/nt2.jsonl" -- /bin/true 2>&1 </dev/null); rc=$?
ok "--approve tty without a terminal: refused with 125 (rc=$rc)" test $rc -eq 125
ok "  saying why" sh -c 'printf %s "$1" | grep -q "approve tty needs a terminal on stdin"' _ "$o"

# --- stopping a session -------------------------------------------------------------
# Every stop signal ends the session as a whole: a wrapper that ignores it
# keeps nothing alive past the grace (5 s), a second signal ends it at once,
# and `cordon stop` does as SIGTERM does.
session_of() {  # session_of AUDIT: the session's name, once its log has it
    i=0
    while [ $i -lt 100 ] && ! grep -q '"agent-started"' "$1" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
    head -n 1 "$1" | sed 's/.*"session":"\([^"]*\)".*/\1/'
}
cp "$attack" "$WS/cordon-sleeper"
for sig in TERM INT HUP QUIT; do
    run_bg "$scratch/sig$sig" -- /bin/sh -c "$WS/cordon-sleeper sleep 60 & $WS/cordon-sleeper sleep 61"
    pid=$!
    session_of "$scratch/sig$sig.jsonl" >/dev/null
    t0=$(date +%s)
    kill -$sig $pid
    wait $pid; rc=$?
    t1=$(date +%s)
    left=$(procs "cordon-sleeper sleep 6")
    # SIGQUIT's default action dumps core; on the VM's kernel (6.1, TCG) the
    # session has ended only at the 5 s grace (cause not yet found): there,
    # "at once" means within the grace.
    lim=2
    [ "$sig" = QUIT ] && [ "${VMTEST:-}" = 1 ] && lim=6
    ok "SIG$sig to cordon run ends the session within ${lim} s, its background job too ($((t1 - t0)) s, rc=$rc)" \
        sh -c '[ $1 -le $6 ] && [ $2 -ne 0 ] && grep -q "\"event\":\"stopped\",.*\"signal\":\"SIG$3\"" "$4" &&
               [ -z "$5" ]' _ $((t1 - t0)) $rc $sig "$scratch/sig$sig.jsonl" "$left" $lim
done
run_bg "$scratch/sigw" -- /bin/sh -c "trap '' TERM; $WS/cordon-sleeper sleep 60"
pid=$!
session_of "$scratch/sigw.jsonl" >/dev/null
t0=$(date +%s)
kill -TERM $pid
wait $pid; rc=$?
t1=$(date +%s)
ok "a wrapper that ignores SIGTERM: killed after the grace ($((t1 - t0)) s, rc=$rc)" \
    sh -c '[ $1 -ge 4 ] && [ $1 -le 8 ] && [ $2 -eq 137 ] &&
           grep -q "\"event\":\"stopped\",.*\"killed\":true" "$3"' _ $((t1 - t0)) $rc "$scratch/sigw.jsonl"
ok "  and cordon said so" grep -q "still running at the end of the grace: killed" "$scratch/sigw.err"
run_bg "$scratch/sigw2" -- /bin/sh -c "trap '' TERM; $WS/cordon-sleeper sleep 60"
pid=$!
session_of "$scratch/sigw2.jsonl" >/dev/null
t0=$(date +%s)
kill -TERM $pid; sleep 0.3; kill -TERM $pid
wait $pid; rc=$?
t1=$(date +%s)
ok "  a second SIGTERM ends it at once ($((t1 - t0)) s, rc=$rc)" test $((t1 - t0)) -le 2 -a $rc -eq 137
run_bg "$scratch/stop1" -- /bin/sh -c "trap '' TERM; $WS/cordon-sleeper sleep 60"
pid=$!
name=$(session_of "$scratch/stop1.jsonl")
o=$("$BUILD/tests/agents/attack" su "$AGENT_UID" "$cordon" stop "$name" 2>&1); rc=$?
ok "cordon stop: refused to a user who is neither root nor the session's invoker (rc=$rc)" test $rc -eq 1
o=$("$cordon" stop "$name"); rc=$?
ok "cordon stop SESSION (rc=$rc): $o" test $rc -eq 0
wait $pid; rc=$?
left=$(procs "cordon-sleeper sleep 6")
ok "  the session ended, its wrapper killed after the grace (rc=$rc)" \
    sh -c '[ $1 -eq 137 ] && grep -q "\"by\":\"\`cordon stop\` by uid 0" "$2" && [ -z "$3" ]' \
    _ $rc "$scratch/stop1.jsonl" "$left"
o=$("$cordon" stop s0000000000000000 2>&1); rc=$?
ok "cordon stop of no such session: an error (rc=$rc)" sh -c '[ $1 -eq 1 ] && printf %s "$2" | grep -q "no such running session"' _ $rc "$o"

# --- the event socket ------------------------------------------------------------
run_bg "$scratch/ev" -- /bin/sh -c "sleep 3; $attack connect 127.0.0.1 1"
evpid=$!
i=0
while [ $i -lt 100 ] && ! grep -q '"session"' "$scratch/ev.jsonl" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
sock=$CORDON_RUN/$(head -n 1 "$scratch/ev.jsonl" | sed 's/.*"session":"\([^"]*\)".*/\1/')/events.sock
if command -v python3 >/dev/null 2>&1 && [ -n "$sock" ]; then
    ev=$(timeout 5 python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); f = s.makefile()
for line in f:
    if "\"tool\":\"connect\"" in line: print(line.strip()); break
' "$sock")
    ok "the event socket publishes JSON-RPC 2.0 notifications" sh -c 'printf %s "$1" | grep -q "\"jsonrpc\":\"2.0\",\"method\":\"cordon/event\""' _ "$ev"
    ok "  with the lifted event and its decision" sh -c 'printf %s "$1" | grep -q "\"decision\":\"deny\"" ' _ "$ev"
fi
wait $evpid

# --- the audit log ---------------------------------------------------------------
in_session --policy "$policy" -- /bin/sh -c "$attack connect 127.0.0.1 1; /bin/true"
ok "the session's audit log verifies" "$cordon" audit verify --key-dir "$CORDON_AUDIT_KEY_DIR" "$audit"
ok "  ends with a sealing record" sh -c 'tail -n 1 "$1" | grep -q "\"type\":\"seal\""' _ "$audit"
sed -i '3s/"comm":"[^"]*"/"comm":"forged"/' "$audit"
o=$("$cordon" audit verify --key-dir "$CORDON_AUDIT_KEY_DIR" "$audit"); rc=$?
ok "  a modified record is detected (rc=$rc)" test $rc -eq 1

# --- budgets ----------------------------------------------------------------------
sed 's/"approvals"/"budgets": { "steps": 20, "wall_time": "2s" },\n  "approvals"/' "$policy" >"$scratch/budget.json"
in_session --policy "$scratch/budget.json" -- /bin/sh -c 'while :; do /bin/true; done'
ok "a steps budget stops the agent (rc=$rc)" said "steps budget spent"
ok "  and the audit says which" grep -q 'steps budget spent' "$audit"
t0=$(date +%s)
in_session --policy "$scratch/budget.json" -- /bin/sleep 30
t1=$(date +%s)
ok "a wall-time budget stops the agent after 2 s ($((t1 - t0)) s)" test $((t1 - t0)) -lt 10
ok "  and says so" said "wall_time budget spent"

# The audit budget: execs of 1 KB of argv (no steps budget here), each a
# record of about 2.5 KB, until the log passes 64 KiB.
sed 's/"approvals"/"budgets": { "audit": "64K" },\n  "approvals"/' "$policy" >"$scratch/budget3.json"
in_session --policy "$scratch/budget3.json" -- /bin/sh -c "a=\$(printf '%01000d' 0); while :; do /bin/true \$a; done"
ok "an audit budget (64 KiB) stops the agent (rc=$rc)" said "audit budget spent (65536 bytes of records)"
size=$(wc -c <"$audit")
ok "  the log stopped just past it ($size bytes)" test "$size" -gt 65536 -a "$size" -lt 81920
ok "  and says which" grep -q '"event":"budget","prev":"[0-9a-f]*","seq":[0-9]*,"session":"[^"]*","stopped":"audit budget spent' "$audit"

sed 's/"approvals"/"budgets": { "pids": 16, "memory": "64M" },\n  "approvals"/' "$policy" >"$scratch/budget2.json"
in_session --policy "$scratch/budget2.json" -- /bin/sh -c 'i=0; while [ $i -lt 64 ]; do /bin/sleep 5 & i=$((i + 1)); done; wait'
ok "a pids budget (16) stops a fork storm (rc=$rc)" said "pids budget spent"
ok "  and the audit says which" grep -q 'pids budget spent' "$audit"
in_session --policy "$scratch/budget2.json" -- "$attack" alloc 512
ok "a memory budget (64 MiB) stops an agent that takes 512 MiB (rc=$rc)" said "memory budget spent"

# --- fail closed: the supervisor killed with SIGKILL -------------------------------
run_bg "$scratch/kill" -- /bin/sh -c "$WS/cordon-sleeper sleep 61 & $WS/cordon-sleeper sleep 62"
i=0
while [ $i -lt 100 ] && [ "$(procs "cordon-sleeper sleep 6" | wc -l)" -lt 2 ]; do sleep 0.05; i=$((i + 1)); done
# This session's cgroup, from its agent (not whichever session's is listed first).
cgp=
for pid in $(procs "cordon-sleeper sleep 62"); do
    c=$(sed -n 's/^0:://p' "/proc/$pid/cgroup" 2>/dev/null)
    case $c in "/$CORDON_CG/s"*) cgp=$c; break ;; esac
done
cg=
for root in /sys/fs/cgroup/unified /sys/fs/cgroup; do
    [ -n "$cgp" ] && [ -d "$root$cgp" ] && { cg=$root$cgp; break; }
done
sup=$(supervisor "--audit $scratch/kill.jsonl")
ok "a running session (supervisor $sup, cgroup $cg)" test -n "$sup" -a -n "$cg"
kill -9 "$sup"
i=0
while [ $i -lt 100 ] && [ -d "$cg" ]; do sleep 0.05; i=$((i + 1)); done
ok "kill -9 of the supervisor: the session's cgroup is gone" test ! -d "$cg"
ok "  and every task of the session with it" test -z "$(procs "cordon-sleeper sleep 6")"
# The watchdog ends the log too: its record of why, then the seal (audit_resume).
i=0
while [ $i -lt 100 ] && ! grep -q '"type":"seal"' "$scratch/kill.jsonl"; do sleep 0.05; i=$((i + 1)); done
ok "  and its log ends with the watchdog's record of it, sealed" sh -c '
    "$1" audit verify --key-dir "$CORDON_AUDIT_KEY_DIR" "$2" | grep -q sealed &&
    tail -n 2 "$2" | head -n 1 | grep -q "\"event\":\"supervisor-died\""' _ "$cordon" "$scratch/kill.jsonl"

# After every session above (execs killed by the recheck, fork storms, a
# supervisor killed): no exec expectation is left in the kernel for a
# thread that no longer exists.  One left behind stays for good, under a
# tid the host reuses; the kernel judges a task only in the cgroup the
# expectation names, but the map would fill.
pin=$CORDON_PINS/net/exec_expect
if command -v bpftool >/dev/null 2>&1 && [ -e "$pin" ]; then
    left=0
    for tid in $(bpftool map dump pinned "$pin" 2>/dev/null | sed -n 's/^.*"key": \([0-9]*\),.*$/\1/p'); do
        [ -e "/proc/$tid" ] || left=$((left + 1))
    done
    ok "no exec expectation outlives its thread ($left left)" test "$left" = 0
else
    _n=$((_n + 1))
    echo "ok $_n # SKIP no exec expectations to inspect: $(command -v bpftool >/dev/null 2>&1 &&
        echo "the exec recheck is not loaded (tp_btf or bpf_loop refused)" || echo "bpftool is not installed")"
fi
done_testing
