#!/bin/bash
# `cordon policy draft` (issue #34) against the scripted model server
# (tests/agents/model_server.py, HTTPS on loopback with the test CA of
# tests/lib_net.sh), in a network namespace of its own where only loopback
# exists: a draft that compiles is shown (sentences, rules, scenarios) and
# written only with --yes; an unreadable sentence is shown with its error
# and dropped, after one more question carrying the errors; a model that
# answers no sentence of the language, or no answer of the provider's
# format, fails with a clear error and writes nothing; the key reaches the
# endpoint only and never the draft's output.  The OpenAI format too.
# The key is held by the draft's own credential proxy (a `cordon
# http-proxy` child): while a slow model answers, the drafting process's
# environment and memory are searched for it (the proxy's memory holds it,
# so the search can find it), and the proxy refuses every other host and
# endpoint; a proxy that cannot start and an endpoint whose certificate is
# not trusted are clear errors that write nothing.
set -u
if [ -z "${DRAFT_NETNS:-}" ]; then
    [ "$(id -u)" -eq 0 ] || { echo "1..0 # SKIP needs root (a network namespace)"; exit 77; }
    command -v unshare >/dev/null || { echo "1..0 # SKIP needs unshare(1)"; exit 77; }
    DRAFT_NETNS=1 exec unshare -n bash -c 'ip link set lo up && exec bash "$0"' "$0"
fi
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib_net.sh"
net_needs
here=$(cd "$(dirname "$0")/../.." && pwd)
cordon=$BUILD/cordon
d=$(mktemp -d)
pids=
cleanup() { for p in $pids; do kill "$p" 2>/dev/null; done; rm -rf "$d"; }
trap cleanup EXIT
net_test_ca "$d" || { echo "Bail out! the test CA: $(tail -n 1 "$d/ca.err")"; exit 1; }
key=sk-ant-cordon-draft-test-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')

# serve NAME FINAL [DELAY]: a model server in $d/NAME whose every answer is FINAL (after
# DELAY seconds); its port in $port.
serve() {
    mkdir -p "$d/$1"
    cp "$d/server.pem" "$d/server.key" "$d/$1/"
    $py -c 'import json,sys; json.dump({"steps": [], "final": sys.argv[2], "plain": True,
                                        "delay": float(sys.argv[3])}, open(sys.argv[1], "w"))' \
        "$d/$1/script.json" "$2" "${3:-0}"
    $py "$here/tests/agents/model_server.py" "$d/$1" "$d/$1/script.json" & pids="$pids $!"
    # Up to 30 s: python3 starts slowly on a loaded machine.
    for _ in $(seq 600); do [ -e "$d/$1/port" ] && break; sleep 0.05; done
    read -r port <"$d/$1/port" || { echo "Bail out! the model server did not start"; exit 1; }
}

# draft NAME ARGS...: the draft against server NAME; stdout, stderr and status in $d/NAME.
draft() {
    local n=$1; shift
    (cd "$d/$n" && env -i PATH=/usr/bin:/bin SSL_CERT_FILE="$d/ca.pem" ANTHROPIC_API_KEY="$key" \
        OPENAI_API_KEY="$key" "$cordon" policy draft --endpoint "https://localhost:$port" "$@" \
        >out 2>err </dev/null; echo $? >rc)
}

good='The agent may read and change anything in the workspace.
Never read my SSH keys or cloud credentials.
Ask me before any git push.'
serve good "$good"
draft good --model anthropic/claude-sonnet-4-5 --yes -o policy.en "let it work in my project," \
    "keep it away from my keys, and ask me before pushing"
ok "a draft that compiles exits 0" test "$(cat "$d/good/rc")" = 0
ok "it is written with --yes, as the model's sentences" \
    test "$(cat "$d/good/policy.en" 2>&1)" = "$good"
ok "the written draft is a policy cordon loads" "$cordon" policy check "$d/good/policy.en"
ok "the human is shown the sentences" grep -qx 'Ask me before any git push.' "$d/good/out"
ok "and the rules they compile to, in the compiler's words" \
    grep -q '^# The rules they compile to' "$d/good/out"
ok "and the scenarios they yield" grep -q '"expect"' "$d/good/out"
ok "the question went to the Messages API with the user's words" \
    grep -q 'keep it away from my keys' "$d/good/requests.jsonl"
ok "with the language's documented forms in the prompt" \
    grep -q 'Never allow a force push' "$d/good/requests.jsonl"
ok "the endpoint received the key in x-api-key" \
    $py -c 'import json,sys; r=json.loads(open(sys.argv[1]).readline()); sys.exit(r["headers"].get("x-api-key") != sys.argv[2])' \
    "$d/good/requests.jsonl" "$key"
ok "the key is in neither the draft's output nor its errors" \
    sh -c '! grep -q "$1" "$2/out" "$2/err" "$2/policy.en"' _ "$key" "$d/good"

# While a slow model answers: the drafting process and its credential proxy, looked at.
# found PID NEEDLE: is NEEDLE in a readable mapping of PID's memory (root reads any)?
found() {
    $py - "$1" "$2" <<'PY'
import sys
pid, needle = sys.argv[1], sys.argv[2].encode()
with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", 0) as mem:
    for line in maps:
        addr, perms = line.split()[:2]
        lo, hi = (int(x, 16) for x in addr.split("-"))
        if perms[0] != "r":
            continue
        try:
            mem.seek(lo)
            if needle in mem.read(hi - lo):
                sys.exit(0)
        except (OSError, ValueError, OverflowError):
            continue
sys.exit(1)
PY
}
not() { ! "$@"; }
serve slow "$good" 4
(cd "$d/slow" && exec env -i PATH=/usr/bin:/bin SSL_CERT_FILE="$d/ca.pem" ANTHROPIC_API_KEY="$key" \
    OPENAI_API_KEY="$key" "$cordon" policy draft --endpoint "https://localhost:$port" --yes \
    -o policy.en "let it work in my project" >out 2>err </dev/null) & dpid=$!
for _ in $(seq 600); do [ -s "$d/slow/requests.jsonl" ] && break; sleep 0.05; done
ppid_=$(pgrep -P "$dpid" | head -n 1)
ok "the draft's question reached the model while the draft runs" \
    test -s "$d/slow/requests.jsonl" -a -n "$ppid_"
ok "its credential proxy is a child of its own: cordon http-proxy" \
    sh -c 'tr "\0" " " <"/proc/$1/cmdline" | grep -q " http-proxy "' _ "$ppid_"
ok "the key is not in the drafting process's environment" \
    sh -c '! grep -qaF "$1" "/proc/$2/environ"' _ "$key" "$dpid"
ok "nor anywhere in its memory" not found "$dpid" "$key"
ok "which holds the sentinel that stands for it (the search finds what is there)" \
    found "$dpid" cordon-sentinel-
ok "the proxy holds the key, the search finds it there" found "$ppid_" "$key"
ok "but not in its environment, wiped once read" \
    sh -c '! grep -qaF "$1" "/proc/$2/environ"' _ "$key" "$ppid_"
paddr=$(ss -Hltnp 2>/dev/null | grep "pid=$ppid_," | awk '{print $4}' | head -n 1)
if command -v curl >/dev/null && [ -n "$paddr" ]; then
    ok "through the draft's proxy, another host is refused" \
        test "$(curl -s -o /dev/null -w '%{http_connect}' -x "http://$paddr" https://example.com/)" = 403
    ok "and so is the model's endpoint asked for directly, without the credential" \
        test "$(curl -s -o /dev/null -w '%{http_connect}' -x "http://$paddr" "https://localhost:$port/v1/messages")" = 403
    ok "the provider's host: an endpoint the draft does not use is refused" sh -c '
        curl -sk -x "http://$1" -H "x-api-key: x" https://api.anthropic.com/v1/models -o "$2" -w "%{http_code}" |
            grep -qx 403 && grep -q "is not an endpoint of credential model" "$2"' _ "$paddr" "$d/slow/probe"
    ok "and the draft's endpoint without the sentinel" sh -c '
        curl -sk -x "http://$1" -H "x-api-key: x" -d "{}" https://api.anthropic.com/v1/messages -o "$2" -w "%{http_code}" |
            grep -qx 403 && grep -q "does not hold this session.s sentinel" "$2"' _ "$paddr" "$d/slow/probe"
else
    for _ in 1 2 3 4; do skip "needs curl(1) and ss(8) to ask the draft's proxy"; done
fi
wait "$dpid"; drc=$?
ok "the slow draft still drafts: exit 0, written" \
    sh -c 'test "$2" = 0 && test "$(cat "$1/policy.en")" = "$3"' _ "$d/slow" "$drc" "$good"
ok "the model received the draft's request only, with the real key" \
    $py -c 'import json,sys; r=[json.loads(l) for l in open(sys.argv[1])]; sys.exit(len(r) != 1 or r[0]["headers"].get("x-api-key") != sys.argv[2])' \
    "$d/slow/requests.jsonl" "$key"
ok "the proxy is gone with the draft" sh -c '! kill -0 "$1" 2>/dev/null' _ "$ppid_"

draft good --model anthropic/claude-sonnet-4-5 -o again.en "let it work in my project"
ok "without --yes and without a terminal, nothing is written" \
    sh -c 'test "$(cat "$1/rc")" = 1 && ! test -e "$1/again.en" && grep -q "nothing written" "$1/err"' _ "$d/good"
ok "but the draft is still shown" grep -qx 'Ask me before any git push.' "$d/good/out"
draft good --model anthropic/claude-sonnet-4-5 --yes -o policy.en "again"
ok "an existing policy is never overwritten" \
    sh -c 'test "$(cat "$1/rc")" = 1 && grep -q "it exists" "$1/err" && test "$(cat "$1/policy.en")" = "$2"' _ \
    "$d/good" "$good"

# At a terminal the human is asked; only "y" writes.
at_tty() {
    local n=$1 answer=$2; shift 2
    (cd "$d/$n" && printf '%s\n' "$answer" | env -i PATH=/usr/bin:/bin TERM=dumb SSL_CERT_FILE="$d/ca.pem" \
        ANTHROPIC_API_KEY="$key" script -qec "$cordon policy draft --endpoint https://localhost:$port $*" \
        /dev/null >tty.out 2>&1; echo $? >rc)
}
if command -v script >/dev/null; then
    at_tty good n -o tty-no.en words
    ok "at a terminal, an answer other than y writes nothing" \
        sh -c 'test "$(cat "$1/rc")" = 1 && ! test -e "$1/tty-no.en" && grep -q "Write these sentences to tty-no.en?" "$1/tty.out"' _ "$d/good"
    at_tty good y -o tty-yes.en words
    ok "at a terminal, y writes the draft" \
        sh -c 'test "$(cat "$1/rc")" = 0 && test "$(cat "$1/tty-yes.en")" = "$2"' _ "$d/good" "$good"
else
    skip "needs script(1) for a terminal"
    skip "needs script(1) for a terminal"
fi

serve mixed 'The agent may read /etc.
The agent may rad the kitchen sink.
Ask me before any git push.'
draft mixed --model anthropic/claude-sonnet-4-5 --yes -o policy.en "read /etc and ask before pushing"
ok "a draft with an unreadable sentence still writes what compiles" \
    test "$(cat "$d/mixed/rc")" = 0
ok "the unreadable sentence is dropped" \
    test "$(cat "$d/mixed/policy.en" 2>&1)" = "$(printf 'The agent may read /etc.\nAsk me before any git push.')"
ok "and shown with the compiler's error" \
    sh -c 'grep -q "line 2: The agent may rad the kitchen sink." "$1" && grep -q "error (column" "$1"' _ "$d/mixed/err"
ok "the model was asked once more with the errors, and no more" \
    sh -c 'test "$(wc -l <"$1")" = 2 && tail -n 1 "$1" | grep -q "refused these lines"' _ "$d/mixed/requests.jsonl"

serve escapes $'The agent may read /etc.\n# \e[1A\e[2Kcomment that hides the line above\nThe agent may read /srv/a\u202e.txt.\nAsk me before any git push.'
draft escapes --model anthropic/claude-sonnet-4-5 --yes -o policy.en "read /etc"
ok "lines with terminal controls or bidirectional overrides are dropped" \
    test "$(cat "$d/escapes/policy.en" 2>&1)" = "$(printf 'The agent may read /etc.\nAsk me before any git push.')"
ok "and shown escaped, never raw" sh -c 'grep -q "x1b\[1A" "$1" && grep -q "xe2\\\\x80\\\\xae" "$1" &&
    ! grep -q "$(printf "\033")" "$1" "$2"' _ "$d/escapes/err" "$d/escapes/out"

serve garbage "I'm sorry, but as an AI I cannot write security policies."
draft garbage --model anthropic/claude-sonnet-4-5 --yes -o policy.en "anything"
ok "a model that answers no sentence of the language: non-zero" test "$(cat "$d/garbage/rc")" = 1
ok "with a clear error, and nothing written" \
    sh -c 'grep -q "holds no sentence of the language" "$1/err" && ! test -e "$1/policy.en"' _ "$d/garbage"

draft garbage --model anthropic/claude-sonnet-4-5 --endpoint "https://localhost:$port/nowhere" \
    --yes -o policy.en "anything"
ok "an endpoint that is no Messages API: non-zero, the HTTP error named, nothing written" \
    sh -c 'test "$(cat "$1/rc")" = 1 && grep -q "HTTP 404" "$1/err" && ! test -e "$1/policy.en"' _ "$d/garbage"

serve openai 'Never read files named .env anywhere.'
draft openai --model openai/gpt-4.1 --yes -o policy.en "never let it see .env files"
ok "the OpenAI chat completions format drafts too" \
    test "$(cat "$d/openai/policy.en" 2>&1)" = 'Never read files named .env anywhere.'
ok "with the key as a bearer token" grep -q "Bearer $key" "$d/openai/requests.jsonl"

ok "an untrusted endpoint certificate is refused by the proxy, named, nothing written" sh -c '
    cd "$1/openai" && env -i PATH=/usr/bin:/bin OPENAI_API_KEY=k "$2" policy draft --model openai/x \
        --endpoint "https://localhost:$3" --yes -o untrusted.en words 2>err2
    test $? = 1 && grep -q "failed verification" err2 && ! test -e untrusted.en' _ "$d" "$cordon" "$port"
ok "--upstream-ca names the CA the endpoint is verified against" sh -c '
    cd "$1/openai" && env -i PATH=/usr/bin:/bin OPENAI_API_KEY=k "$2" policy draft --model openai/x \
        --endpoint "https://localhost:$3" --upstream-ca "$1/ca.pem" --yes -o gw.en words 2>/dev/null &&
        test "$(cat gw.en)" = "Never read files named .env anywhere."' _ "$d" "$cordon" "$port"
echo "not a certificate" >"$d/not-a-ca.pem"
mkdir -p "$d/tmp"
ok "a credential proxy that cannot start: non-zero, said, nothing written, nothing left" sh -c '
    cd "$1/openai" && env -i PATH=/usr/bin:/bin TMPDIR="$1/tmp" OPENAI_API_KEY=k "$2" policy draft \
        --model openai/x --endpoint "https://localhost:$3" --upstream-ca "$1/not-a-ca.pem" --yes \
        -o nostart.en words 2>err3
    test $? = 1 && grep -q "the credential proxy did not start" err3 &&
        grep -q "cannot load the upstream.s CA" err3 && ! test -e nostart.en &&
        test -z "$(ls -A "$1/tmp")"' _ "$d" "$cordon" "$port"
ok "an endpoint that is not https is refused before any key is sent" sh -c '
    env -i OPENAI_API_KEY=k "$1" policy draft --model openai/x --endpoint http://localhost:1 words 2>&1 |
        grep -q "must start with https://"' _ "$cordon"
ok "an endpoint the proxy's policy would refuse is refused first (dot segments), exit 2" sh -c '
    env -i OPENAI_API_KEY=k "$1" policy draft --model openai/x --endpoint https://localhost:1/a/../b words 2>"$2"
    test $? = 2 && grep -q "dot segments" "$2"' _ "$cordon" "$d/dots.err"
ok "a missing key is a clear error" sh -c '
    env -i "$1" policy draft --model anthropic/x words 2>&1 | grep -q "ANTHROPIC_API_KEY is not set"' _ "$cordon"
ok "an unknown provider is a clear error" sh -c '
    env -i "$1" policy draft --model mistral/x words 2>&1 | grep -q "unknown provider"' _ "$cordon"
done_testing
