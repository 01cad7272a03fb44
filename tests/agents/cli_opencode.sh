# OpenCode (opencode-linux-x64: a native bun build) for
# tests/host/agents.sh: sourced (POSIX sh), defines opencode_run (under
# cordon) and opencode_bare (without).
#
# Non-interactive: `opencode run PROMPT` runs one turn and exits.
# Its own prompts off: "permission": "allow" in its configuration (every
#   tool, every path, without asking; `opencode run` would otherwise refuse
#   what needs an answer).  OpenCode has no sandbox of its own: cordon is
#   the only one.
# The configuration is given whole in OPENCODE_CONFIG_CONTENT, set by the
#   launcher inside the session (cordon rebuilds the environment):
#   "model": "openai/gpt-5.5"       its "openai" provider, which speaks the
#                                    Responses API with OPENAI_API_KEY
#                                    (cordon's sentinel inside a session);
#   "autoupdate": false, "share": "disabled"   no update check, no sharing;
#   OPENCODE_DISABLE_MODELS_FETCH    the model list of its built-in snapshot,
#                                    not fetched at start;
#   OPENCODE_DISABLE_AUTOUPDATE, OPENCODE_DISABLE_LSP_DOWNLOAD,
#   OPENCODE_DISABLE_DEFAULT_PLUGINS  nothing downloaded (no plugin, no
#                                    language server).
# The endpoint: under cordon, the provider's default (api.openai.com,
#   through HTTPS_PROXY: the credential proxy, trusted through
#   NODE_EXTRA_CA_CERTS, which bun honours; both set by cordon).  Bare:
#   the provider's "baseURL" option points at the model server.

_opencode_sh='OPENCODE_CONFIG_CONTENT=$1 OPENCODE_DISABLE_MODELS_FETCH=1 OPENCODE_DISABLE_AUTOUPDATE=1 \
OPENCODE_DISABLE_LSP_DOWNLOAD=1 OPENCODE_DISABLE_DEFAULT_PLUGINS=1
export OPENCODE_CONFIG_CONTENT OPENCODE_DISABLE_MODELS_FETCH OPENCODE_DISABLE_AUTOUPDATE \
    OPENCODE_DISABLE_LSP_DOWNLOAD OPENCODE_DISABLE_DEFAULT_PLUGINS
exec "$2/opencode-linux-x64/bin/opencode" run "$3"'

# opencode_config [BASE_URL]
opencode_config() {
    oc_p=
    [ -z "${1:-}" ] || oc_p=',"provider":{"openai":{"options":{"baseURL":"'$1'"}}}'
    printf '{"autoupdate":false,"share":"disabled","permission":"allow","model":"openai/gpt-5.5"%s}' "$oc_p"
}

opencode_run() {
    timeout -k 10 "${AGENT_TIMEOUT:-300}" "$cordon" run "$@" -- \
        /bin/sh -c "$_opencode_sh" opencode "$(opencode_config)" "$AGENTS" "$PROMPT" </dev/null
}

opencode_bare() {
    oh=$(agent_tmpdir) || return 1
    agent_bare OPENAI_API_KEY="$OPENAI_API_KEY" XDG_DATA_HOME="$oh/data" \
        XDG_CONFIG_HOME="$oh/config" XDG_CACHE_HOME="$oh/cache" XDG_STATE_HOME="$oh/state" \
        NODE_EXTRA_CA_CERTS="${MODEL_CA:-$t/ca.pem}" \
        /bin/sh -c "$_opencode_sh" opencode "$(opencode_config "$MODEL_URL/v1")" "$AGENTS" "$PROMPT" </dev/null
    set -- $?
    rm -rf "$oh"
    return "$1"
}
