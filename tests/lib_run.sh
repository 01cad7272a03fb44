# Helpers for tests that start real `cordon run` sessions (POSIX sh: also
# sourced in the VM guest; after tests/lib.sh).
#
# Needs root.  The agent runs as an unprivileged user: $AGENT (uid 1000 in
# the VM; created here as a system user on a host that has none).

if [ -x "$BUILD/cordon" ]; then cordon=$BUILD/cordon; else cordon=${CORDON:-cordon}; fi

# agent_user: pick or create the unprivileged user the agents run as.
agent_user() {
    if id agent >/dev/null 2>&1; then
        AGENT=agent
    else
        id cordontest >/dev/null 2>&1 ||
            useradd --system --create-home --home-dir /home/cordontest \
                --shell /bin/sh cordontest >/dev/null 2>&1 || return 1
        AGENT=cordontest
    fi
    AGENT_UID=$(id -u "$AGENT")
    AGENT_HOME=$(awk -F: -v u="$AGENT" '$1 == u { print $6 }' /etc/passwd)
}

# session_test NAME: the set-up of a test that runs sessions as the agent:
# root, the agent user, a fresh workspace ($WS, $attack) and a scratch
# directory of the test's own ($scratch, /var/cordon-NAME.XXXXXX, mode
# 0700: a test that shares it with the agent says so with chmod).
session_test() {
    [ "$(id -u)" -eq 0 ] || skip_all "needs root"
    agent_user || skip_all "cannot create an unprivileged user"
    new_workspace
    scratch=$(mktemp -d "/var/cordon-$1.XXXXXX")
}

# new_workspace: a fresh workspace owned by the agent, outside /tmp (so
# that "outside the workspace" is not the shared /tmp the profile allows).
new_workspace() {
    WS=$(mktemp -d /var/tmp/cordon-ws.XXXXXX)
    chown "$AGENT" "$WS"
    chmod 0755 "$WS"
    # The rogue agent runs from the workspace, as a build product would.
    cp "$BUILD/tests/agents/attack" "$WS/attack"
    attack=$WS/attack
}

# in_session [cordon run options] -- CMD...: run CMD as the agent; stdout
# of the agent in $out, cordon's stderr in $err, status in $rc, audit in
# $audit.  Approvals are denied unless the options say otherwise.
in_session() {
    # The defaults only where the caller gives none: cordon run refuses an
    # option given twice with two values (the last one no longer wins).
    _user="--user $AGENT" _approve="--approve deny"
    for _a in "$@"; do
        case $_a in
            --user) _user= ;;
            --approve) _approve= ;;
            --) break ;;
        esac
    done
    audit=$(mktemp -u /var/cordon-audit.XXXXXX).jsonl
    # shellcheck disable=SC2086
    out=$("$cordon" run $_user --workspace "$WS" --audit "$audit" \
        $_approve "$@" 2>"$WS.err" </dev/null)
    rc=$?
    err=$(cat "$WS.err")
    rm -f "$WS.err"
}

# contained: the attack said "contained".
contained() { printf '%s\n' "$out" | grep -q '^contained' || { why; return 1; }; }
breach() { printf '%s\n' "$out" | grep -q '^BREACH' || { why; return 1; }; }
# why: on a failed check, what the session said (TAP diagnostics on stderr).
why() { printf '%s\n' "rc=$rc" "$err" | tail -n 5 >&2; }
# said TEXT: cordon's stderr says it.
said() { printf '%s\n' "$err" | grep -qF -- "$1"; }

# audited DECISION SERVER TOOL [TEXT]: the audit log has such a decision.
# Keys of test sessions stay out of /var/lib/cordon.
CORDON_AUDIT_KEY_DIR=${CORDON_AUDIT_KEY_DIR:-/var/cordon-test-keys}
export CORDON_AUDIT_KEY_DIR

audited() {
    grep -F "\"decision\":\"$1\"" "$audit" | grep -F "\"server\":\"$2\"" |
        grep -F "\"tool\":\"$3\"" | grep -qF -- "${4:-}" ||
        { grep -F "\"decision\":\"$1\"" "$audit" | tail -n 3 | cut -c1-300 >&2; why; return 1; }
}

# procs PATTERN: pids whose command line contains PATTERN (no pgrep in
# busybox; this shell and its children are not counted).
procs() {
    for _p in /proc/[0-9]*; do
        _pid=${_p#/proc/}
        [ "$_pid" = $$ ] && continue
        _c=$(tr '\0' ' ' 2>/dev/null <"$_p/cmdline") || continue
        case $_c in *"$1"*) echo "$_pid" ;; esac
    done
}

# pending_id [SECONDS]: the first request pending for a human, as
# SESSION:ID, waiting up to SECONDS (10) for one; non-zero if none came.
pending_id() {
    for _i in $(seq $(( ${1:-10} * 20 ))); do
        _p=$("$cordon" pending 2>/dev/null | awk -F'  ' '/^s[0-9a-f]+:[0-9]+/ { print $1; exit }')
        [ -n "$_p" ] && { echo "$_p"; return 0; }
        sleep 0.05
    done
    return 1
}

# supervisor PATTERN: the one process matching PATTERN whose parent does not
# (the supervisor: its watchdog and the session's cordon-init, forked from
# it, carry the same command line).
supervisor() {
    _all=$(procs "$1")
    for _p in $_all; do
        _pp=$(sed -n 's/^PPid:[[:space:]]*//p' "/proc/$_p/status" 2>/dev/null)
        printf '%s\n' "$_all" | grep -qx "$_pp" || echo "$_p"
    done | head -n 1
}

# went_down LOG: an audit log that went down on a full disk verifies,
# sealed, and its audit-down record names the cause (audit.c, AUDIT_RESERVE).
went_down() {
    "$cordon" audit verify --key-dir "$CORDON_AUDIT_KEY_DIR" "$1" | grep -q sealed &&
        grep -q '"error":"No space left on device","event":"audit-down"' "$1"
}
