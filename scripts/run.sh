#!/usr/bin/env bash
# run.sh: what `make run` executes after the build: scripts/run.sh build/bikaroo-mcp
#
# Without DATABASE_URL: starts a throwaway PostgreSQL cluster in .run/pg, migrates it
# (as fleet_owner), loads the demo data, and serves HTTP as fleet_app. Ctrl-C stops
# the server, then the cluster.
# With DATABASE_URL: migrates only if BIKAROO_MIGRATE_URL is set, then serves.
set -euo pipefail

bin=${1:-build/bikaroo-mcp}
script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
repo_root=$(dirname "$script_dir")

# Resolve the binary relative to the caller's directory, then work from the repo root.
if [[ "$bin" != /* ]]; then
  bin=$PWD/$bin
fi
[[ -x "$bin" ]] || {
  echo "run.sh: $bin not found or not executable (run make first)" >&2
  exit 1
}
cd "$repo_root"

pg_dir=.run/pg
started_pg=0
server_pid=

# shellcheck disable=SC2317  # invoked via trap
cleanup() {
  local status=$?
  trap - INT TERM EXIT
  if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
    echo "run.sh: stopping server (PID $server_pid)" >&2
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  if ((started_pg)); then
    scripts/pgtmp.sh stop "$pg_dir" || true
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [[ -z "${DATABASE_URL:-}" ]]; then
  started_pg=1
  pg_env=$(scripts/pgtmp.sh start "$pg_dir")
  eval "$pg_env"
  app_url=$DATABASE_URL
  owner_url=$BIKAROO_MIGRATE_URL

  echo "run.sh: migrating" >&2
  DATABASE_URL=$owner_url BIKAROO_MIGRATE_URL=$owner_url "$bin" migrate

  demo=migrations/demo/demo-data.sql
  if [[ -f "$demo" ]]; then
    echo "run.sh: loading demo data" >&2
    psql -X "$owner_url" -v ON_ERROR_STOP=1 -q -f "$demo"
  else
    echo "run.sh: $demo not found, skipping demo data" >&2
  fi
  unset BIKAROO_MIGRATE_URL PGTMP_SUPER_URL
  export DATABASE_URL=$app_url
else
  if [[ -n "${BIKAROO_MIGRATE_URL:-}" ]]; then
    echo "run.sh: migrating" >&2
    "$bin" migrate
  fi
fi

port=${BIKAROO_PORT:-8080}
subject=${BIKAROO_LOCAL_SUBJECT:-marie}
client=${BIKAROO_LOCAL_CLIENT:-customer-care-assistant}
url="http://127.0.0.1:$port/mcp"
stop_note=
if ((started_pg)); then stop_note=' and the local PostgreSQL cluster'; fi
cat >&2 <<EOF

  Bikaroo fleet MCP server: $url
  In local mode it acts as subject '$subject' via client '$client'.

  Try it (MCP 2026-07-28):
  curl -s $url -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: get_bike_status' -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_bike_status","arguments":{"bikeId":"VL-2048"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'

  Ctrl-C stops the server$stop_note.

EOF

"$bin" serve &
server_pid=$!
set +e
wait "$server_pid"
rc=$?
set -e
server_pid=
exit "$rc"
