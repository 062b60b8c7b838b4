#!/usr/bin/env bash
# tests/install/suite.sh: `make install` and `make deb` (scripts/install.sh, scripts/deb.sh).
# Builds the package, extracts it into a temporary root (dpkg-deb -x) and runs the installed
# binary, with no directory setting, against a fresh database of the test cluster: migrate from
# the installed migrations, serve, one tools/call; and installs it with dpkg -i in a
# copy-on-write view of the machine's root. The installed binary looks for its files in
# /usr/share/bikaroo-mcp: a private mount namespace (unshare -m) lays the package's
# /usr/share over the machine's for that process only. Also: the unit passes systemd-analyze,
# the man page is well-formed and lists every setting, the package ships every document it cites.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
# shellcheck source=tests/lib/harness.sh
source tests/lib/harness.sh
# shellcheck source=tests/lib/overlay.sh
source tests/lib/overlay.sh
suite_init "$@"
db=install_it_$$
pid=
suite_on_exit '[[ -n $pid ]] && kill -TERM "$pid" && wait "$pid"'
suite_on_exit "psql -X -q '$PGTMP_SUPER_URL' -c 'DROP DATABASE IF EXISTS $db WITH (FORCE)'"

# --- make install with DESTDIR and PREFIX
if make -s --no-print-directory install DESTDIR="$t/dest" PREFIX=/opt/bikaroo >"$t/install.log" 2>&1; then
  p=$t/dest/opt/bikaroo
  check "make install DESTDIR PREFIX: binary, documents, prompts, migrations, man page, unit, settings" \
    test -x "$p/bin/bikaroo-mcp" -a -f "$p/share/bikaroo-mcp/resources/damaged-bike.md" \
    -a -f "$p/share/bikaroo-mcp/prompts/investigate-damaged-bike.md" \
    -a -f "$p/share/bikaroo-mcp/migrations/0001_schema.sql" \
    -a -d "$p/share/bikaroo-mcp/migrations/functions" -a -f "$p/share/man/man1/bikaroo-mcp.1.gz" \
    -a -f "$p/lib/systemd/system/bikaroo-mcp.service" -a -f "$t/dest/etc/bikaroo-mcp/bikaroo-mcp.env"
  check "the installed binary's default directories are PREFIX/share/bikaroo-mcp" \
    grep -q '/opt/bikaroo/share/bikaroo-mcp/resources' <("$p/bin/bikaroo-mcp" help)
  check "the source-tree binary still reads the source tree" \
    grep -qE '^BIKAROO_RESOURCES_DIR +--resources-dir= +resources ' <("$BIKAROO_BIN" help)
  check "the unit's ExecStart names PREFIX/bin" \
    grep -qx 'ExecStart=/opt/bikaroo/bin/bikaroo-mcp serve' "$p/lib/systemd/system/bikaroo-mcp.service"
else
  cat "$t/install.log"; nok "make install DESTDIR PREFIX"
fi

# --- make deb
if ! deb=$(make -s --no-print-directory deb 2>"$t/deb.log" | tail -n 1) || [[ ! -f $deb ]]; then
  cat "$t/deb.log"; nok "make deb builds a package"; exit 1
fi
ok "make deb builds $(basename "$deb")"
version=$(sed -n 's/^#define BIKAROO_VERSION "\(.*\)"$/\1/p' common/version.h)
check "the package's version is common/version.h's ($version+git...)" \
  grep -q "^$version+git" <(dpkg-deb -f "$deb" Version)
check "lintian finds no error and no warning in the package" \
  test -z "$(grep -E '^[EW]: ' build/deb/lintian.txt)"
root=$t/root
dpkg-deb -x "$deb" "$root"
dpkg-deb -e "$deb" "$root/DEBIAN"
check "the package holds the binary, the unit, the man page and /usr/share/bikaroo-mcp" \
  test -x "$root/usr/bin/bikaroo-mcp" -a -f "$root/lib/systemd/system/bikaroo-mcp.service" \
  -a -f "$root/usr/share/man/man1/bikaroo-mcp.1.gz" -a -f "$root/usr/share/bikaroo-mcp/resources/damaged-bike.md"
check "the package depends on the shared libraries it links (dpkg-shlibdeps) and adduser" \
  grep -qE '^Depends: adduser, .*libmicrohttpd12.*libpq5' "$root/DEBIAN/control"

# The package ships what it cites: every document one of its files names (the unit, the settings,
# the monitoring files, the man page, the binary; by its installed path, never docs/ of a source
# tree it does not have) is in /usr/share/doc/bikaroo-mcp, and so is every document those link to.
doc=$root/usr/share/doc/bikaroo-mcp
zcat "$root/usr/share/man/man1/bikaroo-mcp.1.gz" | sed 's/\\-/-/g' >"$t/page.txt"
mapfile -t files < <(find "$root" -path "$root/DEBIAN" -prune -o -path "$doc" -prune -o -type f ! -name '*.gz' -print)
cited=$( {
  grep -ahoE '(docs|share/doc/bikaroo-mcp)/[a-z-]+\.md' "${files[@]}" "$t/page.txt"
  sed -n '/^\.SH SEE ALSO/,$p' "$t/page.txt" | grep -oE '[a-z-]+\.md'
  grep -ohE '\]\([a-z-]+\.md' "$doc"/*.md | cut -c3-
} | sed 's|.*/||' | sort -u)
missing=$(for f in $cited; do [[ -f $doc/$f ]] || echo "$f"; done)
check "the package ships every document it cites ($(wc -w <<<"$cited") cited)${missing:+; missing: ${missing//$'\n'/ }}" \
  test -n "$cited" -a -z "$missing"
# What an operator reads (the unit, the settings, the monitoring files, the man page) names them
# where they are installed; the migrations' SQL comments are the source's, applied as they are.
stale=$(grep -alE '(^|[^a-z/])docs/[a-z-]+\.md' "${files[@]}" "$t/page.txt" | grep -v '/share/bikaroo-mcp/migrations/' | sed "s|^$root||")
check "no installed file an operator reads cites a document by its place in the source tree (docs/...)${stale:+: ${stale//$'\n'/ }}" \
  test -z "$stale"

# The unit: systemd-analyze verify prints nothing (it exits 0 on unknown keys, so read stderr);
# the binary path points into the extracted root, the man reference is not looked up.
unit=$t/bikaroo-mcp.service
sed "s|^ExecStart=/usr/bin/|ExecStart=$root/usr/bin/|" "$root/lib/systemd/system/bikaroo-mcp.service" >"$unit"
if command -v systemd-analyze >/dev/null; then
  v=$(systemd-analyze verify --man=no "$unit" 2>&1)
  check "systemd-analyze verify accepts bikaroo-mcp.service${v:+: $v}" test -z "$v"
  score=$(systemd-analyze security --offline=true "$unit" 2>/dev/null | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
  check "systemd-analyze security: exposure ${score:-?} (at most 2.0: OK)" \
    awk -v s="${score:-99}" 'BEGIN { exit !(s <= 2.0) }'
else
  echo "skip - systemd-analyze verify: systemd-analyze is not installed"
fi
for key in 'User=bikaroo-mcp' 'NoNewPrivileges=yes' 'ProtectSystem=strict' 'ProtectHome=yes' \
  'PrivateTmp=yes' 'CapabilityBoundingSet=' 'RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX' \
  'EnvironmentFile=/etc/bikaroo-mcp/bikaroo-mcp.env'; do
  grep -qxF "$key" "$unit" || nok "the unit sets $key"
done
ok "the unit runs as bikaroo-mcp with NoNewPrivileges, ProtectSystem=strict, no capability"

# dpkg -i for real, in a copy-on-write view of this machine's root (an overlay in a private mount
# namespace, chrooted): the maintainer scripts create the system user and group, the settings
# file becomes root:bikaroo-mcp 0640, the installed binary runs as that user, and dpkg -r and
# -P leave no file of the package. Nothing of it reaches the machine itself.
cow=$t/cow
mkdir -p "$cow/u" "$cow/w" "$cow/m"
cp "$deb" "$cow/u/pkg.deb"
cat >"$t/dpkg.sh" <<DPKG
set -e
mount --make-rprivate /
mount -t overlay overlay -o lowerdir=/,upperdir=$cow/u,workdir=$cow/w $cow/m
mount -t proc proc $cow/m/proc
mount --rbind /dev $cow/m/dev
chroot $cow/m sh -ec '
  dpkg -i /pkg.deb >/dev/null
  echo "user: \$(getent passwd bikaroo-mcp | cut -d: -f1,6,7) group: \$(getent group bikaroo-mcp | cut -d: -f1)"
  echo "settings: \$(stat -c "%U:%G %a" /etc/bikaroo-mcp/bikaroo-mcp.env)"
  echo "runs as: \$(setpriv --reuid=bikaroo-mcp --regid=bikaroo-mcp --clear-groups --no-new-privs --bounding-set=-all bikaroo-mcp --version)"
  dpkg -r bikaroo-mcp >/dev/null
  dpkg -P bikaroo-mcp >/dev/null
  echo "left: \$(ls /usr/bin/bikaroo-mcp /usr/share/bikaroo-mcp /etc/bikaroo-mcp /lib/systemd/system/bikaroo-mcp.service 2>/dev/null | wc -l)"
'
DPKG
machine_before=$(machine_state)
if ! unshare -m true 2>/dev/null; then
  echo "skip - dpkg -i in a copy-on-write root: no private mount namespace here (unshare -m)"
elif out=$(unshare -m --fork sh "$t/dpkg.sh" 2>&1); then
  check "dpkg -i: postinst creates the system user and group bikaroo-mcp (no home, nologin) ($(grep '^user' <<<"$out"))" \
    grep -qx 'user: bikaroo-mcp:/nonexistent:/usr/sbin/nologin group: bikaroo-mcp' <<<"$out"
  check "dpkg -i: the settings file is root:bikaroo-mcp 0640" grep -qx 'settings: root:bikaroo-mcp 640' <<<"$out"
  check "dpkg -i: /usr/bin/bikaroo-mcp runs as bikaroo-mcp with no capability ($(sed -n 's/^runs as: //p' <<<"$out"))" \
    grep -q '^runs as: bikaroo-mcp [0-9]' <<<"$out"
  check "dpkg -r and dpkg -P remove every file of the package, settings included" grep -qx 'left: 0' <<<"$out"
  machine_unchanged "$machine_before"
else
  nok "dpkg -i in a copy-on-write root: $out"
fi
# That check itself, in a private mount namespace where /etc/passwd says what it must tell apart:
# a machine with the package installed for real before (its user there all along) is no leak,
# a user that appears or changes meanwhile is one.
if unshare -m true 2>/dev/null; then
  grep -v '^bikaroo-mcp:' /etc/passwd >"$t/passwd.real"
  { cat "$t/passwd.real"; echo 'bikaroo-mcp:x:998:998::/nonexistent:/usr/sbin/nologin'; } >"$t/passwd.installed"
  { cat "$t/passwd.real"; echo 'bikaroo-mcp:x:4242:4242::/nonexistent:/usr/sbin/nologin'; } >"$t/passwd.leaked"
  said=$(unshare -m bash -c "mount --make-rprivate / && source tests/lib/harness.sh && source tests/lib/overlay.sh
    mount --bind '$t/passwd.installed' /etc/passwd; before=\$(machine_state); machine_unchanged \"\$before\"
    mount --bind '$t/passwd.leaked' /etc/passwd; machine_unchanged \"\$before\"" 2>&1)
  first=$(sed -n 1p <<<"$said") second=$(sed -n 2p <<<"$said")
  check "the leak check tells a package installed on the machine before (ok) from a user that appears meanwhile (not ok)" \
    test "${first#ok - *installed for real}" != "$first" -a "${second#not ok - *overlay leaked}" != "$second"
fi

# The man page: well-formed for man, and every setting of the table is in it.
zcat "$root/usr/share/man/man1/bikaroo-mcp.1.gz" >"$t/bikaroo-mcp.1"
missing=$("$BIKAROO_BIN" help | awk 'f { print $1 } /^variable /{ f = 1 }' | while read -r v; do
  grep -q "^\\(\\.B \\)\\?$v\\b\\|$v" <(sed 's/\\-/-/g; s/\\f[BIR]//g' "$t/bikaroo-mcp.1") || echo "$v"; done)
warn=$(MANWIDTH=80 man --warnings -l "$t/bikaroo-mcp.1" 2>&1 >/dev/null)
check "bikaroo-mcp(1) renders without a groff warning and lists every setting${missing:+ (missing: $missing)}${warn:+ ($warn)}" \
  test -z "$missing$warn" -a -n "$(MANWIDTH=80 man -l "$t/bikaroo-mcp.1" 2>/dev/null | grep -F 'BIKAROO_STATE_SECRET')"
# Every subcommand of the binary's usage line is in the SYNOPSIS and has its paragraph in the
# DESCRIPTION, and every command `bikaroo-mcp admin` lists is in the page.
page=$(MANWIDTH=200 man -l "$t/bikaroo-mcp.1" 2>/dev/null)
synopsis=$(sed -n '/^SYNOPSIS/,/^DESCRIPTION/p' <<<"$page" | tr -s ' |{}[]' '\n' | sort -u)
described=$(sed -n '/^DESCRIPTION/,/^ENVIRONMENT/p' <<<"$page")
subs=$("$BIKAROO_BIN" help | sed -n '1s/^usage: bikaroo-mcp \([^ ]*\) .*/\1/p' | tr '|' ' ')
admin=$("$BIKAROO_BIN" admin 2>&1 | sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p')
absent=$(for w in $subs; do
  grep -qxF -- "$w" <<<"$synopsis" && grep -qE -- "^ {7}$w( |\$)" <<<"$described" || echo "$w"; done
  for w in $admin; do grep -qE -- "^ +$w( |\$)" <<<"$page" || echo "admin $w"; done)
check "bikaroo-mcp(1) has every subcommand of the usage line ($(wc -w <<<"$subs")) and every admin command ($(wc -w <<<"$admin"))${absent:+; missing: ${absent//$'\n'/ }}" \
  test -n "$subs" -a -n "$admin" -a -z "$absent"

# --- the installed binary against a fresh database: migrate, serve, one call. No directory
# setting; started from / so that nothing is found relative to the working directory.
psql -X -q -v ON_ERROR_STOP=1 "$PGTMP_SUPER_URL" -c "CREATE DATABASE $db OWNER fleet_owner" >/dev/null
owner_url=$(sed -E "s|@/[^?]*\\?|@/$db?|" <<<"$BIKAROO_MIGRATE_URL")
app_url=$(sed -E "s|@/[^?]*\\?|@/$db?|" <<<"$DATABASE_URL")
cat >"$t/run.sh" <<RUN
set -e
mount --make-rprivate /
mount -t overlay overlay -o lowerdir=$root/usr/share:/usr/share /usr/share
cd /
env -u BIKAROO_MIGRATIONS_DIR -u BIKAROO_RESOURCES_DIR -u BIKAROO_PROMPTS_DIR \
  DATABASE_URL='$owner_url' BIKAROO_MIGRATE_URL='$owner_url' $root/usr/bin/bikaroo-mcp migrate
psql -X -q -v ON_ERROR_STOP=1 '$owner_url' -f /usr/share/bikaroo-mcp/migrations/demo/demo-data.sql
# As the unit runs it: an unprivileged user, no capability at all, no_new_privs.
exec setpriv --reuid=65534 --regid=65534 --clear-groups --no-new-privs --bounding-set=-all --inh-caps=-all \
  env -u BIKAROO_MIGRATIONS_DIR -u BIKAROO_RESOURCES_DIR -u BIKAROO_PROMPTS_DIR \
  DATABASE_URL='$app_url' BIKAROO_MIGRATE_URL= BIKAROO_AUTH=local BIKAROO_PORT=0 BIKAROO_READY_FILE=$t/run/port \
  $root/usr/bin/bikaroo-mcp serve
RUN
mkdir -p "$t/run" && chmod 1777 "$t/run" && chmod 755 "$t"
if ! unshare -m true 2>/dev/null; then
  echo "skip - the installed binary against the test database: no private mount namespace here (unshare -m)"
else
  unshare -m bash "$t/run.sh" >"$t/serve.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 100); do [[ -s $t/run/port ]] && break; kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if [[ -s $t/run/port ]]; then
    ok "the installed binary migrates a fresh database from /usr/share/bikaroo-mcp and serves as an unprivileged user with no capability and no_new_privs"
    body='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_bike_status","arguments":{"bikeId":"VL-2048"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
    out=$(curl -s --max-time 10 "http://127.0.0.1:$(cat "$t/run/port")/mcp" -H 'Content-Type: application/json' \
      -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28' \
      -H 'Mcp-Method: tools/call' -H 'Mcp-Name: get_bike_status' -d "$body")
    check "the installed binary answers tools/call get_bike_status VL-2048 from the fresh database" \
      grep -q '"bikeId": *"VL-2048"' <<<"$out"
    kill -TERM "$pid"; wait "$pid"; rc=$?; pid=
    check "the installed binary stops with 0 on SIGTERM" test "$rc" = 0
  else
    cat "$t/serve.log"; nok "the installed binary migrates a fresh database and serves"
  fi
fi
suite_exit
