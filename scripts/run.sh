#!/usr/bin/env bash
# run.sh: what `make run` executes after the build: scripts/run.sh build/bikaroo-mcp
#
# Without DATABASE_URL: starts a throwaway PostgreSQL cluster in .run/pg, migrates it
# (as fleet_owner), loads the demo data, and serves HTTP as fleet_app. Ctrl-C stops
# the server, then the cluster.
# With DATABASE_URL: migrates only if BIKAROO_MIGRATE_URL is set, then serves.
#
# One `make run` per checkout: while one serves (it holds .run/run.lock), another says where it
# serves (URL, PID) and leaves it alone. Other modes, which never start a server:
#   scripts/run.sh --serving      exit 0 after saying so when a `make run` serves here, else 1
#   scripts/run.sh --reset-demo   the throwaway database anew: migrated, the demo data loaded
#                                 (refused while a `make run` serves from it)
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
repo_root=$(dirname "$script_dir")

mode=serve
case "${1:-}" in
  --serving) mode=serving ;;
  --reset-demo) mode=reset ;;
esac
bin=${1:-build/bikaroo-mcp}
[[ $mode == serve ]] || bin=${2:-build/bikaroo-mcp}

# Resolve the binary relative to the caller's directory, then work from the repo root.
if [[ "$bin" != /* ]]; then
  bin=$PWD/$bin
fi
cd "$repo_root"

pg_dir=${RUN_PG_DIR:-.run/pg} # tests run this script on clusters of their own
state=$(dirname "$pg_dir")    # run.lock, serving, hosts/: beside the cluster's folder
mkdir -p "$state"
started_pg=0
server_pid=
as_pid=

say() { printf 'run.sh: %s\n' "$*" >&2; }

# hide_password URL: URL with any password shown as *** (postgresql://user:SECRET@... up to the
# last @ before the query, and password=SECRET in keyword or query form, quoted or not): what a
# banner or a file may show.
hide_password() {
  sed -E "s#^([a-z]+://[^:/@?]*):[^?]*@#\\1:***@#; s#(^|[ &?])password *= *('([^'\\\\]|\\\\.)*'|[^ &]*)#\\1password=***#g" <<<"$1"
}

# The lock that one serving `make run` holds for its life (descriptor 8, closed for every child
# that may outlive this script: PostgreSQL, the authorization server). The server keeps it: while
# it serves, even orphaned, this checkout has a `make run` serving.
exec 8>"$state/run.lock"
if ! flock -n 8; then
  if [[ -s $state/serving ]]; then
    # shellcheck disable=SC1091  # written below: url=... pid=... db=...
    source "$state/serving"
    say "a make run is already serving in this checkout: ${url:-?} (server PID ${pid:-?}); it was left as it is."
    say "Stop it with Ctrl-C in its terminal (or: kill ${pid:-PID}), or use it: ${url:-}"
  else
    say "a make run in this checkout is starting (it holds $state/run.lock); it was left as it is."
  fi
  [[ $mode == reset ]] && {
    say "reset-demo replaces the database that server uses: stop it first, then run make reset-demo again."
    exit 1
  }
  exit 0
fi
if [[ $mode == serving ]]; then
  exit 1
fi

[[ -x "$bin" ]] || {
  say "$bin not found or not executable (run make first)"
  exit 1
}

# shellcheck disable=SC2317  # invoked via trap
cleanup() {
  local status=$?
  # A second INT or TERM must not cut the clean-up short (make passes its own SIGTERM on to its
  # children, after the one the whole process group got): the cluster is always stopped.
  trap '' INT TERM
  trap - EXIT
  if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
    say "stopping server (PID $server_pid)"
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -f "$state/serving"
  if [[ -n "$as_pid" ]]; then
    if kill -0 "$as_pid" 2>/dev/null; then
      kill -TERM "$as_pid" 2>/dev/null || true
      wait "$as_pid" 2>/dev/null || true
    fi
    rm -f "$state/as.port" "$state/as.resource"
  fi
  if ((started_pg)); then
    scripts/pgtmp.sh stop "$pg_dir" 8>&- || true
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# listen_inode PORT: the socket inode of a listener on 127.0.0.1:PORT (or every address), or none.
listen_inode() {
  awk -v p=":$(printf '%04X' "$1")" '$4 == "0A" && substr($2, length($2) - 4) == p { print $10; exit }' \
    /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

# port_owner PORT: who listens on 127.0.0.1:PORT (or on every address), as "PID (command, in
# DIR)" from /proc, empty when it cannot be told (another user's process, no procfs). One find
# reads every descriptor's link: a readlink process per descriptor took half a minute on a busy
# machine.
port_owner() {
  local inode fd p
  inode=$(listen_inode "$1")
  [[ -n "$inode" ]] || return 0
  fd=$(timeout 5 find /proc/[0-9]*/fd -maxdepth 1 -lname "socket:\[$inode\]" -print -quit 2>/dev/null)
  [[ -n "$fd" ]] || return 0
  p=${fd#/proc/}
  p=${p%%/*}
  printf '%s (%s, in %s)' "$p" "$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c 1-80 | sed 's/ $//')" \
    "$(readlink "/proc/$p/cwd" 2>/dev/null || echo '?')"
}

# bound_ports PID: the TCP ports PID listens on, one a line, from its own descriptors.
bound_ports() {
  local inodes
  inodes=$(find "/proc/$1/fd" -maxdepth 1 -lname 'socket:*' -printf '%l\n' 2>/dev/null | tr -dc '0-9\n')
  [[ -n "$inodes" ]] || return 0
  awk -v want="$inodes" 'BEGIN { n = split(want, w, "\n"); for (i = 1; i <= n; i++) mine[w[i]] = 1 }
    $4 == "0A" && ($10 in mine) { print substr($2, index($2, ":") + 1) }' /proc/net/tcp /proc/net/tcp6 2>/dev/null |
    while read -r hex; do printf '%d\n' "0x$hex"; done | sort -un
}

# in_use PORT: something accepts connections on 127.0.0.1:PORT.
in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# The throwaway cluster: started (the caller's PG* variables cleared, every URL pinning every
# connection parameter), migrated as the owner; sets app_url and owner_url.
local_cluster() {
  # shellcheck source=scripts/pgtmp.sh
  source scripts/pgtmp.sh --functions
  pgtmp_scrub_env
  started_pg=1
  local pg_env
  say "starting the throwaway PostgreSQL cluster in $pg_dir"
  pg_env=$(scripts/pgtmp.sh start "$pg_dir" 8>&-)
  eval "$pg_env"
  app_url=$DATABASE_URL
  owner_url=$BIKAROO_MIGRATE_URL
  if [[ $mode == reset ]]; then
    say "dropping the database (the demo's state with it)"
    scripts/pgtmp.sh dropdb "$pg_dir" bikaroo
    scripts/pgtmp.sh createdb "$pg_dir" bikaroo
  fi
  say "migrating"
  DATABASE_URL=$owner_url BIKAROO_MIGRATE_URL=$owner_url BIKAROO_LOG_LEVEL=warn "$bin" migrate
  local demo=migrations/demo/demo-data.sql
  if [[ $mode == reset ]]; then
    say "loading the demo data"
  else
    say "loading the demo data (what the demo changed stays; make reset-demo starts it anew)"
  fi
  psql -X "$owner_url" -v ON_ERROR_STOP=1 -q -f "$demo"
  unset BIKAROO_MIGRATE_URL PGTMP_SUPER_URL
}

if [[ $mode == reset ]]; then
  if [[ -n "${DATABASE_URL:-}" ]]; then
    say "reset-demo resets the throwaway cluster of make run only, not DATABASE_URL's database"
    exit 2
  fi
  local_cluster
  say "the demo data is as new in $pg_dir"
  exit 0
fi

port=${BIKAROO_PORT:-8080}
if [[ $port != 0 ]] && in_use "$port"; then
  owner=$(port_owner "$port")
  say "port $port on 127.0.0.1 is already in use${owner:+ by PID $owner}."
  say "Likely another make run (another checkout) or another bikaroo-mcp serve. Stop it, or serve on another port: BIKAROO_PORT=$((port + 1)) make run"
  exit 1
fi

if [[ -z "${DATABASE_URL:-}" ]]; then
  local_cluster
  export DATABASE_URL=$app_url
else
  if [[ -n "${BIKAROO_MIGRATE_URL:-}" ]]; then
    say "migrating"
    "$bin" migrate
  fi
fi

# Metrics: BIKAROO_METRICS_LISTEN as set (empty: none); unset, the first free port from 9464 on
# 127.0.0.1 (a neighbour on 9464 never stops make run), none when ten are taken.
metrics_note=
if [[ -z "${BIKAROO_METRICS_LISTEN+set}" ]]; then
  BIKAROO_METRICS_LISTEN=
  for p in $(seq 9464 9473); do
    if ! in_use "$p"; then
      BIKAROO_METRICS_LISTEN=127.0.0.1:$p
      break
    fi
  done
  if [[ $BIKAROO_METRICS_LISTEN != 127.0.0.1:9464 ]]; then
    metrics_note=" (9464 is in use${BIKAROO_METRICS_LISTEN:+; took the next free port})"
  fi
fi
export BIKAROO_METRICS_LISTEN

subject=${BIKAROO_LOCAL_SUBJECT:-marie}
client=${BIKAROO_LOCAL_CLIENT:-customer-care-assistant}
url_port=$port

# Authorization. Plain `make run` serves without it (BIKAROO_AUTH=local: one configured
# identity, loopback only). `BIKAROO_AUTH=jwt make run` (or introspection) with no issuer
# configured also starts the demo identity provider of tests/auth on 127.0.0.1, so that
# scripts/dev-token.sh can mint real tokens for the demo users. Its packages (tests/auth's own
# small set, not the test lab) are installed on first use.
export BIKAROO_AUTH=${BIKAROO_AUTH:-local}
if [[ "$BIKAROO_AUTH" != local && -z "${BIKAROO_AUTH_ISSUER:-}" ]]; then
  if [[ $port == 0 ]]; then
    say "BIKAROO_AUTH=$BIKAROO_AUTH with the demo identity provider needs a fixed BIKAROO_PORT (the tokens' audience names it)"
    exit 2
  fi
  scripts/deps.sh idp 8>&-
  tests/auth/install.sh 8>&-
  url="http://127.0.0.1:$port/mcp"
  rm -f "$state/as.port"
  format=jwt
  if [[ "$BIKAROO_AUTH" == introspection ]]; then format=opaque; fi
  say "starting the demo identity provider (log: $state/as.log)"
  node tests/auth/as.mjs --ready "$state/as.port" --resource "$url" --format "$format" 2>"$state/as.log" 8>&- &
  as_pid=$!
  for _ in $(seq 1 600); do [[ -s $state/as.port ]] && break; kill -0 "$as_pid" 2>/dev/null || break; sleep 0.1; done
  [[ -s $state/as.port ]] || {
    say "the demo identity provider did not start (see $state/as.log)"
    exit 1
  }
  printf '%s\n' "$url" >"$state/as.resource"
  BIKAROO_AUTH_ISSUER="http://127.0.0.1:$(cat "$state/as.port")"
  export BIKAROO_AUTH_ISSUER BIKAROO_RESOURCE_URI="$url" BIKAROO_AUTH_INSECURE_LOOPBACK=1
  if [[ "$BIKAROO_AUTH" == introspection ]]; then
    export BIKAROO_AUTH_CLIENT_ID=bikaroo-mcp BIKAROO_AUTH_CLIENT_SECRET=bikaroo-mcp-secret
  fi
fi

# The server, then the banner once it serves (its port known: BIKAROO_PORT=0 picks one).
ready=${BIKAROO_READY_FILE:-$state/serve.port}
rm -f "$ready"
BIKAROO_READY_FILE=$ready "$bin" serve &
server_pid=$!
for _ in $(seq 1 600); do [[ -s $ready ]] && break; kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
if [[ ! -s $ready ]]; then
  set +e
  wait "$server_pid"
  rc=$?
  set -e
  server_pid=
  say "the server did not start (exit $rc): see its messages above"
  exit "$rc"
fi
url_port=$(cat "$ready")
url="http://127.0.0.1:$url_port/mcp"
# What this run writes from now on (the serving note, the host files, the secrets they name) is
# the user's only: it may name or hold a password.
umask 077
printf 'url=%q\npid=%q\ndb=%q\n' "$url" "$server_pid" "$(hide_password "$DATABASE_URL")" >"$state/serving"

# The host configurations of this build and this database (bikaroo-mcp host-config): each works
# as written while this make run serves (a stdio one with a token pasted in, unless in local
# mode). host-config prints no secret: a secret setting is handed to it as a file of its own
# (NAME_FILE, 0600 in the secrets/ folder beside them), which the files then name.
hosts=$state/hosts
rm -rf "$hosts"
mkdir -p "$hosts/secrets"
secret_env=()
if [[ $(hide_password "$DATABASE_URL") != "$DATABASE_URL" ]]; then
  printf '%s' "$DATABASE_URL" >"$hosts/secrets/database-url"
  secret_env+=(-u DATABASE_URL "DATABASE_URL_FILE=$hosts/secrets/database-url")
fi
if [[ -n ${BIKAROO_AUTH_CLIENT_SECRET:-} ]]; then
  printf '%s' "$BIKAROO_AUTH_CLIENT_SECRET" >"$hosts/secrets/auth-client-secret"
  secret_env+=(-u BIKAROO_AUTH_CLIENT_SECRET "BIKAROO_AUTH_CLIENT_SECRET_FILE=$hosts/secrets/auth-client-secret")
fi
for h in vscode-http cursor-http vscode cursor claude-desktop; do
  env "${secret_env[@]}" BIKAROO_PORT="$url_port" "$bin" host-config "$h" >"$hosts/$h.json"
  if [[ $h != claude-desktop ]]; then
    printf '%s (%s):\n%s\n\n' "$h" "$(sed -n 's/^ *"command": "\(.*\)",$/stdio, \1/p; s/^ *"url": "\(.*\)"$/http, \1/p' "$hosts/$h.json")" \
      "$(env "${secret_env[@]}" BIKAROO_PORT="$url_port" "$bin" host-config "$h" --link)" >>"$hosts/links.txt"
  fi
done

stop_note=
if ((started_pg)); then stop_note=' and the local PostgreSQL cluster'; fi
metrics_at="none (BIKAROO_METRICS_LISTEN is empty)"
if [[ -n $BIKAROO_METRICS_LISTEN ]]; then
  metrics_listen=$BIKAROO_METRICS_LISTEN
  if [[ $metrics_listen == *:0 ]]; then
    # Port 0: the one the server bound, the one of its listeners that is not the MCP port.
    metrics_port=$(bound_ports "$server_pid" | grep -vx "$url_port" | head -n 1)
    metrics_listen=${metrics_listen%:0}:${metrics_port:-0}
  fi
  metrics_at="http://$metrics_listen/metrics"
fi
watch="Health: http://127.0.0.1:$url_port/healthz and /readyz; metrics: $metrics_at$metrics_note"
db_line="Database: $(hide_password "$DATABASE_URL")"
if ((started_pg)); then
  db_line="$db_line
  (psql: psql '$owner_url' as the schema owner; make reset-demo restores the demo data)"
fi
call="curl -s $url -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: get_bike_status'"
body='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_bike_status","arguments":{"bikeId":"VL-2048"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
if [[ "$BIKAROO_AUTH" == local ]]; then
  cat >&2 <<MSG

  Bikaroo fleet MCP server: $url (server PID $server_pid)
  In local mode (no authorization) it acts as subject '$subject' via client '$client'.
  $db_line

  Try it (MCP 2026-07-28):
  $call -d '$body'

  Connect a host. VS Code over HTTP, as .vscode/mcp.json:
$(sed 's/^/  /' "$hosts/vscode-http.json")
  Files written for this build and this database (each works as written while this runs):
  $hosts/vscode.json (VS Code, stdio), $hosts/cursor.json, $hosts/claude-desktop.json,
  $hosts/vscode-http.json, $hosts/cursor-http.json; install links: $hosts/links.txt

  With real bearer tokens instead: BIKAROO_AUTH=jwt make run (starts a demo identity provider
  too, then scripts/dev-token.sh mints tokens for the demo users).

  $watch
  Ctrl-C stops the server$stop_note.

MSG
else
  cat >&2 <<MSG

  Bikaroo fleet MCP server: $url (server PID $server_pid; BIKAROO_AUTH=$BIKAROO_AUTH: every call needs a bearer token)
  Issuer: $BIKAROO_AUTH_ISSUER
  Metadata: http://127.0.0.1:$url_port/.well-known/oauth-protected-resource/mcp
  $db_line

  Connect a host over HTTP (it runs the OAuth flow itself): $hosts/vscode-http.json, $hosts/cursor-http.json
  Hosts that launch the server (stdio) act with a token pasted over "<an access token>" in
  $hosts/vscode.json, $hosts/cursor.json or $hosts/claude-desktop.json.

  Mint a token for a demo user (a real authorization code + PKCE flow), in another terminal:
  TOKEN=\$(scripts/dev-token.sh marie customer-care-assistant 'fleet:read fleet:report')
  $call -H "Authorization: Bearer \$TOKEN" -d '$body'

  Other users: paul (FR-LYO), olivia and nadia (operators, FR-PAR and FR-LYO), tom (technician,
  FR-PAR and FR-LYO), dev (viewer, developer-ide);
  a machine token: scripts/dev-token.sh fleet-sync fleet-sync fleet:read

  $watch
  Ctrl-C stops the server, the demo identity provider$stop_note.

MSG
fi

set +e
wait "$server_pid"
rc=$?
set -e
server_pid=
exit "$rc"
