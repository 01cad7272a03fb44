#!/bin/bash
# The work agents really do, whole tasks, bare against cordon (default
# profile) and bubblewrap in the same run:
#   - a C project of WORK_CFILES (300) files built with make -j2 from clean;
#   - `git status`, `git log -p` and `git grep` over a repository of
#     WORK_FILES (10,000) files in 20 commits;
#   - `rg` over the same tree (ripgrep; tools/deps installs it);
#   - `npm ci --offline` of a lockfile of 60 local packages (tarballs made by
#     `npm pack`, so no registry is involved) with node_modules removed first;
#   - python3 importing a package tree of 2,000 modules (their .pyc written
#     by a first run, as a real project's are).
# Every task runs as the agent user (cordontest) in the workspace, so all
# three read and write the same files: bare through setpriv (no PAM, no
# session), bubblewrap as `bwrap --ro-bind / / --dev /dev --proc /proc
# --bind WS WS --unshare-all --die-with-parent` (unprivileged: its own user
# namespace), cordon as `cordon run -q --user cordontest --workspace WS
# --approve deny` with the shipped default profile.  WORK_ROUNDS (5) rounds,
# the three sandboxes' order rotated each round; the cell is the median wall
# time of the whole command (the sandbox's own start included: a task is
# what the user waits for), the ratio that median over bare's.
# Target (issue #36): every cordon row within 1.05x of bare.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
: "${BUILD:=$here/build}"
. "$here/tools/bench/lib.sh"
cordon=${CORDON:-$BUILD/cordon}
R=${WORK_ROUNDS:-5}
CFILES=${WORK_CFILES:-300}
FILES=${WORK_FILES:-10000}
umask 022

bench_section "Real work${WORK_WHERE:+ ($WORK_WHERE)}: whole tasks, bare, cordon and bubblewrap (same run)"
uid=$(id -u "$AGENT") gid=$(id -g "$AGENT")

t=$(mktemp -d /var/cordon-bench-work.XXXXXX)
ws=$(mktemp -d /tmp/cordon-bench-work-ws.XXXXXX)
trap 'rm -rf "$t" "$ws"' EXIT
chmod 0755 "$t" "$ws"
chown "$AGENT" "$ws"
as_agent() { setpriv --reuid="$uid" --regid="$gid" --init-groups env -i PATH=/usr/bin:/bin \
    HOME="$ws/home" LANG=C.UTF-8 "$@"; }

# --- the workspace's projects, made once as the agent -----------------------
mkdir -p "$ws/home" "$ws/c/src" "$ws/repo" "$ws/py" "$ws/npm/pkgs" "$ws/npm/app"
echo "Setting up: $CFILES C files, a repository of $FILES files, 60 npm packages, 2,000 Python modules..." >&2
{
    printf 'int shared(int);\n' >"$ws/c/src/shared.h"
    for ((i = 0; i < CFILES; i++)); do
        {
            printf '#include <stdio.h>\n#include <string.h>\n#include "shared.h"\n'
            for ((f = 0; f < 8; f++)); do
                printf 'static int f%d(int x) { char b[64]; snprintf(b, sizeof(b), "%%d-%d", x); return (int)strlen(b) + x * %d; }\n' "$f" "$f" "$f"
            done
            printf 'int unit%d(int x) { return f0(x) + f1(x) + f2(x) + f3(x) + f4(x) + f5(x) + f6(x) + f7(x); }\n' "$i"
        } >"$ws/c/src/u$i.c"
    done
    {
        printf 'int shared(int x) { return x; }\nint main(void) { return shared(0); }\n'
    } >"$ws/c/src/main.c"
    cat >"$ws/c/Makefile" <<'EOF'
SRC := $(wildcard src/*.c)
OBJ := $(SRC:src/%.c=obj/%.o)
prog: $(OBJ)
	cc -o $@ $(OBJ)
obj/%.o: src/%.c src/shared.h | obj
	cc -O1 -c -o $@ $<
obj:
	mkdir -p obj
clean:
	rm -rf obj prog
EOF
    for ((d = 0; d < FILES / 100; d++)); do
        mkdir -p "$ws/repo/d$d"
        for ((f = 0; f < 100; f++)); do
            printf 'file %d of directory %d\nline two %d\nneedle%d\n' "$f" "$d" $((d * f)) $((f % 7)) \
                >"$ws/repo/d$d/f$f.txt"
        done
    done
    for ((p = 0; p < 50; p++)); do
        mkdir -p "$ws/py/tree/p$p"
        : >"$ws/py/tree/p$p/__init__.py"
        for ((m = 0; m < 40; m++)); do
            printf 'import os\nVALUE = %d\ndef f(x):\n    return x + VALUE\nclass C:\n    def m(self):\n        return f(%d)\n' \
                "$m" "$p" >"$ws/py/tree/p$p/m$m.py"
        done
    done
    : >"$ws/py/tree/__init__.py"
    {
        for ((p = 0; p < 50; p++)); do
            for ((m = 0; m < 40; m++)); do printf 'import tree.p%d.m%d\n' "$p" "$m"; done
        done
    } >"$ws/py/all.py"
    for ((p = 0; p < 60; p++)); do
        mkdir -p "$ws/npm/src/pkg$p/lib"
        printf '{ "name": "bench-pkg%d", "version": "1.0.%d", "main": "lib/index.js" }\n' "$p" "$p" \
            >"$ws/npm/src/pkg$p/package.json"
        for ((f = 0; f < 20; f++)); do
            printf 'module.exports.f%d = (x) => x + %d;\n' "$f" "$f" >"$ws/npm/src/pkg$p/lib/f$f.js"
        done
        printf 'module.exports = require("./f0.js");\n' >"$ws/npm/src/pkg$p/lib/index.js"
    done
} 2>/dev/null
chown -R "$AGENT" "$ws"
(
    cd "$ws/repo" && as_agent git init -q . && as_agent git config user.email b@b &&
        as_agent git config user.name bench && as_agent git add -A &&
        as_agent git commit -qm "tree" &&
        for ((c = 1; c < 20; c++)); do
            for ((f = 0; f < 50; f++)); do
                echo "change $c" >>"d$((c * 3 % (FILES / 100)))/f$f.txt"
            done
            as_agent git commit -qam "change $c"
        done
) >/dev/null 2>&1
(
    cd "$ws/npm/pkgs" &&
        for ((p = 0; p < 60; p++)); do as_agent npm pack --silent "$ws/npm/src/pkg$p" >/dev/null; done
    cd "$ws/npm/app" && printf '{ "name": "bench-app", "version": "1.0.0", "private": true }\n' >package.json &&
        chown "$AGENT" package.json &&
        as_agent npm install --offline --no-audit --no-fund --silent \
            --cache "$ws/home/.npm" "$ws"/npm/pkgs/*.tgz
) >/dev/null 2>&1
(cd "$ws/py" && as_agent /usr/bin/python3 all.py) >/dev/null 2>&1
(cd "$ws/c" && as_agent make -s -j2 >/dev/null 2>&1)
# A task whose tool is not on this machine (the VM's guest carries what
# tools/bench/work_vm.sh gives it) says so in its row.
declare -A tool=([c-build]=make [git-status]=git [git-log]=git [git-grep]=git [rg]=rg [npm-ci]=npm
                 [python]=/usr/bin/python3)
missing() { ! command -v "${tool[$1]}" >/dev/null; }

tasks=(c-build git-status git-log git-grep rg npm-ci python)
declare -A what=(
    [c-build]="make -j2 of $CFILES C files, from clean"
    [git-status]="\`git status\`, $FILES files"
    [git-log]="\`git log -p\`, 20 commits"
    [git-grep]="\`git grep\`, $FILES files"
    [rg]="\`rg\` over the same tree"
    [npm-ci]="\`npm ci --offline\`, 60 packages"
    [python]="python3 importing 2,000 modules"
)
declare -A cmd=(
    [c-build]="cd $ws/c && make -s clean && make -s -j2"
    [git-status]="cd $ws/repo && git status --porcelain"
    [git-log]="cd $ws/repo && git log -p"
    [git-grep]="cd $ws/repo && git grep -c needle3"
    [rg]="cd $ws/repo && rg -c needle3"
    [npm-ci]="cd $ws/npm/app && rm -rf node_modules && npm ci --offline --no-audit --no-fund --silent --cache $ws/home/.npm"
    [python]="cd $ws/py && /usr/bin/python3 all.py"
)

# run SANDBOX TASK: one timed run (ms) on stdout; the task's failure is noted.
run() {
    local sb=$1 task=$2 c=${cmd[$2]} ms
    case $sb in
    bare) ms=$(time_ms as_agent sh -c "$c") ;;
    bwrap) ms=$(time_ms as_agent bwrap --ro-bind / / --dev /dev --proc /proc --bind "$ws" "$ws" \
               --unshare-all --die-with-parent sh -c "$c") ;;
    cordon) ms=$(time_ms "$cordon" run -q --user "$AGENT" --workspace "$ws" --approve deny \
                --audit "$t/a.$task.$RANDOM$RANDOM" -- sh -c "$c") ;;
    esac
    echo "$ms"
}
check() {   # check SANDBOX TASK: the task works in this sandbox (0) or not
    local sb=$1 c="${cmd[$2]} >/dev/null 2>&1"
    case $sb in
    bare) as_agent sh -c "$c" ;;
    bwrap) as_agent bwrap --ro-bind / / --dev /dev --proc /proc --bind "$ws" "$ws" \
               --unshare-all --die-with-parent sh -c "$c" ;;
    cordon) "$cordon" run -q --user "$AGENT" --workspace "$ws" --approve deny \
                --audit "$t/check.$2.$1.jsonl" -- sh -c "$c" 2>"$t/check.$2.err" ;;
    esac
}

sbs=(bare cordon)
command -v bwrap >/dev/null && as_agent bwrap --ro-bind / / --dev /dev --proc /proc --unshare-all \
    --die-with-parent true 2>/dev/null && sbs+=(bwrap)
declare -A broken
for task in "${tasks[@]}"; do
    missing "$task" && continue
    for sb in "${sbs[@]}"; do check "$sb" "$task" || broken[$sb.$task]=1; done
done
for ((r = 0; r < R; r++)); do
    for task in "${tasks[@]}"; do
        missing "$task" && continue
        n=${#sbs[@]}
        for ((k = 0; k < n; k++)); do
            sb=${sbs[$(((k + r) % n))]}
            run "$sb" "$task" >>"$t/$sb.$task.ms"
        done
    done
done

echo "Medians of $R rounds (ms, the whole command as the user waits for it); each round"
echo "runs the sandboxes in a rotated order.  The agent is $AGENT in every column."
echo
row "task" "bare" "cordon" "cordon/bare" "bubblewrap" "bwrap/bare" "target"
row "---" "---" "---" "---" "---" "---" "---"
for task in "${tasks[@]}"; do
    if missing "$task"; then
        row "${what[$task]}" "${tool[$task]##*/} not installed" "" "" "" "" "1.05x"
        continue
    fi
    b=$(median <"$t/bare.$task.ms")
    c=$(median <"$t/cordon.$task.ms")
    cn=; [ -n "${broken[cordon.$task]:-}" ] && cn=" (FAILED: $(head -c 120 "$t/check.$task.err" | tr '\n' ' '))"
    bn=; [ -n "${broken[bare.$task]:-}" ] && bn=" (FAILED)"
    if [ -e "$t/bwrap.$task.ms" ]; then
        w=$(median <"$t/bwrap.$task.ms"); wr=$(ratio "$w" "$b")
        [ -n "${broken[bwrap.$task]:-}" ] && w="$w (FAILED)"
    else
        w="n/a"; wr=""
    fi
    row "${what[$task]}" "$b$bn" "$c$cn" "$(ratio "$c" "$b")" "$w" "$wr" "1.05x"
done
