#!/bin/bash
# One set of rules for every command and subcommand, taken from the binary
# (`cordon --commands`), so that a command added to main.c's table cannot
# escape them:
#  - `cordon CMD [SUB] --help` exits 0, prints its usage on stdout, nothing
#    on stderr; `cordon help CMD [SUB]` prints the same;
#  - an unknown option is an error naming it, exit 2 (run: 125, its own
#    errors' status: run's exit status is otherwise the agent's, as env(1));
#  - where it reports (--json in the list), --json answers valid JSON, on a
#    real sample invocation kept below: a reporting command with no sample
#    fails here until it has one.
# Then each inconsistency of issue #35 as it was reported, and `cordon floor
# status` against a live session (its name, user, workspace, pid, age).
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib_run.sh"
src=$(cd "$(dirname "$0")/../.." && pwd)
command -v jq >/dev/null || skip_all "jq not installed (the JSON checks)"
session_test cli_consistency
chmod 0755 "$scratch"
sess_pid=
cleanup() {
    [ -z "$sess_pid" ] || kill "$sess_pid" 2>/dev/null
    wait 2>/dev/null
    rm -rf "$WS" "$scratch"
}
trap cleanup EXIT

list=$("$cordon" --commands)
ok "cordon --commands lists commands" test -n "$list"
# Every command `cordon help` shows is in the list (the list drives the rest).
for c in $("$cordon" help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }'); do
    ok "help's command $c is in --commands" grep -q "^$c\b" <<<"$list"
done

# --- a live session and a finished one's log: samples for the JSON checks --------
# Its key in a directory of the test's own: nobody else's housekeeping reaches it.
CORDON_AUDIT_KEY_DIR=$scratch/keys "$cordon" run -q --user "$AGENT" --workspace "$WS" --audit "$scratch/done.jsonl" \
    --approve deny -- /bin/true </dev/null 2>"$scratch/done.err"
ok "a short session ran (its log is the audit sample)" test -s "$scratch/done.jsonl"
"$cordon" run -q --user "$AGENT" --workspace "$WS" --audit "$scratch/live.jsonl" \
    --approve socket -- /bin/sleep 60 </dev/null >/dev/null 2>"$scratch/live.err" &
sess_pid=$!
S=
for _ in $(seq 100); do
    S=$(sed -n 's/.*"session":"\(s[0-9a-f]*\)".*/\1/p' "$scratch/live.jsonl" 2>/dev/null | head -n 1)
    [ -n "$S" ] && [ -e "$CORDON_RUN/$S/session.json" ] && break
    sleep 0.1
done
ok "a live session started ($S)" test -n "$S"

# The JSON sample of each reporting command, by its --commands line.
sample() {
    case $1 in
    pending) "$cordon" pending --json ;;
    intent) "$cordon" intent "$S" --list --json ;;
    doctor) "$cordon" doctor --json ;;
    "policy check") "$cordon" policy check --json coding-agent ;;
    "policy explain") "$cordon" policy explain --json coding-agent read /etc/hostname ;;
    "policy test") "$cordon" policy test --json coding-agent "$src/policy/profiles/coding-agent.scenarios.json" ;;
    "floor status") "$cordon" floor status --json ;;
    "floor gc") "$cordon" floor gc --json ;;
    "audit verify") "$cordon" audit verify --json --key-dir "$scratch/keys" "$scratch/done.jsonl" ;;
    "audit show") "$cordon" audit show --json "$scratch/done.jsonl" ;;
    "audit prune") mkdir -p -m 0755 "$scratch/plogs" "$scratch/pkeys" &&
        cp "$scratch/done.jsonl" "$scratch/plogs/" &&
        "$cordon" audit prune --json --dry-run --max-count 100 --dir "$scratch/plogs" --key-dir "$scratch/pkeys" ;;
    "home diff") "$cordon" home diff --json --user "$AGENT" ;;
    version) "$cordon" version --json ;;
    *) echo "no JSON sample for '$1': add one to tests/host/cli_consistency.sh" >&2; return 99 ;;
    esac
}

while IFS=$'\t' read -r cmd flags; do
    # shellcheck disable=SC2086
    set -- $cmd
    o=$("$cordon" "$@" --help 2>"$scratch/e"); rc=$?
    ok "$cmd --help: exit 0 (rc=$rc)" test "$rc" -eq 0
    ok "$cmd --help: usage on stdout" grep -q "usage: cordon $1" <<<"$o"
    [ $# -eq 1 ] || ok "$cmd --help: names $2" grep -q "cordon $1.* $2" <<<"$o"
    ok "$cmd --help: nothing on stderr" test ! -s "$scratch/e"
    h=$("$cordon" help "$@" 2>&1)
    ok "cordon help $cmd prints the same" test "$h" = "$o"
    "$cordon" "$@" --no-such-option </dev/null >/dev/null 2>"$scratch/e"; rc=$?
    want=2; [ "$1" = run ] && want=125
    ok "$cmd --no-such-option: exit $want (rc=$rc)" test "$rc" -eq "$want"
    ok "$cmd --no-such-option: the error names it" grep -q -- --no-such-option "$scratch/e"
    if [ "$flags" = --json ]; then
        ok "$cmd --help mentions --json" grep -q -- --json <<<"$o"
        sample "$cmd" >"$scratch/j" 2>"$scratch/e"; rc=$?
        ok "$cmd --json: a sample ran (rc=$rc)" test "$rc" -ne 99
        ok "$cmd --json: valid JSON on stdout" sh -c "test -s '$scratch/j' && jq . '$scratch/j' >/dev/null || { cat '$scratch/e' >&2; exit 1; }"
    fi
done <<<"$list"

# --- issue #35's examples, as reported ----------------------------------------------
t() { o=$("$cordon" "$@" 2>"$scratch/e"); rc=$?; e=$(cat "$scratch/e"); }
run_opts() { t run --user "$AGENT" --workspace "$WS" --approve deny -q "$@" -- /bin/true; }
run_opts --env A=B
ok "run --env A=B is an error (rc=$rc), not ignored" bash -c '[ "$1" -eq 125 ] && grep -q -- "--env A=B" <<<"$2"' _ "$rc" "$e"
run_opts --profile coding-agent --policy "$src/policy/profiles/coding-agent.json"
ok "run --profile X --policy Y: a conflict (rc=$rc)" bash -c '[ "$1" -eq 125 ] && grep -q -- "--policy .* conflicts with --profile coding-agent" <<<"$2"' _ "$rc" "$e"
run_opts --audit /tmp/a --audit /tmp/b
ok "run --audit twice: a conflict (rc=$rc)" bash -c '[ "$1" -eq 125 ] && grep -q -- "--audit /tmp/b conflicts with --audit /tmp/a" <<<"$2"' _ "$rc" "$e"
run_opts --var WORKSPACE=/etc
ok "run --var WORKSPACE=/etc refused (rc=$rc)" bash -c '[ "$1" -eq 125 ] && grep -q "WORKSPACE.*the session.s own" <<<"$2"' _ "$rc" "$e"
for w in / /etc /home /proc/self; do
    t run --user "$AGENT" --workspace "$w" --approve deny -q -- /bin/true
    ok "run --workspace $w refused (rc=$rc)" bash -c '[ "$1" -eq 125 ] && grep -q "workspace /" <<<"$2"' _ "$rc" "$e"
done
o=$("$cordon" run -v --user "$AGENT" --workspace "$WS" --approve deny -- /bin/true 2>&1 </dev/null); rc=$?
ok "run -v is accepted and logs the phases (rc=$rc)" bash -c '[ "$1" -eq 0 ] && grep -q "policy loaded" <<<"$2"' _ "$rc" "$o"
ok "the start banner names the audit log" grep -q "audit log: /var/log/cordon/s[0-9a-f]*.jsonl" <<<"$o"
t approve --help; ok "approve --help: exit 0, usage (rc=$rc)" bash -c '[ "$1" -eq 0 ] && grep -q "usage: cordon approve" <<<"$2"' _ "$rc" "$o"
t deny --help; ok "deny --help: exit 0, usage (rc=$rc)" bash -c '[ "$1" -eq 0 ] && grep -q "usage: cordon deny" <<<"$2"' _ "$rc" "$o"
t pending --help; ok "pending --help prints usage, not requests" grep -q "usage: cordon pending" <<<"$o"
t help run; ok "cordon help run is run's help" grep -q "usage: cordon run" <<<"$o"
t policy check --json coding-agent
ok "policy check --json: JSON, not a file named --json (rc=$rc)" bash -c '[ "$1" -eq 0 ] && jq -e ".[0].ok" <<<"$2" >/dev/null' _ "$rc" "$o"
t policy check <(cat "$src/policy/profiles/coding-agent.json")
ok "policy check <(...) reads the pipe (rc=$rc)" bash -c '[ "$1" -eq 0 ] && grep -q ": ok" <<<"$2"' _ "$rc" "$o"
t policy explain --english --json coding-agent
ok "policy explain --english --json: a conflict (rc=$rc)" bash -c '[ "$1" -eq 2 ] && grep -q -- "--english and --json conflict" <<<"$2"' _ "$rc" "$e"
t audit verify --key /dev/null --key-dir /tmp "$scratch/done.jsonl"
ok "audit verify --key --key-dir: a conflict (rc=$rc)" bash -c '[ "$1" -eq 2 ] && grep -q -- "--key and --key-dir conflict" <<<"$2"' _ "$rc" "$e"
t audit verify "$scratch"
ok "audit verify DIR: says it is a directory (rc=$rc)" bash -c '[ "$1" -eq 2 ] && grep -q "is a directory" <<<"$2" && ! grep -q "Input/output" <<<"$2"' _ "$rc" "$e"
t audit verify --json --key-dir "$scratch/keys" "$scratch/done.jsonl"
ok "audit verify --json: intact, records counted" bash -c 'jq -e ".intact == true and .records > 0" <<<"$1" >/dev/null' _ "$o"
# On a raw terminal (no ONLCR: how a session holds the human's), cordon's lines end \r\n.
if command -v script >/dev/null; then
    script -qec "stty raw -opost; '$cordon' policy check --no-such-option" /dev/null >"$scratch/raw" 2>&1
    ok "a raw terminal gets \\r\\n, no staircase" grep -q $'no-such-option.*\r$' "$scratch/raw"
else
    skip "no script(1): the raw terminal check"
fi
printf '{"servers": {"nope": {"command": ["/nonexistent/server"]}}}\n' >"$scratch/srv.json"
o=$(printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
    '{"jsonrpc":"2.0","method":"notifications/initialized"}' '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' |
    timeout 30 "$cordon" mcp-proxy --servers "$scratch/srv.json" --user "$AGENT" --workspace "$WS" \
        --audit "$scratch/mcp.jsonl" 2>"$scratch/e"); rc=$?
ok "mcp-proxy, no server up: tools/list is an error naming it" \
    bash -c 'jq -e "select(.id == 2) | .error.message | test(\"nope\")" <<<"$1" >/dev/null' _ "$o"
ok "  and it exits non-zero (rc=$rc)" test "$rc" -ne 0

# --- floor status: each part, and the live session --------------------------------
t floor status --json
ok "floor status --json names the LSM floor, the network floor, the posture" \
    jq -e '(.lsm.loaded | type) == "boolean" and (.net.loaded | type) == "boolean" and (.net.exec_recheck | type) == "boolean" and (.posture | type) == "string"' <<<"$o"
lsm=$(jq -r .lsm.loaded <<<"$o"); net=$(jq -r .net.loaded <<<"$o")
ok "the network floor is loaded while a session runs" test "$net" = true
[ "$lsm" = true ] || ok "without the LSM floor the posture is fallback" jq -e '.posture == "fallback"' <<<"$o"
ok "the live session is listed, live, with user, workspace, pid, age" \
    jq -e --arg s "$S" --arg u "$AGENT" --arg w "$WS" \
    '.sessions[] | select(.name == $s) | .live == true and .user == $u and .workspace == $w and .pid > 0 and .age_s >= 0' <<<"$o"
t floor status
ok "floor status (text): the network floor's line" grep -q "^network floor: loaded" <<<"$o"
ok "floor status (text): the session's line" grep -q "$S  live  $AGENT" <<<"$o"
[ "$lsm" = true ] || ok "floor status (text): the LSM floor not loaded, and why" grep -q "^floor: BPF LSM floor not loaded (" <<<"$o"
"$cordon" stop "$S" >/dev/null 2>&1
wait "$sess_pid" 2>/dev/null; sess_pid=
ok "the session ended: its run directory is gone" test ! -e "$CORDON_RUN/$S"
t floor status --json
ok "and floor status no longer lists it" jq -e --arg s "$S" '[.sessions[] | select(.name == $s)] | length == 0' <<<"$o"
done_testing
