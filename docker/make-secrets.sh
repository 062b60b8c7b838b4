#!/usr/bin/env bash
# make-secrets.sh [DIR]: writes the secrets docker-compose.yml reads (Docker secrets, one file
# each, 0644 in a 0700 folder) into DIR (default docker/secrets, which git ignores), with fresh
# random passwords, and for the default folder points compose at them in .env (BIKAROO_SECRETS).
# Never overwrites a secret that exists: run it again to fill in what is missing.
#   postgres_password owner_password app_password   the database roles' passwords
#   migrate_url database_url                        libpq URLs of fleet_owner and fleet_app
#   state_secret                                    BIKAROO_STATE_SECRET shared by the replicas
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
dir=${1:-docker/secrets}
umask 022 # files 0644 in a 0700 folder: compose (without swarm) bind-mounts each file as it is,
# and the containers read them as their own users (postgres, UID 10001)
mkdir -p "$dir"
chmod 0700 "$dir"
rand() { head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
put() { [[ -s $dir/$1 ]] || printf '%s\n' "$2" >"$dir/$1"; }
put postgres_password "$(rand)"
put owner_password "$(rand)"
put app_password "$(rand)"
put state_secret "$(rand)"
put migrate_url "postgresql://fleet_owner:$(cat "$dir/owner_password")@db:5432/bikaroo"
put database_url "postgresql://fleet_app:$(cat "$dir/app_password")@db:5432/bikaroo"
# Hex passwords need no escaping in a URL. Compose reads .env beside docker-compose.yml.
# Only for the default folder: another one (a test's) is the caller's to point compose at.
abs=$(cd "$dir" && pwd -P)
if [[ $# == 0 ]]; then
  if ! grep -qs '^BIKAROO_SECRETS=' .env; then printf 'BIKAROO_SECRETS=%s\n' "$abs" >>.env; fi
  echo "make-secrets.sh: secrets in $abs (BIKAROO_SECRETS in .env)" >&2
else
  echo "make-secrets.sh: secrets in $abs (set BIKAROO_SECRETS=$abs)" >&2
fi
