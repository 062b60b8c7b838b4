#!/usr/bin/env bash
# config-table.sh BINARY [--check]: writes what docs/configuration.md says of every setting from
# the binary's own table (bikaroo-mcp config-help --format=markdown, server/cfg.c), each between
# its "generated:" and "end of generated" markers: the settings table, and the list of the
# secret settings (those the table marks [secret]). --check only compares, and exits 1 with the
# difference when the page is not what the binary prints (tests/release runs it).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bin=${1:?usage: config-table.sh BINARY [--check]}
page=docs/configuration.md
table_begin='<!-- generated: bikaroo-mcp config-help --format=markdown -->'
table_end='<!-- end of generated table -->'
list_begin='<!-- generated: the settings bikaroo-mcp config-help marks [secret] -->'
list_end='<!-- end of generated list -->'
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
for m in "$table_begin" "$table_end" "$list_begin" "$list_end"; do
  grep -qxF "$m" "$page" || {
    echo "config-table.sh: $page lacks the marker $m" >&2
    exit 1
  }
done
"$bin" config-help --format=markdown >"$t/table"
# `A`, `B` and `C`.: the secret settings in the table's order.
sed -nE 's/^\| `([A-Z0-9_]*)` .*\[secret\]( \[reloadable\])? \|$/`\1`/p' "$t/table" |
  awk '{ a[NR] = $0 } END { for (i = 1; i <= NR; i++) printf "%s%s", a[i], (i == NR ? ".\n" : i == NR - 1 ? " and " : ", ") }' |
  fold -s -w 100 | sed 's/ $//' >"$t/list"
awk -v tb="$table_begin" -v te="$table_end" -v lb="$list_begin" -v le="$list_end" \
  -v tf="$t/table" -v lf="$t/list" '
  function body(f, line) { while ((getline line < f) > 0) print line; close(f) }
  skip && ($0 == te || $0 == le) { skip = 0 }
  skip { next }
  { print }
  $0 == tb { body(tf); skip = 1 }
  $0 == lb { body(lf); skip = 1 }
' "$page" >"$t/new"
if [[ "${2:-}" == --check ]]; then
  diff -u "$page" "$t/new" && exit 0
  echo "config-table.sh: $page is not what $bin config-help prints (run: scripts/config-table.sh $bin)" >&2
  exit 1
fi
cp "$t/new" "$page"
