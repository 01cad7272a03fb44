#!/bin/sh
# The red-team harness (tools/redteam/redteam.sh) on this host's posture.
exec sh "$(dirname "$0")/../../tools/redteam/redteam.sh"
