# The git push fixture shared by tests/host/push_remote.sh (over HTTPS) and
# tests/host/push_ssh.sh (over ssh) (bash; after tests/lib.sh and
# tests/lib_run.sh, once $t, $WS and $AGENT are set): the agent's
# repository and its pre-push hook, the heads on both sides, a session
# whose approvals go through the socket (the first pending request:
# pending_id, tests/lib_run.sh).

as_agent() { runuser -u "$AGENT" -- "$@"; }

# commit MESSAGE: an empty commit in the agent's repository.
commit() {
    as_agent git -C "$WS/repo" -c user.name=agent -c user.email=agent@example.invalid \
        commit -q --allow-empty -m "$1"
}

# push_repo URL: the agent's repository, $WS/repo, one commit, remote origin URL.
push_repo() {
    as_agent git -C "$WS" init -q -b main repo
    commit one
    as_agent git -C "$WS/repo" remote add origin "$1"
}

# push_hook: the repository's pre-push hook, read from stdin, the agent's; made
# before the session (hooks are read-only in it).
push_hook() {
    cat >"$WS/repo/.git/hooks/pre-push"
    chmod 0755 "$WS/repo/.git/hooks/pre-push"
    chown "$AGENT" "$WS/repo/.git/hooks/pre-push"
}

agent_head() { as_agent git -C "$WS/repo" rev-parse HEAD; }
# The server's bare repository is $t/srv/repo.git.
server_head() { git --git-dir="$t/srv/repo.git" rev-parse -q --verify refs/heads/main 2>/dev/null; }

# push_session NAME SCRIPT [ENV...]: `cordon run` in the background (its pid
# in $sess) with the shipped profile, approvals by socket, --env each ENV,
# the audit log in $t/NAME.jsonl, the output in $t/NAME.out and .err.
push_session() {
    local name=$1 script=$2 e
    local envs=()
    shift 2
    for e; do envs+=(--env "$e"); done
    "$cordon" run -q --user "$AGENT" --workspace "$WS" --policy coding-agent \
        --approve socket "${envs[@]}" --audit "$t/$name.jsonl" \
        -- /bin/sh -c "$script" >"$t/$name.out" 2>"$t/$name.err" </dev/null &
    sess=$!
}
