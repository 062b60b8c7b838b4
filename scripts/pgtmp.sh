#!/usr/bin/env bash
# pgtmp.sh: a throwaway PostgreSQL cluster for development and tests.
#
# Usage:
#   scripts/pgtmp.sh start    [DIR]       initdb if needed, start, create roles + database, print env
#   scripts/pgtmp.sh stop     [DIR]       fast shutdown (no error if not running)
#   scripts/pgtmp.sh env      [DIR]       print the env lines without starting
#   scripts/pgtmp.sh status   [DIR]       exit 0 if running, 3 if not
#   scripts/pgtmp.sh createdb DIR NAME    create database NAME owned by fleet_owner (idempotent)
#   scripts/pgtmp.sh dropdb   DIR NAME    drop database NAME (forcing connections off; idempotent)
#   scripts/pgtmp.sh destroy  [DIR]       stop and delete all cluster storage
#
# DIR defaults to .run/pg under the repository root. Env PGTMP_DB (default bikaroo)
# names the main database. Only a unix socket is opened (no TCP), with trust auth.
#
# stdout carries only the shell-evaluable lines below; progress goes to stderr:
#   PGTMP_SOCK='<socket dir>'
#   PGTMP_QUERY='host=<socket dir>&port=5432&...'   (every connection parameter, pinned)
#   DATABASE_URL='postgresql://fleet_app@/<db>?<PGTMP_QUERY>'
#   BIKAROO_MIGRATE_URL='postgresql://fleet_owner@/<db>?<PGTMP_QUERY>'
#   PGTMP_SUPER_URL='postgresql://postgres@/postgres?<PGTMP_QUERY>'
#
# A user's PG* variables (PGHOST, PGPORT, PGUSER, PGOPTIONS...) never reach these connections:
# the URLs set every parameter libpq would take from them, and this script clears the ones no
# URL can override (PGSERVICE, PGSERVICEFILE, PGSYSCONFDIR, PGDATESTYLE, PGTZ, PGGEQO) for its
# own psql calls; callers do the same (pgtmp_scrub_env below, sourced by run.sh and test.sh).
#
# As root, the server runs as the `postgres` OS user. When that user cannot reach
# DIR (e.g. the tree lives in a 0700 mktemp dir) or the socket path would be too
# long, the storage lives in a mktemp dir under /tmp and DIR/real links to it.
# The PG* variables that no connection URL overrides: cleared (PGTMP_* and PG_BIN are ours).
pgtmp_scrub_env() {
  unset PGSERVICE PGSERVICEFILE PGSYSCONFDIR PGDATESTYLE PGTZ PGGEQO PGREQUIREAUTH
}
# `source scripts/pgtmp.sh --functions` defines pgtmp_scrub_env and pgtmp_query only.
pgtmp_query() { # pgtmp_query SOCK PORT: the pinned query string of every URL below
  printf 'host=%s&port=%s&hostaddr=&sslmode=disable&gssencmode=disable&options=&passfile=' "$1" "$2"
  printf '&connect_timeout=10&target_session_attrs=any&client_encoding=UTF8&application_name=bikaroo'
}
if [[ "${1:-}" == --functions ]]; then return 0; fi
set -euo pipefail
pgtmp_scrub_env

PORT=5432
OWNER_ROLE=fleet_owner
APP_ROLE=fleet_app
SUPER_ROLE=postgres
MAX_SOCK_PATH=100 # sockaddr_un allows ~107 bytes; keep a margin

log() { printf 'pgtmp: %s\n' "$*" >&2; }
die() {
  log "error: $*"
  exit 1
}

usage() {
  sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
repo_root=$(dirname "$script_dir")

is_root() { [[ "$(id -u)" -eq 0 ]]; }

# sbin_tool NAME: the path of a system tool that lives in an sbin folder (runuser), on PATH or,
# when a root shell's PATH lacks them (su without -, sudo's secure_path off, a container's
# minimal PATH), in /usr/local/sbin, /usr/sbin or /sbin; else an error that names it and its
# package.
sbin_tool() {
  local d
  if command -v "$1" 2>/dev/null; then return 0; fi
  for d in /usr/local/sbin /usr/sbin /sbin; do
    if [[ -x $d/$1 ]]; then
      printf '%s\n' "$d/$1"
      return 0
    fi
  done
  die "$1 not found on PATH ($PATH) nor in /usr/local/sbin, /usr/sbin or /sbin: as root, the cluster runs as the postgres user through $1 (Debian package $2: apt-get install $2)"
}

find_pg_bin() {
  local d
  for d in "${PG_BIN:-}" /usr/lib/postgresql/15/bin; do
    if [[ -n "$d" && -x "$d/initdb" && -x "$d/pg_ctl" ]]; then
      printf '%s\n' "$d"
      return 0
    fi
  done
  if command -v pg_ctl >/dev/null 2>&1 && command -v initdb >/dev/null 2>&1; then
    dirname "$(command -v pg_ctl)"
    return 0
  fi
  die "PostgreSQL server binaries not found (install postgresql-15 or set PG_BIN)"
}

# Run a command as the OS user that owns the cluster (postgres when we are root).
as_pg() {
  if is_root; then
    (cd / && "$RUNUSER" -u postgres -- "$@")
  else
    "$@"
  fi
}

# Single-quote a value for safe shell evaluation.
shq() {
  local s=${1//\'/\'\\\'\'}
  printf "'%s'" "$s"
}

# Percent-encode a path for use as a libpq URI query value.
urlenc() {
  local LC_ALL=C s=$1 out='' c i
  for ((i = 0; i < ${#s}; i++)); do
    c=${s:i:1}
    case "$c" in
      [A-Za-z0-9/._~-]) out+=$c ;;
      *) out+=$(printf '%%%02X' "'$c") ;;
    esac
  done
  printf '%s' "$out"
}

valid_dbname() {
  [[ "$1" =~ ^[A-Za-z_][A-Za-z0-9_-]{0,62}$ ]]
}

# Can the postgres OS user traverse into (and below) directory $1?
pg_can_reach() {
  if is_root; then
    (cd / && "$RUNUSER" -u postgres -- test -x "$1") 2>/dev/null
  else
    true
  fi
}

sock_ok() {
  local sock=$1
  ((${#sock} + ${#PORT} + 10 <= MAX_SOCK_PATH)) # "/.s.PGSQL." is 10 chars
}

new_tmp_storage() {
  local t
  t=$(mktemp -d /tmp/pgtmp.XXXXXXXX)
  # Traversable, not listable: the data directory below stays 0700, and the socket directory
  # must be reachable by the unprivileged users the tests run the product as (tests/install).
  chmod 0711 "$t"
  if is_root; then chown postgres:postgres "$t"; fi
  printf '%s\n' "$t"
}

# Resolve and lay out where data, socket and log live.
# Sets: DIR BASE DATA SOCK LOGFILE
resolve_layout() {
  mkdir -p "$DIR"
  DIR=$(cd "$DIR" && pwd -P)

  if [[ -L "$DIR/real" ]]; then
    BASE=$(readlink -f "$DIR/real" || true)
    if [[ -z "$BASE" || ! -d "$BASE" ]]; then
      log "storage behind $DIR/real is gone; creating fresh storage"
      BASE=$(new_tmp_storage)
      ln -sfn "$BASE" "$DIR/real"
    fi
  elif [[ -d "$DIR/data" ]]; then
    BASE=$DIR
  elif ! pg_can_reach "$DIR" || ! sock_ok "$DIR/sock"; then
    BASE=$(new_tmp_storage)
    ln -sfn "$BASE" "$DIR/real"
    log "using storage $BASE (linked as $DIR/real)"
  else
    BASE=$DIR
  fi

  DATA=$BASE/data
  SOCK=$BASE/sock
  LOGFILE=$BASE/postgres.log
  sock_ok "$SOCK" || die "socket path too long: $SOCK"

  local d
  for d in "$DATA" "$SOCK"; do
    if [[ ! -d "$d" ]]; then
      mkdir -p "$d"
    fi
  done
  chmod 0700 "$DATA"
  chmod 0755 "$SOCK"
  [[ -e "$LOGFILE" ]] || : >"$LOGFILE"
  if is_root; then
    chown postgres:postgres "$DATA" "$SOCK" "$LOGFILE"
    if [[ "$BASE" != "$DIR" ]]; then chown postgres:postgres "$BASE"; fi
  fi
}

print_env() {
  local db=$1 q
  q=$(pgtmp_query "$(urlenc "$SOCK")" "$PORT")
  printf 'PGTMP_SOCK=%s\n' "$(shq "$SOCK")"
  printf 'PGTMP_QUERY=%s\n' "$(shq "$q")"
  printf 'DATABASE_URL=%s\n' "$(shq "postgresql://$APP_ROLE@/$db?$q")"
  printf 'BIKAROO_MIGRATE_URL=%s\n' "$(shq "postgresql://$OWNER_ROLE@/$db?$q")"
  printf 'PGTMP_SUPER_URL=%s\n' "$(shq "postgresql://$SUPER_ROLE@/postgres?$q")"
}

# PID of our postmaster if it is really running on DATA, else empty.
# Removes stale lock files left by a killed run.
postmaster_pid() {
  local pidfile=$DATA/postmaster.pid pid cwd state real_data
  [[ -f "$pidfile" ]] || return 0
  pid=$(head -n 1 "$pidfile" 2>/dev/null || true)
  real_data=$(cd "$DATA" && pwd -P)
  if [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null; then
    if [[ ! -d /proc/self ]]; then
      printf '%s\n' "$pid" # no procfs: trust the PID
      return 0
    fi
    # A killed postmaster may linger as a zombie; a reused PID belongs to some
    # other process. The postmaster chdirs into its data directory, so check that.
    state=$(sed -n 's/^[0-9]* (.*) \([A-Za-z]\).*/\1/p' "/proc/$pid/stat" 2>/dev/null || true)
    cwd=$(readlink "/proc/$pid/cwd" 2>/dev/null || true)
    if [[ "$state" != Z && -n "$cwd" && "$cwd" == "$real_data" ]]; then
      printf '%s\n' "$pid"
      return 0
    fi
  fi
  log "removing stale lock files (PID ${pid:-?} is not our postmaster)"
  rm -f "$pidfile" "$SOCK/.s.PGSQL.$PORT" "$SOCK/.s.PGSQL.$PORT.lock"
}

write_conf() {
  local conf=$DATA/pgtmp.conf sockq=${SOCK//\'/\'\'}
  cat >"$conf" <<EOF
# Written by pgtmp.sh on every start: throwaway cluster, unix socket only, no durability.
listen_addresses = ''
port = $PORT
unix_socket_directories = '$sockq'
unix_socket_permissions = 0777
max_connections = 200
shared_buffers = 128MB
fsync = off
synchronous_commit = off
full_page_writes = off
logging_collector = off
# Whole statements in pg_stat_activity (the bench reads the server's batch statement there).
track_activity_query_size = 16384
EOF
  printf 'local all all trust\n' >"$DATA/pg_hba.conf"
  if is_root; then chown postgres:postgres "$conf" "$DATA/pg_hba.conf"; fi
}

do_initdb() {
  log "initdb $DATA"
  if ! as_pg "$PG_BIN/initdb" -D "$DATA" -U "$SUPER_ROLE" -E UTF8 --locale=C \
    --auth-local=trust --auth-host=reject -N >"$DIR/initdb.log" 2>&1; then
    cat "$DIR/initdb.log" >&2
    die "initdb failed"
  fi
  printf "\ninclude = 'pgtmp.conf'\n" >>"$DATA/postgresql.conf"
}

psql_super() {
  local db=$1
  shift
  "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 \
    "postgresql://$SUPER_ROLE@/$db?$(pgtmp_query "$(urlenc "$SOCK")" "$PORT" | sed 's/options=/options=-c%20client_min_messages%3Dwarning/')" "$@" >&2
}

ensure_db() {
  local db=$1
  valid_dbname "$db" || die "invalid database name: $db"
  psql_super postgres -v dbname="$db" -v owner="$OWNER_ROLE" <<'SQL'
DO $$ BEGIN PERFORM pg_advisory_lock(727274); END $$;
SELECT format('CREATE DATABASE %I OWNER %I', :'dbname', :'owner')
 WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = :'dbname') \gexec
DO $$ BEGIN PERFORM pg_advisory_unlock(727274); END $$;
SQL
  psql_super "$db" -c 'REVOKE CREATE ON SCHEMA public FROM PUBLIC'
}

ensure_roles() {
  psql_super postgres -v owner="$OWNER_ROLE" -v app="$APP_ROLE" <<'SQL'
DO $$ BEGIN PERFORM pg_advisory_lock(727274); END $$;
SELECT format('CREATE ROLE %I', :'owner')
 WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'owner') \gexec
SELECT format('CREATE ROLE %I', :'app')
 WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'app') \gexec
SELECT format('ALTER ROLE %I LOGIN NOSUPERUSER', :'owner') \gexec
SELECT format('ALTER ROLE %I LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE', :'app') \gexec
DO $$ BEGIN PERFORM pg_advisory_unlock(727274); END $$;
SQL
}

cmd_start() {
  resolve_layout
  if [[ ! -f "$DATA/PG_VERSION" ]]; then
    do_initdb
  fi
  write_conf
  local pid
  pid=$(postmaster_pid)
  if [[ -n "$pid" ]]; then
    log "already running (PID $pid)"
  else
    log "starting cluster (log: $LOGFILE)"
    # 9>&-: the postmaster must not inherit our flock descriptor.
    if ! as_pg "$PG_BIN/pg_ctl" -D "$DATA" -l "$LOGFILE" -w -t 60 -s start >&2 9>&-; then
      tail -n 30 "$LOGFILE" >&2 || true
      die "could not start PostgreSQL"
    fi
  fi
  ensure_roles
  ensure_db "$DB"
  print_env "$DB"
}

cmd_stop() {
  if [[ ! -L "$DIR/real" && ! -d "$DIR/data" ]]; then
    return 0
  fi
  resolve_layout
  [[ -f "$DATA/PG_VERSION" ]] || return 0
  local pid
  pid=$(postmaster_pid)
  if [[ -z "$pid" ]]; then
    log "not running"
    return 0
  fi
  log "stopping cluster (PID $pid)"
  as_pg "$PG_BIN/pg_ctl" -D "$DATA" -m fast -w -t 60 -s stop >&2 9>&- || {
    [[ -z "$(postmaster_pid)" ]] || die "could not stop PostgreSQL (PID $pid)"
  }
}

require_running() {
  [[ -f "$DATA/PG_VERSION" && -n "$(postmaster_pid)" ]] ||
    die "cluster in $DIR is not running (run: pgtmp.sh start $DIR)"
}

main() {
  local cmd=${1:-}
  [[ -n "$cmd" ]] || usage
  shift
  DIR=${1:-$repo_root/.run/pg}
  DB=${PGTMP_DB:-bikaroo}
  valid_dbname "$DB" || die "invalid PGTMP_DB: $DB"
  PG_BIN=$(find_pg_bin)
  RUNUSER=
  if is_root; then
    RUNUSER=$(sbin_tool runuser util-linux)
    id -u postgres >/dev/null 2>&1 ||
      die "as root, the cluster runs as the postgres OS user, and there is none (the postgresql-15 package creates it)"
  fi

  case "$cmd" in
    start | stop | env | status | createdb | dropdb | destroy) ;;
    -h | --help | help) usage ;;
    *) usage ;;
  esac

  if [[ "$cmd" == stop || "$cmd" == status ]] && [[ ! -d "$DIR" ]]; then
    [[ "$cmd" == stop ]] && exit 0
    exit 3
  fi
  mkdir -p "$DIR"
  # Serialise concurrent invocations on the same DIR.
  exec 9>"$DIR/.pgtmp.lock"
  flock 9

  case "$cmd" in
    start) cmd_start ;;
    stop) cmd_stop ;;
    env)
      resolve_layout
      print_env "$DB"
      ;;
    status)
      resolve_layout
      [[ -f "$DATA/PG_VERSION" && -n "$(postmaster_pid)" ]] || exit 3
      ;;
    createdb | dropdb)
      local name=${2:-}
      [[ -n "$name" ]] || usage
      valid_dbname "$name" || die "invalid database name: $name"
      resolve_layout
      require_running
      if [[ "$cmd" == createdb ]]; then
        ensure_db "$name"
      else
        psql_super postgres -v dbname="$name" <<'SQL'
SELECT format('DROP DATABASE IF EXISTS %I WITH (FORCE)', :'dbname') \gexec
SQL
      fi
      ;;
    destroy)
      cmd_stop
      resolve_layout
      if [[ "$BASE" != "$DIR" ]]; then rm -rf "$BASE"; fi
      rm -rf "$DIR/data" "$DIR/sock" "$DIR/postgres.log" "$DIR/initdb.log" "$DIR/real"
      # The lock file goes too (our descriptor stays valid), then the folder if empty.
      rm -f "$DIR/.pgtmp.lock"
      rmdir "$DIR" 2>/dev/null || true
      ;;
  esac
}

main "$@"
