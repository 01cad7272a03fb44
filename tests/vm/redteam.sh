#!/bin/sh
# The red-team harness (tests/redteam/redteam.sh) on a kernel with BPF LSM.
exec sh "$(dirname "$0")/../../tests/redteam/redteam.sh"
