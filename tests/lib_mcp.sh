# The MCP fixture shared by tests/host/mcp_proxy.sh and tools/bench/mcp.sh
# (bash; after tests/lib.sh).
#
# mcp_fixture DIR: the npm packages (tools/mcp-deps) copied to DIR/mcp, where
# the servers' user can read them wherever this tree was cloned, $M set to
# their @modelcontextprotocol directory, and DIR/server-profile.json: the
# shipped mcp-server profile plus reading and running that copy.
mcp_fixture() {
    local dir=$1 here
    here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
    "$here/tools/mcp-deps" || return 1
    cp -a "$here/tests/mcp" "$dir/mcp" && chmod -R a+rX "$dir/mcp" || return 1
    M=$dir/mcp/node_modules/@modelcontextprotocol
    python3 - "$here/policy/profiles/mcp-server.json" "$dir/mcp" >"$dir/server-profile.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["name"] = "mcp-test-server"
p["rules"].append({"name": "server-code", "decision": "allow",
                   "fs": {"paths": [sys.argv[2]], "rights": ["read", "exec"]}})
print(json.dumps(p, indent=1))
PY
    chmod 0644 "$dir/server-profile.json"
}
