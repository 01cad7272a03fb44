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
#   - --for: an expired intent covers nothing; --revoke.
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

done_testing
