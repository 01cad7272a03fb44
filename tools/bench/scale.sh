#!/bin/bash
# Many sessions at once on this host: N = 100, 200, 300, 400, 500 (SCALE_N to
# pick others) `cordon run` sessions of the default profile started together,
# each `sleep S` as the unprivileged agent with its own audit log.  For each N:
#   - every agent ran (its `sleep` seen running) and the time until all were;
#   - memory per session, at the moment all are up, against the host before
#     the first start: the cordon processes' PSS and RSS (supervisors,
#     watchdogs), the kernel side (slab, the sessions' memory cgroup, BPF
#     maps' memlock), and `free`'s used memory (MemTotal - MemAvailable),
#     each divided by N;
#   - every session finished with status 0 and was reaped: no session
#     cgroup, run directory or pinned entry left behind.
# Target (issue 36): 500 sessions, memory per session constant in N.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/tools/bench/lib.sh"
. "$here/tests/lib.sh" >/dev/null
cordon=$BUILD/cordon

bench_section "Scale: many sessions at once"
new_workspace
work=$(mktemp -d /var/cordon-bench.XXXXXX)
chmod 0755 "$work"
launched=()
cleanup() {
    # Never leave a session running: the supervisors of this run, then
    # their files.
    local p
    for p in "${launched[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${launched[@]}"; do wait "$p" 2>/dev/null; done
    rm -rf "$WS" "$work"
}
trap cleanup EXIT
ns=(${SCALE_N:-100 200 300 400 500})

"$cordon" floor load >/dev/null 2>&1   # pinned where BPF LSM works (elsewhere: fallback)
"$cordon" run -q --user "$AGENT" --workspace "$WS" --approve deny --audit "$work/warm.jsonl" \
    -- /bin/true >/dev/null 2>&1       # warm: net floor pinned, page cache
posture=$("$cordon" doctor --json 2>/dev/null | sed -n 's/.*"posture": "\(.*\)".*/\1/p')

kb() { awk -v k="$1" '$1 == k":" { print $2 }' /proc/meminfo; }
# The sessions' parents: the cgroup v2 one, and on a hybrid host the v1
# memory and pids ones the budgets use; by hand, CORDON_INSTANCE=NAME runs
# against a floor instance of its own (loader/instance.h).
inst=cordon run=/run/cordon
if [ -n "${CORDON_INSTANCE:-}" ]; then
    inst=cordon_$CORDON_INSTANCE run=/run/cordon/.$CORDON_INSTANCE
fi
cg2=/sys/fs/cgroup/$inst
[ -d /sys/fs/cgroup/unified/$inst ] && cg2=/sys/fs/cgroup/unified/$inst
cgmem() {  # the sessions' memory cgroup usage in KiB (0: none)
    local f
    for f in /sys/fs/cgroup/memory/$inst/memory.usage_in_bytes "$cg2/memory.current"; do
        [ -r "$f" ] && { echo $(( $(cat "$f") / 1024 )); return; }
    done
    echo 0
}
bpfmem() {  # memlock of every BPF map on the host, KiB
    bpftool -j map show 2>/dev/null | tr ',' '\n' |
        awk -F: '/"bytes_memlock"/ { s += $2 } END { printf "%d\n", s / 1024 }'
}
# state: one line per session-bound object (cgroups, run dirs, pins).
state() {
    ls -d "$cg2"/s* /sys/fs/cgroup/memory/$inst/s* /sys/fs/cgroup/pids/$inst/s* \
        "$run"/s* 2>/dev/null
    find /sys/fs/bpf/$inst 2>/dev/null
}
per() { awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN { printf "%.2f MiB", (b - a) / n / 1024 }'; }

echo "Posture: $posture.  Each session is \`cordon run -q --user $AGENT --approve deny"
echo "--audit FILE -- /bin/sleep S\` under the default profile, all N started at once from"
echo "one shell; \"up\" is every agent's \`sleep\` running.  Memory is measured when all"
echo "are up, against the host just before the first start, and divided by N."
echo
row "sessions" "all up" "time until all up" "finished (status 0)" "reaped" \
    "cordon PSS / session" "cordon RSS / session" "slab / session" "memory cgroup / session" \
    "BPF maps / session" "used (free) / session"
row "---" "---" "---" "---" "---" "---" "---" "---" "---" "---" "---"
for n in "${ns[@]}"; do
    # A sleep long enough for every start on this machine (all N up in about
    # 0.1 s per session on two busy cores: twice that), unique to this N so
    # that only these agents count.
    s=$(( 20 + n / 5 )).$n
    state | sort >"$work/state.before"
    sync; echo 1 >/proc/sys/vm/drop_caches 2>/dev/null
    m0_avail=$(kb MemAvailable) m0_slab=$(kb Slab) m0_cg=$(cgmem) m0_bpf=$(bpfmem)
    launched=()
    t0=$(date +%s%N)
    for i in $(seq "$n"); do
        "$cordon" run -q --user "$AGENT" --workspace "$WS" --approve deny \
            --audit "$work/c$n.$i.jsonl" -- /bin/sleep "$s" >/dev/null 2>"$work/c$n.$i.err" &
        launched+=($!)
    done
    up=0 t_up=
    deadline=$(( $(date +%s) + ${s%.*} - 2 ))
    while [ "$(date +%s)" -lt "$deadline" ]; do
        up=$(pgrep -c -u "$AGENT" -x -f "/bin/sleep $s")
        if [ "$up" -ge "$n" ]; then t_up=$(date +%s%N); break; fi
        sleep 0.2
    done
    sleep 1   # the last ones settle (their supervisors' first records)
    m1_avail=$(kb MemAvailable) m1_slab=$(kb Slab) m1_cg=$(cgmem) m1_bpf=$(bpfmem)
    # The cordon processes of this N: supervisors and their watchdogs (the
    # same command line), and the helpers they started, root's children of
    # theirs (the egress broker; not the agents, which are the agent user's).
    mapfile -t cps < <(pgrep -f -- "--audit $work/c$n\.")
    if ((${#cps[@]})); then
        mapfile -t -O "${#cps[@]}" cps < <(pgrep -u 0 -P "$(IFS=,; echo "${cps[*]}")")
        mapfile -t cps < <(printf '%s\n' "${cps[@]}" | sort -un)
    fi
    pss=0 rss=0
    if ((${#cps[@]})); then
        read -r pss rss < <(for p in "${cps[@]}"; do echo "/proc/$p/smaps_rollup"; done |
            xargs awk '/^Pss:/ { p += $2 } /^Rss:/ { r += $2 } END { print p + 0, r + 0 }' 2>/dev/null)
    fi
    ok=0
    for p in "${launched[@]}"; do wait "$p" && ok=$((ok + 1)); done
    launched=()
    sleep 1   # the last supervisors' teardown
    state | sort >"$work/state.after"
    left=$(comm -13 "$work/state.before" "$work/state.after" | wc -l)
    reaped=yes
    [ "$left" -eq 0 ] || reaped="no: $left left ($(comm -13 "$work/state.before" "$work/state.after" | head -3 | tr '\n' ' '))"
    if [ -n "$t_up" ]; then
        tu=$(awk -v a="$t0" -v b="$t_up" 'BEGIN { printf "%.1f s", (b - a) / 1e9 }')
    else
        tu="not all within ${s%.*} s"
    fi
    row "$n" "$up" "$tu" "$ok" "$reaped" \
        "$(per 0 "$pss" "$n")" "$(per 0 "$rss" "$n")" "$(per "$m0_slab" "$m1_slab" "$n")" \
        "$(per "$m0_cg" "$m1_cg" "$n")" "$(per "$m0_bpf" "$m1_bpf" "$n")" \
        "$(per "$m1_avail" "$m0_avail" "$n")"
    # The first error of a session that failed, if any.
    if [ "$ok" -lt "$n" ]; then
        e=$(cat "$work"/c$n.*.err 2>/dev/null | sort | uniq -c | sort -rn | head -3)
        echo "$e" | sed 's/^/    /' >>"$work/errors"
    fi
    rm -f "$work"/c$n.*
done
echo
if [ -s "$work/errors" ]; then
    echo "Errors of the sessions that failed (count, message):"
    echo
    sed 's/^/    /' "$work/errors"
    echo
fi
echo "cordon PSS / RSS: Pss and Rss of smaps_rollup summed over every cordon process of"
echo "that N (per session the supervisor, its watchdog and the egress broker the default"
echo "profile starts; RSS counts the shared library pages once per process, PSS shares them out).  Slab, memory cgroup (the"
echo "budgets' parent: the agents and the kernel memory charged to them) and BPF maps"
echo "(bytes_memlock of every map, the per-session rings included) are deltas over the"
echo "host; \"used\" is the drop of MemAvailable, which holds all of it."
