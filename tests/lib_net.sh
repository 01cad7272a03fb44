# The TLS fixture shared by tests/host/egress.sh, tests/host/credproxy.sh and
# tools/bench/proxy.sh (bash; after tests/lib.sh in a test): a test CA, a
# server certificate it signed for "localhost", and the local upstream that
# serves with it.  Needs openssl(1); net_upstream needs python3.

# net_needs: skip the test (exit 77, naming what is missing) without the
# tools the fixture and its clients need: openssl(1), curl, python3 (as $py).
net_needs() {
    command -v openssl >/dev/null || skip_all "needs openssl(1) for the test CA"
    command -v curl >/dev/null || skip_all "needs curl"
    py=/usr/bin/python3
    [ -x $py ] || skip_all "needs python3"
}

# net_test_ca DIR [CN]: DIR/ca.pem and DIR/ca.key, a CA named CN
# (cordon-test-ca), and DIR/server.pem and DIR/server.key, its certificate
# for localhost (subjectAltName DNS:localhost, not a CA); P-256, valid two
# days.  openssl's messages go to DIR/ca.err; non-zero if any step failed.
net_test_ca() {
    local dir=$1 cn=${2:-cordon-test-ca}
    {
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
            -subj "/CN=$cn" -keyout "$dir/ca.key" -out "$dir/ca.pem" &&
        openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=localhost \
            -keyout "$dir/server.key" -out "$dir/server.csr" &&
        printf 'subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\n' >"$dir/ext" &&
        openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" \
            -CAcreateserial -days 2 -extfile "$dir/ext" -out "$dir/server.pem"
    } 2>"$dir/ca.err"
}

# net_upstream DIR: the test CA in DIR (net_test_ca) and tests/net/upstream.py
# serving with its certificate, recording requests in DIR/requests.jsonl:
# its HTTPS port in $up, its plain HTTP port in $plain, its pid appended to
# $pids.  Bails out (TAP) if either fails.
net_upstream() {
    local dir=$1 here
    here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
    net_test_ca "$dir" ||
        { echo "Bail out! the test CA: $(tail -n 1 "$dir/ca.err")"; exit 1; }
    "${py:-python3}" "$here/tests/net/upstream.py" "$dir" & pids="$pids $!"
    for _ in $(seq 100); do [ -e "$dir/ports" ] && break; sleep 0.05; done
    read -r up plain <"$dir/ports" || { echo "Bail out! the upstream did not start"; exit 1; }
}
