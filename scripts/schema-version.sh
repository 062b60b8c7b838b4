#!/usr/bin/env bash
# schema-version.sh DIR [HEADER]: the schema version a binary built from DIR needs, which is the
# number of DIR's highest numbered migration (NNNN_word.sql, the names domain/pg/migrate.c
# applies), printed. With HEADER, also written there as `#define MIGRATE_SCHEMA_NEEDED N`, only
# when the file does not say so already, so that make rebuilds migrate.o when the number changed
# and only then (the Makefile's rule runs this on every build). A new numbered file is thus all
# a schema change needs. Fails, saying so, when DIR holds no numbered migration.
set -euo pipefail
dir=${1:?usage: schema-version.sh DIR [HEADER]}
header=${2:-}
highest=$(find "$dir" -maxdepth 1 -type f -printf '%f\n' | grep -E '^[0-9]{4}_[a-z0-9_]+\.sql$' |
  cut -c 1-4 | sort -n | tail -n 1 || true)
if [[ -z $highest ]]; then
  echo "schema-version.sh: no numbered migration (NNNN_word.sql) in $dir" >&2
  exit 1
fi
version=$((10#$highest))
echo "$version"
[[ -n $header ]] || exit 0
text="/* The schema version this binary needs: the highest numbered migration of ${dir%/}/ when it was
 * built (written by scripts/schema-version.sh; domain/pg/migrate.h). */
#define MIGRATE_SCHEMA_NEEDED $version"
# Written in place, not through mv: a write cut short differs from the text, so the next build
# writes it again; and mv loads libattr1, which tests/tiers counts neither in the run tier nor in
# the base system that make run may use.
if [[ "$(cat "$header" 2>/dev/null)" != "$text" ]]; then
  mkdir -p "$(dirname "$header")"
  printf '%s\n' "$text" >"$header"
fi
