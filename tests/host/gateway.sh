#!/bin/bash
# LLM gateways: `cordon run --upstream CRED=URL --upstream-ca FILE` (and a
# credential's "upstream" in a policy) sends a credential's requests to a
# gateway on another host, port or private address (here the local upstream
# on loopback, tests/net/upstream.py), with the shipped profile unchanged:
# the agent asks the provider's real host through the credential proxy, the
# gateway receives the real key with its own name in Host and its path
# prefix; nothing else the agent asks reaches the gateway; a gateway that
# fails verification is refused; bad settings fail the start (exit 125)
# with the reason, and a bad "upstream" in a policy is an error at its line.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/tests/lib.sh"
. "$here/tests/lib_run.sh"
. "$here/tests/lib_net.sh"
net_needs
[ "$(id -u)" -eq 0 ] || skip_all "needs root (cordon run)"
agent_user || skip_all "needs an agent user"

t=$(mktemp -d /var/cordon-gw.XXXXXX)
pids=
trap 'kill $pids 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$t" "${WS:-/nonexistent}"' EXIT
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY no_proxy NO_PROXY ALL_PROXY all_proxy
chmod 0755 "$t"
net_upstream "$t"
new_workspace

REAL=sk-ant-gw-$(head -c 18 /dev/urandom | base64 | tr '+/' '-_')
export ANTHROPIC_API_KEY=$REAL
cat >"$WS/ask.sh" <<'EOS'
#!/bin/sh
curl -sS -m 20 -H "x-api-key: $ANTHROPIC_API_KEY" -H 'content-type: application/json' \
    -d '{"from":"gw"}' https://api.anthropic.com/v1/messages; echo
curl -sS -m 20 -H "x-api-key: $ANTHROPIC_API_KEY" https://api.anthropic.com/v1/admin; echo
EOS
chmod 0755 "$WS/ask.sh"

in_session --upstream anthropic=https://localhost:$up/gw --upstream-ca "$t/ca.pem" -- ./ask.sh
got=$(grep -F '"path": "/gw/v1/messages"' "$t/requests.jsonl" 2>/dev/null | tail -n 1)
ok "a request for api.anthropic.com reaches the gateway, under its prefix" \
    sh -c "printf '%s' '$got' | grep -q '\"path\": \"/gw/v1/messages\"'"
ok "the gateway gets the real key, never the sentinel" \
    sh -c "printf '%s' '$got' | grep -qF '$REAL' && ! printf '%s' '$got' | grep -q cordon-sentinel-"
ok "the gateway's own name is in Host" sh -c "printf '%s' '$got' | grep -q '\"Host\": \"localhost:$up\"'"
ok "the answer reaches the agent" sh -c "printf '%s\n' \"\$1\" | head -n 1 | grep -q '\"ok\"\|usage\|content'" _ "$out"
ok "an endpoint off the credential's list never reaches the gateway" \
    sh -c "! grep -q '/v1/admin' '$t/requests.jsonl' && printf '%s\n' \"\$1\" | sed -n 2p | grep -qi 'not\|refus\|403'" _ "$out"
ok "the secret is nowhere in what the agent saw" sh -c "! printf '%s' \"\$1\" | grep -qF '$REAL'" _ "$out"

# Without --upstream-ca the test CA is not trusted: the gateway is refused.
n0=$(wc -l <"$t/requests.jsonl")
in_session --upstream anthropic=https://localhost:$up/gw -- ./ask.sh
ok "a gateway that fails verification gets nothing" sh -c "[ \$(wc -l <'$t/requests.jsonl') -eq $n0 ]"
ok "and the agent is told why" sh -c "printf '%s' \"\$1\" | grep -qi 'verif'" _ "$out"

# Bad settings fail the start with the reason.
bad() {  # bad WHAT TEXT OPTIONS...
    local what=$1 text=$2; shift 2
    in_session "$@" -- true
    ok "refused at start: $what" sh -c "[ $rc -eq 125 ] && printf '%s' \"\$1\" | grep -qF -- \"\$2\"" _ "$err" "$text"
}
bad "plain http" "must be https" --upstream anthropic=http://localhost:$up
bad "an unknown credential" 'no credential "nosuch"' --upstream nosuch=https://localhost:$up
bad "a bad port" "port must be" --upstream anthropic=https://localhost:99999
bad "a dot segment" "dot segments" --upstream anthropic=https://localhost:$up/a/../b
bad "a CA without a gateway" "needs --upstream" --upstream-ca "$t/ca.pem"
bad "a CA that is not there" "not a readable" --upstream anthropic=https://localhost:$up --upstream-ca /nonexistent.pem

# In a policy: "upstream" on the credential, an error at its line and column.
sed 's|"hosts": \["api.anthropic.com"\], "header": "x-api-key",|"hosts": ["api.anthropic.com"], "header": "x-api-key", "upstream": "ftp://gw",|' \
    "$here/policy/profiles/coding-agent.json" >"$t/bad.json"
o=$("$cordon" policy check "$t/bad.json" 2>&1); r=$?
ok "a policy's bad upstream is an error at its line" \
    sh -c "[ $r -ne 0 ] && printf '%s' \"\$1\" | grep -q 'bad.json:[0-9]*:[0-9]*: .*must be https'" _ "$o"
sed "s|\"hosts\": \\[\"api.anthropic.com\"\\], \"header\": \"x-api-key\",|\"hosts\": [\"api.anthropic.com\"], \"header\": \"x-api-key\", \"upstream\": \"https://localhost:$up/p\", \"upstream_ca\": \"$t/ca.pem\",|" \
    "$here/policy/profiles/coding-agent.json" >"$t/gw.json"
chmod 0644 "$t/gw.json"
in_session --policy "$t/gw.json" -- ./ask.sh
ok "a policy's upstream is used as --upstream is" grep -q '"path": "/p/v1/messages"' "$t/requests.jsonl"
done_testing
