#!/bin/bash
# HTTPS through cordon's proxies (runs on the host), against the same client
# talking to the same server directly and through squid as a CONNECT proxy,
# one run: build/tools/bench/proxy_bench is both ends (an HTTPS/1.1
# keep-alive server answering 1 KB, a client POSTing 1 KB bodies to
# /v1/messages over kept-alive TLS, SNI and the name verified).  Paths:
#   - direct: the baseline;
#   - squid: the peer, a CONNECT proxy (no cache, no access log);
#   - squid bumping TLS (ssl_bump, Debian's squid-openssl): for scale, the
#     same squid doing the credential proxy's TLS work (its runs a tenth as
#     long: it is that much slower);
#   - the egress broker: `cordon http-proxy`, CONNECT judged by the policy,
#     then the tunnel relayed;
#   - the credential proxy: `cordon http-proxy` terminating TLS for a
#     credential host (--upstream-ca, --ca-out, --sentinels-out): the client
#     sends the sentinel, the server answers 403 unless the real key arrives.
# Each path: 1 connection (latency: median and p90 per request), 4
# connections and 16 connections (throughput), PROXY_BENCH_ROUNDS rounds (7)
# of PROXY_BENCH_N requests per connection (5000; a quarter of that on each
# of 16), the paths alternated within a round; each cell is the median of the rounds, and a comparison (added
# latency, throughput ratio) the median of the rounds' own comparisons, so a
# machine that drifts between rounds moves both sides of each.  Targets, for
# each cordon path: >= squid's throughput and <= 1 ms median added latency
# over direct; a verdict also gives the range of the rounds' own ratios
# against squid and how many were at or above it, since one near 1.00x is
# decided by the noise.  Throughput is judged at 4 and at 16 connections:
# the two regimes of this 2-core machine.  At 4, both CPUs idle at times
# and a request's four hops often wake a halted vCPU (the section opens with
# what one such wake-up costs here, `proxy_bench wake`), so the figure
# follows the wake-ups; at 16 the CPUs stay busy and it follows the CPU each
# path spends a request.
# Each proxy's CPU time per request is read from /proc over its 4-connection
# runs: requests/s moves with the machine, the CPU a request costs much less.
# No proxy logs here: squid has no access log, and the cordon proxies run
# without --audit (in a session each request is also a record in the
# session's log, written by the supervisor).
# squid comes from tools/deps; without it its row says so and the ratios are n/a.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
: "${BUILD:=$here/build}"       # tools/bench/run sets it; alone, the default build
. "$here/tools/bench/lib.sh"
. "$here/tests/lib_net.sh"
cordon=$BUILD/cordon
bin=$BUILD/tools/bench/proxy_bench
N=${PROXY_BENCH_N:-5000}
R=${PROXY_BENCH_ROUNDS:-7}

echo "## HTTPS through a proxy: the egress broker and the credential proxy"
echo
if [ ! -x "$bin" ] || [ ! -x "$cordon" ]; then
    echo "skipped: build $bin and $cordon first (make)"
    exit 0
fi
# One hop, woken, on one CPU and across two (the regimes above).
wake=$("$bin" wake 2>/dev/null) &&
    echo "One hop (a write, the peer woken, its answer) costs $(sed -n 's/.*"same_cpu_us": \([0-9.]*\).*/\1/p' <<<"$wake") us between threads on one CPU and $(sed -n 's/.*"cross_cpu_us": \([0-9.a-z]*\).*/\1/p' <<<"$wake") us across two here (\`proxy_bench wake\`, median)." &&
    echo
if ! command -v openssl >/dev/null || ! command -v python3 >/dev/null; then
    echo "skipped: needs openssl(1) (the test CA) and python3 (a free port for squid)"
    exit 0
fi

t=$(mktemp -d /var/cordon-bench-proxy.XXXXXX)
chmod 0711 "$t"                 # squid, run as root, works as its own user in $t/squid
pids=
stop() {
    local p
    for p in $pids; do kill "$p" 2>/dev/null; done
    for p in $pids; do wait "$p" 2>/dev/null; done
    pids=
}
trap 'stop; rm -rf "$t"' EXIT

# The test CA and the server's certificate (localhost), as the tests' upstream has.
if ! net_test_ca "$t" cordon-bench-ca; then
    echo "skipped: the test CA could not be made: $(tail -n 1 "$t/ca.err")"
    exit 0
fi
# The API key the agent would hold without the credential proxy; every path
# but the credential proxy's sends it as is, and the server requires it.
key=sk-bench-$(head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n')

# wait_file FILE PID: until FILE is non-empty (5 s), or PID has exited.
wait_file() {
    for _ in $(seq 100); do
        [ -s "$1" ] && return 0
        kill -0 "$2" 2>/dev/null || return 1
        sleep 0.05
    done
    return 1
}
# listening PORT: something accepts on 127.0.0.1:PORT.
listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

"$bin" server --cert "$t/server.pem" --key "$t/server.key" --port-file "$t/up" \
    --require-header "x-api-key: $key" 2>"$t/server.err" &
pids="$pids $!"
if ! wait_file "$t/up" $!; then
    echo "skipped: the server did not start: $(tail -n 1 "$t/server.err")"
    exit 0
fi
read -r up <"$t/up"

kinds=(direct)
declare -A name why port ca hdr pid nreq
name[direct]="direct (the baseline)"
name[squid]="squid CONNECT (the peer)"
name[broker]="\`cordon http-proxy\`: the egress broker (CONNECT, tunnel relayed)"
name[cred]="\`cordon http-proxy\`: the credential proxy (TLS terminated, key swapped in)"
ca[direct]=$t/ca.pem
hdr[direct]="x-api-key: $key"

# --- squid: a CONNECT proxy on loopback, nothing else -------------------------------
# And the same squid (Debian's squid-openssl) bumping TLS: it terminates the
# client's TLS with a certificate for localhost and opens its own to the
# server, as the credential proxy does (no key swap: the client sends the
# key).  Not the target's peer: the row says what terminating TLS at both
# ends costs another proxy on this machine.
squid_bin=$(command -v squid || { [ -x /usr/sbin/squid ] && echo /usr/sbin/squid; })
squid_ver=
name[bump]="squid ssl-bump (TLS terminated at both ends, for scale)"
# start_squid KIND HTTP_PORT_OPTIONS EXTRA_CONF: squid as KIND on a free
# port; port[KIND] and pid[KIND] set, or why[KIND].
start_squid() {
    local kind=$1 opts=$2 extra=$3 d=$t/$1 sq spid _
    mkdir -p "$d"
    [ -z "$squid_user" ] || chown "$squid_user" "$d"
    # squid will not listen on port 0: take a free port, retry if it is gone.
    for _ in 1 2 3; do
        sq=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
        cat >"$d/squid.conf" <<EOF
http_port 127.0.0.1:$sq $opts
${squid_user:+cache_effective_user $squid_user}
acl bench_connect method CONNECT
acl bench_port port $up
http_access allow localhost bench_connect bench_port
http_access allow localhost bench_port
http_access deny all
$extra
cache deny all
cache_mem 0 MB
access_log none
cache_log $d/cache.log
pid_filename $d/squid.pid
coredump_dir $d
pinger_enable off
visible_hostname cordon-bench-$kind
shutdown_lifetime 0 seconds
EOF
        "$squid_bin" -N -f "$d/squid.conf" >"$d/out" 2>&1 &
        spid=$!
        for _ in $(seq 200); do
            listening "$sq" && break
            kill -0 $spid 2>/dev/null || break
            sleep 0.05
        done
        if listening "$sq" && kill -0 $spid 2>/dev/null; then
            pids="$pids $spid"
            kinds+=("$kind")
            port[$kind]=$sq
            pid[$kind]=$spid
            return 0
        fi
        kill $spid 2>/dev/null
        wait $spid 2>/dev/null
    done
    why[$kind]="squid did not start: $(tail -n 1 "$d/cache.log" 2>/dev/null || tail -n 1 "$d/out")"
}
if [ -z "$squid_bin" ]; then
    why[squid]="squid is not installed (tools/deps installs it)"
    why[bump]=${why[squid]}
else
    squid_ver=$("$squid_bin" -v 2>/dev/null | sed -n '1s/.*Version //p')
    squid_user=
    # As root squid drops to cache_effective_user; Debian's is proxy.
    [ "$(id -u)" -ne 0 ] || squid_user=$(id -u proxy >/dev/null 2>&1 && echo proxy || echo nobody)
    start_squid squid "" ""
    if "$squid_bin" -v | grep -q -- --with-openssl; then
        mkdir -p "$t/bump-cert"
        cp "$t/server.pem" "$t/server.key" "$t/bump-cert/"
        [ -z "$squid_user" ] || chown -R "$squid_user" "$t/bump-cert"
        start_squid bump \
            "ssl-bump tls-cert=$t/bump-cert/server.pem tls-key=$t/bump-cert/server.key generate-host-certificates=off" \
            "ssl_bump bump all
tls_outgoing_options cafile=$t/ca.pem"
    else
        why[bump]="this squid has no TLS (tools/deps installs squid-openssl)"
    fi
fi
ca[squid]=$t/ca.pem
hdr[squid]="x-api-key: $key"
ca[bump]=$t/ca.pem
hdr[bump]="x-api-key: $key"
# squid bumping answers a few hundred requests a second here: a tenth of the runs' length.
nreq[bump]=$(( N / 10 > 200 ? N / 10 : 200 ))

# --- the egress broker ----------------------------------------------------------------
# The policy's shape is tests/host/egress.sh's: the name, and its loopback
# address listed (an allowlisted name resolving to a non-public address is
# refused unless the address is listed too).
cat >"$t/broker.json" <<EOF
{ "cordon_policy": 1, "name": "proxy-bench-egress",
  "rules": [
    { "name": "upstream", "decision": "allow",
      "net": { "hosts": ["localhost"], "ports": [$up], "via": "egress" } },
    { "name": "upstream-address", "decision": "allow", "description": "loopback, listed for the benchmark",
      "net": { "hosts": ["127.0.0.1"], "ports": [$up], "via": "egress" } } ] }
EOF
"$cordon" http-proxy --listen 127.0.0.1:0 --port-file "$t/broker.port" --policy "$t/broker.json" \
    2>"$t/broker.start" &
pids="$pids $!"
pid[broker]=$!
if wait_file "$t/broker.port" $!; then
    read -r "port[broker]" <"$t/broker.port"
    kinds+=(broker)
else
    why[broker]="did not start: $(tail -n 1 "$t/broker.start")"
fi
ca[broker]=$t/ca.pem
hdr[broker]="x-api-key: $key"

# --- the credential proxy -----------------------------------------------------------
# The agent holds a sentinel; the proxy, trusting the test CA upstream,
# presents its session CA's certificate for localhost and swaps the real key in.
if ! "$cordon" http-proxy --help 2>&1 | grep -q -- --ca-out; then
    why[cred]="not built yet"
else
    cat >"$t/cred.json" <<EOF
{ "cordon_policy": 1, "name": "proxy-bench-credential",
  "credentials": [
    { "name": "bench", "env": "BENCH_KEY", "source": { "env": "BENCH_KEY" },
      "hosts": ["localhost"], "header": "x-api-key", "endpoints": ["POST /v1/messages"] } ],
  "rules": [
    { "name": "upstream", "decision": "allow",
      "net": { "hosts": ["localhost"], "ports": [$up], "via": "credential-proxy" } },
    { "name": "upstream-address", "decision": "allow", "description": "loopback, listed for the benchmark",
      "net": { "hosts": ["127.0.0.1"], "ports": [$up], "via": "credential-proxy" } } ] }
EOF
    BENCH_KEY=$key "$cordon" http-proxy --listen 127.0.0.1:0 --port-file "$t/cred.port" \
        --policy "$t/cred.json" --upstream-ca "$t/ca.pem" --ca-out "$t/cred-ca.pem" \
        --sentinels-out "$t/sentinels" 2>"$t/cred.start" &
    pids="$pids $!"
    pid[cred]=$!
    if wait_file "$t/cred.port" $! && wait_file "$t/cred-ca.pem" $! && wait_file "$t/sentinels" $! &&
        sentinel=$(sed -n 's/^BENCH_KEY=//p' "$t/sentinels") && [ -n "$sentinel" ]; then
        read -r "port[cred]" <"$t/cred.port"
        kinds+=(cred)
        hdr[cred]="x-api-key: $sentinel"
    else
        why[cred]="did not start: $(tail -n 1 "$t/cred.start")"
    fi
    ca[cred]=$t/cred-ca.pem
fi

# cpu_ticks PID: the process's user and system time so far (all its threads).
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null; }
# machine_ticks: "BUSY IDLE", the whole machine's time so far (/proc/stat's
# first line: busy is user, system and interrupts; idle includes iowait;
# steal, the host running something else, is neither).
machine_ticks() { awk 'NR == 1 { print $2 + $3 + $4 + $7 + $8, $5 + $6; exit }' /proc/stat; }
hz=$(getconf CLK_TCK)
# client KIND CONNS: one proxy_bench client run; "ROUND JSON" appended to
# $t/KIND.CONNS, nothing on failure (stderr kept in $t/KIND.err).  The JSON
# gains the whole machine's busy CPU time per request ("all_us": client,
# proxy, server and the kernel's network work) and its idle share
# ("idle_pct"); with a proxy, also the proxy's own CPU time per request
# ("cpu_us").
client() {
    local kind=$1 conns=$2 out c0= c1= m0 m1 n=${nreq[$1]:-$N}
    # 16 connections share what 4 do: the same requests in all.
    [ "$conns" -le 4 ] || n=$(( n * 4 / conns > 50 ? n * 4 / conns : 50 ))
    local -a via=()
    [ -z "${port[$kind]:-}" ] || via=(--proxy "127.0.0.1:${port[$kind]}")
    [ -z "${pid[$kind]:-}" ] || c0=$(cpu_ticks "${pid[$kind]}")
    m0=$(machine_ticks)
    if out=$("$bin" client --host localhost --port "$up" "${via[@]}" --cacert "${ca[$kind]}" \
        --header "${hdr[$kind]}" --requests "$n" --conns "$conns" --body 1024 \
        --path /v1/messages 2>>"$t/$kind.err") && [ -n "$out" ]; then
        m1=$(machine_ticks)
        [ -z "$c0" ] || c1=$(cpu_ticks "${pid[$kind]}")
        [ -z "$c1" ] || out="${out%\}}, \"cpu_us\": $(awk -v d=$((c1 - c0)) -v hz="$hz" \
            -v n=$((n * conns)) 'BEGIN { printf "%.1f", d * 1e6 / hz / n }')}"
        out="${out%\}}, $(awk -v a="$m0" -v b="$m1" -v hz="$hz" -v n=$((n * conns)) 'BEGIN {
            split(a, x, " "); split(b, y, " "); busy = y[1] - x[1]; idle = y[2] - x[2]
            printf "\"all_us\": %.1f, \"idle_pct\": %.1f", busy * 1e6 / hz / n,
                (busy + idle > 0 ? 100 * idle / (busy + idle) : 0) }')}"
        echo "$r $out" >>"$t/$kind.$conns"
    else
        echo "bench: a $kind run (--conns $conns) failed" >&2
    fi
}
for k in "${kinds[@]}"; do : >"$t/$k.1"; : >"$t/$k.4"; : >"$t/$k.16"; done
nk=${#kinds[@]}
for ((r = 0; r < R; r++)); do
    # Rotate the order, so no path always runs first (or after the same one).
    for ((i = 0; i < nk; i++)); do
        k=${kinds[(i + r) % nk]}
        client "$k" 1
        client "$k" 4
        client "$k" 16
    done
done

# field FILE KEY: "ROUND VALUE" lines of a JSON field.
field() { sed -n "s/^\([0-9]*\) .*\"$2\": \([0-9.]*\).*/\1 \2/p" "$1"; }
# val KIND CONNS KEY: the median over the rounds, or empty.
val() {
    [ -s "$t/$1.$2" ] || return 0
    field "$t/$1.$2" "$3" | awk '{ print $2 }' | median
}
# paired OP KIND BASE CONNS KEY: the median over the rounds both ran of
# KIND's value over BASE's (OP ratio) or less BASE's (OP diff); or empty.
# each_round OP KIND BASE CONNS KEY: the rounds' own comparisons, one a line.
each_round() {
    [ -s "$t/$2.$4" ] && [ -s "$t/$3.$4" ] || return 0
    awk -v op="$1" 'NR == FNR { b[$1] = $2; next }
        ($1 in b) { if (op == "diff") print $2 - b[$1]; else if (b[$1] > 0) print $2 / b[$1] }' \
        <(field "$t/$3.$4" "$5") <(field "$t/$2.$4" "$5")
}
paired() { each_round "$@" | median | grep -v nan; }
# spread KIND CONNS: how the rounds' throughput ratios against squid fall,
# for a verdict near 1.00x: "rounds 0.89x to 1.12x, 4 of 7 at or above squid".
spread() {
    each_round ratio "$1" squid "$2" rps | sort -g | awk '
        NR == 1 { lo = $1 } { hi = $1; n++; if ($1 >= 1) up++ }
        END { if (n) printf "rounds %.2fx to %.2fx, %d of %d at or above squid", lo, hi, up, n }'
}
us() { awk -v v="$1" 'BEGIN { printf "%.0f us", v }'; }
measured() { [ -s "$t/$1.1" ] && [ -s "$t/$1.4" ] && [ -s "$t/$1.16" ]; }
# cpu_cells KIND CONNS: "proxy CPU per request" and "all CPU per request
# (idle)" cells of a throughput run, each may be empty.
cpu_cells() {
    local cpu= all idle
    [ -z "${pid[$1]:-}" ] || cpu=$(val "$1" "$2" cpu_us | grep -v nan)
    all=$(val "$1" "$2" all_us | grep -v nan); idle=$(val "$1" "$2" idle_pct | grep -v nan)
    cells=("${cpu:+$(us "$cpu")}" "${all:+$(us "$all") ($(printf '%.0f' "$idle")%)}")
}
# times X: "1.23x", or n/a for empty.
times() { if [ -n "$1" ]; then awk -v a="$1" 'BEGIN { printf "%.2fx", a }'; else echo n/a; fi; }

row "path (1 KB POST, 1 KB answer, keep-alive)" "latency, 1 connection: median (p90)" \
    "added (median)" "requests/s, 4 connections" "vs squid" "proxy CPU per request" \
    "all CPU per request (idle)" "requests/s, 16 connections" "vs squid" \
    "proxy CPU per request" "all CPU per request (idle)" "target"
row "---" "---" "---" "---" "---" "---" "---" "---" "---" "---" "---" "---"
verdicts=()
for k in direct squid bump broker cred; do
    target=
    [ "$k" = broker ] || [ "$k" = cred ] && target=">= squid, <= 1 ms added"
    if ! measured "$k"; then
        row "${name[$k]}" "${why[$k]:-failed}" "" "" "" "" "" "" "" "" "" "$target"
        [ -z "$target" ] || verdicts+=("${name[$k]}: target >= squid throughput at 4 and 16 connections, <= 1 ms added median: not measured (${why[$k]:-failed})")
        continue
    fi
    p50=$(val "$k" 1 p50_us); p90=$(val "$k" 1 p90_us)
    add=; x4=; x16=
    [ "$k" = direct ] || add=$(paired diff "$k" direct 1 p50_us)
    [ "$k" = squid ] || { x4=$(paired ratio "$k" squid 4 rps); x16=$(paired ratio "$k" squid 16 rps); }
    added=n/a
    [ -z "$add" ] || added=$(awk -v a="$add" 'BEGIN { printf "%+.0f us", a }')
    vs4=$(times "$x4"); vs16=$(times "$x16")
    [ "$k" != squid ] || { vs4=1.00x; vs16=1.00x; }
    cpu_cells "$k" 4; c4=("${cells[@]}")
    cpu_cells "$k" 16; c16=("${cells[@]}")
    row "${name[$k]}" "$(us "$p50") ($(us "$p90"))" "$added" "$(printf '%.0f' "$(val "$k" 4 rps)")" \
        "$vs4" "${c4[0]}" "${c4[1]}" "$(printf '%.0f' "$(val "$k" 16 rps)")" "$vs16" "${c16[0]}" \
        "${c16[1]}" "$target"
    [ -n "$target" ] || continue
    if [ -z "$x4" ] || [ -z "$x16" ]; then
        met="n/a (no squid to compare with)"
    elif [ -z "$add" ]; then
        met="n/a (no direct baseline)"
    else
        met="4 connections $(printf '%.2fx' "$x4") squid ($(spread "$k" 4)); 16 connections $(printf '%.2fx' "$x16") squid ($(spread "$k" 16)); $added"
        if awk -v x="$x4" -v y="$x16" -v a="$add" 'BEGIN { exit !(x >= 1 && y >= 1 && a <= 1000) }'; then
            met="met: $met"
        else
            met="not met: $met"
        fi
    fi
    verdicts+=("${name[$k]}: target >= squid throughput at 4 and 16 connections, <= 1 ms added median: $met")
done
echo
echo "$R rounds on $(nproc) cores, the paths alternated within each round; a round is one"
echo "run of $N requests on 1 connection (latency, send to whole answer), one of $N on each"
echo "of 4 at once and one of $((N / 4)) on each of 16 at once (throughput), after 50 untimed"
echo "warm-up requests per connection; each cell"
echo "is the median of the rounds; \"added\" and \"vs squid\" are the medians of each round's"
echo "own difference and ratio (both sides measured seconds apart), so they need not equal the"
echo "cells' difference or ratio.  TLS 1.3 (OpenSSL), P-256 certificates, loopback, one server"
echo "thread per connection${squid_ver:+; squid $squid_ver}.  The ssl-bump runs are a tenth as"
echo "long (${nreq[bump]} requests).  \"proxy CPU per request\": the proxy process's user and system"
echo "time over a throughput run, divided by its requests (the median of the rounds).  \"all"
echo "CPU per request\": the whole machine's busy time over the same run (client, proxy, server"
echo "and the kernel's loopback work), divided by its requests, and the share of it idle: with"
echo "little idle, the path is bound by the CPU it spends, and its throughput follows that sum;"
echo "with much idle, it is bound by its wake-ups (each hop waits for a thread to be woken)."

x=$(paired ratio cred bump 4 rps)
[ -z "$x" ] || verdicts+=("for scale: the credential proxy against squid doing the same TLS work (ssl-bump): $(printf '%.2fx' "$x") its throughput")
echo
for v in "${verdicts[@]}"; do echo "$v"; done
# Each round's figures, and what failed, so a noisy cell can be judged.
list() { field "$t/$1" "$2" | awk '{ printf "%s%.0f", (NR > 1 ? ", " : ""), $2 }'; }
echo
for k in "${kinds[@]}"; do
    measured "$k" || continue
    echo "$k, each round: median latency (us) $(list "$k.1" p50_us); requests/s, 4 connections $(list "$k.4" rps)${pid[$k]:+; proxy CPU per request (us) $(list "$k.4" cpu_us)}; all CPU per request (us) $(list "$k.4" all_us), idle (%) $(list "$k.4" idle_pct); requests/s, 16 connections $(list "$k.16" rps)${pid[$k]:+; proxy CPU per request (us) $(list "$k.16" cpu_us)}; all CPU per request (us) $(list "$k.16" all_us), idle (%) $(list "$k.16" idle_pct)."
done
for k in "${kinds[@]}"; do
    errs=$(cat "$t/$k.1" "$t/$k.4" "$t/$k.16" 2>/dev/null | sed -n 's/.*"errors": \([0-9]*\).*/\1/p' | awk '{ s += $1 } END { print s + 0 }')
    runs=$(cat "$t/$k.1" "$t/$k.4" "$t/$k.16" 2>/dev/null | wc -l)
    if [ "$runs" -lt $((3 * R)) ] || [ "$errs" -gt 0 ]; then
        echo "$k: $((3 * R - runs)) of $((3 * R)) runs failed, $errs requests not answered 200; the last lines of its stderr:"
        tail -n 3 "$t/$k.err" 2>/dev/null | sed 's/^/    /'
    fi
done
exit 0
