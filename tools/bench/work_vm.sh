#!/bin/bash
# tools/bench/work.sh in the VM (tools/vmtest: Debian's kernel with BPF LSM,
# the full posture): the same tasks, bare and under cordon, in a guest given
# what they need (make and a C compiler, git, rg, python3 and its standard
# library, bash, setpriv and coreutils' date and sort; no npm, no
# bubblewrap: their rows say so).  Under TCG a syscall costs several times
# what it does on the host, so the sizes are smaller (WORK_VM_CFILES 60,
# WORK_VM_FILES 2,000, WORK_VM_ROUNDS 3) and only the ratios within this
# boot mean anything.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
: "${BUILD:=$here/build}"

gcc=/usr/lib/gcc/x86_64-linux-gnu/12
multi=/usr/lib/x86_64-linux-gnu
add=()
for f in /usr/bin/bash /usr/bin/git /usr/bin/rg /usr/bin/make /usr/bin/python3 /usr/bin/setpriv \
         /usr/bin/date /usr/bin/sort /usr/bin/env /usr/bin/gcc-12 /usr/bin/as /usr/bin/ld.bfd \
         $gcc/cc1 $gcc/collect2 $gcc/lto-wrapper $gcc/liblto_plugin.so $gcc/crtbegin.o $gcc/crtend.o \
         $gcc/crtbeginS.o $gcc/crtendS.o $gcc/libgcc.a $gcc/libgcc_s.so $gcc/include \
         $multi/crt1.o $multi/Scrt1.o $multi/crti.o $multi/crtn.o $multi/libc.so $multi/libc_nonshared.a \
         $multi/libc_nonshared.a /usr/lib/x86_64-linux-gnu/libgcc_s.so.1 /usr/include; do
    [ -e "$f" ] && add+=(--add "$f")
done
add+=(--add /usr/bin/gcc-12:/usr/bin/cc --add /usr/bin/ld.bfd:/usr/bin/ld --add /usr/lib/python3.11
      --add /usr/lib/git-core)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$here/tools/vmtest" --build "$BUILD" --mem 4096 --timeout "${VM_TIMEOUT:-3000}" "${add[@]}" \
    --add "$here/tools:/opt/cordon/tools" --add "$here/tests:/opt/cordon/tests" \
    --add "$here/policy/profiles:/opt/cordon/policy/profiles" \
    -- env CORDON_IN_VM=1 BUILD=/opt/cordon/build CORDON=/usr/local/bin/cordon WORK_WHERE="VM, full posture" \
    WORK_ROUNDS="${WORK_VM_ROUNDS:-3}" WORK_CFILES="${WORK_VM_CFILES:-60}" WORK_FILES="${WORK_VM_FILES:-2000}" \
    PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin bash /opt/cordon/tools/bench/work.sh >"$out" 2>&1
rc=$?
if ! grep -q '^| ' "$out"; then
    echo "## Real work (VM, full posture)"
    echo
    echo "failed in the VM (vmtest status $rc):"
    tail -n 20 "$out" | sed 's/^/    /'
    exit 1
fi
sed -n '/^## /,$p' "$out" | grep -v '^Setting up'
