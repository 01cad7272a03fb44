#!/bin/bash
# Streams through a session, against the same streams bare, one run (issue #36):
#   - a pipe: 1 GiB from /dev/zero into the agent's stdin, out of its
#     stdout, and between two processes inside the session; timed by
#     tools/bench/drain from the stream's first byte to its last (the
#     session's start and teardown are not the stream's), and whole (wall,
#     both included).  Target: the session's throughput at least 0.95x bare's.
#   - a terminal: `cat` of a 200 MB text file with colour sequences, with
#     cordon's stdout a pseudo-terminal that tools/bench/ptyrun reads as
#     fast as it comes, against the same cat under the same kind of
#     terminal.  In a session the agent writes to a pty of its own and
#     the supervisor relays through the output filter (tty_guard.c).
#     Target: at most 1.1x bare's time.
# Rounds are interleaved (each round runs every column once).  With
# CORDON_B=PATH a second cordon binary (say, a build before a change) runs
# in the same rounds, as its own rows: an A/B in one run.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/tools/bench/lib.sh"
. "$here/tests/lib.sh" >/dev/null
cordon=$BUILD/cordon
drain=$BUILD/tools/bench/drain
ptyrun=$BUILD/tools/bench/ptyrun

bench_section "Streams (a pipe and a terminal through a session)"
new_workspace
work=$(mktemp -d /var/cordon-bench.XXXXXX)
trap 'rm -rf "$WS" "$work"' EXIT
cp "$drain" "$WS/drain"
N=${STREAMS_N:-5}
MB=${STREAMS_MB:-1024}
TTY_MB=${STREAMS_TTY_MB:-200}

bins=("$cordon")
names=("cordon")
if [ -n "${CORDON_B:-}" ]; then
    bins+=("$CORDON_B")
    names+=("cordon B ($CORDON_B)")
fi
# crun BIN AUDIT CMD...: one session of the default profile, as the agent.
crun() {
    local bin=$1 a=$2
    shift 2
    "$bin" run -q --user "$AGENT" --workspace "$WS" --approve deny --audit "$a" -- "$@" \
        2>>"$work/err"
}
for b in "${bins[@]}"; do crun "$b" "$work/warm.jsonl" /bin/true >/dev/null 2>&1; done

# The terminal's text: lines of coloured and plain text, the kind a build
# or a test run prints, readable by the agent.
awk -v mb="$TTY_MB" 'BEGIN {
    for (i = 0; s < mb * 1048576; i++) {
        l = sprintf("\033[3%dmline %d:\033[0m the quick brown fox jumps over the lazy dog \033[1m%d\033[0m", i % 7, i, i * 7)
        print l; s += length(l) + 1 } }' >"$WS/text"
chmod 0644 "$WS/text"

now_ns() { date +%s%N; }
# One timed stream: appends "STREAM_MS WALL_MS" to the file $1.
pipe_in() {         # pipe_in OUT [BIN]: head | [cordon run --] drain
    local t0 t1 f=$work/d.$RANDOM
    t0=$(now_ns)
    if [ -z "${2:-}" ]; then head -c "${MB}M" /dev/zero | "$drain" "$f"
    else head -c "${MB}M" /dev/zero | crun "$2" "$work/a.$RANDOM" "$WS/drain" "$WS/d.out"; cp "$WS/d.out" "$f"; fi
    t1=$(now_ns)
    echo "$(cut -d' ' -f2 "$f") $(( (t1 - t0) / 1000000 ))" >>"$1"
}
pipe_out() {        # pipe_out OUT [BIN]: [cordon run --] head | drain
    local t0 t1 f=$work/d.$RANDOM
    t0=$(now_ns)
    if [ -z "${2:-}" ]; then head -c "${MB}M" /dev/zero | "$drain" "$f"
    else crun "$2" "$work/a.$RANDOM" head -c "${MB}M" /dev/zero </dev/null | "$drain" "$f"; fi
    t1=$(now_ns)
    echo "$(cut -d' ' -f2 "$f") $(( (t1 - t0) / 1000000 ))" >>"$1"
}
pipe_inside() {     # pipe_inside OUT [BIN]: [cordon run --] sh -c 'head | drain'
    local t0 t1 f=$work/d.$RANDOM sh="head -c ${MB}M /dev/zero | $WS/drain $WS/d.out"
    t0=$(now_ns)
    if [ -z "${2:-}" ]; then sh -c "$sh"
    else crun "$2" "$work/a.$RANDOM" sh -c "$sh" </dev/null; fi
    t1=$(now_ns)
    cp "$WS/d.out" "$f"
    echo "$(cut -d' ' -f2 "$f") $(( (t1 - t0) / 1000000 ))" >>"$1"
}
term() {            # term OUT [BIN]: ptyrun [cordon run --] cat text
    local r
    if [ -z "${2:-}" ]; then r=$("$ptyrun" cat "$WS/text")
    else r=$("$ptyrun" "$2" run -q --user "$AGENT" --workspace "$WS" --approve deny \
                 --audit "$work/a.$RANDOM" -- cat "$WS/text"); fi
    read -r ms bytes _ cpu <<<"$r"
    echo "$ms $cpu $bytes" >>"$1"
}

for ((r = 0; r < N; r++)); do
    for kind in pipe_in pipe_out pipe_inside term; do
        "$kind" "$work/$kind.bare"
        for i in "${!bins[@]}"; do "$kind" "$work/$kind.$i" "${bins[$i]}"; done
    done
done

col() { cut -d' ' -f"$2" "$1" | median; }
mibs() { awk -v ms="$1" -v mb="$2" 'BEGIN { printf "%.0f MiB/s", mb / (ms / 1000) }'; }
echo "Default profile, \`--approve deny\`, the agent \`$AGENT\`; medians of $N interleaved"
echo "rounds.  Stream: from the first byte to the last (tools/bench/drain); whole:"
echo "wall time with the session's start and teardown.  Ratio: bare's time over the session's"
echo "(throughput, 1.00x is bare)."
echo
row "pipe, ${MB} MiB" "stream" "throughput" "whole" "ratio (stream)" "ratio (whole)" "target"
row "---" "---" "---" "---" "---" "---" "---"
for kind in pipe_in pipe_out pipe_inside; do
    case $kind in
    pipe_in) what="into the agent: \`head | cordon run -- drain\`" ;;
    pipe_out) what="out of the agent: \`cordon run -- head | drain\`" ;;
    pipe_inside) what="inside the session: \`cordon run -- sh -c 'head | drain'\`" ;;
    esac
    bs=$(col "$work/$kind.bare" 1) bw=$(col "$work/$kind.bare" 2)
    row "$what, bare" "$bs ms" "$(mibs "$bs" "$MB")" "$bw ms" "1.00x" "1.00x" ""
    for i in "${!bins[@]}"; do
        s=$(col "$work/$kind.$i" 1) w=$(col "$work/$kind.$i" 2)
        row "$what, ${names[$i]}" "$s ms" "$(mibs "$s" "$MB")" "$w ms" "$(ratio "$bs" "$s")" \
            "$(ratio "$bw" "$w")" ">= 0.95x"
    done
done
echo
row "terminal, \`cat\` of ${TTY_MB} MB of coloured text" "time" "throughput" "over bare" "target" \
    "CPU (user + system)"
row "---" "---" "---" "---" "---" "---"
bt=$(col "$work/term.bare" 1)
row "bare, stdout a pty" "$bt ms" "$(mibs "$bt" "$TTY_MB")" "1.00x" "" "$(col "$work/term.bare" 2) ms"
for i in "${!bins[@]}"; do
    t=$(col "$work/term.$i" 1)
    short=$(cut -d' ' -f3 "$work/term.$i" | sort -u | tr '\n' ' ')
    note=
    [ "$short" = "$(cut -d' ' -f3 "$work/term.bare" | sort -u | tr '\n' ' ')" ] ||
        note=" (bytes seen: $short)"
    row "${names[$i]}, stdout a pty$note" "$t ms" "$(mibs "$t" "$TTY_MB")" "$(ratio "$t" "$bt")" "<= 1.10x" \
        "$(col "$work/term.$i" 2) ms"
done
echo
echo "The terminal's bytes: bare, ONLCR adds a CR to each line; in a session the agent's"
echo "pty does that and cordon's own terminal is raw, so both show the same bytes.  CPU:"
echo "of the command and the processes it waited for (bare: cat; a session: cordon, its"
echo "watchdog and the agent's tree), not the kernel's workers that move a pty's buffers."
