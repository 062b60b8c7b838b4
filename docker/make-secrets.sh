#!/usr/bin/env bash
# make-secrets.sh [DIR]: writes the secrets docker-compose.yml reads (Docker secrets, one file
# each, 0644 in a 0700 folder) into DIR (default docker/secrets, which git ignores), with fresh
# random passwords, and for the default folder points compose at them in .env (BIKAROO_SECRETS).
# Never overwrites a secret that exists: run it again to fill in what is missing.
#   postgres_password owner_password app_password   the database roles' passwords
#   migrate_url database_url                        libpq URLs of fleet_owner and fleet_app
#   state_secret                                    BIKAROO_STATE_SECRET shared by the replicas
#   tls_cert tls_key tls_ca                         the proxy's certificate (localhost, 127.0.0.1,
#                                                   proxy) and key, signed by a CA made for this
#                                                   demo alone (its key is not kept): give tls_ca
#                                                   to clients (curl --cacert, NODE_EXTRA_CA_CERTS)
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
# The proxy's certificate, from a CA of its own whose key is thrown away once it has signed (a
# real deployment brings a certificate of its CA instead: the same two files).
if [[ ! -s $dir/tls_cert || ! -s $dir/tls_key || ! -s $dir/tls_ca ]]; then
  ca=$(mktemp -d)
  trap 'rm -rf "$ca"' EXIT
  openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 397 \
    -subj '/CN=Bikaroo demo CA' -keyout "$ca/ca.key" -out "$dir/tls_ca" 2>/dev/null
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj '/CN=localhost' \
    -keyout "$dir/tls_key" -out "$ca/proxy.csr" 2>/dev/null
  printf 'subjectAltName=DNS:localhost,IP:127.0.0.1,DNS:proxy\nextendedKeyUsage=serverAuth\n' >"$ca/ext"
  openssl x509 -req -in "$ca/proxy.csr" -CA "$dir/tls_ca" -CAkey "$ca/ca.key" -CAserial "$ca/ca.srl" -CAcreateserial \
    -days 397 -extfile "$ca/ext" -out "$dir/tls_cert" 2>/dev/null
  chmod 0644 "$dir/tls_key" "$dir/tls_cert" "$dir/tls_ca"
fi
# Hex passwords need no escaping in a URL. Compose reads .env beside docker-compose.yml.
# Only for the default folder: another one (a test's) is the caller's to point compose at.
abs=$(cd "$dir" && pwd -P)
if [[ $# == 0 ]]; then
  if ! grep -qs '^BIKAROO_SECRETS=' .env; then printf 'BIKAROO_SECRETS=%s\n' "$abs" >>.env; fi
  echo "make-secrets.sh: secrets in $abs (BIKAROO_SECRETS in .env)" >&2
else
  echo "make-secrets.sh: secrets in $abs (set BIKAROO_SECRETS=$abs)" >&2
fi
