#!/bin/sh
# Inbound traffic to a session's sockets on the guest kernel: the same real
# test as on the host (tests/host/net_inbound.c), over a veth pair into a
# network namespace of its own.  Busybox's `ip` cannot make a veth pair:
# tools/testrun adds iproute2's as /opt/cordon/iproute2/ip when the host has
# one (the test skips, naming veth, without it).  The LSM floor is unloaded
# first, as for net_floor.sh: the test's session is registered with the
# network floor only.
: "${BUILD:=/opt/cordon/build}"
cordon=${CORDON:-/usr/local/bin/cordon}
[ -x "$cordon" ] || cordon=$BUILD/cordon
"$cordon" floor unload >/dev/null 2>&1 || true
[ -x /opt/cordon/iproute2/ip ] && CORDON_IP=/opt/cordon/iproute2/ip && export CORDON_IP
exec "$BUILD/tests/host/net_inbound"
