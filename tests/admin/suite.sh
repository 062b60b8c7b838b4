#!/usr/bin/env bash
# tests/admin/suite.sh: onboarding a real deployment with `bikaroo-mcp admin`, from nothing. On a
# cluster of its own: the roles made with the wrong attributes on purpose, then `admin
# create-roles` as the superuser (attributes, passwords, the database, public locked); migrate as
# the owner; regions, stations and bikes loaded from CSV (quotes, CRLF; a bad file refused whole,
# naming its line, column and what is expected: not UTF-8, a wrong header, a value the database
# refuses; nothing half-loaded); a principal and a client application added (a role or code the
# database refuses said in words); the server as fleet_app serves
# that principal; deactivated, it is refused. Every change leaves its row in fleet.admin_log; the
# server's login role is refused every admin function (EXECUTE revoked), and a non-superuser is
# refused create-roles. Prints `ok - ` / `not ok - ` lines.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
# shellcheck source=tests/lib/harness.sh
source tests/lib/harness.sh
suite_init "$@"
chmod 755 "$t"
pid=
suite_on_exit '[[ -n $pid ]] && kill -TERM "$pid" && wait "$pid"'
suite_on_exit 'scripts/pgtmp.sh destroy "$t/pg"'
# shellcheck source=scripts/pgtmp.sh
source scripts/pgtmp.sh --functions
pgtmp_scrub_env
unset PGHOST PGPORT PGUSER PGDATABASE PGOPTIONS PGSSLMODE PGGSSENCMODE PGTARGETSESSIONATTRS PGCONNECT_TIMEOUT PGPASSFILE PGHOSTADDR PGCLIENTENCODING PGAPPNAME
eval "$(PGTMP_DB=postgres scripts/pgtmp.sh start "$t/pg" 2>/dev/null)" || { echo "not ok - a cluster of its own"; exit 1; }
super="postgresql://postgres@/postgres?$PGTMP_QUERY"
owner="postgresql://fleet_owner@/onboard?$PGTMP_QUERY"
app="postgresql://fleet_app@/onboard?$PGTMP_QUERY"
q() { psql -X -At -v ON_ERROR_STOP=1 "$@" 2>&1; }

# --- the roles: wrong on purpose (superuser, BYPASSRLS), then made right by create-roles.
q "$super" -c 'ALTER ROLE fleet_app SUPERUSER BYPASSRLS CREATEDB' -c 'ALTER ROLE fleet_owner BYPASSRLS' >/dev/null
out=$(BIKAROO_SUPER_URL="postgresql://fleet_owner@/postgres?$PGTMP_QUERY" "$bin" admin create-roles onboard 2>&1)
check "create-roles as a role that is not a superuser is refused, saying so ($(tail -n 1 <<<"$out" | cut -c 1-90))" \
  grep -qE 'permission denied|must be superuser' <<<"$out"
out=$(BIKAROO_SUPER_URL="$super" BIKAROO_OWNER_PASSWORD=owner-pw-1 BIKAROO_APP_PASSWORD=app-pw-1 "$bin" admin create-roles onboard 2>&1)
check "admin create-roles onboard as the superuser: $out" grep -q 'database onboard ready' <<<"$out"
check "... fleet_app: login, no superuser, no BYPASSRLS, no CREATEDB, no CREATEROLE, a password" \
  test "$(q "$super" -c "SELECT rolcanlogin, rolsuper, rolbypassrls, rolcreatedb, rolcreaterole, rolpassword IS NOT NULL FROM pg_authid WHERE rolname = 'fleet_app'")" = "t|f|f|f|f|t"
check "... fleet_owner: login, no superuser, no BYPASSRLS, a password; it owns the database" \
  test "$(q "$super" -c "SELECT a.rolcanlogin, a.rolsuper, a.rolbypassrls, a.rolpassword IS NOT NULL, pg_get_userbyid(d.datdba) FROM pg_authid a, pg_database d WHERE a.rolname = 'fleet_owner' AND d.datname = 'onboard'")" = "t|f|f|t|fleet_owner"
check "... and nobody but the owner creates in schema public" \
  test "$(q "postgresql://postgres@/onboard?$PGTMP_QUERY" -c "SELECT has_schema_privilege('fleet_app', 'public', 'CREATE')")" = f
out=$(BIKAROO_SUPER_URL="$super" "$bin" admin create-roles onboard 2>&1)
check "... both passwords set, as SCRAM hashes (the statement carried the hash, not the password)" \
  test "$(q "$super" -c "SELECT count(*) FROM pg_authid WHERE rolname IN ('fleet_owner', 'fleet_app') AND rolpassword LIKE 'SCRAM-SHA-256\$%'")" = 2
check "create-roles again changes nothing and succeeds" grep -q 'ready' <<<"$out"
check "bikaroo-mcp migrate as fleet_owner" bash -c "BIKAROO_MIGRATE_URL='$owner' BIKAROO_LOG_LEVEL=warn '$bin' migrate"

# --- regions, stations and bikes from CSV.
printf 'code,name\r\nDE-BER,Berlin\r\nDE-HAM,"Hamburg, Hansestadt"\r\n' >"$t/regions.csv"
printf 'station_id,region,name\nBER-001,DE-BER,"Alexanderplatz ""Ost"""\nHAM-001,DE-HAM,Jungfernstieg\n' >"$t/stations.csv"
{
  echo 'bike_id,region,station_id,status,battery_pct,last_seen_at'
  echo 'VL-7001,DE-BER,BER-001,available,81,2026-11-30T08:00:00Z'
  echo 'VL-7002,DE-HAM,,in_use,,2026-11-30T08:05:00Z'
} >"$t/bikes.csv"
export BIKAROO_MIGRATE_URL=$owner
for kind in regions stations bikes; do
  out=$("$bin" admin load "$kind" "$t/$kind.csv" 2>&1)
  check "admin load $kind: $out" grep -q "^admin: 2 $kind loaded" <<<"$out"
done
check "... as written: a quoted comma and a doubled quote, an empty station and battery read as none" \
  test "$(q "$owner" -c "SELECT string_agg(x, ';' ORDER BY x) FROM (SELECT name AS x FROM fleet.regions UNION ALL SELECT name FROM fleet.stations UNION ALL SELECT bike_id || coalesce(station_id, '-') || coalesce(battery_pct::text, '-') FROM fleet.bikes) s")" \
  = 'Alexanderplatz "Ost";Berlin;Hamburg, Hansestadt;Jungfernstieg;VL-7001BER-00181;VL-7002--'
printf 'bike_id,region,station_id,status,battery_pct,last_seen_at\nVL-7003,DE-BER,,available,50,2026-11-30T08:00:00Z\nVL-7004,XX-NOP,,available,50,2026-11-30T08:00:00Z\n' >"$t/bad.csv"
out=$("$bin" admin load bikes "$t/bad.csv" 2>&1)
check "a load with a bike of an unknown region is refused whole, saying why (exit 1; VL-7003 not loaded either)" \
  test -n "$(grep 'admin load: .*region' <<<"$out")" -a "$(q "$owner" -c "SELECT count(*) FROM fleet.bikes WHERE bike_id = 'VL-7003'")" = 0
printf 'code,name\nDE-MUC\n' >"$t/short.csv"
out=$("$bin" admin load regions "$t/short.csv" 2>&1)
check "a CSV record with too few fields is refused naming its line ($out)" grep -q 'short.csv:2: 1 fields, the header names 2' <<<"$out"

# --- a file is stored as written or refused whole: file, line, column, what is expected.
bikes_head='bike_id,region,station_id,status,battery_pct,last_seen_at'
bikes_before=$(q "$owner" -c 'SELECT count(*) FROM fleet.bikes')
log_before=$(q "$owner" -c 'SELECT count(*) FROM fleet.admin_log')
refused() { # refused NAME CONTENT WANT: admin load bikes of a file NAME holding CONTENT (printf)
  # exits 1 saying WANT (grep -E), with no SQL text, and stores nothing
  printf "$2" >"$t/$1.csv"
  out=$("$bin" admin load bikes "$t/$1.csv" 2>&1)
  rc=$?
  check "$1: refused, exit 1, nothing stored: $out" \
    test "$rc" = 1 -a -n "$(grep -E -- "$3" <<<"$out")" -a -z "$(grep -E 'null value|violates|_check|_fkey|DETAIL|CONTEXT' <<<"$out")" \
    -a "$(q "$owner" -c 'SELECT count(*) FROM fleet.bikes')|$(q "$owner" -c 'SELECT count(*) FROM fleet.admin_log')" = "$bikes_before|$log_before"
}
refused not-utf8 "$bikes_head\nVL-7101,DE-BER,\377,available,\377,2026-11-30T08:00:00Z\n" \
  "not-utf8.csv:2: column station_id: \"\\\\xff\" is not UTF-8 text"
refused not-utf8-late "$bikes_head\nVL-7101,DE-BER,,available,50,2026-11-30T08:00:00Z\nVL-7102,DE-BER,,available,\377,2026-11-30T08:00:00Z\n" \
  "not-utf8-late.csv:3: column battery_pct: .* is not UTF-8 text"
refused wrong-header "bike,region,station_id,status,battery_pct,last_seen_at\nVL-7101,DE-BER,,available,50,2026-11-30T08:00:00Z\n" \
  'wrong-header.csv:1: the header names "bike", not a column of bikes: its columns are bike_id,region'
refused no-key "region,status,last_seen_at\nDE-BER,available,2026-11-30T08:00:00Z\n" \
  'no-key.csv:1: column bike_id: the header lacks column bike_id'
refused empty-region "$bikes_head\nVL-7101,,,available,50,2026-11-30T08:00:00Z\n" \
  'empty-region.csv:2: column region: empty, where it must be the code of a region that exists'
refused battery-range "$bikes_head\nVL-7101,DE-BER,,available,50,2026-11-30T08:00:00Z\nVL-7102,DE-BER,,available,150,2026-11-30T08:00:00Z\n" \
  'battery-range.csv:3: column battery_pct: the database refuses "150": it must be a whole number from 0 to 100'
refused battery-word "$bikes_head\nVL-7101,DE-BER,,available,full,2026-11-30T08:00:00Z\n" \
  'battery-word.csv:2: column battery_pct: "full" is not a whole number from 0 to 100'
refused bad-id "$bikes_head\n\"VL-7101\nx\",DE-BER,,available,50,2026-11-30T08:00:00Z\n" \
  'bad-id.csv:2: column bike_id: the database refuses "VL-7101\\x0ax": it must be a bike id'
refused no-offset "$bikes_head\nVL-7101,DE-BER,,available,50,2026-11-30 08:00\n" \
  'no-offset.csv:2: column last_seen_at: "2026-11-30 08:00" is not a date and time with its offset'
refused no-such-day "$bikes_head\nVL-7101,DE-BER,,available,50,2026-02-30T08:00:00Z\n" \
  'no-such-day.csv:2: column last_seen_at: the database refuses "2026-02-30T08:00:00Z"'
refused unknown-status "$bikes_head\nVL-7101,DE-BER,,broken,50,2026-11-30T08:00:00Z\n" \
  'unknown-status.csv:2: column status: the database refuses "broken": it must be a status code that exists'
refused twice "$bikes_head\nVL-7101,DE-BER,,available,50,2026-11-30T08:00:00Z\nVL-7101,DE-BER,,in_use,50,2026-11-30T08:00:00Z\n" \
  'twice.csv:3: column bike_id: bike_id VL-7101 is on line 2 already'
refused nul "$bikes_head\nVL-7101,DE-BER,,available,5\0000,2026-11-30T08:00:00Z\n" \
  'nul.csv:2: a NUL byte'

# --- people and applications.
out=$("$bin" admin principal camille customer_care DE-BER 'Camille Petit' 2>&1)
check "admin principal camille customer_care DE-BER: $out" grep -q '^admin: principal camille' <<<"$out"
out=$("$bin" admin principal nobody viewer XX-NOP 'No One' 2>&1)
check "a principal in a region that does not exist is refused, naming it ($(cut -c 1-80 <<<"$out"))" grep -q 'no such region: XX-NOP' <<<"$out"
out=$("$bin" admin principal theo technician DE-BER 'Theo Roux' 2>&1)
check "admin principal theo technician DE-BER (the workshop's role): $out" grep -q '^admin: principal theo' <<<"$out"
out=$("$bin" admin principal nobody boss DE-BER 'No One' 2>&1)
check "a principal with a role that does not exist: the four roles, not a constraint's name ($out)" \
  test "$out" = 'admin principal: ROLE must be viewer, customer_care, fleet_operator or technician'
out=$("$bin" admin region de-ber Berlin 2>&1)
check "a region code the database refuses: what a code is, not a constraint's name ($out)" \
  test "$out" = 'admin region: CODE must be two capital letters, a hyphen, three (FR-PAR)'
out=$("$bin" admin principal nobody viewer DE-BER 2>&1)
check "a command with a word missing names the words it takes (exit 2)" \
  grep -q '^usage: bikaroo-mcp admin principal SUBJECT ROLE REGION\[,REGION...\] DISPLAY-NAME \[human|machine\]$' <<<"$out"
out=$(env -u BIKAROO_SUPER_URL "$bin" admin create-roles 2>&1)
check "create-roles without BIKAROO_SUPER_URL suggests a superuser, not the server's role ($(cut -c 25-140 <<<"$out"))" \
  test -n "$(grep 'BIKAROO_SUPER_URL is not set.*postgresql://postgres@' <<<"$out")" -a -z "$(grep fleet_app <<<"$out")"
out=$("$bin" admin client care-app 'Care assistant' read,report 2>&1)
check "admin client care-app read,report: $out" grep -q '^admin: client care-app may read,report' <<<"$out"
q "$owner" -c "INSERT INTO fleet.settings (name, value) VALUES ('environment', 'development') ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value" >/dev/null

call() { # call BIKE: get_bike_status's answer from the server started below
  curl -s -m 10 "http://127.0.0.1:$(cat "$t/port")/mcp" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28' \
    -H 'Mcp-Method: tools/call' -H 'Mcp-Name: get_bike_status' \
    -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"get_bike_status\",\"arguments\":{\"bikeId\":\"$1\"},\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}}}"
}
env -u BIKAROO_MIGRATE_URL DATABASE_URL="$app" BIKAROO_AUTH=local BIKAROO_LOCAL_SUBJECT=camille \
  BIKAROO_LOCAL_CLIENT=care-app BIKAROO_PORT=0 BIKAROO_READY_FILE="$t/port" BIKAROO_METRICS_LISTEN= \
  "$bin" serve 2>"$t/serve.log" &
pid=$!
for _ in $(seq 1 100); do [[ -s $t/port ]] && break; sleep 0.1; done
check "the server (as fleet_app) serves camille a bike loaded from CSV (VL-7001 in DE-BER)" \
  grep -q '"structuredContent":{"bikeId":"VL-7001","status":"available"' <(call VL-7001)
check "... and not one outside her regions (VL-7002 in DE-HAM reads as unknown)" \
  grep -q '"text":"Bike VL-7002 was not found among the bikes you can access' <(call VL-7002)
out=$("$bin" admin deactivate-principal camille 2>&1)
check "admin deactivate-principal camille: $out" grep -q 'camille deactivated' <<<"$out"
answer=$(call VL-7001)
check "... her next call gets nothing (${answer:0:120})" \
  test -z "$(grep '"structuredContent"' <<<"$answer")" -a -n "$(grep '"jsonrpc":"2.0"' <<<"$answer")"
out=$("$bin" admin deactivate-client care-app 2>&1)
check "admin deactivate-client care-app: $out" grep -q 'care-app deactivated' <<<"$out"
out=$("$bin" admin deactivate-client no-such-app 2>&1)
check "deactivating a client that does not exist says so (exit 1)" grep -q 'admin: no client no-such-app' <<<"$out"
kill -TERM "$pid"
wait "$pid"
pid=

# --- the audit, and the roles that may not.
check "every change is in fleet.admin_log, made by fleet_owner (3 loads, 2 principals, 1 client, 3 deactivations)" \
  test "$(q "$owner" -c "SELECT string_agg(action || ':' || target, ' ' ORDER BY admin_id) FROM fleet.admin_log WHERE actor = 'fleet_owner'")" \
  = 'load:regions load:stations load:bikes principal:subject:camille principal:subject:theo client:client:care-app deactivate:subject:camille deactivate:client:care-app deactivate:client:no-such-app'
before=$(q "$owner" -c 'SELECT count(*) FROM fleet.admin_log')
out=$(BIKAROO_MIGRATE_URL="$app" "$bin" admin principal mallory fleet_operator DE-BER Mallory 2>&1)
check "the server's login role (fleet_app) is refused admin principal: permission denied for the function, with the hint ($(cut -c 1-70 <<<"$out"))" \
  grep -q 'permission denied for function admin_principal (this needs the owner role' <<<"$out"
for call in "fleet.admin_load('regions', '[]')" "fleet.admin_region('FR-NCE', 'Nice')" \
  "fleet.admin_client('x', 'x', true, true, false)" "fleet.admin_deactivate('subject', 'camille')"; do
  out=$(q "$app" -c "SELECT $call")
  check "fleet_app calling $call is refused (permission denied for function)" grep -q 'permission denied for function' <<<"$out"
done
check "fleet_app cannot read or write fleet.admin_log" grep -q 'permission denied' <<<"$(q "$app" -c 'SELECT count(*) FROM fleet.admin_log')"
check "... and nothing was changed or logged by those refusals" \
  test "$(q "$owner" -c "SELECT count(*) FROM fleet.admin_log")|$(q "$owner" -c "SELECT count(*) FROM fleet.principals WHERE subject = 'mallory'")" = "$before|0"
suite_exit
