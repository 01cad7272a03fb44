#!/bin/bash
# cordon mcp-proxy against real peers: the official TypeScript SDK's client
# (tests/mcp/client.mjs) in front, the reference servers (filesystem,
# everything) behind, each server in a cordon session of its own; and raw
# bytes for what no SDK would send.  Needs root (sessions) and node.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/tests/lib.sh"
. "$here/tests/lib_run.sh"

[ "$(id -u)" -eq 0 ] || skip_all "needs root (each MCP server runs in a cordon session)"
command -v node >/dev/null || skip_all "needs node (the MCP SDK client)"
agent_user || skip_all "no unprivileged user for the servers"

t=$(mktemp -d /var/cordon-mcp.XXXXXX)
chmod 0755 "$t"
trap '[ -n "${KEEP:-}" ] || rm -rf "$t"' EXIT
# The packages, where the servers' user ($AGENT) can read them, and their profile.
. "$here/tests/lib_mcp.sh"
mcp_fixture "$t" || { echo "Bail out! the MCP fixture (tools/mcp-deps) failed"; exit 1; }
ws=$t/ws
mkdir -p "$ws/sub" "$t/outside"
echo "hello from the workspace" >"$ws/a.txt"
secret="sk-cordon-test-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
echo "api_key=$secret" >"$ws/leak.txt"
echo "outside" >"$t/outside/x.txt"
ln -s "$t/outside/x.txt" "$ws/link-out"
ln -s /etc/passwd "$ws/passwd"
chmod -R a+rX "$ws" "$t/outside"
export CORDON_AUDIT_KEY_DIR=/var/cordon-test-keys

cat >"$t/policy.json" <<'EOF'
{ "cordon_policy": 1, "name": "mcp-test",
  "rules": [
    { "name": "fs-read", "decision": "allow",
      "tool": { "name": "filesystem.read_text_file",
                "args": { "path": { "within": ["${WORKSPACE}"] }, "head": { "any": true }, "tail": { "any": true } } } },
    { "name": "fs-list", "decision": "allow",
      "tool": { "name": "filesystem.list_directory", "args": { "path": { "within": ["${WORKSPACE}"] } } } },
    { "name": "fs-write", "decision": "escalate", "description": "writes need a human",
      "tool": { "name": "filesystem.write_file",
                "args": { "path": { "within": ["${WORKSPACE}"] }, "content": { "any": true } } } },
    { "name": "echo", "decision": "allow", "tool": { "name": "everything.echo", "args": { "message": { "any": true } } } },
    { "name": "slow", "decision": "allow",
      "tool": { "name": "everything.trigger-long-running-operation",
                "args": { "duration": { "any": true }, "steps": { "any": true } } } },
    { "name": "slow2", "decision": "allow",
      "tool": { "name": "slow.trigger-long-running-operation",
                "args": { "duration": { "any": true }, "steps": { "any": true } } } },
    { "name": "flood", "decision": "allow", "tool": { "name": "flood.*" } }
  ] }
EOF
# A server that answers initialize and tools/list, then floods: one line
# of 40 MiB without a newline when its tool is called.
cat >"$t/mcp/flood.py" <<'EOF'
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("method") == "initialize":
        r = {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}},
             "serverInfo": {"name": "flood", "version": "1"}}
    elif m.get("method") == "tools/list":
        r = {"tools": [{"name": "go", "inputSchema": {"type": "object"}}]}
    elif m.get("method") == "tools/call":
        sys.stdout.write("x" * (40 << 20))
        sys.stdout.flush()
        continue
    else:
        continue
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}) + "\n")
    sys.stdout.flush()
EOF
chmod 0644 "$t"/*.json "$t/mcp/flood.py"
cat >"$t/servers.json" <<EOF
{ "servers": {
    "filesystem": { "command": ["node", "$M/server-filesystem/dist/index.js", "\${WORKSPACE}"],
                    "profile": "$t/server-profile.json" },
    "everything": { "command": ["node", "$M/server-everything/dist/index.js", "stdio"],
                    "profile": "$t/server-profile.json" },
    "slow": { "command": ["node", "$M/server-everything/dist/index.js", "stdio"],
              "profile": "$t/server-profile.json", "timeout": 2 },
    "flood": { "command": ["/usr/bin/python3", "$t/mcp/flood.py"], "profile": "$t/server-profile.json" } } }
EOF

proxy=("$cordon" mcp-proxy --user "$AGENT" --workspace "$ws" --policy "$t/policy.json"
       --servers "$t/servers.json" --audit)
run=0

# steps FILE: run the SDK client through the proxy; the output in $t/out.json.
steps() {
    run=$((run + 1))
    MCP_TEST_SECRET=$secret node "$t/mcp/client.mjs" "$1" -- "${proxy[@]}" "$t/audit$run.jsonl" \
        >"$t/out.json" 2>"$t/err$run.txt"
}
# jq-like checks in python: q 'PYTHON EXPR over o' (o = the output).
q() {
    python3 -c "import json,sys; o=json.load(open('$t/out.json')); s=o.get('steps',[]); sys.exit(0 if ($1) else 1)"
}

# 2 MiB of arguments: the server gets them whole, the records keep a digest.
bigarg=$(head -c $((2 << 20)) /dev/zero | tr '\0' 'b')
cat >"$t/s1.json" <<EOF
[ {"op": "list"},
  {"op": "call", "name": "filesystem.read_text_file", "args": {"path": "$ws/a.txt"}},
  {"op": "call", "name": "filesystem.read_text_file", "args": {"path": "/etc/passwd"}},
  {"op": "call", "name": "filesystem.read_text_file", "args": {"path": "$ws/../outside/x.txt"}},
  {"op": "call", "name": "filesystem.read_text_file", "args": {"path": "$ws/link-out"}},
  {"op": "call", "name": "filesystem.read_text_file", "args": {"path": "passwd"}},
  {"op": "call", "name": "filesystem.read_text_file", "args": {"path": "$ws/leak.txt"}},
  {"op": "call", "name": "filesystem.write_file", "args": {"path": "$ws/new.txt", "content": "x"}},
  {"op": "call", "name": "filesystem.nope", "args": {}},
  {"op": "call", "name": "nosuchserver.tool", "args": {}},
  {"op": "call", "name": "filesystem.read_text_file", "args": {"path": "$ws/a.txt", "mode": "x"}},
  {"op": "call", "name": "filesystem.list_directory", "args": {"path": "sub"}},
  {"op": "ping"},
  {"op": "call", "name": "everything.echo", "args": {"message": "hi $secret"}},
  {"op": "call_progress", "name": "everything.trigger-long-running-operation", "args": {"duration": 1, "steps": 3}},
  {"op": "call_cancel", "name": "everything.trigger-long-running-operation", "args": {"duration": 3, "steps": 3}, "after_ms": 300},
  {"op": "call", "name": "slow.trigger-long-running-operation", "args": {"duration": 5, "steps": 5}},
  {"op": "call", "name": "flood.go", "args": {}},
  {"op": "call", "name": "everything.echo", "args": {"message": "still here"}},
  {"op": "request", "method": "prompts/list", "params": {}},
  {"op": "call", "name": "everything.echo", "args": {"message": "$bigarg"}} ]
EOF
start=$(date +%s)
steps "$t/s1.json"
ok "the SDK client connected through the proxy (exit $?)" test -s "$t/out.json"
ok "initialize: the proxy's own serverInfo, tools capability only" \
    q "o['server']['name'] == 'cordon-mcp-proxy' and list(o['server']['capabilities']) == ['tools']"
ok "initialize: the SDK's newest revision negotiated" q "o['server']['protocolVersion'] == '2025-11-25'"
ok "tools/list: every server's tools, named SERVER.TOOL" \
    q "'filesystem.read_text_file' in s[0]['tools'] and 'everything.echo' in s[0]['tools'] and 'flood.go' in s[0]['tools'] and all('.' in n for n in s[0]['tools'])"
ok "tools/list: input schemas pass through" \
    q "s[0]['schemas']['filesystem.read_text_file']['properties']['path']['type'] == 'string'"
ok "allowed call: the file's text comes back" \
    q "'hello from the workspace' in s[1]['result']['content'][0]['text']"
ok "denied call (outside the rule's roots): JSON-RPC error -32001 naming the reason" \
    q "s[2]['error']['code'] == -32001 and 'no rule allows' in s[2]['error']['data']['reason']"
ok "path escape with ../: denied before the server sees it" q "s[3]['error']['code'] == -32001"
ok "path escape through a symlink in the workspace: denied" q "s[4]['error']['code'] == -32001"
ok "relative path to a symlink out of the roots: denied" q "s[5]['error']['code'] == -32001"
ok "a secret in a result is scrubbed before the agent sees it" \
    q "'[REDACTED:MCP_TEST_SECRET]' in json.dumps(s[6]) and '$secret' not in json.dumps(o)"
ok "escalated call without an approval channel: denied, saying a human was needed" \
    q "s[7]['error']['code'] == -32001 and 'approval' in s[7]['error']['message']"
ok "the escalated write did not happen" test ! -e "$ws/new.txt"
ok "unknown tool of a known server: -32602" q "s[8]['error']['code'] == -32602 and 'nope' in s[8]['error']['message']"
ok "unknown server: -32602" q "s[9]['error']['code'] == -32602"
ok "unknown argument key: denied by the policy" q "s[10]['error']['code'] == -32001"
ok "relative path resolved against the server's root: allowed" q "'result' in s[11]"
ok "ping" q "s[12] == {'ok': True}"
ok "the agent's own argument carrying the secret comes back scrubbed" \
    q "'[REDACTED:MCP_TEST_SECRET]' in s[13]['result']['content'][0]['text']"
# (server-everything may write its last progress after its result, which
# the SDK then drops: the server's race, seen without the proxy too.)
ok "progress notifications reach the client under its own token" \
    q "len(s[14]['progress']) >= 2 and [x['progress'] for x in s[14]['progress']][:2] == [1, 2] and 'result' in s[14]"
ok "a cancelled call ends on the client's side" q "'error' in s[15]"
ok "a hung server: -32603 after its timeout" \
    q "s[16]['error']['code'] == -32603 and 'did not answer within 2 s' in s[16]['error']['message']"
ok "a flooding server: -32603, killed" \
    q "s[17]['error']['code'] == -32603 and 'over 32 MiB' in s[17]['error']['message']"
ok "the other servers still answer" q "'still here' in s[18]['result']['content'][0]['text']"
ok "a method not offered: -32601" q "s[19]['error']['code'] == -32601"
ok "the proxy exited when the client closed (the run took $(( $(date +%s) - start )) s)" \
    test $(( $(date +%s) - start )) -lt 30

# The audit log: every decision and result, verifiable, no secret.
ok "audit log verifies" "$cordon" audit verify --key-dir "$CORDON_AUDIT_KEY_DIR" "$t/audit1.jsonl"
ok "audit: the denied call with its reason" \
    grep -q '"decision":"deny".*"reason":"no rule allows tool filesystem.read_text_file' "$t/audit1.jsonl"
ok "audit: the escalation recorded, and its refusal" \
    grep -q '"decision":"escalate".*"outcome":"refused: no approval channel".*"rule":"fs-write"' "$t/audit1.jsonl"
ok "audit: the scrub counted" grep -q '"scrubbed":1' "$t/audit1.jsonl"
ok "2 MiB of arguments reach the server whole (its echo is as long)" \
    q "len(s[20]['result']['content'][0]['text']) >= (2 << 20)"
ok "their records keep the size and SHA-256 of the arguments, and their first 64 KiB" python3 -c "
import hashlib, json, sys
args = json.dumps({'message': 'b' * (2 << 20)}, separators=(',', ':'), sort_keys=True).encode()
recs = [json.loads(l) for l in open('$t/audit1.jsonl') if '\"truncated\":true' in l]
kinds = sorted(r.get('what', r['type']) for r in recs)
ok = kinds == ['decision', 'result'] and all(
    r['event']['arguments'] == {'truncated': True, 'bytes': len(args),
                                'sha256': hashlib.sha256(args).hexdigest(),
                                'head': args[:65536].decode()} for r in recs)
longest = max(len(l) for l in open('$t/audit1.jsonl'))
print(kinds, longest, file=sys.stderr)
sys.exit(0 if ok and longest < 200000 else 1)"
ok "audit: the secret is not in any log" bash -c "! grep -rqF '$secret' '$t'/audit*.jsonl"
ok "each server had a session of its own (its own audit log)" \
    test -s "$t/audit1.filesystem.jsonl" -a -s "$t/audit1.everything.jsonl"
ok "the filesystem server ran confined (its session's posture recorded)" \
    grep -q '"posture"' "$t/audit1.filesystem.jsonl"

# A server that dies mid-call: its call fails with -32603, the rest go on.
cat >"$t/s2.json" <<EOF
[ {"op": "call", "name": "everything.trigger-long-running-operation", "args": {"duration": 20, "steps": 20}, "timeout_ms": 30000},
  {"op": "call", "name": "filesystem.read_text_file", "args": {"path": "$ws/a.txt"}} ]
EOF
# The servers' node processes only ("^node"): their sessions' supervisors
# carry the same words in their command lines.  And only this suite's
# (in its floor instance's session cgroups): a live session on this host
# may run the same server.
(sleep 3
 for p in $(pgrep -f "^node $M/server-everything/dist/index.js stdio"); do
     case $(sed -n 's/^0:://p' "/proc/$p/cgroup" 2>/dev/null) in
     "/$CORDON_CG/"*) kill -KILL "$p" ;;
     esac
 done) &
killer=$!
steps "$t/s2.json"
wait $killer
ok "a server killed mid-call: its call fails with -32603" \
    q "s[0]['error']['code'] == -32603 and 'everything' in s[0]['error']['message']"
ok "a server killed mid-call: the other server still answers" q "'result' in s[1]"
ok "every server's session ended cleanly (its audit log sealed), killed or not" \
    bash -c "for f in '$t'/audit[12].*.jsonl; do tail -n 1 \"\$f\" | grep -q '\"type\":\"seal\"' || { echo \"\$f not sealed\"; exit 1; }; done"

# The proxy's own log on a full filesystem (AUDIT_RESERVE in audit.c): echo
# calls with 60 KB of arguments, each recorded twice (decision, result),
# after the log's filesystem was filled.  The log goes down when it cannot
# renew its reserve; the proxy forwards nothing more and stops, saying why.
# (A server's session whose log had no room would not start at all.)
if mkdir "$t/full" && mount -t tmpfs -o size=32m cordon-mcp-full "$t/full"; then
    python3 -c "
import json
print(json.dumps([{'op': 'call', 'name': 'everything.echo',
                   'args': {'message': 'c' * 60000 + str(i)}} for i in range(40)]))" >"$t/full.json"
    MCP_TEST_SECRET=$secret node "$t/mcp/client.mjs" "$t/full.json" -- "${proxy[@]}" \
        "$t/full/audit.jsonl" >"$t/out.json" 2>"$t/full.err" & client=$!
    # Filled once the proxy and its four servers' sessions have their logs
    # (beside the proxy's) and reserves: before the first call.
    for _ in $(seq 200); do
        [ "$(ls "$t/full" | wc -l)" -ge 5 ] && break
        sleep 0.05
    done
    dd if=/dev/zero of="$t/full/fill" bs=65536 2>/dev/null
    wait $client
    answered=$(python3 -c "
import json; s = json.load(open('$t/out.json'))['steps']
n = 0
while n < len(s) and 'result' in s[n]: n += 1
print(n if all('error' in x for x in s[n:]) else -1)")
    results=$(grep -c '"what":"result"' "$t/full/audit.jsonl")
    ok "full log: calls answered, then none ($answered of 40)" \
        test "$answered" -ge 5 -a "$answered" -lt 40
    ok "  every answer is on record, but the last at most ($results recorded)" \
        test "$results" -le "$answered" -a "$results" -ge $((answered - 1))
    ok "  the proxy said why it stopped" \
        grep -qF 'mcp-proxy: stopped: the audit log cannot keep its records (No space left on device)' "$t/full.err"
    ok "  its log verifies, sealed, and says why it went down" went_down "$t/full/audit.jsonl"
    umount "$t/full"
fi

# Raw bytes: what an SDK never sends.
raw() {  # raw LINES...: send these lines (then wait for the answers)
    run=$((run + 1))
    { printf '%s\n' "$@"; sleep 1; } | "${proxy[@]}" "$t/audit$run.jsonl" 2>/dev/null >"$t/raw.out"
}
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}'
big=$(head -c $((5 << 20)) /dev/zero | tr '\0' 'a')
raw "$init" '{"jsonrpc":"2.0","id":2,' '[1,2]' '"str"' '{"jsonrpc":"1.0","id":3,"method":"ping"}' \
    '{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}' '{"jsonrpc":"2.0","id":4,"method":"nope/nope"}' \
    '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":[1]}' \
    '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":7}}' \
    "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\",\"params\":{\"x\":\"$big\"}}" \
    '{"jsonrpc":"2.0","id":8,"method":"ping"}' '{"jsonrpc":"2.0","id":9,"id":10,"method":"ping"}' \
    $'{"jsonrpc":"2.0","id":11,"i\\ude0\xd5\x9b":1}'
rq() { python3 -c "import json,sys; L=[json.loads(l) for l in open('$t/raw.out')]; sys.exit(0 if ($1) else 1)"; }
ok "raw: malformed JSON: -32700" rq "any(m.get('error',{}).get('code') == -32700 for m in L)"
ok "raw: a batch: -32600" rq "any(m.get('error',{}).get('code') == -32600 and 'batch' in m['error']['message'] for m in L)"
ok "raw: wrong jsonrpc version: -32600 with its id" rq "any(m.get('id') == 3 and m['error']['code'] == -32600 for m in L)"
ok "raw: an object as id: -32600" rq "sum(1 for m in L if m.get('error',{}).get('code') == -32600) >= 4"
ok "raw: unknown method: -32601" rq "any(m.get('id') == 4 and m['error']['code'] == -32601 for m in L)"
ok "raw: params not an object: -32602" rq "any(m.get('id') == 5 and m['error']['code'] == -32602 for m in L)"
ok "raw: tools/call with a non-string name: -32602" rq "any(m.get('id') == 6 and m['error']['code'] == -32602 for m in L)"
ok "raw: an oversized message: -32600, and it is not answered as a ping" \
    rq "any('over' in m.get('error',{}).get('message','') for m in L) and not any(m.get('id') == 7 for m in L)"
ok "raw: the next message after it is served" rq "any(m.get('id') == 8 and m.get('result') == {} for m in L)"
ok "raw: duplicate keys: -32700" rq "sum(1 for m in L if m.get('error',{}).get('code') == -32700) >= 2"
ok "raw: malformed, not UTF-8 near the error (found by the fuzzer): -32700 all the same" \
    rq "sum(1 for m in L if m.get('error',{}).get('code') == -32700) >= 3"

# --listen: clients come and go.  The proxy counted every client it had ever
# accepted against its limit of 64 at once, so the 65th connection of a
# session was never accepted (an agent that starts a bridge per call lost
# its tools).  70 connections one after another, then 64 at once and one
# more, which waits until one of them leaves.
"${proxy[@]}" "$t/listen.jsonl" --listen "$t/l.sock" 2>"$t/listen.err" & lproxy=$!
for _ in $(seq 100); do [ -S "$t/l.sock" ] && break; sleep 0.05; done
o=$(python3 - "$t/l.sock" <<'PY'
import socket, sys, time
init = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"n","version":"1"}}}\n'
def conn():
    # A full backlog answers a Unix connect with EAGAIN: retry for 5 s.
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(5)
    for _ in range(500):
        try:
            s.connect(sys.argv[1])
            return s
        except BlockingIOError:
            time.sleep(0.01)
    raise TimeoutError('connect: the backlog stayed full')
def ping(s, i):
    s.sendall(init + b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' % (i + 2))
    got = b''
    try:
        while b'"id":%d' % (i + 2) not in got:
            b = s.recv(65536)
            if not b:
                break
            got += b
    except OSError:
        pass
    return b'"id":%d,"result":{}' % (i + 2) in got.replace(b' ', b'')
served = 0
for i in range(70):
    s = conn()
    served += ping(s, i)
    s.close()
print('one after another:', served)
held = [conn() for _ in range(64)]
print('64 at once:', sum(ping(s, 100 + i) for i, s in enumerate(held)))
extra = conn()
extra.settimeout(1)
print('the 65th while they stay:', ping(extra, 500))
held.pop().close()
extra.settimeout(5)
print('the 65th once one left:', ping(extra, 501))
PY
)
kill $lproxy; wait $lproxy 2>/dev/null
ok "--listen: 70 clients one after another, each served ($(echo $o))" grep -q 'one after another: 70' <<<"$o"
ok "  64 at once, each served" grep -q '64 at once: 64' <<<"$o"
ok "  a 65th waits while they stay, and is served once one leaves" \
    grep -q "the 65th while they stay: False the 65th once one left: True" <<<"$(echo $o)"

# cordon run --mcp: the SDK client is the agent, inside the session, reaching
# the session's proxy through `cordon mcp-bridge` (the one socket its floor
# grants).  An escalated write_file waits for `cordon approve` (then the
# server, whose profile here may write the workspace, does it) or `cordon
# deny` (the client sees -32001 and the server never hears of it).
python3 - "$t/policy.json" "$t/mcp" >"$t/run-policy.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["name"] = "mcp-run-test"
p["rules"] = [
    {"name": "workspace", "decision": "allow", "fs": {"paths": ["${WORKSPACE}"], "rights": ["all"]}},
    {"name": "tmp", "decision": "allow", "fs": {"paths": ["/tmp"], "rights": ["all"]}},
    {"name": "system", "decision": "allow",
     "fs": {"paths": ["/usr", "/bin", "/lib", "/lib64", "/etc", "/proc", "/sys", sys.argv[2]], "rights": ["read", "exec"]}},
    {"name": "devices", "decision": "allow",
     "fs": {"paths": ["/dev/null", "/dev/urandom", "/dev/pts", "/dev/ptmx", "/dev/tty"], "rights": ["read", "write"]}},
] + p["rules"]
print(json.dumps(p, indent=1))
PY
python3 - "$t/server-profile.json" >"$t/writer-profile.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["name"] = "mcp-test-writer"
p["rules"].append({"name": "roots-write", "decision": "allow",
                   "fs": {"paths": ["${WORKSPACE}"], "rights": ["write", "create"]}})
print(json.dumps(p, indent=1))
PY
cat >"$t/run-servers.json" <<EOF
{ "servers": {
    "filesystem": { "command": ["node", "$M/server-filesystem/dist/index.js", "\${WORKSPACE}"],
                    "profile": "$t/writer-profile.json" } } }
EOF
cp "$cordon" "$ws/cordon"
cat >"$ws/run-steps.json" <<EOF
[ {"op": "list"},
  {"op": "call", "name": "filesystem.read_text_file", "args": {"path": "$ws/a.txt"}},
  {"op": "call", "name": "filesystem.write_file", "args": {"path": "$ws/approved.txt", "content": "approved by a human"}},
  {"op": "call", "name": "filesystem.write_file", "args": {"path": "$ws/denied.txt", "content": "never"}},
  {"op": "call", "name": "filesystem.read_text_file", "args": {"path": "/etc/passwd"}} ]
EOF
chmod 0644 "$t"/run-*.json "$t/writer-profile.json" "$ws/run-steps.json"
chmod 0755 "$ws/cordon"
chown -R "$AGENT" "$ws"
( id=$(pending_id 20) && "$cordon" pending >"$t/pending.txt" && "$cordon" approve "$id" >/dev/null &&
  sleep 0.5 && id=$(pending_id 20) && "$cordon" deny "$id" >/dev/null ) &
approver=$!
"$cordon" run -q --user "$AGENT" --workspace "$ws" --policy "$t/run-policy.json" --approve socket \
    --mcp "$t/run-servers.json" --audit "$t/run-audit.jsonl" -- \
    node "$t/mcp/client.mjs" "$ws/run-steps.json" -- "$ws/cordon" mcp-bridge >"$t/out.json" 2>"$t/run-err.txt"
rc=$?
wait $approver
ok "run --mcp: the SDK client in the session talked to the proxy through the bridge (rc=$rc)" \
    q "'filesystem.write_file' in s[0]['tools'] and 'hello from the workspace' in s[1]['result']['content'][0]['text']"
ok "run --mcp: the escalated write was listed by cordon pending" grep -q "MCP tool write_file on server filesystem" "$t/pending.txt"
ok "run --mcp: approved by cordon approve, the server wrote the file" \
    q "'result' in s[2] and not s[2]['result'].get('isError')"
ok "run --mcp:   the file is there" grep -qx 'approved by a human' "$ws/approved.txt"
ok "run --mcp: denied by cordon deny: JSON-RPC -32001 from the approver" \
    q "s[3]['error']['code'] == -32001 and s[3]['error']['data']['decision'] == 'deny' and s[3]['error']['data']['rule'] == 'fs-write'"
ok "run --mcp: the denied write never happened" test ! -e "$ws/denied.txt"
ok "run --mcp: a call outside the policy is still refused (-32001)" q "s[4]['error']['code'] == -32001"
ok "run --mcp: the session's log has the held call" grep -q '"outcome":"held for the session.s approver"' "$t/run-audit.jsonl"
ok "run --mcp:   the approval, with its approver" \
    bash -c "grep '\"decision\":\"allow\"' '$t/run-audit.jsonl' | grep '\"tool\":\"write_file\"' | grep -q '\"approver\":\"socket'"
ok "run --mcp:   the denial, with its approver" \
    bash -c "grep '\"decision\":\"deny\"' '$t/run-audit.jsonl' | grep '\"tool\":\"write_file\"' | grep -q '\"approver\":\"socket'"
ok "run --mcp:   the results" grep -q '"what":"result"' "$t/run-audit.jsonl"
ok "run --mcp: the session's log verifies" "$cordon" audit verify --key-dir "$CORDON_AUDIT_KEY_DIR" "$t/run-audit.jsonl"
ok "run --mcp: the server ran in a session of its own (its log beside the session's)" \
    test -s "$t/run-audit.filesystem.jsonl"

# A constitution as the proxy's policy (policy/english/): the call its
# sentence allows passes, the one no sentence allows is refused by the same
# evaluator, and a refusal names the sentence.
cat >"$t/policy.en" <<'EOF'
The agent may call filesystem.read_text_file when path is within the workspace and head and tail may be anything.
Never call filesystem.list_directory when path may be anything.
EOF
chmod 0644 "$t/policy.en"
proxy=("$cordon" mcp-proxy --user "$AGENT" --workspace "$ws" --policy "$t/policy.en"
       --servers "$t/servers.json" --audit)
cat >"$t/s_en.json" <<EOF
[ {"op": "call", "name": "filesystem.read_text_file", "args": {"path": "$ws/a.txt"}},
  {"op": "call", "name": "filesystem.read_text_file", "args": {"path": "/etc/passwd"}},
  {"op": "call", "name": "filesystem.list_directory", "args": {"path": "$ws"}} ]
EOF
steps "$t/s_en.json"
ok "constitution: the call its sentence allows returns the file" \
    q "'hello from the workspace' in s[0]['result']['content'][0]['text']"
ok "constitution: a path outside the sentence's workspace is refused (-32001)" \
    q "s[1]['error']['code'] == -32001"
ok "constitution: the call a sentence forbids is refused, naming it (policy.en:2)" \
    q "s[2]['error']['code'] == -32001 and s[2]['error']['data']['rule'] == 'policy.en:2'"

# Bad configuration: the error names FILE:LINE:COL, exit 125.
printf '{ "servers": {\n  "a.b": { "command": ["x"] } } }\n' >"$t/bad1.json"
printf '{ "servers": {\n  "a": { "command": ["x"], "rots": [] } } }\n' >"$t/bad2.json"
printf '{ "servers": {\n  "a": { "command": [] } } }\n' >"$t/bad3.json"
for b in bad1 bad2 bad3; do
    err=$("$cordon" mcp-proxy --user "$AGENT" --servers "$t/$b.json" </dev/null 2>&1 >/dev/null)
    rc=$?
    ok "bad servers file $b: exit 125 and FILE:LINE:COL ($err)" \
        bash -c "[ $rc -eq 125 ] && grep -qE '^$t/$b.json:2:[0-9]+: error: ' <<<'$err'"
done
done_testing
