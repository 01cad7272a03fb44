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
# and recorded as git.push; the end record counts the execs held; execs
# killed while held leave nothing in the exec recheck's map.  Same script
# on this host (fallback) and in the VM (full posture: its guest has no git,
# and git's two checks skip there).  POSIX sh.
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib_run.sh"
session_test exec
chmod 0755 "$scratch"
trap 'rm -rf "$WS" "$scratch"; rm -f /var/cordon-audit.*.jsonl' EXIT
have_git=false
command -v git >/dev/null && have_git=true     # the VM's guest has none: git's checks skip

# The binaries as the kernel names them (/usr/bin/... with a merged /usr, /bin/... without).
true_bin=$(readlink -f /bin/true)
echo_bin=$(readlink -f /bin/echo)
# A binary outside every exec rule (the profile denies /var/cordon-*).
cp "$true_bin" "$scratch/denied"
chmod 0755 "$scratch/denied"
# Named "true": a multi-call binary (the VM's busybox) picks its applet by that name.
mkdir "$WS/links" && ln -s "$true_bin" "$WS/links/true" && chown -R "$AGENT" "$WS/links"
ln -s "$scratch/denied" "$WS/d-link"
! $have_git || { git init -q "$WS/repo" && chown -R "$AGENT" "$WS/repo"; }
long=$(printf '%0300d' 0)
longer=$(printf '%05000d' 0)
cat >"$WS/script.sh" <<EOF
cd "$WS" || exit 9
"$WS/links/true"; echo "abs=\$?"
./links/true; echo "rel=\$?"
"$WS/d-link" 2>/dev/null; echo "denied=\$?"
set -- a b c d e f g h i j k l m n o p q r s t u v w x y z 1 2 3 4 5 6 7 8 9 $long $longer end
/bin/echo "\$@" | wc -c | tr -d ' ' | sed 's/^/echo=/'
if command -v git >/dev/null; then git -C "$WS/repo" push origin main 2>/dev/null; echo "push=\$?"; fi
EOF
chmod 0755 "$WS/script.sh"
in_session -- /bin/sh "$WS/script.sh"
out=$(printf '%s\n' "$out" | tr '\n' ' ')
ok "a symlink to an allowed binary runs, absolute and relative ($out)" \
    sh -c 'case "$1" in *"abs=0 rel=0 "*) ;; *) exit 1 ;; esac' - "$out"
ok "  each recorded as the binary it names ($true_bin, allowed)" \
    test "$(grep '"decision":"allow"' "$audit" | grep -c "\"path\":\"$true_bin\"")" -ge 2
ok "a symlink to a binary no rule lets it run is refused (126)" \
    sh -c 'case "$1" in *"denied=126 "*) ;; *) exit 1 ;; esac' - "$out"
ok "  recorded as a denied exec of that binary" \
    sh -c 'grep "\"decision\":\"deny\"" "$1" | grep -qF "\"path\":\"$2/denied\""' - "$audit" "$scratch"
want=$(/bin/echo a b c d e f g h i j k l m n o p q r s t u v w x y z 1 2 3 4 5 6 7 8 9 "$long" \
    "$longer" end | wc -c | tr -d ' ')
ok "an argv of 38 strings, $want bytes as echoed, reaches the program whole" \
    sh -c 'case "$1" in *"echo=$2 "*) ;; *) exit 1 ;; esac' - "$out" "$want"
ok "  and its record keeps it (the 300-byte string in it)" \
    sh -c 'grep "\"decision\":\"allow\"" "$1" | grep "\"path\":\"$3\"" | grep -qF "\"$2\""' \
    - "$audit" "$long" "$echo_bin"
if $have_git; then
    ok "git push (judged on argv) is refused under --approve deny" \
        sh -c 'case "$1" in *"push=126 "*|*"push=128 "*) ;; *) exit 1 ;; esac' - "$out"
    ok "  and recorded as git.push" audited deny git push
else
    skip "git push judged on argv: no git here"
    skip "  recorded as git.push: no git here"
fi
held=$(grep '"event":"end"' "$audit" | sed -n 's/.*"exec":{"count":\([0-9]*\).*/\1/p')
ok "the end record counts the execs held by the supervisor (${held:-none})" test "${held:-0}" -ge 7

# A task killed while its exec is held leaves nothing behind.  The
# supervisor arms the exec recheck's expectation (a map entry for the
# task, taken at its exit) before it answers; a task that died before the
# arm would leave it for good, and enough such entries fill the map, after
# which every session's execs are refused.  The answer itself says whether
# the task was still there (sup_exec.c); a failed one disarms.  The agent
# kills 320 of 400 children while their exec is held, at delays sweeping
# the hold (attack exec-killed), then waits while the map is read from outside: no entry may name a thread that no longer
# exists.  Negative control: such an entry, put in the map here, is found.
expect_map=$CORDON_PINS/net/exec_expect
# stale_entries: the map's keys (thread ids) with no such thread on the host.
stale_entries() {
    bpftool -j map dump pinned "$expect_map" 2>/dev/null |
        grep -o '"formatted":{"key":[0-9]*' | sed 's/.*://' |
        while read -r tid; do [ -d "/proc/$tid" ] || echo "$tid"; done | wc -l | tr -d ' '
}
if ! command -v bpftool >/dev/null || ! bpftool map show pinned "$expect_map" >/dev/null 2>&1; then
    for _ in 1 2 3; do skip "the exec recheck's map ($expect_map): bpftool or the recheck (tp_btf) missing"; done
else
    ek_audit=$(mktemp -u /var/cordon-audit.XXXXXX).jsonl
    "$cordon" run --user "$AGENT" --workspace "$WS" --audit "$ek_audit" --approve deny -- \
        /bin/sh -c "\"$attack\" exec-killed 400 >\"$WS/ek.out\"; while [ ! -e \"$WS/ek.go\" ]; do sleep 0.05; done" \
        </dev/null >/dev/null 2>"$scratch/ek.err" &
    ek=$!
    i=0
    while [ ! -s "$WS/ek.out" ] && [ $i -lt 1200 ] && kill -0 $ek 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
    stale=$(stale_entries)
    : >"$WS/ek.go"
    wait $ek
    ek_rc=$?
    ek_out=$(cat "$WS/ek.out" 2>/dev/null)
    ok "400 execs, 320 killed while held at delays sweeping the hold: some ran, some were killed ($ek_out, rc $ek_rc)" \
        sh -c 'case "$1" in "ran=0 "*|*" killed=0") exit 1 ;; ran=*" killed="*) ;; *) exit 1 ;; esac' - "$ek_out"
    ok "  no expectation left for a thread that is gone ($stale stale)" test "$stale" = 0
    # The control: an entry for a thread that does not exist (pid_max is at most 2^22).
    tid=4194309
    bpftool map update pinned "$expect_map" key 0x05 0x00 0x40 0x00 value $(printf '0 %.0s' $(seq 72)) \
        >/dev/null 2>&1
    ok "  control: an entry for a thread that does not exist is found" test "$(stale_entries)" = 1
    bpftool map delete pinned "$expect_map" key 0x05 0x00 0x40 0x00 >/dev/null 2>&1
    rm -f "$ek_audit"
fi
done_testing
