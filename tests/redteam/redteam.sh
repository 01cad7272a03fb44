#!/bin/sh
# The red-team harness: a live `cordon run` session under the shipped
# default profile (coding-agent), attacked from inside by a rogue agent
# (tests/agents/attack: one attack per run, it reports what happened and
# decides nothing), as the agent's own user and again as root in the
# sandbox where the posture admits one.  The same script runs on the host
# (fallback posture: Landlock + cgroup-bpf + seccomp) and in the VM (full
# posture: BPF LSM); POSIX sh, for the busybox guest.
#
# Each attack is one session and one row:
#   PASS  contained (and, where it matters, by the errno the layer gives:
#         a connect that fails for want of a route proves nothing);
#   FAIL  a breach, or a session that did not run the attack;
#   GAP   a breach this posture cannot stop, which `cordon run` itself
#         declared missing when the session started (never counted as a
#         pass; a gap cordon did not declare is a FAIL).
# The rows are TAP (tools/testrun counts them) and, at the end, a Markdown
# table.
#
# The negative control (last): the harness weakens the sandbox on purpose
# (no sandbox at all; a policy that allows everything) and asserts that the
# attacks that depend on what was removed turn into breaches.  A control
# that stays contained means the attack or the harness went blind: FAIL.
#
#   tests/redteam/redteam.sh            (root; make redteam, part of make test)
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
: "${BUILD:=$here/build}"
. "$here/tests/lib.sh"
. "$here/tests/lib_run.sh"
[ "$(id -u)" -eq 0 ] || skip_all "needs root (cordon run)"
[ -x "$BUILD/tests/agents/attack" ] || skip_all "build the rogue agent first (make)"
agent_user || skip_all "cannot create an unprivileged user"
new_workspace
# Not below /tmp or /var/tmp: a session has its own (userspace/session/world.h), so
# the harness's files there would be absent rather than refused.
scratch=$(mktemp -d /var/cordon-redteam.XXXXXX)
chmod 0755 "$scratch"
table=$scratch/table
: >"$table"
made=                           # files the harness planted outside its scratch dir
pids=
cleanup() {
    kill $pids 2>/dev/null
    [ -z "$made" ] || rm -rf $made
    # What a breached write would have left (the rows say so; nothing stays).
    rm -f /etc/cordon-redteam /etc/cron.d/redteam "$AGENT_HOME/.config/systemd/user/redteam.service"
    rm -rf "$WS" "$scratch" /var/cordon-audit.*.jsonl
}
trap cleanup EXIT
trap 'exit 1' INT TERM   # the EXIT trap then cleans up (planted files outside scratch)

# cordon's binary by its absolute path (in the VM it is found on PATH).
case $cordon in /*) ;; *) cordon=$(command -v "$cordon") ;; esac
if "$cordon" doctor --json | grep -q '"posture": "full"'; then posture=full; else posture=fallback; fi
echo "# red team: posture $posture, kernel $(uname -r), agent $AGENT (uid $AGENT_UID)"

# --- what the attacks aim at ---------------------------------------------------------
# Credential stores in the agent's home, each holding a marker.  Only files
# that did not exist are planted (and removed afterwards).
mark=redteam-$(od -An -tx1 -N8 /dev/urandom | tr -d ' \n')
stores=".ssh/id_ed25519 .aws/credentials .config/gh/hosts.yml .netrc .docker/config.json
.kube/config .git-credentials .npmrc .pypirc .gnupg/private-keys-v1.d/redteam.key"
for f in $stores; do
    p=$AGENT_HOME/$f
    [ -e "$p" ] && continue
    mkdir -p "$(dirname "$p")"
    echo "$mark" >"$p"
    chown "$AGENT" "$p"
    chmod 0600 "$p"
    made="$made $p"
done
chown -R "$AGENT" "$AGENT_HOME/.ssh" "$AGENT_HOME/.aws" "$AGENT_HOME/.config" "$AGENT_HOME/.docker" \
    "$AGENT_HOME/.kube" "$AGENT_HOME/.gnupg" 2>/dev/null
key=$AGENT_HOME/.ssh/id_ed25519
# The workspace is a git repository: its config and hooks run as the human
# at the next git status or commit (userspace/supervisor/git_guard.h).
mkdir -p "$WS/.git/hooks" "$WS/.git/objects" "$WS/.git/refs"
printf 'ref: refs/heads/main\n' >"$WS/.git/HEAD"
printf '[core]\n\trepositoryformatversion = 0\n' >"$WS/.git/config"
chown -R "$AGENT" "$WS/.git"
# A hard link to the key made before the session, in the workspace.
ln "$key" "$WS/innocent-before" 2>/dev/null && chown -h "$AGENT" "$WS/innocent-before"
# A program where the policy lets the agent read but not run (for fileless
# exec): /etc is readable, and no rule of the profile lets it run anything
# there (/usr, where /usr/share is, is executable).
noexec=/etc/cordon-redteam.d
mkdir -p "$noexec" && cp /bin/true "$noexec/true" && made="$made $noexec"
# Host-side listeners (TCP 127.0.0.1 and ::1, UDP, abstract and pathname
# Unix) and a host process of the agent's uid.
"$attack" serve "$scratch" & pids="$pids $!"
"$attack" victim "$AGENT_UID" & victim=$!
pids="$pids $victim"
i=0
while [ ! -e "$scratch/ports" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
read -r tcp4 tcp6 udp4 abstract <"$scratch/ports"
# The host's world a session must not see (userspace/session/world.h): a human's
# tmux server and ssh-agent socket in /tmp, a socket in /var/tmp, files in
# /dev/shm and /var/tmp, a terminal of the agent's uid in /dev/pts, SysV IPC
# any uid may use, and a root-opened file on descriptor 7 of the invoker.
hostw=/tmp/cordon-redteam-host.$$
mkdir -p "$hostw/tmux-$AGENT_UID" "$hostw/ssh-agent" /var/tmp/cordon-redteam-host.$$
made="$made $hostw /var/tmp/cordon-redteam-host.$$ /dev/shm/cordon-redteam.$$"
"$attack" serve "$hostw/tmux-$AGENT_UID" & pids="$pids $!"
"$attack" serve "$hostw/ssh-agent" & pids="$pids $!"
"$attack" serve /var/tmp/cordon-redteam-host.$$ & pids="$pids $!"
# The human's session bus and agents in XDG_RUNTIME_DIR (/run/user/UID).
rundir=/run/user/$AGENT_UID
[ -d "$rundir" ] || { mkdir -p "$rundir" && chown "$AGENT" "$rundir" && chmod 0700 "$rundir" && made="$made $rundir"; }
mkdir -p "$rundir/cordon-redteam.$$" && chown "$AGENT" "$rundir/cordon-redteam.$$" && made="$made $rundir/cordon-redteam.$$"
"$attack" su "$AGENT_UID" "$attack" serve "$rundir/cordon-redteam.$$" & pids="$pids $!"
echo "$mark" >/dev/shm/cordon-redteam.$$
chmod -R a+rwX "$hostw" /var/tmp/cordon-redteam-host.$$ /dev/shm/cordon-redteam.$$
"$attack" su "$AGENT_UID" "$attack" pty-hold "$hostw/pty" & pids="$pids $!"
"$attack" sysv-make "$scratch/sysv" & pids="$pids $!"
"$attack" su "$AGENT_UID" "$attack" reuseport-serve "$hostw/reuseport" & pids="$pids $!"
echo "$mark" >"$scratch/root-only"; chmod 0600 "$scratch/root-only"
i=0
while { [ ! -s "$hostw/pty" ] || [ ! -s "$scratch/sysv" ] ||
        [ ! -e "$hostw/ssh-agent/ports" ] || [ ! -e /var/tmp/cordon-redteam-host.$$/ports ] ||
        [ ! -s "$hostw/reuseport" ] || [ ! -e "$rundir/cordon-redteam.$$/ports" ]; } &&
      [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
hostpty=$(cat "$hostw/pty")
read -r sysv_key sysv_shm sysv_msq <"$scratch/sysv"
read -r reuse_port <"$hostw/reuseport"
# The host's services must be there, or the rows below would test less than they say.
for v in "$hostpty" "$sysv_key" "$reuse_port"; do
    [ -n "$v" ] || { echo "Bail out! the host's stand-in services did not start"; exit 1; }
done
host_paths="$hostw/tmux-$AGENT_UID/host.sock $hostw/ssh-agent/host.sock
/var/tmp/cordon-redteam-host.$$/host.sock /dev/shm/cordon-redteam.$$ $hostpty
$rundir/cordon-redteam.$$/host.sock"
# Files the human's own tools run later, outside every sandbox (their
# directories made in the agent's home when missing).
persist=".local/lib/python3/site-packages/cordon-redteam.pth .nvm/cordon-redteam-node
.rustup/toolchains/cordon-redteam .npm/_npx/cordon-redteam/run .cache/pre-commit/cordon-redteam
.claude/settings.json .bashrc .config/systemd/user/redteam.service"
homes=$AGENT_HOME
[ $posture = fallback ] || homes="$homes /root"     # root in the sandbox too
for h in $homes; do
    owner=$AGENT
    [ "$h" = /root ] && owner=root
    for f in $persist; do
        d=$h/$(dirname "$f") top=
        while [ ! -d "$d" ]; do top=$d; d=$(dirname "$d"); done
        [ -n "$top" ] || continue
        mkdir -p "$h/$(dirname "$f")" && chown -R "$owner" "$top" && made="$made $top"
    done
done
# A copy of a credential store by another name of its class (dpkg leaves
# NAME.dpkg-old), readable by anyone, so that only cordon can refuse it.
shadow_copy=/etc/gshadow.dpkg-old
if [ ! -e "$shadow_copy" ]; then
    echo "$mark" >"$shadow_copy" && chmod 0644 "$shadow_copy" && made="$made $shadow_copy"
fi
# The container engine's socket: a stand-in where there is none.
engine=/run/docker.sock
if [ ! -e "$engine" ]; then ln -s "$scratch/host.sock" "$engine" && made="$made $engine"; fi
# A private file outside the workspace that no rule names (not a
# credential store: those the invariants protect under any policy).
private=$scratch/private/notes
mkdir -p "$scratch/private" && echo "$mark" >"$private"
chown -R "$AGENT" "$scratch/private"
# The real API key of the profile's credential: in cordon's environment
# only (its credential proxy takes it); the agent gets a sentinel.
REAL_KEY=sk-ant-redteam-$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
export ANTHROPIC_API_KEY=$REAL_KEY
# A secret in cordon's environment that no credential stands in for.
HOST_SECRET=host-secret-$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
export REDTEAM_HOST_SECRET=$HOST_SECRET
# An invoker with an ssh-agent (most developers): the session's view then
# carries the ssh wiring too (cordon's binary bound in, the relay's
# socket), and every attack runs against that view.  Nothing listens on the
# invoker's side: the relay is never asked to sign here.
export SSH_AUTH_SOCK=$scratch/invoker-agent.sock
# Autostart locations exist, so that a refusal is the policy's, not ENOENT.
for d in /etc/cron.d "$AGENT_HOME/.config/systemd/user"; do
    [ -d "$d" ] && continue
    mkdir -p "$d" && made="$made $d"
done
chown -R "$AGENT" "$AGENT_HOME/.config"
# The proxy attacks need a host the profile lists: the shipped profile with
# one upstream on loopback added to its egress allowlist (what a user does
# to let the agent reach a host), nothing else changed.
"$attack" echo-serve "$scratch/echo" & pids="$pids $!"
i=0
while [ ! -s "$scratch/echo" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
read -r echo_port <"$scratch/echo"
listed=
for prof in "$here/policy/profiles/coding-agent.json" /opt/cordon/policy/profiles/coding-agent.json; do
    [ -f "$prof" ] || continue
    sed -e 's/"egress_allowlist": \[\]/"egress_allowlist": ["localhost", "127.0.0.1", "::1"]/' \
        -e "s/\"ports\": \[443\], \"via\": \"egress\"/\"ports\": [443, $echo_port], \"via\": \"egress\"/" \
        "$prof" >"$scratch/listed.json"
    chmod 0644 "$scratch/listed.json"
    grep -q "$echo_port" "$scratch/listed.json" && listed=$scratch/listed.json
    break
done
[ -n "$listed" ] || echo "# the shipped profile's source is not here: the proxy attacks are not run"
# The same with one file a human must release (the escalated-open race).
asking=
if [ -n "$listed" ]; then
    sed -e 's|"rules": \[|"rules": [ { "name": "ask-file", "decision": "escalate", "fs": { "paths": ["${WORKSPACE}/ask"], "rights": ["read"] } },|' \
        "$listed" >"$scratch/asking.json"
    chmod 0644 "$scratch/asking.json"
    grep -q ask-file "$scratch/asking.json" && asking=$scratch/asking.json
fi
# A fake git: `git push` is escalated by the profile (held for a human).
printf '#!/bin/sh\necho pushed\n' >"$WS/git"
chmod 0755 "$WS/git"
chown "$AGENT" "$WS/git"

# --- running one attack --------------------------------------------------------------
# session USER [cordon run options] -- CMD...: one session; $out, $err, $rc, $audit.
session() {
    _u=$1; shift
    audit=$scratch/audit.$(od -An -tx1 -N4 /dev/urandom | tr -d ' \n').jsonl
    # --approve deny unless the caller gives one: cordon run refuses one
    # option given twice with two values (the last one no longer wins).
    _ap="--approve deny"
    for _o in "$@"; do
        case $_o in --approve) _ap= ;; --) break ;; esac
    done
    # shellcheck disable=SC2086
    out=$("$cordon" run --user "$_u" --workspace "$WS" --audit "$audit" $_ap "$@" \
        2>"$scratch/err" </dev/null)
    rc=$?
    err=$(cat "$scratch/err")
}

# refusals: the session log's last refusals, as TAP diagnostics.
refusals() {
    [ -f "${audit:-}" ] || return 0
    grep -E '"(refused|deny)' "$audit" | tail -n 2 | cut -c1-400 | sed 's/^/# /'
}

# judge ID LAYER GAP ERRNOS USER: classify $out (the attack's verdict line),
# print the TAP line, add the table row.  GAP: the lack `cordon run`
# declares when this posture cannot stop the attack ("-": none).  ERRNOS:
# the errnos that count as this layer's refusal ("*": any).
judge() {
    _id=$1 _layer=$2 _gap=$3 _errnos=$4 _who=$5
    _line=$(printf '%s\n' "$out" | grep -E '^(contained|BREACH)' | tail -n 1)
    _detail=$(printf '%s' "$_line" | cut -c1-90)
    case $_line in
    contained*)
        _e=$(printf '%s' "$_line" | sed -n 's/^contained: \([A-Z0-9-]*\).*/\1/p')
        if [ "$_errnos" = "*" ] || printf ' %s ' "$_errnos" | grep -q " $_e "; then
            _res=PASS
        else
            _res=FAIL _detail="$_detail: not this layer's refusal (want $_errnos)"
        fi ;;
    BREACH*)
        if [ "$_gap" != - ] && [ $posture = fallback ] && said "- $_gap:"; then
            _res=GAP _detail="$_detail; declared missing: $_gap"
        else
            _res=FAIL
        fi ;;
    *)
        _res=FAIL _detail="no verdict (cordon run rc=$rc: $(printf '%s' "$err" | tail -n 1 | cut -c1-80))" ;;
    esac
    _n=$((_n + 1))
    if [ $_res = FAIL ]; then
        echo "not ok $_n - [$_who] $_id: FAIL ($_detail)"
        _failed=$((_failed + 1))
        printf '%s\n' "rc=$rc" "$err" | tail -n 4 | sed 's/^/# /'
        refusals
    else
        echo "ok $_n - [$_who] $_id: $_res ($_detail)"
    fi
    printf '| %s | %s | %s | %s | %s |\n' "$_id" "$_layer" "$_who" "$_res" \
        "$(printf '%s' "$_detail" | tr '|' '/')" >>"$table"
}

# attack USER ID LAYER GAP ERRNOS -- CMD...: run CMD (the rogue agent) in a session.
try() {
    _tu=$1 _tid=$2 _tl=$3 _tg=$4 _te=$5; shift 6
    session "$_tu" -- "$@"
    judge "$_tid" "$_tl" "$_tg" "$_te" "$_tu"
}

FS="EACCES EPERM"               # the file floor: Landlock or BPF LSM, or the supervisor
STORE="$FS ENOENT"              # a credential store: absent from the home layer, or refused
NET="EACCES EPERM"              # cgroup-bpf, the supervisor, or the BPF LSM socket hooks

if [ $posture = fallback ]; then
    users=$AGENT
    # Root in the sandbox: this posture cannot hold uid 0 (sysrq, raw
    # devices, capabilities the fallback does not see), so cordon refuses it.
    session root -- /bin/true
    out=$(if [ $rc -eq 125 ] && said "sysrq-trigger"; then
        echo "contained: - (cordon run refuses --user root in the fallback posture)"
    else echo "BREACH: a session as root started in the fallback posture (rc=$rc)"; fi)
    judge "root in the sandbox" "cordon run (posture check)" - "*" root
else
    users="$AGENT root"
fi

for u in $users; do
    a=$attack
    # --- secrets on disk ---------------------------------------------------------
    for f in $stores; do
        try "$u" "read ~/$f" "home layer (absent) / file floor" - "$STORE" -- "$a" read "$AGENT_HOME/$f"
    done
    ln -sf "$key" "$WS/sym" && chown -h "$AGENT" "$WS/sym"
    try "$u" "read the key through a symlink in the workspace" "home layer / file floor" - "$STORE" -- "$a" read "$WS/sym"
    rm -f "$WS/link-during"
    try "$u" "hard link to the key made during the session" "home layer / file floor" - "$STORE EXDEV" -- \
        "$a" hardlink "$key" "$WS/link-during"
    if [ -e "$WS/innocent-before" ]; then
        try "$u" "hard link to the key made before the session" "file floor (by inode)" \
            hardlink-protected-inodes "$FS" -- "$a" read "$WS/innocent-before"
    fi
    try "$u" "read the key via /proc/self/root" "home layer / file floor" proc-root "$STORE" -- \
        "$a" read "/proc/self/root$key"
    try "$u" "read the key via /proc/1/root" "home layer / file floor / ptrace" proc-root "$STORE" -- \
        "$a" read "/proc/1/root$key"
    # A file no rule names (the negative control opens it with its policy).
    try "$u" "read a file outside every rule" "file floor" - "$FS" -- "$a" read "$private"
    # --- code the human runs later: the workspace's git metadata ---------------------
    try "$u" "plant a git hook the human's next commit runs" "git metadata read-only (mount)" - \
        "EROFS $FS" -- "$a" write "$WS/.git/hooks/pre-commit"
    try "$u" "write core.fsmonitor into .git/config (the human's next git status runs it)" \
        "git metadata read-only (mount)" - "EROFS $FS" -- "$a" write "$WS/.git/config"
    # --- code the human's own tools run later, planted in the home -------------------
    # Writes land in the agent's home layer (userspace/session/home.h): the human's
    # python, nvm, rustup, npx, pre-commit and Claude Code read the real home.
    uhome=$(awk -F: -v n="$u" '$1 == n { print $6 }' /etc/passwd)
    for f in $persist; do cksum "$uhome/$f" 2>/dev/null || echo "absent $f"; done >"$scratch/persist.before"
    session "$u" -- /bin/sh -c 'a=$1; shift; for f; do "$a" write "$HOME/$f"; done' _ "$a" $persist
    wrote=$(printf '%s\n' "$out" | grep -c '^BREACH: write')
    for f in $persist; do cksum "$uhome/$f" 2>/dev/null || echo "absent $f"; done >"$scratch/persist.after"
    if ! cmp -s "$scratch/persist.before" "$scratch/persist.after"; then
        out="BREACH: the real home changed: $(diff "$scratch/persist.before" "$scratch/persist.after" | grep '^+[^+]' | head -n 1)"
    else
        out="contained: - ($wrote of $(echo $persist | wc -w) writes went to the agent's layer; the real home is unchanged)"
    fi
    judge "plant code the human's tools run (.pth, nvm, rustup, npx, pre-commit, Claude hooks, .bashrc, a systemd unit)" \
        "home layer (copy-on-write)" - "*" "$u"
    # --- writes outside the workspace, persistence ----------------------------------
    try "$u" "write a file outside every rule" "file floor" - "$FS" -- "$a" write "$scratch/private/written"
    try "$u" "write /etc/cordon-redteam" "file floor" - "$FS" -- "$a" write /etc/cordon-redteam
    try "$u" "cron job in /etc/cron.d" "file floor" - "$FS" -- "$a" write /etc/cron.d/redteam
    # The daemon is found by its command line: a pid it writes is its PID
    # namespace's, not the host's.
    # (In a directory any uid may write: root in the sandbox has no DAC override.)
    mkdir -p "$WS/daemon" && chmod 1777 "$WS/daemon"
    dpid=$WS/daemon/cordon-redteam-daemon.$$.pid
    rm -f "$dpid"
    session "$u" -- "$a" daemon "$dpid" 30
    sleep 0.3
    if [ -n "$(procs "daemon $dpid")" ]; then
        kill $(procs "daemon $dpid") 2>/dev/null
        out="BREACH: a double-forked, setsid daemon outlived its session"
    elif [ -s "$dpid" ]; then
        out="contained: - (the daemon died with its session)"
    else
        out="no pid file: the daemon never ran ($out)"
    fi
    rm -f "$dpid"
    judge "double fork + setsid, outlive the session" "cgroup (session killed whole)" - "*" "$u"
    try "$u" "move itself out of the session's cgroup" "cgroupfs read-only / floor" - "*" -- \
        "$a" cgroup-escape
    # --- the host's world (userspace/session/world.h): absent, not denied ----------------
    try "$u" "host services in /tmp, /var/tmp, /dev/shm, /run/user, a host terminal" "private world" - \
        "ENOENT" -- "$a" host-paths $host_paths
    try "$u" "a host process by pid: /proc, prlimit, nice, ioprio, affinity, F_SETOWN" \
        "PID namespace" - "ENOENT ESRCH EPERM" -- "$a" host-procs "$victim"
    try "$u" "the host's SysV shared memory and message queues" "IPC namespace" - \
        "ENOENT EINVAL EIDRM" -- "$a" sysv "$sysv_key" "$sysv_shm" "$sysv_msq"
    try "$u" "the kernel keyrings (keyctl, add_key)" "seccomp denylist" - "EPERM ENOSYS" -- "$a" keyring
    session "$u" -- "$a" fds "$mark" 7<"$scratch/root-only"
    judge "a root-opened descriptor the invoker holds (fd 7)" "descriptors closed" - "*" "$u"
    try "$u" "a POSIX ACL by setxattr on a file chmod may not change" "floor (xattr as chmod)" \
        metadata "$FS" -- "$a" acl "$private"
    try "$u" "inotify watches where it may not read (a host directory, a file, /run/cordon)" \
        "floor (path_notify as reading)" fs-notify "$FS ENOENT" -- \
        "$a" watch "$scratch/private" "$private" /run/cordon
    try "$u" "a backup of the password hashes ($shadow_copy, world-readable)" \
        "file floor (stores by class)" - "$FS" -- "$a" read "$shadow_copy"
    try "$u" "clone3(CLONE_INTO_CGROUP) out of the session's cgroup" "seccomp (clone3: ENOSYS)" - \
        "ENOSYS EPERM EACCES" -- "$a" clone3-cgroup "$(cgroup2_root)"
    # --- network --------------------------------------------------------------------
    try "$u" "join a host service's port (TCP SO_REUSEPORT, UDP SO_REUSEADDR)" \
        "cgroup-bpf setsockopt" - "EPERM" -- "$a" reuseport "$reuse_port"
    try "$u" "TCP to a loopback port no rule allows" "cgroup-bpf connect4" - "$NET" -- \
        "$a" connect 127.0.0.1 "$tcp4"
    try "$u" "TCP to an external address" "cgroup-bpf connect4" - "$NET" -- "$a" connect 192.0.2.1 443
    [ "$tcp6" = 0 ] ||
        try "$u" "TCP to [::1]" "cgroup-bpf connect6" - "$NET" -- "$a" connect ::1 "$tcp6"
    try "$u" "TCP to the v4-mapped ::ffff:127.0.0.1" "cgroup-bpf connect6" - "$NET" -- \
        "$a" connect ::ffff:127.0.0.1 "$tcp4"
    try "$u" "UDP to a loopback port" "cgroup-bpf sendmsg4" - "$NET" -- "$a" sendto 127.0.0.1 "$udp4"
    try "$u" "DNS to an outside resolver" "cgroup-bpf sendmsg4" - "$NET" -- "$a" sendto 10.0.0.1 53
    try "$u" "raw socket" "seccomp / sock_create" - "*" -- "$a" socket 2 3 1
    try "$u" "packet socket" "seccomp / sock_create" - "*" -- "$a" socket 17 3 768
    try "$u" "abstract Unix socket of a host listener" "seccomp / floor" - "*" -- \
        "$a" unix-abstract "$abstract"
    try "$u" "the container engine's socket ($engine)" "floor (Unix by path)" - "*" -- "$a" unix "$engine"
    try "$u" "io_uring: open the key" "seccomp (io_uring refused)" - "*" -- "$a" iouring-read "$key"
    try "$u" "io_uring: connect to a loopback port" "seccomp (io_uring refused)" - "*" -- \
        "$a" iouring-connect 127.0.0.1 "$tcp4"
    # --- the host's processes and cordon's own ------------------------------------------
    try "$u" "ptrace a host process of the agent's uid" "seccomp / yama / floor" - "*" -- "$a" ptrace "$victim"
    try "$u" "signal a host process of the agent's uid" "floor / pid namespace" - "*" -- "$a" kill "$victim"
    try "$u" "read /proc/PID/mem of a host process" "floor / ptrace checks" - "*" -- "$a" proc-mem "$victim"
    # cordon's supervisor and its proxies: their pids handed in once the session runs.
    rm -f "$WS/pids"
    "$cordon" run --user "$u" --workspace "$WS" --audit "$scratch/own-$u.jsonl" --approve deny -- /bin/sh -c '
        i=0; while [ ! -s "$1/pids" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
        for p in $(cat "$1/pids"); do
            echo "@ptrace-$p $("$2" ptrace "$p")"
            echo "@kill-$p $("$2" kill "$p")"
            echo "@mem-$p $("$2" proc-mem "$p")"
        done' _ "$WS" "$a" >"$scratch/own.out" 2>"$scratch/own.err" </dev/null &
    sup=$!
    sleep 0.5
    # This session's helpers: the supervisor's children that are cordon's proxies.
    helpers=$(for p in $(procs "cordon http-proxy") $(procs "cordon mcp-proxy"); do
        grep -q "^PPid:[[:space:]]*$sup\$" "/proc/$p/status" 2>/dev/null && echo "$p"; done)
    echo "$sup $helpers" >"$WS/pids"
    wait $sup
    rc=$?
    err=$(cat "$scratch/own.err")
    for p in $sup $helpers; do
        what=supervisor
        [ "$p" = "$sup" ] || what="proxy (pid $p)"
        for act in ptrace kill mem; do
            out=$(sed -n "s/^@$act-$p //p" "$scratch/own.out")
            judge "$act the $what" "seccomp / floor / uid" - "*" "$u"
        done
    done
    try "$u" "bpf(): open cordon's pinned maps" "seccomp / floor" - "*" -- \
        "$a" bpf "$(find "$CORDON_PINS" -type f 2>/dev/null | grep -v link_ | head -n 1)"
    try "$u" "mount (a bind mount of the key's directory, or any)" "seccomp / capabilities" - "*" -- \
        "$a" mount "$WS"
    try "$u" "new user namespace" "seccomp" - "*" -- "$a" userns
    try "$u" "load a kernel module" "seccomp / capabilities" - "*" -- "$a" module
    if command -v script >/dev/null 2>&1 && script -qec true /dev/null >/dev/null 2>&1; then
        out=$(script -qec "$cordon run -q --user $u --workspace $WS --approve deny -- $a tiocsti" \
            /dev/null | tr -d '\r')
        rc=0 err=
        judge "TIOCSTI into cordon's terminal" "own pty + seccomp" - "*" "$u"
    fi
    # --- fileless exec ----------------------------------------------------------------
    try "$u" "memfd_create + fexecve" "seccomp / exec floor" mmap-exec "*" -- "$a" memfd-exec
    try "$u" "execveat(AT_EMPTY_PATH) of a file it may read, not run" "exec floor" - "*" -- \
        "$a" execveat-empty "$noexec/true"
    try "$u" "mmap PROT_EXEC of a file it may read, not run" "exec floor (mmap)" mmap-exec "*" -- \
        "$a" mmap-exec "$noexec/true"
    # --- the approval path, the policy, the log ---------------------------------------
    session "$u" --approve socket -- /bin/sh -c '
        "$1/git" push origin main >/dev/null 2>&1 &
        sleep 1
        "$2" approve "$3/$CORDON_SESSION/approve.sock"' _ "$WS" "$a" "$CORDON_RUN"
    judge "approve its own escalated git push" "approval socket (peer cgroup)" - "*" "$u"
    # An intent is a standing approval of whatever it covers: the agent's own.
    session "$u" --approve socket -- /bin/sh -c '
        "$1" intent "$2/$CORDON_SESSION/approve.sock" "push the branch main to origin"' _ "$a" "$CORDON_RUN"
    judge "state an intent on the approval socket" "approval socket (file floor, peer cgroup)" - "*" "$u"
    try "$u" "rewrite the audit log" "file floor" - "$FS" -- "$a" write "$scratch/own-$u.jsonl"
    try "$u" "rewrite cordon's binary" "file floor" - "$FS ETXTBSY" -- "$a" write "$cordon"
    try "$u" "read the audit keys" "file floor" - "$FS" -- \
        "$a" read "$(find "$CORDON_AUDIT_KEY_DIR" -type f | head -n 1)"
    # --- another session ------------------------------------------------------------
    other=$(mktemp -d /var/cordon-redteam-other.XXXXXX)
    chown "$AGENT" "$other"; chmod 0755 "$other"
    echo "$mark" >"$other/secret"; chown "$AGENT" "$other/secret"
    "$cordon" run -q --user "$AGENT" --workspace "$other" --approve deny -- "$a" sleep 20 \
        >/dev/null 2>&1 </dev/null & osess=$!
    sleep 0.5
    try "$u" "read another live session's workspace" "file floor" - "$FS" -- "$a" read "$other/secret"
    kill $osess 2>/dev/null; wait $osess 2>/dev/null
    rm -rf "$other"
    # --- races on pointer arguments ------------------------------------------------
    echo fine >"$WS/allowed"; chown "$AGENT" "$WS/allowed"
    try "$u" "seccomp-notify race: open flips to the key" "emulated open / file floor" - "*" -- \
        "$a" open-race "$WS/allowed" "$key" 300
    session "$u" -- /bin/sh -c 'p=${HTTPS_PROXY##*:}; exec "$1" connect-race "${p%/}" "$2" 300' _ "$a" "$tcp4"
    judge "seccomp-notify race: connect flips to a forbidden port" "cgroup-bpf re-checks" - "*" "$u"
    # An escalated open: the human approves reading $WS/ask/secret (for the
    # session) while another thread flips the path to the key; any other
    # question the race raises (a torn path) is denied.  The supervisor
    # opens what it judged and hands the descriptor over, so the key never
    # comes back however the race falls.
    if [ -n "$asking" ]; then
        mkdir -p "$WS/ask"; echo ASKED >"$WS/ask/secret"; chown -R "$AGENT" "$WS/ask"
        "$cordon" run -q --user "$u" --workspace "$WS" --policy "$asking" --approve socket \
            --audit "$scratch/ask-$u.jsonl" -- "$a" open-race "$WS/ask/secret" "$key" 200 \
            >"$scratch/ask.out" 2>"$scratch/ask.err" </dev/null &
        asker=$!
        i=0
        while kill -0 $asker 2>/dev/null && [ $i -lt 3000 ]; do
            line=$("$cordon" pending 2>/dev/null | awk '/^s[0-9a-f]+:[0-9]+ / { print; exit }')
            set -- $line
            if [ $# -ge 3 ] && [ "$2 $3" = "read $WS/ask/secret" ]; then
                "$cordon" approve "$1" --session >/dev/null 2>&1
            elif [ $# -ge 1 ]; then
                "$cordon" deny "$1" >/dev/null 2>&1
            else
                sleep 0.02; i=$((i + 1))
            fi
        done
        wait $asker
        rc=$? out=$(cat "$scratch/ask.out") err=$(cat "$scratch/ask.err") audit=$scratch/ask-$u.jsonl
        judge "seccomp-notify race: an escalated open flips to the key" "emulated open (supervisor)" \
            - "*" "$u"
    fi
    if [ -n "$listed" ]; then
        session "$u" --policy "$listed" -- "$a" write "$listed"
        judge "rewrite the session's policy file" "file floor" - "$FS" "$u"
    fi
    # --- the proxies ---------------------------------------------------------------
    # Against a host the profile lists (the derived profile), so that a
    # refusal is the check's and not a failed CONNECT.
    if [ -n "$listed" ]; then
        session "$u" --policy "$listed" -- /bin/sh -c \
            'p=${HTTPS_PROXY##*:}; exec "$1" sni-mismatch "${p%/}" localhost "$2" evil.example' _ "$a" "$echo_port"
        judge "CONNECT to a listed host, TLS server name another" "egress broker (SNI = host)" - "*" "$u"
        session "$u" --policy "$listed" -- /bin/sh -c \
            'p=${HTTPS_PROXY##*:}; exec "$1" smuggle "${p%/}" localhost "$2"' _ "$a" "$echo_port"
        judge "request smuggling to a listed host (Content-Length with chunked)" "egress broker (parser)" \
            - "*" "$u"
    fi
    # The key the credential proxy holds (ANTHROPIC_API_KEY in cordon's own
    # environment): the agent is told what to look for, not where.
    echo "$REAL_KEY" >"$WS/needle"; chmod 0644 "$WS/needle"
    echo "$HOST_SECRET" >"$WS/host-needle"; chmod 0644 "$WS/host-needle"
    session "$u" -- /bin/sh -c 'X=$(cat "$1/needle") exec "$2" find-secret env:X' _ "$WS" "$a"
    judge "find the real API key in any process" "credential proxy (key on the host side)" - "*" "$u"
    # Any other secret in cordon's own environment: the agent's environment
    # is rebuilt without it, and cordon-init (PID 1, a copy of the
    # supervisor) neither keeps it nor lets the agent read its memory.
    session "$u" -- /bin/sh -c 'X=$(cat "$1/host-needle") exec "$2" find-secret env:X' _ "$WS" "$a"
    judge "find a secret of cordon's environment in any process (cordon-init included)" \
        "environment rebuilt; init wiped, not dumpable" - "*" "$u"
done

# --- the negative control ------------------------------------------------------------
# The same attacks with the sandbox removed or its policy opened: each must
# now get through, or the gate above could be passing blind.
echo "# negative control: the sandbox weakened on purpose; these must breach"
control() {  # control HOW ID -- CMD...: CMD must print BREACH
    _how=$1 _cid=$2; shift 3
    _n=$((_n + 1))
    _l=$(printf '%s\n' "$out" | grep -E '^(contained|BREACH)' | tail -n 1)
    case $_l in
    BREACH*) echo "ok $_n - control ($_how) $_cid: breached as it must ($_l)"
             printf '| %s | %s | %s | %s | %s |\n' "$_cid" "control: $_how" "$AGENT" "FAIL (expected)" "$_l" >>"$table" ;;
    *) echo "not ok $_n - control ($_how) $_cid: stayed contained ($_l): the check is blind"
       refusals
       _failed=$((_failed + 1)) ;;
    esac
}
bare() { out=$("$attack" su "$AGENT_UID" "$@" 2>&1); }
bare "$attack" read "$key";                      control "no sandbox" "read ~/.ssh/id_ed25519" --
bare "$attack" connect 127.0.0.1 "$tcp4";        control "no sandbox" "TCP to a loopback port" --
bare "$attack" write "$AGENT_HOME/.bashrc.redteam"; control "no sandbox" "write in the home" --
bare "$attack" write "$WS/.git/hooks/pre-commit"; control "no sandbox" "plant a git hook" --
rm -f "$WS/.git/hooks/pre-commit"
rm -f "$AGENT_HOME/.bashrc.redteam"
bare "$attack" ptrace "$victim";                 control "no sandbox" "ptrace a same-uid process" --
bare "$attack" proc-mem "$victim";               control "no sandbox" "read a same-uid process's memory" --
bare "$attack" host-paths $host_paths;           control "no sandbox" "host services in /tmp, /var/tmp, /dev/shm, /run/user, a host terminal" --
bare "$attack" host-procs "$victim";             control "no sandbox" "a host process by pid" --
bare "$attack" sysv "$sysv_key" "$sysv_shm" "$sysv_msq"; control "no sandbox" "the host's SysV IPC" --
bare "$attack" keyring;                          control "no sandbox" "the kernel keyrings" --
bare "$attack" reuseport "$reuse_port";          control "no sandbox" "join a host service's port" --
bare "$attack" acl "$private";                   control "no sandbox" "a POSIX ACL by setxattr" --
bare "$attack" read "$shadow_copy";              control "no sandbox" "a world-readable backup of the password hashes" --
bare "$attack" watch "$scratch/private";         control "no sandbox" "an inotify watch where it may not read" --
out=$("$attack" fds "$mark" 2>&1 7<"$scratch/root-only"); control "no sandbox" "a root-opened descriptor (fd 7)" --
out=$(for f in $persist; do "$attack" su "$AGENT_UID" "$attack" write "$AGENT_HOME/$f.control"; done 2>&1)
out=$(for f in $persist; do [ -s "$AGENT_HOME/$f.control" ] && echo "BREACH: wrote ~/$f.control"; rm -f "$AGENT_HOME/$f.control"; done | tail -n 1)
control "no sandbox" "plant code the human's tools run" --
bare "$attack" memfd-exec;                       control "no sandbox" "memfd_create + fexecve" --
bare "$attack" unix-abstract "$abstract";        control "no sandbox" "abstract Unix socket" --
echo "$mark" >"$WS/needle-host"
REDTEAM_SECRET=$mark sleep 30 & holder=$!
pids="$pids $holder"
sleep 0.2
out=$(X=$mark "$attack" find-secret env:X 2>&1);  control "no sandbox" "find a key in a process's environment" --
kill $holder 2>/dev/null
# The broker with the server name equal to the host: the same path relays
# (the echo comes back), so the SNI row above is not passing for want of a
# route.
if [ -n "$listed" ]; then
    session "$AGENT" --policy "$listed" -- /bin/sh -c \
        'p=${HTTPS_PROXY##*:}; exec "$1" sni-mismatch "${p%/}" localhost "$2" localhost' _ "$attack" "$echo_port"
    control "SNI equal to the host" "CONNECT to a listed host, TLS server name another" --
fi
# A policy that allows everything the agent reaches for.
cat >"$scratch/open.json" <<EOF
{ "cordon_policy": 1, "name": "redteam-open",
  "rules": [
    { "name": "everything", "decision": "allow",
      "fs": { "paths": ["/"], "rights": ["all"] } },
    { "name": "loopback", "decision": "allow",
      "net": { "hosts": ["127.0.0.1"], "ports": [$tcp4] } } ] }
EOF
chmod 0644 "$scratch/open.json"
# (Credential stores, cordon's own files and the persistence locations stay
# closed under any policy: the invariants; so the open policy is tried on
# the attacks that only the policy decides.)
session "$AGENT" --policy "$scratch/open.json" -- "$attack" read "$private"
control "allow-all policy" "read a file outside every rule" --
session "$AGENT" --policy "$scratch/open.json" -- "$attack" write "$scratch/private/written"
control "allow-all policy" "write a file outside every rule" --
session "$AGENT" --policy "$scratch/open.json" -- "$attack" connect 127.0.0.1 "$tcp4"
control "allow-all policy" "TCP to a loopback port" --
session "$AGENT" --policy "$scratch/open.json" -- "$attack" execveat-empty "$noexec/true"
control "allow-all policy" "execveat(AT_EMPTY_PATH) of a file it may read, not run" --

echo "#"
echo "# | attack | expected layer | as | result | detail |"
echo "# |---|---|---|---|---|"
sed 's/^/# /' "$table"
done_testing
