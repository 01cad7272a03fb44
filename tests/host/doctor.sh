#!/bin/bash
# cordon doctor on the host kernel: the posture follows from the measured
# mechanisms, this CI host (which refuses BPF LSM programs) reports
# `fallback`, every probe object is cleaned up, and a non-root run names the
# checks that need root.
set -u
. "$(dirname "$0")/../lib.sh"

cordon=$BUILD/cordon
[ "$(id -u)" -eq 0 ] || skip_all "needs root (cgroup-bpf and BPF LSM probes)"

cgroot=$(cgroup2_root)
progs_before=$(bpftool prog list 2>/dev/null | grep -c '^[0-9]')

json=$("$cordon" doctor --json)
rc=$?
ok "doctor --json exits 0 on a usable kernel (rc=$rc)" test "$rc" -eq 0
j() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)" <<<"$json"; }

ok "every mechanism has a bool 'available' and a reason" \
    test "$(j "all(isinstance(m['available'],bool) and m['reason'] for m in d['mechanisms'].values())")" = True
for m in bpf_lsm cgroup2 cgroup_bpf landlock seccomp_notify seccomp_addfd_send pidfd_getfd user_namespaces io_uring; do
    ok "mechanism $m reported" test "$(j "'$m' in d['mechanisms']")" = True
done

lsm=$(j "d['mechanisms']['bpf_lsm']['available']")
posture=$(j "d['posture']")
if [ "$lsm" = False ]; then
    ok "without BPF LSM the posture is fallback (got $posture)" test "$posture" = fallback
    reason=$(j "d['mechanisms']['bpf_lsm']['reason']")
    if grep -qw bpf /sys/kernel/security/lsm 2>/dev/null; then
        # This host lists bpf yet refuses the program: the reason must say so.
        ok "the reason is the kernel's refusal: $reason" \
            grep -q 'kernel refused LSM program load (EPERM)' <<<"$reason"
    fi
    ok "fallback lists what it lacks" test "$(j "len(d['lacks']) > 0")" = True
else
    ok "with BPF LSM the posture is full (got $posture)" test "$posture" = full
fi
ok "Landlock ABI is measured" test "$(j "d['mechanisms']['landlock'].get('abi',0) >= 1")" = True

ok "no scratch cgroup left behind" test -z "$(ls -d "$cgroot"/cordon-probe-* 2>/dev/null)"
progs_after=$(bpftool prog list 2>/dev/null | grep -c '^[0-9]')
ok "no BPF program left loaded ($progs_before before, $progs_after after)" \
    test "$progs_after" -le "$progs_before"

text=$("$cordon" doctor)
ok "text report names the posture" grep -q "^posture: $posture" <<<"$text"

nobody=$(setpriv --reuid 65534 --regid 65534 --clear-groups "$cordon" doctor --json)
rc=$?
ok "non-root: exit 1 (insufficient: unchecked counts as unavailable)" test "$rc" -eq 1
nj() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)" <<<"$nobody"; }
ok "non-root: BPF LSM marked as needing root" \
    test "$(nj "d['mechanisms']['bpf_lsm'].get('needs_root', False)")" = True
ok "non-root: cgroup-bpf marked as needing root" \
    test "$(nj "d['mechanisms']['cgroup_bpf'].get('needs_root', False)")" = True
ok "non-root: text says which checks need root" \
    bash -c "setpriv --reuid 65534 --regid 65534 --clear-groups '$cordon' doctor | grep -q 'need root'"

ok "unknown argument is refused with status 2" bash -c "'$cordon' doctor --bogus 2>/dev/null; test \$? -eq 2"
done_testing
