#!/usr/bin/env bash
# deps.sh [TIER...]: ensures the Debian packages of the run tier and of each TIER named are
# installed (docs/ lists each tier with its size; tests/tiers checks that the run tier is enough
# for `make run`):
#   run    building and running the server (make run, make all, make install): the default
#   idp    the demo identity provider of `BIKAROO_AUTH=jwt make run` (Node.js)
#   test   the test lab of make test: Check, valgrind, linters, a browser, proxies, promtool...
#   bench  make bench: the HTTP load generator and what bench/run.sh calls
#   fuzz   make fuzz: clang and its fuzzing runtime (and Node.js for the seeds)
# deps.sh --list TIER prints the packages that TIER adds, one a line, and installs nothing.
# Silent no-op when everything is present. As root, installs what is missing; otherwise prints
# the exact command to run and exits 1.
set -euo pipefail

tier_run=(
  build-essential pkg-config
  libmicrohttpd-dev libjansson-dev libpq-dev libcurl4-openssl-dev libssl-dev libcjose-dev
  postgresql-15 postgresql-client-15 # the throwaway cluster of make run, psql for the demo data
  curl ca-certificates               # the banner's curl call
)
tier_idp=(nodejs npm) # tests/auth/install.sh then installs tests/auth's own packages
tier_test=(
  check libsubunit-dev # the Check unit and integration tests
  valgrind cppcheck clang-format python3 strace
  pgbouncer                  # tests/pooler: the server behind a transaction-pooling PgBouncer
  lintian man-db systemd     # make deb (lintian), tests/install (man -l, systemd-analyze)
  nginx-light socat docker-compose # compose topology and multi-instance tests (tests/cluster)
  prometheus                 # promtool: tests/ops checks GET /metrics with `promtool check metrics`
  chromium                   # tests/ui: the MCP Apps views in a real browser (puppeteer-core)
  nodejs npm                 # the official MCP clients of tests/e2e and the conformance suite
)
tier_bench=(wrk openssl python3 pgbouncer nginx-light) # bench/run.sh; pgbench comes with postgresql-client
tier_fuzz=(clang libclang-rt-14-dev nodejs npm)

tier_packages() { # tier_packages TIER: the packages TIER adds (the run tier's own for run)
  case "$1" in
    run) printf '%s\n' "${tier_run[@]}" ;;
    idp) printf '%s\n' "${tier_idp[@]}" ;;
    test) printf '%s\n' "${tier_test[@]}" ;;
    bench) printf '%s\n' "${tier_bench[@]}" ;;
    fuzz) printf '%s\n' "${tier_fuzz[@]}" ;;
    *)
      echo "deps.sh: unknown tier $1 (run, idp, test, bench, fuzz)" >&2
      return 2
      ;;
  esac
}

if [[ "${1:-}" == --list ]]; then
  tier_packages "${2:-run}"
  exit
fi

tiers=(run "$@")
packages=()
for tier in "${tiers[@]}"; do
  mapfile -t -O "${#packages[@]}" packages < <(tier_packages "$tier")
done

missing=()
for pkg in "${packages[@]}"; do
  # node/npm may come from a non-Debian install: only ask apt for them when absent.
  if [[ $pkg == nodejs || $pkg == npm ]] && command -v node >/dev/null 2>&1 &&
    command -v npm >/dev/null 2>&1; then
    continue
  fi
  status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$pkg" 2>/dev/null || true)
  if [[ "$status" != ii* && " ${missing[*]} " != *" $pkg "* ]]; then
    missing+=("$pkg")
  fi
done

if ((${#missing[@]} == 0)); then
  exit 0
fi

if [[ "$(id -u)" -ne 0 ]]; then
  echo "deps.sh: missing Debian packages (tiers: ${tiers[*]}): ${missing[*]}" >&2
  echo "Install them with:" >&2
  echo "sudo apt-get install -y --no-install-recommends ${missing[*]}"
  exit 1
fi

echo "deps.sh: installing what the tiers ${tiers[*]} need and this machine lacks: ${missing[*]}" >&2
echo "deps.sh: apt-get says below how much it downloads; a fresh machine takes a minute or two" >&2
# A mirror's passing hiccup must not fail a fresh machine's set-up: apt retries each download.
apt-get -q -o Acquire::Retries=3 update >/dev/null
set +e
DEBIAN_FRONTEND=noninteractive apt-get -q -o Acquire::Retries=3 -o Dpkg::Use-Pty=0 install -y \
  --no-install-recommends "${missing[@]}" 2>&1 |
  {
    grep -E '^(Need to get|After this operation|E:|W:)' | sed 's/^/  apt: /'
    true
  } >&2
rc=${PIPESTATUS[0]}
set -e
if ((rc != 0)); then
  echo "deps.sh: apt-get install failed (exit $rc)" >&2
  exit "$rc"
fi
echo "deps.sh: installed" >&2
