#!/bin/sh
# `cordon run` under the shipped coding-agent profile, as an agent lives
# in it: the PATH it gets exists for it; harmless probes (a PATH search's
# misses, glibc's nscd socket) leave no record each, while a real denial
# still does; listing /etc, /sys and the home works as `cordon policy
# explain` says, and denied directories stay unlistable; an exec record of a
# Codex-sized command is bounded, measured over many commands against the
# profile's audit budget; --audit where it would break the session is
# refused at start (125), in /tmp it works.  Same script on this host
# (fallback) and in the VM (full posture).  POSIX sh.
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib_run.sh"
session_test env
chmod 0755 "$scratch"
nscd_made=
cleanup() {
    rm -rf "$WS" "$scratch"
    rm -f /var/cordon-audit.*.jsonl /tmp/cordon-env-audit.*.jsonl
    [ -z "$nscd_made" ] || rm -rf /run/nscd
}
trap cleanup EXIT
records() { grep -c '"type":"decision"' "$audit"; }

# --- the agent's PATH ------------------------------------------------------------
PATH=/root/bin:/nonexistent:relative::/usr/local/sbin:/usr/sbin:/usr/bin:/usr/bin:/bin \
    in_session -- /bin/sh -c 'echo "$PATH"'
ok "PATH keeps only what exists for the agent, in order ($out)" test "$out" = /usr/bin:/bin
PATH=/root/bin:/usr/bin:/bin in_session --env PATH -- /bin/sh -c 'echo "$PATH"'
ok "--env PATH keeps the invoker's PATH as it is ($out)" test "$out" = /root/bin:/usr/bin:/bin
PATH=/usr/sbin:/usr/bin:/bin in_session --user root -- /bin/sh -c 'echo "$PATH"'
case $rc in
125) skip "--user root needs the full posture" ;;
*) ok "a root agent keeps sbin ($out)" test "$out" = /usr/sbin:/usr/bin:/bin ;;
esac

# --- harmless probes: no record each; real denials recorded ----------------------
# nscd's socket: absent on this host or emptied in the view.  A listener is
# made on the host when none is there, so both cases are met.
if [ ! -e /run/nscd ]; then
    mkdir -p /run/nscd && nscd_made=1
    python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind("/run/nscd/socket"); s.listen(); time.sleep(30)' &
    i=0; while [ ! -S /run/nscd/socket ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
fi
in_session -- /bin/sh -c 'for i in 1 2 3 4 5; do id >/dev/null; ls -l >/dev/null; done; env nosuch-cmd 2>/dev/null; echo done'
ok "ten user lookups run ($out)" test "$out" = done
ok "  no record of nscd's socket" sh -c '! grep -q nscd "$1"' _ "$audit"
ok "  a PATH search's misses are counted, not recorded" \
    sh -c '! grep -q "\"path\":\"[^\"]*/nosuch-cmd\"" "$1" && grep "\"event\":\"end\"" "$1" | grep -q "\"exec_absent\":[1-9]"' _ "$audit"
ok "  one record per command: $(records)" test "$(records)" -le 12
# An exec the policy refuses (from the home) is a real denial: still recorded.
cp /bin/true "$AGENT_HOME/cordon-env-t" 2>/dev/null && chown "$AGENT" "$AGENT_HOME/cordon-env-t"
in_session -- /bin/sh -c "$AGENT_HOME/cordon-env-t; echo \$?"
rm -f "$AGENT_HOME/cordon-env-t"
ok "an exec the policy refuses is refused ($out)" test "$out" = 126
ok "  and recorded" sh -c 'grep "\"decision\":\"deny\"" "$1" | grep -q cordon-env-t' _ "$audit"

# --- listing: the fallback agrees with explain -----------------------------------
for d in /etc /sys "$AGENT_HOME"; do
    e=$("$cordon" policy explain --var HOME="$AGENT_HOME" --var WORKSPACE="$WS" coding-agent read "$d" |
        sed -n 's/^decision: *//p')
    in_session -- /bin/sh -c "ls $d >/dev/null && echo listed"
    ok "ls $d: explain says $e, the session lists it ($out)" test "$e:$out" = allow:listed
done
for d in /etc/ssl/private /sys/fs/bpf; do
    [ -d "$d" ] || { skip "$d: not on this host"; continue; }
    e=$("$cordon" policy explain --var HOME="$AGENT_HOME" coding-agent read "$d" | sed -n 's/^decision: *//p')
    in_session -- /bin/sh -c "ls -a $d 2>/dev/null | wc -l"
    ok "ls $d: explain says $e, the session lists nothing ($out entries)" test "$e:$out" = deny:0
done
in_session -- /bin/sh -c 'cat /etc/shadow >/dev/null 2>&1 || echo refused'
ok "/etc/shadow stays unreadable ($out)" test "$out" = refused

# --- a Codex-sized command, many times: the log per command ----------------------
# Codex runs each command as `bash -lc SNAPSHOT`, its shell snapshot 38 KB.
# The profile's audit budget is 1 GiB; 10,000 such commands must stay well
# inside it (here: under a tenth of it, 100 MiB, so 10 KiB per command).
n=300
snap=$WS/snapshot        # where the agent may read it ($scratch is not)
python3 -c 'import sys; sys.stdout.write(("# shell snapshot line, with \"quotes\" and \\ slashes\n" * 760)[:38000])' >"$snap"
chmod 0644 "$snap"
in_session -- /bin/sh -c "s=\$(cat $snap); i=0; while [ \$i -lt $n ]; do /bin/true \"\$s\" true; i=\$((i + 1)); done; echo ran"
size=$(stat -c %s "$audit")
per=$((size / n))
ok "$n commands of a 38 KB argv run ($out)" test "$out" = ran
ok "  the log holds $per bytes per command: 10,000 take $((per * 10000 / 1048576)) MiB of the 1 GiB budget" \
    test "$per" -lt 10240
big=$(grep -F '"argv_truncated":true' "$audit" | head -n 1)
sum=$(python3 -c 'import hashlib,sys; s=open(sys.argv[1]).read(); s=s.rstrip("\n"); print(hashlib.sha256(b"/bin/true\0"+s.encode()+b"\0true\0").hexdigest())' "$snap")
ok "  a record keeps the head and the SHA-256 of the whole argv" \
    sh -c 'printf %s "$1" | grep -qF "\"argv_sha256\":\"$2\"" && printf %s "$1" | grep -qF "# shell snapshot line"' _ "$big" "$sum"
ok "  the log verifies" sh -c '"$1" audit verify --key-dir "$CORDON_AUDIT_KEY_DIR" "$2" | grep -q sealed' _ "$cordon" "$audit"

# --- --audit where it would break the session ------------------------------------
posture=$("$cordon" doctor --json 2>/dev/null | sed -n 's/.*"posture": *"\([a-z]*\)".*/\1/p' | head -n 1)
t=$(mktemp -u /tmp/cordon-env-audit.XXXXXX).jsonl
out=$("$cordon" run --user "$AGENT" --workspace "$WS" --audit "$t" --approve deny -- /bin/sh -c \
    'echo x >/tmp/made && printf "int main(void){return 0;}\n" >/tmp/m.c && cc -o /tmp/m /tmp/m.c && /tmp/m && echo built' \
    2>/dev/null </dev/null)
ok "--audit in /tmp: the session's own /tmp stays writable, cc builds ($out)" test "$out" = built
ok "  and the log verifies" sh -c '"$1" audit verify --key-dir "$CORDON_AUDIT_KEY_DIR" "$2" | grep -q sealed' _ "$cordon" "$t"
"$cordon" run --user "$AGENT" --workspace "$WS" --audit "$AGENT_HOME/a.jsonl" --approve deny -- true \
    2>"$scratch/err" </dev/null
rc=$?
ok "--audit in the agent's home is refused: 125 ($rc)" test "$rc" = 125
ok "  saying why" grep -q "inside the agent's home" "$scratch/err"
"$cordon" run --user "$AGENT" --workspace "$WS" --audit "$WS/a.jsonl" --approve deny -- \
    /bin/sh -c 'echo x >made && echo made' >"$scratch/out" 2>"$scratch/err" </dev/null
rc=$?
if [ "$posture" = full ]; then
    ok "--audit in the workspace (full posture): the workspace stays writable ($rc)" \
        sh -c 'test "$1" = 0 && grep -q made "$2"' _ "$rc" "$scratch/out"
else
    ok "--audit in the workspace (fallback) is refused: 125 ($rc)" test "$rc" = 125
    ok "  saying why" grep -q "the fallback posture (Landlock) can keep it from the log" "$scratch/err"
fi
done_testing
