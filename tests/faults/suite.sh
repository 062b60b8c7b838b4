#!/usr/bin/env bash
# tests/faults/suite.sh: the database down when the server starts. A cluster of its own is
# created, migrated and stopped; the server starts against it, serves what needs no database,
# answers 503 + Retry-After for the rest (never a result, never a hang), then serves once the
# cluster is started, in the same process, and stops with 0.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
# shellcheck source=tests/lib/harness.sh
source tests/lib/harness.sh
suite_init "$@"
pgdir=$PWD/.run/faults-pg-$$
suite_on_exit "scripts/pgtmp.sh destroy '$pgdir'"
# fatal WHAT: a failure the steps after it depend on: not ok, the servers' last lines, the end.
fatal() {
  nok "$*"
  for f in "$t/serve.log" "$t/serve2.log"; do [[ -f $f ]] && grep -v 'still unavailable\|connection failed' "$f" | tail -n 10; done
  suite_exit
}

env_lines=$(scripts/pgtmp.sh start "$pgdir" 2>"$t/pg.log") || { cat "$t/pg.log"; fatal "a cluster of its own starts"; }
db_url=$(sed -n "s/^DATABASE_URL='\(.*\)'$/\1/p" <<<"$env_lines")
owner_url=$(sed -n "s/^BIKAROO_MIGRATE_URL='\(.*\)'$/\1/p" <<<"$env_lines")
DATABASE_URL=$owner_url BIKAROO_MIGRATE_URL=$owner_url "$bin" migrate >"$t/migrate.log" 2>&1 || { cat "$t/migrate.log"; fatal "its schema migrates"; }
psql -X "$owner_url" -v ON_ERROR_STOP=1 -q -f migrations/demo/demo-data.sql >/dev/null || fatal "its demo data loads"
scripts/pgtmp.sh stop "$pgdir" 2>>"$t/pg.log" || fatal "the cluster stops"

# call METHOD NAME PARAMS: one 2026-07-28 request; prints the status line's code, headers in $t/h.
call() {
  curl -s -m 5 -o "$t/body" -D "$t/h" -w '%{http_code}' "http://127.0.0.1:$port/mcp" \
    -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -H 'MCP-Protocol-Version: 2026-07-28' -H "Mcp-Method: $1" ${2:+-H "Mcp-Name: $2"} \
    -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"$1\",\"params\":{$3\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}}}"
}
read_bike='"name":"get_bike_status","arguments":{"bikeId":"VL-2048"},'

# shellcheck disable=SC2086
DATABASE_URL=$db_url BIKAROO_AUTH=local BIKAROO_PORT=0 BIKAROO_READY_FILE=$t/port BIKAROO_METRICS_LISTEN=127.0.0.1:0 \
  BIKAROO_DB_RETRY_MAX_MS=500 ${BIKAROO_WRAPPER:-} "$bin" serve 2>"$t/serve.log" &
pid=$!
suite_pids+=("$pid")
for _ in $(seq 1 300); do [[ -s $t/port ]] && break; kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
[[ -s $t/port ]] || fatal "the server starts while its database is down (it exited or never listened)"
port=$(cat "$t/port")
ok "the server starts while its database is down"

code=$(curl -s -m 5 -o "$t/ready" -w '%{http_code}' "http://127.0.0.1:$port/readyz")
[[ $code == 503 ]] && grep -q 'database' "$t/ready" ||
  fatal "/readyz is 503 naming the database meanwhile (got $code: $(cat "$t/ready"))"
ok "/readyz is 503 naming the database meanwhile: $(cat "$t/ready")"

code=$(call server/discover "" "")
[[ $code == 200 ]] || fatal "server/discover is answered without the database (got $code)"
ok "what needs no database is served meanwhile (server/discover 200)"

start=$(date +%s%N)
code=$(call tools/call get_bike_status "$read_bike")
took=$((($(date +%s%N) - start) / 1000000))
grep -qi '^Retry-After: ' "$t/h" && grep -q '"error"' "$t/body" && ! grep -q '"result"' "$t/body" ||
  fatal "a tool call without the database gets a JSON-RPC error and Retry-After (got: $(cat "$t/body"))"
[[ $code == 503 && $took -lt 2000 ]] || fatal "a tool call without the database gets 503 at once (got $code in $took ms)"
ok "a tool call without the database gets 503 + Retry-After and an error, in $took ms"

# A second server logs in as the superuser: once the database answers it must refuse to serve
# (row-level security would not apply), never having run a statement as that role: its retry
# comes up to a second after the cluster, and every tool call meanwhile must still be a 503.
super_url=${db_url/fleet_app@/postgres@}
# shellcheck disable=SC2086
DATABASE_URL=$super_url BIKAROO_AUTH=local BIKAROO_PORT=0 BIKAROO_READY_FILE=$t/port2 BIKAROO_METRICS_LISTEN=127.0.0.1:0 \
  BIKAROO_DB_RETRY_MAX_MS=4000 ${BIKAROO_WRAPPER:-} "$bin" serve 2>"$t/serve2.log" &
pid2=$!
suite_pids+=("$pid2")
for _ in $(seq 1 300); do [[ -s $t/port2 ]] && break; sleep 0.1; done
port2=$(cat "$t/port2" 2>/dev/null)
sleep 1 # its tries at 0.25, 0.75 and 1.75 s: the cluster comes up between the last two

scripts/pgtmp.sh start "$pgdir" >/dev/null 2>>"$t/pg.log" || fatal "the cluster starts again"
start=$(date +%s%N)
served=0 served2=0
for _ in $(seq 1 100); do
  if [[ $served == 0 ]]; then
    code=$(call tools/call get_bike_status "$read_bike")
    [[ $code == 200 ]] && grep -q '"FR-PAR"' "$t/body" && served=1 &&
      took=$((($(date +%s%N) - start) / 1000000))
  fi
  if kill -0 "$pid2" 2>/dev/null; then
    [[ $(port=$port2 call tools/call get_bike_status "$read_bike") == 200 ]] && served2=1
  elif [[ $served == 1 ]]; then
    break
  fi
  sleep 0.05
done
[[ $served == 1 ]] || fatal "the same process serves once the database is up (last: $code)"
ok "the same process serves once the database is up ($took ms after the cluster started)"
code=$(curl -s -m 5 -o "$t/ready" -w '%{http_code}' "http://127.0.0.1:$port/readyz")
[[ $code == 200 ]] || fatal "/readyz is 200 once the database is up (got $code: $(cat "$t/ready"))"
ok "/readyz is 200 once the database is up"
wait "$pid2"; rc2=$?
[[ -n $port2 && $served2 == 0 && $rc2 == 1 ]] && grep -q 'refusing to serve: the login role is a superuser' "$t/serve2.log" ||
  fatal "a server whose role turns out to be a superuser serves nothing and exits 1 (served $served2, exit $rc2)"
ok "a server whose login role turns out to be a superuser answers nothing from the database and exits 1"

kill -TERM "$pid"; wait "$pid"; rc=$?
[[ $rc == 0 ]] || fatal "the server stops with 0 (got $rc)"
ok "it stops with 0"
