#!/usr/bin/env bash
# tests/hosts/suite.sh: every host configuration of hosts/ works as written (hosts.mjs). The
# stdio entries name the installed binary (/usr/bin/bikaroo-mcp, as the Debian package puts it):
# `make install DESTDIR=... PREFIX=/usr` stages it, and a private mount namespace (unshare -m)
# lays the staged /usr over the machine's for the client and the server it launches, so each
# entry runs with exactly its command, args and env. The http entries are called against the
# same installed binary serving like `make run` (local mode, loopback), on a free port.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
if ! make -s --no-print-directory install DESTDIR="$t/stage" PREFIX=/usr UNITDIR=/lib/systemd/system \
  >"$t/install.log" 2>&1; then
  cat "$t/install.log"; echo "not ok - make install DESTDIR PREFIX=/usr for the host configurations"; exit 1
fi
if ! unshare -m true 2>/dev/null; then
  echo "skip - hosts/*.json: no private mount namespace here (unshare -m) to put /usr/bin/bikaroo-mcp in place"
  exit 0
fi
tests/e2e/install.sh || { echo "not ok - the pinned client (tests/package.json) installs"; exit 1; }
cat >"$t/run.sh" <<RUN
set -u
mount --make-rprivate /
mount -t overlay overlay -o lowerdir=$t/stage/usr:/usr /usr
cd /
env -u BIKAROO_RESOURCES_DIR -u BIKAROO_PROMPTS_DIR -u BIKAROO_MIGRATIONS_DIR -u BIKAROO_MIGRATE_URL \
  BIKAROO_AUTH=local BIKAROO_PORT=0 BIKAROO_READY_FILE=$t/port /usr/bin/bikaroo-mcp serve 2>$t/serve.log &
pid=\$!
for _ in \$(seq 1 100); do [ -s $t/port ] && break; sleep 0.1; done
[ -s $t/port ] || { cat $t/serve.log; echo "not ok - the installed binary serves for the http entries"; kill \$pid; exit 1; }
HOSTS_DATABASE_URL='$DATABASE_URL' HOSTS_HTTP_PORT=\$(cat $t/port) node $PWD/tests/hosts/hosts.mjs $PWD/hosts
rc=\$?
kill -TERM \$pid; wait \$pid || { tail -n 20 $t/serve.log; echo "not ok - the installed binary stops with 0"; rc=1; }
exit \$rc
RUN
unshare -m bash "$t/run.sh"
