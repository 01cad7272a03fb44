#!/bin/sh
# The red-team harness (tests/redteam/redteam.sh) on this host's posture.
exec sh "$(dirname "$0")/../redteam/redteam.sh"
