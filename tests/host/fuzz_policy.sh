#!/bin/bash
# The policy loader, evaluator and JSON position scanner, the MCP framing and
# the HTTP head parser under libFuzzer with ASan and UBSan (tools/fuzz): each
# target runs its seed corpus, then fuzzes for a bounded time with its
# language's dictionary.  Any crash, leak, sanitizer report, timeout, or
# broken invariant (pol_eval against pol_eval_linear, an HTTP head parsed
# differently in pieces) fails the test and leaves the input in the log.
set -u
. "$(dirname "$0")/../lib.sh"

src=${CORDON_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
secs=${FUZZ_SECONDS:-25}

command -v "${CLANG:-clang}" >/dev/null || skip_all "needs clang (make deps)"
probe=$(mktemp -d /tmp/fuzz_policy.XXXXXX)
trap 'rm -rf "$probe"' EXIT
echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { return 0; }' \
    >"$probe/probe.c"
"${CLANG:-clang}" -fsanitize=fuzzer,address,undefined "$probe/probe.c" -o "$probe/probe" \
    >/dev/null 2>&1 || skip_all "needs libFuzzer for clang (libclang-rt-14-dev: make deps)"

make -s -C "$src" BUILD="$BUILD" fuzz >"$probe/make.log" 2>&1
rc=$?
ok "make fuzz builds every target (rc=$rc)" test "$rc" -eq 0
[ "$rc" -eq 0 ] || tail -n 30 "$probe/make.log" | sed 's/^/# /'

# show_failure LOG: the report of the first failure in a libFuzzer log.
show_failure() {
    grep -m1 -A30 -E 'ERROR|runtime error|_fuzz: ' "$1" | sed 's/^/# /'
}

# fuzz [--dict FILE] NAME CORPUS...: replay the seeds, then fuzz a copy of
# them for $secs s with the dictionary (the policy language's by default).
fuzz() {
    local dict=$src/tools/fuzz/policy.dict name bin work rc
    if [ "$1" = --dict ]; then
        dict=$2
        shift 2
    fi
    name=$1 bin=$BUILD/fuzz/$1 work=$probe/$1
    shift
    mkdir -p "$work/corpus" "$work/art"
    cp "$@" "$work/corpus/"
    "$bin" -artifact_prefix="$work/art/" "$@" >"$work/replay.log" 2>&1
    rc=$?
    ok "$name: every seed runs clean (rc=$rc)" test "$rc" -eq 0
    [ "$rc" -eq 0 ] || show_failure "$work/replay.log"
    "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
        -dict="$dict" -artifact_prefix="$work/art/" \
        -print_final_stats=1 "$work/corpus" >"$work/fuzz.log" 2>&1
    rc=$?
    ok "$name: ${secs}s of fuzzing, no crash (rc=$rc)" test "$rc" -eq 0
    ok "$name: no crash, leak, timeout or oom input left" \
        test -z "$(ls -A "$work/art")"
    if [ "$rc" -ne 0 ] || [ -n "$(ls -A "$work/art")" ]; then
        show_failure "$work/fuzz.log"
        for f in "$work/art"/*; do
            [ -f "$f" ] && echo "# input $(basename "$f"): $(base64 -w0 "$f")"
        done
    fi
    echo "# $name: $(grep -E '^stat::number_of_executed_units' "$work/fuzz.log" |
        awk '{ print $2 }') runs, corpus $(ls "$work/corpus" | wc -l) inputs"
}

fuzz policy_fuzz "$src"/tools/fuzz/corpus/policy/*
# The same loader on constitutions (policy/english/), with their words.
fuzz --dict "$src/tools/fuzz/english.dict" policy_fuzz "$src"/tools/fuzz/corpus/english/*
fuzz jsonpos_fuzz "$src"/tools/fuzz/corpus/jsonpos/* "$src"/tools/fuzz/corpus/policy/*
fuzz jsonrpc_fuzz "$src"/tools/fuzz/corpus/jsonrpc/*
fuzz --dict "$src/tools/fuzz/http.dict" http_fuzz "$src"/tools/fuzz/corpus/http/*
done_testing
