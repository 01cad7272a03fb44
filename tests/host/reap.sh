#!/bin/sh
# Sessions whose cordon is gone (userspace/reap.h): the supervisor and its
# watchdog both killed with SIGKILL leave the session behind (its cgroup
# with the agent's daemonised tasks still running, its network floor
# entries, its run directory).  The next `cordon run` reaps it, tasks
# first; `cordon floor gc` does the same; a live session is never touched.
# POSIX sh: also run in the VM (tests/vm/reap.sh).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib_run.sh"

[ "$(id -u)" -eq 0 ] || skip_all "needs root"
agent_user || skip_all "no unprivileged user for the agent"
new_workspace
t=$(mktemp -d /var/tmp/cordon-reap.XXXXXX)
trap 'rm -rf "$t" "$WS"' EXIT
cp "$attack" "$WS/cordon-reaped"

# session_of PATTERN: the session name of the first process whose command
# line has PATTERN (from its cgroup, /cordon/NAME).
session_of() {
    for _s in $(procs "$1"); do
        _c=$(sed -n 's/^0:://p' "/proc/$_s/cgroup" 2>/dev/null)
        case $_c in /cordon/s*) echo "${_c#/cordon/}"; return 0 ;; esac
    done
    return 1
}
# (From mountinfo: in a fresh guest no session has made cordon's cgroup yet.)
cg_root=$(cgroup2_root)
[ -n "$cg_root" ] || skip_all "no cgroup2 mount"
# drops_entry ID: the network floor's per-session entry for cgroup ID (bpftool).
drops_entry() {
    _k=$(awk -v id="$1" 'BEGIN { for (i = 0; i < 8; i++) { printf "%d ", id % 256; id = int(id / 256) } }')
    bpftool map lookup pinned /sys/fs/bpf/cordon/net/drops key $_k >/dev/null 2>&1
}
no_drops_entry() { ! drops_entry "$1"; }

# orphan TAG: a session whose agent left a daemon (setsid) behind, then its
# supervisor and watchdog (the same command line) killed at once.  Sets
# name, cg, cgid, sup.
orphan() {
    "$cordon" run -q --user "$AGENT" --workspace "$WS" --approve deny --audit "$t/$1.jsonl" -- \
        /bin/sh -c "setsid $WS/cordon-reaped sleep 300 </dev/null >/dev/null 2>&1 & $WS/cordon-reaped sleep 301" \
        >/dev/null 2>"$t/$1.err" </dev/null &
    i=0
    while [ $i -lt 200 ] && [ "$(procs "cordon-reaped sleep 30" | wc -l)" -lt 2 ]; do sleep 0.05; i=$((i + 1)); done
    name=$(session_of "cordon-reaped sleep 300")
    cg=$cg_root/cordon/$name
    cgid=$(stat -c %i "$cg" 2>/dev/null)
    sup=$(procs "--audit $t/$1.jsonl")
    kill -9 $sup 2>/dev/null
    wait 2>/dev/null
    # `wait` covers only our child; the watchdog, not ours, may still be
    # exiting and holding its share of the run directory's lock, which
    # rightly keeps a reaper off.  Wait until both are gone (a zombie's
    # command line is empty, and it holds no files).
    i=0
    while [ $i -lt 200 ] && [ -n "$(procs "--audit $t/$1.jsonl")" ]; do sleep 0.05; i=$((i + 1)); done
}

orphan a
ok "a session left behind: supervisor and watchdog ($(echo $sup)) killed at once" \
    test -n "$name" -a "$(echo $sup | wc -w)" -ge 2
ok "  its cgroup stays, with the agent's daemon in it" \
    sh -c '[ -d "$1" ] && [ -n "$(cat "$1/cgroup.procs")" ]' _ "$cg"
ok "  its run directory stays" test -d "/run/cordon/$name"
have_bpftool=0
command -v bpftool >/dev/null 2>&1 && [ -e /sys/fs/bpf/cordon/net/drops ] && have_bpftool=1
if [ $have_bpftool = 1 ]; then
    ok "  and its network floor entries" drops_entry "$cgid"
fi

# The next session reaps it; it runs on while a third starts, which must
# not take it for dead.
# (Its agent sleeps long enough for a slow machine, and is ended below.)
"$cordon" run -q --user "$AGENT" --workspace "$WS" --approve deny --audit "$t/live.jsonl" -- \
    "$WS/cordon-reaped" sleep 120 >/dev/null 2>"$t/live.err" </dev/null & live=$!
i=0
while [ $i -lt 200 ] && [ -z "$(procs "cordon-reaped sleep 120")" ]; do sleep 0.05; i=$((i + 1)); done
live_name=$(session_of "cordon-reaped sleep 120")

ok "the next cordon run starts ($live_name)" test -n "$live_name"
ok "  saying it reaped the dead session and killed its tasks" \
    grep -q "reaped session $name: its cordon and watchdog were gone ([1-9][0-9]* tasks\{0,1\} killed)" "$t/live.err"
ok "  its cgroup is gone" test ! -d "$cg"
ok "  and the agent's daemon with it" test -z "$(procs "cordon-reaped sleep 30")"
ok "  its run directory is gone" test ! -e "/run/cordon/$name"
# sealed_by_reaper LOG: the reaper's record closes LOG, sealed, and the log verifies.
sealed_by_reaper() {
    "$cordon" audit verify --key-dir "$CORDON_AUDIT_KEY_DIR" "$1" | grep -q sealed &&
        tail -n 2 "$1" | head -n 1 | grep -q '"event":"reaped".*"tasks_killed":[1-9]'
}
ok "  its log ends with the reaper's record, sealed" sealed_by_reaper "$t/a.jsonl"
ok "  and the warning says so" grep -q "reaped session $name: .*; its log $t/a.jsonl is sealed" "$t/live.err"
if [ $have_bpftool = 1 ]; then
    ok "  its network floor entries are gone" no_drops_entry "$cgid"
else
    skip "  its network floor entries: bpftool is not installed"
fi
in_session -- /bin/true
ok "a third session runs (rc=$rc)" test "$rc" -eq 0
ok "  and did not reap the live one ($live_name)" \
    sh -c '[ -n "$1" ] && [ -d "$2/cordon/$1" ] && [ -d "/run/cordon/$1" ] &&
        ! printf "%s\n" "$3" | grep -q "reaped session $1"' _ "$live_name" "$cg_root" "$err"
kill $(procs "cordon-reaped sleep 120") 2>/dev/null
wait $live
ok "the live session ends when its agent does (rc=$?)" test -z "$(procs "cordon-reaped sleep 120")"
ok "  its log is sealed: its own supervisor ended it" sh -c 'grep -q "\"type\":\"seal\"" "$1" && ! grep -q "\"event\":\"reaped\"" "$1"' _ "$t/live.jsonl"

# cordon floor gc reaps too.
orphan b
ok "another session left behind ($name)" test -n "$name" -a -d "$cg"
out=$("$cordon" floor gc 2>&1)
ok "cordon floor gc reaps it: $out" sh -c 'printf "%s\n" "$1" | grep -q "1 dead session(s) reaped" &&
    printf "%s\n" "$1" | grep -q "reaped session $2"' _ "$out" "$name"
ok "  its cgroup and its tasks are gone" sh -c '[ ! -d "$1" ] && [ -z "$2" ]' _ "$cg" "$(procs "cordon-reaped sleep 30")"
ok "  its run directory is gone" test ! -e "/run/cordon/$name"
ok "  its log ends with the reaper's record, sealed" sealed_by_reaper "$t/b.jsonl"
done_testing
