#!/bin/sh
# The end-to-end tests of cordon run (tests/host/run_cli.sh) on a kernel with BPF LSM.
exec sh "$(dirname "$0")/../host/run_cli.sh"
