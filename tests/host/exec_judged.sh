#!/bin/sh
# Every exec of a session is judged by the supervisor on the binary it
# names and the argv it carries, and recorded, however it is named: the
# shipped coding-agent profile, one session, as the agent.  A symlink in the
# workspace to an allowed binary runs, by absolute and by relative path,
# and its record names the binary (the canonical path, resolved by the
# supervisor with one open); a symlink to a binary no rule lets it run is
# refused and recorded with that binary's path; an argv of many and long
# strings (read in batches) reaches the program whole and is recorded
# whole; `git push` (a decision on argv) is refused under --approve deny
# and recorded as git.push; the end record counts the execs held.  Same
# script on this host (fallback) and in the VM (full posture).  POSIX sh.
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib_run.sh"
session_test exec
chmod 0755 "$scratch"
trap 'rm -rf "$WS" "$scratch"; rm -f /var/cordon-audit.*.jsonl' EXIT
command -v git >/dev/null || skip_all "no git"

# A binary outside every exec rule (the profile denies /var/cordon-*).
cp /usr/bin/true "$scratch/denied"
chmod 0755 "$scratch/denied"
ln -s /usr/bin/true "$WS/t-link"
ln -s "$scratch/denied" "$WS/d-link"
git init -q "$WS/repo" && chown -R "$AGENT" "$WS/repo"
long=$(printf '%0300d' 0)
longer=$(printf '%05000d' 0)
cat >"$WS/script.sh" <<EOF
cd "$WS" || exit 9
"$WS/t-link"; echo "abs=\$?"
./t-link; echo "rel=\$?"
"$WS/d-link" 2>/dev/null; echo "denied=\$?"
set -- a b c d e f g h i j k l m n o p q r s t u v w x y z 1 2 3 4 5 6 7 8 9 $long $longer end
/bin/echo "\$@" | wc -c | tr -d ' ' | sed 's/^/echo=/'
git -C "$WS/repo" push origin main 2>/dev/null; echo "push=\$?"
EOF
chmod 0755 "$WS/script.sh"
in_session -- /bin/sh "$WS/script.sh"
out=$(printf '%s\n' "$out" | tr '\n' ' ')
ok "a symlink to an allowed binary runs, absolute and relative ($out)" \
    sh -c 'case "$1" in *"abs=0 rel=0 "*) ;; *) exit 1 ;; esac' - "$out"
ok "  each recorded as the binary it names (/usr/bin/true, allowed)" \
    test "$(grep '"decision":"allow"' "$audit" | grep -c '"path":"/usr/bin/true"')" -ge 2
ok "a symlink to a binary no rule lets it run is refused (126)" \
    sh -c 'case "$1" in *"denied=126 "*) ;; *) exit 1 ;; esac' - "$out"
ok "  recorded as a denied exec of that binary" \
    sh -c 'grep "\"decision\":\"deny\"" "$1" | grep -qF "\"path\":\"$2/denied\""' - "$audit" "$scratch"
want=$(/bin/echo a b c d e f g h i j k l m n o p q r s t u v w x y z 1 2 3 4 5 6 7 8 9 "$long" \
    "$longer" end | wc -c | tr -d ' ')
ok "an argv of 38 strings, $want bytes as echoed, reaches the program whole" \
    sh -c 'case "$1" in *"echo=$2 "*) ;; *) exit 1 ;; esac' - "$out" "$want"
ok "  and its record keeps it (the 300-byte string in it)" \
    sh -c 'grep "\"decision\":\"allow\"" "$1" | grep "\"path\":\"/usr/bin/echo\"" | grep -qF "\"$2\""' \
    - "$audit" "$long"
ok "git push (judged on argv) is refused under --approve deny" \
    sh -c 'case "$1" in *"push=126 "*|*"push=128 "*) ;; *) exit 1 ;; esac' - "$out"
ok "  and recorded as git.push" audited deny git push
held=$(grep '"event":"end"' "$audit" | sed -n 's/.*"exec":{"count":\([0-9]*\).*/\1/p')
ok "the end record counts the execs held by the supervisor (${held:-none})" test "${held:-0}" -ge 7
done_testing
