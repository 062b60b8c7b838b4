#!/usr/bin/env bash
# test.sh BUILD_DIR: every test against a throwaway PostgreSQL created here and removed at the end:
# Check unit tests, Check integration tests (the real binary over HTTP), and end-to-end tests with
# MCP clients written by others. Ends with one line 'N passed, N failed'.
# BIKAROO_VALGRIND=1 runs every server process and the unit tests under valgrind memcheck.
# TEST_ONLY=integration (SUITE=NAME: one suite), TEST_ONLY=e2e (E2E_FILE=NAME: one
# tests/e2e/NAME.test.mjs) or TEST_ONLY=script (SUITE=NAME: tests/NAME/suite.sh) runs one part
# with the same set-up (make integration, make e2e, make script).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
B=${1:-build}
root=$PWD
export BIKAROO_BIN=$root/$B/bikaroo-mcp
export IT_TMP
IT_TMP=$(mktemp -d)
pgdir=$root/.run/test-pg-$$
server_pid=
passed=0
failed=0
skipped=0

cleanup() {
  [[ -n "$server_pid" ]] && kill -TERM "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  scripts/pgtmp.sh destroy "$pgdir" >/dev/null 2>&1 || true
  rm -rf "$IT_TMP"
}
trap cleanup EXIT

if [[ -n "${BIKAROO_VALGRIND:-}" ]]; then
  # Every valgrind server start costs seconds of CPU: give each Check test five times its time.
  export CK_TIMEOUT_MULTIPLIER=5
  export BIKAROO_WRAPPER="valgrind --quiet --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect --suppressions=$root/tests/valgrind.supp"
fi

# One failure that no suite's own output names (a crash, a server that did not start or stop).
fail1() {
  echo "$*" | tee -a "$IT_TMP/failed.out"
  failed=$((failed + 1))
}

# Counts Check's "Checks: N, Failures: F, Errors: E" lines into the totals.
count_check() {
  local line n f e
  line=$(grep -E '^[0-9]+%: Checks: ' "$1" | tail -n 1)
  n=$(sed -E 's/.*Checks: ([0-9]+).*/\1/' <<<"$line")
  f=$(sed -E 's/.*Failures: ([0-9]+).*/\1/' <<<"$line")
  e=$(sed -E 's/.*Errors: ([0-9]+).*/\1/' <<<"$line")
  if [[ -z "$line" ]]; then fail1 "$1: no Check summary (crashed?)"; return; fi
  passed=$((passed + n - f - e)); failed=$((failed + f + e))
}

# A user's PG* variables must never reach a connection of the tests: every URL pins every
# parameter (scripts/pgtmp.sh: PGTMP_QUERY), the few no URL overrides are cleared, and the whole
# run goes with hostile values of the others, so that a connection that does not pin its own
# fails here (issue: `make test` with PGPORT or PGHOST set).
# shellcheck source=scripts/pgtmp.sh
source scripts/pgtmp.sh --functions
pgtmp_scrub_env
export PGHOST=/nonexistent-pghost PGHOSTADDR=127.0.0.1 PGPORT=1 PGUSER=hostile_pguser \
  PGDATABASE=hostile_pgdatabase PGOPTIONS='-c default_transaction_read_only=on' \
  PGPASSFILE=/nonexistent-pgpass PGSSLMODE=require PGGSSENCMODE=require PGCONNECT_TIMEOUT=1 \
  PGTARGETSESSIONATTRS=read-only PGCLIENTENCODING=LATIN1 PGAPPNAME=hostile

echo "== database"
set -a
eval "$(scripts/pgtmp.sh start "$pgdir")" || { echo "cannot start PostgreSQL"; exit 1; }
set +a
export IT_SUPER_URL="postgresql://postgres@/bikaroo?$PGTMP_QUERY"
export IT_MIGRATE_URL_2_RAW="postgresql://fleet_owner@/it_migrate?$PGTMP_QUERY"
# For tests/integration/test_migrate.c: databases of its own on this cluster, and pg_dump.
export IT_PG_QUERY=$PGTMP_QUERY
export IT_PG_DUMP=${PG_BIN:-/usr/lib/postgresql/15/bin}/pg_dump
[[ -x $IT_PG_DUMP ]] || IT_PG_DUMP=$(command -v pg_dump)
DATABASE_URL=$BIKAROO_MIGRATE_URL "$BIKAROO_BIN" migrate || exit 1
psql -X "$BIKAROO_MIGRATE_URL" -v ON_ERROR_STOP=1 -q -f migrations/demo/demo-data.sql || exit 1

# Token validation is on by default; the suites below that test it choose their own mode, the
# others (and the official clients, which send no token) run without authorization.
export BIKAROO_AUTH=local
# Every server of the tests serves its metrics on a free port (the default is one fixed port).
export BIKAROO_METRICS_LISTEN=127.0.0.1:0
# Budgets are the deployment's by default: buckets in the database, which outlive a server. The
# suites start many servers on one database and expect each one's budget afresh; the shared
# budgets are the subject of tests/budgets (and of the unit tests), which ask for them.
export BIKAROO_RATE_STORE=local
# Every Node.js program of the tests (the MCP clients, the inspector, the conformance suite, the
# browser tests) runs on the pinned Node 22, and npm 11 installs their packages (scripts/node.sh).
node_bin=$(scripts/node.sh --bin) || { echo "cannot install the pinned Node and npm (tests/toolchain)"; exit 1; }
export PATH=$node_bin:$PATH
tests/e2e/install.sh || { echo "cannot install the pinned npm packages (tests/package.json)"; exit 1; }

only=${TEST_ONLY:-}
[[ -z $only ]] && unset SUITE E2E_FILE

run_check_programs() {
for suite in core core-ucontext unit; do
  echo "== $suite tests (Check)"
  if [[ -n "${BIKAROO_VALGRIND:-}" ]]; then
    CK_FORK=no $BIKAROO_WRAPPER "$B/$suite-tests" 2>&1 | tee "$IT_TMP/$suite.out"
    [[ ${PIPESTATUS[0]} == 99 ]] && fail1 "$suite tests: valgrind reported errors"
  else
    "$B/$suite-tests" 2>&1 | tee "$IT_TMP/$suite.out"
  fi
  count_check "$IT_TMP/$suite.out"
done

}

run_integration() {
echo "== integration tests (Check, real binary, real PostgreSQL)"
"$B/integration-tests" 2>&1 | tee "$IT_TMP/integration.out"
count_check "$IT_TMP/integration.out"
}

run_script_suites() {
# Script suites: every tests/*/suite.sh, run from the repository root with the test database's
# environment (DATABASE_URL, BIKAROO_MIGRATE_URL, PGTMP_SUPER_URL, IT_SUPER_URL, BIKAROO_BIN,
# IT_TMP) and the build directory as $1. A suite prints one line per test: `ok - WHAT`,
# `not ok - WHAT`, or `skip - WHAT: WHY` for a test this machine cannot run (counted and shown,
# never silent), and exits non-zero on any failure. Exiting non-zero without a `not ok` line, or
# printing no line at all, counts as one failure. Adding a suite needs no change here.
for suite in tests/*/suite.sh; do
  name=$(basename "$(dirname "$suite")")
  [[ -n ${SUITE:-} && $name != "$SUITE" ]] && continue
  echo "== $name ($suite)"
  "$suite" "$B" 2>&1 | tee "$IT_TMP/suite-$name.out"
  rc=${PIPESTATUS[0]}
  s_ok=$(grep -c '^ok - ' "$IT_TMP/suite-$name.out")
  s_bad=$(grep -c '^not ok - ' "$IT_TMP/suite-$name.out")
  s_skip=$(grep -c '^skip - ' "$IT_TMP/suite-$name.out")
  passed=$((passed + s_ok)); failed=$((failed + s_bad)); skipped=$((skipped + s_skip))
  grep '^not ok - ' "$IT_TMP/suite-$name.out" | sed "s|^|$name: |" >>"$IT_TMP/failed.out"
  grep '^skip - ' "$IT_TMP/suite-$name.out" | sed "s|^|$name: |" >>"$IT_TMP/skipped.out"
  if [[ $rc != 0 && $s_bad == 0 ]]; then fail1 "$name: $suite exited $rc without a failing test line"
  elif [[ $((s_ok + s_bad + s_skip)) == 0 ]]; then fail1 "$name: $suite reported no test"; fi
done
}

# against_product NAME URL_VAR PASS_PATTERN FIELD COMMAND...: starts the product on a free port,
# runs COMMAND with URL_VAR set to its /mcp URL, counts the last "PASS_PATTERN N" and the matching
# fail and cancelled lines of its output (field FIELD) into the totals (a cancelled test is a
# failure: it did not run to its end), and stops the product (a non-zero exit, e.g. a valgrind
# error, is a failure).
against_product() {
  local name=$1 url_var=$2 pattern=$3 field=$4 ready=$IT_TMP/$1.port rc p f c
  shift 4
  # shellcheck disable=SC2086
  BIKAROO_PORT=0 BIKAROO_READY_FILE=$ready ${BIKAROO_WRAPPER:-} "$BIKAROO_BIN" serve 2>"$IT_TMP/$name-server.log" &
  server_pid=$!
  for _ in $(seq 1 600); do [[ -s $ready ]] && break; sleep 0.1; done
  if [[ -s $ready ]]; then
    env "$url_var=http://127.0.0.1:$(cat "$ready")/mcp" "$@" 2>&1 | tee "$IT_TMP/$name.out"
    p=$(grep -E "^# ${pattern}pass " "$IT_TMP/$name.out" | tail -n 1 | awk -v f="$field" '{print $f}')
    f=$(grep -E "^# ${pattern}fail " "$IT_TMP/$name.out" | tail -n 1 | awk -v f="$field" '{print $f}')
    c=$(grep -E "^# ${pattern}cancelled " "$IT_TMP/$name.out" | tail -n 1 | awk -v f="$field" '{print $f}')
    if [[ -z "$p" ]]; then fail1 "$name: no summary"; else passed=$((passed + p)); failed=$((failed + ${f:-0} + ${c:-0})); fi
  else
    cat "$IT_TMP/$name-server.log"; fail1 "$name: the product did not start"
  fi
  kill -TERM "$server_pid" 2>/dev/null
  wait "$server_pid"; rc=$?
  server_pid=
  if [[ $rc != 0 ]]; then
    tail -n 40 "$IT_TMP/$name-server.log"; fail1 "$name: the product exited with $rc"
  fi
}

run_e2e() {
echo "== end-to-end tests (official MCP clients)"
if [[ -n ${E2E_FILE:-} ]]; then
  against_product e2e MCP_URL "" 3 tests/e2e/run.sh "tests/e2e/$E2E_FILE.test.mjs"
else
  against_product e2e MCP_URL "" 3 tests/e2e/run.sh
fi
}

# The official conformance suite against the conformance server and the product: its checks
# passed count as passed, each run whose expected-failures baseline check fails as one failure.
run_conformance() {
echo "== conformance suite (official, Node 22): conformance server and product"
against_product conformance PRODUCT_URL "conformance " 4 tests/conformance/run.sh "$B"
}

case $only in
  integration) run_integration ;;
  e2e) run_e2e ;;
  script) run_script_suites ;;
  '') run_check_programs; run_integration; run_script_suites; run_e2e; run_conformance ;;
  *) echo "test.sh: TEST_ONLY is integration, e2e, script or unset" >&2; exit 2 ;;
esac

# Repeat what failed just above the summary: CI shows only the tail of a long run.
if [[ $failed != 0 ]]; then
  echo
  echo "== what failed"
  { grep -hE ':[0-9]+:[FE]:|^ *not ok |^conformance .*: FAILED' "$IT_TMP"/{core,core-ucontext,unit,integration,e2e,conformance}.out
    grep -hA1 '^ *error: ' "$IT_TMP"/{e2e,conformance}.out | grep -v '^--$'
    cat "$IT_TMP/failed.out"; } 2>/dev/null | head -n 40
fi
# A start of the test authorization server that tests/auth/as.mjs had to try again is not a
# failure, but it is said here, where a CI tail shows it (with what the stalled process waited on).
if grep -hqs 'as: try [0-9] of 3 stalled' "$IT_TMP"/as-*.log; then
  echo
  echo "== retried"
  grep -hs 'as: try [0-9] of 3 stalled' "$IT_TMP"/as-*.log | cut -c 1-1500 | head -n 5
fi
if [[ $skipped != 0 ]]; then
  echo
  echo "== skipped (this machine cannot run them)"
  cat "$IT_TMP/skipped.out"
fi
echo
echo "$passed passed, $failed failed, $skipped skipped"
[[ $failed == 0 ]]
