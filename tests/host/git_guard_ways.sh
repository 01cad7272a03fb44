#!/bin/sh
# Every way the agent can make the human's next git run its code, in real
# `cordon run` sessions (userspace/supervisor/git_guard.h and
# git_guard_point.h): a pre-existing repository whose hooks directory,
# config or config.worktree did not exist at the start (made then by the
# agent); a linked worktree's config.worktree; a hooks directory that is
# a symlink into the working tree, or holds one; core.hooksPath into the
# working tree (there, or not yet); include.path and includeIf.*.path to a
# file of the working tree (there, or not yet); a relative core.hooksPath
# in the user's global config.  After each session the human (the same
# user, outside every sandbox) runs status, commit and checkout there:
# nothing of the agent's may run.  Each row has its control: the same
# attack without cordon, which must run the agent's code (the row can
# fail).  Needs git.  POSIX sh.
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib_run.sh"
command -v git >/dev/null 2>&1 || skip_all "needs git"
session_test git-ways
rows=0
chmod 0755 "$scratch"
marks=$scratch/marks
mkdir -m 1777 "$marks"
gconf_saved=
cleanup() {
    [ -n "${KEEP:-}" ] && { echo "# kept $WS $scratch"; return; }
    rm -rf "$WS" "$scratch"
    rm -f /var/cordon-audit.*.jsonl
    if [ -n "$gconf_saved" ]; then
        if [ "$gconf_saved" = none ]; then rm -f "$AGENT_HOME/.gitconfig"; else mv "$gconf_saved" "$AGENT_HOME/.gitconfig"; fi
    fi
}
trap cleanup EXIT

as_user() { setpriv --reuid="$AGENT_UID" --regid="$(id -g "$AGENT")" --init-groups env HOME="$AGENT_HOME" "$@"; }
g() { as_user git -c safe.directory="*" -c user.email=h@h -c user.name=h -c init.defaultBranch=main "$@"; }

# A hook script or an fsmonitor command that leaves MARK behind.
hook_text() { printf '#!/bin/sh\necho ran >>%s\nexit 0\n' "$1"; }
fsmon_text() { printf '[core]\n\tfsmonitor = "echo ran >>%s; false"\n' "$1"; }

# repo DIR: a repository of the human's, with one commit.
repo() {
    rm -rf "$1"
    mkdir -p "$1"
    chown "$AGENT" "$1"
    g init -q "$1"
    echo x | as_user tee "$1/file" >/dev/null
    g -C "$1" add file
    g -C "$1" commit -q -m init
}

# human DIR: what the human does next there (status, an alias, adding and
# committing what is there, a checkout).
human() {
    g -C "$1" status >/dev/null 2>&1
    g -C "$1" st >/dev/null 2>&1
    g -C "$1" add -A >/dev/null 2>&1
    g -C "$1" commit -q --allow-empty -m next >/dev/null 2>&1
    g -C "$1" checkout -q -b "b$$-$(date +%s%N)" >/dev/null 2>&1
    g -C "$1" -c protocol.file.allow=always submodule update -q --init >/dev/null 2>&1
}

# row NAME SETUP ATTACK [REPO]: SETUP (a shell function, run as root on the
# host) then ATTACK (a script, run as the agent) in a session, the human's
# git after; then the control: SETUP, ATTACK without cordon, the human's git.
row() {
    name=$1 setup=$2 attack_sh=$3 where=${4:-$WS/r}
    rows=$((rows + 1))
    log=$scratch/$setup.$rows
    mark=$marks/$setup
    rm -f "$mark"
    $setup "$mark"
    # In the workspace: the session sees nothing of the host's /var or /tmp.
    printf '%s\necho attack-done\n' "$attack_sh" >"$WS/attack.sh"
    chmod 0755 "$WS/attack.sh"
    "$cordon" run -q --user "$AGENT" --workspace "$WS" --approve deny \
        --audit "$log.jsonl" -- /bin/sh "$WS/attack.sh" "$WS" "$mark" \
        >"$log.out" 2>"$log.err" </dev/null
    # What the end held aside, before the control's set-up removes it.
    find "$WS" -name '*cordon-held*' >"$log.held"
    human "$where"
    ok "$name: the human's git runs nothing of the agent's" \
        sh -c 'grep -q attack-done "$1" && test ! -e "$2"' _ "$log.out" "$mark"
    rm -f "$mark"
    $setup "$mark"
    as_user /bin/sh "$WS/attack.sh" "$WS" "$mark" >/dev/null 2>&1
    human "$where"
    ok "  control, the same without cordon: it runs" test -e "$mark"
    rm -f "$mark"
}

no_hooks() { repo "$WS/r" && rm -rf "$WS/r/.git/hooks"; }
row "hooks made in a repository that had none" no_hooks '
    mkdir -p "$1/r/.git/hooks"
    for h in pre-commit post-checkout; do
        printf "#!/bin/sh\necho ran >>%s\n" "$2" >"$1/r/.git/hooks/$h"
        chmod +x "$1/r/.git/hooks/$h"
    done'
ok "  held aside and said" sh -c 'grep -q "\"workspace-held\".*/r/.git/cordon-held-[^/]*/hooks/pre-commit\"" "$1" &&
    grep -q "hook .*/r/.git/hooks/pre-commit: the agent.s version is held aside" "$2"' _ "$log.jsonl" "$log.err"

no_config() { repo "$WS/r" && rm -f "$WS/r/.git/config"; }
row "a config made in a repository that had none" no_config '
    printf "[core]\n\tfsmonitor = \"echo ran >>%s; false\"\n" "$2" >"$1/r/.git/config"'

wt_config() {
    repo "$WS/r"
    g -C "$WS/r" config extensions.worktreeConfig true
    rm -rf "$WS/wt"
    g -C "$WS/r" worktree add -q "$WS/wt" >/dev/null 2>&1
}
row "config.worktree made in the repository" wt_config '
    printf "[core]\n\tfsmonitor = \"echo ran >>%s; false\"\n" "$2" >"$1/r/.git/config.worktree"'
row "config.worktree made for a linked worktree" wt_config '
    printf "[core]\n\tfsmonitor = \"echo ran >>%s; false\"\n" "$2" >"$1/r/.git/worktrees/wt/config.worktree"' \
    "$WS/wt"

hooks_link() {
    repo "$WS/r"
    rm -rf "$WS/r/.git/hooks"
    mkdir -p "$WS/r/scripts/hooks"
    chown -R "$AGENT" "$WS/r/scripts"
    ln -s ../scripts/hooks "$WS/r/.git/hooks"
}
row "hooks a symlink into the working tree" hooks_link '
    printf "#!/bin/sh\necho ran >>%s\n" "$2" >"$1/r/scripts/hooks/pre-commit"
    chmod +x "$1/r/scripts/hooks/pre-commit"'
row "  the symlink itself replaced" hooks_link '
    rm "$1/r/.git/hooks" && mkdir "$1/r/.git/hooks" &&
    printf "#!/bin/sh\necho ran >>%s\n" "$2" >"$1/r/.git/hooks/pre-commit" &&
    chmod +x "$1/r/.git/hooks/pre-commit"'
ok "  held aside, and the symlink put back" sh -c 'grep -q "/r/.git/cordon-held-[^/]*$" "$1" &&
    grep -q "\"workspace-held\".*\"restored\":true" "$2"' _ "$log.held" "$log.jsonl"

hook_file_link() {
    repo "$WS/r"
    hook_text /dev/null | as_user tee "$WS/r/pc.sh" >/dev/null
    chmod +x "$WS/r/pc.sh"
    ln -sf ../../pc.sh "$WS/r/.git/hooks/pre-commit"
}
row "a hook that is a symlink into the working tree" hook_file_link '
    printf "#!/bin/sh\necho ran >>%s\n" "$2" >"$1/r/pc.sh"'

husky() {
    repo "$WS/r"
    mkdir -p "$WS/r/.husky"
    hook_text /dev/null >"$WS/r/.husky/pre-commit"
    chmod +x "$WS/r/.husky/pre-commit"
    chown -R "$AGENT" "$WS/r/.husky"
    g -C "$WS/r" config core.hooksPath .husky
}
row "core.hooksPath into the working tree" husky '
    printf "#!/bin/sh\necho ran >>%s\n" "$2" >"$1/r/.husky/pre-commit"
    printf "#!/bin/sh\necho ran >>%s\n" "$2" >"$1/r/.husky/post-checkout"
    chmod +x "$1/r/.husky/post-checkout"'
husky_absent() { repo "$WS/r" && g -C "$WS/r" config core.hooksPath .githooks; }
row "core.hooksPath at a directory not there yet" husky_absent '
    mkdir -p "$1/r/.githooks"
    printf "#!/bin/sh\necho ran >>%s\n" "$2" >"$1/r/.githooks/pre-commit"
    chmod +x "$1/r/.githooks/pre-commit"'
ok "  held aside and said" sh -c 'grep -q "/r/.githooks.cordon-held-[^/]*$" "$1" &&
    grep -q "\"workspace-held\".*\"pointed\"" "$2"' _ "$log.held" "$log.jsonl"
hooks_top() { repo "$WS/r" && g -C "$WS/r" config core.hooksPath "$WS/r"; }
row "core.hooksPath at the repository's top" hooks_top '
    printf "#!/bin/sh\necho ran >>%s\n" "$2" >"$1/r/pre-commit"
    chmod +x "$1/r/pre-commit"'

include() {
    repo "$WS/r"
    printf '[user]\n\tname = h\n' | as_user tee "$WS/r/.gitconfig" >/dev/null
    g -C "$WS/r" config include.path ../.gitconfig
}
row "include.path to a file of the working tree" include '
    printf "[core]\n\tfsmonitor = \"echo ran >>%s; false\"\n" "$2" >>"$1/r/.gitconfig"'
include_absent() { repo "$WS/r" && g -C "$WS/r" config 'includeIf.onbranch:main.path' ../shared/git.inc; }
row "includeIf.*.path to a file not there yet" include_absent '
    mkdir -p "$1/r/shared"
    printf "[core]\n\tfsmonitor = \"echo ran >>%s; false\"\n" "$2" >"$1/r/shared/git.inc"'

global_hooks() {
    if [ -z "$gconf_saved" ]; then
        if [ -e "$AGENT_HOME/.gitconfig" ]; then
            gconf_saved=$scratch/gitconfig.saved
            cp -p "$AGENT_HOME/.gitconfig" "$gconf_saved"
        else
            gconf_saved=none
        fi
    fi
    repo "$WS/r"
    printf '[core]\n\thooksPath = .hooks\n' >"$AGENT_HOME/.gitconfig"
}
row "a relative core.hooksPath of the user's global config" global_hooks '
    mkdir -p "$1/r/.hooks"
    printf "#!/bin/sh\necho ran >>%s\n" "$2" >"$1/r/.hooks/pre-commit"
    chmod +x "$1/r/.hooks/pre-commit"'
if [ "$gconf_saved" = none ]; then rm -f "$AGENT_HOME/.gitconfig"; else mv "$gconf_saved" "$AGENT_HOME/.gitconfig"; fi
gconf_saved=

# --- repositories hidden from the walk, or redirected ----------------------------
fresh() {
    rm -rf "$WS/app" "$WS"/c? "$WS/.r-old" "$WS/meta" "$WS/meta.old" "$WS/notes" \
        "$WS/HEAD" "$WS/config" "$WS/objects" "$WS/refs" "$WS"/cordon-held-*
    repo "$WS/r"
    mkdir -p "$WS/r/src" "$WS/notes"
    chown "$AGENT" "$WS/r/src" "$WS/notes"
}
AG='git -c user.email=a@a -c user.name=a'
row "a new repository behind a .git symlink, its HEAD a symlink" fresh "
    cd \"\$1\" && $AG init -q app && cd app && $AG commit -q --allow-empty -m i &&
    b=\$(git symbolic-ref HEAD) && mv .git .meta && ln -s .meta .git &&
    rm .meta/HEAD && ln -s \"\$b\" .meta/HEAD &&
    git config core.fsmonitor \"echo ran >>\$2; false\" &&
    printf '#!/bin/sh\\necho ran >>%s\\n' \"\$2\" >.meta/hooks/pre-commit && chmod +x .meta/hooks/pre-commit" \
    "$WS/app"
row "a directory of a repository made a bare one (HEAD a symlink)" fresh '
    cd "$1/r/src" && mkdir -p objects refs/heads hooks && ln -s refs/heads/main HEAD &&
    printf "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n\tfsmonitor = \"echo ran >>%s; false\"\n" "$2" >config' \
    "$WS/r/src"
row "a new repository's filter driver written [filter.x \"y\"]" fresh "
    cd \"\$1\" && $AG init -q app && cd app &&
    printf '[filter.x \"y\"]\\n\\tclean = sh -c \"echo ran >>%s; cat\"\\n' \"\$2\" >>.git/config &&
    echo '* filter=x.y' >.gitattributes && echo data >f" "$WS/app"
row "a new repository's alias without '!' (-c core.fsmonitor=...)" fresh "
    cd \"\$1\" && $AG init -q app &&
    git -C app config alias.st \"-c core.fsmonitor='echo ran >>\$2; false' status\"" "$WS/app"
# Five chains of 21 names of 200 bytes (a shell's cd refuses the long path: python).
row "a new repository behind paths longer than PATH_MAX" fresh "
    cd \"\$1\" && python3 -c 'import os, sys
for k in range(5):
    os.chdir(sys.argv[1]); d = chr(99) + str(k); os.mkdir(d); os.chdir(d)
    for i in range(21):
        os.mkdir(chr(48) * 200); os.chdir(chr(48) * 200)' \"\$1\" &&
    $AG init -q app && git -C app config core.fsmonitor \"echo ran >>\$2; false\"" "$WS/app"
ok "  the walk went on past them, and said what it could not look into" \
    sh -c 'grep "\"workspace-held\"" "$1" | grep "\"incomplete\"" | grep -q "not looked into"' _ "$log.jsonl"
rm -rf "$WS"/c?
global_new() { fresh; global_hooks; rm -rf "$WS/app"; }
row "a new repository, a relative core.hooksPath of the user's global config" global_new '
    cd "$1" && git init -q app && mkdir -p app/.hooks &&
    printf "#!/bin/sh\necho ran >>%s\n" "$2" >app/.hooks/pre-commit && chmod +x app/.hooks/pre-commit' \
    "$WS/app"
if [ "$gconf_saved" = none ]; then rm -f "$AGENT_HOME/.gitconfig"; else mv "$gconf_saved" "$AGENT_HOME/.gitconfig"; fi
gconf_saved=
wt_plain() { fresh; rm -rf "$WS/wt"; g -C "$WS/r" worktree add -q "$WS/wt" >/dev/null 2>&1; }
row "a linked worktree of the start redirected (worktrees/wt a symlink)" wt_plain "
    cd \"\$1/r/.git\" && git clone -q --bare --shared \"\$1/r\" evil.git &&
    git --git-dir=evil.git config core.bare false &&
    git --git-dir=evil.git config core.fsmonitor \"echo ran >>\$2; false\" &&
    mkdir evilwt && cp worktrees/wt/HEAD worktrees/wt/index evilwt/ &&
    echo \"\$1/r/.git/evil.git\" >evilwt/commondir && echo \"\$1/wt/.git\" >evilwt/gitdir &&
    mv worktrees/wt wt-old && ln -s ../evilwt worktrees/wt" "$WS/wt"
submodule() {
    fresh
    rm -rf "$scratch/subsrc"
    repo "$scratch/subsrc"
    g -C "$WS/r" -c protocol.file.allow=always submodule add -q "$scratch/subsrc" sub >/dev/null 2>&1
    g -C "$WS/r" commit -q -m sub
}
row "a submodule of the start redirected (modules a symlink)" submodule "
    cd \"\$1/r/.git\" && cp -r modules/sub evilsub &&
    git config --file evilsub/config core.worktree \"\$1/r/sub\" &&
    git config --file evilsub/config core.fsmonitor \"echo ran >>\$2; false\" &&
    mkdir evilmods && ln -s ../evilsub evilmods/sub && mv modules modules-old && ln -s evilmods modules" \
    "$WS/r"
row "a .git symlink to a repository hidden inside .git" fresh "
    cd \"\$1/r\" && git clone -q --bare --shared \"\$1/r\" .git/x.git &&
    git --git-dir=.git/x.git config core.bare false &&
    git --git-dir=.git/x.git config core.fsmonitor \"echo ran >>\$2; false\" &&
    ln -s \"\$1/r/.git/x.git\" src/.git" "$WS/r/src"

row "a whole git directory made in .git/worktrees, a new .git file to it" fresh "
    git init -q --bare \"\$1/r/.git/worktrees/evil\" &&
    git --git-dir=\"\$1/r/.git/worktrees/evil\" config core.bare false &&
    git --git-dir=\"\$1/r/.git/worktrees/evil\" config core.fsmonitor \"echo ran >>\$2; false\" &&
    echo 'gitdir: ../.git/worktrees/evil' >\"\$1/r/src/.git\"" "$WS/r/src"
row "a repository whose objects and refs are executable files" fresh '
    cd "$1/r/src" && echo "ref: refs/heads/main" >HEAD && printf "#!/bin/sh\n" >objects &&
    cp objects refs && chmod +x objects refs &&
    printf "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n\tfsmonitor = \"echo ran >>%s; false\"\n" "$2" >config' \
    "$WS/r/src"
row "a .git file whose path holds a line break" fresh "
    cd \"\$1/r\" && git init -q --bare .git/x && git --git-dir=.git/x config core.bare false &&
    git --git-dir=.git/x config core.fsmonitor \"echo ran >>\$2; false\" &&
    d=\$(printf '.git\\nX') && d=\${d%X} && mkdir \"\$d\" &&
    printf 'gitdir: ../.git\\n/../.git/x\\n' >src/.git" "$WS/r/src"
sub_gone() { submodule; g -C "$WS/r" submodule deinit -q -f sub >/dev/null 2>&1; rm -rf "$WS/r/.git/modules/sub"; }
row "a submodule's git directory made of a HEAD and a commondir" sub_gone "
    cd \"\$1/r/.git\" && git clone -q --bare \"\$1/r\" xc && rm xc/HEAD &&
    git config --file xc/config core.fsmonitor \"echo ran >>\$2; false\" &&
    mkdir -p modules/sub && echo 'ref: refs/heads/main' >modules/sub/HEAD &&
    echo ../../xc >modules/sub/commondir" "$WS/r"
row "the held directory's name taken beforehand (the session's name is the agent's)" fresh "
    cd \"\$1\" && $AG init -q app && git -C app config core.fsmonitor \"echo ran >>\$2; false\" &&
    mkdir -p \"app/.git/cordon-held-\$CORDON_SESSION/config/x\" \"app/.git/config.cordon-new-\$CORDON_SESSION/x\"" \
    "$WS/app"

row "the workspace's top made a repository (a directory of it the human works in)" fresh '
    cd "$1" && mkdir -p objects refs/heads && echo "ref: refs/heads/main" >HEAD &&
    printf "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n\tfsmonitor = \"echo ran >>%s; false\"\n" "$2" >config' \
    "$WS/notes"
row "a repository below a directory shaped as a bare one" fresh "
    cd \"\$1/r\" && mkdir tools && cd tools && echo 'ref: refs/heads/main' >HEAD && mkdir objects refs &&
    $AG init -q app && git -C app config core.fsmonitor \"echo ran >>\$2; false\"" "$WS/r/tools/app"
row "a repository of the start renamed, a clone inside its .git in its place (a symlink)" fresh "
    cd \"\$1\" && mv r .r-old && git clone -q .r-old .r-old/.git/x/r &&
    git -C .r-old/.git/x/r config core.fsmonitor \"echo ran >>\$2; false\" && ln -s .r-old/.git/x/r r" \
    "$WS/r"
separate() {
    fresh
    rm -rf "$WS/r"
    mkdir -p "$WS/r" "$WS/meta"
    chown "$AGENT" "$WS/r" "$WS/meta"
    g init -q --separate-git-dir "$WS/meta/r.git" "$WS/r"
    g -C "$WS/r" commit -q --allow-empty -m init
}
row "a separate git directory's parent renamed, its path led to a clone inside it" separate "
    cd \"\$1\" && mv meta meta.old && git clone -q --bare meta.old/r.git meta.old/r.git/hide/r.git &&
    git --git-dir=meta.old/r.git/hide/r.git config core.bare false &&
    git --git-dir=meta.old/r.git/hide/r.git config core.fsmonitor \"echo ran >>\$2; false\" &&
    ln -s meta.old/r.git/hide meta" "$WS/r"
row "a linked worktree whose commondir holds a line break" fresh "
    cd \"\$1/r/.git\" && d=\$(printf 'worktrees/..\\nfooX') && d=\${d%X} &&
    git clone -q --bare \"\$1/r\" \"\$d\" && rm \"\$d/HEAD\" &&
    git config --file \"\$d/config\" core.bare false &&
    git config --file \"\$d/config\" core.fsmonitor \"echo ran >>\$2; false\" &&
    mkdir worktrees/evil && cp HEAD worktrees/evil/ && echo \"\$1/r/src/.git\" >worktrees/evil/gitdir &&
    printf '../..\\nfoo\\n' >worktrees/evil/commondir &&
    echo \"gitdir: \$1/r/.git/worktrees/evil\" >\"\$1/r/src/.git\"" "$WS/r/src"
fresh

# "../.." then 58 line breaks then a path: git reads it all (a helper in
# the workspace writes the names with line breaks).
cat >"$WS/mk63.py" <<'EOF2'
import os, sys
w = sys.argv[1] + "/r/"
nl = "\n"
os.makedirs(w + ".git/worktrees/evil")
os.mkdir(w + ".git/worktrees/.." + nl * 58)
open(w + ".git/worktrees/evil/HEAD", "w").write("ref: refs/heads/main" + nl)
open(w + ".git/worktrees/evil/gitdir", "w").write(w + "src/.git" + nl)
open(w + ".git/worktrees/evil/commondir", "w").write("../.." + nl * 58 + "/../../evil" + nl)
open(w + "src/.git", "w").write("gitdir: " + w + ".git/worktrees/evil" + nl)
EOF2
row "a linked worktree whose commondir goes on past its first 63 bytes" fresh "
    cd \"\$1/r/.git\" && git clone -q --bare \"\$1/r\" evil && rm evil/HEAD &&
    git config --file evil/config core.bare false &&
    git config --file evil/config core.fsmonitor \"echo ran >>\$2; false\" &&
    python3 \"\$1/mk63.py\" \"\$1\"" "$WS/r/src"
many_hooks() { rm -rf "$WS/app"; }
row "a new repository with 200 hooks (said once, held whole)" many_hooks "
    cd \"\$1\" && $AG init -q app && cd app/.git/hooks &&
    for i in \$(seq 199); do : >h\$i; done &&
    printf '#!/bin/sh\\necho ran >>%s\\n' \"\$2\" >pre-commit && chmod +x pre-commit" "$WS/app"
ok "  one record for the directory" sh -c '[ "$(grep -c "\"workspace-held\".*\"hook\"" "$1")" = 1 ]' _ "$log.jsonl"
fresh

# A worktree's commondir that leads nowhere: holding it must not leave a
# whole repository behind (git would take the directory for one).  No
# control: without cordon git refuses the broken pointer.
fresh
printf '%s\n' "cd \"\$1/r/.git\" && git clone -q --bare \"\$1/r\" worktrees/evil &&
    git config --file worktrees/evil/config core.bare false &&
    git config --file worktrees/evil/config core.fsmonitor \"echo ran >>\$2; false\" &&
    echo x >worktrees/evil/commondir && echo \"gitdir: \$1/r/.git/worktrees/evil\" >\"\$1/r/src/.git\" &&
    echo attack-done" >"$WS/attack.sh"
rm -f "$marks/held-whole"
o=$("$cordon" run -q --user "$AGENT" --workspace "$WS" --approve deny --audit "$scratch/held-whole.jsonl" \
    -- /bin/sh "$WS/attack.sh" "$WS" "$marks/held-whole" 2>/dev/null </dev/null)
human "$WS/r/src"
ok "a worktree's bad commondir held: the directory left is stripped as a repository" \
    sh -c 'test "$1" = attack-done && test ! -e "$2"' _ "$o" "$marks/held-whole"
fresh

# --- no false alarm: normal work on legitimate layouts holds nothing -------------------
quiet() {  # quiet NAME WORKSPACE DIR: a session committing in DIR; nothing held, hooks intact
    printf 'cd "%s" && git -c user.email=a@a -c user.name=a commit -q --allow-empty -m agent && echo attack-done\n' "$3" \
        >"$2/quiet.sh"
    o=$("$cordon" run -q --user "$AGENT" --workspace "$2" --approve deny --audit "$scratch/$1.jsonl" \
        -- /bin/sh "$2/quiet.sh" 2>"$scratch/$1.err" </dev/null)
    rm -f "$2/quiet.sh"
    ok "no false alarm, $1: the agent's work done, nothing held ($(grep -c workspace-held "$scratch/$1.jsonl"))" \
        sh -c 'test "$1" = attack-done && ! grep -q workspace-held "$2"' _ "$o" "$scratch/$1.jsonl"
}
submodule
rm -rf "$WS/wt"
g -C "$WS/r" worktree add -q "$WS/wt" >/dev/null 2>&1
g -C "$WS/wt" -c protocol.file.allow=always submodule update -q --init >/dev/null 2>&1
mod=$(ls -d "$WS"/r/.git/worktrees/wt/modules/sub 2>/dev/null)
hook_text /dev/null >"$mod/hooks/pre-push" && chmod +x "$mod/hooks/pre-push" && chown "$AGENT" "$mod/hooks/pre-push"
quiet "submodules of a linked worktree" "$WS" "$WS/wt"
ok "  its submodule's hook is where the human put it" test -x "$mod/hooks/pre-push"
WS2=$(mktemp -d /var/tmp/cordon-ws.XXXXXX)
chown "$AGENT" "$WS2"
chmod 0755 "$WS2"
rm -rf "$scratch/bsrc"
repo "$scratch/bsrc"
rmdir "$WS2" && g clone -q --bare "$scratch/bsrc" "$WS2" && chmod 0755 "$WS2"
g -C "$WS2" worktree add -q "$WS2/main" >/dev/null 2>&1
hook_text /dev/null >"$WS2/hooks/pre-push" && chmod +x "$WS2/hooks/pre-push" && chown "$AGENT" "$WS2/hooks/pre-push"
quiet "a workspace that is a bare repository with its worktree" "$WS2" "$WS2/main"
ok "  its hook is where the human put it" test -x "$WS2/hooks/pre-push"
rm -rf "$WS2"
fresh

# The agent's own work on such a repository still goes on.
husky
printf 'cd "$1/r" && echo y >>file && git -c user.email=a@a -c user.name=a commit -q -am agent --no-verify && echo committed\n' \
    >"$WS/work.sh"
o=$("$cordon" run -q --user "$AGENT" --workspace "$WS" --approve deny --audit "$scratch/work.jsonl" \
    -- /bin/sh "$WS/work.sh" "$WS" 2>/dev/null </dev/null)
ok "the agent still commits in a repository with hooks in its working tree ($o)" test "$o" = committed

done_testing
