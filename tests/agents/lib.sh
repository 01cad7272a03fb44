# Shared by tests/host/agents.sh and tools/bench/agents.sh (bash; after
# tests/lib.sh, tests/lib_run.sh and tests/lib_net.sh): the agent CLIs where
# the profile lets the agent execute, the scripted model server, a
# workspace, and what the model server recorded.  Needs $here, $t (a
# directory with the test CA: net_test_ca), $py and $AGENT.

# The CLIs where the profile lets the agent execute (/opt): hard links of
# the pinned install, or the guest's copy in the VM.
agents_install() {
    if [ -n "${CORDON_AGENTS_DIR:-}" ]; then
        AGENTS=$CORDON_AGENTS_DIR
    else
        "$here/tools/mcp-deps" agents || { echo "Bail out! the agent CLIs (tools/mcp-deps agents) did not install"; exit 1; }
        inst=$(mktemp -d /opt/cordon-agents.XXXXXX)
        cp -al "$here/tests/agents/node_modules" "$inst/node_modules" 2>/dev/null ||
            cp -a "$here/tests/agents/node_modules" "$inst/node_modules"
        chmod 0755 "$inst"
        AGENTS=$inst/node_modules
    fi
    export AGENTS
}

# model_server DIR SCRIPT: a model server in DIR (the test CA's server
# key), its URL in $MODEL_URL, DIR in $MODEL_DIR, the CA that verifies it
# in $MODEL_CA.
model_server() {
    mkdir -p "$1"
    cp "$t/server.pem" "$t/server.key" "$t/ca.pem" "$1/"
    "$py" "$here/tests/agents/model_server.py" "$1" "$2" 2>"$1/server.err" & pids="$pids $!"
    for _ in $(seq 100); do [ -e "$1/port" ] && break; sleep 0.05; done
    MODEL_URL=https://localhost:$(cat "$1/port")
    MODEL_DIR=$1 MODEL_CA=$1/ca.pem
    export MODEL_URL MODEL_DIR MODEL_CA
}

# workspace: a C project in a git repository whose remote is a bare
# repository in it (a push lands there only if it happens).
workspace() {
    WS=$(mktemp -d /var/tmp/cordon-agents-ws.XXXXXX)
    # In the workspace: a local path outside it is neither in the session's
    # view nor writable there, whatever a human approves.
    REMOTE=$WS/remote.git
    printf 'int puts(const char *);\n/* cordon-read-marker */\nint main(void) { puts("hello"); return 0; }\n' >"$WS/hello.c"
    git init -q -b main "$WS" && git -C "$WS" add hello.c &&
        git -C "$WS" -c user.name=t -c user.email=t@t commit -qm init &&
        git init -q --bare -b main "$REMOTE" && git -C "$WS" remote add origin "$REMOTE" &&
        git -C "$WS" push -q origin main 2>/dev/null &&
        git -C "$WS" config user.name agent && git -C "$WS" config user.email agent@localhost
    chown -R "$AGENT" "$WS" "$REMOTE"
    chmod 0755 "$WS"
    export WS
}

# result DIR N: what step N's tool returned (empty if it never ran).
result() {
    "$py" -c '
import json, sys
for l in open(sys.argv[1] + "/results.jsonl"):
    r = json.loads(l)
    if r["step"] == int(sys.argv[2]):
        print(r["output"] if isinstance(r["output"], str) else json.dumps(r["output"]))
' "$1" "$2" 2>/dev/null
}

# agent_bare NAME=VALUE... -- CMD...: CMD as $AGENT, without cordon, in an
# environment of PATH, HOME, USER, TERM and the NAME=VALUE given, within
# $AGENT_TIMEOUT (300 s): the drivers' bare runs.
agent_bare() {
    timeout -k 10 "${AGENT_TIMEOUT:-300}" setpriv --reuid="$AGENT" --regid="$(id -g "$AGENT")" \
        --init-groups -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$AGENT_HOME" \
        USER="$AGENT" TERM=dumb "$@"
}

# agent_tmpdir: a directory of the agent's own, for a bare run's state.
agent_tmpdir() {
    setpriv --reuid="$AGENT" --regid="$(id -g "$AGENT")" --init-groups -- mktemp -d
}
