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

# orphan TAG [OPTIONS]: a session whose agent left a daemon (setsid) behind,
# then its supervisor and watchdog (the same command line) killed at once.
# Sets name, cg, cgid, sup.
orphan() {
    # shellcheck disable=SC2086
    "$cordon" run -q --user "$AGENT" --workspace "$WS" --approve deny --audit "$t/$1.jsonl" ${2:-} -- \
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

# Every path a session can end by removes everything it made on the host
# (reap.h: reap_session_files is the one list): its end, a signal to its
# cordon, its watchdog, and a reaper.  A session with a credential, so that
# it has a CA bundle in /run/cordon-ca and an egress broker.
cat >"$t/cred.json" <<EOF
{ "cordon_policy": 1, "name": "reap-cred",
  "rules": [
    { "name": "system", "decision": "allow",
      "fs": { "paths": ["/usr", "/bin", "/lib", "/lib64", "/etc", "/proc", "/sys"], "rights": ["read", "exec"] } },
    { "name": "devices", "decision": "allow", "fs": { "paths": ["/dev/null", "/dev/urandom"], "rights": ["read", "write"] } },
    { "name": "work", "decision": "allow", "fs": { "paths": ["/tmp", "\${WORKSPACE}"], "rights": ["all"] } },
    { "name": "api", "decision": "allow",
      "net": { "hosts": ["localhost"], "ports": [9], "via": "credential-proxy" } }
  ],
  "credentials": [
    { "name": "reap-key", "env": "REAP_API_KEY", "source": { "env": "REAP_REAL_KEY" },
      "hosts": ["localhost"], "header": "x-api-key", "endpoints": ["GET /v1/x"] } ] }
EOF
chmod 0644 "$t/cred.json"
REAP_REAL_KEY=sk-reap-test
export REAP_REAL_KEY
# leftovers NAME: what of session NAME is on the host (its log and key, in
# $t and the test key directory, are not looked for): run-time files,
# state, cgroups, shared memory.
leftovers() {
    [ -n "$1" ] || { echo "(no session name)"; return; }
    find /run /var/lib/cordon /sys/fs/cgroup /dev/shm -name "*$1*" 2>/dev/null | tr '\n' ' '
}
# session_of LOG: the session its first record names.
session_of() { sed -n '1s/.*"session":"\([^"]*\)".*/\1/p' "$1"; }
# cred_start TAG: a session with the credential whose agent sleeps; sets
# name, sup (its cordon's pid).
cred_start() {
    "$cordon" run -q --user "$AGENT" --workspace "$WS" --approve deny --audit "$t/$1.jsonl" \
        --policy "$t/cred.json" -- "$WS/cordon-reaped" sleep 302 >/dev/null 2>"$t/$1.err" </dev/null &
    sup=$!
    name=
    i=0
    while [ $i -lt 400 ] && { [ -z "$name" ] || ! started "$WS/cordon-reaped sleep 302" >/dev/null; }; do
        name=$(session_of "$t/$1.jsonl" 2>/dev/null)
        sleep 0.05; i=$((i + 1))
    done
}
# gone_all TAG: wait until no process names its log (its cordon, watchdog, helpers).
gone_all() {
    i=0
    while [ $i -lt 200 ] && [ -n "$(procs "--audit $t/$1.jsonl")" ]; do sleep 0.05; i=$((i + 1)); done
}

"$cordon" run -q --user "$AGENT" --workspace "$WS" --approve deny --audit "$t/n.jsonl" \
    --policy "$t/cred.json" -- /bin/true >/dev/null 2>"$t/n.err" </dev/null
rc=$?
name=$(session_of "$t/n.jsonl")
ok "a session with a credential ends normally (rc=$rc, $name)" test "$rc" -eq 0 -a -n "$name"
ok "  and leaves nothing on the host: '$(leftovers "$name")'" test -z "$(leftovers "$name")"

cred_start s
ok "a session with a credential runs ($name), its CA bundle in /run/cordon-ca" \
    test -n "$name" -a -f "/run/cordon-ca/$name.pem"
kill -TERM "$sup"
wait "$sup" 2>/dev/null
gone_all s
ok "  SIGTERM to its cordon ends it, leaving nothing: '$(leftovers "$name")'" test -z "$(leftovers "$name")"
ok "  its log is sealed by its own cordon" grep -q '"type":"seal"' "$t/s.jsonl"
# SIGTERM while it starts, wherever it lands (before the log, while the
# helpers start, as the agent is told to go): the start stops and undoes
# itself (run.c, start_signal), or the loop stops the session.  A call the
# signal interrupts must not fail the start instead (the log's fallocate on
# tmpfs returned EINTR: exit 125, in the VM at 0.15 s).  No name
# new since before it is left where sessions keep them.
names_now() {
    ls "$CORDON_RUN" /run/cordon-ca /run/cordon-mcp /run/cordon-ssh "$CORDON_OPEN_LOGS" \
        /var/lib/cordon/home-sessions 2>/dev/null | grep '^s' | sort
}
for d in 0.02 0.04 0.08 0.12 0.15 0.20 0.30; do
    names_now >"$t/names.before"
    "$cordon" run -q --user "$AGENT" --workspace "$WS" --approve deny --audit "$t/t$d.jsonl" \
        --policy "$t/cred.json" -- /bin/sleep 30 >/dev/null 2>"$t/t$d.err" </dev/null &
    sup=$!
    sleep $d
    kill -TERM "$sup"
    wait "$sup"
    rc=$?
    gone_all "t$d"
    name=$(session_of "$t/t$d.jsonl" 2>/dev/null)
    new=$(names_now | comm -13 "$t/names.before" - | tr '\n' ' ')
    ok "  SIGTERM ${d}s into a start: cordon exits (rc=$rc) and leaves nothing new: '$new'" \
        sh -c '[ "$1" -gt 128 ] && [ -z "$2" ]' _ "$rc" "$new"
    if [ -n "$name" ]; then
        ok "    of its session $name: '$(leftovers "$name")', its log sealed" \
            sh -c '[ -z "$1" ] && grep -q "\"type\":\"seal\"" "$2"' _ "$(leftovers "$name")" "$t/t$d.jsonl"
    fi
done

cred_start w
ok "another runs ($name), its CA bundle there" test -n "$name" -a -f "/run/cordon-ca/$name.pem"
# The floors' entries of the session, named by its cgroup's id: there while
# it runs (so that the checks after its end can fail), gone after.  The
# watchdog, forked before the session existed, holds no copy of them: it
# finds them as a reaper does (reap.c, reap_watchdog).
cgid_w=$(stat -c %i "$cg_root/$CORDON_CG/$name" 2>/dev/null)
lsm_has() { "$cordon" floor status --json 2>/dev/null | grep -Eq "\"id\": *$1([^0-9]|\$)"; }
if [ $have_bpftool = 1 ]; then
    ok "  its network floor entry is there while it runs" drops_entry "$cgid_w"
fi
if [ "${CORDON_IN_VM:-}" = 1 ]; then
    ok "  its LSM floor entry too (the full posture)" lsm_has "$cgid_w"
fi
kill -KILL "$sup"
wait "$sup" 2>/dev/null
gone_all w
ok "  SIGKILL of its cordon alone: the watchdog leaves nothing: '$(leftovers "$name")'" \
    test -z "$(leftovers "$name")"
ok "  and sealed its log, saying so" sh -c 'tail -n 2 "$1" | head -n 1 | grep -q "\"event\":\"supervisor-died\""' _ "$t/w.jsonl"
if [ $have_bpftool = 1 ]; then
    ok "  its network floor entry gone" no_drops_entry "$cgid_w"
fi
ok "  no LSM floor entry of it" sh -c '! "$1" floor status --json 2>/dev/null | grep -Eq "\"id\": *$2([^0-9]|\$)"' \
    _ "$cordon" "$cgid_w"

orphan k "--policy $t/cred.json"
ok "a session with a credential left behind ($name): cordon and watchdog SIGKILLed, its CA bundle kept" \
    test -n "$name" -a -f "/run/cordon-ca/$name.pem" -a -d "$CORDON_RUN/$name"
out=$("$cordon" floor gc 2>&1)
ok "  cordon floor gc reaps it" sh -c 'printf "%s\n" "$1" | grep -q "reaped session $2"' _ "$out" "$name"
ok "  and leaves nothing of it but its log: '$(leftovers "$name")'" test -z "$(leftovers "$name")"
ok "  which is sealed, with the reaper's record" sealed_by_reaper "$t/k.jsonl"

# A start killed before its cgroup or log existed leaves files named for
# it and no run directory: they are found by name (planted here as such a
# start leaves them), a symlink in its home layer not followed.
fake=s00000000deadbeef
: >"/run/cordon-ca/$fake.pem"
mkdir -p "/var/lib/cordon/home-sessions/$fake/upper"
ln -s "$t/cred.json" "/var/lib/cordon/home-sessions/$fake/upper/link"
out=$("$cordon" floor gc 2>&1)
ok "files of a session with no run directory are removed: '$(leftovers "$fake")'" test -z "$(leftovers "$fake")"
ok "  not through a symlink among them" test -s "$t/cred.json"
done_testing
