#!/usr/bin/env bash
# tests/tasks/suite.sh: the Tasks extension (io.modelcontextprotocol/tasks) end to end against
# the conformance server (its fixture tools and in-memory task store), where the official suite
# does not look: notifications/tasks on subscriptions/listen streams over HTTP and stdio, each
# the DetailedTask tasks/get answers; the refusal of a listen naming tasks undeclared.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
# shellcheck source=tests/lib/harness.sh
source tests/lib/harness.sh
suite_init "$@"
bin=$PWD/$B/conformance-server

if ! serve tasks BIKAROO_AUTH=local BIKAROO_LOG_LEVEL=warn; then
  nok "the conformance server starts"
  suite_exit
fi
# Bounded: each wait of tasks.mjs fails its own line after 15 s; the whole within 120 s.
timeout 120 node tests/tasks/tasks.mjs "http://127.0.0.1:$PORT/mcp" "$bin" >"$t/out" 2>&1
rc=$?
cat "$t/out"
failures=$((failures + $(grep -c '^not ok - ' "$t/out")))
[[ $rc != 0 && $failures == 0 ]] && nok "tasks.mjs ran to its end (exit $rc)"
stop tasks
if [[ -s $t/bad_exit ]]; then nok "the conformance server stops cleanly"; else ok "the conformance server stops cleanly"; fi
suite_exit
