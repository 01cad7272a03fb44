#!/bin/bash
# The network floor (cgroup-bpf, runs on the host): a UDP connect loop
# (socket + connect + close: the sock_create and connect4 programs and one
# allow event per connect) and an unconnected UDP sendto loop (sendmsg4), in
# a registered session versus a cgroup outside cordon's parent, where no
# program runs.  Runs alternate; medians of 15; target 1.05x.
# build/tests/host/net_floor --bench does the measuring.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/tools/bench/lib.sh"

bin=$BUILD/tests/host/net_floor
echo "## network floor (cgroup-bpf)"
echo
if [ "$(id -u)" -ne 0 ]; then
    echo "skipped: needs root"
    exit 0
fi
if ! out=$("$bin" --bench); then
    echo "skipped: $(tail -n 1 <<<"$out")"
    exit 0
fi
get() { awk -v k="$1" -v f="$2" '$1 == "bench" && $2 == k { print $f }' <<<"$out"; }
echo "One run on $(nproc) cores; a sample is the mean of 4,000 connects or 20,000 sendtos;" \
     "events dropped: $(get drops 3)."
echo
row "loop" "no floor" "floor" "ratio" "target"
row "---" "---" "---" "---" "---"
for op in connect sendto; do
    row "UDP $op 127.0.0.1 (allowed)" "$(get $op 3) ns" "$(get $op 4) ns" \
        "$(ratio "$(get $op 4)" "$(get $op 3)")" "1.05x"
done
