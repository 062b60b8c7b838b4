#!/usr/bin/env bash
# tests/budgets/suite.sh: tools/call budgets that hold for the whole deployment. Three instances
# behind nginx on one database, one subject at full speed for BUDGET_SECONDS (20 here; `make
# budgets` runs the 60 s of issue 20), then with the budget store unreachable (its table locked)
# and after (budgets.py, on the harness tests/cluster/cluster.py).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
BUDGET_SECONDS=${BUDGET_SECONDS:-20} python3 tests/budgets/budgets.py "$t"
