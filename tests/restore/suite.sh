#!/usr/bin/env bash
# tests/restore/suite.sh: the backup and restore drill of docs/fleet.md, for real: pg_dump of a
# serving database under load, pg_restore into a new PostgreSQL cluster, the server on it
# (restore.py, on the harness tests/cluster/cluster.py).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
t=$(mktemp -d)
chmod 755 "$t"
trap 'scripts/pgtmp.sh destroy "$t/newpg" >/dev/null 2>&1; rm -rf "$t"' EXIT
python3 tests/restore/restore.py "$t"
