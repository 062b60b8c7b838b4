# tests/lib/harness.sh: what the script suites (tests/NAME/suite.sh) share; not a suite itself.
# Sourced after `cd` to the repository root:  source tests/lib/harness.sh; suite_init "$@"
# A suite prints one line per test, `ok - WHAT`, `not ok - WHAT` or `skip - WHAT: WHY`, and exits
# non-zero on any failure (suite_exit); scripts/test.sh counts the lines. Servers it starts bind
# 127.0.0.1, are stopped by PID at the end whatever happens, and every wait is bounded.
# shellcheck shell=bash

# suite_init [BUILD_DIR]: B (the build directory), bin (its bikaroo-mcp, or BIKAROO_BIN), t (a
# temporary folder removed at the end), failures=0, and the exit trap.
suite_init() {
  B=${1:-build}
  bin=${BIKAROO_BIN:-$PWD/$B/bikaroo-mcp}
  t=$(mktemp -d)
  failures=0
  suite_pids=()
  suite_at_exit=()
  trap suite_cleanup EXIT
}

# suite_on_exit COMMAND...: run at the end, before the temporary folder goes (e.g. DROP DATABASE).
suite_on_exit() { suite_at_exit+=("$*"); }

# shellcheck disable=SC2317  # invoked via trap
suite_cleanup() {
  local p c
  for p in "${suite_pids[@]}"; do kill -TERM "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
  for c in "${suite_at_exit[@]}"; do eval "$c" >/dev/null 2>&1; done
  rm -rf "$t"
}

ok() { echo "ok - $*"; }
nok() { echo "not ok - $*"; failures=$((failures + 1)); }
check() { # check WHAT COMMAND...: ok when COMMAND succeeds
  local what=$1
  shift
  if "$@"; then ok "$what"; else nok "$what"; fi
}
suite_exit() { exit $((failures > 0)); }

# serve NAME [VAR=value...]: starts `$bin serve` on free ports (HTTP and metrics) with the
# variables given; sets PORT, MPORT (empty without metrics) and PID; its log is $t/NAME.log.
# Returns 1 (the log printed) if it did not start within 30 s.
serve() {
  local name=$1
  shift
  rm -f "$t/$name.port"
  env BIKAROO_PORT=0 BIKAROO_READY_FILE="$t/$name.port" BIKAROO_METRICS_LISTEN=127.0.0.1:0 "$@" \
    ${BIKAROO_WRAPPER:-} "$bin" serve 2>"$t/$name.log" &
  PID=$!
  suite_pids+=("$PID")
  for _ in $(seq 1 300); do [[ -s $t/$name.port ]] && break; sleep 0.1; done
  [[ -s $t/$name.port ]] || { cat "$t/$name.log"; return 1; }
  PORT=$(cat "$t/$name.port")
  MPORT=$(grep -o 'metrics at http://[^ ]*:[0-9]*' "$t/$name.log" | sed 's/.*://' || true)
}

# stop [NAME]: SIGTERM to the last server started; a non-zero exit (a sanitizer's or valgrind's
# finding) is noted in $t/bad_exit with the end of its log.
stop() {
  kill -TERM "$PID" 2>/dev/null
  wait "$PID" 2>/dev/null || { echo "${1:-$PID}" >>"$t/bad_exit"; tail -n 20 "$t/${1:-none}.log" 2>/dev/null; }
}

# mcp PORT METHOD NAME PARAMS [curl args...]: one 2026-07-28 request (PARAMS: members of params
# before _meta, each followed by a comma); prints the body.
mcp() {
  local port=$1 method=$2 name=$3 params=$4
  shift 4
  curl -s "http://127.0.0.1:$port/mcp" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28' \
    -H "Mcp-Method: $method" ${name:+-H "Mcp-Name: $name"} "$@" \
    -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"$method\",\"params\":{$params\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}}}"
}
