#!/bin/sh
# Resource budgets on the VM's unified cgroup2 (Debian 6.1 kernel): the same
# binary as on the host (tests/host/budget.c), where the hybrid layout sends
# memory, pids and cpu to cgroup v1; here every limit is a v2 controller
# enabled down to the session, and the poll fd must wake for memory and pids.
. "$(dirname "$0")/../lib.sh"
bin=$BUILD/tests/host/budget
[ -x "$bin" ] || skip_all "tests/host/budget is not built"
exec "$bin"
