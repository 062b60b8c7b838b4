#!/usr/bin/env bash
# tests/registry/suite.sh: the MCP Registry entry, `make server-json` (build/server.json from
# packaging/server.json.in and common/version.h), against the registry's published JSON Schema
# of 2025-12-11 (pinned beside this file by its SHA-256; validated with ajv, pinned in
# tests/package.json), the binary's own version, and the Dockerfile's image label
# (tests/registry/check.mjs). Prints `ok - ` / `not ok - ` lines.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
# shellcheck source=tests/lib/harness.sh
source tests/lib/harness.sh
suite_init "$@"

if ! make -s --no-print-directory B="$B" "$B/server.json" >"$t/make.log" 2>&1; then
  cat "$t/make.log"
  nok "make server-json writes $B/server.json"
  suite_exit
fi
version=$(sed -n 's/^#define BIKAROO_VERSION "\(.*\)"$/\1/p' common/version.h)
check "the binary is that version ($("$bin" --version))" grep -q "^bikaroo-mcp $version " <("$bin" --version)
[[ -d tests/node_modules/ajv ]] || tests/e2e/install.sh >/dev/null
timeout 60 node tests/registry/check.mjs "$B/server.json" "$version" Dockerfile >"$t/out" 2>&1
rc=$?
cat "$t/out"
failures=$((failures + $(grep -c '^not ok - ' "$t/out")))
[[ $rc != 0 && $(grep -c '^not ok - ' "$t/out") == 0 ]] && nok "check.mjs ran to its end (exit $rc)"
suite_exit
