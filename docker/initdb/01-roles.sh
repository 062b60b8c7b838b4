#!/usr/bin/env bash
# Run once by the postgres:15 image entrypoint on a fresh data volume.
# fleet_owner owns the schema and runs migrations; fleet_app is the server's login
# role: not superuser, not BYPASSRLS, owns nothing.
set -euo pipefail

: "${BIKAROO_OWNER_PASSWORD:?BIKAROO_OWNER_PASSWORD must be set}"
: "${BIKAROO_APP_PASSWORD:?BIKAROO_APP_PASSWORD must be set}"
db=bikaroo

psql -v ON_ERROR_STOP=1 -X -q \
  --username "${POSTGRES_USER:-postgres}" --dbname postgres \
  -v owner_pw="$BIKAROO_OWNER_PASSWORD" -v app_pw="$BIKAROO_APP_PASSWORD" -v dbname="$db" <<'SQL'
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
