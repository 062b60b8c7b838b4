#!/usr/bin/env bash
# tests/local/suite.sh: BIKAROO_AUTH=local (one configured identity, no token) on a database that
# is not a development one (fleet.settings environment), over both transports: serve (HTTP on
# loopback) and stdio refuse to start, naming the database and BIKAROO_LOCAL_ALLOW_ANY_DATABASE;
# with that setting they serve, and say so in a warning at start; on a development database they
# serve without it. A server that started while its database was down judges the database once
# it answers, before it serves anything as the local identity. A cluster of its own; prints
# `ok - ` / `not ok - ` lines.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
# shellcheck source=tests/lib/harness.sh
source tests/lib/harness.sh
suite_init "$@"
chmod 755 "$t"
suite_on_exit 'scripts/pgtmp.sh destroy "$t/pg"'
# shellcheck source=scripts/pgtmp.sh
source scripts/pgtmp.sh --functions
pgtmp_scrub_env
env_lines=$(scripts/pgtmp.sh start "$t/pg" 2>"$t/pg.log") || { cat "$t/pg.log"; echo "not ok - a cluster of its own"; exit 1; }
app=$(sed -n "s/^DATABASE_URL='\(.*\)'$/\1/p" <<<"$env_lines")
owner=$(sed -n "s/^BIKAROO_MIGRATE_URL='\(.*\)'$/\1/p" <<<"$env_lines")
BIKAROO_MIGRATE_URL=$owner BIKAROO_LOG_LEVEL=warn "$bin" migrate >"$t/migrate.log" 2>&1 || { cat "$t/migrate.log"; echo "not ok - migrate"; exit 1; }
psql -X "$owner" -v ON_ERROR_STOP=1 -q -f migrations/demo/demo-data.sql >/dev/null || { echo "not ok - demo data"; exit 1; }
environment() { # environment VALUE: what fleet.settings says this database is
  psql -X -q "$owner" -c "UPDATE fleet.settings SET value = '$1' WHERE name = 'environment'" >/dev/null
}
environment production
export DATABASE_URL=$app BIKAROO_AUTH=local BIKAROO_LOCAL_SUBJECT=marie BIKAROO_LOCAL_CLIENT=customer-care-assistant
unset BIKAROO_MIGRATE_URL BIKAROO_LOCAL_ALLOW_ANY_DATABASE
refusal='acts without a token only against a development database.*BIKAROO_LOCAL_ALLOW_ANY_DATABASE=1'
warning='warn .*BIKAROO_AUTH=local on a database that is NOT a development one.*acts as subject marie'

# serve_once NAME [VAR=value...]: `serve` with a bound of 10 s; its exit (124: still serving).
serve_once() {
  local name=$1
  shift
  env BIKAROO_PORT=0 BIKAROO_METRICS_LISTEN= "$@" timeout 10 "$bin" serve 2>"$t/$name.log"
}
# stdio_call [VAR=value...]: one get_bike_status over stdio; its answer's status or the log's end.
stdio_call() {
  local req='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_bike_status","arguments":{"bikeId":"VL-2048"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
  env "$@" timeout 20 "$bin" stdio <<<"$req" 2>"$t/stdio.log" |
    sed -n 's/.*"structuredContent":{"bikeId":"VL-2048","status":"\([a-z_]*\)".*/\1/p'
}

# --- a database that is not a development one.
serve_once refused
rc=$?
check "serve, local mode, on a production database: refused at start (exit $rc), naming the setting" \
  test "$rc" = 1 -a -n "$(grep -E "refusing to serve: .*$refusal" "$t/refused.log")"
check "... and it never listened" test -z "$(grep 'serving MCP at' "$t/refused.log")"
status=$(stdio_call)
check "stdio, local mode, on a production database: refused, naming the setting" \
  test -z "$status" -a -n "$(grep -E "stdio: no usable identity: .*$refusal" "$t/stdio.log")"
if serve allowed BIKAROO_LOCAL_ALLOW_ANY_DATABASE=1; then
  answer=$(mcp "$PORT" tools/call get_bike_status '"name":"get_bike_status","arguments":{"bikeId":"VL-2048"},')
  check "with BIKAROO_LOCAL_ALLOW_ANY_DATABASE=1 serve serves there as the configured identity" \
    grep -q '"structuredContent":{"bikeId":"VL-2048"' <<<"$answer"
  check "... saying so at start in a warning (whoever reaches it acts as marie)" grep -qE "$warning" "$t/allowed.log"
  stop allowed
else
  check "with BIKAROO_LOCAL_ALLOW_ANY_DATABASE=1 serve starts" false
fi
status=$(stdio_call BIKAROO_LOCAL_ALLOW_ANY_DATABASE=1)
check "with BIKAROO_LOCAL_ALLOW_ANY_DATABASE=1 stdio serves there ($status), with the same warning" \
  test -n "$status" -a -n "$(grep -E "$warning" "$t/stdio.log")"

# --- a development database: no setting needed, no warning.
environment development
if serve dev; then
  check "on a development database serve serves in local mode, without the warning" \
    test -n "$(grep '"structuredContent"' <<<"$(mcp "$PORT" tools/call get_bike_status '"name":"get_bike_status","arguments":{"bikeId":"VL-2048"},')")" \
    -a -z "$(grep 'NOT a development one' "$t/dev.log")"
  stop dev
else
  check "on a development database serve starts in local mode" false
fi
status=$(stdio_call)
check "... and so does stdio ($status)" test -n "$status" -a -z "$(grep 'NOT a development one' "$t/stdio.log")"

# --- started while the database is down: judged once it answers, before anything is served.
environment production
scripts/pgtmp.sh stop "$t/pg" 2>>"$t/pg.log"
if serve late BIKAROO_DB_RETRY_MAX_MS=300; then
  late=$PID
  scripts/pgtmp.sh start "$t/pg" >/dev/null 2>>"$t/pg.log"
  served=0
  for _ in $(seq 1 100); do
    kill -0 "$late" 2>/dev/null || break
    grep -q '"structuredContent"' <<<"$(mcp "$PORT" tools/call get_bike_status '"name":"get_bike_status","arguments":{"bikeId":"VL-2048"},')" && served=1
    sleep 0.1
  done
  kill -TERM "$late" 2>/dev/null # still serving: the refusal never came (a bounded wait)
  wait "$late"
  rc=$?
  check "started while its database was down, serve refuses once it answers (exit $rc), having served nothing as marie" \
    test "$rc" = 1 -a "$served" = 0 -a -n "$(grep -E "refusing to serve: .*$refusal" "$t/late.log")"
else
  check "serve starts while its database is down" false
fi
suite_exit
