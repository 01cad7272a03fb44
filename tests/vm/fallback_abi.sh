#!/bin/sh
# The fallback layers on the VM's Debian 6.1 kernel (Landlock ABI 2): the
# same binary as on the host, so the ABI-degraded behaviour is proven on a
# real older kernel: TRUNCATE, TCP ports and scoping are not handled there,
# their checks skip naming the ABI, and the report's lacks list them.
. "$(dirname "$0")/../lib.sh"
bin=$BUILD/tests/host/fallback_apply
[ -x "$bin" ] || skip_all "fallback_apply is not built"
exec "$bin"
