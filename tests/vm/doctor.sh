#!/bin/sh
# cordon doctor on Debian's stock kernel booted with BPF LSM: posture full,
# every mechanism measured, nothing left behind.
. "$(dirname "$0")/../lib.sh"
cordon=${CORDON:-cordon}

json=$($cordon doctor --json)
rc=$?
ok "doctor --json exits 0 (rc=$rc)" test "$rc" -eq 0
has() { printf '%s' "$json" | tr -d ' \n' | grep -q "$1"; }
ok "posture is full" has '"posture":"full"'
ok "BPF LSM available" has '"bpf_lsm":{"available":true'
ok "cgroup-bpf available" has '"cgroup_bpf":{"available":true'
ok "seccomp notify available" has '"seccomp_notify":{"available":true'
ok "nothing lacking in full posture" has '"lacks":\[\]'
ok "no scratch cgroup left behind" sh -c '! ls -d /sys/fs/cgroup/cordon-probe-* 2>/dev/null'
text=$($cordon doctor)
ok "text report says full" sh -c "printf '%s' \"\$1\" | grep -q '^posture: full'" _ "$text"
# A non-root user gets a partial answer naming what needs root.
ok "as agent: the checks that need root are named" \
    sh -c "su agent -s /bin/sh -c '$cordon doctor' | grep -q 'need root'"
done_testing
