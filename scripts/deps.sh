#!/usr/bin/env bash
# Ensure the Debian packages this project needs are installed (`deps.sh fuzz`: also what
# `make fuzz` needs; `deps.sh bench`: also what `make bench` needs). Silent no-op when
# everything is present. As root, installs what is missing; otherwise prints the exact command
# to run and exits 1.
set -euo pipefail

packages=(
  build-essential pkg-config
  libmicrohttpd-dev libjansson-dev libpq-dev libcurl4-openssl-dev
  check libsubunit-dev libssl-dev libcjose-dev
  postgresql-15 postgresql-client-15
  valgrind cppcheck clang-format python3
  curl ca-certificates
)
packages+=(pgbouncer) # tests/pooler: the server behind a transaction-pooling PgBouncer

packages+=(lintian man-db systemd) # make deb (lintian), tests/install (man -l, systemd-analyze)
packages+=(nginx-light socat docker-compose) # compose topology and multi-instance tests (tests/cluster)
packages+=(prometheus) # promtool: tests/ops checks GET /metrics with `promtool check metrics`
packages+=(chromium) # tests/ui: the MCP Apps views in a real browser (puppeteer-core drives it)

if [[ "${1:-}" == bench ]]; then
  packages+=(wrk) # make bench, make bench-rss: the HTTP load (pgbench comes with postgresql-client)
fi
if [[ "${1:-}" == fuzz ]]; then
  packages+=(clang libclang-rt-14-dev)
fi

# node/npm may come from a non-Debian install: only ask apt for them when absent.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  packages+=(nodejs npm)
fi

missing=()
for pkg in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$pkg" 2>/dev/null || true)
  if [[ "$status" != ii* ]]; then
    missing+=("$pkg")
  fi
done

if ((${#missing[@]} == 0)); then
  exit 0
fi

if [[ "$(id -u)" -ne 0 ]]; then
  echo "deps.sh: missing Debian packages: ${missing[*]}" >&2
  echo "Install them with:" >&2
  echo "sudo apt-get install -y ${missing[*]}"
  exit 1
fi

echo "deps.sh: installing: ${missing[*]}" >&2
# A mirror's passing hiccup must not fail a fresh machine's set-up: apt retries each download.
apt-get -o Acquire::Retries=3 update
DEBIAN_FRONTEND=noninteractive apt-get -o Acquire::Retries=3 install -y --no-install-recommends "${missing[@]}"
