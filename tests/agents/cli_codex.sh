# Codex CLI (@openai/codex: a node launcher of a native Rust binary) for
# tests/host/agents.sh: sourced (POSIX sh), defines codex_run (under
# cordon) and codex_bare (without).
#
# Non-interactive: `codex exec PROMPT` runs one turn and exits; stdin is
# closed (it would otherwise read more of the prompt from it).
# Its own prompts and sandbox off: --dangerously-bypass-approvals-and-sandbox
#   runs every command without asking and without Codex's own sandbox
#   (bubblewrap, which needs a user namespace: a cordon session refuses
#   unshare(CLONE_NEWUSER); with -s workspace-write every command returns
#   "error building bubblewrap command: Permission denied"; cordon
#   replaces it, docs/agents/codex.md).  --skip-git-repo-check: a workspace need not be a git
#   repository.
# web_search: with the bypass (or danger-full-access), Codex declares
#   OpenAI's web_search with live access ("external_web_access": true)
#   whatever its web_search setting says ("cached" counts only in its
#   sandboxed modes), and the credential proxy refuses that (the provider
#   would fetch pages the agent names): -c web_search=disabled.
# The model: gpt-5.5, a model whose tools Codex declares in the request's
#   "tools" (exec_command, apply_patch, a namespace, tool_search,
#   web_search).  Its default model declares them inside the conversation
#   (an "additional_tools" item) and gives the model only a JavaScript
#   "exec" tool that calls them, which the scripted model does not write.
# The key: Codex 0.171 reads CODEX_API_KEY, not OPENAI_API_KEY (that one
#   only `codex login --with-api-key` reads); cordon puts its sentinel in
#   OPENAI_API_KEY, so the launcher copies it.
# The endpoint: under cordon, Codex's default (api.openai.com, through
#   HTTPS_PROXY: the credential proxy, trusted through SSL_CERT_FILE, both
#   set by cordon); it first tries a WebSocket to /v1/responses, which the
#   proxy refuses with 426, and falls back to HTTPS at once.  Bare:
#   -c openai_base_url points at the model server, trusted through
#   SSL_CERT_FILE (Codex's TLS honours it, and CODEX_CA_CERTIFICATE).
# Offline: at start Codex asks github.com and chatgpt.com for its plugin
#   catalogue; refused under cordon (no rule lists them), unreachable bare:
#   it goes on without.
# The model catalogue: --disable api_key_model_discovery.  With an API key
#   and the default endpoint, Codex fetches its model list from
#   https://chatgpt.com/backend-api/codex/models, the key in its
#   Authorization header, before the first turn and again at the turn's
#   start; cordon refuses the CONNECT (no rule lists chatgpt.com, which is
#   not the credential's host), Codex takes that for a network failure and
#   tries each fetch five times with backoff: about 6 s lost (a run of 7.8 s
#   under cordon, 2.1 s bare; docs/agents/codex.md).  Off, it uses the
#   catalogue built into it.  Bare, with openai_base_url set, it does not
#   fetch at all.

_codex_sh='CODEX_API_KEY=$OPENAI_API_KEY; export CODEX_API_KEY
h=${CODEX_HOME:-$HOME/.codex}; mkdir -p "$h" || exit
a=$1; shift
exec node "$a/.bin/codex" exec -m gpt-5.5 -c web_search=disabled --disable api_key_model_discovery \
    --dangerously-bypass-approvals-and-sandbox --skip-git-repo-check "$@"'

codex_run() {
    timeout -k 10 "${AGENT_TIMEOUT:-300}" "$cordon" run "$@" -- \
        /bin/sh -c "$_codex_sh" codex "$AGENTS" "$PROMPT" </dev/null
}

codex_bare() {
    ch=$(agent_tmpdir) || return 1
    agent_bare OPENAI_API_KEY="$OPENAI_API_KEY" CODEX_HOME="$ch" \
        SSL_CERT_FILE="${MODEL_CA:-$t/ca.pem}" \
        /bin/sh -c "$_codex_sh" codex "$AGENTS" -c "openai_base_url=\"$MODEL_URL/v1\"" "$PROMPT" </dev/null
    set -- $?
    rm -rf "$ch"
    return "$1"
}
