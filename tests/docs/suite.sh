#!/usr/bin/env bash
# The docs (README.md, docs/): every link and every repository path they name exists, and no
# tracked file cites a Markdown file the repository does not contain (tests/docs/refs.py).
# Usage: tests/docs/suite.sh [BUILD_DIR] (a suite of scripts/test.sh). Prints `ok - ...` /
# `not ok - ...` lines; exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
python3 tests/docs/refs.py .
