#!/bin/bash
# Audit shipping (userspace/audit/audit_ship.c): a session's records go, as
# they are written, to a syslog collector (rsyslog from Debian, run here with
# a private config on a scratch Unix socket) and to a journal-protocol
# listener; the collector gets every record, byte for byte, and the seal's
# anchor; `cordon audit verify --anchor` catches a local log rewritten after
# the fact (a record changed, records cut off the end, the whole log
# re-chained by a root who holds the key); with the collector down the
# session runs and its log says what was not shipped.
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib_run.sh"

[ "$(id -u)" -eq 0 ] || skip_all "needs root (sessions)"
command -v rsyslogd >/dev/null || skip_all "no rsyslogd (tools/deps installs rsyslog)"
agent_user || skip_all "no unprivileged user for the agent"

t=$(mktemp -d /var/tmp/cordon-ship.XXXXXX)
chmod 0755 "$t"
rs_pid=
# rsyslogd by its pid file: rsyslog_start runs in ok's subshell, so $rs_pid
# is not this shell's.
rsyslog_kill() {
    [ -s "$t/rsyslog.pid" ] || return 0
    kill "$(cat "$t/rsyslog.pid")" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$(cat "$t/rsyslog.pid")" 2>/dev/null || break; sleep 0.1; done
    rm -f "$t/rsyslog.pid"
}
trap 'rsyslog_kill; rm -rf "$t" "${WS:-}"' EXIT
trap 'exit 1' INT TERM
new_workspace

# rsyslog with nothing of the system's: its own socket, files, pid file.
cat >"$t/rsyslog.conf" <<CONF
global(workDirectory="$t" maxMessageSize="256k")
module(load="imuxsock" SysSock.Use="off")
input(type="imuxsock" Socket="$t/log.sock" UseSpecialParser="off" ParseHostname="on"
      RateLimit.Interval="0")
template(name="raw" type="string" string="%rawmsg%\n")
template(name="msg" type="string" string="%msg%\n")
*.* action(type="omfile" file="$t/collector.log" template="raw")
*.* action(type="omfile" file="$t/msg.log" template="msg")
CONF
rsyslog_start() {
    # With no descriptor above 2: a daemon left behind by a killed run must
    # not hold what it inherited (the test runner's lock, a pipe's end).
    python3 -c 'import os, sys; os.closerange(3, 65536); os.execvp(sys.argv[1], sys.argv[1:])' \
        rsyslogd -n -f "$t/rsyslog.conf" -i "$t/rsyslog.pid" 2>"$t/rsyslog.err" &
    rs_pid=$!
    for _ in $(seq 50); do [ -S "$t/log.sock" ] && return 0; sleep 0.1; done
    cat "$t/rsyslog.err" >&2
    return 1
}
rsyslog_stop() {
    rsyslog_kill
    rm -f "$t/log.sock"
}
ok "rsyslogd starts on a scratch socket" rsyslog_start

# --- a session, shipped --------------------------------------------------------
# The journal's native protocol, to a listener of our own (the host runs no
# journald): each datagram's fields, one JSON object a line.
python3 - "$t/journal.sock" "$t/journal.jsonl" <<'PY' &
import json, os, socket, struct, sys
path, outp = sys.argv[1:]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
os.chmod(path, 0o666)
out = open(outp, "w", buffering=1)
while True:
    d = s.recv(1 << 20)
    if d == b"STOP":
        break
    f, i = {}, 0
    while i < len(d):
        nl = d.index(b"\n", i)
        k = d[i:nl]
        if b"=" in k:
            k, v = k.split(b"=", 1); i = nl + 1
        else:
            n = struct.unpack("<Q", d[nl + 1:nl + 9])[0]
            v = d[nl + 9:nl + 9 + n]; i = nl + 10 + n
        f[k.decode()] = v.decode()
    out.write(json.dumps(f) + "\n")
PY
jr_pid=$!
for _ in $(seq 50); do [ -S "$t/journal.sock" ] && break; sleep 0.1; done

CORDON_AUDIT_SYSLOG=$t/log.sock CORDON_AUDIT_JOURNAL=$t/journal.sock \
    in_session -- /bin/sh -c 'cat /etc/shadow; ls /root; echo done'
ok "the session runs (rc $rc)" test "$rc" -eq 0
log=$t/session.jsonl
cp "$audit" "$log"
ok "its log verifies with the key" "$cordon" audit verify --key-dir "$CORDON_AUDIT_KEY_DIR" "$log"
sess=$(head -n1 "$log" | jq -r .session)
n=$(wc -l <"$log")
sleep 0.5
python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b"STOP", sys.argv[1])' "$t/journal.sock"
wait "$jr_pid"

got=$(grep -cF "[cordon@32473 session=\"$sess\"" "$t/collector.log")
ok "rsyslog received every record: $got of $n" test "$got" -eq "$n"
grep -F "\"session\":\"$sess\"" "$t/msg.log" | sed 's/^ //' >"$t/received.jsonl"
ok "and each record's message is the log's line, byte for byte" cmp "$t/received.jsonl" "$log"
ok "the structured data carries seq, type, the line's hash and the record's fields" python3 - "$log" "$t/collector.log" "$sess" <<'PY'
import hashlib, json, re, sys
log, coll, sess = sys.argv[1:]
lines = open(log).read().splitlines()
msgs = [l for l in open(coll).read().splitlines() if f'[cordon@32473 session="{sess}"' in l]
assert msgs[0].startswith("<86>1 "), msgs[0]
for line, m in zip(lines, msgs):
    rec = json.loads(line)
    sd = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.split("] ")[0]))
    assert sd["seq"] == str(rec["seq"]) and sd["type"] == rec["type"], m
    assert sd["hash"] == hashlib.sha256(line.encode()).hexdigest(), m
    assert sd["prev"] == rec["prev"], m
    assert f" {rec['type']} [cordon@32473" in m, m
    assert "[cordon-fields@32473" in m, m
PY
ok "the seal's anchor reached the collector" \
    grep -qF "[cordon-anchor@32473 session=\"$sess\" seq=\"$((n - 1))\"" "$t/collector.log"
jn=$(jq -r --arg s "$sess" 'select(.CORDON_SESSION == $s and .CORDON_TYPE != "anchor") | .MESSAGE' "$t/journal.jsonl" | tee "$t/journal-msgs.jsonl" | wc -l)
ok "the journal listener got every record too ($jn of $n)" cmp "$t/journal-msgs.jsonl" "$log"
ok "  with its identifier, seq and hash" \
    jq -e -s --arg s "$sess" '[.[] | select(.CORDON_SESSION == $s and .CORDON_SEQ == "0")] |
        length == 1 and .[0].SYSLOG_IDENTIFIER == "cordon" and (.[0].CORDON_HASH | length) == 64' \
        "$t/journal.jsonl"

# --- verify --anchor ---------------------------------------------------------------
anchor_verify() { out=$("$cordon" audit verify --key-dir "$CORDON_AUDIT_KEY_DIR" "$1" --anchor "$2" 2>&1); rc=$?; }
anchor_verify "$log" "$t/collector.log"
ok "the untouched log matches the collector's anchors (rc $rc)" test "$rc" -eq 0
ok "  and says so" grep -qF "matches the collector's $((n + 1)) anchors" <<<"$out"
out=$("$cordon" audit verify --key-dir "$CORDON_AUDIT_KEY_DIR" "$log" --anchor - <"$t/collector.log" 2>&1)
ok "--anchor - reads the anchors from stdin" test $? -eq 0
# The journal's export format: KEY=VALUE lines, a blank line between entries.
jq -r 'to_entries[] | "\(.key)=\(.value)"' "$t/journal.jsonl" | sed '/^SYSLOG_IDENTIFIER=/i\\' >"$t/journal.export"
anchor_verify "$log" "$t/journal.export"
ok "journalctl -o export's form is read too (rc $rc)" test "$rc" -eq 0

# A record changed (its HMAC no longer matches, so the key catches it too).
sed '3s/"type":"/"type":"x/' "$log" >"$t/changed.jsonl"
anchor_verify "$t/changed.jsonl" "$t/collector.log"
ok "a changed record: exit 1 ($rc)" test "$rc" -eq 1
ok "  naming it" grep -qF "line 3 (seq 2): rewritten" <<<"$out"

# Records cut off the end: the key sees no seal; the anchors see what is gone.
head -n $((n - 2)) "$log" >"$t/cut.jsonl"
anchor_verify "$t/cut.jsonl" "$t/collector.log"
ok "records removed at the end: exit 1 ($rc)" test "$rc" -eq 1
ok "  naming each" bash -c 'grep -qF "seq $1: removed" <<<"$2" && grep -qF "seq $(($1 + 1)): removed" <<<"$2"' _ $((n - 2)) "$out"

# A root with the key re-chains the whole log: one record's reason changed,
# the last records before the end dropped, a fresh seal.  The key alone
# calls it intact; the anchors do not.
keyf=$CORDON_AUDIT_KEY_DIR/$sess.key
python3 - "$log" "$keyf" "$t/rechained.jsonl" <<'PY'
import hashlib, hmac, json, sys
log, keyf, outp = sys.argv[1:]
key = bytes.fromhex(open(keyf).read().strip())
recs = [json.loads(l) for l in open(log).read().splitlines()]
body = recs[:-3]                       # the seal and the two records before it dropped
body[1]["forged"] = "nothing to see"
prev = hashlib.sha256(("cordon-audit-v1:" + recs[0]["session"]).encode()).hexdigest()
out = []
def emit(r):
    global prev
    r.pop("hmac", None)
    r["prev"] = prev
    b = json.dumps(r, separators=(",", ":"), sort_keys=True, ensure_ascii=True)
    mac = hmac.new(key, b.encode(), hashlib.sha256).hexdigest()
    line = b[:-1] + ',"hmac":"' + mac + '"}'
    out.append(line)
    prev = hashlib.sha256(line.encode()).hexdigest()
for i, r in enumerate(body):
    r["seq"] = i
    emit(r)
seal = dict(recs[-1]); seal.update(seq=len(body), records=len(body), chain=prev)
emit(seal)
open(outp, "w").write("\n".join(out) + "\n")
PY
out=$("$cordon" audit verify --key-dir "$CORDON_AUDIT_KEY_DIR" "$t/rechained.jsonl" 2>&1)
ok "a log re-chained with the key passes the key's check ($out)" test $? -eq 0
anchor_verify "$t/rechained.jsonl" "$t/collector.log"
ok "but not the anchors: exit 1 ($rc)" test "$rc" -eq 1
ok "  which name the rewritten records and the lost ones" \
    bash -c 'grep -qF "(seq 1): rewritten" <<<"$1" && grep -qF "removed" <<<"$1" && grep -qF "TAMPERED: the key verifies it" <<<"$1"' _ "$out"
anchor_verify "$log" /dev/null
ok "no anchor for the session at all: exit 1 ($rc)" test "$rc" -eq 1
ok "  saying so" grep -qF "no anchor names session $sess" <<<"$out"

# --- the same asked on the command line: --audit-syslog wins over the environment ---
rm -f "$audit"
CORDON_AUDIT_SYSLOG=/nonexistent/log.sock in_session --audit-syslog "$t/log.sock" -- /bin/sh -c 'echo by option'
ok "--audit-syslog: the session runs (rc $rc)" test "$rc" -eq 0
osess=$(head -n1 "$audit" | jq -r .session)
on=$(wc -l <"$audit")
for _ in $(seq 50); do
    [ "$(grep -cF "[cordon@32473 session=\"$osess\"" "$t/collector.log")" -ge "$on" ] && break
    sleep 0.1
done
ok "  rsyslog received its $on records, not the environment's socket" \
    test "$(grep -cF "[cordon@32473 session=\"$osess\"" "$t/collector.log")" -eq "$on"
ok "  and no warning about /nonexistent" bash -c '! grep -q nonexistent <<<"$1"' _ "$err"
rm -f "$audit"
in_session --audit-syslog relative.sock -- /bin/true
ok "--audit-syslog relative.sock: refused before the session (rc $rc)" \
    bash -c '[ "$1" -eq 125 ] && grep -qF -- "--audit-syslog relative.sock: not an absolute path" <<<"$2" && [ ! -e "$3" ]' _ "$rc" "$err" "$audit"
rm -f "$audit"

# --- the same asked by the policy (audit_shipping) --------------------------------
src=$(cd "$(dirname "$0")/../.." && pwd)
jq --arg s "$t/log.sock" '. + {audit_shipping: {syslog: $s}}' "$src/policy/profiles/coding-agent.json" >"$t/ship.json"
in_session --policy "$t/ship.json" -- /bin/true
ok "policy audit_shipping.syslog: the session runs (rc $rc)" test "$rc" -eq 0
psess=$(head -n1 "$audit" | jq -r .session)
pn=$(wc -l <"$audit")
for _ in $(seq 50); do
    [ "$(grep -cF "[cordon@32473 session=\"$psess\"" "$t/collector.log")" -ge "$pn" ] && break
    sleep 0.1
done
ok "  rsyslog received its $pn records" \
    test "$(grep -cF "[cordon@32473 session=\"$psess\"" "$t/collector.log")" -eq "$pn"
rm -f "$audit"
jq '. + {audit_shipping: {syslog: "relative.sock"}}' "$src/policy/profiles/coding-agent.json" >"$t/ship-bad.json"
in_session --policy "$t/ship-bad.json" -- /bin/true
ok "a relative audit_shipping.syslog: the policy is refused at its position (rc $rc)" \
    bash -c '[ "$1" -eq 125 ] && grep -qF "ship-bad.json:" <<<"$2" && grep -qF "absolute path to a Unix datagram socket" <<<"$2" && [ ! -e "$3" ]' _ "$rc" "$err" "$audit"
rm -f "$audit"

# --- the collector down ---------------------------------------------------------
rsyslog_stop
rm -f "$audit"
CORDON_AUDIT_SYSLOG=$t/log.sock in_session -- /bin/sh -c 'echo still here'
ok "with the collector down the session runs (rc $rc)" \
    bash -c '[ "$1" -eq 0 ] && grep -qx "still here" <<<"$2"' _ "$rc" "$out"
ok "  cordon warns at its start" said "records every record the collector misses"
ok "  the log records the loss" grep -qF '"event":"audit-ship-lost"' "$audit"
ok "  and its end record counts what was not shipped" \
    bash -c 'grep "\"event\":\"end\"" "$1" | jq -e ".ship_lost > 0"' _ "$audit"
ok "  and it still verifies with the key" \
    "$cordon" audit verify --key-dir "$CORDON_AUDIT_KEY_DIR" "$audit"
rm -f "$audit"

# --- a bad setting is refused, no log made -------------------------------------
CORDON_AUDIT_SYSLOG=relative.sock in_session -- /bin/true
ok "a relative socket path is refused (rc $rc)" \
    bash -c '[ "$1" -ne 0 ] && grep -qF "CORDON_AUDIT_SYSLOG=relative.sock: not an absolute path" <<<"$2" && [ ! -e "$3" ]' _ "$rc" "$err" "$audit"
done_testing
