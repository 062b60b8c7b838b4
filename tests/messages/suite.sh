#!/usr/bin/env bash
# tests/messages/suite.sh: what the server says when something is wrong. An unreachable or
# refusing database is named once, with what to check and the password hidden, and repeated at
# most once a minute however fast the retries go; libpq's text reads as one line in text logs
# (no \x0a\x09); JSON access lines carry numbers as JSON numbers. Runs the binary as it is, with
# databases that cannot answer. Prints `ok - ` / `not ok - ` lines.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
# shellcheck source=tests/lib/harness.sh
source tests/lib/harness.sh
suite_init "$@"

# serve_for SECONDS LOG [VAR=value...]: the server with those settings for SECONDS, then stopped.
serve_for() {
  local secs=$1 log=$2
  shift 2
  env BIKAROO_AUTH=local BIKAROO_PORT=0 BIKAROO_METRICS_LISTEN= "$@" "$bin" serve 2>"$log" &
  local pid=$!
  sleep "$secs"
  kill -TERM "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
}

# Nothing listens on port 1; retries every 100 ms: some 40 tries in 4 s.
serve_for 4 "$t/down.log" DATABASE_URL='postgresql://fleet_app:s3cret-pw@127.0.0.1:1/bikaroo' \
  BIKAROO_DB_RETRY_MAX_MS=100
check "an unreachable database: libpq's reason logged once in 4 s of retries every 100 ms ($(grep -c 'database connection failed' "$t/down.log") lines)" \
  test "$(grep -c 'database connection failed' "$t/down.log")" = 1
check "... and the server's own line once, naming DATABASE_URL (password hidden) and what to check" \
  test "$(grep -c 'database: cannot connect with DATABASE_URL=postgresql://fleet_app:\*\*\*@127.0.0.1:1/bikaroo .*Check that PostgreSQL runs at that host and port.*pg_hba.conf' "$t/down.log")" = 1
check "... no \"still unavailable\" line within the first minute" \
  test "$(grep -c 'still unavailable' "$t/down.log")" = 0
check "... the password appears nowhere in the log" bash -c "! grep -q 's3cret-pw' '$t/down.log'"
check "libpq's message reads as one line of text (no \\x0a, no \\x09): $(grep -m1 'connection failed' "$t/down.log" | cut -c 25-160)" \
  bash -c "grep -q 'Connection refused Is the server running on that host' '$t/down.log' && ! grep -q 'x0a\\|x09' '$t/down.log'"
check "... and the log holds no raw control byte" bash -c "! LC_ALL=C grep -q '[[:cntrl:]]' <(tr -d '\\n' <'$t/down.log')"

# A keyword conninfo whose password is wrong for a database that is not there: named, hidden.
serve_for 2 "$t/kw.log" DATABASE_URL='host=127.0.0.1 port=1 user=fleet_app password=kw-secret dbname=bikaroo'
check "a keyword DATABASE_URL is named with its password hidden (password=***)" \
  bash -c "grep -q 'DATABASE_URL=host=127.0.0.1 port=1 user=fleet_app password=\*\*\* dbname=bikaroo' '$t/kw.log' && ! grep -q kw-secret '$t/kw.log'"

# A permission refusal (a viewer reports damage, with the scope: the role refuses) is
# outcome=denied in the access line, not failed.
if [[ -n ${DATABASE_URL:-} ]]; then
  rm -f "$t/port"
  env BIKAROO_AUTH=local BIKAROO_LOCAL_SUBJECT=dev BIKAROO_LOCAL_CLIENT=customer-care-assistant \
    BIKAROO_LOCAL_SCOPES='fleet:read fleet:report' BIKAROO_PORT=0 BIKAROO_METRICS_LISTEN= \
    BIKAROO_READY_FILE="$t/port" "$bin" serve 2>"$t/denied.log" &
  pid=$!
  for _ in $(seq 1 100); do [[ -s $t/port ]] && break; sleep 0.1; done
  answer=$(curl -s "http://127.0.0.1:$(cat "$t/port")/mcp" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28' \
    -H 'Mcp-Method: tools/call' -H 'Mcp-Name: report_damaged_bike' \
    -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"report_damaged_bike","arguments":{"bikeId":"VL-2048","issue":"flat_tire"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}')
  kill -TERM "$pid"
  wait "$pid"
  check "a permission refusal (a viewer reports damage) is outcome=denied in the access line ($(grep -o 'outcome=[a-z_]*' "$t/denied.log" | head -n 1))" \
    test -n "$(grep '"isError":true' <<<"$answer")" -a -n "$(grep 'access .*name=report_damaged_bike .*outcome=denied status=200' "$t/denied.log")"
fi

# A report refused by rights names the one condition that failed, not the list of them all.
if [[ -n ${DATABASE_URL:-} ]]; then
  while IFS='|' read -r subject client want; do
    rm -f "$t/port"
    env BIKAROO_AUTH=local BIKAROO_LOCAL_SUBJECT="$subject" BIKAROO_LOCAL_CLIENT="$client" \
      BIKAROO_LOCAL_SCOPES='fleet:read fleet:report' BIKAROO_PORT=0 BIKAROO_METRICS_LISTEN= \
      BIKAROO_READY_FILE="$t/port" "$bin" serve 2>/dev/null &
    pid=$!
    for _ in $(seq 1 100); do [[ -s $t/port ]] && break; sleep 0.1; done
    text=$(curl -s "http://127.0.0.1:$(cat "$t/port")/mcp" -H 'Content-Type: application/json' \
      -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28' \
      -H 'Mcp-Method: tools/call' -H 'Mcp-Name: report_damaged_bike' \
      -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"report_damaged_bike","arguments":{"bikeId":"VL-2048","issue":"flat_tire"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}' |
      grep -o '"text":"[^"]*"')
    kill -TERM "$pid"
    wait "$pid"
    check "$subject via $client may not report: the refusal names that condition only ($text)" \
      test -n "$(grep -F "not permitted to report damage: $want. Nothing" <<<"$text")"
  done <<'CASES'
dev|customer-care-assistant|your role is viewer, and reporting damage is open to these roles only: customer_care, fleet_operator
marie|developer-ide|this application is not authorised for reporting damage
fleet-sync|customer-care-assistant|you are registered as a machine, and reporting damage is open to people acting in person only
marie|no-such-app|you or this application are not registered, or no longer active
CASES
fi

# The JSON form: the access line's status and duration are JSON numbers.
if [[ -n ${DATABASE_URL:-} ]]; then
  rm -f "$t/port"
  env BIKAROO_AUTH=local BIKAROO_PORT=0 BIKAROO_METRICS_LISTEN= BIKAROO_LOG_FORMAT=json \
    BIKAROO_READY_FILE="$t/port" "$bin" serve 2>"$t/json.log" &
  pid=$!
  for _ in $(seq 1 100); do [[ -s $t/port ]] && break; sleep 0.1; done
  curl -s -o /dev/null "http://127.0.0.1:$(cat "$t/port")/mcp" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28' \
    -H 'Mcp-Method: tools/call' -H 'Mcp-Name: get_bike_status' \
    -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_bike_status","arguments":{"bikeId":"VL-2048"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
  kill -TERM "$pid"
  wait "$pid"
  check "JSON access lines: status and ms are JSON numbers (\"status\":200, not \"200\")" \
    python3 -c '
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
acc = [l for l in lines if l.get("event") == "access"]
assert acc, "no access line"
assert all(isinstance(l.get("status"), int) and isinstance(l.get("ms"), (int, float)) for l in acc if "status" in l), acc
assert any(l.get("status") == 200 for l in acc), acc' "$t/json.log"
fi
suite_exit
