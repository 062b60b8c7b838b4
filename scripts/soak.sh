#!/usr/bin/env bash
# soak.sh BUILD_DIR: what `make soak` runs (not part of make test): a throwaway PostgreSQL, then
# tests/cluster/soak.py, SOAK_SECONDS (default 600) of mixed load against two instances behind
# nginx, sampling RSS, open descriptors and database connections every 10 s.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
B=${1:-build}
pgdir=$PWD/.run/soak-pg-$$
t=$(mktemp -d)
trap 'scripts/pgtmp.sh destroy "$pgdir" >/dev/null 2>&1 || true; rm -rf "$t"' EXIT
set -a
eval "$(scripts/pgtmp.sh start "$pgdir")"
set +a
export BIKAROO_BIN=$PWD/$B/bikaroo-mcp
tests/e2e/install.sh
python3 tests/cluster/soak.py "$t"
