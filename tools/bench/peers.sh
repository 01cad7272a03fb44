#!/bin/bash
# cordon and the sandboxes it is compared with, side by side in one run, on
# four workloads, against the same work run bare:
#   - start latency: the sandbox running /bin/true, timed by
#     build/tools/bench/startlat (fork, exec, wait in C; from the exec of the
#     sandbox command to its exit), PEERS_STARTS (3) runs a round, the
#     round's median kept;
#   - `find` over a tree of 5,000 files (50 directories of 100), timed
#     inside the sandbox by build/tools/bench/fsloop (`fsloop time`: fork,
#     exec and wait of find: one fork+exec, the last row's, is in it), so
#     the sandbox's own start is not counted twice;
#   - an open + fstat + close loop over the tree's files, PEERS_STATS
#     (20,000) iterations, timed inside by `fsloop stat` (ns an iteration);
#   - fork + exec of /bin/true, PEERS_EXECS (1,000) times, timed inside by
#     build/tests/agents/attack exec-loop (ns a fork+exec).
# PEERS_ROUNDS (5) rounds; a round runs every sandbox once on every
# workload, the sandboxes' order rotated from one round to the next, so none
# always runs first or right after the same one (bubblewrap's and runsc's
# namespaces are torn down by kernel workers that run on into whatever comes
# next).  Each cell is the median of the rounds; the ratio in parentheses is
# that median over bare's.
#
# The sandboxes, each as minimal as it comes:
#   - bare: the command itself, as root;
#   - cordon: `cordon run -q --user cordontest --workspace WS --approve deny
#     --audit FILE -- CMD`, the default profile (coding-agent), the agent
#     unprivileged; on a host without BPF LSM that is the fallback posture
#     (Landlock, cgroup-bpf, seccomp user notification of exec and connect);
#   - bubblewrap: `bwrap --ro-bind / / --dev /dev --proc /proc --unshare-all
#     --die-with-parent CMD`: every namespace (root mapped to root in a user
#     namespace), the host's root read-only, no seccomp filter;
#   - firejail: `firejail --quiet --noprofile CMD`: no profile, so its
#     built-in defaults only: mount, PID, IPC and UTS namespaces, the host's
#     network, a private /var/tmp, no seccomp filter;
#   - runsc: `runsc --rootless --network=none do CMD`: gVisor with the host's
#     root read-only under a tmpfs overlay, no network, the ptrace platform
#     (its default; KVM needs /dev/kvm).  As root it needs nothing more
#     (no --ignore-cgroups).  This release (20221219) fails coreutils' statx
#     with EINVAL here (ls and stat do not work in it); find (newfstatat)
#     and fsloop (fstat) do.
# The peers run as root, as invoked; cordon's agent is cordontest.  The tree and the binaries
# live in cordon's workspace, which every sandbox is given: under /tmp, not
# /var/tmp, because firejail hides /var/tmp behind a tmpfs of its own even
# with --noprofile.  The peers come from tools/deps; a peer that is missing
# or does not run here has its cells say so.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
: "${BUILD:=$here/build}"       # tools/bench/run sets it; alone, the default build
. "$here/tools/bench/lib.sh"
cordon=$BUILD/cordon
startlat=$BUILD/tools/bench/startlat
fsloop=$BUILD/tools/bench/fsloop
attack=$BUILD/tests/agents/attack
R=${PEERS_ROUNDS:-5}
K=${PEERS_STARTS:-3}
STATS=${PEERS_STATS:-20000}
EXECS=${PEERS_EXECS:-1000}
NDIRS=50 NFILES=100
umask 022

echo "## cordon and its peers (same run)"
echo
if [ "$(id -u)" -ne 0 ]; then
    echo "skipped: needs root"
    exit 0
fi
for b in "$cordon" "$startlat" "$fsloop" "$attack"; do
    if [ ! -x "$b" ]; then
        echo "skipped: build $b first (make)"
        exit 0
    fi
done
. "$here/tests/lib_run.sh"      # agent_user; test sessions' audit keys kept apart
agent_user || { echo "skipped: no unprivileged user"; exit 0; }

t=$(mktemp -d /var/cordon-bench-peers.XXXXXX)      # audit logs, outputs: root's
ws=$(mktemp -d /tmp/cordon-bench-peers-ws.XXXXXX)       # the workspace, every sandbox's
trap 'rm -rf "$t" "$ws"' EXIT
chown "$AGENT" "$ws"
chmod 0755 "$ws"
cp "$fsloop" "$attack" "$ws/"
mkdir "$ws/tree"
for ((d = 0; d < NDIRS; d++)); do
    dir=$ws/tree/$(printf 'd%02d' "$d")
    mkdir "$dir"
    (cd "$dir" && seq -f 'f%03g' 0 $((NFILES - 1)) | xargs touch)
done

keys=(bare cordon bwrap firejail runsc)
declare -A title why said
title[bare]="bare"
title[cordon]="cordon (host fallback)"
title[bwrap]="bubblewrap"
title[firejail]="firejail"
title[runsc]="runsc (gVisor)"

# first FILE: the first line of a failure's stderr, short.
first() { grep -m 1 -v '^[[:space:]]*$' "$1" | cut -c1-100; }

# wrap KEY TAG: the sandbox's command prefix in the array pre; TAG names
# cordon's audit log (startlat replaces a %n in it by its run number).
wrap() {
    case $1 in
    bare) pre=() ;;
    cordon) pre=("$cordon" run -q --user "$AGENT" --workspace "$ws" --approve deny
                 --audit "$t/audit.$2.jsonl" --) ;;
    bwrap) pre=(bwrap --ro-bind / / --dev /dev --proc /proc --unshare-all --die-with-parent) ;;
    firejail) pre=(firejail --quiet --noprofile) ;;
    runsc) pre=(runsc --rootless --network=none do) ;;
    esac
}

"$cordon" floor load >/dev/null 2>&1   # pinned where BPF LSM works (elsewhere: fallback)
posture=$("$cordon" doctor --json 2>/dev/null | sed -n 's/.*"posture": "\(.*\)".*/\1/p')
[ "$posture" = fallback ] || title[cordon]="cordon (${posture:-unknown} posture)"
declare -A bin=([bwrap]=bwrap [firejail]=firejail [runsc]=runsc)
run=()
for k in "${keys[@]}"; do
    if [ -n "${bin[$k]:-}" ] && ! command -v "${bin[$k]}" >/dev/null; then
        why[$k]="not installed"
        said[$k]="${bin[$k]} is not installed (tools/deps installs it)"
        continue
    fi
    # One untimed run of each workload's program: a sandbox that cannot start
    # is left out (its cells say why), and the page cache is warm for all.
    wrap "$k" warm
    if ! out=$("${pre[@]}" "$ws/fsloop" time find "$ws/tree" 2>"$t/warm.err") || [ -z "$out" ]; then
        why[$k]="does not start here"
        said[$k]="${title[$k]} does not start here: $(first "$t/warm.err")"
        continue
    fi
    run+=("$k")
done

# once KEY WORKLOAD ROUND: one measurement, appended to $t/KEY.WORKLOAD
# (ns, ms for start); a failure is remembered in $t/KEY.WORKLOAD.why.
once() {
    local k=$1 w=$2 r=$3 out med failed
    case $w in
    start)
        wrap "$k" "start.$r.%n"
        read -r med _ _ failed _ <<<"$("$startlat" "$K" "${pre[@]}" /bin/true 2>"$t/err")"
        if [ "${failed:-1}" = 0 ]; then
            echo "$med" >>"$t/$k.$w"
        else
            wrap "$k" "start.$r.why"
            "${pre[@]}" /bin/true >/dev/null 2>"$t/err"
            echo "${failed:-$K} of $K runs failed: $(first "$t/err")" >"$t/$k.$w.why"
        fi
        return ;;
    find) wrap "$k" "$w.$r"; set -- "$ws/fsloop" time find "$ws/tree" ;;
    stat) wrap "$k" "$w.$r"; set -- "$ws/fsloop" stat "$ws/tree" "$NDIRS" "$NFILES" "$STATS" ;;
    exec) wrap "$k" "$w.$r"; set -- "$ws/attack" exec-loop "$EXECS" ;;
    esac
    # Captured through a pipe: runsc's sandbox writes a file descriptor at
    # its own offset, which on a regular file would overwrite ours.
    out=$("${pre[@]}" "$@" 2>"$t/err" </dev/null)
    if [[ $out =~ ^[0-9]+$ ]]; then
        echo "$out" >>"$t/$k.$w"
    else
        first "$t/err" >"$t/$k.$w.why"
    fi
}

load0=$(cut -d' ' -f1 /proc/loadavg)
t0=$(date +%s)
workloads=(start find stat exec)
n=${#run[@]}
for ((r = 0; r < R; r++)); do
    for w in "${workloads[@]}"; do
        for ((i = 0; i < n; i++)); do once "${run[(i + r) % n]}" "$w" "$r"; done
    done
done
t1=$(date +%s)

declare -A wname unit div fmt
wname[start]="start latency (\`true\`)"
wname[find]="\`find\`, $((NDIRS * NFILES)) files"
wname[stat]="open+fstat+close of a file"
wname[exec]="fork+exec of /bin/true"
unit[start]=ms; div[start]=1;   fmt[start]="%.2f"    # startlat gives ms
unit[find]=ms;  div[find]=1e6;  fmt[find]="%.2f"
unit[stat]=us;  div[stat]=1e3;  fmt[stat]="%.2f"
unit[exec]=us;  div[exec]=1e3;  fmt[exec]="%.0f"

# val KEY WORKLOAD: the median over the rounds, in the row's unit, or empty.
val() {
    [ -s "$t/$1.$2" ] || return 0
    median <"$t/$1.$2" | awk -v d="${div[$2]}" '{ print $1 / d }'
}

hdr=("workload (median of $R rounds)")
for k in "${keys[@]}"; do hdr+=("${title[$k]}"); done
row "${hdr[@]}"
row "---" "---" "---" "---" "---" "---"
for w in "${workloads[@]}"; do
    cells=("${wname[$w]}")
    base=$(val bare "$w")
    for k in "${keys[@]}"; do
        if [ -n "${why[$k]:-}" ]; then
            cells+=("${why[$k]}")
            continue
        fi
        v=$(val "$k" "$w")
        if [ -z "$v" ]; then
            cells+=("failed: $(cat "$t/$k.$w.why" 2>/dev/null)")
            continue
        fi
        c="$(printf "${fmt[$w]}" "$v") ${unit[$w]}"
        got=$(wc -l <"$t/$k.$w")
        [ "$got" -eq "$R" ] || c+=", $got of $R rounds"
        [ -z "$base" ] || c+=" ($(ratio "$v" "$base"))"
        cells+=("$c")
    done
    row "${cells[@]}"
done

# para TEXT...: one paragraph, wrapped.
para() { echo; echo "$*" | fmt -w 96; }
para "Machine: $(uname -r), $(nproc) cores ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo |
    head -n 1)), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo); load average" \
    "$load0 before, $(cut -d' ' -f1 /proc/loadavg) after.  $R rounds in $((t1 - t0)) s, the sandboxes'" \
    "order rotated each round.  Start latency: the median of $K runs a round.  \`find\`, $STATS opens" \
    "and $EXECS fork+execs: timed inside the sandbox (neither its start nor its teardown counted)."
# ver KEY CMD...: the first line of CMD's version, or why there is none.
ver() {
    local k=$1
    shift
    if [ -n "${why[$k]:-}" ] && ! command -v "$1" >/dev/null; then
        echo "${title[$k]}: ${why[$k]}"
    else
        "$@" 2>/dev/null | head -n 1
    fi
}
rv=$(ver runsc runsc --version)
[ -n "${why[runsc]:-}" ] || rv+=" (platform ptrace)"
para "Versions: $(ver cordon "$cordon" --version) (posture: ${posture:-unknown});" \
    "$(ver bwrap bwrap --version); $(ver firejail firejail --version); $rv.  Peers from tools/deps."
if [ "$posture" = fallback ]; then
    floor="on this host's fallback floor, Landlock judging every path walk (find, the open loop),
the session's cgroup-bpf programs, and seccomp user notification"
else
    floor="its floor in the ${posture:-unknown} posture (\`cordon doctor\`), and seccomp user notification"
fi
para "What a cordon cell includes: the supervisor (\`cordon run\`: policy, audit log, the session's" \
    "cgroups, its watchdog) around the agent; $floor of each exec and connect, answered by the" \
    "supervisor (so the fork+exec row carries a round trip to it per exec).  The start row adds the" \
    "supervisor's setup and teardown, which with the default profile include starting the session's" \
    "credential proxy and egress broker; the other rows are timed inside, after the agent has started."
notes=()
for k in "${keys[@]}"; do
    [ -z "${said[$k]:-}" ] || notes+=("Skipped: ${said[$k]}.")
    for w in "${workloads[@]}"; do
        [ -s "$t/$k.$w.why" ] && [ -s "$t/$k.$w" ] &&
            notes+=("${title[$k]}, ${wname[$w]}: a round failed: $(cat "$t/$k.$w.why")")
    done
done
if ((${#notes[@]})); then
    echo
    printf '%s\n' "${notes[@]}"
fi
exit 0
