#!/usr/bin/env bash
# suite.sh BUILD_DIR tests/NAME/suite.sh [ARGS...]: one script suite alone, in the environment
# scripts/test.sh gives every suite (a throwaway PostgreSQL, migrated, with the demo data; the
# URLs, BIKAROO_BIN, IT_TMP), removed at the end. For the long runs that are not part of make test
# (make budgets) and for running one suite while working on it. Exits with the suite's status.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
B=${1:?usage: scripts/suite.sh BUILD_DIR tests/NAME/suite.sh [ARGS...]}
suite=${2:?usage: scripts/suite.sh BUILD_DIR tests/NAME/suite.sh [ARGS...]}
shift 2
export BIKAROO_BIN=$PWD/$B/bikaroo-mcp
export IT_TMP
IT_TMP=$(mktemp -d)
pgdir=$PWD/.run/suite-pg-$$
trap 'scripts/pgtmp.sh destroy "$pgdir" >/dev/null 2>&1 || true; rm -rf "$IT_TMP"' EXIT
# shellcheck source=scripts/pgtmp.sh
source scripts/pgtmp.sh --functions
pgtmp_scrub_env
set -a
eval "$(scripts/pgtmp.sh start "$pgdir")" || { echo "cannot start PostgreSQL"; exit 1; }
set +a
export IT_SUPER_URL="postgresql://postgres@/bikaroo?$PGTMP_QUERY" IT_PG_QUERY=$PGTMP_QUERY
DATABASE_URL=$BIKAROO_MIGRATE_URL "$BIKAROO_BIN" migrate >/dev/null || exit 1
psql -X "$BIKAROO_MIGRATE_URL" -v ON_ERROR_STOP=1 -q -f migrations/demo/demo-data.sql || exit 1
export BIKAROO_AUTH=local BIKAROO_METRICS_LISTEN=127.0.0.1:0 BIKAROO_RATE_STORE=local # as test.sh
node_bin=$(scripts/node.sh --bin) || { echo "cannot install the pinned Node and npm (tests/toolchain)"; exit 1; }
export PATH=$node_bin:$PATH # as test.sh
tests/e2e/install.sh >/dev/null || { echo "cannot install the pinned npm packages"; exit 1; }
"$suite" "$B" "$@"
