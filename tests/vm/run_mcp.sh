#!/bin/sh
# tests/host/run_mcp.sh on a kernel with BPF LSM: the grant keyed by the socket's inode.
exec sh "$(dirname "$0")/../host/run_mcp.sh"
