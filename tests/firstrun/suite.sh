#!/usr/bin/env bash
# A new user's first `make run`: the Makefile asks nothing of pkg-config when it is read (a fresh
# Debian machine has no libpq .pc file until `deps` installed it), and the throwaway cluster
# ignores the caller's PG* variables. Simulated here: a PATH where pkg-config answers nothing
# (and logs each call) until a fake apt-get has "installed" the missing package, and hostile
# PGHOST, PGPORT, PGUSER, PGDATABASE, PGSERVICE, PGOPTIONS... for the whole run. Prints
# `ok - ...` / `not ok - ...` lines.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
# shellcheck source=tests/lib/harness.sh
source tests/lib/harness.sh
suite_init "$@"
run_pid=
# shellcheck disable=SC2317  # invoked at the end (suite_on_exit)
stop_run() { # make run's whole process group (setsid): make, the server, the cluster's scripts
  if [[ -n "$run_pid" ]]; then
    kill -TERM -- "-$run_pid" 2>/dev/null
    for _ in $(seq 1 100); do kill -0 "$run_pid" 2>/dev/null || break; sleep 0.1; done
  fi
}
suite_on_exit stop_run
# shellcheck disable=SC2016  # expanded at the end
suite_on_exit 'scripts/pgtmp.sh destroy "$t/pg"'

real_pkgconfig=$(command -v pkg-config)
mkdir -p "$t/bin"
# pkg-config as on a fresh machine: nothing (exit 1) until the marker says deps installed it.
cat >"$t/bin/pkg-config" <<EOF
#!/bin/sh
if [ -e "$t/installed" ]; then echo "\$*" >>"$t/pkgconfig.after"; exec "$real_pkgconfig" "\$@"; fi
echo "\$*" >>"$t/pkgconfig.before"
exit 1
EOF
# dpkg-query: every package installed but libpq-dev, until apt-get ran.
cat >"$t/bin/dpkg-query" <<EOF
#!/bin/sh
for a; do pkg=\$a; done
if [ "\$pkg" = libpq-dev ] && [ ! -e "$t/installed" ]; then exit 1; fi
printf 'ii '
EOF
cat >"$t/bin/apt-get" <<EOF
#!/bin/sh
echo "apt-get \$*" >>"$t/apt.log"
case " \$* " in *" install "*) touch "$t/installed" ;; esac
EOF
chmod +x "$t/bin/"*
export PATH="$t/bin:$PATH"

make -n help >/dev/null 2>&1
make -n deps >/dev/null 2>&1
check "reading the Makefile (make -n help, make -n deps) asks nothing of pkg-config" \
  test ! -e "$t/pkgconfig.before"

if [[ "$(id -u)" != 0 ]]; then
  echo "skip - the first make run on a fresh machine: deps.sh installs only as root"
  exit 0
fi

# The first `make run` from a fresh state (its own build directory and cluster), with hostile PG*.
setsid env -u DATABASE_URL -u BIKAROO_MIGRATE_URL RUN_PG_DIR="$t/pg" BIKAROO_PORT=0 \
  BIKAROO_READY_FILE="$t/port" PGHOST=/nonexistent-pghost PGHOSTADDR=127.0.0.1 PGPORT=1 \
  PGUSER=hostile PGDATABASE=hostile PGSERVICE=hostile PGSERVICEFILE=/nonexistent \
  PGOPTIONS='-c default_transaction_read_only=on' PGPASSFILE=/nonexistent PGSSLMODE=require \
  PGTARGETSESSIONATTRS=read-only PGDATESTYLE=German PGTZ=Pacific/Kiritimati \
  make --no-print-directory -j2 B="$t/build" OPT=-Og run >"$t/run.log" 2>&1 &
run_pid=$!
for _ in $(seq 1 1800); do [[ -s $t/port ]] && break; kill -0 "$run_pid" 2>/dev/null || break; sleep 0.1; done
check "the first make run on a fresh machine builds (deps installed the library before pkg-config was asked)" \
  test -x "$t/build/bikaroo-mcp" -a ! -e "$t/pkgconfig.before"
[[ -x "$t/build/bikaroo-mcp" ]] || tail -n 20 "$t/run.log"
if [[ -s $t/port ]]; then
  body=$(curl -s "http://127.0.0.1:$(cat "$t/port")/mcp" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28' \
    -H 'Mcp-Method: tools/call' -H 'Mcp-Name: get_bike_status' \
    -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_bike_status","arguments":{"bikeId":"VL-2048"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}')
  check "that make run serves get_bike_status from its throwaway cluster despite hostile PG* variables" \
    grep -q '"structuredContent":{"bikeId":"VL-2048"' <<<"$body"
else
  tail -n 20 "$t/run.log"
  check "that make run serves despite hostile PG* variables" false
fi
suite_exit
