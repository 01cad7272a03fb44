# Helpers for benchmark sections (bash).

# time_ms CMD...: wall time of one run in milliseconds (3 decimals).
time_ms() {
    local s e
    s=$(date +%s%N)
    "$@" >/dev/null 2>&1
    e=$(date +%s%N)
    awk -v a="$s" -v b="$e" 'BEGIN { printf "%.3f\n", (b - a) / 1e6 }'
}

# median: of the numbers on stdin.
median() {
    sort -g | awk '{ v[NR] = $1 } END {
        if (NR == 0) { print "nan"; exit }
        if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# repeat N CMD...: N timings (ms), one a line.
repeat() {
    local n=$1; shift
    for ((i = 0; i < n; i++)); do time_ms "$@"; done
}

# ratio A B: A / B with two decimals.
ratio() {
    awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx\n", a / b; else print "n/a" }'
}

# row COLS...: one Markdown table row.
row() {
    local out="|" c
    for c in "$@"; do out+=" $c |"; done
    echo "$out"
}

# bench_section TITLE: the section's heading, then its preconditions: root,
# the build's cordon, an unprivileged agent user (AGENT, from
# tests/lib_run.sh, which this loads with tests/lib.sh).  Short of one, the
# section says "skipped: WHY" and the script exits 0 (make bench goes on).
bench_section() {
    local c=${cordon:-$BUILD/cordon}

    echo "## $1"
    echo
    if [ "$(id -u)" -ne 0 ]; then
        echo "skipped: needs root"
        exit 0
    fi
    [ -x "$c" ] || { echo "skipped: build $c first (make)"; exit 0; }
    . "$here/tests/lib.sh" >/dev/null
    . "$here/tests/lib_run.sh"
    agent_user || { echo "skipped: no unprivileged user"; exit 0; }
}
