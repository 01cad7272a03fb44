#!/bin/bash
# tools/vmtest's contract: the guest command's exit status comes back
# exactly, arguments arrive intact, output streams, and a panic or a timeout
# is a distinct status with a clear message.
set -u
. "$(dirname "$0")/../lib.sh"
src=${CORDON_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
vmtest=$src/tools/vmtest
command -v qemu-system-x86_64 >/dev/null || skip_all "qemu-system-x86_64 not installed"

status_of() { "$vmtest" --build "$BUILD" "$@" >/dev/null 2>&1; echo $?; }

ok "exit 0 propagates" test "$(status_of -- true)" -eq 0
ok "exit 1 propagates" test "$(status_of -- false)" -eq 1
ok "exit 77 propagates" test "$(status_of -- sh -c 'exit 77')" -eq 77
ok "exit 200 propagates" test "$(status_of -- sh -c 'exit 200')" -eq 200

out=$("$vmtest" --build "$BUILD" -- printf '%s|' 'a b' "it's" '$HOME' '`x`' 2>&1)
ok "arguments arrive intact (got: $out)" test "$out" = "a b|it's|\$HOME|\`x\`|"

ok "guest identity: agent is uid 1000, loopback up, cgroup2 mounted" \
    "$vmtest" --build "$BUILD" -- sh -c '
        test "$(id -u agent)" = 1000 &&
        ip link show lo | grep -q UP &&
        test -f /sys/fs/cgroup/cgroup.controllers &&
        grep -qw bpf /sys/kernel/security/lsm &&
        su agent -s /bin/sh -c "touch /tmp/x && test -d \$HOME"'

err=$("$vmtest" --build "$BUILD" -- sh -c 'echo c > /proc/sysrq-trigger' 2>&1 >/dev/null)
rc=$?
ok "a kernel panic is status 123 (got $rc)" test "$rc" -eq 123
ok "a kernel panic is explained" grep -q 'guest died without reporting a status' <<<"$err"

start=$(date +%s)
err=$("$vmtest" --build "$BUILD" --timeout 20 -- sleep 600 2>&1 >/dev/null)
rc=$?
ok "a timeout is status 124 (got $rc)" test "$rc" -eq 124
ok "a timeout is explained" grep -q 'timeout after 20' <<<"$err"
ok "the timeout is honoured ($(( $(date +%s) - start )) s)" test $(( $(date +%s) - start )) -lt 40

# A QEMU that hangs before the guest boots (seen, rarely, with TCG): the
# boot watchdog kills it and boots once more.  The first start here is a
# stand-in that never boots; the second is the real QEMU.
hang=$(mktemp -d /tmp/cordon-vmtest-hang.XXXXXX)
printf '#!/bin/sh\nif [ ! -e "%s/started" ]; then touch "%s/started"; exec sleep 600; fi\nexec qemu-system-x86_64 "$@"\n' \
    "$hang" "$hang" >"$hang/qemu"
chmod +x "$hang/qemu"
err=$(QEMU=$hang/qemu VMTEST_BOOT_WAIT=3 "$vmtest" --build "$BUILD" -- sh -c 'exit 9' 2>&1 >/dev/null)
rc=$?
ok "a guest that does not boot is booted once more (status $rc)" test "$rc" -eq 9
ok "  and that is said" grep -q 'did not boot in 3 s' <<<"$err"
rm -rf "$hang"

ok "bad usage is status 122" test "$(status_of --bogus)" -eq 122
done_testing
