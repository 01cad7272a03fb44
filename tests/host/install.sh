#!/bin/bash
# Install and package (issue 35): `make install DESTDIR=... PREFIX=/usr`
# and `make deb` unpacked into a scratch root (dpkg -x: nothing is installed
# on this machine), then, from the installed files only: `cordon doctor`, a
# real session, the man pages rendered without a warning, the completion
# scripts loaded, lintian on the package, and the man pages and completions
# kept in step with the commands `cordon help` lists.
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib_run.sh"
src=${CORDON_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
[ "$(id -u)" -eq 0 ] || skip_all "needs root"
agent_user || skip_all "cannot create an unprivileged user"
new_workspace
scratch=$(mktemp -d /var/cordon-install.XXXXXX)
cleanup() { rm -rf "$WS" "$scratch"; rm -f /var/cordon-audit.*.jsonl; }
trap cleanup EXIT
chmod 0755 "$scratch"

# --- make install --------------------------------------------------------------
dest=$scratch/dest
ok "make install DESTDIR PREFIX=/usr" \
    make -s -C "$src" install BUILD="$BUILD" DESTDIR="$dest" PREFIX=/usr
ok "make install puts the binary in PREFIX/bin" test -x "$dest/usr/bin/cordon"
ok "make install puts the profiles and their English sources in PREFIX/share/cordon" \
    test -f "$dest/usr/share/cordon/profiles/coding-agent.json" -a \
         -f "$dest/usr/share/cordon/profiles/coding-agent.en"
ok "the unit names the installed binary" \
    grep -qx 'ExecStart=/usr/bin/cordon floor load' "$dest/usr/lib/systemd/system/cordon-floor.service"
# no_binary: make install with nothing built fails and names what is missing.
no_binary() {
    msg=$(make -s -C "$src" install BUILD="$scratch/nobuild" DESTDIR="$scratch/x" 2>&1 >/dev/null) && return 1
    printf '%s\n' "$msg" | grep -q 'nobuild/cordon is not built'
}
ok "make install without a built binary fails, naming it" no_binary

# --- make deb, into a scratch root -------------------------------------------------
if ! command -v dpkg-deb >/dev/null; then
    skip "no dpkg-deb: the package is not built"
    root=$dest
else
    deb=$(make -s -C "$src" deb BUILD="$BUILD" 2>&1 | tail -n 1)
    ok "make deb builds a package ($deb)" test -f "$deb"
    root=$scratch/root
    ok "the package unpacks into a scratch root" dpkg -x "$deb" "$root"
    depends=$(dpkg-deb -f "$deb" Depends)
    ok "runtime dependencies only ($depends)" \
        sh -c "! printf '%s\n' '$depends' | grep -Eq 'curl|python|node|qemu|tmux|jq|ssh|squid|firejail|bubblewrap|cmocka|clang'"
    ok "the package's binary links the shared libraries (no embedded copies)" \
        sh -c "objdump -p '$root/usr/bin/cordon' | grep -q 'NEEDED.*libssl'"
    for f in usr/bin/cordon lib/systemd/system/cordon-floor.service usr/lib/tmpfiles.d/cordon.conf \
             usr/share/bash-completion/completions/cordon usr/share/zsh/vendor-completions/_cordon \
             usr/share/man/man5/cordon-policy.5.gz usr/share/doc/cordon/copyright; do
        ok "the package holds /$f" test -e "$root/$f"
    done
    if command -v lintian >/dev/null; then
        tags=$(lintian --pedantic "$deb" 2>&1 | grep -E '^[EWI]:')
        ok "lintian --pedantic finds nothing${tags:+: $tags}" test -z "$tags"
    else
        skip "no lintian (apt-get install lintian)"
    fi
fi
bin=$root/usr/bin/cordon

# --- from the installed files only -----------------------------------------------
ok "the installed cordon doctor reports a usable posture" "$bin" doctor
ok "the installed binary knows the shipped profiles" "$bin" policy check coding-agent strict mcp-server
for p in "$root"/usr/share/cordon/profiles/*.en; do
    ok "the installed $(basename "$p") passes the scenarios its sentences yield" "$bin" policy test "$p"
done

# A real session run by the installed binary, as the unprivileged agent.
out=$("$bin" run --user "$AGENT" --workspace "$WS" --audit "$scratch/s.jsonl" \
    --approve deny -- sh -c 'echo inside; cat /etc/shadow >/dev/null 2>&1 && echo BREACH || echo contained' \
    2>"$scratch/s.err" </dev/null)
rc=$?
err=$(cat "$scratch/s.err")
ok "a session runs from the installed binary (rc=$rc)" test "$rc" -eq 0
ok "the session's agent ran" sh -c "printf '%s\n' '$out' | grep -qx inside"
ok "the session confines it (/etc/shadow unreadable)" contained
ok "the session's audit log verifies with the installed binary" "$bin" audit verify --key-dir "$CORDON_AUDIT_KEY_DIR" "$scratch/s.jsonl"

# `cordon mcp-bridge` is exec'd by the agent inside its session: the binary
# must sit where the policy lets the agent execute.  The package's
# /usr/bin and make install's default /usr/local/bin are; a prefix outside
# the system directories is not (this scratch root: the agent cannot run it).
for p in /usr/bin/cordon /usr/local/bin/cordon; do
    ok "coding-agent lets the agent run $p (mcp-bridge)" \
        sh -c "'$bin' policy explain coding-agent exec $p mcp-bridge | grep -q '^decision: *allow'"
done
in_scratch=$("$bin" run --user "$AGENT" --workspace "$WS" --audit "$scratch/b.jsonl" --approve deny -- \
    sh -c "'$bin' version >/dev/null 2>&1 && echo ran || echo refused" 2>/dev/null </dev/null)
ok "a binary installed outside them cannot be run inside the session ($in_scratch)" test "$in_scratch" = refused

# --- man pages ----------------------------------------------------------------------
man1=$root/usr/share/man/man1
# lists_page CMD: cordon(1) refers to cordon-CMD(1) (as roff writes it).
lists_page() { zcat "$man1/cordon.1.gz" | grep -qF "\\fBcordon\\-${1//-/\\-}\\fR(1)"; }
commands=$("$bin" help 2>&1 | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }')
ok "cordon help lists commands" test -n "$commands"
for c in $commands; do
    ok "command $c has a man page" test -f "$man1/cordon-$c.1.gz"
    ok "cordon(1) lists $c" lists_page "$c"
done
for f in "$man1"/*.1.gz "$root"/usr/share/man/man5/*.5.gz; do
    n=$(basename "$f" .gz)
    ok "man -l renders $n" sh -c "MANWIDTH=80 man -l '$f' 2>&1 >/dev/null | grep -q . && exit 1; MANWIDTH=80 man -l '$f' | grep -q NAME"
    ok "groff -ww finds nothing in $n" sh -c "! zcat '$f' | groff -ww -z -man 2>&1 | grep ."
    if command -v mandoc >/dev/null; then
        ok "mandoc -T lint finds nothing in $n" sh -c "! zcat '$f' | mandoc -T lint 2>&1 | grep -v STYLE | grep ."
    fi
done
command -v mandoc >/dev/null || skip "no mandoc: mandoc -T lint not run"
ok "cordon-policy(5) has the JSON and the English forms" \
    sh -c "zcat '$root/usr/share/man/man5/cordon-policy.5.gz' | grep -q '^.SH JSON FORM' &&
           zcat '$root/usr/share/man/man5/cordon-policy.5.gz' | grep -q '^.SH ENGLISH FORM'"

# --- completion ---------------------------------------------------------------------
bashc=$root/usr/share/bash-completion/completions/cordon
ok "the bash completion loads" sh -c "bash -c 'source \"$bashc\"; complete -p cordon' | grep -q _cordon"
known=$(bash -c "source '$bashc'; COMP_WORDS=(cordon ''); COMP_CWORD=1; _cordon; printf '%s\n' \"\${COMPREPLY[@]}\"")
for c in $commands; do
    ok "bash completion offers $c" sh -c "printf '%s\n' '$known' | grep -qx -- '$c'"
    ok "zsh completion offers $c" grep -q "^ *'$c:" "$root/usr/share/zsh/vendor-completions/_cordon"
done
if command -v zsh >/dev/null; then
    ok "the zsh completion loads" zsh -fc "fpath=('$root/usr/share/zsh/vendor-completions' \$fpath);
        autoload -Uz compinit && compinit -u -D && autoload -Uz _cordon && (( \${+functions[_cordon]} ))"
else
    skip "no zsh: the zsh completion is not loaded"
fi
ok "bash completion offers the shipped profiles" sh -c \
    "bash -c \"source '$bashc'; COMP_WORDS=(cordon run --profile ''); COMP_CWORD=3; _cordon; echo \\\${COMPREPLY[*]}\" |
     grep -q coding-agent"

# --- tmpfiles -----------------------------------------------------------------------
if command -v systemd-tmpfiles >/dev/null; then
    ok "systemd-tmpfiles creates the state directories in a scratch root" \
        systemd-tmpfiles --root="$scratch/tmproot" --create "$root/usr/lib/tmpfiles.d/cordon.conf"
    ok "the audit keys are root's alone" test "$(stat -c %a "$scratch/tmproot/var/lib/cordon/audit-keys")" = 700
fi
done_testing
