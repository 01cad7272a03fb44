#!/bin/bash
# cordon audit verify | show, as a reviewer runs them on a log written by the
# real module (build/tests/host/audit_writer): an intact log verifies, each
# tampering exits 1 naming the line and seq, I/O and usage errors exit 2 with
# a clear message, an independent implementation (python3) agrees with the
# documented format, secrets never reach the file, and `show` prints one
# readable line per record without passing the agent's escape sequences to
# the terminal.  Keys live in a temporary directory, never under /var/lib.
set -u
. "$(dirname "$0")/../lib.sh"
cordon=$BUILD/cordon
writer=$BUILD/tests/host/audit_writer
t=$(mktemp -d /tmp/cordon-audit-cli.XXXXXX)
trap 'rm -rf "$t"' EXIT
secret=sk-ant-api03-Qm7VtR2xLp9KwZ4nJ8sD
keys=$t/keys
# Unique, so that no key of that name can exist under the default key dir.
session=cli-${t##*.}
key=$keys/$session.key

# fresh NAME: a new copy of the pristine log at $t/NAME.jsonl
fresh() { cp "$t/pristine.jsonl" "$t/$1.jsonl"; }
# verify_out NAME: run verify on $t/NAME.jsonl; sets $out and $rc
verify_out() { out=$("$cordon" audit verify "$t/$1.jsonl" --key "$key" 2>&1); rc=$?; }

AUDIT_SECRET=$secret "$writer" write "$t/pristine.jsonl" "$keys" "$session"
ok "the helper writes a session's log" test -s "$t/pristine.jsonl"
nlines=$(wc -l < "$t/pristine.jsonl")
ok "the log has ten records ($nlines)" test "$nlines" -eq 10

# --- verify: intact --------------------------------------------------------------
fresh intact
verify_out intact
ok "an intact log verifies, exit 0 ($rc)" test "$rc" -eq 0
ok "and says so ($out)" grep -qF "intact.jsonl: intact: 10 records, sealed" <<<"$out"
out=$("$cordon" audit verify --key-dir "$keys" "$t/intact.jsonl" 2>&1)
ok "--key-dir finds the key the first record's session names ($out)" \
    grep -qF "intact: 10 records, sealed" <<<"$out"
out=$("$cordon" audit verify "$t/intact.jsonl" 2>&1)
rc=$?
ok "the default key dir has no key for this session: exit 2 ($rc)" test "$rc" -eq 2
ok "naming the key it looked for ($out)" \
    grep -qF "cannot read the key /var/lib/cordon/audit-keys/$session.key" <<<"$out"
ok "the key file is 0600, its directory 0700" \
    bash -c 'test "$(stat -c %a "$1")" = 600 && test "$(stat -c %a "$2")" = 700' _ "$key" "$keys"

# --- an independent reading of the format ------------------------------------------
ok "python3 recomputes every hmac and prev from the documented format" python3 - "$t/pristine.jsonl" "$key" "$session" <<'PY'
import hashlib, hmac, json, sys
log, keyfile, session = sys.argv[1:]
key = bytes.fromhex(open(keyfile).read().strip())
prev = hashlib.sha256(("cordon-audit-v1:" + session).encode()).hexdigest()
lines = open(log, "rb").read().split(b"\n")
assert lines[-1] == b"", "the file ends with a newline"
for i, line in enumerate(lines[:-1]):
    tail = line[-75:]
    assert tail.startswith(b',"hmac":"') and tail.endswith(b'"}'), i
    body = line[:-75] + b"}"
    rec = json.loads(line)
    assert rec["seq"] == i and rec["session"] == session and rec["prev"] == prev, i
    assert hmac.new(key, body, "sha256").hexdigest() == rec["hmac"], i
    keys = list(json.loads(body))
    assert keys == sorted(keys), i
    assert max(body) < 0x80, "ASCII only"
    prev = hashlib.sha256(line).hexdigest()
assert lines[0].startswith(b'{"format":"cordon-audit-v1"')
assert rec["type"] == "seal" and rec["records"] == i and rec["chain"] == rec["prev"]
PY
ok "the registered secret is nowhere in the file" bash -c '! grep -qF "$1" "$2"' _ "$secret" "$t/pristine.jsonl"
ok "nor its tail" bash -c '! grep -qF "Qm7VtR2xLp9KwZ4nJ8sD" "$1"' _ "$t/pristine.jsonl"
ok "it was replaced by its name" grep -qF '"header":"[REDACTED:anthropic]"' "$t/pristine.jsonl"

# --- verify: tampering ----------------------------------------------------------------
# tampered NAME WANT...: exit 1, each WANT on stdout, and the count line.
tampered() {
    _name=$1; shift
    verify_out "$_name"
    ok "$_name: exit 1 ($rc)" test "$rc" -eq 1
    for _w in "$@"; do
        ok "$_name: reports '$_w'" grep -qF -- "$_w" <<<"$out"
    done
    ok "$_name: closes with TAMPERED and the number of problems" \
        grep -qE "^$t/$_name.jsonl: TAMPERED: $# problems? \\(" <<<"$out"
}

fresh modified
sed -i '3s/"decision":"escalate"/"decision":"allow"/' "$t/modified.jsonl"
tampered modified "line 3 (seq 2): modified: its HMAC does not match"

fresh deleted
sed -i '4d' "$t/deleted.jsonl"
tampered deleted "seq 3: deleted: missing between line 3 (seq 2) and line 4 (seq 4)"

fresh swapped
sed -i '4{h;d};5G' "$t/swapped.jsonl"
tampered swapped "line 4 (seq 4): reordered" "line 5 (seq 3): reordered"

fresh inserted
sed -n '3p' "$t/pristine.jsonl" | sed 's/"seq":2/"seq":6/' > "$t/line"
sed -i "6r $t/line" "$t/inserted.jsonl"
tampered inserted "line 7 (seq 6): inserted: not part of the chain"

fresh unsealed
sed -i '$d' "$t/unsealed.jsonl"
tampered unsealed "line 9 (seq 8): truncated: no seal after the last record"

fresh cut
sed -i '7,$d' "$t/cut.jsonl"
tampered cut "line 6 (seq 5): truncated: no seal"

fresh appended
sed -n '5p' "$t/pristine.jsonl" | sed 's/"seq":4/"seq":10/' >> "$t/appended.jsonl"
tampered appended "line 11 (seq 10): appended: after the seal"

fresh garbage
sed -i '2a not json at all' "$t/garbage.jsonl"
tampered garbage "line 3: bad JSON"

AUDIT_SECRET=x "$writer" write "$t/other.jsonl" "$keys" "$session-2"
fresh wrongkey
out=$("$cordon" audit verify "$t/wrongkey.jsonl" --key "$keys/$session-2.key" 2>&1)
rc=$?
ok "wrong key: exit 1 ($rc)" test "$rc" -eq 1
ok "wrong key: says so once" bash -c 'grep -c "wrong key: not one of the 10 records" <<<"$1" | grep -qx 1' _ "$out"

# --- verify: usage and I/O ---------------------------------------------------------------
printf 'not a key\n' > "$t/bad.key"
out=$("$cordon" audit verify "$t/intact.jsonl" --key "$t/bad.key" 2>&1)
rc=$?
ok "a file that is not a key: exit 2 ($rc)" test "$rc" -eq 2
ok "with a clear message ($out)" grep -qF "$t/bad.key is not an audit key" <<<"$out"
out=$("$cordon" audit verify "$t/missing.jsonl" --key "$key" 2>&1)
rc=$?
ok "a missing log: exit 2 ($rc)" test "$rc" -eq 2
ok "naming it ($out)" grep -qF "cannot read $t/missing.jsonl: No such file or directory" <<<"$out"
printf 'garbage\n' > "$t/nosession.jsonl"
out=$("$cordon" audit verify "$t/nosession.jsonl" 2>&1)
rc=$?
ok "no session in the first line and no --key: exit 2 ($rc)" test "$rc" -eq 2
ok "asks for --key ($out)" grep -qF -- "give --key KEYFILE" <<<"$out"
for args in "audit" "audit verify" "audit verify a b" "audit frobnicate" "audit show" \
            "audit verify --key k --key-dir d f"; do
    # shellcheck disable=SC2086
    "$cordon" $args >/dev/null 2>&1
    rc=$?
    ok "cordon $args: usage error, exit 2 ($rc)" test "$rc" -eq 2
done
ok "cordon audit --help exits 0" "$cordon" audit --help
ok "cordon --help lists audit" bash -c '"$1" --help | grep -q "^  audit "' _ "$cordon"

# --- show ---------------------------------------------------------------------------------
out=$("$cordon" audit show "$t/pristine.jsonl")
rc=$?
ok "show exits 0 ($rc)" test "$rc" -eq 0
ok "one line per record" test "$(wc -l <<<"$out")" -eq 10
ok "a shell command: pid/comm, decision, command line, rule, reason, approver" \
    grep -qE '^[0-9T:.-]+Z +2 decision +1234/git escalate shell\.exec git push origin main rule=git-push reason="pushes leave the machine" approver=alice$' <<<"$out"
ok "a connection: net.connect HOST:PORT" \
    grep -qF '1240/curl allow net.connect 1.2.3.4:443 rule=api-hosts' <<<"$out"
ok "a raw syscall: name(args)" \
    grep -qF '1250/cat deny openat(/home/agent/.ssh/id_rsa, O_RDONLY) rule=credential-store' <<<"$out"
ok "a lifecycle event and its unknown fields" grep -qE ' 8 lifecycle +agent-exited status=0$' <<<"$out"
ok "a record of unknown shape shows its fields" \
    grep -qE ' 7 budget +budget_tokens=50000 used_tokens=1234$' <<<"$out"
ok "the start record names the session" grep -qF "start     session=\"$session\"" <<<"$out"
ok "the seal shows what it counts" grep -qF 'records=9' <<<"$out"
ok "the agent's escape sequence and bidi override are shown escaped" \
    grep -qF 'shell.exec echo \x1b[2J\u{202e}evil' <<<"$out"
ok "no control character reaches the terminal" \
    bash -c '! LC_ALL=C grep -q "[[:cntrl:]]" <<<"$1"' _ "$out"
ok "no redacted secret reappears" bash -c '! grep -qF "$1" <<<"$2"' _ "$secret" "$out"
out=$("$cordon" audit show "$t/garbage.jsonl")
ok "show copes with a line that is not a record" grep -qF "line 3: not a record: not json at all" <<<"$out"
ok "and still shows the others" test "$(wc -l <<<"$out")" -eq 11
"$cordon" audit show "$t/missing.jsonl" >/dev/null 2>&1
rc=$?
ok "show of a missing file: exit 2 ($rc)" test "$rc" -eq 2
done_testing
