#!/usr/bin/env bash
# config-table.sh BINARY [--check]: writes the settings table of docs/configuration.md (between
# its "generated: bikaroo-mcp config-help" and "end of generated table" markers) from the
# binary's own table (bikaroo-mcp config-help --format=markdown, server/cfg.c). --check only
# compares, and exits 1 with the difference when the page is not what the binary prints
# (tests/release runs it).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bin=${1:?usage: config-table.sh BINARY [--check]}
page=docs/configuration.md
begin='<!-- generated: bikaroo-mcp config-help --format=markdown -->'
end='<!-- end of generated table -->'
new=$(mktemp)
trap 'rm -f "$new"' EXIT
grep -qxF "$begin" "$page" && grep -qxF "$end" "$page" || {
  echo "config-table.sh: $page lacks the markers of the generated table" >&2
  exit 1
}
{
  sed -n "1,/^$(sed 's/[][\\/.*^$]/\\&/g' <<<"$begin")\$/p" "$page"
  "$bin" config-help --format=markdown
  sed -n "/^$(sed 's/[][\\/.*^$]/\\&/g' <<<"$end")\$/,\$p" "$page"
} >"$new"
if [[ "${2:-}" == --check ]]; then
  diff -u "$page" "$new" && exit 0
  echo "config-table.sh: $page's settings table is not what $bin config-help prints (run: scripts/config-table.sh $bin)" >&2
  exit 1
fi
cp "$new" "$page"
