#!/usr/bin/env bash
# make bench: the hot path against ceilings measured in the same run, on the same throwaway
# PostgreSQL (100k bikes), in the production configuration (JWT validation against a local test
# key set, row-level security, audit). See bench/README.md for what each line measures and the
# targets. Every figure is the median of BENCH_ROUNDS rounds (default 3) of BENCH_SECONDS
# (default 3) at 8 and at 32 connections; every response is checked (a non-200 answer, a missing
# result or an isError marks the figure INVALID). Appends the table to bench/RESULTS.md with the
# date, the commit and the command. Bounded: about 3-4 minutes.
#   bench/run.sh BUILD_DIR          the table
#   bench/run.sh BUILD_DIR rss      1,000,000 mixed requests: peak RSS and its growth (make bench-rss)
#   bench/run.sh BUILD_DIR serve    set up as for the table, print the server's URL, token and
#                                   PID, and wait (BENCH_SERVE_SECONDS, default 1800) for a
#                                   profile or a load by hand
# BENCH_ONLY=REGEX measures only the lines whose names match (and appends nothing to RESULTS.md).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
B=${1:-build}
mode=${2:-table}
secs=${BENCH_SECONDS:-3}
rounds=${BENCH_ROUNDS:-3}
# The server's own defaults unless set (its --help lists them).
server_default() { "$B/bikaroo-mcp" --help 2>/dev/null | awk -v k="$1" '$1 == k {print $3}'; }
threads=${BENCH_THREADS:-$(server_default BIKAROO_THREADS)}
dbconns=${BENCH_DB_CONNECTIONS:-$(server_default BIKAROO_DB_CONNECTIONS)}
conns_list=${BENCH_CONNECTIONS:-8 32}
many=${BENCH_MANY:-1000} # the connections of the line that checks the server keeps answering
for tool in wrk pgbench openssl python3; do
  command -v "$tool" >/dev/null || { echo "bench needs $tool (scripts/deps.sh)" >&2; exit 1; }
done
[[ -n $threads && -n $dbconns ]] || { echo "bench: no $B/bikaroo-mcp (make all)" >&2; exit 1; }
# wrk's connections of the many-connections line, and the server's (it raises its own limit).
fresh=${BENCH_FRESH:-3000} # calls in flight, each on a new connection, in the fresh overload line
need=$(( (many > fresh ? many : fresh) + 256 ))
(($(ulimit -n) >= need)) || ulimit -n "$need" 2>/dev/null ||
  { echo "bench: ulimit -n below $need and cannot be raised" >&2; exit 1; }
root=$PWD
pgdir=$root/.run/bench-pg
tmp=$(mktemp -d)
chmod 0755 "$tmp"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null && wait "$p" 2>/dev/null || true; done
  scripts/pgtmp.sh destroy "$pgdir" >/dev/null 2>&1 || true
  if [[ -n ${BENCH_KEEP:-} ]]; then log "bench: logs kept in $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
log() { echo "$*" >&2; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else printf "-" }'; }
field() { sed -nE "s/.* $2=([0-9]+).*/\1/p" <<<"$1"; } # TEXT NAME: the number of NAME=N in TEXT
results_append() { # FILE: appended to bench/RESULTS.md, created with its heading if need be
  [[ -s bench/RESULTS.md ]] || printf '# Benchmark results\n\nAppended by `make bench` and `make bench-rss` (bench/README.md says what each line measures).\n' >bench/RESULTS.md
  cat "$1" >>bench/RESULTS.md
}

# --- the database: demo data plus bikes up to 100k, and what the write baseline needs.
set -a
eval "$(scripts/pgtmp.sh start "$pgdir")"
set +a
super="postgresql://postgres@/bikaroo?$PGTMP_QUERY"
DATABASE_URL=$BIKAROO_MIGRATE_URL "$B/bikaroo-mcp" migrate >/dev/null 2>&1
psql -X -q "$BIKAROO_MIGRATE_URL" -v ON_ERROR_STOP=1 -f migrations/demo/demo-data.sql
psql -X -q "$BIKAROO_MIGRATE_URL" -v ON_ERROR_STOP=1 -c "
  INSERT INTO fleet.bikes (bike_id, region, station_id, status, battery_pct, last_seen_at)
  SELECT 'VL-' || n, (ARRAY['BE-BRU','FR-LYO','FR-PAR'])[n % 3 + 1], NULL, 'available', n % 101, now()
    FROM generate_series(100000, 195999) n ON CONFLICT DO NOTHING;
  CREATE SEQUENCE IF NOT EXISTS fleet.bench_report_seq START 900000000;
  INSERT INTO fleet.cases (case_id, bike_id, region, opened_by, opened_via)
  SELECT 'IC-900000000', 'VL-195998', 'FR-PAR', 'marie', 'customer-care-assistant'
   WHERE NOT EXISTS (SELECT FROM fleet.cases WHERE case_id = 'IC-900000000');
  ANALYZE fleet.bikes;" >/dev/null

# --- a local issuer (bench/issuer.py): an RSA key, its JWKS and metadata on 127.0.0.1, one token.
b64url() { base64 -w0 | tr '+/' '-_' | tr -d '='; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
jwk_of() { # KEY_FILE KID -> its public JWK
  local n
  n=$(openssl rsa -in "$1" -noout -modulus | cut -d= -f2 | python3 -c 'import sys,binascii; sys.stdout.buffer.write(binascii.unhexlify(sys.stdin.read().strip()))' | b64url)
  printf '{"kty":"RSA","use":"sig","alg":"RS256","kid":"%s","n":"%s","e":"AQAB"}' "$2" "$n"
}
jwt_of() { # KEY_FILE KID ISSUER JTI -> an access token of marie's for $resource, 50 minutes
  local head body sig now
  now=$(date +%s)
  head=$(printf '{"alg":"RS256","typ":"at+jwt","kid":"%s"}' "$2" | b64url)
  body=$(printf '{"iss":"%s","aud":"%s","sub":"marie","client_id":"customer-care-assistant","scope":"fleet:read fleet:report","iat":%d,"exp":%d,"jti":"%s"}' \
    "$3" "$resource" "$now" $((now + 3000)) "$4" | b64url)
  sig=$(printf '%s.%s' "$head" "$body" | openssl dgst -sha256 -sign "$1" -binary | b64url)
  echo "$head.$body.$sig"
}
issuer_start() { # DIR PORT: bench/issuer.py serving DIR (metadata, key set) at http://127.0.0.1:PORT
  mkdir -p "$1/.well-known"
  printf '{"issuer":"http://127.0.0.1:%s","jwks_uri":"http://127.0.0.1:%s/jwks.json","introspection_endpoint":"http://127.0.0.1:%s/introspect"}' \
    "$2" "$2" "$2" >"$1/.well-known/oauth-authorization-server"
  python3 bench/issuer.py "$1" "$2" "http://127.0.0.1:$2" "$resource" >/dev/null 2>&1 &
  pids+=($!)
  for _ in $(seq 1 50); do curl -sf "http://127.0.0.1:$2/jwks.json" >/dev/null && break; sleep 0.1; done
}
resource="http://127.0.0.1/mcp"
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$tmp/key.pem" 2>/dev/null
iss_port=$(free_port)
issuer="http://127.0.0.1:$iss_port"
mkdir -p "$tmp/www"
printf '{"keys":[%s]}' "$(jwk_of "$tmp/key.pem" bench)" >"$tmp/www/jwks.json"
token=$(jwt_of "$tmp/key.pem" bench "$issuer" "bench-$(date +%s)")
issuer_start "$tmp/www" "$iss_port"

# Every load comes from 127.0.0.1, as behind a proxy: no per-address connection limit.
server_env=(BIKAROO_AUTH=jwt BIKAROO_AUTH_ISSUER="$issuer" BIKAROO_RESOURCE_URI="$resource"
  BIKAROO_AUTH_INSECURE_LOOPBACK=1 BIKAROO_LOG_LEVEL=warn BIKAROO_THREADS="$threads"
  BIKAROO_DB_CONNECTIONS="$dbconns" BIKAROO_MAX_CONNECTIONS_PER_IP=0
  BIKAROO_MAX_CONNECTIONS=$((many + 64 > 1024 ? many + 64 : 1024))
  BIKAROO_RATE_READS=0 BIKAROO_RATE_WRITES=0 BIKAROO_STATE_SECRET=bench-secret-bench-secret-bench-secret
  BIKAROO_METRICS_LISTEN=127.0.0.1:0)
# BENCH_SERVER_ENV="NAME=VALUE ...": more server settings, for an experiment.
read -ra extra_env <<<"${BENCH_SERVER_ENV:-}"
server_env+=("${extra_env[@]}")
# The servers a load may be sent to, by name: their PID (for their CPU) and URL.
declare -A srv_pid srv_url
# serve_as NAME [NAME=VALUE...]: a server with server_env and these settings, as srv_pid[NAME]
# and srv_url[NAME]; 1 (its log said) when it does not start.
serve_as() {
  local name=$1 ready=$tmp/$1.port
  shift
  env "${server_env[@]}" "$@" BIKAROO_PORT=0 BIKAROO_READY_FILE="$ready" "$B/bikaroo-mcp" serve 2>"$tmp/$name.log" &
  pids+=($!)
  srv_pid[$name]=$!
  for _ in $(seq 1 100); do [[ -s $ready ]] && break; sleep 0.1; done
  [[ -s $ready ]] || { log "bench: the $name server did not start:"; cat "$tmp/$name.log" >&2; return 1; }
  srv_url[$name]="http://127.0.0.1:$(cat "$ready")"
}
# serve_nginx: nginx (scripts/deps.sh installs it for the tests) answering every request with a
# fixed get_bike_status answer, no work behind it, as srv_pid[nginx] and srv_url[nginx]: the
# ceiling of the overload lines on new connections, what this machine's kernel and this load
# generator allow any server (its workers as many as the server's loops).
serve_nginx() {
  local nport
  nport=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  mkdir -p "$tmp/nginx"
  cat >"$tmp/nginx/nginx.conf" <<NGINX
worker_processes $threads;
pid $tmp/nginx/nginx.pid;
error_log $tmp/nginx/error.log;
daemon off;
events { worker_connections 8192; }
http {
  access_log off;
  client_body_temp_path $tmp/nginx/body;
  server {
    listen 127.0.0.1:$nport backlog=4096;
    location / {
      default_type application/json;
      return 200 '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"VL-1"}],"structuredContent":{"bikeId":"VL-1"}}}';
    }
  }
}
NGINX
  /usr/sbin/nginx -c "$tmp/nginx/nginx.conf" 2>"$tmp/nginx/stderr" &
  pids+=($!)
  srv_pid[nginx]=$!
  srv_url[nginx]="http://127.0.0.1:$nport"
  for _ in $(seq 1 50); do (echo >"/dev/tcp/127.0.0.1/$nport") 2>/dev/null && return 0; sleep 0.1; done
  log "bench: nginx did not start:"; cat "$tmp/nginx/stderr" "$tmp/nginx/error.log" >&2; return 1
}
serve_as direct || exit 1
server_pid=${srv_pid[direct]} url=${srv_url[direct]} port=${srv_url[direct]##*:}
# The same server exporting its spans (OTLP/HTTP) to a collector that keeps nothing
# (bench/otlp-sink.py): every call sampled, and one trace in ten (docs/operating.md "Traces").
python3 bench/otlp-sink.py "$tmp/sink.port" 2>"$tmp/sink.log" &
pids+=($!)
for _ in $(seq 1 50); do [[ -s $tmp/sink.port ]] && break; sleep 0.1; done
sink="http://127.0.0.1:$(cat "$tmp/sink.port")"
serve_as traced OTEL_EXPORTER_OTLP_ENDPOINT="$sink" OTEL_TRACES_SAMPLER=always_on || exit 1
serve_as traced10 OTEL_EXPORTER_OTLP_ENDPOINT="$sink" OTEL_TRACES_SAMPLER=traceidratio \
  OTEL_TRACES_SAMPLER_ARG=0.1 || exit 1

# --- pgbench scripts: a random FR-PAR bike (n % 3 == 2) each time.
pick='\set n 3 * random(33334, 65332) + 2'
printf '%s\nSELECT bike_id, status, region, station_id, battery_pct, last_seen_at FROM fleet.bikes WHERE bike_id = '"'VL-'"' || :n;\n' "$pick" >"$tmp/plain.sql"
# The server's per-call SQL since reads go by caller (domain/reads.c): its unit for a batch of N
# get_bike_status calls of one caller, two prepared statements (the identity, fleet.act_as; then
# the read of the N keys under RLS and their N audit rows by one INSERT) in a pipeline with one
# Sync: one transaction, one round trip. The texts are the server's own: the read's as its
# connections last ran it (pg_stat_activity, after the get_bike_status line: byc_sql), the
# identity's as the binary holds it (byc_act); their parameters are passed as the server passes
# them: the audit entries as one JSON text (byc_vars: N entries of fixed bikes, so their rows say
# not_found; building them in SQL per transaction cost the database more than parsing them, and
# that is not the server's work), the bike ids drawn at random by pgbench.
byc_script() { # N SQL [PLAN_MODE] -> the script on stdout
  local i keys='' sql=$2 act
  act=$(byc_act)
  act=${act//force_generic_plan/${3:-force_generic_plan}}
  for i in $(seq 1 "$1"); do
    printf '\\set n%d 3 * random(33334, 65332) + 2\n' "$i"
    keys+="${keys:+, }'VL-' || :n$i"
  done
  act=${act//\$1::text/:subject::text}
  act=${act//\$2::text/:client::text}
  sql=${sql//\$1::text[]/ARRAY[$keys]}
  sql=${sql//\$2::jsonb/:calls::jsonb}
  printf '\\startpipeline\n%s;\n%s;\n\\endpipeline\n' "$act" "$sql"
}
# The server's identity statement, as its binary holds it (domain/reads.c, READS_ACT_SQL).
byc_act() {
  # grep reads all of strings' output (no -m: strings cut off by a pipe that closed would fail
  # the pipeline and add the fallback below to the statement found).
  local act
  act=$(strings "$B/bikaroo-mcp" | grep -F 'FROM fleet.act_as($1::text, $2::text) AS a' || true)
  if [[ -n $act ]]; then echo "${act%%$'\n'*}"; else echo "SELECT 'no identity statement in $B/bikaroo-mcp' / 0"; fi
}
byc_vars() { # TOKEN_REF N -> the -D arguments: the caller, and N audit entries as the server writes them
  local i calls=''
  for i in $(seq 1 "$2"); do
    calls+="${calls:+,}{\"tool\":\"get_bike_status\",\"target\":\"VL-$((100004 + 3 * i))\",\"key\":\"VL-$((100004 + 3 * i))\",\"digest\":\"$(printf '%064d' "$i")\",\"id\":\"$i\",\"trace\":null,\"token\":\"$1\"}"
  done
  printf '%s\n' -D subject=marie -D client=customer-care-assistant -D "calls=[$calls]"
}
# The server's statement for get_bike_status's batches, as its connections last ran it.
byc_sql() {
  psql -X -At "$super" <<<"SELECT query FROM pg_stat_activity WHERE usename = 'fleet_app' AND query LIKE 'WITH r AS MATERIALIZED (%fleet.bike_status_for(\$1::text[])%' LIMIT 1"
}
# What report_damaged_bike writes, as plain SQL by the owner: a report, the bike, an audit row.
cat >"$tmp/write.sql" <<SQL
$pick
BEGIN;
INSERT INTO fleet.damage_reports (report_id, bike_id, region, case_id, issue, status_before, status_after, reported_by, reported_via, recorded_at) VALUES ('DR-' || nextval('fleet.bench_report_seq'), 'VL-' || :n, 'FR-PAR', 'IC-900000000', 'flat_tire', 'available', 'unavailable', 'marie', 'customer-care-assistant', now());
UPDATE fleet.bikes SET status = 'unavailable', last_seen_at = now() WHERE bike_id = 'VL-' || :n;
INSERT INTO fleet.audit_log (subject, client_id, tool, target, args_digest, outcome, request_id) VALUES ('marie', 'customer-care-assistant', 'report_damaged_bike', 'VL-' || :n, repeat('0', 64), 'ok', '1');
COMMIT;
SQL

# --- wrk scripts: every response checked; p50/p99 from wrk's histogram.
wrk_common() { # expected-text
  cat <<LUA
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) good = 0; bad = 0 end
function response(status, headers, body)
  if status == 200 and string.find(body, '$1', 1, true) and not string.find(body, '"isError":true', 1, true) then
    good = good + 1 else bad = bad + 1 end
end
function done(summary, latency, requests)
  local g, b = 0, 0
  for _, t in ipairs(threads) do g = g + t:get("good"); b = b + t:get("bad") end
  local e = summary.errors
  io.write(string.format("CHECK good=%d bad=%d errors=%d p50=%d p99=%d\n", g, b,
    e.connect + e.read + e.write + e.timeout, latency:percentile(50), latency:percentile(99)))
end
LUA
}
meta='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
mcp_lua() { # method name params-lua-expression expected
  wrk_common "$4"
  cat <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = "$1"
wrk.headers["Authorization"] = "Bearer $token"
LUA
  [[ -n $2 ]] && echo "wrk.headers[\"Mcp-Name\"] = \"$2\""
  cat <<LUA
local seq = 0
request = function()
  seq = seq + 1
  local n = 3 * math.random(33334, 65332) + 2
  return wrk.format(nil, nil, nil, '{"jsonrpc":"2.0","id":' .. seq .. ',"method":"$1","params":{' .. $3 .. '$meta}}')
end
LUA
}
mcp_lua server/discover "" "''" '"supportedVersions"' >"$tmp/discover.lua"
mcp_lua tools/list "" "''" '"tools"' >"$tmp/list.lua"
mcp_lua tools/call get_bike_status "'\"name\":\"get_bike_status\",\"arguments\":{\"bikeId\":\"VL-' .. n .. '\"},'" '"structuredContent"' >"$tmp/bike.lua"
mcp_lua tools/call report_damaged_bike "'\"name\":\"report_damaged_bike\",\"arguments\":{\"bikeId\":\"VL-' .. n .. '\",\"issue\":\"flat_tire\"},'" '"reportId"' >"$tmp/report.lua"
# The HTTP ceiling: /healthz when the server has one, else GET /mcp (405 from the transport).
if [[ $(curl -s -o /dev/null -w '%{http_code}' "$url/healthz") == 200 ]]; then
  ceiling_name="GET /healthz"
  { wrk_common ""; echo 'wrk.method = "GET"'; echo 'wrk.path = "/healthz"'; } >"$tmp/ceiling.lua"
  ceiling_path=/healthz
else
  # (GET /mcp answers 405 with Connection: close: a ceiling of connection set-ups, not of
  # requests; ping is not a 2026-07-28 method.) Until /healthz exists: the protected resource
  # metadata (RFC 9728), answered by the transport without the MCP core or the database.
  ceiling_name="GET /.well-known/oauth-protected-resource (no /healthz in this build)"
  { wrk_common '"resource"'; echo 'wrk.method = "GET"'; } >"$tmp/ceiling.lua"
  ceiling_path=/.well-known/oauth-protected-resource
fi

# The same server through a transaction-pooling PgBouncer (docs/operating.md "Deploying with a pooler"):
# BIKAROO_DB_POOLER=transaction (unnamed statements), a pool as large as the executor's connections, LISTEN
# direct. Measured for get_bike_status when pgbouncer is installed.
pooled_pid=
if command -v pgbouncer >/dev/null; then
  bport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  mkdir -p "$tmp/bouncer"
  cat >"$tmp/bouncer/pgbouncer.ini" <<INI
[databases]
bikaroo = host=$PGTMP_SOCK dbname=bikaroo
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $bport
unix_socket_dir =
auth_type = trust
auth_file = $tmp/bouncer/users.txt
pool_mode = transaction
default_pool_size = $dbconns
max_client_conn = 256
logfile = $tmp/bouncer/pgbouncer.log
INI
  echo '"fleet_app" ""' >"$tmp/bouncer/users.txt"
  if [[ $EUID == 0 ]]; then
    chown -R postgres "$tmp/bouncer"
    runuser -u postgres -- pgbouncer "$tmp/bouncer/pgbouncer.ini" 2>/dev/null &
  else
    pgbouncer "$tmp/bouncer/pgbouncer.ini" 2>/dev/null &
  fi
  pids+=($!)
  pooled_db="postgresql://fleet_app@127.0.0.1:$bport/bikaroo?hostaddr=&sslmode=disable&gssencmode=disable&options=&passfile=&connect_timeout=10&target_session_attrs=any&client_encoding=UTF8"
  for _ in $(seq 1 50); do psql -X -q "$pooled_db" -c 'SELECT 1' >/dev/null 2>&1 && break; sleep 0.1; done
  if serve_as pooled BIKAROO_DB_POOLER=transaction DATABASE_URL="$pooled_db" \
    BIKAROO_LISTEN_DATABASE_URL="$DATABASE_URL"; then
    pooled_pid=${srv_pid[pooled]}
  else
    log "bench: the pooled server did not start (no pooled line)"; fi
fi

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
# The database's CPU (ticks): the postmaster's own and its ended children's (cutime, cstime: it
# reaps them), plus its live children's: every backend (the server's, pgbench's, psql's) and
# PostgreSQL's own processes (WAL writer, autovacuum...), all of which a call's work may cost.
pg_pid=$(head -n 1 "$(psql -X -At "$super" -c 'SHOW data_directory')/postmaster.pid")
pg_ticks() {
  local s fld c t
  read -r s <"/proc/$pg_pid/stat"
  read -ra fld <<<"${s##*) }"
  t=$((fld[11] + fld[12] + fld[13] + fld[14]))
  for c in $(cat /proc/"$pg_pid"/task/*/children); do
    { read -r s <"/proc/$c/stat"; } 2>/dev/null || continue
    read -ra fld <<<"${s##*) }"
    t=$((t + fld[11] + fld[12]))
  done
  echo "$t"
}
pg_children() { cat /proc/"$pg_pid"/task/*/children | wc -w; }
results=$tmp/results # lines: name conns rate p50_us p99_us cpu_us_per_req db_cpu_us_per_req valid
median3() { sort -n | awk '{a[NR]=$0} END {print a[int((NR + 1) / 2)]}'; }
# per_req TICKS REQUESTS: microseconds of CPU per request (0: none)
per_req() { awk -v c="$1" -v n="${2:-0}" -v hz="$hz" 'BEGIN { printf "%.0f", (n > 0 ? c * 1e6 / hz / n : 0) }'; }

# one_wrk SERVER LUA PATH CONNS -> "rate p50 p99 cpu db_cpu valid" of one round (SERVER: a name
# of srv_pid: direct, pooled...)
one_wrk() {
  local c0 c1 d0 d1 out rate good bad errs p50 p99 pid=${srv_pid[$1]} u=${srv_url[$1]}
  c0=$(cpu_ticks "$pid")
  d0=$(pg_ticks)
  out=$(wrk -t 2 -c "$4" -d "${secs}s" -s "$2" "$u$3" 2>&1)
  c1=$(cpu_ticks "$pid")
  d1=$(pg_ticks)
  rate=$(sed -nE 's/^Requests\/sec: *([0-9.]+).*/\1/p' <<<"$out")
  read -r good bad errs p50 p99 < <(sed -nE 's/^CHECK good=([0-9]+) bad=([0-9]+) errors=([0-9]+) p50=([0-9]+) p99=([0-9]+)/\1 \2 \3 \4 \5/p' <<<"$out")
  local valid=ok
  [[ -z $good || $good == 0 || $bad != 0 || $errs != 0 ]] && valid=INVALID
  awk -v r="$rate" -v p50="${p50:-0}" -v p99="${p99:-0}" -v v="$valid" \
    -v cpu="$(per_req $((c1 - c0)) "${good:-0}")" -v db="$(per_req $((d1 - d0)) "${good:-0}")" \
    'BEGIN { printf "%.0f %d %d %d %d %s\n", r, p50, p99, cpu, db, v }'
}
# one_pg URL SCRIPT CLIENTS [CALLS PER TRANSACTION] [LATENCY DIVISOR] [pgbench -D NAME=VALUE...]
# -> "calls/s latency_us 0 0 db_cpu valid"; the latency of a transaction over the divisor
# (default the calls per transaction: the calls run one after the other).
one_pg() {
  local u=$1 f=$2 c=$3 k=${4:-1} div=${5:-${4:-1}} out d0 d1 before
  shift $(($# < 5 ? $# : 5))
  before=$(pg_children)
  d0=$(pg_ticks)
  # A run that aborts (a script that does not run) is an INVALID line below, not the bench's end.
  out=$(pgbench -n -M prepared -c "$c" -j "$((c < 2 ? c : 2))" -T "$secs" "$@" -f "$f" "$u" 2>&1) || true
  # pgbench's backends end after it: their CPU counts once the postmaster has reaped them.
  for _ in $(seq 1 30); do (($(pg_children) <= before)) && break; sleep 0.1; done
  d1=$(pg_ticks)
  local tps lat failed txns
  tps=$(sed -nE 's/^tps = ([0-9.]+).*/\1/p' <<<"$out" | head -n 1)
  failed=$(sed -nE 's/^number of failed transactions: ([0-9]+).*/\1/p' <<<"$out")
  txns=$(sed -nE 's/^number of transactions actually processed: ([0-9]+).*/\1/p' <<<"$out")
  lat=$(sed -nE 's/^latency average = ([0-9.]+) ms/\1/p' <<<"$out")
  local valid=ok
  [[ -z $tps || ${failed:-0} != 0 ]] && { valid=INVALID; log "pgbench $f: $(tail -n 3 <<<"$out")"; }
  awk -v t="${tps:-0}" -v k="$k" -v div="$div" -v l="${lat:-0}" -v v="$valid" \
    -v db="$(per_req $((d1 - d0)) $((${txns:-0} * k)))" \
    'BEGIN { printf "%.0f %d 0 0 %d %s\n", t * k, l * 1000 / div, db, v }'
}
# stdio: the same server binary over a pipe, CONNS requests kept in flight by bench/stdio.py
# (which measures the server's and the database's CPU over the same window).
one_stdio() { # kind conns
  env "${server_env[@]}" BIKAROO_TOKEN="$token" BENCH_PG_PID="$pg_pid" \
    python3 bench/stdio.py "$B/bikaroo-mcp" "$1" "$2" "$secs"
}
# measure NAME CONNS COMMAND...: the median round (by rate) into $results
measure() {
  local name=$1 conns=$2 r
  shift 2
  [[ -z ${BENCH_ONLY:-} || $name =~ $BENCH_ONLY ]] || return 0
  for r in $(seq 1 "$rounds"); do "$@"; done >"$tmp/rounds"
  median_of "$name" "$conns" "$tmp/rounds"
}

# median_of NAME CONNS FILE: the median round (by rate) of FILE's rounds into $results
median_of() {
  local med line
  med=$(awk '{print $1, NR}' "$3" | sort -n | awk '{a[NR]=$2} END {print a[int((NR + 1) / 2)]}')
  line=$(sed -n "${med}p" "$3")
  grep -q INVALID "$3" && line="${line% *} INVALID"
  echo "$1 $2 $line" >>"$results"
  log "  $1 @$2: $line (rounds: $(awk '{printf "%s ", $1}' "$3"))"
}

# measure_turns CONNS LUA SERVER:NAME...: one round of each server in turn (SERVER pg: the plain
# read in pgbench, a server's floor, instead of a server), BENCH_ROUNDS times,
# so that a machine getting busier or quieter meanwhile moves them all alike; each round begins
# one server further on (no line always last, after the others' writes); each NAME's median
# round into $results (BENCH_ONLY matched against each NAME), and for each NAME after the
# first, "paired_NAME CONNS RATIO": the median over rounds of its rate over the first NAME's in
# the same round (rounds a few seconds apart, on a machine whose load moves by more than that).
measure_turns() {
  local conns=$1 lua=$2 r i s n=$(($# - 2))
  shift 2
  local turn=("$@") want=${BENCH_ONLY:-}
  for s in "$@"; do [[ -z $want || ${s#*:} =~ $want ]] && want=; done
  [[ -z $want ]] || return 0
  for s in "$@"; do : >"$tmp/turn-${s#*:}"; done
  for r in $(seq 0 $((rounds - 1))); do
    for i in $(seq 0 $((n - 1))); do
      s=${turn[$(((i + r) % n))]}
      if [[ ${s%%:*} == pg ]]; then
        one_pg "$super" "$tmp/plain.sql" "$conns"
      else
        one_wrk "${s%%:*}" "$lua" /mcp "$conns"
      fi >>"$tmp/turn-${s#*:}"
    done
  done
  for s in "$@"; do median_of "${s#*:}" "$conns" "$tmp/turn-${s#*:}"; done
  for s in "${turn[@]:1}"; do
    r=$(paste "$tmp/turn-${s#*:}" "$tmp/turn-${turn[0]#*:}" | awk '$7 > 0 {print $1 / $7}' | sort -g |
      awk '{a[NR] = $1} END {if (NR) printf "%.2f", a[int((NR + 1) / 2)]; else printf "-"}')
    echo "paired_${s#*:} $conns $r 0 0 0 ok" >>"$results"
    log "  ${s#*:} / ${turn[0]#*:} @$conns, round by round: $(paste "$tmp/turn-${s#*:}" "$tmp/turn-${turn[0]#*:}" | awk '$7 > 0 {printf "%.2f ", $1 / $7}')"
  done
}

# --- many connections: get_bike_status on $many kept-alive connections at once (wrk), every
# answer checked: a 200 with its result, or a 503 with Retry-After (the server sheds past its
# BIKAROO_CALLS_MAX calls under way); any other answer makes the
# line INVALID; resets and time-outs are counted apart (target 0). The rate counts the 200s. The server's RSS is sampled every
# 0.1 s during the load: the line's peak goes in the table (target < 64 MiB).
{
  sed 's/^function response.*/function response(status, headers, body)\
  if status == 503 and (headers["Retry-After"] or headers["retry-after"]) then shed = shed + 1; return end/' "$tmp/bike.lua" |
    sed 's/^function init(args) good = 0; bad = 0 end/function init(args) good = 0; bad = 0; shed = 0 end/'
  cat <<'LUA'
local done_checked = done
function done(summary, latency, requests)
  local s = 0
  for _, t in ipairs(threads) do s = s + t:get("shed") end
  io.write(string.format("SHED %d\n", s))
  done_checked(summary, latency, requests)
end
LUA
} >"$tmp/many.lua"
one_many() { # SERVER -> "rate p50 p99 cpu db_cpu valid"; "peak_rss_kib shed" appended to $tmp/many
  local c0 c1 d0 d1 out good bad errs p50 p99 shed peak=0 r w pid=${srv_pid[$1]} u=${srv_url[$1]}
  [[ -e /proc/$pid/stat ]] || { log "bench: the server of shape $1 has exited (BENCH_KEEP=1 keeps its log)"; exit 1; }
  c0=$(cpu_ticks "$pid")
  d0=$(pg_ticks)
  wrk -t 2 -c "$many" -d "${msecs}s" --timeout 10s -s "$tmp/many.lua" "$u/mcp" >"$tmp/many.out" 2>&1 &
  w=$!
  while kill -0 "$w" 2>/dev/null; do
    r=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
    ((r > peak)) && peak=$r
    sleep 0.1
  done
  wait "$w" || true
  c1=$(cpu_ticks "$pid")
  d1=$(pg_ticks)
  out=$(cat "$tmp/many.out")
  read -r good bad errs p50 p99 < <(sed -nE 's/^CHECK good=([0-9]+) bad=([0-9]+) errors=([0-9]+) p50=([0-9]+) p99=([0-9]+)/\1 \2 \3 \4 \5/p' <<<"$out")
  shed=$(sed -nE 's/^SHED ([0-9]+)/\1/p' <<<"$out")
  local valid=ok
  [[ -z $good || $good == 0 || $bad != 0 ]] && valid=INVALID
  [[ $valid == ok && $errs == 0 ]] || log "  $many connections: $good good, ${shed:-0} shed, $bad bad, $errs errors: $(grep -E 'Socket errors|Non-2xx' <<<"$out" | tr '\n' ' ')"
  echo "$peak ${shed:-0} ${good:-0} ${bad:-0} ${errs:-0}" >>"$tmp/many"
  awk -v g="${good:-0}" -v s="$msecs" -v p50="${p50:-0}" -v p99="${p99:-0}" -v v="$valid" \
    -v cpu="$(per_req $((c1 - c0)) "${good:-0}")" -v db="$(per_req $((d1 - d0)) "${good:-0}")" \
    'BEGIN { printf "%.0f %d %d %d %d %s\n", g / s, p50, p99, cpu, db, v }'
}
msecs=$((secs < 5 ? 5 : secs))

# --- make bench-rss: 1,000,000 mixed requests (reads, lists, discovery, reports) at 32
# connections in wrk runs of 10 s; the server's RSS after each run. Target: peak (VmHWM) under
# 32 MiB, and no growth between the end of the second quarter and the end.
if [[ $mode == rss ]]; then
  total=${BENCH_RSS_REQUESTS:-1000000}
  {
    wrk_common '"result"'
    cat <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
wrk.headers["Authorization"] = "Bearer $token"
local seq = 0
local meta = '$meta'
request = function()
  seq = seq + 1
  local n = 3 * math.random(33334, 65332) + 2
  local k = seq % 10
  local m, body
  if k < 6 then
    m = "tools/call"; wrk.headers["Mcp-Name"] = "get_bike_status"
    body = '"name":"get_bike_status","arguments":{"bikeId":"VL-' .. n .. '"},'
  elseif k == 6 then
    m = "tools/call"; wrk.headers["Mcp-Name"] = "report_damaged_bike"
    body = '"name":"report_damaged_bike","arguments":{"bikeId":"VL-' .. n .. '","issue":"flat_tire"},'
  elseif k < 9 then
    m = "tools/list"; wrk.headers["Mcp-Name"] = nil; body = ""
  else
    m = "server/discover"; wrk.headers["Mcp-Name"] = nil; body = ""
  end
  wrk.headers["Mcp-Method"] = m
  return wrk.format(nil, nil, nil, '{"jsonrpc":"2.0","id":' .. seq .. ',"method":"' .. m .. '","params":{' .. body .. meta .. '}}')
end
LUA
  } >"$tmp/mixed.lua"
  done_n=0 samples=()
  log "== bench-rss: $total mixed requests at 32 connections, $threads server workers"
  while ((done_n < total)); do
    out=$(wrk -t 2 -c 32 -d 10s -s "$tmp/mixed.lua" "$url/mcp" 2>&1)
    read -r good bad errs _ _ < <(sed -nE 's/^CHECK good=([0-9]+) bad=([0-9]+) errors=([0-9]+) p50=([0-9]+) p99=([0-9]+)/\1 \2 \3 \4 \5/p' <<<"$out")
    [[ ${bad:-1} == 0 && ${errs:-1} == 0 ]] || { log "bench-rss: $bad bad answers, $errs errors: INVALID"; exit 1; }
    done_n=$((done_n + good))
    r=$(awk '/VmRSS/ {print $2}' "/proc/$server_pid/status")
    samples+=("$done_n $r")
    log "  $done_n requests: RSS $r KiB"
  done
  peak=$(awk '/VmHWM/ {print $2}' "/proc/$server_pid/status")
  q2=$(printf '%s\n' "${samples[@]}" | awk -v t="$total" '$1 >= t / 2 {print $2; exit}')
  last=$(printf '%s\n' "${samples[@]}" | tail -n 1 | awk '{print $2}')
  growth=$((last - q2))
  verdict=met
  ((peak < 32 * 1024 && growth <= 512)) || verdict=MISSED
  commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
  {
    echo
    echo "## $(date -u '+%Y-%m-%d %H:%M UTC'), commit $commit: RSS over $done_n mixed requests"
    echo
    echo "Command: \`make bench-rss\` ($threads workers, 32 connections, 60% get_bike_status, 10% report_damaged_bike, 20% tools/list, 10% server/discover; JWT, RLS, audit; every answer checked). Other work ran on the machine."
    echo
    echo "Peak RSS (VmHWM) $((peak / 1024)) MiB (target < 32 MiB); RSS at the end of the second quarter $q2 KiB, at the end $last KiB: growth $growth KiB (target: none; up to 512 KiB of allocator noise tolerated): $verdict."
  } >"$tmp/rss.md"
  results_append "$tmp/rss.md"
  cat "$tmp/rss.md"
  [[ $verdict == met ]]
  exit
fi

# --- bench/run.sh BUILD traces (make bench-traces): what traces cost a get_bike_status in
# instructions, counted by valgrind's callgrind, which a busy machine does not move as it moves
# rates. One server per shape (untraced; exporting with no call sampled; one trace in ten; every
# call), one loop and one database connection, under callgrind; a warm-up, then its counters
# zeroed and one connection of calls for BENCH_TRACE_SECONDS (default 12): each call is a database
# unit of its own, the worst case for a traced call. Instructions per call answered, less those
# of as long idle: the loop's thread, the exporter's (its batches are smaller than at full speed:
# an upper bound), the whole process; and the whole process over the untraced one's.
if [[ $mode == traces ]]; then
  command -v valgrind >/dev/null || { echo "bench traces needs valgrind (scripts/deps.sh test installs it)" >&2; exit 1; }
  tsecs=${BENCH_TRACE_SECONDS:-12}
  on=(OTEL_EXPORTER_OTLP_ENDPOINT="$sink")
  shapes=("untraced|untraced||"
    "none sampled|export on, no call sampled (traceidratio 0)|OTEL_TRACES_SAMPLER=traceidratio OTEL_TRACES_SAMPLER_ARG=0|<= 1.01"
    "one in ten|one trace in ten (traceidratio 0.1)|OTEL_TRACES_SAMPLER=traceidratio OTEL_TRACES_SAMPLER_ARG=0.1|<= 1.03"
    "every call|every call (always_on)|OTEL_TRACES_SAMPLER=always_on|<= 1.11")
  base=0
  {
    echo
    echo "## $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown): what traces cost a call, in instructions"
    echo
    echo "Command: \`make bench-traces\` (BENCH_TRACE_SECONDS=$tsecs): get_bike_status on one connection to a server of one loop and one database connection under callgrind, one server per shape, exporting to bench/otlp-sink.py. Instructions per call answered (less those of as long idle), which the machine's load does not change."
    echo
    echo "| shape | calls | loop's thread | exporter's thread | whole process | / untraced | target |"
    echo "|---|---|---|---|---|---|---|"
  } >"$tmp/traces.md"
  for shape in "${shapes[@]}"; do
    IFS='|' read -r name what settings target <<<"$shape"
    read -ra extra <<<"$settings"
    [[ $name == untraced ]] && extra=() || extra=("${on[@]}" "${extra[@]}")
    out=$tmp/cg-${name// /-}
    ready=$out.port
    env "${server_env[@]}" "${extra[@]}" BIKAROO_THREADS=1 BIKAROO_DB_CONNECTIONS=1 BIKAROO_PORT=0 \
      BIKAROO_READY_FILE="$ready" valgrind --tool=callgrind --separate-threads=yes \
      --callgrind-out-file="$out.%p" "$B/bikaroo-mcp" serve 2>"$out.log" &
    vpid=$!
    pids+=("$vpid")
    for _ in $(seq 1 300); do [[ -s $ready ]] && break; sleep 0.2; done
    [[ -s $ready ]] || { log "bench: the $name server did not start under valgrind:"; tail -n 20 "$out.log" >&2; exit 1; }
    u="http://127.0.0.1:$(cat "$ready")/mcp"
    wrk -t 1 -c 1 -d 4s -s "$tmp/bike.lua" "$u" >/dev/null 2>&1
    # As long idle first (dump 1: the timers, the readiness checks, the exporter's wake-ups),
    # then under the calls (dump 2): the calls' own work is the difference.
    callgrind_control -z "$vpid" >/dev/null 2>&1
    sleep "$tsecs"
    callgrind_control -d "$vpid" >/dev/null 2>&1
    good=$(wrk -t 1 -c 1 -d "${tsecs}s" --timeout 20s -s "$tmp/bike.lua" "$u" 2>&1 | sed -nE 's/^CHECK good=([0-9]+) bad=0 errors=0 .*/\1/p')
    callgrind_control -d "$vpid" >/dev/null 2>&1
    kill -TERM "$vpid" && wait "$vpid" 2>/dev/null || true
    [[ -n $good && $good -gt 0 ]] || { log "bench: the $name server answered a call wrong or not at all"; exit 1; }
    # A dump is one file per thread: the loop's and the exporter's named by their functions.
    loop=0 exporter=0 all=0
    for f in "$out".*.[12]-*; do
      n=$(sed -nE 's/^summary: ([0-9]+)/\1/p' "$f")
      [[ $f == *.1-* ]] && n=$((-n))
      all=$((all + n))
      if grep -q 'http_loop_run' "$f"; then loop=$((loop + n)); fi
      if grep -q 'otlp_run' "$f"; then exporter=$((exporter + n)); fi
    done
    ((base)) || base=$((all / good))
    printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$what" "$good" "$((loop / good))" \
      "$( ((exporter)) && echo $((exporter / good)) || echo -)" "$((all / good))" \
      "$(awk -v a="$((all / good))" -v b="$base" 'BEGIN { printf "%.3f", a / b }')" "$target" >>"$tmp/traces.md"
    log "  $name: $good calls, $((all / good)) instructions per call"
  done
  cat "$tmp/traces.md"
  [[ -n ${BENCH_ONLY:-} ]] || results_append "$tmp/traces.md"
  exit
fi

if [[ $mode == serve ]]; then
  printf 'url=%s\ntoken=%s\nserver_pid=%s\nwrk_scripts=%s\n' "$url" "$token" "$server_pid" "$tmp"
  sleep "${BENCH_SERVE_SECONDS:-1800}" &
  wait $! || true
  exit
fi

# --- bench/run.sh BUILD shapes: the same get_bike_status path served by three shapes, measured in
# one run against one cluster, rounds alternating (make bench-shapes; bench/README.md):
#   a  an earlier commit's server (BENCH_SHAPES_REF, default e07d122: event threads that hand
#      each call to a worker pool, a database executor thread, reads batched as one statement
#      per element), on a database of its own migrated by that commit, in the same cluster;
#   b  this build: one event loop per core (BIKAROO_THREADS, 2), reads by caller;
#   c  this build with one event loop in all (BIKAROO_THREADS=1): the single-threaded shape.
# At 8, 32 and $many connections: rate, p50, p99, the server's and the database's CPU per call;
# then each shape's batch statement in pgbench at the batch size its server formed at 32.
if [[ $mode == shapes ]]; then
  ref=${BENCH_SHAPES_REF:-e07d122}
  src=$root/build/shape-${ref:0:12}/src
  if [[ ! -x $src/build/bikaroo-mcp ]]; then
    log "== building $ref (shape a) into $src"
    rm -rf "$src"
    git clone -q --shared --no-checkout "$root" "$src"
    git -C "$src" checkout -q --detach "$ref"
    make -C "$src" --no-print-directory -s build/bikaroo-mcp >"$tmp/shape-a-build.log" 2>&1 ||
      { tail -n 30 "$tmp/shape-a-build.log" >&2; exit 1; }
  fi
  scripts/pgtmp.sh createdb "$pgdir" bikaroo_a >/dev/null
  url_a=${DATABASE_URL/\/bikaroo\?//bikaroo_a?}
  mig_a=${BIKAROO_MIGRATE_URL/\/bikaroo\?//bikaroo_a?}
  DATABASE_URL=$mig_a BIKAROO_MIGRATE_URL=$mig_a BIKAROO_MIGRATIONS_DIR=$src/migrations \
    "$src/build/bikaroo-mcp" migrate >"$tmp/shape-a-migrate.log" 2>&1 ||
    { cat "$tmp/shape-a-migrate.log" >&2; exit 1; }
  psql -X -q "$mig_a" -v ON_ERROR_STOP=1 -f "$src/migrations/demo/demo-data.sql"
  psql -X -q "$mig_a" -v ON_ERROR_STOP=1 -c "
    INSERT INTO fleet.bikes (bike_id, region, station_id, status, battery_pct, last_seen_at)
    SELECT 'VL-' || n, (ARRAY['BE-BRU','FR-LYO','FR-PAR'])[n % 3 + 1], NULL, 'available', n % 101, now()
      FROM generate_series(100000, 195999) n ON CONFLICT DO NOTHING;
    ANALYZE fleet.bikes;" >/dev/null
  start_shape() { # NAME BINARY DATABASE_URL DATADIR [NAME=VALUE...]
    local name=$1 bin=$2 db=$3 dir=$4
    shift 4
    env "${server_env[@]}" DATABASE_URL="$db" BIKAROO_RESOURCES_DIR="$dir/resources" \
      BIKAROO_PROMPTS_DIR="$dir/prompts" "$@" BIKAROO_PORT=0 BIKAROO_READY_FILE="$tmp/$name.port" \
      "$bin" serve 2>"$tmp/$name.log" &
    srv_pid[$name]=$!
    pids+=($!)
    for _ in $(seq 1 100); do [[ -s $tmp/$name.port ]] && break; sleep 0.1; done
    [[ -s $tmp/$name.port ]] || { log "bench: shape $name did not start:"; cat "$tmp/$name.log" >&2; exit 1; }
    srv_url[$name]="http://127.0.0.1:$(cat "$tmp/$name.port")"
  }
  start_shape a "$src/build/bikaroo-mcp" "$url_a" "$src"
  srv_pid[b]=$server_pid srv_url[b]=$url
  start_shape c "$B/bikaroo-mcp" "$DATABASE_URL" "$root" BIKAROO_THREADS=1
  log "== shapes: a = $ref, b = this build (${threads} loops), c = this build (1 loop); $rounds rounds of ${secs}s"
  n_of() { psql -X -At "$1" -c "SELECT greatest(round(count(*)::numeric / greatest(count(DISTINCT xmin::text), 1)), 1) FROM (SELECT xmin FROM fleet.audit_log WHERE tool = 'get_bike_status' ORDER BY audit_id DESC LIMIT 20000) x"; }
  for c in 8 32 "$many"; do
    psql -X -q "$super" -c "VACUUM (ANALYZE) fleet.audit_log" >/dev/null
    psql -X -q "$mig_a" -c "VACUUM (ANALYZE) fleet.audit_log" >/dev/null 2>&1 || true
    [[ $c == "$many" ]] || measure "pg_plain_read" "$c" one_pg "$super" "$tmp/plain.sql" "$c"
    for r in $(seq 1 "$rounds"); do
      for shape in a b c; do
        if [[ $c == "$many" ]]; then one_many "$shape"; else one_wrk "$shape" "$tmp/bike.lua" /mcp "$c"; fi |
          sed "s/^/$shape $c /" >>"$tmp/shape-rounds"
      done
    done
    # Each server's batch statement and average batch as they stand after the 32-connection
    # rounds (at 1,000 the batches grow past what one pgbench statement may carry).
    if [[ $c == 32 ]]; then
      sql_a=$(psql -X -At "$super" <<<"SELECT query FROM pg_stat_activity WHERE datname = 'bikaroo_a' AND usename = 'fleet_app' AND query LIKE 'WITH e AS (SELECT * FROM unnest(%' LIMIT 1")
      sql_b=$(byc_sql)
      n_a=$(n_of "$mig_a") n_b=$(n_of "$super")
    fi
  done
  # Each shape's batch statement, from pg_stat_activity after its 32-connection rounds, at the
  # average batch its server formed: shape a's per element (its parameters are arrays), b's by
  # caller (c runs the same statement).
  if [[ -n $sql_a ]]; then
    {
      for i in $(seq 1 "$n_a"); do printf '\\set n%d 3 * random(33334, 65332) + 2\n' "$i"; done
      ids='' targets=''
      for i in $(seq 1 "$n_a"); do ids+="${ids:+, }ARRAY['VL-' || :n$i]" targets+="${targets:+, }'VL-' || :n$i"; done
      q=$sql_a
      q=${q//\$10/:token_refs} q=${q//\$9/:trace_ids} q=${q//\$8/:request_ids} q=${q//\$7/:digests}
      q=${q//\$6/(ARRAY[$targets])} q=${q//\$5/:tools} q=${q//\$4/(ARRAY[$ids])} q=${q//\$3/:refs}
      q=${q//\$2/:clients} q=${q//\$1/:subjects}
      printf '%s;\n' "$q"
    } >"$tmp/shape-a.sql"
    arr_of() { local i v=''; for i in $(seq 1 "$n_a"); do v+="${v:+,}$1"; done; printf '{%s}' "$v"; }
    refs=''; for i in $(seq 1 "$n_a"); do refs+="${refs:+,}\"$i\""; done
    measure "pg_batch_a" 32 one_pg "$url_a" "$tmp/shape-a.sql" 2 "$n_a" 1 \
      -D "subjects=$(arr_of marie)" -D "clients=$(arr_of customer-care-assistant)" -D "refs={$refs}" \
      -D "tools=$(arr_of get_bike_status)" -D "digests=$(arr_of "$(printf '%064d' 1)")" \
      -D "request_ids=$(arr_of 1)" -D "trace_ids=$(arr_of NULL)" -D "token_refs=$(arr_of jti:bench)"
  else
    log "  shape a's batch statement not seen: no pg_batch_a line"
  fi
  if [[ -n $sql_b ]]; then
    mapfile -t vars < <(byc_vars jti:bench "$n_b")
    # The plan mode the identity statement sets for the read (domain/reads.c pins it generic).
    for mode_b in force_generic_plan force_custom_plan auto; do
      byc_script "$n_b" "$sql_b" "$mode_b" >"$tmp/shape-b.sql"
      measure "pg_batch_b_$mode_b" 32 one_pg "$DATABASE_URL" "$tmp/shape-b.sql" "$((dbconns * threads))" "$n_b" 1 "${vars[@]}"
    done
  fi
  # The table: the median round of each shape at each connection count.
  commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
  {
    echo
    echo "## $(date -u '+%Y-%m-%d %H:%M UTC'), commit $commit: shapes of the get_bike_status path"
    echo
    echo "Command: \`make bench-shapes\` (BENCH_SHAPES_REF=$ref BENCH_SECONDS=$secs BENCH_ROUNDS=$rounds); $(nproc) cores shared with the load generator and PostgreSQL. a: $ref (event threads, a worker pool, an executor thread, batches of one statement per element); b: this build, $threads event loops; c: this build, one event loop. JWT validation on, row-level security, audit; every answer checked. Rounds alternate a, b, c; the median round of each is shown."
    echo
    echo "| shape | conns | rate /s | / plain read at 32 | p50 ms | p99 ms | server CPU us/call | database CPU us/call | checked |"
    echo "|---|---|---|---|---|---|---|---|---|"
    plain32=$(awk '$1 == "pg_plain_read" && $2 == 32 {print $3}' "$results")
    for c in 8 32 "$many"; do
      for shape in a b c; do
        awk -v s="$shape" -v c="$c" '$1 == s && $2 == c' "$tmp/shape-rounds" | sort -k3 -n |
          awk '{a[NR]=$0} END {print a[int((NR + 1) / 2)]}' |
          while read -r _ _ rate p50 p99 cpu db valid; do
            printf '| %s | %s | %s | %s | %.2f | %.2f | %s | %s | %s |\n' "$shape" "$c" "$rate" \
              "$(ratio "$rate" "$plain32")" "$(awk -v v="$p50" 'BEGIN{print v/1000}')" \
              "$(awk -v v="$p99" 'BEGIN{print v/1000}')" "$cpu" "$db" "$valid"
          done
      done
    done
    echo
    echo "| statement (pgbench, 32 connections' share of the server's connections) | calls/s | / plain read at 32 | database CPU us/call | checked |"
    echo "|---|---|---|---|---|"
    while read -r name _ rate _ _ _ db valid; do
      [[ $name == pg_plain_read ]] && continue
      printf '| %s (batches of %s) | %s | %s | %s | %s |\n' "$name" "$([[ $name == pg_batch_a ]] && echo "$n_a" || echo "$n_b")" \
        "$rate" "$(ratio "$rate" "$plain32")" "$db" "$valid"
    done < <(awk '$1 ~ /^pg_batch_/' "$results")
    echo
    echo "Plain indexed read at 32 connections: $plain32/s. Shape a's average batch at 32 connections: $n_a calls; b's: $n_b. Lines of the hot path: a $(git -C "$src" ls-files common/task.c common/task.h common/deadline.c common/deadline.h domain/pg/exec.c domain/pg/exec.h domain/pg/conn.c domain/pg/conn.h domain/pg/db.c domain/pg/db.h domain/reads.c domain/reads.h domain/reads_batch.c domain/reads_batch.h server/transport/http_work.c server/transport/http_work.h migrations/functions/fleet.read_batch.sql migrations/functions/fleet.read_batch_sql.sql | (cd "$src" && xargs cat) | wc -l), b $(scripts/hotpath.py --total) (scripts/hotpath.py; bench/README.md: which files)."
  } >"$tmp/shapes.md"
  cat "$tmp/shapes.md"
  [[ -n ${BENCH_ONLY:-} ]] || results_append "$tmp/shapes.md"
  exit
fi

log "== bench: $rounds rounds of ${secs}s, connections: $conns_list, $threads server workers"
audit0=$(psql -X -At "$super" -c "SELECT coalesce(max(audit_id), 0) FROM fleet.audit_log")
for c in $conns_list; do
  # The writes of the previous round (reports, the write baseline, audit rows) leave dead rows
  # and stale statistics behind; autovacuum would catch up within a minute, a 3-minute bench
  # would measure its lag instead: each round starts from a vacuumed, analysed database.
  psql -X -q "$super" -c "VACUUM (ANALYZE) fleet.bikes, fleet.cases, fleet.case_events, fleet.damage_reports, fleet.bike_status_history, fleet.audit_log" >/dev/null
  measure "pg_write_txn" "$c" one_pg "$BIKAROO_MIGRATE_URL" "$tmp/write.sql" "$c"
  measure "http_ceiling" "$c" one_wrk direct "$tmp/ceiling.lua" "$ceiling_path" "$c"
  measure "http_server_discover" "$c" one_wrk direct "$tmp/discover.lua" /mcp "$c"
  measure "http_tools_list" "$c" one_wrk direct "$tmp/list.lua" /mcp "$c"
  audit_b=$(psql -X -At "$super" -c "SELECT coalesce(max(audit_id), 0) FROM fleet.audit_log")
  # The hot read and the plain read it is held against, in turns: the plain read at 32
  # connections moves by a third from one run to the next on this machine (32 backends on 2
  # cores), more than any change measured against it.
  measure_turns "$c" "$tmp/bike.lua" pg:pg_plain_read direct:http_get_bike_status
  batch=$(psql -X -At "$super" -c "SELECT round(count(*)::numeric / greatest(count(DISTINCT xmin::text), 1), 1) FROM fleet.audit_log WHERE audit_id > $audit_b AND tool = 'get_bike_status'")
  log "  (audit rows per batch at $c connections: $batch)"
  echo "audit_rows_per_batch $c $batch 0 0 0 0 ok" >>"$results"
  token_ref=$(psql -X -At "$super" -c "SELECT coalesce(max(token_ref), 'jti:bench') FROM fleet.audit_log WHERE audit_id > $audit_b AND tool = 'get_bike_status'")
  # N: the server's average batch at this connection count (BENCH_BATCH: a fixed N; 16 when
  # the get_bike_status line did not run), on as many connections as the server's loops have.
  n=${BENCH_BATCH:-$(awk -v b="${batch:-0}" 'BEGIN { n = int(b + 0.5); print (n > 0 ? n : 16) }')}
  sql=$(byc_sql)
  if [[ -z $sql ]]; then
    sql="SELECT 'the get_bike_status line did not run: no statement of the server to measure' / 0"
    log "  no statement of the server's get_bike_status batches seen: pg_batched_read INVALID"
  fi
  byc_script "$n" "$sql" >"$tmp/batched.sql"
  mapfile -t vars < <(byc_vars "$token_ref" "$n")
  measure "pg_batched_read" "$c" one_pg "$DATABASE_URL" "$tmp/batched.sql" "$((dbconns * threads))" "$n" 1 "${vars[@]}"
  echo "batch_shape $c $n $((dbconns * threads)) 0 0 0 ok" >>"$results"
  [[ -n $pooled_pid ]] && measure "http_get_bike_status_pooled" "$c" one_wrk pooled "$tmp/bike.lua" /mcp "$c"
  # What traces cost: the same calls to this server untraced, to one exporting every call's
  # spans and to one exporting one trace in ten (to bench/otlp-sink.py), in turns.
  measure_turns "$c" "$tmp/bike.lua" direct:http_get_bike_status_untraced \
    traced:http_get_bike_status_traced traced10:http_get_bike_status_traced10
  measure "http_report_damaged_bike" "$c" one_wrk direct "$tmp/report.lua" /mcp "$c"
  measure "stdio_tools_list" "$c" one_stdio list "$c"
  measure "stdio_get_bike_status" "$c" one_stdio bike "$c"
done
# --- overload: get_bike_status offered open-loop (bench/openloop.c: calls sent at a fixed rate
# whatever the server answers, latency from when each was due; 192 kept-alive connections, below
# the 256 that may wait for headers) at a quarter of the capacity
# just measured (the unloaded p99) and at twice it: goodput (200s with a result per second)
# and the admitted calls' p99, against that capacity and that p99. The rest must be answered
# 503/429 with Retry-After, never reset.
cmax=$(for c in $conns_list; do echo "$c"; done | sort -n | tail -n 1)
if [[ -z ${BENCH_ONLY:-} || overload =~ $BENCH_ONLY ]]; then
  cc -O2 -o "$tmp/openloop" bench/openloop.c
  cap=$(awk -v c="$cmax" '$1 == "http_get_bike_status" && $2 == c {print $3}' "$results")
  osecs=$((secs < 5 ? 5 : secs))
  if [[ -n $cap && $cap -gt 0 ]]; then
    psql -X -q "$super" -c "VACUUM (ANALYZE) fleet.audit_log" >/dev/null
    low=$("$tmp/openloop" "$port" "$token" $((cap / 4)) "$osecs" 192)
    high=$("$tmp/openloop" "$port" "$token" $((cap * 2)) "$osecs" 192)
    log "  overload @${cmax}-conn capacity $cap/s: quarter: $low"
    log "  overload: twice: $high"
    echo "overload $cap $(field "$high" ok) $(field "$high" p99) $(field "$low" p99) $(field "$high" shed) $(field "$high" limited) $(field "$high" resets) $(field "$high" other) $(field "$high" unanswered) $osecs" >"$tmp/overload"
    # The same from many hosts behind no proxy: every call on a new connection of its own,
    # $fresh in flight at twice the capacity, a GET /healthz on a new connection every 100 ms.
    flow=$("$tmp/openloop" "$port" "$token" $((cap / 4)) "$osecs" "$fresh" fresh)
    fhigh=$("$tmp/openloop" "$port" "$token" $((cap * 2)) "$osecs" "$fresh" fresh)
    log "  overload, fresh connections: quarter: $flow"
    log "  overload, fresh connections: twice: $fhigh"
    echo "overload_fresh $cap $(field "$fhigh" ok) $(field "$fhigh" p99) $(field "$flow" p99) $(field "$fhigh" shed) $(field "$fhigh" limited) $(field "$fhigh" resets) $(field "$fhigh" other) $(field "$fhigh" unanswered) $osecs $(field "$fhigh" probes) $(field "$fhigh" probe_bad) $(field "$fhigh" probe_p99)" >"$tmp/overload_fresh"
    # The same load against the machine's ceiling (serve_nginx): what is left of the admitted
    # p99 and the goodput when no server does any work.
    if serve_nginx; then
      nport=${srv_url[nginx]##*:}
      nlow=$("$tmp/openloop" "$nport" "$token" $((cap / 4)) "$osecs" "$fresh" fresh)
      nhigh=$("$tmp/openloop" "$nport" "$token" $((cap * 2)) "$osecs" "$fresh" fresh)
      log "  overload, fresh connections, nginx: quarter: $nlow"
      log "  overload, fresh connections, nginx: twice: $nhigh"
      kill -TERM "${srv_pid[nginx]}" 2>/dev/null || true
      echo "overload_ceiling $(field "$nhigh" ok) $(field "$nhigh" p99) $(field "$nlow" p99) $(field "$nhigh" unanswered)" >"$tmp/overload_ceiling"
    fi
  fi
fi
# --- loop stalls: the identity provider slow. Each line has a server of its own (the bench's
# settings) against an issuer of its own (bench/issuer.py), and measures for $stall_secs s before
# and $stall_secs s while the issuer is slow: a victim whose token the server already knows
# (get_bike_status open-loop, $stall_rate/s, each call on a new connection, so that it lands on
# any of the server's loops as another caller's would) and a GET /healthz on a new connection
# every 100 ms (bench/openloop.c fresh), and while slow the calls of 40 tokens the server has not
# seen, each on a new connection, spread over the window (bench/stall.py, one process: a process
# per call would load the machine the victim shares). Introspection: the issuer answers after
# 800 ms. Key rotation: the issuer publishes a new key, its key set answers after 2 s, the 40
# tokens are signed by the new key (BIKAROO_AUTH_REFRESH_SECONDS=1, so that the set the server
# loaded at its start may be fetched again). The server's CPU over each window is logged.
stall_secs=${BENCH_STALL_SECONDS:-4}
stall_rate=${BENCH_STALL_RATE:-100}
stall_call() { # TOKEN: a get_bike_status of marie's on the stall server; prints the HTTP status
  curl -s -o /dev/null -w '%{http_code}\n' -H 'Content-Type: application/json' \
    -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: get_bike_status' \
    -H "Authorization: Bearer $1" \
    --data '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_bike_status","arguments":{"bikeId":"VL-2048"},'"$meta"'}}' \
    "http://127.0.0.1:$stall_port/mcp"
}
stall_serve() { # NAME ENV...: a server of the bench's settings and ENV; sets stall_pid, stall_port
  local ready=$tmp/$1.port
  env "${server_env[@]}" "${@:2}" BIKAROO_PORT=0 BIKAROO_READY_FILE="$ready" "$B/bikaroo-mcp" serve 2>"$tmp/$1.log" &
  stall_pid=$!
  pids+=("$stall_pid")
  for _ in $(seq 1 100); do [[ -s $ready ]] && break; sleep 0.1; done
  [[ -s $ready ]] || { log "bench: the $1 server did not start:"; cat "$tmp/$1.log" >&2; exit 1; }
  stall_port=$(cat "$ready")
  # The victim's token, known to the server from here on (introspected, or verified and cached),
  # then a second of its load: each loop's database connections made, its statements prepared.
  [[ $(stall_call "$stall_victim") == 200 ]] || { log "bench: the $1 server refused the victim's token"; exit 1; }
  "$tmp/openloop" "$stall_port" "$stall_victim" "$stall_rate" 1 64 fresh >/dev/null
}
stall_measure() { # LINE TOKENS_FILE: a line of $tmp/stall (the server of stall_serve)
  local v out sent c0
  c0=$(cpu_ticks "$stall_pid")
  "$tmp/openloop" "$stall_port" "$stall_victim" "$stall_rate" "$stall_secs" 64 fresh >"$tmp/stall.victim" &
  v=$!
  sent=$(python3 bench/stall.py "$stall_port" "$stall_secs" "$2")
  wait "$v" || true
  out=$(cat "$tmp/stall.victim")
  log "  $1: $out; $sent; server CPU $((($(cpu_ticks "$stall_pid") - c0) * 1000 / hz)) ms"
  echo "$1 $(field "$out" sent) $(field "$out" ok) $(field "$out" p99) $(field "$out" probes) $(field "$out" probe_bad) $(field "$out" probe_p99) $(field "$sent" sent) $(field "$sent" ok) $(field "$sent" refused) $(field "$sent" unavailable)" >>"$tmp/stall"
}
stall_stop() { kill -TERM "$stall_pid" 2>/dev/null; wait "$stall_pid" || true; }
if [[ -z ${BENCH_ONLY:-} || stall =~ $BENCH_ONLY ]]; then
  [[ -x $tmp/openloop ]] || cc -O2 -o "$tmp/openloop" bench/openloop.c
  : >"$tmp/stall"
  : >"$tmp/no-tokens"
  # Introspection answered after 800 ms.
  sport=$(free_port)
  mkdir -p "$tmp/slow-intro"
  issuer_start "$tmp/slow-intro" "$sport"
  stall_victim=bench-opaque-victim
  for i in $(seq 1 40); do echo "bench-opaque-new-$i-$RANDOM"; done >"$tmp/new-intro"
  stall_serve stall-intro BIKAROO_AUTH=introspection BIKAROO_AUTH_ISSUER="http://127.0.0.1:$sport" \
    BIKAROO_AUTH_CLIENT_ID=bikaroo-bench BIKAROO_AUTH_CLIENT_SECRET=bench-secret
  stall_measure intro_before "$tmp/no-tokens"
  echo 800 >"$tmp/slow-intro/delay-introspect"
  stall_measure intro_slow "$tmp/new-intro"
  stall_stop
  # A key rotation whose key set answers after 2 s.
  sport=$(free_port)
  mkdir -p "$tmp/slow-keys"
  openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$tmp/key2.pem" 2>/dev/null
  printf '{"keys":[%s]}' "$(jwk_of "$tmp/key.pem" bench)" >"$tmp/slow-keys/jwks.json"
  issuer_start "$tmp/slow-keys" "$sport"
  stall_victim=$(jwt_of "$tmp/key.pem" bench "http://127.0.0.1:$sport" stall-victim)
  for i in $(seq 1 40); do jwt_of "$tmp/key2.pem" bench-2 "http://127.0.0.1:$sport" "stall-new-$i"; done >"$tmp/new-keys"
  stall_serve stall-keys BIKAROO_AUTH_ISSUER="http://127.0.0.1:$sport" BIKAROO_AUTH_REFRESH_SECONDS=1
  stall_measure keys_before "$tmp/no-tokens"
  printf '{"keys":[%s,%s]}' "$(jwk_of "$tmp/key.pem" bench)" "$(jwk_of "$tmp/key2.pem" bench-2)" >"$tmp/slow-keys/jwks.json"
  echo 2000 >"$tmp/slow-keys/delay-jwks"
  stall_measure keys_slow "$tmp/new-keys"
  stall_stop
fi
# The loop-stall rows of the table.
stall_table() {
  [[ -s $tmp/stall ]] || return 0
  local what line before slow
  for line in intro keys; do
    what=$([[ $line == intro ]] && echo "introspection answered after 800 ms, 40 new tokens over ${stall_secs}s" ||
      echo "key rotation, the key set answered after 2 s, 40 tokens of the new key over ${stall_secs}s")
    read -r _ _ _ before _ _ pbefore _ < <(grep "^${line}_before " "$tmp/stall")
    read -r _ sent ok slow probes pbad pslow fresh fok f401 f503 < <(grep "^${line}_slow " "$tmp/stall")
    echo "| loop stall, $what: victim p99 while slow / before ($(awk -v a="$slow" -v b="$before" 'BEGIN { printf "%.1f ms / %.1f ms", a / 1000, b / 1000 }'); served $ok of $sent) | $(ratio "$slow" "$before") | <= 3 |"
    echo "| loop stall, $what: GET /healthz p99 while slow (before: $(awk -v v="$pbefore" 'BEGIN { printf "%.1f", v / 1000 }') ms; not 200 or no answer: $pbad of $probes) | $(awk -v v="$pslow" 'BEGIN { printf "%.1f ms", v / 1000 }') | < 100 ms |"
    echo "| loop stall, $what: the new tokens' calls | served $fok of $fresh, 401: $f401, 503: $f503 | all served |"
  done
}
: >"$tmp/many"
psql -X -q "$super" -c "VACUUM (ANALYZE) fleet.audit_log" >/dev/null
measure "http_get_bike_status_many" "$many" one_many direct
rss=$(awk '/VmHWM/ {print $2}' "/proc/$server_pid/status")
calls=$(psql -X -At "$super" -c "SELECT count(*) FROM fleet.audit_log WHERE audit_id > $audit0")

# --- the table, the ratios, RESULTS.md.
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git status --porcelain 2>/dev/null | grep -qv '^??' && echo " (with uncommitted changes)" || true)
get() { awk -v n="$1" -v c="$2" -v f="$3" '$1 == n && $2 == c {print $f}' "$results"; }
{
  echo
  echo "## $(date -u '+%Y-%m-%d %H:%M UTC'), commit $commit$dirty"
  echo
  echo "Command: \`make bench\` (BENCH_SECONDS=$secs BENCH_ROUNDS=$rounds BENCH_THREADS=$threads BENCH_DB_CONNECTIONS=$dbconns); $(nproc) cores shared with the load generator and PostgreSQL (load average over the last 15 minutes as the table was written: $(cut -d' ' -f3 /proc/loadavg)): absolute rates are noisy, the ratios of one run are what counts. JWT validation on (local test key set), row-level security, audit. HTTP ceiling: $ceiling_name."
  echo
  echo "| what | conns | rate /s | p50 ms | p99 ms | server CPU us/req | database CPU us/req | checked |"
  echo "|---|---|---|---|---|---|---|---|"
  while read -r name c rate p50 p99 cpu db valid; do
    [[ $name == audit_rows_per_batch || $name == batch_shape || $name == paired_* ]] && continue
    printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$name" "$c" "$rate" \
      "$(awk -v v="$p50" 'BEGIN { printf "%.2f", v / 1000 }')" \
      "$(awk -v v="$p99" 'BEGIN { if (v > 0) printf "%.2f", v / 1000; else printf "-" }')" \
      "$([[ $cpu == 0 ]] && echo - || echo "$cpu")" "$([[ $db == 0 ]] && echo - || echo "$db")" "$valid"
  done <"$results"
  echo
  echo "Server peak RSS (VmHWM) after all loads: $((rss / 1024)) MiB; $calls audit rows written by the run. pgbench p50 is the average latency (pg_batched_read: of a batch). CPU per request: user + system time (/proc) over the line, divided by the answers checked good (pgbench: the calls); the database's is summed over PostgreSQL's processes (the postmaster, its backends and its own processes, ended ones included)."
  echo
  echo "| ratio (32 connections unless said) | value | target |"
  echo "|---|---|---|"
  for c in $conns_list; do
    echo "| get_bike_status HTTP / plain read (in turns), $c conns | $(ratio "$(get http_get_bike_status "$c" 3)" "$(get pg_plain_read "$c" 3)") | >= 0.45 at 32 |"
    echo "| the same, median of the rounds' ratios (each round's pair a few seconds apart), $c conns | $(get paired_http_get_bike_status "$c" 3) | >= 0.45 at 32 |"
    echo "| get_bike_status stdio / plain read, $c conns | $(ratio "$(get stdio_get_bike_status "$c" 3)" "$(get pg_plain_read "$c" 3)") | |"
    echo "| the server's unit of a batch (one caller, batches of $(get batch_shape "$c" 3) on $(get batch_shape "$c" 4) connections) / plain read, $c conns | $(ratio "$(get pg_batched_read "$c" 3)" "$(get pg_plain_read "$c" 3)") | >= 0.80 at 32 |"
    echo "| report_damaged_bike HTTP / equivalent write, $c conns | $(ratio "$(get http_report_damaged_bike "$c" 3)" "$(get pg_write_txn "$c" 3)") | >= 0.40 at 32 |"
    echo "| tools/list HTTP / ceiling, $c conns | $(ratio "$(get http_tools_list "$c" 3)" "$(get http_ceiling "$c" 3)") | |"
    echo "| tools/list HTTP / server/discover, $c conns | $(ratio "$(get http_tools_list "$c" 3)" "$(get http_server_discover "$c" 3)") | >= 0.70 at 32 |"
    echo "| server/discover HTTP / ceiling, $c conns | $(ratio "$(get http_server_discover "$c" 3)" "$(get http_ceiling "$c" 3)") | >= 0.70 at 32 |"
    [[ -n $pooled_pid ]] && echo "| get_bike_status through PgBouncer (transaction mode) / direct, $c conns | $(ratio "$(get http_get_bike_status_pooled "$c" 3)" "$(get http_get_bike_status "$c" 3)") | |"
    for t in traced:"every call sampled":0.90 traced10:"one trace in ten":0.97; do
      IFS=: read -r line what target <<<"$t"
      echo "| get_bike_status traced, $what / untraced (in turns), $c conns | $(ratio "$(get "http_get_bike_status_$line" "$c" 3)" "$(get http_get_bike_status_untraced "$c" 3)") | >= $target |"
      echo "| the same, median of the rounds' ratios (each round's pair a few seconds apart), $c conns | $(get "paired_http_get_bike_status_$line" "$c" 3) | >= $target |"
      echo "| get_bike_status server CPU per call, traced ($what) / untraced, $c conns | $(ratio "$(get "http_get_bike_status_$line" "$c" 6)" "$(get http_get_bike_status_untraced "$c" 6)") | |"
    done
    echo "| get_bike_status p99 ms, $c conns | $(awk -v v="$(get http_get_bike_status "$c" 5)" 'BEGIN { printf "%.2f", v / 1000 }') | <= 10 at 32 |"
    echo "| get_bike_status calls per batch (audit rows per transaction), $c conns | $(get audit_rows_per_batch "$c" 3) | |"
    echo "| get_bike_status database CPU per call, HTTP / batched SQL, $c conns | $(ratio "$(get http_get_bike_status "$c" 7)" "$(get pg_batched_read "$c" 7)") | |"
  done
  if [[ -s $tmp/many ]]; then
    read -r peak _ < <(sort -n "$tmp/many" | tail -n 1)
    read -r sheds goods < <(awk '{s += $2; g += $3} END {print s + 0, g + 0}' "$tmp/many")
    echo "| $many connections: get_bike_status goodput / at $cmax connections | $(ratio "$(get http_get_bike_status_many "$many" 3)" "$(get http_get_bike_status "$cmax" 3)") | >= 0.90 |"
    echo "| $many connections: answers not 200 over $rounds rounds | 503 + Retry-After: $sheds (of $((goods + sheds))), other answers: $(awk '{n += $4} END {print n + 0}' "$tmp/many") | other 0 |"
    echo "| $many connections: resets and time-outs over $rounds rounds | $(awk '{n += $5} END {print n + 0}' "$tmp/many") | 0 |"
    echo "| $many connections: server RSS, highest sample during the load (MiB) | $(awk -v k="$peak" 'BEGIN { printf "%.1f", k / 1024 }') | < 64 |"
  fi
  if [[ -s $tmp/overload ]]; then
    read -r _ cap ok p99h p99l shed limited resets other unanswered osecs <"$tmp/overload"
    echo "| overload: get_bike_status offered open-loop at 2x the capacity above ($((cap * 2))/s for ${osecs}s): goodput / capacity | $(ratio "$((ok / osecs))" "$cap") | >= 0.90 |"
    echo "| overload: admitted p99 at 2x / p99 at a quarter of capacity ($(awk -v a="$p99h" -v b="$p99l" 'BEGIN { printf "%.1f ms / %.1f ms", a / 1000, b / 1000 }')) | $(ratio "$p99h" "$p99l") | <= 5 |"
    echo "| overload: the calls not served at 2x | 503 + Retry-After: $shed, 429 + Retry-After: $limited, resets: $resets, other: $other, unanswered: $unanswered | resets 0 |"
  fi
  if [[ -s $tmp/overload_fresh ]]; then
    read -r _ cap ok p99h p99l shed limited resets other unanswered osecs probes pbad pp99 <"$tmp/overload_fresh"
    refused=$((shed + limited + resets + other + unanswered))
    echo "| overload, each call on a new connection ($fresh in flight): goodput at 2x / capacity | $(ratio "$((ok / osecs))" "$cap") | >= 0.90 |"
    echo "| overload, new connections: admitted p99 at 2x / p99 at a quarter ($(awk -v a="$p99h" -v b="$p99l" 'BEGIN { printf "%.1f ms / %.1f ms", a / 1000, b / 1000 }')) | $(ratio "$p99h" "$p99l") | <= 5 |"
    echo "| overload, new connections: refusals that are an explicit 503/429 with Retry-After | $(awk -v a="$((shed + limited))" -v n="$refused" 'BEGIN { if (n > 0) printf "%.1f%% (%d of %d; resets %d, other %d, unanswered %d)", 100 * a / n, a, n, '"$resets"', '"$other"', '"$unanswered"'; else printf "none refused" }') | >= 99% |"
    echo "| overload, new connections: GET /healthz p99 meanwhile (not 200 or no answer: $pbad of $probes) | $(awk -v v="$pp99" 'BEGIN { printf "%.0f ms", v / 1000 }') | < 1 s |"
    if [[ -s $tmp/overload_ceiling ]]; then
      read -r _ nok np99h np99l nun <"$tmp/overload_ceiling"
      echo "| overload, new connections, the machine's ceiling (nginx with a fixed answer, the same client and rates): goodput at 2x / capacity | $(ratio "$((nok / osecs))" "$cap") (unanswered $nun) | |"
      echo "| overload, new connections, the machine's ceiling: p99 at 2x / p99 at a quarter ($(awk -v a="$np99h" -v b="$np99l" 'BEGIN { printf "%.1f ms / %.1f ms", a / 1000, b / 1000 }')) | $(ratio "$np99h" "$np99l") | |"
      echo "| overload, new connections: the server's goodput at 2x / the ceiling's | $(ratio "$ok" "$nok") | |"
    fi
  fi
  stall_table
} >"$tmp/table.md"
cat "$tmp/table.md"
if [[ -n ${BENCH_ONLY:-} ]]; then
  log "BENCH_ONLY: a partial table, not appended to bench/RESULTS.md"
else
  results_append "$tmp/table.md"
  log "appended to bench/RESULTS.md"
fi
