#!/bin/bash
# cordon policy check | explain | test | compile, as a user runs them: every
# shipped profile passes its scenarios, errors read FILE:LINE:COL, exit
# statuses are right, and nothing crashes on hostile input.
set -u
. "$(dirname "$0")/../lib.sh"
src=${CORDON_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
cordon=$BUILD/cordon
t=$(mktemp -d /tmp/cordon-policy-cli.XXXXXX)
trap 'rm -rf "$t"' EXIT

for f in "$src"/policy/profiles/*.scenarios.json; do
    name=$(basename "$f" .scenarios.json)
    ok "profile $name passes its scenarios" "$cordon" policy test "$name" "$f"
    ok "profile $name checks clean (no warnings)" \
        bash -c "'$cordon' policy check '$name' 2>&1 >/dev/null | grep -q . && exit 1 || exit 0"
done
for p in $("$cordon" policy --help | sed -n 's/.*profiles: \(.*\))\./\1/p'); do
    ok "shipped profile $p has a scenarios file" test -f "$src/policy/profiles/$p.scenarios.json"
done

cat > "$t/bad.json" <<'JSON'
{
  "cordon_policy": 1,
  "rules": [
    { "name": "ws", "decison": "allow",
      "fs": { "paths": ["${WORKSPACE}"], "rights": ["read", "wirte"] } }
  ]
}
JSON
err=$("$cordon" policy check "$t/bad.json" 2>&1 >/dev/null)
rc=$?
ok "check of a bad policy exits 1 (rc=$rc)" test "$rc" -eq 1
ok "unknown key: FILE:LINE:COL with did-you-mean" \
    grep -qF "$t/bad.json:4:21: error: unknown key \"decison\" in a rule (did you mean \"decision\"?)" <<<"$err"
ok "unknown right: FILE:LINE:COL with did-you-mean" \
    grep -qF "$t/bad.json:5:61: error: unknown right \"wirte\" (did you mean \"write\"?)" <<<"$err"

# A policy named by a relative path (it used to fail silently: its own
# protection was resolved without the cwd).
printf '{"cordon_policy": 1, "rules": []}\n' > "$t/rel.json"
ok "a policy named by a relative path loads" \
    bash -c "cd '$t' && '$cordon' policy check rel.json | grep -q 'rel.json: ok'"

printf '{"cordon_policy": 1, "rules": [\n  {"name": "a", "decision": "allow",' > "$t/trunc.json"
err=$("$cordon" policy check "$t/trunc.json" 2>&1 >/dev/null)
ok "truncated JSON: position and exit 1" grep -qE "trunc.json:2:[0-9]+: error: invalid JSON" <<<"$err"

cat > "$t/shadow.json" <<'JSON'
{ "cordon_policy": 1, "rules": [
  { "name": "narrow", "decision": "allow", "fs": { "paths": ["/srv/app/logs"], "rights": ["read"] } },
  { "name": "wide", "decision": "deny", "fs": { "paths": ["/srv"], "rights": ["read"] } } ] }
JSON
out=$("$cordon" policy check "$t/shadow.json" 2>&1)
ok "a shadowed rule is a warning, not an error (exit 0)" "$cordon" policy check "$t/shadow.json"
ok "the warning names both rules and where" grep -qF "shadow.json:2:3: warning: rule 'narrow' (allow) is shadowed by rule 'wide' (deny, line 3)" <<<"$out"
"$cordon" policy check --strict "$t/shadow.json" >/dev/null 2>&1; rc=$?
ok "with --strict a warning exits 1 (rc=$rc)" test "$rc" -eq 1
ok "--strict passes a clean profile" "$cordon" policy check --strict coding-agent

# What a rule cannot do, said at the rule (issue 34).
cat > "$t/cannot.json" <<'JSON'
{ "cordon_policy": 1, "rules": [
  { "name": "keys", "decision": "allow", "fs": { "paths": ["/root/.ssh"], "rights": ["read"] } },
  { "name": "everything", "decision": "allow", "fs": { "paths": ["/"], "rights": ["all"] } } ] }
JSON
out=$("$cordon" policy check "$t/cannot.json" 2>&1); rc=$?
ok "rules that cannot do what they say: warnings, exit 0 (rc=$rc)" test "$rc" -eq 0
ok "an allow an invariant overrides, at its rule" \
    grep -qF "cannot.json:2:3: warning: rule 'keys' allows read on /root/.ssh, which the invariant 'credential-store' denies to every policy" <<<"$out"
ok "/ allowed for writing, at its rule" \
    grep -qF "cannot.json:3:3: warning: rule 'everything' allows write,create,delete,chmod on /" <<<"$out"

ok "check of a missing file says so, exit 1" \
    bash -c "'$cordon' policy check /nonexistent/p.json 2>&1 | grep -q 'no such file'; test \${PIPESTATUS[0]} -eq 1"

j=$("$cordon" policy explain --json --var HOME=/home/agent --var WORKSPACE=/w coding-agent exec /usr/bin/git push origin main)
ok "explain --json: git push escalates by rule git-push ($j)" \
    test "$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["decision"], d["rule"])' <<<"$j")" = "escalate git-push"
j=$("$cordon" policy explain --json --var HOME=/home/agent coding-agent read /home/agent/.aws/credentials)
ok "explain --json: the invariant is named ($j)" \
    test "$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["decision"], d["invariant"], d["rule"])' <<<"$j")" = "deny credential-store None"
out=$("$cordon" policy explain coding-agent connect api.anthropic.com:443)
ok "explain text shows decision, rule and via" \
    bash -c 'grep -q "^decision:  allow" <<<"$1" && grep -q "^via:       credential-proxy" <<<"$1"' _ "$out"
ok "explain with a bad op is a usage error (2)" \
    bash -c "'$cordon' policy explain coding-agent frobnicate /x 2>/dev/null; test \$? -eq 2"
ok "explain with bad tool JSON is a usage error (2)" \
    bash -c "'$cordon' policy explain coding-agent tool a.b '{nope' 2>/dev/null; test \$? -eq 2"

cat > "$t/wrong.scenarios.json" <<'JSON'
{ "vars": { "WORKSPACE": "/w", "HOME": "/home/agent" },
  "scenarios": [ { "op": "read", "path": "/home/agent/.ssh/id_rsa", "expect": "allow" } ] }
JSON
out=$("$cordon" policy test coding-agent "$t/wrong.scenarios.json")
rc=$?
ok "policy test exits 1 on a mismatch (rc=$rc)" test "$rc" -eq 1
ok "the mismatch is shown with the reason" bash -c 'grep -q MISMATCH <<<"$1" && grep -q "credential store" <<<"$1"' _ "$out"

ok "compile lists the workspace root and protected credential stores" \
    bash -c "'$cordon' policy compile --var WORKSPACE=/tmp --var HOME=/root coding-agent | grep -q '\"protected_object\":true'"

# Hostile inputs never crash (exit 1 with a message, never a signal).
head -c 4096 /dev/urandom > "$t/random.json"
printf '%0.s[' $(seq 1 5000) > "$t/deep.json"
printf '{"cordon_policy":1,"rules":[{"name":"a","decision":"allow","fs":{"paths":["/%s"],"rights":["read"]}}]}' \
    "$(head -c 9000 /dev/zero | tr '\0' 'a')" > "$t/long.json"
for f in random deep long; do
    "$cordon" policy check "$t/$f.json" >/dev/null 2>&1
    rc=$?
    ok "hostile input $f: clean error exit ($rc)" test "$rc" -eq 1
done
done_testing
