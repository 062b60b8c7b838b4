#!/usr/bin/env bash
# make bench: get_bike_status over HTTP against baselines measured in the same run, on the same
# throwaway PostgreSQL (100k bikes). Prints rates and the ratios that matter (absolute figures
# are noisy on shared machines). Bounded: each load runs BENCH_SECONDS (default 8).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
B=${1:-build}
secs=${BENCH_SECONDS:-8}
conns=${BENCH_CONNECTIONS:-8}
command -v wrk >/dev/null || {
  if [[ $EUID == 0 ]]; then apt-get install -y -qq wrk >/dev/null; else echo "bench needs wrk: sudo apt-get install -y wrk" >&2; exit 1; fi
}
pgdir=$PWD/.run/bench-pg
tmp=$(mktemp -d)
server_pid=
cleanup() {
  [[ -n "$server_pid" ]] && kill -TERM "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  scripts/pgtmp.sh destroy "$pgdir" >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT

set -a
eval "$(scripts/pgtmp.sh start "$pgdir")"
set +a
super="postgresql://postgres@/bikaroo?$PGTMP_QUERY"
DATABASE_URL=$BIKAROO_MIGRATE_URL "$B/bikaroo-mcp" migrate >/dev/null 2>&1
psql -X -q "$BIKAROO_MIGRATE_URL" -v ON_ERROR_STOP=1 -f migrations/demo/demo-data.sql
# 100k bikes in all, as in ARCHITECTURE.md's measurements.
psql -X -q "$BIKAROO_MIGRATE_URL" -v ON_ERROR_STOP=1 -c "
  INSERT INTO fleet.bikes (bike_id, region, station_id, status, battery_pct, last_seen_at)
  SELECT 'VL-' || n, (ARRAY['BE-BRU','FR-LYO','FR-PAR'])[n % 3 + 1], NULL, 'available', n % 101, now()
    FROM generate_series(100000, 195999) n ON CONFLICT DO NOTHING;
  ANALYZE fleet.bikes;"

# pgbench scripts: a random FR-PAR bike id (n % 3 == 2) each transaction.
cat >"$tmp/plain.sql" <<'SQL'
\set n 3 * random(33334, 65332) + 2
SELECT bike_id, status, region, station_id, battery_pct, last_seen_at FROM fleet.bikes WHERE bike_id = 'VL-' || :n;
SQL
cat >"$tmp/asuser.sql" <<'SQL'
\set n 3 * random(33334, 65332) + 2
SELECT * FROM fleet.bike_status_as('marie', 'customer-care-assistant', 'VL-' || :n);
SQL
cat >"$tmp/audited.sql" <<'SQL'
\set n 3 * random(33334, 65332) + 2
SELECT * FROM fleet.bike_status_audited_as('marie', 'customer-care-assistant', 'VL-' || :n, repeat('0', 64), '1');
SQL
pgrate() { # url script -> transactions per second
  pgbench -n -M prepared -c "$conns" -j 2 -T "$secs" -f "$2" "$1" 2>/dev/null |
    sed -nE 's/^tps = ([0-9.]+).*/\1/p' | head -n 1
}
echo "== PostgreSQL baselines ($conns clients, ${secs}s each, prepared)"
plain=$(pgrate "$super" "$tmp/plain.sql")
echo "plain SELECT by id, no RLS (superuser):            $plain/s"
asuser=$(pgrate "$DATABASE_URL" "$tmp/asuser.sql")
echo "fleet.bike_status_as() as fleet_app under RLS:     $asuser/s"
audited=$(pgrate "$DATABASE_URL" "$tmp/audited.sql")
echo "the same + its audit row (what tools/call runs):   $audited/s"

ready=$tmp/port
BIKAROO_AUTH=local BIKAROO_PORT=0 BIKAROO_READY_FILE=$ready BIKAROO_LOG_LEVEL=warn BIKAROO_THREADS=${BENCH_THREADS:-4} \
  "$B/bikaroo-mcp" serve 2>"$tmp/server.log" &
server_pid=$!
for _ in $(seq 1 100); do [[ -s $ready ]] && break; sleep 0.1; done
[[ -s $ready ]] || { echo "bench: the server did not start:" >&2; cat "$tmp/server.log" >&2; exit 1; }
port=$(cat "$ready")

cat >"$tmp/discover.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = "server/discover"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
LUA
cat >"$tmp/bike.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = "tools/call"
wrk.headers["Mcp-Name"] = "get_bike_status"
request = function()
  local n = 3 * math.random(33334, 65332) + 2
  return wrk.format(nil, nil, nil, '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_bike_status","arguments":{"bikeId":"VL-' .. n .. '"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}')
end
done = function(summary, latency, requests)
  io.write(string.format("non2xx=%d errors=%d\n", summary.errors.status, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
LUA
wrkrate() { # lua -> requests per second
  wrk -t 2 -c "$conns" -d "${secs}s" -s "$1" "http://127.0.0.1:$port/mcp" >"$tmp/wrk.out" 2>&1
  grep -E 'non2xx=' "$tmp/wrk.out" >&2 || true
  grep -E 'Latency' "$tmp/wrk.out" | awk '{print "  latency avg " $2 ", p-stdev " $3 ", max " $4}' >&2
  sed -nE 's/^Requests\/sec: *([0-9.]+).*/\1/p' "$tmp/wrk.out"
}
echo "== HTTP server ($conns connections, ${secs}s each, ${BENCH_THREADS:-4} workers)"
disc=$(wrkrate "$tmp/discover.lua")
echo "server/discover (protocol only, no database):     $disc/s"
bike=$(wrkrate "$tmp/bike.lua")
echo "tools/call get_bike_status (parse..serialize):   $bike/s"
rss=$(awk '/VmHWM/ {print $2 " " $3}' "/proc/$server_pid/status")
echo "server peak RSS after the loads:                  $rss"

echo "== ratios"
awk -v p="$plain" -v a="$asuser" -v u="$audited" -v b="$bike" -v d="$disc" 'BEGIN {
  printf "bike_status_as under RLS / plain SELECT:          %.2f\n", a / p
  printf "audited read / bike_status_as (cost of audit):    %.2f\n", u / a
  printf "get_bike_status over MCP / audited read alone:    %.2f\n", b / u
  printf "get_bike_status over MCP / plain SELECT:          %.2f\n", b / p
  printf "get_bike_status over MCP / bike_status_as alone:  %.2f\n", b / a
  printf "get_bike_status over MCP / server/discover:       %.2f\n", b / d
}'
