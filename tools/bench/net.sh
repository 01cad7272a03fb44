#!/bin/bash
# The network floor (cgroup-bpf, runs on the host): a UDP connect loop
# (socket + connect + close: the sock_create and connect4 programs; no allow
# events, the default) and an unconnected UDP sendto loop (sendmsg4), in a
# registered session versus a cgroup outside cordon's parent, where no
# program runs.  Runs alternate; medians of 41; target 1.05x.
# build/tests/host/net_floor --bench does the measuring.
#
# Measured on a shared two-core host (6.18, SRSO safe-RET and retpolines,
# other work running), five invocations each, 41 runs per median:
#   before (an allow event per connect, a session hash lookup, the ancestor
#   helper): connect 1.06-1.12x (median 1.08x), sendto 1.05-1.08x (1.06x);
#   now: connect 1.02-1.05x (1.04x), sendto 1.02-1.03x (1.03x);
#   programs that return at once (the kernel's dispatch alone): connect
#   0.99-1.02x, sendto 1.00-1.02x.
# A connect-loop run varies by 5-30% on such a machine: compare ratios
# within one invocation, and repeat.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
: "${BUILD:=$here/build}"       # tools/bench/run sets it; alone, the default build
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
