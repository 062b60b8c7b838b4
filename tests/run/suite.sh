#!/usr/bin/env bash
# tests/run/suite.sh: `make run` as a good neighbour. A second `make run` in the same checkout
# says where the first serves (URL, PID) and leaves it serving (its cluster too); a metrics port
# in use never stops it (the next free one, said in the banner); BIKAROO_METRICS_LISTEN= serves
# no metrics; the banner's database URL works; a port in use is named with its owner and the fix;
# `make reset-demo` is refused while one serves and restores the demo data after, also from a root
# shell whose PATH lacks /usr/sbin; BIKAROO_METRICS_LISTEN=127.0.0.1:0 is shown as the port bound;
# a port in use is named at once (a bounded number of programs run); a password in
# DATABASE_URL is printed by nothing (make run, host-config, admin, serve) and written only to a
# file of the user's own (0600) that the host files name. Each run has a cluster of its own
# (RUN_PG_DIR) in a temporary folder. Prints `ok - ` / `not ok - ` lines.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
# shellcheck source=tests/lib/harness.sh
source tests/lib/harness.sh
suite_init "$@"
chmod 755 "$t"
pids=() # process groups (make run's, setsid) or plain processes, stopped at the end
# shellcheck disable=SC2317  # invoked at the end (suite_on_exit)
stop_all() {
  for p in "${pids[@]}"; do
    kill -TERM -- "-$p" 2>/dev/null || kill -TERM "$p" 2>/dev/null
    for _ in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  done
  for d in "$t"/*/pg; do [[ -d $d ]] && scripts/pgtmp.sh destroy "$d" >/dev/null 2>&1; done
}
suite_on_exit stop_all
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

# --- BIKAROO_METRICS_LISTEN=127.0.0.1:0: the banner names the port the server bound.
if start anyport BIKAROO_METRICS_LISTEN=127.0.0.1:0; then
  mline=$(grep '^  Health:' "$t/anyport.log")
  mport=$(sed -n 's|.*metrics: http://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' <<<"$mline")
  check "BIKAROO_METRICS_LISTEN=127.0.0.1:0: the banner names the bound port, not 0 ($mline)" \
    test -n "$mport" -a "$mport" != 0 -a "$mport" != "$PORT"
  [[ -n $mport && $mport != 0 ]] && check "... and GET /metrics answers there" \
    grep -q '^bikaroo_build_info' <(curl -s -m 5 "http://127.0.0.1:$mport/metrics")
  kill -TERM -- "-$PID" 2>/dev/null
  wait "$PID" 2>/dev/null
else
  check "make run with BIKAROO_METRICS_LISTEN=127.0.0.1:0 serves" false
fi

# --- the port in use: its owner and the fix, before anything is started, at once: the owner was
# looked up with one readlink process per open file of the machine (half a minute on a busy one),
# so the programs run are counted (strace), not the time, which the machine's load decides.
if listener 0 "$t/lport"; then
  busy=$(cat "$t/lport")
  t0=$(date +%s%N)
  out=$(env -u DATABASE_URL RUN_PG_DIR="$t/taken/pg" BIKAROO_PORT="$busy" timeout 120 \
    strace -f -qq -e trace=execve -o "$t/taken.trace" scripts/run.sh "$B/bikaroo-mcp" 2>&1)
  ms=$((($(date +%s%N) - t0) / 1000000))
  execs=$(grep -c 'execve(' "$t/taken.trace")
  check "a port in use is named with the process holding it and the fix (BIKAROO_PORT=...)" \
    test -n "$(grep "port $busy on 127.0.0.1 is already in use by PID $LPID (" <<<"$out")" \
    -a -n "$(grep "BIKAROO_PORT=$((busy + 1)) make run" <<<"$out")"
  check "... running a bounded number of programs whatever is open on the machine ($execs, $ms ms under strace, $(find /proc/[0-9]*/fd -maxdepth 1 2>/dev/null | wc -l) descriptors open)" \
    test "$execs" -le 60
  check "... before any cluster was started" test ! -e "$t/taken/pg/data" -a ! -e "$t/taken/pg/real"
fi
# --- make reset-demo from a root shell whose PATH lacks the sbin folders (su without -): it finds
# runuser where it is (or names what is missing), and resets.
if [[ $(id -u) == 0 ]]; then
  # -o: the binary under test as it is (a sanitizer build's flags are not make's defaults).
  out=$(env -u DATABASE_URL PATH=/usr/local/bin:/usr/bin:/bin RUN_PG_DIR="$t/nosbin/pg" timeout 300 \
    make --no-print-directory -o "$B/bikaroo-mcp" B="$B" reset-demo 2>&1)
  rc=$?
  check "make reset-demo as root with PATH=/usr/local/bin:/usr/bin:/bin resets the demo data (exit $rc)" \
    test "$rc" = 0 -a -n "$(grep 'the demo data is as new' <<<"$out")" -a -z "$(grep 'command not found' <<<"$out")"
  [[ $rc == 0 ]] || printf '# %s\n' "${out//$'\n'/$'\n'# }" | tail -n 8
  scripts/pgtmp.sh destroy "$t/nosbin/pg" >/dev/null 2>&1
else
  echo "skip - make reset-demo with a PATH lacking /usr/sbin: not root here (runuser is for root only)"
fi

# --- secrets: a password given in DATABASE_URL and BIKAROO_MIGRATE_URL (the test database's
# roles: its trust authentication ignores them, so every step still works) is printed nowhere,
# written only where it must be and readable by its owner alone; the files that name it work.
pw=db-pw-$RANDOM$RANDOM-S3cret owner_pw=owner-pw-$RANDOM$RANDOM-S3cret
pw_url=${DATABASE_URL/fleet_app@/fleet_app:$pw@}
owner_pw_url=${BIKAROO_MIGRATE_URL/fleet_owner@/fleet_owner:$owner_pw@}
mkdir -p "$t/secret"
setsid env -u BIKAROO_METRICS_LISTEN DATABASE_URL="$pw_url" BIKAROO_MIGRATE_URL="$owner_pw_url" RUN_PG_DIR="$t/secret/pg" \
  BIKAROO_PORT=0 BIKAROO_LOG_LEVEL=debug scripts/run.sh "$B/bikaroo-mcp" >"$t/secret.log" 2>&1 &
PID=$!
pids+=("$PID")
for _ in $(seq 1 600); do grep -q 'Ctrl-C stops' "$t/secret.log" && break; kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
state=$t/secret
if grep -q 'Ctrl-C stops' "$t/secret.log"; then
  check "make run with a password in DATABASE_URL: its banner shows it hidden ($(grep -o 'Database: postgresql://fleet_app:[^@]*@' "$t/secret.log"))" \
    grep -q 'Database: postgresql://fleet_app:\*\*\*@' "$t/secret.log"
  check "... and nothing make run printed (banner, migrate, the server's debug log) holds either password" \
    test -z "$(grep -e "$pw" -e "$owner_pw" "$t/secret.log")"
  holders=$(grep -rl -e "$pw" -e "$owner_pw" "$state" 2>/dev/null)
  check "... it is written in one file only, the one the host files name ($holders)" \
    test "$holders" = "$state/hosts/secrets/database-url"
  modes=$(for f in $holders "$state/serving" "$state"/hosts/*.json "$state/hosts/links.txt"; do stat -c '%a %n' "$f"; done)
  check "... that file, the serving note and the host files are the user's alone (0600): $(tr '\n' ' ' <<<"${modes//$state\//}")" \
    test -z "$(grep -v '^600 ' <<<"$modes")" -a "$(stat -c %a "$state/hosts" "$state/hosts/secrets" | sort -u)" = 700
  check "... the stdio host files name it (DATABASE_URL_FILE), not the password" \
    grep -q "\"DATABASE_URL_FILE\": \"$state/hosts/secrets/database-url\"" "$state/hosts/vscode.json"
  # The VS Code stdio entry launched with exactly its command, args and env: it serves.
  answer=$(python3 - "$state/hosts/vscode.json" <<'PY'
import json, subprocess, sys
e = json.load(open(sys.argv[1]))['servers']['bikaroo-fleet']
req = {'jsonrpc': '2.0', 'id': 1, 'method': 'tools/call', 'params': {'name': 'get_bike_status',
       'arguments': {'bikeId': 'VL-2048'}, '_meta': {'io.modelcontextprotocol/protocolVersion': '2026-07-28',
       'io.modelcontextprotocol/clientCapabilities': {}}}}
r = subprocess.run([e['command'], *e['args']], env=e['env'], input=json.dumps(req) + '\n', capture_output=True,
                   text=True, timeout=30, cwd='/')
try:
    sc = json.loads(r.stdout.splitlines()[0])['result']['structuredContent']
    print(f"{sc['bikeId']} {sc['status']}")
except Exception:
    print(r.stdout.strip()[:300] or r.stderr[-300:])
PY
)
  check "... and launched as written it answers get_bike_status ($answer)" grep -q '^VL-2048 ' <<<"$answer"
else
  sed 's/^/# /' "$t/secret.log"
  check "make run with a password in DATABASE_URL serves" false
fi
kill -TERM -- "-$PID" 2>/dev/null
wait "$PID" 2>/dev/null
# host-config and admin, given passwords, print none of them.
out=$(DATABASE_URL=$pw_url "$B/bikaroo-mcp" host-config cursor 2>&1)
rc=$?
check "host-config with a password in DATABASE_URL refuses to print it (exit $rc), saying to use DATABASE_URL_FILE" \
  test "$rc" = 2 -a -z "$(grep -e "$pw" <<<"$out")" -a -n "$(grep DATABASE_URL_FILE <<<"$out")"
printf '%s' "$pw_url" >"$t/db-url"
out=$(env -u DATABASE_URL DATABASE_URL_FILE="$t/db-url" "$B/bikaroo-mcp" host-config claude-desktop 2>&1)
check "host-config with DATABASE_URL_FILE names the file, not the password" \
  test -z "$(grep -e "$pw" <<<"$out")" -a -n "$(grep "\"DATABASE_URL_FILE\": \"$t/db-url\"" <<<"$out")"
out=$(env -u BIKAROO_MIGRATE_URL DATABASE_URL="$owner_pw_url" "$B/bikaroo-mcp" admin region XX-PW 'No region' 2>&1;
  BIKAROO_SUPER_URL="postgresql://postgres:$owner_pw@/postgres?host=$t/nowhere" BIKAROO_APP_PASSWORD=$pw \
    "$B/bikaroo-mcp" admin create-roles 2>&1)
check "admin, refused or unable to connect, prints none of the passwords it was given" \
  test -z "$(grep -e "$pw" -e "$owner_pw" <<<"$out")" -a -n "$out"
"$B/bikaroo-mcp" serve --database-url="postgresql://fleet_app:$pw@/bikaroo?host=$t/nowhere" --port=0 \
  --ready-file="$t/down.port" --metrics-listen= 2>"$t/down.log" &
down=$!
for _ in $(seq 1 100); do [[ -s $t/down.port ]] && break; sleep 0.1; done
kill -TERM "$down" 2>/dev/null
wait "$down" 2>/dev/null
check "serve, its database unreachable, names DATABASE_URL with the password hidden" \
  test -z "$(grep -e "$pw" "$t/down.log")" -a -n "$(grep 'DATABASE_URL=postgresql://fleet_app:\*\*\*@' "$t/down.log")"
suite_exit
