#!/usr/bin/env bash
# tests/release/suite.sh: what ships with a release is consistent. One version everywhere
# (common/version.h: --version, serverInfo.version over HTTP and stdio, bikaroo_build_info, the
# man page); the settings table of docs/configuration.md is what config-help prints, every
# setting; /metrics has the process_* families with plausible values (promtool-valid); make
# uninstall removes what make install put there but the settings file; the man page has
# EXAMPLES and a SEE ALSO naming the host configurations; docker-compose.yml validates against
# the Compose Specification schema (the format `docker compose` v2 reads; Debian's
# docker-compose ships it). Prints `ok - ` / `not ok - ` lines.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
# shellcheck source=tests/lib/harness.sh
source tests/lib/harness.sh
suite_init "$@"
pid=
suite_on_exit '[[ -n $pid ]] && kill -TERM "$pid" && wait "$pid"'

version=$(sed -n 's/^#define BIKAROO_VERSION "\(.*\)"$/\1/p' common/version.h)
check "common/version.h names a version ($version)" test -n "$version"
check "--version says $version" grep -q "^bikaroo-mcp $version (revision " <("$bin" --version)

# serverInfo over HTTP (the envelope's _meta of any answer) and over stdio (server/discover).
env BIKAROO_AUTH=local BIKAROO_PORT=0 BIKAROO_READY_FILE="$t/port" BIKAROO_METRICS_LISTEN=127.0.0.1:0 \
  BIKAROO_LOG_LEVEL=debug "$bin" serve 2>"$t/serve.log" &
pid=$!
for _ in $(seq 1 100); do [[ -s $t/port ]] && break; sleep 0.1; done
port=$(cat "$t/port" 2>/dev/null)
mport=$(sed -n 's|.*metrics at http://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' "$t/serve.log")
body=$(curl -s "http://127.0.0.1:$port/mcp" -H 'Content-Type: application/json' \
  -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28' \
  -H 'Mcp-Method: tools/call' -H 'Mcp-Name: get_bike_status' \
  -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_bike_status","arguments":{"bikeId":"VL-2048"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}')
grep -q "serverInfo" <<<"$body" || echo "# HTTP answer: ${body:0:300}"
check "serverInfo.version over HTTP is $version" \
  grep -q "serverInfo\":{\"name\":\"bikaroo-fleet-mcp\",\"version\":\"$version\"" <<<"$body"
out=$(printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}' |
  BIKAROO_AUTH=local timeout 20 "$bin" stdio 2>/dev/null)
check "serverInfo.version over stdio (server/discover) is $version" \
  grep -q "\"version\":\"$version\"" <<<"$out"
curl -s "http://127.0.0.1:$mport/metrics" >"$t/metrics"
check "bikaroo_build_info{version=\"$version\"} on /metrics" \
  grep -q "^bikaroo_build_info{version=\"$version\"," "$t/metrics"

# process_* metrics: present, typed, plausible.
now=$(date +%s)
check "/metrics has process_cpu_seconds_total, process_resident_memory_bytes, process_open_fds, process_max_fds, process_start_time_seconds, process_virtual_memory_bytes" \
  test "$(grep -cE '^process_(cpu_seconds_total|resident_memory_bytes|virtual_memory_bytes|open_fds|max_fds|start_time_seconds) [0-9.e+]+$' "$t/metrics")" = 6
check "... with plausible values (started in the last 10 minutes, over 1 MB resident, open descriptors under the limit)" \
  awk -v now="$now" '
    $1 == "process_start_time_seconds" { s = $2 } $1 == "process_resident_memory_bytes" { r = $2 }
    $1 == "process_open_fds" { o = $2 } $1 == "process_max_fds" { m = $2 } $1 == "process_cpu_seconds_total" { c = $2 }
    END { exit !(s <= now + 1 && s > now - 600 && r > 1000000 && o >= 3 && o < m && c >= 0) }' "$t/metrics"
if command -v promtool >/dev/null; then
  check "/metrics with the process families passes promtool check metrics" \
    bash -c "promtool check metrics <'$t/metrics' >/dev/null 2>&1"
fi
open1=$(awk '$1 == "process_open_fds" { print $2 }' "$t/metrics")
check "process_open_fds is this process's count (/proc/$pid/fd has $(find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 | wc -l), it said $open1)" \
  test "$(((open1 - $(find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 | wc -l)) ** 2 <= 16))" = 1
kill -TERM "$pid"
wait "$pid"
pid=

# The settings table of the docs: what config-help prints, every setting.
n=$("$bin" config-help --format=markdown | grep -c '^| `')
check "docs/configuration.md's settings table is config-help's, all $n settings (scripts/config-table.sh --check)" \
  scripts/config-table.sh "$bin" --check
check "... and the table lists every setting of server/cfg.c ($n)" \
  test "$n" = "$(grep -cE '^\s*CFG_(S|SE|SR|L)\("' server/cfg.c)"
# The prose's list of the secret settings: the very ones the table marks [secret].
secret=$("$bin" config-help --format=markdown | sed -nE 's/^\| `([A-Z0-9_]*)` .*\[secret\]( \[reloadable\])? \|$/\1/p' | sort)
named=$(sed -n '/^<!-- generated: the settings .* marks \[secret\] -->$/,/^<!-- end of generated list -->$/p' \
  docs/configuration.md | grep -o '`[A-Z0-9_]*`' | tr -d '`' | sort)
check "docs/configuration.md names as secret the $(wc -l <<<"$secret") settings config-help marks [secret], no other${named:+ (it names $(wc -l <<<"$named"))}" \
  test -n "$secret" -a "$secret" = "$named"

# make uninstall after make install.
if make -s --no-print-directory install DESTDIR="$t/stage" PREFIX=/usr/local UNITDIR=/usr/local/lib/systemd/system \
  SYSCONFDIR=/etc >"$t/install.log" 2>&1; then
  installed=$(find "$t/stage" -type f | wc -l)
  make -s --no-print-directory uninstall DESTDIR="$t/stage" PREFIX=/usr/local UNITDIR=/usr/local/lib/systemd/system \
    >"$t/uninstall.log" 2>&1
  check "make uninstall removes the $((installed - 1)) files make install put there, keeping the settings file" \
    test "$(find "$t/stage" -type f)" = "$t/stage/etc/bikaroo-mcp/bikaroo-mcp.env"
  check "... and says it kept it" grep -q 'kept your settings' "$t/uninstall.log"
else
  cat "$t/install.log"
  check "make install for make uninstall" false
fi

# The man page.
scripts/manpage.sh "$bin" >"$t/bikaroo-mcp.1"
check "the man page's header names version $version" grep -q "^\\.TH BIKAROO-MCP 1 .* \"bikaroo-mcp $version\"" "$t/bikaroo-mcp.1"
if command -v man >/dev/null; then
  MANWIDTH=100 man -l "$t/bikaroo-mcp.1" 2>"$t/man.err" >"$t/man.txt"
  check "the man page has EXAMPLES (host-config among them) and SEE ALSO naming the host configurations" \
    bash -c "grep -q '^EXAMPLES' '$t/man.txt' && grep -q 'host-config vscode > .vscode/mcp.json' '$t/man.txt' &&
      sed -n '/^SEE ALSO/,/^[A-Z]/p' '$t/man.txt' | tr -s ' \n' ' ' | grep -q 'host-config vscode, vscode-http, cursor, cursor-http and claude-desktop'"
  check "the man page renders without a warning" test ! -s "$t/man.err"
fi

# docker-compose.yml against the Compose Specification schema (what docker compose v2 reads).
spec=$(/usr/bin/python3 -c 'import compose, os; print(os.path.join(os.path.dirname(compose.__file__), "config", "compose_spec.json"))' 2>/dev/null)
if [[ -f $spec ]]; then
  check "docker-compose.yml validates against the Compose Specification schema, with no top-level version (obsolete in v2) and no container_name (v2 scales services)" \
    /usr/bin/python3 -c '
import json, sys, yaml, jsonschema
doc = yaml.safe_load(open("docker-compose.yml"))
jsonschema.Draft7Validator(json.load(open(sys.argv[1]))).validate(doc)
assert "version" not in doc, "top-level version"
assert not any("container_name" in s for s in doc["services"].values()), "container_name"' "$spec"
else
  echo "skip - docker-compose.yml against the Compose Specification: Debian's docker-compose (its schema) is not installed"
fi
suite_exit
