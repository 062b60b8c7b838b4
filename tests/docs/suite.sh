#!/usr/bin/env bash
# The docs (README.md, docs/), run by scripts/test.sh:
# - tests/docs/refs.py: every link and every repository path they name exists, and no tracked
#   file cites a Markdown file the repository does not contain;
# - tests/docs/blocks.py: every command block is run here (against a throwaway database and a
#   server started like `make run`), shown by another test it names, or marked with what it
#   needs; an unmarked command block fails.
# Usage: tests/docs/suite.sh [BUILD_DIR]. Runs alone too (then with a PostgreSQL cluster of its
# own). Prints `ok - ...` / `not ok - ...` / `skip - ...` lines; exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
B=${1:-build}
bin=${BIKAROO_BIN:-$PWD/$B/bikaroo-mcp}
rc=0
python3 tests/docs/refs.py . || rc=1
[[ -d tests/node_modules ]] || tests/e2e/install.sh >/dev/null || echo "# tests/e2e/install.sh failed: npx blocks will fail"
python3 tests/docs/blocks.py "$bin" || rc=1
exit "$rc"
