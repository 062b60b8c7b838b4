#!/usr/bin/env bash
# tests/upgrade/migrations.sh PREVIOUS_SOURCE_DIR: the numbered migrations across releases, with
# renamed files (migrations/README.md: Renaming a numbered file). Run by tests/upgrade/suite.sh
# with the previous release built by previous.sh, in scripts/test.sh's environment.
# - A database that recorded every renamed file under its name before (this release's files with
#   those names given back) is migrated by this release: no renamed file is applied again, and
#   both names of each end up recorded.
# - A database migrated by the previous release, then by this one: only the files added since
#   are applied, and its schema is a fresh database's; then the previous release's migrate
#   applies no numbered file to it.
# - A fresh database migrated by this release: the previous release's migrate applies no
#   numbered file to it.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
# shellcheck source=tests/lib/harness.sh
source tests/lib/harness.sh
prev=${1:?usage: tests/upgrade/migrations.sh PREVIOUS_SOURCE_DIR}
suite_init
old_bin=$prev/build/bikaroo-mcp
# The renamed files, as migrate knows them: {"before", "now"} rows of domain/pg/migrate.c.
renamed=$(sed -n 's/^\t{"\([0-9]\{4\}_[a-z0-9_]*\.sql\)", "\([0-9]\{4\}_[a-z0-9_]*\.sql\)"},$/\1 \2/p' domain/pg/migrate.c)
[[ -n $renamed ]] || nok "domain/pg/migrate.c's table of renamed files reads as {\"before\", \"now\"} rows"

dbs=()
# shellcheck disable=SC2317  # invoked via suite_on_exit
drop_all() { for d in "${dbs[@]}"; do psql -X -q "$PGTMP_SUPER_URL" -c "DROP DATABASE IF EXISTS $d WITH (FORCE)"; done; }
suite_on_exit drop_all
# newdb NAME: an empty database owned by fleet_owner; its owner's URL in $url.
newdb() {
  dbs+=("$1")
  psql -X -q -v ON_ERROR_STOP=1 "$PGTMP_SUPER_URL" -c 'SET client_min_messages = warning' \
    -c "DROP DATABASE IF EXISTS $1 WITH (FORCE)" \
    -c "CREATE DATABASE $1 OWNER fleet_owner" >/dev/null
  url=$(sed -E "s|@/[^?]*\\?|@/$1?|" <<<"$BIKAROO_MIGRATE_URL")
}
# migrate_with BIN DIR URL LOG: BIN's migrate of URL with the migrations of DIR; its log in LOG.
migrate_with() {
  DATABASE_URL=$3 BIKAROO_MIGRATE_URL=$3 BIKAROO_MIGRATIONS_DIR=$2 BIKAROO_LOG_LEVEL=info "$1" migrate >"$4" 2>&1
}
# The numbered files a log says were applied, one a line.
applied() { sed -n 's/.*migrate: applied migration \([0-9]\{4\}_[a-z0-9_]*\.sql\).*/\1/p' "$1" | sort; }
recorded() { psql -X -At "$1" -c 'SELECT name FROM fleet_meta.schema_migrations ORDER BY name'; }
schema() { "${IT_PG_DUMP:-pg_dump}" --schema-only --exclude-schema=fleet_meta -d "$(sed -E 's|//fleet_owner@|//postgres@|' <<<"$1")" | grep -v '^\\\(un\)\?restrict '; }
words() { tr '\n' ' ' <<<"$1" | sed 's/ $//'; }
# past_numbered RC LOG: the previous release's migrate went past the numbered files (it exited 0,
# or went on to the function files, whose older texts may not all apply to this schema).
past_numbered() { [[ $1 == 0 ]] || grep -q 'migrate: applied function' "$2"; }
# none_after RC LOG APPLIED: it went past the numbered files, and applied none of them.
none_after() { past_numbered "$1" "$2" && [[ -z $3 ]]; }

# --- every renamed file recorded under its name before, by this release's own files
mkdir -p "$t/before"
cp -r migrations/. "$t/before/"
while read -r before now; do [[ -n $now ]] && mv "$t/before/$now" "$t/before/$before"; done <<<"$renamed"
newdb mig_renamed
migrate_with "$bin" "$t/before" "$url" "$t/before.log" || { cat "$t/before.log"; nok "migrate with the files under their names before"; }
migrate_with "$bin" migrations "$url" "$t/after.log" || cat "$t/after.log"
again=$(applied "$t/after.log")
check "a database that applied the renamed files under their names before is given none again ($(words "$(cut -d' ' -f2 <<<"$renamed")"))${again:+; applied: $(words "$again")}" \
  test -z "$again"
names=$(recorded "$url")
missing=$(for n in $renamed; do grep -qx "$n" <<<"$names" || echo "$n"; done)
check "... and has both names of each renamed file recorded${missing:+ (missing: $(words "$missing"))}" test -z "$missing"

# --- the previous release's database, migrated by this release
newdb mig_prev
migrate_with "$old_bin" "$prev/migrations" "$url" "$t/prev.log" || { cat "$t/prev.log"; nok "the previous release migrates a fresh database"; }
migrate_with "$bin" migrations "$url" "$t/up.log"
rc=$?
# What this release has to apply: its files that the previous release had under no name.
prev_files=$(cd "$prev/migrations" && ls [0-9]*.sql)
want=$(cd migrations && for f in [0-9]*.sql; do
  grep -qx "$f" <<<"$prev_files" && continue
  b=$(awk -v n="$f" '$2 == n { print $1 }' <<<"$renamed")
  [[ -n $b ]] && grep -qx "$b" <<<"$prev_files" && continue
  echo "$f"
done | sort)
got=$(applied "$t/up.log")
check "this release migrates the previous release's database applying only the numbered files added since ($(words "${want:-none}")), no renamed one" \
  test "$rc" = 0 -a "$got" = "$want"
newdb mig_fresh
fresh_url=$url
migrate_with "$bin" migrations "$fresh_url" "$t/fresh.log" || { cat "$t/fresh.log"; nok "this release migrates a fresh database"; }
up_url=$(sed -E "s|@/[^?]*\\?|@/mig_prev?|" <<<"$BIKAROO_MIGRATE_URL")
if diff <(schema "$up_url") <(schema "$fresh_url") >"$t/schema.diff"; then
  ok "... and leaves the schema of a fresh database migrated by this release (pg_dump --schema-only)"
else
  head -n 20 "$t/schema.diff" | sed 's/^/# /'
  nok "... and leaves the schema of a fresh database migrated by this release"
fi
migrate_with "$old_bin" "$prev/migrations" "$up_url" "$t/back.log"
rc=$?
back=$(applied "$t/back.log")
check "the previous release's migrate then applies no numbered file to it${back:+; applied: $(words "$back")}" \
  none_after "$rc" "$t/back.log" "$back"

# --- a fresh database of this release, then the previous release's migrate
migrate_with "$old_bin" "$prev/migrations" "$fresh_url" "$t/old-on-new.log"
rc=$?
back=$(applied "$t/old-on-new.log")
check "the previous release's migrate applies no numbered file to a database this release created${back:+; applied: $(words "$back")}" \
  none_after "$rc" "$t/old-on-new.log" "$back"
suite_exit
