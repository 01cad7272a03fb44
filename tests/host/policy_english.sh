#!/bin/sh
# A constitution written as a person would (policy/english/, issue #34)
# runs a real `cordon run` session, and the session decides what its
# sentences say: reads and writes in and out of the workspace and its
# excepted folder, a connect allowed and one forbidden, and a git push held
# for a human, listed by the sentence's rule and answered.  POSIX sh.
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib_run.sh"
session_test en
mkdir -p "$scratch/allowed" "$scratch/denied" "$scratch/outside" "$scratch/ro" "$WS/private" "$WS/src"
echo outside >"$scratch/outside/f"
echo ro >"$scratch/ro/f"
echo private >"$WS/private/f"
echo source >"$WS/main.c"
chmod -R a+rX "$scratch"
# World-writable, so that only the policy stands between the agent and a write.
chmod 1777 "$scratch/ro" "$scratch/outside"
chown -R "$AGENT" "$WS"
cleanup() {
    kill $bg 2>/dev/null
    rm -rf "$WS" "$scratch"
    rm -f /var/cordon-audit.*.jsonl
}
bg=
trap cleanup EXIT
"$BUILD/tests/agents/attack" serve "$scratch/allowed" & bg="$bg $!"
"$BUILD/tests/agents/attack" serve "$scratch/denied" & bg="$bg $!"
i=0
while { [ ! -e "$scratch/allowed/ports" ] || [ ! -e "$scratch/denied/ports" ]; } && [ $i -lt 100 ]; do
    sleep 0.05; i=$((i + 1))
done
read -r allowed _ _ _ <"$scratch/allowed/ports"
read -r denied _ _ _ <"$scratch/denied/ports"

policy=$scratch/project.en
cat >"$policy" <<EOF
# What the agent may do in my project.
This policy is called english-test.

The agent may read, change and run anything in the workspace
  except ./private.
The agent may read and run the system directories.
The agent may read /etc, /proc and /sys.
The agent may read $scratch/ro.
The agent may read and write /dev/null, /dev/tty, /dev/pts and /dev/urandom.
The agent may do anything with anything in /tmp.

The agent may connect to 127.0.0.1 on port $allowed directly.
Never reach 127.0.0.1 on port $denied.

Ask me before any git push.
Wait 3 seconds for my answer, then deny.
EOF
printf '#!/bin/sh\nexit 0\n' >"$WS/git"     # a "git" whose push is harmless
chmod 0755 "$WS/git"
chown "$AGENT" "$WS/git"

o=$("$cordon" policy check "$policy" 2>&1)
ok "the constitution checks ($o)" sh -c 'printf %s "$1" | grep -q ": ok (10 rules"' _ "$o"
o=$("$cordon" policy json "$policy")
ok "policy json: each rule names its sentence" sh -c \
    'printf %s "$1" | grep -q "\"source\": \"$2:4\"" && printf %s "$1" | grep -q "\"description\": \"Ask me before any git push.\""' _ "$o" "$policy"
o=$("$cordon" policy explain --var WORKSPACE="$WS" "$policy" read "$WS/private/f")
ok "explain names the sentence's line for the exception" sh -c 'printf %s "$1" | grep -qF "rule:      project.en:4b ($2:4:1)"' _ "$o" "$policy"

# (A new file goes in src/: in the fallback posture the workspace's own
# directory is split around the excepted folder, and what is created at
# its top later gets only its direct rights; docs/floor.md.)
in_session --policy "$policy" -- /bin/sh -c "cat $WS/main.c && echo new >$WS/src/new.c && cat $WS/src/new.c"
ok "reads and writes in the workspace ($(echo $out))" test "$out" = "source
new"
in_session --policy "$policy" -- /bin/sh -c "cat $WS/private/f 2>/dev/null || echo refused"
ok "the excepted folder is not readable ($out)" test "$out" = refused
in_session --policy "$policy" -- /bin/sh -c "echo x >$WS/private/g 2>/dev/null || echo refused"
ok "  nor writable ($out)" test "$out" = refused
in_session --policy "$policy" -- /bin/sh -c "cat $scratch/outside/f 2>/dev/null || echo refused"
ok "a file no sentence names is not readable ($out)" test "$out" = refused
in_session --policy "$policy" -- /bin/sh -c "cat $scratch/ro/f; echo x >$scratch/ro/g 2>/dev/null || echo refused"
ok "a folder its sentence lets the agent read is read-only, though its mode is 1777 ($(echo $out))" test "$out" = "ro
refused"
ok "  (and nothing was written)" test ! -e "$scratch/ro/g"
in_session --policy "$policy" -- /bin/sh -c "echo x >$scratch/outside/g 2>/dev/null || echo refused"
ok "nor can it write where no sentence says ($out)" test "$out" = refused

in_session --policy "$policy" -- "$attack" connect 127.0.0.1 "$allowed"
ok "the connect its sentence allows succeeds ($out)" sh -c 'printf %s "$1" | grep -q BREACH' _ "$out"
in_session --policy "$policy" -- "$attack" connect 127.0.0.1 "$denied"
ok "the connect its sentence forbids fails ($out)" contained
ok "  the forbidden listener never saw it" test ! -e "$scratch/denied/tcp4.hit"
ok "  audited deny by the sentence's rule" sh -c 'grep "\"decision\":\"deny\"" "$1" | grep -qF "\"rule\":\"project.en:13\""' _ "$audit"

# The push is held for a human, under the sentence's rule.
"$cordon" run -q --user "$AGENT" --workspace "$WS" --policy "$policy" --approve socket \
    --audit "$scratch/push.jsonl" -- /bin/sh -c "cd $WS && ./git push origin main && echo pushed" \
    >"$scratch/push.out" 2>"$scratch/push.err" </dev/null &
sess=$!
id=
i=0
while [ $i -lt 100 ] && [ -z "$id" ]; do
    id=$("$cordon" pending 2>/dev/null | awk -F'  ' '/^s[0-9a-f]+:[0-9]+/ { print $1; exit }')
    [ -n "$id" ] || sleep 0.05
    i=$((i + 1))
done
ok "git push is held ($id)" test -n "$id"
ok "  listed under the sentence's rule" sh -c "'$cordon' pending | grep -q 'rule project.en:15'"
ok "  cordon approve answers it" "$cordon" approve "$id"
wait $sess
ok "  and the push ran ($(cat "$scratch/push.out"))" grep -q pushed "$scratch/push.out"

# A sentence the compiler cannot read stops the session before it starts.
printf 'The agent may rad the workspace.\n' >"$scratch/bad.en"
in_session --policy "$scratch/bad.en" -- /bin/true
ok "an unreadable sentence: refused with 125 (rc=$rc)" test $rc -eq 125
ok "  naming FILE:LINE:COL and the nearest sentence" sh -c \
    'printf %s "$1" | grep -q "$2:1:15: error: .*did you mean"' _ "$err" "$scratch/bad.en"

# The shipped profiles' English sources pass every scenario of their JSON.
src=${CORDON_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
for p in coding-agent strict mcp-server; do
    o=$("$cordon" policy test "$src/policy/profiles/$p.en" "$src/policy/profiles/$p.scenarios.json" 2>&1)
    ok "$p.en passes $p.scenarios.json ($(printf '%s\n' "$o" | tail -n 1 | sed 's/.*: //'))" \
        sh -c 'printf %s "$1" | tail -n 1 | grep -q " 0 failed"' _ "$o"
    # From the workspace: the workspace is the current directory by default,
    # and from / (the VM's) no path lies outside it for a near miss.
    o=$(cd "$WS" && "$cordon" policy test "$src/policy/profiles/$p.en" 2>&1)
    ok "  and the scenarios its sentences yield ($(printf '%s\n' "$o" | tail -n 1 | sed 's/.*: //'))" \
        sh -c 'printf %s "$1" | tail -n 1 | grep -q " 0 failed"' _ "$o"
done
printf 'The agent may read /srv/data.\nNever read anything in /srv.\n' >"$scratch/contra.en"
o=$("$cordon" policy test "$scratch/contra.en" 2>&1); rc=$?
ok "two sentences that contradict each other fail their scenario (rc=$rc)" test $rc -eq 1
ok "  naming the sentence" sh -c 'printf %s "$1" | grep -qF "$2:1: The agent may read /srv/data."' _ "$o" "$scratch/contra.en"
done_testing
