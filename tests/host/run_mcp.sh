#!/bin/sh
# [6/8] `cordon run --mcp`: the session's MCP proxy behind the one socket the
# floor lets the agent reach, reached through `cordon mcp-bridge`; escalated
# tool calls held for the session's approver (`cordon approve/deny`, the
# policy's timeout) exactly like a held exec or connect; the proxy's records
# in the session's audit log; every other socket of the sessions' directory
# out of reach.  The MCP server here is a small POSIX sh one (no node in the
# VM guest): this same script runs on this host (fallback) and in the VM
# (full posture).  tests/host/mcp_proxy.sh drives the same path with the
# official SDK client.  POSIX sh.
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib_run.sh"
session_test runmcp
other=/run/cordon-mcp/test-$$
bg=
cleanup() {
    [ -z "$bg" ] || kill $bg 2>/dev/null
    [ -n "${KEEP:-}" ] || rm -rf "$WS" "$scratch" "$other"
}
trap cleanup EXIT
mkdir -p "$scratch/srv"
chmod 0755 "$scratch"
# The server's own directory, where it writes down every call that reached it.
chown "$AGENT" "$scratch/srv"
# The bridge, where the agent may run it ($cordon is a bare name in the VM).
cp "$(command -v "$cordon")" "$WS/cordon"
err= rc=0
chmod 0755 "$WS/cordon"

# A minimal MCP server: initialize, tools/list (greet, publish), tools/call
# (logged to srv/calls, then answered).  JSON by sed: the proxy sends
# compact JSON, "id" first-level and numeric.
cat >"$scratch/server.sh" <<EOF
#!/bin/sh
while IFS= read -r line; do
    id=\$(printf '%s\n' "\$line" | sed -n 's/^{"jsonrpc":"2.0","id":\([0-9][0-9]*\).*/\1/p')
    case \$line in
    *'"method":"initialize"'*)
        r='{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"shtools","version":"1"}}' ;;
    *'"method":"tools/list"'*)
        r='{"tools":[{"name":"greet","inputSchema":{"type":"object"}},{"name":"publish","inputSchema":{"type":"object"}},{"name":"fetch","inputSchema":{"type":"object"}}]}' ;;
    *'"method":"tools/call"'*)
        printf '%s\n' "\$line" >>"$scratch/srv/calls"
        r='{"content":[{"type":"text","text":"done"}]}' ;;
    *) continue ;;
    esac
    [ -n "\$id" ] && printf '{"jsonrpc":"2.0","id":%s,"result":%s}\n' "\$id" "\$r"
done
EOF
chmod 0755 "$scratch/server.sh"
cat >"$scratch/server-profile.json" <<EOF
{ "cordon_policy": 1, "name": "sh-server",
  "rules": [
    { "name": "system", "decision": "allow",
      "fs": { "paths": ["/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc", "/proc", "$scratch/server.sh"], "rights": ["read", "exec"] } },
    { "name": "devices", "decision": "allow", "fs": { "paths": ["/dev/null"], "rights": ["read", "write"] } },
    { "name": "out", "decision": "allow", "fs": { "paths": ["$scratch/srv"], "rights": ["all"] } }
  ] }
EOF
cat >"$scratch/servers.json" <<EOF
{ "servers": { "sh": { "command": ["/bin/sh", "$scratch/server.sh"], "profile": "$scratch/server-profile.json" } } }
EOF
policy=$scratch/policy.json
cat >"$policy" <<EOF
{ "cordon_policy": 1, "name": "run-mcp-test",
  "rules": [
    { "name": "workspace", "decision": "allow", "fs": { "paths": ["\${WORKSPACE}"], "rights": ["all"] } },
    { "name": "system", "decision": "allow",
      "fs": { "paths": ["/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc", "/proc", "/sys"], "rights": ["read", "exec"] } },
    { "name": "devices", "decision": "allow", "fs": { "paths": ["/dev/null", "/dev/urandom"], "rights": ["read", "write"] } },
    { "name": "tmp", "decision": "allow", "fs": { "paths": ["/tmp"], "rights": ["all"] } },
    { "name": "greet", "decision": "allow", "tool": { "name": "sh.greet" } },
    { "name": "fetch", "decision": "allow",
      "tool": { "name": "sh.fetch", "args": { "url": { "domain_in": ["docs.example"] } } } },
    { "name": "publish", "decision": "escalate", "description": "publishing needs a human",
      "tool": { "name": "sh.publish", "args": { "what": { "any": true } } } }
  ],
  "approvals": { "timeout": "3s", "on_timeout": "deny" } }
EOF
chmod 0644 "$scratch"/*.json

# The agent: an MCP client in sh, through the bridge: initialize, greet,
# publish (escalated); the answers in $WS/out.
cat >"$WS/client.sh" <<'EOF'
#!/bin/sh
{
    echo '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}'
    echo '{"jsonrpc":"2.0","method":"notifications/initialized"}'
    echo '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sh.greet","arguments":{}}}'
    echo '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"sh.publish","arguments":{"what":"'"$1"'"}}}'
    echo '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"sh.fetch","arguments":{"url":"HTTPS://Docs.Example./guide"}}}'
    echo '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"sh.fetch","arguments":{"url":"https://docs.example@evil.example/"}}}'
} | "$(dirname "$0")/cordon" mcp-bridge >"$(dirname "$0")/out.$1"
echo "bridge exit $?"
EOF
chmod 0755 "$WS/client.sh"
chown -R "$AGENT" "$WS"

run_bg() {  # run_bg NAME ARGS...: an --mcp session in the background
    f=$scratch/$1; shift
    "$cordon" run -q --user "$AGENT" --workspace "$WS" --policy "$policy" --approve socket \
        --mcp "$scratch/servers.json" --audit "$f.jsonl" "$@" >"$f.out" 2>"$f.err" </dev/null &
}
answered() {  # answered NAME ID TEXT: the client's answer to request ID contains TEXT
    grep -F "\"id\":$2," "$WS/out.$1" | grep -qF -- "$3" || { cat "$WS/out.$1" >&2; return 1; }
}

# --- approved -------------------------------------------------------------------
run_bg approved -- "$WS/client.sh" approved
id=$(pending_id)
ok "an escalated tools/call is held and listed by cordon pending ($id)" test -n "$id"
ok "  with its summary and rule" sh -c "'$cordon' pending | grep -q 'MCP tool publish on server sh' && '$cordon' pending | grep -q 'rule publish'"
ok "  nothing reached the server while it was held" sh -c "! grep -q publish '$scratch/srv/calls'"
# While the call is held the proxy runs, its servers up: it has given root up
# (userspace/mcp/mcp_proxy.c, give_root_up).  Its identity, then what code
# run inside it can do: calls injected into the live proxy with gdb, each
# made as the proxy, against the same calls in a root process (the control:
# the injection works, and the row can fail).
proxy=
for d in /proc/[0-9]*; do
    case $(tr '\0' ' ' <"$d/cmdline" 2>/dev/null) in
    *" mcp-proxy "*--channel-fd*) proxy=${d#/proc/}; break ;;
    esac
done
st=$(cat "/proc/$proxy/status" 2>/dev/null)
want=$((0x7f000000 + ${proxy:-0}))
field() { printf '%s\n' "$st" | sed -n "s/^$1:[[:space:]]*//p" | tr -s '\t ' ' ' | sed 's/ $//'; }
ok "the proxy gave root up: uid and gid its own ($(field Uid))" \
    sh -c '[ "$1" = "$3 $3 $3 $3" ] && [ "$2" = "$3 $3 $3 $3" ]' _ "$(field Uid)" "$(field Gid)" "$want"
ok "  no groups, CAP_DAC_READ_SEARCH alone ($(field CapEff))" \
    sh -c '[ -z "$1" ] && [ "$2" = 0000000000000004 ] && [ "$3" = 0000000000000004 ] &&
        [ "$4" = 0000000000000004 ]' _ "$(field Groups)" "$(field CapEff)" "$(field CapPrm)" "$(field CapBnd)"
ok "  no_new_privs, a seccomp filter" sh -c '[ "$1" = 1 ] && [ "$2" = 2 ]' _ "$(field NoNewPrivs)" "$(field Seccomp)"
sup=$(field PPid)
if command -v gdb >/dev/null 2>&1; then
    # inject PID CALL...: each call made inside PID by gdb; its values, one per call
    inject() {
        _pid=$1
        shift
        _n=$#
        while [ "$_n" -gt 0 ]; do set -- "$@" -ex "call (int)$1"; shift; _n=$((_n - 1)); done
        timeout 60 gdb -q -p "$_pid" -batch "$@" 2>/dev/null | sed -n 's/^\$[0-9]* = //p' | tr '\n' ' '
    }
    as_proxy=$(inject "$proxy" 'open("/proc/self/status",0)' 'open("/etc/shadow",0)' \
        "open(\"$WS/.probe\",0101,0644)" 'socket(1,1,0)' "kill($sup,0)" 'getuid()' 'fork()' \
        "ptrace(16,$sup,0,0)")
    # (started in a subshell: $! stays the session's, which the test waits for below)
    ctl=$(sh -c 'sleep 300 >/dev/null 2>&1 & echo $!')
    as_root=$(inject "$ctl" 'open("/proc/self/status",0)' 'open("/etc/shadow",0)' \
        "open(\"$WS/.probe\",0101,0644)" 'socket(1,1,0)' "kill($sup,0)" 'getuid()')
    kill "$ctl" 2>/dev/null
    rm -f "$WS/.probe"
    ok "as the proxy: /proc read (its one grant); no /etc/shadow, no file made, no socket, no signal to the supervisor, the uid its own, no fork, no ptrace ($as_proxy)" \
        sh -c 'w=$2; set -- $1; [ "$1" -ge 0 ] && [ "$2" = -1 ] && [ "$3" = -1 ] && [ "$4" = -1 ] &&
            [ "$5" = -1 ] && [ "$6" = "$w" ] && [ "$7" = -1 ] && [ "$8" = -1 ]' _ "$as_proxy" "$want"
    ok "  the control: the same calls made in a root process succeed ($as_root)" \
        sh -c 'set -- $1; [ "$1" -ge 0 ] && [ "$2" -ge 0 ] && [ "$3" -ge 0 ] && [ "$4" -ge 0 ] &&
            [ "$5" = 0 ] && [ "$6" = 0 ]' _ "$as_root"
else
    skip "as the proxy: calls injected into it need gdb (not in the VM's guest)"
    skip "  the control: the same"
fi
ok "cordon approve answers it" "$cordon" approve "$id"
wait $!
rc=$?
ok "  the session ended cleanly (rc=$rc)" test $rc -eq 0
ok "  the allowed call was answered" answered approved 2 '"text":"done"'
ok "  the approved call was answered by the server" answered approved 3 '"text":"done"'
ok "  and reached it" grep -q '"what":"approved"' "$scratch/srv/calls"
ok "a URL argument is judged by its canonical domain (case, trailing dot)" answered approved 4 '"text":"done"'
ok "  a URL whose host is not what it seems (userinfo) is refused" answered approved 5 '"code":-32001'
ok "  and never reached the server" sh -c "! grep -q evil.example '$scratch/srv/calls'"
audit=$scratch/approved.jsonl
ok "the proxy's records are in the session's log: the call held" \
    audited escalate sh publish "held for the session's approver"
ok "  approved, with the approver" sh -c "grep '\"decision\":\"allow\"' '$audit' | grep '\"tool\":\"publish\"' | grep -q '\"approver\":\"socket: uid 0'"
ok "  the allowed call" audited allow sh greet forwarded
ok "  the results" sh -c "grep -c '\"what\":\"result\"' '$audit' | grep -qx 3"
ok "  the agent's connect to its socket" sh -c "grep '\"tool\":\"connect\"' '$audit' | grep '\"decision\":\"allow\"' | grep -q '\"path\":\"/run/cordon-mcp/s'"
ok "  and the log verifies" "$cordon" audit verify --key-dir "$CORDON_AUDIT_KEY_DIR" "$audit"
ok "the socket is gone with the session" sh -c "! ls /run/cordon-mcp/ | grep -q '^s.*\.sock$'"

# --- denied, and by timeout -----------------------------------------------------
run_bg denied -- "$WS/client.sh" denied
id=$(pending_id)
ok "cordon deny answers another ($id)" "$cordon" deny "$id"
wait $!
ok "  the client gets JSON-RPC -32001 naming the rule" answered denied 3 '"code":-32001'
ok "  (rule publish)" answered denied 3 '"rule":"publish"'
ok "  the allowed call still went through" answered denied 2 '"text":"done"'
ok "  the denied call never reached the server" sh -c "! grep -q '\"what\":\"denied\"' '$scratch/srv/calls'"
audit=$scratch/denied.jsonl
ok "  audited deny with the approver" sh -c "grep '\"decision\":\"deny\"' '$audit' | grep '\"tool\":\"publish\"' | grep -q approver"

t0=$(date +%s)
run_bg timeout -- "$WS/client.sh" timeout
wait $!
t1=$(date +%s)
ok "nobody answers: the policy's timeout (3 s) denies ($((t1 - t0)) s)" answered timeout 3 '"code":-32001'
ok "  audited with approver timeout" grep -q '"approver":"timeout"' "$scratch/timeout.jsonl"
ok "  never reached the server" sh -c "! grep -q '\"what\":\"timeout\"' '$scratch/srv/calls'"

# --- the socket, and only it ----------------------------------------------------
in_session --policy "$policy" --mcp "$scratch/servers.json" -- /bin/sh -c 'echo "sock=$CORDON_MCP_SOCKET"'
ok "the agent is told its socket (\$CORDON_MCP_SOCKET): $out" sh -c 'printf %s "$1" | grep -q "^sock=/run/cordon-mcp/s[0-9a-f]*\.sock$"' _ "$out"
# Another socket in the sessions' directory (another session's, say).
mkdir -p "$other"
"$attack" serve "$other" & bg="$bg $!"
i=0
while [ ! -e "$other/ports" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
chmod 0777 "$other/host.sock"
in_session --policy "$policy" --mcp "$scratch/servers.json" -- "$attack" unix "$other/host.sock"
ok "another socket under /run/cordon-mcp is out of reach: $out" contained
ok "  and its listener received nothing" test ! -e "$other/path.hit"
# Removing, moving, re-moding or planting beside it: DAC refuses an
# unprivileged agent; an agent running as root (full posture only: the
# fallback refuses --user root) meets the cordon-mcp invariant.
tamper='rm -f "$CORDON_MCP_SOCKET" 2>/dev/null; mv "$CORDON_MCP_SOCKET" /tmp/x 2>/dev/null;
    chmod 0777 "$CORDON_MCP_SOCKET" 2>/dev/null; ln -s /tmp/x /run/cordon-mcp/planted 2>/dev/null;
    if [ -e /run/cordon-mcp/planted ] || [ -L /run/cordon-mcp/planted ]; then echo BREACH; else echo contained; fi
    test -S "$CORDON_MCP_SOCKET" && echo kept; ls -l "$CORDON_MCP_SOCKET"'
in_session --policy "$policy" --mcp "$scratch/servers.json" -- /bin/sh -c "$tamper"
ok "the agent cannot remove, move, re-mode or plant beside its socket: $(echo $out)" sh -c 'printf %s "$1" | grep -q "^contained" && printf %s "$1" | grep -q kept && printf %s "$1" | grep -q "^srw-rw---- "' _ "$out"
if "$cordon" doctor --json | grep -q '"posture": "full"'; then
    in_session --user root --policy "$policy" --mcp "$scratch/servers.json" -- /bin/sh -c "$tamper"
    ok "  nor can root in the sandbox: $(echo $out)" sh -c 'printf %s "$1" | grep -q "^contained" && printf %s "$1" | grep -q kept && printf %s "$1" | grep -q "^srw-rw---- "' _ "$out"
    rm -f /run/cordon-mcp/planted
fi

# --- the steps budget counts tool calls -----------------------------------------
# One connect to the socket, then 60 calls: every call is a step, as every
# exec and connect is, so a session that works through tools alone is
# bounded by its steps too.  (Before, the calls were not counted: all 60
# reached the server and the session ended cleanly.)
sed 's/"approvals"/"budgets": { "steps": 25 },\n  "approvals"/' "$policy" >"$scratch/steps.json"
chmod 0644 "$scratch/steps.json"
cat >"$WS/many.sh" <<'EOF'
#!/bin/sh
{
    echo '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}'
    echo '{"jsonrpc":"2.0","method":"notifications/initialized"}'
    i=2
    while [ $i -le 61 ]; do
        echo '{"jsonrpc":"2.0","id":'$i',"method":"tools/call","params":{"name":"sh.greet","arguments":{}}}'
        i=$((i + 1))
    done
    sleep 5
} | "$(dirname "$0")/cordon" mcp-bridge >"$(dirname "$0")/out.many"
EOF
chmod 0755 "$WS/many.sh"; chown "$AGENT" "$WS/many.sh"
before=$(grep -c '"name":"greet"' "$scratch/srv/calls")
"$cordon" run -q --user "$AGENT" --workspace "$WS" --policy "$scratch/steps.json" --approve deny \
    --mcp "$scratch/servers.json" --audit "$scratch/steps.jsonl" -- "$WS/many.sh" \
    >"$scratch/steps.out" 2>"$scratch/steps.err" </dev/null
rc=$?
got=$(( $(grep -c '"name":"greet"' "$scratch/srv/calls") - before ))
fwd=$(grep '"tool":"greet"' "$scratch/steps.jsonl" | grep -c '"outcome":"forwarded"')
ok "a steps budget of 25 stops a session of 60 tool calls: $fwd forwarded, $got reached the server (rc=$rc)" \
    sh -c "[ $fwd -ge 1 ] && [ $fwd -lt 25 ] && [ $got -le $fwd ] && [ $rc -ne 0 ]"
ok "  and says so" grep -q 'steps budget spent' "$scratch/steps.err"
audit=$scratch/steps.jsonl
ok "  the call past it was refused, on record" audited deny sh greet '"rule":"steps-budget"'
ok "  the end record counts the calls ($(grep -o '"steps":[0-9]*' "$audit"))" \
    sh -c "grep '\"event\":\"end\"' '$audit' | grep -qE '\"steps\":(2[6-9]|[3-9][0-9])[,}]'"
ok "  and the log verifies" "$cordon" audit verify --key-dir "$CORDON_AUDIT_KEY_DIR" "$audit"

# --- start-up errors ------------------------------------------------------------
printf '{ "servers": {\n  "x": { "command": "not-a-list" } } }\n' >"$scratch/bad.json"
in_session --policy "$policy" --mcp "$scratch/bad.json" -- /bin/sh -c 'echo RAN'
ok "a bad servers file: 125 before the agent starts (rc=$rc)" sh -c "[ $rc -eq 125 ] && ! printf %s '$out' | grep -q RAN"
ok "  naming FILE:LINE:COL" said "$scratch/bad.json:2:"
in_session --policy "$policy" -- "$WS/cordon" mcp-bridge
ok "the bridge outside an --mcp session: exit 2 (rc=$rc)" test $rc -eq 2
ok "  saying why" said "CORDON_MCP_SOCKET is not set"
ok "no session's socket is left behind" sh -c "! ls /run/cordon-mcp/ | grep -q '^s.*\.sock$'"

done_testing
