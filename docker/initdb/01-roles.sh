#!/usr/bin/env bash
# Run once by the postgres:15 image entrypoint on a fresh data volume.
# fleet_owner owns the schema and runs migrations; fleet_app is the server's login
# role: not superuser, not BYPASSRLS, owns nothing. The passwords come from the files that
# BIKAROO_OWNER_PASSWORD_FILE and BIKAROO_APP_PASSWORD_FILE name (Docker secrets), or from
# BIKAROO_OWNER_PASSWORD and BIKAROO_APP_PASSWORD.
set -euo pipefail

secret() {
  local var=$1 file_var=${1}_FILE
  if [[ -n ${!file_var:-} ]]; then
    head -n 1 "${!file_var}"
  else
    printf '%s' "${!var:?$var or $file_var must be set}"
  fi
}
owner_pw=$(secret BIKAROO_OWNER_PASSWORD)
app_pw=$(secret BIKAROO_APP_PASSWORD)
[[ -n $owner_pw && -n $app_pw ]] || { echo "01-roles.sh: empty password" >&2; exit 1; }
db=bikaroo

psql -v ON_ERROR_STOP=1 -X -q \
  --username "${POSTGRES_USER:-postgres}" --dbname postgres \
  -v owner_pw="$owner_pw" -v app_pw="$app_pw" -v dbname="$db" <<'SQL'
SELECT format('CREATE ROLE fleet_owner')
 WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fleet_owner') \gexec
SELECT format('CREATE ROLE fleet_app')
 WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fleet_app') \gexec
SELECT format('ALTER ROLE fleet_owner LOGIN NOSUPERUSER PASSWORD %L', :'owner_pw') \gexec
SELECT format('ALTER ROLE fleet_app LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE PASSWORD %L',
              :'app_pw') \gexec
SELECT format('CREATE DATABASE %I OWNER fleet_owner', :'dbname')
 WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = :'dbname') \gexec
SQL

psql -v ON_ERROR_STOP=1 -X -q --username "${POSTGRES_USER:-postgres}" --dbname "$db" \
  -c 'REVOKE CREATE ON SCHEMA public FROM PUBLIC'
