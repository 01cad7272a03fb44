#!/bin/sh
# The network floor on the guest kernel: the same real test as on the host
# (tests/host/net_floor.c), run against the VM's cgroup2 at /sys/fs/cgroup.
: "${BUILD:=/opt/cordon/build}"
exec "$BUILD/tests/host/net_floor"
