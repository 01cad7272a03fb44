#!/bin/bash
# [7/8] The credential proxy in `cordon run` sessions, with real clients and
# real TLS: a local upstream (tests/net/upstream.py, a test CA's certificate
# for "localhost") records what it receives.  From inside a session, curl,
# python3 (urllib, http.client) and node (undici's fetch through its
# ProxyAgent: Node 20's built-in fetch ignores HTTPS_PROXY) call the
# credential host through the session's proxy; the upstream receives the
# real key, the sandbox never sees it (environment, /proc, files,
# responses, the audit log); endpoints off the allowlist, other sentinels,
# an SNI mismatch, a host no rule names and clients outside the session
# are refused; streaming arrives incrementally; escalated requests wait for
# the session's approver; the token budget is read from responses' usage.
# The same with the agent as root in the sandbox.
#
# The upstream's certificate is trusted by cordon through SSL_CERT_FILE in
# cordon's own environment (OpenSSL's default verify paths honour it): the
# system store, as in production, pointed at the test CA.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/tests/lib.sh"
. "$here/tests/lib_run.sh"
. "$here/tests/lib_net.sh"
net_needs
[ "$(id -u)" -eq 0 ] || skip_all "needs root (cordon run)"
agent_user || skip_all "needs an agent user"

t=$(mktemp -d /var/cordon-cred.XXXXXX)
pids=
trap 'kill $pids 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$t"' EXIT
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY no_proxy NO_PROXY ALL_PROXY all_proxy

# The test CA, and the upstream serving localhost's certificate.
net_upstream "$t"

# The real key: random, so that finding it anywhere means it leaked.
REAL=sk-test-$(head -c 18 /dev/urandom | base64 | tr '+/' '-_')
export REAL_KEY=$REAL
nm=$here/tests/mcp/node_modules
have_node=
command -v node >/dev/null && [ -d "$nm/undici" ] && have_node=1

policy() {  # policy FILE [EXTRA_RULES_JSON] [BUDGETS_JSON]
    budgets=
    [ -z "${3:-}" ] || budgets=", \"budgets\": $3"
    cat >"$1" <<EOF
{ "cordon_policy": 1, "name": "cred-test",
  "rules": [
    { "name": "system", "decision": "allow",
      "fs": { "paths": ["/usr", "/bin", "/lib", "/lib64", "/etc", "/proc", "/sys", "$here/tests/net", "$nm"], "rights": ["read", "exec"] } },
    { "name": "devices", "decision": "allow", "fs": { "paths": ["/dev/null", "/dev/urandom"], "rights": ["read", "write"] } },
    { "name": "tmp", "decision": "allow", "fs": { "paths": ["/tmp", "\${WORKSPACE}"], "rights": ["all"] } },
    { "name": "api", "decision": "allow",
      "net": { "hosts": ["localhost"], "ports": [$up], "via": "credential-proxy" } },
    { "name": "api-address", "decision": "allow", "description": "loopback, listed for the test",
      "net": { "hosts": ["127.0.0.1"], "ports": [$up], "via": "credential-proxy" } }${2:+,
    $2}
  ],
  "credentials": [
    { "name": "test-llm", "env": "TEST_API_KEY", "source": { "env": "REAL_KEY" },
      "hosts": ["localhost"], "header": "x-api-key", "server_tools": ["web_search_2"],
      "endpoints": ["POST /v1/messages", "POST /v1/responses", "GET /v1/echo-key", "GET /v1/echo-chunked",
                     "GET /v1/echo-gzip-ce", "GET /v1/echo-gzip-te", "GET /v1/echo-key-ce"] }
  ]$budgets }
EOF
    chmod 0644 "$1"
}
chmod 0755 "$t"
policy "$t/policy.json"
U=https://localhost:$up

ws=$(mktemp -d /var/cordon-cred-ws.XXXXXX); chown "$AGENT" "$ws"; chmod 0755 "$ws"
# The agent's script: everything it tries, one line each.
cat >"$ws/agent.sh" <<EOF
#!/bin/sh
U=$U
echo "sentinel=\$TEST_API_KEY"
echo "bundle=\$SSL_CERT_FILE \$NODE_EXTRA_CA_CERTS \$REQUESTS_CA_BUNDLE \$CURL_CA_BUNDLE"
echo "curl: \$(curl -sS -H "x-api-key: \$TEST_API_KEY" -H 'content-type: application/json' -d '{"from":"curl"}' \$U/v1/messages)"
echo "urllib: \$($py -c '
import os, urllib.request
r = urllib.request.Request(os.environ["U"] + "/v1/messages", data=b"{\"from\":\"urllib\"}",
                           headers={"x-api-key": os.environ["TEST_API_KEY"]})
print(urllib.request.urlopen(r).read().decode())' 2>&1)"
echo "http.client: \$($py -c '
import http.client, os, ssl
p = os.environ["HTTPS_PROXY"].rsplit(":", 1)
c = http.client.HTTPSConnection("127.0.0.1", int(p[1]), context=ssl.create_default_context())
c.set_tunnel("localhost", $up)
for w in ("hc1", "hc2"):
    c.request("POST", "/v1/messages", body="{\"from\":\"%s\"}" % w, headers={"x-api-key": os.environ["TEST_API_KEY"]})
    print(c.getresponse().read().decode(), end=" ")' 2>&1)"
if [ -n "$have_node" ]; then
echo "node: \$(node -e '
const { fetch, ProxyAgent } = require("$nm/undici");
fetch(process.env.U + "/v1/messages", { method: "POST", body: JSON.stringify({ from: "node" }),
  headers: { "x-api-key": process.env.TEST_API_KEY }, dispatcher: new ProxyAgent(process.env.HTTPS_PROXY) })
  .then(r => r.text()).then(t => console.log(t), e => console.log("error " + e.cause));' 2>&1)"
fi
echo "echo: \$(curl -sS -i -H "x-api-key: \$TEST_API_KEY" \$U/v1/echo-key | tr -d '\r' | tr '\n' ' ')"
echo "chunked: \$(curl -sS -H "x-api-key: \$TEST_API_KEY" \$U/v1/echo-chunked)"
for e in gzip-ce gzip-te key-ce; do
    echo "\$e: \$(curl -sS -H "x-api-key: \$TEST_API_KEY" \$U/v1/echo-\$e | tr -cd '[:print:]')"
done
# Tools the provider would run for the agent, reaching hosts no rule names.
for b in 'fetch:{"tools":[{"type":"web_fetch_20250910","name":"web_fetch"}],"from":"tool-fetch"}' \
         'mcp:{"mcp_servers":[{"type":"url","url":"https://x.test/?d=1"}],"from":"tool-mcp"}' \
         'escaped:{"t\u006fols":[{"type":"mcp","server_url":"https://x.test"}],"from":"tool-esc"}' \
         'twice:{"tools":[],"tools":[{"type":"mcp"}],"from":"tool-twice"}' \
         'client:{"tools":[{"name":"get","input_schema":{}}],"from":"tool-client"}' \
         'search:{"tools":[{"type":"web_search_20250305","name":"web_search"}],"from":"tool-search"}'; do
    echo "tool-\${b%%:*}: \$(curl -sS -w ' status=%{http_code}' -H "x-api-key: \$TEST_API_KEY" -H 'content-type: text/plain' --data-binary "\${b#*:}" \$U/v1/messages)"
done
# Codex CLI's declarations (OpenAI's Responses API): a namespace of
# functions, a client-run tool_search, web_search on the cached index or
# live, tools in an "additional_tools" input item; and its WebSocket.
codex='{"type":"function","name":"exec_command","parameters":{}},{"type":"namespace","name":"multi_agent_v1","tools":[{"type":"function","name":"spawn_agent","parameters":{}}]},{"type":"tool_search","execution":"client","parameters":{}}'
for b in "cached:{\"tools\":[\$codex,{\"type\":\"web_search\",\"external_web_access\":false}],\"from\":\"codex-cached\"}" \
         "live:{\"tools\":[\$codex,{\"type\":\"web_search\",\"external_web_access\":true}],\"from\":\"codex-live\"}" \
         "ns:{\"tools\":[{\"type\":\"namespace\",\"name\":\"n\",\"tools\":[{\"type\":\"mcp\",\"server_url\":\"https://x.test\"}]}],\"from\":\"codex-ns\"}" \
         "input:{\"input\":[{\"type\":\"additional_tools\",\"tools\":[{\"type\":\"web_search\"}]}],\"from\":\"codex-input\"}"; do
    echo "codex-\${b%%:*}: \$(curl -sS -w ' status=%{http_code}' -H "x-api-key: \$TEST_API_KEY" -H 'content-type: application/json' --data-binary "\${b#*:}" \$U/v1/responses)"
done
echo "codex-ws: \$(curl -sS -w ' status=%{http_code}' -H "x-api-key: \$TEST_API_KEY" -H 'Connection: Upgrade' -H 'Upgrade: websocket' -H 'Sec-WebSocket-Version: 13' -H 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==' \$U/v1/responses)"
pad=\$($py -c 'print("a" * 300000)')
printf '{"from":"tool-big","pad":"%s","tools":[{"type":"mcp"}]}' "\$pad" >/tmp/big-tool.json
printf '{"from":"tool-bigok","pad":"%s"}' "\$pad" >/tmp/big-ok.json
echo "tool-big: \$(curl -sS -H "x-api-key: \$TEST_API_KEY" --data-binary @/tmp/big-tool.json \$U/v1/messages)"
echo "tool-bigok: \$(curl -sS -H "x-api-key: \$TEST_API_KEY" --data-binary @/tmp/big-ok.json \$U/v1/messages)"
echo "tool-chunked: \$(printf '%s' '{"tools":[{"type":"code_execution_20250825"}],"from":"tool-chunked"}' |
    curl -sS -H "x-api-key: \$TEST_API_KEY" -H 'Transfer-Encoding: chunked' --data-binary @- \$U/v1/messages)"
echo "endpoint: \$(curl -sS -H "x-api-key: \$TEST_API_KEY" \$U/v1/admin)"
echo "traversal: \$(curl -sS --path-as-is -H "x-api-key: \$TEST_API_KEY" \$U/v1/messages/../admin -d x)"
echo "other-sentinel: \$(curl -sS -H 'x-api-key: cordon-sentinel-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' -d x \$U/v1/messages)"
echo "no-key: \$(curl -sS -d x \$U/v1/messages)"
echo "unlisted: \$(curl -sS https://unlisted.example/ 2>&1 | tail -1)"
echo "direct: \$(curl -sS --noproxy '*' --max-time 5 \$U/v1/echo-key 2>&1 | tail -1)"
echo "sni: \$($py -c '
import os, socket, ssl
h, p = os.environ["HTTPS_PROXY"].rsplit("/", 1)[1].split(":")
s = socket.create_connection((h, int(p)))
s.sendall(b"CONNECT localhost:$up HTTP/1.1\r\nHost: localhost:$up\r\n\r\n")
s.recv(200)
try:
    ssl.create_default_context().wrap_socket(s, server_hostname="evil.example"); print("tls-up")
except Exception as e:
    print("refused", type(e).__name__)' 2>&1)"
# Head and body in one TLS record, the body a copy of the head up to the
# x-check value, then CR LF, a blank line and a second request: the head
# must go upstream as parsed, the body as the body, and nothing else.
echo "smuggle: \$($py -c '
import os, socket, ssl
h, p = os.environ["HTTPS_PROXY"].rsplit("/", 1)[1].split(":")
s = socket.create_connection((h, int(p)))
s.sendall(b"CONNECT localhost:$up HTTP/1.1\r\nHost: localhost:$up\r\n\r\n")
s.recv(200)
t = ssl.create_default_context().wrap_socket(s, server_hostname="localhost")
head = (b"POST /v1/messages HTTP/1.1\r\nHost: localhost:$up\r\nx-api-key: " + os.environ["TEST_API_KEY"].encode() +
        b"\r\nx-check: smugglecheck" + b"P" * 64 + b"\r\nContent-Length: 1000\r\n\r\n")
at = head.index(b"smugglecheck")
body = (head[:at] + b"x\r\nContent-Length: 0\r\n\r\nDELETE /v1/smuggled HTTP/1.1\r\nHost: localhost:$up\r\nx-eat: ").ljust(1000, b"a")
t.sendall(head + body)
print(t.recv(4096).split(b"\r\n")[0].decode())' 2>&1)"
curl -sS -N -H "x-api-key: \$TEST_API_KEY" -d '{"stream": true}' \$U/v1/messages | while IFS= read -r l; do
    case \$l in data:*) echo "stream \$($py -c 'import time; print("%.3f" % time.time())')" ;; esac
done
# Everything of other processes the agent can read, for the harness to search.
cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline >/tmp/proc-dump 2>/dev/null
env >>/tmp/proc-dump
cp /tmp/proc-dump "\$PWD/proc-dump" 2>/dev/null
EOF
chmod 0755 "$ws/agent.sh"

session() {  # session USER LOG: the agent script in a session
    SSL_CERT_FILE=$t/ca.pem U=$U "$cordon" run -q --user "$1" --workspace "$ws" \
        --policy "$t/policy.json" --audit "$2" --approve deny -- env U="$U" "$ws/agent.sh" \
        2>"$2.err" </dev/null
}
o=$(session "$AGENT" "$t/run.jsonl")
line() { grep "^$1: " <<<"$o" | head -1; }
# got_key FROM: the upstream got a request whose body says {"from": FROM}, with the real key.
got_key() {
    $py - "$t/requests.jsonl" "$1" "$REAL" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    try:
        b = json.loads(r["body"])
    except ValueError:
        continue
    if isinstance(b, dict) and b.get("from") == sys.argv[2] and r["headers"].get("x-api-key") == sys.argv[3] and r["tls"]:
        sys.exit(0)
sys.exit(1)
PY
}
# no_leak: the agent's dump of what it could read, and its output, lack the real key.
no_leak() { [ -s "$ws/proc-dump" ] && ! grep -qF -- "$REAL" "$ws/proc-dump" "$t/agent.out"; }

sentinel=$(grep '^sentinel=' <<<"$o" | cut -d= -f2)
ok "the agent's variable holds a sentinel ($sentinel)" \
    bash -c "[[ '$sentinel' =~ ^cordon-sentinel-[A-Za-z0-9_-]{32}\$ ]]"
ok "  the CA bundle in SSL_CERT_FILE, NODE_EXTRA_CA_CERTS, REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE" \
    bash -c "grep -qE '^bundle=(/run/cordon-ca/[^ ]+\\.pem)( \\1){3}\$' <<<'$(grep '^bundle=' <<<"$o")'"
ok "curl: the credential host answers through the proxy ($(line curl | cut -c1-60))" \
    grep -q '"usage"' <<<"$(line curl)"
ok "  the upstream received the real key, over TLS" got_key curl
ok "python3 urllib: answered" grep -q '"usage"' <<<"$(line urllib)"
ok "  the upstream received the real key" got_key urllib
ok "python3 http.client: two requests on one kept-alive tunnel" \
    bash -c "[ \"\$(grep -o '\"usage\"' <<<'$(line http.client)' | wc -l)\" = 2 ]"
both_hc() { got_key hc1 && got_key hc2; }
ok "  both reached the upstream with the real key" both_hc
if [ -n "$have_node" ]; then
    ok "node fetch (undici ProxyAgent): answered ($(line node | cut -c1-60))" grep -q '"usage"' <<<"$(line node)"
    ok "  the upstream received the real key" got_key node
else
    ok "node fetch: node and tests/mcp/node_modules/undici are installed (make deps)" false
fi
ok "a response echoing the key comes back scrubbed, body and header" \
    bash -c "grep -q 'cordon:redacted' <<<'$(line echo)' && ! grep -q 'X-Echo: sk-' <<<'$(line echo)'"
ok "  a chunked response with the key split across chunks too ($(line chunked))" \
    grep -q '^chunked: key=\[cordon:redacted\]\**;$' <<<"$(line chunked)"
# A compressed body hides the key from the scrubber, and the agent can
# decompress it itself: however the upstream labels it, it is refused.
ok "an answer gzipped under a second Content-Encoding field: 502, not passed on" \
    grep -q 'cannot be scrubbed' <<<"$(line gzip-ce)"
ok "an answer gzipped as Transfer-Encoding: gzip, chunked: 502, not passed on" \
    grep -q 'cannot be scrubbed' <<<"$(line gzip-te)"
ok "an answer whose Content-Encoding is the key: 502, which does not quote it" \
    bash -c "grep -q 'cannot be scrubbed' <<<'$(line key-ce)' && ! grep -qF -- '$REAL' <<<'$(line key-ce)'"
# A refusal is the provider's error JSON, and 400, which no CLI retries.
ok "a tool the provider runs (web fetch): 400 naming it, in Anthropic's error shape" \
    grep -q '^tool-fetch: {"type":"error","error":{"type":"invalid_request_error","message":"cordon: the request declares the tool type \\"web_fetch_20250910\\".* status=400$' <<<"$(line tool-fetch)"
ok "  Anthropic's MCP connector: 400" grep -q 'asks for \\"mcp_servers\\".* status=400$' <<<"$(line tool-mcp)"
ok "  an MCP tool under an escaped key: 400" grep -q 'declares the tool type \\"mcp\\".* status=400$' <<<"$(line tool-escaped)"
ok "  tools given twice: 400, not guessed at" grep -q 'cannot be judged.* status=400$' <<<"$(line tool-twice)"
ok "  in a chunked body: 400" grep -q 'code_execution' <<<"$(line tool-chunked)"
ok "Codex's tools (a namespace, a client-run tool_search, web_search on the cached index) pass" \
    grep -q '"ok": true.* status=200$' <<<"$(line codex-cached)"
ok "  web_search with live access: 400 naming it, in OpenAI's error shape" \
    grep -q '^codex-live: {"error":{"message":"cordon: the request declares the tool type \\"web_search\\".*"type":"invalid_request_error","param":null,"code":"cordon_refused"}} status=400$' <<<"$(line codex-live)"
ok "  a provider-run tool inside a namespace: 400" grep -q 'tool type \\"mcp\\".* status=400$' <<<"$(line codex-ns)"
ok "  a provider-run tool in an input item (additional_tools): 400" \
    grep -q 'tool type \\"web_search\\".* status=400$' <<<"$(line codex-input)"
ok "  a WebSocket upgrade: 426 (Codex falls back to HTTPS at once), in OpenAI's shape" \
    grep -q 'not a protocol upgrade.*cordon_refused.* status=426$' <<<"$(line codex-ws)"
ok "  tools the client runs pass" grep -q '"usage"' <<<"$(line tool-client)"
ok "  a 300 KB body declaring a tool at its end: 400" grep -q 'declares the tool type \\"mcp\\"' <<<"$(line tool-big)"
big_whole() {
    grep -q '"usage"' <<<"$(line tool-bigok | cut -c1-300)" && $py - "$t/requests.jsonl" <<'PY'
import json, sys
sys.exit(0 if any(json.loads(l)["body"] == '{"from":"tool-bigok","pad":"%s"}' % ("a" * 300000)
                  for l in open(sys.argv[1])) else 1)
PY
}
ok "  and one declaring none is answered, the upstream getting it whole" big_whole
ok "  and a type the credential admits (server_tools: web_search_2, Anthropic's dated web_search)" grep -q '"usage"' <<<"$(line tool-search)"
ok "  none of the refused reached the upstream; the admitted did, with the real key" \
    bash -c "! grep -qE 'tool-(fetch|mcp|esc|twice|chunked)|codex-(live|ns|input)|Upgrade' '$t/requests.jsonl' && grep -q 'tool-client' '$t/requests.jsonl' && grep -q 'codex-cached' '$t/requests.jsonl'"
ok "an endpoint off the allowlist: 403 naming it" grep -q 'GET /v1/admin is not an endpoint' <<<"$(line endpoint)"
ok "a dot-segment path: 403" grep -q 'dot segments' <<<"$(line traversal)"
ok "another sentinel: 403" grep -q "does not hold this session's sentinel" <<<"$(line other-sentinel)"
ok "no credential header: 403" grep -q 'exactly one x-api-key header' <<<"$(line no-key)"
ok "  none of the refused requests reached the upstream" \
    bash -c "! grep -qE '/v1/admin|\"body\": \"x\"' '$t/requests.jsonl'"
# smuggled: the upstream's record of the one-record request: its head as
# sent (x-check whole), its body as sent, and no second request.
smuggled() {
    $py - "$t/requests.jsonl" <<'PY'
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
if any("smuggled" in r["path"] for r in rs):
    sys.exit("a second request reached the upstream")
m = [r for r in rs if r["headers"].get("x-check", "").startswith("smugglecheck")]
if len(m) != 1 or m[0]["headers"]["x-check"] != "smugglecheck" + "P" * 64:
    sys.exit("the head was not passed as parsed: %r" % [r["headers"] for r in m])
if len(m[0]["body"]) != 1000 or "DELETE /v1/smuggled" not in m[0]["body"]:
    sys.exit("the body was not passed as sent")
PY
}
ok "head and body in one record, the body holding CR LF and a second request: answered ($(line smuggle))" \
    grep -q '^smuggle: HTTP/1.1 200' <<<"$(line smuggle)"
ok "  the upstream got the head as parsed and the body as sent, and no second request" smuggled
ok "a host no rule names: the tunnel is refused ($(line unlisted | cut -c1-70))" \
    grep -qi '403\|tunnel failed' <<<"$(line unlisted)"
ok "around the proxy: the floor refuses the direct connect" grep -qi "couldn't connect\|failed to connect\|refused\|denied" <<<"$(line direct)"
ok "a TLS server name other than the CONNECT host: refused ($(line sni))" grep -q '^sni: refused' <<<"$(line sni)"
s1=$(grep '^stream ' <<<"$o" | head -1 | cut -d' ' -f2); s3=$(grep '^stream ' <<<"$o" | sed -n 3p | cut -d' ' -f2)
ok "a streamed (SSE) response arrives incrementally ($s1 .. $s3)" \
    $py -c "import sys; sys.exit(0 if $s3 - $s1 > 0.5 else 1)"
printf '%s\n' "$o" >"$t/agent.out"
ok "the real key is nowhere the agent could read it (environment, /proc, its output)" no_leak
ok "  nor in the session's audit log" bash -c "! grep -qF -- '$REAL' '$t/run.jsonl' '$t/run.jsonl.err'"
ok "the proxy's records are in the session's log (credential, status, tokens)" \
    bash -c "grep '\"type\":\"http\"' '$t/run.jsonl' | grep '\"credential\":\"test-llm\"' | grep -q '\"input\":25'"
ok "  and the log verifies" "$cordon" audit verify --key-dir "$CORDON_AUDIT_KEY_DIR" "$t/run.jsonl"
rm -f "$ws/proc-dump"

# --- root in the sandbox: no more reach to the key --------------------------------
o=$(session root "$t/root.jsonl")
if grep -q 'needs the full posture' "$t/root.jsonl.err"; then
    # The fallback refuses uid 0 outright (it cannot deny /proc/sysrq-trigger).
    ok "as root in the sandbox: refused in the fallback posture, which cannot hold it" true
else
    printf '%s\n' "$o" >"$t/agent.out"
    ok "as root in the sandbox: answered through the proxy" grep -q '"usage"' <<<"$(line curl)"
    ok "  and the key is still nowhere it can read" no_leak
fi
rm -f "$ws/proc-dump"

# --- --env cannot pass the secret in ------------------------------------------------
SSL_CERT_FILE=$t/ca.pem "$cordon" run -q --user "$AGENT" --workspace "$ws" --policy "$t/policy.json" \
    --env REAL_KEY -- true 2>"$t/env.err"
rc=$?
ok "--env naming a credential's source is refused (rc=$rc)" \
    bash -c "[ $rc -ne 0 ] && grep -q 'only as a sentinel' '$t/env.err'"

# --- a client outside the session ---------------------------------------------------
cat >"$ws/wait.sh" <<'EOF'
#!/bin/sh
echo "$HTTPS_PROXY" >/tmp/proxy-url; cp /tmp/proxy-url "$PWD/proxy-url"; sleep 3
EOF
chmod 0755 "$ws/wait.sh"
SSL_CERT_FILE=$t/ca.pem "$cordon" run -q --user "$AGENT" --workspace "$ws" --policy "$t/policy.json" \
    --audit "$t/out.jsonl" -- "$ws/wait.sh" 2>/dev/null </dev/null &
bg=$!
for _ in $(seq 100); do [ -s "$ws/proxy-url" ] && break; sleep 0.05; done
o=$(curl -sS -x "$(cat "$ws/proxy-url")" --cacert "$t/ca.pem" -H "x-api-key: x" "$U/v1/echo-key" 2>&1)
ok "a process outside the session is refused by the session's proxy ($(echo $o | cut -c1-50))" \
    grep -qi '403\|tunnel failed' <<<"$o"
wait $bg
ok "  and the refusal is in the session's log" grep -q 'a client outside the session' "$t/out.jsonl"

# --- escalation: a POST waits for the session's human --------------------------------
policy "$t/policy.json" '{ "name": "ask-post", "decision": "escalate", "description": "a paid call",
      "tool": { "name": "http.request", "args": { "method": { "equals": "POST" } } } }'
o=$(session "$AGENT" "$t/esc.jsonl")
ok "an escalated request, no approver: 403 not approved ($(line curl | cut -c1-70))" \
    grep -q 'not approved' <<<"$(line curl)"
ok "  held for the session's approver, in the session's log" \
    grep -q '"outcome":"held for approval"' "$t/esc.jsonl"
n0=$(grep -c '"from":"approved"' "$t/requests.jsonl")
SSL_CERT_FILE=$t/ca.pem "$cordon" run -q --user "$AGENT" --workspace "$ws" --policy "$t/policy.json" \
    --approve socket --audit "$t/appr.jsonl" -- sh -c "curl -sS -H \"x-api-key: \$TEST_API_KEY\" \
    -d '{\"from\":\"approved\"}' $U/v1/messages" >"$t/appr.out" 2>"$t/appr.err" </dev/null &
bg=$!
id=$(pending_id)
ok "an escalated request is listed by cordon pending ($id)" test -n "$id"
ok "  nothing reached the upstream while held" test "$(grep -c '"from":"approved"' "$t/requests.jsonl")" = "$n0"
ok "cordon approve lets it through" "$cordon" approve "$id"
wait $bg
ok "  the answer reached the agent" grep -q '"usage"' "$t/appr.out"
ok "  and the upstream got the real key" got_key approved

# --- the token budget ------------------------------------------------------------------
policy "$t/policy.json" "" '{ "llm_tokens": 30 }'
o=$(SSL_CERT_FILE=$t/ca.pem "$cordon" run -q --user "$AGENT" --workspace "$ws" --policy "$t/policy.json" \
    --audit "$t/budget.jsonl" -- sh -c "for i in 1 2; do curl -sS -H \"x-api-key: \$TEST_API_KEY\" \
    -d '{\"from\":\"budget\"}' $U/v1/messages; echo; done" 2>&1 </dev/null)
printf '%s\n' "$o" >"$t/budget.out"
ok "llm_tokens: the request that spends it is answered (37 tokens)" grep -q '"usage"' "$t/budget.out"
ok "  the next is refused (403), the log naming the budget" \
    bash -c "grep -q 'response 403' '$t/budget.out' && grep -q 'llm_tokens budget (30) is spent' '$t/budget.jsonl'"

# An answer that never says its usage (a stream, as OpenAI's unless asked)
# is charged by its bytes, both ways: with 300 tokens the first such
# exchange (about 1 KB) spends the budget, and the next is refused.
policy "$t/policy.json" "" '{ "llm_tokens": 300 }'
o=$(SSL_CERT_FILE=$t/ca.pem "$cordon" run -q --user "$AGENT" --workspace "$ws" --policy "$t/policy.json" \
    --audit "$t/nousage.jsonl" -- sh -c "for i in 1 2; do curl -sS -N -H \"x-api-key: \$TEST_API_KEY\" \
    -d '{\"stream\": true, \"no_usage\": true}' $U/v1/messages; echo; done" 2>&1 </dev/null)
ok "llm_tokens: a stream without usage is answered ($(grep -c "^event:" <<<"$o") events)" \
    grep -q 'content_block_delta' <<<"$o"
ok "  charged by its bytes, the record says estimated" \
    bash -c "grep '\"type\":\"http\"' '$t/nousage.jsonl' | grep -q '\"estimated\":true'"
ok "  and the next request is refused, the log naming the budget" \
    bash -c "grep -q 'response 403' <<<'$o' && grep -q 'llm_tokens budget (300) is spent' '$t/nousage.jsonl'"

# --- the request budget -----------------------------------------------------------
policy "$t/policy.json" "" '{ "egress_requests": 2 }'
o=$(SSL_CERT_FILE=$t/ca.pem "$cordon" run -q --user "$AGENT" --workspace "$ws" --policy "$t/policy.json" \
    --audit "$t/reqs.jsonl" -- sh -c "for i in 1 2 3; do curl -sS -H \"x-api-key: \$TEST_API_KEY\" \
    -d '{\"from\":\"reqs\"}' $U/v1/messages; echo; done" 2>&1 </dev/null)
ok "egress_requests 2: one CONNECT and one request inside it, then a 403 naming the budget" \
    bash -c "[ \"\$(grep -c '\"usage\"' <<<'$o')\" = 1 ] && grep -q 'egress_requests budget (2) is spent' '$t/reqs.jsonl'"

# --- the steps budget counts requests inside a tunnel ------------------------------
# One connect to the broker and one kept-alive tunnel, then 40 requests:
# each request the proxy judges is a step, as every exec and connect is.
# (Before, only the connect counted: all 40 reached the upstream.)
policy "$t/policy.json" "" '{ "steps": 15 }'
o=$(SSL_CERT_FILE=$t/ca.pem "$cordon" run -q --user "$AGENT" --workspace "$ws" --policy "$t/policy.json" \
    --audit "$t/steps.jsonl" -- $py -c '
import http.client, os, ssl
p = os.environ["HTTPS_PROXY"].rsplit(":", 1)
c = http.client.HTTPSConnection("127.0.0.1", int(p[1]), context=ssl.create_default_context())
c.set_tunnel("localhost", '"$up"')
for i in range(40):
    c.request("POST", "/v1/messages", body="{\"from\":\"steps\"}", headers={"x-api-key": os.environ["TEST_API_KEY"]})
    r = c.getresponse(); r.read(); print(r.status, flush=True)' 2>&1 </dev/null)
rc=$?
n=$(grep -c '\\"from\\": *\\"steps\\"' "$t/requests.jsonl")
ok "steps 15: a session of 40 requests in one tunnel is stopped: $n reached the upstream (rc=$rc)" \
    bash -c "[ $n -ge 1 ] && [ $n -lt 15 ] && [ $rc -ne 0 ]"
ok "  the request past it was refused, the log naming the budget" \
    bash -c "grep '\"decision\":\"deny\"' '$t/steps.jsonl' | grep '\"rule\":\"steps-budget\"' | grep -q '\"path\":\"/v1/messages\"'"
ok "  and the session says it stopped for it" grep -q 'steps budget spent' <<<"$o"

# --- the host side keeps no copy it does not need ------------------------------------
# cordon run inherits the real key in its environment; once its broker has
# taken its own copy, the supervisor's is wiped (its /proc/PID/environ, a
# core dump), and the broker wiped the block it inherited.
policy "$t/policy.json"
SSL_CERT_FILE=$t/ca.pem "$cordon" run -q --user "$AGENT" --workspace "$ws" --policy "$t/policy.json" \
    -- sleep 5 >/dev/null 2>&1 </dev/null & sup=$!
# Until the session is whole: first its broker (the supervisor's child
# running `cordon http-proxy`), then the wipe, which comes once the broker
# is ready.  Waiting on the environment alone ended early when it read as
# empty at the supervisor's start (the broker then not yet there: "pid none").
broker_of() {
    for p in /proc/[0-9]*; do
        grep -q "^PPid:[[:space:]]*$1\$" "$p/status" 2>/dev/null &&
            tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -q "^$cordon http-proxy" && echo "${p#/proc/}"
    done | head -n 1
}
i=0 brk=
while [ $i -lt 160 ] && [ -z "$brk" ] && kill -0 $sup 2>/dev/null; do
    brk=$(broker_of $sup)
    [ -n "$brk" ] || sleep 0.05
    i=$((i + 1))
done
i=0
while [ $i -lt 80 ] && tr '\0' '\n' </proc/$sup/environ 2>/dev/null | grep -qF "$REAL"; do
    sleep 0.05; i=$((i + 1))
done
ok "the supervisor's environment no longer holds the real key" \
    sh -c "[ -r /proc/$sup/environ ] && ! tr '\\0' '\\n' </proc/$sup/environ | grep -qF '$REAL'"
ok "  nor the broker's (pid ${brk:-none})" \
    sh -c "[ -n '$brk' ] && ! tr '\\0' '\\n' </proc/$brk/environ | grep -qF '$REAL'"

# --- the broker gives root up (http_proxy.c drop_root) ------------------------------
# Once started, the broker of a session runs as an identity of its own
# (0x7f000000 + its pid), with CAP_IPC_LOCK alone (its memory is locked for
# the secrets), no_new_privs; who holds a socket it asks the supervisor
# (the push tests: push_remote.sh, push_ssh.sh).
st() { sed -n "s/^$2:[[:space:]]*//p" "/proc/$1/status" 2>/dev/null; }
bu=$(st "$brk" Uid | cut -f1)
ids="$(st "$brk" Uid) / $(st "$brk" Gid) / $(st "$brk" Groups | tr -d ' ')"
ok "the session's broker runs as an identity of its own (uid ${bu:-none})" \
    sh -c "[ -n '$bu' ] && [ '$bu' -ge 2130706432 ] && [ '$bu' -lt 2134900736 ] &&
           [ '$ids' = '$bu	$bu	$bu	$bu / $bu	$bu	$bu	$bu / ' ]"
ok "  with CAP_IPC_LOCK alone, none to regain, no_new_privs" \
    sh -c "[ '$(st "$brk" CapEff)' = 0000000000004000 ] && [ '$(st "$brk" CapPrm)' = 0000000000004000 ] &&
           [ '$(st "$brk" CapBnd)' = 0000000000004000 ] && [ '$(st "$brk" NoNewPrivs)' = 1 ]"
# What code run in the broker could do: its identity, without capabilities
# (CAP_IPC_LOCK reaches nothing here).  Each must fail; as root each works
# (the negative control: the same commands can succeed).
as_broker() { setpriv --reuid="$bu" --regid="$bu" --clear-groups --inh-caps=-all \
                  --bounding-set=-all --no-new-privs -- "$@"; }
attempts() {
    kill -0 "$sup" 2>/dev/null && echo "signals the supervisor"
    head -c1 "/proc/$sup/environ" >/dev/null 2>&1 && echo "reads the supervisor's environment"
    (: <"/proc/$sup/mem") 2>/dev/null && echo "opens the supervisor's memory"
    ls "/proc/$sup/fd" >/dev/null 2>&1 && echo "lists the supervisor's descriptors"
    head -c1 /etc/shadow >/dev/null 2>&1 && echo "reads /etc/shadow"
    ls /var/lib/cordon/home >/dev/null 2>&1 && echo "lists the home layers"
    touch /root/.cordon-broker-probe 2>/dev/null && rm -f /root/.cordon-broker-probe && echo "writes root's home"
    return 0
}
export -f attempts
export sup
as_root=$(bash -c attempts | wc -l)
got=$(if [ -n "$bu" ]; then as_broker bash -c attempts; else echo "no broker identity"; fi)
ok "  as the broker's identity: nothing of the host's root reaches it (${got:-none}; as root: $as_root of 7)" \
    sh -c "[ -z '$got' ] && [ '$as_root' = 7 ]"
wait $sup

# --- a slow client inside a tunnel --------------------------------------------------
# The proxy on its own (`cordon http-proxy`, as the bench runs it): a client
# that completes the TLS handshake, sends half a request head and stalls
# gets 408 once the head timeout passes, while others are served meanwhile.
policy "$t/policy.json"
REAL_KEY=$REAL "$cordon" http-proxy --listen 127.0.0.1:0 --port-file "$t/sp.port" --policy "$t/policy.json" \
    --upstream-ca "$t/ca.pem" --ca-out "$t/sp-ca.pem" --sentinels-out "$t/sp.sent" --head-timeout 1500 \
    2>"$t/sp.err" & sp=$!
pids="$pids $sp"
for _ in $(seq 100); do [ -s "$t/sp.port" ] && [ -s "$t/sp.sent" ] && break; sleep 0.05; done
read -r spp <"$t/sp.port"
sent=$(sed -n 's/^TEST_API_KEY=//p' "$t/sp.sent")
$py - "$spp" "$up" "$t/sp-ca.pem" >"$t/slow.out" 2>&1 <<'PY' & slow=$!
import socket, ssl, sys, time
port, up, ca = int(sys.argv[1]), sys.argv[2], sys.argv[3]
s = socket.create_connection(("127.0.0.1", port))
s.sendall(f"CONNECT localhost:{up} HTTP/1.1\r\nHost: localhost:{up}\r\n\r\n".encode())
assert b" 200 " in s.recv(200)
c = ssl.create_default_context(cafile=ca).wrap_socket(s, server_hostname="localhost")
c.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: localhost\r\n")
t0 = time.monotonic(); c.settimeout(20)
try: print(c.recv(200).decode("latin-1").split("\r\n")[0], round(time.monotonic() - t0, 1))
except Exception as e: print("no answer", e)
PY
sleep 0.5
o=$(curl -sS -x "http://127.0.0.1:$spp" --cacert "$t/sp-ca.pem" -H "x-api-key: $sent" -d '{"from":"meanwhile"}' \
    "$U/v1/messages" 2>&1)
ok "while a client stalls inside its tunnel, another is served" grep -q '"usage"' <<<"$o"
wait $slow
ok "the stalled client gets 408 after the head timeout ($(cat "$t/slow.out"))" grep -q ' 408 ' "$t/slow.out"
ok "the proxy is still up" kill -0 $sp
# The control of the identity checks above: run by hand (no session), the
# proxy keeps its caller's identity, and the same reading says so.
ok "  run by hand, it keeps its caller's uid 0 (the identity check can fail)" \
    sh -c "[ '$(st "$sp" Uid | cut -f1)' = 0 ] && [ '$(st "$sp" NoNewPrivs)' = 0 ]"
kill $sp; wait $sp 2>/dev/null

# --- the byte budget -------------------------------------------------------------
# One exchange here moves about 510 bytes (upstream head ~230 with the key,
# body 16, response ~260): with 700 the first is answered; the second is
# admitted (510 < 700) but its head would cross the budget, so it is
# refused with 403 before anything goes upstream; the third is refused at once.
policy "$t/policy.json" "" '{ "egress_bytes": 700 }'
o=$(SSL_CERT_FILE=$t/ca.pem "$cordon" run -q --user "$AGENT" --workspace "$ws" --policy "$t/policy.json" \
    --audit "$t/bytes.jsonl" -- sh -c "for i in 1 2 3; do curl -sS -w ' response %{http_code}' \
    -H \"x-api-key: \$TEST_API_KEY\" -d '{\"from\":\"bytes\"}' $U/v1/messages; echo; done" 2>&1 </dev/null)
printf '%s\n' "$o" >"$t/bytes.out"
ok "egress_bytes 700: the first exchange is answered" \
    bash -c "[ \"\$(grep -c '\"usage\"' '$t/bytes.out')\" = 1 ]"
ok "  the next two are refused with 403" bash -c "[ \"\$(grep -c 'response 403' '$t/bytes.out')\" = 2 ]"
ok "  the log names the budget, counted with the upstream head" \
    bash -c "grep -q 'egress_bytes budget (700) is spent' '$t/bytes.jsonl' && [ \"\$(grep -c 'from.....bytes' '$t/requests.jsonl')\" = 1 ]"

rm -rf "$ws"
done_testing
