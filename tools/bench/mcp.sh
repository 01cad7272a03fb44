#!/bin/bash
# cordon mcp-proxy (runs on the host), against the same client talking to the
# same server directly, one run:
#   - added latency per tools/call: the official SDK client (tests/mcp/bench.mjs)
#     calling server-everything's echo tool, directly and through the proxy,
#     alternated over several rounds; medians of the rounds' medians; target
#     <= 200 us added.  Through the proxy the server runs in a `cordon run`
#     session of its own, so a second baseline runs the server in `cordon run`
#     alone (same profile, no proxy): the proxy's own share is the difference;
#   - the proxy's RSS with 5 servers up (each in its own session), the proxy
#     process alone: target <= 10 MiB.
# Needs root (sessions) and node; tools/mcp-deps installs the SDK and servers.
#   MCP_BENCH_N (calls a run, 1000) and MCP_BENCH_ROUNDS (5) override.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
: "${BUILD:=$here/build}"       # tools/bench/run sets it; alone, the default build
. "$here/tools/bench/lib.sh"
. "$here/tests/lib.sh" >/dev/null
cordon=$BUILD/cordon

echo "## cordon mcp-proxy"
echo
if [ "$(id -u)" -ne 0 ]; then
    echo "skipped: needs root"
    exit 0
fi
if ! command -v node >/dev/null; then
    echo "skipped: needs node (the MCP SDK client and servers)"
    exit 0
fi
if ! "$here/tools/mcp-deps"; then
    echo "skipped: tools/mcp-deps failed"
    exit 0
fi
. "$here/tests/lib_run.sh"
agent_user || { echo "skipped: no unprivileged user"; exit 0; }
export CORDON_AUDIT_KEY_DIR=/var/cordon-test-keys

t=$(mktemp -d /var/cordon-bench-mcp.XXXXXX)
chmod 0755 "$t"
idle=
trap 'exec 8>&- 2>/dev/null; [ -z "$idle" ] || { kill $idle 2>/dev/null; wait $idle 2>/dev/null; }; rm -rf "$t"' EXIT
. "$here/tests/lib_mcp.sh"
mcp_fixture "$t" || { echo "skipped: the MCP fixture could not be made"; exit 0; }
srv_js=$M/server-everything/dist/index.js
ws=$t/ws
mkdir -p "$ws"
chmod 0755 "$ws"

cat >"$t/policy.json" <<'EOF'
{ "cordon_policy": 1, "name": "mcp-bench",
  "rules": [
    { "name": "echo", "decision": "allow",
      "tool": { "name": "everything.echo", "args": { "message": { "any": true } } } },
    { "name": "echo-any", "decision": "allow",
      "tool": { "name": "*.echo", "args": { "message": { "any": true } } } } ] }
EOF
cat >"$t/servers.json" <<EOF
{ "servers": {
    "everything": { "command": ["node", "$srv_js", "stdio"], "profile": "$t/server-profile.json" } } }
EOF
python3 - "$srv_js" "$t/server-profile.json" >"$t/servers5.json" <<'EOF'
import json, sys
print(json.dumps({"servers": {f"s{i}": {"command": ["node", sys.argv[1], "stdio"], "profile": sys.argv[2]}
                              for i in range(1, 6)}}, indent=1))
EOF
chmod 0644 "$t"/*.json

"$cordon" floor load >/dev/null 2>&1   # pinned where BPF LSM works (elsewhere: fallback)
posture=$("$cordon" doctor --json 2>/dev/null | sed -n 's/.*"posture": "\(.*\)".*/\1/p')

N=${MCP_BENCH_N:-1000}
R=${MCP_BENCH_ROUNDS:-5}
run=0
# bench KIND TOOL CMD...: one bench.mjs run of N calls; "median p10 p90" (us)
# appended to $t/KIND, nothing on failure (its stderr kept in $t/KIND.err).
bench() {
    local kind=$1 tool=$2 out
    shift 2
    if out=$(node "$t/mcp/bench.mjs" "$N" "$tool" '{"message":"hello"}' -- "$@" 2>>"$t/$kind.err") &&
        [ -n "$out" ]; then
        echo "$out" >>"$t/$kind"
    else
        echo "bench: a $kind run failed" >&2
    fi
}
direct() { bench direct echo node "$srv_js" stdio; }
sandboxed() {
    run=$((run + 1))
    bench sandboxed echo "$cordon" run -q --user "$AGENT" --workspace "$ws" \
        --policy "$t/server-profile.json" --approve deny --audit "$t/run$run.jsonl" \
        -- node "$srv_js" stdio
}
proxied() {
    run=$((run + 1))
    bench proxy everything.echo "$cordon" mcp-proxy --user "$AGENT" --workspace "$ws" \
        --policy "$t/policy.json" --servers "$t/servers.json" --audit "$t/proxy$run.jsonl"
}
: >"$t/direct"; : >"$t/sandboxed"; : >"$t/proxy"
for ((r = 0; r < R; r++)); do
    # Rotate the order, so no kind always runs first (or after the same one).
    case $((r % 3)) in
    0) direct; sandboxed; proxied ;;
    1) sandboxed; proxied; direct ;;
    2) proxied; direct; sandboxed ;;
    esac
done
# col KIND FIELD: median over the rounds of that field (1 median, 2 p10, 3 p90).
col() { awk -v f="$2" '{ print $f }' "$t/$1" | median | awk '{ printf "%.0f\n", $1 }'; }
runs() { wc -l <"$t/$1"; }
cell() {  # cell KIND: "MED us (P10 - P90)", or why not
    if [ "$(runs "$1")" -eq 0 ]; then
        echo "failed"
    else
        echo "$(col "$1" 1) us ($(col "$1" 2) - $(col "$1" 3))"
    fi
}
added() {  # added A B: A - B in us
    if [ "$(runs "$1")" -eq 0 ] || [ "$(runs "$2")" -eq 0 ]; then echo "n/a"; return; fi
    awk -v a="$(col "$1" 1)" -v b="$(col "$2" 1)" 'BEGIN { printf "%.0f us\n", a - b }'
}
echo "Posture: ${posture:-unknown}.  Sequential \`tools/call\` round trips of server-everything's"
echo "\`echo\` tool from the official TypeScript SDK client (tests/mcp/bench.mjs: 50 warm-up"
echo "calls, then $N timed), $R rounds, the three ways alternated within each round; each"
echo "cell is the median of the rounds' medians (p10 - p90 likewise), in microseconds."
echo
row "\`tools/call\` echo" "direct: median (p10 - p90)" "through the proxy" "added" "target"
row "---" "---" "---" "---" "---"
row "server unconfined" "$(cell direct)" "$(cell proxy)" "$(added proxy direct)" "<= 200 us added"
row "server in \`cordon run\` alone (the proxy's own share)" "$(cell sandboxed)" "$(cell proxy)" \
    "$(added proxy sandboxed)" ""
echo
echo "Through the proxy, the server itself runs in a \`cordon run\` session of its own (the"
echo "${posture:-current} posture here), so \"added\" over the unconfined server counts that session's"
echo "cost on the server's own syscalls too; the second row runs the same server in"
echo "\`cordon run\` with the same profile and no proxy, which leaves the proxy's share: the"
echo "extra pipe hop each way, parsing, the policy's judgment, the audit record and the scrub."
list() { awk '{ printf "%s%s", (NR > 1 ? ", " : ""), $1 }' "$t/$1"; }
echo "Each run's median, in run order (us): direct $(list direct); in \`cordon run\`" \
     "$(list sandboxed); through the proxy $(list proxy)."
for k in direct sandboxed proxy; do
    if [ "$(runs $k)" -lt "$R" ]; then
        echo "$((R - $(runs $k))) of the $R $k runs failed; the last lines of their stderr:"
        tail -n 5 "$t/$k.err" | sed 's/^/    /'
    fi
done

# The proxy's memory with 5 servers up: a client initializes, lists the
# tools, calls each server's echo once, prints the proxy's pid and what it
# saw, then idles (the proxy with it) until its stdin closes.
cat >"$t/idle.py" <<'EOF'
import json, subprocess, sys
p = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def send(m):
    p.stdin.write((json.dumps(dict(jsonrpc="2.0", **m)) + "\n").encode())
    p.stdin.flush()
def answer(i):
    for line in p.stdout:
        m = json.loads(line)
        if m.get("id") == i:
            return m
    sys.exit("the proxy closed its stdout")
send(dict(id=1, method="initialize", params=dict(protocolVersion="2025-06-18", capabilities={},
                                                 clientInfo=dict(name="cordon-bench", version="1"))))
answer(1)
send(dict(method="notifications/initialized"))
send(dict(id=2, method="tools/list"))
tools = [t["name"] for t in answer(2)["result"]["tools"]]
servers = sorted({n.split(".")[0] for n in tools})
ok = 0
for i, s in enumerate(servers):
    send(dict(id=10 + i, method="tools/call", params=dict(name=s + ".echo", arguments=dict(message="hello"))))
    ok += "result" in answer(10 + i)
print(p.pid, len(servers), len(tools), ok, flush=True)
sys.stdin.read()
p.stdin.close()
p.wait()
EOF
mkfifo "$t/hold"
python3 "$t/idle.py" "$cordon" mcp-proxy --user "$AGENT" --workspace "$ws" --policy "$t/policy.json" \
    --servers "$t/servers5.json" --audit "$t/rss.jsonl" <"$t/hold" >"$t/rss.out" 2>"$t/rss.err" &
idle=$!
exec 8>"$t/hold"
for _ in $(seq 600); do [ -s "$t/rss.out" ] && break; kill -0 $idle 2>/dev/null || break; sleep 0.1; done
read -r pid nsrv ntools ncalls <"$t/rss.out" || pid=
echo
if [ -n "$pid" ] && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q ' mcp-proxy '; then
    sleep 1     # settle: the servers' late notifications, the proxy's buffers
    rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$pid/status")
    hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$pid/status")
    pss=$(awk '/^Pss:/ { print $2 }' "/proc/$pid/smaps_rollup")
    mib() { awk -v k="$1" 'BEGIN { printf "%.1f MiB", k / 1024 }'; }
    row "\`cordon mcp-proxy\` with 5 servers" "RSS" "PSS" "peak RSS" "target"
    row "---" "---" "---" "---" "---"
    row "the proxy process ($nsrv/5 servers up, $ntools tools, $ncalls/$nsrv echo calls answered)" \
        "$(mib "$rss")" "$(mib "$pss")" "$(mib "$hwm")" "<= 10 MiB"
    echo
    echo "Five server-everything entries (s1..s5) over stdio, each in a \`cordon run\` session"
    echo "of its own; the proxy process alone (VmRSS and VmHWM from /proc/PID/status, Pss from"
    echo "smaps_rollup: RSS counts shared library pages, PSS shares them out), not the servers"
    echo "or their supervisors, read while the client idles with the servers up."
else
    echo "proxy RSS: the proxy did not come up with its servers; its stderr:"
    tail -n 5 "$t/rss.err" | sed 's/^/    /'
fi
exec 8>&-
wait $idle 2>/dev/null
idle=
