#!/usr/bin/env bash
# tests/run/suite.sh: `make run` as a good neighbour. A second `make run` in the same checkout
# says where the first serves (URL, PID) and leaves it serving (its cluster too); a metrics port
# in use never stops it (the next free one, said in the banner); BIKAROO_METRICS_LISTEN= serves
# no metrics; the banner's database URL works; a port in use is named with its owner and the fix;
# `make reset-demo` is refused while one serves and restores the demo data after. Each run has a
# cluster of its own (RUN_PG_DIR) in a temporary folder. Prints `ok - ` / `not ok - ` lines.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
B=${1:-build}
t=$(mktemp -d)
chmod 755 "$t"
pids=()
failures=0
# shellcheck disable=SC2317  # invoked via trap
cleanup() {
  for p in "${pids[@]}"; do
    kill -TERM -- "-$p" 2>/dev/null || kill -TERM "$p" 2>/dev/null
    for _ in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  done
  for d in "$t"/*/pg; do [[ -d $d ]] && scripts/pgtmp.sh destroy "$d" >/dev/null 2>&1; done
  rm -rf "$t"
}
trap cleanup EXIT
check() { # check WHAT COMMAND...: ok when COMMAND succeeds
  local what=$1
  shift
  if "$@"; then echo "ok - $what"; else echo "not ok - $what"; failures=$((failures + 1)); fi
}
call() { # call PORT: get_bike_status VL-2048's status word, or the body when there is none
  local body
  body=$(curl -s -m 10 "http://127.0.0.1:$1/mcp" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28' \
    -H 'Mcp-Method: tools/call' -H 'Mcp-Name: get_bike_status' \
    -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_bike_status","arguments":{"bikeId":"VL-2048"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}')
  sed -n 's/.*"structuredContent":{"bikeId":"VL-2048","status":"\([a-z_]*\)".*/\1/p' <<<"$body" | grep . || echo "$body"
}
# A listener of our own on 127.0.0.1:PORT (0: a free one), its port in FILE; sets LPID.
listener() {
  python3 -c 'import socket,sys,time
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(8)
open(sys.argv[2], "w").write(str(s.getsockname()[1])); time.sleep(300)' "$1" "$2" 2>/dev/null &
  LPID=$!
  pids+=("$LPID")
  for _ in $(seq 1 50); do [[ -s $2 ]] && return 0; kill -0 "$LPID" 2>/dev/null || return 1; sleep 0.1; done
  return 1
}
# start NAME [VAR=value...]: scripts/run.sh (what `make run` runs after the build) in its own
# process group, a cluster in $t/NAME/pg, until it serves; sets PID (the group), PORT.
start() {
  local name=$1
  shift
  mkdir -p "$t/$name"
  setsid env -u DATABASE_URL -u BIKAROO_MIGRATE_URL -u BIKAROO_METRICS_LISTEN RUN_PG_DIR="$t/$name/pg" \
    BIKAROO_PORT=0 "$@" scripts/run.sh "$B/bikaroo-mcp" >"$t/$name.log" 2>&1 &
  PID=$!
  pids+=("$PID")
  for _ in $(seq 1 600); do [[ -s $t/$name/serving ]] && grep -q 'Ctrl-C stops' "$t/$name.log" && break; kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
  PORT=$(sed -n 's|^ *Bikaroo fleet MCP server: http://127.0.0.1:\([0-9]*\)/mcp.*|\1|p' "$t/$name.log")
  [[ -n $PORT ]] || { sed 's/^/# /' "$t/$name.log"; return 1; }
}

# --- one make run, then a second in the same checkout.
if start first; then
  first_pid=$(sed -n 's/.*(server PID \([0-9]*\).*/\1/p' "$t/first.log")
  check "make run's banner names its URL and server PID, and the URL serves" \
    test "$(call "$PORT")" = available -a -n "$first_pid"
  db=$(sed -n 's/^ *Database: //p' "$t/first.log")
  check "the banner's database URL is the server's database, and works as printed" \
    test "$(psql -X -At "$db" -c "SELECT current_user || '@' || current_database() || ' ' || to_regclass('fleet.bikes')" 2>&1)" = "fleet_app@bikaroo fleet.bikes"
  pg_before=$(head -n 1 "$t/first/pg/data/postmaster.pid" 2>/dev/null || head -n 1 "$t/first/pg/real/data/postmaster.pid")
  out=$(env -u DATABASE_URL RUN_PG_DIR="$t/first/pg" BIKAROO_PORT=0 timeout 20 scripts/run.sh "$B/bikaroo-mcp" 2>&1)
  rc=$?
  check "a second make run in the same checkout exits 0, saying where the first serves (URL, PID)" \
    grep -q "already serving in this checkout: http://127.0.0.1:$PORT/mcp (server PID $first_pid)" <<<"$out"
  [[ $rc == 0 ]] || echo "# exit $rc: $out"
  pg_after=$(head -n 1 "$t/first/pg/data/postmaster.pid" 2>/dev/null || head -n 1 "$t/first/pg/real/data/postmaster.pid")
  check "after it the first still serves, with the same server and the same PostgreSQL (PID $pg_before)" \
    test "$(call "$PORT")" = available -a "$pg_before" = "$pg_after" -a -n "$pg_after"
  check "the first's process is the one still serving" kill -0 "$first_pid"
  # make run's own pre-check: it says so before installing or building anything.
  out=$(RUN_PG_DIR="$t/first/pg" timeout 20 make --no-print-directory B="$t/nobuild" run 2>&1)
  check "make run itself says so and builds nothing (no build directory made)" \
    test -n "$(grep 'already serving in this checkout' <<<"$out")" -a ! -e "$t/nobuild"
  out=$(env -u DATABASE_URL RUN_PG_DIR="$t/first/pg" timeout 20 scripts/run.sh --reset-demo "$B/bikaroo-mcp" 2>&1)
  check "make reset-demo is refused while make run serves from that database (exit 1, says why)" \
    grep -q 'stop it first' <<<"$out"
  check "... and the server still answers after the refusal" test "$(call "$PORT")" = available
  # The demo's state changes, the run stops, reset-demo restores the demo data.
  psql -X -q "${db/fleet_app@/fleet_owner@}" -c "UPDATE fleet.bikes SET status = 'lost' WHERE bike_id = 'VL-2048'" 2>&1
  check "(the demo's state changed: VL-2048 lost)" test "$(call "$PORT")" = lost
  kill -TERM -- "-$PID"
  wait "$PID" 2>/dev/null
  check "Ctrl-C (SIGTERM) of make run stops its cluster too" \
    test "$(scripts/pgtmp.sh status "$t/first/pg" >/dev/null 2>&1; echo $?)" = 3
  out=$(env -u DATABASE_URL RUN_PG_DIR="$t/first/pg" timeout 120 scripts/run.sh --reset-demo "$B/bikaroo-mcp" 2>&1) ||
    echo "# reset-demo: $out"
  start again || true
  check "after make reset-demo the next make run serves the demo data as new (VL-2048 available)" \
    test "$(call "$PORT")" = available
  kill -TERM -- "-$PID" 2>/dev/null
  wait "$PID" 2>/dev/null
else
  check "make run serves" false
fi

# --- metrics: 9464 in use never stops make run; an empty BIKAROO_METRICS_LISTEN serves none.
have9464=0
if (exec 3<>/dev/tcp/127.0.0.1/9464) 2>/dev/null; then have9464=1; elif listener 9464 "$t/l9464"; then have9464=1; fi
if ((have9464)) && start busy; then
  mline=$(grep '^  Health:' "$t/busy.log")
  mport=$(sed -n 's|.*metrics: http://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' <<<"$mline")
  check "with 9464 taken, make run serves, its banner naming where the metrics are ($mline)" \
    test -n "$mport" -a "$mport" != 9464
  [[ -n $mport ]] && check "... and GET /metrics answers there" \
    grep -q '^bikaroo_build_info' <(curl -s -m 5 "http://127.0.0.1:$mport/metrics")
  kill -TERM -- "-$PID" 2>/dev/null
  wait "$PID" 2>/dev/null
else
  check "make run with 9464 in use serves" false
fi
if start nometrics BIKAROO_METRICS_LISTEN=; then
  check "BIKAROO_METRICS_LISTEN= (empty): the banner says none and the server opens no metrics listener" \
    test -n "$(grep 'metrics: none' "$t/nometrics.log")" -a -z "$(grep 'metrics at http' "$t/nometrics.log")"
  kill -TERM -- "-$PID" 2>/dev/null
  wait "$PID" 2>/dev/null
else
  check "make run with BIKAROO_METRICS_LISTEN= serves" false
fi

# --- the port in use: its owner and the fix, before anything is started.
if listener 0 "$t/lport"; then
  busy=$(cat "$t/lport")
  out=$(env -u DATABASE_URL RUN_PG_DIR="$t/taken/pg" BIKAROO_PORT="$busy" timeout 60 scripts/run.sh "$B/bikaroo-mcp" 2>&1)
  check "a port in use is named with the process holding it and the fix (BIKAROO_PORT=...)" \
    test -n "$(grep "port $busy on 127.0.0.1 is already in use by PID $LPID (" <<<"$out")" \
    -a -n "$(grep "BIKAROO_PORT=$((busy + 1)) make run" <<<"$out")"
  check "... before any cluster was started" test ! -e "$t/taken/pg/data" -a ! -e "$t/taken/pg/real"
fi
[[ $failures == 0 ]]
