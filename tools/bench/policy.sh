#!/bin/bash
# The policy evaluator on a generated 1,000-rule policy (600 fs, 250 net,
# 150 tool rules): per-evaluation latency of a mixed request stream through
# pol_eval (indexed; target: median at most 1 us) and pol_eval_linear (every
# rule scanned, the baseline), by request class, and the policy's load time.
# tools/bench/policy_bench does the measuring and exits 1 if the two
# evaluators disagree on any request; this script lays out its numbers.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/tools/bench/lib.sh"

bin=$BUILD/tools/bench/policy_bench
[ -x "$bin" ] || make -s -C "$here" BUILD="$BUILD" "$BUILD/tools/bench/policy_bench" >&2

echo "## policy evaluation (1,000 rules)"
echo
if ! out=$("$bin"); then
    echo "policy_bench failed (indexed and linear disagree, or the policy did not load)" >&2
    exit 1
fi

# eval EVALUATOR CLASS FIELD: 4 median ns, 5 p90 ns, 6 samples.
ev() { awk -v e="$1" -v c="$2" -v f="$3" '$1 == "eval" && $2 == e && $3 == c { print $f }' <<<"$out"; }
ld() { awk -v w="$1" -v f="$2" '$1 == "load" && $2 == w { print $f }' <<<"$out"; }
info() { awk -v k="$1" '$1 == "info" && $2 == k { print $3 }' <<<"$out"; }
ns() { awk -v v="$1" 'BEGIN { printf (v >= 100 ? "%.0f ns" : "%.1f ns"), v }'; }

echo "$(info requests) pre-built requests ($(info requests_fs) fs read/write/create at depth 4-8," \
     "$(info requests_net) connect, $(info requests_tool) tool calls); indexed and linear agree" \
     "on all $(info agree) ($(info allow) allow, $(info escalate) escalate, $(info deny) deny)." \
     "A sample is the mean of 1,000 consecutive evaluations; p90 is over samples."
echo
row "what" "median" "p90" "samples" "baseline" "ratio"
row "---" "---" "---" "---" "---" "---"
target=1000
idx=$(ev indexed all 4)
lin=$(ev linear all 4)
row "\`pol_eval\` (indexed), mixed stream" "$(ns "$idx")" "$(ns "$(ev indexed all 5)")" \
    "$(ev indexed all 6)" "target $target ns" "$(ratio "$idx" "$target")"
row "\`pol_eval_linear\` (scan), mixed stream" "$(ns "$lin")" "$(ns "$(ev linear all 5)")" \
    "$(ev linear all 6)" "\`pol_eval\` $(ns "$idx")" "$(ratio "$lin" "$idx")"
for c in fs net tool; do
    i=$(ev indexed "$c" 4)
    l=$(ev linear "$c" 4)
    row "\`pol_eval\`, $c requests only" "$(ns "$i")" "$(ns "$(ev indexed "$c" 5)")" \
        "$(ev indexed "$c" 6)" "target $target ns" "$(ratio "$i" "$target")"
    row "\`pol_eval_linear\`, $c requests only" "$(ns "$l")" "$(ns "$(ev linear "$c" 5)")" \
        "$(ev linear "$c" 6)" "\`pol_eval\` $(ns "$i")" "$(ratio "$l" "$i")"
done
inv=$(ev invariants fs 4)
fsi=$(ev indexed fs 4)
row "structural invariants by linear scan (\`pol_invariant_fs\`: the oracle; \`pol_eval\` uses the index), fs requests" "$(ns "$inv")" \
    "$(ns "$(ev invariants fs 5)")" "$(ev invariants fs 6)" "\`pol_eval\` fs $(ns "$fsi")" \
    "$(ratio "$inv" "$fsi")"
pl=$(ld parse+index 3)
sh=$(ld parse+index+shadowing 3)
row "load: parse, validate, index ($(info policy_bytes) bytes)" "$pl ms" "$(ld parse+index 4) ms" \
    "$(ld parse+index 5)" "" ""
row "load with shadowed-rule warnings (\`policy check\`)" "$sh ms" \
    "$(ld parse+index+shadowing 4) ms" "$(ld parse+index+shadowing 5)" "parse+index $pl ms" \
    "$(ratio "$sh" "$pl")"
ec=$(ld en-compile 3)
row "compile a $(info en_sentences)-sentence constitution ($(info en_bytes) bytes; \`en_compile\`)" \
    "$ec ms" "$(ld en-compile 4) ms" "$(ld en-compile 5)" \
    "$(awk -v v="$ec" -v n="$(info en_sentences)" 'BEGIN { printf "%.1f us a sentence", v * 1000 / n }')" ""
row "load it as \`cordon run\` does (compile, validate, index)" "$(ld en-load 3) ms" \
    "$(ld en-load 4) ms" "$(ld en-load 5)" "" ""
