# Shared helpers for shell tests (POSIX sh: also sourced inside the VM guest).
# Prints TAP; tools/testrun counts it.
: "${BUILD:=$(cd "$(dirname "$0")/../.." && pwd)/build}"
_n=0
_failed=0

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
