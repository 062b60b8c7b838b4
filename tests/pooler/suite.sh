#!/usr/bin/env bash
# tests/pooler/suite.sh: the server behind a transaction-pooling PgBouncer (Debian's 1.18, which
# cannot track named prepared statements). Starts pgbouncer on 127.0.0.1 in transaction mode with
# a pool of 2 server connections, and two instances through it with BIKAROO_DB_POOLER=transaction
# (unnamed statements) and a direct BIKAROO_LISTEN_DATABASE_URL for the change feed, acting as two
# users of different regions (marie: FR-PAR, paul: FR-LYO), 4 workers each: 8 client connections
# interleaved over 2 server connections. Shows that neither user ever sees the other's perimeter,
# that nothing fails (no "prepared statement already exists"), that the pool stays 2 connections,
# that LISTEN runs on the direct connection and its updates arrive, and that transaction mode
# without a direct LISTEN connection is refused at start.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
# shellcheck source=tests/lib/harness.sh
source tests/lib/harness.sh
suite_init "$@"
chmod 0755 "$t"
bouncer=
# The instances stop first (suite_pids), then the pooler they use.
# shellcheck disable=SC2016  # expanded at the end
suite_on_exit '[[ -n $bouncer ]] && kill -TERM "$bouncer" 2>/dev/null && wait "$bouncer" 2>/dev/null'

command -v pgbouncer >/dev/null || { echo "skip - pooler: pgbouncer is not installed (scripts/deps.sh)"; exit 0; }
sock=$PGTMP_SOCK
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port=$(free_port)
cat >"$t/pgbouncer.ini" <<EOF
[databases]
bikaroo = host=$sock dbname=bikaroo
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir =
auth_type = trust
auth_file = $t/users.txt
pool_mode = transaction
default_pool_size = 2
min_pool_size = 0
reserve_pool_size = 0
max_client_conn = 64
server_lifetime = 3600
logfile = $t/pgbouncer.log
EOF
echo '"fleet_app" ""' >"$t/users.txt"
chmod 0644 "$t"/*
[[ $EUID == 0 ]] && chown postgres "$t" # pgbouncer writes its log there
# PgBouncer refuses to run as root: as root it runs as the postgres user, like the cluster.
if [[ $EUID == 0 ]]; then
  runuser -u postgres -- pgbouncer "$t/pgbouncer.ini" 2>>"$t/pgbouncer.err" &
else
  pgbouncer "$t/pgbouncer.ini" 2>>"$t/pgbouncer.err" &
fi
# shellcheck disable=SC2034  # stopped at the end (suite_on_exit above)
bouncer=$!
# Every parameter pinned, as pgtmp.sh's URLs: the caller's PG* variables do not reach it.
pooled="postgresql://fleet_app@127.0.0.1:$port/bikaroo?hostaddr=&sslmode=disable&gssencmode=disable&options=&passfile=&connect_timeout=10&target_session_attrs=any&client_encoding=UTF8"
for _ in $(seq 1 50); do psql -X -q "$pooled" -c 'SELECT 1' >/dev/null 2>&1 && break; sleep 0.1; done
if ! psql -X -q "$pooled" -c 'SELECT 1' >/dev/null 2>&1; then
  nok "pgbouncer (transaction mode, pool 2) starts on 127.0.0.1"
  cat "$t/pgbouncer.err" "$t/pgbouncer.log" 2>/dev/null | tail -n 20
  suite_exit
fi
ok "pgbouncer (transaction mode, pool 2) starts on 127.0.0.1"

direct="$DATABASE_URL&application_name=bikaroo-listen"
# start NAME SUBJECT [ENV...]: one instance through the pooler; its port in $t/NAME.port.
start() {
  local name=$1 subject=$2
  shift 2
  env BIKAROO_AUTH=local BIKAROO_LOCAL_SUBJECT="$subject" BIKAROO_PORT=0 BIKAROO_THREADS=4 BIKAROO_RATE_READS=0 \
    BIKAROO_READY_FILE="$t/$name.port" DATABASE_URL="$pooled" "$@" \
    "$bin" serve 2>"$t/$name.log" &
  suite_pids+=($!)
  for _ in $(seq 1 100); do [[ -s $t/$name.port ]] && return 0; sleep 0.1; done
  return 1
}

# Transaction mode without a direct connection for LISTEN: refused, saying why.
BIKAROO_DB_POOLER=transaction BIKAROO_AUTH=local BIKAROO_PORT=0 DATABASE_URL="$pooled" \
  timeout 10 "$bin" serve 2>"$t/refused.log"
rc=$?
if [[ $rc == 1 ]] && grep -q 'needs BIKAROO_LISTEN_DATABASE_URL' "$t/refused.log"; then
  ok "transaction mode without BIKAROO_LISTEN_DATABASE_URL is refused at start"
else
  nok "transaction mode without BIKAROO_LISTEN_DATABASE_URL is refused at start (exit $rc)"
  tail -n 5 "$t/refused.log"
fi

if start par marie BIKAROO_DB_POOLER=transaction BIKAROO_LISTEN_DATABASE_URL="$direct" &&
  start lyo paul BIKAROO_DB_POOLER=transaction BIKAROO_LISTEN_DATABASE_URL="$direct"; then
  ok "two instances start through the pooler (no prepared statement left on a shared connection)"
else
  nok "two instances start through the pooler"
  tail -n 5 "$t"/par.log "$t"/lyo.log
  suite_exit
fi

call() { # port id bike -> the response body
  curl -s --max-time 10 -X POST "http://127.0.0.1:$1/mcp" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28' \
    -H 'Mcp-Method: tools/call' -H 'Mcp-Name: get_bike_status' \
    -d '{"jsonrpc":"2.0","id":"'"$2"'","method":"tools/call","params":{"name":"get_bike_status","arguments":{"bikeId":"'"$3"'"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
  echo
}
# load NAME OWN OTHER: 4 parallel callers, 40 pairs each: the own region's bike must be read,
# the other's must read as not found. Writes one verdict line per call.
load() {
  local name=$1 own=$2 other=$3 p
  p=$(cat "$t/$name.port")
  for w in 1 2 3 4; do
    for i in $(seq 1 40); do
      if call "$p" "$name-$w-$i" "$own" | grep -q "\"structuredContent\":{\"bikeId\":\"$own\""; then echo good; else echo "bad own $own"; fi
      if call "$p" "$name-$w-$i-x" "$other" | grep -q '"isError":true'; then echo good; else echo "bad other $other"; fi
    done &
  done
  wait
}
# The two users at once, their transactions interleaved over the 2 server connections; the
# pool is sampled meanwhile.
( for _ in 1 2 3 4 5 6; do
    psql -X -At "$PGTMP_SUPER_URL" -c "SELECT count(*) FROM pg_stat_activity WHERE usename = 'fleet_app' AND application_name <> 'bikaroo-listen'"
    sleep 0.3
  done >"$t/pool.samples" ) &
sampler=$!
load par VL-2048 VL-2047 >"$t/par.verdicts" &
lpar=$!
load lyo VL-2047 VL-2048 >"$t/lyo.verdicts" &
llyo=$!
wait "$lpar" "$llyo" "$sampler"
good=$(cat "$t"/par.verdicts "$t"/lyo.verdicts | grep -c '^good$')
bad=$(cat "$t"/par.verdicts "$t"/lyo.verdicts | grep -vc '^good$')
if [[ $good == 640 && $bad == 0 ]]; then
  ok "two users interleaved through 2 server connections: 640 calls, each saw only its own perimeter"
else
  nok "two users interleaved through 2 server connections: $good good, $bad wrong or failed"
  cat "$t"/par.verdicts "$t"/lyo.verdicts | grep -v '^good$' | sort | uniq -c | head -n 5
fi
maxpool=$(sort -n "$t/pool.samples" | tail -n 1)
if [[ -n $maxpool && $maxpool -le 2 ]]; then
  ok "the pool held at most 2 server connections for 8 client connections (max $maxpool sampled)"
else
  nok "the pool held at most 2 server connections (max sampled: ${maxpool:-none})"
fi
if grep -qiE 'already exists|statement .* failed|error' "$t"/par.log "$t"/lyo.log; then
  nok "no statement failed behind the pooler"
  grep -hiE 'already exists|failed|error' "$t"/par.log "$t"/lyo.log | head -n 5
else
  ok "no statement failed behind the pooler"
fi
# The change feed: a listen on a bike, an update of that bike, the update heard; meanwhile the
# feed's LISTEN is on the direct connection (application_name bikaroo-listen), not the pooler.
p=$(cat "$t/par.port")
: >"$t/listen.out"
curl -s -N --max-time 6 -X POST "http://127.0.0.1:$p/mcp" -H 'Content-Type: application/json' \
  -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28' \
  -H 'Mcp-Method: subscriptions/listen' \
  -d '{"jsonrpc":"2.0","id":"w1","method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":["bikaroo://fleet/bikes/VL-2051"]},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}' \
  >"$t/listen.out" 2>&1 &
lpid=$!
for _ in $(seq 1 50); do grep -q 'subscriptions/acknowledged' "$t/listen.out" && break; sleep 0.1; done
# Each instance's feed listens from start-up, on its own direct connection: one each, none
# through the pooler.
n=$(psql -X -At "$PGTMP_SUPER_URL" -c "SELECT count(*) FILTER (WHERE application_name = 'bikaroo-listen') || ' ' || count(*) FILTER (WHERE application_name IS DISTINCT FROM 'bikaroo-listen') FROM pg_stat_activity WHERE query LIKE 'LISTEN bikaroo%'")
psql -X -q "$BIKAROO_MIGRATE_URL" -c "UPDATE fleet.bikes SET battery_pct = (coalesce(battery_pct, 0) + 1) % 100 WHERE bike_id = 'VL-2051'"
for _ in $(seq 1 50); do grep -q 'notifications/resources/updated' "$t/listen.out" && break; sleep 0.1; done
kill "$lpid" 2>/dev/null; wait "$lpid" 2>/dev/null
if [[ $n == "2 0" ]]; then
  ok "the change feed's LISTEN runs on each instance's direct connection (2 instances, none through the pooler)"
else
  nok "the change feed's LISTEN runs on each instance's direct connection (direct, other: $n)"
fi
if grep -q 'notifications/resources/updated' "$t/listen.out" && grep -q 'VL-2051' "$t/listen.out"; then
  ok "a listen through a pooled instance hears the update"
else
  nok "a listen through a pooled instance hears the update"
  head -c 600 "$t/listen.out"
fi
suite_exit
