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

pg_dir=${RUN_PG_DIR:-.run/pg} # tests/ops runs this script on a cluster of its own
started_pg=0
server_pid=
as_pid=

# shellcheck disable=SC2317  # invoked via trap
cleanup() {
  local status=$?
  trap - INT TERM EXIT
  if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
    echo "run.sh: stopping server (PID $server_pid)" >&2
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  if [[ -n "$as_pid" ]]; then
    if kill -0 "$as_pid" 2>/dev/null; then
      kill -TERM "$as_pid" 2>/dev/null || true
      wait "$as_pid" 2>/dev/null || true
    fi
    rm -f .run/as.port .run/as.resource
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
  # The throwaway cluster's URLs pin every connection parameter; what no URL overrides of a
  # user's PG* variables (PGSERVICE...) is cleared for this script and the server.
  # shellcheck source=scripts/pgtmp.sh
  source scripts/pgtmp.sh --functions
  pgtmp_scrub_env
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

# Authorization. Plain `make run` serves without it (BIKAROO_AUTH=local: one configured
# identity, loopback only). `BIKAROO_AUTH=jwt make run` (or introspection) with no issuer
# configured also starts the test authorization server of tests/auth on 127.0.0.1, so that
# scripts/dev-token.sh can mint real tokens for the demo users.
export BIKAROO_AUTH=${BIKAROO_AUTH:-local}
if [[ "$BIKAROO_AUTH" != local && -z "${BIKAROO_AUTH_ISSUER:-}" ]]; then
  tests/e2e/install.sh
  mkdir -p .run
  rm -f .run/as.port
  format=jwt
  if [[ "$BIKAROO_AUTH" == introspection ]]; then format=opaque; fi
  node tests/auth/as.mjs --ready .run/as.port --resource "$url" --format "$format" 2>.run/as.log &
  as_pid=$!
  for _ in $(seq 1 100); do [[ -s .run/as.port ]] && break; sleep 0.1; done
  [[ -s .run/as.port ]] || {
    echo "run.sh: the test authorization server did not start (see .run/as.log)" >&2
    exit 1
  }
  printf '%s\n' "$url" >.run/as.resource
  BIKAROO_AUTH_ISSUER="http://127.0.0.1:$(cat .run/as.port)"
  export BIKAROO_AUTH_ISSUER BIKAROO_RESOURCE_URI="$url" BIKAROO_AUTH_INSECURE_LOOPBACK=1
  if [[ "$BIKAROO_AUTH" == introspection ]]; then
    export BIKAROO_AUTH_CLIENT_ID=bikaroo-mcp BIKAROO_AUTH_CLIENT_SECRET=bikaroo-mcp-secret
  fi
fi

stop_note=
if ((started_pg)); then stop_note=' and the local PostgreSQL cluster'; fi
metrics=${BIKAROO_METRICS_LISTEN-127.0.0.1:9464}
watch="Health: http://127.0.0.1:$port/healthz and /readyz${metrics:+; metrics: http://$metrics/metrics}"
call="curl -s $url -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: get_bike_status'"
body='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_bike_status","arguments":{"bikeId":"VL-2048"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
if [[ "$BIKAROO_AUTH" == local ]]; then
  cat >&2 <<MSG

  Bikaroo fleet MCP server: $url
  In local mode (no authorization) it acts as subject '$subject' via client '$client'.

  Try it (MCP 2026-07-28):
  $call -d '$body'

  With real bearer tokens instead: BIKAROO_AUTH=jwt make run (starts a test authorization server
  too, then scripts/dev-token.sh mints tokens for the demo users).

  $watch
  Ctrl-C stops the server$stop_note.

MSG
else
  cat >&2 <<MSG

  Bikaroo fleet MCP server: $url (BIKAROO_AUTH=$BIKAROO_AUTH: every call needs a bearer token)
  Issuer: $BIKAROO_AUTH_ISSUER
  Metadata: http://127.0.0.1:$port/.well-known/oauth-protected-resource/mcp

  Mint a token for a demo user (a real authorization code + PKCE flow), in another terminal:
  TOKEN=\$(scripts/dev-token.sh marie customer-care-assistant 'fleet:read fleet:report')
  $call -H "Authorization: Bearer \$TOKEN" -d '$body'

  Other users: paul (FR-LYO), olivia (operator, FR-PAR and FR-LYO), dev (viewer, developer-ide);
  a machine token: scripts/dev-token.sh fleet-sync fleet-sync fleet:read

  $watch
  Ctrl-C stops the server, the authorization server$stop_note.

MSG
fi

"$bin" serve &
server_pid=$!
set +e
wait "$server_pid"
rc=$?
set -e
server_pid=
exit "$rc"
