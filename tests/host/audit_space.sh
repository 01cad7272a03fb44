#!/bin/sh
# The audit log on a full filesystem (userspace/audit/audit.c, AUDIT_RESERVE): an
# agent that fills the filesystem holding the log, its workspace on the
# same one, must not go on unrecorded.  The log keeps a reserve allocated
# past its end; once it cannot renew it, the session is stopped, nothing
# more is allowed, and the log still ends with its reason, its end record
# and its seal.  A session whose log has no room for the reserve does not
# start.  POSIX sh: also run in the VM (tests/vm/host_tests.list).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib_run.sh"

[ "$(id -u)" -eq 0 ] || skip_all "needs root (sessions, a tmpfs mount)"
agent_user || skip_all "no unprivileged user for the agent"

t=$(mktemp -d /var/cordon-aspace.XXXXXX)
fs=$t/fs
mkdir "$fs"
trap 'umount "$fs" 2>/dev/null; rm -rf "$t"' EXIT
# 16 MiB: room for the 4 MiB reserve, and for the agent to fill the rest.
mount -t tmpfs -o size=16m,mode=0755 cordon-aspace "$fs" ||
    skip_all "cannot mount a tmpfs"
mkdir "$fs/ws"
chown "$AGENT" "$fs/ws"
log=$fs/audit.jsonl
marker=$t/after

# --- A session that fills the filesystem, then goes on ----------------------
# dd fills what the reserve left free; then each exec of true with 60 KB of
# arguments is a record of about 5 KB (4 KiB of argv kept, with the size
# and SHA-256 of the whole), so within 3,000 of them the log needs to renew
# its 4 MiB reserve and cannot.  Were it not stopped, the loop would end by writing
# the marker (outside the filesystem, where the agent may not write either;
# so a second marker in /tmp, which the profile allows).
big=$(head -c 60000 /dev/zero | tr '\0' q)
"$cordon" run -q --user "$AGENT" --workspace "$fs/ws" --audit "$log" --approve deny -- \
    sh -c 'dd if=/dev/zero of=fill bs=65536 2>/dev/null; i=0
           while [ $i -lt 3000 ]; do /bin/true "$1"; i=$((i + 1)); done
           echo went-on > /tmp/cordon-aspace-marker.$2' sh "$big" "${t##*.}" \
    >/dev/null 2>"$t/err" </dev/null
rc=$?
err=$(cat "$t/err")
filled=$(du -k "$fs/ws/fill" | cut -f1)
ok "the agent filled what the reserve left ($filled KB)" test "$filled" -ge 11000
ok "the session was stopped, not finished (rc=$rc)" test "$rc" -ne 0
ok "the agent never got past the loop" test ! -e "/tmp/cordon-aspace-marker.${t##*.}"
rm -f "/tmp/cordon-aspace-marker.${t##*.}"
ok "cordon says why ($err)" \
    said "stopped: the audit log cannot keep its records (No space left on device)"
out=$("$cordon" audit verify --key-dir "$CORDON_AUDIT_KEY_DIR" "$log" 2>&1)
ok "the log verifies: whole and sealed ($out)" sh -c "printf '%s' \"\$1\" | grep -q 'intact: .* records, sealed'" sh "$out"
ok "its audit-down record names the cause, no record dropped" \
    grep -q '"dropped":0,"error":"No space left on device","event":"audit-down"' "$log"
end_said() {
    grep -q '"event":"end".*"records_dropped":[0-9]*.*"stopped":"the audit log cannot keep' "$log" ||
        { grep '"event":"end"' "$log" | cut -c1-600 >&2; return 1; }
}
ok "its end record says the session was stopped" end_said
down=$(grep -n '"event":"audit-down"' "$log" | cut -d: -f1)
last=$(grep -n '"type":"decision"' "$log" | tail -n 1 | cut -d: -f1)
ok "no decision after it (the last at line $last, the audit-down at $down)" test "$last" -lt "$down"
n=$(grep -c '"argv":\["/bin/true","qqq' "$log")
ok "every exec that ran is on record, and the stop came early ($n of 3000)" \
    test "$n" -ge 1 -a "$n" -lt 3000
size=$(wc -c <"$log")
used=$(du -k "$log" | cut -f1)
ok "the rest of the reserve was given back at close ($used KB for $size bytes)" \
    test "$used" -le $(( size / 1024 + 68 ))

# --- No room for the reserve: no session ------------------------------------
rm -f "$log"
dd if=/dev/zero of="$fs/fill" bs=65536 2>/dev/null
"$cordon" run -q --user "$AGENT" --workspace "$fs/ws" --audit "$fs/second.jsonl" \
    --approve deny -- true >/dev/null 2>"$t/err" </dev/null
rc=$?
err=$(cat "$t/err")
ok "a log with no room for its reserve: exit 125 ($rc)" test "$rc" -eq 125
ok "saying so ($err)" said "No space left on device (it keeps 4 MiB allocated ahead of its records)"
ok "and leaving no log behind" test ! -e "$fs/second.jsonl"

# --- Room again: a session runs, and gives its reserve back ----------------
rm -f "$fs/ws/fill" "$fs/fill"
"$cordon" run -q --user "$AGENT" --workspace "$fs/ws" --audit "$fs/third.jsonl" \
    --approve deny -- true >/dev/null 2>"$t/err" </dev/null
rc=$?
ok "with room again a session runs (rc=$rc)" test "$rc" -eq 0
ok "its start record states the reserve" grep -q '"reserve":4194304' "$fs/third.jsonl"
ok "and the filesystem holds no more than its log afterwards ($(du -k "$fs" | tail -n 1 | cut -f1) KB)" \
    test "$(du -k "$fs" | tail -n 1 | cut -f1)" -lt 200
# --- Kernel events lost: the log says so (full posture: BPF LSM) ---------------
# The floor refuses 30000 reads of a file outside the profile while the
# supervisor is stopped (SIGSTOP): the session's 1 MiB ring buffer fills, the
# kernel counts what it could not queue, and once the supervisor runs again
# the log says how many were lost (the fallback's Landlock reports no file
# events at all: the posture's "lacks" says so).
if "$cordon" doctor --json 2>/dev/null | grep -q '"posture": "full"'; then
    chmod 0755 "$t"
    echo secret >"$t/secret"
    chmod 0644 "$t/secret"
    mkdir "$t/ws2"
    chown "$AGENT" "$t/ws2"
    "$cordon" run -q --user "$AGENT" --workspace "$t/ws2" --audit "$t/drops.jsonl" --approve deny -- \
        /bin/sh -c "echo go >$t/ws2/started; i=0
            while [ \$i -lt 30000 ]; do read -r x <$t/secret; i=\$((i + 1)); done 2>/dev/null
            echo done >$t/ws2/done" >/dev/null 2>"$t/err" </dev/null & cpid=$!
    i=0
    while [ ! -e "$t/ws2/started" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
    kill -STOP $cpid
    i=0
    while [ ! -e "$t/ws2/done" ] && [ $i -lt 2400 ]; do sleep 0.05; i=$((i + 1)); done
    kill -CONT $cpid
    wait $cpid
    rc=$?
    n=$(grep '"decision":"deny"' "$t/drops.jsonl" | grep -c "\"object\":\"$t/secret\"")
    ok "a flood of refused reads while the supervisor was stopped ran (rc=$rc, $n itemised)" \
        sh -c '[ "$1" -eq 0 ] && [ -e "$2" ] || { cat "$3"; grep -m2 secret "$4" | cut -c1-400; exit 1; } >&2' _ "$rc" "$t/ws2/done" "$t/err" "$t/drops.jsonl"
    ok "  the log says events were lost, and how many" \
        grep -q '"dropped":[1-9][0-9]*,"event":"floor-events-dropped"' "$t/drops.jsonl"
    lost=$(sed -n 's/.*"floor_events_dropped":\([0-9]*\).*/\1/p' "$t/drops.jsonl")
    # (Lost events also include the agent's few other ones, its writes.)
    ok "  the end record counts them: itemised and lost account for the 30000 (${lost:-none} lost)" \
        test "$(( n + ${lost:-0} ))" -ge 30000 -a "$(( n + ${lost:-0} ))" -le 30010
else
    echo "# kernel events lost: not run, no BPF LSM here (the fallback reports no file events)"
fi

# --- The network floor's events: each session's own ring --------------------
# In both postures.  A datagram's destination is judged by cgroup-bpf alone
# (the supervisor lifts connect, not sendto), so each refusal is a kernel
# event, read from the session's own ring (bpf/net.bpf.c,
# net_session_events).  Session A floods refused datagrams while its
# supervisor is stopped: its 256 KiB ring fills, the kernel counts the rest
# under A.  Meanwhile session B, whole, sends one refused datagram: its
# record is in B's log and B lost nothing (with one shared ring, A's flood
# would have taken B's event with it).  Once A runs again its log has every
# refusal, itemised or counted: together exactly the datagrams refused.
new_workspace
fl=$WS/flood
mkdir "$fl"
chown "$AGENT" "$fl"
N=5000
"$cordon" run -q --user "$AGENT" --workspace "$WS" --audit "$t/net-a.jsonl" --approve deny -- \
    "$attack" sendto-flood 10.0.0.1 53 $N "$fl" >"$t/net-a.out" 2>"$t/net-a.err" </dev/null & apid=$!
i=0
while [ ! -e "$fl/ready" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
kill -STOP $apid
: >"$fl/go"
i=0
while [ ! -e "$fl/done" ] && [ $i -lt 2400 ]; do sleep 0.05; i=$((i + 1)); done
in_session -- "$attack" sendto 10.0.0.2 53
ok "session B, while A's ring is full: its datagram refused ($out)" contained
ok "  and on record in B's own log" audited deny kernel sendmsg '"object":"10.0.0.2:53"'
ok "  B lost no event" sh -c '! grep -q "events_dropped\|floor-events-dropped" "$1"' _ "$audit"
ok "  A's events are not in B's log" sh -c '! grep -q "10.0.0.1:53" "$1"' _ "$audit"
rm -f "$audit"
kill -CONT $apid
wait $apid
rc=$?
refused=$(cat "$fl/done" 2>/dev/null)
n=$(grep '"decision":"deny"' "$t/net-a.jsonl" | grep -c '"object":"10.0.0.1:53"},"server":"kernel","tool":"sendmsg"')
lost=$(sed -n 's/.*"net_events_dropped":\([0-9]*\).*/\1/p' "$t/net-a.jsonl")
ok "session A flooded $N refused datagrams while its supervisor was stopped (rc=$rc, ${refused:-?} refused)" \
    sh -c '[ "$1" -eq 0 ] && [ "$2" = "$3" ] || { cat "$4" "$5"; exit 1; } >&2' _ "$rc" "${refused:-x}" $N "$t/net-a.out" "$t/net-a.err"
ok "  A's log says events were lost, from its net ring" \
    sh -c 'grep "\"dropped\":[1-9][0-9]*,\"event\":\"floor-events-dropped\"" "$1" |
        grep -q "\"ring\":\"net\""' _ "$t/net-a.jsonl"
ok "  itemised ($n) and lost (${lost:-none}) are exactly the $N refused" \
    test "$(( n + ${lost:-0} ))" -eq $N -a "${lost:-0}" -gt 0
ok "  A's log verifies" "$cordon" audit verify --key-dir "$CORDON_AUDIT_KEY_DIR" "$t/net-a.jsonl"
rm -rf "$WS"
done_testing
