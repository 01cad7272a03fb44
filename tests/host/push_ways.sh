#!/bin/sh
# Every way to push, in real `cordon run` sessions (policy/lift.c's table):
# a local bare remote outside the workspace that the floor lets the agent
# write, so that only the lift stands between the workspace and it.  Held
# and denied (--approve deny): git push, its dashed form, send-pack, an
# alias, and a fetch run from the remote's side (--git-dir, -C, its cwd);
# a force push denied by rule.  Control: the same floor with no push rule
# lets each through (the refusals were the lift's).  The floor: where the
# policy grants no write (the test policy without the remote, and the
# shipped coding-agent profile), a copy into the remote's objects, update-ref
# and hash-object -w are refused; a remote under the host's /tmp is not in
# the session's world at all.  Needs git.  POSIX sh.
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib_run.sh"
[ "$(id -u)" -eq 0 ] || skip_all "needs root"
command -v git >/dev/null 2>&1 || skip_all "needs git"
agent_user || skip_all "cannot create an unprivileged user"
new_workspace
scratch=$(mktemp -d /var/cordon-push.XXXXXX)
hosttmp=$(mktemp -d /tmp/cordon-push.XXXXXX)
chmod 0755 "$scratch" "$hosttmp"
cleanup() {
    rm -rf "$WS" "$scratch" "$hosttmp"
    rm -f /var/cordon-audit.*.jsonl
}
trap cleanup EXIT

g() { git -c safe.directory="*" -c user.email=t@t -c user.name=t -c init.defaultBranch=main "$@"; }
g -C "$WS" init -q
printf 'x\n' >"$WS/file"
g -C "$WS" add file
g -C "$WS" commit -q -m init
chown -R "$AGENT" "$WS"
# A fresh bare remote, owned by the agent (the floor, not DAC, decides).
new_remote() {
    rm -rf "$1"
    g init -q --bare "$1"
    chown -R "$AGENT" "$1"
}
remote=$scratch/remote.git
new_remote "$remote"
new_remote "$hosttmp/remote.git"
has_main() { git --git-dir="$1" rev-parse -q --verify refs/heads/main >/dev/null 2>&1; }
objects() { find "$1/objects" -type f | wc -l; }

policy() {  # policy FILE [extra rules...]
    f=$1
    shift
    {
        cat <<EOF2
{
  "cordon_policy": 1,
  "name": "push-ways",
  "rules": [
    { "name": "workspace", "decision": "allow", "fs": { "paths": ["\${WORKSPACE}"], "rights": ["all"] } },
    { "name": "system", "decision": "allow",
      "fs": { "paths": ["/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc", "/proc", "/sys", "/opt"], "rights": ["read", "exec"] } },
    { "name": "devices", "decision": "allow", "fs": { "paths": ["/dev/null", "/dev/tty", "/dev/pts", "/dev/urandom"], "rights": ["read", "write"] } },
    { "name": "tmp", "decision": "allow", "fs": { "paths": ["/tmp"], "rights": ["all"] } }
EOF2
        for r in "$@"; do printf '    ,%s\n' "$r"; done
        printf '  ],\n  "approvals": { "timeout": "3s", "on_timeout": "deny" }\n}\n'
    } >"$f"
}
grant="{ \"name\": \"remote\", \"decision\": \"allow\", \"fs\": { \"paths\": [\"$remote\"], \"rights\": [\"all\"] } }"
push_rules='{ "name": "git-push", "decision": "escalate", "description": "code leaves the workspace", "tool": { "name": "git.push" } },
    { "name": "force-push", "decision": "deny", "tool": { "name": "git.push", "args": { "force": { "equals": true } } } }'
policy "$scratch/held.json" "$grant" "$push_rules"
policy "$scratch/open.json" "$grant"
policy "$scratch/nogrant.json"

# --- the recognisers, judged by a policy with a deny rule by host ----------
cat >"$scratch/fetch.json" <<EOF2
{
  "cordon_policy": 1,
  "name": "fetch-deny",
  "rules": [
    { "name": "system", "decision": "allow", "fs": { "paths": ["/usr"], "rights": ["read", "exec"] } },
    { "name": "no-evil", "decision": "deny", "tool": { "name": "http.fetch", "args": { "url": { "domain_in": ["evil.example"] } } } }
  ]
}
EOF2
cat >"$scratch/fetch.scenarios.json" <<'EOF2'
{ "scenarios": [
  { "name": "curl -m 5 URL: the URL, not 5", "op": "exec", "path": "/usr/bin/curl", "argv": ["curl", "-m", "5", "https://evil.example/x"], "expect": "deny", "rule": "no-evil" },
  { "name": "a cluster with a value", "op": "exec", "path": "/usr/bin/curl", "argv": ["curl", "-sSm5", "https://evil.example/x"], "expect": "deny" },
  { "name": "the second URL", "op": "exec", "path": "/usr/bin/curl", "argv": ["curl", "https://ok.example/", "https://evil.example/x"], "expect": "deny" },
  { "name": "a glob reaching it", "op": "exec", "path": "/usr/bin/curl", "argv": ["curl", "https://{ok,evil}.example/"], "expect": "deny" },
  { "name": "no scheme", "op": "exec", "path": "/usr/bin/curl", "argv": ["curl", "evil.example/x"], "expect": "deny" },
  { "name": "behind an unknown option", "op": "exec", "path": "/usr/bin/curl", "argv": ["curl", "--frob", "5", "https://evil.example/x"], "expect": "deny" },
  { "name": "wget", "op": "exec", "path": "/usr/bin/wget", "argv": ["wget", "-qO-", "--tries", "3", "https://evil.example/x"], "expect": "deny" },
  { "name": "another host", "op": "exec", "path": "/usr/bin/curl", "argv": ["curl", "-m", "5", "https://ok.example/x"], "expect": "allow" }
] }
EOF2
o=$("$cordon" policy test "$scratch/fetch.json" "$scratch/fetch.scenarios.json" 2>&1); rc=$?
ok "a deny rule on http.fetch by host holds whatever options stand before the URL" test $rc -eq 0
[ $rc -eq 0 ] || printf '%s\n' "$o" | grep -v ' ok ' | tail -n 12 >&2

# --- held and denied: each way to push -------------------------------------
# held WAY CMD: the session's command fails, the remote has no main, and the
# audit has the push denied.
held() {
    way=$1
    shift
    new_remote "$remote"
    in_session --policy "$scratch/held.json" -- /bin/sh -c "cd $WS && $*"
    ok "$way: refused (rc=$rc)" test $rc -ne 0
    ok "  the remote has no main" sh -c '! git --git-dir="$1" rev-parse -q --verify refs/heads/main' _ "$remote"
    ok "  audited: the push denied" audited deny git push
}
held "git push to a local remote" "git push $remote main"
ok "  as an escalation no one approved" audited deny git push "escalation with --approve deny"
held "git's dashed form" "/usr/lib/git-core/git-push $remote main"
held "send-pack" "git send-pack $remote refs/heads/main"
held "an alias on the command line" "git -c alias.up=push up $remote main"
held "a fetch from the remote's side (--git-dir)" "git --git-dir=$remote fetch $WS main:main"
ok "  judged as a push into that repository" audited deny git push "\"via\":\"fetch\""
held "a fetch from the remote's side (-C)" "git -C $remote fetch $WS main:main"
held "a fetch from the remote's side (its cwd)" "cd $remote && git fetch $WS main:main"
held "a bundle unbundled in the remote" \
    "git bundle create /tmp/b.bundle main 2>/dev/null && git -C $remote bundle unbundle /tmp/b.bundle && git -C $remote update-ref refs/heads/main \$(git rev-parse main)"
held "two refspecs" "git push $remote main main:other"
ok "  each judged, and the record names both" sh -c 'grep -F "\"decision\":\"deny\"" "$1" |
    grep -F "\"more\":[" | grep -F "\"branch\":\"main\"" | grep -qF "\"branch\":\"other\""' _ "$audit"
held "a force push" "git push -f $remote main"
ok "  denied by rule, not asked" audited deny git push "force-push"

# --- approved: a local push is one question, and then reaches the remote ------
# (git runs git-receive-pack and, in the remote, unpack-objects: neither is
# a second question, or a human's yes would end in a timeout's no.)
new_remote "$remote"
"$cordon" run -q --user "$AGENT" --workspace "$WS" --policy "$scratch/held.json" --approve socket \
    --audit "$scratch/approved.jsonl" -- /bin/sh -c "cd $WS && git push -q $remote main" \
    >"$scratch/approved.out" 2>&1 </dev/null &
bgpid=$!
id=$(pending_id 5)
ok "a push to a local remote is held for a human ($id)" test -n "$id"
"$cordon" approve "$id" >/dev/null 2>&1
wait $bgpid
rc=$?
ok "  approved once, it goes through (rc=$rc)" test $rc -eq 0
ok "  the remote has main" has_main "$remote"
ok "  one question was asked" test "$(grep -c '"approver":' "$scratch/approved.jsonl")" -eq 1

# --- control: the same floor without the push rules lets each through -------
open() {
    way=$1
    shift
    new_remote "$remote"
    in_session --policy "$scratch/open.json" -- /bin/sh -c "cd $WS && $*"
    ok "control, $way: goes through (rc=$rc)" test $rc -eq 0
    ok "  the remote has main" has_main "$remote"
}
open "git push" "git push -q $remote main"
open "a fetch from the remote's side" "git --git-dir=$remote fetch -q $WS main:main"

# --- the floor: no write into a repository the policy does not grant ---------
copy_attempts="cp -r .git/objects/. $remote/objects/ 2>/dev/null; \
git --git-dir=$remote hash-object -w file 2>/dev/null; \
git --git-dir=$remote update-ref refs/heads/main \$(git rev-parse main) 2>/dev/null; \
git --git-dir=$remote fetch -q $WS main:main 2>/dev/null; \
git push -q $remote main 2>/dev/null; exit 0"
for pol in "$scratch/nogrant.json" coding-agent; do
    new_remote "$remote"
    before=$(objects "$remote")
    in_session --policy "$pol" -- /bin/sh -c "cd $WS && $copy_attempts"
    ok "floor ($(basename "$pol" .json)): a copy into another repository's objects, hash-object -w, update-ref, fetch and push all refused" \
        sh -c '[ "$(find "$1/objects" -type f | wc -l)" -eq "$2" ] && ! git --git-dir="$1" rev-parse -q --verify refs/heads/main' \
        _ "$remote" "$before"
done
# A remote under the host's /tmp: the session's /tmp is its own.
in_session --policy "$scratch/open.json" -- /bin/sh -c "cd $WS && git push -q $hosttmp/remote.git main"
ok "a remote under the host's /tmp is not in the session's world (rc=$rc)" test $rc -ne 0
ok "  and has no main" sh -c '! git --git-dir="$1" rev-parse -q --verify refs/heads/main' _ "$hosttmp/remote.git"

done_testing
