#!/bin/bash
# The test infrastructure itself: VM boot-to-command (target about 10 s on
# these machines) and `cordon doctor` (every probe, run for real).
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/tools/bench/lib.sh"

echo "## harness and doctor"
echo
row "what" "median" "runs" "baseline" "ratio"
row "---" "---" "---" "---" "---"
true_ms=$(repeat 20 true | median)
doc_ms=$(repeat 20 "$BUILD/cordon" doctor | median)
row "\`cordon doctor\` (host, all probes)" "$doc_ms ms" 20 "\`true\` $true_ms ms" "$(ratio "$doc_ms" "$true_ms")"
"$here/tools/vmtest" --build "$BUILD" -- true >/dev/null 2>&1   # warm the kernel cache
boot_ms=$(repeat 3 "$here/tools/vmtest" --build "$BUILD" -- true | median)
row "\`tools/vmtest -- true\` (boot, run, power off)" "$boot_ms ms" 3 "target 10000 ms" "$(ratio "$boot_ms" 10000)"
