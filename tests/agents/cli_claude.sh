# Claude Code (the native binary of @anthropic-ai/claude-code, pinned in
# tests/agents/package.json) for tests/host/agents.sh: POSIX sh, sourced.
#
# Uses $AGENTS (node_modules as installed where the profile lets the agent
# execute), $WS, $AGENT, $AGENT_HOME, $PROMPT, $MODEL_URL (bare run only),
# $MODEL_CA (the test CA, bare run only: defaults to $MODEL_DIR/ca.pem),
# $cordon; AGENT_TIMEOUT (seconds, default 180) bounds every run.
#
# Its own permission prompts: --dangerously-skip-permissions (the same as
# --permission-mode bypassPermissions; Claude Code refuses both as root,
# the agent user is not root).  Its own sandbox (bubblewrap around Bash,
# "sandbox" in settings) is off unless settings turn it on; cordon replaces
# it, and a bubblewrap inside a session would fail anyway (no user
# namespaces: the seccomp denylist refuses them).
#
# Traffic it sends besides the model's (measured under the shipped profile,
# DIR/requests.jsonl and the audit log): feature flags (POST /api/eval/...),
# its event log (/api/event_logging/v2/batch), remote managed settings and
# policy limits (/api/claude_code/settings, /policy_limits), bootstrap,
# fast-mode and MCP-registry lookups, all on api.anthropic.com.  The
# credential proxy refuses every one (not on the credential's endpoint
# list): that refusal is the control, since a compromised agent ignores
# any variable.  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 (which sets
# DISABLE_TELEMETRY, DISABLE_ERROR_REPORTING, DISABLE_AUTOUPDATER and
# DISABLE_BUG_COMMAND) is a courtesy: the CLI stops asking, so the audit log
# has 2 refusals instead of 12 and the run starts 3 s sooner (5.9 s to 3.1 s
# for the whole script here); settings and policy limits are still asked
# once each.
CLAUDE_QUIET="CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1 DISABLE_AUTOUPDATER=1"

# The key: under cordon the agent holds a sentinel that changes every
# session, and an interactive Claude Code asks once per key ("Do you want
# to use this API key?", remembered by its last 20 characters) and, until
# it is approved, believes it must sign in: its first-run preflight then
# probes api.anthropic.com/api/hello and platform.claude.com, which the
# shipped profile refuses (no credential names the second host), and it
# exits.  An apiKeyHelper that prints the variable makes the environment's
# key the one it uses, without asking, in every session.
CLAUDE_SETTINGS='{"apiKeyHelper":"printenv ANTHROPIC_API_KEY"}'

claude_bin() { echo "$AGENTS/.bin/claude"; }

# claude_run [CORDON_RUN_OPTIONS...]: `claude -p "$PROMPT"` under cordon.
claude_run() {
    # shellcheck disable=SC2086
    timeout -k 5 "${AGENT_TIMEOUT:-180}" "$cordon" run "$@" -- \
        env $CLAUDE_QUIET "$(claude_bin)" -p "$PROMPT" --dangerously-skip-permissions \
        --settings "$CLAUDE_SETTINGS" </dev/null
}

# claude_bare: the same without cordon, against $MODEL_URL, as $AGENT, in a
# home of its own (the agent's real home stays untouched).
claude_bare() {
    _home=$(mktemp -d /var/tmp/claude-home.XXXXXX) && chown "$AGENT" "$_home" || return 1
    # shellcheck disable=SC2086
    (cd "$WS" && timeout -k 5 "${AGENT_TIMEOUT:-180}" runuser -u "$AGENT" -- env -i \
        HOME="$_home" PATH=/usr/local/bin:/usr/bin:/bin TERM=dumb \
        ANTHROPIC_BASE_URL="$MODEL_URL" ANTHROPIC_API_KEY=sk-ant-bare-test \
        NODE_EXTRA_CA_CERTS="${MODEL_CA:-$MODEL_DIR/ca.pem}" $CLAUDE_QUIET \
        "$(claude_bin)" -p "$PROMPT" --dangerously-skip-permissions </dev/null)
    _rc=$?
    rm -rf "$_home"
    return $_rc
}

# claude_tty [CORDON_RUN_OPTIONS...]: the interactive CLI under cordon, on a
# terminal (tmux on a server of its own), from its first-run screens to one
# tool call: it answers the onboarding as a human would (text style, the
# environment's API key, security notes, trust in the folder, the bypass
# mode's warning), types $PROMPT when the input box is up, and stops when a
# tool's output is shown, or the text CLAUDE_TTY_UNTIL (the script's final
# text: the tool's result has then reached the model), or at AGENT_TIMEOUT
# (status 124).  Every screen
# it saw goes to ${CLAUDE_TTY_LOG:-/dev/null}; it says what it answered.
# claude_pick SCREEN TEXT: the keys that move a menu's cursor (the line with
# "❯") to the choice whose text is TEXT (its line, numbered or not), and
# choose it.
claude_pick() {
    printf '%s\n' "$1" | awk -v want="$2" '
        { t = $0; sub(/^[ \t│]*(❯)?[ \t]*([0-9]+\.)?[ \t]*/, "", t); sub(/[ \t│]*$/, "", t) }
        index($0, "❯") { cur = NR }
        t == want && !at { at = NR }
        END {
            if (!cur || !at) { print "Enter"; exit }
            k = ""
            for (i = cur; i < at; i++) k = k " Down"
            for (i = cur; i > at; i--) k = k " Up"
            print k " Enter"
        }'
}

claude_tty() {
    _sock=cordon-claude-$$
    _log=${CLAUDE_TTY_LOG:-/dev/null}
    _runner=$(mktemp /var/tmp/claude-tty.XXXXXX) || return 1
    {
        echo "export TERM=xterm-256color"
        printf 'exec'
        for _a in "$cordon" run "$@" -- env $CLAUDE_QUIET "$(claude_bin)" \
            --dangerously-skip-permissions --settings "$CLAUDE_SETTINGS"; do
            printf " '%s'" "$(printf '%s' "$_a" | sed "s/'/'\\\\''/g")"
        done
        echo
    } >"$_runner"
    : >"$_log"
    # The tmux server outlives this call's descriptors: it gets none of them
    # (a lock a caller holds, such as the test suite's, would stay held).
    tmux -L "$_sock" new-session -d -x 120 -y 40 "sh $_runner; echo CLAUDE-TTY-EXITED \$?; sleep 30" \
        3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- ||
        { rm -f "$_runner"; return 1; }
    _end=$(($(date +%s) + ${AGENT_TIMEOUT:-180}))
    _typed= _rc=124 _said=
    while [ "$(date +%s)" -lt "$_end" ]; do
        sleep 0.5
        _s=$(tmux -L "$_sock" capture-pane -p 2>/dev/null) || break
        printf '=== %s\n%s\n' "$(date +%T)" "$_s" >>"$_log"
        _act=
        case $_s in
        *CLAUDE-TTY-EXITED*) _rc=$(printf '%s\n' "$_s" | sed -n 's/.*CLAUDE-TTY-EXITED \([0-9]*\).*/\1/p')
            echo "claude_tty: the CLI exited ($_rc) before a tool ran" >&2
            [ "$_rc" = 0 ] && _rc=1
            break ;;
        *"Choose the text style"*) _act=Enter ;;
        *"use this API key"*) _act=$(claude_pick "$_s" 'Yes') ;;
        *"Yes, I accept"*) _act=$(claude_pick "$_s" 'Yes, I accept') ;;
        *"Yes, I trust this folder"*) _act=$(claude_pick "$_s" 'Yes, I trust this folder') ;;
        *"Yes, proceed"*) _act=$(claude_pick "$_s" 'Yes, proceed') ;;
        *"Security notes"*|*"Press Enter to continue"*) _act=Enter ;;
        esac
        if [ -n "$_act" ]; then
            case $_said in *"<$_act:${_s%%
*}>"*) ;; *) echo "claude_tty: answered $_act" >&2 ;; esac
            _said="$_said<$_act:${_s%%
*}>"
            # shellcheck disable=SC2086
            tmux -L "$_sock" send-keys $_act
            sleep 1
            continue
        fi
        if [ -z "$_typed" ]; then
            case $_s in *"bypass permissions on"*)
                tmux -L "$_sock" send-keys -l "$PROMPT"
                sleep 0.5
                tmux -L "$_sock" send-keys Enter
                _typed=1
                echo "claude_tty: typed the prompt" >&2 ;;
            esac
        else
            case $_s in *"${CLAUDE_TTY_UNTIL:-⎿}"*) _rc=0; echo "claude_tty: a tool ran" >&2; break ;; esac
        fi
    done
    tmux -L "$_sock" send-keys C-c 2>/dev/null
    sleep 0.3
    tmux -L "$_sock" send-keys C-c 2>/dev/null
    sleep 2
    tmux -L "$_sock" kill-server 2>/dev/null
    rm -f "$_runner"
    return "$_rc"
}
