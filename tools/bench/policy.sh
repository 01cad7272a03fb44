#!/bin/bash
# The policy evaluator on a generated 1,000-rule policy (600 fs, 250 net,
# 150 tool rules): per-evaluation latency of a mixed request stream through
# pol_eval (indexed; target: median at most 1 us) and pol_eval_linear (every
# rule scanned, the baseline), by request class, and the policy's load time.
# Then `policy check` of the same mix at 15,000 and 60,000 rules, and the
# time per rule at the two sizes (it was quadratic: 28 s at 60,000).
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
row "load with every warning (\`policy check\`: shadowing, invariants, rules that cannot match)" "$sh ms" \
    "$(ld parse+index+shadowing 4) ms" "$(ld parse+index+shadowing 5)" "parse+index $pl ms" \
    "$(ratio "$sh" "$pl")"
# check N FIELD: 3 median ms, 4 p90 ms, 5 runs, 6 warnings, 7 bytes.
ck() { awk -v n="$1" -v f="$2" '$1 == "check" && $2 == n { print $f }' <<<"$out"; }
c15=$(ck 15000 3)
c60=$(ck 60000 3)
row "\`policy check\` of 15,000 rules, the same mix ($(ck 15000 7) bytes, $(ck 15000 6) warnings; a fresh process a run)" \
    "$c15 ms" "$(ck 15000 4) ms" "$(ck 15000 5)" "" ""
row "\`policy check\` of 60,000 rules ($(ck 60000 7) bytes, $(ck 60000 6) warnings)" \
    "$c60 ms" "$(ck 60000 4) ms" "$(ck 60000 5)" "15,000 rules $c15 ms" "$(ratio "$c60" "$c15")"
p15=$(awk -v t="$c15" 'BEGIN { printf "%.1f", t * 1000 / 15000 }')
p60=$(awk -v t="$c60" 'BEGIN { printf "%.1f", t * 1000 / 60000 }')
row "\`policy check\`, time per rule at 60,000 against 15,000 (quadratic: 4x; target at most 1.5x)" \
    "$p60 us" "" "" "$p15 us" "$(ratio "$p60" "$p15")"
ec=$(ld en-compile 3)
row "compile a $(info en_sentences)-sentence constitution ($(info en_bytes) bytes; \`en_compile\`)" \
    "$ec ms" "$(ld en-compile 4) ms" "$(ld en-compile 5)" \
    "$(awk -v v="$ec" -v n="$(info en_sentences)" 'BEGIN { printf "%.1f us a sentence", v * 1000 / n }')" ""
row "load it as \`cordon run\` does (compile, validate, index)" "$(ld en-load 3) ms" \
    "$(ld en-load 4) ms" "$(ld en-load 5)" "" ""
