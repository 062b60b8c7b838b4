#!/usr/bin/env bash
# What an operator sees: /healthz and /readyz (public; 503 naming what is missing), /metrics on
# its own listener (promtool-valid, bounded labels, counters that move), access lines (trace id
# from traceparent, JSON lines), clear start-up errors, --version, config-help, IPv6, stdio
# without an identity, quiet stdio, stdio lists filtered by the rights in PostgreSQL, and the
# schema version the binary expects. Run by scripts/test.sh with the test database's env; prints
# `ok - ...` / `not ok - ...` lines.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
# shellcheck source=tests/lib/harness.sh
source tests/lib/harness.sh
suite_init "$@"
suite_on_exit "psql -X -q '$IT_SUPER_URL' -c 'DROP DATABASE IF EXISTS ops_schema7 WITH (FORCE)'"

bike_call() { mcp "$1" tools/call get_bike_status '"name":"get_bike_status","arguments":{"bikeId":"VL-2048"},' "${@:2}"; }
status_of() { curl -s -o "$t/body" -w '%{http_code}' "$@"; }
metric() { # metric PORT SERIES: the value of one exact series line (0 when absent)
  curl -s "http://127.0.0.1:$1/metrics" | awk -v s="$2" '$1 == s { v = $2 } END { print v + 0 }'
}

# ---- health --------------------------------------------------------------------------------
serve main || { echo "not ok - the server starts for the ops suite"; exit 1; }
main_pid=$PID main_port=$PORT main_mport=$MPORT
check "GET /healthz answers 200 alive, without a token, whatever the Host" \
  test "$(status_of "http://127.0.0.1:$PORT/healthz" -H 'Host: lb.internal')" = 200 -a \
  "$(cat "$t/body")" = '{"status":"alive"}'
check "GET /readyz answers 200 ready with the database migrated" \
  test "$(status_of "http://127.0.0.1:$PORT/readyz")" = 200 -a "$(cat "$t/body")" = '{"status":"ready"}'
# A load balancer probes on a kept-alive connection: three probes, one TCP connection, no close.
check "probes keep their connection: three on one, none answered Connection: close" \
  bash -c "out=\$(curl -sv 'http://127.0.0.1:$PORT/healthz' 'http://127.0.0.1:$PORT/readyz' 'http://127.0.0.1:$PORT/healthz' 2>&1 >/dev/null);
    test \"\$(grep -c '^\* Connected to' <<<\"\$out\")\" = 1 && ! grep -qi '^< Connection: close' <<<\"\$out\""
check "POST /readyz is 405 with Allow: GET, HEAD" \
  grep -qi '^Allow: GET, HEAD' <(curl -s -i -X POST "http://127.0.0.1:$PORT/readyz")

# A database without the newest migrations (0009, which lets the login role read the schema
# version, and any after it): ready says which version it found and what to do. The version the
# binary needs is the highest numbered migration (the build derives it; counted here apart).
highest=$(find migrations -maxdepth 1 -name '[0-9][0-9][0-9][0-9]_*.sql' | sed -E 's|.*/0*([0-9]+)_.*|\1|' | sort -n | tail -n 1)
psql -X -q "$IT_SUPER_URL" -c 'SET client_min_messages = warning' -c 'DROP DATABASE IF EXISTS ops_schema7 WITH (FORCE)' \
  -c 'CREATE DATABASE ops_schema7 OWNER fleet_owner' >/dev/null
mkdir -p "$t/mig7"
cp -r migrations/functions "$t/mig7/"
for f in migrations/0*.sql; do n=$(basename "$f"); n=$((10#${n%%_*})); ((n < 9)) && cp "$f" "$t/mig7/"; done
owner7=$(sed -E 's|@/[^?]*\?|@/ops_schema7?|' <<<"$BIKAROO_MIGRATE_URL")
app7=$(sed -E 's|@/[^?]*\?|@/ops_schema7?|' <<<"$DATABASE_URL")
DATABASE_URL=$owner7 BIKAROO_MIGRATE_URL=$owner7 BIKAROO_MIGRATIONS_DIR=$t/mig7 "$bin" migrate 2>"$t/mig7.log" || cat "$t/mig7.log"
if serve schema7 DATABASE_URL="$app7" BIKAROO_LOCAL_ALLOW_ANY_DATABASE=1; then
  code=$(status_of "http://127.0.0.1:$PORT/readyz")
  check "GET /readyz is 503 saying the schema is older than the binary needs, the highest numbered migration ($highest; before 0009: no grant yet)" \
    grep -qF "\"missing\":[\"database schema: not migrated or older than version 9, this binary needs $highest " "$t/body"
  check "  ... with status 503 while /healthz stays 200" \
    test "$code" = 503 -a "$(status_of "http://127.0.0.1:$PORT/healthz")" = 200
  psql -X -q "$(sed -E 's|@/[^?]*\?|@/ops_schema7?|' <<<"$IT_SUPER_URL")" \
    -c 'GRANT USAGE ON SCHEMA fleet_meta TO fleet_app' \
    -c 'GRANT SELECT ON fleet_meta.schema_migrations TO fleet_app' >/dev/null
  status_of "http://127.0.0.1:$PORT/readyz" >/dev/null
  check "GET /readyz names the version found and the one needed ($highest)" \
    grep -qF "\"missing\":[\"database schema: at version 8, this binary needs $highest " "$t/body"
  psql -X -q "$IT_SUPER_URL" -c 'DROP DATABASE ops_schema7 WITH (FORCE)' >/dev/null
  check "GET /readyz is 503 naming the database once it cannot be reached" \
    test "$(status_of "http://127.0.0.1:$PORT/readyz")" = 503 -a -n "$(grep 'database: cannot connect' "$t/body")"
  stop schema7
else
  check "a server starts on a database one migration behind" false
fi

# jwt mode: /readyz and /healthz need no token; readiness names the issuer's keys.
if serve jwt BIKAROO_AUTH=jwt BIKAROO_AUTH_ISSUER=http://127.0.0.1:1 BIKAROO_AUTH_INSECURE_LOOPBACK=1 \
  BIKAROO_RESOURCE_URI=http://127.0.0.1/mcp BIKAROO_AUTH_TIMEOUT_MS=200; then
  check "jwt mode: /healthz is 200 without a token" test "$(status_of "http://127.0.0.1:$PORT/healthz")" = 200
  check "jwt mode: /readyz is 503 naming the issuer's keys when the issuer is down (not 401)" \
    test "$(status_of "http://127.0.0.1:$PORT/readyz")" = 503 -a -n "$(grep 'issuer keys' "$t/body")"
  stop jwt
fi

# ---- metrics ---------------------------------------------------------------------------------
series='bikaroo_requests_total{transport="http",method="tools/call",name="get_bike_status",outcome="ok",status="200"}'
before=$(metric "$main_mport" "$series")
bike_call "$main_port" -H 'traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' >/dev/null
bike_call "$main_port" >/dev/null
after=$(metric "$main_mport" "$series")
check "a tools/call moves bikaroo_requests_total by one per call ($before -> $after)" test "$after" = $((before + 2))
curl -s "http://127.0.0.1:$main_mport/metrics" >"$t/metrics"
check "promtool check metrics accepts /metrics" promtool check metrics <"$t/metrics"
check "/metrics has the latency histogram, database, token, stream, rate-limit and build families" \
  bash -c "for f in bikaroo_request_duration_seconds_bucket bikaroo_db_connections_busy bikaroo_db_connections_open \
    bikaroo_db_errors_total bikaroo_token_validations_total bikaroo_listen_streams_open \
    bikaroo_rate_limit_rejections_total bikaroo_build_info; do grep -q \"\$f\" '$t/metrics' || exit 1; done"
check "/metrics labels name no subject, client, bike or trace" \
  bash -c "! grep -E 'VL-2048|marie|customer-care-assistant|4bf92f35' '$t/metrics'"
check "/metrics is not served on the MCP port" test "$(status_of "http://127.0.0.1:$main_port/metrics")" = 404

# ---- access lines ----------------------------------------------------------------------------
line=$(grep ' access ' "$t/main.log" | grep 'trace=4bf92f3577b34da6a3ce929d0e0e4736' | head -n 1)
check "the access line carries the traceparent's trace id, method, tool, subject, client, outcome, status, latency" \
  grep -qE 'method=tools/call name=get_bike_status subject=marie client=customer-care-assistant outcome=ok status=200 ms=[0-9.]+' <<<"$line"
check "without traceparent the access line gets a new 32-digit trace id" \
  test "$(grep ' access ' "$t/main.log" | grep 'name=get_bike_status' | grep -cE 'trace=[0-9a-f]{32} ')" -ge 2
check "access lines never carry a tool argument" bash -c "! grep ' access ' '$t/main.log' | grep -q 'VL-'"
check "the audit row (a read's, written with its batch) carries the trace id of its request, and its JSON-RPC id apart" \
  test "$(psql -X -At "$IT_SUPER_URL" -c "SELECT count(*) FROM fleet.audit_log WHERE trace_id = '4bf92f3577b34da6a3ce929d0e0e4736' AND tool = 'get_bike_status' AND request_id !~ ' ' AND request_id <> ''")" -ge 1
PID=$main_pid stop main

if serve json BIKAROO_LOG_FORMAT=json; then
  bike_call "$PORT" >/dev/null
  stop json
  check "BIKAROO_LOG_FORMAT=json: every line is a JSON object, the access line with its fields (status and ms as JSON numbers)" \
    node -e '
      const lines = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n");
      const objs = lines.map((l) => JSON.parse(l));
      const a = objs.find((o) => o.event === "access" && o.name === "get_bike_status");
      if (!a || a.subject !== "marie" || a.status !== 200 || !/^[0-9a-f]{32}$/.test(a.trace) || typeof a.ms !== "number") process.exit(1);' "$t/json.log"
fi

# ---- clear errors ------------------------------------------------------------------------------
err_of() { "$bin" "$@" 2>&1 >/dev/null | head -n 5; }
out=$(BIKAROO_RESOURCES_DIR=/nonexistent/res err_of serve)
check "a missing resources directory names BIKAROO_RESOURCES_DIR and the reason" \
  grep -q 'BIKAROO_RESOURCES_DIR=/nonexistent/res: cannot open this directory: No such file or directory' <<<"$out"
out=$(cd / && env BIKAROO_RESOURCES_DIR=resources "$bin" serve 2>&1 >/dev/null | head -n 5)
check "started from another directory: the error says where a relative path was looked up" \
  grep -q 'working directory /: start the server from the project' <<<"$out"
out=$(env -u DATABASE_URL "$bin" serve 2>&1 >/dev/null | head -n 3)
check "DATABASE_URL unset says so (not libpq's default-socket error)" grep -q 'DATABASE_URL is not set' <<<"$out"
python3 -c 'import socket,time,sys; s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(); print(s.getsockname()[1], flush=True); time.sleep(30)' >"$t/busy" &
busy=$!
suite_pids+=("$busy")
for _ in $(seq 1 50); do [[ -s $t/busy ]] && break; sleep 0.1; done
out=$(BIKAROO_PORT=$(cat "$t/busy") BIKAROO_METRICS_LISTEN= err_of serve)
check "a port in use names the address, the port, the settings and the reason" \
  grep -q "cannot listen on 127.0.0.1 port $(cat "$t/busy") (BIKAROO_LISTEN, BIKAROO_PORT): Address already in use" <<<"$out"
out=$(BIKAROO_PORT=0 BIKAROO_METRICS_LISTEN=127.0.0.1:$(cat "$t/busy") err_of serve)
check "a metrics port in use names BIKAROO_METRICS_LISTEN" \
  grep -q "cannot listen for metrics on 127.0.0.1:$(cat "$t/busy") (BIKAROO_METRICS_LISTEN): Address already in use" <<<"$out"
kill "$busy" 2>/dev/null
check "bikaroo-mcp --version prints the version and revision" \
  grep -qE '^bikaroo-mcp [0-9]+\.[0-9]+\.[0-9]+ \(revision [0-9a-f]+|unknown\)' <("$bin" --version)
check "make help lists run, test and help" \
  bash -c "make -s help >'$t/help' && grep -q '^make run ' '$t/help' && grep -q '^make test ' '$t/help'"
for fmt in man markdown; do
  "$bin" config-help --format="$fmt" >"$t/cfg.$fmt"
  missing=$("$bin" help | awk 'f { print $1 } /^variable /{ f = 1 }' | while read -r v; do
    grep -qF "$v" <(sed 's/\\-/-/g' "$t/cfg.$fmt") || echo "$v"; done)
  check "config-help --format=$fmt lists every setting${missing:+ (missing: $missing)}" test -z "$missing"
done
check "config-help refuses an unknown format" bash -c "! '$bin' config-help --format=pdf 2>/dev/null"
if python3 -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' 2>/dev/null; then
  for addr in ::1 '[::1]'; do
    if serve v6 BIKAROO_LISTEN="$addr" BIKAROO_METRICS_LISTEN='[::1]:0'; then
      check "BIKAROO_LISTEN=$addr serves over IPv6" \
        test "$(status_of -g "http://[::1]:$PORT/healthz")" = 200
      stop v6
    else
      check "BIKAROO_LISTEN=$addr starts" false
    fi
  done
else
  echo "skip - IPv6 listen: no ::1 on this machine"
fi

# ---- stdio -------------------------------------------------------------------------------------
out=$(env -u BIKAROO_AUTH "$bin" stdio </dev/null 2>&1 >/dev/null)
check "stdio without BIKAROO_AUTH hints at BIKAROO_AUTH=local and BIKAROO_TOKEN" \
  grep -q 'BIKAROO_AUTH=local.*BIKAROO_TOKEN' <<<"$out"
list='{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
printf '%s\n' "$list" | BIKAROO_AUTH=local BIKAROO_LOCAL_SUBJECT=dev BIKAROO_LOCAL_CLIENT=developer-ide \
  "$bin" stdio >"$t/stdio.out" 2>"$t/stdio.err"
check "stdio as dev via developer-ide lists get_bike_status but not report_damaged_bike (rights in PostgreSQL)" \
  bash -c "grep -q '\"get_bike_status\"' '$t/stdio.out' && ! grep -q 'report_damaged_bike' '$t/stdio.out'"
check "stdio at info is quiet: no configuration dump, no BIKAROO_STATE_SECRET warning, at most 3 lines" \
  bash -c "! grep -qE 'config |STATE_SECRET' '$t/stdio.err' && [ \$(wc -l <'$t/stdio.err') -le 3 ]"

# ---- the schema version the binary expects ------------------------------------------------------
# Derived by the build from migrations/ (scripts/schema-version.sh through the Makefile's rule),
# never a constant to bump: this build's, then the same rule on a copy that gets a new file.
check "the build derived the schema version from migrations/: $B/gen/schema_version.h says $highest" \
  grep -qx "#define MIGRATE_SCHEMA_NEEDED $highest" "$B/gen/schema_version.h"
mkdir -p "$t/mig-next"
cp migrations/[0-9]*.sql "$t/mig-next/"
derived() { make -s --no-print-directory B="$t/b" MIGRATIONS="$t/mig-next" "$t/b/gen/schema_version.h" &&
  sed -n 's/^#define MIGRATE_SCHEMA_NEEDED \([0-9]*\)$/\1/p' "$t/b/gen/schema_version.h"; }
before=$(derived)
next=$(printf '%04d' $((highest + 1)))
: >"$t/mig-next/${next}_next.sql"
after=$(derived)
check "a new numbered migration is all it takes: the rule says $highest, then $((highest + 1)) once ${next}_next.sql is there (it said ${before:-nothing}, then ${after:-nothing})" \
  test "$before $after" = "$highest $((highest + 1))"
shared=$(find migrations -maxdepth 1 -name '[0-9][0-9][0-9][0-9]_*.sql' -printf '%f\n' | cut -c 1-4 | sort | uniq -d)
check "no two numbered migrations share a number${shared:+ (shared: ${shared//$'\n'/ })}" test -z "$shared"

# migrate says what it applied, numbered files and function files each counted: all of them on
# a fresh database, none the second time.
psql -X -q "$IT_SUPER_URL" -c 'SET client_min_messages = warning' -c 'DROP DATABASE IF EXISTS ops_count WITH (FORCE)' \
  -c 'CREATE DATABASE ops_count OWNER fleet_owner' >/dev/null
owner_count=$(sed -E 's|@/[^?]*\?|@/ops_count?|' <<<"$BIKAROO_MIGRATE_URL")
numbered=$(find migrations -maxdepth 1 -name '[0-9][0-9][0-9][0-9]_*.sql' | wc -l)
functions=$(find migrations/functions -maxdepth 1 -name '*.sql' | wc -l)
for run in first second; do
  DATABASE_URL=$owner_count BIKAROO_MIGRATE_URL=$owner_count BIKAROO_LOG_LEVEL=info "$bin" migrate 2>"$t/count-$run.log"
done
check "migrate on a fresh database says it applied the $numbered numbered files and the $functions function files: $(grep -o '[0-9]* migration.*' "$t/count-first.log" | tail -n 1)" \
  grep -q "migrate: $numbered migration(s) applied (numbered files), $functions function file(s) applied (new or changed), schema up to date" "$t/count-first.log"
check "... and the second time 0 of each" \
  grep -q "migrate: 0 migration(s) applied (numbered files), 0 function file(s) applied (new or changed), schema up to date" "$t/count-second.log"
psql -X -q "$IT_SUPER_URL" -c 'DROP DATABASE ops_count WITH (FORCE)' >/dev/null

bad=$(cat "$t/bad_exit" 2>/dev/null | tr '\n' ' ')
check "every server this suite started exited with 0 on SIGTERM${bad:+ (not: $bad)}" test -z "$bad"

suite_exit
