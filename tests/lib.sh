# Shared helpers for shell tests (POSIX sh: also sourced inside the VM guest).
# Prints TAP; tools/testrun counts it.
: "${BUILD:=$(cd "$(dirname "$0")/../.." && pwd)/build}"
_n=0
_failed=0

# The floor instance the tests run against (loader/instance.h): on a host,
# one of their own, "test" (its pins, cgroups, run directories and gc
# apart), so that no test loads, unloads, reloads or reaps what the host's
# live sessions use; in the VM guest (CORDON_IN_VM=1), the guest's own live
# floor.  tools/testrun sets it the same way; CORDON_INSTANCE= (set, empty)
# asks for the live floor.  Its paths, as cordon derives them
# (tests/host/live_floor.sh checks they agree with `cordon floor status`).
if [ -z "${CORDON_INSTANCE+set}" ]; then
    if [ "${CORDON_IN_VM:-}" = 1 ]; then CORDON_INSTANCE=; else CORDON_INSTANCE=test; fi
fi
export CORDON_INSTANCE
if [ -n "$CORDON_INSTANCE" ]; then
    CORDON_PINS=/sys/fs/bpf/cordon_$CORDON_INSTANCE     # the LSM floor's; the network floor's in net/
    CORDON_CG=cordon_$CORDON_INSTANCE                   # below the cgroup2 root; connectors: $CORDON_CG-unix
    CORDON_RUN=/run/cordon/.$CORDON_INSTANCE            # sessions' run directories
    CORDON_OPEN_LOGS=/var/lib/cordon/open-logs/.$CORDON_INSTANCE
else
    CORDON_PINS=/sys/fs/bpf/cordon
    CORDON_CG=cordon
    CORDON_RUN=/run/cordon
    CORDON_OPEN_LOGS=/var/lib/cordon/open-logs
fi

# ok DESCRIPTION CMD...: run CMD, report ok/not ok by its status.
ok() {
    _d=$1; shift
    _n=$((_n + 1))
    # The command's stderr is shown, as TAP diagnostics, only on failure.
    if _diag=$("$@" 2>&1 >/dev/null); then
        echo "ok $_n - $_d"
    else
        echo "not ok $_n - $_d"
        [ -z "$_diag" ] || printf '%s\n' "$_diag" | tail -n 12 | sed 's/^/# /'
        _failed=$((_failed + 1))
    fi
}

# skip REASON: one check this kernel cannot run (TAP's "# SKIP": never a pass).
skip() {
    _n=$((_n + 1))
    echo "ok $_n # SKIP $1"
}

# skip_all REASON: the kernel (or machine) lacks a feature; exit 77.
skip_all() {
    echo "1..0 # SKIP $1"
    exit 77
}

# cgroup2_root: where cgroup v2 is mounted (first cgroup2 line of mountinfo;
# the fs type follows the " - " separator, after a variable number of
# optional fields).
cgroup2_root() {
    awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") { print $5; exit } break } }' /proc/self/mountinfo
}

done_testing() {
    echo "1..$_n"
    [ "$_failed" -eq 0 ]
    exit $?
}
