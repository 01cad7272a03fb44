#!/bin/sh
# The attacks of tests/host/run_attacks.sh, on a kernel with BPF LSM.
exec sh "$(dirname "$0")/../host/run_attacks.sh"
