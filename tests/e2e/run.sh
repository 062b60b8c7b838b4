#!/usr/bin/env bash
# Runs the end-to-end tests (tests/e2e/*.test.mjs) with real MCP clients against a running server at MCP_URL.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

if [[ -z "${MCP_URL:-}" ]]; then
  echo "usage: MCP_URL=http://127.0.0.1:PORT/mcp $0 [FILE.test.mjs...] [extra node --test args]" >&2
  exit 2
fi

"$here/install.sh"

# The pinned Node 22 (tests/toolchain, installed by install.sh above): the inspector needs 22.19.
node_bin="${E2E_NODE:-$here/../toolchain/bin/node}"
shopt -s nullglob
files=()
args=()
for a in "$@"; do
  if [[ $a == *.test.mjs ]]; then files+=("$a"); else args+=("$a"); fi
done
[[ ${#files[@]} -eq 0 ]] && files=("$here"/*.test.mjs)
if [[ ${#files[@]} -eq 0 ]]; then
  echo "run.sh: no tests/e2e/*.test.mjs found" >&2
  exit 1
fi

export MCP_URL
# Every test and hook carries its own timeout (20 s per test, see the test files); node 20's
# --test-timeout is not used because it also bounds each whole file. Files run one at a time.
set +e
"$node_bin" --test --test-reporter=tap --test-concurrency=1 "${args[@]}" "${files[@]}"
rc=$?
set -e
exit "$rc"
