#!/bin/sh
# The exec recheck's kernel side on the guest kernel (Debian's stock one):
# the same real test as on the host (tests/host/exec_recheck.c).
: "${BUILD:=/opt/cordon/build}"
exec "$BUILD/tests/host/exec_recheck"
