#!/bin/sh
# Sessions whose cordon is gone (userspace/session/reap.h): the supervisor and its
# watchdog both killed with SIGKILL leave the session behind (its cgroup
# with the agent's daemonised tasks still running, its network floor
# entries, its run directory).  The next `cordon run` reaps it, tasks
# first, and seals its log with a record of the reaping; `cordon floor gc`
# does the same, and drops the exec recheck's kill marks of threads that
# are gone; a live session is never touched.  On the tests' own floor
# instance (tests/lib.sh): its gc and reaping never reach the host's live
# sessions (tests/host/live_floor.sh).
# POSIX sh: also run in the VM (tests/vm/host_tests.list).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib_run.sh"

[ "$(id -u)" -eq 0 ] || skip_all "needs root"
agent_user || skip_all "no unprivileged user for the agent"
new_workspace
t=$(mktemp -d /var/cordon-reap.XXXXXX)
trap 'rm -rf "$t" "$WS"' EXIT
cp "$attack" "$WS/cordon-reaped"

# started PREFIX: the session name of a process whose command line begins
# with PREFIX, in a session's cgroup (an agent, not the supervisor or a
# shell that names it).
started() {
    for _p in /proc/[0-9]*; do
        _a=$(tr '\0' ' ' 2>/dev/null <"$_p/cmdline") || continue
        case $_a in "$1"*) ;; *) continue ;; esac
        _c=$(sed -n 's/^0:://p' "$_p/cgroup" 2>/dev/null)
        case $_c in "/$CORDON_CG/s"*) echo "${_c#/"$CORDON_CG"/}"; return 0 ;; esac
    done
    return 1
}
# (From mountinfo: in a fresh guest no session has made cordon's cgroup yet.)
cg_root=$(cgroup2_root)
[ -n "$cg_root" ] || skip_all "no cgroup2 mount"
# drops_entry ID: the network floor's per-session entry for cgroup ID (bpftool).
drops_entry() {
    _k=$(awk -v id="$1" 'BEGIN { for (i = 0; i < 8; i++) { printf "%d ", id % 256; id = int(id / 256) } }')
    bpftool map lookup pinned "$CORDON_PINS/net/drops" key $_k >/dev/null 2>&1
}
no_drops_entry() { ! drops_entry "$1"; }
# le N BYTES: N as BYTES little-endian bytes, in decimal, for bpftool.
le() { awk -v v="$1" -v n="$2" 'BEGIN { for (i = 0; i < n; i++) { printf "%d ", v % 256; v = int(v / 256) } }'; }
expect_pin=$CORDON_PINS/net/exec_expect
# expect_put TID CGID: an exec expectation (struct cordon_exec_expect, 72
# bytes) for thread TID in session cgroup CGID, marked killed, as a kill
# whose supervisor died before it collected the mark leaves it.
expect_put() {
    bpftool map update pinned "$expect_pin" key $(le "$1" 4) \
        value $(le 0 56) $(le 0 4) $(le 1 4) $(le "$2" 8) >/dev/null
}
expect_there() { bpftool map lookup pinned "$expect_pin" key $(le "$1" 4) >/dev/null 2>&1; }

# orphan TAG: a session whose agent left a daemon (setsid) behind, then its
# supervisor and watchdog (the same command line) killed at once.  Sets
# name, cg, cgid, sup.
orphan() {
    "$cordon" run -q --user "$AGENT" --workspace "$WS" --approve deny --audit "$t/$1.jsonl" -- \
        /bin/sh -c "setsid $WS/cordon-reaped sleep 300 </dev/null >/dev/null 2>&1 & $WS/cordon-reaped sleep 301" \
        >/dev/null 2>"$t/$1.err" </dev/null &
    i=0
    # Until the daemon and the agent run in the session's cgroup (the
    # supervisor's and the shell's command lines have the pattern too).
    name=
    while [ $i -lt 400 ] && { [ -z "$name" ] || ! started "$WS/cordon-reaped sleep 301" >/dev/null; }; do
        name=$(started "$WS/cordon-reaped sleep 300") || { sleep 0.05; i=$((i + 1)); }
    done
    cg=$cg_root/$CORDON_CG/$name
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
# The agent's tree dies with its supervisor even so: its first process is
# PID 1 of the session's PID namespace, with the supervisor's death as its
# parent-death signal, and the kernel kills a namespace whose init is gone.
i=0
while [ $i -lt 100 ] && [ -n "$(cat "$cg/cgroup.procs" 2>/dev/null)" ]; do sleep 0.05; i=$((i + 1)); done
ok "  its cgroup stays, and the agent's tree died with its PID namespace" \
    sh -c '[ -d "$1" ] && [ -z "$(cat "$1/cgroup.procs")" ]' _ "$cg"
ok "  its run directory stays" test -d "$CORDON_RUN/$name"
have_bpftool=0
command -v bpftool >/dev/null 2>&1 && [ -e "$CORDON_PINS/net/drops" ] && have_bpftool=1
if [ $have_bpftool = 1 ]; then
    ok "  and its network floor entries" drops_entry "$cgid"
fi

# The next session reaps it; it runs on while a third starts, which must
# not take it for dead.
# (Its agent sleeps long enough for a slow machine, and is ended below.)
"$cordon" run -q --user "$AGENT" --workspace "$WS" --approve deny --audit "$t/live.jsonl" -- \
    "$WS/cordon-reaped" sleep 120 >/dev/null 2>"$t/live.err" </dev/null & live=$!
i=0
# Until the agent is in its session's cgroup: the supervisor's own command
# line has the pattern too, and is there first.
live_name=
while [ $i -lt 400 ] && [ -z "$live_name" ]; do
    live_name=$(started "$WS/cordon-reaped sleep 120") || { sleep 0.05; i=$((i + 1)); }
done

ok "the next cordon run starts ($live_name)" test -n "$live_name"
ok "  saying it reaped the dead session" \
    grep -q "reaped session $name: its cordon and watchdog were gone ([0-9][0-9]* tasks\{0,1\} killed)" "$t/live.err"
ok "  its cgroup is gone" test ! -d "$cg"
ok "  and the agent's daemon with it" test -z "$(procs "cordon-reaped sleep 30")"
ok "  its run directory is gone" test ! -e "$CORDON_RUN/$name"
# sealed_by_reaper LOG: the reaper's record closes LOG, sealed, and the log verifies.
sealed_by_reaper() {
    "$cordon" audit verify --key-dir "$CORDON_AUDIT_KEY_DIR" "$1" | grep -q sealed &&
        tail -n 2 "$1" | head -n 1 | grep -q '"event":"reaped".*"tasks_killed":[0-9]'
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
    sh -c '[ -n "$1" ] && [ -d "$2/$1" ] && [ -d "$4/$1" ] &&
        ! printf "%s\n" "$3" | grep -q "reaped session $1"' _ "$live_name" "$cg_root/$CORDON_CG" "$err" "$CORDON_RUN"
kill $(procs "cordon-reaped sleep 120") 2>/dev/null
wait $live
ok "the live session ends when its agent does (rc=$?)" test -z "$(procs "cordon-reaped sleep 120")"
ok "  its log is sealed: its own supervisor ended it" sh -c 'grep -q "\"type\":\"seal\"" "$1" && ! grep -q "\"event\":\"reaped\"" "$1"' _ "$t/live.jsonl"

# cordon floor gc reaps too.
orphan b
ok "another session left behind ($name)" test -n "$name" -a -d "$cg"
# And an exec expectation's kill mark its dead supervisor never collected,
# beside one of a thread still alive (this shell), which stays.
if [ $have_bpftool = 1 ] && [ -e "$expect_pin" ]; then
    gone_tid=$(($(cat /proc/sys/kernel/pid_max) - 7))
    while [ -e "/proc/$gone_tid" ]; do gone_tid=$((gone_tid - 1)); done
    expect_put "$gone_tid" "$cgid"
    expect_put $$ "$cgid"
    both_there() { expect_there "$gone_tid" && expect_there $$; }
    ok "  (kill marks left in the exec recheck's map: thread $gone_tid gone, thread $$ alive)" both_there
fi
out=$("$cordon" floor gc 2>&1)
ok "cordon floor gc reaps it: $out" sh -c 'printf "%s\n" "$1" | grep -q "1 dead session(s) reaped" &&
    printf "%s\n" "$1" | grep -q "reaped session $2"' _ "$out" "$name"
ok "  its cgroup and its tasks are gone" sh -c '[ ! -d "$1" ] && [ -z "$2" ]' _ "$cg" "$(procs "cordon-reaped sleep 30")"
ok "  its run directory is gone" test ! -e "$CORDON_RUN/$name"
ok "  its log ends with the reaper's record, sealed" sealed_by_reaper "$t/b.jsonl"
ok "  and its log's note is gone" test ! -e "$CORDON_OPEN_LOGS/$name"
if [ $have_bpftool = 1 ] && [ -e "$expect_pin" ]; then
    gone_dropped() { ! expect_there "$gone_tid"; }
    ok "  the kill mark of the thread that is gone is dropped" gone_dropped
    ok "  the live thread's is kept" expect_there $$
    bpftool map delete pinned "$expect_pin" key $(le $$ 4) 2>/dev/null
else
    skip "  kill marks in the exec recheck's map: bpftool or the map is missing"
fi

# A session that left nothing but its log (the host restarted under it:
# its cgroups and run directory gone, its log on disk): the next reaper
# closes the log from its note.
orphan c
ok "a third session left behind ($name), its log's note kept" test -f "$CORDON_OPEN_LOGS/$name"
# kill_cg DIR: every task of cgroup DIR killed, DIR and its children removed.
kill_cg() {
    [ -d "$1" ] || return 0
    echo 1 >"$1/cgroup.kill"
    i=0
    while [ $i -lt 100 ] && grep -q "populated 1" "$1/cgroup.events"; do sleep 0.05; i=$((i + 1)); done
    find "$1" -depth -type d -exec rmdir {} \;
}
kill_cg "$cg"
kill_cg "$cg_root/$CORDON_CG-unix/$name"
rm -rf "$CORDON_RUN/$name"
ok "  (then its cgroup and run directory were removed, as a restart does)" \
    sh -c '[ ! -d "$1" ] && [ ! -e "$4/$2" ] && [ -z "$3" ]' _ "$cg" "$name" "$(procs "cordon-reaped sleep 30")" "$CORDON_RUN"
out=$("$cordon" floor gc 2>&1)
ok "cordon floor gc closes its log: $out" \
    sh -c 'printf "%s\n" "$1" | grep -q "reaped session $2: it was gone before its cordon closed its log; its log $3 is sealed"' \
    _ "$out" "$name" "$t/c.jsonl"
host_gone() {
    "$cordon" audit verify --key-dir "$CORDON_AUDIT_KEY_DIR" "$1" | grep -q sealed &&
        tail -n 2 "$1" | head -n 1 | grep -q '"event":"reaped".*the host restarted'
}
ok "  its log ends with the reaper's record, sealed" host_gone "$t/c.jsonl"
ok "  and its note is gone" test ! -e "$CORDON_OPEN_LOGS/$name"
if [ $have_bpftool = 1 ]; then
    ok "  and its network floor entries" no_drops_entry "$cgid"
fi
ok "a session that ended on its own leaves no note" test ! -e "$CORDON_OPEN_LOGS/$live_name"
done_testing
