#!/bin/bash
# Claude Code under the shipped profile, beyond tests/host/agents.sh's
# script: its interactive first run (a fresh home layer, no ~/.claude.json)
# on a terminal, from the onboarding screens to a tool call of the model
# server's script (tests/agents/cli_claude.sh, claude_tty), then a second
# interactive session with the state the first one left in the layer, and
# -p; the real key never reaches the model server's side requests it should
# not, and the state file lands in the layer, never in the real home.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/tests/lib.sh"
. "$here/tests/lib_run.sh"
. "$here/tests/lib_net.sh"
[ "$(id -u)" -eq 0 ] || skip_all "needs root (cordon run)"
agent_user || skip_all "needs an agent user"
command -v tmux >/dev/null || skip_all "needs tmux (the terminal claude_tty drives)"
[ "$(uname -m)" = x86_64 ] || skip_all "the pinned agent CLIs are x86_64 builds"
. "$here/tests/agents/lib.sh"
inst=
# The pinned CLIs where the profile lets the agent execute (or $AGENTS).
[ -n "${AGENTS:-}" ] || agents_install
. "$here/tests/agents/cli_claude.sh"

MODEL_DIR=$(mktemp -d /var/cordon-claude.XXXXXX)
pids=
trap 'kill $pids 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$MODEL_DIR" "${WS:-/nonexistent}" ${inst:+"$inst"}' EXIT
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY no_proxy NO_PROXY ALL_PROXY all_proxy
chmod 0755 "$MODEL_DIR"
net_test_ca "$MODEL_DIR" || { echo "Bail out! the test CA: $(tail -n 1 "$MODEL_DIR/ca.err")"; exit 1; }
new_workspace
echo 'int main(void) { return 0; }' >"$WS/hello.c"
chown "$AGENT" "$WS/hello.c"
cat >"$MODEL_DIR/script.json" <<EOF
{"steps": [{"shell": "ls"}], "final": "claude-script-done"}
EOF
python3 "$here/tests/agents/model_server.py" "$MODEL_DIR" "$MODEL_DIR/script.json" 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- & pids="$pids $!"
for _ in $(seq 100); do [ -e "$MODEL_DIR/port" ] && break; sleep 0.05; done
read -r port <"$MODEL_DIR/port" || { echo "Bail out! the model server did not start"; exit 1; }
REAL=sk-ant-claude-$(head -c 18 /dev/urandom | base64 | tr '+/' '-_')
export ANTHROPIC_API_KEY=$REAL
PROMPT="follow the script"
CLAUDE_TTY_LOG=$MODEL_DIR/tty.log
CLAUDE_TTY_UNTIL=claude-script-done
AGENT_TIMEOUT=120
up="--upstream anthropic=https://localhost:$port --upstream-ca $MODEL_DIR/ca.pem"

# A first run: nothing of Claude Code's in the layer.
"$cordon" home discard --user "$AGENT" --profile coding-agent >/dev/null 2>&1
audit=/var/cordon-audit-claude.$$.jsonl
# shellcheck disable=SC2086
claude_tty --user "$AGENT" --workspace "$WS" --audit "$audit" --approve deny $up 2>"$MODEL_DIR/tty.err"
rc=$?
ok "the interactive first run reaches the prompt and runs a tool (rc=$rc)" \
    sh -c "[ $rc -eq 0 ] || { tail -n 25 '$CLAUDE_TTY_LOG'; cat '$MODEL_DIR/tty.err'; exit 1; }"
ok "the tool's output is the workspace's listing" \
    sh -c "grep '\"step\": 0' '$MODEL_DIR/results.jsonl' | grep -q hello.c"
ok "no preflight probe and no sign-in host was asked for" \
    sh -c "! grep -F 'platform.claude.com' '$audit' && ! grep -F '/api/hello' '$audit'"
ok "its state file is in the home layer, not the real home" \
    sh -c "[ ! -e '$AGENT_HOME/.claude.json' ] && [ -s /var/lib/cordon/home/$AGENT_UID-coding-agent/upper/.claude.json ]"
ok "the model server got the real key in every request's key header, never the sentinel" \
    sh -c "[ \"\$(jq -r '.headers | to_entries[] | select(.key | ascii_downcase == \"x-api-key\") | .value' \
        '$MODEL_DIR/requests.jsonl' | sort -u)\" = '$REAL' ]"
ok "the key is nowhere on the agent's screen" sh -c "! grep -qF '$REAL' '$CLAUDE_TTY_LOG'"
rm -f "$audit" "$audit".*

# A second interactive session finds the layer's state (no onboarding) and
# a new sentinel: the helper still makes it the key without a question.
: >"$MODEL_DIR/results.jsonl"
kill $pids 2>/dev/null; wait 2>/dev/null; pids=; rm -f "$MODEL_DIR/port"
python3 "$here/tests/agents/model_server.py" "$MODEL_DIR" "$MODEL_DIR/script.json" 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- & pids="$pids $!"
for _ in $(seq 100); do [ -e "$MODEL_DIR/port" ] && break; sleep 0.05; done
read -r port <"$MODEL_DIR/port"
up="--upstream anthropic=https://localhost:$port --upstream-ca $MODEL_DIR/ca.pem"
# shellcheck disable=SC2086
claude_tty --user "$AGENT" --workspace "$WS" --audit "$audit" --approve deny $up 2>"$MODEL_DIR/tty.err"
rc=$?
ok "a second interactive session runs a tool (rc=$rc)" \
    sh -c "[ $rc -eq 0 ] && grep -q '\"step\": 0' '$MODEL_DIR/results.jsonl' || { tail -n 25 '$CLAUDE_TTY_LOG'; exit 1; }"
ok "without the onboarding" sh -c "! grep -q 'Choose the text style' '$CLAUDE_TTY_LOG'"
rm -f "$audit" "$audit".*

done_testing
