#!/bin/sh
# `cordon audit prune` (userspace/audit/audit_prune.c) on the logs of real
# sessions: the oldest sealed logs go with their keys, by age, count and
# size; a log a session still writes is never removed, nor an unsealed
# one; --dry-run removes nothing; a symlink planted in the log directory is
# not followed; the rule file is the admin's; removals reach syslog.
# POSIX sh; jq reads the --json reports.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib_run.sh"

command -v jq >/dev/null || skip_all "no jq (it reads the --json reports)"
session_test prune
L=$scratch/logs
K=$scratch/keys
mkdir -m 0700 "$L" "$K"
CORDON_AUDIT_KEY_DIR=$K
export CORDON_AUDIT_KEY_DIR
live_pid=
trap 'kill $live_pid $rcv 2>/dev/null; rm -rf "$scratch" "$WS"' EXIT

# session_of LOG: the session its first record names.
session_of() { sed -n '1s/.*"session":"\([^"]*\)".*/\1/p' "$1"; }
# run_one TAG: a session that runs /bin/true, its log $L/TAG.jsonl.
run_one() {
    "$cordon" run -q --user "$AGENT" --workspace "$WS" --approve deny --audit "$L/$1.jsonl" \
        -- /bin/true >/dev/null 2>"$scratch/$1.err" </dev/null
}
prune() { "$cordon" audit prune --dir "$L" --key-dir "$K" "$@"; }
there() { [ -f "$L/$1.jsonl" ] && [ -f "$K/$(session_of "$L/$1.jsonl").key" ]; }
bcd_there() { there b && there c && there d; }

for s in a b c d; do run_one $s; done
ok "four sessions ran, each log sealed with its key" sh -c '
    for s in a b c d; do grep -q "\"type\":\"seal\"" "$1/$s.jsonl" || exit 1; done' _ "$L"
A=$(session_of "$L/a.jsonl"); B=$(session_of "$L/b.jsonl"); C=$(session_of "$L/c.jsonl")
D=$(session_of "$L/d.jsonl")
touch -d '40 days ago' "$L/a.jsonl"
touch -d '3 days ago' "$L/b.jsonl"
touch -d '2 days ago' "$L/c.jsonl"
touch -d '1 day ago' "$L/d.jsonl"

# A session that runs on while the logs are pruned, its log older than all.
"$cordon" run -q --user "$AGENT" --workspace "$WS" --approve deny --audit "$L/live.jsonl" \
    -- /bin/sleep 300 >/dev/null 2>"$scratch/live.err" </dev/null &
live_pid=$!
i=0
LIVE=
while [ $i -lt 400 ] && { [ -z "$LIVE" ] || [ -z "$(procs "sleep 300" | head -n 1)" ]; }; do
    LIVE=$(session_of "$L/live.jsonl" 2>/dev/null); sleep 0.05; i=$((i + 1))
done
ok "a live session runs ($LIVE)" test -n "$LIVE" -a -d "$CORDON_RUN/$LIVE"
touch -d '50 days ago' "$L/live.jsonl"
# A log whose session died unsealed (b's records, its seal cut off).
sed '$d' "$L/b.jsonl" >"$L/crash.jsonl"
touch -d '60 days ago' "$L/crash.jsonl"
# A symlink planted in the directory, to a sealed log outside it.
cp "$L/c.jsonl" "$scratch/victim.jsonl"
ln -s "$scratch/victim.jsonl" "$L/planted.jsonl"

out=$(prune --max-count 0 --dry-run)
ok "--dry-run names the four sealed logs" sh -c '[ "$(printf "%s\n" "$1" | grep -c "^would prune $2/")" -eq 4 ]' _ "$out" "$L"
ok "  and removes nothing" sh -c 'for s in a b c d live; do [ -f "$1/$s.jsonl" ] || exit 1; done;
    [ "$(ls "$2" | wc -l)" -eq 5 ]' _ "$L" "$K"

out=$(prune --max-age 30d)
ok "--max-age 30d prunes the sealed log older than that (a)" \
    sh -c 'printf "%s\n" "$1" | grep -q "^pruned $2/a.jsonl (session $3, [0-9]* bytes, and its key): max-age"' _ "$out" "$L" "$A"
ok "  with its key" test ! -e "$L/a.jsonl" -a ! -e "$K/$A.key"
ok "  not the live session's log, older still" test -f "$L/live.jsonl"
ok "  not the unsealed one, oldest of all, saying why" \
    sh -c 'test -f "$2/crash.jsonl" && printf "%s\n" "$1" | grep -q "^kept $2/crash.jsonl: not sealed"' _ "$out" "$L"
ok "  the live one kept, saying why" \
    sh -c 'printf "%s\n" "$1" | grep -q "^kept $2/live.jsonl: its session has not ended"' _ "$out" "$L"
ok "  the symlink neither followed nor removed" \
    sh -c 'test -L "$2/planted.jsonl" && test -f "$3" && printf "%s\n" "$1" | grep -q "^kept $2/planted.jsonl: a symlink"' \
    _ "$out" "$L" "$scratch/victim.jsonl"
ok "  the others stay" bcd_there

# Five logs now: crash (unsealed), live, b, c, d.  At most four: the oldest
# sealed one goes (b); its key stays, the unsealed copy of its log needs it.
out=$(prune --max-count 4)
ok "--max-count 4 prunes the oldest sealed log (b)" \
    sh -c 'test ! -e "$2/b.jsonl" && printf "%s\n" "$1" | grep -q "^pruned $2/b.jsonl .*: max-count"' _ "$out" "$L"
ok "  keeping its key, which the unsealed copy of its log still needs" test -f "$K/$B.key"
ok "  and the rest" sh -c 'test -f "$1/c.jsonl" -a -f "$1/d.jsonl" -a -f "$1/live.jsonl" -a -f "$1/crash.jsonl"' _ "$L"

bytes=$(prune --max-size 1T --dry-run --json | jq -r .remaining.bytes)
out=$(prune --max-size $((bytes - 1)) --json)
ok "--max-size one byte under the total ($bytes) prunes the oldest sealed log (c)" \
    sh -c 'printf "%s\n" "$1" | jq -e "[.pruned[].log] == [\"c.jsonl\"] and .pruned[0].rule == \"max-size\" and .remaining.bytes < $2"' \
    _ "$out" "$bytes"
ok "  log and key" test ! -e "$L/c.jsonl" -a ! -e "$K/$C.key"
ok "  d stays" there d

# The admin's file: root's, written by root alone, or nothing is pruned.
printf '# retention for the test\nmax-count = 0\n' >"$scratch/retention"
chmod 0666 "$scratch/retention"
prune --config "$scratch/retention" >/dev/null 2>"$scratch/conf.err"
rc=$?
ok "a rule file others may write is refused (rc=$rc)" \
    sh -c '[ "$1" -eq 2 ] && grep -q "only root may write" "$2" && test -f "$3/d.jsonl"' _ "$rc" "$scratch/conf.err" "$L"
printf 'max-count = 0\nmax-cuont = 1\n' >"$scratch/bad"
chmod 0600 "$scratch/bad"
prune --config "$scratch/bad" >/dev/null 2>"$scratch/conf.err"
rc=$?
ok "a bad member is refused, by file, line and column (rc=$rc)" \
    sh -c '[ "$1" -eq 2 ] && grep -q "$2:2:1: unknown member .max-cuont." "$3"' _ "$rc" "$scratch/bad" "$scratch/conf.err"
chmod 0600 "$scratch/retention"
out=$(prune --config "$scratch/retention" --json)
ok "the rule file's max-count = 0 prunes the last sealed log (d)" \
    sh -c 'printf "%s\n" "$1" | jq -e "[.pruned[].log] == [\"d.jsonl\"]" >/dev/null && test ! -e "$2/d.jsonl"' _ "$out" "$L"
ok "  and says what it kept, and why" \
    sh -c 'printf "%s\n" "$1" | jq -e "[.kept[] | .log + \":\" + .state] | sort ==
        [\"crash.jsonl:unsealed\", \"live.jsonl:live\", \"planted.jsonl:not-a-log\"]" >/dev/null' _ "$out"
out=$(prune --config "$scratch/retention" --max-count 9 --json)
ok "  an option overrides the file's member" sh -c 'printf "%s\n" "$1" | jq -e ".pruned == []" >/dev/null' _ "$out"
: >"$scratch/empty"
prune >/dev/null 2>"$scratch/none.err" --config "$scratch/empty"
rc=$?
ok "no rule at all prunes nothing (rc=$rc)" sh -c '[ "$1" -eq 2 ] && grep -q "no retention rule" "$2"' _ "$rc" "$scratch/none.err"

# The live session ends: its log is sealed, and now it may go, said to syslog.
kill $(procs "sleep 300") 2>/dev/null
wait $live_pid
live_pid=
ok "the live session ended, its log sealed" grep -q '"type":"seal"' "$L/live.jsonl"
rcv=
if command -v python3 >/dev/null 2>&1; then
    python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
open(sys.argv[2] + ".ready", "w").close()
s.settimeout(30)
with open(sys.argv[2], "wb") as f:
    f.write(s.recv(65536) + b"\n")
' "$scratch/syslog.sock" "$scratch/syslog.out" &
    rcv=$!
    i=0
    while [ $i -lt 100 ] && [ ! -e "$scratch/syslog.out.ready" ]; do sleep 0.05; i=$((i + 1)); done
fi
out=$(CORDON_AUDIT_SYSLOG=$scratch/syslog.sock prune --max-count 0)
ok "then it is pruned" sh -c 'test ! -e "$2/live.jsonl" && printf "%s\n" "$1" | grep -q "^pruned $2/live.jsonl"' _ "$out" "$L"
if [ -n "$rcv" ]; then
    wait $rcv
    rcv=
    ok "  and the removal is sent to syslog (RFC 5424, its own SD element)" \
        grep -q "^<86>1 .* cordon [0-9]* prune \[cordon-prune@32473 .*session=\"$LIVE\"" "$scratch/syslog.out"
else
    skip "  the removal sent to syslog: no python3 for a receiving socket"
fi
ok "the unsealed log and the symlink are still there" test -f "$L/crash.jsonl" -a -L "$L/planted.jsonl"
done_testing
