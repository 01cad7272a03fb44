#!/bin/bash
# The real agent CLIs' scripted runs (tests/host/agents.sh's drivers and
# model server), bare against under cordon (default profile, the model
# server as the credential's gateway), in the same run: each CLI lists,
# reads, edits, builds and runs a small C project through its own tools,
# AGENTS_ROUNDS (5) rounds alternating bare and cordon; the cell is the
# median wall time of a whole run (the CLI's start, its model round trips
# and its tools), the ratio cordon over bare.  Target: 1.05x.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
: "${BUILD:=$here/build}"
. "$here/tools/bench/lib.sh"
. "$here/tests/lib.sh" >/dev/null
. "$here/tests/lib_run.sh"
. "$here/tests/lib_net.sh"
. "$here/tests/agents/lib.sh"
rounds=${AGENTS_ROUNDS:-5}
echo "## Real agents: a scripted task, bare and under cordon"
echo
if [ "$(id -u)" -ne 0 ] || ! command -v node >/dev/null || ! agent_user; then
    echo "(skipped: needs root, node and an agent user)"
    exit 0
fi
py=/usr/bin/python3
t=$(mktemp -d /var/cordon-bench-agents.XXXXXX)
chmod 0755 "$t"
pids=
trap 'kill $pids 2>/dev/null; rm -rf "$t" ${inst:+"$inst"} ${WS:+"$WS"}' EXIT
net_test_ca "$t" || { echo "(skipped: the test CA failed)"; exit 0; }
chmod 0644 "$t/ca.pem"
agents_install >/dev/null
export ANTHROPIC_API_KEY=sk-bench OPENAI_API_KEY=sk-bench GEMINI_API_KEY=sk-bench
export PROMPT="Follow the script: run each tool call you are given, then stop."
row "agent" "bare (ms)" "cordon (ms)" "ratio" "target"
row "---" "---" "---" "---" "---"
for cli in claude codex gemini opencode; do
    case $cli in claude) cred=anthropic ;; gemini) cred=gemini ;; *) cred=openai ;; esac
    [ -r "$here/tests/agents/cli_$cli.sh" ] || { row "$cli" "no driver" "" "" "1.05x"; continue; }
    . "$here/tests/agents/cli_$cli.sh"
    : >"$t/bare.ms"; : >"$t/cordon.ms"
    for ((r = 0; r < rounds; r++)); do
        for mode in bare cordon; do
            workspace
            cat >"$t/script.json" <<EOS
{ "steps": [ { "shell": "ls" }, { "shell": "cat hello.c" },
    { "write": { "path": "$WS/hello.c", "content": "int puts(const char *);\nint main(void) { puts(\"cordon-ok\"); return 0; }\n" } },
    { "shell": "cc -o hello hello.c && ./hello" } ], "final": "done" }
EOS
            model_server "$t/m-$cli-$r-$mode" "$t/script.json"
            if [ $mode = bare ]; then
                (cd "$WS" && time_ms ${cli}_bare) >>"$t/bare.ms"
            else
                (cd "$WS" && time_ms ${cli}_run -q --user "$AGENT" --workspace "$WS" --approve deny \
                    --audit "$t/a-$cli-$r.jsonl" --upstream "$cred=$MODEL_URL" --upstream-ca "$t/ca.pem") >>"$t/cordon.ms"
            fi
            grep -q cordon-ok "$WS/hello.c" || echo "$mode" >>"$t/failed-$cli"
            rm -rf "$WS"
        done
    done
    b=$(median <"$t/bare.ms"); c=$(median <"$t/cordon.ms")
    note=
    [ -s "$t/failed-$cli" ] && note=" (some runs did not finish the task: $(sort -u "$t/failed-$cli" | tr '\n' ' '))"
    row "$cli$note" "$b" "$c" "$(ratio "$c" "$b")" "1.05x"
done
