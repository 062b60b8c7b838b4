#!/usr/bin/env bash
# Installs the demo identity provider's pinned packages (tests/auth/package-lock.json: oidc-provider
# and Node 22, nothing of the test lab of tests/package.json) into tests/auth/node_modules, only
# when needed. Used by `BIKAROO_AUTH=jwt make run` (scripts/run.sh).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
INSTALL_SAYS="tests/auth/install.sh: installing the demo identity provider's packages (oidc-provider and Node 22: 35 packages, about 190 MB, once)" \
  exec "$here/../e2e/install.sh" "$here"
