#!/bin/bash
# The rule between cordon's layers (tools/layers, docs/architecture.md):
# cordon's own tree passes, and each kind of breach is caught on a small
# tree made here (the negative controls: an upward include, a call into a
# higher layer through a prototype declared by hand, a cycle between two
# modules of one layer, an include cycle between headers).
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/tests/lib.sh"
: "${BUILD:=$here/build}"
case $BUILD in /*) ;; *) BUILD=$here/$BUILD ;; esac
[ -f "$BUILD/userspace/cmd/main.o" ] || skip_all "cordon is not built in $BUILD"
command -v nm >/dev/null || skip_all "nm (binutils) is missing"

own_tree() {
    "$here/tools/layers" --build "$BUILD" --tap >&2
}
ok "cordon's tree keeps its layers (includes, calls, no cycle)" own_tree

# The modules that own a part of the supervisor's state take their part and
# a context of what they read (docs/architecture.md): struct sup is not
# even declared in full there, so a reach into it does not compile.  So do
# the modules that read only a field or two of the session (task_path,
# agent_tty, progress): they take those.  Read from the headers each
# object really included (-MMD), however indirectly.
BLIND="supervisor/approve channel/helper channel/helper_argv channel/unix_connector
       supervisor/exec_recheck supervisor/sup_stats supervisor/task_path
       session/agent_tty session/progress"
# blind BUILD MODULE...: no MODULE's object in BUILD included sup_state.h.
blind() {
    b=$1; shift
    for o in "$@"; do
        d=$b/userspace/$o.d
        [ -f "$d" ] || { echo "$d: missing (not built with -MMD?)" >&2; return 1; }
        if grep -q 'sup_state\.h' "$d"; then
            echo "userspace/$o.c sees struct sup (includes sup_state.h)" >&2
            return 1
        fi
    done
}
owned_parts_blind() {
    blind "$BUILD" $BLIND
}
ok "the owned parts (approvals, helpers' channel, Unix connector, exec recheck, statistics) and the one-field readers never see struct sup" owned_parts_blind

t=$(mktemp -d /tmp/layers-test.XXXXXX)
trap 'rm -rf "$t"' EXIT

# The negative control: a build where one of them includes sup_state.h,
# however indirectly (a header of its own that does), is refused, naming it.
sees_sup() {
    b=$t/blindbuild
    for o in $BLIND; do
        mkdir -p "$b/userspace/$(dirname "$o")"
        printf '%s: userspace/%s.c userspace/%s.h\n' "$b/userspace/$o.o" "$o" "$o" >"$b/userspace/$o.d"
    done
    blind "$b" $BLIND 2>"$t/blind.err" || { cat "$t/blind.err" >&2; return 1; }
    echo ' userspace/supervisor/sup_ops.h userspace/supervisor/sup_state.h' \
        >>"$b/userspace/supervisor/exec_recheck.d"
    if blind "$b" $BLIND 2>"$t/blind.err"; then
        echo "an object that includes sup_state.h passed" >&2; return 1
    fi
    grep -q 'userspace/supervisor/exec_recheck.c sees struct sup' "$t/blind.err" ||
        { cat "$t/blind.err" >&2; return 1; }
}
ok "control: an owner module that includes sup_state.h is named" sees_sup

# tree NAME: a fresh small tree in $t/NAME (base/b, policy/p, loader/l,
# userspace/x/u and userspace/x/v), clean; the cases below break one rule.
tree() {
    d=$t/$1
    mkdir -p "$d/base" "$d/policy" "$d/loader" "$d/userspace/x" "$d/build"
    echo 'int b_f(void);' >"$d/base/b.h"
    echo '#include "b.h"
int b_f(void) { return 1; }' >"$d/base/b.c"
    echo 'int p_f(void);' >"$d/policy/p.h"
    echo '#include "b.h"
#include "p.h"
int p_f(void) { return b_f(); }' >"$d/policy/p.c"
    echo 'int l_f(void);' >"$d/loader/l.h"
    echo '#include "p.h"
#include "l.h"
int l_f(void) { return p_f(); }' >"$d/loader/l.c"
    echo 'int u_f(void);' >"$d/userspace/x/u.h"
    echo '#include "l.h"
#include "u.h"
int u_f(void) { return l_f(); }' >"$d/userspace/x/u.c"
    echo 'int v_f(void);' >"$d/userspace/x/v.h"
    echo '#include "u.h"
#include "v.h"
int v_f(void) { return u_f(); }' >"$d/userspace/x/v.c"
}
# compile NAME: each .c of the tree to its object, every folder on the path.
compile() {
    d=$t/$1
    inc="-I$d/base -I$d/policy -I$d/loader -I$d/userspace/x"
    for c in "$d"/base/*.c "$d"/policy/*.c "$d"/loader/*.c "$d"/userspace/x/*.c; do
        rel=${c#"$d"/}
        mkdir -p "$d/build/$(dirname "$rel")"
        cc -c $inc -o "$d/build/${rel%.c}.o" "$c" || return 1
    done
}
# verdict NAME: tools/layers' exit status and findings on the tree.
verdict() {
    "$here/tools/layers" --src "$t/$1" --build "$t/$1/build" 2>"$t/$1.err"
}

# finds NAME PATTERN...: tools/layers refuses the tree and names each PATTERN.
finds() {
    n=$1; shift
    compile "$n" || return 1
    if verdict "$n"; then echo "tools/layers passed the $n tree" >&2; return 1; fi
    for p in "$@"; do
        grep -q -- "$p" "$t/$n.err" || { echo "missing: $p" >&2; cat "$t/$n.err" >&2; return 1; }
    done
}
clean_passes() {
    compile clean && verdict clean || { cat "$t/clean.err" >&2; return 1; }
}

tree clean
ok "control: the small tree passes" clean_passes

tree upinc
echo '#include "u.h"' >>"$t/upinc/policy/p.c"
ok "an include of a higher layer is named with its file and line" \
    finds upinc 'policy/p.c:4: includes u.h, of a higher layer'

tree upcall
printf 'int u_f(void);\nint p_g(void) { return u_f(); }\n' >>"$t/upcall/policy/p.c"
ok "a call into a higher layer through a hand-declared prototype is caught" \
    finds upcall 'policy/p.c: calls u_f, defined in userspace/x/u.c'

tree cycle
printf 'int v_f(void);\nint u_g(void) { return v_f(); }\n' >>"$t/cycle/userspace/x/u.c"
ok "a call cycle between two modules of one layer is caught, with the edge" \
    finds cycle 'cycle between modules' 'u -> .*v (calls v_f)'

tree hcycle
echo '#include "v.h"' >>"$t/hcycle/userspace/x/u.h"
ok "an include cycle between headers is caught" finds hcycle 'u -> .*v (include v.h)'

done_testing
