#!/usr/bin/env bash
# tests/upgrade/suite.sh: upgrading from the previous release (tests/upgrade/PREVIOUS, built from
# git by previous.sh). The migrations added since it only expand the schema, and either release's
# migrate applies each numbered file once, renamed ones included (migrations.sh); a rolling upgrade
# behind nginx under load loses nothing, doubles nothing and completes every confirmation
# (upgrade.py); and the previous .deb upgraded to this one with dpkg -i in a copy-on-write root
# keeps the operator's settings file, the system user and their rights.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
# shellcheck source=tests/lib/harness.sh
source tests/lib/harness.sh
# shellcheck source=tests/lib/overlay.sh
source tests/lib/overlay.sh
suite_init "$@"
chmod 755 "$t"
commit=$(tr -d '[:space:]' <tests/upgrade/PREVIOUS)

prev=$(tests/upgrade/previous.sh)
case $? in
0) ok "the previous release (${commit:0:12}) builds from git: $("$prev/build/bikaroo-mcp" --version), $(basename "$prev"/build/bikaroo-mcp_*.deb)" ;;
3) echo "skip - upgrading from ${commit:0:12}: this checkout does not hold that commit (a shallow clone)"; exit 0 ;;
*) nok "the previous release (${commit:0:12}) builds from git (build/previous-*/build.log)"; exit 1 ;;
esac

# Expand, then contract: what this release adds to the schema since the previous one must leave
# everything the previous release reads in place, since it serves on the new schema during the
# roll. A contract step (a DROP, a RENAME, a narrowed type) waits for the release after every
# instance runs this one (docs/fleet.md).
added=$(git diff -M --name-only --diff-filter=A "$commit" -- 'migrations/[0-9]*.sql')
# A function the previous release never calls (neither its C nor its capability declarations
# name fleet.<it>; its SQL names every function with its schema) may go at once: it reads
# nothing of it. The functions it does call are replaced in place (functions/), never dropped.
unused_before() { # unused_before STATEMENT: a DROP FUNCTION of a function $commit does not call
  local fn
  fn=$(sed -nE 's/^DROP FUNCTION (IF EXISTS )?(fleet\.)?([a-z0-9_]+).*/\3/ip' <<<"$1")
  [[ -n $fn ]] && ! git grep -qE "fleet\.$fn\b" "$commit" -- 'domain/*.c' 'server/*.c' 'server/**/*.c' \
    'server/capabilities/*.json'
}
# A CHECK dropped and added again under its name in one statement is replaced, not removed: the
# file says why the new one admits all the old one did (0017: longer report numbers), and the
# load below, the previous release writing on the migrated schema, would fail on one that does not.
replaced_check() { # replaced_check STATEMENT
  local name
  name=$(sed -nE 's/^DROP CONSTRAINT (IF EXISTS )?([a-z0-9_]+)\b.*/\2/ip' <<<"$1")
  [[ -n $name ]] && grep -qiE "\bADD +CONSTRAINT +$name +CHECK\b" <<<"$1"
}
# An index that is not unique constrains nothing and is named by no statement: dropping it
# changes plans, never what a release may read or write.
plain_index() { # plain_index STATEMENT
  local name
  name=$(sed -nE 's/^DROP INDEX (IF EXISTS )?(fleet\.)?([a-z0-9_]+) *$/\3/ip' <<<"$1")
  [[ -n $name ]] && git grep -qiE "^CREATE INDEX( IF NOT EXISTS)? $name\b" "$commit" -- 'migrations/[0-9]*.sql' &&
    ! git grep -qiE "^CREATE UNIQUE INDEX( IF NOT EXISTS)? $name\b" "$commit" -- 'migrations/[0-9]*.sql'
}
# Columns retyped to domains of their own type that take over the table's CHECKs dropped in the
# same statement: each column's domain is created in the file FILE over text and given exactly
# one check there, as many checks as constraints dropped. The load below, the previous release
# writing on the migrated schema, fails if a domain refuses what its CHECK admitted.
checks_to_domains() { # checks_to_domains STATEMENT FILE
  local part d drops=0 domains=0
  IFS=',' read -ra parts <<<"$1"
  for part in "${parts[@]}"; do
    part=$(xargs <<<"$part")
    if [[ $part =~ ^DROP\ CONSTRAINT\ [a-z0-9_]+_check$ ]]; then
      drops=$((drops + 1))
    elif [[ $part =~ ^ALTER\ COLUMN\ [a-z0-9_]+\ TYPE\ fleet\.([a-z0-9_]+)$ ]]; then
      d=${BASH_REMATCH[1]}
      grep -qiE "^CREATE DOMAIN fleet\.$d AS text;" "$2" || return 1
      [[ $(grep -ciE "^ALTER DOMAIN fleet\.$d ADD CONSTRAINT" "$2") == 1 ]] || return 1
      domains=$((domains + 1))
    else
      return 1
    fi
  done
  ((drops > 0 && drops == domains))
}
# A trigger's TRUNCATE event (AFTER TRUNCATE, ... OR TRUNCATE ON) truncates nothing.
bad=$(for f in $added; do
  sed 's/--.*$//' "$f" | tr '\n' ' ' | sed -E 's/\b(AFTER|BEFORE|OR) +TRUNCATE\b/\1 truncate_event/gI' | grep -oiE '\b(DROP|RENAME|TRUNCATE)\b[^;]*|ALTER COLUMN [^;]*\b(TYPE|SET NOT NULL)\b[^;]*' |
    while IFS= read -r stmt; do unused_before "$stmt" || replaced_check "$stmt" || plain_index "$stmt" ||
      checks_to_domains "$stmt" "$f" || echo "$f: $stmt"; done
done)
if [[ -z $bad ]]; then
  ok "the migrations added since ${commit:0:12} only expand the schema (${added//$'\n'/, }): no DROP, RENAME, TRUNCATE, type change or new NOT NULL"
else
  nok "a migration added since ${commit:0:12} contracts the schema the previous release reads: $bad"
fi
# A numbered file is applied once (migrations/README.md): an edit beyond its comments would
# leave databases migrated before it with another schema.
sql_only() { sed 's/--.*$//' | tr -s ' \t\n' ' '; }
changed=$(for f in $(git diff -M --name-only --diff-filter=MD "$commit" -- 'migrations/[0-9]*.sql'); do
  [[ -f $f ]] && a=$(git show "$commit:$f" | sql_only) && b=$(sql_only <"$f") && [[ "$a" == "$b" ]] || echo "$f"
done)
# A renamed one keeps its SQL, and migrate knows both its names (migrations/README.md).
while read -r _ before now; do
  [[ -n $now ]] || continue
  a=$(git show "$commit:$before" | sql_only) b=$(sql_only <"$now")
  if [[ "$a" == "$b" ]] && grep -qF "{\"${before#migrations/}\", \"${now#migrations/}\"}" domain/pg/migrate.c; then
    ok "$before, renamed $now, keeps its SQL and migrate knows both names (domain/pg/migrate.c)"
  else
    nok "$before, renamed $now: its SQL changed, or migrate does not know both names (domain/pg/migrate.c)"
  fi
done < <(git diff -M --name-status --diff-filter=R "$commit" -- 'migrations/[0-9]*.sql')
[[ -z $changed ]] && ok "no numbered migration of the previous release was changed (beyond comments) or removed" ||
  nok "numbered migrations of the previous release changed or removed: $changed"

tests/upgrade/migrations.sh "$prev" || failures=$((failures + 1))
python3 tests/upgrade/upgrade.py "$t" "$prev" || failures=$((failures + 1))

# --- the package: the previous .deb, the operator's settings, then this release's .deb.
if ! new=$(make -s --no-print-directory deb 2>"$t/deb.log" | tail -n 1) || [[ ! -f $new ]]; then
  cat "$t/deb.log"; nok "make deb builds this release's package"; exit 1
fi
old=$(ls "$prev"/build/bikaroo-mcp_*.deb)
if dpkg --compare-versions "$(dpkg-deb -f "$new" Version)" gt "$(dpkg-deb -f "$old" Version)"; then
  ok "this release's package version sorts after the previous one's ($(dpkg-deb -f "$old" Version) < $(dpkg-deb -f "$new" Version))"
else
  nok "this release's package version sorts after the previous one's: $(dpkg-deb -f "$old" Version) vs $(dpkg-deb -f "$new" Version)"
fi
if ! unshare -m true 2>/dev/null; then
  echo "skip - dpkg -i previous then current in a copy-on-write root: no private mount namespace here (unshare -m)"
  suite_exit
fi
cow=$t/cow
mkdir -p "$cow/u" "$cow/w" "$cow/m"
cp "$old" "$cow/u/old.deb"
cp "$new" "$cow/u/new.deb"
cat >"$t/dpkg.sh" <<DPKG
set -e
mount --make-rprivate /
mount -t overlay overlay -o lowerdir=/,upperdir=$cow/u,workdir=$cow/w $cow/m
mount -t proc proc $cow/m/proc
mount --rbind /dev $cow/m/dev
chroot $cow/m sh -ec '
  dpkg -i /old.deb >/dev/null
  env=/etc/bikaroo-mcp/bikaroo-mcp.env
  # The operator fills in the settings, as the file says to.
  sed -i "s|^DATABASE_URL=.*|DATABASE_URL=postgresql://fleet_app@db.internal/bikaroo|; s|^BIKAROO_PORT=.*|BIKAROO_PORT=9090|" \$env
  echo "BIKAROO_AUTH_ISSUER=https://login.example.com" >>\$env
  sha256sum \$env | cut -d" " -f1 >/tmp/env.sum
  echo "before: \$(id -u bikaroo-mcp):\$(id -g bikaroo-mcp) \$(dpkg-query -W -f="\\\${Version}" bikaroo-mcp)"
  # As apt upgrades with Dpkg::Options::=--force-confold: the operator s file is kept.
  dpkg --force-confold -i /new.deb >/dev/null
  echo "after: \$(id -u bikaroo-mcp):\$(id -g bikaroo-mcp) \$(dpkg-query -W -f="\\\${Version}" bikaroo-mcp)"
  echo "settings kept: \$(sha256sum \$env | cut -d" " -f1 | cmp -s - /tmp/env.sum && echo yes || echo no) \$(stat -c "%U:%G %a" \$env)"
  echo "unit: \$(grep -c "^Type=notify\$" /lib/systemd/system/bikaroo-mcp.service)"
  echo "binary: \$(bikaroo-mcp --version)"
  echo "runs as: \$(setpriv --reuid=bikaroo-mcp --regid=bikaroo-mcp --clear-groups --no-new-privs --bounding-set=-all bikaroo-mcp --version)"
'
DPKG
machine_before=$(machine_state)
if out=$(unshare -m --fork sh "$t/dpkg.sh" 2>&1); then
  before=$(sed -n 's/^before: //p' <<<"$out") after=$(sed -n 's/^after: //p' <<<"$out")
  [[ ${before%% *} == "${after%% *}" && ${after#* } == "$(dpkg-deb -f "$new" Version)" ]] &&
    ok "dpkg -i previous then current: the package is upgraded ($before -> $after), the system user and group kept" ||
    nok "dpkg -i previous then current: $out"
  grep -qx 'settings kept: yes root:bikaroo-mcp 640' <<<"$out" &&
    ok "the operator's settings file is kept, byte for byte, root:bikaroo-mcp 0640 (dpkg --force-confold)" ||
    nok "the operator's settings file after the upgrade: $(grep '^settings' <<<"$out")"
  grep -qx 'unit: 1' <<<"$out" && grep -q "^binary: bikaroo-mcp .*$(git rev-parse --short=12 HEAD 2>/dev/null || echo)" <<<"$out" &&
    grep -q '^runs as: bikaroo-mcp ' <<<"$out" &&
    ok "the new unit (Type=notify) and binary are in place and run as bikaroo-mcp ($(sed -n 's/^binary: //p' <<<"$out"))" ||
    nok "the new unit and binary after the upgrade: $out"
  machine_unchanged "$machine_before"
else
  nok "dpkg -i previous then current in a copy-on-write root: $out"
fi
suite_exit
