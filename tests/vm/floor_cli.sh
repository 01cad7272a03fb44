#!/bin/sh
# cordon floor load | status | gc | unload on a kernel with BPF LSM.
. "$(dirname "$0")/../lib.sh"
cordon=${CORDON:-cordon}

$cordon floor unload >/dev/null 2>&1
ok "load" $cordon floor load
ok "status: loaded, not stale" sh -c "$cordon floor status | grep -q '^floor: loaded, '"
n=$($cordon floor status --json | grep -c '"cordon_')
ok "every program is attached and pinned ($n links)" test "$n" -ge 12
ok "the maps are pinned" test -e /sys/fs/bpf/cordon/fs_rules -a -e /sys/fs/bpf/cordon/sessions
ok "a second load reuses the pinned floor" $cordon floor load
# A stale session (cgroup gone) is collected.
ok "gc on a clean floor removes nothing" sh -c "$cordon floor gc | grep -q '^floor: 0 stale'"
ok "unload" $cordon floor unload
ok "nothing pinned after unload" test ! -e /sys/fs/bpf/cordon
ok "status after unload: not loaded" sh -c "$cordon floor status | grep -q 'not loaded'"
$cordon floor load >/dev/null 2>&1
done_testing
