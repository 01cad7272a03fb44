#!/bin/bash
# [7/8] The egress broker (`cordon http-proxy`) with real clients and real
# TLS: a local upstream (tests/net/upstream.py, a test CA's certificate for
# "localhost") on loopback; curl, python3 and node through the broker;
# CONNECT only to allowlisted names whose addresses are listed, the TLS
# server name equal to the CONNECT host, plain-HTTP absolute-form with a
# matching Host, http.request judged by tool rules, smuggling and slowloris
# refused while the broker keeps serving.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/tests/lib.sh"
. "$here/tests/lib_run.sh"
. "$here/tests/lib_net.sh"
net_needs

t=$(mktemp -d /var/cordon-egress.XXXXXX)
pids=
trap 'kill $pids 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$t"' EXIT
export CORDON_AUDIT_KEY_DIR=${CORDON_AUDIT_KEY_DIR:-/var/cordon-test-keys}
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY no_proxy NO_PROXY ALL_PROXY all_proxy

# The test CA, and the upstream serving localhost's certificate.
net_upstream "$t"

cat >"$t/policy.json" <<EOF
{ "cordon_policy": 1, "name": "egress-test",
  "rules": [
    { "name": "upstream", "decision": "allow",
      "net": { "hosts": ["localhost"], "ports": [$up, $plain], "via": "egress" } },
    { "name": "upstream-address", "decision": "allow", "description": "loopback, listed for the test",
      "net": { "hosts": ["127.0.0.1"], "ports": [$up, $plain], "via": "egress" } },
    { "name": "name-only", "decision": "allow", "net": { "hosts": ["localhost"], "ports": [9], "via": "egress" } },
    { "name": "no-post", "decision": "deny", "description": "nothing is posted upstream",
      "tool": { "name": "http.request", "args": { "method": { "equals": "POST" } } } }
  ] }
EOF
"$cordon" http-proxy --listen 127.0.0.1:0 --port-file "$t/pport" --policy "$t/policy.json" \
    --head-timeout 1500 --idle-timeout 2500 --audit "$t/audit.jsonl" 2>"$t/proxy.err" & proxy=$!
pids="$pids $proxy"
for _ in $(seq 100); do [ -e "$t/pport" ] && break; sleep 0.05; done
read -r pp <"$t/pport" || { echo "Bail out! the broker did not start: $(cat "$t/proxy.err")"; exit 1; }
P=http://127.0.0.1:$pp

seen() { grep -c "\"path\": \"$1\"" "$t/requests.jsonl" 2>/dev/null; }

# --- real clients through CONNECT --------------------------------------------
o=$(curl -sS -x "$P" --cacert "$t/ca.pem" "https://localhost:$up/curl" 2>&1)
ok "curl: HTTPS through CONNECT ($o)" grep -q '"path": "/curl"' <<<"$o"
o=$(HTTPS_PROXY=$P $py -c "
import ssl, urllib.request
ctx = ssl.create_default_context(cafile='$t/ca.pem')
print(urllib.request.urlopen('https://localhost:$up/urllib', context=ctx).read().decode())" 2>&1)
ok "python3 urllib: HTTPS_PROXY honoured ($o)" grep -q '"path": "/urllib"' <<<"$o"
o=$($py -c "
import http.client, ssl
ctx = ssl.create_default_context(cafile='$t/ca.pem')
c = http.client.HTTPSConnection('127.0.0.1', $pp, context=ctx)
c.set_tunnel('localhost', $up)
for p in ('/hc1', '/hc2'):
    c.request('GET', p); print(c.getresponse().read().decode())" 2>&1)
ok "python3 http.client: two requests on one kept-alive tunnel" \
    bash -c "grep -q hc1 <<<'$o' && grep -q hc2 <<<'$o'"
if command -v node >/dev/null; then
    o=$(node -e "
const http = require('http'), tls = require('tls'), fs = require('fs');
const req = http.request({ host: '127.0.0.1', port: $pp, method: 'CONNECT', path: 'localhost:$up' });
req.on('connect', (res, socket) => {
  if (res.statusCode !== 200) { console.log('status ' + res.statusCode); process.exit(1); }
  const s = tls.connect({ socket, servername: 'localhost', ca: fs.readFileSync('$t/ca.pem') }, () =>
    s.write('GET /node HTTP/1.1\r\nHost: localhost:$up\r\nConnection: close\r\n\r\n'));
  let out = ''; s.on('data', d => out += d); s.on('end', () => console.log(out));
});
req.end();" 2>&1)
    ok "node (http CONNECT + tls): through the broker" grep -q '"path": "/node"' <<<"$o"
fi
# Streaming: the first event arrives before the server has sent the last.
o=$($py - "$pp" "$up" "$t/ca.pem" <<'PY' 2>&1
import http.client, ssl, sys, time
pp, up, ca = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
c = http.client.HTTPSConnection("127.0.0.1", pp, context=ssl.create_default_context(cafile=ca))
c.set_tunnel("localhost", up)
c.request("GET", "/sse")
r = c.getresponse()
first = None
sent = []
for line in r:
    if line.startswith(b"data:"):
        if first is None:
            first = time.time()
        sent.append(float(line.split()[-1]))
print("incremental" if len(sent) == 3 and first < sent[2] else f"buffered {first} {sent}")
PY
)
ok "a streamed (SSE) response arrives incrementally through the tunnel ($o)" test "$o" = incremental

# --- refused -------------------------------------------------------------------
code() { curl -s -o /dev/null -w '%{http_code}' -x "$P" "$@"; }
ok "a host no rule names: CONNECT answered 403" \
    test "$(curl -s -o /dev/null -w '%{http_connect}' -x "$P" --cacert "$t/ca.pem" https://127.0.0.2:$up/)" = 403
ok "the cloud metadata address: 403" test "$(code http://169.254.169.254/latest/meta-data/)" = 403
o=$(curl -s -x "$P" -p http://localhost:9/ 2>&1; curl -s -x "$P" http://localhost:9/ 2>&1)
ok "an allowlisted name resolving to an unlisted loopback address: refused ($o)" \
    grep -q "non-public address" <<<"$o"
n0=$(seen /fronted)
o=$(printf 'GET /fronted HTTP/1.1\r\nHost: localhost\r\n\r\n' | timeout 10 openssl s_client -quiet \
    -proxy "127.0.0.1:$pp" -connect "localhost:$up" -servername evil.example -CAfile "$t/ca.pem" 2>&1)
ok "a TLS server name other than the CONNECT host: the tunnel is closed" test "$(seen /fronted)" = "$n0"
ok "  audited with the reason" grep -q 'TLS server name \\"evil.example\\" is not the CONNECT host' "$t/audit.jsonl"
o=$(printf 'GET /nosni HTTP/1.1\r\nHost: localhost\r\n\r\n' | timeout 10 openssl s_client -quiet \
    -proxy "127.0.0.1:$pp" -connect "localhost:$up" -noservername -CAfile "$t/ca.pem" 2>&1)
ok "no TLS server name: closed" bash -c "[ '$(seen /nosni)' -eq 0 ] && grep -q 'without a server name' '$t/audit.jsonl'"
o=$($py -c "
import socket
s = socket.create_connection(('127.0.0.1', $pp))
s.sendall(b'CONNECT localhost:$up HTTP/1.1\r\nHost: localhost:$up\r\n\r\n')
print(s.recv(100).decode().split('\r\n')[0])
s.sendall(b'SSH-2.0-OpenSSH_9.2\r\n')
print('closed' if s.recv(100) == b'' else 'open')" 2>&1)
ok "not TLS inside the tunnel: closed ($(echo $o))" grep -q closed <<<"$o"

# --- plain HTTP, absolute-form ---------------------------------------------------
o=$(curl -sS -x "$P" "http://localhost:$plain/plain" 2>&1)
ok "plain HTTP absolute-form: forwarded ($o)" grep -q '"path": "/plain"' <<<"$o"
ok "  upstream got origin-form, no proxy headers" \
    $py -c "
import json, sys
r = [json.loads(l) for l in open('$t/requests.jsonl') if '\"/plain\"' in l][-1]
sys.exit(0 if not r['tls'] and 'Proxy-Connection' not in r['headers'] and r['headers'].get('Connection') == 'close' else 1)"
o=$(curl -s -x "$P" -d 'x=1' -w ' %{http_code}' "http://localhost:$plain/posted" 2>&1)
ok "a POST a tool rule denies (http.request): 403 ($(echo $o | tail -c 40))" grep -q ' 403$' <<<"$o"
ok "  never reached the server" test "$(seen /posted)" = 0
ok "  audited with the rule" grep -q '"rule":"no-post"' "$t/audit.jsonl"

# --- bad input: a clear status, and the broker stays up ----------------------------
raw() {  # raw BYTES: send them, print the status line
    $py -c "
import socket, sys
s = socket.create_connection(('127.0.0.1', $pp)); s.settimeout(5)
s.sendall(sys.argv[1].encode('latin-1').decode('unicode_escape').encode('latin-1'))
try: print(s.recv(200).decode('latin-1').split('\r\n')[0])
except Exception as e: print('no answer', e)" "$1"
}
H="Host: localhost:$plain"
U="http://localhost:$plain/smuggle"
ok "CL and TE together: 400" grep -q ' 400 ' <<<"$(raw "POST $U HTTP/1.1\r\n$H\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")"
ok "two Content-Lengths: 400" grep -q ' 400 ' <<<"$(raw "GET $U HTTP/1.1\r\n$H\r\nContent-Length: 0\r\nContent-Length: 0\r\n\r\n")"
ok "obs-fold: 400" grep -q ' 400 ' <<<"$(raw "GET $U HTTP/1.1\r\n$H\r\nX-A: a\r\n b\r\n\r\n")"
ok "a bare CR: 400" grep -q ' 400 ' <<<"$(raw "GET $U HTTP/1.1\r\n$H\r\nX-A: a\rb\r\n\r\n")"
ok "absolute-form host differing from Host: 400" grep -q ' 400 ' <<<"$(raw "GET $U HTTP/1.1\r\nHost: other.example\r\n\r\n")"
big=$(head -c 20000 /dev/zero | tr '\0' a)
ok "oversized headers: 431" grep -q ' 431 ' <<<"$(raw "GET $U HTTP/1.1\r\n$H\r\nX-Big: $big\r\n\r\n")"
ok "  none of them reached the upstream" test "$(seen /smuggle)" = 0
# Slowloris: a head that dribbles in gets 408 after --head-timeout, while others are served.
$py -c "
import socket, time
s = socket.create_connection(('127.0.0.1', $pp))
t0 = time.time()
try:
    for b in b'GET http://localhost:$plain/slow HTTP/1.1\r\n':
        s.sendall(bytes([b])); time.sleep(0.1)
except OSError:
    pass
s.settimeout(5)
print(s.recv(200).decode().split('\r\n')[0], round(time.time() - t0, 1))" >"$t/slow.out" 2>&1 &
slow=$!
sleep 0.3
o=$(curl -sS -x "$P" "http://localhost:$plain/meanwhile" 2>&1)
ok "while a slow client dribbles, others are served" grep -q meanwhile <<<"$o"
wait $slow
ok "the slow client gets 408 after the head timeout ($(cat "$t/slow.out"))" grep -q ' 408 ' "$t/slow.out"
# A plain request that declares a body and sends none: cut after the idle
# time (before, the thread waited for ever; 256 such refused everyone).
$py -c "
import socket, time
s = socket.create_connection(('127.0.0.1', $pp))
t0 = time.time()
s.sendall(b'PUT http://localhost:$plain/stalled HTTP/1.1\r\nHost: localhost:$plain\r\nContent-Length: 100\r\n\r\n')
s.settimeout(20)
try:
    while s.recv(4096):
        pass
    print('closed', round(time.time() - t0, 1))
except OSError as e:
    print('not closed', e)" >"$t/stalled.out" 2>&1 &
stalled=$!
sleep 0.3
o=$(curl -sS -x "$P" "http://localhost:$plain/meanwhile2" 2>&1)
ok "while a client stalls mid-body, others are served" grep -q meanwhile2 <<<"$o"
wait $stalled
ok "the stalled body is cut after --idle-timeout ($(cat "$t/stalled.out"))" \
    $py -c "import sys; w = open('$t/stalled.out').read().split(); sys.exit(0 if w[0] == 'closed' and 2 <= float(w[1]) < 10 else 1)"
ok "the broker is still up" kill -0 $proxy
ok "and still serves" grep -q '"path": "/after"' <<<"$(curl -sS -x "$P" --cacert "$t/ca.pem" "https://localhost:$up/after")"

# --- the byte budget: every path is metered ------------------------------------
# A broker whose egress_bytes budget is 1: the first request on each path
# (plain forward, CONNECT tunnel) is admitted (nothing spent yet) and cut at
# its first byte, recorded with the budget's name; the next is refused 403.
$py - "$t/policy.json" >"$t/bytes-policy.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1])); p["budgets"] = {"egress_bytes": 1}; print(json.dumps(p))
PY
for path in plain connect; do
    rm -f "$t/bport"
    "$cordon" http-proxy --listen 127.0.0.1:0 --port-file "$t/bport" --policy "$t/bytes-policy.json" \
        --audit "$t/bytes-$path.jsonl" 2>"$t/bytes.err" & bp=$!
    for _ in $(seq 100); do [ -e "$t/bport" ] && break; sleep 0.05; done
    read -r bpp <"$t/bport"
    if [ $path = plain ]; then u=http://localhost:$plain/bytes-$path; else u=https://localhost:$up/bytes-$path; fi
    curl -s -o /dev/null --max-time 5 -x "http://127.0.0.1:$bpp" --cacert "$t/ca.pem" "$u"
    o=$(curl -s -o /dev/null -w '%{http_code} %{http_connect}' --max-time 5 -x "http://127.0.0.1:$bpp" \
        --cacert "$t/ca.pem" "$u")
    kill $bp; wait $bp 2>/dev/null
    ok "egress_bytes 1, $path: the first transfer is cut, never reaching the upstream" \
        bash -c "grep -q '\"outcome\":\"cut\".*egress_bytes budget (1) is spent' '$t/bytes-$path.jsonl' && [ \"\$(grep -c /bytes-$path '$t/requests.jsonl')\" = 0 ]"
    ok "  the next is refused with 403 ($(echo $o))" grep -q 403 <<<"$o"
done

# --- an allowed name resolving into a CIDR a rule denies ----------------------------
# In a network and mount namespace of its own: "pub.test" (an /etc/hosts
# entry bound over the real one) is 203.0.113.7 and 203.0.113.8, public
# addresses on the namespace's loopback, with a plain server on each.  The
# name is allowed, 203.0.113.7/32 is denied: the broker must not land there
# (strongest decision wins) and goes on to the address no rule names.
if [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null && command -v ip >/dev/null; then
    printf '127.0.0.1 localhost\n203.0.113.7 pub.test\n203.0.113.8 pub.test\n203.0.113.7 denied.test\n' >"$t/hosts"
    cat >"$t/cidr-policy.json" <<EOF
{ "cordon_policy": 1, "name": "egress-cidr",
  "rules": [
    { "name": "pub", "decision": "allow", "net": { "hosts": ["pub.test", "denied.test"], "ports": [8080], "via": "egress" } },
    { "name": "no-seven", "decision": "deny", "net": { "hosts": ["203.0.113.7/32"] } }
  ] }
EOF
    cat >"$t/cidr.sh" <<EOF
mount --bind '$t/hosts' /etc/hosts && ip link set lo up &&
    ip addr add 203.0.113.7/32 dev lo && ip addr add 203.0.113.8/32 dev lo || exit 1
s=
for a in 7 8; do
    mkdir -p '$t'/srv\$a && echo served-by-\$a >'$t'/srv\$a/who
    $py -m http.server --bind 203.0.113.\$a --directory '$t'/srv\$a 8080 >/dev/null 2>&1 & s="\$s \$!"
done
'$cordon' http-proxy --listen 127.0.0.1:0 --port-file '$t/cport' --policy '$t/cidr-policy.json' \
    --audit '$t/cidr.jsonl' 2>'$t/cidr.err' & s="\$s \$!"
for _ in \$(seq 100); do
    [ -e '$t/cport' ] && curl -s -o /dev/null http://203.0.113.7:8080/who &&
        curl -s -o /dev/null http://203.0.113.8:8080/who && break
    sleep 0.05
done
read -r cp <'$t/cport'
for h in pub.test denied.test; do
    echo \$h \$(curl -s --max-time 5 -w ' %{http_code}' -x http://127.0.0.1:\$cp http://\$h:8080/who)
done
kill \$s
EOF
    o=$(unshare --net --mount bash "$t/cidr.sh" 2>&1)
    ok "an allowed name with addresses in and out of a denied CIDR: the one no rule names ($(echo $o))" \
        grep -q '^pub.test served-by-8 200$' <<<"$o"
    ok "  an allowed name whose only address is in it: 403, naming the rule" \
        bash -c "grep -q '^denied.test .*403\$' <<<'$o' && grep -q \"203.0.113.7, which rule 'no-seven' does not allow\" '$t/cidr.jsonl'"
fi

# --- started by cordon run: the session's cgroup first, on the channel ---------------
# cordon run starts the broker before the session's cgroup exists and tells
# it on the channel; it says nothing and serves no one before that.
ch() { $py "$here/tests/net/chan_helper.py" "$cordon" "$t/policy.json" "$@" 2>&1; }
o=$(ch bad-first "$plain")
ok "a first message that is not the session: it exits, never ready ($o)" \
    grep -q "^no ready exit 125: .*first message is not the session" <<<"$o"
o=$(ch closed "$plain")
ok "the channel closed before the session: it exits ($o)" grep -q '^exit 125' <<<"$o"
if [ -e /proc/self/cgroup ] && grep -q '^0::' /proc/self/cgroup; then
    o=$(ch queued-own "$plain")
    ok "a client queued before the session, in its cgroup: served once it is told ($o)" \
        grep -q '^ready | HTTP/1.1 200' <<<"$o"
    o=$(ch queued-other "$plain")
    ok "a client queued before the session, outside it: 403 ($o)" \
        grep -q '^ready | HTTP/1.1 403' <<<"$o"
fi

# --- in a cordon run session: the broker is the agent's only way out -----------
if [ "$(id -u)" -eq 0 ] && agent_user; then
    chmod 0755 "$t"; chmod 0644 "$t/ca.pem"
    $py - "$t/policy.json" "$t" >"$t/run-policy.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["rules"] = [
    {"name": "system", "decision": "allow",
     "fs": {"paths": ["/usr", "/bin", "/lib", "/lib64", "/etc", "/proc", "/sys", sys.argv[2] + "/ca.pem"], "rights": ["read", "exec"]}},
    {"name": "devices", "decision": "allow", "fs": {"paths": ["/dev/null", "/dev/urandom"], "rights": ["read", "write"]}},
    {"name": "tmp", "decision": "allow", "fs": {"paths": ["/tmp"], "rights": ["all"]}},
] + p["rules"]
print(json.dumps(p))
PY
    chmod 0644 "$t/run-policy.json"
    ws=$(mktemp -d /var/cordon-egress-ws.XXXXXX); chown "$AGENT" "$ws"
    o=$("$cordon" run -q --user "$AGENT" --workspace "$ws" --policy "$t/run-policy.json" \
        --audit "$t/run.jsonl" -- /bin/sh -c "
        echo proxy=\$HTTPS_PROXY
        curl -sS --cacert $t/ca.pem https://localhost:$up/insession
        echo; curl -sS --noproxy '*' --max-time 5 --cacert $t/ca.pem https://localhost:$up/direct >/dev/null 2>&1 || echo direct-refused
        curl -sS --noproxy '*' --max-time 5 http://127.0.0.1:$plain/direct2 >/dev/null 2>&1 || echo direct2-refused" 2>&1)
    ok "in a session: HTTPS_PROXY names the session's broker ($(echo $o | cut -c1-60))" grep -q '^proxy=http://127.0.0.1:' <<<"$o"
    ok "  curl reaches the allowlisted host through it" grep -q '"path": "/insession"' <<<"$o"
    ok "  and not around it (the floor refuses the direct connect)" \
        bash -c "grep -q direct-refused <<<'$o' && grep -q direct2-refused <<<'$o' && [ \"\$(grep -c /direct '$t/requests.jsonl')\" = 0 ]"
    ok "  the broker's records in the session's log" grep -q '"outcome":"tunnel closed"' "$t/run.jsonl"
    rm -rf "$ws"
fi
# --- the broker's own log on a full filesystem (AUDIT_RESERVE in audit.c) ------
# Plain-HTTP requests with 7 KB paths, each a record of that size (the
# broker serves one absolute-form request a connection), after the log's
# filesystem was filled: the log goes down when it cannot renew its
# reserve, the broker refuses from then on and stops, and nothing reached
# the upstream without its record.
if [ "$(id -u)" -eq 0 ] && mkdir "$t/full" &&
   mount -t tmpfs -o size=8m cordon-egress-full "$t/full"; then
    "$cordon" http-proxy --listen 127.0.0.1:0 --port-file "$t/fport" --policy "$t/policy.json" \
        --audit "$t/full/audit.jsonl" 2>"$t/full.err" & fproxy=$!
    for _ in $(seq 100); do [ -e "$t/fport" ] && break; sleep 0.05; done
    read -r fp <"$t/fport"
    dd if=/dev/zero of="$t/full/fill" bs=65536 2>/dev/null
    o=$($py - <<PY
import http.client
allowed = 0
for i in range(800):
    try:
        c = http.client.HTTPConnection('127.0.0.1', $fp, timeout=10)
        c.request('GET', 'http://127.0.0.1:$plain/full-%d-%s' % (i, 'p' * 7000))
        r = c.getresponse()
        r.read()
    except Exception as e:
        print('cut off at', i, type(e).__name__)
        break
    if r.status != 200:
        print('refused at', i, r.status)
        break
    allowed += 1
print('allowed', allowed)
PY
)
    for _ in $(seq 50); do kill -0 $fproxy 2>/dev/null || break; sleep 0.1; done
    kill $fproxy 2>/dev/null
    wait $fproxy; frc=$?
    up_got=$(grep -c '/full-' "$t/requests.jsonl")
    recorded=$(grep '"decision":"allow"' "$t/full/audit.jsonl" | grep -c '/full-')
    ok "full log: the broker refused, then stopped ($(echo $o))" \
        bash -c "grep -qE '^(refused at [0-9]+ 403|cut off at [0-9]+)' <<<'$o' && ! grep -q 'allowed 800' <<<'$o'"
    ok "  exit 125, saying why ($frc: $(cat "$t/full.err"))" \
        bash -c "[ $frc = 125 ] && grep -qF 'http-proxy: stopped: the audit log cannot keep its records (No space left on device)' '$t/full.err'"
    ok "  every request the upstream got is on record ($up_got got, $recorded recorded)" \
        bash -c "[ $up_got -ge 100 ] && [ $up_got -le $recorded ] && [ $recorded -le $((up_got + 1)) ]"
    ok "  its log verifies, sealed, and says why it went down" went_down "$t/full/audit.jsonl"
    umount "$t/full"
fi

kill $proxy; wait $proxy 2>/dev/null
ok "the broker's audit log verifies" "$cordon" audit verify --key-dir "$CORDON_AUDIT_KEY_DIR" "$t/audit.jsonl"
done_testing
