#!/bin/sh
# Reaping sessions whose cordon is gone (tests/host/reap.sh) on a kernel with BPF LSM.
exec sh "$(dirname "$0")/../host/reap.sh"
