#!/usr/bin/env bash
# Fails when C sources call functions this project bans (unbounded or unchecked conversions).
set -euo pipefail
cd "$(dirname "$0")/.."
if grep -nE '\b(sprintf|vsprintf|strcpy|strcat|strtok|gets|atoi|atol|atoll)\s*\(' \
     common/*.[ch] domain/*.[ch] domain/pg/*.[ch] server/*.[ch] server/*/*.[ch] tests/*/*.[ch] 2>/dev/null; then
  echo "banned function used (use snprintf, strtol, bounded copies)" >&2
  exit 1
fi
echo "banned-function check: clean"
