#!/bin/bash
# tests/host/agents.sh in the VM (tools/vmtest: Debian's kernel with BPF
# LSM, the full posture): the same real agent CLIs, model server and rows,
# in a guest of its own with what they need (node, python3, git, curl, a C
# compiler, openssl) and memory enough for the CLIs (about 1 GB of
# binaries in the initramfs).  The guest's rows are prefixed "vm:".  Under
# TCG every run is about seven times slower: the guest runs each CLI once
# under cordon (AGENTS_QUICK), without the host's bare control and second,
# approved run, which show nothing the full posture changes.
set -uo pipefail
here=${CORDON_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$here/tests/lib.sh"
BUILD=${BUILD:-$here/build}
[ "$(id -u)" -eq 0 ] || skip_all "needs root"
[ "$(uname -m)" = x86_64 ] || skip_all "the pinned agent CLIs are x86_64 builds"
for c in node python3 git curl cc openssl bash qemu-system-x86_64; do
    command -v $c >/dev/null || skip_all "needs $c"
done
"$here/tools/mcp-deps" agents || { echo "Bail out! the agent CLIs (tools/mcp-deps agents) did not install"; exit 1; }

# What the guest needs beyond busybox: each tool with its libraries
# (vmtest adds them), Python's standard library, git's helpers, and the
# compiler's driver, passes, start files and libraries (the agents' code
# needs no headers).
gcc=/usr/lib/gcc/x86_64-linux-gnu/12
multi=/usr/lib/x86_64-linux-gnu
add=()
for f in /usr/bin/node /usr/bin/bash /usr/bin/git /usr/bin/curl /usr/bin/openssl /usr/bin/od /usr/bin/base64 \
         /usr/bin/timeout /usr/bin/env /usr/bin/python3 /usr/bin/gcc-12 /usr/bin/as /usr/bin/ld.bfd \
         $gcc/cc1 $gcc/collect2 $gcc/lto-wrapper $gcc/liblto_plugin.so $gcc/crtbegin.o $gcc/crtend.o $gcc/crtbeginS.o $gcc/crtendS.o \
         $gcc/libgcc.a $gcc/libgcc_s.so $multi/crt1.o $multi/Scrt1.o $multi/crti.o $multi/crtn.o \
         $multi/libc.so $multi/libc_nonshared.a /usr/lib/x86_64-linux-gnu/libgcc_s.so.1 /usr/include/stdc-predef.h; do
    [ -e "$f" ] && add+=(--add "$f")
done
add+=(--add /usr/bin/gcc-12:/usr/bin/cc --add /usr/bin/ld.bfd:/usr/bin/ld --add /usr/lib/python3.11
      --add /usr/lib/git-core --add /etc/ssl/certs/ca-certificates.crt
      --add /etc/ssl/openssl.cnf --add /etc/ssl/openssl.cnf:/usr/lib/ssl/openssl.cnf
      --add "$here/tests/agents/node_modules:/opt/cordon-agents/node_modules")

out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$here/tools/vmtest" --build "$BUILD" --mem 8192 --timeout "${VM_TIMEOUT:-2400}" "${add[@]}" \
    --add "$here/tools:/opt/cordon/tools" --add "$here/policy/profiles:/opt/cordon/policy/profiles" \
    -- env CORDON_IN_VM=1 AGENTS_QUICK=1 BUILD=/opt/cordon/build CORDON_SRC=/opt/cordon CORDON_AGENTS_DIR=/opt/cordon-agents/node_modules \
    PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin bash /opt/cordon/tests/host/agents.sh >"$out" 2>&1
rc=$?
# The guest's rows become this test's, prefixed.
n=0
while IFS= read -r l; do
    case $l in
    "ok "*|"not ok "*)
        n=$((n + 1))
        st=${l%% - *}; st=${st% [0-9]*}
        echo "$st $n - vm: ${l#* - }" ;;
    "#"*) echo "$l" ;;
    esac
done <"$out"
[ $n -gt 0 ] || { tail -n 20 "$out" | sed 's/^/# /'; echo "not ok 1 - vm: the guest ran no row (vmtest status $rc)"; echo "1..1"; exit 1; }
echo "1..$n"
