#!/bin/bash
# Where a session's start and end go, measured: `cordon -v run -- /bin/true`
# prints each phase's end (ms since `cordon run` began) and the CPU time
# its thread had used by then; PHASES_RUNS (15) runs, the median of each.
# Two workspaces, so that what grows with the workspace shows: an empty
# one, and a tree of PHASES_DIRS (1,000) directories of 16 files with a
# repository of 10,000 files among them (the walk for nested repositories
# reads every directory at the start and again at the end).
# Three lines of work overlap in a start: the supervisor's main thread,
# the view thread (the session's private world and the fallback's Landlock
# ruleset) and the egress broker (its own process); "agent: ..." phases are
# the agent's first process.  The table's rows are in the order the
# phases end in the median run.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
: "${BUILD:=$here/build}"
. "$here/tools/bench/lib.sh"
cordon=${CORDON:-$BUILD/cordon}
R=${PHASES_RUNS:-15}
DIRS=${PHASES_DIRS:-1000}

bench_section "Where a start goes (section \`phases\`: \`cordon -v run\`, host)"

t=$(mktemp -d /var/cordon-bench-phases.XXXXXX)
trap 'rm -rf "$t"' EXIT
chmod 0755 "$t"
mkdir -p "$t/empty" "$t/tree/repo"
for ((d = 0; d < DIRS; d++)); do
    mkdir -p "$t/tree/m$((d / 50))/p$d"
    for ((f = 0; f < 16; f++)); do : >"$t/tree/m$((d / 50))/p$d/f$f.js"; done
done
for ((d = 0; d < 100; d++)); do
    mkdir -p "$t/tree/repo/d$d"
    for ((f = 0; f < 100; f++)); do echo "$f" >"$t/tree/repo/d$d/f$f.txt"; done
done
git -C "$t/tree/repo" init -q 2>/dev/null
chown -R "$AGENT" "$t/empty" "$t/tree"
entries=$(find "$t/tree" -mindepth 1 -not -path '*/.git/*' | wc -l)

# one WS OUT: one session's phases appended to OUT as "name<TAB>ms<TAB>cpu"
one() {
    "$cordon" -v run --user "$AGENT" --workspace "$1" --approve deny --audit "$t/a.$RANDOM$RANDOM" \
        -- /bin/true 2>&1 |
        sed -n 's/^cordon: debug: run: \(.*[^ ]\) \+\([0-9.]\+\) ms (this thread.s CPU \([0-9.]\+\) ms)$/\1\t\2\t\3/p' \
            >>"$2"
}
for ws in empty tree; do
    one "$t/$ws" /dev/null      # warm: the page cache, the floor's pins
done
for ((r = 0; r < R; r++)); do
    for ws in empty tree; do one "$t/$ws" "$t/$ws.tsv"; done
done

# table WS: the median of each phase's end and CPU, in the order of the ends
table() {
    cut -f1 "$t/$1.tsv" | awk '!seen[$0]++' | while IFS= read -r name; do
        m=$(awk -F'\t' -v k="$name" '$1 == k { print $2 }' "$t/$1.tsv" | median)
        c=$(awk -F'\t' -v k="$name" '$1 == k { print $3 }' "$t/$1.tsv" | median)
        printf '%s\t%s\t%s\n' "$m" "$name" "$c"
    done | sort -g
}
table empty >"$t/empty.med"
table tree >"$t/tree.med"
echo "$(uname -r), $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg).  Medians of $R runs"
echo "of \`cordon -v run -- /bin/true\` each (the default profile, the agent $AGENT, --approve deny),"
echo "the two workspaces alternating.  A phase's CPU is its own thread's, counted from that"
echo "thread's start (the main thread's from \`cordon run\`'s first step, after its exec and"
echo "dynamic loading: the whole start's CPU is the table below); where a phase's time grows"
echo "and its CPU does not, the thread waited (for another thread, the broker, or a CPU)."
echo
row "phase ends" "empty workspace: ms" "its thread's CPU, ms" "$entries entries: ms" "its thread's CPU, ms"
row "---" "---" "---" "---" "---"
while IFS=$'\t' read -r m name c; do
    tm=$(awk -F'\t' -v k="$name" '$2 == k { print $1 }' "$t/tree.med")
    tc=$(awk -F'\t' -v k="$name" '$2 == k { print $3 }' "$t/tree.med")
    row "$name" "$m" "$c" "${tm:-}" "${tc:-}"
done <"$t/empty.med"

# The CPU a whole start costs (user + system of the command and of every
# process it waited for: for cordon the broker and the agent's tree), next
# to bubblewrap and bare /bin/true as the same user, in the same run
# (tools/bench/startlat, interleaved): on two CPUs, half of it bounds the
# wall time from below, however the work overlaps.
startlat=$BUILD/tools/bench/startlat
if [ -x "$startlat" ]; then
    ag=(setpriv --reuid="$(id -u "$AGENT")" --regid="$(id -g "$AGENT")" --init-groups)
    cmds=("${ag[@]}" /bin/true ::: "$cordon" run -q --user "$AGENT" --workspace "$t/empty" \
          --approve deny --audit "$t/s.%n.jsonl" -- /bin/true)
    names=(bare cordon)
    if command -v bwrap >/dev/null; then
        cmds+=(::: "${ag[@]}" bwrap --ro-bind / / --dev /dev --proc /proc --unshare-all \
               --die-with-parent /bin/true)
        names+=(bubblewrap)
    fi
    mapfile -t res < <("$startlat" "$R" "${cmds[@]}")
    echo
    echo "A whole start of /bin/true as $AGENT, its wall time (median of $R, interleaved) and its CPU"
    echo "(the mean over the runs of user + system time, the command's and its waited-for children's):"
    echo
    row "start of /bin/true" "wall, ms" "CPU, ms"
    row "---" "---" "---"
    for i in "${!names[@]}"; do
        read -r med _ _ failed cpu _ <<<"${res[$i]}"
        [ "${failed:-0}" = 0 ] || med="$med ($failed failed)"
        row "${names[$i]}" "$med" "$cpu"
    done
fi
