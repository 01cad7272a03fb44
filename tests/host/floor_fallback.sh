#!/bin/bash
# On a kernel that refuses BPF LSM programs (this CI host), `cordon floor
# load` fails with the doctor's reason and leaves nothing of its own behind:
# no pins, no programs, never half a floor; and the network floor (net/,
# pinned by earlier sessions, used by running ones) is not its to touch.
# On a kernel that accepts them, it loads whole and unloads clean.  All of
# it on the tests' own floor instance ($CORDON_PINS, tests/lib.sh): the
# unload here is never the live floor's (tests/host/live_floor.sh).
set -u
. "$(dirname "$0")/../lib.sh"
cordon=$BUILD/cordon
[ "$(id -u)" -eq 0 ] || skip_all "needs root"
command -v bpftool >/dev/null || skip_all "bpftool not installed"

lsm=$("$cordon" doctor --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["mechanisms"]["bpf_lsm"]["available"])')
progs_before=$(bpftool prog list 2>/dev/null | grep -c '^[0-9]')
net_before=$(ls "$CORDON_PINS"/net 2>/dev/null | tr '\n' ' ')
err=$("$cordon" floor load 2>&1 >/dev/null)
rc=$?
if [ "$lsm" = False ]; then
    ok "floor load fails on this kernel (rc=$rc)" test "$rc" -eq 1
    ok "and says why, in the doctor's words: $err" grep -q 'kernel refused LSM program load (EPERM)' <<<"$err"
    ok "no pin of the LSM floor left ($(ls -A "$CORDON_PINS" 2>/dev/null | tr '\n' ' '))" \
        test -z "$(ls -A "$CORDON_PINS" 2>/dev/null | grep -vx net)"
    ok "the network floor's pins untouched (${net_before:-none})" \
        test "$(ls "$CORDON_PINS"/net 2>/dev/null | tr '\n' ' ')" = "$net_before"
    progs_after=$(bpftool prog list 2>/dev/null | grep -c '^[0-9]')
    ok "no program left loaded ($progs_before before, $progs_after after)" test "$progs_after" -le "$progs_before"
    ok "status says not loaded" bash -c "'$cordon' floor status | grep -q 'not loaded'"
    ok "status --json: loaded false, no links" \
        test "$("$cordon" floor status --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["lsm"]["loaded"], len(d["lsm"]["links"]))')" = "False 0"
else
    ok "floor load succeeds where BPF LSM works (rc=$rc)" test "$rc" -eq 0
    ok "status says loaded" bash -c "'$cordon' floor status | grep -q '^floor: loaded'"
    ok "unload" "$cordon" floor unload
    ok "no pin directory left" test ! -e "$CORDON_PINS"
fi
ok "gc with nothing loaded is a no-op" "$cordon" floor gc
ok "unknown subcommand is a usage error (2)" bash -c "'$cordon' floor frob 2>/dev/null; test \$? -eq 2"
done_testing
