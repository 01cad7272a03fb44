#!/bin/sh
# The network floor on the guest kernel: the same real test as on the host
# (tests/host/net_floor.c), run against the VM's cgroup2 at /sys/fs/cgroup.
#
# It makes its session and stray cgroups below cordon's parent itself and
# registers them with the network floor only.  The LSM floor, if an earlier
# test left it loaded, would rightly judge them strays (below the parent,
# registered with it by no session) and deny their tasks everything, files
# and pipes included, before any network call: so it is unloaded first, and
# this test sees the network floor alone.  (A real session is registered
# with both; tests/vm/lsm_smoke.c covers strays under the LSM floor.)
: "${BUILD:=/opt/cordon/build}"
cordon=${CORDON:-/usr/local/bin/cordon}
[ -x "$cordon" ] || cordon=$BUILD/cordon
"$cordon" floor unload >/dev/null 2>&1 || true
exec "$BUILD/tests/host/net_floor"
