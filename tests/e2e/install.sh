#!/usr/bin/env bash
# install.sh [DIR]: installs the pinned npm packages of DIR's package-lock.json into DIR/node_modules,
# only when needed. DIR defaults to tests/ (the e2e clients and the test lab), installed with the
# pinned npm of tests/toolchain (scripts/node.sh: an older npm leaves out platform packages);
# tests/auth has the demo identity provider's own small set (tests/auth/install.sh) and
# tests/toolchain that npm and Node 22 (scripts/node.sh), both installed with the machine's npm.
set -euo pipefail

tests_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${1:-$tests_dir}"
if [[ -z ${1:-} ]]; then
  PATH=$("$tests_dir/../scripts/node.sh" --bin):$PATH
fi

if ! command -v npm >/dev/null 2>&1; then
  echo "install.sh: npm is required (Node 20+ with npm)" >&2
  exit 1
fi

# npm ci rewrites node_modules/.package-lock.json on success: use it as the stamp.
stamp="node_modules/.package-lock.json"
if [[ -d node_modules && -f "$stamp" && ! "package-lock.json" -nt "$stamp" && ! "package.json" -nt "$stamp" ]]; then
  exit 0
fi

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if [[ -n "${INSTALL_SAYS:-}" ]]; then echo "$INSTALL_SAYS" >&2; fi
# Engine warnings are expected where the machine's Node runs npm (the toolchain's own install).
# Three tries, a pause between them: a registry's passing failure must not fail the run.
for try in 1 2 3; do
  npm ci --no-audit --no-fund --loglevel=error >"$log" 2>&1 && break
  cat "$log" >&2
  if [[ $try == 3 ]]; then
    echo "install.sh: npm ci failed in $PWD (three tries)" >&2
    exit 1
  fi
  echo "install.sh: npm ci failed (try $try of 3), trying again in $((try * 10)) s" >&2
  sleep $((try * 10))
done
# Make the stamp newer than the lockfile even when npm ci kept old mtimes.
touch "$stamp"
