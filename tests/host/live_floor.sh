#!/bin/bash
# `make test` on a host that runs agents (issue 35): the suite works on a
# floor instance of its own (loader/instance.h, tests/lib.sh), so its
# loads, unloads, stale reloads, gc and reaping never reach a live
# session.  Proved here: a live session runs on another instance (the
# default one where nothing of it is pinned yet, as on a fresh CI machine;
# otherwise a stand-in named livefloor, so as not to replace a floor this
# host's own sessions use), while the suite's floor-touching tests and
# commands run on theirs; afterwards the live instance's pins, the
# programs attached to its parent cgroup and the session itself are as
# they were, and the session still enforces its policy both ways (an
# allowed connect goes through, a denied one is refused: a replaced
# floor would deny both, an unloaded one allow both).  The default
# instance, when it is not the live one here, is checked untouched too.
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib_run.sh"

[ "$(id -u)" -eq 0 ] || skip_all "needs root"
[ -n "$CORDON_INSTANCE" ] ||
    skip_all "the suite runs on the live floor here (CORDON_INSTANCE is empty): nothing to keep apart"
command -v bpftool >/dev/null 2>&1 || skip_all "bpftool not installed"
cg_root=$(cgroup2_root)
[ -n "$cg_root" ] || skip_all "no cgroup2 mount"
session_test live-floor
suite=$CORDON_INSTANCE

# The suite's paths as cordon derives them agree with lib.sh's.
st=$("$cordon" floor status --json)
ok "cordon and tests/lib.sh agree on the suite's instance ($suite: $CORDON_PINS, $CORDON_RUN)" \
    sh -c 'printf "%s" "$1" | grep -q "\"pin_dir\": \"$2\"" && printf "%s" "$1" | grep -q "\"run_dir\": \"$3\""' \
    _ "$st" "$CORDON_PINS" "$CORDON_RUN"

if [ -e /sys/fs/bpf/cordon ]; then live=livefloor; else live=; fi
if [ -n "$live" ]; then
    L_PINS=/sys/fs/bpf/cordon_$live L_CG=cordon_$live
else
    L_PINS=/sys/fs/bpf/cordon L_CG=cordon
fi
echo "# the live session's instance: ${live:-the default one}"

# state PINS CG [nosessions]: what an instance has in the kernel: each
# pinned file, the program behind each pinned link, the programs attached
# to its parent cgroup (ids: a reload or a second attach changes them),
# its session cgroups (not for the default instance when it is not the
# live one here: a session of this host's own may start or end meanwhile).
state() {
    for _f in $(find "$1" -type f 2>/dev/null | sort); do
        case ${_f##*/} in
        link_*) echo "$_f prog $(bpftool -j link show pinned "$_f" 2>/dev/null | sed -n 's/.*"prog_id":\([0-9]*\).*/\1/p')" ;;
        *) echo "$_f" ;;
        esac
    done
    bpftool cgroup show "$cg_root/$2" 2>/dev/null | awk 'NR > 1 { print "attached", $1, $2 }' | sort
    [ -n "${3:-}" ] && return 0
    for _d in "$cg_root/$2"/s* "$cg_root/$2-unix"/s*; do [ -d "$_d" ] && echo "session $_d"; done
}

# The live session: one port allowed, another listening but not in its
# policy; its agent tries both every 0.2 s and logs what happened.
mkdir "$scratch/allowed" "$scratch/denied"
"$BUILD/tests/agents/attack" serve "$scratch/allowed" & srv1=$!
"$BUILD/tests/agents/attack" serve "$scratch/denied" & srv2=$!
i=0
while { [ ! -e "$scratch/allowed/ports" ] || [ ! -e "$scratch/denied/ports" ]; } && [ $i -lt 100 ]; do
    sleep 0.05; i=$((i + 1))
done
read -r allowed _ <"$scratch/allowed/ports"
read -r denied _ <"$scratch/denied/ports"
cat >"$scratch/policy.json" <<EOF
{
  "cordon_policy": 1,
  "name": "live-floor-test",
  "rules": [
    { "name": "workspace", "decision": "allow", "fs": { "paths": ["\${WORKSPACE}"], "rights": ["all"] } },
    { "name": "system", "decision": "allow",
      "fs": { "paths": ["/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc", "/proc", "/sys"], "rights": ["read", "exec"] } },
    { "name": "devices", "decision": "allow", "fs": { "paths": ["/dev/null", "/dev/urandom"], "rights": ["read", "write"] } },
    { "name": "loopback-allowed", "decision": "allow",
      "net": { "hosts": ["127.0.0.1"], "ports": [$allowed], "via": "direct" } }
  ]
}
EOF
cat >"$WS/live-loop" <<EOF
#!/bin/sh
while :; do
    a=\$($attack connect 127.0.0.1 $allowed)
    d=\$($attack connect 127.0.0.1 $denied)
    echo "allowed=\$a denied=\$d" >>$WS/live.log
    sleep 0.2
done
EOF
chmod 0755 "$WS/live-loop"
chown "$AGENT" "$WS/live-loop"
cleanup() {
    kill $(procs "$WS/live-loop") 2>/dev/null
    kill $srv1 $srv2 2>/dev/null
    wait 2>/dev/null
    rm -rf "$scratch" "$WS"
}
trap cleanup EXIT
CORDON_INSTANCE=$live "$cordon" run -q --user "$AGENT" --workspace "$WS" --policy "$scratch/policy.json" \
    --approve deny --audit "$scratch/live.jsonl" -- "$WS/live-loop" >/dev/null 2>"$scratch/live.err" </dev/null &
livepid=$!
# enforcing: the last line of the loop's log after it has grown by two.
enforcing() {
    _n=$(cat "$WS/live.log" 2>/dev/null | wc -l)
    _i=0
    while [ $_i -lt 200 ] && [ "$(cat "$WS/live.log" 2>/dev/null | wc -l)" -lt $((_n + 2)) ]; do
        sleep 0.05; _i=$((_i + 1))
    done
    _l=$(tail -n 1 "$WS/live.log" 2>/dev/null)
    case $_l in "allowed=BREACH: TCP connect denied=contained: "*) return 0 ;; esac
    echo "last: ${_l:-nothing}; $(tail -n 3 "$scratch/live.err")" >&2
    return 1
}
ok "a live session runs on ${live:-the default instance} and enforces its policy both ways" enforcing
# The agent: the loop's shell in a session cgroup of the live instance
# (the supervisor and its watchdog name the loop too, from outside).
lpid= lcg=
for p in $(procs "$WS/live-loop"); do
    c=$(sed -n 's/^0:://p' "/proc/$p/cgroup" 2>/dev/null)
    case $c in "/$L_CG/s"*) lpid=$p lcg=$c; break ;; esac
done
ok "  its agent is in the live instance's session cgroup ($lcg)" \
    sh -c 'case $1 in "/$2/s"*) [ -d "$3$1" ] ;; *) false ;; esac' _ "$lcg" "$L_CG" "$cg_root"

live_before=$(state "$L_PINS" "$L_CG")
default_before=
[ -n "$live" ] && default_before=$(state /sys/fs/bpf/cordon cordon nosessions)
ok "  (its instance: $(printf '%s\n' "$live_before" | grep -c ' prog ') links pinned, $(printf '%s\n' "$live_before" | grep -c '^attached') programs attached)" \
    test "$(printf '%s\n' "$live_before" | grep -c '^attached')" -gt 0

# The suite's floor-touching tests and commands, on its own instance.
here=$(cd "$(dirname "$0")/../.." && pwd)
for t in floor_fallback.sh reap.sh net_floor net_inbound exec_recheck; do
    p=$here/tests/host/$t
    [ -x "$p" ] || p=$BUILD/tests/host/$t
    [ -x "$p" ] || { skip "$t: not built"; continue; }
    timeout 300 "$p" >"$scratch/$t.out" 2>&1
    rc=$?
    ok "the suite's $t ran beside it (status $rc: $(grep -c '^ok' "$scratch/$t.out") ok, $(grep -c '^not ok' "$scratch/$t.out") not ok)" \
        test $rc -eq 0 -o $rc -eq 1 -o $rc -eq 77
done
ok "the suite's floor unload" "$cordon" floor unload
ok "the suite's floor gc" "$cordon" floor gc
in_session -- /bin/true
ok "a suite session after the unload loads its floor again (rc=$rc)" test "$rc" -eq 0

live_after=$(state "$L_PINS" "$L_CG")
ok "the live instance's pins, links and attached programs are as they were" \
    bash -c '[ "$1" = "$2" ] || { diff <(printf "%s\n" "$1") <(printf "%s\n" "$2") >&2; false; }' _ "$live_before" "$live_after"
if [ -n "$live" ]; then
    ok "the default instance's too" \
        bash -c '[ "$1" = "$2" ] || { diff <(printf "%s\n" "$1") <(printf "%s\n" "$2") >&2; false; }' \
        _ "$default_before" "$(state /sys/fs/bpf/cordon cordon nosessions)"
fi
ok "the live session's agent runs on, in its cgroup" \
    sh -c '[ -n "$1" ] && kill -0 "$1" && [ "$(sed -n "s/^0:://p" "/proc/$1/cgroup")" = "$2" ]' _ "$lpid" "$lcg"
ok "  and its floor still enforces both ways" enforcing
ok "  nothing reaped it" sh -c '! grep -q "\"event\":\"reaped\"" "$1"' _ "$scratch/live.jsonl"
kill "$lpid" 2>/dev/null
wait $livepid
ok "the live session ends when its agent does, its log sealed by its own supervisor" \
    sh -c 'grep -q "\"type\":\"seal\"" "$1" && ! grep -q "\"event\":\"reaped\"" "$1"' _ "$scratch/live.jsonl"
if [ -n "$live" ]; then
    ok "the stand-in instance unloaded, its session over" env CORDON_INSTANCE="$live" "$cordon" floor unload
fi

# Root inside a session cannot pick an instance: a process in a session's
# cgroup of any instance (here one made for the check, no floor on it) is
# refused CORDON_INSTANCE, and the live floor's commands still answer it.
probe=$cg_root/cordon_lfprobe$$
mkdir -p "$probe/s1"
o=$(sh -c 'echo $$ >"$1/cgroup.procs" && CORDON_INSTANCE=x "$2" floor status 2>&1; echo "rc=$?"' _ "$probe/s1" "$cordon")
rmdir "$probe/s1" "$probe"
ok "CORDON_INSTANCE is refused inside a session's cgroup: $(echo $o)" \
    sh -c 'printf "%s\n" "$1" | grep -q "not honoured inside a cordon session" && printf "%s\n" "$1" | grep -qx "rc=125"' _ "$o"
done_testing
