#!/bin/sh
# The red-team harness (tools/redteam/redteam.sh) on a kernel with BPF LSM.
exec sh "$(dirname "$0")/../../tools/redteam/redteam.sh"
