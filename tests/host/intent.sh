#!/bin/bash
# Intents (userspace/supervisor/intent.h): the human states what the agent
# may do while a session runs, `cordon intent SESSION "SENTENCE"`, and a
# held request it covers is approved with the intent as its approver.
# Real sessions with the shipped profile (git push escalates, a force push
# is denied), approvals through the socket, a bare repository in the
# workspace as the remote "origin" (a local path: nothing to grant).
#   - a held `git push origin feature-x` is approved by the intent; the
#     audit record names it; a later push of the same branch goes unasked;
#   - a push of main in the same session is still held (then denied);
#   - a force push of feature-x stays denied (the policy's deny wins);
#   - `cordon pending` lists the intent; the agent cannot state one;
#   - --for: an expired intent covers nothing; --revoke;
#   - at the tty prompt (tests/terminal.py plays the terminal): `i` and a
#     sentence cordon cannot read (the error, asked again), one that does
#     not cover the push (stated, asked again), one that does (approved);
#   - the session's variables: "~/..." and "my home" are the agent's home,
#     not the supervisor's (root's).
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/tests/lib.sh"
. "$here/tests/lib_run.sh"
. "$here/tests/lib_push.sh"
[ "$(id -u)" -eq 0 ] || skip_all "needs root"
[ -x /usr/bin/git ] || skip_all "needs git (/usr/bin/git)"
agent_user || skip_all "cannot create an unprivileged user"
new_workspace

t=$(mktemp -d /var/cordon-intent.XXXXXX)
chmod 0755 "$t"
trap '[ -n "${sess:-}" ] && kill $sess 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$t" "$WS"' EXIT

as_agent git init -q --bare "$WS/remote.git"
push_repo "$WS/remote.git"
as_agent git -C "$WS/repo" branch feature-x
cp "$cordon" "$WS/cordon-copy"
chmod 0755 "$WS/cordon-copy"
remote_head() { git --git-dir="$WS/remote.git" rev-parse -q --verify "refs/heads/$1" 2>/dev/null; }
G="/usr/bin/git -c user.name=agent -c user.email=agent@example.invalid"

# --- one session: the intent approves exactly its push -------------------------
push_session one "cd $WS/repo
$G push origin feature-x; echo rc1=\$?
i=0; while [ ! -s $WS/sname ] && [ \$i -lt 100 ]; do sleep 0.1; i=\$((i + 1)); done
$WS/cordon-copy intent \$(cat $WS/sname) 'push the branch main to origin' >$WS/agent.out 2>&1
echo agent_rc=\$?
$G push origin main; echo rc2=\$?
$G push --force origin feature-x; echo rc3=\$?
$G commit -q --allow-empty -m two && $G push origin HEAD:feature-x; echo rc4=\$?
$G push origin feature-x; echo rc5=\$?"
id=$(pending_id)
S=${id%%:*}
ok "a git push of feature-x is held ($id)" test -n "$id"
said=$("$cordon" intent "$S" "push the branch feature-x to origin" 2>&1)
ok "cordon intent states it and approves the held push ($said)" \
    grep -q "intent 1 stated (1 held call approved" <<<"$said"
echo "$S" >"$WS/sname"
id2=$(pending_id)
listing=$("$cordon" pending 2>&1)
ok "a push of main in the same session is still held ($id2)" test -n "$id2" -a "$id2" != "$id"
ok "  cordon pending lists the live intent (id, sentence, approver, expiry)" \
    grep -q "$S intent 1: push the branch feature-x to origin" <<<"$listing"
ok "  and who stated it" grep -q "stated by socket: uid 0" <<<"$listing"
ok "  --list shows it too" bash -c '"$1" intent "$2" --list | grep -q "intent 1:"' _ "$cordon" "$S"
ok "  --json carries it" bash -c '"$1" intent "$2" --list --json | grep -q "\"sentence\""' _ "$cordon" "$S"
"$cordon" deny "$id2" >/dev/null
wait $sess; sess=
ok "the intent's push went through" grep -q '^rc1=0' "$t/one.out"
ok "  the remote has feature-x" test -n "$(remote_head feature-x)"
ok "  the audit record names the intent as approver" \
    bash -c 'grep "\"decision\":\"allow\"" "$1" | grep -q "intent 1: push the branch feature-x to origin"' _ "$t/one.jsonl"
ok "the agent cannot state an intent (refused: $(tail -n 1 "$WS/agent.out" 2>/dev/null))" \
    bash -c '! grep -q "^agent_rc=0" "$1" && ! grep -q "intent 2" "$2"' _ "$t/one.out" "$t/one.jsonl"
ok "the push of main: held, then denied" grep -q '^rc2=[1-9]' "$t/one.out"
ok "  the remote has no main" test -z "$(remote_head main)"
ok "a force push of feature-x: denied by the policy, the intent notwithstanding" \
    grep -q '^rc3=[1-9]' "$t/one.out"
ok "  by the force-push rule" grep -q '"rule":"force-push"' "$t/one.jsonl"
ok "a later push of feature-x: approved by the intent, unasked" grep -q '^rc4=0' "$t/one.out"
ok "  the remote has the new commit" \
    test "$(remote_head feature-x)" = "$(as_agent git -C "$WS/repo" rev-parse HEAD)"

# --- --for: expiry; --revoke ----------------------------------------------------
rm -f "$WS/sname"
commit three
push_session two "cd $WS/repo
$G push origin main; echo rc1=\$?
$G push origin HEAD:feature-x; echo rc2=\$?
i=0; while [ ! -e $WS/done2 ] && [ \$i -lt 100 ]; do sleep 0.1; i=\$((i + 1)); done"
id=$(pending_id)
S=${id%%:*}
said=$("$cordon" intent "$S" "push the branch feature-x to origin" --for 1s 2>&1)
ok "an intent --for 1s, stated while main's push is held: it approves nothing ($said)" \
    grep -q "0 held calls approved" <<<"$said"
sleep 1.5
ok "  after its lifetime it is not listed" \
    bash -c '"$1" intent "$2" --list | grep -q "no live intents"' _ "$cordon" "$S"
"$cordon" deny "$id" >/dev/null
id2=$(pending_id)
ok "  and the push of feature-x is held, not approved by it ($id2)" test -n "$id2" -a "$id2" != "$id"
"$cordon" intent "$S" "push the branch other to origin" >/dev/null
ok "--revoke: a live intent is revoked" "$cordon" intent "$S" --revoke 2
ok "  it is no longer listed" bash -c '"$1" intent "$2" --list | grep -q "no live intents"' _ "$cordon" "$S"
ok "  a second revoke is refused" bash -c '! "$1" intent "$2" --revoke 2 2>/dev/null' _ "$cordon" "$S"
ok "a sentence cordon cannot read is refused, naming why" \
    bash -c '! "$1" intent "$2" "frobnicate the flux" 2>&1 | grep -q "stated"' _ "$cordon" "$S"
"$cordon" approve --session "$id2" >/dev/null
ok "approve --session becomes an intent of that request, listed" \
    bash -c '"$1" pending | grep -q "intent 3: this request: "' _ "$cordon"
ok "  and revocable" "$cordon" intent "$S" --revoke 3
touch "$WS/done2"
wait $sess; sess=
ok "the session's pushes: main denied, feature-x approved" \
    bash -c 'grep -q "^rc1=[1-9]" "$1" && grep -q "^rc2=0" "$1"' _ "$t/two.out"

# --- at the tty prompt: `i` and a sentence ------------------------------------
if command -v python3 >/dev/null 2>&1; then
    as_agent git -C "$WS/repo" branch feature-y
    python3 "$here/tests/terminal.py" \
        $'ifrobnicate the flux\r|ipush the branch main to origin\r|ipush the branch feature-y to origin\r' \
        1.2 "$t/tty.log" -- "$cordon" run -q --user "$AGENT" --workspace "$WS" --policy coding-agent \
        --audit "$t/tty.jsonl" -- /bin/sh -c "cd $WS/repo && $G push origin feature-y; echo rc=\$?" \
        >/dev/null 2>&1
    ok "tty: a sentence cordon cannot read: the compiler's error, the question asked again" \
        grep -q "cannot read the intent" "$t/tty.log"
    ok "tty: a sentence that does not cover the push: stated, the question asked again" \
        grep -q "intent 1 stated (0 held calls approved by it); the intent does not cover this request" \
        "$t/tty.log"
    ok "  asked three times in all" test "$(grep -o "Approve once" "$t/tty.log" | wc -l)" -eq 3
    ok "tty: the sentence that covers it approves the push" grep -q "approved by intent 2" "$t/tty.log"
    ok "  the push went through (rc=0)" grep -q "^rc=0" "$t/tty.log"
    ok "  the remote has feature-y" test -n "$(remote_head feature-y)"
    ok "  the audit record names the intent, stated at the terminal" \
        bash -c 'grep "\"decision\":\"allow\"" "$1" |
                 grep -q "intent 2: push the branch feature-y to origin (stated by tty: uid "' _ "$t/tty.jsonl"
else
    skip "tty: no python3 to play the terminal (tests/terminal.py)"
fi

# --- the session's variables: the agent's home, not the supervisor's ----------
# Reads in the agent's home escalated; intents that name the home by "~" and
# by "my home" cover them.  Compiled with the supervisor's own HOME (/root,
# as before), neither would.
cat >"$t/home.json" <<EOF
{
  "cordon_policy": 1,
  "name": "intent-home",
  "rules": [
    { "name": "workspace", "decision": "allow", "fs": { "paths": ["\${WORKSPACE}"], "rights": ["all"] } },
    { "name": "system", "decision": "allow",
      "fs": { "paths": ["/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc", "/proc", "/sys"], "rights": ["read", "exec"] } },
    { "name": "devices", "decision": "allow", "fs": { "paths": ["/dev/null", "/dev/pts", "/dev/urandom"], "rights": ["read", "write"] } },
    { "name": "tmp", "decision": "allow", "fs": { "paths": ["/tmp"], "rights": ["all"] } },
    { "name": "ask-home", "decision": "escalate", "description": "the agent's notes",
      "fs": { "paths": ["\${HOME}/cordon-intent"], "rights": ["read"] } }
  ],
  "approvals": { "timeout": "60s", "on_timeout": "deny" }
}
EOF
mkdir -p "$AGENT_HOME/cordon-intent/sub"
echo NOTES-A >"$AGENT_HOME/cordon-intent/a.txt"
echo NOTES-B >"$AGENT_HOME/cordon-intent/sub/b.txt"
chown -R "$AGENT" "$AGENT_HOME/cordon-intent"
trap '[ -n "${sess:-}" ] && kill $sess 2>/dev/null; rm -rf "$AGENT_HOME/cordon-intent"; [ -n "${KEEP:-}" ] || rm -rf "$t" "$WS"' EXIT
"$cordon" run -q --user "$AGENT" --workspace "$WS" --policy "$t/home.json" --approve socket \
    --audit "$t/home.jsonl" -- /bin/sh -c "cat $AGENT_HOME/cordon-intent/a.txt; echo rc1=\$?
cat $AGENT_HOME/cordon-intent/sub/b.txt; echo rc2=\$?" >"$t/home.out" 2>"$t/home.err" </dev/null &
sess=$!
id=$(pending_id)
S=${id%%:*}
ok "a read of a file in the agent's home is held ($id)" test -n "$id"
said=$("$cordon" intent "$S" "let the agent read ~/cordon-intent/a.txt" 2>&1)
ok "an intent naming it by ~ approves it: ~ is the agent's home ($said)" \
    grep -q "intent 1 stated (1 held call approved" <<<"$said"
id2=$(pending_id)
ok "the next read, in a subdirectory of the home, is held ($id2)" test -n "$id2" -a "$id2" != "$id"
said=$("$cordon" intent "$S" "let the agent read my home" 2>&1)
ok "an intent naming \"my home\" approves it ($said)" grep -q "intent 2 stated (1 held call approved" <<<"$said"
wait $sess; sess=
ok "  the agent read both" bash -c 'grep -q "^NOTES-A" "$1" && grep -q "^NOTES-B" "$1" &&
                                    grep -q "^rc2=0" "$1"' _ "$t/home.out"
ok "  the audit names the intents as approvers" \
    bash -c 'grep "\"decision\":\"allow\"" "$1" | grep -q "intent 2: let the agent read my home"' _ "$t/home.jsonl"

done_testing
