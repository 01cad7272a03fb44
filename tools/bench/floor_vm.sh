#!/bin/bash
# The kernel floor's cost on a real kernel: one VM boot (tools/vmtest) runs
# tools/bench/floor_bench, which times an open/stat loop and busybox find
# over 5,000 files with no floor attached (bare), inside a session confined
# by a 100-rule policy, and as a host task with the floor attached, the
# three interleaved round by round; in the first rounds of the same loop,
# the other two workloads of the host's peers table (tools/bench/peers.sh)
# bare and under `cordon run` (default profile, full posture): the start
# latency of /bin/true and fork+exec of /bin/true x1,000 timed inside; then
# the session event path at paced and full rates.  The VM is TCG-emulated
# (syscalls several times slower than native), so the ratios within this
# boot are the result, not the absolute times.  Target: a session at most
# 1.05x bare; no drops at 10,000 events/s.  FLOOR_BENCH_ARGS passes options
# to floor_bench (-r rounds, -p passes, -f find runs, -e event seconds, -R
# rate..., -a rounds with `cordon run`, -s starts a round, -x fork+execs).
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$here/build}
. "$here/tools/bench/lib.sh"

bin=$BUILD/tools/bench/floor_bench
# tools/vmtest copies cordon and build/tests (the attack agent) into the VM.
for b in "$bin" "$BUILD/cordon" "$BUILD/tests/agents/attack"; do
    [ -x "$b" ] || make -s -C "$here" BUILD="$BUILD" "$b" >&2
done

echo "## kernel floor (VM, BPF LSM)"
echo
# shellcheck disable=SC2086 # FLOOR_BENCH_ARGS is a list of options
out=$("$here/tools/vmtest" --build "$BUILD" --timeout 600 \
      --add "$bin:/opt/floorbench/floor_bench" -- /opt/floorbench/floor_bench ${FLOOR_BENCH_ARGS:-} 2>&1)
rc=$?
if [ $rc -eq 77 ] || grep -q '^SKIP|' <<<"$out"; then
    echo "skipped: $(sed -n 's/^SKIP|//p' <<<"$out" | head -1)"
    exit 0
fi
if [ $rc -ne 0 ]; then
    echo "floor_bench failed in the VM (exit $rc):" >&2
    grep -v '^\(ROW\|SPREAD\|EV\|INFO\)|' <<<"$out" | tail -20 >&2
    exit 1
fi

# field LINE-TYPE KEY1 KEY2 N: field N of the line "TYPE|KEY1|KEY2|...".
field() { awk -F'|' -v t="$1" -v a="$2" -v b="$3" -v f="$4" '$1 == t && $2 == a && $3 == b { print $f }' <<<"$out"; }
info() { awk -F'|' -v k="$1" '$1 == "INFO" && $2 == k { print $3 }' <<<"$out"; }
ms() { awk -v v="$1" 'BEGIN { printf "%.1f ms", v / 1e6 }'; }
# fmt TEST NS: a sample's time in its row's unit (a fork+exec in us).
fmt() {
    case $1 in
    exec) awk -v v="$2" 'BEGIN { printf "%.0f us", v / 1e3 }' ;;
    *) ms "$2" ;;
    esac
}
us_per() { awk -v v="$1" -v n="$2" 'BEGIN { printf "%.1f", v / n / 1e3 }'; }

files=$(info files)
echo "$files files in $(info dirs) directories 3-5 levels below the workspace (tmpfs)." \
     "A policy of $(info rules) rules ($(info fs_rules) fs, with mixed decisions on every" \
     "directory of the tree, on system directories and beside the tree; one net, one tool)" \
     "compiles to $(info map_entries) map entries ($(info lsm_links) LSM links attached)." \
     "$(info rounds) rounds of bare (no floor attached, links verified gone), in-session" \
     "and host task (floor attached, task in an ordinary cgroup at the sessions' depth)," \
     "in reverse order every other round; the floor is loaded afresh each round" \
     "(\`floor_open\` median $(info floor_open_ms) ms, session $(info session_create_ms) ms)." \
     "A session sample must be refused a canary a" \
     "rule denies, bare and host samples must read it. One open/stat pass: open, read 1 byte," \
     "close, stat on every file. QEMU TCG, and other VMs may share the host: compare ratios," \
     "not times. The ratio is of the medians of all samples; in brackets, the ratios of each" \
     "round's medians (paired, so slow drift cancels): their median and range."
if [ "$(info agent_rounds)" != 0 ]; then
    echo "The last rows are the host's peers table's other two workloads (tools/bench/peers.sh)," \
         "bare against the whole of cordon: \`cordon run -q --require-full-floor --user agent" \
         "--workspace WS -- CMD\` with the shipped default profile, started from the host cgroup" \
         "on the round's freshly loaded floor (a first, untimed session a round, whose agent must" \
         "find itself in a session's cgroup, also pins the network floor). Start latency: the" \
         "wall time of the whole command from fork to wait, $(info starts) runs a round after an" \
         "untimed one; fork+exec: \`attack exec-loop $(info execs)\`, ns a fork+exec timed inside," \
         "one run a round. Both only in the first $(info agent_rounds) rounds, bare and session."
fi
echo
row "what" "median" "p90" "samples" "baseline" "ratio"
row "---" "---" "---" "---" "---" "---"
for t in openstat find start exec; do
    case $t in
    openstat) label="open+read+close+stat pass over $files files" ;;
    find) label="\`busybox find -type f\` over $files files" ;;
    start) label="start latency of \`/bin/true\` (whole command)" ;;
    exec) label="fork+exec of /bin/true x$(info execs), timed inside" ;;
    esac
    bare=$(field ROW "$t" bare 4)
    for c in bare session host; do
        m=$(field ROW "$t" "$c" 4)
        [ -n "$m" ] || continue     # the \`cordon run\` rows have no host task
        median="$(fmt "$t" "$m")"
        [ "$t" = openstat ] && median+=" ($(us_per "$m" "$files") us/file)"
        case $t/$c in
        */bare) what="$label, bare (no floor)"; base="" ;;
        start/session | exec/session)
            what="$label, in \`cordon run\` (default profile)"; base="bare $(fmt "$t" "$bare")" ;;
        */session) what="$label, in a session (100 rules)"; base="bare $(fmt "$t" "$bare"); target ≤ 1.05x" ;;
        */host) what="$label, host task, floor attached"; base="bare $(fmt "$t" "$bare")" ;;
        esac
        if [ "$c" = bare ]; then
            r=""
        else
            r="$(ratio "$m" "$bare") (per round: median $(field SPREAD "$t" "$c" 5)x, $(field SPREAD "$t" "$c" 4)-$(field SPREAD "$t" "$c" 6))"
        fi
        row "$what" "$median" "$(fmt "$t" "$(field ROW "$t" "$c" 5)")" "$(field ROW "$t" "$c" 6)" "$base" "$r"
    done
done

echo
echo "Events: a session task opens allowed files for writing (one event per open) while" \
     "floor_bench consumes the session's ring buffer (1 MiB). Drops: the session's counter /" \
     "the global per-CPU counter. Latency: event timestamp to the consumer's callback." \
     "The stalled run reads nothing until the generator is done, so the ring must" \
     "overflow and every event must be received or counted as dropped."
echo
row "load" "generated" "received" "dropped (session / global)" "achieved rate" "latency median / p99 / max" "baseline" "ratio"
row "---" "---" "---" "---" "---" "---" "---" "---"
awk -F'|' '$1 == "EV"' <<<"$out" | while IFS='|' read -r _ mode rate ns gen failed recv sd gd lmed l99 lmax; do
    rate_s=$(awk -v g="$gen" -v n="$ns" 'BEGIN { printf "%.0f", g / (n / 1e9) }')
    lat=$(awk -v a="$lmed" -v b="$l99" -v c="$lmax" 'BEGIN { printf "%.0f / %.0f / %.0f us", a / 1e3, b / 1e3, c / 1e3 }')
    secs=$(awk -v n="$ns" 'BEGIN { printf "%.1f", n / 1e9 }')
    fail=""
    [ "$failed" -gt 0 ] && fail=" ($failed opens failed)"
    case $mode in
    paced)
        what="paced at $rate/s for $secs s"
        base="target $rate/s, no drops"
        r="$(ratio "$rate_s" "$rate") of target"
        ;;
    full)
        what="full speed, one task, $secs s"
        base="target ≥ 10000/s, no drops"
        r="$(ratio "$rate_s" 10000) of 10000/s"
        ;;
    stalled)
        what="full speed, consumer stalled, $secs s"
        base="received + dropped = generated"
        if [ $((recv + sd)) -eq "$gen" ] && [ "$sd" -eq "$gd" ]; then
            r="accounted"
        else
            r="**$((gen - recv - sd)) unaccounted**"
        fi
        ;;
    esac
    row "$what" "$gen$fail" "$recv" "$sd / $gd" "$rate_s/s" "$lat" "$base" "$r"
done
