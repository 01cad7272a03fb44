#!/bin/sh
# The audit log on a full filesystem (tests/host/audit_space.sh) on the VM's kernel.
exec sh "$(dirname "$0")/../host/audit_space.sh"
