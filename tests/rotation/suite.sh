#!/usr/bin/env bash
# tests/rotation/suite.sh: rotating BIKAROO_STATE_SECRET with the key ring
# (BIKAROO_STATE_SECRET_PREVIOUS): confirmations in flight survive each step of a rotation on
# another instance, one sealed with a removed key is refused with a clear error and nothing
# written (rotation.py, on the harness tests/cluster/cluster.py); and the same steps on one
# instance by SIGHUP, its settings file rewritten, under load (reload.py).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
python3 tests/rotation/rotation.py "$t"
rc=$?
mkdir -p "$t/reload"
python3 tests/rotation/reload.py "$t/reload" || rc=1
exit $rc
