#!/bin/sh
# "**" in a path is any depth, as .gitignore reads it (issue 34), in a real
# session: a deny of ${WORKSPACE}/**/.env refuses the workspace's .env,
# sub/.env and a/b/.env (the kernel floor was given each of them at start;
# here the fallback's Landlock split), and leaves env.txt and a/.envrc
# readable.  `cordon policy explain` judges the same by pattern, and the
# session says at start that a match made later is not in the floor's
# tables.  POSIX sh.
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib_run.sh"
session_test star
cleanup() { rm -rf "$WS" "$scratch"; rm -f /var/cordon-audit.*.jsonl; }
trap cleanup EXIT

mkdir -p "$WS/sub" "$WS/a/b"
for f in .env sub/.env a/b/.env env.txt a/.envrc; do echo "secret in $f" >"$WS/$f"; done
chown -R "$AGENT" "$WS"
policy=$scratch/policy.json
cat >"$policy" <<'JSON'
{ "cordon_policy": 1, "name": "starstar",
  "rules": [
    { "name": "workspace", "decision": "allow", "fs": { "paths": ["${WORKSPACE}"], "rights": ["all"] } },
    { "name": "system", "decision": "allow",
      "fs": { "paths": ["/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc", "/proc"], "rights": ["read", "exec"] } },
    { "name": "devices", "decision": "allow", "fs": { "paths": ["/dev/null"], "rights": ["read", "write"] } },
    { "name": "dotenv", "decision": "deny",
      "fs": { "paths": ["${WORKSPACE}/**/.env"], "rights": ["read", "write"] } } ] }
JSON

for f in .env sub/.env a/b/.env env.txt a/.envrc; do
    o=$("$cordon" policy explain --var WORKSPACE="$WS" "$policy" read "$WS/$f" 2>&1)
    case $f in
    *.env) ok "explain: read $f is denied by dotenv" sh -c 'printf %s "$1" | grep -q "denies read"' _ "$o" ;;
    *) ok "explain: read $f is allowed" sh -c 'printf %s "$1" | grep -q "^decision: *allow"' _ "$o" ;;
    esac
done

in_session --policy "$policy" -- /bin/sh -c '
    for f in .env sub/.env a/b/.env env.txt a/.envrc; do
        if cat "$0/$f" >/dev/null 2>&1; then echo "read $f"; else echo "refused $f"; fi
    done' "$WS"
ok "the session ran (rc=$rc)" test "$rc" -eq 0 || why
for f in .env sub/.env a/b/.env; do
    ok "in the session, $f is refused" sh -c 'printf "%s\n" "$1" | grep -qx "refused $2"' _ "$out" "$f"
done
for f in env.txt a/.envrc; do
    ok "in the session, $f is readable" sh -c 'printf "%s\n" "$1" | grep -qx "read $2"' _ "$out" "$f"
done
# What the floor cannot hold (a match made later) is said at start.
ok "the session says a later match is not in the kernel's tables" said "- patterns-later:"

# A "**" that cannot be expanded whole (here deeper than 64 levels) refuses
# the session, naming why: the floor never holds half of a deny.
deep=$WS/deep
i=0
while [ $i -lt 70 ]; do deep=$deep/d; i=$((i + 1)); done
mkdir -p "$deep"
chown -R "$AGENT" "$WS/deep"
in_session --policy "$policy" -- /bin/true
ok "a \"**\" past 64 levels: the session refuses to start (rc=$rc)" test "$rc" -eq 125
ok "  saying why" said 'a "**" pattern reaches more than 100,000 directories or 64 levels'
rm -rf "$WS/deep"

# "a**" would silently be "a*": an error at its position instead.
printf '{ "cordon_policy": 1,\n  "rules": [ { "name": "x", "decision": "deny", "fs": { "paths": ["/w/a**/.env"], "rights": ["read"] } } ] }\n' >"$scratch/bad.json"
o=$("$cordon" policy check "$scratch/bad.json" 2>&1); rc=$?
ok "policy check refuses \"a**\" (rc=$rc)" test "$rc" -eq 1
ok "  at FILE:LINE:COL: $o" sh -c 'printf %s "$1" | grep -q "bad.json:2:67: error: .*whole path component"' _ "$o"
done_testing
