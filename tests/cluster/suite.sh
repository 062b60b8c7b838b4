#!/usr/bin/env bash
# tests/cluster/suite.sh: several instances behind nginx, one killed -9 and one stopped mid-load
# (kill.py, on the harness cluster.py shared with tests/compose and make soak).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
python3 tests/cluster/kill.py "$t"
