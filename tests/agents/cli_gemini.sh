# Gemini CLI (@google/gemini-cli, node) for tests/host/agents.sh: sourced
# (POSIX sh), defines gemini_run (under cordon) and gemini_bare (without).
#
# Non-interactive: -p PROMPT runs one headless turn and exits.
# Its own permission prompts off: --approval-mode yolo (the same as --yolo)
#   runs every tool call without asking; cordon is what judges them.
# --skip-trust: trust the workspace for this run (headless Gemini CLI
#   otherwise refuses an untrusted folder, or drops yolo to "default").
# Its own sandbox: off unless asked for (-s, GEMINI_SANDBOX, or the
#   "tools.sandbox" setting, none given here); "tools.sandbox": false and
#   "security.toolSandboxing": false below say so.  cordon replaces it.
# Offline, by documented settings (its user settings file,
#   ~/.gemini/settings.json, written by the run itself: under cordon in the
#   session's home layer; a system settings file would be refused, its
#   directory must be root's):
#   "privacy.usageStatisticsEnabled": false   usage statistics (Clearcut, to
#                                             play.googleapis.com at start
#                                             and exit), on by default;
#   "telemetry.enabled": false                OpenTelemetry export (off by
#                                             default; GEMINI_TELEMETRY_ENABLED);
#   "general.enableAutoUpdate",
#   "general.enableAutoUpdateNotification"    the update check (the npm
#                                             registry; interactive runs only);
#   "ide.enabled": false                      IDE companion discovery.
#   "general.maxAttempts": 3                  a failing API call is given up
#                                             after 3 tries, not 10 (5 s to
#                                             30 s of back-off each): the CLI
#                                             then ends with its error.
# The model: GEMINI_API_KEY (cordon's sentinel inside a session), the
#   requests to generativelanguage.googleapis.com through HTTPS_PROXY (the
#   credential proxy) trusting NODE_EXTRA_CA_CERTS (the session CA), both
#   set by cordon.  Bare: GOOGLE_GEMINI_BASE_URL points at the model server;
#   with it set, Gemini CLI would pick the "gateway" auth type, which -p
#   refuses ("Invalid auth method selected."), so the settings name
#   "gemini-api-key" (that type reads the same base URL).

GEMINI_SETTINGS='{"security":{"auth":{"selectedType":"gemini-api-key"},"toolSandboxing":false},'\
'"tools":{"sandbox":false},"privacy":{"usageStatisticsEnabled":false},"telemetry":{"enabled":false},'\
'"general":{"enableAutoUpdate":false,"enableAutoUpdateNotification":false,"maxAttempts":3},'\
'"ide":{"enabled":false}}'

# The settings are written where the CLI runs, by the user it runs as:
# under cordon in the session's home layer (nothing from the host but the
# CLI itself), bare in a fresh GEMINI_CLI_HOME (the agent's real home is
# left alone).
_gemini_sh='g=${GEMINI_CLI_HOME:-$HOME}/.gemini && mkdir -p "$g" && printf "%s\n" "$1" >"$g/settings.json" &&
exec node "$2/.bin/gemini" -p "$3" --approval-mode yolo --skip-trust'

gemini_run() {
    timeout -k 10 "${AGENT_TIMEOUT:-300}" "$cordon" run "$@" -- \
        /bin/sh -c "$_gemini_sh" gemini "$GEMINI_SETTINGS" "$AGENTS" "$PROMPT" </dev/null
}

gemini_bare() {
    gh=$(agent_tmpdir) || return 1
    agent_bare GEMINI_API_KEY="$GEMINI_API_KEY" GEMINI_CLI_HOME="$gh" \
        GOOGLE_GEMINI_BASE_URL="$MODEL_URL" NODE_EXTRA_CA_CERTS="${MODEL_CA:-$t/ca.pem}" \
        /bin/sh -c "$_gemini_sh" gemini "$GEMINI_SETTINGS" "$AGENTS" "$PROMPT" </dev/null
    set -- $?
    rm -rf "$gh"
    return "$1"
}
